#!/bin/sh
# optimize_fold_two_stage.sh - optimize --fold-replicas searches on the
# replica groups' representatives, then re-prices its best --top-k and the
# trace's own strategy by the folded replay: the plan's price must be what
# `replay --fold-replicas --plan` gives that plan (a separate command), never
# above the trace's own strategy's folded price (a no-change plan re-priced
# by replay --plan), and a plan equal to it must say no change. 8 ranks made
# here by Python from bench/data/optimize_transformer12 (2 real gloo DDP
# ranks, CPU only): copy k of real rank k % 2, its clock shifted only, so the
# copies fold into 2 groups. Budgets of 2 make the second stage refuse the
# search's pick: each seed's one move is slower folded than the trace, and
# the plan must then be no change.
set -e
. test/fold_job.sh
fold_job foldstage 8
BIN=${TS_BIN:-build/trainscope}
SRC=bench/data/optimize_transformer12
opt="--gradients $SRC/gradients.json --trace-bucket-mb 0.0001 --nccl-tests examples/workloads/results/gloo_allreduce_perf.log"
replay_plan() {   # the folded replay's price of plan $1, in us
    "$BIN" replay "$tmp/job" --fold-replicas $opt --plan "$1" --format json 2>/dev/null |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["predicted_iteration_us"])'
}
# the trace's own strategy: a search of one evaluation can only keep it
"$BIN" optimize "$tmp/job" --fold-replicas $opt --budget 1 -o "$tmp/base" >/dev/null 2>"$tmp/err" ||
    { cat "$tmp/err"; exit 1; }
base=$(replay_plan "$tmp/base/plan.json")
check() {   # $1: plan dir, $2: what the case must show (gain | refused)
    got=$(replay_plan "$1/plan.json")
    python3 - "$1/plan.json" "$got" "$base" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
got, base, case = float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
pred, s = p["predicted_iteration_us"], p["search"]
rp = s["repriced_folded"]
print(f"{sys.argv[1]}: plan {pred:.3f} us, replay --plan {got:.3f} us, trace's own {base:.3f} us, "
      f"no_change {p['no_change']}, re-priced {[(r['representatives_iteration_us'], r['folded_iteration_us']) for r in rp]}")
assert s["priced_on"] == "representatives" and s["representative_ranks"] == 2, s
assert abs(pred - got) < 0.0015, f"plan says {pred} us, its folded replay {got} us"
assert abs(p["baseline_iteration_us"] - base) < 0.0015, "baseline is not the trace's own folded price"
assert rp[0]["trace_strategy"] and abs(rp[0]["folded_iteration_us"] - base) < 0.0015
assert pred <= base + 0.0015, "the plan is slower than the trace's own strategy"
assert p["no_change"] == (abs(pred - base) < 0.0015), "a plan at the trace's price must be no change"
assert min(r["folded_iteration_us"] for r in rp) == pred, "the plan is not the fastest re-priced strategy"
assert sum(r["chosen"] for r in rp) == 1
reps = [r["representatives_iteration_us"] for r in rp[1:]]   # the search's best few, by its own prices
assert reps == sorted(reps), reps
best_seen = s["history"][-1]["best_iteration_us"]
assert abs(min(reps + [rp[0]["representatives_iteration_us"]]) - best_seen) < 0.0015, "the best priced is not re-priced"
for r in rp:
    e = 100 * (r["representatives_iteration_us"] - r["folded_iteration_us"]) / r["folded_iteration_us"]
    assert abs(e - r["error_pct"]) < 1e-3, r
if case == "gain":
    assert pred < base and not p["no_change"], "the search found nothing: the case proves too little"
else:   # the search priced a move; folded, it is slower than the trace: refused
    assert p["no_change"] and len(rp) >= 2 and all(r["folded_iteration_us"] > base for r in rp[1:]), rp
PY
}
for seed in 0 1; do
    "$BIN" optimize "$tmp/job" --fold-replicas $opt --budget 30 --seed $seed -o "$tmp/s$seed" >"$tmp/table" 2>"$tmp/err" ||
        { cat "$tmp/err"; exit 1; }
    grep -q "^two stages: searched on the 2 representatives" "$tmp/table" || { echo "FAIL: no stage line"; cat "$tmp/table"; exit 1; }
    check "$tmp/s$seed" gain
done
for seed in 0 1 2; do
    "$BIN" optimize "$tmp/job" --fold-replicas $opt --budget 2 --seed $seed --top-k 2 -o "$tmp/r$seed" >/dev/null 2>"$tmp/err" ||
        { cat "$tmp/err"; exit 1; }
    check "$tmp/r$seed" refused
done
# unfolded: one stage, as before
"$BIN" optimize "$SRC/trace" $opt --budget 5 --format json >"$tmp/plain.json" 2>/dev/null
if grep -q "evaluations_on" "$tmp/plain.json"; then echo "FAIL: an unfolded job was searched in two stages"; exit 1; fi
set +e
"$BIN" optimize "$SRC/trace" $opt --top-k 2 >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "top-k applies with --fold-replicas" "$tmp/err" || { echo "FAIL: --top-k alone: exit $rc"; cat "$tmp/err"; exit 1; }
echo "ok"
