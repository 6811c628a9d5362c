#!/bin/sh
# optimize.sh - the optimizer's speed figures (issue 22, "Speed"): candidate
# evaluations per second of the search against a full replay per candidate,
# on a real 2-rank gloo DDP trace of a 12-layer transformer with one all-reduce
# per gradient (16.8k graph nodes, 147 gradients; bench/gen_optimize_trace.py
# made it). Timings on a shared 2-core machine are noisy; ratios are taken in
# one run.
set -e
BUILD=${BUILD:-build}
make -s "$BUILD/bench/optimize" >/dev/null
"$BUILD/bench/optimize" "$@"
