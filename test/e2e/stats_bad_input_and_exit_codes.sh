#!/bin/sh
# Exit codes: 2 with one line "trainscope: ..." for bad input or usage, 1 when
# no iteration lies in --iterations, 0 for --help.
BIN=${TS_BIN:-build/trainscope}
F=${TS_DATA:-../shared/data}/kineto/cpu_only
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect() {  # CODE CMD... : exit code CODE and, when non-zero, one stderr line
    want=$1; shift
    "$@" >"$T/out" 2>"$T/err"; got=$?
    [ "$got" -eq "$want" ] || fail "$* exited $got, expected $want: $(cat "$T/err")"
    if [ "$want" -ne 0 ]; then
        [ "$(wc -l <"$T/err")" -eq 1 ] || fail "$*: expected one line on stderr, got: $(cat "$T/err")"
        grep -q '^trainscope: ' "$T/err" || fail "$*: message lacks 'trainscope: '"
        [ ! -s "$T/out" ] || fail "$*: printed output on failure"
    fi
}
for cmd in stats breakdown; do
    expect 0 "$BIN" $cmd --help
    grep -q -- '--format' "$T/out" || fail "$cmd --help does not document --format"
    expect 2 "$BIN" $cmd
    expect 2 "$BIN" $cmd --format xml "$F"
    expect 2 "$BIN" $cmd --no-such-option "$F"
    expect 2 "$BIN" $cmd "$T/missing.json"
    printf '{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":2' >"$T/trunc.json"
    expect 2 "$BIN" $cmd "$T/trunc.json"
    : >"$T/empty.json"
    expect 2 "$BIN" $cmd "$T/empty.json"
done
expect 2 "$BIN" stats --iterations 7:3 "$F"
expect 2 "$BIN" stats --top x "$F"
expect 2 "$BIN" stats --by thread "$F"
[ -d "$F" ] || { echo "skip the data checks: $F missing"; exit 77; }
# the cpu_only rank has ProfilerStep#551 only
expect 1 "$BIN" stats --iterations 1:2 "$F"
grep -q '1:2' "$T/err" || fail "the message does not name the range"
expect 0 "$BIN" stats --iterations 551:551 "$F"
expect 0 "$BIN" stats --iterations 551: "$F"
expect 1 "$BIN" breakdown --iterations 1:2 "$F"
expect 2 "$BIN" breakdown --iterations x "$F"
expect 0 "$BIN" breakdown --iterations 551 "$F"
# a trace with no slice at all: nothing to break down
printf '{"traceEvents":[{"ph":"M","name":"process_name","pid":1,"tid":1,"args":{"name":"p"}}]}' >"$T/meta.json"
expect 1 "$BIN" breakdown "$T/meta.json"
echo ok
