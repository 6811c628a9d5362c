# testbed_e2e.sh - sourced by end-to-end scripts (not a test) that run
# `trainscope optimize` on examples/testbed's real 2-rank gloo DDP traces and
# check its plans against torch's own bucketing: sets BIN, E (the testbed
# set) and TMP (removed on exit), defines fail and
#   run NAME TRACE MODEL [options]   optimize TRACE's round 0 (--budget 200
#                                    unless options say) into $TMP/NAME,
#                                    the table in $TMP/NAME.txt.
# Skips (exit 77) without examples/testbed or Debian's python3-torch.
BIN=${TS_BIN:-build/trainscope}
E=examples/testbed
[ -d "$E/traces" ] || { echo "skip: $E not here (run from the repository root)"; exit 77; }
/usr/bin/python3 -c "import torch.distributed" 2>/dev/null || { echo "skip: Debian's python3-torch absent"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() {
    name=$1 tr=$2 m=$3; shift 3
    "$BIN" optimize "$E/traces/$tr/round0" --gradients "$E/gradients/$m.json" --budget 200 "$@" \
        -o "$TMP/$name" > "$TMP/$name.txt" 2> "$TMP/$name.err" || fail "$name: exit $? ($(cat "$TMP/$name.err"))"
}
