#!/bin/sh
# memory_g10_rules.sh - G10's rules on graphs whose G10 outputs were never
# published (BERT, MobileNetV3), with expected values derived here from the
# dumps' text and from G10's stated arithmetic, not from trainscope:
#   1. only torch.ops.aten.* calls are kernels: BERT's prims calls (inductor
#      seeds and random numbers, convert_element_type) make no kernel, and
#      their results enter as tensors with no producer (birth = first kernel
#      reading them); the kernel count is the aten calls minus G10's aliases
#      (copy_, squeeze_N, unsqueeze_N), counted with awk;
#   2. times are integer cycles (long)(ms * GHz * 1e9 / 1000) summed as
#      cycles / (GHz * 1000) us: every "Estimated Time" of MobileNetV3 under
#      a G10 config with GPU_frequency_GHz 1.41 and a time_dict.txt of
#      few-decimal times equals python's evaluation of that formula, and some
#      differ from a truncation of ms x 1e6 (so the rule is exercised);
#   3. G10's own config and time_dict.txt reproduce ViT's published outputs.
set -eu
BIN=${TS_BIN:-build/trainscope}
D=${TS_DATA:-../shared/data}/fx
[ -d "$D/bert" ] && [ -d "$D/vit/g10-output" ] || { echo "skip: no $D"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# --- 1. BERT: prims are not kernels
"$BIN" memory --g10-compat -o "$T/b" "$D/bert/fx_graph_transformed_forward.py" \
    "$D/bert/fx_graph_transformed_backward.py" >/dev/null
kernels_expected=$(cat "$D/bert/fx_graph_transformed_forward.py" "$D/bert/fx_graph_transformed_backward.py" |
    awk '/= torch\.ops\.aten\./ { n++; if ($0 ~ /torch\.ops\.aten\.copy_\./) n--;
         else if ($0 ~ /^ *(un)?squeeze_[0-9]+(: "[^"]*")? = /) n-- } END { print n }')
kernels=$(grep -c '^Kernel ID: ' "$T/b/kernels.config")
[ "$kernels" -eq "$kernels_expected" ] || { echo "FAIL: $kernels kernels, expected $kernels_expected"; exit 1; }
! grep -q 'torch\.ops\.prims' "$T/b/kernels.config" || { echo "FAIL: a prims call became a kernel"; exit 1; }
# the first dropout mask: inductor_random_default_36 (prims) is read first by gt (forward line 57)
gt_id=$(awk 'NR < 57 && /= torch\.ops\.aten\./ { n++; if ($0 ~ /torch\.ops\.aten\.copy_\./) n--;
         else if ($0 ~ /^ *(un)?squeeze_[0-9]+(: "[^"]*")? = /) n-- } END { print n }' \
         "$D/bert/fx_graph_transformed_forward.py")
grep -q "^Kernel ID: $gt_id, Name: torch.ops.aten.gt.Scalar(inductor_random_default_36, 0.1)\$" "$T/b/kernels.config" ||
    { echo "FAIL: gt is not kernel $gt_id"; exit 1; }
awk -v want="Liveness: Birth: $gt_id, Death: $((gt_id + 1))." '
    /Name: inductor_random_default_36,/ { getline; if ($0 == want) ok = 1; exit } END { exit !ok }' \
    "$T/b/liveness_analysis.config" || { echo "FAIL: inductor_random_default_36 not born at $gt_id"; exit 1; }
# inductor_seeds_default is read only by prims: never used by a kernel
awk '/Name: inductor_seeds_default,/ { getline; if ($0 == "Liveness: Birth: -1, Death: -1.") ok = 1; exit }
     END { exit !ok }' "$T/b/liveness_analysis.config" || { echo "FAIL: inductor_seeds_default used"; exit 1; }
echo "ok BERT: $kernels kernels (aten calls less aliases), prims outputs without producer"

# --- 2. MobileNetV3: G10's cycle arithmetic at 1.41 GHz
n=$("$BIN" memory --g10-compat --format json "$D/mobilenetv3small/fx_graph_transformed_forward.py" \
    "$D/mobilenetv3small/fx_graph_transformed_backward.py" | sed 's/.*"kernels":\([0-9]*\).*/\1/')
python3 -c "
for i in range($n): print(i, '%.4f' % (0.0005 * (i % 13 + 1) + 0.0035 * (i % 3)), 'ms')" > "$T/time_dict.txt"
printf 'output_folder %s/m\nis_pytorch 1\nnn_model_input_forward %s\nnn_model_input_backward %s\norig_kernel_time_file %s\nGPU_frequency_GHz 1.41\nGPU_memory_size_GB 40\n' \
    "$T" "$D/mobilenetv3small/fx_graph_transformed_forward.py" "$D/mobilenetv3small/fx_graph_transformed_backward.py" \
    "$T/time_dict.txt" > "$T/m.config"
"$BIN" memory "$T/m.config" >/dev/null
python3 - "$T/time_dict.txt" "$T/m/statistics/liveness_analysis.config" <<'PY'
import sys
ghz = 1.41
ms = [float(l.split()[1]) for l in open(sys.argv[1])]
def table(cyc):
    t = [0.0]
    for c in cyc: t.append(t[-1] + c)
    return t
g10 = table([int(m * (ghz * 1e9) / 1000.0) / (ghz * 1000) for m in ms])
naive = table([int(m * 1e6) / 1000.0 for m in ms])
def est(t, a, b):
    return t[b] - t[a] if a <= b else (t[-1] - t[a]) + t[b]
lines = open(sys.argv[2]).read().split("\n")
checked = differs = 0
for i, l in enumerate(lines):
    if not l.startswith("Period "): continue
    a, b = map(int, l.split(": ")[1].split("--------"))
    want = "Estimated Time:%gus" % est(g10, a, b)
    if lines[i + 1] != want: sys.exit("FAIL line %d: %s, expected %s" % (i + 2, lines[i + 1], want))
    checked += 1
    differs += want != "Estimated Time:%gus" % est(naive, a, b)
if not checked or not differs: sys.exit("FAIL: %d periods checked, %d differ from ms x 1e6" % (checked, differs))
print("ok MobileNetV3: %d estimated times as G10's cycles at %g GHz (%d differ from ms x 1e6)" % (checked, ghz, differs))
PY

# --- 3. ViT through a G10 config and time_dict.txt (its published times, digits kept)
sed -n 's/^ *"[^"]*": \([0-9.e-]*\),\{0,1\}$/\1/p' "$D/vit/time_dict.json" | awk '{ print NR - 1, $1, "ms" }' > "$T/vit_times.txt"
mkdir -p "$T/cfgdir"
cp "$D/vit/fx_graph_transformed_forward.py" "$D/vit/fx_graph_transformed_backward.py" "$T/cfgdir/"
printf 'output_folder %s/v\nis_pytorch 1\nis_profiling 1\nnn_model_input_forward ../frontend/Pytorch_ViT/fx_graph_transformed_forward.py\nnn_model_input_backward ../frontend/Pytorch_ViT/fx_graph_transformed_backward.py\norig_kernel_time_file %s\n\nGPU_memory_size_GB 40\n' \
    "$T" "$T/vit_times.txt" > "$T/cfgdir/vit.config"
"$BIN" memory "$T/cfgdir/vit.config" >/dev/null
S=$D/vit/g10-output/pytorch64/statistics
for f in kernels.config tensors.config liveness_analysis.config; do cmp "$T/v/statistics/$f" "$S/$f"; done
echo "ok ViT: G10's config and time_dict.txt give its published files"
