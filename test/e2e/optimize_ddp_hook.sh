#!/bin/sh
# optimize_ddp_hook.sh - the ddp_hook.py that `trainscope optimize` writes when
# no bucket_cap_mb gives its grouping does what plan.json says, on real DDP:
# 2 gloo processes train the mlp of examples/workloads three steps with the hook
# and three without; the parameters must agree (an all-reduce is an all-reduce,
# however grouped), and each step must launch one all-reduce per plan group.
# The plan is dPRO's layer-by-layer sample (one bucket per layer), which DDP's
# 1 MiB first bucket cannot give.
BIN=${TS_BIN:-build/trainscope}
W=examples/workloads
T=$W/traces/mlp_bucket4/round2
G=$W/results/mlp_gradients.json
[ -d "$T" ] || { echo "skip: $T not here (run from the repository root)"; exit 77; }
/usr/bin/python3 -c "import torch.distributed" 2>/dev/null || { echo "skip: Debian's python3-torch absent"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$BIN" optimize "$T" --gradients "$G" --layer-num-limit 1 -o "$TMP/plan" > /dev/null || { echo "FAIL: optimize"; exit 1; }
[ -f "$TMP/plan/ddp_hook.py" ] || { echo "FAIL: no ddp_hook.py for a grouping no cap gives"; exit 1; }
cat > "$TMP/check.py" <<'PY'
import datetime, json, os, sys
import torch, torch.distributed as dist, torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
plan_dir, wl = sys.argv[1], sys.argv[2]
sys.path[:0] = [plan_dir, wl]

def run(rank, rendezvous, q):
    torch.set_num_threads(1)
    # a file rendezvous: no port another program on this shared machine can take meanwhile
    dist.init_process_group("gloo", init_method="file://" + rendezvous, rank=rank, world_size=2,
                            timeout=datetime.timedelta(seconds=120))
    import gen_ground_truth as gt, ddp_hook
    launched = [0]
    real = dist.all_reduce
    def counting(*a, **k):
        launched[0] += 1
        return real(*a, **k)
    dist.all_reduce = counting
    out = []
    for hooked in (False, True):
        torch.manual_seed(0)
        m = DDP(gt.mlp())
        if hooked:
            ddp_hook.register(m)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        g = torch.Generator().manual_seed(10 + rank)
        launched[0] = 0
        for _ in range(3):
            gt.train_step(m, opt, torch.randn(2, 512, generator=g), torch.randint(0, 10, (2,), generator=g))
        out.append(([p.detach().clone() for p in m.parameters()], launched[0]))
    if rank == 0:
        q.put((all(torch.allclose(a, b, atol=1e-6) for a, b in zip(out[0][0], out[1][0])), out[1][1]))
    dist.destroy_process_group()

if __name__ == "__main__":
    q = mp.get_context("spawn").SimpleQueue()
    mp.spawn(run, args=(os.path.join(plan_dir, "rendezvous"), q), nprocs=2)
    same, launched = q.get()
    groups = json.load(open(os.path.join(plan_dir, "plan.json")))["ddp"]["groups"]
    assert same, "parameters differ with the hook"
    assert launched == 3 * len(groups), (launched, len(groups))
    print(f"ok: {len(groups)} groups, {launched} all-reduces in 3 steps, same parameters")
PY
# The 2-process gloo run has hung now and then under make test's load (26 Nov: killed at the runner's 300
# s, 3 s alone); a run that hangs is killed at 120 s and tried once more, fresh, and says so.
rc=0
OMP_NUM_THREADS=1 timeout 120 /usr/bin/python3 "$TMP/check.py" "$TMP/plan" "$(pwd)/$W" || rc=$?
if [ $rc = 124 ]; then
    echo "the gloo run hung (killed at 120 s): once more"
    rm -f "$TMP/plan/rendezvous"
    OMP_NUM_THREADS=1 timeout 120 /usr/bin/python3 "$TMP/check.py" "$TMP/plan" "$(pwd)/$W"
elif [ $rc != 0 ]; then
    exit $rc
fi
