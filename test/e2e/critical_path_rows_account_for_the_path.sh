#!/bin/sh
# The critical path's rows (top_ops with --top large enough) account for the
# whole path: every op's own time on it, plus the gaps no op owns (untraced
# host time between a thread's ops, a kernel queued after its launch, a
# collective's transfer) as rows of kind "gap" per rank and edge kind. On
# real traces of four kinds: HTA's trace_filter pair (where 316 of 624 ms of
# the path are untraced time between top-level ops, which no row showed
# before; a parent op's time between its children is the parent's own),
# nccl_data, simple_add and the bundled gloo DDP example.
set -e
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}/kineto
check() {  # TRACE... ; prints the gap rows
    [ -e "$1" ] || { echo "skip: $1 missing"; exit 77; }
    "$BIN" critical-path --format json --top 1000000 "$@" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = d["top_ops"]
total = sum(o["total_us"] for o in rows)
assert abs(total - d["length_us"]) <= max(1e-6 * d["length_us"], 0.01), (sys.argv[1], total, d["length_us"])
gaps = [o for o in rows if o["kind"] == "gap"]
for o in gaps:
    assert o["edge"] and o["name"] and o["total_us"] > 0 and o["count"] > 0, o
print("%s: path %.0f us, rows sum %.0f us, %d gap rows (%.0f us)" % (sys.argv[1], d["length_us"], total, len(gaps),
      sum(o["total_us"] for o in gaps)))
# the path list and the rows credit every op the same own time (the JSON gave
# a parent 0 us where the table credited its time between its children)
on_path, own = {}, {}
for x in d["path"]:
    k = (x["rank"], x["kind"], x["name"])
    on_path[k] = on_path.get(k, 0) + x["on_path_us"]
for o in rows:
    if o["kind"] != "gap":
        own[(o["rank"], o["kind"], o["name"])] = o["total_us"]
for k, v in own.items():
    assert abs(on_path.get(k, 0) - v) <= 0.01 * max(1, len(d["path"])), (sys.argv[1], k, on_path.get(k), v)
if len(sys.argv) > 2:   # the least untraced time expected between ops
    assert sum(o["total_us"] for o in gaps if o["edge"] == "program") >= float(sys.argv[2]), gaps
' "$1" ${EXPECT_UNTRACED_US:-}
}
EXPECT_UNTRACED_US=300000 check "$DATA"/trace_filter/sampled_rank-0.json.gz "$DATA"/trace_filter/sampled_rank-1.json.gz
check "$DATA"/nccl_parser_config/nccl_data.json.gz
check "$DATA"/critical_path/simple_add/*.json.gz
check examples/ddp_gloo
echo ok
