#!/usr/bin/python3
"""Make the bundled example trace: a 2-rank DDP training over gloo on CPU.

What it is for: a small, real multi-rank trace that trainscope's README commands
(`trainscope stats`, `trainscope breakdown`) run on, written by Debian's
python3-torch 1.13 (CPU build, no Kineto), so the files are the *legacy*
Chrome-trace format: a bare JSON list of "X" events, no "cat", pid
"CPU functions", small integer tids, timestamps in integer microseconds relative
to each process's own profiler start.  See docs/workloads.md.

What it is not for: measuring anything; examples/workloads/gen_ground_truth.py
makes the timed ground truth.

Invariants of the output: rank0.json and rank1.json hold the same number of
ProfilerStep#N slices (N = 0..STEPS-1, one per profiled training step), each
step containing the forward, the backward with DDP's gloo all-reduces (one per
gradient bucket) and the optimizer step.

Run:  /usr/bin/python3 examples/ddp_gloo/make_trace.py   (about 20 s)
"""
import argparse
import os
import socket
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")  # 2-core machine: one thread per rank

import torch  # noqa: E402  (after OMP_NUM_THREADS on purpose)
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = 2
WARMUP = 3         # unprofiled steps first: DDP builds its buckets on step 0
STEPS = 5          # profiled steps, each one ProfilerStep#N
BATCH = 64
BUCKET_MB = 1      # small buckets so backward holds several all-reduces


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_model():
    # 256 -> 512 -> 512 -> 10 MLP: 1.6 MB of fp32 gradients; with a 1 MB cap DDP
    # makes two buckets (the last two layers, then the first), so two all-reduces.
    return torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 10))


def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


def worker(rank, port, out_dir):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    torch.manual_seed(0)                      # same initial weights on both ranks
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    model = DDP(make_model(), bucket_cap_mb=BUCKET_MB)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(1000 + rank)  # each rank its own data shard
    batches = [(torch.randn(BATCH, 256, generator=gen),
                torch.randint(0, 10, (BATCH,), generator=gen))
               for _ in range(WARMUP + STEPS)]
    for x, y in batches[:WARMUP]:
        train_step(model, opt, x, y)
    dist.barrier()
    with torch.autograd.profiler.profile(record_shapes=True) as prof:
        for i, (x, y) in enumerate(batches[WARMUP:]):
            with torch.autograd.profiler.record_function(f"ProfilerStep#{i}"):
                train_step(model, opt, x, y)
    prof.export_chrome_trace(os.path.join(out_dir, f"rank{rank}.json"))
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=HERE, help="output folder (default: next to this script)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    mp.spawn(worker, args=(free_port(), args.out), nprocs=WORLD, join=True)
    for r in range(WORLD):
        p = os.path.join(args.out, f"rank{r}.json")
        print(f"{p}: {os.path.getsize(p)} bytes")


if __name__ == "__main__":
    sys.exit(main())
