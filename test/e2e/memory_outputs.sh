#!/bin/sh
# memory_outputs.sh - the exact-rules run writes all six files (valid JSON,
# well-formed SVG), its JSON agrees with the table summary, and --trace on the
# shared raw memory timeline gives the peak an independent Python sum gives,
# also in the memory.json and memory.svg it writes under -o DIR --plot, and
# on a hand-written Kineto trace with [memory] events.
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

# Regression 2026-11-26 (issue 21): --trace ignored -o and --plot. Its
# memory.json holds what --format json prints, and memory.svg the curve whose
# peak (in the title) is Python's.
"$BIN" memory --trace -o "$OUT/t" --plot "$RAW" > "$OUT/t.txt"
[ -s "$OUT/t/memory.json" ] && [ -s "$OUT/t/memory.svg" ] || { echo "--trace -o --plot wrote no files"; ls "$OUT/t" 2>&1; exit 1; }
[ -z "$(ls -A "$OUT/t" | grep '\.tmp$' || true)" ] || { echo "temporary files left"; exit 1; }
"$PY" - "$OUT/t" "$ref" <<'PYEOF'
import json, sys, xml.dom.minidom
d, ref = sys.argv[1], int(sys.argv[2])
m = json.load(open(d + "/memory.json"))
assert len(m) == 1 and m[0]["peak_bytes"] == ref, (m, ref)
svg = xml.dom.minidom.parse(d + "/memory.svg")
title = "".join(n.firstChild.data for n in svg.getElementsByTagName("text") if n.firstChild and "peak" in n.firstChild.data)
assert "peak %.1f MiB" % (ref / 1048576) in title, title
assert len(svg.getElementsByTagName("polyline") + svg.getElementsByTagName("path")) >= 1
PYEOF
# A Kineto trace (hand-written, Kineto's [memory] instant format): two ranks'
# CPU allocations; a chart per (rank, device), and the peaks the events give.
for r in 0 1; do
cat > "$OUT/k$r.json" <<K
{"distributedInfo": {"rank": $r, "world_size": 2}, "traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 10, "dur": 50},
 {"ph": "i", "s": "t", "cat": "[memory]", "name": "[memory]", "pid": 1, "tid": 1, "ts": 20,
  "args": {"Device Type": 0, "Device Id": -1, "Addr": 1, "Bytes": 1000, "Total Allocated": 1000$r, "Total Reserved": 0}},
 {"ph": "i", "s": "t", "cat": "[memory]", "name": "[memory]", "pid": 1, "tid": 1, "ts": 30,
  "args": {"Device Type": 0, "Device Id": -1, "Addr": 2, "Bytes": 500, "Total Allocated": 1500$r, "Total Reserved": 0}},
 {"ph": "i", "s": "t", "cat": "[memory]", "name": "[memory]", "pid": 1, "tid": 1, "ts": 40,
  "args": {"Device Type": 0, "Device Id": -1, "Addr": 1, "Bytes": -1000, "Total Allocated": 500$r, "Total Reserved": 0}}
]}
K
done
"$BIN" memory --trace -o "$OUT/k" --plot "$OUT/k0.json" "$OUT/k1.json" > /dev/null
"$PY" - "$OUT/k" <<'PYEOF'
import json, sys, xml.dom.minidom
d = sys.argv[1]
m = json.load(open(d + "/memory.json"))
assert sorted((x["rank"], x["peak_bytes"]) for x in m) == [(0, 15000), (1, 15001)], m
for k in (0, 1):
    xml.dom.minidom.parse("%s/memory_%d.svg" % (d, k))
PYEOF
echo "--trace -o --plot: memory.json and the charts"

# Regression 2026-11-26 (issue 26 item 2): -o into a folder an earlier run
# wrote left its charts beside the new files. One trace with --plot: its
# memory.svg, not the two ranks' memory_K.svg; then no --plot: no chart.
"$BIN" memory --trace -o "$OUT/k" --plot "$OUT/k0.json" > /dev/null || { echo "one-trace --plot exited $?"; exit 1; }
[ -s "$OUT/k/memory.svg" ] || { echo "one-trace --plot wrote no memory.svg"; exit 1; }
for f in memory_0.svg memory_1.svg; do [ ! -e "$OUT/k/$f" ] || { echo "stale $f of the two-rank run left"; exit 1; }; done
"$BIN" memory --trace -o "$OUT/k" "$OUT/k0.json" > /dev/null || { echo "one-trace -o exited $?"; exit 1; }
[ ! -e "$OUT/k/memory.svg" ] || { echo "stale memory.svg of the --plot run left"; exit 1; }
[ -s "$OUT/k/memory.json" ] || { echo "no memory.json"; exit 1; }
echo "-o into an earlier run's folder: no stale chart"
