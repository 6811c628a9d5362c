#!/bin/sh
# report.sh - the HTML report's speed and size figures (issue 24, "Speed"):
# `trainscope report` on nccl_data (target < 0.5 s), and for a 1,024-rank job
# synthesized from it the time the report adds to its analyses (< 2 s) and
# the file's size (< 5 MB), each with its ratio to the target, measured in
# this run. The pages are left in build/bench/ for a person to open.
#
#   sh bench/report.sh [--ranks N] [--repeat R]
#
# Wall-clock medians on a shared machine: read the ratios, not the digits.
set -e
BUILD=${BUILD:-build}
make -s "$BUILD/bench/report" >/dev/null
exec "$BUILD/bench/report" --data "${TS_DATA:-../shared/data}" --out "$BUILD/bench" "$@"
