#!/bin/sh
# optimize_precision.sh - `trainscope optimize --passes precision` on the
# committed ground truth (bench/precision/, real torch 1.13 runs):
#   * plan.json's "before" is the fp32 run's step (20% trimmed mean), computed here by
#     python from the trace's ProfilerStep spans (not by trainscope);
#   * the greedy.plan it writes is the plan `replay --precision-greedy` prints
#     for the same runs and budget, and `replay --plan plan.json` (run from
#     another folder: the runs are recorded as absolute paths) predicts what
#     optimize printed;
#   * with a torch autocast list naming only matmul, every op lowered is an
#     aten::matmul (checked by python on plan.json), and amp_priorlist.txt
#     lists exactly the ops lowered;
#   * bad input: a list naming no op of the run, a pass mixed with the graph
#     passes, a plan.json replayed on another model: one line naming the file
#     (and line, unit or byte), exit 2, nothing written.
set -u
BIN=${TS_BIN:-build/trainscope}
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
G=$(cd "$(dirname "$0")/../../bench/precision" 2>/dev/null && pwd)
[ -n "$G" ] && [ -f "$G/attn_fp32.json.gz" ] || { echo "skip: no bench/precision ground truth"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails+1)); }

"$BIN" optimize --passes precision --granularity op --accuracy-budget 4 --precision-trace "bf16=$G/attn_bf16.json.gz" \
    "$G/attn_fp32.json.gz" -o "$T/plan" > "$T/opt.txt" || fail "optimize (rc $?)"
python3 - "$G" "$T/plan/plan.json" <<'PY' || fails=$((fails+1))
import gzip, json, sys
def trimmed_mean(v):   # the 20% trimmed mean: the lowest and highest len/5 dropped
    v = sorted(v)
    c = len(v) // 5
    return sum(v[c:len(v) - c]) / (len(v) - 2 * c)
g, plan = sys.argv[1], json.load(open(sys.argv[2]))
ev = json.load(gzip.open(g + "/attn_fp32.json.gz", "rt"))["traceEvents"]
want = trimmed_mean(e["dur"] for e in ev if e["name"].startswith("ProfilerStep#"))
p = plan["precision"]
low = [u for u in p["units"] if u["precision"] == "bf16"]
ok = abs(p["before"]["iteration_us"] - want) < 0.002 and len(low) == 4 and p["n_lowered"] == 4
ok = ok and plan["passes"] == ["precision"] and p["after"]["iteration_us"] < p["before"]["iteration_us"]
print(("ok" if ok else "FAIL") + " plan.json: before %.3f us (trimmed mean step %.3f), %d lowered (budget 4), after %.3f us"
      % (p["before"]["iteration_us"], want, len(low), p["after"]["iteration_us"]))
sys.exit(0 if ok else 1)
PY
"$BIN" replay --precision-greedy --granularity op --accuracy-budget 4 --precision-trace "bf16=$G/attn_bf16.json.gz" \
    "$G/attn_fp32.json.gz" | grep -v '^#' > "$T/greedy_replay.txt"
grep -v '^#' "$T/plan/greedy.plan" | cmp -s - "$T/greedy_replay.txt" && echo "ok greedy.plan is replay --precision-greedy's plan" ||
    fail "greedy.plan differs from replay --precision-greedy's"
(cd "$T" && "$BIN" replay --plan plan/plan.json) > "$T/back.txt" 2>/dev/null || fail "replay --plan (rc $?)"
want=$(sed -n 's/^predicted iteration [0-9.]* ms -> \([0-9.]*\) ms.*/\1/p' "$T/opt.txt")
got=$(sed -n 's/^predicted iteration \([0-9.]*\) ms.*/\1/p' "$T/back.txt")
[ -n "$want" ] && [ "$want" = "$got" ] && echo "ok replay --plan re-predicts $got ms" || fail "replay --plan: $got ms, optimize $want ms"

printf '# torch autocast: ops that may run in lower precision\nmatmul\n' > "$T/allow.txt"
"$BIN" optimize --passes precision --granularity op --allow-list "$T/allow.txt" --precision-trace "bf16=$G/attn_bf16.json.gz" \
    "$G/attn_fp32.json.gz" -o "$T/allow" > /dev/null || fail "optimize --allow-list (rc $?)"
python3 - "$T/allow" <<'PY' || fails=$((fails+1))
import json, sys
d = sys.argv[1]
p = json.load(open(d + "/plan.json"))["precision"]
low = [u["op"] for u in p["units"] if u["precision"] != "fp32"]
may = [u["op"] for u in p["units"] if u["may_change"]]
lst = open(d + "/amp_priorlist.txt").read().split()
ok = low and set(low) == {"aten::matmul"} and set(may) == {"aten::matmul"} and lst == ["aten::matmul"]
print(("ok" if ok else "FAIL") + " allow list: lowered %s of %d that may change; amp_priorlist %s" % (low, len(may), lst))
sys.exit(0 if ok else 1)
PY

# expect NAME PATTERN ARGS...: exit 2, one stderr line matching PATTERN, nothing on stdout
expect() {
    name=$1 pat=$2; shift 2
    "$BIN" "$@" >"$T/out" 2>"$T/err"; rc=$?
    if [ $rc -ne 2 ] || [ "$(wc -l < "$T/err")" -ne 1 ] || ! grep -q "$pat" "$T/err" || [ -s "$T/out" ]; then
        fail "$name (rc $rc): $(cat "$T/err")"
    else echo "ok $name: $(cat "$T/err")"; fi
}
printf 'Conv2D\nBatchMatMulV2\n' > "$T/tf.txt"
expect list_names_nothing "tf.txt: none of its 2 op names is an op of the fp32 run" optimize --passes precision \
    --allow-list "$T/tf.txt" --precision-trace "bf16=$G/attn_bf16.json.gz" "$G/attn_fp32.json.gz" -o "$T/none"
[ -e "$T/none" ] && fail "a refused plan left $T/none"
expect bad_granularity "granularity takes module or op, not 'layer'" optimize --passes precision \
    --granularity layer --precision-trace "bf16=$G/attn_bf16.json.gz" "$G/attn_fp32.json.gz"
expect mixed_passes "passes precision runs alone" optimize --passes precision,tensor-fusion \
    --precision-trace "bf16=$G/attn_bf16.json.gz" "$G/attn_fp32.json.gz"
expect other_model "plan.json: byte [0-9]*: unit [0-9]* is aten::.* in the plan, aten::.* in the fp32 run" replay \
    --plan "$T/plan/plan.json" --precision-trace "bf16=$G/mlp_bf16.json.gz" "$G/mlp_fp32.json.gz"
exit $fails
