#!/bin/sh
# The ground truth's replay-defined measurement (examples/workloads, made by
# gen_ground_truth.py) is computed exactly as `trainscope replay` computes
# its measured iteration: for every saved round of every bucket size, the
# unmodified replay of that round's traces reports the round's
# iteration.trace_replay_ms.rounds_ms entry (per step the slowest rank's
# ProfilerStep#N, median over the steps), and predicts it (0% error).
# bench/accuracy.sh scores predictions against the median of those figures,
# so a mismatch here would be an error in every accuracy figure.
set -e
BIN=${TS_BIN:-build/trainscope}
# The committed ground truth; WL="DIR..." any others (the held-out sets,
# restored by `sh bench/heldout.sh DIR`).
for WL in ${WL:-examples/workloads}; do
ls $WL/results/*_bucket*.json >/dev/null 2>&1 || { echo "skip: no ground truth in $WL/results"; continue; }
BIN=$BIN WL=$WL /usr/bin/python3 - <<'PY'
import glob, json, os, subprocess, sys
BIN, WL = os.environ["BIN"], os.environ["WL"]
n = 0
for f in sorted(glob.glob(WL + "/results/*_bucket*.json")):
    d = json.load(open(f))
    fig = d["iteration"].get("trace_replay_ms")
    if not fig:
        print("skip: %s comes from an older generator (no trace_replay_ms)" % os.path.basename(f))
        continue
    for tr in d["trace_rounds"]:
        traces = [os.path.join(WL, t) for t in tr["traces"]]
        p = subprocess.run([BIN, "replay", "--format", "json", *traces], capture_output=True, text=True)
        assert p.returncode == 0, (traces, p.stderr)
        r = json.loads(p.stdout)
        want = fig["rounds_ms"][tr["round"]]
        assert abs(r["measured_iteration_us"] / 1e3 - want) < 1e-3, (f, tr["round"], r["measured_iteration_us"], want)
        assert r["error_pct"] == 0, (f, tr["round"], r["error_pct"])
        n += 1
print("%d saved rounds match their recorded figure" % n)
PY
done
