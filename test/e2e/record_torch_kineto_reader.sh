#!/bin/sh
# record_torch_kineto_reader.sh - the Kineto path of `record --torch`, which
# cannot run here (Debian's torch has no Kineto): real Kineto traces from
# HolisticTraceAnalysis's test data (a GPU run with kernels, flows and
# distributedInfo; a CPU-only rank) go through python/trainscope_torch.py's
# reader and the tracing runtime, and the converted file must hold every X and
# i event of the input with the same name, category, track (-1 -> 0), time (moved by
# the given offset, exact to the nanosecond), duration and args, each kernel
# still bound to its launch by the same ac2g flow id, and Kineto's extra
# distributedInfo keys. scripts/gpu-check.sh runs the whole path on a GPU.
set -e
PY=/usr/bin/python3
D=${TS_DATA:-../shared/data}
BUILD=$(dirname "${TS_BIN:-build/trainscope}")
K1=$D/kineto/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz
K2=$D/kineto/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz
for f in "$K1" "$K2"; do [ -f "$f" ] || { echo "skip: $f not found"; exit 77; }; done
[ -f "$BUILD/libtrainscope-trace.so" ] || { echo "skip: $BUILD/libtrainscope-trace.so not built"; exit 77; }
tmp=$(mktemp -d /tmp/ts_e2e_kineto_reader.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for k in "$K1" "$K2"; do
    rm -rf "$tmp/out"
    TRAINSCOPE_LIB_DIR=$BUILD PYTHONPATH=python $PY - "$k" "$tmp/out" <<'P'
import decimal, glob, gzip, json, sys
import trainscope_trace as tt
import trainscope_torch as tto
src, out = sys.argv[1], sys.argv[2]
D = decimal.Decimal   # exact: epoch microseconds with nanoseconds need 19 digits
doc = json.load(gzip.open(src), parse_float=D)
ev = doc["traceEvents"]
marks = sorted((e["ts"], e["name"]) for e in ev if e.get("ph") == "X"
               and e.get("name", "").startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation")
first = int(marks[0][1].split("#")[1]) if marks else 0
run = tto._Run(None, first, 0, 0, False, True)   # a window starting at the trace's first step: names kept
off = 1234567
assert tt.start(out) == 0
em = tt.Emitter()
n = tto.emit_kineto_doc(doc, em, off, run)
em.emit("i", "trainscope_meta", "distributedInfo", 0, 0, -1, -1, [("backend", "nccl")] + run.dist_extra)
assert tt.stop() == 0 and em.dropped == 0, em.dropped
got = json.load(open(glob.glob(out + "/*.json")[0]), parse_float=D)
base = int(doc.get("baseTimeNanoseconds", 0))

def key(e, ts_ns):   # -1 (a context-wide sync's stream) is written as track 0
    return (e["name"], e.get("cat", ""), e["pid"] if e["pid"] != -1 else 0, e["tid"] if e["tid"] != -1 else 0, ts_ns)

def fits(v):   # JSON args over 2047 bytes are left out, not cut
    return isinstance(v, (int, str, D)) or len(json.dumps(v, separators=(",", ":"), default=float)) <= 2047

def ns(us):   # the converter writes microseconds with 3 decimals
    return int(D(us) * 1000)

want = [e for e in ev if e.get("ph") in ("X", "i") and isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int)]
assert n == len(want), (n, len(want))
have = {}
for e in got["traceEvents"]:
    if e.get("ph") in ("X", "i"):
        have.setdefault(key(e, ns(e["ts"])), []).append(e)
flows_in = {(e["ph"], e["pid"], e["tid"], ns(e["ts"])): e["id"] for e in ev if e.get("ph") in ("s", "f") and e.get("cat") == "ac2g"}
flows_out = {(e["ph"], e["pid"], e["tid"], ns(e["ts"])): e["id"] for e in got["traceEvents"] if e.get("ph") in ("s", "f")}
n_flows = 0
for e in want:
    t = base + ns(e["ts"]) - off
    m = have.get(key(e, t))
    assert m, ("missing", e)
    o = m.pop(0)
    if e["ph"] == "X":
        assert ns(o["dur"]) == ns(e["dur"]), (e, o)
    args = dict([(k, v) for k, v in (e.get("args") or {}).items() if fits(v)][:16])
    assert (o.get("args") or {}) == args, (e.get("args"), o.get("args"))
    for ph in ("s", "f"):
        fid = flows_in.get((ph, e["pid"], e["tid"], ns(e["ts"])))
        if fid is not None and e["ph"] == "X":
            assert flows_out.get((ph,) + key(e, t)[2:]) == fid, (e, fid)
            n_flows += 1
di = got.get("distributedInfo", {})
assert di.get("backend") == "nccl", di
for k, v in (doc.get("distributedInfo") or {}).items():
    if k not in ("rank", "world_size", "backend") and fits(v):
        assert di.get(k) == v, (k, di)
print("%s: %d events, %d flow ends, same names, tracks, times, args" % (src.split("/")[-1], n, n_flows))
P
done
echo "record_torch_kineto_reader: ok"
