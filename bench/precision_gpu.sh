#!/bin/sh
# precision_gpu.sh - the precision what-if on GPU runs scored against real
# runs: the ground truth of bench/precision_gt_gpu.py (bench/precision-gpu/,
# one H200; see its machine.json). For each model and plan,
# `trainscope replay --precision-plan` predicts the step from the model's
# fp32 trace and one lower-precision trace alone and is compared with the
# unprofiled step's median (a step ends with a synchronize; 90% interval of
# round medians) and with max_memory_allocated over a step. Printed per
# model: the traces' own figures computed here in Python (median
# ProfilerStep, kernel time per step, the GPU-busy share), then
#   from fp32+bf16: fp32, bf16 (their own traces), mixA, mixB (held out);
#   from fp32+fp16: fp16 (its own trace), mixA, mixB with fp16 standing in
#     for bf16 (a cross-precision check: the measured plans ran bf16);
#   the all-bf16 plan from the fp16 run and the all-fp16 plan from the bf16
#     run (each predicted from the other's trace);
# then the cast fit's error on the mixed runs' casts (held out).
# Targets (issue 23): time within 5% where the plan's interval is clear of
# the fp32 plan's, plans ranked right, memory within 3%.
#   sh bench/precision_gpu.sh [DIR [NS]]   DIR defaults to bench/precision-gpu; NS: the
#                                          profiler's cost per op to use instead of DIR's own
#                                          (bench/precision-gpu-heldout measured 0: its trivial
#                                          ops were GPU-bound, hiding the CPU's cost)
set -e
cd "$(dirname "$0")/.."
make -s build/trainscope build/bench/precision
G=${1:-${TS_PRECISION_GPU_GT:-bench/precision-gpu}}
[ -f "$G/measured.json" ] || { echo "precision_gpu.sh: no $G/measured.json (run bench/precision_gt_gpu.py on a GPU)" >&2; exit 2; }
PYTHONPATH=bench python3 - "$G" "${2:-}" <<'PY'
import json, os, statistics, subprocess, sys, tempfile
from kineto_figures import busy, kernel_sum, trace
g = sys.argv[1]
meas = json.load(open(g + "/measured.json"))
mach = meas["machine"]
ov_us = meas.get("profiler_overhead_ns_per_op", 0) / 1e3
if len(sys.argv) > 2 and sys.argv[2]:
    print("profiler cost per op: %s ns given (this run measured %.0f ns)" % (sys.argv[2], ov_us * 1e3))
    ov_us = float(sys.argv[2]) / 1e3
print("ground truth: %s, torch %s, CUDA %s, cuDNN %s, TF32 off by %s; %d rounds x %d steps; skipped: %s" % (
    mach.get("gpu", mach.get("device")), mach["torch"], mach.get("cuda"), mach.get("cudnn"),
    mach.get("flags", {}).get("tf32_off_by"), meas["rounds"], meas["steps_per_round"],
    "; ".join(meas.get("skipped", [])) or "none"))
cases = meas["cases"]
tmp = tempfile.mkdtemp()


def trace_figures(path):
    """Median step, kernel time per step and GPU-busy share, by kineto_figures.py."""
    steps, gpu, _ = trace(path)
    dur = [b - a for a, b in steps]
    return {"step_ms": statistics.median(dur) / 1e3 if dur else 0,
            "kernel_ms": statistics.median(kernel_sum(steps, gpu)) / 1e3 if dur else 0,
            "busy_pct": 100 * sum(busy(steps, gpu)) / sum(dur) if dur else 0}


def predict(model, low, plan_text):
    plan = os.path.join(tmp, "plan")
    with open(plan, "w") as f:
        f.write(plan_text)
    cmd = ["build/trainscope", "replay", "--format", "json"] + (["--profiler-overhead-us", str(ov_us)] if ov_us > 0 else []) + [
           "--precision-plan", plan, "--precision-trace", "%s=%s/%s_%s.json.gz" % (low, g, model, low),
           "%s/%s_fp32.json.gz" % (g, model)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        sys.exit("replay failed: %s\n%s" % (" ".join(cmd), out.stderr))
    return json.loads(out.stdout)


def plan_of(model, plan, as_prec=None):
    """The plan file's lines, its precision replaced by as_prec when given."""
    lines = []
    for line in open("%s/%s_%s.plan" % (g, model, plan)):
        w = line.split()
        if len(w) == 2 and not line.startswith("#"):
            lines.append("%s %s\n" % (w[0], as_prec or w[1]))
    return "".join(lines) or "* fp32\n"


tot = {"n": 0, "within": 0, "clear": 0, "clear_within": 0, "mem": 0, "mem_within": 0, "pairs": 0, "pairs_ok": 0}
HDR = "%-12s %-10s %9s %9s %21s %8s %6s  %13s %13s %7s" % ("case", "from", "pred ms", "meas ms", "meas 90% interval",
                                                           "err", "clear", "pred peak B", "meas peak B", "err")


def row(model, label, src, o, c, fp32c, memory=True):
    p = o["predicted_iteration_us"] / 1e3
    err = 100 * (p / c["median_ms"] - 1)
    clear = fp32c is not None and (c["p95_ms"] < fp32c["p5_ms"] or c["p5_ms"] > fp32c["p95_ms"])
    tot["n"] += 1
    tot["within"] += abs(err) <= 5
    tot["clear"] += clear
    tot["clear_within"] += clear and abs(err) <= 5
    line = "%-12s %-10s %9.3f %9.3f [%8.3f, %9.3f] %+7.1f%% %6s" % (
        model + "/" + label, src, p, c["median_ms"], c["p5_ms"], c["p95_ms"], err, "yes" if clear else "no")
    if memory and o["predicted_peak_bytes"] > 0:
        merr = 100 * (o["predicted_peak_bytes"] / c["peak_bytes"] - 1)
        tot["mem"] += 1
        tot["mem_within"] += abs(merr) <= 3
        line += "  %13d %13d %+6.2f%%" % (o["predicted_peak_bytes"], c["peak_bytes"], merr)
    print(line)


for model in meas.get("models_done") or ("mlp", "cnn", "tfm"):
    mixes = sorted({k.split("/")[1] for k in cases if k.startswith(model + "/mix")})
    order = ["fp32", "bf16", "fp16"] + mixes
    have = {p for p in order
            if "%s/%s" % (model, p) in cases and "median_ms" in cases["%s/%s" % (model, p)]
            and os.path.exists("%s/%s_%s.json.gz" % (g, model, p))}
    if not {"fp32", "bf16"} <= have:
        print("%s: no fp32 and bf16 runs with timings: skipped" % model)
        continue
    print("\n%s: the traces (Python: median ProfilerStep, kernel time per step, GPU busy share)" % model)
    for p in sorted(have, key=order.index):
        f = trace_figures("%s/%s_%s.json.gz" % (g, model, p))
        c = cases["%s/%s" % (model, p)]
        print("  %-5s traced step %8.3f ms, kernels %8.3f ms, GPU busy %5.1f%%; unprofiled %8.3f ms (GPU events %s)" % (
            p, f["step_ms"], f["kernel_ms"], f["busy_pct"], c["median_ms"],
            "%.3f ms" % c["gpu_median_ms"] if "gpu_median_ms" in c else "-"))
    print(HDR)
    fp32c = cases[model + "/fp32"]
    preds = {}
    for p in ["fp32", "bf16"] + mixes:
        if p in have:
            preds[p] = predict(model, "bf16", plan_of(model, p))
            row(model, p, "fp32+bf16", preds[p], cases["%s/%s" % (model, p)],
                cases[model + "/bf16"] if p == "fp32" else fp32c)
    if "fp16" in have:
        row(model, "fp16", "fp32+fp16", predict(model, "fp16", plan_of(model, "fp16")), cases[model + "/fp16"], fp32c)
        for p in mixes:
            if p in have:
                row(model, p + "(16)", "fp32+fp16", predict(model, "fp16", plan_of(model, p, "fp16")),
                    cases["%s/%s" % (model, p)], fp32c, memory=False)
        row(model, "bf16", "fp16 run", predict(model, "fp16", "* fp16\n"), cases[model + "/bf16"], fp32c,
            memory=False)
        o = predict(model, "bf16", "* bf16\n")
        row(model, "fp16", "bf16 run", o, cases[model + "/fp16"], fp32c, memory=False)
    plans = sorted(preds)
    for i, a in enumerate(plans):
        for b in plans[i + 1:]:
            ca, cb = cases[model + "/" + a], cases[model + "/" + b]
            if ca["p95_ms"] < cb["p5_ms"] or cb["p95_ms"] < ca["p5_ms"]:
                tot["pairs"] += 1
                tot["pairs_ok"] += (preds[a]["predicted_iteration_us"] < preds[b]["predicted_iteration_us"]) == \
                    (ca["median_ms"] < cb["median_ms"])
    txt = subprocess.run(["build/trainscope", "replay", "--precision-plan", os.path.join(tmp, "plan"),
                          "--precision-trace", "bf16=%s/%s_bf16.json.gz" % (g, model), "%s/%s_fp32.json.gz" % (g, model)],
                         capture_output=True, text=True).stdout
    for n in txt.splitlines():
        if n.startswith("note:") and "GPU ops run in" in n:
            print("  " + n)
print("\ntime: %d of %d cases within 5%% of the median; %d of the %d whose interval is clear of the fp32 plan's "
      "(bf16's for fp32); ranking (fp32+bf16 predictions): %d of %d resolved pairs of plans in the measured order" % (
          tot["within"], tot["n"], tot["clear_within"], tot["clear"], tot["pairs_ok"], tot["pairs"]))
print("memory: %d of %d cases within 3%%" % (tot["mem_within"], tot["mem"]))
PY
for m in $(python3 -c "import json, sys; print(' '.join(json.load(open(sys.argv[1]))['models_done']))" "$G/measured.json"); do
    [ -f "$G/${m}_mixB.json.gz" ] || continue
    echo "casts, $m (GPU time; fitted on the fp32 and bf16 runs, scored on the mixed runs' casts):"
    build/bench/precision casts "$G/${m}_fp32.json.gz" "$G/${m}_bf16.json.gz" "$G"/${m}_mix*.json.gz | sed 's/^/  /'
done
