#!/bin/sh
# dist.sh - distributed analysis on Open MPI (issue 27 item 3): the speedup
# of `mpirun -np 2 trainscope replay DIR` (two processes, one thread each)
# against one process of one thread, on N rank files renumbered from the real
# nccl_data (rank 0 of a 2-rank A100 DDP job, 9.8 MB of JSON), and the
# per-phase timings the scaling to larger P is stated from.
#
#   sh bench/dist.sh [N]          (N rank files, default 64; plain JSON, so
#                                  one thread is one thread: no gzip decoder)
#
# Both runs go through mpirun (the 1-process one with -np 1, which loads with
# one thread as every process of a distributed run does), so the ratio is
# processes, not threads against processes. Each process prints its phases
# (TS_DIST_TIMES=1): ingest (parse + build the model), serialize, wait (at
# the barrier for the slowest process), exchange (ranks to process 0),
# rebuild (process 0 reads the ranks back), global analysis (graph, replay,
# output on process 0). The answers are compared byte for byte. Timings on a
# 2-core machine shared with other work are noisy: quote the ratio of runs
# taken back to back, and say the load.
set -e
N=${1:-64}
BUILD=${BUILD:-build}
BIN=$BUILD/trainscope
DATA=${TS_DATA:-../shared/data}
SRC="$DATA/kineto/nccl_parser_config/nccl_data.json.gz"
DIR=/tmp/trainscope_bench_dist_$N
make -s all >/dev/null
[ -r "$BUILD/libtrainscope_dist.so" ] || { echo "dist.sh: $BUILD/libtrainscope_dist.so not built (libopenmpi-dev)"; exit 1; }
if [ "$(ls "$DIR" 2>/dev/null | wc -l)" -ne "$N" ]; then
    rm -rf "$DIR"; mkdir -p "$DIR"
    python3 - "$SRC" "$DIR" "$N" <<'PY'
import gzip, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = gzip.open(src, "rt").read()
old = '"rank": 0, "world_size": 2'
assert text.count(old) == 1
for r in range(n):
    with open("%s/rank-%d.json" % (dst, r), "w") as f:
        f.write(text.replace(old, '"rank": %d, "world_size": %d' % (r, n)))
PY
fi
MB=$(du -sm "$DIR" | cut -f1)
echo "dist benchmark: replay on $N rank files ($MB MB of JSON) in $DIR"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (shared with other work: timings are noisy)"
run() {   # run P OUT: wall seconds on stdout; phases in OUT.err
    t0=$(date +%s.%N)
    TS_DIST_TIMES=1 mpirun --oversubscribe --allow-run-as-root -np "$1" -x TS_DIST_TIMES "$BIN" replay --format json "$DIR" >"$2" 2>"$2.err"
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}'
}
tmp=$(mktemp -d /tmp/ts_bench_dist.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$BIN" replay --format json "$DIR" >"$tmp/plain" 2>/dev/null
w1=$(run 1 "$tmp/p1")
w2=$(run 2 "$tmp/p2")
cmp -s "$tmp/plain" "$tmp/p1" && cmp -s "$tmp/plain" "$tmp/p2" || { echo "dist.sh: the answers differ"; exit 1; }
echo "answers: P=1 and P=2 print the plain CLI's bytes"
for p in 1 2; do
    echo "P=$p phases (process 0's view; ingest and serialize are the slowest process's):"
    grep '^dist:' "$tmp/p$p.err" | sed 's/^/  /'
done
# field VALUE of the phase lines of run P
f() { grep '^dist: ' "$tmp/p$1.err" | tr ' ' '\n' | awk -v k="$2" 'prev == k {print; exit} {prev = $0}'; }
awk -v w1="$w1" -v w2="$w2" -v i1="$(f 1 share_total_s)" -v x2="$(f 2 exchange_s)" \
    -v r1="$(f 1 rebuild_s)" -v g1="$(f 1 global_analysis_s)" -v t1="$(f 1 total_s)" -v t2="$(f 2 total_s)" 'BEGIN {
    printf "wall (mpirun included): 1 process x 1 thread %.2f s, 2 processes x 1 thread %.2f s: speedup %.2fx\n", w1, w2, w1 / w2
    printf "inside trainscope (load start to answer): %.2f s vs %.2f s: speedup %.2fx\n", t1, t2, t1 / t2
    par = i1; ser = r1 + g1; rest = t1 - par - ser
    printf "from P=1 phases: parallel part (share: ingest, serialize, pack) %.2f s, serial part on process 0 (rebuild + global analysis) %.2f s, ", par, ser
    printf "the rest (exchange, reading and freeing the messages) %.2f s\n", rest
    printf "scaling stated from them: T(P) ~ %.2f/P + %.2f + exchange(P) s (P=2 exchange %.2f s: it grows with the bytes, not P); ", par, ser, x2
    printf "P=4: %.2f s, P=8: %.2f s, P=16: %.2f s (plus exchange); the ceiling is %.1fx (serial part and the rest)\n", \
        par / 4 + ser, par / 8 + ser, par / 16 + ser, (par + ser + rest) / (ser + rest)
}'
