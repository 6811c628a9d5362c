#!/bin/sh
# graph.sh - graph construction speed (nodes/s on one core), critical-path
# time on nccl_data beside HTA's, and build/match/align of a job of RANKS
# ranks (default 1,024) replicated from a real rank (issue 3, "Speed").
#
#   RANKS=8192 sh bench/graph.sh
set -e
cd "$(dirname "$0")/.."
make -s build/bench/graph >/dev/null
exec build/bench/graph --data "${TS_DATA:-../shared/data}" --ranks "${RANKS:-1024}"
