#!/bin/sh
# collectives.sh - how far `replay --world N` can be trusted: the collective
# cost model fitted on some of the real A100 nccl-tests sweeps
# (../shared/data/nccl-tests/, 1-128 GPUs) and scored on others (issue 3,
# "Collective cost models").
#
#   sh bench/collectives.sh
set -e
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
make -s "$BUILD/bench/collectives" >/dev/null
exec "$BUILD/bench/collectives" --data "${TS_DATA:-../shared/data}"
