#!/bin/sh
# precision_torch.sh - the torch side of a precision plan, end to end: measure
# QSync-style indicators on a real model (python/trainscope_precision.py),
# search a plan with them (`replay --precision-greedy --indicators`) on the
# committed fp32/bf16 traces of the same model (bench/precision/mlp_*), apply
# the plan to the model as per-module autocast and train a step with it.
# The checks and where their expected values come from are in
# precision_torch.py.
set -e
BIN=${TS_BIN:-build/trainscope}
PY=/usr/bin/python3
if ! $PY -c "import torch" 2>/dev/null; then echo "skip: $PY has no torch"; exit 77; fi
tmp=$(mktemp -d /tmp/ts_e2e_prec_torch.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cat >"$tmp/mlp.py" <<'P'
import sys
sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
P
sed -n '/^def model/,/^    return torch.randn/p' "$here/precision_torch.py" >>"$tmp/mlp.py"
sed -i '1i import collections, torch, torch.nn as nn' "$tmp/mlp.py"
PYTHONPATH="$root/python" $PY -m trainscope_precision indicators "$tmp/mlp.py" --lower bf16 -o "$tmp/ind.txt"
# A budget that the measured indicators make bind: about two modules' worth.
budget=$(awk '/^name:fc2 /{print 2.5 * $2}' "$tmp/ind.txt")
"$BIN" replay --precision-greedy --accuracy-budget "$budget" --indicators "$tmp/ind.txt" \
    --precision-trace bf16="$root/bench/precision/mlp_bf16.json.gz" "$root/bench/precision/mlp_fp32.json.gz" \
    >"$tmp/greedy.plan"
cat "$tmp/greedy.plan"
# The budget binds: something is lowered, not every module, and the lowered
# modules' indicators (summed here from ind.txt) stay within it.
n=$(grep -c '^op:' "$tmp/greedy.plan" || true)
used=$(sed -n 's/^op:.* in \(.*\)$/\1/p' "$tmp/greedy.plan" | sort -u |
       while read -r mod; do awk -v m="name:$mod" '$1 == m {print $2}' "$tmp/ind.txt"; done | awk '{s += $1} END {print s + 0}')
mods=$(sed -n 's/^op:.* in \(.*\)$/\1/p' "$tmp/greedy.plan" | sort -u | wc -l)
[ "$n" -ge 1 ] && [ "$mods" -lt 7 ] && awk -v u="$used" -v b="$budget" 'BEGIN {exit !(u <= b * (1 + 1e-9))}' ||
    { echo "precision_torch: budget $budget (2.5 x fc2) lowered $n ops of $mods modules, indicators $used"; exit 1; }
echo "ok greedy: $n ops of $mods modules lowered, indicators $used within the budget $budget"
PYTHONPATH="$root/python:$here" $PY "$here/precision_torch.py" "$tmp/greedy.plan" "$tmp/ind.txt" "$tmp"
# dPRO's files: the ops of the plan's op:N lines, counted here from the plan.
PYTHONPATH="$root/python" $PY -m trainscope_precision dpro "$tmp/greedy.plan" -o "$tmp/dpro"
want=$(grep '^op:.* bf16' "$tmp/greedy.plan" | sed 's/.*# *//; s/ in .*//' | sort -u)
got=$(sort -u "$tmp/dpro/amp_priorlist.txt")
[ "$got" = "$want" ] || { echo "precision_torch: priorlist '$got', plan '$want'"; exit 1; }
grep -qx "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_PRIORLIST_FILE=$tmp/dpro/amp_priorlist.txt" "$tmp/dpro/amp.env" \
    || { echo "precision_torch: amp.env"; cat "$tmp/dpro/amp.env"; exit 1; }
printf '# nothing lowered\n' >"$tmp/empty.plan"
if PYTHONPATH="$root/python" $PY -m trainscope_precision dpro "$tmp/empty.plan" -o "$tmp/dpro2" 2>"$tmp/err"; then
    echo "precision_torch: an empty plan was written as dPRO files"; exit 1
fi
grep -q 'empty.plan' "$tmp/err" && [ ! -e "$tmp/dpro2" ] || { echo "precision_torch: empty plan message"; cat "$tmp/err"; exit 1; }
echo "precision_torch: ok"
