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
grep -q "from the calibration log" "$TMP/r.json"
grep -q "priced at .* x the cost model" "$TMP/r.json"
# (not "! grep": under set -e a negated command that fails does not stop the script)
if grep -q "no results over more than one rank" "$TMP/r.json"; then
    echo "replay_gloo_calibration: the calibration log was not used"; exit 1
fi
