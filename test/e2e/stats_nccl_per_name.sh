#!/bin/sh
# stats on a real DDP NCCL rank (HTA test data nccl_data.json.gz). Expected
# numbers computed once with the stats() function of
#   /usr/bin/python3 test/e2e/breakdown_hta_reference.py FILE aten::conv2d
# (slices by name whose start lies in the ProfilerStep window, exact decimal
# timestamps; median and sample stddev from Python's statistics module).
set -e
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
F=$DATA/kineto/nccl_parser_config/nccl_data.json.gz
[ -f "$F" ] || { echo "skip: $F missing"; exit 77; }
OUT=$(mktemp); trap 'rm -f "$OUT"' EXIT
"$BIN" stats --format json "$F" >"$OUT"
/usr/bin/python3 - "$OUT" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w = d["ranks"][0]
assert w["iterations"] == 3 and abs(w["window_us"] - 667225.958) < 0.002, w   # ProfilerStep#4..#6
rows = {(r["category"], r["name"]): r for r in d["rows"]}
c = rows[("cpu_op", "aten::conv2d")]
assert c["count"] == 159 and abs(c["total_us"] - 52250.432) < 0.002, c
assert abs(c["median_us"] - 325.491) < 0.002 and abs(c["stddev_us"] - 24.065) < 0.002, c
assert abs(c["pct_of_iteration"] - 100 * 52250.432 / 667225.958) < 0.002, c
# collectives: c10d ops, record_param_comms and NCCL kernels, apart from ops and kernels
assert ("collective", "c10d::allreduce_") in rows and ("collective", "record_param_comms") in rows
assert any(k[0] == "collective" and k[1].startswith("ncclKernel_AllReduce") for k in rows)
assert not any(k[0] == "kernel" and k[1].startswith("ncclKernel") for k in rows)
for cat in ("cpu_op", "kernel", "memcpy", "memset", "runtime", "collective"):
    assert any(k[0] == cat for k in rows), cat
print("ok")
PY
# --iterations 5:5: ProfilerStep#5 alone is 219726.905 us; 53 conv2d in it,
# 17327.097 us in all, median 323.074 us (same script, window = step 5).
"$BIN" stats --iterations 5:5 --format json "$F" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["ranks"][0]["iterations"] == 1 and abs(d["ranks"][0]["window_us"] - 219726.905) < 0.002
c = [r for r in d["rows"] if r["name"] == "aten::conv2d"][0]
assert c["count"] == 53 and abs(c["total_us"] - 17327.097) < 0.002 and abs(c["median_us"] - 323.074) < 0.002, c
'
# --iteration-marker: the three host "DistributedDataParallel.forward"
# annotations (ts 4458676417616.348 .. 4458676859778.087 + 102331.787 us in
# the file) span 544493.526 us; their GPU-timeline copies do not count.
"$BIN" stats --iteration-marker DistributedDataParallel.forward --format json "$F" | /usr/bin/python3 -c '
import json, sys
w = json.load(sys.stdin)["ranks"][0]
assert w["iterations"] == 3 and abs(w["window_us"] - 544493.526) < 0.002, w
'
# --top 2 keeps at most two rows per category (memcpy and memset have one name each)
N=$("$BIN" stats --top 2 --format csv "$F" | tail -n +2 | cut -d, -f2 | sort | uniq -c | awk '$1 > 2' | wc -l)
[ "$N" -eq 0 ] || { echo "--top 2 left a category with more than 2 rows"; exit 1; }
[ "$("$BIN" stats --top 2 --format csv "$F" | grep -c '^0,cpu_op,')" -eq 2 ] || { echo "--top 2: not 2 cpu_op rows"; exit 1; }
echo ok
