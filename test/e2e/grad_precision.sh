#!/bin/sh
# grad_precision.sh - `trainscope replay --grad-precision` on the committed
# testbed runs (examples/testbed-gradprec: 2 gloo DDP ranks, mlp, 25 MB
# buckets, DDP's fp16 compress hook on and off):
#   * every window's gradient all-reduces are sized from gradients.json (2
#     DDP buckets x 4 profiled steps = 8, counted from the settings file's
#     "buckets" by python) and priced at 2 bytes an element;
#   * with --cast-cost 0,0 the what-if is faster than the plain replay, and
#     a cost of 1 ms a pass (3 passes a bucket) slower than that, still
#     faster than plain;
#   * bad input: no cast cost, a cast trace without casts, fp32, no sizes:
#     one line saying what to give, exit 2 (1 when nothing can be priced).
set -u
BIN=${TS_BIN:-build/trainscope}
D=$(dirname "$0")/../../examples/testbed-gradprec
W=$D/traces/mlp_w2_r100_b25/round0
G=$D/gradients/mlp.json
[ -f "$G" ] && [ -d "$W" ] || { echo "skip: no $D"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails+1)); }

"$BIN" replay --format json --gradients "$G" --grad-precision fp16 --cast-cost 0,0 "$W" > "$T/hook.json" 2>/dev/null ||
    fail "grad-precision (rc $?)"
"$BIN" replay --format json "$W" > "$T/plain.json" 2>/dev/null || fail "plain replay (rc $?)"
"$BIN" replay --format json --gradients "$G" --grad-precision fp16 --cast-cost 0,1000000 "$W" > "$T/cast.json" \
    2>/dev/null || fail "grad-precision with casts (rc $?)"
python3 - "$T" "$D/settings/mlp_w2_r100_b25.json" <<'PY' || fails=$((fails+1))
import json, sys
t, s = sys.argv[1], json.load(open(sys.argv[2]))
h, p, c = (json.load(open("%s/%s.json" % (t, n))) for n in ("hook", "plain", "cast"))
want = len(s["buckets"]) * 4
warn = [w["first"] for w in h.get("warnings", []) if "gradient all-reduces at 2 bytes" in w["first"]]
got = int(warn[0].split("--grad-precision: ")[1].split()[0]) if warn else -1
ok = got == want and h["predicted_iteration_us"] < c["predicted_iteration_us"] < p["predicted_iteration_us"]
print(("ok" if ok else "FAIL") + " %d buckets at 2 bytes (want %d): %.1f ms, plain %.1f, with 1 ms a pass %.1f" % (
    got, want, h["predicted_iteration_us"] / 1e3, p["predicted_iteration_us"] / 1e3, c["predicted_iteration_us"] / 1e3))
sys.exit(0 if ok else 1)
PY

expect() {
    name=$1 rc_want=$2 pat=$3; shift 3
    "$BIN" replay "$@" >"$T/out" 2>"$T/err"; rc=$?
    if [ $rc -ne "$rc_want" ] || ! grep -q "$pat" "$T/err" || [ -s "$T/out" ]; then
        fail "$name (rc $rc): $(cat "$T/err")"
    else echo "ok $name: $(tail -1 "$T/err")"; fi
}
expect no_cast_cost 2 "give --cast-trace RUN" --grad-precision fp16 --gradients "$G" "$W"
expect no_casts 2 "rank0.json.zst: fewer than two casts" --grad-precision fp16 --gradients "$G" --cast-trace "$W/rank0.json.zst" "$W"
expect fp32 2 "takes bf16, fp16 or int8, not 'fp32'" --grad-precision fp32 --cast-cost 0,0 "$W"
expect no_sizes 1 "give --gradients gradients.json" --grad-precision fp16 --cast-cost 0,0 "$W"
exit $fails
