#!/bin/sh
# precision.sh - the precision what-if scored against real runs, then its
# speed. For each model of the ground truth (bench/precision/, made by
# bench/precision_gt.py with Debian's torch 1.13 on this CPU) and each plan
# (fp32, bf16, mixA, mixB), `trainscope replay --precision-plan` predicts the
# step from the model's fp32 and bf16 traces alone (less the profiler's cost
# per op, measured apart by the ground-truth script) and is compared with the
# unprofiled step's median (wall and thread CPU time, 90% intervals over
# interleaved rounds) and peak memory. Targets: time within 5% where the
# plan's interval is clear of the fp32 plan's, the plans ranked right, memory
# within 3%. Then the cast fit's error on held-out casts (the mixed plans'
# traces), and the speed on a BERT-scale synthetic chain.
#   sh bench/precision.sh             score the committed ground truth
#   sh bench/precision.sh --measure   measure it again first into a temporary
#                                     folder (fails if BLAS or CPU features
#                                     differ from bench/precision/machine.json)
set -e
cd "$(dirname "$0")/.."
make -s build/trainscope build/bench/precision
G=${TS_PRECISION_GT:-bench/precision}
if [ "${1:-}" = "--measure" ]; then
    T=$(mktemp -d)
    cp "$G/machine.json" "$T/"
    /usr/bin/python3 bench/precision_gt.py --out "$T"
    G=$T
fi
# A second scoring that takes the machine's load out of both sides: each
# trace session's durations divided by that session's wall/CPU ratio (the
# ground truth records it), predictions compared with the thread CPU time.
# It assumes the core was taken from the profiled thread evenly over a
# session; it is labelled as such below.
N=$(mktemp -d); trap 'rm -rf "$N" ${T:+"$T"}' EXIT
python3 - "$G" "$N" <<'PY'
import glob, gzip, json, os, shutil, sys
g, n = sys.argv[1], sys.argv[2]
for f in glob.glob(g + "/*"):
    if not f.endswith(".json.gz"):
        shutil.copy(f, n)
        continue
    d = json.load(gzip.open(f, "rt"))
    ratios = d.get("trainscope_ground_truth", {}).get("session_wall_over_cpu") or [1.0]
    ev = d["traceEvents"]
    steps = sorted((e for e in ev if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    per = max(1, len(steps) // len(ratios))
    starts = [steps[i * per]["ts"] for i in range(len(ratios))]
    for e in ev:
        k = max([i for i in range(len(starts)) if starts[i] <= e["ts"]] or [0])
        r = ratios[k] if ratios[k] > 0 else 1.0
        e["ts"] = starts[k] + (e["ts"] - starts[k]) / r
        if "dur" in e:
            e["dur"] = e["dur"] / r
    with gzip.open(os.path.join(n, os.path.basename(f)), "wt") as out:
        json.dump(d, out)
PY
python3 - "$G" "$N" <<'PY'
import json, subprocess, sys
g, norm = sys.argv[1], sys.argv[2]
meas = json.load(open(g + "/measured.json"))
ov_us = meas["profiler_overhead_ns_per_op"] / 1e3
print("ground truth: %s, torch %s, %s, %s; %d rounds x %d steps; profiler %.1f us per op" % (
    meas["machine"]["cpu"], meas["machine"]["torch"], meas["machine"]["blas"],
    ", ".join(k for k, v in meas["machine"]["cpu_features"].items() if v), meas["rounds"],
    meas["steps_per_round"], ov_us))
print("%-10s %9s %9s %19s %8s %8s %8s %8s  %12s %12s %7s" % (
    "case", "pred ms", "wall ms", "wall 90% interval", "err", "cpu ms", "err cpu", "clear?",
    "pred peak B", "meas peak B", "err"))
tot = {"n": 0, "within": 0, "clear": 0, "clear_within": 0, "mem_within": 0, "mem_n": 0}
pairs_ok = pairs = 0
for model in ("mlp", "cnn", "attn"):
    preds = {}
    for plan in ("fp32", "bf16", "mixA", "mixB"):
        out = subprocess.run(["build/trainscope", "replay", "--format", "json", "--profiler-overhead-us", str(ov_us),
                              "--precision-plan", "%s/%s_%s.plan" % (g, model, plan),
                              "--precision-trace", "bf16=%s/%s_bf16.json.gz" % (g, model),
                              "%s/%s_fp32.json.gz" % (g, model)], capture_output=True, text=True)
        if out.returncode:
            sys.exit("replay failed: " + out.stderr)
        o = json.loads(out.stdout)
        preds[plan] = o
    base = meas["cases"][model + "/fp32"]
    for plan, o in preds.items():
        c = meas["cases"]["%s/%s" % (model, plan)]
        p = o["predicted_iteration_us"] / 1e3
        err, err_cpu = 100 * (p / c["median_ms"] - 1), 100 * (p / c["cpu_median_ms"] - 1)
        other = meas["cases"][model + ("/bf16" if plan == "fp32" else "/fp32")]
        clear = c["p95_ms"] < other["p5_ms"] or c["p5_ms"] > other["p95_ms"]
        merr = 100 * (o["predicted_peak_bytes"] / c["peak_bytes"] - 1)
        tot["n"] += 1
        tot["within"] += abs(err) <= 5
        tot["clear"] += clear
        tot["clear_within"] += clear and abs(err) <= 5
        tot["mem_n"] += 1
        tot["mem_within"] += abs(merr) <= 3
        print("%-10s %9.2f %9.2f [%7.2f, %8.2f] %+7.1f%% %8.2f %+7.1f%% %8s  %12d %12d %+6.2f%%" % (
            model + "/" + plan, p, c["median_ms"], c["p5_ms"], c["p95_ms"], err, c["cpu_median_ms"], err_cpu,
            "yes" if clear else "no", o["predicted_peak_bytes"], c["peak_bytes"], merr))
    names = list(preds)
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            a, b = meas["cases"][model + "/" + names[i]], meas["cases"][model + "/" + names[j]]
            if a["p95_ms"] < b["p5_ms"] or b["p95_ms"] < a["p5_ms"]:   # resolved by the measurement
                pairs += 1
                pa, pb = preds[names[i]]["predicted_iteration_us"], preds[names[j]]["predicted_iteration_us"]
                pairs_ok += (pa < pb) == (a["median_ms"] < b["median_ms"])
print("time: %d of %d cases within 5%% of the wall median; %d of the %d whose interval is clear of the fp32 "
      "plan's (bf16's for fp32)" % (tot["within"], tot["n"], tot["clear_within"], tot["clear"]))
print("ranking: %d of %d pairs of plans in the measured order (pairs whose intervals do not overlap)" % (pairs_ok, pairs))
print("memory: %d of %d cases within 3%%" % (tot["mem_within"], tot["mem_n"]))
print("\nload taken out (traces scaled by each session's CPU/wall, against the thread CPU time):")
print("%-10s %9s %9s %19s %8s %8s" % ("case", "pred ms", "cpu ms", "cpu 90% interval", "err", "clear?"))
within = clear_n = clear_within = pairs = pairs_ok = 0
for model in ("mlp", "cnn", "attn"):
    preds = {}
    for plan in ("fp32", "bf16", "mixA", "mixB"):
        out = subprocess.run(["build/trainscope", "replay", "--format", "json", "--profiler-overhead-us", str(ov_us),
                              "--precision-plan", "%s/%s_%s.plan" % (g, model, plan),
                              "--precision-trace", "bf16=%s/%s_bf16.json.gz" % (norm, model),
                              "%s/%s_fp32.json.gz" % (norm, model)], capture_output=True, text=True)
        if out.returncode:
            sys.exit("replay failed: " + out.stderr)
        preds[plan] = json.loads(out.stdout)["predicted_iteration_us"] / 1e3
    for plan, p in preds.items():
        c = meas["cases"]["%s/%s" % (model, plan)]
        other = meas["cases"][model + ("/bf16" if plan == "fp32" else "/fp32")]
        clear = c["cpu_p95_ms"] < other["cpu_p5_ms"] or c["cpu_p5_ms"] > other["cpu_p95_ms"]
        err = 100 * (p / c["cpu_median_ms"] - 1)
        within += abs(err) <= 5
        clear_n += clear
        clear_within += clear and abs(err) <= 5
        print("%-10s %9.2f %9.2f [%7.2f, %8.2f] %+7.1f%% %8s" % (model + "/" + plan, p, c["cpu_median_ms"],
              c["cpu_p5_ms"], c["cpu_p95_ms"], err, "yes" if clear else "no"))
    names = list(preds)
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            a, b = meas["cases"][model + "/" + names[i]], meas["cases"][model + "/" + names[j]]
            if a["cpu_p95_ms"] < b["cpu_p5_ms"] or b["cpu_p95_ms"] < a["cpu_p5_ms"]:
                pairs += 1
                pairs_ok += (preds[names[i]] < preds[names[j]]) == (a["cpu_median_ms"] < b["cpu_median_ms"])
print("time (load taken out): %d of 12 cases within 5%% of the CPU median; %d of the %d whose interval is clear of "
      "the fp32 plan's; ranking %d of %d resolved pairs" % (within, clear_within, clear_n, pairs_ok, pairs))
PY
for m in mlp cnn attn; do
    echo "casts, $m:"
    build/bench/precision casts "$G/${m}_fp32.json.gz" "$G/${m}_bf16.json.gz" "$G/${m}_mixA.json.gz" "$G/${m}_mixB.json.gz" | sed 's/^/  /'
done
build/bench/precision speed
