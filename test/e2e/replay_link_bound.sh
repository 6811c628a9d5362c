#!/bin/sh
# --bucket-mb on a link-bound job (replay/linkbound.c): on a testbed trace
# (examples/testbed: 2 gloo ranks over a 200 Mbit/s tc-shaped link) the
# replay decides by itself that the link bounds the all-reduces and says so;
# the rate it prices new buckets at is what the trace's all-reduces achieved
# together, computed here from the raw trace events (their bytes from the
# setting's DDP buckets, each from its last rank's start to its first
# rank's end, over the union of those spans); a merged bucket that runs
# alone on the link takes its bytes at that rate; an unchanged partition
# replays exactly. On the CPU-loopback ground truth (examples/workloads) it
# decides the job is not link-bound and prices as before (--link-bound no),
# and so on a loopback trace of one small all-reduce per gradient, whose
# all-reduces achieve less than a link's rate for their fixed costs
# (bench/data/optimize_transformer12);
# a bad --link-bound value exits 2 with a message and no output.
set -u
BIN=${TS_BIN:-build/trainscope}
TB=examples/testbed
WL=examples/workloads
SRC=$TB/traces/transformer_w2_r200_b1/round0
[ -f "$SRC/rank0.json.zst" ] || { echo "skip: no $SRC"; exit 77; }
[ -d "$WL/traces/transformer_bucket1/round2" ] || { echo "skip: no $WL"; exit 77; }
command -v zstd >/dev/null || { echo "skip: no zstd"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
G="--gradients $TB/gradients/transformer.json"

"$BIN" replay --format json --bucket-mb 25 --trace-bucket-mb 1 $G --export "$T/x.json" $SRC > "$T/m.json" 2>/dev/null ||
    fail "merge what-if"
"$BIN" replay --format json --bucket-mb 1 --trace-bucket-mb 1 --link-bound yes $G $SRC > "$T/same.json" 2>/dev/null ||
    fail "unchanged partition"
"$BIN" replay --format json --bucket-mb 25 --trace-bucket-mb 1 --link-bound no $G $SRC > "$T/no.json" 2>/dev/null ||
    fail "--link-bound no"
"$BIN" replay --format json --bucket-mb 5 --trace-bucket-mb 1 --gradients $WL/results/transformer_gradients.json \
    --nccl-tests $WL/results/gloo_allreduce_perf.log $WL/traces/transformer_bucket1/round2 > "$T/wl.json" 2>/dev/null ||
    fail "loopback what-if"
"$BIN" replay --format json --bucket-mb 5 --trace-bucket-mb 1 --gradients $WL/results/transformer_gradients.json \
    --nccl-tests $WL/results/gloo_allreduce_perf.log --link-bound no $WL/traces/transformer_bucket1/round2 > "$T/wlno.json" 2>/dev/null ||
    fail "loopback what-if, --link-bound no"
OPT=bench/data/optimize_transformer12
if [ -d $OPT/trace ]; then
    "$BIN" replay --format json --bucket-mb 5 --gradients $OPT/gradients.json $OPT/trace > "$T/opt.json" 2>/dev/null ||
        fail "optimize trace what-if"
else
    fail "no $OPT"
fi
for r in 0 1; do zstd -dcq "$SRC/rank$r.json.zst" > "$T/rank$r.json" || fail "zstd"; done

/usr/bin/python3 - "$T" "$TB/settings/transformer_w2_r200_b1.json" <<'PY' || fails=$((fails + 1))
import json, re, sys
T, setting = sys.argv[1], json.load(open(sys.argv[2]))
warn = lambda r: [w["first"] for w in r["warnings"]]
# The rate, from the raw events: per rank, each step's gloo:all_reduce events in
# start order are DDP's buckets in order (gloo's queue is first in, first out).
buckets = [b["bytes"] for b in setting["buckets"]]
per_rank = []
for r in (0, 1):
    ev = json.load(open("%s/rank%d.json" % (T, r)))
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e["name"].startswith("ProfilerStep#"))
    gl = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e["name"] == "gloo:all_reduce")
    per_rank.append([[g for g in gl if a <= g[0] < b] for a, b in steps])
spans, total = [], 0
for s0, s1 in zip(*per_rank):
    if len(s0) != len(buckets) or len(s1) != len(buckets):
        continue                              # a step cut at the window's edge
    for k, (g0, g1) in enumerate(zip(s0, s1)):
        spans.append((max(g0[0], g1[0]), min(g0[1], g1[1])))
        total += buckets[k]
spans.sort()
busy, lo, hi = 0, spans[0][0], spans[0][1]
for a, b in spans[1:]:
    if a > hi:
        busy, lo, hi = busy + hi - lo, a, b
    else:
        hi = max(hi, b)
busy += hi - lo
rate = total / busy                           # bytes per us
m = json.load(open(T + "/m.json"))
said = [w for w in warn(m) if w.startswith("--bucket-mb: link-bound (the last all-reduce of ")]
assert said, warn(m)
mbs = float(re.search(r"at ([\d.]+) MB/s", said[0]).group(1))
assert abs(mbs - rate) / rate < 0.02, (mbs, rate)
# The merged bucket (every gradient after DDP's 1 MiB first bucket) runs alone
# on the link after backward: its transfer (the last rank's start to the first
# rank's end) is its bytes at that rate.
x = json.load(open(T + "/x.json"))
x = x["traceEvents"] if isinstance(x, dict) else x
new = [e for e in x if e.get("name") == "allreduce (what-if bucket)"]
big = sum(buckets) - buckets[0]
checked = 0
for pid in (0,):
    mine = sorted((e for e in new if e["pid"] == 0), key=lambda e: e["ts"])
    peer = sorted((e for e in new if e["pid"] == 1), key=lambda e: e["ts"])
    for a, b in zip(mine, peer):
        if a["dur"] < 200000:                 # the first bucket: its own measured time, repriced
            continue
        transfer = min(a["ts"] + a["dur"], b["ts"] + b["dur"]) - max(a["ts"], b["ts"])
        assert abs(transfer - big / rate) / (big / rate) < 0.02, (transfer, big / rate)
        checked += 1
assert checked >= 3, checked
same = json.load(open(T + "/same.json"))
assert same["error_pct"] == 0, same["error_pct"]
no = json.load(open(T + "/no.json"))
assert not [w for w in warn(no) if "link-bound" in w], warn(no)
assert no["predicted_iteration_us"] != m["predicted_iteration_us"]
wl, wlno = json.load(open(T + "/wl.json")), json.load(open(T + "/wlno.json"))
assert [w for w in warn(wl) if w.startswith("--bucket-mb: not link-bound")], warn(wl)
opt = json.load(open(T + "/opt.json"))
assert [w for w in warn(opt) if w.startswith("--bucket-mb: not link-bound")], warn(opt)
assert wl["predicted_iteration_us"] == wlno["predicted_iteration_us"], (wl["predicted_iteration_us"], wlno["predicted_iteration_us"])
print("ok: link-bound decided and priced at %.2f MB/s (from the raw events %.2f), %d merged buckets at that rate; "
      "the loopback set stays CPU-priced" % (mbs, rate, checked))
PY

"$BIN" replay --bucket-mb 5 --link-bound maybe $G $SRC > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "link-bound wants auto, yes or no" "$T/err" && [ ! -s "$T/out" ] || fail "--link-bound maybe: exit $rc"
[ $fails -eq 0 ] || exit 1
