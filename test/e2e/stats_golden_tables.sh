#!/bin/sh
# Golden triples: test/e2e/stats_breakdown_golden/trace.json (a hand-written
# Kineto trace: two ProfilerSteps of 100 us; aten::mm 20 + 30 us; gemm kernels
# of 40 us (launched at 15) and 50 us (launched at 115, in the last step);
# an NCCL kernel [50, 90) on stream 20; a 100000-byte memcpy [75, 85)) and the
# tables `trainscope stats` and `trainscope breakdown` print for it
# (stats.expected, breakdown.expected). Worked by hand:
#   stats: window 200 us; aten::mm mean 25, sample stddev 7.07, 25 %; the NCCL
#     kernel counts as a collective; kernels are placed by launch time.
#   breakdown (HTA): ops launched before the last step (100 us) count, so the
#     second gemm drops; union [30, 90) = span 60, idle 0; compute 40 = 66.7 %;
#     COMPUTATION alone [30,50) 20, with COMMUNICATION [50,70) 20, COMMUNICATION
#     alone [70,75)+[85,90) 10, with MEMORY [75,85) 10; overlap 20/40 = 50 %;
#     stream 7 gap 70 -> 75 is "other" (memcpy launched at 60, before 70, and
#     5 us >= 30 ns); queue on stream 7: +1@15 +1@60 -1@70 -1@85 -> mean 1, max 2;
#     launch delays 15, 10, 15 us; memcpy 100000 B / 10 us = 10 GB/s.
set -e
BIN=${TS_BIN:-build/trainscope}
G=$(dirname "$0")/stats_breakdown_golden
OUT=$(mktemp); trap 'rm -f "$OUT"' EXIT
"$BIN" stats "$G/trace.json" >"$OUT"
diff -u "$G/stats.expected" "$OUT"
"$BIN" breakdown "$G/trace.json" >"$OUT"
diff -u "$G/breakdown.expected" "$OUT"
echo ok
