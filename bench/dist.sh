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
# All runs go through mpirun (the 1-process one with -np 1, which loads with
# one thread as every process of a distributed run does), so the ratio is
# processes, not threads against processes. P=2 runs twice, alternated with
# P=1: the other process sending each rank condensed (its local graph and
# compact rank: now) and sending it whole (TS_DIST_SEND=ranks: before, process
# 0 then built its local graph). Each process prints its phases
# (TS_DIST_TIMES=1): ingest (parse + build the model; with condensed ranks
# also the local graphs, and serialization on the other processes), wait (at
# the barrier for the slowest process), exchange (the bytes to process 0),
# rebuild (process 0 reads each rank back and adds it to the graph), global
# analysis (matching, replay, output on process 0). The answers are compared
# byte for byte. Timings on a 2-core machine shared with other work are
# noisy: quote the ratio of runs taken back to back, and say the load.
# Then process 0's peak RSS (it keeps the condensed job: the graph and each
# rank's summary, plus one rank) against one process's on the bounded path,
# for replay (condensed and whole ranks sent) and stats, and what gathering
# whole ranks (--in-memory) and one process --in-memory hold.
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
run() {   # run P OUT [SEND]: wall seconds on stdout; phases in OUT.err (SEND=ranks: the whole-rank path)
    t0=$(date +%s.%N)
    TS_DIST_SEND=${3:-parts} TS_DIST_TIMES=1 mpirun --oversubscribe --allow-run-as-root -np "$1" -x TS_DIST_TIMES -x TS_DIST_SEND \
        "$BIN" replay --format json "$DIR" >"$2" 2>"$2.err"
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}'
}
tmp=$(mktemp -d /tmp/ts_bench_dist.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# field VALUE of the phase lines of one run's stderr
f() { grep '^dist: ' "$1" | tr ' ' '\n' | awk -v k="$2" 'prev == k {print; exit} {prev = $0}'; }
# the largest value of a per-process field (share_cpu_s) over the processes
fmax() { grep '^dist: process [0-9]* ingest' "$1" | tr ' ' '\n' | awk -v k="$2" 'prev == k && $0 > m {m = $0} {prev = $0} END {print m + 0}'; }
med() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
"$BIN" replay --format json "$DIR" >"$tmp/plain" 2>/dev/null
REPEAT=${REPEAT:-3}
# 1: one process; 2: two, condensed ranks sent (now); w: two, whole ranks sent (TS_DIST_SEND=ranks, before)
for i in $(seq "$REPEAT"); do   # alternated, so all see the same load
    for k in 1 2 w; do
        p=${k#w}; [ "$k" = w ] && p=2
        send=parts; [ "$k" = w ] && send=ranks
        w=$(run $p "$tmp/p$k" $send)
        cmp -s "$tmp/plain" "$tmp/p$k" || { echo "dist.sh: the answer of run $k (-np $p, $send) differs from the plain CLI's"; exit 1; }
        e=$tmp/p$k.err
        echo "$w $(f "$e" total_s) $(fmax "$e" share_cpu_s) $(f "$e" global_analysis_cpu_s) $(f "$e" rebuild_cpu_s) $(f "$e" exchange_cpu_s) $(f "$e" exchange_mb) $(f "$e" process0_peak_rss_mb)" >>"$tmp/runs$k"
        cp "$e" "$tmp/last$k.err"
    done
done
echo "answers: P=1 and P=2 (condensed ranks, and whole ranks) print the plain CLI's bytes in every run ($REPEAT runs each, alternated)"
rss() { /usr/bin/time -f %M -o "$tmp/rss" "$@" >/dev/null 2>&1; awk '{printf "%.0f", $1 / 1024}' "$tmp/rss"; }
p0() {   # process 0's peak RSS in MB, P=2 (SEND=ranks|parts first)
    send=$1; shift
    TS_DIST_SEND=$send TS_DIST_TIMES=1 mpirun --oversubscribe --allow-run-as-root -np 2 -x TS_DIST_TIMES -x TS_DIST_SEND "$BIN" "$@" >"$tmp/p0" 2>"$tmp/p0.err"
    f "$tmp/p0.err" process0_peak_rss_mb
}
for cmd in replay stats; do
    "$BIN" $cmd --format json "$DIR" >"$tmp/plain" 2>/dev/null
    s=$(rss "$BIN" $cmd --format json "$DIR"); m=$(rss "$BIN" $cmd --format json --in-memory "$DIR")
    d=$(p0 parts $cmd --format json "$DIR"); cmp -s "$tmp/plain" "$tmp/p0" || { echo "dist.sh: $cmd -np 2 differs from the plain CLI"; exit 1; }
    x=$(f "$tmp/p0.err" exchange_mb)
    o=$(p0 ranks $cmd --format json "$DIR"); cmp -s "$tmp/plain" "$tmp/p0" || { echo "dist.sh: $cmd -np 2 (whole ranks) differs from the plain CLI"; exit 1; }
    y=$(f "$tmp/p0.err" exchange_mb)
    g=$(p0 parts $cmd --format json --in-memory "$DIR")
    awk -v c="$cmd" -v s="$s" -v m="$m" -v d="$d" -v o="$o" -v g="$g" -v x="$x" -v y="$y" 'BEGIN {
        printf "%s: process 0 of P=2 peak RSS %d MB = x%.2f of one process on the bounded path (%d MB); %.1f MB exchanged\n", c, d, d / s, s, x
        if (c == "replay") printf "  sending whole ranks (TS_DIST_SEND=ranks, before): %d MB = x%.2f; %.1f MB exchanged\n", o, o / s, y
        printf "  gathering whole ranks (--in-memory): %d MB = x%.2f; one process --in-memory: %d MB\n", g, g / s, m
    }'
done
for k in 1 2 w; do
    echo "run $k ($([ $k = 1 ] && echo 'P=1' || ([ $k = 2 ] && echo 'P=2, condensed ranks' || echo 'P=2, whole ranks'))), last run's phases (wall s unless _cpu_s; process 0's view):"
    grep '^dist:' "$tmp/last$k.err" | sed 's/^/  /'
done
col() { cut -d' ' -f"$2" "$tmp/runs$1" | med; }
# speedup and scaling of one P=2 path (k = 2 or w) against P=1
model() {
    awk -v name="$2" -v w1="$(col 1 1)" -v w2="$(col $1 1)" -v t1="$(col 1 2)" -v t2="$(col $1 2)" -v c1="$(col 1 3)" \
        -v c2="$(col $1 3)" -v g1="$(col 1 4)" -v g2="$(col $1 4)" -v r2="$(col $1 5)" -v x2="$(col $1 6)" \
        -v mb="$(col $1 7)" -v rss="$(col $1 8)" 'BEGIN {
        printf "%s: %.1f MB exchanged, process 0 peak RSS %d MB\n", name, mb, rss
        printf "  wall with mpirun: 1 process x 1 thread %.2f s, 2 processes x 1 thread %.2f s: speedup %.2fx\n", w1, w2, w1 / w2
        printf "  wall inside trainscope (load start to answer): %.2f s vs %.2f s: speedup %.2fx\n", t1, t2, t1 / t2
        printf "  CPU seconds: P=1 share %.2f + global analysis %.2f; ", c1, g1
        printf "P=2 slowest share %.2f, exchange %.2f, rebuild %.2f, global analysis %.2f\n", c2, x2, r2, g2
        cp1 = c1 + g1; cp2 = c2 + r2 + x2 + g2
        printf "  critical path from them: P=1 %.2f s, P=2 %.2f s: speedup %.2fx\n", cp1, cp2, cp1 / cp2
        X = 2 * (r2 + x2)   # exchange + rebuild of every rank (P=2 measures half of them)
        printf "  scaling from the phases: T(P) ~ %.2f/P (shares, 2 x the slowest at P=2) + %.2f (P-1)/P (exchange + rebuild on process 0) + %.2f (global) s:\n", 2 * c2, X, g1
        for (P = 4; P <= 16; P *= 2) printf "    P=%d %.2f s (%.2fx)", P, 2 * c2 / P + X * (P - 1) / P + g1, cp1 / (2 * c2 / P + X * (P - 1) / P + g1)
        printf "; the ceiling (P -> inf) %.1fx\n", cp1 / (X + g1)
    }'
}
echo "medians of $REPEAT runs (load average now $(cut -d' ' -f1-3 /proc/loadavg)):"
model 2 "P=2, condensed ranks sent (now)"
model w "P=2, whole ranks sent (TS_DIST_SEND=ranks, before)"
