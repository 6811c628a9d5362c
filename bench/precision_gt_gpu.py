#!/usr/bin/env python3
"""precision_gt_gpu.py - GPU ground truth for trainscope's precision what-if
(`replay --precision-plan`), the CUDA counterpart of bench/precision_gt.py:
three models large enough that the GPU, not the Python launch loop, bounds
the step, trained under five precision plans, with their step time, peak
memory and Kineto traces. Not for CPU measurements (precision_gt.py is).

Run on a GPU machine: python3 bench/precision_gt_gpu.py --out DIR
[--rounds N] [--budget-s S]. Rehearse on a CPU: --device cpu --tiny.
  * models: `mlp` (4 linear 4096 wide, batch 4096), `cnn` (4 conv on
    128x128 images, batch 64), `tfm` (input projection, 2 transformer
    encoder layers d_model 1024, 16 heads, seq 512, batch 16, head);
  * plans: fp32; bf16 (every module under torch.autocast(dev, bfloat16));
    fp16 (autocast float16; CUDA only: CPU autocast has bf16 only); mixA
    (the first half of the modules bf16); mixB (the second half). A module
    at 16 bits casts its input to that type first and a fp32 module to fp32,
    so every module computes in its planned type and the casts between them
    are real `aten::to` ops inside the module's record_function range (its
    name). fp16 runs without a GradScaler: the scaler's unscale and inf checks
    are optimizer-side work that only the fp16 plan would have, and a timing
    does not depend on whether a gradient underflows (loss_finite records
    that the loss stayed finite);
  * fp32 is real fp32: TF32 is off for matmuls and cuDNN (machine.json
    records the flags as read back);
  * a step is forward, loss, backward, SGD step, zero_grad(set_to_none) and
    torch.cuda.synchronize(), so a step's time (and its ProfilerStep#N range
    in a trace) runs from the host's first launch to the GPU's last kernel;
  * step time, unprofiled: rounds; in each, the model's plans in a new
    shuffled order each run 2 warm-up and `steps` timed steps, timed with
    time.perf_counter around the synchronized step (wall) and with CUDA
    events (gpu); a round's figure is its median step. The result is the
    median over rounds and the 5th-95th percentile of the round medians (90%
    interval). `throughput_ms`: `steps` steps without the per-step
    synchronize, over steps (what a training loop that never waits gets);
  * peak memory (CUDA): torch.cuda.max_memory_allocated() over one step after
    reset_peak_memory_stats(): bytes of live tensors in the caching
    allocator (block-rounded), including the parameters, batch and cuBLAS
    workspace alive before the step (alive_before_step_bytes), not the
    allocator's reserved-but-free cache (max_memory_reserved recorded apart).
    CPU: the legacy profiler's allocations summed, as precision_gt.py does;
  * traces: torch.profiler (CPU + CUDA, record_shapes, profile_memory),
    schedule wait 1, warmup 1, active 3, so ProfilerStep#2..#4 are recorded;
    exported with export_chrome_trace and gzipped to DIR/<model>_<plan>.json.gz.
    Without Kineto (Debian's torch 1.13 on CPU) the trace is written from
    the legacy profiler's events by precision_gt.py's writer;
  * machine.json: GPU, driver, torch, CUDA, cuDNN, TF32 flags;
  * greedy (with --greedy-trainscope BIN): QSync's greedy plan, searched by
    `BIN optimize --passes precision` (per module, the default) on search
    traces of the fp32 and bf16 plans recorded apart
    (<model>_<plan>.search.json.gz: separate profiler sessions, after the
    other plans' peaks and traces, before any timing), under two budgets
    fixed by rule before the search: an accuracy budget of
    len(modules) - len(modules) // 2 modules (indicators 1 each: the size of
    mixB, so that both measured mixed plans are within it) and a memory limit
    of the lower of mixA's and mixB's measured peaks (so that at least one
    measured plan within the budget fits). The plan is applied per module
    (the modules its `op:N ... # OP in MODULE` lines name, bf16 autocast, as
    the other plans), then its peak, a trace and its timing taken like the
    others' (<model>_greedy.plan; .greedy: greedy.plan as trainscope wrote
    it; .opt.txt: trainscope's output). --profiler-overhead-us (3.918: the
    cost per op bench/precision-gpu measured) is passed to the search.
measured.json is rewritten after every model, so a killed run leaves the
models done. --budget-s: past it the remaining cases are skipped and listed
under "skipped"; each model's timing rounds stop at its share of the budget.
A watchdog ends the process (with a stack dump) 60 s past the budget.
"""
import argparse
import collections
import faulthandler
import gzip
import json
import os
import random
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import precision_gt as gt   # noqa: E402 (its forward, legacy-profiler trace writer and peak)
T0 = time.monotonic()


def say(msg):
    print("[%6.1fs] %s" % (time.monotonic() - T0, msg), flush=True)


def build(name, tiny, dev):
    """(model, batch) of one model; `tiny` sizes for a CPU rehearsal."""
    torch.manual_seed(0)
    od = collections.OrderedDict
    if name == "mlp":
        w, b = (64, 32) if tiny else (4096, 4096)
        m = nn.Sequential(od(fc1=nn.Linear(w, w), act1=nn.ReLU(), fc2=nn.Linear(w, w), act2=nn.ReLU(),
                             fc3=nn.Linear(w, w), act3=nn.ReLU(), fc4=nn.Linear(w, w), act4=nn.ReLU(),
                             head=nn.Linear(w, 16)))
        x = torch.randn(b, w)
    elif name == "cnn":
        c, hw, b = (8, 16, 4) if tiny else (64, 128, 64)
        m = nn.Sequential(od(conv1=nn.Conv2d(3, c, 3, padding=1), act1=nn.ReLU(),
                             conv2=nn.Conv2d(c, 2 * c, 3, padding=1), act2=nn.ReLU(), pool1=nn.MaxPool2d(2),
                             conv3=nn.Conv2d(2 * c, 4 * c, 3, padding=1), act3=nn.ReLU(), pool2=nn.MaxPool2d(2),
                             conv4=nn.Conv2d(4 * c, 4 * c, 3, padding=1), act4=nn.ReLU(),
                             gap=nn.AdaptiveAvgPool2d(1), flat=nn.Flatten(), head=nn.Linear(4 * c, 16)))
        x = torch.randn(b, 3, hw, hw)
    else:
        d, heads, seq, b = (64, 4, 16, 2) if tiny else (1024, 16, 512, 16)
        m = nn.Sequential(od(inp=nn.Linear(d, d), enc1=Encoder(d, heads), enc2=Encoder(d, heads),
                             head=nn.Linear(d, 16)))
        x = torch.randn(b, seq, d)
    return m.to(dev), x.to(dev)


class Encoder(nn.Module):
    """nn.TransformerEncoderLayer's post-norm layer (no dropout) with its
    LayerNorms fed fp32, as CUDA autocast does (CPU autocast in torch 1.13
    leaves layer_norm out of its fp32 list and refuses bf16 input with fp32
    weights)."""
    def __init__(self, d, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, dropout=0.0, batch_first=True)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        x = self.norm1((x + self.attn(x, x, x, need_weights=False)[0]).float())
        return self.norm2((x + self.down(torch.relu(self.up(x)))).float())


MODELS = ("mlp", "cnn", "tfm")


def plans(model, dev):
    names = [n for n, _ in model.named_children()]
    half = len(names) // 2
    out = {"fp32": {}, "bf16": {n: "bf16" for n in names}}
    if dev == "cuda":
        out["fp16"] = {n: "fp16" for n in names}
    out["mixA"] = {n: "bf16" for n in names[:half]}
    out["mixB"] = {n: "bf16" for n in names[half:]}
    return out


def sync(dev):
    if dev == "cuda":
        torch.cuda.synchronize()


def step(model, plan, x, opt, dev, wait=True):
    """One training step; it ends with the gradients freed (every step starts
    from the same memory) and, when `wait`, with the GPU done."""
    loss = gt.forward(model, plan, x, dev).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if wait:
        sync(dev)
    return loss


def set_full_fp32():
    """TF32 off for matmuls and cuDNN, with the API this torch has (2.9+
    has fp32_precision and deprecates allow_tf32; mixing them is refused)."""
    torch.backends.cudnn.benchmark = True
    if hasattr(torch.backends, "fp32_precision"):
        try:
            torch.backends.fp32_precision = "ieee"
            torch.backends.cuda.matmul.fp32_precision = "ieee"
            torch.backends.cudnn.conv.fp32_precision = "ieee"
            torch.backends.cudnn.rnn.fp32_precision = "ieee"
            return "fp32_precision=ieee"
        except Exception as e:   # noqa: BLE001 (fall back to the legacy flags)
            say("fp32_precision refused (%s): allow_tf32 = False instead" % e)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return "allow_tf32=False"


def read_flags(api):
    out = {"tf32_off_by": api}
    names = ["backends.fp32_precision", "backends.cuda.matmul.fp32_precision", "backends.cudnn.conv.fp32_precision",
             "backends.cuda.matmul.allow_tf32", "backends.cudnn.allow_tf32", "backends.cudnn.benchmark"]
    if api.startswith("fp32_precision"):   # reading the legacy flags after the new API may raise
        names = names[:3] + names[5:]
    for n in names:
        obj = torch
        try:
            for part in n.split("."):
                obj = getattr(obj, part)
            out[n] = obj if isinstance(obj, (bool, str, int)) else str(obj)
        except Exception as e:   # noqa: BLE001 (a flag this torch lacks is recorded as such)
            out[n] = "unreadable: %s" % e
    try:
        out["float32_matmul_precision"] = torch.get_float32_matmul_precision()
    except Exception as e:   # noqa: BLE001
        out["float32_matmul_precision"] = "unreadable: %s" % e
    return out


def fp32_check():
    """Whether fp32 matmuls and convolutions really run in fp32: their
    relative error against float64 (TF32 keeps 10 mantissa bits: ~1e-3;
    fp32: ~1e-6)."""
    try:
        g = torch.Generator(device="cuda").manual_seed(0)
        a, b = (torch.randn(1024, 1024, device="cuda", generator=g) for _ in range(2))
        x, w = torch.randn(8, 64, 32, 32, device="cuda", generator=g), torch.randn(64, 64, 3, 3, device="cuda", generator=g)
        rel = lambda y, ref: float((y.double() - ref).norm() / ref.norm())
        mm = rel(a @ b, a.double() @ b.double())
        cv = rel(torch.nn.functional.conv2d(x, w, padding=1), torch.nn.functional.conv2d(x.double(), w.double(), padding=1))
        return {"matmul_rel_err": mm, "conv_rel_err": cv, "fp32": mm < 1e-4 and cv < 1e-4}
    except Exception as e:   # noqa: BLE001 (recorded, not fatal)
        return {"error": "%s: %s" % (type(e).__name__, e)}


def machine(dev, api):
    m = {"torch": torch.__version__, "device": dev, "python": sys.version.split()[0],
         "kineto": bool(getattr(torch.autograd, "kineto_available", lambda: False)())}
    if dev == "cuda":
        p = torch.cuda.get_device_properties(0)
        m.update({"gpu": torch.cuda.get_device_name(0), "gpu_memory_bytes": p.total_memory,
                  "sm_count": p.multi_processor_count, "capability": "%d.%d" % (p.major, p.minor),
                  "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version()})
        try:
            q = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,power.limit",
                                "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
            m["nvidia_smi"] = q.stdout.strip() or q.stderr.strip()
        except Exception as e:   # noqa: BLE001
            m["nvidia_smi"] = "not run: %s" % e
        m["flags"] = read_flags(api)
        m["fp32_check"] = fp32_check()
    else:
        m["threads"] = torch.get_num_threads()
    return m


def kineto_trace(model, plan, x, opt, dev, path, meta):
    """3 profiled steps (after 1 skipped and 1 warm-up) exported, gzipped."""
    from torch.profiler import ProfilerActivity, profile, schedule
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
    raw = path + ".raw.json"
    with profile(activities=acts, record_shapes=True, profile_memory=True,
                 schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
        for _ in range(5):
            step(model, plan, x, opt, dev)
            prof.step()
    if not os.path.exists(raw):
        raise RuntimeError("the profiler exported no trace")
    tmp = path + ".tmp"
    try:
        with open(raw) as f:
            doc = json.load(f)
        if isinstance(doc, list):
            doc = {"traceEvents": doc}
        doc["trainscope_ground_truth"] = meta
        with gzip.open(tmp, "wt", compresslevel=9) as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
    except ValueError as e:   # a trace json cannot read is kept as Kineto wrote it
        say("%s: trace kept as written (%s)" % (path, e))
        with open(raw, "rb") as f, gzip.open(tmp, "wb", compresslevel=9) as g:
            g.write(f.read())
    os.remove(raw)
    os.replace(tmp, path)


def legacy_trace(model, plan, x, opt, dev, path, meta):
    """No Kineto (Debian's torch 1.13): precision_gt.py's writer, 1 session of 3 steps."""

    def run():
        for i in range(3):
            with torch.autograd.profiler.record_function("ProfilerStep#%d" % i):
                step(model, plan, x, opt, dev)
    events, raw = gt.grab_records(run)
    gt.write_trace(path, [(events, gt.memory_events(raw))], gt.alive_before(model, x), meta)


def peak_memory(model, plan, x, opt, dev):
    if dev == "cuda":
        sync(dev)
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step(model, plan, x, opt, dev)
        return {"peak_bytes": torch.cuda.max_memory_allocated(), "alive_before_step_bytes": before,
                "peak_reserved_bytes": torch.cuda.max_memory_reserved()}
    before = gt.alive_before(model, x)
    _, raw = gt.grab_records(lambda: step(model, plan, x, opt, dev))
    alive = peak = 0
    for _, b in gt.memory_events(raw):
        alive += b
        peak = max(peak, alive)
    return {"peak_bytes": before + peak, "alive_before_step_bytes": before}


def interval(xs):
    """(median, 5th, 95th percentile) with linear interpolation between ranks."""
    if len(xs) == 1:
        return xs[0], xs[0], xs[0]
    q = statistics.quantiles(xs, n=20, method="inclusive")
    return statistics.median(xs), q[0], q[-1]


def one_round(model, plan, x, opt, dev, steps):
    """(wall ms, gpu ms, throughput ms) of one round of one case."""
    wall, gpu = [], []
    ev = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) if dev == "cuda" else None
    for i in range(steps + 2):
        sync(dev)
        t0 = time.perf_counter()
        if ev:
            ev[0].record()
        step(model, plan, x, opt, dev, wait=False)
        if ev:
            ev[1].record()
        sync(dev)
        t1 = time.perf_counter()
        if i >= 2:
            wall.append((t1 - t0) * 1e3)
            if ev:
                gpu.append(ev[0].elapsed_time(ev[1]))
    t0 = time.perf_counter()
    for _ in range(steps):
        step(model, plan, x, opt, dev, wait=False)
    sync(dev)
    tput = (time.perf_counter() - t0) * 1e3 / steps
    return statistics.median(wall), statistics.median(gpu) if gpu else None, tput


def timed(cases, opts, dev, rounds, steps, deadline):
    """Round medians of every case, rounds interleaved in shuffled order;
    stops early (recorded) at `deadline`."""
    rec = {k: {"wall": [], "gpu": [], "tput": []} for k in cases}
    done = 0
    for r in range(rounds):
        if time.monotonic() > deadline and done >= 1:
            say("timing stopped after %d of %d rounds: budget" % (done, rounds))
            break
        order = list(cases)
        random.Random(r).shuffle(order)
        for k in order:
            m, plan, x = cases[k]
            w, g, t = one_round(m, plan, x, opts[k], dev, steps)
            rec[k]["wall"].append(w)
            rec[k]["tput"].append(t)
            if g is not None:
                rec[k]["gpu"].append(g)
        done += 1
        say("round %d/%d: %s" % (r + 1, rounds, "  ".join("%s %.2f" % (k, rec[k]["wall"][-1]) for k in cases)))
    out = {}
    for k, v in rec.items():
        med, lo, hi = interval(v["wall"])
        o = {"median_ms": med, "p5_ms": lo, "p95_ms": hi, "rounds_used": len(v["wall"]),
             "rounds_ms": [round(t, 4) for t in v["wall"]]}
        if v["gpu"]:
            med, lo, hi = interval(v["gpu"])
            o.update({"gpu_median_ms": med, "gpu_p5_ms": lo, "gpu_p95_ms": hi,
                      "gpu_rounds_ms": [round(t, 4) for t in v["gpu"]]})
        med, lo, hi = interval(v["tput"])
        o.update({"throughput_median_ms": med, "throughput_p5_ms": lo, "throughput_p95_ms": hi})
        out[k] = o
    return out


def profiler_overhead_ns(dev, n=2000, tries=3):
    """The profiler's cost per recorded op on this device (CPU + CUDA
    activities, shapes and memory on): the best of `tries` loops of n `x + 1`
    profiled, less the best unprofiled, over n."""
    from torch.profiler import ProfilerActivity, profile
    x = torch.randn(16, device=dev)

    def loop():
        t0 = time.perf_counter()
        for _ in range(n):
            x + 1
        sync(dev)
        return time.perf_counter() - t0
    loop()
    plain = min(loop() for _ in range(tries))
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
    prof = []
    for _ in range(tries):
        with profile(activities=acts, record_shapes=True, profile_memory=True):
            prof.append(loop())
    return max(0.0, (min(prof) - plain) / n * 1e9)


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def greedy_limits(name, model, res):
    """(memory limit bytes, accuracy budget): the rule in the header, from the
    peaks measured before any search."""
    names = [n for n, _ in model.named_children()]
    peaks = [res["cases"]["%s/%s" % (name, p)]["peak_bytes"] for p in ("mixA", "mixB")]
    return min(peaks), len(names) - len(names) // 2


def greedy_search(name, model, x, a, res, opts_by_plan):
    """Search traces of the fp32 and bf16 plans, then the greedy plan from
    them: (module plan, record) or raises RuntimeError."""
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import trainscope_precision as tp
    tr = lambda p: os.path.join(a.out, "%s_%s.search.json.gz" % (name, p))
    mach = res["machine"]
    for p in ("fp32", "bf16"):
        plan, opt = opts_by_plan[p]
        meta = {"model": name, "plan": p, "modules": plan, "batch_shape": list(x.shape), "search": True}
        (kineto_trace if mach["kineto"] else legacy_trace)(model, plan, x, opt, a.device, tr(p), meta)
    limit, budget = greedy_limits(name, model, res)
    odir = os.path.join(a.out, "%s_greedy.opt" % name)
    cmd = [a.greedy_trainscope, "optimize", "--passes", "precision", "--memory-limit", "%.12f" % (limit / 2.0 ** 30),
           "--accuracy-budget", str(budget), "--profiler-overhead-us", "%.3f" % a.profiler_overhead_us,
           "--precision-trace", "bf16=" + tr("bf16"), tr("fp32"), "-o", odir]
    t0 = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    rec = {"memory_limit_bytes": limit, "accuracy_budget_modules": budget,
           "greedy_cmd": " ".join(cmd).replace(a.out + os.sep, ""), "greedy_s": round(time.monotonic() - t0, 2),
           "greedy_rc": out.returncode}
    with open(os.path.join(a.out, "%s_greedy.opt.txt" % name), "w") as f:
        f.write("# %s\n# rc %d\n%s%s" % (rec["greedy_cmd"], out.returncode, out.stdout, out.stderr[-4000:]))
    if out.returncode:
        raise RuntimeError("%s: rc %d: %s" % (rec["greedy_cmd"], out.returncode, out.stderr.strip()[-600:]))
    with open(os.path.join(odir, "plan.json")) as f:
        pj = json.load(f)["precision"]
    rec["predicted_iteration_us"] = pj["after"]["iteration_us"]
    rec["predicted_peak_bytes"] = pj["after"]["peak_bytes"]
    gp = os.path.join(a.out, "%s_greedy.greedy" % name)
    os.replace(os.path.join(odir, "greedy.plan"), gp)
    for f in os.listdir(odir):   # plan.json names this machine's paths; amp files are dPRO's: not kept
        os.remove(os.path.join(odir, f))
    os.rmdir(odir)
    tops = {n for n, _ in model.named_children()}
    mods = tp.resolve(model, tp.read_plan(gp), gp)
    plan = {n: ("bf16" if p != "fp32" else None) for n, p in mods.items()}
    plan = {n: p for n, p in plan.items() if p}
    if set(plan) - tops:
        raise RuntimeError("%s: the greedy lowers modules inside others (%s)" % (gp, sorted(set(plan) - tops)))
    rec["modules_bf16"] = sorted(plan)
    return plan, rec


def run_model(name, a, mach, res, deadline):
    """Peak, trace and timing of every plan of one model into res['cases']."""
    model, x = build(name, a.tiny, a.device)
    cases, opts = {}, {}
    todo = list(plans(model, a.device).items())
    if a.greedy_trainscope:
        todo.append(("greedy", None))
    for pname, plan in todo:
        if time.monotonic() > a.budget_end:
            res["skipped"].append("%s/%s: budget spent before its trace" % (name, pname))
            continue
        if pname == "greedy":
            try:
                plan, rec = greedy_search(name, model, x, a, res, {p: (cases["%s/%s" % (name, p)][1],
                                                                       opts["%s/%s" % (name, p)]) for p in ("fp32", "bf16")})
            except (RuntimeError, KeyError, OSError, ValueError, subprocess.TimeoutExpired) as e:
                res["skipped"].append("%s/greedy: %s: %s" % (name, type(e).__name__, e))
                res["cases"][name + "/greedy"] = {"greedy_error": "%s: %s" % (type(e).__name__, e)}
                say("%s/greedy failed: %s: %s" % (name, type(e).__name__, e))
                continue
            say("%s/greedy: under %d B and %d modules lowers %s (predicted %.3f ms, peak %d B; search %.1f s)" % (
                name, rec["memory_limit_bytes"], rec["accuracy_budget_modules"], ", ".join(rec["modules_bf16"]) or
                "nothing", rec["predicted_iteration_us"] / 1e3, rec["predicted_peak_bytes"], rec["greedy_s"]))
        key = "%s/%s" % (name, pname)
        opt = torch.optim.SGD(model.parameters(), lr=1e-4)
        for _ in range(3):   # warm-up: CUDA context, cuBLAS handles, cuDNN autotuning at this shape and type
            step(model, plan, x, opt, a.device)
        r = peak_memory(model, plan, x, opt, a.device)
        with open(os.path.join(a.out, "%s_%s.plan" % (name, pname)), "w") as f:
            f.write("# %s: modules under autocast at 16 bits (record_function ranges)\n" % key)
            for n in sorted(plan):
                f.write("name:%s %s\n" % (n, plan[n]))
        meta = {"model": name, "plan": pname, "modules": plan, "batch_shape": list(x.shape)}
        path = os.path.join(a.out, "%s_%s.json.gz" % (name, pname))
        try:
            (kineto_trace if mach["kineto"] else legacy_trace)(model, plan, x, opt, a.device, path, meta)
            r["trace_bytes"] = os.path.getsize(path)
        except Exception as e:   # noqa: BLE001 (the timing is still worth having)
            r["trace_bytes"] = 0
            res["skipped"].append("%s: trace failed: %s: %s" % (key, type(e).__name__, e))
            say("%s: trace failed: %s: %s" % (key, type(e).__name__, e))
        if pname == "greedy":
            r.update(rec)
        res["cases"][key] = r
        cases[key], opts[key] = (model, plan, x), opt
        say("%s: peak %.1f MiB (alive before %.1f MiB), trace %d KiB" % (
            key, r["peak_bytes"] / 2**20, r["alive_before_step_bytes"] / 2**20, r["trace_bytes"] // 1024))
    if not cases:
        return
    for k, v in timed(cases, opts, a.device, a.rounds, a.steps, min(deadline, a.budget_end)).items():
        res["cases"][k].update(v)
        if v["rounds_used"] < a.rounds:
            res["skipped"].append("%s: %d of %d timing rounds (budget)" % (k, v["rounds_used"], a.rounds))
    for k, (m, plan, x) in cases.items():
        loss = step(m, plan, x, opts[k], a.device)
        res["cases"][k]["loss_finite"] = bool(torch.isfinite(loss).item())
        v = res["cases"][k]
        say("%-10s wall %8.3f ms [%8.3f, %8.3f]  gpu %s  peak %d B" % (
            k, v["median_ms"], v["p5_ms"], v["p95_ms"],
            "%.3f ms" % v["gpu_median_ms"] if "gpu_median_ms" in v else "-", v["peak_bytes"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "precision-gpu-gt"))
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--tiny", action="store_true", help="tiny models and 1 round (a CPU rehearsal)")
    ap.add_argument("--budget-s", type=float, default=220.0)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--greedy-trainscope", metavar="BIN", help="add the greedy case, searched by BIN (trainscope)")
    ap.add_argument("--profiler-overhead-us", type=float, default=3.918,
                    help="the profiler's cost per op given to the greedy search (default: bench/precision-gpu's)")
    a = ap.parse_args()
    if a.greedy_trainscope:
        a.greedy_trainscope = os.path.abspath(a.greedy_trainscope)
        if not os.access(a.greedy_trainscope, os.X_OK):
            print("precision_gt_gpu: --greedy-trainscope %s is not an executable" % a.greedy_trainscope, file=sys.stderr)
            return 2
    if a.tiny:
        a.rounds = 1
    if a.device == "cuda" and not torch.cuda.is_available():
        print("precision_gt_gpu: --device cuda but torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    names = [n for n in a.models.split(",") if n]
    bad = [n for n in names if n not in MODELS]
    if bad:
        print("precision_gt_gpu: unknown model %s (have %s)" % (bad[0], ", ".join(MODELS)), file=sys.stderr)
        return 2
    faulthandler.dump_traceback_later(a.budget_s + 60, exit=True)
    a.budget_end = T0 + a.budget_s
    os.makedirs(a.out, exist_ok=True)
    api = None
    if a.device == "cuda":
        api = set_full_fp32()
    else:
        torch.set_num_threads(1)
        say("note: CPU autocast supports bf16 only: the fp16 plan is skipped")
    mach = machine(a.device, api)
    say("machine: " + json.dumps(mach))
    if a.device == "cuda" and not mach.get("fp32_check", {}).get("fp32"):
        say("WARNING: fp32 matmul or convolution is not plain fp32 here (TF32?): %s" % mach.get("fp32_check"))
    write_json(os.path.join(a.out, "machine.json"), mach)
    res = {"machine": mach, "rounds": a.rounds, "steps_per_round": a.steps, "tiny": a.tiny,
           "budget_s": a.budget_s, "skipped": [], "models_done": [], "cases": {},
           "time_source": "wall: time.perf_counter around a step that ends with torch.cuda.synchronize (the GPU "
                          "idle at its start); gpu: CUDA events at the step's first launch and after its last; "
                          "median of a round's steps, then median over rounds, 90% interval = 5th-95th percentile "
                          "of round medians, rounds interleaved in shuffled order; throughput: steps launched "
                          "back to back, one synchronize at the end, over steps",
           "memory_source": ("torch.cuda.max_memory_allocated over one step after reset_peak_memory_stats (live "
                             "tensor bytes, parameters, batch and cuBLAS workspace included; not the reserved "
                             "cache)") if a.device == "cuda" else
                            "legacy autograd profiler profile_memory=True: CPU allocations summed in time order, "
                            "plus parameters and input alive before the step"}
    mpath = os.path.join(a.out, "measured.json")
    for i, name in enumerate(names):
        if time.monotonic() > a.budget_end:
            res["skipped"].append("%s: budget spent before it started" % name)
            continue
        share = T0 + a.budget_s * (i + 1) / len(names)
        say("model %s (timing until +%.0f s)" % (name, share - T0))
        try:
            run_model(name, a, mach, res, share)
            res["models_done"].append(name)
        except Exception as e:   # noqa: BLE001 (an out-of-memory or an op this torch lacks: go on)
            res["skipped"].append("%s: failed: %s: %s" % (name, type(e).__name__, e))
            say("model %s failed: %s: %s" % (name, type(e).__name__, e))
        res["elapsed_s"] = round(time.monotonic() - T0, 1)
        write_json(mpath, res)
        if a.device == "cuda":
            torch.cuda.empty_cache()
    if time.monotonic() < a.budget_end:
        res["profiler_overhead_ns_per_op"] = round(profiler_overhead_ns(a.device), 1)
        say("profiler overhead: %.0f ns per recorded op" % res["profiler_overhead_ns_per_op"])
    res["elapsed_s"] = round(time.monotonic() - T0, 1)
    write_json(mpath, res)
    total = sum(os.path.getsize(os.path.join(a.out, f)) for f in os.listdir(a.out))
    say("done: %s (%d files, %.1f MB), skipped: %s" % (a.out, len(os.listdir(a.out)), total / 1e6,
                                                     "; ".join(res["skipped"]) or "none"))
    faulthandler.cancel_dump_traceback_later()
    return 0


if __name__ == "__main__":
    sys.exit(main())
