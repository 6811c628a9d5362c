#!/usr/bin/env python3
"""precision_greedy_rerun.py - re-run trainscope's greedy search on the traces
a CPU ground-truth set (bench/precision-design, -heldout, -heldout2) holds,
under the memory limit that set's run used, and score the plan found against
the set's own measurements: a plan equal (as modules in bf16) to one the set
measured is scored by that measurement (fits its limit? no slower than the
fastest measured plan that fits, by median and by 90% interval?); a plan the
set never ran is listed as needing a measurement. Not a ground truth itself:
it measures nothing.

usage: python3 bench/precision_greedy_rerun.py [--trainscope BIN] [--granularity module|op] DIR...
"""
import argparse
import json
import os
import re
import subprocess
import sys


def modules_of(plan_path):
    """Modules a set's .plan file puts in bf16."""
    out = set()
    for line in open(plan_path):
        w = line.split()
        if len(w) == 2 and w[0].startswith("name:") and w[1] != "fp32":
            out.add(w[0][5:])
    return frozenset(out)


def greedy(a, g, model, limit, overhead_ns, plans):
    """The modules the greedy lowers (from its '# OP in MODULE' comments)."""
    tr = lambda p: os.path.join(g, "%s_%s%s.json.gz" % (model, p, ".search" if os.path.exists(
        os.path.join(g, "%s_%s.search.json.gz" % (model, p))) else ""))
    cmd = [a.trainscope, "replay", "--precision-greedy", "--granularity", a.granularity, "--memory-limit",
           "%.12f" % (limit / 2.0 ** 30), "--profiler-overhead-us", "%.3f" % (overhead_ns / 1e3),
           "--precision-trace", "bf16=" + tr("bf16"), tr("fp32")]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        return None, out.stderr.strip(), cmd
    tops = set().union(*plans.values()) if plans else set()
    mods, stray = set(), []
    for line in out.stdout.splitlines():
        m = re.match(r"op:\d+ (\w+)\s+#\s*(\S+)(?: in (\S+))?", line)
        if m and m.group(1) != "fp32":
            (mods.add(m.group(3)) if m.group(3) in tops else stray.append(m.group(2)))
    pred = re.search(r"# predicted iteration .*", out.stdout)
    return frozenset(mods), "%s%s" % (pred.group(0)[2:] if pred else "",
                                      "; outside modules: %s" % ", ".join(stray) if stray else ""), cmd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trainscope", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                                          "trainscope"))
    ap.add_argument("--granularity", default="module", choices=("module", "op"))
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    bad = 0
    peaks = {}   # (model, modules) -> {set: peak}
    for g in a.dirs:
        cases = json.load(open(os.path.join(g, "measured.json")))["cases"]
        for model in ("mlp", "cnn", "attn"):
            for p in ("fp32", "bf16", "mixA", "mixB", "greedy"):
                f = os.path.join(g, "%s_%s.plan" % (model, p))
                if os.path.exists(f) and "peak_bytes" in cases.get("%s/%s" % (model, p), {}):
                    peaks.setdefault((model, modules_of(f)), {})[os.path.basename(g)] = cases["%s/%s" % (model, p)]["peak_bytes"]
    same_peak = all(len(set(v.values())) == 1 for v in peaks.values())
    print("plans measured in more than one set peak alike: %s" % ("yes" if same_peak else "NO: %s" % [
        (k[0], sorted(k[1]), v) for k, v in peaks.items() if len(set(v.values())) > 1]))
    for g in a.dirs:
        meas = json.load(open(os.path.join(g, "measured.json")))
        cases, ov = meas["cases"], meas["profiler_overhead_ns_per_op"]
        print("%s (%s traces; profiler %.0f ns per op)" % (g, "search" if any(
            f.endswith(".search.json.gz") for f in os.listdir(g)) else "scored", ov))
        for model in ("mlp", "cnn", "attn"):
            plans = {p: modules_of(os.path.join(g, "%s_%s.plan" % (model, p)))
                     for p in ("fp32", "bf16", "mixA", "mixB", "greedy") if os.path.exists(
                         os.path.join(g, "%s_%s.plan" % (model, p))) and "median_ms" in cases.get("%s/%s" % (model, p), {})}
            limit = cases.get(model + "/greedy", {}).get("memory_limit_bytes") or \
                (min(cases["%s/%s" % (model, p)]["peak_bytes"] for p in ("fp32", "bf16", "mixA", "mixB")) +
                 max(cases["%s/%s" % (model, p)]["peak_bytes"] for p in ("fp32", "bf16", "mixA", "mixB"))) // 2
            mods, note, cmd = greedy(a, g, model, limit, ov, plans)
            if mods is None:
                print("  %-5s limit %d B: greedy failed: %s" % (model, limit, note))
                bad += 1
                continue
            fit = {p: cases["%s/%s" % (model, p)] for p in plans if cases["%s/%s" % (model, p)]["peak_bytes"] <= limit}
            same = [p for p in plans if plans[p] == mods]
            others = [p for p in fit if plans[p] != mods]
            best = min(others, key=lambda p: fit[p]["median_ms"]) if others else None
            line = "  %-5s limit %d B: lowers %s (%s)" % (model, limit, ",".join(sorted(mods)) or "nothing", note)
            if not same:
                other = peaks.get((model, mods))
                if other:
                    pk = list(other.values())[0]
                    print(line + "\n        not timed in this set; its peak, measured in %s: %d B (%s)" % (
                        "/".join(sorted(other)), pk, "fits" if pk <= limit else "OVER"))
                    bad += pk > limit
                else:
                    print(line + "\n        a plan no set measured")
                continue
            c = cases["%s/%s" % (model, same[0])]
            if best is None:
                print(line + "\n        = measured %s: peak %d B (%s); no other measured plan fits" % (
                    "/".join(same), c["peak_bytes"], "fits" if c["peak_bytes"] <= limit else "OVER"))
                bad += c["peak_bytes"] > limit
                continue
            b = fit[best]
            ok_fit = c["peak_bytes"] <= limit
            slower = c["p5_ms"] > b["p95_ms"]
            print(line + "\n        = measured %s: peak %d B (%s), %.2f ms [%.2f, %.2f]; fastest other measured plan that fits: "
                  "%s %.2f ms [%.2f, %.2f]: %s" % (
                      "/".join(same), c["peak_bytes"], "fits" if ok_fit else "OVER", c["median_ms"], c["p5_ms"],
                      c["p95_ms"], best, b["median_ms"], b["p5_ms"], b["p95_ms"],
                      "slower (intervals clear)" if slower else
                      ("no slower by median" if c["median_ms"] <= b["median_ms"] * 1.0000001 else
                       "slower by median, intervals overlap")))
            bad += not ok_fit or slower
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
