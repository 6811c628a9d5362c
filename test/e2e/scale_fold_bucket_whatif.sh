#!/bin/sh
# scale_fold_bucket_whatif.sh - a bucket what-if (--bucket-mb) on a folded
# job (--fold-replicas) predicts what the unfolded job predicts. 8 ranks made
# here by Python from bench/data/optimize_transformer12 (2 real gloo DDP
# ranks of a transformer, CPU only): copy k of real rank k % 2, its clock
# shifted by an offset only, so the copies fold into 2 groups. The folded
# replicas keep only their collective members; their all-reduces must still
# share the core with their representative's compute (the training thread
# the fold dropped). Until 27 Nov they were priced beside an idle thread:
# the folded prediction was 0.18% (1 MB) and 0.44% (5 MB) below the
# unfolded one. A folded replica follows its representative by its measured
# lag, so a what-if may still differ a little: 0.05% allowed (0.013% and 0
# now).
set -e
BIN=${TS_BIN:-build/trainscope}
SRC=bench/data/optimize_transformer12
LOG=examples/workloads/results/gloo_allreduce_perf.log
. test/fold_job.sh
fold_job foldbucket 8
for mb in 1 5; do
    opt="--gradients $SRC/gradients.json --trace-bucket-mb 0.0001 --nccl-tests $LOG --bucket-mb $mb --format json"
    "$BIN" replay "$tmp/job" $opt >"$tmp/plain.json" 2>"$tmp/plain.err"
    "$BIN" replay "$tmp/job" --fold-replicas $opt >"$tmp/fold.json" 2>"$tmp/fold.err"
    grep -q "members" "$tmp/fold.err" || { echo "FAIL: --fold-replicas printed no groups"; cat "$tmp/fold.err"; exit 1; }
    python3 - "$tmp/plain.json" "$tmp/fold.json" "$mb" <<'PY'
import json, sys
plain, fold = (json.load(open(p))["predicted_iteration_us"] for p in sys.argv[1:3])
base = json.load(open(sys.argv[1]))["measured_iteration_us"]
d = 100 * (fold - plain) / plain
print(f"--bucket-mb {sys.argv[3]}: unfolded {plain:.3f} us, folded {fold:.3f} us ({d:+.4f}%); measured {base:.3f} us")
assert abs(plain - base) / base > 0.005, "the what-if moved nothing: the test would prove nothing"
assert abs(d) <= 0.05, f"folded prediction {d:+.4f}% off the unfolded one"
PY
done
echo "ok"
