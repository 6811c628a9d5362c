#!/bin/sh
# memory_bad_input.sh - a dump the reader cannot take gives one line
# "trainscope: FILE:LINE: what" ("FILE: byte N: what" for a measured
# timeline), exit 2, and no output files at all.
set -u
BIN=${TS_BIN:-build/trainscope}
D=${TS_DATA:-../shared/data}/fx
[ -d "$D/resnet50" ] || { echo "skip: no $D"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
F=$D/resnet50/fx_graph_transformed_forward.py
B=$D/resnet50/fx_graph_transformed_backward.py
fails=0

# expect NAME FILE LINE PATTERN FWD BWD: exit 2, one stderr line naming FILE:LINE, no DIR
expect() {
    name=$1 file=$2 line=$3 pat=$4; shift 4
    rm -rf "$T/out"
    "$BIN" memory -o "$T/out" "$@" >"$T/stdout" 2>"$T/stderr"; rc=$?
    if [ $rc -ne 2 ] || [ "$(wc -l < "$T/stderr")" -ne 1 ] ||
       ! grep -q "^trainscope: $file:$line.*$pat" "$T/stderr" || [ -e "$T/out/kernels.config" ]; then
        echo "FAIL $name (rc $rc):"; cat "$T/stderr"; fails=$((fails+1))
    else echo "ok $name: $(cat "$T/stderr")"; fi
}

sed '5s/.*/        x = foo.bar(1)/' "$F" > "$T/syntax.py"
expect unknown_syntax "$T/syntax.py" 5 "unknown syntax" "$T/syntax.py" "$B"
sed '4s/"f32\[64, 64, 112, 112\]"/"q7[64, 64, 112, 112]"/' "$F" > "$T/dtype.py"
expect unknown_dtype "$T/dtype.py" 4 "unknown dtype 'q7'" "$T/dtype.py" "$B"
sed '4s/primals_321, primals_1/ghost_1, primals_1/' "$F" > "$T/undef.py"
expect used_before_defined "$T/undef.py" 4 "'ghost_1' is used before it is defined" "$T/undef.py" "$B"
V=$D/vit/fx_graph_transformed_backward.py
expect mismatched_pair "$V" 2 "do not belong together" "$F" "$V"
expect missing_file "$T/none.py" " byte 0: cannot open: No such file" "" "$T/none.py" "$B"
# a measured timeline whose bytes alive run past int64 (undefined behaviour
# until fuzz_mem_timeline found it, 25 Nov)
printf '[[1, 1, 9000000000000000000, 0], [2, 1, 9000000000000000000, 0]]' > "$T/overflow.raw"
expect timeline_overflow "$T/overflow.raw" " byte 62" "the bytes alive run past 64 bits" --trace "$T/overflow.raw"
# G10's own config file and time_dict.txt
printf 'nn_model_input_forward %s\nnn_model_input_backward %s\nGPU_frequncy_GHz 1.4\n' "$F" "$B" > "$T/key.config"
expect config_unknown_key "$T/key.config" 3 "'GPU_frequncy_GHz' is not a key G10's config parser knows" "$T/key.config"
printf 'nn_model_input_forward %s\nGPU_frequency_GHz fast\n' "$F" > "$T/num.config"
expect config_bad_number "$T/num.config" 2 "GPU_frequency_GHz needs a positive number, not 'fast'" "$T/num.config"
printf 'nn_model_input_forward %s\n' "$F" > "$T/half.config"
expect config_no_backward "$T/half.config" "" " needs nn_model_input_forward and nn_model_input_backward" "$T/half.config"
printf 'nn_model_input_forward %s\nnn_model_input_backward %s/gone.py\n' "$F" "$T" > "$T/gone.config"
expect config_missing_dump "$T/gone.config" 2 "nn_model_input_backward '$T/gone.py': no such file" "$T/gone.config"
printf '0 0.5 ms\n2 0.5 ms\n' > "$T/skip.txt"
expect time_dict_order "$T/skip.txt" "" " entry 2: kernel id \"2\" where 1 was expected" --g10-compat --times "$T/skip.txt" "$F" "$B"
printf '0 0.5 ms\n1 0.5 ms\n' > "$T/short.txt"
expect time_dict_count "$T/short.txt" "" " 2 times for 1834 kernels" --g10-compat --times "$T/short.txt" "$F" "$B"
expect memory_limit_below_weights "$F" "" " a 0.100 GiB limit is below the 0.131 GiB the weights, buffers and inputs take alone" \
    --memory-limit 0.1 "$F" "$B"
exit $fails
