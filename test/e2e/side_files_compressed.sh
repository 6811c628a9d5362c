#!/bin/sh
# side_files_compressed.sh - every input beside the traces reads through the
# one byte source, so a gzip or a zstd copy of it gives the same output as the
# plain file, byte for byte: fx dumps and a kernel-times table (memory), a
# gradients list, an nccl-tests log, a precision plan and an optimize plan
# (replay), PyTorch's memory timeline (memory --trace). Each set of copies
# sits in its own folder under the same names (compression is told by the
# magic bytes, not the name), so the outputs, which quote file names, must
# be identical. Bad content still names its line or byte through the
# compressed copies. Until 26 Nov only memory --trace read gzip (zlib's
# gzopen), and nothing read zstd.
set -u
BIN=${TS_BIN:-build/trainscope}
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
DATA=${TS_DATA:-../shared/data}
case $DATA in /*) ;; *) DATA=$PWD/$DATA ;; esac
W=$PWD/examples/workloads
P=$PWD/bench/precision
for need in "$DATA/fx/vit/time_dict.json" "$W/results/mlp_gradients.json" "$P/mlp_fp32.plan" \
            "$DATA/nccl-tests/nccl_16.log" "$DATA/kineto/memory_analysis/memory_timeline.raw.gz"; do
    [ -f "$need" ] || { echo "skip: $need absent"; exit 77; }
done
command -v gzip >/dev/null && command -v zstd >/dev/null || { echo "skip: gzip or zstd absent"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0

# copies NAME=SRC...: plain, gzip and zstd copies in $T/plain, $T/gz, $T/zst
copies() {
    for d in plain gz zst; do mkdir -p "$T/$d"; done
    for pair in "$@"; do
        name=${pair%%=*} src=${pair#*=}
        case $src in *.gz) gzip -dc "$src" ;; *) cat "$src" ;; esac > "$T/plain/$name"
        gzip -c "$T/plain/$name" > "$T/gz/$name"
        zstd -q -c "$T/plain/$name" > "$T/zst/$name"
    done
}
# same WHAT EXPECT_RC ARGS...: the command in each folder exits EXPECT_RC
# with the same stdout and stderr as on the plain files
same() {
    what=$1 want=$2; shift 2
    for d in plain gz zst; do
        (cd "$T/$d" && "$BIN" "$@" >"$T/$d.out" 2>"$T/$d.err"; echo $? >"$T/$d.rc")
    done
    for d in gz zst; do
        if [ "$(cat "$T/$d.rc")" != "$want" ] || [ "$(cat "$T/plain.rc")" != "$want" ] ||
           ! cmp -s "$T/plain.out" "$T/$d.out" || ! cmp -s "$T/plain.err" "$T/$d.err"; then
            echo "FAIL $what ($d): exit $(cat "$T/$d.rc"), plain $(cat "$T/plain.rc") (want $want)"
            diff "$T/plain.out" "$T/$d.out" | head -5; diff "$T/plain.err" "$T/$d.err" | head -5
            fails=$((fails+1)); return
        fi
    done
    echo "ok $what: $(wc -c <"$T/plain.out") bytes out, identical${want:+ (exit $want)} $(head -c 120 "$T/plain.err")"
}

copies fwd.py="$DATA/fx/vit/fx_graph_transformed_forward.py" bwd.py="$DATA/fx/vit/fx_graph_transformed_backward.py" \
    times.json="$DATA/fx/vit/time_dict.json" \
    grads.json="$W/results/mlp_gradients.json" gloo.log="$W/results/gloo_allreduce_perf.log" \
    nccl16.log="$DATA/nccl-tests/nccl_16.log" fp32.plan="$P/mlp_fp32.plan" \
    timeline.raw="$DATA/kineto/memory_analysis/memory_timeline.raw.gz"
same "fx dumps + kernel times" 0 memory --format json --times times.json fwd.py bwd.py
same "memory --trace timeline" 0 memory --trace --format json timeline.raw
set -- "$W"/traces/mlp_bucket1/round*/rank0.json.zst
MLP=$(dirname "$1")
same "gradients + gloo nccl-tests log" 0 replay --format json --bucket-mb 4 --gradients grads.json \
    --nccl-tests gloo.log "$MLP"/rank0.json.zst "$MLP"/rank1.json.zst
same "nccl-tests log (16 GPUs)" 0 replay --format json --world 16 --nccl-tests nccl16.log \
    "$DATA/kineto/nccl_parser_config/nccl_data.json.gz"
same "precision plan" 0 replay --format json --precision-plan fp32.plan --precision-trace "bf16=$P/mlp_bf16.json.gz" \
    "$P/mlp_fp32.json.gz"
# an optimize plan, written here, read back by replay --plan
"$BIN" optimize "$MLP" --gradients "$T/plain/grads.json" --nccl-tests "$T/plain/gloo.log" --budget 4 --seed 1 \
    -o "$T/opt" >/dev/null 2>&1 || { echo "FAIL optimize exited $?"; fails=$((fails+1)); }
copies plan.json="$T/opt/plan.json"
same "optimize plan" 0 replay --format json --gradients grads.json --nccl-tests gloo.log --plan plan.json "$MLP"

# Bad content: the error still names the line (fx dump, nccl-tests log) or
# byte (gradients, memory timeline) through the compressed copies.
sed '5s/.*/    x: "f32[2]" = torch.ops.aten.nosuchop(/' "$DATA/fx/vit/fx_graph_transformed_forward.py" > "$T/badfwd.py"
printf '[[1, 1, 100, 0], [2, 9, 4, 3]]' > "$T/badtl.raw"
printf '# nThread 1 nGpus 1\n#  size count type redop root time algbw busbw\n   1024 256 float sum -1 9x.1 0.01 0.01\n' > "$T/bad.log"
printf '{"parameters": [{"name": "w", "bytes": -4}]}' > "$T/badgrads.json"
copies fwd.py="$T/badfwd.py" timeline.raw="$T/badtl.raw" bad.log="$T/bad.log" grads.json="$T/badgrads.json"
same "bad fx dump" 2 memory fwd.py bwd.py
grep -q "^trainscope: fwd.py:5: " "$T/zst.err" || { echo "FAIL bad fx dump: no line 5: $(cat "$T/zst.err")"; fails=$((fails+1)); }
same "bad memory timeline" 2 memory --trace timeline.raw
grep -q "^trainscope: timeline.raw: byte 28: unknown action" "$T/gz.err" || { echo "FAIL bad timeline: $(cat "$T/gz.err")"; fails=$((fails+1)); }
same "bad nccl-tests row" 2 replay --world 4 --nccl-tests bad.log "$MLP"/rank0.json.zst
grep -q "^trainscope: bad.log: line 3: malformed" "$T/zst.err" || { echo "FAIL bad log: $(cat "$T/zst.err")"; fails=$((fails+1)); }
same "bad gradients" 2 replay --bucket-mb 4 --gradients grads.json "$MLP"/rank0.json.zst "$MLP"/rank1.json.zst
grep -q "^trainscope: grads.json: byte [0-9]*: " "$T/gz.err" || { echo "FAIL bad gradients: $(cat "$T/gz.err")"; fails=$((fails+1)); }

# A cut-short gzip copy is an error naming the compressed byte, not a shorter file.
head -c 2000 "$T/gz/fwd.py" > "$T/gz/cut.py"
(cd "$T/gz" && "$BIN" memory cut.py bwd.py) >/dev/null 2>"$T/cut.err"; rc=$?
if [ $rc -ne 2 ] || ! grep -q "^trainscope: cut.py: byte 2000: gzip stream cut short" "$T/cut.err"; then
    echo "FAIL cut gzip: exit $rc: $(cat "$T/cut.err")"; fails=$((fails+1))
else echo "ok cut gzip: $(cat "$T/cut.err")"; fi
exit $fails
