#!/bin/sh
# run.sh BUILD_DIR - run every unit test (each in its own process, with a
# timeout) and every end-to-end script in test/e2e/, then print the closing
# line "N passed, N failed, N skipped". Output of a failing test is shown;
# passing tests print one "ok" line.
#
# Exit status 77 from a test (SKIP() in a unit test, `exit 77` in a script)
# means it could not run here: its real data or a real dependency is absent.
# A skip is counted apart, never as a pass, and with TS_REQUIRE_ALL=1 (CI)
# any skip fails the run. A unit source without its binary, or a binary that
# lists no tests, is a failure.
BUILD=${1:-build}
TS_BIN=$(pwd)/$BUILD/trainscope; export TS_BIN
: "${TS_DATA:=$(cd "$(dirname "$0")/../.." && pwd)/shared/data}"; export TS_DATA
TIMEOUT=${TS_TEST_TIMEOUT:-300}
pass=0; fail=0; skip=0; failed=""; skipped=""
log=$(mktemp); trap 'rm -f "$log"' EXIT

# record NAME STATUS: count one result and print its line.
record() {
    case $2 in
    0)  pass=$((pass+1)); echo "ok   $1" ;;
    77) skip=$((skip+1)); skipped="$skipped $1"
        echo "SKIP $1: $(grep -m1 'skip' "$log" | sed 's/^.*skip:[[:space:]]*//')" ;;
    *)  fail=$((fail+1)); failed="$failed $1"
        echo "FAIL $1 (exit $2)"; sed 's/^/    /' "$log" | tail -40 ;;
    esac
}

for src in test/unit/test_*.c; do
    [ -f "$src" ] || continue
    bin=$BUILD/test/$(basename "$src" .c)
    if [ ! -x "$bin" ]; then
        : >"$log"; echo "no binary $bin for $src" >"$log"; record "$(basename "$bin")" 1; continue
    fi
    names=$("$bin")
    if [ -z "$names" ]; then
        echo "$bin lists no tests" >"$log"; record "$(basename "$bin")" 1; continue
    fi
    for t in $names; do
        timeout "$TIMEOUT" "$bin" "$t" >"$log" 2>&1
        record "$(basename "$bin") $t" $?
    done
done
# A script that first waits for a machine-wide lock (the testbed's: one
# testbed run at a time) says so in its header, "# lock-wait: SECONDS": that
# wait gets its own SECONDS on top of TIMEOUT, handed to the script as
# TS_LOCK_WAIT, so another run holding the lock cannot eat the test's time;
# a wait that runs out is the script's own clear failure, not a timeout.
for s in test/e2e/*.sh; do
    [ -f "$s" ] || continue
    wait_s=$(sed -n 's/^# lock-wait: \([0-9][0-9]*\).*/\1/p' "$s" | head -n 1)
    TS_LOCK_WAIT=${wait_s:-0} timeout $((TIMEOUT + ${wait_s:-0})) sh "$s" >"$log" 2>&1
    record "e2e $(basename "$s")" $?
done
[ -n "$failed" ] && echo "failed:$failed"
[ -n "$skipped" ] && echo "skipped:$skipped"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] || exit 1
if [ "$skip" -gt 0 ] && [ "${TS_REQUIRE_ALL:-0}" = 1 ]; then
    echo "TS_REQUIRE_ALL=1: $skip test(s) skipped for want of data or a dependency"; exit 1
fi
exit 0
