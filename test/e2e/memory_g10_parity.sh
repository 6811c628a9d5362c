#!/bin/sh
# memory_g10_parity.sh - `trainscope memory --g10-compat` reproduces the G10
# tool's own kernels.config, tensors.config and liveness_analysis.config for
# the ResNet50 and ViT dumps byte for byte. ViT also checks every
# "Estimated Time" line (its time_dict.json was published); ResNet50's time
# profile was not, so its estimated-time lines are left out of the diff.
set -eu
BIN=${TS_BIN:-build/trainscope}
D=${TS_DATA:-../shared/data}/fx
[ -d "$D/resnet50" ] || { echo "skip: no $D"; exit 77; }
OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT

"$BIN" memory --g10-compat -o "$OUT/r" "$D/resnet50/fx_graph_transformed_forward.py" \
    "$D/resnet50/fx_graph_transformed_backward.py" >/dev/null
S=$D/resnet50/g10-output/pytorch64/statistics
cmp "$OUT/r/kernels.config" "$S/kernels.config"
cmp "$OUT/r/tensors.config" "$S/tensors.config"
grep -v '^Estimated Time:' "$OUT/r/liveness_analysis.config" > "$OUT/r.mine"
grep -v '^Estimated Time:' "$S/liveness_analysis.config" > "$OUT/r.g10"
cmp "$OUT/r.mine" "$OUT/r.g10"
# every period still has an estimated time (from the roofline here)
[ "$(grep -c '^Period ' "$OUT/r/liveness_analysis.config")" -eq \
  "$(grep -c '^Estimated Time:' "$OUT/r/liveness_analysis.config")" ]

"$BIN" memory --g10-compat --times "$D/vit/time_dict.json" -o "$OUT/v" \
    "$D/vit/fx_graph_transformed_forward.py" "$D/vit/fx_graph_transformed_backward.py" >/dev/null
S=$D/vit/g10-output/pytorch64/statistics
for f in kernels.config tensors.config liveness_analysis.config; do cmp "$OUT/v/$f" "$S/$f"; done
echo "G10 parity: ResNet50 and ViT identical"
