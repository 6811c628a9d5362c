#!/bin/sh
# dpro_trace_folder.sh - a dPRO trace folder (the trial root > worker >
# GPU layout of joapolarbear/dpro's collector, trace_utils.py's FileName:
# temp.json the computation trace, comm.json Horovod's timeline, plus
# gradient_name_list.json and dag.gml) loads as one rank per GPU folder, in
# folder order, each rank holding both its computation and communication
# events with their processes kept apart (both files number pids from 0).
# ../shared/data/dpro holds dPRO's op lists and op times, no trace folder,
# and Debian packages neither TensorFlow nor Horovod: the folder below is
# HAND-MADE in that layout (a TF1 timeline per GPU, a Horovod timeline left
# unclosed as Horovod writes it). Expected values are Python's sums over the
# files: kernels over the per-stream lines, NCCL_ALLREDUCE over comm.json.
. "$(dirname "$0")/readers.inc"
python3 - "$T/trial" <<'PY'
import json, os, sys
root = sys.argv[1]
def timeline(off, scale):
    P = {0: "Allocators", 1: "/job:localhost/replica:0/task:0/device:GPU:0 Compute",
         3: "/device:GPU:0/stream:all Compute", 5: "/device:GPU:0/stream:7 Compute", 7: "/device:GPU:0/stream:14 Compute"}
    ev = [{"name": "process_name", "ph": "M", "pid": p, "args": {"name": n}} for p, n in P.items()]
    def op(pid, tid, ts, dur, name, o):
        ev.append({"ph": "X", "cat": "Op", "name": o, "pid": pid, "tid": tid, "ts": off + ts, "dur": dur, "args": {"name": name, "op": o}})
    op(1, 0, 0, 10, "dense/MatMul", "MatMul"); op(1, 0, 12, 8, "gradients/dense/MatMul_grad/MatMul", "MatMul")
    for pid, tid, ts, dur, n, o in [(5, 0, 8, 100 * scale, "dense/MatMul", "MatMul"),
                                    (7, 0, 20, 60 * scale, "gradients/dense/MatMul_grad/MatMul", "MatMul")]:
        op(pid, tid, ts, dur, n, o); op(3, tid, ts, dur, n, o)
    return {"traceEvents": ev}
def horovod(off, t0):
    # as Horovod's timeline writes it: a bare list, never closed, every event followed by a comma
    ev = [{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "horovod_allreduce.0"}},
          {"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": off + t0, "pid": 1}, {"ph": "E", "ts": off + t0 + 30, "pid": 1},
          {"ph": "B", "name": "ALLREDUCE", "ts": off + t0 + 30, "pid": 1},
          {"ph": "B", "name": "QUEUE", "ts": off + t0 + 30, "pid": 1}, {"ph": "E", "ts": off + t0 + 35, "pid": 1},
          {"ph": "B", "name": "NCCL_ALLREDUCE", "ts": off + t0 + 35, "pid": 1}, {"ph": "E", "ts": off + t0 + 135, "pid": 1},
          {"ph": "E", "ts": off + t0 + 140, "pid": 1}]
    return "[\n" + "".join(json.dumps(e) + ",\n" for e in ev)
for w, gpus in (("host0", 2), ("host1", 1)):
    for g in range(gpus):
        d = os.path.join(root, w, str(g)); os.makedirs(d)
        k = (0 if w == "host0" else 2) + g
        json.dump(timeline(1000, 1 + k), open(os.path.join(d, "temp.json"), "w"))
        open(os.path.join(d, "comm.json"), "w").write(horovod(1000, 100 + 60 * (1 + k)))
        json.dump({"gradient_name_list": ["dense/kernel:0"]}, open(os.path.join(d, "gradient_name_list.json"), "w"))
        open(os.path.join(d, "dag.gml"), "w").write('graph [\n  directed 1\n  node [ id 0 label "dense/MatMul" ]\n]\n')
PY
"$BIN" info "$T/trial" > "$T/info" 2>"$T/err" || fail "info exited $?: $(cat "$T/err")"
[ "$(grep -c 'format *dpro-folder' "$T/info")" -eq 3 ] || fail "not 3 dPRO ranks: $(cat "$T/info")"
grep -q "^rank 0: .*/trial/host0/0$" "$T/info" && grep -q "^rank 1: .*/trial/host0/1$" "$T/info" &&
    grep -q "^rank 2: .*/trial/host1/0$" "$T/info" || fail "rank order: $(grep '^rank' "$T/info")"
grep -q "dpro *temp.json, comm.json; 1 gradient names" "$T/info" || fail "no dpro line"
"$BIN" stats --format json "$T/trial" > "$T/stats.json" 2>/dev/null || fail "stats exited $?"
python3 - "$T/trial" "$T/stats.json" <<'PY' || fails=$((fails+1))
import json, os, re, sys
root, stats = sys.argv[1], json.load(open(sys.argv[2]))["rows"]
dirs = [os.path.join(root, w, g) for w in sorted(os.listdir(root)) for g in sorted(os.listdir(os.path.join(root, w)))]
for rank, d in enumerate(dirs):
    tl = json.load(open(os.path.join(d, "temp.json")))["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in tl if e["ph"] == "M"}
    streams = {p for p, n in names.items() if re.search(r"/stream:\d+ Compute$", n)}
    kern = sum(e["dur"] for e in tl if e["ph"] == "X" and e["pid"] in streams)
    txt = open(os.path.join(d, "comm.json")).read().rstrip().rstrip(",") + "]"
    begin, nccl = {}, 0
    for e in json.loads(txt):
        if e["ph"] == "B": begin.setdefault(e["pid"], []).append(e)
        elif e["ph"] == "E":
            b = begin[e["pid"]].pop()
            if b["name"] == "NCCL_ALLREDUCE": nccl += e["ts"] - b["ts"]
    got = {r["category"]: r["total_us"] for r in stats if r["rank"] == rank and r["name"] in ("MatMul", "NCCL_ALLREDUCE")
           and r["category"] in ("kernel", "collective")}
    assert got == {"kernel": kern, "collective": nccl}, (rank, got, kern, nccl)
print("ok stats: 3 ranks, kernels and NCCL_ALLREDUCE as Python sums them per GPU folder")
PY
for cmd in breakdown critical-path; do
    "$BIN" $cmd "$T/trial" >/dev/null 2>"$T/err" || fail "$cmd exited $?: $(cat "$T/err")"
done
# a broken computation trace names its file and byte
printf '{"traceEvents": [{"ph": "X", "ts": 1, ' > "$T/trial/host0/1/temp.json"
"$BIN" info "$T/trial" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "trial/host0/1/temp.json: byte [0-9]*: " "$T/err" && [ ! -s "$T/out" ] &&
    echo "ok broken temp.json: $(cat "$T/err")" || fail "broken temp.json: exit $rc: $(cat "$T/err")"
exit $fails
