#!/bin/sh
# optimize_from_opfs.sh - `optimize --from-opfs cluster_mapping.txt` (dPRO's
# from_opfs2tsfs) on the 2-rank gloo DDP trace of a 12-layer transformer with
# one all-reduce per gradient (bench/data/optimize_transformer12): the
# gradients an op of a cluster produces share one all-reduce group, every
# other gradient is alone. The expected groups come from the trace JSON read
# here in Python (rank 0, ProfilerStep#0: each AccumulateGrad's producer is
# the autograd function before it on its thread; the k-th AccumulateGrad is
# the k-th gradient of gradients.json reversed) and the file's names. A
# mapping naming an op the trace lacks, or a malformed one, exits 2.
BIN=${TS_BIN:-build/trainscope}
B=bench/data/optimize_transformer12
[ -d "$B/trace" ] || { echo "skip: $B not here (run from the repository root)"; exit 77; }
[ -x /usr/bin/python3 ] && command -v zstdcat > /dev/null || { echo "skip: python3 or zstdcat absent"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

LN="autograd::engine::evaluate_function: NativeLayerNormBackward0"
printf '# cluster_mapping.txt\n%s 7\n' "$LN" > "$TMP/map.txt"
"$BIN" optimize "$B/trace" --gradients "$B/gradients.json" --from-opfs "$TMP/map.txt" -o "$TMP/o" > "$TMP/out.txt" \
    || fail "exited $? ($(cat "$TMP/out.txt"))"
zstdcat "$B/trace/rank0.json.zst" > "$TMP/rank0.json" || fail "zstdcat"
/usr/bin/python3 - "$B/gradients.json" "$TMP/o" "$LN" "$TMP/rank0.json" <<'PY' || exit 1
import json, sys
grads, out, ln = sys.argv[1], sys.argv[2], sys.argv[3]
d = json.load(open(sys.argv[4]))
ev = [e for e in (d["traceEvents"] if isinstance(d, dict) else d) if e.get("ph") == "X"]
step = min((e for e in ev if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
inside = [e for e in ev if step["ts"] <= e["ts"] < step["ts"] + step["dur"]]
ACC = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
acc = sorted((e for e in inside if e["name"] == ACC), key=lambda e: e["ts"])
lane = sorted((e for e in inside if e["tid"] == acc[0]["tid"] and e["pid"] == acc[0]["pid"]
               and e["name"].startswith("autograd::engine::evaluate_function: ")), key=lambda e: e["ts"])
first_ln = next(e for e in lane if e["name"] == ln)
prod = {}
last = None
for e in lane:
    if e["name"] == ACC: prod[id(e)] = last
    else: last = e
names = [p["name"] for p in json.load(open(grads))["parameters"]][::-1]   # reduction order
assert len(acc) == len(names), (len(acc), len(names))
want = [names[k] for k, e in enumerate(acc) if prod[id(e)] is first_ln]
assert len(want) == 2, want                 # LayerNorm: weight and bias
lines = [l.rstrip("\n") for l in open(f"{out}/tensor_groups.txt")]
fused = [l for l in lines if "+" in l]
assert fused == ["+".join(n for n in names if n in want)], (fused, want)
assert len(lines) == len(names) - 1, len(lines)
plan = json.load(open(f"{out}/plan.json"))
assert plan["search"]["kind"] == "from-opfs" and plan["buckets_after"] == len(names) - 1, plan["search"]
PY
grep -q "search: from-opfs" "$TMP/out.txt" || fail "table: $(cat "$TMP/out.txt")"

# horovod.env: Horovod's FuseResponses packing (in order, while the sum stays <= T), run here
/usr/bin/python3 - "$B/gradients.json" "$TMP/o" <<'PY' || exit 1
import json, sys
ps = json.load(open(sys.argv[1]))["parameters"][::-1]
size = {p["name"]: p["bytes"] for p in ps}
groups = [l.rstrip("\n").split("+") for l in open(f"{sys.argv[2]}/tensor_groups.txt")]
env = open(f"{sys.argv[2]}/horovod.env").read()
T = int(env.split("HOROVOD_FUSION_THRESHOLD=")[1].split()[0])
assert "HOROVOD_CYCLE_TIME=" in env
def horovod(T):
    out, cur, fill = [], [], 0
    for p in ps:
        if cur and fill + p["bytes"] > T: out.append(cur); cur, fill = [], 0
        cur.append(p["name"]); fill += p["bytes"]
    return out + [cur]
sums = [sum(size[n] for n in g) for g in groups]
if "No threshold" in env:
    assert T == max(sums), (T, max(sums))
    lo = max(sums); hi = min(sums[j] + size[groups[j + 1][0]] - 1 for j in range(len(groups) - 1))
    assert lo > hi, "a threshold exists but the file says none"
else:
    assert horovod(T) == groups, "the threshold does not give the plan's groups"
PY

expect() { want=$1; shift; "$@" > "$TMP/out" 2> "$TMP/err"; got=$?
    [ "$got" = "$want" ] || fail "exit $got, wanted $want: $* ($(cat "$TMP/err"))"
    [ "$want" = 0 ] || [ -s "$TMP/err" ] || fail "no message: $*"; }
printf '%s 1\nautograd::engine::evaluate_function: GatherBackward0 1\n' "$LN" > "$TMP/other.txt"
expect 2 "$BIN" optimize "$B/trace" --gradients "$B/gradients.json" --from-opfs "$TMP/other.txt" -o "$TMP/bad"
grep -q "other.txt: line 1: op '$LN' (cluster 1) is not in the trace" "$TMP/err" || fail "message: $(cat "$TMP/err")"
[ ! -e "$TMP/bad" ] || fail "partial output"
printf '%s\n' "$LN" > "$TMP/noid.txt"
expect 2 "$BIN" optimize "$B/trace" --gradients "$B/gradients.json" --from-opfs "$TMP/noid.txt"
grep -q "noid.txt: line 1: expected 'op_name cluster_id'" "$TMP/err" || fail "message: $(cat "$TMP/err")"
expect 2 "$BIN" optimize "$B/trace" --gradients "$B/gradients.json" --from-opfs "$TMP/map.txt" --passes op-fusion
echo "ok"
