#!/bin/sh
# Bad input is never silent: traces of different jobs (a 2-rank job's rank 0
# with a 128-rank job's rank 1) exit 2 naming both files; ranks missing from a
# job, collectives that do not line up, ranks that disagree on a collective's
# size and runs mixed without a world size to tell them apart come back as
# warnings in the json;
# usage errors and a missing file exit 2.
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
K=$DATA/kineto
[ -f "$K/nccl_parser_config/nccl_data.json.gz" ] || { echo "skip: kineto data missing"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
err=$(mktemp); trap 'rm -f "$err"' EXIT
"$BIN" critical-path "$K/nccl_parser_config/nccl_data.json.gz" "$K/trace_filter/sampled_rank-1.json.gz" >/dev/null 2>"$err"
[ $? -eq 2 ] || fail "mixed jobs not rejected"
grep -q "different jobs" "$err" && grep -q "nccl_data" "$err" && grep -q "sampled_rank-1" "$err" || fail "$(cat "$err")"
"$BIN" critical-path --format json "$K/trace_filter/sampled_rank-0.json.gz" "$K/trace_filter/sampled_rank-1.json.gz" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
w = " | ".join([x["first"] for x in d["warnings"] if x["kind"] in ("graph", "critical_path")])
assert "128 ranks but 2 traces" in w, w
assert d["collectives"] > 0
' || fail "sampled pair warnings"
# two relative-clock ranks of different runs (no world size, no epoch to
# compare): the mismatch shows as unmatched collectives, causality
# violations after alignment and a rank without iterations, all in warnings
EX=$(dirname "$0")/../../examples/ddp_gloo
"$BIN" critical-path --format json "$EX/rank0.json" "$DATA/torch-cpu-legacy/ddp_gloo_rank1.json" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
w = " | ".join([x["first"] for x in d["warnings"] if x["kind"] in ("graph", "critical_path")])
assert "reached by 1 of 2 ranks" in w and "gloo:all_reduce" in w, w
assert "before the last rank entered" in w, w
assert "rank 1 has no iterations" in w, w
' || fail "mixed legacy runs not flagged"
# two jobs alike but for their message sizes (nccl_data as rank 0, and as
# rank 1 with every all-reduce's size doubled): matched by order, the sizes
# disagree, and the warning names the first instance and both sizes; the
# same file as rank 1 unchanged draws no such warning
tmp=$(mktemp -d); trap 'rm -f "$err"; rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$K/nccl_parser_config/nccl_data.json.gz" "$tmp" <<'PY' || fail "making rank 1"
import gzip, json, sys
t = json.load(gzip.open(sys.argv[1]))
t["distributedInfo"]["rank"] = 1
json.dump(t, open(sys.argv[2] + "/same.json", "w"))
for e in t["traceEvents"]:
    a = e.get("args") or {}
    if a.get("Collective name") == "allreduce" and "In msg nelems" in a:
        a["In msg nelems"] = int(a["In msg nelems"]) * 2
json.dump(t, open(sys.argv[2] + "/doubled.json", "w"))
PY
for r1 in same doubled; do
    "$BIN" critical-path --format json "$K/nccl_parser_config/nccl_data.json.gz" "$tmp/$r1.json" | /usr/bin/python3 -c '
import json, sys
w = " | ".join(x["first"] for x in json.load(sys.stdin)["warnings"] if x["kind"] == "graph")
if sys.argv[1] == "same":
    assert "bytes" not in w, w
else:
    assert "collective '"'"'allreduce'"'"' (group '"'"'0'"'"', instance 0): rank 0 hands it 8196000 bytes" in w, w
    assert "but rank 1 16392000 bytes" in w and "traces of different jobs, or collectives matched wrongly" in w, w
    assert "matched collective instances of known size differ in size across ranks" in w, w
' "$r1" || fail "sizes across ranks ($r1)"
done
# timestamps centuries apart (an epoch-clock rank beside one whose slice sits
# 2^62 ns out, or two ranks 30 years apart): graph, critical path and replay
# add times and gaps, so these are refused with exit 2 and the file named
# (before, replay overflowed int64: fuzz_analyze, 25 Nov)
/usr/bin/python3 - "$K/nccl_parser_config/nccl_data.json.gz" "$tmp" <<'PY' || fail "making far-apart ranks"
import gzip, json, sys
t = json.load(gzip.open(sys.argv[1]))
t["distributedInfo"]["rank"] = 1
for e in t["traceEvents"]:
    if e.get("ph") == "X" and "ts" in e:
        e["ts"] = float(e["ts"]) - 30 * 365.25 * 86400e6   # 30 years earlier, in us
json.dump(t, open(sys.argv[2] + "/thirty_years.json", "w"))
far = {"traceEvents": [{"ph": "X", "name": "far", "pid": 1, "tid": 1, "ts": 5e15, "dur": 1}]}
json.dump(far, open(sys.argv[2] + "/far.json", "w"))
PY
for cmd in stats breakdown critical-path replay; do
    "$BIN" $cmd "$K/nccl_parser_config/nccl_data.json.gz" "$tmp/thirty_years.json" >/dev/null 2>"$err"
    [ $? -eq 2 ] && grep -q "span 30 years: broken timestamps, or traces on unrelated clocks mixed" "$err" ||
        fail "$cmd thirty years: $(cat "$err")"
    "$BIN" $cmd "$tmp/far.json" >/dev/null 2>"$err"
    [ $? -eq 2 ] && grep -q "far.json: a slice at 5000000000000000000 ns (+1000 ns) lies past 2^62 ns" "$err" ||
        fail "$cmd far: $(cat "$err")"
done
"$BIN" critical-path >/dev/null 2>&1; [ $? -eq 2 ] || fail "no path"
# --format csv alone prints the main table (categories), as --table categories does (docs/export.md)
"$BIN" critical-path --format csv "$K/nccl_parser_config/nccl_data.json.gz" >"$tmp/main.csv" 2>/dev/null || fail "csv"
"$BIN" critical-path --format csv --table categories "$K/nccl_parser_config/nccl_data.json.gz" >"$tmp/cat.csv" 2>/dev/null
[ "$(head -1 "$tmp/main.csv")" = "$(printf 'category,time_ns\r')" ] && cmp -s "$tmp/main.csv" "$tmp/cat.csv" ||
    fail "csv: not the categories table"
"$BIN" critical-path --iteration x "$K/nccl_parser_config/nccl_data.json.gz" >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad iteration"
"$BIN" critical-path /nonexistent/trace.json >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing file"
"$BIN" critical-path --help | grep -q "usage: trainscope critical-path" || fail "help"
echo ok
