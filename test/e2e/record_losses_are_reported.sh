#!/bin/sh
# record_losses_are_reported.sh - what the recorder could not record whole is
# said, by `trainscope record` when it ends and by every analysis of the files
# (a "recorder_losses" warning): a program that leaves through os._exit() with
# a range open gets it closed at its last event and counted; a trace whose
# "trainscope" block counts dropped events (buffers full) and a stream cut
# short draws the warning with the count; a whole trace draws none.
set -e
TS_BIN=${TS_BIN:-build/trainscope}
PY=/usr/bin/python3
tmp=$(mktemp -d /tmp/ts_e2e_losses.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
PYTHONPATH=$(dirname "$0")/../../python "$TS_BIN" record -o "$tmp/t" -- $PY -c '
import os, trainscope_trace as tt
tt.push("step"); tt.push("inner"); tt.pop()
os._exit(0)' 2>"$tmp/rec.err"
grep -q "warning: 1 ranges still open when their process ended" "$tmp/rec.err" || fail "record: $(cat "$tmp/rec.err")"
# The program's ranges are user annotations, no op: stats has nothing to
# count and exits 1 (its help), but still reports the warnings.
"$TS_BIN" stats --format json "$tmp/t" > "$tmp/stats.json" || [ $? -eq 1 ]
$PY - "$tmp/stats.json" "$tmp/t" <<'P'
import glob, json, sys
w = json.load(open(sys.argv[1]))["warnings"]
assert [x["kind"] for x in w] == ["recorder_losses"] and w[0]["count"] == 1, w
assert "1 ranges were still open at the end" in w[0]["first"], w
# The same file as if the recorder had dropped 1234 events, and whole.
path = glob.glob(sys.argv[2] + "/pid-*.json")[0]
t = json.load(open(path))
t["trainscope"]["unfinished_ranges"] = 0
t["trainscope"]["dropped_events"] = 1234
t["trainscope"]["cut_at_byte"] = 4096
json.dump(t, open(sys.argv[2] + "/../dropped.json", "w"))
t["trainscope"]["dropped_events"] = 0
del t["trainscope"]["cut_at_byte"]
json.dump(t, open(sys.argv[2] + "/../whole.json", "w"))
P
"$TS_BIN" stats "$tmp/dropped.json" 2>"$tmp/dropped.err" >/dev/null || [ $? -eq 1 ]
grep -q "dropped.json: 1235 recorder_losses (first: .*the recorder dropped 1234 events (its per-thread buffers were full: record --buffer-kb); the recorded stream was cut short at byte 4096" "$tmp/dropped.err" ||
    fail "dropped: $(cat "$tmp/dropped.err")"
"$TS_BIN" stats "$tmp/whole.json" 2>"$tmp/whole.err" >/dev/null || [ $? -eq 1 ]
! grep -q "recorder_losses" "$tmp/whole.err" || fail "whole: $(cat "$tmp/whole.err")"
# --buffer-kb, the remedy the warning names, reaches the traced processes
kb=$("$TS_BIN" record --buffer-kb 8 -o "$tmp/kb" -- $PY -c 'import os; print(os.environ["TRAINSCOPE_BUFFER_KB"])' 2>/dev/null)
[ "$kb" = 8 ] || fail "--buffer-kb 8 reached the program as '$kb'"
echo "ok"
