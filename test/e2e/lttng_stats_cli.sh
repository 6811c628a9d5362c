#!/bin/sh
# lttng_stats_cli.sh - the seed 002/003 pipeline through the CLI: a program's
# host tracing API calls recorded as LTTng-UST tracepoints (CTF), then
# `trainscope stats DIR/lttng` reads the CTF trace and counts the same
# operations as `trainscope stats` on the JSON trace of the same run.
# The session is driven with the lttng command the way `record --lttng` does
# (src/capture/lttng/lttng_session.c, itself tested in test/unit/test_ctf.c).
# Skips (exit 0, saying so) without lttng-tools or libtrainscope-lttng.so.
set -eu
BIN=${TS_BIN:-build/trainscope}
B=$(dirname "$BIN")
command -v lttng >/dev/null 2>&1 || { echo "skipped: lttng-tools not installed"; exit 77; }
[ -f "$B/libtrainscope-lttng.so" ] || { echo "skipped: $B/libtrainscope-lttng.so not built"; exit 77; }
T=$(mktemp -d /tmp/ts_lttng_cli_XXXXXX)
S=trainscope-e2e-$$
trap 'lttng destroy "$S" >/dev/null 2>&1 || true; rm -rf "$T"' EXIT

cat > "$T/app.py" <<'EOF'
import ctypes
L = ctypes.CDLL(None)
for i in range(4):
    L.ts_trace_push(b"user_annotation", b"ProfilerStep#%d" % i)
    for _ in range(2):
        L.ts_trace_push(b"cpu_op", b"aten::linear")
        L.ts_trace_pop()
    L.ts_trace_pop()
print("app output")
EOF

lttng create "$S" --output="$T/lttng" >/dev/null
lttng enable-event --userspace 'trainscope:*' --session="$S" >/dev/null
lttng add-context --userspace --type=vpid --type=vtid --type=procname --session="$S" >/dev/null
lttng start "$S" >/dev/null
out=$(TRAINSCOPE_DIR="$T" LD_PRELOAD="$B/libtrainscope-preload.so $B/libtrainscope-lttng.so" \
      /usr/bin/python3 "$T/app.py")
lttng destroy "$S" >/dev/null
[ "$out" = "app output" ] || { echo "program output changed: '$out'"; exit 1; }

ctf=$("$BIN" stats "$T/lttng" --top 50)
json=$("$BIN" stats "$T"/*.json --top 50)
echo "$ctf"
count() { echo "$1" | awk -v n="$2" '$1 == n { print $2; exit }'; }
[ "$(count "$ctf" aten::linear)" = 8 ] || { echo "CTF: expected 8 aten::linear"; exit 1; }
[ "$(count "$json" aten::linear)" = 8 ] || { echo "JSON: expected 8 aten::linear"; echo "$json"; exit 1; }
echo "ok: CTF and JSON both count 8 aten::linear over 4 iterations"
