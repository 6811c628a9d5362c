#!/bin/sh
# ingest.sh - build the benchmarks (make bench) and run the ingest benchmark.
# Usage: sh bench/ingest.sh [bench] [--mb N] [--ranks N] [--repeat N] [--no-python]
# The benchmark writes its replicated traces under /tmp (reused between runs).
set -e
cd "$(dirname "$0")/.."
[ "${1:-bench}" = bench ] && [ $# -gt 0 ] && shift
make -j2 bench >/dev/null
: "${TS_DATA:=$(cd .. && pwd)/shared/data}"; export TS_DATA
exec build/bench/ingest "$@"
