#!/bin/sh
# outputs_full_disk_leave_no_file.sh - every file the CLI writes besides
# standard output (critical-path and replay --export, memory -o with --plot,
# optimize -o and --export, `--format csv -o DIR` of breakdown, stats, diff
# and critical-path: all tables or none) on a full disk (a 64 KiB tmpfs with a few KB
# left, then none) is exit 2 with a message naming the file or folder, and
# leaves nothing behind: no truncated or empty file, no temporary, no empty
# folder it made. Regressions of 2026-11-26 (issue 26 item 2):
# `critical-path --export` left 8 KB of invalid JSON, `replay --export` an
# empty file. Needs root to mount the tmpfs; skips where it cannot.
set -u
BIN=${TS_BIN:-build/trainscope}
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
EX=examples/ddp_gloo
FX=examples/memory/mlp
W=examples/workloads
RAW=${TS_DATA:-../shared/data}/kineto/memory_analysis/memory_timeline.raw.gz
TF=${TS_DATA:-../shared/data}/kineto/trace_filter   # its breakdown tables: 17 KB, kernels.csv 13 KB
NC=${TS_DATA:-../shared/data}/kineto/nccl_parser_config/nccl_data.json.gz
[ -f "$EX/rank0.json" ] && [ -d "$FX" ] && [ -d "$W" ] || { echo "skip: examples/ not here (run from the repository root)"; exit 77; }
[ -f "$RAW" ] && [ -d "$TF" ] && [ -f "$NC" ] || { echo "skip: no $RAW, $TF or $NC (the data folder)"; exit 77; }
T=$(mktemp -d)
D=$T/full
mkdir "$D"
if ! mount -t tmpfs -o size=64k tmpfs "$D" 2>/dev/null; then
    rm -rf "$T"
    echo "skip: cannot mount a tmpfs here (needs root)"
    exit 77
fi
trap 'umount "$D"; rm -rf "$T"' EXIT
fails=0
R0=$EX/rank0.json R1=$EX/rank1.json
FWD=$FX/fx_graph_transformed_forward.py BWD=$FX/fx_graph_transformed_backward.py
OPT="optimize $W/traces/transformer_bucket25/round2 --gradients $W/results/transformer_gradients.json --nccl-tests $W/results/gloo_allreduce_perf.log --budget 5 --seed 3"

# nothing_left NAME ARGS...: exit 2, stderr names the disk's path, and the
# disk holds only the filler afterwards.
nothing_left() {
    name=$1; shift
    "$BIN" "$@" > /dev/null 2> "$T/err"
    rc=$?
    if [ $rc -ne 2 ] || ! grep -q "$D" "$T/err"; then
        echo "FAIL: $name: exit $rc, stderr: $(head -c 300 "$T/err")"
        fails=$((fails + 1))
    fi
    left=$(cd "$D" && find . -mindepth 1 ! -name filler | head -5 | tr '\n' ' ')
    if [ -n "$left" ]; then
        echo "FAIL: $name left $left($(cd "$D" && find . -type f ! -name filler -exec du -b {} + | head -3 | tr '\n' ' '))"
        fails=$((fails + 1))
        find "$D" -mindepth 1 ! -name filler -exec rm -rf {} + 2>/dev/null
    fi
}

all_runs() {
    nothing_left "critical-path --export ($1)" critical-path --export "$D/cp.json" "$R0"
    nothing_left "replay --export ($1)" replay --export "$D/rp.json" "$R0" "$R1"
    nothing_left "memory -o --plot ($1)" memory -o "$D/mem" --plot "$FWD" "$BWD"
    nothing_left "memory --trace -o --plot ($1)" memory --trace -o "$D/memt" --plot "$RAW"
    nothing_left "optimize -o ($1)" $OPT -o "$D/opt"
    nothing_left "optimize --export ($1)" $OPT --export "$D/opt.json"
    nothing_left "breakdown --format csv -o ($1)" breakdown --format csv -o "$D/bd" "$TF"
    nothing_left "stats --format csv -o ($1)" stats --format csv -o "$D/st" "$NC"
    nothing_left "diff --format csv -o ($1)" diff --format csv --whole -o "$D/df" "$NC" "$NC"
    nothing_left "critical-path --format csv -o ($1)" critical-path --format csv -o "$D/cp" "$TF"
}

head -c 61440 /dev/zero > "$D/filler"   # a few KB left: writes fail part way
all_runs "a few KB left"
cat /dev/zero >> "$D/filler" 2>/dev/null   # none left: the first write fails
all_runs "no space left"

[ $fails -eq 0 ] && echo "ok: a full disk is exit 2 naming the output, nothing left behind"
[ $fails -eq 0 ]
