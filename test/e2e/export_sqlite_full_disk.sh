#!/bin/sh
# export --sqlite on a disk that fills (a 1 MiB tmpfs; the database of
# nccl_data.json.gz takes about 10 MB): exit 2, a message naming the
# database and the full disk, no temporary left, the older database at that
# path untouched. Needs root to mount the tmpfs.
set -e
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
F=$DATA/kineto/nccl_parser_config/nccl_data.json.gz
[ -f "$F" ] || { echo "skip: $F missing"; exit 77; }
T=$(mktemp -d /tmp/ts_e2e_export_full.XXXXXX)
M=$T/m
mkdir "$M"
cleanup() { umount "$M" 2>/dev/null || true; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
mount -t tmpfs -o size=1m tmpfs "$M" 2>/dev/null || { echo "skip: cannot mount a tmpfs (needs root)"; exit 77; }
echo old >"$M/out.db"
rc=0; "$BIN" export "$F" --sqlite "$M/out.db" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "full disk: exit $rc, expected 2: $(cat "$T/err")"
grep -q "^trainscope: $M/out.db: cannot write: database or disk is full$" "$T/err" || fail "message: $(cat "$T/err")"
[ "$(ls -A "$M")" = out.db ] || fail "left behind: $(ls -A "$M")"
[ "$(cat "$M/out.db")" = old ] || fail "the older database was changed"
[ ! -s "$T/out" ] || fail "a summary was printed: $(cat "$T/out")"
echo ok
