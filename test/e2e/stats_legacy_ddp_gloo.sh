#!/bin/sh
# stats on the legacy-format DDP-over-gloo pair made with Debian's torch 1.13
# (torch-cpu-legacy: no categories, no ProfilerStep, so the window is the whole
# trace). Expected numbers from the stats() function of
# test/e2e/breakdown_hta_reference.py FILE c10d::allreduce_ gloo:all_reduce aten::addmm
set -e
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
L=${TS_DATA:-../shared/data}/torch-cpu-legacy
[ -d "$L" ] || { echo "skip: $L missing"; exit 77; }
"$BIN" stats --format json "$L"/ddp_gloo_rank0.json "$L"/ddp_gloo_rank1.json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = {(r["rank"], r["name"]): r for r in d["rows"]}
want = {
    (0, "c10d::allreduce_"): ("collective", 7, 1133.0, 193.0, 106.717),
    (0, "gloo:all_reduce"): ("collective", 7, 31541.0, 4875.0, 2532.065),
    (0, "aten::addmm"): ("cpu_op", 9, 44407.0, 4934.0, 4096.276),
    (1, "c10d::allreduce_"): ("collective", 7, 2722.0, 40.0, 933.648),
    (1, "gloo:all_reduce"): ("collective", 7, 32227.0, 4553.0, 2574.192),
    (1, "aten::addmm"): ("cpu_op", 9, 44508.0, 4902.0, 4133.587),
}
for key, (cat, n, total, median, sd) in want.items():
    r = rows[key]
    assert r["category"] == cat and r["count"] == n, r
    assert abs(r["total_us"] - total) < 0.002 and abs(r["median_us"] - median) < 0.002, r
    assert abs(r["stddev_us"] - sd) < 0.002, r
assert [w["window_us"] for w in d["ranks"]] == [148228.0, 148230.0], d["ranks"]
# children that end up to 1 us after their parent are whole-microsecond
# rounding (the model nests them), so these files raise no overlap warning
assert d["warnings"] == [], d["warnings"]
'
ERR=$("$BIN" stats "$L"/ddp_gloo_rank0.json "$L"/ddp_gloo_rank1.json 2>&1 >/dev/null)
[ -z "$ERR" ] || { echo "unexpected stderr: $ERR"; exit 1; }
echo ok
