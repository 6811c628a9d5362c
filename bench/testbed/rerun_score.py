#!/usr/bin/python3
"""rerun_score.py - the optimizer's plans scored by rerunning them (issue 22,
"Validated by rerunning") on the namespaces testbed.

What it is for: printing, per case (model, link rate), the gain the optimizer
predicted for its plan and the gain the real training realized when the plan
was applied, next to DDP's default (25 MB) and a grid of bucket caps
measured in the same testbed run. Not for: searching or measuring (the
optimizer and bench/testbed/testbed.py do; bench/optimize_rerun.sh runs both).

  rerun_score.py SOURCE RERUN TS
    SOURCE  the testbed results the plans were searched from (examples/testbed:
            traces/<model>_w2_r<rate>_b25/round<R>/ and gradients/)
    RERUN   the rerun's results: plans/<model>_r<rate>/plan.json (what
            `trainscope optimize -o` wrote) and plans/<model>_r<rate>.json
            (its --format json), settings/<name>.json (testbed.py's)
    TS      the trainscope CLI

Per case:
  predicted  the plan re-predicted now (`trainscope replay --plan`) on every
             round's window of the source run: 1 - plan / as traced, the
             median over the windows; `search` is the optimizer's own figure
             at search time (round 0 only)
  realized   1 - median(plan's unprofiled steps) / median(default's), both
             from the rerun, where every setting ran round by round in a
             shuffled order; its 90% interval by a two-level bootstrap
             (rounds, then their steps) of both settings together
  +-%        each median's 90% interval half-width (testbed.py's bootstrap)
  in90       the predicted gain within 5 pp of the realized gain's interval
  grid       the bucket caps measured in the rerun (1, 5, 25 MB), the best
             of them, and whether the plan is as fast as the default and the
             grid's best within the plan's own 90% interval
Targets (issue 22): realized within 5 percentage points of predicted; the plan
no slower than the default and than the grid's best, within the interval.
"""
import json
import os
import random
import statistics
import subprocess
import sys


def steps(doc):
    return [r["unprofiled_ms"] for r in doc["rounds"]]


def gain_interval(plan_rounds, base_rounds, B=2000, seed=1):
    """5th and 95th percentiles of 1 - median(plan) / median(base), in %."""
    rng = random.Random(seed)

    def draw(rounds):
        return statistics.median([x for r in rng.choices(rounds, k=len(rounds)) for x in rng.choices(r, k=len(r))])
    g = sorted(100.0 * (1 - draw(plan_rounds) / draw(base_rounds)) for _ in range(B))
    return g[int(0.05 * B)], g[int(0.95 * B)]


def replay(ts, window, gradients, plan=None):
    cmd = [ts, "replay", window, "--gradients", gradients, "--format", "json"]
    if plan:
        cmd += ["--plan", plan]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("rerun_score: %s: exit %d: %s" % (" ".join(cmd), out.returncode, out.stderr.strip()[:300]))
    d = json.loads(out.stdout)
    return d["measured_iteration_us"], d["predicted_iteration_us"]


def main():
    src, rerun, ts = sys.argv[1:4]
    pdir = os.path.join(rerun, "plans")   # a case: MODEL_rRATE.json and MODEL_rRATE/ (beside testbed.py's copies)
    cases = sorted(f[:-5] for f in os.listdir(pdir) if f.endswith(".json") and os.path.isdir(os.path.join(pdir, f[:-5])))
    print("%-16s %9s %8s %9s %-17s %13s %13s %13s %6s %5s %5s %5s %5s" % (
        "case", "predicted", "search", "realized", "90% interval", "default +-%", "plan +-%", "grid best +-%", "(cap)",
        "<=5pp", "in90", "<=def", "<=grd"))
    rows = []
    for case in cases:
        model, rate = case.rsplit("_r", 1)
        name = "%s_w2_r%s" % (model, rate)
        sdir = os.path.join(src, "traces", name + "_b25")
        grads = os.path.join(src, "gradients", model + ".json")
        plan = os.path.join(rerun, "plans", case, "plan.json")
        windows = sorted(os.path.join(sdir, w) for w in os.listdir(sdir) if w.startswith("round"))
        gains = []
        for w in windows:
            base, _ = replay(ts, w, grads)
            _, pred = replay(ts, w, grads, plan)
            gains.append(100.0 * (1 - pred / base))
        predicted = statistics.median(gains)
        search = json.load(open(os.path.join(rerun, "plans", case + ".json")))["predicted_gain_pct"]
        st = lambda n: json.load(open(os.path.join(rerun, "settings", n + ".json")))
        default, pl = st(name + "_b25"), st(name + "_b25_plan-plan")
        grid = {b: st("%s_b%d" % (name, b)) for b in (1, 5, 25)}
        d_ms, p_ms = default["unprofiled"]["median_ms"], pl["unprofiled"]["median_ms"]
        realized = 100.0 * (1 - p_ms / d_ms)
        lo, hi = gain_interval(steps(pl), steps(default))
        best_cap = min(grid, key=lambda b: grid[b]["unprofiled"]["median_ms"])
        best_ms = grid[best_cap]["unprofiled"]["median_ms"]
        hw = pl["unprofiled"]["interval90_pct"] / 100.0
        ok_pp = abs(realized - predicted) <= 5.0
        ok_def = p_ms * (1 - hw) <= d_ms
        ok_grid = p_ms * (1 - hw) <= best_ms
        in90 = lo - 5.0 <= predicted <= hi + 5.0   # the predicted within 5 pp of the realized's interval
        rows.append((ok_pp, ok_def, ok_grid, realized - predicted, in90))
        yn = lambda b: "yes" if b else "NO"
        w = lambda doc: doc["unprofiled"]["interval90_pct"]
        print("%-16s %8.1f%% %7.1f%% %8.1f%% [%6.1f, %6.1f]%% %6.0fms %4.1f %6.0fms %4.1f %6.0fms %4.1f %4sMB %5s %5s %5s %5s"
              % (case, predicted, search, realized, lo, hi, d_ms, w(default), p_ms, w(pl), best_ms, w(grid[best_cap]),
                 best_cap, yn(ok_pp), yn(in90), yn(ok_def), yn(ok_grid)))
    n = len(rows)
    print("\n%d cases: realized within 5 pp of predicted in %d (the predicted within 5 pp of the realized's 90%% "
          "interval: %d); plan no slower than the default in %d, than the "
          "grid's best in %d (within the plan's 90%% interval); realized - predicted: median %+.1f pp, worst %+.1f pp"
          % (n, sum(r[0] for r in rows), sum(r[4] for r in rows), sum(r[1] for r in rows), sum(r[2] for r in rows),
             statistics.median([r[3] for r in rows]), max((r[3] for r in rows), key=abs)))


if __name__ == "__main__":
    main()
