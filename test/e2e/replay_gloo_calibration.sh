#!/bin/sh
# bench/gloo_allreduce.py end to end: a short real sweep (2 gloo processes on
# this machine, 4 timed all-reduces per size in 2 passes) writes a log that
# `replay --nccl-tests` takes as a calibration: its rows price the regrouped
# buckets of a real ground-truth trace and its sharing line gives kappa.
set -e
BIN=${TS_BIN:-build/trainscope}
WL=examples/workloads
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 -c "import torch.distributed" || { echo "needs Debian python3-torch (scripts/install-deps.sh)" >&2; exit 1; }
/usr/bin/python3 bench/gloo_allreduce.py --iters 4 --passes 2 --warmup 1 --nice 0 --out "$TMP/gloo.log" >/dev/null
# 13 sizes, 4 KiB to 16 MiB, each timed and positive; two processes named.
/usr/bin/python3 - "$TMP/gloo.log" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
assert [int(r[0]) for r in rows] == [4096 << i for i in range(13)], rows
assert all(float(r[5]) > 0 for r in rows), rows
text = open(sys.argv[1]).read()
assert "Rank  0" in text and "Rank  1" in text and "# sharing with compute:" in text, text
PY
set -- $WL/traces/mlp_bucket1/round*/rank0.json.zst
SRC=$(dirname "$1")
"$BIN" replay --bucket-mb 4 --gradients "$WL/results/mlp_gradients.json" --nccl-tests "$TMP/gloo.log" \
    --format json "$SRC"/rank*.json.zst > "$TMP/r.json"
grep -q "priced at .* x the cost model" "$TMP/r.json"
# (not "! grep": under set -e a negated command that fails does not stop the script)
if grep -q "no results over more than one rank\|no gloo calibration given" "$TMP/r.json"; then
    echo "replay_gloo_calibration: the calibration log was not used"; exit 1
fi
# The log's sharing test decides what the replay says about compute slowdown.
# On a loaded machine the matmuls may run faster beside the all-reduces than
# alone (x2.09 at load 8, 26 Nov): a disturbed test, which the replay must
# name instead of using; otherwise the slowdown comes from the log. (Until 26
# Nov this test expected the second case only, and failed under load.)
/usr/bin/python3 - "$TMP/gloo.log" "$TMP/r.json" <<'PY'
import json, re, sys
line = [l for l in open(sys.argv[1]) if l.startswith("# sharing with compute:")][0]
alone, beside = map(float, re.search(r"run at ([0-9.]+)/s alone and ([0-9.]+)/s", line).groups())
warnings = " ".join(w["first"] for w in json.load(open(sys.argv[2]))["warnings"])
if beside > alone:
    assert "sharing test is disturbed (the matmuls ran %.2fx" % (beside / alone) in warnings, (line, warnings)
    assert "from the calibration log" not in warnings, warnings
else:
    assert "per concurrent gloo all-reduce (from the calibration log)" in warnings or beside == alone, (line, warnings)
print("sharing test: %.0f/s alone, %.0f/s beside: %s" % (alone, beside, "disturbed, named" if beside > alone else "used"))
PY
