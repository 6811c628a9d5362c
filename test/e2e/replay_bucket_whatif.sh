#!/bin/sh
# --bucket-mb on the 2-rank gloo DDP ground truth (examples/workloads, real
# torch 1.13 traces): for every recorded bucket size N and every other size M
# the what-if runs (no cycle, no failure) and predicts a positive iteration;
# regrouping into N itself reproduces the trace exactly (the per-instance
# launch delays, transfer times and exit delays are kept), with and without
# the gloo calibration log (--nccl-tests), which prices the new all-reduces
# by processor sharing when given (without it the result warns that it is
# uncalibrated), and with it for every saved round.
# The exported what-if schedule draws the new buckets in place of the old,
# each rank's starting in the order they were queued.
# Prediction accuracy against the measurements is bench/accuracy.sh's job,
# not a test's.
set -e
BIN=${TS_BIN:-build/trainscope}
# The committed ground truth; WL="DIR..." any others (the held-out sets,
# restored by `sh bench/heldout.sh DIR`).
for WL in ${WL:-examples/workloads}; do
ls $WL/results/*_bucket*.json >/dev/null 2>&1 || { echo "skip: no ground truth in $WL/results"; continue; }
BIN=$BIN WL=$WL /usr/bin/python3 - <<'PY'
import glob, json, os, subprocess
BIN, WL = os.environ["BIN"], os.environ["WL"]
CALIB = os.path.join(WL, "results", "gloo_allreduce_perf.log")   # bench/gloo_allreduce.py
runs = {}
for f in glob.glob(WL + "/results/*_bucket*.json"):
    d = json.load(open(f))
    runs.setdefault(d["model"], {})[d["bucket_cap_mb"]] = d
n = 0
for model, caps in sorted(runs.items()):
    for src, d in caps.items():
        traces = [os.path.join(WL, t) for t in d["traces"]]
        grads = os.path.join(WL, "results", d["gradients"])
        for dst in caps:
          for calib in ([], ["--nccl-tests", CALIB]):
            cmd = [BIN, "replay", "--format", "json", "--trace-bucket-mb", str(src), "--bucket-mb", str(dst),
                   "--gradients", grads, *calib, *traces]
            p = subprocess.run(cmd, capture_output=True, text=True)
            assert p.returncode == 0, (cmd, p.stderr)
            r = json.loads(p.stdout)
            assert r["predicted_iteration_us"] > 0, (model, src, dst, r)
            if dst == src:
                assert r["error_pct"] == 0, (model, src, calib, r["error_pct"])
            if calib and dst != src:
                assert any("threads sharing their core" in w["first"] for w in r["warnings"]), (model, src, dst, r["warnings"])
            # Uncalibrated, a changed partition is priced from the trace's own
            # all-reduces, and the result says how little that is worth.
            uncal = any("no gloo calibration given" in w["first"] for w in r["warnings"])
            assert uncal == (not calib and dst != src), (model, src, dst, calib, r["warnings"])
            if calib and dst != src and WL == "examples/workloads":
                # The exported schedule draws the new buckets, not the old
                # ones they replaced (until 24 Nov those stayed as zero-length
                # gloo:all_reduce events on the worker rows).
                out = os.path.join(os.environ.get("TMPDIR", "/tmp"), "ts_bucket_export_%d.json" % os.getpid())
                p = subprocess.run(cmd[:2] + ["--export", out] + cmd[2:], capture_output=True, text=True)
                assert p.returncode == 0, (cmd, p.stderr)
                ev = [e for e in json.load(open(out))["traceEvents"] if e.get("ph") == "X"]
                os.unlink(out)
                new = [e for e in ev if e["name"] == "allreduce (what-if bucket)"]
                assert new and all(e["args"].get("what_if") for e in new), (model, src, dst)
                assert not [e for e in ev if e["name"] == "gloo:all_reduce" and e["dur"] == 0], (model, src, dst)
                # gloo's queue is first in, first out: on every rank the new
                # buckets (written in the order they were queued) start in
                # that order, whichever worker takes them.
                for pid in {e["pid"] for e in new}:
                    starts = [e["ts"] for e in new if e["pid"] == pid]
                    late = [k for k in range(1, len(starts)) if starts[k] < starts[k - 1]]
                    assert not late, (model, src, dst, pid, [(starts[k - 1], starts[k]) for k in late[:3]])
            n += 1
        # Every saved round, not only the first: an unchanged partition
        # replays exactly also where an iteration was cut at the window's
        # edge and left as measured (one 48-round trace was +0.64% until
        # 24 Nov).
        for tr in d.get("trace_rounds", [])[1:]:
            cmd = [BIN, "replay", "--format", "json", "--trace-bucket-mb", str(src), "--bucket-mb", str(src),
                   "--gradients", grads, "--nccl-tests", CALIB, *[os.path.join(WL, t) for t in tr["traces"]]]
            p = subprocess.run(cmd, capture_output=True, text=True)
            assert p.returncode == 0, (cmd, p.stderr)
            assert json.loads(p.stdout)["error_pct"] == 0, (model, src, tr["round"])
            n += 1
print("%d what-ifs ran" % n)
assert n >= 18
PY
done
