#!/bin/sh
# optimize_cli.sh - `trainscope optimize` end to end on a real 2-rank gloo DDP
# trace (examples/workloads, transformer at DDP's 25 MB): the plan names every
# gradient of gradients.json once, in the order DDP reduces them (the file's
# reverse: an independent source), `replay --plan` re-predicts exactly what the
# plan says, a seed and an evaluation budget give the same plan twice, and bad
# input exits 2 (1 for nothing to optimize) without partial output.
BIN=${TS_BIN:-build/trainscope}
W=examples/workloads
T=$W/traces/transformer_bucket25/round2
G=$W/results/transformer_gradients.json
LOG=$W/results/gloo_allreduce_perf.log
[ -d "$T" ] || { echo "skip: $T not here (run from the repository root)"; exit 77; }
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 absent"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$BIN" optimize "$T" --gradients "$G" --nccl-tests "$LOG" --budget 25 --seed 3 -o "$TMP/a" \
    --export "$TMP/a.trace.json" > "$TMP/a.txt" || fail "optimize exited $?"
grep -q "evaluations" "$TMP/a.txt" || fail "no search line: $(cat "$TMP/a.txt")"
for f in plan.json tensor_groups.txt horovod.env; do [ -s "$TMP/a/$f" ] || fail "no $f"; done
"$BIN" replay "$T" --gradients "$G" --nccl-tests "$LOG" --plan "$TMP/a/plan.json" --format json > "$TMP/re.json" \
    || fail "replay --plan exited $?"
/usr/bin/python3 - "$TMP" "$G" <<'PY' || exit 1
import json, sys
tmp, gpath = sys.argv[1], sys.argv[2]
plan = json.load(open(f"{tmp}/a/plan.json"))
names = [p["name"] for p in json.load(open(gpath))["parameters"]]
flat = [n for grp in plan["ddp"]["groups"] for n in grp]
assert flat == names[::-1], "ddp groups are not gradients.json reversed"
assert sum(plan["bucket_units"]) == len(names), plan["bucket_units"]
assert len(plan["ddp"]["groups"]) == plan["buckets_after"]
lines = open(f"{tmp}/a/tensor_groups.txt").read().split("\n")[:-1]
assert [l.split("+") for l in lines] == plan["ddp"]["groups"], "tensor_groups.txt differs from the plan"
re = json.load(open(f"{tmp}/re.json"))
assert re["predicted_iteration_us"] == plan["predicted_iteration_us"], (re["predicted_iteration_us"], plan["predicted_iteration_us"])
assert plan["predicted_iteration_us"] <= plan["baseline_iteration_us"]
assert plan["search"]["evaluations"] == 25
hook = plan["ddp"]["bucket_cap_mb"] is None
import os
assert os.path.exists(f"{tmp}/a/ddp_hook.py") == hook, "ddp_hook.py exactly when no cap gives the plan"
ev = json.load(open(f"{tmp}/a.trace.json"))
assert ev["traceEvents"], "empty export"
PY
# a seed and a budget give the same plan
"$BIN" optimize "$T" --gradients "$G" --nccl-tests "$LOG" --budget 25 --seed 3 -o "$TMP/b" > /dev/null || fail "second run"
/usr/bin/python3 -c "
import json,sys
a, b = (json.load(open(sys.argv[i] + '/plan.json')) for i in (1, 2))
for k in ('bucket_units', 'predicted_iteration_us', 'edits'):
    assert a[k] == b[k], k
assert [h['evaluation'] for h in a['search']['history']] == [h['evaluation'] for h in b['search']['history']]
" "$TMP/a" "$TMP/b" || fail "same seed and budget, another plan"
# layer-by-layer sample: no search, two evaluations (the trace's and the sample)
"$BIN" optimize "$T" --gradients "$G" --layer-num-limit 2 --format json > "$TMP/l.json" || fail "layer sample"
grep -q '"evaluations":2' "$TMP/l.json" || fail "layer sample: $(cat "$TMP/l.json")"

# op fusion on a trace with one all-reduce per gradient: cluster_mapping.txt, and no bucket files
B=bench/data/optimize_transformer12
if [ -d "$B/trace" ]; then
    "$BIN" optimize "$B/trace" --passes op-fusion --budget 30 -o "$TMP/o" > /dev/null || fail "op fusion exited $?"
    [ -s "$TMP/o/cluster_mapping.txt" ] || fail "no cluster_mapping.txt"
    [ ! -e "$TMP/o/ddp_hook.py" ] && [ ! -e "$TMP/o/tensor_groups.txt" ] || fail "bucket files for op fusion alone"
    /usr/bin/python3 - "$TMP/o" <<'PY' || exit 1
import json, sys
d = sys.argv[1]
plan = json.load(open(f"{d}/plan.json"))
assert plan["ddp"] is None and plan["op_fusion_pairs"] > 0, plan["op_fusion_pairs"]
rows = [l.rsplit(" ", 1) for l in open(f"{d}/cluster_mapping.txt") if not l.startswith("#")]
ids = [int(c) for _, c in rows]
assert ids == sorted(ids) and ids[0] == 1, ids[:10]
for c in set(ids):
    assert ids.count(c) >= 2, f"cluster {c} holds one op"
assert all(("Backward" in n or n.startswith("aten::")) for n, _ in rows)
assert plan["predicted_iteration_us"] <= plan["baseline_iteration_us"]
PY
    expect_opf=1
fi

# bad input
expect() { want=$1; shift; "$@" > "$TMP/out" 2> "$TMP/err"; got=$?
    [ "$got" = "$want" ] || fail "exit $got, wanted $want: $* ($(cat "$TMP/err"))"
    [ "$want" = 0 ] || [ -s "$TMP/err" ] || fail "no message: $*"; }
expect 2 "$BIN" optimize "$T" --gradients "$G" --budget 0
expect 2 "$BIN" optimize "$T" --gradients "$G" --budget 0s
expect 2 "$BIN" optimize "$T" --gradients "$G" --budget lots
[ -n "$expect_opf" ] && expect 2 "$BIN" replay "$B/trace" --gradients "$G" --plan "$TMP/o/plan.json"
expect 2 "$BIN" optimize "$T" --gradients "$G" --passes nonsense
for c in -1 x "1," "1,-2" ""; do   # a hook's cost: STEP[,GROUP] ms, each >= 0
    expect 2 "$BIN" optimize "$T" --gradients "$G" --hook-cost-ms "$c"
    grep -q "hook-cost-ms wants STEP" "$TMP/err" || fail "--hook-cost-ms '$c': $(cat "$TMP/err")"
done
expect 2 "$BIN" optimize "$T"
expect 2 "$BIN" replay "$T" --gradients $W/results/mlp_gradients.json --plan "$TMP/a/plan.json"
grep -q "other gradients" "$TMP/err" || fail "plan for another model: $(cat "$TMP/err")"
printf '{"gradients_fingerprint": "0", "bucket_units": [1]}' > "$TMP/bad.json"
expect 2 "$BIN" replay "$T" --gradients "$G" --plan "$TMP/bad.json"
expect 2 "$BIN" replay "$T" --gradients "$G" --plan "$TMP/a/plan.json" --bucket-mb 2
D=${TS_DATA:-../shared/data}/kineto/cpu_only
if [ -d "$D" ]; then   # one rank, no gradient all-reduce: nothing to optimize
    expect 1 "$BIN" optimize "$D" --gradients "$G" -o "$TMP/none"
    [ ! -e "$TMP/none" ] || fail "output written for nothing to optimize"
fi
mkdir "$TMP/ro" && chmod 500 "$TMP/ro"
if [ "$(id -u)" != 0 ]; then
    expect 2 "$BIN" optimize "$T" --gradients "$G" --budget 3 -o "$TMP/ro/plan"
fi
echo "ok"
