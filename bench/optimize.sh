#!/bin/sh
# optimize.sh - the optimizer's speed figures (issue 22, "Speed"): candidate
# evaluations per second of the search against a full replay per candidate,
# on a real 2-rank gloo DDP trace of a 12-layer transformer with one all-reduce
# per gradient (16.8k graph nodes, 147 gradients; bench/gen_optimize_trace.py
# made it). Then the same search on a 1,024-rank job: build/bench/scale_gen
# writes 1,024 copies of the trace's two ranks (clock offsets only, so each
# copy has its source's exact shape), read by the bounded path with
# --fold-replicas (2 replica groups: one representative each replayed whole,
# the others' collective members following theirs), and --fold-compare N
# random candidates priced by a full folded replay beside the trace's two
# ranks alone (the representatives). Timings on a shared 2-core machine are
# noisy; ratios are taken in one run.
#
#   sh bench/optimize.sh [--ranks N] [--fold-evals N] [--fold-compare N] [--dir DIR] [--keep]
#                        [build/bench/optimize options]
#
# --ranks 0 skips the folded search; the rank files (about 300 MB for 1,024,
# zstd) are written under DIR (default /tmp/trainscope_optimize_fold) and
# deleted after unless --keep.
set -e
BUILD=${BUILD:-build}
RANKS=1024
FOLD_EVALS=1000
FOLD_COMPARE=2
DIR=/tmp/trainscope_optimize_fold
KEEP=0
while [ $# -gt 0 ]; do
    case $1 in
        --ranks) RANKS=$2; shift 2 ;;
        --fold-evals) FOLD_EVALS=$2; shift 2 ;;
        --fold-compare) FOLD_COMPARE=$2; shift 2 ;;
        --dir) DIR=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        *) break ;;
    esac
done
make -s "$BUILD/bench/optimize" "$BUILD/bench/scale_gen" >/dev/null
"$BUILD/bench/optimize" "$@"
[ "$RANKS" -gt 0 ] || exit 0
SRC=bench/data/optimize_transformer12/trace
command -v zstd >/dev/null || { echo "optimize.sh: zstd absent (Debian package zstd): no folded search" >&2; exit 2; }
mkdir -p "$DIR/src" "$DIR/ranks$RANKS"
if [ ! -s "$DIR/ranks$RANKS/rank-$((RANKS - 1)).json.zst" ]; then
    zstd -qdcf "$SRC/rank0.json.zst" >"$DIR/src/rank0.json"
    zstd -qdcf "$SRC/rank1.json.zst" >"$DIR/src/rank1.json"
    "$BUILD/bench/scale_gen" --out "$DIR/ranks$RANKS" --ranks "$RANKS" --jitter -1 --compress zst \
        "$DIR/src/rank0.json" "$DIR/src/rank1.json"
fi
set +e
"$BUILD/bench/optimize" --fold-dir "$DIR/ranks$RANKS" --evals "$FOLD_EVALS" --fold-compare "$FOLD_COMPARE"
rc=$?
[ "$KEEP" = 1 ] || rm -rf "$DIR"
exit $rc
