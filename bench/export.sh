#!/bin/sh
# export.sh - `trainscope export --sqlite` of nccl_data.json.gz (one A100 DDP
# rank, 26,933 events, 9.8 MB of JSON; ../shared/data/PROVENANCE.md) against
# issue 24's two targets, measured in this run:
#   whole command (load, breakdown, graph, critical path, replay, database)
#     under 0.5 s: ratio = 0.5 s / median time (>= 1 meets it);
#   database writing at >= 1 million rows/s: ratio = median rows/s / 1e6,
#     rows/s as the command prints it (rows / time from opening the file to
#     its rename).
# Usage: sh bench/export.sh [--repeat N]   (default 9 runs; medians reported)
set -e
cd "$(dirname "$0")/.."
N=9
[ "$1" = --repeat ] && N=$2
make -j2 all >/dev/null
: "${TS_DATA:=$(cd .. && pwd)/shared/data}"
F=$TS_DATA/kineto/nccl_parser_config/nccl_data.json.gz
[ -f "$F" ] || { echo "bench/export.sh: $F missing" >&2; exit 2; }
T=$(mktemp -d /tmp/ts_bench_export.XXXXXX)
trap 'rm -rf "$T"' EXIT
i=0
while [ $i -lt "$N" ]; do
    t0=$(date +%s%N)
    build/trainscope export "$F" --sqlite "$T/out.db" >"$T/line" 2>/dev/null
    t1=$(date +%s%N)
    # "PATH: R rows in K tables (...), written in S s (V rows/s)"
    echo "$(( t1 - t0 )) $(sed -n 's/.*: \([0-9]*\) rows in .*(\([0-9]*\) rows\/s)$/\1 \2/p' "$T/line")" >>"$T/runs"
    i=$((i + 1))
done
sort -n -k1,1 "$T/runs" | awk -v n="$N" 'NR == int((n + 1) / 2) { print "wall_ns", $1 }' >"$T/med"
sort -n -k3,3 "$T/runs" | awk -v n="$N" 'NR == int((n + 1) / 2) { print "rate", $3, $2 }' >>"$T/med"
awk -v f="$F" -v n="$N" -v bytes="$(stat -c %s "$T/out.db")" '
$1 == "wall_ns" { wall = $2 / 1e9 }
$1 == "rate" { rate = $2; rows = $3 }
END {
    printf "export --sqlite %s: %d rows, %.1f MB database, %d runs (medians; machine shared, timings disturbed by other work)\n", f, rows, bytes / 1e6, n
    printf "  whole command  %.3f s   target 0.5 s         ratio %.2fx %s\n", wall, 0.5 / wall, (wall <= 0.5 ? "(meets)" : "(MISSES)")
    printf "  rows/s         %.2f M   target 1 M rows/s    ratio %.2fx %s\n", rate / 1e6, rate / 1e6, (rate >= 1e6 ? "(meets)" : "(MISSES)")
}' "$T/med"
