#!/bin/sh
# optimize_cap_proposals.sh - the search proposes the groupings a DDP
# bucket_cap_mb gives (issue 22: "at least as fast as DDP's default and as the
# best of a grid of bucket caps"): on bench/data/optimize_transformer12 (2 real
# gloo DDP ranks, 147 gradients, one all-reduce each), a grid of caps is priced
# here by separate `trainscope replay --bucket-mb` runs (each distinct grouping
# once, as torch's own _compute_bucket_assignment_by_size groups at that cap)
# and every plan by `replay --plan`, never by optimize's own numbers:
#  - the walk alone (--no-cap-proposals, hooks free, 40 evaluations, seed 2)
#    finds a plan slower than the grid's best cap: the case the proposals fix;
#  - with the proposals (the same options), the plan is no slower than any cap
#    of the grid, nor than the walk's; 40 evaluations hold 20 of the 64
#    groupings as proposals (evaluations 2-21 of the history), the rest are
#    priced after the search; the plan is a cap plan whose groups are torch's at
#    its cap and whose price is replay --bucket-mb's at that cap (seed 2: at
#    seed 1, since the cap groupings are all found, 27 Nov 2026, the search
#    itself finds a hook plan faster than every cap, which proves less here);
#  - the same at the default hook cost and 200 evaluations (all 64 proposed),
#    and with hooks free at 200 (a hook plan may win, never slower than a cap);
#  - a seed and budget give the same plan.json twice (but its seconds).
set -e
BIN=${TS_BIN:-build/trainscope}
SRC=bench/data/optimize_transformer12
[ -r "$SRC/trace/rank0.json.zst" ] || { echo "skip: $SRC absent"; exit 77; }
/usr/bin/python3 -c "import torch.distributed" 2>/dev/null || { echo "skip: Debian's python3-torch absent"; exit 77; }
tmp=$(mktemp -d /tmp/ts_e2e_capprop.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
opt="--gradients $SRC/gradients.json --trace-bucket-mb 0.0001 --nccl-tests examples/workloads/results/gloo_allreduce_perf.log"
price() {   # [replay options]: the predicted iteration, us
    "$BIN" replay "$SRC/trace" $opt --format json "$@" 2>/dev/null |
        /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["predicted_iteration_us"])'
}
optimize() {   # NAME [options]
    name=$1; shift
    "$BIN" optimize "$SRC/trace" $opt "$@" -o "$tmp/$name" >"$tmp/$name.txt" 2>"$tmp/$name.err" ||
        { echo "FAIL: $name: exit $?"; cat "$tmp/$name.err"; exit 1; }
}
optimize walk --hook-cost-ms 0 --no-cap-proposals --budget 40 --seed 2
optimize prop --hook-cost-ms 0 --budget 40 --seed 2
optimize again --hook-cost-ms 0 --budget 40 --seed 2
optimize dflt --budget 200 --seed 1
optimize free --hook-cost-ms 0 --budget 200 --seed 1
# the grid: caps whose torch groupings differ, each priced once
/usr/bin/python3 - "$SRC/gradients.json" > "$tmp/grid" <<'PY'
import json, sys
import torch, torch.distributed as dist
params = json.load(open(sys.argv[1]))["parameters"][::-1]   # the order they become ready
seen = {}
for mb in (0.25, 0.5, 1, 1.5, 2, 3, 4, 5, 6, 8, 10, 12, 25):
    ts = [torch.empty(p["bytes"] // 4) for p in params]
    idx, _ = dist._compute_bucket_assignment_by_size(ts, [dist._DEFAULT_FIRST_BUCKET_BYTES, int(mb * 1048576)])
    seen.setdefault(str(idx), mb)
print(" ".join(str(mb) for mb in seen.values()))
PY
for c in $(cat "$tmp/grid"); do echo "$c $(price --bucket-mb "$c")"; done > "$tmp/caps"
for n in walk prop dflt free; do echo "$n $(price --plan "$tmp/$n/plan.json")"; done > "$tmp/plans"
cap=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ddp"]["bucket_cap_mb"])' "$tmp/prop/plan.json")
[ "$cap" != None ] || { echo "FAIL: the plan with proposals is not a cap plan"; cat "$tmp/prop.txt"; exit 1; }
atcap=$(price --bucket-mb "$cap")
/usr/bin/python3 - "$tmp" "$SRC/gradients.json" "$atcap" <<'PY'
import json, sys
import torch, torch.distributed as dist
tmp, gj, atcap = sys.argv[1], sys.argv[2], float(sys.argv[3])
caps = [tuple(map(float, l.split())) for l in open(f"{tmp}/caps")]
plans = {l.split()[0]: float(l.split()[1]) for l in open(f"{tmp}/plans")}
plan = lambda n: json.load(open(f"{tmp}/{n}/plan.json"))
grid_mb, grid = min(caps, key=lambda c: c[1])
assert len(caps) >= 8, caps
print("grid (MB, us):", caps)
print("plans by replay --plan (us):", plans)
# the walk alone: slower than the grid's best cap (else this case proves nothing)
assert plans["walk"] > grid + 1000, (plans["walk"], grid_mb, grid)
for n in ("walk", "prop", "dflt", "free"):
    p = plan(n)
    assert abs(p["predicted_iteration_us"] - plans[n]) < 0.0015, (n, p["predicted_iteration_us"], plans[n])
for n in ("prop", "dflt", "free"):   # never slower than a cap of the grid, nor than the walk alone
    assert plans[n] <= grid + 0.0015 and plans[n] <= plans["walk"] + 0.0015, (n, plans[n], grid, plans["walk"])
    s = plan(n)["search"]
    assert s["cap_groupings"] == 64, s["cap_groupings"]
# 40 evaluations: 20 proposals (evaluations 2-21), the other 44 priced after the search
p = plan("prop")
s = p["search"]
assert s["evaluations"] == 40 and s["cap_proposals"] == 20 and s["cap_evaluations"] == 44, s
assert s["history"][0]["evaluation"] == 1 and s["history"][1]["evaluation"] == 2, s["history"]
assert all(h["evaluation"] <= 40 for h in s["history"])
# a cap plan: torch's groups at its cap, priced as replay --bucket-mb prices that cap
cap = p["ddp"]["bucket_cap_mb"]
params = json.load(open(gj))["parameters"][::-1]
ts = [torch.empty(q["bytes"] // 4) for q in params]
idx, _ = dist._compute_bucket_assignment_by_size(ts, [dist._DEFAULT_FIRST_BUCKET_BYTES, int(cap * 1048576)])
assert p["ddp"]["groups"] == [[params[i]["name"] for i in b] for b in idx], "torch's groups at the cap differ"
assert abs(atcap - plans["prop"]) < 0.0015, (atcap, plans["prop"])
# here the fastest grouping (8.13 MB) is not among the 20 proposed: priced after the search, it won,
# and the search's own best is said, slower
assert s["outpriced_iteration_us"] is not None and s["outpriced_iteration_us"] > p["predicted_iteration_us"], s
assert "priced after the search" in open(f"{tmp}/prop.txt").read()
# 200 evaluations: every grouping proposed, none priced after
for n in ("dflt", "free"):
    s = plan(n)["search"]
    assert s["cap_proposals"] == 64 and s["cap_evaluations"] == 0 and s["outpriced_iteration_us"] is None, (n, s)
assert plan("dflt")["ddp"]["bucket_cap_mb"] is not None or plan("dflt")["apply_cost"]["plan_cost_us"] > 0
# deterministic: the same plan.json but the seconds
a, b = plan("prop"), plan("again")
a["search"].pop("seconds"); b["search"].pop("seconds")
assert a == b, "two runs of one seed and budget differ"
print("ok: walk alone %.3f ms, grid best %.3f ms (%g MB), with proposals %.3f ms (bucket_cap_mb=%g), "
      "default hook cost %.3f ms, hooks free at 200 %.3f ms" % (plans["walk"] / 1e3, grid / 1e3, grid_mb,
      plans["prop"] / 1e3, cap, plans["dflt"] / 1e3, plans["free"] / 1e3))
PY
