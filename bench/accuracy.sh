#!/bin/sh
# accuracy.sh - replay accuracy against measured runs (issue 3, "Accuracy").
#
#   sh bench/accuracy.sh [WORKLOADS_DIR]     (default examples/workloads)
#
# Part 1: every multi-iteration trace in $TS_DATA (../shared/data) and every
# workload trace, replayed unmodified: predicted vs measured iteration time.
# Part 2: for every model of the ground truth (examples/workloads/results/
# <model>_bucket<N>.json, made by gen_ground_truth.py: 2-rank gloo DDP on CPU)
# and every measured bucket size N, the trace of N replayed with --bucket-mb M
# for every other measured M, printed next to M's measurements: the profiled
# step time (the same conditions as the trace) and the unprofiled median with
# its p10-p90 spread. The unprofiled column is the prediction relative to the
# trace: predicted(M) / replayed iteration of the trace x unprofiled median of
# N, which takes out the load the trace happened to be taken under and the
# profiler's overhead, and uses nothing measured at M. Targets: within 5%,
# and the right ranking of the bucket sizes (also counted over the pairs of
# bucket sizes whose order the measurement resolves, from summary.json's
# paired rounds). Medians and the worst case close each part. The gloo cost
# model comes from results/gloo_allreduce_perf.log (bench/gloo_allreduce.py)
# when it is there.
# Needs /usr/bin/python3 (Debian's) for the JSON; the CLI at $TS_BIN.
set -e
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
WL=${1:-examples/workloads}
[ -x "$BIN" ] || { echo "accuracy: build first (make), no $BIN" >&2; exit 2; }
export BIN DATA WL
exec /usr/bin/python3 - <<'PY'
import glob, json, os, statistics, subprocess, sys

BIN, DATA, WL = os.environ["BIN"], os.environ["DATA"], os.environ["WL"]

def replay(paths, *opts):
    p = subprocess.run([BIN, "replay", "--format", "json", *opts, *paths], capture_output=True, text=True)
    if p.returncode:
        return None, p.stderr.strip()
    return json.loads(p.stdout), None

def pct(pred, meas):
    return 100.0 * (pred - meas) / meas

# ---- part 1: unmodified replays ----
sets = [["torch-cpu-legacy/cnn_cpu_trace.json"],
        ["kineto/nccl_parser_config/nccl_data.json.gz"],
        ["kineto/trace_filter/sampled_rank-0.json.gz", "kineto/trace_filter/sampled_rank-1.json.gz"],
        ["kineto/trace_compare/base/base.json.gz"], ["kineto/trace_compare/test/test.json.gz"]]
sets = [[os.path.join(DATA, p) for p in s] for s in sets if all(os.path.exists(os.path.join(DATA, p)) for p in s)]
sets += [sorted(glob.glob(d + "/rank*.json*")) for d in sorted(glob.glob(WL + "/traces/*"))]
print("Part 1: unmodified replay, every multi-iteration trace")
print("%-58s %5s %12s %12s %8s" % ("trace", "iters", "measured ms", "predicted ms", "error %"))
errs = []
for s in sets:
    r, e = replay(s)
    name = os.path.relpath(s[0], DATA) if s[0].startswith(DATA) else s[0]
    if r is None or r["iterations"] < 2:
        print("%-58s  skipped: %s" % (name[-58:], e or "fewer than 2 iterations"))
        continue
    err = r["error_pct"]
    errs.append(abs(err))
    print("%-58s %5d %12.3f %12.3f %+8.3f" % (name[-58:], r["iterations"], r["measured_iteration_us"] / 1e3,
                                               r["predicted_iteration_us"] / 1e3, err))
if errs:
    print("median |error| %.3f%%, worst %.3f%% over %d traces (target: median <= 2%%, worst <= 5%%)\n"
          % (statistics.median(errs), max(errs), len(errs)))

# ---- part 2: bucket-size what-ifs against the ground truth ----
res = {}
for f in sorted(glob.glob(WL + "/results/*_bucket*.json")):
    d = json.load(open(f))
    res.setdefault(d["model"], {})[d["bucket_cap_mb"]] = d
if not res:
    print("Part 2: no ground truth under %s/results (run examples/workloads/gen_ground_truth.py)" % WL)
    sys.exit(0)
calib_log = os.path.join(WL, "results", "gloo_allreduce_perf.log")
calib = ["--nccl-tests", calib_log] if os.path.exists(calib_log) else []
print("Part 2: --bucket-mb what-ifs (2-rank gloo DDP on CPU); times in ms; gloo cost model from %s"
      % (calib_log if calib else "each trace's own all-reduces (no calibration log)"))
print("%-11s %5s %5s %9s %9s %7s %9s %9s %-17s %7s" % ("model", "from", "to", "predicted", "profiled", "err %",
      "pred(rel)", "unprof", "p10-p90", "err %"))
e_prof, e_unp, rank_ok, rank_n, pair_ok, pair_n = [], [], 0, 0, 0, 0
summary = json.load(open(os.path.join(WL, "results", "summary.json"))) if os.path.exists(
    os.path.join(WL, "results", "summary.json")) else {"models": {}}


def resolved_pairs(model):
    """Pairs of bucket sizes whose order the measurement resolves: the
    faster one won at least 75% of the paired rounds and is at least 5%
    faster (median paired ratio). Yields (a, b, faster)."""
    for p in summary["models"].get(model, {}).get("pairs", []):
        r, share = p["median_ratio_a_over_b"], p["share_of_rounds_a_faster"]
        if share >= 0.75 and r <= 0.95:
            yield p["a"], p["b"], p["a"]
        elif share <= 0.25 and r >= 1.05:
            yield p["a"], p["b"], p["b"]
for model in sorted(res):
    runs = res[model]
    caps = sorted(runs)
    grads = os.path.join(WL, "results", runs[caps[0]]["gradients"])
    for src in caps:
        d = runs[src]
        traces = [os.path.join(WL, t) for t in d["traces"]]
        base, e = replay(traces)
        if base is None:
            print("%-11s %5g  failed: %s" % (model, src, e))
            continue
        scale = d["iteration"]["unprofiled"]["median_ms"] / (base["measured_iteration_us"] / 1e3)
        preds = {}
        for dst in caps:
            opts = [] if dst == src else ["--bucket-mb", str(dst), "--trace-bucket-mb", str(src), "--gradients", grads,
                                          *calib]
            r, e = replay(traces, *opts)
            if r is None:
                print("%-11s %5g %5g  failed: %s" % (model, src, dst, e))
                continue
            p = r["predicted_iteration_us"] / 1e3
            preds[dst] = p
            m = runs[dst]["iteration"]
            mp, mu = m["profiled"]["median_ms"], m["unprofiled"]
            ep, eu = pct(p, mp), pct(p * scale, mu["median_ms"])
            if dst != src:
                e_prof.append(abs(ep)); e_unp.append(abs(eu))
            print("%-11s %5g %5g %9.2f %9.2f %+7.2f %9.2f %9.2f %7.2f-%-9.2f %+7.2f%s" % (
                model, src, dst, p, mp, ep, p * scale, mu["median_ms"], mu["p10_ms"], mu["p90_ms"], eu,
                "  (unmodified)" if dst == src else ""))
        if len(preds) == len(caps):
            want = sorted(caps, key=lambda c: runs[c]["iteration"]["unprofiled"]["median_ms"])
            got = sorted(caps, key=lambda c: preds[c])
            rank_n += 1
            rank_ok += want == got
            pairs = [(a, b, faster) for a, b, faster in resolved_pairs(model) if a in preds and b in preds]
            ok = [(a, b) for a, b, faster in pairs if (preds[a] < preds[b]) == (faster == a)]
            pair_n += len(pairs)
            pair_ok += len(ok)
            print("%-11s %5g  ranking predicted %s, measured (unprofiled) %s: %s; resolved pairs in order %d of %d%s" % (
                model, src, got, want, "right" if want == got else "WRONG", len(ok), len(pairs),
                "".join(" (%g vs %g WRONG)" % (a, b) for a, b, _ in pairs if (a, b) not in ok)))
if e_prof:
    print("\nwhat-if |error| vs profiled: median %.2f%%, worst %.2f%%; relative vs unprofiled: median %.2f%%, worst %.2f%% "
          "(%d predictions; target 5%%)" % (statistics.median(e_prof), max(e_prof), statistics.median(e_unp),
                                            max(e_unp), len(e_prof)))
    print("ranking right from %d of %d source traces; resolved pairs (the faster won >= 75%% of paired rounds by"
          " >= 5%%) predicted in the measured order: %d of %d" % (rank_ok, rank_n, pair_ok, pair_n))
PY
