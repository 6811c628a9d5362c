# fold_job.sh - sourced by end-to-end scripts (not a test): fold_job NAME N
# makes $tmp (/tmp/ts_e2e_NAME.*, removed on exit) and writes
# $tmp/job/rank0..N-1.json, copy k of bench/data/optimize_transformer12's
# real rank k % 2 (2 gloo DDP ranks of a transformer, CPU only), its clock
# shifted by an offset only, so the copies fold into 2 replica groups.
# Skips (exit 77) without the data, zstd or python3.
fold_job() {
    src=bench/data/optimize_transformer12
    [ -r "$src/trace/rank0.json.zst" ] || { echo "skip: $src absent"; exit 77; }
    command -v zstd >/dev/null || { echo "skip: zstd not found (Debian package zstd)"; exit 77; }
    command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
    tmp=$(mktemp -d "/tmp/ts_e2e_$1.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    mkdir "$tmp/job"
    for i in 0 1; do zstd -qdc "$src/trace/rank$i.json.zst" >"$tmp/src$i.json"; done
    python3 - "$tmp" "$2" <<'PY'
import json, sys
tmp, n = sys.argv[1], int(sys.argv[2])
src = [json.load(open(f"{tmp}/src{i}.json")) for i in (0, 1)]
for k in range(n):
    off = 1000 * k + 137   # microseconds: a clock offset, nothing else
    d = [dict(e) for e in src[k % 2]]
    for e in d:
        if "ts" in e:
            e["ts"] = e["ts"] + off
    json.dump(d, open(f"{tmp}/job/rank{k}.json", "w"))
PY
}
