#!/bin/sh
# kineto_runtime_marks.sh - Kineto writes an ac2g 'f' with no 's' on every
# CUDA runtime call that launched no GPU work (cudaEventRecord,
# cudaStreamIsCapturing, ...): 204 on the real H200 rank of examples/h200_ddp
# (Kineto 2.x), 4,878 on HTA's nccl_data (A100). They are marks, not flows:
# info's ac2g_runtime_marks must equal Python's count of such ends in the
# file (an ac2g 'f' whose id has no 's', at the start of a cuda_runtime X
# event of its thread), and no unbound_flow is warned for them. A hand-made
# trace checks the rule's edges: a lone 'f' on a kernel (GPU stream) or on a
# cpu_op is still an unbound flow; one on a runtime call is a mark.
set -e
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
NCCL=$DATA/kineto/nccl_parser_config/nccl_data.json.gz
[ -f "$NCCL" ] || { echo "skip: $NCCL missing"; exit 77; }
command -v zstd >/dev/null || { echo "skip: zstd missing"; exit 77; }
T=$(mktemp -d /tmp/ts_e2e_marks.XXXXXX)
trap 'rm -rf "$T"' EXIT
zstd -dcq examples/h200_ddp/rank-0.json.zst >"$T/h200.json"
gzip -dc "$NCCL" >"$T/nccl.json"
cat >"$T/hand.json" <<'J'
{"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 50},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5, "args": {"correlation": 7}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 1, "tid": 1, "ts": 120, "dur": 2, "args": {"correlation": 8}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 130, "dur": 20, "args": {"correlation": 7, "stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "gemm2", "pid": 0, "tid": 7, "ts": 160, "dur": 20, "args": {"correlation": 9, "stream": 7}},
 {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 7, "pid": 1, "tid": 1, "ts": 110},
 {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 7, "pid": 0, "tid": 7, "ts": 130, "bp": "e"},
 {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 8, "pid": 1, "tid": 1, "ts": 120, "bp": "e"},
 {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 9, "pid": 0, "tid": 7, "ts": 160, "bp": "e"},
 {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 10, "pid": 1, "tid": 1, "ts": 100, "bp": "e"}
]}
J
for f in h200 nccl hand; do
    "$BIN" info --format json "$T/$f.json" >"$T/$f.info" 2>"$T/$f.err" || { echo "FAIL: info $f: $(cat "$T/$f.err")"; exit 1; }
    /usr/bin/python3 - "$T/$f.json" "$T/$f.info" "$f" <<'PY'
import bisect, collections, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ends = collections.defaultdict(list)
for e in ev:
    if e.get("ph") in ("s", "f") and e.get("cat") == "ac2g":
        ends[e["id"]].append(e)
starts = collections.defaultdict(set)
for e in ev:
    if e.get("ph") == "X" and e.get("cat") == "cuda_runtime":
        starts[(e["pid"], e["tid"])].add(round(e["ts"] * 1000))
lone = [v[0] for v in ends.values() if [x["ph"] for x in v] == ["f"]]
marks = sum(1 for f in lone if round(f["ts"] * 1000) in starts[(f["pid"], f["tid"])])
info = json.load(open(sys.argv[2]))
r = info["ranks"][0]
got = int(r["meta"].get("ac2g_runtime_marks", "0").split()[0])
unbound = sum(w.get("count", 1) for w in info["warnings"] if w["kind"] == "unbound_flow")
want_unbound = len(lone) - marks
assert got == marks and marks > 0, (sys.argv[3], "marks", got, "want", marks)
assert unbound == want_unbound, (sys.argv[3], "unbound_flow", unbound, "want", want_unbound, info["warnings"])
print("%s: %d lone ac2g ends, %d runtime marks, %d unbound flows" % (sys.argv[3], len(lone), marks, unbound))
PY
done
