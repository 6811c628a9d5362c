#!/bin/sh
# record_full_disk.sh - `trainscope record` on a disk that fills: what never
# reached the disk is said (how many events, the errno, which process) and
# record exits 2 though the program succeeded; a raw stream that could not be
# converted (no room for its JSON) stays and `record --convert DIR` turns it
# into the trace once there is room; a process that cannot even open its
# stream is named. Needs root to mount a small tmpfs.
set -e
TS_BIN=${TS_BIN:-build/trainscope}
PY=/usr/bin/python3
PYDIR=$(cd "$(dirname "$0")/../../python" && pwd)
tmp=$(mktemp -d /tmp/ts_e2e_full_disk.XXXXXX)
M=$tmp/m
mkdir "$M"
cleanup() { umount "$M" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
mount -t tmpfs -o size=256k tmpfs "$M" 2>/dev/null || { echo "skip: cannot mount a tmpfs (needs root)"; exit 77; }
prog() {   # N push/pop pairs = 2N events, counted by hand
    PYTHONPATH=$PYDIR "$TS_BIN" record -o "$1" -- $PY -c "
import trainscope_trace as tt
for i in range($2):
    tt.push('step'); tt.pop()
print('done')"
}

# 1. a nearly full disk: 96 KiB free, 64 KiB of which record reserves at start;
# the 6,000 events (96 KB of records) cannot be written.
dd if=/dev/zero of="$M/fill" bs=4k count=64 2>/dev/null || true
truncate -s -96k "$M/fill"
rc=0; prog "$M/t1" 3000 >"$tmp/out1" 2>"$tmp/err1" || rc=$?
[ "$(cat "$tmp/out1")" = done ] || fail "the program's output changed: $(cat "$tmp/out1")"
[ $rc -eq 2 ] || fail "full disk: exit $rc, expected 2: $(cat "$tmp/err1")"
n=$(sed -n 's/.*error: \([0-9]*\) events never reached .* (No space left on device) in 1 process (python3): they are lost$/\1/p' "$tmp/err1")
[ -n "$n" ] && [ "$n" -ge 6000 ] || fail "full disk: the loss was not said: $(cat "$tmp/err1")"
! grep -q "recorded nothing" "$tmp/err1" || fail "full disk: blamed on a missing collector: $(cat "$tmp/err1")"
rm -rf "$M/t1" "$M/fill"

# 2. room for the raw stream (10,000 events, 160 KB), none for its JSON: the
# stream stays, record says how to convert it, and --convert does once there is room.
rc=0; prog "$M/t2" 5000 >/dev/null 2>"$tmp/err2" || rc=$?
[ $rc -eq 2 ] || fail "no room for JSON: exit $rc, expected 2: $(cat "$tmp/err2")"
grep -q "cannot write .*pid-[0-9]*.json.tmp: No space left on device" "$tmp/err2" || fail "no reason: $(cat "$tmp/err2")"
grep -q "1 raw stream could not be converted and stays in $M/t2/.raw: once the cause is fixed, run 'trainscope record --convert $M/t2'" "$tmp/err2" ||
    fail "no way out said: $(cat "$tmp/err2")"
ls "$M"/t2/.raw/*.tsr >/dev/null 2>&1 || fail "the raw stream was not kept"
ls "$M"/t2/*.json >/dev/null 2>&1 && fail "a JSON file was left: $(ls "$M/t2")"
mount -o remount,size=8m "$M"
"$TS_BIN" record --convert "$M/t2" 2>"$tmp/err3" || fail "--convert: exit $?: $(cat "$tmp/err3")"
grep -q "1 trace file in $M/t2" "$tmp/err3" || fail "--convert: $(cat "$tmp/err3")"
[ ! -e "$M/t2/.raw" ] || fail "--convert left $(ls -a "$M/t2/.raw")"
$PY - "$M"/t2/pid-*.json <<'P'
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("name") == "step" and e.get("ph") == "X"]
assert len(ev) == 5000, len(ev)
P
rc=0; "$TS_BIN" record --convert "$M/t2" 2>"$tmp/err4" || rc=$?
[ $rc -eq 1 ] && grep -q "nothing to convert" "$tmp/err4" || fail "--convert again: exit $rc: $(cat "$tmp/err4")"
umount "$M"

# 3. no inode left for the raw stream (4 inodes: the root, DIR, DIR/.raw and
# record's status board): the process cannot trace at all, and that is said.
mount -t tmpfs -o size=1m,nr_inodes=4 tmpfs "$M"
rc=0; prog "$M/t3" 10 >/dev/null 2>"$tmp/err5" || rc=$?
[ $rc -eq 2 ] || fail "no inode: exit $rc, expected 2: $(cat "$tmp/err5")"
grep -q "error: 1 process (python3) could not open its stream in $M/t3/.raw (No space left on device): all its events are lost" "$tmp/err5" ||
    fail "no inode: $(cat "$tmp/err5")"
echo "ok"
