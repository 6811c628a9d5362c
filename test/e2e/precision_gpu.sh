#!/bin/sh
# precision_gpu.sh - `trainscope replay --precision-plan` on real GPU runs
# (bench/precision-gpu/: one H200, torch 2.11, Kineto; precision_gt_gpu.py),
# checked only on what run-to-run noise cannot flip, against figures computed
# here in Python from the traces and measured.json, not by trainscope:
#   * the fp32 plan gives back the fp32 trace's ProfilerStep (20% trimmed mean), and its
#     device peak is the one summed here from the "Device Type" 1 [memory]
#     instants of the first step (and within 1% of max_memory_allocated);
#   * the GPU-busy share trainscope notes is the union of the kernels'
#     spans over the steps, computed here;
#   * plans whose measured 90% intervals are apart by more than 10% are
#     predicted in the measured order (fp32+bf16 traces only);
#   * each mixed plan's prediction lies between 0.95 x the GPU-busy time of
#     that plan's own trace (the GPU must do that work) and 1.05 x its traced
#     step (the profiler only slows a step down); tfm's runs, whose forward
#     ops differ between precisions (an aten::contiguous only fp32 has), map.
set -u
BIN=${TS_BIN:-build/trainscope}
G=$(dirname "$0")/../../bench/precision-gpu
[ -f "$G/measured.json" ] && [ -f "$G/tfm_mixB.json.gz" ] || { echo "skip: no $G"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0
for m in mlp cnn tfm; do
    for p in fp32 bf16 mixA mixB; do
        "$BIN" replay --format json --precision-plan "$G/${m}_$p.plan" --precision-trace "bf16=$G/${m}_bf16.json.gz" \
            "$G/${m}_fp32.json.gz" > "$T/${m}_$p.json" 2>"$T/${m}_$p.err" || { echo "FAIL $m/$p: $(cat "$T/${m}_$p.err")"; fails=$((fails+1)); }
    done
    "$BIN" replay --precision-plan "$G/${m}_fp32.plan" --precision-trace "bf16=$G/${m}_bf16.json.gz" \
        "$G/${m}_fp32.json.gz" > "$T/${m}_note.txt" 2>/dev/null || { echo "FAIL $m note"; fails=$((fails+1)); }
done
[ "$fails" = 0 ] || exit 1
PYTHONPATH="$(dirname "$0")/../../bench" python3 - "$G" "$T" <<'PY'
import json, re, statistics, sys
from kineto_figures import busy, trace
g, t = sys.argv[1], sys.argv[2]
meas = json.load(open(g + "/measured.json"))["cases"]
fails = 0


def trimmed_mean(v):   # the 20% trimmed mean: the lowest and highest len/5 dropped
    v = sorted(v)
    c = len(v) // 5
    return sum(v[c:len(v) - c]) / (len(v) - 2 * c)


def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    fails += not ok


def pred(m, p):
    return json.load(open("%s/%s_%s.json" % (t, m, p)))


for m in ("mlp", "cnn", "tfm"):
    steps, gpu, mem = trace("%s/%s_fp32.json.gz" % (g, m))
    want = trimmed_mean(b - a for a, b in steps)
    o = pred(m, "fp32")
    check(abs(o["predicted_iteration_us"] - want) < 0.002,
          "%s fp32 plan: %.3f us, the trace's trimmed mean step %.3f us" % (m, o["predicted_iteration_us"], want))
    a, b = steps[0]
    first = [x for x in mem if a <= x[0] < b]
    base = first[0][2] - first[0][1]
    run = peak = base
    for _, by, _ in first:
        run += by
        peak = max(peak, run)
    measured = meas[m + "/fp32"]["peak_bytes"]
    check(o["predicted_peak_bytes"] == peak and abs(peak / measured - 1) <= 0.01,
          "%s fp32 peak: %d B, summed here %d B, max_memory_allocated %d B" % (m, o["predicted_peak_bytes"], peak,
                                                                               measured))
    share = 100 * sum(busy(steps, gpu)) / sum(b - a for a, b in steps)
    note = re.search(r"GPU ops run in (\d+)% of its steps", open("%s/%s_note.txt" % (t, m)).read())
    check(note is not None and abs(int(note.group(1)) - share) <= 1,
          "%s GPU busy: noted %s%%, computed here %.1f%%" % (m, note.group(1) if note else "?", share))
    plans = ("fp32", "bf16", "mixA", "mixB")
    for i, x in enumerate(plans):
        for y in plans[i + 1:]:
            cx, cy = meas["%s/%s" % (m, x)], meas["%s/%s" % (m, y)]
            lo, hi = (cx, cy) if cx["median_ms"] < cy["median_ms"] else (cy, cx)
            if lo["p95_ms"] * 1.10 >= hi["p5_ms"]:
                continue   # too close for noise not to flip them
            px, py = pred(m, x)["predicted_iteration_us"], pred(m, y)["predicted_iteration_us"]
            check((px < py) == (cx["median_ms"] < cy["median_ms"]),
                  "%s %s vs %s: predicted %.3f / %.3f ms, measured %.3f / %.3f ms" % (
                      m, x, y, px / 1e3, py / 1e3, cx["median_ms"], cy["median_ms"]))
    for p in ("mixA", "mixB"):
        s2, g2, _ = trace("%s/%s_%s.json.gz" % (g, m, p))
        lo = 0.95 * statistics.median(busy(s2, g2)) / 1e3
        hi = 1.05 * statistics.median(b - a for a, b in s2) / 1e3
        v = pred(m, p)["predicted_iteration_us"] / 1e3
        check(lo <= v <= hi, "%s %s: predicted %.3f ms within [%.3f, %.3f] (0.95 x its trace's GPU busy, 1.05 x "
              "its traced step)" % (m, p, v, lo, hi))
sys.exit(1 if fails else 0)
PY
