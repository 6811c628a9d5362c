#!/usr/bin/python3
"""Measured ground truth for trainscope's replay accuracy (issue 3, "Accuracy").

What it is for: data-parallel training over gloo, 2 processes on CPU, for three
models (mlp, cnn, transformer) and several DDP bucket_cap_mb values per model.
For every model x bucket it measures, in interleaved rounds (each round gives
every bucket size of a model a block in turn, the order rotating by round, so
drift in the background load of a shared machine hits all bucket sizes alike):
  - unprofiled step times, many steps after warm-up;
  - right after each unprofiled block, a short profiled block under
    torch.autograd.profiler with one ProfilerStep#N record_function per step;
    the profiled blocks of --saved-rounds evenly spaced rounds, fixed before
    measuring (never picked by their times), are saved as traces of every rank
    (Chrome-trace JSON, torch 1.13 legacy format, zstd -19 or gzip -9);
  - from every round's trace, the figure trainscope replay reports for one
    trace (per step the slowest rank's ProfilerStep#N, median over the steps),
    so predictions can be scored against a measurement defined like them;
and writes results/<model>_bucket<N>.json, results/<model>_gradients.json,
results/summary.json and traces/<model>_bucket<N>/round<R>/rank{0,1}.json.zst
next to this script.  It runs itself in a session of its own with a raised autogroup
priority (see prioritize()).
What it is not for: the bundled README example (examples/ddp_gloo/).

Invariants: a step runs zero_grad, forward, loss, backward (DDP's bucketed gloo
all-reduces overlap it), optimizer step, and loss.item(); a step's time is the
time between the starts of consecutive steps on one rank (so step times add up
to wall time, as ProfilerStep#N spans do).  Both ranks run the same number of
steps.  Times in the JSON are milliseconds.

Run:  /usr/bin/python3 examples/workloads/gen_ground_truth.py   (about 5 min; see docs/workloads.md)
"""
import argparse
import concurrent.futures
import copy
import gzip
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # 2-core machine: one compute thread per rank

import torch  # noqa: E402  (after OMP_NUM_THREADS on purpose)
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = 2


class TinyTransformer(torch.nn.Module):
    """A 6-layer post-norm encoder (d_model 128, 4 heads, ff 512) with a class head."""

    def __init__(self, d=128, layers=6, classes=10, vocab=1000):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        layer = torch.nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = torch.nn.Linear(d, classes)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)).mean(dim=1))


def mlp(width=512, hidden=8):
    layers = []
    for _ in range(hidden):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(width, 10))


def deepmlp():
    # 32 layers of 256 KiB weights: a 0.25 MB cap gives one bucket per layer, so the
    # per-all-reduce cost dominates and the bucket sizes have a clear order.
    return mlp(256, 32)


def cnn():
    # Parameters spread over several tensors of 0.3-2.4 MB so the bucket cap matters.
    c = torch.nn
    return c.Sequential(
        c.Conv2d(3, 32, 3, padding=1), c.ReLU(),
        c.Conv2d(32, 64, 3, padding=1), c.ReLU(), c.MaxPool2d(2),
        c.Conv2d(64, 128, 3, padding=1), c.ReLU(), c.MaxPool2d(2),
        c.Conv2d(128, 256, 3, padding=1), c.ReLU(), c.MaxPool2d(2),
        c.Conv2d(256, 256, 3, padding=1), c.ReLU(), c.AdaptiveAvgPool2d(2),
        c.Flatten(), c.Linear(256 * 4, 512), c.ReLU(), c.Linear(512, 10))


# name -> (model builder, input maker(batch, generator), batch, bucket caps in MB).
# The caps are chosen so that each one gives a different number of buckets.  Batches
# are small on purpose: Debian's CPU torch does about 4 GFLOP/s in a 1-thread matmul
# and gloo all-reduces about 0.7 GB/s over loopback here, so small batches keep a
# step near 50-100 ms with communication a visible share of it.
MODELS = {
    "mlp": (mlp, lambda b, g: torch.randn(b, 512, generator=g), 2, [1, 4, 25]),
    "deepmlp": (deepmlp, lambda b, g: torch.randn(b, 256, generator=g), 2, [0.25, 0.5, 1, 25]),
    "cnn": (cnn, lambda b, g: torch.randn(b, 3, 32, 32, generator=g), 2, [1, 2, 25]),
    "transformer": (TinyTransformer, lambda b, g: torch.randint(0, 1000, (b, 16), generator=g),
                    1, [1, 2, 25]),
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


def timed_steps(model, opt, data, n, start):
    """Run n steps; return n step times (ms), each from one step start to the next."""
    t = [time.perf_counter()]
    for i in range(n):
        train_step(model, opt, *data[(start + i) % len(data)])
        t.append(time.perf_counter())
    return [round((b - a) * 1e3, 4) for a, b in zip(t, t[1:])]


def profiled_steps(model, opt, data, n, start, trace_path):
    """n steps under the profiler, one ProfilerStep#i (i = 0..n-1) each; returns their
    step times (ms).  Writes the trace to trace_path unless it is None."""
    t = [time.perf_counter()]
    with torch.autograd.profiler.profile() as prof:
        for i in range(n):
            with torch.autograd.profiler.record_function(f"ProfilerStep#{i}"):
                train_step(model, opt, *data[(start + i) % len(data)])
            t.append(time.perf_counter())
    if trace_path:
        prof.export_chrome_trace(trace_path)
    return [round((b - a) * 1e3, 4) for a, b in zip(t, t[1:])]


def ddp_info(model):
    """The buckets DDP reduced in the last step (after its rebuild), in reduction order."""
    names = {id(p): n for n, p in model.module.named_parameters()}
    buckets = [{"bytes": b.buffer().numel() * b.buffer().element_size(),
                "parameters": [names.get(id(p), "?") for p in b.parameters()]}
               for b in model.reducer._get_zeros_like_grad_buckets()]
    ld = model._get_ddp_logging_data()
    return {"n_buckets": len(buckets), "bucket_bytes": [b["bytes"] for b in buckets],
            "has_rebuilt_buckets": int(ld.get("has_rebuilt_buckets", 0)),
            "first_bucket_cap_bytes": dist._DEFAULT_FIRST_BUCKET_BYTES,
            "gloo_num_threads": ld.get("gloo_num_threads"), "buckets": buckets}


def run_model(rank, name, args, tmp):
    """Measure every bucket size of one model in interleaved rounds.  A round gives
    each bucket size (in an order rotating by round) one re-warm step, an unprofiled
    block and a profiled block, whose trace is kept (write_one() picks one to save)."""
    build, make_x, batch, caps = MODELS[name]
    torch.manual_seed(0)                        # same initial weights on both ranks
    base = build()
    gen = torch.Generator().manual_seed(1000 + rank)   # each rank its own data shard
    data = [(make_x(batch, gen), torch.randint(0, 10, (batch,), generator=gen))
            for _ in range(16)]
    def instance(cap):
        m = DDP(copy.deepcopy(base), bucket_cap_mb=cap)
        opt = torch.optim.SGD(m.parameters(), lr=0.001)
        timed_steps(m, opt, data, args.warmup, 0)    # DDP rebuilds its buckets after step 0
        return m, opt

    # --fresh-instances: a new DDP instance (model copy, buckets, optimizer) for every
    # bucket size in every round. One instance per bucket size for the whole run ties
    # a bucket size to where its copy happened to land in memory: on 24 Nov the same
    # backward without any all-reduce took 5.46 and 5.88 ms in two instances and 3.50 ms
    # in the third of one process (bench/backward_contention.py --keep-instances; not
    # in every run), a difference of compute speed that no bucket what-if can predict.
    runs = {}
    for cap in caps:
        m, opt = (None, None) if args.fresh_instances else instance(cap)
        runs[cap] = {"model": m, "opt": opt, "traces": [],
                     "unprofiled_rounds_ms": [], "profiled_rounds_ms": []}
    for r in range(args.rounds):
        for cap in caps[r % len(caps):] + caps[:r % len(caps)]:
            run = runs[cap]
            if args.fresh_instances:
                run["model"] = run["opt"] = None         # free the last round's copy first
                run["model"], run["opt"] = instance(cap)
            m, opt = run["model"], run["opt"]
            trace = os.path.join(tmp, f"{name}_bucket{cap}_round{r}_rank{rank}.json")
            run["traces"].append(trace)
            timed_steps(m, opt, data, 1, r)              # re-warm after the switch
            run["unprofiled_rounds_ms"].append(timed_steps(m, opt, data, args.steps, r))
            run["profiled_rounds_ms"].append(
                profiled_steps(m, opt, data, args.profiled_steps, r, trace))
    for cap in caps:
        runs[cap]["ddp"] = ddp_info(runs[cap]["model"])
        del runs[cap]["model"], runs[cap]["opt"]
    return base, batch, caps, runs


def cpu_pressure():
    """The kernel's CPU pressure (% of time some task waited for a CPU, last 10 s), or None."""
    try:
        with open("/proc/pressure/cpu") as f:
            return float(f.readline().split()[1].split("=")[1])
    except (OSError, IndexError, ValueError):
        return None


def worker(rank, port, args, tmp):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    summary = {}
    for name in args.models:
        t0 = time.time()
        load = {"loadavg_1m": [round(os.getloadavg()[0], 2)], "cpu_pressure_pct": [cpu_pressure()]}
        base, batch, caps, runs = run_model(rank, name, args, tmp)
        load["loadavg_1m"].append(round(os.getloadavg()[0], 2))   # noise indicators
        load["cpu_pressure_pct"].append(cpu_pressure())
        gathered = [None] * WORLD
        dist.all_gather_object(gathered, runs)
        if rank == 0:
            summary[name] = write_results(name, base, batch, caps, gathered, load, args)
            print(f"{name}: {time.time() - t0:.1f} s", flush=True)
        dist.barrier()
    if rank == 0:
        write_summary(summary, args)
    dist.destroy_process_group()


def spread(xs):
    """median, p10, p90, mean, n of a list of ms values."""
    q = statistics.quantiles(xs, n=10, method="inclusive") if len(xs) > 1 else [xs[0]] * 9
    return {"median_ms": round(statistics.median(xs), 4), "p10_ms": round(q[0], 4),
            "p90_ms": round(q[8], 4), "mean_ms": round(statistics.fmean(xs), 4), "n": len(xs)}


def iteration_rounds(ranks, key):
    """Per round, the iteration times: for each step, the mean over ranks of its time
    (the ranks run in lockstep, so their step times differ only by jitter)."""
    return [[round(statistics.fmean(s), 4) for s in zip(*steps)]
            for steps in zip(*(r[key] for r in ranks))]


def saved_rounds(n_rounds, k, n_caps=1):
    """The rounds whose traces are saved: k evenly spaced ones (the middle of
    each of k equal stretches), fixed before measuring so that the saved traces
    are a fair sample of the run, not the rounds that happened to look typical.
    A round gives the bucket sizes their blocks in an order rotating by round, so
    the i-th one is moved within its stretch to the nearest round of rotation
    i mod n_caps: every bucket size's saved traces then come from every place in
    the round alike. Until 24 Nov 06:20 a spacing that was a multiple of
    deepmlp's 4 sizes gave each size its saved rounds at one place only, and the
    medians per place differed by up to 16% (heldout-2026-11-24d: deepmlp 1 MB
    26.3 ms second in its round, 30.7 ms last)."""
    k = max(1, min(k, n_rounds))
    out = set()
    for i in range(k):
        lo, hi, mid = i * n_rounds // k, (i + 1) * n_rounds // k, (2 * i + 1) * n_rounds // (2 * k)
        same_place = [r for r in range(lo, hi) if r % n_caps == i % n_caps]
        out.add(min(same_place, key=lambda r: abs(r - mid)) if same_place else mid)
    return sorted(out)


def replay_figure(steps_per_rank):
    """What `trainscope replay` reports for one trace: per step the slowest
    rank's ProfilerStep#N duration, then the median over the steps (ms)."""
    return round(statistics.median(max(s) for s in zip(*steps_per_rank)), 4)


def trace_steps_ms(path):
    """ProfilerStep#N durations (ms) in step order, read back from an exported trace."""
    with open(path) as f:
        events = json.load(f)
    steps = sorted((int(e["name"].split("#")[1]), e["dur"]) for e in events
                   if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
    return [round(d / 1e3, 3) for _, d in steps]


def gradients_doc(model, world):
    # Parameter names and byte sizes in registration order (DDP buckets them in reverse);
    # the same for every bucket size, so one file per model.
    params = [{"name": n, "bytes": p.numel() * p.element_size(), "shape": list(p.shape),
               "dtype": str(p.dtype).replace("torch.", "")}
              for n, p in model.named_parameters() if p.requires_grad]
    return {"world_size": world, "parameters": params}


def write_results(name, base, batch, caps, per_rank, load, args):
    """Writes results/<name>_gradients.json and one results/<name>_bucket<N>.json per
    bucket size; returns the per-model entry of results/summary.json."""
    res_dir = os.path.join(args.out, "results")
    os.makedirs(res_dir, exist_ok=True)
    grads = gradients_doc(base, WORLD)
    with open(os.path.join(res_dir, f"{name}_gradients.json"), "w") as f:
        json.dump(grads, f, indent=1)
    docs = {cap: write_one(name, cap, batch, grads, [r[cap] for r in per_rank], load, args)
            for cap in caps}
    return model_summary(caps, docs)


def compress_later(src, dst_base, args):
    """Queues src (a JSON trace) for compress_queued(), to dst_base + ".zst" (zstd
    -19: a third smaller than gzip -9 on these traces, but 2 s a file) or + ".gz"
    when zstd is missing; returns the path it will have."""
    dst = dst_base + (".zst" if shutil.which("zstd") else ".gz")
    with open(os.path.join(args.tmp, "compress.jobs"), "a") as f:
        f.write(f"{src}\t{dst}\n")
    return dst


def compress_queued(tmp):
    """Compresses the queued traces, after every measurement (so that it never
    runs beside one, and the ranks never wait for it)."""
    jobs = os.path.join(tmp, "compress.jobs")
    if not os.path.exists(jobs):
        return

    def one(job):
        src, dst = job
        if dst.endswith(".zst"):
            subprocess.run(["zstd", "-19", "-q", "-f", src, "-o", dst], check=True)
            return
        with open(src, "rb") as fin, gzip.GzipFile(dst, "wb", 9, mtime=0) as out:
            shutil.copyfileobj(fin, out)
    with open(jobs) as f:
        todo = [line.rstrip("\n").split("\t") for line in f]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(one, todo))   # list(): re-raises a failed job's error


def save_traces(name, cap, ranks, rounds, args):
    """Queues the ranks' traces of the given rounds for compression into
    traces/<name>_bucket<cap>/round<R>/ (an older run's files there go first);
    returns [{"round": R, "traces": [paths relative to --out]}]."""
    cap_dir = os.path.join(args.out, "traces", f"{name}_bucket{cap}")
    shutil.rmtree(cap_dir, ignore_errors=True)
    saved = []
    for rnd in rounds:
        trace_dir = os.path.join(cap_dir, f"round{rnd}")
        os.makedirs(trace_dir)
        paths = [compress_later(r["traces"][rnd], os.path.join(trace_dir, f"rank{rank}.json"), args)
                 for rank, r in enumerate(ranks)]
        saved.append({"round": rnd, "traces": [os.path.relpath(p, args.out) for p in paths]})
    return saved


def trace_figures(ranks, n_rounds):
    """Per round: every rank's ProfilerStep#N durations read back from its trace,
    and the replay figure of that round's trace."""
    steps = [[trace_steps_ms(r["traces"][rnd]) for r in ranks] for rnd in range(n_rounds)]
    return steps, [replay_figure(s) for s in steps]


def write_one(name, cap, batch, grads, ranks, load, args):
    unprof_rounds = iteration_rounds(ranks, "unprofiled_rounds_ms")
    prof_rounds = iteration_rounds(ranks, "profiled_rounds_ms")
    unprof = spread([x for r in unprof_rounds for x in r])
    prof = spread([x for r in prof_rounds for x in r])
    # Overhead from paired rounds: each profiled block ran right after its unprofiled one.
    paired = [statistics.median(p) / statistics.median(u) for u, p in zip(unprof_rounds, prof_rounds)]
    steps, figures = trace_figures(ranks, len(prof_rounds))
    saved = save_traces(name, cap, ranks, saved_rounds(len(prof_rounds), args.saved_rounds, len(MODELS[name][3])), args)
    doc = {
        "model": name, "bucket_cap_mb": cap, "world_size": WORLD, "backend": "gloo",
        "device": "cpu", "batch_per_rank": batch,
        "n_parameters": sum(p["bytes"] // 4 for p in grads["parameters"]),
        "gradient_bytes": sum(p["bytes"] for p in grads["parameters"]),
        "ddp": ranks[0]["ddp"], "load": load,
        "torch_version": torch.__version__, "python": sys.version.split()[0],
        "threads": {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
                    "torch_num_threads": torch.get_num_threads(),
                    "torch_interop_threads": torch.get_num_interop_threads(),
                    "cpu_count": os.cpu_count()},
        "method": {"warmup_steps": args.warmup, "rounds": args.rounds,
                   "fresh_instances": bool(args.fresh_instances),
                   "steps_per_round": args.steps, "profiled_steps_per_round": args.profiled_steps,
                   "saved_rounds": "evenly spaced, fixed before measuring",
                   "trace_replay_ms": "per round, from its traces: per step the slowest rank's "
                                      "ProfilerStep#N duration, median over the steps (what trainscope "
                                      "replay reports for one trace); median_ms is the median over rounds",
                   "priority": args.priority,
                   "iteration_ms": "per step, mean over ranks of the time from one step start to the next"},
        "iteration": {"unprofiled": unprof, "profiled": prof,
                      "profiler_overhead_pct": round(100 * (statistics.median(paired) - 1), 2),
                      "trace_replay_ms": {"median_ms": round(statistics.median(figures), 4),
                                          "rounds_ms": figures},
                      "unprofiled_rounds_ms": unprof_rounds, "profiled_rounds_ms": prof_rounds},
        "gradients": f"{name}_gradients.json",
        "traces": saved[0]["traces"],
        "trace_rounds": saved,
        "profiler_steps_rounds_ms": steps,
    }
    with open(os.path.join(os.path.join(args.out, "results"), f"{name}_bucket{cap}.json"), "w") as f:
        json.dump(doc, f, indent=1)
    return doc


def model_summary(caps, docs):
    """Per bucket size the headline numbers, and for each pair of bucket sizes how their
    unprofiled round medians compare round by round (paired, so drift in background
    load cancels): the median ratio and the share of rounds where the first was faster."""
    rows = {str(c): {"n_buckets": docs[c]["ddp"]["n_buckets"],
                     "unprofiled": docs[c]["iteration"]["unprofiled"],
                     "profiled": docs[c]["iteration"]["profiled"],
                     "profiler_overhead_pct": docs[c]["iteration"]["profiler_overhead_pct"],
                     "trace_replay_ms": docs[c]["iteration"]["trace_replay_ms"]}
            for c in caps}
    med = {c: [statistics.median(r) for r in docs[c]["iteration"]["unprofiled_rounds_ms"]] for c in caps}
    pairs = []
    for i, a in enumerate(caps):
        for b in caps[i + 1:]:
            ratios = [x / y for x, y in zip(med[a], med[b])]
            pairs.append({"a": a, "b": b, "median_ratio_a_over_b": round(statistics.median(ratios), 4),
                          "share_of_rounds_a_faster": round(sum(r < 1 for r in ratios) / len(ratios), 3)})
    order = sorted(caps, key=lambda c: rows[str(c)]["unprofiled"]["median_ms"])
    return {"bucket_caps_mb": caps, "by_bucket": rows, "pairs": pairs,
            "fastest_to_slowest": order}


def write_summary(summary, args):
    """Writes results/summary.json; models measured by an earlier run (--models
    names a subset) keep their entries."""
    path = os.path.join(args.out, "results", "summary.json")
    models = {}
    if os.path.exists(path):
        with open(path) as f:
            models = json.load(f).get("models", {})
    models.update(summary)
    models = {m: models[m] for m in list(MODELS) + sorted(set(models) - set(MODELS)) if m in models}
    with open(path, "w") as f:
        json.dump({"torch_version": torch.__version__, "world_size": WORLD,
                   "models": models}, f, indent=1)


def prioritize(nice):
    """Give this process and the ranks it spawns CPU priority over other users'
    work on a shared machine.  With the kernel's autogroup scheduling (Debian's
    default) CPU time is shared fairly between sessions and a plain nice() only
    counts inside one session, so main() runs the script in a session of its own
    and this sets that session's autogroup niceness.  Returns what it did."""
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write(str(nice))
        return f"autogroup nice {nice}"
    except OSError:
        pass
    try:
        os.nice(nice)
        return f"nice {nice}"
    except OSError as e:
        print(f"gen_ground_truth: cannot raise priority ({e}); measuring at normal priority",
              file=sys.stderr)
        return "none"


def run_in_own_session():
    """Re-runs this script in a new session (so a new autogroup: the priority
    covers this run only) and waits; Ctrl-C stops the whole run."""
    child = subprocess.Popen([sys.executable, *sys.argv], start_new_session=True,
                             env=dict(os.environ, TS_GT_SESSION="1"))
    try:
        return child.wait()
    except KeyboardInterrupt:
        os.killpg(child.pid, signal.SIGTERM)   # the ranks share the child's process group
        child.wait()
        return 130


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=HERE, help="folder for results/ and traces/ (default: this script's)")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--warmup", type=int, default=5, help="unmeasured steps per bucket size")
    ap.add_argument("--rounds", type=int, default=12, help="interleaved measuring rounds")
    ap.add_argument("--steps", type=int, default=15,
                    help="unprofiled steps per bucket size per round")
    ap.add_argument("--profiled-steps", type=int, default=6,
                    help="profiled steps per bucket size per round (and in each saved trace)")
    ap.add_argument("--saved-rounds", type=int, default=3,
                    help="rounds whose profiled traces are saved (evenly spaced)")
    ap.add_argument("--fresh-instances", action="store_true",
                    help="a new DDP instance for every bucket size in every round (default: one per bucket size)")
    ap.add_argument("--nice", type=int, default=-10,
                    help="niceness of the run's own scheduler group (negative needs root; 0 = none)")
    args = ap.parse_args()
    if args.nice and os.environ.get("TS_GT_SESSION") != "1":
        return run_in_own_session()
    args.priority = prioritize(args.nice) if args.nice else "none"
    tmp = args.tmp = tempfile.mkdtemp(prefix="ts_gt_")
    try:
        mp.spawn(worker, args=(free_port(), args, tmp), nprocs=WORLD, join=True)
        compress_queued(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
