#!/bin/sh
# run-example.sh - the README's first command after the build: statistics and
# the time breakdown of the bundled example, a 2-rank DDP training over gloo
# on CPU traced with Debian's python3-torch (examples/ddp_gloo/, made by
# examples/ddp_gloo/make_trace.py; ProfilerStep#N marks the iterations).
# Usage: sh examples/run-example.sh [path/to/trainscope]
set -e
cd "$(dirname "$0")/.."
BIN=${1:-${TS_BIN:-build/trainscope}}
EX=examples/ddp_gloo
[ -x "$BIN" ] || { echo "run-example: $BIN not built yet (run 'make')" >&2; exit 2; }
[ -d "$EX" ] || { echo "run-example: $EX is missing" >&2; exit 2; }
echo "== trainscope stats --top 5 $EX"
"$BIN" stats --top 5 "$EX"
echo
echo "== trainscope breakdown $EX"
"$BIN" breakdown "$EX"
echo
echo "== trainscope report $EX -o build/example-report.html"
"$BIN" report "$EX" -o build/example-report.html
