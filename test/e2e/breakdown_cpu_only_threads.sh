#!/bin/sh
# CPU-only gloo rank (HTA test data cpu_only/, rank 34): no GPU op, so the
# breakdown is per thread over ProfilerStep#551 [..529876.817 us, +210109.162).
# By hand from the raw events: gloo thread 3553 runs gloo:all_reduce for
# 173209.713 us inside the window (its next one starts after it), thread 3554
# for 170471.258 us; neither does anything else, so idle = span - comm.
# Also the legacy DDP pair (torch-cpu-legacy, no categories): c10d/gloo ops
# count as communication; the main thread is the busiest.
set -e
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
F=$(ls "$DATA"/kineto/cpu_only/*.json.gz 2>/dev/null | head -1)
[ -n "$F" ] || { echo "skip: cpu_only missing"; exit 77; }
"$BIN" breakdown --format json "$F" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d["ranks"][0]
assert r["rank"] == 34 and r["basis"] == "cpu_thread", r
th = {t["tid"]: t for t in d["threads"]}
assert set(th) == {3553, 3554}, th
for tid, comm in ((3553, 173209.713), (3554, 170471.258)):
    t = th[tid]
    assert abs(t["span_us"] - 210109.162) < 0.002, t
    assert abs(t["communication_us"] - comm) < 0.002, t
    assert t["compute_us"] == 0 and abs(t["idle_us"] - (210109.162 - comm)) < 0.003, t
assert abs(r["idle_us"] - 36899.449) < 0.003, r
'
L=$DATA/torch-cpu-legacy
"$BIN" breakdown --format json "$L"/ddp_gloo_rank0.json "$L"/ddp_gloo_rank1.json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [r["rank"] for r in d["ranks"]] == [0, 1]
for r, comm in zip(d["ranks"], (1133.0, 2722.0)):   # the 7 c10d::allreduce_ of each main thread
    assert r["basis"] == "cpu_thread" and abs(r["communication_us"] - comm) < 0.002, r
    assert abs(r["span_us"] + 0 - (148228.0 if r["rank"] == 0 else 148230.0)) < 0.002, r
'
"$BIN" breakdown "$F" | grep -q "CPU threads"
echo ok
