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
# 4. --torch: the same kind of CPU training loop, median step time of the
#    recorded steps untraced, with torch.profiler used by hand in the loop
#    (record_shapes, the same window, its legacy/Kineto export), and under
#    `record --torch --steps`, alternating (RUNS runs each); and what the
#    startup hook costs a Python process that never imports torch
#    (python -X importtime: sitecustomize with and without --torch).
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

echo "== --torch: CPU MLP training loop, steps 10 to 49 recorded, $RUNS runs each (median of the per-run median step)"
if $PY -c "import torch" 2>/dev/null; then
    cat >"$tmp/loop.py" <<'P'
import os, statistics, sys, time, torch, torch.nn as nn
torch.manual_seed(0); torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
prof = None
if sys.argv[1] == "hand":   # what a user writes to get a trace with shapes
    from torch.profiler import profile, schedule
    out = sys.argv[2]
    prof = profile(schedule=schedule(wait=10, warmup=0, active=40, repeat=1), record_shapes=True,
                   on_trace_ready=lambda p: p.export_chrome_trace(out))
    prof.start()
times, cpu = [], []
for i in range(55):
    t0, c0 = time.perf_counter(), time.process_time()
    opt.zero_grad(); nn.functional.cross_entropy(model(x), y).backward(); opt.step()
    if prof: prof.step()
    times.append(time.perf_counter() - t0); cpu.append(time.process_time() - c0)
if prof: prof.stop()
w, c = times[10:50], cpu[10:50]
print("step_ms %.4f window_ms %.3f cpu_step_ms %.4f cpu_window_ms %.3f"
      % (1e3 * statistics.median(w), 1e3 * sum(w), 1e3 * statistics.median(c), 1e3 * sum(c)))
P
    : >"$tmp/t_plain"; : >"$tmp/t_hand"; : >"$tmp/t_rec"
    i=0
    while [ $i -lt "$RUNS" ]; do
        $PY "$tmp/loop.py" plain 2>/dev/null >>"$tmp/t_plain"
        $PY "$tmp/loop.py" hand "$tmp/hand.json" 2>/dev/null >>"$tmp/t_hand"
        rm -rf "$tmp/tt"
        "$BUILD/trainscope" record --torch --steps 10:50 -o "$tmp/tt" -- $PY "$tmp/loop.py" rec 2>/dev/null >>"$tmp/t_rec"
        i=$((i + 1))
    done
    col() { awk -v c="$1" '{print $c}' "$2" | median; }
    awk -v p="$(col 2 "$tmp/t_plain")" -v h="$(col 2 "$tmp/t_hand")" -v r="$(col 2 "$tmp/t_rec")" \
        -v pw="$(col 4 "$tmp/t_plain")" -v hw="$(col 4 "$tmp/t_hand")" -v rw="$(col 4 "$tmp/t_rec")" \
        -v pc="$(col 6 "$tmp/t_plain")" -v hc="$(col 6 "$tmp/t_hand")" -v rc="$(col 6 "$tmp/t_rec")" \
        -v pcw="$(col 8 "$tmp/t_plain")" -v hcw="$(col 8 "$tmp/t_hand")" -v rcw="$(col 8 "$tmp/t_rec")" 'BEGIN {
        printf "median step, CPU time: untraced %.3f ms, torch.profiler by hand %.3f ms, record --torch %.3f ms\n", pc, hc, rc
        printf "median step, wall:     untraced %.3f ms, torch.profiler by hand %.3f ms, record --torch %.3f ms\n", p, h, r
        printf "record --torch / by hand, CPU time: step %.3fx (target <= 1), window incl. export %.3fx; wall: step %.3fx, window %.3fx\n",
               rc / hc, rcw / hcw, r / h, rw / hw
        printf "record --torch / untraced: CPU step %.3fx, wall step %.3fx\n", rc / pc, r / p }'
    events=$(grep -c '"ph":"X"' "$tmp"/tt/*.json || true)
    echo "(${events} events in the last record --torch trace)"
    # sitecustomize's import, fastest of 9 (the least disturbed by load), with
    # bytecode cached as an installed Python has it (the first run writes it)
    imp() { env -u PYTHONDONTWRITEBYTECODE "$@" -X importtime -c pass 2>&1 |
            grep -E '[|] +sitecustomize$' | awk -F'|' '{print $2 + 0}'; }
    : >"$tmp/i_py"; : >"$tmp/i_torch"; : >"$tmp/i_none"
    pydir=$(cd python && pwd)
    for i in 0 1 2 3 4 5 6 7 8 9; do
        imp $PY >>"$tmp/i_none"
        imp env PYTHONPATH="$pydir" $PY >>"$tmp/i_py"
        imp env PYTHONPATH="$pydir" TRAINSCOPE_TORCH=1 $PY >>"$tmp/i_torch"
    done
    first() { sed 1d "$1" | sort -n | head -1; }
    echo "startup, a process that never imports torch (python -X importtime, sitecustomize, fastest of 9):" \
         "$(first "$tmp/i_torch") us with the --torch hook, $(first "$tmp/i_py") us ours without it," \
         "$(first "$tmp/i_none") us the system's alone"
else
    echo "(torch not installed for $PY: skipped)"
fi
