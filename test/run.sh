#!/bin/sh
# run.sh BUILD_DIR - run every unit test (each in its own process, with a
# timeout) and every end-to-end script in test/e2e/, then print the closing
# line "N passed, N failed". Output of a failing test is shown; passing tests
# print one "ok" line.
BUILD=${1:-build}
TS_BIN=$(pwd)/$BUILD/trainscope; export TS_BIN
: "${TS_DATA:=$(cd "$(dirname "$0")/../.." && pwd)/shared/data}"; export TS_DATA
TIMEOUT=${TS_TEST_TIMEOUT:-300}
pass=0; fail=0; failed=""
log=$(mktemp); trap 'rm -f "$log"' EXIT
for bin in "$BUILD"/test/test_*; do
    [ -x "$bin" ] || continue
    for t in $("$bin"); do
        if timeout "$TIMEOUT" "$bin" "$t" >"$log" 2>&1; then
            pass=$((pass+1)); echo "ok   $(basename "$bin") $t"
        else
            fail=$((fail+1)); failed="$failed $(basename "$bin"):$t"
            echo "FAIL $(basename "$bin") $t"; sed 's/^/    /' "$log" | tail -40
        fi
    done
done
for s in test/e2e/*.sh; do
    [ -f "$s" ] || continue
    if timeout "$TIMEOUT" sh "$s" >"$log" 2>&1; then
        pass=$((pass+1)); echo "ok   e2e $(basename "$s")"
    else
        fail=$((fail+1)); failed="$failed e2e:$(basename "$s")"
        echo "FAIL e2e $(basename "$s")"; sed 's/^/    /' "$log" | tail -40
    fi
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
