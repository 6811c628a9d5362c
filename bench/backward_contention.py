#!/usr/bin/python3
"""How much DDP's gradient all-reduces slow the backward pass on this machine.

What it is for: checking the compute side of the replay's gloo contention model
(kappa: the slowdown of training-thread compute per all-reduce in flight,
docs/replay.md). It trains the ground truth's models (examples/workloads/
gen_ground_truth.py: 2 processes, gloo over loopback, OMP_NUM_THREADS=1) and
times the backward compute, from loss.backward() to the first layer's weight
gradient (the last one autograd computes; a tensor hook records it), in
alternating steps with DDP's buckets reduced beside it and under no_sync(),
which runs the same backward with no all-reduce. Prints the median of each
over --steps pairs; the ratio is the slowdown the buckets cause.

With --instances ORDER (e.g. 1,4,25) it instead builds one DDP instance of the
mlp per bucket size in that order inside one pair of processes, as
gen_ground_truth.py does without --fresh-instances, and times each instance's
backward in interleaved blocks of 8 steps with and without its buckets: the
same computation in instances that differ only in where their copies landed.

Run:  /usr/bin/python3 bench/backward_contention.py [--steps 60] [--instances 1,4,25]   (about 1 min)
"""
import argparse
import copy
import os
import socket
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

CASES = [("mlp", 1), ("mlp", 25), ("deepmlp", 0.25), ("deepmlp", 25)]


def instance(base, cap):
    """A DDP instance of base at this bucket cap, its optimizer, and a cell that
    a hook on its first parameter (the last gradient autograd computes) stamps."""
    m = DDP(copy.deepcopy(base), bucket_cap_mb=cap)
    opt = torch.optim.SGD(m.parameters(), lr=0.001)
    mark = [0.0]
    next(iter(m.module.parameters())).register_hook(lambda g, mark=mark: mark.__setitem__(0, time.perf_counter()))
    return m, opt, mark


def backward_s(m, opt, mark, x, y, sync):
    """One step; returns the seconds from loss.backward() to the first layer's gradient."""
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(m(x), y)
    t0 = time.perf_counter()
    if sync:
        loss.backward()
    else:
        with m.no_sync():
            loss.backward()
    opt.step()
    return mark[0] - t0


def worker(rank, port, name, cap, steps, q):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    build, make_x, batch, _ = gt.MODELS[name]
    torch.manual_seed(0)
    m, opt, mark = instance(build(), cap)
    gen = torch.Generator().manual_seed(1000 + rank)
    x, y = make_x(batch, gen), torch.randint(0, 10, (batch,), generator=gen)

    def step(sync):
        return backward_s(m, opt, mark, x, y, sync)

    for _ in range(5):
        step(True)
    with_buckets, alone = [], []
    for _ in range(steps):
        dist.barrier()
        with_buckets.append(step(True))
        dist.barrier()
        alone.append(step(False))
    if rank == 0:
        q.put((statistics.median(with_buckets), statistics.median(alone)))
    dist.destroy_process_group()


def instances_worker(rank, port, order, q):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    build, make_x, batch, _ = gt.MODELS["mlp"]
    torch.manual_seed(0)
    base = build()
    gen = torch.Generator().manual_seed(1000 + rank)
    x, y = make_x(batch, gen), torch.randint(0, 10, (batch,), generator=gen)
    runs = {cap: instance(base, cap) + ({True: [], False: []},) for cap in order}

    def step(cap, sync):
        m, opt, mark, res = runs[cap]
        res[sync].append(backward_s(m, opt, mark, x, y, sync))

    for cap in order:
        for _ in range(5):
            step(cap, True)
    for r in range(8):
        for cap in order[r % len(order):] + order[:r % len(order)]:
            for sync in (True, False):
                dist.barrier()
                for _ in range(8):
                    step(cap, sync)
    if rank == 0:
        q.put([(cap, statistics.median(runs[cap][3][True]), statistics.median(runs[cap][3][False])) for cap in order])
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=60, help="pairs of steps per case")
    ap.add_argument("--instances", help="bucket sizes (MB) of mlp instances built in this order in one process pair")
    args = ap.parse_args()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    if args.instances:
        order = [int(c) if float(c).is_integer() else float(c) for c in args.instances.split(",")]
        port = gt.free_port()
        procs = [ctx.Process(target=instances_worker, args=(r, port, order, q)) for r in range(2)]
        for p in procs:
            p.start()
        res = q.get()
        for p in procs:
            p.join()
        print("mlp, one DDP instance per bucket size built in the order %s in one process pair; backward compute, "
              "median of 64 steps each" % args.instances)
        for cap, a, b in res:
            print("  instance %d (cap %5s MB): with the buckets %6.2f ms, under no_sync %6.2f ms"
                  % (order.index(cap) + 1, cap, a * 1e3, b * 1e3))
        return 0
    print("backward compute (loss.backward() to the first layer's gradient), median of %d steps each" % args.steps)
    for name, cap in CASES:
        port = gt.free_port()
        procs = [ctx.Process(target=worker, args=(r, port, name, cap, args.steps, q)) for r in range(2)]
        for p in procs:
            p.start()
        a, b = q.get()
        for p in procs:
            p.join()
        print("%-8s bucket cap %5s MB: with the buckets %6.2f ms, under no_sync %6.2f ms, ratio %.2f"
              % (name, cap, a * 1e3, b * 1e3, a / b))
    return 0


if __name__ == "__main__":
    sys.exit(main())
