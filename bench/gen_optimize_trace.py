#!/usr/bin/python3
"""A real graph for bench/optimize: a 12-layer transformer trained with DDP over gloo
by 2 processes on CPU, one all-reduce per gradient (bucket_cap_mb tiny; the class head's
1 MiB weight fills DDP's 1 MiB first bucket with its bias), traced under the legacy
autograd profiler like examples/workloads/gen_ground_truth.py (whose model and profiled
steps it reuses).

What it is for: a graph of 15,000+ nodes with 100+ gradient all-reduces per iteration
to measure the optimizer's evaluations per second on. Not for: accuracy (one run, no
rounds; see gen_ground_truth.py).

Writes OUT/trace/rank{0,1}.json.zst and OUT/gradients.json (names and bytes, registration
order). Run: /usr/bin/python3 bench/gen_optimize_trace.py [OUT] (about a minute).
"""
import json
import os
import subprocess
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "workloads"))
import gen_ground_truth as gt  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

LAYERS, CLASSES, STEPS, WARMUP = 12, 2048, 6, 3


def worker(rank, port, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(0)
    base = gt.TinyTransformer(layers=LAYERS, classes=CLASSES)
    model = DDP(base, bucket_cap_mb=0.0001)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(1 + rank)
    data = [(torch.randint(0, 1000, (1, 16), generator=g), torch.randint(0, CLASSES, (1,), generator=g))
            for _ in range(4)]
    gt.timed_steps(model, opt, data, WARMUP, 0)   # DDP rebuilds its buckets after the first
    path = os.path.join(out, "trace", f"rank{rank}.json")
    gt.profiled_steps(model, opt, data, STEPS, WARMUP, path)
    if rank == 0:
        with open(os.path.join(out, "gradients.json"), "w") as f:
            json.dump(gt.gradients_doc(base, 2), f, indent=1)
        info = gt.ddp_info(model)
        print(f"{len(info['buckets'])} DDP buckets for {sum(1 for _ in base.parameters())} gradients")
    dist.barrier()
    dist.destroy_process_group()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "bench/data/optimize_transformer12"
    os.makedirs(os.path.join(out, "trace"), exist_ok=True)
    mp.spawn(worker, args=(gt.free_port(), out), nprocs=2)
    for r in range(2):
        subprocess.run(["zstd", "-q", "-19", "-f", "--rm", os.path.join(out, "trace", f"rank{r}.json")], check=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
