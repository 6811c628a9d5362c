#!/usr/bin/python3
"""Print the ground-truth table of docs/workloads.md from results/summary.json.

What it is for: regenerating the measured-numbers table after a new run of
gen_ground_truth.py, so the document never carries numbers the JSON does not.
Run:  /usr/bin/python3 examples/workloads/table.py [results/summary.json]
"""
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def trace_figure(row):
    """The replay-defined figure of a bucket size (median over rounds of each
    round's trace figure) with the p10-p90 of the rounds; '-' for results of an
    older generator."""
    t = row.get("trace_replay_ms")
    if not t:
        return "-"
    q = statistics.quantiles(t["rounds_ms"], n=10, method="inclusive")
    return f"{t['median_ms']:.1f} ({q[0]:.1f}-{q[8]:.1f})"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results", "summary.json")
    with open(path) as f:
        summary = json.load(f)
    print("| model | bucket cap MB | buckets | unprofiled median ms (p10-p90, n) "
          "| profiled median ms (p10-p90, n) | profiler overhead | trace figure ms (rounds' p10-p90) |")
    print("| --- | ---: | ---: | --- | --- | ---: | --- |")
    for model, m in summary["models"].items():
        for cap in m["bucket_caps_mb"]:
            r = m["by_bucket"][str(cap)]
            u, p = r["unprofiled"], r["profiled"]
            print(f"| {model} | {cap} | {r['n_buckets']} "
                  f"| {u['median_ms']:.1f} ({u['p10_ms']:.1f}-{u['p90_ms']:.1f}, {u['n']}) "
                  f"| {p['median_ms']:.1f} ({p['p10_ms']:.1f}-{p['p90_ms']:.1f}, {p['n']}) "
                  f"| {r['profiler_overhead_pct']:+.1f}% | {trace_figure(r)} |")
    print()
    print("| model | a | b | median ratio a/b (paired rounds) | rounds where a was faster |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for model, m in summary["models"].items():
        for pr in m["pairs"]:
            print(f"| {model} | {pr['a']} | {pr['b']} | {pr['median_ratio_a_over_b']:.3f} "
                  f"| {100 * pr['share_of_rounds_a_faster']:.0f}% |")


if __name__ == "__main__":
    sys.exit(main())
