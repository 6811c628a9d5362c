#!/bin/sh
# optimize_no_change.sh - a plan equal to the trace's own buckets is written as
# no change (issue 22), and a plan is written as bucket_cap_mb exactly when a
# cap gives it, on real 2-rank gloo DDP traces of examples/testbed.
# The reference is torch's own bucketing, independent of trainscope:
# torch.distributed._compute_bucket_assignment_by_size (what DDP's reducer
# calls when it rebuilds its buckets after the first step) over gradients.json
# in reverse (the order the gradients become ready in these sequential models),
# with DDP's 1 MiB first bucket and the cap.
#  - cnn at 50 Mbit/s (exhaustive search: no grouping is predicted faster) and
#    wide at 400 Mbit/s, both traced at DDP's default: the table says "no change:
#    keep DDP's default (bucket_cap_mb=25", plan.json has no_change, gain 0, no
#    edits, bucket_cap_mb 25, torch's 25 MB groups; no ddp_hook.py; exit 0;
#  - mlp traced at bucket_cap_mb=1, no change: torch's 1 MiB buckets, the cap named;
#  - wide at 50 Mbit/s: a plan a cap gives: torch at that cap gives the plan's
#    groups, and no ddp_hook.py;
#  - mlp at 200 Mbit/s: a plan no cap gives (torch tried at every cap where its
#    grouping can change): ddp_hook.py, bucket_cap_mb null.
. test/testbed_e2e.sh
run cnn50 cnn_w2_r50_b25 cnn --budget 4096 --search exhaustive
run wide400 wide_w2_r400_b25 wide
run mlp1 mlp_w2_r200_b1 mlp
run wide50 wide_w2_r50_b25 wide
run mlp200 mlp_w2_r200_b25 mlp --hook-cost-ms 0   # the hook form itself, whatever a hook costs

/usr/bin/python3 - "$TMP" "$E" <<'PY' || exit 1
import json, os, sys
import torch, torch.distributed as dist
tmp, e = sys.argv[1:]
MiB = 1048576

def ready(model):
    return json.load(open(f"{e}/gradients/{model}.json"))["parameters"][::-1]

def torch_groups(params, cap):
    ts = [torch.empty(p["bytes"] // 4, dtype=getattr(torch, p["dtype"])) for p in params]
    idx, _ = dist._compute_bucket_assignment_by_size(ts, [dist._DEFAULT_FIRST_BUCKET_BYTES, int(cap)])
    return [[params[i]["name"] for i in b] for b in idx]

def plan(name):
    return json.load(open(f"{tmp}/{name}/plan.json"))

def hook(name):
    return os.path.exists(f"{tmp}/{name}/ddp_hook.py")

def no_change(name, model, cap, words):
    p, table = plan(name), open(f"{tmp}/{name}.txt").read()
    assert p["no_change"] is True, (name, p["no_change"])
    assert p["predicted_gain_pct"] == 0 and p["edits"] == [], (name, p["predicted_gain_pct"], p["edits"])
    assert p["predicted_iteration_us"] == p["baseline_iteration_us"], name
    assert p["ddp"]["bucket_cap_mb"] == cap, (name, p["ddp"]["bucket_cap_mb"])
    assert p["ddp"]["groups"] == torch_groups(ready(model), cap * MiB), (name, p["ddp"]["groups"])
    assert not hook(name), f"{name}: ddp_hook.py for a plan of no change"
    assert words in table, (name, table)
    assert p["changes"] == [l for l in table.splitlines() if l.startswith("no change")], (name, p["changes"])

no_change("cnn50", "cnn", 25, "no change: keep DDP's default (bucket_cap_mb=25, 2 buckets)")
assert plan("cnn50")["search"]["kind"] == "exhaustive"
no_change("wide400", "wide", 25, "no change: keep DDP's default (bucket_cap_mb=25, 2 buckets)")
no_change("mlp1", "mlp", 1, "no change: keep the traced buckets (bucket_cap_mb=1 gives them")

# a plan a cap gives: torch's bucketing at that cap is the plan, no hook
p = plan("wide50")
assert p["no_change"] is False and p["predicted_gain_pct"] > 0, p["predicted_gain_pct"]
cap = p["ddp"]["bucket_cap_mb"]
assert cap is not None and not hook("wide50"), cap
assert p["ddp"]["groups"] == torch_groups(ready("wide"), cap * MiB), p["ddp"]["groups"]
assert p["ddp"]["groups"] != torch_groups(ready("wide"), 25 * MiB)
assert f"set DDP bucket_cap_mb={cap:g}" in open(f"{tmp}/wide50.txt").read()

# a plan no cap gives: DDP's grouping changes only where the cap crosses the sum of a run of
# consecutive gradients, so trying each such sum and one byte above covers every cap
p = plan("mlp200")
params = ready("mlp")
sums = {sum(q["bytes"] for q in params[i:j]) for i in range(len(params)) for j in range(i + 1, len(params) + 1)}
caps = sorted({c + d for c in sums for d in (0, 1)})
assert p["no_change"] is False and p["ddp"]["bucket_cap_mb"] is None and hook("mlp200")
assert all(torch_groups(params, c) != p["ddp"]["groups"] for c in caps), "a cap gives the hook's groups"
print("ok: 3 plans of no change, 1 cap plan, 1 hook plan (%d caps tried)" % len(caps))
PY
