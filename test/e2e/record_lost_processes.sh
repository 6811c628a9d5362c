#!/bin/sh
# record_lost_processes.sh - processes `trainscope record` cannot see to the
# end are said, never lost quietly: a daemon still tracing when COMMAND ends
# is named and its stream kept for `record --convert DIR`; after SIGKILL to
# record itself the orphaned program's stream converts with --convert; the
# exit codes are a shell's (128+N for a signal, 126 not executable, 127 not
# found), taken from sh itself.
set -e
TS_BIN=${TS_BIN:-build/trainscope}
PY=/usr/bin/python3
PYDIR=$(cd "$(dirname "$0")/../../python" && pwd)
tmp=$(mktemp -d /tmp/ts_e2e_lost_procs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export PYTHONPATH=$PYDIR
# The program: writes its pid, waits for $1/go, records N push/pop pairs (2N events).
cat >"$tmp/prog.py" <<'P'
import os, sys, time, trainscope_trace as tt
d, n = sys.argv[1], int(sys.argv[2])
open(d + "/pid.tmp", "w").write(str(os.getpid())); os.rename(d + "/pid.tmp", d + "/pid")
while not os.path.exists(d + "/go"): time.sleep(0.02)
for i in range(n):
    tt.push("step"); tt.pop()
P
wait_file() { i=0; while [ ! -e "$1" ]; do i=$((i+1)); [ $i -lt 3000 ] || fail "$1 never appeared"; sleep 0.02; done; }
wait_gone() { i=0; while kill -0 "$1" 2>/dev/null; do i=$((i+1)); [ $i -lt 3000 ] || fail "pid $1 never ended"; sleep 0.02; done; }
steps() { $PY -c '
import json, sys
print(sum(1 for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("name") == "step" and e.get("ph") == "X"))' "$1"; }

# 1. a daemon: COMMAND starts it in the background and exits 0 once it runs
rc=0; "$TS_BIN" record -o "$tmp/d" -- sh -c "$PY $tmp/prog.py $tmp 700 </dev/null >/dev/null 2>&1 &
    while [ ! -e $tmp/pid ]; do sleep 0.02; done" 2>"$tmp/d.err" || rc=$?
[ $rc -eq 0 ] || fail "daemon: exit $rc: $(cat "$tmp/d.err")"
dpid=$(cat "$tmp/pid")
grep -q "warning: 1 process is still tracing after sh ended (daemons?): pid $dpid (python3); .* left in $tmp/d/.raw: when it ends, run 'trainscope record --convert $tmp/d'" "$tmp/d.err" ||
    fail "daemon not named: $(cat "$tmp/d.err")"
touch "$tmp/go"; wait_gone "$dpid"
"$TS_BIN" record --convert "$tmp/d" 2>"$tmp/dc.err" || fail "daemon --convert: exit $?: $(cat "$tmp/dc.err")"
[ "$(steps "$tmp/d/pid-$dpid.json")" = 700 ] || fail "daemon: $(steps "$tmp/d/pid-$dpid.json") steps, expected 700"
rm -f "$tmp/pid" "$tmp/go"

# 2. SIGKILL to record: the program runs on (orphaned); --convert converts its stream
"$TS_BIN" record -o "$tmp/k" -- $PY "$tmp/prog.py" "$tmp" 900 2>"$tmp/k.err" &
rpid=$!
wait_file "$tmp/pid"; kpid=$(cat "$tmp/pid")
kill -KILL "$rpid"; wait "$rpid" || true
touch "$tmp/go"; wait_gone "$kpid"
ls "$tmp"/k/.raw/*.tsr >/dev/null 2>&1 || fail "SIGKILL: no raw stream left"
"$TS_BIN" record --convert "$tmp/k" 2>"$tmp/kc.err" || fail "SIGKILL --convert: exit $?: $(cat "$tmp/kc.err")"
[ "$(steps "$tmp/k/pid-$kpid.json")" = 900 ] || fail "SIGKILL: $(steps "$tmp/k/pid-$kpid.json") steps, expected 900"

# 3. exit codes as sh reports them
cmd="kill -USR1 \$\$"
want=0; sh -c "sh -c '$cmd'" 2>/dev/null || want=$?
rc=0; "$TS_BIN" record -o "$tmp/s" -- sh -c "$cmd" 2>/dev/null || rc=$?
[ $want -gt 128 ] && [ $rc -eq $want ] || fail "killed by SIGUSR1: record exit $rc, sh $want"
touch "$tmp/notexec"
want=0; sh -c "$tmp/notexec" 2>/dev/null || want=$?
rc=0; "$TS_BIN" record -o "$tmp/s" -- "$tmp/notexec" 2>"$tmp/ne.err" || rc=$?
[ $want -eq 126 ] && [ $rc -eq 126 ] && grep -q "$tmp/notexec: permission denied" "$tmp/ne.err" ||
    fail "not executable: exit $rc (sh $want): $(cat "$tmp/ne.err")"
want=0; sh -c "ts_no_such_command_x" 2>/dev/null || want=$?
rc=0; "$TS_BIN" record -o "$tmp/s" -- ts_no_such_command_x 2>"$tmp/nf.err" || rc=$?
[ $want -eq 127 ] && [ $rc -eq 127 ] && grep -q "ts_no_such_command_x: command not found" "$tmp/nf.err" ||
    fail "not found: exit $rc (sh $want): $(cat "$tmp/nf.err")"
echo "ok"
