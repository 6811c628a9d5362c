#!/bin/sh
# side_files_are_bounded.sh - every file the CLI reads beside the traces (fx
# dumps, nccl-tests logs, gradients) is read up to a documented bound, so a
# wrong file such as /dev/zero is an error naming it, in bounded memory and
# time; `memory --trace` takes every path it is given (it kept 256).
# Regressions of 2026-11-26 (issue 26): `memory /dev/zero BWD.py` grew to
# 24 GB, `--nccl-tests /dev/zero` never ended.
set -u
BIN=${TS_BIN:-build/trainscope}
EX=examples/ddp_gloo
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0

# expect NAME PATTERN ARGS...: exit 2 within 60 s in 2 GB of memory, one
# stderr line matching PATTERN. ASan maps terabytes of shadow and cannot
# start under ulimit -v: a sanitizer build is held by its own RSS limit.
case $BIN in
*/san/*) export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=2000"; LIMIT=unlimited ;;
*) LIMIT=2000000 ;;
esac
expect() {
    name=$1 pat=$2; shift 2
    (ulimit -v $LIMIT; timeout 60 "$BIN" "$@") >"$T/out" 2>"$T/err"; rc=$?
    if [ $rc -ne 2 ] || ! grep -q "$pat" "$T/err"; then
        echo "FAIL $name (exit $rc):"; cat "$T/err"; fails=$((fails+1))
    else echo "ok $name: $(cat "$T/err")"; fi
}
expect fx_dump "^trainscope: /dev/zero: larger than 256 MiB, the most read for an fx dump" \
    memory /dev/zero /dev/zero
expect nccl_tests "^trainscope: /dev/zero: larger than 64 MiB, the most read for an nccl-tests log" \
    replay --world 4 --nccl-tests /dev/zero $EX/rank0.json $EX/rank1.json
expect gradients "^trainscope: /dev/zero: larger than 64 MiB, the most read for a gradients file" \
    replay --bucket-mb 1 --gradients /dev/zero $EX/rank0.json $EX/rank1.json

# 300 ranks' traces with one GPU's memory events each: 300 rows, one a rank.
/usr/bin/python3 - "$T" <<'PY'
import json, sys
for r in range(300):
    ev = [{"ph": "i", "cat": "[memory]", "name": "[memory]", "pid": 1, "tid": 1, "ts": 10 + k, "s": "t",
           "args": {"Device Type": 1, "Device Id": 0, "Total Allocated": 1000 + r + k}} for k in range(2)]
    json.dump({"traceEvents": ev, "distributedInfo": {"rank": r, "world_size": 300}},
              open("%s/rank%03d.json" % (sys.argv[1], r), "w"))
PY
"$BIN" memory --trace --format json "$T"/rank*.json >"$T/rows" 2>"$T/err"; rc=$?
n=$(grep -c '"rank"' "$T/rows")
if [ $rc -ne 0 ] || [ "$n" -ne 300 ] || ! grep -q '"rank":299,.*"peak_bytes":1300' "$T/rows"; then
    echo "FAIL memory --trace of 300 files: exit $rc, $n rows"; cat "$T/err"; fails=$((fails+1))
else echo "ok memory --trace: 300 files, 300 rows"; fi
exit $fails
