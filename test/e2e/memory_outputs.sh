#!/bin/sh
# memory_outputs.sh - the exact-rules run writes all six files (valid JSON,
# well-formed SVG), its JSON agrees with the table summary, and --trace on the
# shared raw memory timeline gives the peak an independent Python sum gives.
set -eu
BIN=${TS_BIN:-build/trainscope}
D=${TS_DATA:-../shared/data}
PY=/usr/bin/python3
[ -d "$D/fx/mobilenetv3small" ] || { echo "skip: no $D"; exit 77; }
OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT

"$BIN" memory --plot --device v100 -o "$OUT/m" --format json \
    "$D/fx/mobilenetv3small/fx_graph_transformed_forward.py" \
    "$D/fx/mobilenetv3small/fx_graph_transformed_backward.py" > "$OUT/summary.json"
for f in kernels.config tensors.config liveness_analysis.config memory.json memory.svg periods.svg; do
    [ -s "$OUT/m/$f" ] || { echo "missing $f"; exit 1; }
done
[ -z "$(ls -A "$OUT/m" | grep '\.tmp$' || true)" ] || { echo "temporary files left"; exit 1; }
"$PY" - "$OUT" <<'PYEOF'
import json, sys, xml.dom.minidom
out = sys.argv[1]
m = json.load(open(out + "/m/memory.json"))
s = json.load(open(out + "/summary.json"))
assert m["summary"]["peak_bytes"] == s["peak_bytes"], (m["summary"], s)
curve = [k["alive_bytes"] for k in m["kernels"]]
assert max(curve) == s["peak_bytes"] and curve.index(max(curve)) == s["peak_kernel"]
# the peak equals globals + the storages alive at the peak kernel
alive = m["alive_at_peak"]
assert sum(m["tensors"][t]["bytes"] for t in alive) == s["peak_bytes"]
for f in ("memory.svg", "periods.svg"):
    xml.dom.minidom.parse(out + "/m/" + f)
print("outputs consistent: peak", s["peak_bytes"], "at kernel", s["peak_kernel"])
PYEOF

RAW=$D/kineto/memory_analysis/memory_timeline.raw.gz
mine=$("$BIN" memory --trace --format json "$RAW" | sed 's/.*"peak_bytes":\([0-9]*\).*/\1/')
ref=$("$PY" -c "
import gzip, json
total = peak = 0
for t, action, nbytes, cat in json.load(gzip.open('$RAW')):
    total += nbytes; peak = max(peak, total)
print(peak)")
[ "$mine" = "$ref" ] || { echo "raw timeline peak $mine, python says $ref"; exit 1; }
echo "raw timeline peak $mine bytes, as Python sums it"
