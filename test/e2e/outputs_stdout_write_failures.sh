#!/bin/sh
# outputs_stdout_write_failures.sh - a write to standard output that fails
# (stdout on /dev/full, whose every write is ENOSPC) is exit 2 with a message
# naming standard output, for every command that prints (json, csv, table),
# never exit 0 with the output lost; and `memory -o DIR` without --plot
# leaves no memory.svg/periods.svg of an earlier --plot run beside its new
# files. Regressions of 2026-11-26 (issue 26 item 2): `stats --format json
# FILE > /dev/full` exited 0.
set -u
BIN=${TS_BIN:-build/trainscope}
EX=examples/ddp_gloo
FX=examples/memory/mlp
W=examples/workloads
[ -f "$EX/rank0.json" ] && [ -d "$FX" ] && [ -d "$W" ] || { echo "skip: examples/ not here (run from the repository root)"; exit 77; }
[ -w /dev/full ] || { echo "skip: /dev/full is not writable here"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0
R0=$EX/rank0.json R1=$EX/rank1.json
FWD=$FX/fx_graph_transformed_forward.py BWD=$FX/fx_graph_transformed_backward.py
OPT="optimize $W/traces/transformer_bucket25/round2 --gradients $W/results/transformer_gradients.json --nccl-tests $W/results/gloo_allreduce_perf.log --budget 5 --seed 3"

# full ARGS...: the command succeeds into a file (so the failure below is the
# write's), and to /dev/full exits 2 naming standard output.
full() {
    "$BIN" "$@" > "$T/ok" 2>/dev/null || { echo "FAIL: $* exited $? into a file"; fails=$((fails + 1)); return; }
    [ -s "$T/ok" ] || { echo "FAIL: $* printed nothing"; fails=$((fails + 1)); return; }
    "$BIN" "$@" > /dev/full 2> "$T/err"
    rc=$?
    if [ $rc -ne 2 ] || ! grep -q "standard output" "$T/err"; then
        echo "FAIL: $* > /dev/full: exit $rc, stderr: $(head -c 300 "$T/err")"
        fails=$((fails + 1))
    fi
}

for fmt in table json csv; do
    full stats --format $fmt "$R0"
    full breakdown --format $fmt "$R0"
done
for fmt in table json; do
    full critical-path --format $fmt "$R0"
    full replay --format $fmt "$R0" "$R1"
    full memory --format $fmt "$FWD" "$BWD"
    full diff --format $fmt "$R0" "$R0"
    full $OPT --format $fmt
done
full info "$R0"
full --version
full --help

# memory -o into a folder an earlier --plot run wrote: its plots go.
"$BIN" memory -o "$T/mem" --plot "$FWD" "$BWD" > /dev/null || { echo "FAIL: memory --plot exited $?"; fails=$((fails + 1)); }
[ -f "$T/mem/memory.svg" ] || { echo "FAIL: memory --plot wrote no memory.svg"; fails=$((fails + 1)); }
"$BIN" memory -o "$T/mem" "$FWD" "$BWD" > /dev/null || { echo "FAIL: memory -o exited $?"; fails=$((fails + 1)); }
for f in memory.svg periods.svg; do
    [ -e "$T/mem/$f" ] && { echo "FAIL: a stale $f of the --plot run is left beside the new files"; fails=$((fails + 1)); }
done
[ -s "$T/mem/memory.json" ] || { echo "FAIL: memory -o wrote no memory.json"; fails=$((fails + 1)); }

[ $fails -eq 0 ] && echo "ok: every command's failed write to standard output is exit 2 naming it"
[ $fails -eq 0 ]
