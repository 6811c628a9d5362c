#!/bin/sh
# replay_precision.sh - `trainscope replay --precision-plan/--precision-greedy`
# on the committed ground truth (bench/precision/, real torch 1.13 runs):
#   * the fp32 plan gives back the fp32 run: its step is the 20% trimmed mean
#     of the trace's ProfilerStep spans and its peak the memory the ground-truth
#     script summed from the profiler's records (both computed by python here
#     or there, not by trainscope);
#   * a greedy plan, written out, is read back by --precision-plan and
#     predicts the same step;
#   * bad input: runs of two models, a plan naming an op the run lacks, a plan
#     at a precision no run was given for, a memory limit below what the
#     weights alone take: one line naming the file (and line or op), exit 2.
set -u
BIN=${TS_BIN:-build/trainscope}
G=$(dirname "$0")/../../bench/precision
[ -f "$G/mlp_fp32.json.gz" ] || { echo "skip: no $G"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails+1)); }

"$BIN" replay --format json --precision-plan "$G/mlp_fp32.plan" --precision-trace "bf16=$G/mlp_bf16.json.gz" \
    "$G/mlp_fp32.json.gz" > "$T/fp32.json" || fail "fp32 plan (rc $?)"
python3 - "$G" "$T/fp32.json" <<'PY' || fails=$((fails+1))
import gzip, json, sys
def trimmed_mean(v):   # the 20% trimmed mean: the lowest and highest len/5 dropped
    v = sorted(v)
    c = len(v) // 5
    return sum(v[c:len(v) - c]) / (len(v) - 2 * c)
g, out = sys.argv[1], json.load(open(sys.argv[2]))
ev = json.load(gzip.open(g + "/mlp_fp32.json.gz", "rt"))["traceEvents"]
steps = [e["dur"] for e in ev if e["name"].startswith("ProfilerStep#")]
want = trimmed_mean(steps)
peak = json.load(open(g + "/measured.json"))["cases"]["mlp/fp32"]["peak_bytes"]
ok = abs(out["predicted_iteration_us"] - want) < 0.002 and out["predicted_iteration_us"] == out["fp32_iteration_us"]
ok = ok and out["predicted_peak_bytes"] == peak and out["casts"] == 0
print(("ok" if ok else "FAIL") + " fp32 plan: %.3f us (trimmed mean step %.3f), peak %d B (measured %d)" % (
    out["predicted_iteration_us"], want, out["predicted_peak_bytes"], peak))
sys.exit(0 if ok else 1)
PY

"$BIN" replay --precision-greedy --granularity op --accuracy-budget 4 --precision-trace "bf16=$G/attn_bf16.json.gz" \
    "$G/attn_fp32.json.gz" > "$T/greedy.txt" || fail "greedy (rc $?)"
cp "$T/greedy.txt" "$T/greedy.plan"   # the greedy's whole output is a plan file
[ "$(grep -c ' bf16 ' "$T/greedy.plan")" -eq 4 ] || fail "greedy lowered $(grep -c ' bf16 ' "$T/greedy.plan") ops, budget 4"
"$BIN" replay --precision-plan "$T/greedy.plan" --precision-trace "bf16=$G/attn_bf16.json.gz" \
    "$G/attn_fp32.json.gz" > "$T/back.txt" || fail "greedy plan read back (rc $?)"
[ "$(sed -n 's/^# predicted iteration/predicted iteration/p' "$T/greedy.txt")" = "$(grep '^predicted iteration' "$T/back.txt")" ] &&
    echo "ok greedy plan read back: $(grep '^predicted iteration' "$T/back.txt")" || fail "greedy plan predicts differently"

# per module (the default): budget 4 lowers 4 of attn's 8 modules whole (every op the fp32 run has
# in them, counted here from plan.json's units), nothing outside a module
"$BIN" optimize --passes precision --accuracy-budget 4 --precision-trace "bf16=$G/attn_bf16.json.gz" \
    "$G/attn_fp32.json.gz" -o "$T/bymod" > /dev/null || fail "optimize per module (rc $?)"
"$BIN" replay --precision-greedy --accuracy-budget 4 --precision-trace "bf16=$G/attn_bf16.json.gz" \
    "$G/attn_fp32.json.gz" > "$T/bymod.plan" || fail "greedy per module (rc $?)"
python3 - "$T/bymod/plan.json" "$T/bymod.plan" <<'PY' || fails=$((fails+1))
import json, re, sys
units = json.load(open(sys.argv[1]))["precision"]["units"]
mods = {u["scope"] for u in units if re.fullmatch(r"[A-Za-z0-9_.]+", u["scope"] or "")}
low = {int(m.group(1)) for m in re.finditer(r"^op:(\d+) bf16", open(sys.argv[2]).read(), re.M)}
low_mods = {units[i]["scope"] for i in low}
whole = all((i in low) == (u["scope"] in low_mods) for i, u in enumerate(units))
ok = len(mods) == 8 and len(low_mods) == 4 and low_mods <= mods and whole
print(("ok" if ok else "FAIL") + " per module: %d ops of modules %s lowered, whole: %s (of %d modules)" % (
    len(low), sorted(low_mods), whole, len(mods)))
sys.exit(0 if ok else 1)
PY

# expect NAME PATTERN ARGS...: exit 2, one stderr line matching PATTERN, nothing on stdout
expect() {
    name=$1 pat=$2; shift 2
    "$BIN" replay "$@" >"$T/out" 2>"$T/err"; rc=$?
    if [ $rc -ne 2 ] || [ "$(wc -l < "$T/err")" -ne 1 ] || ! grep -q "$pat" "$T/err" || [ -s "$T/out" ]; then
        fail "$name (rc $rc): $(cat "$T/err")"
    else echo "ok $name: $(cat "$T/err")"; fi
}
expect two_models "cnn_bf16.json.gz: iteration 0: forward op [0-9]* '[^']*' in conv1 has no counterpart in .*mlp_fp32.json.gz.*cannot be mapped" \
    --precision-plan "$G/mlp_bf16.plan" --precision-trace "bf16=$G/cnn_bf16.json.gz" "$G/mlp_fp32.json.gz"
printf 'name:fc1 bf16\naten::conv2d bf16\n' > "$T/absent.plan"
expect absent_op "absent.plan:2: 'aten::conv2d' matches no op" \
    --precision-plan "$T/absent.plan" --precision-trace "bf16=$G/mlp_bf16.json.gz" "$G/mlp_fp32.json.gz"
expect no_fp16_run "mlp_fp16.plan\|:1: no fp16 run" --precision-plan /dev/stdin "$G/mlp_fp32.json.gz" <<'P'
* fp16
P
expect below_weights "memory-limit 0.001 GiB is below the 0.00.* GiB that the weights, buffers and batch take alone" \
    --precision-greedy --memory-limit 0.001 --precision-trace "bf16=$G/mlp_bf16.json.gz" "$G/mlp_fp32.json.gz"
expect no_plan_fits "no plan within the accuracy budget fits 0.0058 GiB (the closest plan peaks at 0.006" \
    --precision-greedy --memory-limit 0.0058 --accuracy-budget 1 --precision-trace "bf16=$G/mlp_bf16.json.gz" "$G/mlp_fp32.json.gz"
# runs without module ranges (the modules' record_function slices dropped here): per module
# nothing can be lowered, refused naming the way out
for p in fp32 bf16; do
    python3 - "$G/mlp_$p.json.gz" "$T/nomod_$p.json.gz" <<'PY'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1], "rt"))
d["traceEvents"] = [e for e in d["traceEvents"] if "::" in e.get("name", "") or e.get("ph") != "X"
                    or e["name"].startswith("ProfilerStep#")]
json.dump(d, gzip.open(sys.argv[2], "wt"))
PY
done
expect no_modules "no op of the fp32 run is inside a module's record_function range.*--granularity op" \
    --precision-greedy --precision-trace "bf16=$T/nomod_bf16.json.gz" "$T/nomod_fp32.json.gz"
expect bad_trace_option "precision-trace wants P=RUN" --precision-plan "$T/absent.plan" --precision-trace "fp33=x" "$G/mlp_fp32.json.gz"
exit $fails
