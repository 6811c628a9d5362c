#!/usr/bin/python3
"""One rank of a testbed run: DDP training over gloo (TCP) inside its network namespace.

What it is for: bench/testbed/testbed.py starts one of these per rank, each
inside its own network namespace whose only link is shaped by tc, so gloo's
all-reduces cross a link of known rate. It trains one model for warm-up,
unprofiled and profiled steps and writes, under --out:
  rank<R>.json        step times (ms) and what DDP did (buckets), this rank's
  trace/rank<R>.json  the profiled window (torch.autograd.profiler, legacy
                      Chrome-trace JSON with ProfilerStep#N slices: what
                      `trainscope replay` reads), record_shapes off
  gradients.json      (rank 0) parameter names and bytes, registration order
A plan (--plan plan.json, member "ddp": {"bucket_cap_mb": X or null,
"groups": [[name, ...], ...]}) sets the bucket cap where it has one (the
groups are then what that cap gives: DDP's own buckets, no hook), else
replaces DDP's buckets by the listed gradient groups, all-reduced in the
listed order by a DDP communication hook (flatten a group, all_reduce,
unflatten).
What it is not for: setting up namespaces or links (testbed.py does), or
scoring anything (bench/testbed_accuracy.sh).

Invariants: every rank runs the same steps; a step is zero_grad, forward,
loss, backward (DDP's all-reduces overlap it), optimizer step, loss.item();
a step's time runs from its start to the next step's start.
"""
import argparse
import datetime
import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")   # 2 cores shared by every rank: one compute thread each

import torch  # noqa: E402  (after OMP_NUM_THREADS on purpose)
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "examples", "workloads")]
from models import MODELS  # noqa: E402
# The ground truth's step and timed block: the same steps as there.
from gen_ground_truth import timed_steps as timed, train_step  # noqa: E402


def profiled(model, opt, data, n, start, path, shapes=False):
    """n steps under the legacy profiler, one ProfilerStep#i each, their
    times (ms); the trace to path. One unmarked step before them pays the
    profiler's start-up (bench/testbed/profiler_overhead.py measured 186 us
    per recorded op on the wide model with that step timed, about 0 without
    it) and one after them lets
    gloo's workers record the end of the last step's all-reduces, which
    they do after waking the training thread (without it the last step's
    all-reduce was missing on a rank)."""
    t = []
    with torch.autograd.profiler.profile(record_shapes=shapes) as prof:
        train_step(model, opt, *data[start % len(data)])
        t.append(time.perf_counter())
        for i in range(n):
            with torch.autograd.profiler.record_function(f"ProfilerStep#{i}"):
                train_step(model, opt, *data[(start + 1 + i) % len(data)])
            t.append(time.perf_counter())
        train_step(model, opt, *data[(start + 1 + n) % len(data)])
    prof.export_chrome_trace(path)
    return [round((b - a) * 1e3, 3) for a, b in zip(t, t[1:])]


class GroupHook:
    """A DDP communication hook that all-reduces explicit gradient groups.

    DDP is built with one parameter per bucket (after its first step, which
    has one bucket of everything), so the hook sees each gradient as it
    becomes ready; a group is all-reduced (flattened, one gloo all_reduce,
    averaged, copied back) once all its gradients are ready and every group
    listed before it was launched, so the groups go on the wire in the
    plan's order. A bucket's future completes once every group holding one
    of its gradients is reduced."""

    def __init__(self, model, groups, world):
        self.names = {id(p): n for n, p in model.named_parameters()}
        self.groups = groups
        self.group_of = {n: g for g, grp in enumerate(groups) for n in grp}
        self.world = world
        self.reset()

    def reset(self):
        self.ready = {}          # name -> (gradient view in its bucket, the bucket's entry)
        self.next_group = 0

    def on_bucket(self, bucket):
        entry = {"fut": torch.futures.Future(), "buf": bucket.buffer(), "left": set()}
        for p, g in zip(bucket.parameters(), bucket.gradients()):
            name = self.names[id(p)]
            self.ready[name] = (g, entry)
            entry["left"].add(self.group_of[name])
        while self.next_group < len(self.groups) and all(n in self.ready for n in self.groups[self.next_group]):
            self.launch(self.next_group)
            self.next_group += 1
        fut = entry["fut"]
        if self.next_group == len(self.groups):
            self.reset()
        return fut

    def launch(self, gi):
        held = [self.ready[n] for n in self.groups[gi]]
        flat = torch.cat([g.reshape(-1) for g, _ in held])
        work = dist.all_reduce(flat, async_op=True)

        def done(_f):
            flat.div_(self.world)
            off = 0
            for g, entry in held:
                g.copy_(flat[off:off + g.numel()].view_as(g))
                off += g.numel()
            for _, entry in held:
                if gi in entry["left"]:
                    entry["left"].discard(gi)
                    if not entry["left"]:
                        entry["fut"].set_result(entry["buf"])
            return None
        work.get_future().then(done)


def group_hook(state, bucket):
    """DDP's hook signature (a plain function, as DDP checks its __name__); state is the GroupHook."""
    return state.on_bucket(bucket)


def load_plan(path, model):
    """(bucket_cap_mb or None, groups or None) from plan.json's "ddp" member;
    exits 2 naming the file on a malformed plan."""
    try:
        with open(path) as f:
            ddp = json.load(f)["ddp"]
        cap = ddp.get("bucket_cap_mb")
        groups = ddp.get("groups")
        if cap is not None and not (isinstance(cap, (int, float)) and cap > 0):
            raise ValueError("bucket_cap_mb must be a number > 0 or null")
        if groups is not None:
            names = [n for n, p in model.named_parameters() if p.requires_grad]
            listed = [n for g in groups for n in g]
            if sorted(listed) != sorted(names):
                missing, extra = set(names) - set(listed), set(listed) - set(names)
                raise ValueError("groups must list every parameter once (missing %s, unknown %s, %d listed twice)"
                                 % (sorted(missing)[:3], sorted(extra)[:3], len(listed) - len(set(listed))))
        return cap, groups
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError) as e:
        print(f"rank: {path}: {e}", file=sys.stderr)
        sys.exit(2)


def ddp_buckets(model):
    names = {id(p): n for n, p in model.module.named_parameters()}
    return [{"bytes": b.buffer().numel() * b.buffer().element_size(),
             "parameters": [names.get(id(p), "?") for p in b.parameters()]}
            for b in model.reducer._get_zeros_like_grad_buckets()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--master", required=True, help="rank 0's address")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--model", required=True, choices=list(MODELS))
    ap.add_argument("--batch", type=int, default=0, help="per rank (0 = the model's default)")
    ap.add_argument("--bucket-mb", type=float, default=25.0)
    ap.add_argument("--plan", help="plan.json (its ddp member overrides --bucket-mb)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--profiled-steps", type=int, default=4)
    ap.add_argument("--record-shapes", action="store_true", help="profile with record_shapes")
    ap.add_argument("--comm-hook", choices=["fp16", "bf16"],
                    help="DDP's fp16_compress_hook / bf16_compress_hook (default_hooks): gradients all-reduced "
                         "at 16 bits (gloo in torch 1.13 reduces fp16, not bf16)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    os.environ.setdefault("GLOO_SOCKET_IFNAME", "eth0")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://{a.master}:{a.port}", rank=a.rank,
                            world_size=a.world, timeout=datetime.timedelta(seconds=120))
    build, make_x, batch = MODELS[a.model]
    batch = a.batch or batch
    torch.manual_seed(0)                                # same initial weights on every rank
    net = build()
    gen = torch.Generator().manual_seed(1000 + a.rank)  # each rank its own data shard
    data = [(make_x(batch, gen), torch.randint(0, 10, (batch,), generator=gen)) for _ in range(8)]
    cap, groups = (a.bucket_mb, None)
    if a.plan:
        pcap, groups = load_plan(a.plan, net)
        if pcap is not None:   # a cap gives the plan's groups: DDP's built-in all-reduce, no hook
            cap, groups = pcap, None
    if groups:
        # One parameter per bucket (the first bucket's 1 MiB cap included), so the hook sees each gradient.
        dist._DEFAULT_FIRST_BUCKET_BYTES = 1
        model = DDP(net, bucket_cap_mb=1e-6)
        model.register_comm_hook(GroupHook(net, groups, a.world), group_hook)
    else:
        model = DDP(net, bucket_cap_mb=cap)
    if a.comm_hook:
        if groups:
            sys.exit("rank: --comm-hook and a plan's groups are two communication hooks; give one")
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        model.register_comm_hook(None, getattr(default_hooks, a.comm_hook + "_compress_hook"))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    os.makedirs(os.path.join(a.out, "trace"), exist_ok=True)
    if a.rank == 0:
        params = [{"name": n, "bytes": p.numel() * p.element_size(), "shape": list(p.shape),
                   "dtype": str(p.dtype).replace("torch.", "")}
                  for n, p in net.named_parameters() if p.requires_grad]
        with open(os.path.join(a.out, "gradients.json"), "w") as f:
            json.dump({"world_size": a.world, "parameters": params}, f, indent=1)
    warm = timed(model, opt, data, a.warmup, 0)         # DDP rebuilds its buckets after step 0
    dist.barrier()
    unprof = timed(model, opt, data, a.steps, a.warmup)
    dist.barrier()
    prof = profiled(model, opt, data, a.profiled_steps, a.warmup + a.steps,
                    os.path.join(a.out, "trace", f"rank{a.rank}.json"), a.record_shapes)
    dist.barrier()
    doc = {"rank": a.rank, "world": a.world, "model": a.model, "batch": batch,
           "bucket_cap_mb": None if groups else cap, "groups": groups, "comm_hook": a.comm_hook,
           "warmup_ms": warm, "unprofiled_ms": unprof, "profiled_ms": prof,
           "buckets": None if groups else ddp_buckets(model),
           "torch_version": torch.__version__, "loadavg_1m": os.getloadavg()[0]}
    with open(os.path.join(a.out, f"rank{a.rank}.json"), "w") as f:
        json.dump(doc, f)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
