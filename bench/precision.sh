#!/bin/sh
# precision.sh - the precision what-if scored against real runs, then its
# speed. For each model of the ground truth (bench/precision/, made by
# bench/precision_gt.py with Debian's torch 1.13 on this CPU) and each plan
# (fp32, bf16, mixA, mixB, and greedy: QSync's greedy plan under a memory
# limit, searched by trainscope on that run's traces and applied by the
# ground-truth script), `trainscope replay --precision-plan` predicts the
# step from the model's fp32 and bf16 traces alone (less the profiler's cost
# per op, measured apart by the ground-truth script) and is compared with the
# unprofiled step's median (wall and thread CPU time, 90% intervals over
# interleaved rounds) and peak memory. Targets: time within 5% where the
# plan's interval is clear of the fp32 plan's, the plans ranked right, memory
# within 3%; the greedy plan measured to fit its limit and to be no slower
# than the fastest measured plan that fits. Then the cast fit's error on
# held-out casts (the mixed plans' traces), and the speed on a BERT-scale
# synthetic chain.
#   sh bench/precision.sh             score the committed held-out ground truth
#                                     (bench/precision-heldout5; TS_PRECISION_GT=DIR
#                                     for another, such as bench/precision-heldout4,
#                                     a set the model was changed on)
#   sh bench/precision.sh --measure   measure it again first into a temporary
#                                     folder (fails if BLAS or CPU features
#                                     differ from bench/precision/machine.json)
set -e
cd "$(dirname "$0")/.."
make -s build/trainscope build/bench/precision
G=${TS_PRECISION_GT:-bench/precision-heldout5}
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
MODELS = ("mlp", "cnn", "attn")
PLANS = ("fp32", "bf16", "mixA", "mixB") + (("greedy",) if all("median_ms" in meas["cases"].get(m + "/greedy", {})
                                                                for m in MODELS) else ())
print("ground truth: %s, torch %s, %s, %s; %d rounds x %d steps; profiler %.1f us per op" % (
    meas["machine"]["cpu"], meas["machine"]["torch"], meas["machine"]["blas"],
    ", ".join(k for k, v in meas["machine"]["cpu_features"].items() if v), meas["rounds"],
    meas["steps_per_round"], ov_us))


def predict(traces, model, plan):
    """`replay --precision-plan` of one case from the fp32 and bf16 traces in `traces`."""
    out = subprocess.run(["build/trainscope", "replay", "--format", "json", "--profiler-overhead-us", str(ov_us),
                          "--precision-plan", "%s/%s_%s.plan" % (g, model, plan),
                          "--precision-trace", "bf16=%s/%s_bf16.json.gz" % (traces, model),
                          "%s/%s_fp32.json.gz" % (traces, model)], capture_output=True, text=True)
    if out.returncode:
        sys.exit("replay failed: " + out.stderr)
    return json.loads(out.stdout)


def score(traces, med, lo, hi, with_memory):
    """Every case against the measured med [lo, hi] (wall or CPU keys); a
    case is clear when its interval misses the fp32 plan's (bf16's for fp32);
    a pair of plans is resolved when their intervals do not overlap."""
    n = within = clear_n = clear_within = mem_within = pairs = pairs_ok = 0
    for model in MODELS:
        preds = {plan: predict(traces, model, plan) for plan in PLANS}
        for plan, o in preds.items():
            c = meas["cases"]["%s/%s" % (model, plan)]
            other = meas["cases"][model + ("/bf16" if plan == "fp32" else "/fp32")]
            p = o["predicted_iteration_us"] / 1e3
            err = 100 * (p / c[med] - 1)
            clear = c[hi] < other[lo] or c[lo] > other[hi]
            n += 1
            within += abs(err) <= 5
            clear_n += clear
            clear_within += clear and abs(err) <= 5
            line = "%-10s %9.2f %9.2f [%7.2f, %8.2f] %+7.1f%% %8s" % (
                model + "/" + plan, p, c[med], c[lo], c[hi], err, "yes" if clear else "no")
            if with_memory:
                merr = 100 * (o["predicted_peak_bytes"] / c["peak_bytes"] - 1)
                mem_within += abs(merr) <= 3
                line += "  %12d %12d %+6.2f%%" % (o["predicted_peak_bytes"], c["peak_bytes"], merr)
            print(line)
        for i, a in enumerate(PLANS):
            for b in PLANS[i + 1:]:
                ca, cb = meas["cases"][model + "/" + a], meas["cases"][model + "/" + b]
                if ca[hi] < cb[lo] or cb[hi] < ca[lo]:
                    pairs += 1
                    pa, pb = preds[a]["predicted_iteration_us"], preds[b]["predicted_iteration_us"]
                    pairs_ok += (pa < pb) == (ca[med] < cb[med])
    print("load: %s at the start, %s at the end; %s s wall, %s s CPU" % (
        meas.get("load_average_at_start"), meas.get("load_average_at_end"), meas.get("run_wall_s"),
        meas.get("run_cpu_s")) if with_memory else "", end="\n" if with_memory else "")
    print("time: %d of %d cases within 5%% of the median; %d of the %d whose interval is clear of the fp32 plan's "
          "(bf16's for fp32); ranking: %d of %d resolved pairs of plans in the measured order" % (
              within, n, clear_within, clear_n, pairs_ok, pairs))
    if with_memory:
        print("memory: %d of %d cases within 3%%" % (mem_within, n))
    for model in MODELS:
        gr = meas["cases"].get(model + "/greedy")
        if not gr:
            continue
        if "greedy_error" in gr:
            print("greedy %s: no plan: %s" % (model, gr["greedy_error"]))
            continue
        limit = gr["memory_limit_bytes"]
        fit = [p for p in PLANS[:4] if meas["cases"]["%s/%s" % (model, p)]["peak_bytes"] <= limit]
        best = min(fit, key=lambda p: meas["cases"]["%s/%s" % (model, p)][med]) if fit else None
        b = meas["cases"]["%s/%s" % (model, best)] if best else None
        print("greedy %s (%s): limit %d B, measured peak %d B: %s; %.2f ms [%.2f, %.2f] against the fastest of the "
              "measured plans that fit, %s %.2f ms [%.2f, %.2f]: %s" % (
                  model, ", ".join(gr["modules_bf16"]) or "nothing lowered", limit, gr["peak_bytes"],
                  "fits" if gr["peak_bytes"] <= limit else "DOES NOT FIT", gr[med], gr[lo], gr[hi], best,
                  b[med] if b else 0, b[lo] if b else 0, b[hi] if b else 0,
                  "no plan fits" if not b else "faster" if gr[hi] < b[lo] else "slower" if gr[lo] > b[hi]
                  else "intervals overlap (%+.1f%% at the median)" % (100 * (gr[med] / b[med] - 1))))


print("%-10s %9s %9s %19s %8s %8s  %12s %12s %7s" % ("case", "pred ms", "wall ms", "wall 90% interval", "err",
                                                     "clear?", "pred peak B", "meas peak B", "err"))
score(g, "median_ms", "p5_ms", "p95_ms", True)
print("\nload taken out (traces scaled by each session's CPU/wall, against the thread CPU time):")
print("%-10s %9s %9s %19s %8s %8s" % ("case", "pred ms", "cpu ms", "cpu 90% interval", "err", "clear?"))
score(norm, "cpu_median_ms", "cpu_p5_ms", "cpu_p95_ms", False)
PY
for m in mlp cnn attn; do
    echo "casts, $m:"
    build/bench/precision casts "$G/${m}_fp32.json.gz" "$G/${m}_bf16.json.gz" "$G/${m}_mixA.json.gz" "$G/${m}_mixB.json.gz" | sed 's/^/  /'
done
build/bench/precision speed
