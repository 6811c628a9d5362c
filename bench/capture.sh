#!/bin/sh
# capture.sh - the issue's capture overhead figures (issue 5, "Overhead and safety").
#
#   sh bench/capture.sh [RUNS]
#
# 1. build/bench/capture inside an LTTng session that records its tracepoints
#    (so LTTng-UST's cost is the cost of recording, not of a disabled probe):
#    host API ns/event next to LTTng-UST's on the same loop, the disabled
#    probe, and events lost at 1M events/s/thread on 2 threads.
# 2. The MPI allreduce example (examples/mpi_allreduce, 2 ranks) RUNS times
#    untraced and RUNS times under `trainscope record --mpi`, alternating; the
#    slowdown is the ratio of the medians of the program's own median
#    iteration time, and of the whole job's wall time.
# 3. The Python collector: a small CPU PyTorch MLP's training loop, untraced and
#    under `record --python-filter torch.nn.modules,<script>` (3 runs each).
# The machine is shared (2 cores, other work running): the figures are noisy.
set -e
RUNS=${1:-7}
BUILD=${BUILD:-build}
make -s "$BUILD/bench/capture" "$BUILD/trainscope" "$BUILD/libtrainscope-mpi.so" >/dev/null
mkdir -p "$BUILD/examples"
mpicc -O2 -std=c11 -o "$BUILD/examples/allreduce" examples/mpi_allreduce/allreduce.c
tmp=$(mktemp -d /tmp/ts_capture_bench.XXXXXX)
trap 'lttng destroy "ts-bench-$$" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

echo "== host tracing API vs LTTng-UST (best of 3; per event)"
session=no
if lttng create "ts-bench-$$" --output="$tmp/lttng" >/dev/null 2>&1 &&
   lttng enable-event --userspace 'ts_bench:*' --session="ts-bench-$$" >/dev/null 2>&1 &&
   lttng start "ts-bench-$$" >/dev/null 2>&1; then
    session=yes
    sleep 2   # the session and consumer daemons are busy setting up for a moment: not our cost
fi
"$BUILD/bench/capture" 4000000
if [ $session = yes ]; then
    lttng stop "ts-bench-$$" >/dev/null 2>&1 || true
    lttng destroy "ts-bench-$$" >/dev/null 2>&1 || true
else
    echo "(no LTTng session could be created: LTTng figure is the disabled-probe cost)"
fi

echo "== MPI allreduce example, 2 ranks, $RUNS runs each (median of the program's median iteration)"
run() {  # run OUTFILE [record args...]: prints wall seconds, program output to OUTFILE
    out=$1; shift
    t0=$(date +%s.%N)
    "$@" mpirun -np 2 --allow-run-as-root --oversubscribe "$BUILD/examples/allreduce" -n 20 -w 2 -c 262144 >"$out" 2>/dev/null
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
}
: >"$tmp/plain"; : >"$tmp/traced"
i=0
while [ $i -lt "$RUNS" ]; do
    w=$(run "$tmp/o" env); m=$(awk '/iteration_ms/{print $3}' "$tmp/o"); echo "$m $w" >>"$tmp/plain"
    rm -rf "$tmp/tr"
    w=$(run "$tmp/o" "$BUILD/trainscope" record --mpi -o "$tmp/tr" --); m=$(awk '/iteration_ms/{print $3}' "$tmp/o")
    echo "$m $w" >>"$tmp/traced"
    i=$((i + 1))
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
pi=$(cut -d' ' -f1 "$tmp/plain" | median); ti=$(cut -d' ' -f1 "$tmp/traced" | median)
pw=$(cut -d' ' -f2 "$tmp/plain" | median); tw=$(cut -d' ' -f2 "$tmp/traced" | median)
events=$(cat "$tmp"/tr/*.json | grep -c '"ph":"X"' || true)
echo "untraced: iteration ${pi} ms, job ${pw} s; traced: iteration ${ti} ms, job ${tw} s (${events} events in the last trace)"
awk -v p="$pi" -v t="$ti" -v pw="$pw" -v tw="$tw" 'BEGIN {
    printf "slowdown: iteration %+.2f%% (target <= 2%%), whole job %+.2f%%\n", 100 * (t - p) / p, 100 * (tw - pw) / pw }'

echo "== Python collector: CPU PyTorch MLP, 200 steps, 3 runs each (median loop time)"
PY=/usr/bin/python3
if $PY -c "import torch" 2>/dev/null; then
    cat >"$tmp/mlp.py" <<'P'
import time, torch, torch.nn as nn
torch.manual_seed(0); torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
t0 = time.perf_counter()
for _ in range(200):
    opt.zero_grad(); nn.functional.cross_entropy(model(x), y).backward(); opt.step()
print("loop_ms %.3f" % (1e3 * (time.perf_counter() - t0)))
P
    : >"$tmp/pp"; : >"$tmp/pt"
    for i in 1 2 3; do
        $PY "$tmp/mlp.py" | awk '{print $2}' >>"$tmp/pp"
        rm -rf "$tmp/py"
        "$BUILD/trainscope" record --python-filter torch.nn.modules,mlp -o "$tmp/py" -- $PY "$tmp/mlp.py" 2>/dev/null |
            awk '{print $2}' >>"$tmp/pt"
    done
    pp=$(median <"$tmp/pp"); pt=$(median <"$tmp/pt")
    n=$(grep -c '"python_function"' "$tmp"/py/*.json || true)
    awk -v p="$pp" -v t="$pt" -v n="$n" 'BEGIN {
        printf "untraced %.1f ms, traced %.1f ms (%+.1f%%, %d python_function ranges, %.2f us each)\n",
               p, t, 100 * (t - p) / p, n, n ? 1e3 * (t - p) / n : 0 }'
else
    echo "(torch not installed for $PY: skipped)"
fi
