#!/bin/sh
# optimize_rerun.sh - the optimizer validated by rerunning its plans (issue 22,
# "Validated by rerunning"): for each case (model, link rate), `trainscope
# optimize` searches a bucketing from the profiled run in examples/testbed
# (round 0's window, 2,000 evaluations), the testbed then trains with the
# plan applied (DDP comm hook or bucket_cap_mb, bench/testbed/rank.py --plan),
# with DDP's default (25 MB) and the caps 1 and 5 MB, round by round in a
# shuffled order, and bench/testbed/rerun_score.py prints predicted against
# realized gains (see its header for the definitions and the targets).
#
#   sh bench/optimize_rerun.sh [DIR]          score the rerun in DIR (default
#                                             examples/testbed-rerun)
#   sh bench/optimize_rerun.sh --measure DIR  search and rerun into DIR first
#                                             (root, iproute2; 23 min on 2 shared cores)
set -e
cd "$(dirname "$0")/.."
TS=${TS_BIN:-build/trainscope}
[ -x "$TS" ] || make -s build/trainscope
SRC=examples/testbed
CASES="mlp:50 mlp:200 cnn:50 cnn:200 wide:100 wide:400 transformer:200"
if [ "${1:-}" = "--measure" ]; then
    OUT=${2:?usage: optimize_rerun.sh --measure DIR}
    mkdir -p "$OUT/plans"
    set --
    for c in $CASES; do
        m=${c%%:*} r=${c#*:}
        "$TS" optimize "$SRC/traces/${m}_w2_r${r}_b25/round0" --gradients "$SRC/gradients/$m.json" \
            --budget 2000 --format json -o "$OUT/plans/${m}_r$r" >"$OUT/plans/${m}_r$r.json"
        for b in 25 1 5; do set -- "$@" --setting "model=$m,rate=$r,bucket=$b"; done
        set -- "$@" --setting "model=$m,rate=$r,plan=$(cd "$OUT" && pwd)/plans/${m}_r$r/plan.json"
    done
    /usr/bin/python3 bench/testbed/testbed.py --preset none --rounds 2 --out "$OUT/tb" "$@" | tee "$OUT/testbed.log"
    # testbed.py's copies of the applied plans join the optimizer's in plans/; its traces: a held-out set
    # for bench/testbed_accuracy.sh
    mv "$OUT/tb/plans/"* "$OUT/plans/" && rmdir "$OUT/tb/plans"
    mv "$OUT/tb/"* "$OUT/" && rmdir "$OUT/tb"
    DIR=$OUT
else
    DIR=${1:-examples/testbed-rerun}
fi
[ -d "$DIR/settings" ] || { echo "optimize_rerun.sh: $DIR/settings missing (run with --measure DIR as root)"; exit 2; }
/usr/bin/python3 bench/testbed/rerun_score.py "$SRC" "$DIR" "$TS"
