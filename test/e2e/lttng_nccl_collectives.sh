#!/bin/sh
# lttng_nccl_collectives.sh - the NCCL collector's events through the LTTng
# backend: a program calls the real libnccl (which fails without a GPU; the
# program must still get NCCL's own answer) under libtrainscope-nccl.so and
# libtrainscope-lttng.so; the collective calls must come back from the CTF
# trace (trainscope:collective tracepoints) as they appear in the JSON trace.
# Skips (exit 0, saying so) without lttng-tools, or the NCCL/LTTng libraries.
set -eu
BIN=${TS_BIN:-build/trainscope}
B=$(dirname "$BIN")
command -v lttng >/dev/null 2>&1 || { echo "skipped: lttng-tools not installed"; exit 77; }
for lib in libtrainscope-lttng.so libtrainscope-nccl.so; do
    [ -f "$B/$lib" ] || { echo "skipped: $B/$lib not built"; exit 77; }
done
NCCL_DIR=$(for d in "${CUDA_HOME:-/usr/local/cuda}/lib64" "${CUDA_HOME:-/usr/local/cuda}/lib" /usr/lib/x86_64-linux-gnu; do
    [ -f "$d/libnccl.so.2" ] && { echo "$d"; break; }; done)
[ -n "$NCCL_DIR" ] || { echo "skipped: libnccl.so.2 not found"; exit 77; }
T=$(mktemp -d /tmp/ts_lttng_nccl_XXXXXX)
S=trainscope-e2e-nccl-$$
trap 'lttng destroy "$S" >/dev/null 2>&1 || true; rm -rf "$T"' EXIT

cat > "$T/app.py" <<'EOF'
import ctypes
real = ctypes.CDLL("libnccl.so.2", mode=ctypes.RTLD_GLOBAL)
wrapped = ctypes.CDLL(None).ncclAllReduce
args = (None, None, ctypes.c_size_t(1024), 7, 0, None, None)
results = {wrapped(*args) for _ in range(3)}
print(sorted(results) == [real.pncclAllReduce(*args)])
EOF

lttng create "$S" --output="$T/lttng" >/dev/null
lttng enable-event --userspace 'trainscope:*' --session="$S" >/dev/null
lttng add-context --userspace --type=vpid --type=vtid --session="$S" >/dev/null
lttng start "$S" >/dev/null
out=$(TRAINSCOPE_DIR="$T" LD_LIBRARY_PATH="$NCCL_DIR" \
      LD_PRELOAD="$B/libtrainscope-preload.so $B/libtrainscope-nccl.so $B/libtrainscope-lttng.so" \
      /usr/bin/python3 "$T/app.py")
lttng destroy "$S" >/dev/null
[ "$out" = "True" ] || { echo "the program did not get NCCL's own result: $out"; exit 1; }

ctf=$("$BIN" stats "$T/lttng" --top 50)
json=$("$BIN" stats "$T"/*.json --top 50)
echo "$ctf"
count() { echo "$1" | awk -v n="$2" '$1 == n { print $2; exit }'; }
[ "$(count "$ctf" nccl:all_reduce)" = 3 ] || { echo "CTF: expected 3 nccl:all_reduce"; exit 1; }
[ "$(count "$json" nccl:all_reduce)" = 3 ] || { echo "JSON: expected 3 nccl:all_reduce"; echo "$json"; exit 1; }
echo "ok: 3 nccl:all_reduce calls in both traces, NCCL's result passed through"
