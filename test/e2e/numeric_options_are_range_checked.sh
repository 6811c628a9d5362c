#!/bin/sh
# numeric_options_are_range_checked.sh - every numeric option of every
# command takes a number within its documented range, or is refused with
# exit 2 and a line naming the option; a what-if whose times would pass
# int64 is refused, never printed wrapped. Regressions of 2026-11-26
# (issue 26): --world -1 became 4294967295 and --world 99999999999
# 1215752191; --scale 'cpu:*=1e12' predicted -3080 s with exit 0.
set -u
BIN=${TS_BIN:-build/trainscope}
EX=examples/ddp_gloo
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
FX="$T/fwd.py $T/bwd.py"
cat >"$T/fwd.py" <<'PY'
class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[4, 4]", primals_2: "f32[4, 4]"):
        mm: "f32[4, 4]" = torch.ops.aten.mm.default(primals_2, primals_1)
        return [mm, primals_1, primals_2]
PY
cat >"$T/bwd.py" <<'PY'
class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[4, 4]", primals_2: "f32[4, 4]", tangents_1: "f32[4, 4]"):
        mm_1: "f32[4, 4]" = torch.ops.aten.mm.default(tangents_1, primals_1)
        return [None, mm_1]
PY
"$BIN" memory $FX >/dev/null || { echo "the small fx pair does not load"; exit 1; }
fails=0
# bad CMD OPTION VALUE [INPUTS...]: exit 2 and one stderr line naming OPTION.
bad() {
    cmd=$1 opt=$2 val=$3; shift 3
    "$BIN" "$cmd" "$opt" "$val" "$@" >"$T/out" 2>"$T/err"; rc=$?
    if [ $rc -ne 2 ] || [ "$(wc -l <"$T/err")" -ne 1 ] || ! grep -q -- "$opt" "$T/err" || [ -s "$T/out" ]; then
        echo "FAIL $cmd $opt $val: exit $rc"; cat "$T/err"; fails=$((fails+1))
    else echo "ok $cmd $opt $val: $(cat "$T/err")"; fi
}
TR="$EX/rank0.json $EX/rank1.json"
for v in -1 99999999999999999999 1x ""; do
    bad stats --top "$v" $TR
    bad breakdown --top "$v" $TR
    bad critical-path --top "$v" $TR
    bad memory --top "$v" $FX
    bad memory --batch "$v" $FX
    bad replay --iterations "$v" $TR
done
for v in -1 99999999999 0; do bad replay --world "$v" $TR; done
for v in 1:99999999999999999999 99999999999999999999: 3:1 x; do
    bad stats --iterations "$v" $TR
    bad breakdown --iterations "$v" $TR
done
for v in 0 -5 99999999999999999999 3600000000001; do bad breakdown --kernel-delay "$v" $TR; done
for v in -1 99999999999999999999; do bad critical-path --iteration "$v" $TR; done
for v in 0 -1 1e30 nan inf; do
    bad replay --bucket-mb "$v" $TR
    bad replay --trace-bucket-mb "$v" $TR
done
for v in 0 1e-300 1e30 nan; do
    bad replay --bandwidth "$v" $TR
    bad memory --bandwidth "$v" $FX
    bad memory --peak-tflops "$v" --bandwidth-gbps 1 $FX
    bad memory --bandwidth-gbps "$v" --peak-tflops 1 $FX
done
for v in -5 1e30 nan; do bad replay --latency-us "$v" --bandwidth 10 $TR; done
for v in -1 99999999999; do bad stats --width "$v" $TR; done

# A factor that takes one op past 2^62 ns, and one that takes no op there
# but the whole iteration: both refused, with the reason.
for f in 1e12 5e10; do
    "$BIN" replay --scale "cpu:*=$f" $TR >"$T/out" 2>"$T/err"; rc=$?
    if [ $rc -ne 2 ] || ! grep -q "past \(the \)\{0,1\}2^62 ns" "$T/err" || [ -s "$T/out" ]; then
        echo "FAIL --scale cpu:*=$f: exit $rc"; cat "$T/out" "$T/err"; fails=$((fails+1))
    else echo "ok --scale cpu:*=$f: $(cat "$T/err")"; fi
done
# Roofline times of a slow device that add up past 2^62 ns: refused.
sed 's/4, 4/1000000, 1000000/g' "$T/bwd.py" >"$T/big_bwd.py"
sed -e 's/4, 4/1000000, 1000000/g' -e 's/return \[mm,/mm_2: "f32[1000000, 1000000]" = torch.ops.aten.mm.default(mm, primals_1)\n        return [mm_2,/' \
    "$T/fwd.py" >"$T/big_fwd.py"
"$BIN" memory --peak-tflops 1e-3 --bandwidth-gbps 1e-3 "$T/big_fwd.py" "$T/big_bwd.py" >"$T/out" 2>"$T/err"; rc=$?
if [ $rc -ne 2 ] || ! grep -q "kernel times add up past 2^62 ns" "$T/err" || [ -s "$T/out" ]; then
    echo "FAIL memory roofline past 2^62 ns: exit $rc"; cat "$T/out" "$T/err"; fails=$((fails+1))
else echo "ok memory roofline past 2^62 ns: $(cat "$T/err")"; fi
# In range, the largest values still run.
"$BIN" replay --iterations 4294967295 --scale 'cpu:*=1000' $TR >/dev/null &&
    "$BIN" memory --top 4294967295 --batch 4294967295 --bandwidth 1e6 --peak-tflops 1e-3 --bandwidth-gbps 1e-3 $FX |
    grep -q "batch 4294967295" || { echo "FAIL: in-range values refused"; fails=$((fails+1)); }
exit $fails
