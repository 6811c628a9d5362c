#!/bin/sh
# analysis_window_is_shared.sh - regression 2026-11-26 (issue 21): stats and
# replay read different windows of one trace (stats every iteration of each
# rank, replay those every rank has). One rule now, in the library
# (trace/model.h, THE ANALYSIS WINDOW): the iterations every rank marks;
# --window all: the whole trace, in every command. The trace is the bundled
# 2-rank gloo example with rank 1's ProfilerStep#4 mark taken out (as when a
# rank's profiler window closes a step early); expected windows come from the
# JSON files themselves.
set -e
BIN=${TS_BIN:-build/trainscope}
PY=/usr/bin/python3
EX=examples/ddp_gloo
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
$PY - $EX "$TMP" <<'P'
import json, sys
src, dst = sys.argv[1], sys.argv[2]
for r in (0, 1):
    ev = json.load(open("%s/rank%d.json" % (src, r)))
    if r == 1:
        ev = [e for e in ev if e.get("name") != "ProfilerStep#4"]
    json.dump(ev, open("%s/rank%d.json" % (dst, r), "w"))
P
"$BIN" stats --format json "$TMP"/rank*.json >"$TMP/s.json"
"$BIN" stats --format json --window all "$TMP"/rank*.json >"$TMP/sa.json"
"$BIN" replay --format json "$TMP"/rank*.json >"$TMP/r.json"
"$BIN" replay --format json --window all "$TMP"/rank*.json >"$TMP/ra.json"
"$BIN" critical-path --format json "$TMP"/rank*.json >"$TMP/cp.json"
"$BIN" critical-path --format json --window all "$TMP"/rank*.json >"$TMP/cpa.json"
$PY - "$TMP" <<'P'
import json, sys
d = sys.argv[1]
spans, whole = {}, {}
for r in (0, 1):
    ev = [e for e in json.load(open("%s/rank%d.json" % (d, r))) if e.get("ph") == "X"]
    steps = {int(e["name"].split("#")[1]): e for e in ev if e["name"].startswith("ProfilerStep#")}
    spans[r] = steps
    whole[r] = (min(e["ts"] for e in ev), max(e["ts"] + e["dur"] for e in ev))
common = sorted(set(spans[0]) & set(spans[1]))
assert common == [0, 1, 2, 3], common
s = json.load(open(d + "/s.json"))
for w in s["ranks"]:
    st = spans[w["rank"]]
    assert w["iterations"] == 4, w
    want = st[3]["ts"] + st[3]["dur"] - st[0]["ts"]
    assert abs(w["window_us"] - want) < 1e-6, (w, want)
r = json.load(open(d + "/r.json"))
assert [x["step"] for x in r["per_iteration"]] == common, r["per_iteration"]
cp = json.load(open(d + "/cp.json"))
assert cp["iteration"] == 3, cp["iteration"]
# --window all: the whole trace in every command
sa = json.load(open(d + "/sa.json"))
for w in sa["ranks"]:
    a, b = whole[w["rank"]]
    assert w["iterations"] == 0 and abs(w["window_us"] - (b - a)) < 1e-6, (w, a, b)
ra = json.load(open(d + "/ra.json"))
assert ra["iterations"] == 1 and ra["per_iteration"][0]["step"] == -1, ra["per_iteration"]
cpa = json.load(open(d + "/cpa.json"))
assert cpa["iteration"] == -1 and cpa["length_us"] > cp["length_us"], (cpa["iteration"], cpa["length_us"])
print("window: steps %s on both ranks in stats, replay and critical-path; --window all: the whole trace" % common)
P
