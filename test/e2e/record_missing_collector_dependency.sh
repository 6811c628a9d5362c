#!/bin/sh
# record_missing_collector_dependency.sh - a collector library whose own
# dependency is missing at run time (as libcupti or libnccl would be on a
# machine without the CUDA toolkit) makes `record` exit 2 with the loader's
# reason before the program starts, instead of tracing nothing silently.
set -e
TS_BIN=${TS_BIN:-build/trainscope}
BIN_DIR=$(dirname "$TS_BIN")
tmp=$(mktemp -d /tmp/ts_e2e_missing_dep.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp "$TS_BIN" "$BIN_DIR"/libtrainscope-preload.so "$BIN_DIR"/libtrainscope-trace.so "$tmp"/
echo 'int fake_cupti_symbol(void) { return 1; }' > "$tmp/dep.c"
echo 'int fake_cupti_symbol(void); int collector_uses_it(void) { return fake_cupti_symbol(); }' > "$tmp/col.c"
cc -shared -fPIC -o "$tmp/libfakecupti.so" "$tmp/dep.c"
cc -shared -fPIC -o "$tmp/libtrainscope-cuda.so" "$tmp/col.c" -L"$tmp" -lfakecupti -Wl,-rpath,"$tmp"
rm "$tmp/libfakecupti.so"
set +e
out=$("$tmp/trainscope" record --cuda -o "$tmp/out" -- sh -c 'echo STARTED' 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "exit $rc, expected 2: $out"; exit 1; }
echo "$out" | grep -q "record: --cuda cannot attach: .*libfakecupti.so" || { echo "message: $out"; exit 1; }
if echo "$out" | grep -q STARTED; then echo "the program ran: $out"; exit 1; fi
echo ok
