#!/bin/sh
# tf1_timeline.sh - a TensorFlow 1 timeline (tensorflow/python/client/
# timeline.py's Chrome-trace JSON) is recognized by its "<device> Compute"
# process names: per-stream lines become GPU streams of their device, the
# memcpy line copies, the device and CPU lines host ops, stream:all (every
# kernel again) is dropped, dataflow arrows become dependencies and the
# Tensors processes' object events are skipped with one counted warning.
# No real TF1 timeline is in ../shared/data and Debian has no TensorFlow: the
# file below is HAND-MADE in timeline.py's layout (process_name metadata,
# "Op" events named by op type with args name/op/inputN, DataFlow s/t,
# Tensor N/O/D, an Allocators counter). Expected values are computed by
# Python from the file itself: kernel totals per name over the per-stream
# lines only, and the GPU's idle time (span minus the union of its ops).
. "$(dirname "$0")/readers.inc"
python3 - "$T/timeline.json" <<'PY'
import json, sys
P = {0: "Allocators",
     1: "/job:localhost/replica:0/task:0/device:GPU:0 Compute", 2: "/job:localhost/replica:0/task:0/device:GPU:0 Tensors",
     3: "/device:GPU:0/stream:all Compute", 4: "/device:GPU:0/stream:all Tensors",
     5: "/device:GPU:0/stream:7 Compute", 6: "/device:GPU:0/stream:7 Tensors",
     7: "/device:GPU:0/stream:14 Compute", 8: "/device:GPU:0/stream:14 Tensors",
     9: "/device:GPU:0/memcpy Compute", 10: "/device:GPU:0/memcpy Tensors",
     11: "/job:localhost/replica:0/task:0/device:CPU:0 Compute", 12: "/job:localhost/replica:0/task:0/device:CPU:0 Tensors"}
ev = [{"name": "process_name", "ph": "M", "pid": p, "args": {"name": n}} for p, n in P.items()]
def op(pid, tid, ts, dur, name, op_, **a):
    ev.append({"ph": "X", "cat": "Op", "name": op_, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
               "args": dict(name=name, op=op_, **a)})
op(11, 0, 1000, 40, "input/IteratorGetNext", "IteratorGetNext")
op(1, 0, 1050, 12, "dense/MatMul", "MatMul", input0="input/IteratorGetNext", input1="dense/kernel/read")
op(1, 0, 1065, 8, "dense/BiasAdd", "BiasAdd", input0="dense/MatMul", input1="dense/bias/read")
op(1, 1, 1070, 10, "loss/Mean", "Mean", input0="dense/BiasAdd")
for pid, ts, dur, n, o in [(5, 1060, 120, "dense/MatMul", "MatMul"), (5, 1185, 30, "dense/BiasAdd", "BiasAdd"),
                           (7, 1100, 200, "loss/Mean", "Mean"), (7, 1320, 15, "loss/Mean", "Mean")]:
    op(pid, 0, ts, dur, n, o)
    op(3, 0 if pid == 5 else 1, ts, dur, n, o)
op(9, 0, 1040, 25, "edge_12_input/IteratorGetNext", "MEMCPYHtoD")
op(3, 2, 1040, 25, "edge_12_input/IteratorGetNext", "MEMCPYHtoD")
ev.append({"ph": "s", "cat": "DataFlow", "name": "dense/MatMul", "pid": 1, "tid": 0, "ts": 1062, "id": 0})
ev.append({"ph": "t", "cat": "DataFlow", "name": "dense/MatMul", "pid": 1, "tid": 1, "ts": 1070, "id": 0})
ev.append({"ph": "N", "cat": "Tensor", "name": "dense/MatMul", "pid": 2, "tid": 0, "ts": 1050, "id": 0})
ev.append({"ph": "O", "cat": "Tensor", "name": "dense/MatMul", "pid": 2, "tid": 0, "ts": 1061, "id": 0,
           "args": {"snapshot": {"tensor_description": "dtype: DT_FLOAT"}}})
ev.append({"ph": "D", "cat": "Tensor", "name": "dense/MatMul", "pid": 2, "tid": 0, "ts": 1080, "id": 0})
ev.append({"ph": "C", "name": "GPU_0_bfc", "pid": 0, "ts": 1050, "args": {"GPU_0_bfc": 4096}})
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
"$BIN" info "$T/timeline.json" > "$T/info" 2>"$T/err" || fail "info exited $?"
grep -q "format *tensorflow-timeline" "$T/info" && grep -q "3 stream:all lines dropped (5 ops seen again" "$T/info" &&
    grep -q "1 dataflow arrows as dependencies" "$T/info" && echo "ok info: $(grep tf_timeline "$T/info")" ||
    fail "info: $(cat "$T/info")"
"$BIN" stats --format json "$T/timeline.json" > "$T/stats.json" 2>"$T/err" || fail "stats exited $?"
grep -q "3 object events (phases N, O, D" "$T/err" "$T/stats.json" || fail "no object-event warning: $(cat "$T/err")"
"$BIN" breakdown --format json "$T/timeline.json" > "$T/bd.json" 2>/dev/null || fail "breakdown exited $?"
python3 - "$T/timeline.json" "$T/stats.json" "$T/bd.json" <<'PY' || fails=$((fails+1))
import json, re, sys
tl = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in tl if e["ph"] == "M"}
stream = {p for p, n in names.items() if re.search(r"/stream:\d+ Compute$", n)}
memcpy = {p for p, n in names.items() if n.endswith("/memcpy Compute")}
host = {p for p, n in names.items() if n.endswith(" Compute") and "/stream:" not in n and "/memcpy" not in n}
want = {}
for e in tl:
    if e["ph"] != "X": continue
    cat = "kernel" if e["pid"] in stream else "memcpy" if e["pid"] in memcpy else "cpu_op" if e["pid"] in host else None
    if cat:
        c, t = want.get((cat, e["name"]), (0, 0))
        want[(cat, e["name"])] = (c + 1, t + e["dur"])
rows = json.load(open(sys.argv[2]))["rows"]
got = {(r["category"], r["name"]): (r["count"], r["total_us"]) for r in rows}
assert got == want, (got, want)
gpu = sorted((e["ts"], e["ts"] + e["dur"]) for e in tl if e["ph"] == "X" and e["pid"] in stream | memcpy)
busy, cur = 0, None
for a, b in gpu:
    if cur and a <= cur[1]: cur[1] = max(cur[1], b)
    else:
        busy += cur[1] - cur[0] if cur else 0
        cur = [a, b]
busy += cur[1] - cur[0]
span = max(b for _, b in gpu) - gpu[0][0]
r0 = json.load(open(sys.argv[3]))["ranks"][0]
assert (r0["span_us"], r0["idle_us"]) == (span, span - busy), (r0, span, busy)
print("ok stats and breakdown: %d rows as the per-stream lines, GPU span %d us, idle %d us" % (len(rows), span, span - busy))
PY
exit $fails
