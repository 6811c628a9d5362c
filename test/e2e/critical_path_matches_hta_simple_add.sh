#!/bin/sh
# critical-path against HTA's own critical-path overlay of the same trace
# (kineto/critical_path/simple_add; HTA's output is end_to_end/simple_add/
# output/overlaid_critical_path_trace.json.gz, single rank, no ProfilerStep,
# so the whole trace). Measured 2026-11-22: our path is 41578906 us, HTA's
# critical events span 41577653 us (+0.003%). The export marks path nodes and
# the non-node slices nested in them: 618 of our 698 critical slices are
# HTA-critical (88.5%) and they cover 618 of HTA's 624 (99.0%). With
# --leaf-ops (only leaf ops are nodes): 463 of 539 (85.9%) and 463 of 624
# (74.2%). Asserted: length within 0.1%; top-level: >= 85% of ours in theirs
# and >= 95% of theirs in ours; leaf: >= 80% and >= 70%; the export is a
# valid Chrome trace whose flow arrows pair up.
set -e
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
CP=$DATA/kineto/critical_path
F=$(ls "$CP"/simple_add/*.json.gz 2>/dev/null | head -1)
HTA=$CP/end_to_end/simple_add/output/overlaid_critical_path_trace.json.gz
[ -n "$F" ] && [ -f "$HTA" ] || { echo "skip: simple_add data missing"; exit 77; }
OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
for mode in top leaf; do
    flag=""; [ $mode = leaf ] && flag=--leaf-ops
    "$BIN" critical-path $flag --format json --export "$OUT/$mode.json" "$F" > "$OUT/$mode.out"
    /usr/bin/python3 - "$HTA" "$OUT/$mode.json" "$OUT/$mode.out" $mode <<'PY'
import gzip, json, sys
hta = json.load(gzip.open(sys.argv[1]))["traceEvents"]
ours = json.load(open(sys.argv[2]))["traceEvents"]
res = json.load(open(sys.argv[3]))
mode = sys.argv[4]
key = lambda e: (e["name"], round(float(e["ts"])))
hc = {key(e) for e in hta if e.get("ph") == "X" and e.get("args", {}).get("critical")}
oc = {key(e) for e in ours if e.get("ph") == "X" and e.get("args", {}).get("critical")}
hx = [e for e in hta if e.get("ph") == "X" and e.get("args", {}).get("critical")]
span = max(e["ts"] + e["dur"] for e in hx) - min(e["ts"] for e in hx)
assert abs(res["length_us"] - span) / span < 0.001, (res["length_us"], span)
common = len(hc & oc)
print(mode, "length", res["length_us"], "hta", span, "ours", len(oc), "hta", len(hc), "common", common)
assert common >= (0.80 if mode == "leaf" else 0.85) * len(oc), (common, len(oc))
assert common >= (0.70 if mode == "leaf" else 0.95) * len(hc), (common, len(hc))
cats = res["categories"]
assert abs(sum(cats.values()) - res["length_us"]) < 0.01, cats
s = [e for e in ours if e.get("cat") == "critical_path" and e["ph"] == "s"]
f = [e for e in ours if e.get("cat") == "critical_path" and e["ph"] == "f"]
assert len(s) == len(f) > 100 and all(e.get("bp") == "e" for e in f)
assert sorted(e["id"] for e in s) == sorted(e["id"] for e in f)
# threads keep the names the trace gave them (Kineto: "thread N (name)")
tn = [e["args"]["name"] for e in ours if e.get("ph") == "M" and e.get("name") == "thread_name"]
assert any(n.startswith("thread ") and n.endswith(" (python3.10)") for n in tn), tn
PY
done
echo ok
