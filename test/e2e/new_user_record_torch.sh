#!/bin/sh
# new_user_record_torch.sh - the new user's path: a 2-rank DDP training over
# gloo on CPU, started by a launcher shell script, recorded with one command
# (`record --torch --steps 2:5 --memory`), then every analysis on the result.
# Expected values are hand counts from the model, not the program's output:
#   3 iterations (steps 2, 3, 4) per rank; per step 3 aten::addmm (forward,
#   one per Linear) and 5 aten::mm (backward: grad of weight for 3 layers,
#   grad of input for the 2 upper ones); DDP with bucket_cap_mb=1 makes 2
#   buckets, so 2 all-reduces per step (6 matched collectives) whose sizes add
#   up to the 399,370 parameters (256*512+512 + 512*512+512 + 512*10+10).
# Then the faults: exit code, exception, SIGTERM, a torch without a profiler,
# a Python program recorded without --torch, why "0 trace files", and
# conflicting options.
set -e
BIN=${TS_BIN:-build/trainscope}
PY=/usr/bin/python3
if ! $PY -c "import torch" 2>/dev/null; then echo "skip: $PY has no torch"; exit 77; fi
tmp=$(mktemp -d /tmp/ts_e2e_new_user.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "new_user_record_torch: $*"; exit 1; }

cat >"$tmp/train.py" <<'P'
import sys
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

rank, world, port = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
torch.set_num_threads(1)
torch.manual_seed(0)
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + port, rank=rank, world_size=world)
model = DDP(torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)), bucket_cap_mb=1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
gen = torch.Generator().manual_seed(1000 + rank)
for step in range(7):
    x, y = torch.randn(64, 256, generator=gen), torch.randint(0, 10, (64,), generator=gen)
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
print("rank %d done" % rank)
dist.destroy_process_group()
P
port=$($PY -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
cat >"$tmp/launch.sh" <<P
#!/bin/sh
cd "$tmp"
for r in 0 1; do $PY train.py \$r 2 $port & done
wait
P

# ---- record, one command ----
"$BIN" record --torch --steps 2:5 --memory -o "$tmp/t" -- sh "$tmp/launch.sh" >"$tmp/out" 2>"$tmp/err" ||
    fail "record exited $? ($(cat "$tmp/err"))"
grep -q "rank 0 done" "$tmp/out" && grep -q "rank 1 done" "$tmp/out" || fail "program output lost"
grep -q "trainscope: 2 trace files" "$tmp/err" || fail "expected 2 trace files: $(cat "$tmp/err")"
grep -q -- "--torch: .* torch events from 2 processes (legacy profiler, iterations 2 to 4)" "$tmp/err" ||
    fail "record's --torch line: $(cat "$tmp/err")"
$PY - "$tmp/t" <<'P' || fail "trace content"
import glob, json, sys
files = sorted(glob.glob(sys.argv[1] + "/rank-*.json"))
assert len(files) == 2, files
for r, f in enumerate(files):
    d = json.load(open(f))
    di = d["distributedInfo"]
    assert (di["rank"], di["world_size"], di["backend"]) == (r, 2, "gloo"), di
    ev = [e for e in d["traceEvents"] if e.get("ph") == "X"]
    steps = sorted(e["name"] for e in ev if e["name"].startswith("ProfilerStep#"))
    assert steps == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"], steps
    first = [e for e in ev if e["name"] == "aten::addmm" and e["args"]["Input Dims"][1] == [64, 256]]
    assert len(first) == 3 and first[0]["args"]["Input Dims"][:3] == [[512], [64, 256], [256, 512]], first[:1]
    assert first[0]["args"]["Input type"][:3] == ["float"] * 3
    ar = [e for e in ev if e["name"] == "gloo:all_reduce"]
    assert len(ar) == 6, len(ar)
    assert sum(e["args"]["In msg nelems"] for e in ar) == 3 * 399370, [e["args"] for e in ar]
    assert all(e["args"]["dtype"] == "Float" for e in ar)
    mem = [e for e in d["traceEvents"] if e.get("name") == "[memory]"]
    assert mem and all("Total Allocated" in e["args"] and "Bytes" in e["args"] for e in mem)
print("trace content as counted by hand")
P

# ---- every analysis on what was recorded ----
"$BIN" stats "$tmp"/t/*.json >"$tmp/stats" || fail "stats exited $?"
for r in 0 1; do
    $PY - "$tmp/stats" $r <<'P' || fail "stats counts: $(cat "$tmp/stats")"
import sys
rows, rank, cur = {}, sys.argv[2], None
for line in open(sys.argv[1]):
    if line.startswith("rank "):
        cur = line.split(":")[0].split()[1]
    elif cur == rank and line.split():
        rows.setdefault(line.split()[0], line.split()[1])
assert rows.get("aten::mm") == "15" and rows.get("aten::addmm") == "9", rows
P
done
"$BIN" breakdown "$tmp"/t/*.json >"$tmp/bd" || fail "breakdown exited $?"
for r in 0 1; do
    grep -Eq "^ +$r +cpu +[0-9.]+ms " "$tmp/bd" || fail "breakdown has no rank $r row: $(cat "$tmp/bd")"
done
"$BIN" critical-path "$tmp"/t/*.json >"$tmp/cp" || fail "critical-path exited $?"
grep -q "critical path of iteration 4" "$tmp/cp" || fail "critical-path iteration: $(head -3 "$tmp/cp")"
grep -q "2 ranks, .* 6 collectives matched" "$tmp/cp" || fail "critical-path matching: $(head -4 "$tmp/cp")"
"$BIN" replay "$tmp"/t/*.json >"$tmp/rp" || fail "replay exited $?"
grep -q "iteration (median of 3, slowest rank): .* error +0.00%" "$tmp/rp" || fail "replay not exact: $(cat "$tmp/rp")"
"$BIN" memory --trace "$tmp"/t/rank-0.*.json >"$tmp/mem" || fail "memory --trace exited $?"
grep -Eq "^ +0 cpu:-1 +[1-9]" "$tmp/mem" || fail "memory --trace: $(cat "$tmp/mem")"
# predict and optimize: the bandwidth what-if on the recorded collectives, and
# the optimizer on the gradients record wrote beside the traces (6 parameters,
# 399,370 fp32 values: 1,597,480 bytes by hand)
"$BIN" replay --bandwidth x0.5 "$tmp/t" >"$tmp/bw" 2>/dev/null || fail "replay --bandwidth x0.5 exited $?"
grep -q "with the what-if" "$tmp/bw" || fail "replay --bandwidth x0.5: $(cat "$tmp/bw")"
$PY -c '
import json, sys
p = json.load(open(sys.argv[1]))["parameters"]
assert [x["name"] for x in p] == ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"], p
assert sum(x["bytes"] for x in p) == 399370 * 4, p' "$tmp/t/.gradients.json" || fail ".gradients.json"
grep -q "the DDP model's gradients in $tmp/t/.gradients.json" "$tmp/err" || fail "record did not say where the gradients are"
"$BIN" optimize "$tmp/t" -o "$tmp/plan" >"$tmp/opt" 2>"$tmp/opt.err" || fail "optimize exited $? ($(cat "$tmp/opt.err"))"
grep -q "gradients from $tmp/t/.gradients.json" "$tmp/opt.err" || fail "optimize took no gradients: $(cat "$tmp/opt.err")"
[ -s "$tmp/plan/plan.json" ] || fail "optimize wrote no plan.json"

# ---- faults: the program's exit, output and what was recorded up to then ----
cat >"$tmp/one.py" <<'P'
import os, signal, sys, torch
m = torch.nn.Linear(8, 4)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for i in range(3):
    m(torch.randn(2, 8)).sum().backward()
    opt.step()
print("stepped", flush=True)
if sys.argv[1] == "exit": sys.exit(3)
if sys.argv[1] == "raise": raise RuntimeError("boom")
if sys.argv[1] == "term": os.kill(os.getpid(), signal.SIGTERM)
P
for how in exit:3 raise:1 term:143; do
    rc=0
    "$BIN" record --torch -o "$tmp/${how%:*}" -- $PY "$tmp/one.py" "${how%:*}" >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ "$rc" = "${how#*:}" ] || fail "${how%:*}: record exited $rc, the program's code is ${how#*:}"
    grep -q stepped "$tmp/out" || fail "${how%:*}: output lost"
    [ "${how%:*}" != raise ] || grep -q "RuntimeError: boom" "$tmp/err" || fail "raise: traceback lost"
    $PY -c "
import glob, json, sys
d = json.load(open(glob.glob('$tmp/${how%:*}/pid-*.json')[0]))
n = [e['name'] for e in d['traceEvents'] if e.get('ph') == 'X']
assert n.count('ProfilerStep#1') == 1 and n.count('aten::addmm') == 3, n
" || fail "${how%:*}: torch events not saved ($(cat "$tmp/err"))"
done

# An optimizer subclass whose step() calls super().step() is one iteration
# per call, and a window from step 0 names each iteration once (torch 1.13
# names the first two #0).
cat >"$tmp/nested.py" <<'P'
import torch
class MySGD(torch.optim.SGD):
    def step(self, closure=None):
        return super().step(closure)
m = torch.nn.Linear(4, 2)
torch.optim.SGD(m.parameters(), lr=0.1)
opt = MySGD(m.parameters(), lr=0.1)
for i in range(4):
    opt.zero_grad(set_to_none=True)
    m(torch.ones(1, 4)).sum().backward()
    opt.step()
P
"$BIN" record --torch --steps 0:3 -o "$tmp/nested" -- $PY "$tmp/nested.py" 2>"$tmp/err" || fail "nested: exit $?"
$PY -c "
import glob, json
d = json.load(open(glob.glob('$tmp/nested/pid-*.json')[0]))
n = sorted(e['name'] for e in d['traceEvents'] if e.get('name', '').startswith('ProfilerStep#'))
assert n == ['ProfilerStep#0', 'ProfilerStep#1', 'ProfilerStep#2'], n
o = [e for e in d['traceEvents'] if e.get('name') == 'aten::add_']
assert len(o) == 6, len(o)   # 2 parameters x 3 iterations
" || fail "nested step(): $(cat "$tmp/err")"

# A torch without a profiler, and one whose profiler fails to start: the
# program runs on and record names what was not captured.
mkdir -p "$tmp/noprof/torch" "$tmp/badprof/torch"
echo 'print("torch without a profiler imported")' >"$tmp/noprof/torch/__init__.py"
cat >"$tmp/badprof/torch/__init__.py" <<'P'
class _Act:
    CPU, CUDA = 0, 1
class _Action:
    NONE, WARMUP, RECORD, RECORD_AND_SAVE = range(4)
class _Profile:
    def __init__(self, **kw):
        pass
    def start(self):
        raise RuntimeError("profiler refused to start")
class autograd:
    @staticmethod
    def kineto_available():
        return False
P
mkdir -p "$tmp/badprof/torch/optim" "$tmp/badprof/torch/profiler"
echo 'class Optimizer: pass' >"$tmp/badprof/torch/optim/__init__.py"
printf 'from torch import _Profile as profile, _Act as ProfilerActivity, _Action as ProfilerAction\n' \
    >"$tmp/badprof/torch/profiler/__init__.py"
for fake in noprof:ModuleNotFoundError badprof:"RuntimeError: profiler refused to start"; do
    PYTHONPATH="$tmp/${fake%%:*}" "$BIN" record --torch -o "$tmp/fake_out" -- $PY -c "import torch; print('ran')" \
        >"$tmp/out" 2>"$tmp/err" || fail "${fake%%:*}: record exited $?"
    grep -q ran "$tmp/out" || fail "${fake%%:*}: the program did not run"
    grep -q "torch's profiler failed in 1 process (${fake#*:}.*): their torch ops were not captured" "$tmp/err" ||
        fail "${fake%%:*}: $(cat "$tmp/err")"
done

"$BIN" record -o "$tmp/plain" -- $PY "$tmp/one.py" none >"$tmp/out" 2>"$tmp/err" || fail "no --torch: exit $?"
grep -q "0 trace files" "$tmp/err" && grep -q "1 Python process ran and recorded nothing .*--torch records torch ops" "$tmp/err" ||
    fail "no --torch: $(cat "$tmp/err")"

# "0 trace files" always says why
"$BIN" record -o "$tmp/none" -- true 2>"$tmp/err" || fail "record -- true: exit $?"
grep -q "0 trace files" "$tmp/err" && grep -q "1 process ran (true) and recorded no events: ask for a collector" "$tmp/err" ||
    fail "record -- true: $(cat "$tmp/err")"
"$BIN" record --torch -o "$tmp/none" -- $PY -c "print(1)" >/dev/null 2>"$tmp/err" || fail "--torch, no torch: exit $?"
grep -q -- "--torch: no process imported torch" "$tmp/err" || fail "--torch, no torch: $(cat "$tmp/err")"

rc=0; "$BIN" record --steps 1:3 --active 2 -- true 2>"$tmp/err" || rc=$?
[ $rc = 2 ] && grep -q "give one or the other" "$tmp/err" || fail "--steps with --active: exit $rc"
echo "new_user_record_torch: ok"
