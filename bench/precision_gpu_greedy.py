#!/usr/bin/env python3
"""precision_gpu_greedy.py - scores the greedy case of a precision_gt_gpu.py
run made with --greedy-trainscope: for each model, whether the greedy plan
(searched by trainscope on the run's search traces, applied per module)
measured within its memory limit (max_memory_allocated), and whether it was
no slower than the fastest measured plan that keeps both budgets (the memory
limit and the accuracy budget of N modules: fp32, mixA, mixB; the all-16-bit
plans lower every module, over the budget), by median and by 90% interval
of round medians; then trainscope's prediction of the plan (from the search
traces, as the search made it; and `replay --precision-plan` from the scored
fp32 and bf16 traces) against its measurement. Not a ground truth: it reads
one.

usage: python3 bench/precision_gpu_greedy.py DIR [--trainscope BIN]
"""
import argparse
import json
import os
import subprocess
import sys


def modules(path):
    out = set()
    for line in open(path):
        w = line.split()
        if len(w) == 2 and w[0].startswith("name:") and w[1] != "fp32":
            out.add(w[0][5:])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--trainscope", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                                          "trainscope"))
    ap.add_argument("--profiler-overhead-us", type=float, default=None,
                    help="for the replay from the scored traces (default: the one the search used)")
    a = ap.parse_args()
    g = a.dir
    meas = json.load(open(os.path.join(g, "measured.json")))
    cases = meas["cases"]
    mach = meas["machine"]
    print("%s: %s, torch %s; %d rounds x %d steps; skipped: %s" % (
        g, mach.get("gpu", mach.get("device")), mach["torch"], meas["rounds"], meas["steps_per_round"],
        "; ".join(meas.get("skipped", [])) or "none"))
    bad = 0
    for model in meas.get("models_done", []):
        c = cases.get(model + "/greedy")
        if not c or "median_ms" not in c:
            print("%s: no measured greedy case (%s)" % (model, (c or {}).get("greedy_error", "not run")))
            bad += 1
            continue
        limit, budget = c["memory_limit_bytes"], c["accuracy_budget_modules"]
        print("\n%s: greedy under %d B (%.1f MiB) and %d modules lowers %s" % (
            model, limit, limit / 2 ** 20, budget, ", ".join(c["modules_bf16"]) or "nothing"))
        rows = []
        for p in ("fp32", "bf16", "fp16", "mixA", "mixB", "greedy"):
            k = "%s/%s" % (model, p)
            if k not in cases or "median_ms" not in cases[k]:
                continue
            n = len(modules(os.path.join(g, "%s_%s.plan" % (model, p))))
            v = cases[k]
            ok = v["peak_bytes"] <= limit and n <= budget
            rows.append((p, v, n, ok))
            print("  %-6s %2d modules  peak %11d B %-5s  %8.3f ms [%8.3f, %8.3f]%s" % (
                p, n, v["peak_bytes"], "fits" if v["peak_bytes"] <= limit else "OVER", v["median_ms"], v["p5_ms"],
                v["p95_ms"], "" if ok or p == "greedy" else "  (outside the budgets)"))
        fits = c["peak_bytes"] <= limit
        others = [(p, v) for p, v, n, ok in rows if ok and p != "greedy"]
        if not others:
            verdict = "no other measured plan keeps both budgets"
        else:
            bp, bv = min(others, key=lambda r: r[1]["median_ms"])
            if c["median_ms"] <= bv["median_ms"]:
                verdict = "no slower than %s (the fastest other plan within both budgets): %.3f vs %.3f ms, %+.1f%%" % (
                    bp, c["median_ms"], bv["median_ms"], 100 * (c["median_ms"] / bv["median_ms"] - 1))
            elif c["p5_ms"] <= bv["p95_ms"]:
                verdict = "slower than %s by median (%.3f vs %.3f ms), intervals overlap" % (bp, c["median_ms"],
                                                                                           bv["median_ms"])
            else:
                verdict = "SLOWER than %s: %.3f vs %.3f ms, intervals clear" % (bp, c["median_ms"], bv["median_ms"])
                bad += 1
        bad += not fits
        print("  greedy: %s its limit (%+.2f%% of it); %s" % ("fits" if fits else "OVER", 100 * (c["peak_bytes"] / limit - 1),
                                                             verdict))
        print("  search's prediction: %.3f ms (%+.1f%% of the measured median), peak %d B (%+.2f%% of measured)" % (
            c["predicted_iteration_us"] / 1e3, 100 * (c["predicted_iteration_us"] / 1e3 / c["median_ms"] - 1),
            c["predicted_peak_bytes"], 100 * (c["predicted_peak_bytes"] / c["peak_bytes"] - 1)))
        ov = a.profiler_overhead_us
        if ov is None:
            w = c["greedy_cmd"].split()
            ov = float(w[w.index("--profiler-overhead-us") + 1]) if "--profiler-overhead-us" in w else 0.0
        cmd = [a.trainscope, "replay", "--format", "json", "--profiler-overhead-us", str(ov), "--precision-plan",
               os.path.join(g, "%s_greedy.plan" % model), "--precision-trace",
               "bf16=%s" % os.path.join(g, "%s_bf16.json.gz" % model), os.path.join(g, "%s_fp32.json.gz" % model)]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode:
            print("  replay from the scored traces failed: %s" % out.stderr.strip()[-300:])
            continue
        o = json.loads(out.stdout)
        print("  replay from the scored fp32+bf16 traces: %.3f ms (%+.1f%%), peak %d B (%+.2f%%)" % (
            o["predicted_iteration_us"] / 1e3, 100 * (o["predicted_iteration_us"] / 1e3 / c["median_ms"] - 1),
            o["predicted_peak_bytes"], 100 * (o["predicted_peak_bytes"] / c["peak_bytes"] - 1)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
