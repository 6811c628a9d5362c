#!/bin/sh
# trainscope diff on HTA's own trace-diff test data (kineto/trace_compare,
# base vs test, rank 1, ProfilerStep#1010). The expected values are HTA's,
# from its tests/test_trace_diff.py: the base iteration's CPU summary (6
# names, counts and total durations), the count-change categories (CPU: 5 =,
# 3 +, 1 -; GPU: 1 -) and ops_diff (added AddmmBackward0, All2All_Pooled_Req,
# CatBackward0; deleted nccl:all_reduce; 5 unchanged). HTA counts an added op
# as "+" and a removed one as "-".
set -e
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
D=${TS_DATA:-../shared/data}/kineto/trace_compare
[ -d "$D/base" ] && [ -d "$D/test" ] || { echo "skip: $D missing"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
"$BIN" diff --iteration 1010 --device cpu --format json "$D/base" "$D/test" >"$T/cpu.json"
"$BIN" diff --iteration 1010 --device gpu --format json "$D/base" "$D/test" >"$T/gpu.json"
"$BIN" diff --format csv "$D/base" "$D/base" >"$T/self.csv"
/usr/bin/python3 - "$T/cpu.json" "$T/gpu.json" "$T/self.csv" <<'PY'
import csv, json, sys
cpu = json.load(open(sys.argv[1]))["ranks"]
gpu = json.load(open(sys.argv[2]))["ranks"]
assert [r["rank"] for r in cpu] == [1] and cpu[0]["a_iteration"] == 1010 and cpu[0]["b_iteration"] == 1010
ops = {o["name"]: o for o in cpu[0]["ops"]}
base = {n: (o["a_count"], o["a_total_us"]) for n, o in ops.items() if o["a_count"]}
assert base == {"ProfilerStep#1010": (1, 122149), "aten::as_strided": (1, 0), "aten::empty": (1, 0),
                "cudaEventQuery": (1, 4), "cudaLaunchKernel": (1, 4), "nccl:all_reduce": (1, 67)}, base
sign = {"added": "+", "more": "+", "removed": "-", "fewer": "-", "same": "="}
cats = {}
for k, s in sign.items():
    if cpu[0][k]: cats[s] = cats.get(s, 0) + cpu[0][k]
assert cats == {"=": 5, "+": 3, "-": 1}, cats
by = lambda c: sorted(n for n, o in ops.items() if o["change"] == c)
assert by("added") == ["AddmmBackward0", "All2All_Pooled_Req", "CatBackward0"], by("added")
assert by("removed") == ["nccl:all_reduce"] and by("+") == [] and by("-") == []
assert by("=") == ["ProfilerStep#1010", "aten::as_strided", "aten::empty", "cudaEventQuery", "cudaLaunchKernel"]
assert gpu[0]["removed"] == 1 and sum(gpu[0][k] for k in sign) == 1, gpu[0]
rows = list(csv.DictReader(open(sys.argv[3])))
assert rows and all(r["change"] == "=" and int(r["diff_ns"]) == 0 for r in rows), rows[:2]
PY
# usage and missing data
if "$BIN" diff "$D/base" 2>"$T/err"; then exit 1; else [ $? = 2 ]; fi
grep -q "expected two traces" "$T/err"
if "$BIN" diff --whole --iteration 3 "$D/base" "$D/test" 2>/dev/null; then exit 1; else [ $? = 2 ]; fi
if "$BIN" diff --iteration 7 "$D/base" "$D/test" >"$T/out" 2>"$T/err"; then exit 1; else [ $? = 1 ]; fi
grep -q "rank 1 has no ProfilerStep#7" "$T/err"
echo ok
