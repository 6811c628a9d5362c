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
# the plan must then be no change (the walk alone, --no-cap-proposals). The groupings a bucket_cap_mb gives are
# proposed to the search (half the budget's worth) and the rest priced after
# it: the fastest of them on the representatives, where the search's best
# lack it, is re-priced folded beside them (`cap_grouping`). Hooks are free here (--hook-cost-ms 0):
# the stages themselves are checked, not the form's price (optimize_hook_cost.sh).
# The chosen strategy is then pruned by the folded replay (at most
# --prune-folded replays, default 2): the plan's price is at most the chosen
# one's, and the chosen strategy, rebuilt here from the plan by undoing each
# pruned change, is priced by replay --plan at what the re-pricing said.
set -e
. test/fold_job.sh
fold_job foldstage 8
BIN=${TS_BIN:-build/trainscope}
SRC=bench/data/optimize_transformer12
opt="--gradients $SRC/gradients.json --trace-bucket-mb 0.0001 --nccl-tests examples/workloads/results/gloo_allreduce_perf.log"
free="--hook-cost-ms 0"
replay_plan() {   # the folded replay's price of plan $1, in us
    "$BIN" replay "$tmp/job" --fold-replicas $opt --plan "$1" --format json 2>/dev/null |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["predicted_iteration_us"])'
}
# the trace's own strategy: a search of one evaluation can only keep it
"$BIN" optimize "$tmp/job" --fold-replicas $opt --budget 1 -o "$tmp/base" >/dev/null 2>"$tmp/err" ||
    { cat "$tmp/err"; exit 1; }
base=$(replay_plan "$tmp/base/plan.json")
check() {   # $1: plan dir, $2: what the case must show (gain | refused), $3: pruning replays allowed
    got=$(replay_plan "$1/plan.json")
    python3 - "$1/plan.json" "$SRC/gradients.json" "$1/chosen.json" <<'PY'
import json, re, sys
# the strategy the re-pricing chose: the plan with each pruned change undone
p, names = json.load(open(sys.argv[1])), [q["name"] for q in json.load(open(sys.argv[2]))["parameters"]][::-1]
assert p["gradient_pieces"] == [1] * len(names)
cut = [False] * (len(names) - 1)   # cut[i]: a bucket boundary between gradients i and i + 1 (reduction order)
end = 0
for u in p["bucket_units"][:-1]:
    end += u
    cut[end - 1] = True
for line in p["search"]["pruned"]:
    m = re.match(r"(cut the bucket between|fuse into one bucket) '([^']*)' \| '([^']*)' \(the plan without it: ", line)
    assert m, line
    i = names.index(m.group(2))
    assert names[i + 1] == m.group(3) and cut[i] != (m.group(1) == "cut the bucket between"), line
    cut[i] = not cut[i]
units, n = [], 1
for c in cut:
    if c:
        units.append(n)
        n = 0
    n += 1
p["bucket_units"] = units + [n]
json.dump(p, open(sys.argv[3], "w"))
PY
    chosen=$(replay_plan "$1/chosen.json")
    python3 - "$1/plan.json" "$got" "$base" "$2" "$chosen" "$3" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
got, base, case, chosen, allowed = float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], float(sys.argv[5]), int(sys.argv[6])
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
assert sum(r["chosen"] for r in rp) == 1
pick = [r for r in rp if r["chosen"]][0]["folded_iteration_us"]
assert min(r["folded_iteration_us"] for r in rp) == pick, "the chosen is not the fastest re-priced strategy"
assert abs(chosen - pick) < 0.0015, f"the chosen strategy rebuilt prices {chosen} us, re-priced {pick} us"
assert pred <= pick + 0.0015, "pruning made the plan slower folded"
assert s["pruned_on"] == "folded" and s["pruning_evaluations"] <= allowed, (s["pruning_evaluations"], allowed)
assert s["pruned_changes"] == len(s["pruned"]) and all(l.endswith(", folded)") for l in s["pruned"]), s["pruned"]
if s["pruned"]:
    print(f"  pruned {len(s['pruned'])} in {s['pruning_evaluations']} folded replays: {chosen:.3f} -> {pred:.3f} us")
else:
    assert abs(pred - pick) < 0.0015
# the search's best few, by its own prices, then at most one more: the fastest grouping a cap gives
# (on the representatives) where those lack it, re-priced beside them
caps = [i for i, r in enumerate(rp) if r["cap_grouping"]]
assert caps in ([], [len(rp) - 1]) and len(rp) >= 2, rp
reps = [r["representatives_iteration_us"] for r in rp[1:len(rp) - len(caps)]]
assert reps == sorted(reps), reps
best_seen = s["history"][-1]["best_iteration_us"]
assert abs(min(reps + [rp[0]["representatives_iteration_us"]]) - best_seen) < 0.0015, "the best priced is not re-priced"
for r in rp:
    e = 100 * (r["representatives_iteration_us"] - r["folded_iteration_us"]) / r["folded_iteration_us"]
    assert abs(e - r["error_pct"]) < 1e-3, r
if case == "gain":
    assert pred < base and not p["no_change"], "the search found nothing: the case proves too little"
elif case == "cap":
    assert rp[-1]["cap_grouping"] and rp[-1]["chosen"] and pred < base and p["ddp"]["bucket_cap_mb"], (rp, p["ddp"])
else:   # the search priced a move; folded, it is slower than the trace: refused
    assert p["no_change"] and len(rp) >= 2 and all(r["folded_iteration_us"] > base for r in rp[1:]), rp
PY
}
for seed in 0 1; do
    "$BIN" optimize "$tmp/job" --fold-replicas $opt $free --budget 30 --seed $seed -o "$tmp/s$seed" >"$tmp/table" 2>"$tmp/err" ||
        { cat "$tmp/err"; exit 1; }
    grep -q "^two stages: searched on the 2 representatives" "$tmp/table" || { echo "FAIL: no stage line"; cat "$tmp/table"; exit 1; }
    check "$tmp/s$seed" gain 2
    n=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["search"]["pruned"]))' "$tmp/s$seed/plan.json")
    [ "$n" = 0 ] || grep -q "^pruned $n change.* by the folded replay):" "$tmp/table" ||
        { echo "FAIL: the table does not say what was pruned"; cat "$tmp/table"; exit 1; }
done
"$BIN" optimize "$tmp/job" --fold-replicas $opt $free --budget 30 --seed 0 --prune-folded 6 -o "$tmp/p6" >/dev/null 2>"$tmp/err" ||
    { cat "$tmp/err"; exit 1; }
check "$tmp/p6" gain 6
for seed in 0 1 2; do   # the walk alone (no cap proposals): its one move is refused
    "$BIN" optimize "$tmp/job" --fold-replicas $opt $free --budget 2 --seed $seed --top-k 2 --no-cap-proposals \
        -o "$tmp/r$seed" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
    check "$tmp/r$seed" refused 2
done
# with the proposals (1 of budget 2, the rest priced after the search), the fastest cap grouping is
# re-priced beside the walk's move and, faster folded than the trace and the move, it is the plan
"$BIN" optimize "$tmp/job" --fold-replicas $opt $free --budget 2 --seed 0 --top-k 2 -o "$tmp/c0" >/dev/null 2>"$tmp/err" ||
    { cat "$tmp/err"; exit 1; }
check "$tmp/c0" cap 2
# unfolded: one stage, as before
"$BIN" optimize "$SRC/trace" $opt --budget 5 --format json >"$tmp/plain.json" 2>/dev/null
if grep -q "evaluations_on" "$tmp/plain.json"; then echo "FAIL: an unfolded job was searched in two stages"; exit 1; fi
set +e
"$BIN" optimize "$SRC/trace" $opt --top-k 2 >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "top-k applies with --fold-replicas" "$tmp/err" || { echo "FAIL: --top-k alone: exit $rc"; cat "$tmp/err"; exit 1; }
set +e
"$BIN" optimize "$SRC/trace" $opt --prune-folded 2 >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "prune-folded applies with --fold-replicas" "$tmp/err" || { echo "FAIL: --prune-folded alone: exit $rc"; exit 1; }
echo "ok"
