#!/bin/sh
# record_torch_mpirun.sh - `record --torch` of a 2-rank DDP job (gloo) started
# by mpirun, as a user of MPI clusters starts one: one file per rank named by
# its rank, iterations 1 to 3 as asked, the one all-reduce per step that DDP
# makes for a single small bucket (Linear(64, 8): 520 parameters, hand count),
# and every gloo collective of the window matched across ranks.
set -e
BIN=${TS_BIN:-build/trainscope}
PY=/usr/bin/python3
if ! $PY -c "import torch" 2>/dev/null; then echo "skip: $PY has no torch"; exit 77; fi
command -v mpirun >/dev/null || { echo "skip: no mpirun"; exit 77; }
tmp=$(mktemp -d /tmp/ts_e2e_torch_mpirun.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "record_torch_mpirun: $*"; exit 1; }
cat >"$tmp/train.py" <<'P'
import os, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
rank, world = int(os.environ["OMPI_COMM_WORLD_RANK"]), int(os.environ["OMPI_COMM_WORLD_SIZE"])
torch.set_num_threads(1)
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + os.environ["PORT"], rank=rank, world_size=world)
m = DDP(torch.nn.Linear(64, 8))
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for i in range(5):
    opt.zero_grad(); m(torch.randn(4, 64)).sum().backward(); opt.step()
print("rank %d ok" % rank, flush=True)
P
port=$($PY -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
PORT=$port "$BIN" record --torch --steps 1:4 -o "$tmp/t" -- \
    mpirun -np 2 --allow-run-as-root --oversubscribe -x PORT $PY "$tmp/train.py" >"$tmp/out" 2>"$tmp/err" ||
    fail "record exited $? ($(tail -3 "$tmp/err"))"
# Both ranks' lines, in either order; mpirun may interleave them.
{ grep -q 'rank 0' "$tmp/out" && grep -q 'rank 1' "$tmp/out" && [ "$(grep -o ok "$tmp/out" | wc -l)" = 2 ]; } || fail "program output: $(cat "$tmp/out")"
cat >"$tmp/check.py" <<'P'
import glob, json, sys
files = sorted(glob.glob(sys.argv[1] + "/rank-*.json"))
assert [f.split("/")[-1].split(".")[0] for f in files] == ["rank-0", "rank-1"], files
for r, f in enumerate(files):
    d = json.load(open(f))
    assert d["distributedInfo"]["rank"] == r and d["distributedInfo"]["world_size"] == 2, d["distributedInfo"]
    ev = [e for e in d["traceEvents"] if e.get("ph") == "X"]
    assert sorted(e["name"] for e in ev if e["name"].startswith("ProfilerStep#")) == ["ProfilerStep#%d" % i for i in (1, 2, 3)]
    ar = [e["args"]["In msg nelems"] for e in ev if e["name"] == "gloo:all_reduce"]
    assert ar == [520] * 3, ar
    n = sum(1 for e in ev if e["name"].startswith("gloo:"))
    assert r == 0 or n == n0, (n, n0)
    n0 = n
print(n0)
P
n_coll=$($PY "$tmp/check.py" "$tmp/t") || fail "trace content"
"$BIN" critical-path "$tmp"/t/*.json >"$tmp/cp" || fail "critical-path exited $?"
grep -q "2 ranks, .* $n_coll collectives matched" "$tmp/cp" || fail "$n_coll gloo collectives per rank: $(sed -n 3p "$tmp/cp")"
echo "record_torch_mpirun: ok"
