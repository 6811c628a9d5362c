#!/bin/sh
# memory_png.sh - `memory --png` writes both plots as SVG and as real PNG
# files (rendered by rsvg-convert) of a sensible size; without the renderer
# on PATH it is an exit-2 usage error that writes nothing.
set -e
BIN=${TS_BIN:-build/trainscope}
FX=${TS_DATA:-../shared/data}/fx/vit
[ -d "$FX" ] || { echo "skip: $FX missing"; exit 77; }
tmp=$(mktemp -d /tmp/ts_e2e_png.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$BIN" memory --png -o "$tmp/out" --times "$FX/time_dict.json" \
    "$FX/fx_graph_transformed_forward.py" "$FX/fx_graph_transformed_backward.py" >/dev/null
for n in memory periods; do
    head -c 8 "$tmp/out/$n.png" | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a" || { echo "$n.png is not a PNG"; exit 1; }
    [ "$(wc -c < "$tmp/out/$n.png")" -gt 10000 ] || { echo "$n.png is too small to hold a plot"; exit 1; }
    grep -q "<svg" "$tmp/out/$n.svg"
done
set +e
PATH=/nonexistent "$BIN" memory --png -o "$tmp/none" "$FX/fx_graph_transformed_forward.py" \
    "$FX/fx_graph_transformed_backward.py" 2>"$tmp/err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "rsvg-convert" "$tmp/err" && [ ! -e "$tmp/none" ] || { echo "rc=$rc: $(cat "$tmp/err")"; exit 1; }
echo ok
