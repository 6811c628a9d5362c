#!/usr/bin/python3
"""How much DDP's gradient all-reduces slow the backward pass on this machine.

What it is for: checking the compute side of the replay's gloo contention model
(kappa: the slowdown of training-thread compute per all-reduce in flight,
docs/replay.md) on the ground truth's own jobs (examples/workloads/
gen_ground_truth.py: 2 processes, gloo over loopback, OMP_NUM_THREADS=1). It
times the backward compute, from loss.backward() to the first layer's weight
gradient (the last one autograd computes; a tensor hook stamps it), of every
bucket size of a model, in blocks of steps:
  - synced: DDP reduces its buckets beside the backward, as in the ground truth;
  - no_sync: the same step with forward and backward inside DDP's no_sync(), so
    no bucket is reduced and DDP copies no gradient into a bucket. The forward
    must be inside: DDP 1.13 decides in forward whether backward reduces (until
    24 Nov 05:30 UTC this script entered no_sync() after the forward, so both kinds of
    step reduced their buckets and the comparison measured nothing).
Prints per bucket size the median of each kind, their ratio, and the synced
compute over the largest bucket size's: with the largest cap one bucket is
reduced after backward (besides DDP's first bucket of 1 MiB), so that ratio is
the slowdown of compute by the buckets beside it, DDP's own copying cancelled.

Each round gives every bucket size (order rotating by round) a fresh DDP instance
from the same weights, so that where an instance's copy lands in memory is
per-round noise, not tied to a bucket size; --keep-instances builds one per bucket
size up front and keeps it, as gen_ground_truth.py does without --fresh-instances.

Run:  /usr/bin/python3 bench/backward_contention.py [--rounds 8] [--steps 8] [--keep-instances]   (about 1 min)
"""
import argparse
import copy
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "workloads"))
import gen_ground_truth as gt  # noqa: E402

CASES = [("mlp", [1, 4, 25]), ("deepmlp", [0.25, 1, 25])]


def instance(base, cap, data):
    """A warmed-up DDP instance of base at this bucket cap, its optimizer, and a
    cell that a hook on its first parameter (the last gradient autograd
    computes) stamps."""
    m = DDP(copy.deepcopy(base), bucket_cap_mb=cap)
    opt = torch.optim.SGD(m.parameters(), lr=0.001)
    for i in range(3):                          # DDP rebuilds its buckets after step 0
        gt.train_step(m, opt, *data[i])
    mark = [0.0]
    next(iter(m.module.parameters())).register_hook(lambda g, mark=mark: mark.__setitem__(0, time.perf_counter()))
    return m, opt, mark


def backward_ms(m, opt, mark, x, y, sync):
    """One step; returns the ms from loss.backward() to the first layer's gradient."""
    opt.zero_grad()
    if sync:
        loss = torch.nn.functional.cross_entropy(m(x), y)
        t0 = time.perf_counter()
        loss.backward()
    else:
        with m.no_sync():
            loss = torch.nn.functional.cross_entropy(m(x), y)
            t0 = time.perf_counter()
            loss.backward()
    opt.step()
    loss.item()
    return (mark[0] - t0) * 1e3


def worker(rank, port, name, caps, args, q):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    build, make_x, batch, _ = gt.MODELS[name]
    torch.manual_seed(0)                        # same initial weights on both ranks
    base = build()
    gen = torch.Generator().manual_seed(1000 + rank)
    data = [(make_x(batch, gen), torch.randint(0, 10, (batch,), generator=gen)) for _ in range(16)]
    kept = {cap: instance(base, cap, data) for cap in caps} if args.keep_instances else {}
    times = {(cap, sync): [] for cap in caps for sync in (True, False)}
    for r in range(args.rounds):
        for cap in caps[r % len(caps):] + caps[:r % len(caps)]:
            m, opt, mark = kept[cap] if args.keep_instances else instance(base, cap, data)
            for sync in ((True, False) if r % 2 == 0 else (False, True)):
                gt.train_step(m, opt, *data[r % 16])    # re-warm after the switch
                for s in range(args.steps):
                    times[(cap, sync)].append(backward_ms(m, opt, mark, *data[(r + s) % 16], sync))
            del m, opt, mark
    if rank == 0:
        q.put(times)
    dist.destroy_process_group()


def summary(v):
    d = statistics.quantiles(v, n=10)
    return "%6.2f (p10-p90 %5.2f-%5.2f)" % (statistics.median(v), d[0], d[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=8, help="rounds over the bucket sizes")
    ap.add_argument("--steps", type=int, default=8, help="steps per block (one synced and one no_sync block per round)")
    ap.add_argument("--keep-instances", action="store_true",
                    help="one DDP instance per bucket size for the whole run instead of a fresh one every round")
    args = ap.parse_args()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    print("backward compute (loss.backward() to the first layer's gradient), ms, median of %d steps per case; "
          "%s DDP instance per bucket size %s" % (args.rounds * args.steps, "one" if args.keep_instances else "a fresh",
                                                  "for the whole run" if args.keep_instances else "every round"))
    for name, caps in CASES:
        port = gt.free_port()
        procs = [ctx.Process(target=worker, args=(r, port, name, caps, args, q)) for r in range(2)]
        for p in procs:
            p.start()
        times = q.get()
        for p in procs:
            p.join()
        ref = statistics.median(times[(caps[-1], True)])
        for cap in caps:
            synced, alone = times[(cap, True)], times[(cap, False)]
            print("%-8s cap %5s MB: synced %s  no_sync %s  synced/no_sync %.2f  synced/synced at %s MB %.2f"
                  % (name, cap, summary(synced), summary(alone), statistics.median(synced) / statistics.median(alone),
                     caps[-1], statistics.median(synced) / ref))
    return 0


if __name__ == "__main__":
    sys.exit(main())
