#!/bin/sh
# ddp_hook_cost.sh - what the ddp_hook.py that `trainscope optimize -o` writes
# costs beside DDP's built-in all-reduce (issue 22): writes a hook plan (the
# testbed's mlp at 200 Mbit/s, whose best grouping no bucket_cap_mb gives),
# then bench/ddp_hook_cost.py trains the testbed's models on 2 gloo ranks over
# loopback with DDP's 25 MB buckets, with the same buckets through that hook,
# and through bench/testbed/rank.py's GroupHook, and prints each hook's ratio
# to DDP in the same run (see its header). Needs Debian's python3-torch.
#
#   sh bench/ddp_hook_cost.sh [ddp_hook_cost.py options]   (~6 min on 2 cores)
set -e
cd "$(dirname "$0")/.."
TS=${TS_BIN:-build/trainscope}
[ -x "$TS" ] || make -s build/trainscope
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$TS" optimize examples/testbed/traces/mlp_w2_r200_b25/round0 --gradients examples/testbed/gradients/mlp.json \
    --budget 200 -o "$TMP/plan" > /dev/null
[ -f "$TMP/plan/ddp_hook.py" ] || { echo "ddp_hook_cost: the plan has no ddp_hook.py" >&2; exit 1; }
/usr/bin/python3 bench/ddp_hook_cost.py "$TMP/plan/ddp_hook.py" "$@"
