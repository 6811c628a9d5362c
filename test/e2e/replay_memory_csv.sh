#!/bin/sh
# --format csv of replay (ranks, iterations; --windows: windows, ranks) and
# memory (tensors alive at the peak, fit; --trace: timelines, peaks, frames):
# RFC 4180 records (CRLF, quoted
# only where needed, read back by Python's csv module), times as integer ns
# equal to the same command's JSON microseconds, the tensors' bytes equal to
# what their declared types hold (dtype size x dims, counted here) and adding
# up to the JSON's peak; a --table that does not exist, --table without
# csv, and --table fit without a limit exit 2 with a message and print
# nothing on stdout; without --table the first table the inputs fill.
set -u
BIN=${TS_BIN:-build/trainscope}
W=examples/workloads/traces/deepmlp_bucket1
FX=${TS_DATA:-../shared/data}/fx/resnet50
[ -d "$W/round2" ] || { echo "skip: no $W"; exit 77; }
[ -f "$FX/fx_graph_transformed_forward.py" ] || { echo "skip: no $FX"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
R="examples/ddp_gloo/rank0.json examples/ddp_gloo/rank1.json"
FXP="$FX/fx_graph_transformed_forward.py $FX/fx_graph_transformed_backward.py"

"$BIN" replay --format json --scale 'cpu:*=0.8' $R > "$T/r.json" 2>/dev/null || fail "replay json"
"$BIN" replay --format csv --scale 'cpu:*=0.8' $R > "$T/ranks.csv" 2>/dev/null || fail "replay csv"
"$BIN" replay --format csv --table iterations --scale 'cpu:*=0.8' $R > "$T/iter.csv" 2>/dev/null || fail "replay csv iterations"
"$BIN" replay --windows --format json $W/round2 $W/round6 $W/round10 > "$T/w.json" 2>/dev/null || fail "windows json"
"$BIN" replay --windows --format csv $W/round2 $W/round6 $W/round10 > "$T/windows.csv" 2>/dev/null || fail "windows csv"
"$BIN" replay --windows --format csv --table ranks $W/round2 $W/round6 $W/round10 > "$T/wranks.csv" 2>/dev/null || fail "windows csv ranks"
"$BIN" memory --format json --memory-limit 0.3 $FXP > "$T/m.json" || fail "memory json"
"$BIN" memory --format csv $FXP > "$T/tensors.csv" || fail "memory csv"
"$BIN" memory --format csv --table fit --memory-limit 0.3 $FXP > "$T/fit.csv" || fail "memory csv fit"
# memory --trace: a raw timeline, Kineto traces with [memory] events, an allocator snapshot
RAW=${TS_DATA:-../shared/data}/kineto/memory_analysis/memory_timeline.raw.gz
SNAP=${TS_DATA:-../shared/data}/memory-snapshots/transformer-lm-step.pickle.gz
K="bench/precision/mlp_fp32.json.gz bench/precision/cnn_fp32.json.gz"
"$BIN" memory --trace --format json "$RAW" $K > "$T/t.json" 2>/dev/null || fail "memory --trace json"
"$BIN" memory --trace --format csv "$RAW" > "$T/timelines.csv" || fail "memory --trace csv timelines"
"$BIN" memory --trace --format csv $K > "$T/peaks.csv" 2>/dev/null || fail "memory --trace csv peaks"
"$BIN" memory --trace --format json --top 1000 "$SNAP" > "$T/s.json" || fail "memory --trace json snapshot"
"$BIN" memory --trace --format csv "$SNAP" > "$T/frames.csv" || fail "memory --trace csv frames"

python3 - "$T" <<'PY' || fails=$((fails + 1))
import csv, io, json, math, re, sys
T = sys.argv[1]
def rows(name):
    raw = open(T + "/" + name, "rb").read()
    assert raw.endswith(b"\r\n") and b"\n" not in raw.replace(b"\r\n", b""), name + ": records end in CRLF"
    return list(csv.DictReader(io.StringIO(raw.decode(), newline="")))
ns = lambda us: round(us * 1000)
r = json.load(open(T + "/r.json"))
got = rows("ranks.csv")
assert len(got) == len(r["ranks"]) == 2, got
for c, j in zip(got, r["ranks"]):
    assert int(c["rank"]) == j["rank"] and int(c["measured_ns"]) == ns(j["measured_iteration_us"]), (c, j)
    assert int(c["predicted_ns"]) == ns(j["predicted_iteration_us"]) and int(c["clock_offset_ns"]) == ns(j["clock_offset_us"]), (c, j)
    m, p = int(c["measured_ns"]), int(c["predicted_ns"])
    assert abs(float(c["error_pct"]) - 100 * (p - m) / m) < 0.0006, c
got = rows("iter.csv")
assert [int(c["step"]) for c in got] == [i["step"] for i in r["per_iteration"]], got
assert [int(c["predicted_ns"]) for c in got] == [ns(i["predicted_us"]) for i in r["per_iteration"]], got
w = json.load(open(T + "/w.json"))
got = rows("windows.csv")
assert [c["path"] for c in got] == [x["path"] for x in w["windows"]], got
assert [int(c["measured_ns"]) for c in got] == [ns(x["measured_iteration_us"]) for x in w["windows"]], got
got = rows("wranks.csv")
assert [int(c["predicted_ns"]) for c in got] == [ns(x["predicted_iteration_us"]) for x in w["ranks"]], got
m = json.load(open(T + "/m.json"))
got = rows("tensors.csv")
size = {"f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "b8": 1, "u8": 1, "f64": 8}
for c in got:
    t = re.fullmatch(r"(\w+)\[(.*)\]", c["type"])
    dims = [int(d) for d in t.group(2).split(",") if d.strip()] if t else None
    if t and t.group(1) in size:
        assert int(c["bytes"]) == size[t.group(1)] * math.prod(dims), c
assert sum(int(c["bytes"]) for c in got) == m["step"]["peak_bytes"], "the tensors alive at the peak are the peak"
assert [int(c["bytes"]) for c in got] == sorted((int(c["bytes"]) for c in got), reverse=True), "largest first"
assert any("," in c["type"] for c in got), "a quoted field was read back"
got = rows("fit.csv")
for c in got:
    o = m["options"][c["option"]]
    assert (int(c["fits"]) == 1) == o["fits"] and int(c["peak_bytes"]) == o["peak_bytes"], (c, o)
    assert int(c["added_ns"]) == o["added_ns"] and int(c["choices"]) == o["choices"], (c, o)
lines = [json.loads(l) for l in open(T + "/t.json")]
raw = [l for l in lines if "at_peak" in l][0]
got = rows("timelines.csv")
assert len(got) == len(raw["at_peak"]) == 8, got
for c in got:
    assert c["file"] == raw["file"] and int(c["peak_bytes"]) == raw["peak_bytes"], c
    assert int(c["at_peak_bytes"]) == raw["at_peak"][c["category"]], c
assert sum(int(c["at_peak_bytes"]) for c in got) == raw["peak_bytes"], "the categories add up to the peak"
peaks = [l for l in lines if "device_type" in l]
got = rows("peaks.csv")
assert [(int(c["rank"]), int(c["peak_bytes"]), int(c["peak_ns"])) for c in got] == \
       [(p["rank"], p["peak_bytes"], p["peak_ns"]) for p in peaks], (got, peaks)
assert [c["ops"] for c in got] == [" < ".join(p["ops"]) for p in peaks], got
snap = json.loads(open(T + "/s.json").readline())
got = rows("frames.csv")
assert [(c["frame"], int(c["bytes"]), int(c["blocks"])) for c in got] == \
       [(f["frame"], f["bytes"], f["blocks"]) for f in snap["alive_by_frame"]], "frames as the JSON lists them"
assert sum(int(c["bytes"]) for c in got) == snap["peak_bytes"], "the frames alive at the peak are the peak"
print("ok: replay, --windows, memory and memory --trace CSV tables equal their JSON; tensor bytes equal their "
      "declared types; raw categories and snapshot frames add up to their peaks")
PY

expect2() {   # expect2 WHAT ARGS...: exit 2, a message, nothing on stdout
    what=$1; shift
    "$BIN" "$@" > "$T/out" 2> "$T/err"; rc=$?
    [ $rc -eq 2 ] && [ -s "$T/err" ] && [ ! -s "$T/out" ] || fail "$what: exit $rc, stdout $(head -c 100 "$T/out")"
}
expect2 "replay --table nope" replay --format csv --table nope $R
expect2 "replay --table without csv" replay --table ranks $R
expect2 "memory --table fit without a limit" memory --format csv --table fit $FXP
expect2 "memory --table nope" memory --format csv --table nope $FXP
# inputs that fill several tables: the first of them (timelines), as with one raw timeline (docs/export.md)
"$BIN" memory --trace --format csv "$RAW" $K > "$T/several.csv" 2>/dev/null || fail "memory --trace csv, several tables"
cmp -s "$T/several.csv" "$T/timelines.csv" || fail "memory --trace csv, several tables: not the timelines table"
expect2 "memory --trace --table nope" memory --trace --format csv --table nope "$RAW"
[ $fails -eq 0 ] || exit 1
