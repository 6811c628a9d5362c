#!/bin/sh
# replay.sh - the replay speed figures (issue 3, "Speed").
#
#   sh bench/replay.sh
#
# Simulator and graph throughput on nccl_data (rank 0 of a real 2-rank NCCL
# DDP job, 15.7k graph nodes), then a 1,024-rank job replicated from it with
# 5% jitter (16M nodes). The 8,192-rank job replicates the smaller sampled
# rank 0 of the 128-rank trace_filter job (2.9k nodes per rank, 24M nodes):
# replicating nccl_data 8,192 times would need ~30 GB. Echo's published
# figure is 719 s for 1,024 GPUs. Timings on a shared 2-core machine are noisy.
# Each phase prints wall, user and kernel CPU and page faults: kernel time is
# first touches of memory (slow when the VM must back it afresh), so run it a
# few times and quote medians. Each job then runs again in the same process
# ("rerun"), on pages the VM already backs: the gap between the two totals is
# the VM's first-touch cost, not trainscope's work (user CPU is the same).
set -e
BUILD=${BUILD:-build}
DATA=${TS_DATA:-../shared/data}
make -s "$BUILD/bench/replay" >/dev/null
"$BUILD/bench/replay" --data "$DATA" --ranks 1024
"$BUILD/bench/replay" --data "$DATA" --trace "$DATA/kineto/trace_filter/sampled_rank-0.json.gz" --ranks 8192
# What the first runs above wait on: mapping memory the host never backed,
# by one thread against ts__prefault's threads (last, so it takes no fresh
# memory from the jobs above).
make -s "$BUILD/bench/prefault" >/dev/null
"$BUILD/bench/prefault" --mb 1024 --rounds 3
