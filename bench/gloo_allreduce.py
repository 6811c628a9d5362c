#!/usr/bin/python3
"""gloo all-reduce sweep on this machine, printed as an nccl-tests log.

What it is for: calibrating the machine-level constants of trainscope's
collective cost model for CPU-only (gloo) jobs, the way nccl-tests'
all_reduce_perf calibrates it for NCCL: the fixed cost of one all-reduce and
the time per byte over loopback, with nothing else running in the ranks.
`trainscope replay --bucket-mb X --nccl-tests LOG` prices regrouped gradient
buckets with it (docs/replay.md).  It measures 2 processes (torch's gloo
backend, TCP over 127.0.0.1, OMP_NUM_THREADS=1), sizes 4 KiB to 16 MiB of
fp32, and reports the median of --iters timed all-reduces per size, taken in
--passes passes over the sizes in alternating order (each after --warmup
untimed ones), each on a buffer the training thread has just written, as
DDP's reducer writes a bucket before handing it to gloo (--buffers), in
all_reduce_perf's columns:
    size count type redop root time algbw busbw #wrong time algbw busbw #wrong
with busbw = algbw x 2(n-1)/n.  Also prints, as '#' comments, the time per
all-reduce when two are in flight at once (DDP's gloo process group runs two
worker threads), and how all-reduces and the training thread's compute slow
each other down (whether they share the CPU), which the log's rows do not
use.

Run:  /usr/bin/python3 bench/gloo_allreduce.py [--out LOG]   (about 25 s)
It raises its own priority like examples/workloads/gen_ground_truth.py (an
autogroup niceness of --nice, -10 by default, needs root); run it on a quiet
machine.  The committed log is examples/workloads/results/gloo_allreduce_perf.log.
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

WORLD = 2
SIZES = [4096 << i for i in range(13)]   # 4 KiB .. 16 MiB


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(fn, iters, prepare):
    """Seconds of each of iters calls of fn(prepare()), both ranks starting
    together; prepare() (untimed) returns the buffers to reduce."""
    times = []
    for _ in range(iters):
        bufs = prepare()
        dist.barrier()
        t0 = time.perf_counter()
        fn(bufs)
        times.append(time.perf_counter() - t0)
    return times


class Buffers:
    """The tensors the timed all-reduces reduce. 'written' (the default) is
    what DDP hands gloo: its reducer copies each gradient into the bucket on
    the training thread just before the bucket's all-reduce, and the buckets
    of an iteration are different memory. So every all-reduce takes the next
    slice of a 64 MiB pool (twice the L3 cache here), freshly written from a
    source tensor by this thread. 'warm' reduces the same two tensors per
    size again and again, cache-hot, as every log before 24 Nov 21:00 did: on 24 Nov
    that made 1-2 MiB all-reduces read 15-35% cheaper than written ones
    (median of 480: 1 MiB 1.13 against 1.55 ms, 2 MiB 1.99 against 2.92),
    while 256 KiB ones barely differ (0.61 against 0.57 ms)."""

    POOL_BYTES = 64 << 20

    def __init__(self, mode):
        self.mode = mode
        if mode == "warm":
            self.fixed = {size: [torch.ones(size // 4), torch.ones(size // 4)] for size in SIZES}
        else:
            self.pool = torch.ones(self.POOL_BYTES // 4)
            self.src = torch.randn(max(SIZES) // 4)
            self.off = 0

    def take(self, size, count):
        """count (1 or 2) tensors of size bytes to reduce next."""
        if self.mode == "warm":
            return self.fixed[size][:count]
        n, views = size // 4, []
        for _ in range(count):
            if self.off + n > self.pool.numel():
                self.off = 0
            view = self.pool[self.off:self.off + n]
            self.off += n
            view.copy_(self.src[:n])
            views.append(view)
        return views


def matmuls_until(x, works, workers=2):
    """Back-to-back small matmuls (the training thread's backward) until
    every work is done; returns (matmuls, seconds, all-reduces running on
    average over the matmuls: gloo's `workers` threads run min(workers,
    unfinished) of them; the last ones run alone)."""
    n, running, t0 = 0, 0, time.perf_counter()
    while True:
        left = sum(not w.is_completed() for w in works)
        if not left:
            break
        torch.mm(x, x)
        n += 1
        running += min(workers, left)
    dt = time.perf_counter() - t0
    for w in works:
        w.wait()
    return n, dt, running / max(n, 1)


def sharing(args):
    """Do gloo's all-reduces and the training thread share the CPU? K = 8
    all-reduces of 1 MiB queued at once (gloo's two workers run them), first
    with the training thread idle in wait(), then with it running matmuls
    until they are done; and the matmul rate alone. Returns the all-reduces'
    time idle and beside compute, the matmul rate alone and beside, and the
    all-reduces running on average beside the matmuls."""
    x = torch.randn(128, 128)
    bufs = [torch.ones(262144) for _ in range(8)]
    idle, beside, rate_alone, rate_beside, in_flight = [], [], [], [], []
    for _ in range(10):
        dist.barrier()
        t0 = time.perf_counter()
        for w in [dist.all_reduce(b, async_op=True) for b in bufs]:
            w.wait()
        idle.append(time.perf_counter() - t0)
        dist.barrier()
        t0 = time.perf_counter()
        n, dt, running = matmuls_until(x, [dist.all_reduce(b, async_op=True) for b in bufs])
        beside.append(time.perf_counter() - t0)
        rate_beside.append(n / dt)
        in_flight.append(running)
        t0 = time.perf_counter()
        for _ in range(200):
            torch.mm(x, x)
        rate_alone.append(200 / (time.perf_counter() - t0))
    med = statistics.median
    return med(idle), med(beside), med(rate_alone), med(rate_beside), med(in_flight)


def worker(rank, port, args, q):
    if args.pin:
        os.sched_setaffinity(0, {rank % os.cpu_count()})   # before gloo's threads start
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    # Sizes interleaved over passes (forward, then backward, ...) so that drift
    # in the machine's load hits every size alike, and the median over all
    # passes. On a VM a lone all-reduce is bimodal (a late wake-up: at 256 KiB
    # p10 0.50 ms, median 0.68, p90 3.6 ms on 24 Nov), and the median of 40
    # back-to-back runs of one size flipped between the modes at 1 MiB (1.1 ms
    # on 22 Nov, 2.8 ms on 24 Nov). The median, not the mean: the cost model is
    # fitted to medians (docs/accuracy.md, "Out of sample").
    buffers = Buffers(args.buffers)
    one = {size: [] for size in SIZES}
    pair = {size: [] for size in SIZES}
    per_pass = max(1, args.iters // args.passes)
    for p in range(args.passes):
        for size in (SIZES if p % 2 == 0 else SIZES[::-1]):
            for _ in range(args.warmup):
                dist.all_reduce(buffers.take(size, 1)[0])
            one[size] += timed(lambda bufs: dist.all_reduce(bufs[0]), per_pass, lambda: buffers.take(size, 1))

            def two(bufs):
                w = [dist.all_reduce(b, async_op=True) for b in bufs]
                for x in w:
                    x.wait()
            pair[size] += timed(two, per_pass, lambda: buffers.take(size, 2))
    med = statistics.median
    rows = [(size, med(one[size]), med(pair[size])) for size in SIZES]
    share = sharing(args)
    if rank == 0:
        q.put((rows, share))
    dist.barrier()
    dist.destroy_process_group()


def prioritize(nice):
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write(str(nice))
        return f"autogroup nice {nice}"
    except OSError:
        try:
            os.nice(nice)
            return f"nice {nice}"
        except OSError:
            return "none"


def write_log(rows, share, out, priority, buffers):
    busf = 2.0 * (WORLD - 1) / WORLD
    lines = ["# all_reduce_perf-style log written by bench/gloo_allreduce.py (trainscope)",
             f"# torch {torch.__version__} gloo over 127.0.0.1, {WORLD} processes, OMP_NUM_THREADS=1, "
             f"buffers {buffers}, priority {priority}, load average {os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"]
    lines += [f"#  Rank {r:2d} Group  0 Pid {0:6d} on {socket.gethostname()} device  cpu" for r in range(WORLD)]
    lines += ["#",
              "#                                                              out-of-place                       in-place",
              "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)"]
    for size, one, _ in rows:
        us = one * 1e6
        alg = size / one / 1e9
        lines.append(f"{size:12d} {size // 4:13d} {'float':>9} {'sum':>7} {-1:7d} {us:8.1f} {alg:7.3f} {alg * busf:7.3f}"
                     f" {0:6d} {'N/A':>8} {'N/A':>7} {'N/A':>7} {'N/A':>6}")
    lines.append("# two all-reduces in flight at once (gloo's 2 worker threads): time per pair (us), per one alone (us)")
    for size, one, pair in rows:
        lines.append(f"#   {size:10d} pair {pair * 1e6:9.1f} single {one * 1e6:9.1f} ratio {pair / one:5.2f}")
    idle, beside, rate_alone, rate_beside, in_flight = share
    lines.append("# sharing with compute: 8 x 1 MiB all-reduces queued at once take %.1f us with the training thread"
                 " idle, %.1f us (x%.2f) with it running 128x128 matmuls; the matmuls run at %.0f/s alone and %.0f/s"
                 " (x%.2f) beside them, %.2f all-reduces running on average"
                 % (idle * 1e6, beside * 1e6, beside / idle, rate_alone, rate_beside, rate_beside / rate_alone,
                    in_flight))
    text = "\n".join(lines) + "\n"
    if out:
        with open(out, "w") as f:
            f.write(text)
    sys.stdout.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="also write the log to this file")
    ap.add_argument("--iters", type=int, default=120, help="timed all-reduces per size, over all passes")
    ap.add_argument("--passes", type=int, default=12, help="passes over the sizes, in alternating order")
    ap.add_argument("--warmup", type=int, default=2, help="untimed all-reduces per size per pass")
    ap.add_argument("--nice", type=int, default=-10, help="autogroup niceness of this run (0 = none)")
    ap.add_argument("--pin", action="store_true",
                    help="each rank, all its threads included, on a core of its own; a pinned run is no ground truth here: docs/accuracy.md")
    ap.add_argument("--buffers", choices=("written", "warm"), default="written",
                    help="written: a fresh slice of a pool per all-reduce, written just before, as DDP's"
                         " buckets are; warm: the same tensors again (every log before 24 Nov 21:00)")
    args = ap.parse_args()
    if args.nice and os.environ.get("TS_GLOO_SESSION") != "1":
        return subprocess.call([sys.executable, *sys.argv], start_new_session=True,
                               env=dict(os.environ, TS_GLOO_SESSION="1"))
    priority = prioritize(args.nice) if args.nice else "none"
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=worker, args=(r, port, args, q)) for r in range(WORLD)]
    for p in procs:
        p.start()
    rows, share = q.get()
    for p in procs:
        p.join()
    write_log(rows, share, args.out, priority, args.buffers + (", ranks pinned to a core each" if args.pin else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
