#!/bin/sh
# replay's relative and gradient-sized what-ifs on a real testbed trace
# (examples/testbed: 2 DDP ranks over gloo, a 100 Mbit/s link; Debian's torch
# writes no collective sizes). Expected values come from the trace itself:
# its gloo all-reduce count (counted here with Python), and identities
# (x1 changes nothing; x2 halves only the communication, so the step shrinks
# but stays above half; where the all-reduces overlapped, x1 still changes
# nothing after the link is shared again as simulated).
set -e
BIN=${TS_BIN:-build/trainscope}
TB=${TS_TESTBED_SET:-examples/testbed}
SET=$TB/traces/wide_w2_r100_b25
[ -d "$SET/round0" ] || { echo "skip: no testbed traces under $SET (bench/testbed/testbed.py)"; exit 77; }
W=$SET/round0
G=$TB/gradients/wide.json
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fig() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["measured_iteration_us"], d["predicted_iteration_us"])' "$1"; }

# An absolute bandwidth needs sizes: without --gradients it says which option gives them.
if "$BIN" replay --bandwidth 0.05 "$W" > /dev/null 2> "$TMP/err"; then echo "sizes appeared from nowhere"; exit 1; fi
grep -q -- "--gradients" "$TMP/err" || { cat "$TMP/err"; exit 1; }

# With --gradients every gloo all-reduce inside a step gets a size: as many as the trace holds.
"$BIN" replay --format json --bandwidth 0.05 --gradients "$G" "$W" > "$TMP/abs.json"
n=$(/usr/bin/python3 - "$W" <<'PY'
import glob, json, subprocess, sys
f = sorted(glob.glob(sys.argv[1] + "/rank0.json*"))[0]
raw = subprocess.run(["zstd", "-dc", f], capture_output=True, check=True).stdout if f.endswith(".zst") else open(f, "rb").read()
ev = [e for e in json.loads(raw) if e.get("ph") == "X"]
steps = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e["name"].startswith("ProfilerStep#")]
print(sum(1 for e in ev if e["name"] == "gloo:all_reduce" and any(a <= e["ts"] < b for a, b in steps)))
PY
)
grep -q "sizes of $n gradient all-reduces" "$TMP/abs.json" || { echo "want $n sized"; cat "$TMP/abs.json"; exit 1; }

# x1 is the identity.
"$BIN" replay --format json --bandwidth x1 "$W" > "$TMP/x1.json"
set -- $(fig "$TMP/x1.json")
[ "$1" = "$2" ] || { echo "x1 changed the iteration: $1 -> $2"; exit 1; }

# x2 halves the communication only: faster, but not by half.
"$BIN" replay --format json --bandwidth x2 "$W" > "$TMP/x2.json"
set -- $(fig "$TMP/x2.json")
/usr/bin/python3 -c "import sys; m, p = map(float, sys.argv[1:]); assert m / 2 < p < m, (m, p)" "$1" "$2"
grep -q "divided by 2 (fixed cost 0.0 us" "$TMP/x2.json"

# On a trace whose all-reduces overlapped on the link (mlp at 100 Mbit/s: gloo's two workers;
# counted here from the raw events), --bandwidth xF prices each per collective in flight beside it
# as traced and shares the link again as simulated: x1 must still change nothing (the traced
# sharing is reproduced exactly), and the warning says it was shared again.
M=$TB/traces/mlp_w2_r100_b25/round0
if [ -d "$M" ]; then
    ov=$(/usr/bin/python3 - "$M" <<'PY'
import json, subprocess, sys
raw = subprocess.run(["zstd", "-dc", sys.argv[1] + "/rank0.json.zst"], capture_output=True, check=True).stdout
g = sorted((e["ts"], e["ts"] + e["dur"]) for e in json.loads(raw) if e.get("ph") == "X" and e["name"] == "gloo:all_reduce")
print(sum(1 for i, a in enumerate(g) for b in g[i + 1:] if b[0] < a[1]))
PY
)
    [ "$ov" -gt 0 ] || { echo "no overlapping all-reduces in $M: the sharing check below would be empty"; exit 1; }
    "$BIN" replay --format json --bandwidth x1 "$M" > "$TMP/mx1.json"
    set -- $(fig "$TMP/mx1.json")
    [ "$1" = "$2" ] || { echo "x1 with the link shared again changed the iteration: $1 -> $2"; exit 1; }
    "$BIN" replay --format json --bandwidth x4 "$M" > "$TMP/mx4.json"
    grep -q "per collective in flight beside it as traced, then shared by those in flight in the simulated schedule" \
        "$TMP/mx4.json" || { echo "x4: the link not shared again"; cat "$TMP/mx4.json"; exit 1; }
    set -- $(fig "$TMP/mx4.json")
    /usr/bin/python3 -c "import sys; m, p = map(float, sys.argv[1:]); assert m / 4 < p < m, (m, p)" "$1" "$2"
fi

# --latency-us x2 without a calibration log knows no fixed cost: no change, and it says so.
"$BIN" replay --format json --latency-us x2 "$W" > "$TMP/lat.json"
set -- $(fig "$TMP/lat.json")
[ "$1" = "$2" ] || { echo "latency x2 changed the iteration without a fixed cost: $1 -> $2"; exit 1; }
grep -q "changes nothing" "$TMP/lat.json"

# --world on a CPU-only job warns that more ranks' compute contention is outside the model.
"$BIN" replay --format json --world 3 --gradients "$G" "$W" > "$TMP/w.json"
grep -q "CPU-only (gloo) job" "$TMP/w.json"

# The per-event profiler model only takes time away.
"$BIN" replay --format json --profiler-overhead-us 20 "$W" > "$TMP/p.json"
set -- $(fig "$TMP/p.json")
/usr/bin/python3 -c "import sys; m, p = map(float, sys.argv[1:]); assert p <= m, (m, p)" "$1" "$2"
grep -q "the profiler's cost taken off" "$TMP/p.json"

# Bad factors are usage errors.
for bad in "--bandwidth x0" "--bandwidth xx" "--latency-us x-1" "--profiler-overhead-us -3"; do
    set +e; "$BIN" replay $bad "$W" > /dev/null 2>&1; rc=$?; set -e
    [ "$rc" -eq 2 ] || { echo "$bad: exit $rc, want 2"; exit 1; }
done
echo ok
