#!/bin/sh
# Output formats: table lines fit 80 columns (long kernel names cut with an
# ellipsis), csv keeps names whole and quoted, json parses; --by rank/category.
set -e
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
F=${TS_DATA:-../shared/data}/kineto/nccl_parser_config/nccl_data.json.gz
[ -f "$F" ] || { echo "skip: $F missing"; exit 77; }
OUT=$(mktemp); trap 'rm -f "$OUT"' EXIT
"$BIN" stats "$F" >"$OUT" 2>/dev/null
W=$(/usr/bin/python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$OUT")
[ "$W" -le 80 ] || { echo "table is $W columns wide"; exit 1; }
grep -q '…' "$OUT" || { echo "no truncated name in table mode"; exit 1; }
# --width 0 never cuts: the longest kernel name appears whole
"$BIN" stats --width 0 "$F" 2>/dev/null | grep -q 'ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm\*, unsigned long, ncclWork\*)' ||
    { echo "--width 0 cut a name"; exit 1; }
for cmd in stats breakdown; do
    "$BIN" $cmd --width 100 "$F" >"$OUT" 2>/dev/null
    W=$(/usr/bin/python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$OUT")
    [ "$W" -le 100 ] && [ "$W" -gt 80 ] || { echo "$cmd --width 100 gave $W columns"; exit 1; }
    "$BIN" $cmd "$F" >"$OUT" 2>/dev/null
    W=$(/usr/bin/python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$OUT")
    [ "$W" -le 80 ] || { echo "$cmd table is $W columns wide"; exit 1; }
done
"$BIN" stats --format csv "$F" >"$OUT"
# --format csv alone is the main table, rows (times in integer ns; docs/export.md)
head -1 "$OUT" | tr -d '\r' | grep -qx 'rank,category,name,count,total_ns,mean_ns,median_ns,min_ns,max_ns,stddev_ns,pct_of_iteration'
# a kernel name with commas comes back whole through a CSV reader
/usr/bin/python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert any("(ncclDevComm*, unsigned long, ncclWork*)" in r["name"] for r in rows)
assert not any(r["name"].endswith("…") for r in rows)
' "$OUT"
"$BIN" stats --format json --by category "$F" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert sorted(r["category"] for r in d["rows"]) == sorted(["cpu_op", "kernel", "memcpy", "memset", "runtime", "collective"])
assert all(r["rank"] == -1 and "name" not in r for r in d["rows"])
'
"$BIN" stats --format json --by rank "$F" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert all(r["rank"] == 0 for r in d["rows"]) and len(d["rows"]) == 6
'
echo ok
