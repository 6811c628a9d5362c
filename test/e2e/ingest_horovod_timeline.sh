#!/bin/sh
# ingest_horovod_timeline.sh - regression 2026-11-26 (issue 21): a Horovod
# timeline as Horovod writes it (HOROVOD_TIMELINE: a JSON array it never
# closes) was rejected as truncated JSON, and once closed its NCCL_ALLREDUCE
# activities counted as CPU ops. No real Horovod timeline is in the shared
# data: the file below is HAND-MADE from the format in Horovod's
# docs/timeline.rst (one process per tensor; NEGOTIATE_ALLREDUCE with a tick
# per worker, then ALLREDUCE holding QUEUE, MEMCPY_IN/OUT_FUSION_BUFFER and
# NCCL_ALLREDUCE; every event followed by a comma). Hand count: two tensors
# fused into one NCCL_ALLREDUCE each, 800 + 600 us, over 1350 us.
set -e
BIN=${TS_BIN:-build/trainscope}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
cat > "$TMP/timeline.json" <<'J'
[
{"name": "process_name", "ph": "M", "pid": 0, "args": {"start_time_since_epoch_in_micros":1624937181806323}},
{"name": "process_sort_index", "ph": "M", "pid": 0, "args": {"sort_index": 0}},
{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "allreduce.dense_1.kernel_0"}},
{"name": "process_sort_index", "ph": "M", "pid": 1, "args": {"sort_index": 1}},
{"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 1000, "pid": 1},{"ph": "X", "name": "1", "ts": 1010, "pid": 1, "dur": 0},{"ph": "X", "name": "0", "ts": 1400, "pid": 1, "dur": 0},
{"ph": "E", "ts": 1400, "pid": 1},
{"ph": "B", "name": "ALLREDUCE", "ts": 1400, "pid": 1},
{"ph": "B", "name": "QUEUE", "ts": 1400, "pid": 1},
{"ph": "E", "ts": 1450, "pid": 1},
{"ph": "B", "name": "MEMCPY_IN_FUSION_BUFFER", "ts": 1450, "pid": 1},
{"ph": "E", "ts": 1500, "pid": 1},
{"ph": "B", "name": "NCCL_ALLREDUCE", "ts": 1500, "pid": 1},
{"ph": "E", "ts": 2300, "pid": 1},
{"ph": "B", "name": "MEMCPY_OUT_FUSION_BUFFER", "ts": 2300, "pid": 1},
{"ph": "E", "ts": 2350, "pid": 1},
{"ph": "E", "ts": 2350, "pid": 1, "args": {"dtype": "float32", "shape": "[1024, 256]"}},
{"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "allreduce.dense_1.bias_0"}},
{"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 1100, "pid": 2},{"ph": "X", "name": "0", "ts": 1100, "pid": 2, "dur": 0},{"ph": "X", "name": "1", "ts": 1450, "pid": 2, "dur": 0},
{"ph": "E", "ts": 1450, "pid": 2},
{"ph": "B", "name": "ALLREDUCE", "ts": 1450, "pid": 2},
{"ph": "B", "name": "NCCL_ALLREDUCE", "ts": 1700, "pid": 2},
{"ph": "E", "ts": 2300, "pid": 2},
{"ph": "E", "ts": 2310, "pid": 2, "args": {"dtype": "float32", "shape": "[256]"}},
J
"$BIN" stats --format json "$TMP/timeline.json" >"$TMP/s.json" 2>"$TMP/err"
grep -q "a Horovod timeline, unclosed as Horovod writes it" "$TMP/err" ||
    grep -q "a Horovod timeline, unclosed as Horovod writes it" "$TMP/s.json" || { echo "no warning"; cat "$TMP/err"; exit 1; }
/usr/bin/python3 - "$TMP/s.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
coll = [r for r in rows if r["category"] == "collective"]
assert [(r["name"], r["count"], r["total_us"]) for r in coll] == [("NCCL_ALLREDUCE", 2, 1400.0)], coll
assert not [r for r in rows if r["name"] == "NCCL_ALLREDUCE" and r["category"] != "collective"], rows
PY
# CPU-only breakdown: communication = the union of the NCCL_ALLREDUCE ranges
# of one tensor's process (800 us on the busiest, tensor 1's)
"$BIN" breakdown --format json "$TMP/timeline.json" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)["threads"]
assert max(x["communication_us"] for x in t) == 800.0, t'
# The same file closed by hand (trailing comma dropped, "]" added) reads alike.
sed '$ s/},$/}/' "$TMP/timeline.json" > "$TMP/closed.json"; echo "]" >> "$TMP/closed.json"
"$BIN" stats --by category --format json "$TMP/closed.json" | /usr/bin/python3 -c '
import json, sys
rows = json.load(sys.stdin)["rows"]
assert [(r["count"], r["total_us"]) for r in rows if r["category"] == "collective"] == [(2, 1400.0)], rows'
# Any other unclosed array stays an error (exit 2, one line naming the byte).
printf '[{"ph":"X","name":"a","ts":1,"dur":1,"pid":1},\n' > "$TMP/plain.json"
set +e
"$BIN" stats "$TMP/plain.json" >/dev/null 2>"$TMP/e"; code=$?
set -e
[ $code -eq 2 ] && grep -q "plain.json: byte 47: unexpected end of input (truncated JSON)" "$TMP/e" ||
    { echo "unclosed non-Horovod array: exit $code"; cat "$TMP/e"; exit 1; }
echo "ingest_horovod_timeline: ok"
