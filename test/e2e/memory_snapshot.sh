#!/bin/sh
# memory --trace on a real PyTorch allocator snapshot (a Transformer LM step,
# ../shared/data/memory-snapshots/): every figure against Python's own
# pickle.load and a plain loop over the same dict (the independent values),
# the timeline CSV of -o DIR, and pickles that must be refused: one naming a
# global (it would run code in Python), one that is not a snapshot, one cut
# short. Refusals exit 2 with the file and byte, and print nothing.
set -e
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
F=$DATA/memory-snapshots/transformer-lm-step.pickle.gz
[ -f "$F" ] || { echo "skip: $F missing"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
# A hand-made snapshot (27 Nov 2026: an entry at addr -1 failed the walk with
# "out of memory"): addresses -1 and other negative ones (PyTorch writes them
# as int64) are plain keys, an "oom" entry (device_free where the others have
# addr, as PyTorch's Module.cpp writes it) is counted by its action.
/usr/bin/python3 - "$T/neg.pickle" <<'PY'
import pickle, sys
fr = [{"name": "step", "filename": "train.py", "line": 7}]
def e(action, addr, size, t, key="addr"):
    return {"action": action, key: addr, "size": size, "stream": 0, "time_us": t, "frames": fr}
trace = [e("alloc", -1, 50, 10), e("alloc", -4096, 70, 11), e("oom", 1 << 30, 1 << 40, 12, "device_free"),
         e("free_completed", -1, 50, 13), e("free_completed", -8192, 30, 14), e("alloc", -1, 20, 15),
         e("free_requested", -4096, 70, 16), e("segment_alloc", -2, 1 << 20, 17)]
blocks = [{"address": -1, "size": 20, "state": "active_allocated", "frames": fr},
          {"address": -4096, "size": 70, "state": "active_allocated", "frames": fr},
          {"address": -12288, "size": 40, "state": "active_allocated", "frames": []},
          {"address": -2, "size": 1000, "state": "inactive", "frames": []}]
seg = {"device": 0, "address": -2, "total_size": 1130, "allocated_size": 130, "requested_size": 130,
       "stream": 0, "segment_type": "small", "blocks": blocks}
pickle.dump({"segments": [seg], "device_traces": [trace]}, open(sys.argv[1], "wb"), protocol=4)
PY
for S in "$F" "$T/neg.pickle"; do
rm -f "$T/snapshot_timeline.csv"
"$BIN" memory --trace --format json -o "$T" "$S" >"$T/out.json"
/usr/bin/python3 - "$S" "$T/out.json" "$T/snapshot_timeline.csv" <<'PY'
import csv, gzip, json, pickle, sys
raw = open(sys.argv[1], "rb").read()
d = pickle.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
real = "transformer" in sys.argv[1]
got = json.loads(open(sys.argv[2]).read())
tr = d["device_traces"][0]
segs = [s for s in d["segments"] if s["device"] == 0]
blocks = [b for s in segs for b in s["blocks"]]
want = dict(segments=len(segs), blocks=len(blocks), reserved_bytes=sum(s["total_size"] for s in segs),
            allocated_bytes=sum(s["allocated_size"] for s in segs),
            largest_free_bytes=max(b["size"] for b in blocks if b["state"] == "inactive"),
            trace_entries=len(tr), allocs=sum(e["action"] == "alloc" for e in tr),
            frees=sum(e["action"] == "free_completed" for e in tr), ooms=sum(e["action"] == "oom" for e in tr))
want["fragmentation_bytes"] = want["reserved_bytes"] - want["allocated_bytes"]
live, start = set(), 0
for e in tr:   # freed in the trace without an alloc in it: allocated before it began
    if e["action"] == "alloc": live.add(e["addr"])
    elif e["action"] == "free_completed":
        if e["addr"] in live: live.discard(e["addr"])
        else: start += e["size"]
ever = {e["addr"] for e in tr if e["action"] == "alloc"}
start += sum(b["size"] for b in blocks if b["state"] == "active_allocated" and b["address"] not in ever)
run, peak, peak_us, rows = start, start, -1, []
for e in tr:
    run += e["size"] if e["action"] == "alloc" else -e["size"] if e["action"] == "free_completed" else 0
    rows.append(run)
    if run > peak: peak, peak_us = run, e["time_us"]
want.update(start_bytes=start, peak_bytes=peak, peak_us=peak_us, end_bytes=run,
            first_us=tr[0]["time_us"], last_us=tr[-1]["time_us"])
for k, v in want.items():
    assert got[k] == v, (k, got[k], v)
c = list(csv.DictReader(open(sys.argv[3])))
assert len(c) == len(tr), len(c)
assert [int(r["allocated_bytes"]) for r in c] == rows
assert [int(r["addr"]) for r, e in zip(c, tr) if "addr" in e] == [e["addr"] for e in tr if "addr" in e]
if real:
    assert got["alive_by_frame"][0]["bytes"] > 0 and "model.py" in got["alive_by_frame"][0]["frame"], got["alive_by_frame"][0]
    assert c[0]["frame"].startswith("forward ") and c[0]["frame"].endswith("model.py:54"), c[0]["frame"]
else:   # every block alive at the peak, in the groups (two frames: step, none)
    assert sum(g["bytes"] for g in got["alive_by_frame"]) == peak, got["alive_by_frame"]
PY
done
"$BIN" memory --trace "$F" | grep -q "peak 13282.6 MiB at +138.070 ms"
"$BIN" memory --trace "$T/neg.pickle" | grep -qF '1 out-of-memory entries (action "oom"'

# refusals
/usr/bin/python3 - "$T" <<'PY'
import collections, os, pickle, sys
d = sys.argv[1]
# what a malicious "snapshot" looks like: os.system in a REDUCE
open(d + "/evil.pickle", "wb").write(b"\x80\x04\x95\x1f\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94\x8c\x04echo\x94\x85\x94R\x94.")
open(d + "/od.pickle", "wb").write(pickle.dumps({"segments": collections.OrderedDict()}, protocol=4))
open(d + "/list.pickle", "wb").write(pickle.dumps({"other": [1, 2]}, protocol=4))
b = pickle.dumps({"segments": [], "device_traces": [[{"action": "alloc", "addr": 1, "size": 2}]]}, protocol=4)
open(d + "/cut.pickle", "wb").write(b[:len(b) // 2])
PY
expect() {  # FILE MESSAGE
    if "$BIN" memory --trace "$1" >"$T/o" 2>"$T/e"; then echo "accepted $1"; exit 1; else rc=$?; fi
    [ "$rc" = 2 ] && [ ! -s "$T/o" ] || { echo "exit $rc / output for $1"; cat "$T/o"; exit 1; }
    grep -qF "trainscope: $1: byte $2" "$T/e" || { echo "message for $1:"; cat "$T/e"; exit 1; }
}
expect "$T/evil.pickle" "25: pickle global 'os.system' is not one this reader knows; it runs no code"
expect "$T/od.pickle" "52: pickle global 'collections.OrderedDict' is not one this reader knows"
expect "$T/list.pickle" "0: a pickle, but not a PyTorch allocator snapshot"
expect "$T/cut.pickle" ""
grep -qF "pickle cut short" "$T/e" || grep -qF "pickle ends without STOP" "$T/e"
echo ok
