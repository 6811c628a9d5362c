#!/bin/sh
# ingest_directory_of_ranks.sh - a directory path loads one rank per trace file
# (ranks from distributedInfo), in parallel, and the same files given one by
# one load the same ranks; compressed forms (.gz, .zst) read the same.
# Uses $TS_BIN and $TS_DATA; skips (exit 77) when the data is absent.
set -u
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
DIR="$DATA/kineto/trace_filter"
[ -d "$DIR" ] || { echo "skip: $DIR absent"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0

"$BIN" stats "$DIR" >"$T/dir.txt" 2>"$T/dir.err" || { echo "FAIL: stats DIR exit $?"; cat "$T/dir.err"; fail=1; }
for r in 0 1; do
    grep -q "^rank $r:" "$T/dir.txt" || { echo "FAIL: rank $r missing from the directory load"; fail=1; }
done
"$BIN" stats "$DIR/sampled_rank-1.json.gz" "$DIR/sampled_rank-0.json.gz" >"$T/files.txt" 2>/dev/null
cmp -s "$T/dir.txt" "$T/files.txt" || { echo "FAIL: directory and file list give different output"; fail=1; }

# the same trace as plain JSON and as zstd gives the same answer
mkdir "$T/plain"
zcat "$DIR/sampled_rank-0.json.gz" >"$T/plain/sampled_rank-0.json"
zcat "$DIR/sampled_rank-1.json.gz" >"$T/plain/sampled_rank-1.json"
"$BIN" stats "$T/plain" >"$T/plain.txt" 2>/dev/null
cmp -s "$T/dir.txt" "$T/plain.txt" || { echo "FAIL: plain JSON differs from gzip"; fail=1; }
if command -v zstd >/dev/null 2>&1; then
    mkdir "$T/zst"
    for r in 0 1; do zstd -q "$T/plain/sampled_rank-$r.json" -o "$T/zst/sampled_rank-$r.json.zst"; done
    "$BIN" stats "$T/zst" >"$T/zst.txt" 2>/dev/null
    cmp -s "$T/dir.txt" "$T/zst.txt" || { echo "FAIL: zstd differs from gzip"; fail=1; }
fi
exit $fail
