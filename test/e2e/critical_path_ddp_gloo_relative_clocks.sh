#!/bin/sh
# Two DDP-over-gloo ranks whose timestamps start at each process's own start
# (torch 1.13 legacy format, no categories). The 7 gloo:all_reduce worker ops
# match across ranks; alignment must leave no rank exiting a collective
# before the other entered it; the path's categories add up to its length;
# waiting names a rank. The bundled example has ProfilerStep#0..4 and clocks
# 4.3 ms apart (--no-align leaves collectives exited before entered): the
# default is the last step, --iteration picks another, a missing one is exit 2
# naming the rank.
set -e
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
L=$DATA/torch-cpu-legacy
[ -f "$L/ddp_gloo_rank0.json" ] || { echo "skip: torch-cpu-legacy missing"; exit 77; }
"$BIN" critical-path --format json "$L/ddp_gloo_rank0.json" "$L/ddp_gloo_rank1.json" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["collectives"] == 7, d["collectives"]
assert [r["rank"] for r in d["ranks"]] == [0, 1]
for r in d["ranks"]:
    assert r["matched_collectives"] == 7 and r["causality_violations"] == 0, r
assert d["ranks"][0]["clock_offset_ns"] == 0
cats = d["categories"]
assert abs(sum(cats.values()) - d["length_us"]) < 0.01, cats
assert 0 < d["length_us"] <= d["iteration_us"] + 0.001, d
assert cats["communication_us"] > 0, cats
assert d["waited_for_rank"] in (0, 1) and cats["wait_on_rank_us"] > 0, d
'
EX=$(dirname "$0")/../../examples/ddp_gloo
"$BIN" critical-path --format json "$EX/rank0.json" "$EX/rank1.json" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["iteration"] == 4, d["iteration"]
p = d["path"]   # the path in time order; own times fit inside its length
assert len(p) > 10 and {x["rank"] for x in p} == {0, 1}, p[:3]
assert 0 < sum(x["on_path_us"] for x in p) <= d["length_us"] + 0.001
assert d["collectives"] >= 2 and all(r["causality_violations"] == 0 for r in d["ranks"]), d["ranks"]
'
# without alignment the example's clocks (4.3 ms apart) break causality
"$BIN" critical-path --no-align --format json "$EX/rank0.json" "$EX/rank1.json" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert all(r["clock_offset_ns"] == 0 for r in d["ranks"]), d["ranks"]
assert sum(r["causality_violations"] for r in d["ranks"]) > 0, d["ranks"]
'
"$BIN" critical-path --iteration 2 "$EX/rank0.json" "$EX/rank1.json" | grep -q "critical path of iteration 2:"
set +e
"$BIN" critical-path --iteration 99 "$EX/rank0.json" "$EX/rank1.json" 2> /tmp/cp_err.$$ >/dev/null
rc=$?
set -e
[ $rc -eq 2 ] || { echo "missing iteration: exit $rc"; exit 1; }
grep -q "rank 0 .* has no iteration 99" /tmp/cp_err.$$ || { cat /tmp/cp_err.$$; exit 1; }
rm -f /tmp/cp_err.$$
# the export of a 2-rank path: both ranks as processes, critical slices on
# both, and an arrow that crosses from one rank to the other (the collective)
OUT=$(mktemp); trap 'rm -f "$OUT"' EXIT
"$BIN" critical-path --export "$OUT" "$EX/rank0.json" "$EX/rank1.json" >/dev/null
/usr/bin/python3 - "$OUT" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
assert names == {0: "rank 0", 1: "rank 1"}, names
crit = {e["pid"] for e in ev if e.get("ph") == "X" and e.get("args", {}).get("critical")}
assert crit == {0, 1}, crit
s = {e["id"]: e for e in ev if e.get("cat") == "critical_path" and e["ph"] == "s"}
f = {e["id"]: e for e in ev if e.get("cat") == "critical_path" and e["ph"] == "f"}
assert s.keys() == f.keys() and len(s) > 10
assert any(s[i]["pid"] != f[i]["pid"] for i in s), "no arrow crosses ranks"
assert all(s[i]["ts"] <= f[i]["ts"] for i in s), "an arrow points back in time"
PY
echo ok
