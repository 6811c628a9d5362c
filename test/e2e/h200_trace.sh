#!/bin/sh
# h200_trace.sh - real GPU traces recorded by `trainscope record` on a lent
# NVIDIA H200 (examples/h200_ddp/, see its README): a one-GPU DDP training
# under `record --torch --cuda --nccl` (Kineto recording the GPU), and 20
# GEMMs under `record --cuda` alone (trainscope's CUPTI collector). stats'
# kernel, memcpy and memset counts and totals, and critical-path's matched
# collectives (one per NCCL call the collector recorded: torch's own
# record_param_comms annotations describe 8 of the same calls), against
# Python's own count of the same file's events.
set -e
TS_BIN=${TS_BIN:-build/trainscope}
D=examples/h200_ddp
tmp=$(mktemp -d /tmp/ts_e2e_h200.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for f in rank-0 cuda-only; do
    "$TS_BIN" stats "$D/$f.json.zst" --by category --format csv >"$tmp/$f.csv" 2>/dev/null
    zstd -dcq "$D/$f.json.zst" >"$tmp/$f.json"
    python3 - "$tmp/$f.json" "$tmp/$f.csv" <<'P'
import csv, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
got = {r["category"]: (int(r["count"]), int(r["total_ns"])) for r in csv.DictReader(open(sys.argv[2]))}
for cat, name in (("kernel", "kernel"), ("gpu_memcpy", "memcpy"), ("gpu_memset", "memset")):
    d = [round(e["dur"] * 1000) for e in ev if e.get("ph") == "X" and e.get("cat") == cat]
    want = (len(d), sum(d))
    if d and got.get(name) != want:
        sys.exit("%s: %s: trainscope %s, the file %s" % (sys.argv[1], name, got.get(name), want))
    print("%s: %d ops, %d ns" % (name, want[0], want[1]))
P
done
want=$(python3 -c "
import json, sys
ev = json.load(open('$tmp/rank-0.json'))['traceEvents']
print(sum(1 for e in ev if e.get('cat') == 'cpu_op' and e['name'].startswith('nccl:')
          and 'Collective name' in (e.get('args') or {})))")
"$TS_BIN" critical-path "$D/rank-0.json.zst" >"$tmp/cp" 2>/dev/null
grep -q " $want collectives matched" "$tmp/cp" || { echo "critical-path: want $want collectives matched:"; cat "$tmp/cp"; exit 1; }
echo ok
