#!/bin/sh
# views.sh - `trainscope views` on the shared real traces: every view's numbers
# (copies and bytes per direction, busy time, queue maxima per stream, comm
# latency percentiles and bytes, every flame-graph path's total/self/calls,
# the allocator snapshot's segments, fragmentation, start/peak/end and size
# bins) equal those scripts/views_check.py recomputes from the files
# themselves; the HTML sections are well-formed and self-contained; CSV has
# its rows; bad usage and input exit 2 with a message, an empty view 1.
set -e
BIN=${TS_BIN:-build/trainscope}
PY=/usr/bin/python3
D=${TS_DATA:-../shared/data}
K=$D/kineto
SNAP=$D/memory-snapshots/transformer-lm-step.pickle.gz
[ -f "$K/nccl_parser_config/nccl_data.json.gz" ] && [ -f "$SNAP" ] || { echo "skip: no shared data at $D"; exit 77; }
tmp=$(mktemp -d /tmp/ts_e2e_views.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "views: $*"; exit 1; }

# ---- every view of each trace against the file's own events ----
for f in nccl_parser_config/nccl_data.json.gz trace_filter/sampled_rank-0.json.gz trace_filter/sampled_rank-1.json.gz \
         critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz \
         critical_path/cuda_event_sync/event_sync_trace.json.gz critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz \
         cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz \
         trace_file_list/inference_rank_1.json.gz call_stack/backward_thread.json large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz; do
    for v in transfers queues comm callstack; do
        rc=0
        "$BIN" views --view $v --format json "$K/$f" >"$tmp/$v.json" 2>"$tmp/$v.err" || rc=$?
        case $rc in
        0) ;;
        1) [ ! -s "$tmp/$v.json" ] && grep -q "trainscope: no " "$tmp/$v.err" || fail "$f $v: exit 1 without its message";;
        *) fail "$f $v exited $rc: $(cat "$tmp/$v.err")";;
        esac
    done
    $PY scripts/views_check.py kineto "$K/$f" "$tmp" || fail "$f: the views differ from the trace"
done

# ---- the allocator snapshot against the pickle ----
"$BIN" views --view allocator --format json "$SNAP" >"$tmp/alloc.json" || fail "allocator on the snapshot exited $?"
$PY scripts/views_check.py snapshot "$SNAP" "$tmp/alloc.json" || fail "the snapshot's allocator view differs"
# the peak is the one `memory --trace` reports (one definition of what was allocated before the trace)
mem=$("$BIN" memory --trace --format json "$SNAP" | $PY -c 'import json,sys; j = json.load(sys.stdin); print(j["peak_bytes"] if "peak_bytes" in j else j["devices"][0]["peak_bytes"])')
view=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["tables"]["series"][0]["peak_bytes"])' "$tmp/alloc.json")
[ "$mem" = "$view" ] || fail "allocator peak $view, memory --trace $mem"

# ---- HTML sections: well-formed, no external resource, the flame graph's roots fill its width ----
for v in callstack transfers queues comm; do
    "$BIN" views --view $v --format html "$K/nccl_parser_config/nccl_data.json.gz" >"$tmp/$v.html" 2>/dev/null || fail "$v html exited $?"
done
"$BIN" views --view allocator --format html "$SNAP" >"$tmp/allocator.html" || fail "allocator html exited $?"
$PY - "$tmp" <<'P' || fail "HTML sections"
import re, sys, xml.dom.minidom
d = sys.argv[1]
for v in ("callstack", "transfers", "queues", "comm", "allocator"):
    page = open("%s/%s.html" % (d, v)).read()
    assert page.startswith("<!DOCTYPE html>"), v
    sec = page[page.index("<section"):page.rindex("</section>") + 10]
    dom = xml.dom.minidom.parseString(sec)
    assert dom.documentElement.getAttribute("id") == "view-" + v, v
    for m in re.findall(r'(?:href|src)\s*=\s*"([^"]*)"', page): raise AssertionError("%s links %s" % (v, m))
    assert not re.search(r"<script|@import|url\(", page), v
    assert len(page) < 2 << 20, (v, len(page))
    assert dom.getElementsByTagName("svg"), v + ": no chart"
flame = xml.dom.minidom.parseString(open(d + "/callstack.html").read().split("<figure", 1)[1].join(["<figure", ""]).split("</figure>")[0] + "</figure>")
roots = [r for r in flame.getElementsByTagName("rect") if r.getAttribute("y") == "1"]
width = sum(float(r.getAttribute("width")) for r in roots)
assert 955 <= width <= 960.5, width   # the drawn roots (those >= 0.5 px) cover the 960 px axis
print("html: 5 sections, flame graph roots %.1f px of 960" % width)
P

# ---- --thread: the flame graph of one thread holds that thread's ops only ----
"$BIN" views --view callstack --thread 2919752 --format json "$K/nccl_parser_config/nccl_data.json.gz" >"$tmp/th.json" 2>/dev/null
$PY - "$K/nccl_parser_config/nccl_data.json.gz" "$tmp/th.json" <<'P' || fail "--thread"
import gzip, json, sys
ev = json.load(gzip.open(sys.argv[1], "rt"))["traceEvents"]
n = sum(1 for e in ev if e.get("ph") == "X" and e.get("tid") == 2919752)
t = json.load(open(sys.argv[2]))["tables"]
assert [x["tid"] for x in t["threads"]] == [2919752] and t["threads"][0]["frames"] == n, (t["threads"], n)
assert sum(f["calls"] for f in t["flame"]) == n, n
P

# ---- CSV: one table, one row per (row, bin) ----
"$BIN" views --view queues --format csv --table bins --bins 7 "$K/nccl_parser_config/nccl_data.json.gz" >"$tmp/q.csv" 2>/dev/null
$PY - "$tmp/q.csv" <<'P' || fail "csv"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2 * 7 and set(rows[0]) >= {"rank", "stream", "bin", "start_us", "max_len", "mean_len"}, rows[:1]
P

# ---- usage and bad input ----
expect() {   # expect CODE WORDS -- ARGS...
    code=$1; words=$2; shift 3
    rc=0; "$BIN" views "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ "$rc" = "$code" ] || fail "views $*: exit $rc, expected $code ($(cat "$tmp/err"))"
    grep -q -- "$words" "$tmp/err" || fail "views $*: no '$words' in: $(cat "$tmp/err")"
}
N=$K/nccl_parser_config/nccl_data.json.gz
expect 2 "no view 'flame'" -- --view flame "$N"
expect 2 "--view NAME is required" -- "$N"
expect 2 "has no table 'nope' (it has totals, bins)" -- --view transfers --table nope "$N"
expect 2 "only --view allocator reads it" -- --view queues "$SNAP"
expect 2 "--bins" -- --view queues --bins 0 "$N"
expect 1 "no memory copies" -- --view transfers "$K/call_stack/backward_thread.json"
expect 1 "no \[memory\] events" -- --view allocator "$N"
expect 1 "for that rank" -- --view queues --rank 5 "$N"
head -c 20000 "$SNAP" >"$tmp/cut.pickle.gz"
expect 2 "cut.pickle.gz" -- --view allocator "$tmp/cut.pickle.gz"
rc=0; "$BIN" views --view comm "$N" >/dev/full 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "writing the output failed" "$tmp/err" || fail "/dev/full: exit $rc, $(cat "$tmp/err")"
"$BIN" views --view list | grep -q "^allocator " || fail "--view list"
echo "views: every view equals the files' own totals"
