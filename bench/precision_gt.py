#!/usr/bin/python3
"""precision_gt.py - ground truth for trainscope's precision what-if
(`replay --precision-plan`): small models trained on the CPU at fp32, all-bf16
and two mixed plans (per-module autocast), with their step time and peak memory.

Run with Debian's torch 1.13: /usr/bin/python3 bench/precision_gt.py [--out DIR]
[--rounds N] [--record]. For each model:
  * plans: fp32; bf16 (every module under torch.autocast('cpu', bfloat16));
    mixA (the first half of the modules bf16); mixB (the second half). A bf16
    module casts its input to bf16 first and a fp32 module to fp32, so every
    module computes in its planned type and the casts between them are real
    `aten::to` ops inside the module's record_function range (its name);
  * step time, unprofiled: `rounds` rounds; in each, every (model, plan) in a
    new shuffled order runs 2 warm-up and `steps` timed steps (forward,
    loss, backward, SGD step, zero_grad); a round's figure is its median step.
    The result is the median over rounds and the 5th-95th percentile of the
    round medians (a 90% interval);
  * peak memory: one step under the legacy autograd profiler with
    profile_memory=True; every CPU allocation and free it records, summed in
    time order (the CPU allocator does not cache), plus what was alive before
    the step (parameters, the input batch, SGD has no state without momentum);
  * traces: a profiled session of a warm-up step (left out of the trace)
    and 3 steps (--traced-steps) per plan in every timing round, right after its timed steps (the traces and the timings
    see the same load), written
    here from the profiler's event list as one Chrome trace (the legacy
    exporter drops shapes):
    every op with "Input Dims" (record_shapes), "Sequence number", nesting by
    time; ProfilerStep#N ranges; "[memory]" instants with "Bytes" and "Total
    Allocated". The fp32 and bf16 traces are the predictor's inputs; the mixed
    ones only hold casts the cast-cost fit never sees (held out);
  * the profiler's own cost per recorded op, measured on trivial ops between
    the trace sessions (profiler_overhead_ns), for `--profiler-overhead-us`;
  * greedy: QSync's greedy plan under a memory limit halfway between the
    lowest and highest measured peak of the four plans, searched by
    `trainscope replay --precision-greedy` on search traces of the fp32 and
    bf16 plans (2 sessions of a warm-up and 3 steps before the rounds,
    <model>_<plan>.search.json.gz) and timed and measured like the others
    (<model>_greedy.plan: the modules it lowers; .greedy: trainscope's output).
The machine is recorded (torch's BLAS, oneDNN, CPU model and flags); with a
committed machine.json in DIR a run on another setup fails (exit 3) unless
--record rewrites it.
"""
import argparse
import collections
import gc
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
BF16 = torch.bfloat16
DTYPES = {"bf16": BF16, "fp16": torch.float16}


def models():
    torch.manual_seed(0)
    od = collections.OrderedDict
    # sized so that the all-bf16 steps are 20-80 ms (the profiler's cost per op, ~2.6 us over ~600 ops,
    # a few % of a traced step) while the fp32 steps on the reference BLAS stay under ~0.35 s
    w = 1024
    mlp = nn.Sequential(od(fc1=nn.Linear(w, w), act1=nn.ReLU(), fc2=nn.Linear(w, w), act2=nn.ReLU(),
                           fc3=nn.Linear(w, w), act3=nn.ReLU(), head=nn.Linear(w, 16)))
    cnn = nn.Sequential(od(conv1=nn.Conv2d(3, 32, 3, padding=1), act1=nn.ReLU(),
                           conv2=nn.Conv2d(32, 64, 3, padding=1), act2=nn.ReLU(), pool=nn.MaxPool2d(2),
                           conv3=nn.Conv2d(64, 64, 3, padding=1), act3=nn.ReLU(),
                           gap=nn.AdaptiveAvgPool2d(1), flat=nn.Flatten(), head=nn.Linear(64, 16)))
    d = 256
    attn = nn.Sequential(od(qkv=nn.Linear(d, 3 * d), attn=SelfAttention(), proj=nn.Linear(d, d),
                            gelu=nn.GELU(), up=nn.Linear(d, 4 * d), act=nn.ReLU(), down=nn.Linear(4 * d, d),
                            head=nn.Linear(d, 16)))
    return {"mlp": (mlp, torch.randn(64, w)), "cnn": (cnn, torch.randn(32, 3, 32, 32)),
            "attn": (attn, torch.randn(4, 64, d))}


class SelfAttention(nn.Module):
    """softmax(q k^T / sqrt(d)) v over the thirds of its input (no weights)."""
    def forward(self, x):
        q, k, v = x.chunk(3, dim=-1)
        return torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1) @ v


def plans(model):
    names = [n for n, _ in model.named_children()]
    half = len(names) // 2
    return {"fp32": {}, "bf16": {n: "bf16" for n in names},
            "mixA": {n: "bf16" for n in names[:half]}, "mixB": {n: "bf16" for n in names[half:]}}


def forward(model, plan, x, dev="cpu"):
    """The modules in order, each in its record_function range, a module the
    plan puts at 16 bits ("bf16", "fp16") under autocast on `dev` with its
    input cast first, the others with their input cast to fp32."""
    for name, m in model.named_children():
        with torch.autograd.profiler.record_function(name):
            p = plan.get(name)
            if p:
                if x.dtype != DTYPES[p]:
                    x = x.to(DTYPES[p])
                with torch.autocast(dev, dtype=DTYPES[p]):
                    x = m(x)
            else:
                if x.dtype != torch.float32:
                    x = x.float()
                x = m(x)
    return x


def step(model, plan, x, opt):
    """One training step; it ends with the gradients freed, so every step
    (timed, profiled or measured) starts from the same memory."""
    out = forward(model, plan, x)
    loss = out.float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def machine():
    cfg = torch.__config__.show()
    pick = lambda key: next((l.strip() for l in cfg.splitlines() if key in l), "?")
    flags = set()
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
            if line.startswith("model name") and model == "?":
                model = line.split(":", 1)[1].strip()
    blas = [b for b in ("BLAS_INFO=generic", "BLAS_INFO=mkl", "BLAS_INFO=open") if b in cfg]
    return {"torch": torch.__version__, "blas": blas[0] if blas else pick("BLAS_INFO"),
            "onednn": pick("MKL-DNN"), "cpu_capability": pick("CPU capability usage"), "cpu": model,
            "cpu_features": {k: k in flags for k in ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")},
            "threads": torch.get_num_threads()}


def grab_records(fn):
    """Run fn under the legacy profiler (shapes, memory); return (events, raw records)."""
    import torch.autograd.profiler_legacy as profiler_legacy   # here: a torch without it can import the rest
    grabbed = []
    orig = profiler_legacy._disable_profiler_legacy

    def grab():
        r = orig()
        grabbed.append(r)
        return r
    profiler_legacy._disable_profiler_legacy = grab
    try:
        with profiler_legacy.profile(record_shapes=True, profile_memory=True) as prof:
            fn()
    finally:
        profiler_legacy._disable_profiler_legacy = orig
    return prof.function_events, grabbed[0]


def memory_events(raw):
    start = next(r for thread in raw for r in thread if r.name() == "__start_profile")
    ev = [(-r.cpu_elapsed_us(start), r.cpu_memory_usage()) for thread in raw for r in thread
          if r.kind() == "memory_alloc"]
    ev.sort(key=lambda e: e[0])
    return ev


def alive_before(model, x):
    return sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers())) + \
        x.numel() * x.element_size()


def write_trace(path, sessions, base_bytes, meta, warm_up_out=False):
    """sessions: [(function events, memory events)] of separate profiler
    runs, laid end to end 1 ms apart as one trace (ProfilerStep#N numbered
    through); each session starts with base_bytes alive. warm_up_out: the
    events before a session's first ProfilerStep (its warm-up steps, which
    leave memory as they found it) are left out."""
    out = []
    n_steps = 0
    offset = 0.0
    for events, mem in sessions:
        end = offset
        first = min((e.time_range.start for e in events if e.name.startswith("ProfilerStep")), default=0) \
            if warm_up_out else float("-inf")
        mem = [(t, b) for t, b in mem if t >= first]   # a warm-up step's events are left out
        for e in events:
            if e.name == "[memory]" or e.time_range.start < first:
                continue
            args = {"Sequence number": e.sequence_nr}
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
            name = e.name
            if name.startswith("ProfilerStep"):   # the event list calls every one "ProfilerStep*"
                name = "ProfilerStep#%d" % n_steps
                n_steps += 1
            cat = "user_annotation" if name.startswith("ProfilerStep#") else "cpu_op"
            ts = offset + e.time_range.start
            end = max(end, offset + e.time_range.end)
            out.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": round(ts, 3),
                        "dur": round(e.time_range.end - e.time_range.start, 3), "args": args})
        total = base_bytes
        for t, b in mem:
            total += b
            out.append({"ph": "i", "s": "t", "cat": "[memory]", "name": "[memory]", "pid": 1, "tid": 1,
                        "ts": round(offset + t, 3), "args": {"Device Type": 0, "Device Id": -1, "Bytes": b,
                                                             "Total Allocated": total}})
        offset = end + 1000.0
    out.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
    tmp = path + ".tmp"
    with gzip.open(tmp, "wt", compresslevel=9) as f:
        json.dump({"traceEvents": out, "trainscope_ground_truth": meta}, f, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, path)


QUIET = 1.15   # a run is undisturbed when its wall time is within 15% of its thread's CPU time


def profiled(model, plan, x, steps, tries=8, warm=0):
    """A profiled session; retried (up to `tries`) while other users' work
    takes the core from it (wall > QUIET x CPU time), since a preempted op's
    duration in the trace is inflated. Its first `warm` steps run under the
    profiler outside any ProfilerStep range (torch.profiler's warm-up: the
    profiler's start-up costs fall there), and write_trace leaves them out.
    Returns (events, raw, wall / CPU)."""
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    step(model, plan, x, opt)
    gc.collect()

    def run():
        for _ in range(warm):
            step(model, plan, x, opt)
        for i in range(steps):
            with torch.autograd.profiler.record_function("ProfilerStep#%d" % i):
                step(model, plan, x, opt)
    best = None
    for _ in range(tries):
        w0, c0 = time.perf_counter(), time.thread_time()
        events, raw = grab_records(run)
        ratio = (time.perf_counter() - w0) / max(time.thread_time() - c0, 1e-9)
        if best is None or ratio < best[2]:
            best = (events, raw, ratio)
        if ratio <= QUIET:
            break
        time.sleep(1.0)
    return best


def peak_memory(model, plan, x):
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    step(model, plan, x, opt)
    gc.collect()
    before = alive_before(model, x)
    _, raw = grab_records(lambda: step(model, plan, x, opt))
    alive = peak = 0
    for _, b in memory_events(raw):
        alive += b
        peak = max(peak, alive)
    return before + peak, before


def profiler_overhead_ns(n=3000, tries=7):
    """The legacy profiler's cost per recorded op (record_shapes and
    profile_memory on), measured on trivial ops apart from the models: the
    best of `tries` loops of n `x + 1` (one aten::add, an allocation and a
    free each) profiled, less the best unprofiled, over n."""
    import torch.autograd.profiler_legacy as profiler_legacy
    x = torch.randn(16)

    def loop():
        t0 = time.perf_counter()
        for _ in range(n):
            x + 1
        return time.perf_counter() - t0
    loop()
    plain = min(loop() for _ in range(tries))
    prof = []
    for _ in range(tries):
        with profiler_legacy.profile(record_shapes=True, profile_memory=True):
            prof.append(loop())
    return max(0.0, (min(prof) - plain) / n * 1e9)


def percentile(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def timed(cases, rounds, steps, traced, sessions, ratios, overheads, traced_steps=3):
    """Wall time (perf_counter) and the thread's CPU time (thread_time: one
    intra-op thread, and the CPU autograd engine runs the backward on the
    calling thread) of unprofiled steps; the CPU time leaves out the waits
    for a core that other users' work causes on a shared machine. Each case
    in `traced` also runs a profiled session of `traced_steps` steps right
    after its timed ones in every round (appended to sessions[case], its wall / CPU to ratios[case]),
    so that the traces and the timings see the same spells of load (other
    users' builds slow this machine's cores by 10-30% for minutes, CPU time
    included); the profiler's cost per op is measured every 5th round."""
    wall, cpu = collections.defaultdict(list), collections.defaultdict(list)
    opts = {k: torch.optim.SGD(m.parameters(), lr=1e-4) for k, (m, _, _) in cases.items()}
    for r in range(rounds):
        order = list(cases)
        random.Random(r).shuffle(order)
        for k in order:
            m, plan, x = cases[k]
            ts, cs = [], []
            for i in range(steps + 2):
                t0, c0 = time.perf_counter(), time.thread_time()
                step(m, plan, x, opts[k])
                if i >= 2:
                    ts.append(time.perf_counter() - t0)
                    cs.append(time.thread_time() - c0)
            wall[k].append(statistics.median(ts) * 1e3)
            cpu[k].append(statistics.median(cs) * 1e3)
            if k in traced:
                events, raw, ratio = profiled(m, plan, x, traced_steps, tries=1, warm=1)
                sessions[k].append((events, memory_events(raw)))
                ratios[k].append(round(ratio, 3))
        if r % 5 == 0:
            overheads.append(profiler_overhead_ns())
        print("round %d/%d done (load %.1f)" % (r + 1, rounds, os.getloadavg()[0]), file=sys.stderr)
        if r + 1 < rounds and os.getloadavg()[0] > 3:
            time.sleep(2.0)   # let a busy moment pass rather than measure all of it
    out = {}
    for k in wall:
        # rounds in which other users' work took the core (wall > QUIET x CPU) are left out of the
        # wall-time figures when at least 5 rounds are undisturbed; every round is kept in the lists
        quiet = [i for i in range(len(wall[k])) if wall[k][i] <= QUIET * cpu[k][i]]
        keep = quiet if len(quiet) >= 5 else list(range(len(wall[k])))
        w, c = [wall[k][i] for i in keep], cpu[k]
        out[k] = {"median_ms": statistics.median(w), "p5_ms": percentile(w, 0.05), "p95_ms": percentile(w, 0.95),
                  "rounds_used": len(keep), "cpu_median_ms": statistics.median(c),
                  "cpu_p5_ms": percentile(c, 0.05), "cpu_p95_ms": percentile(c, 0.95),
                  "rounds_ms": [round(t, 3) for t in wall[k]], "cpu_rounds_ms": [round(t, 3) for t in c]}
    return out


def greedy_case(a, name, model, peaks, overhead_ns):
    """QSync's greedy plan under a memory limit, searched by trainscope on the
    fp32 and bf16 traces just written, as the plan torch applies: every
    module one of its `op:N` lines names (its `# OP in MODULE` comment) under
    bf16 autocast (python/trainscope_precision.py's reading of the file). The
    limit is fixed by rule before any prediction: halfway between the lowest
    and the highest measured peak of the four plans. Returns (module plan,
    limit bytes, trainscope's output) or raises on a failed search."""
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import trainscope_precision as tp
    limit = (min(peaks) + max(peaks)) // 2
    tr = lambda p: os.path.join(a.out, "%s_%s.search.json.gz" % (name, p))
    cmd = [a.trainscope, "replay", "--precision-greedy", "--memory-limit", "%.12f" % (limit / 2.0 ** 30),
           "--profiler-overhead-us", "%.3f" % (overhead_ns / 1e3), "--precision-trace", "bf16=" + tr("bf16"),
           tr("fp32")]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError("%s: %s" % (" ".join(cmd), out.stderr.strip()))
    raw = os.path.join(a.out, "%s_greedy.greedy" % name)
    with open(raw, "w") as f:
        f.write("# trainscope %s\n%s" % (" ".join(cmd[1:]).replace(a.out + os.sep, ""), out.stdout))
    # the lines naming one of the model's modules; ops outside them (the loss, the optimizer,
    # record_function's own aten::zeros) run as the step runs them whatever the plan says, and the
    # prediction scored is the module plan's
    tops = {n for n, _ in model.named_children()}
    mods = os.path.join(a.out, "%s_greedy.modules" % name)
    with open(raw) as f, open(mods, "w") as g:
        g.writelines(l for l in f if l.startswith("op:") and l.partition("#")[2].split(" in ")[-1].strip() in tops
                     and " in " in l.partition("#")[2])
    plan = {n: p for n, p in tp.resolve(model, tp.read_plan(mods), mods).items() if p != "fp32"}
    os.unlink(mods)
    if set(plan) - tops:
        raise RuntimeError("%s: the greedy lowers modules inside others (%s)" % (raw, sorted(set(plan) - tops)))
    return plan, limit, out.stdout


def tp_error():
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import trainscope_precision as tp
    return tp.PlanError


def write_plan(path, key, plan):
    with open(path, "w") as f:
        f.write("# %s: modules under bf16 autocast (record_function ranges)\n" % key)
        for n in sorted(plan):
            f.write("name:%s bf16\n" % n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "precision"))
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--traced-steps", type=int, default=3,
                    help="profiled steps per case and round (the traces' iterations: rounds x this)")
    ap.add_argument("--record", action="store_true", help="rewrite DIR/machine.json")
    ap.add_argument("--trainscope", default=os.path.join(HERE, "..", "build", "trainscope"))
    a = ap.parse_args()
    t_start, cpu_start, load_start = time.time(), time.process_time(), os.getloadavg()
    torch.set_num_threads(1)   # a shared 2-core machine: one thread per run is the steadiest
    os.makedirs(a.out, exist_ok=True)
    mach = machine()
    mpath = os.path.join(a.out, "machine.json")
    print("machine: " + json.dumps(mach))
    if os.path.exists(mpath) and not a.record:
        with open(mpath) as f:
            committed = json.load(f)
        if committed != mach:
            print("precision_gt: this machine differs from %s (BLAS, oneDNN or CPU features): %s; rerun "
                  "with --record to make new ground truth" % (mpath, json.dumps(committed)), file=sys.stderr)
            return 3
    else:
        with open(mpath, "w") as f:
            json.dump(mach, f, indent=1)
            f.write("\n")
    ms = models()
    cases, results, sessions, overheads = {}, {}, collections.defaultdict(list), []
    session_ratios = collections.defaultdict(list)
    for name, (model, x) in ms.items():
        for pname, plan in plans(model).items():
            key = "%s/%s" % (name, pname)
            cases[key] = (model, plan, x)
            peak, before = peak_memory(model, plan, x)
            results[key] = {"peak_bytes": peak, "alive_before_step_bytes": before}
            write_plan(os.path.join(a.out, "%s_%s.plan" % (name, pname)), key, plan)
    # search traces: 2 profiled sessions of 3 steps of the fp32 and bf16 plans, the greedy's input only
    # (<model>_<plan>.search.json.gz); the traces scored are taken in the timing rounds below
    search = collections.defaultdict(list)
    for r in range(2):
        for key in [k for k in cases if k.split("/")[1] in ("fp32", "bf16")]:
            model, plan, x = cases[key]
            events, raw, ratio = profiled(model, plan, x, 3, tries=3, warm=1)
            search[key].append((events, memory_events(raw)))
        overheads.append(profiler_overhead_ns())
    for key, sess in search.items():
        name, pname = key.split("/")
        write_trace(os.path.join(a.out, "%s_%s.search.json.gz" % (name, pname)), sess,
                    alive_before(cases[key][0], cases[key][2]), {"model": name, "plan": pname, "machine": mach},
                    warm_up_out=True)
    overhead = statistics.median(overheads)
    for name, (model, x) in ms.items():   # the greedy plan under a memory limit, measured like the others
        key = name + "/greedy"
        try:
            plan, limit, text = greedy_case(a, name, model, [results["%s/%s" % (name, p)]["peak_bytes"]
                                                             for p in plans(model)], overhead)
        except (RuntimeError, tp_error()) as e:   # recorded, not measured: the others still are
            results[key] = {"greedy_error": str(e)}
            print("%s: %s" % (key, e), file=sys.stderr)
            continue
        cases[key] = (model, plan, x)
        write_plan(os.path.join(a.out, "%s_greedy.plan" % name), key, plan)
        peak, before = peak_memory(model, plan, x)
        results[key] = {"peak_bytes": peak, "alive_before_step_bytes": before, "memory_limit_bytes": limit,
                        "modules_bf16": sorted(plan)}
        print("%s: greedy under %d B lowers %s" % (name, limit, ", ".join(sorted(plan)) or "nothing"))
    traced = [k for k in cases if not k.endswith("/greedy")]
    for k, v in timed(cases, a.rounds, a.steps, traced, sessions, session_ratios, overheads,
                      a.traced_steps).items():
        results[k].update(v)
    for key in traced:
        model, plan, x = cases[key]
        name, pname = key.split("/")
        meta = {"model": name, "plan": pname, "modules_bf16": sorted(plan), "machine": mach,
                "session_wall_over_cpu": session_ratios[key]}
        results[key]["trace_wall_over_cpu"] = session_ratios[key]
        write_trace(os.path.join(a.out, "%s_%s.json.gz" % (name, pname)), sessions[key], alive_before(model, x), meta,
                    warm_up_out=True)
    overhead = statistics.median(overheads)
    print("profiler overhead: %.0f ns per recorded op (%s)" % (overhead, ", ".join("%.0f" % o for o in overheads)))
    res = {"machine": mach, "rounds": a.rounds, "steps_per_round": a.steps, "traced_steps_per_round": a.traced_steps,
           "profiler_overhead_ns_per_op": round(overhead, 1),
           "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t_start)),
           "run_wall_s": round(time.time() - t_start, 1), "run_cpu_s": round(time.process_time() - cpu_start, 1),
           "load_average_at_start": load_start, "load_average_at_end": os.getloadavg(),
           "memory_source": "legacy autograd profiler profile_memory=True: CPU allocations summed in time order, "
                            "plus parameters and input alive before the step",
           "time_source": "time.perf_counter (wall) and time.thread_time (CPU) around unprofiled steps; median "
                          "of rounds, 90% interval = 5th-95th percentile of round medians; rounds interleaved in "
                          "shuffled order; wall figures from the rounds whose wall time was within 15% of their "
                          "CPU time (rounds_used) when there were 5 or more; a profiled session of "
                          "a warm-up step (not traced) and traced_steps steps per case and round right after its timed steps (trace_wall_over_cpu: each one's wall / CPU)",
           "cases": results}
    with open(os.path.join(a.out, "measured.json"), "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    for k, v in results.items():
        if "median_ms" not in v:
            continue
        print("%-10s wall %8.2f ms [%7.2f, %7.2f]  cpu %8.2f ms [%7.2f, %7.2f]  peak %12d B" % (
            k, v["median_ms"], v["p5_ms"], v["p95_ms"], v["cpu_median_ms"], v["cpu_p5_ms"], v["cpu_p95_ms"],
            v["peak_bytes"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
