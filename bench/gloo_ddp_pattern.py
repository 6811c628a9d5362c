#!/usr/bin/python3
"""DDP's gloo pattern with and without DDP: how bucket size changes the all-reduces.

What it is for: finding out why gloo all-reduces inside DDP cost what they
do (docs/accuracy.md, "A fixed stall per all-reduce"), which the calibration's synchronous
all-reduces (bench/gloo_allreduce.py) do not show. Two processes, torch's
gloo backend over 127.0.0.1, OMP_NUM_THREADS=1, as the ground-truth
generator runs them. The gradients are those of examples/workloads' deepmlp
(32 layers of 256x256 + 256 fp32, 263,168 bytes each, 8.4 MB). For each
bucket size of --layers-per-bucket (DDP's first bucket is 4 layers, 1 MiB,
as dist._DEFAULT_FIRST_BUCKET_BYTES makes it), one step is:

  --pattern backward (default): per layer, --matmuls matmuls of
      (--rows x 256) x (256 x 256) on the training thread (its backward),
      then the layer's gradient copied into its bucket, and a full bucket
      handed to gloo (dist.all_reduce(async_op=True)), as DDP's reducer
      does; then a wait for every bucket (DDP's finalize);
  --pattern queue: every bucket written, then all handed to gloo at once
      with the training thread idle;
  --pattern ddp: DDP itself, on deepmlp with batch 2 and SGD, at the
      bucket cap each layer count stands for (1: 0.25 MB, 2: 0.5, 4: 1,
      more: 25), to hold the patterns against.

Both ranks start a step together (a barrier). Printed per bucket size, the
median (and mean) over --steps steps of the step and its phases: to the
last hand-over and the tail after it (the patterns), or forward, backward
and DDP's finalize together, then the optimizer (ddp).
With --profile, the steps run under torch's profiler and each all-reduce's
own time (gloo's `gloo:all_reduce` on its worker thread) is printed too:
the median and mean of those started after the last hand-over, their
quantiles, and their count per step.

Run:  /usr/bin/python3 bench/gloo_ddp_pattern.py [--profile]   (about 10 s)
      /usr/bin/python3 bench/gloo_ddp_pattern.py --pattern ddp backward --rounds 16 \
          --layers-per-bucket 1 2 --steps 30 --block 30       (about 6 min)
The second compares DDP and the pattern at 0.25 and 0.5 MB over 16 rounds,
each a fresh pair of processes per pattern, as the ground truths' rounds are.
Like bench/gloo_allreduce.py it raises its own autogroup priority (--nice,
needs root) and wants a quiet machine. Results vary by 10-30% between runs
on a shared VM: compare bucket sizes within one run (they are interleaved).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from gloo_allreduce import free_port, prioritize  # noqa: E402  (bench/, beside this script)

LAYERS = 32
LAYER_ELEMS = 256 * 256 + 256
FIRST_BUCKET_LAYERS = 4


def bucket_layers(per_bucket):
    """Layers per bucket in hand-over order: DDP's 1 MiB first bucket, then
    buckets of per_bucket layers (the last one holds what is left)."""
    sizes, left = [FIRST_BUCKET_LAYERS], LAYERS - FIRST_BUCKET_LAYERS
    while left > 0:
        sizes.append(min(per_bucket, left))
        left -= sizes[-1]
    return sizes


def deepmlp():
    """examples/workloads' deepmlp (gen_ground_truth.py: mlp(256, 32))."""
    layers = []
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(256, 256), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(256, 10))


class DDPSteps:
    """--pattern ddp: DDP itself on deepmlp at the bucket caps the layer
    counts stand for (1 layer: 0.25 MB, 2: 0.5, 4: 1, more: 25), batch 2,
    SGD, one model per cap in the same process group."""

    def __init__(self, layers_per_bucket):
        from torch.nn.parallel import DistributedDataParallel
        torch.manual_seed(0)
        self.cap = {c: {1: 0.25, 2: 0.5, 4: 1.0}.get(c, 25.0) for c in layers_per_bucket}
        self.model = {c: DistributedDataParallel(deepmlp(), bucket_cap_mb=self.cap[c]) for c in layers_per_bucket}
        self.opt = {c: torch.optim.SGD(self.model[c].parameters(), lr=1e-3) for c in layers_per_bucket}
        self.x, self.y = torch.randn(2, 256), torch.randint(0, 10, (2,))

    def step(self, per_bucket):
        """One training step: {phase: seconds}."""
        dist.barrier()
        t0 = time.perf_counter()
        self.opt[per_bucket].zero_grad()
        loss = torch.nn.functional.cross_entropy(self.model[per_bucket](self.x), self.y)
        loss.backward()   # DDP's finalize waits for every bucket before backward() returns
        t1 = time.perf_counter()
        self.opt[per_bucket].step()
        t2 = time.perf_counter()
        return {"step": t2 - t0, "forward+backward+finalize": t1 - t0, "optimizer": t2 - t1}


def step(args, per_bucket, grads, x, w):
    """One step: {phase: seconds}."""
    if args.pattern == "ddp":
        return args.ddp.step(per_bucket)
    sizes = bucket_layers(per_bucket)
    # Each size's buckets are allocated once and reused, as DDP's reducer
    # keeps its buckets: fresh tensors every step (as this script did at
    # first) would also pay the VM's first touch of their pages inside the
    # step, which DDP does not.
    if per_bucket not in args.buckets:
        args.buckets[per_bucket] = [torch.empty(n * LAYER_ELEMS) for n in sizes]
    buckets = args.buckets[per_bucket]
    dist.barrier()
    t0 = time.perf_counter()
    works = []
    if args.pattern == "queue":
        layer = 0
        for b, n in zip(buckets, sizes):
            for k in range(n):
                b[k * LAYER_ELEMS:(k + 1) * LAYER_ELEMS].copy_(grads[layer])
                layer += 1
        works = [dist.all_reduce(b, async_op=True) for b in buckets]
    else:
        layer = 0
        for b, n in zip(buckets, sizes):
            for k in range(n):
                for _ in range(args.matmuls):
                    torch.mm(x, w)
                b[k * LAYER_ELEMS:(k + 1) * LAYER_ELEMS].copy_(grads[layer])
                layer += 1
            works.append(dist.all_reduce(b, async_op=True))
    t1 = time.perf_counter()
    for wk in works:
        wk.wait()
    t2 = time.perf_counter()
    return {"step": t2 - t0, "to last hand-over": t1 - t0, "tail": t2 - t1}


def worker(rank, port, args, q, trace_dir):
    if args.pin:
        # Before any thread starts: gloo's and the autograd engine's threads
        # inherit the mask, so each rank keeps to a core of its own.
        os.sched_setaffinity(0, {rank % os.cpu_count()})
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    grads = [torch.randn(LAYER_ELEMS) for _ in range(LAYERS)]
    x, w = torch.randn(args.rows, 256), torch.randn(256, 256)
    args.buckets = {}
    if args.pattern == "ddp":
        args.ddp = DDPSteps(args.layers_per_bucket)
    for per_bucket in args.layers_per_bucket:   # warm-up, untimed
        step(args, per_bucket, grads, x, w)
    prof = None
    if trace_dir:
        import torch.profiler as tp
        prof = tp.profile(activities=[tp.ProfilerActivity.CPU])
        prof.__enter__()
    times = {c: [] for c in args.layers_per_bucket}
    for p in range(-(-args.steps // args.block)):
        # Blocks of --block steps per size, interleaved forward then backward,
        # so drift in the machine's load hits every size alike. Not one step
        # per size in turn: DDP runs one bucket size for a whole job, and on
        # 24 Nov its 0.25 MB steps took 4-7% more than 0.5 MB ones in blocks
        # of 10 but 15-26% more when the sizes took turns step by step.
        for per_bucket in (args.layers_per_bucket if p % 2 == 0 else args.layers_per_bucket[::-1]):
            for _ in range(min(args.block, args.steps - p * args.block)):
                with torch.autograd.profiler.record_function(f"step layers_per_bucket={per_bucket}"):
                    times[per_bucket].append(step(args, per_bucket, grads, x, w))
    if prof:
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(os.path.join(trace_dir, f"rank{rank}.json"))
    if rank == 0:
        q.put(times)
    dist.barrier()
    dist.destroy_process_group()


def all_reduces(path):
    """{layers per bucket: [(duration of each all-reduce started after the
    step's last hand-over, ms), ...] per step} from one rank's profile."""
    import json
    with open(path) as f:
        ev = json.load(f)
    ev = [e for e in (ev["traceEvents"] if isinstance(ev, dict) else ev) if e.get("ph") == "X"]
    steps = sorted([e for e in ev if e["name"].startswith("step layers_per_bucket=")], key=lambda e: e["ts"])
    launches = sorted(e["ts"] for e in ev if e["name"] == "c10d::allreduce_")
    ars = [e for e in ev if e["name"] == "gloo:all_reduce"]
    out = {}
    for s in steps:
        t0, t1 = s["ts"], s["ts"] + s["dur"]
        last = max(t for t in launches if t0 <= t < t1)
        tail = [e["dur"] / 1e3 for e in ars if last <= e["ts"] < t1 + 1]
        out.setdefault(int(s["name"].split("=")[1]), []).append(tail)
    return out


def run_pair(args, pattern, trace_dir):
    """One fresh pair of processes running `pattern`: {size: [{phase: seconds} per step]}."""
    run = argparse.Namespace(**vars(args))
    run.pattern = pattern
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=worker, args=(r, port, run, q, trace_dir)) for r in range(2)]
    for p in procs:
        p.start()
    times = q.get()
    for p in procs:
        p.join()
    return times


def print_rounds(args, priority):
    """--rounds: each round a fresh pair of processes per pattern (patterns in
    alternate order round by round); per pattern and size, the median over
    rounds of each round's median step, and each size against the first one
    round by round. Fresh processes, as the ground truths' rounds are: within
    one pair of processes, a few minutes' medians moved by 2-26% on 24 Nov."""
    med = statistics.median
    sizes, steps = args.layers_per_bucket, {}
    for r in range(args.rounds):
        for pattern in (args.pattern if r % 2 == 0 else args.pattern[::-1]):
            times = run_pair(args, pattern, None)
            for c in sizes:
                steps.setdefault((pattern, c), []).append(med([t["step"] for t in times[c]]) * 1e3)
        sys.stderr.write(f"round {r + 1} of {args.rounds}\n")
    print(f"# gloo DDP pattern, {args.rounds} rounds of a fresh process pair per pattern, {args.steps} steps per size"
          f" each; torch {torch.__version__}, priority {priority}; step times in ms: median over rounds of each"
          f" round's median (p10-p90 over rounds), and against the first size: the round-by-round ratio's median"
          f" (p25-p75) and in how many rounds the size was slower")
    for pattern in args.pattern:
        first = steps[(pattern, sizes[0])]
        for c in sizes:
            v = sorted(steps[(pattern, c)])
            n = len(v)
            line = (f"{pattern:8s} bucket {c * LAYER_ELEMS * 4 / 2**20:5.2f} MiB: step {med(v):6.2f}"
                    f" ({v[n // 10]:6.2f}-{v[(9 * n) // 10]:6.2f})")
            if c != sizes[0]:
                ratio = sorted(x / y for x, y in zip(steps[(pattern, c)], first))
                slower = sum(x > y for x, y in zip(steps[(pattern, c)], first))
                line += (f"  vs {sizes[0] * LAYER_ELEMS * 4 / 2**20:.2f} MiB: x{med(ratio):.3f}"
                         f" ({ratio[n // 4]:.3f}-{ratio[(3 * n) // 4]:.3f}), slower in {slower} of {n}")
            print(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pattern", choices=("backward", "queue", "ddp"), nargs="+", default=["backward"],
                    help="one or more; more than one needs --rounds")
    ap.add_argument("--rounds", type=int, default=1, help="fresh process pairs per pattern, in alternate order")
    ap.add_argument("--layers-per-bucket", type=int, nargs="+", default=[1, 2, 4, 28],
                    help="bucket sizes in layers of 263,168 bytes (1: DDP's 0.25 MB cap, 2: 0.5 MB, 4: 1 MB, 28: 25 MB)")
    ap.add_argument("--steps", type=int, default=40, help="timed steps per bucket size")
    ap.add_argument("--block", type=int, default=10, help="steps of one size in a row")
    ap.add_argument("--rows", type=int, default=2, help="rows of each backward matmul (deepmlp's batch per rank)")
    ap.add_argument("--matmuls", type=int, default=2, help="matmuls per layer of backward")
    ap.add_argument("--pin", action="store_true", help="each rank and all its threads on a core of its own")
    ap.add_argument("--profile", action="store_true", help="also time each all-reduce (torch profiler)")
    ap.add_argument("--nice", type=int, default=-10, help="autogroup niceness of this run (0 = none)")
    args = ap.parse_args()
    if args.rounds < 1 or args.steps < 1 or args.block < 1:
        ap.error("--rounds, --steps and --block must be at least 1")
    if len(args.pattern) > 1 and args.rounds == 1:
        ap.error("more than one --pattern needs --rounds (each round runs each pattern in fresh processes)")
    if args.profile and args.rounds > 1:
        ap.error("--profile takes one round")
    if args.nice and os.environ.get("TS_GLOO_SESSION") != "1":
        return subprocess.call([sys.executable, *sys.argv], start_new_session=True,
                               env=dict(os.environ, TS_GLOO_SESSION="1"))
    priority = prioritize(args.nice) if args.nice else "none"
    if args.rounds > 1:
        print_rounds(args, priority)
        return 0
    pattern = args.pattern[0]
    with tempfile.TemporaryDirectory() as tmp:
        trace_dir = tmp if args.profile else None
        times = run_pair(args, pattern, trace_dir)
        tails = [all_reduces(os.path.join(tmp, f"rank{r}.json")) for r in range(2)] if trace_dir else None
    med, mean = statistics.median, statistics.mean
    print(f"# gloo DDP pattern ({pattern}), 2 processes, torch {torch.__version__}, priority {priority},"
          f" {args.steps} steps per size, load average {os.getloadavg()[0]:.2f}; times in ms, median (mean)")
    for c in args.layers_per_bucket:
        line = f"bucket {c * LAYER_ELEMS * 4 / 2**20:5.2f} MiB x {len(bucket_layers(c)):2d}:"
        for phase in times[c][0]:
            ms = [t[phase] * 1e3 for t in times[c]]
            line += f"  {phase} {med(ms):6.2f} ({mean(ms):6.2f})"
        if tails:
            per_step = [t for r in range(2) for t in tails[r].get(c, [])]
            d = sorted(x for t in per_step for x in t)
            if d:
                qs = " ".join(f"{d[int(p * (len(d) - 1))]:.2f}" for p in (0.1, 0.5, 0.75, 0.9, 0.99))
                line += (f"  | tail all-reduces: {med([len(t) for t in per_step]):.0f} per step,"
                         f" median {med(d):.2f} mean {mean(d):.2f}, p10/50/75/90/99 {qs}")
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
