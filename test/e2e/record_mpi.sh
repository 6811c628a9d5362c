#!/bin/sh
# record_mpi.sh - `trainscope record --mpi` on the MPI data-parallel example
# (examples/mpi_allreduce, Open MPI, 2 ranks): one trace per rank with the
# rank MPI_COMM_WORLD gives, every MPI_Allreduce with its bytes and the same
# per-communicator sequence numbers on both ranks; `trainscope stats` and
# `trainscope replay` read the 2-rank trace.
set -e
TS_BIN=${TS_BIN:-build/trainscope}
PY=/usr/bin/python3
command -v mpicc >/dev/null || { echo "record_mpi: mpicc not found"; exit 1; }
tmp=$(mktemp -d /tmp/ts_e2e_record_mpi.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mpicc -O2 -std=c11 -o "$tmp/allreduce" examples/mpi_allreduce/allreduce.c
plain=$(mpirun -np 2 --allow-run-as-root --oversubscribe "$tmp/allreduce" -n 4 -w 1 -c 65536 -b 2 | grep checksum)
# RANK/WORLD_SIZE say something else: the rank MPI reports after MPI_Init wins.
traced=$(RANK=7 WORLD_SIZE=9 "$TS_BIN" record --mpi -o "$tmp/t" -- mpirun -np 2 --allow-run-as-root --oversubscribe \
         "$tmp/allreduce" -n 4 -w 1 -c 65536 -b 2 2>"$tmp/err" | grep checksum)
[ "$plain" = "$traced" ] || { echo "result changed: '$plain' vs '$traced'"; cat "$tmp/err"; exit 1; }
$PY - "$tmp/t" <<'P'
import glob, json, sys
files = sorted(glob.glob(sys.argv[1] + "/*.json"))
ranks = sorted(json.load(open(f))["distributedInfo"]["rank"] for f in files)
assert ranks == [0, 1], (files, ranks)
seqs = []
for f in files:
    t = json.load(open(f))
    assert t["distributedInfo"]["world_size"] == 2
    ar = [e for e in t["traceEvents"] if e.get("name") == "MPI_Allreduce"]
    assert len(ar) == 5 * 2, len(ar)    # (4 timed + 1 warmup) iterations x 2 buckets
    assert all(e["cat"] == "mpi" and e["args"]["In msg nelems"] == 65536 * 4 // 2 for e in ar)
    seqs.append([e["args"]["Seq"] for e in ar])
    assert len([e for e in t["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")]) == 5
assert seqs[0] == seqs[1], seqs
P
"$TS_BIN" stats "$tmp"/t/*.json >"$tmp/stats" || { echo "stats failed"; cat "$tmp/stats"; exit 1; }
grep -q MPI_Allreduce "$tmp/stats" || { echo "stats does not show MPI_Allreduce"; cat "$tmp/stats"; exit 1; }
"$TS_BIN" replay "$tmp"/t/*.json >"$tmp/replay" || { echo "replay failed"; cat "$tmp/replay"; exit 1; }
# critical-path matches every blocking MPI collective across the two ranks
"$TS_BIN" critical-path --format json "$tmp"/t/*.json >"$tmp/cp" || { echo "critical-path failed"; cat "$tmp/cp"; exit 1; }
$PY - "$tmp/t" "$tmp/cp" <<'P'
import glob, json, sys
f = sorted(glob.glob(sys.argv[1] + "/*.json"))[0]
n = sum(1 for e in json.load(open(f))["traceEvents"] if e.get("name") in ("MPI_Allreduce", "MPI_Barrier", "MPI_Reduce"))
cp = json.load(open(sys.argv[2]))
assert cp["collectives"] == n, (cp["collectives"], n)
assert cp["categories"]["communication_us"] > 0, cp["categories"]
# CPU-only: the program's work is compute, not "cpu" (it said compute 0.0%);
# backward's time between its all-reduces is backward's own, no gap
assert cp["categories"]["compute_us"] > cp["categories"]["cpu_us"], cp["categories"]
assert not [o for o in cp["top_ops"] if o["kind"] == "gap" and o["edge"] == "program" and o["total_us"] > 10], cp["top_ops"]
P
# Regression 2026-11-26 (issue 21): MPI_Init (before the first step) was
# "99.7% of the iteration" in stats: the window is the iterations every rank
# marks, and --window all the whole trace, in stats as in replay.
"$TS_BIN" stats --format json "$tmp"/t/*.json >"$tmp/s_it.json"
"$TS_BIN" stats --format json --window all "$tmp"/t/*.json >"$tmp/s_all.json"
$PY - "$tmp/s_it.json" "$tmp/s_all.json" <<'P'
import json, sys
it, al = (json.load(open(p)) for p in sys.argv[1:])
assert not [r for r in it["rows"] if r["name"] == "MPI_Init"], it["rows"]
assert all(w["iterations"] == 5 for w in it["ranks"]), it["ranks"]
assert [r for r in al["rows"] if r["name"] == "MPI_Init"], al["rows"]
P
# Regression 2026-11-26 (issue 21): every all-reduce of this run has one size
# (asserted above from the files), so the trace cannot fit a cost line for
# --world: say so and what to give (it said "no collective with a known size"),
# exit 2, no partial output.
set +e
"$TS_BIN" replay --world 8 "$tmp"/t/*.json >"$tmp/w" 2>"$tmp/werr"; code=$?
set -e
[ $code -eq 2 ] || { echo "replay --world 8 exited $code"; cat "$tmp/werr"; exit 1; }
grep -q "one size cannot fit a line" "$tmp/werr" && grep -q -- "--nccl-tests" "$tmp/werr" &&
    grep -q -- "--bandwidth" "$tmp/werr" && grep -q "all_reduce 131072 B" "$tmp/werr" ||
    { echo "replay --world 8 does not say why"; cat "$tmp/werr"; exit 1; }
[ ! -s "$tmp/w" ] || { echo "replay --world 8 printed a result"; exit 1; }
"$TS_BIN" replay --world 8 --bandwidth 5 "$tmp"/t/*.json >"$tmp/w" 2>/dev/null || { echo "--bandwidth 5 failed"; exit 1; }
echo "record_mpi: ok"
