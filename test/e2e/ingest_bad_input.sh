#!/bin/sh
# ingest_bad_input.sh - every fatal input error reaches the user as one line
# `trainscope: FILE: byte OFFSET: what is wrong`, exit code 2, nothing on stdout.
# Inputs are made here (small, in a temp dir) except the cut gzip, taken from a
# real trace. Uses $TS_BIN (the CLI) and $TS_DATA (../shared/data).
set -u
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0

# expect FILE... -- EXPECTED_STDERR: run `stats` and compare
expect() {
    want=$1; shift
    "$BIN" stats "$@" >"$T/out" 2>"$T/err"; rc=$?
    got=$(cat "$T/err")
    if [ "$rc" -ne 2 ] || [ "$got" != "$want" ] || [ -s "$T/out" ]; then
        echo "FAIL: stats $*"; echo "  rc=$rc (want 2)"; echo "  got:  $got"; echo "  want: $want"
        [ -s "$T/out" ] && echo "  stdout was not empty"
        fail=1
    fi
}

printf '{"traceEvents":[{"ph":"X","ts":1' >"$T/truncated.json"
expect "trainscope: $T/truncated.json: byte 32: unexpected end of input (truncated JSON)" "$T/truncated.json"

printf '[{"ph":"X" "ts":1}]' >"$T/malformed.json"
expect "trainscope: $T/malformed.json: byte 11: expected ',' or '}' in event 0" "$T/malformed.json"

: >"$T/empty.json"
expect "trainscope: $T/empty.json: byte 0: empty file (no JSON value)" "$T/empty.json"

printf '[{"ph":"X","ts":1},{"ph":"X","ts":"12"}]' >"$T/ts_string.json"
expect "trainscope: $T/ts_string.json: byte 34: event 1: \"ts\" is not a number" "$T/ts_string.json"

mkdir "$T/no_traces"; echo hi >"$T/no_traces/readme.txt"
expect "trainscope: $T/no_traces: byte 0: directory holds no trace files (*.json, *.json.gz, *.json.zst, *.sqlite, *.xplane.pb, *.et)" "$T/no_traces"

GZ="$DATA/kineto/trace_compare/base/base.json.gz"
if [ -f "$GZ" ]; then
    head -c 1000 "$GZ" >"$T/cut.json.gz"
    expect "trainscope: $T/cut.json.gz: byte 1000: gzip stream cut short" "$T/cut.json.gz"
    # two files claiming rank 1 (both say distributedInfo.rank = 1)
    mkdir "$T/dup"; cp "$GZ" "$T/dup/a.json.gz"; cp "$GZ" "$T/dup/b.json.gz"
    expect "trainscope: $T/dup/b.json.gz: byte 0: claims rank 1, which $T/dup/a.json.gz already claims" "$T/dup"
fi
[ "$fail" -eq 0 ] || exit 1
[ -f "$GZ" ] || { echo "skip: $GZ absent (every other check passed)"; exit 77; }
exit 0
