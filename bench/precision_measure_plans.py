#!/usr/bin/env python3
"""precision_measure_plans.py - measures module plans of one of
bench/precision_gt.py's CPU models that a ground-truth set did not run (a
greedy plan found after the set was made), with that script's method: peak
memory from the legacy profiler's allocations (deterministic on this
machine), and unprofiled step time over interleaved shuffled rounds (median
and 90% interval of round medians, wall and thread CPU time), run beside
the plans it is to be compared with, so that they see the same load. Not a
replacement for precision_gt.py (no traces, no machine record).

usage: /usr/bin/python3 bench/precision_measure_plans.py MODEL OUT.json NAME=MOD,MOD,... [NAME=...]
       (NAME=- : the fp32 plan; NAME=* : every module bf16)
"""
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import precision_gt as gt   # noqa: E402


def main():
    if len(sys.argv) < 4:
        print(__doc__.split("usage: ")[1], file=sys.stderr)
        return 2
    model_name, out_path = sys.argv[1], sys.argv[2]
    rounds = int(os.environ.get("ROUNDS", "20"))
    torch.set_num_threads(1)
    models = gt.models()
    if model_name not in models:
        print("precision_measure_plans: no model %s (have %s)" % (model_name, ", ".join(models)), file=sys.stderr)
        return 2
    model, x = models[model_name]
    names = [n for n, _ in model.named_children()]
    cases, res = {}, {}
    for arg in sys.argv[3:]:
        key, _, mods = arg.partition("=")
        plan = {} if mods == "-" else {n: "bf16" for n in (names if mods == "*" else mods.split(","))}
        bad = set(plan) - set(names)
        if bad:
            print("precision_measure_plans: %s: no module %s" % (arg, sorted(bad)), file=sys.stderr)
            return 2
        cases[key] = (model, plan, x)
        peak, before = gt.peak_memory(model, plan, x)
        res[key] = {"modules_bf16": sorted(plan), "peak_bytes": peak, "alive_before_step_bytes": before}
    t0, c0, load0 = time.time(), time.process_time(), os.getloadavg()
    for k, v in gt.timed(cases, rounds, 4, [], {}, {}, []).items():
        res[k].update(v)
    meta = {"model": model_name, "rounds": rounds, "steps_per_round": 4, "machine": gt.machine(),
            "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t0)),
            "run_wall_s": round(time.time() - t0, 1), "run_cpu_s": round(time.process_time() - c0, 1),
            "load_average_at_start": load0, "load_average_at_end": os.getloadavg(), "cases": res}
    with open(out_path + ".tmp", "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    os.replace(out_path + ".tmp", out_path)
    for k, v in res.items():
        print("%-8s %-40s peak %9d B  wall %8.2f ms [%7.2f, %7.2f] (%d rounds)  cpu %8.2f ms [%7.2f, %7.2f]" % (
            k, ",".join(v["modules_bf16"]) or "-", v["peak_bytes"], v["median_ms"], v["p5_ms"], v["p95_ms"],
            v["rounds_used"], v["cpu_median_ms"], v["cpu_p5_ms"], v["cpu_p95_ms"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
