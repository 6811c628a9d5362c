#!/usr/bin/python3
"""ddp_hook_cost.py - what a DDP communication hook costs beside DDP's built-in all-reduce (issue 22).

What it is for: 2 gloo ranks on 127.0.0.1 (a file rendezvous) train each
testbed model (bench/testbed/models.py, their default batches, one compute
thread) three ways, with the same gradient grouping every time:
  ddp       DDP at its default bucket_cap_mb=25 (the peer);
  plan-hook DDP at 25 MB plus the ddp_hook.py that `trainscope optimize -o`
            writes (HOOK argument), its GROUPS set to DDP's own buckets, so the
            only difference is the hook: flatten each group, all_reduce, copy back;
  rank-hook bench/testbed/rank.py's GroupHook (DDP at one gradient per bucket,
            the groups all-reduced by the hook), how the testbed applied a
            plan's groups until 27 Nov, also for plans a cap gives;
  each-hook DDP at 25 MB plus ddp_hook.py with one group per gradient: the
            same bytes in more all-reduces, so against plan-hook it prices
            each extra group the hook all-reduces (not the same grouping as
            ddp: its ratio to ddp includes the extra all-reduces themselves).
Steps run in blocks of --steps, the three ways in a rotating order, --rounds
blocks each; printed: per model the median step (wall) and the median CPU time
per step of rank 0's process (time.process_time: its gloo threads included),
and each hook's ratio to ddp measured in the same run, round by round (adjacent
blocks, so a shared machine's load drifts less between the two): the median
ratio and the lowest and highest round; then the CPU the hook adds per step
(the same per-round difference, ms: what `trainscope optimize --hook-cost-ms`
defaults to, docs/optimize.md) and that per DDP bucket; for each-hook the
CPU it adds over plan-hook, and that per extra group. Also checked: the
plan hook trains the same parameters as DDP (it is an all-reduce).
What it is not for: a network's cost (loopback: the link is memory), or
anything the optimizer prices (it states the figure in docs/optimize.md).
"""
import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WAYS = ("ddp", "plan-hook", "rank-hook", "each-hook")


def build(way, R, MODELS, model, hook_mod, groups):
    torch.manual_seed(0)
    net = MODELS[model][0]()
    if way == "rank-hook":
        first = dist._DEFAULT_FIRST_BUCKET_BYTES
        dist._DEFAULT_FIRST_BUCKET_BYTES = 1
        m = DDP(net, bucket_cap_mb=1e-6)
        dist._DEFAULT_FIRST_BUCKET_BYTES = first
        m.register_comm_hook(R.GroupHook(net, groups, 2), R.group_hook)
    else:
        m = DDP(net, bucket_cap_mb=25)
        if way in ("plan-hook", "each-hook"):   # a module of its own each: the hook reads its GROUPS as it runs
            mod = hook_mod[way]
            mod.GROUPS = groups if way == "plan-hook" else [[n] for grp in groups for n in grp]
            mod.register(m)
    return m, torch.optim.SGD(m.parameters(), lr=1e-3)


def block(R, m, opt, data, n, times):
    for i in range(n):
        w, c = time.perf_counter(), time.process_time()
        R.train_step(m, opt, *data[i % len(data)])
        times.append((time.perf_counter() - w, time.process_time() - c))


def one_model(rank, a, R, MODELS, hook_mod, model):
    _, make_x, batch = MODELS[model]
    gen = torch.Generator().manual_seed(1000 + rank)
    data = [(make_x(batch, gen), torch.randint(0, 10, (batch,), generator=gen)) for _ in range(4)]
    ref, ref_opt = build("ddp", R, MODELS, model, None, None)
    block(R, ref, ref_opt, data, 2, [])            # DDP rebuilds its buckets after step 0
    groups = [b["parameters"] for b in R.ddp_buckets(ref)]
    runs = {"ddp": (ref, ref_opt)}
    for way in WAYS[1:]:
        runs[way] = build(way, R, MODELS, model, hook_mod, groups)
        block(R, *runs[way], data, 2, [])
    times = {w: [[] for _ in range(a.rounds)] for w in WAYS}
    for r in range(a.rounds):
        for k in range(len(WAYS)):
            way = WAYS[(r + k) % len(WAYS)]
            block(R, *runs[way], data, a.steps, times[way][r])
    same = all(torch.allclose(p, q, atol=1e-6) for p, q in
               zip(ref.module.parameters(), runs["plan-hook"][0].module.parameters()))
    return len(groups), sum(len(g) for g in groups), same, times


def run(rank, a, rendezvous, q):
    torch.set_num_threads(1)
    sys.argv = ["rank.py"]
    sys.path[:0] = [os.path.join(HERE, "testbed")]
    import rank as R
    from models import MODELS
    hook_mod = {}
    for way in ("plan-hook", "each-hook"):
        spec = importlib.util.spec_from_file_location("ddp_hook_" + way.split("-")[0], a.hook)
        hook_mod[way] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(hook_mod[way])
    dist.init_process_group("gloo", init_method="file://" + rendezvous, rank=rank, world_size=2)
    out = {m: one_model(rank, a, R, MODELS, hook_mod, m) for m in a.models.split(",")}
    if rank == 0:
        q.put(out)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("hook", help="a ddp_hook.py written by trainscope optimize -o")
    ap.add_argument("--models", default="mlp,cnn,wide,transformer")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--steps", type=int, default=4)
    a = ap.parse_args()
    a.hook = os.path.abspath(a.hook)
    q = mp.get_context("spawn").SimpleQueue()
    with tempfile.TemporaryDirectory() as d:
        mp.spawn(run, args=(a, os.path.join(d, "rendezvous"), q), nprocs=2)
    out = q.get()
    print("per model: median step, ms wall (cpu); each hook's ratio to ddp: the median over rounds of the\n"
          "ratio of that round's adjacent blocks' medians [lowest, highest round], wall then cpu")
    for model, (n_groups, n_grads, same, times) in out.items():
        print(f"{model} ({n_groups} buckets, {n_grads} gradients){'' if same else ': PLAN HOOK TRAINED OTHERWISE'}")
        for w in WAYS:
            flat = [t for blk in times[w] for t in blk]
            row = f"  {w:10s} {statistics.median(t[0] for t in flat) * 1e3:8.1f} ({statistics.median(t[1] for t in flat) * 1e3:7.1f})"
            if w != "ddp":
                for i in (0, 1):
                    rs = sorted(statistics.median(t[i] for t in b) / statistics.median(t[i] for t in d)
                                for b, d in zip(times[w], times["ddp"]))
                    row += f"  {'wall' if i == 0 else 'cpu'} {statistics.median(rs):.3f} [{rs[0]:.3f}, {rs[-1]:.3f}]"
                ref = "plan-hook" if w == "each-hook" else "ddp"   # each-hook: what its extra groups add
                ds = sorted((statistics.median(t[1] for t in b) - statistics.median(t[1] for t in d)) * 1e3
                            for b, d in zip(times[w], times[ref]))
                extra = n_grads - n_groups if w == "each-hook" else n_groups
                row += (f"  cpu {statistics.median(ds):+.2f} ms/step [{ds[0]:+.2f}, {ds[-1]:+.2f}]"
                        f"{' over plan-hook' if w == 'each-hook' else ''} = {statistics.median(ds) / max(extra, 1):+.2f} "
                        f"ms per {'extra group' if w == 'each-hook' else 'bucket'}")
            print(row)
    print(f"({a.rounds} rounds x {a.steps} steps per way, medians; load average {open('/proc/loadavg').read().split()[0]})")


if __name__ == "__main__":
    main()
