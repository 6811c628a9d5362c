#!/bin/sh
# scale_bounded_summaries.sh - breakdown, info and diff (and stats) from rank
# files (issue 27): the bounded path (the default: each rank kept, as it is
# read, as what the command reads; breakdown's stragglers graph built rank
# by rank) prints what --in-memory (every rank read whole, the path before)
# prints, stdout, stderr and exit code, on every real trace set of the
# shared data (Kineto GPU and CPU-only ranks, Kineto with an execution trace,
# legacy CPU traces, an Nsight Systems export) and of examples/ (the DDP
# gloo and memory pairs, a testbed run), in the formats and windows the
# commands offer. Ranks of two jobs leave breakdown without its stragglers
# graph and say why, alike; bad input (a dangling rank file, two files
# claiming one rank) is named alike, and --max-rss too small stops breakdown, info and
# diff with exit 2, the message and no output.
set -e
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
K=$DATA/kineto
[ -r "$K/trace_filter/sampled_rank-0.json.gz" ] || { echo "skip: $K absent (shared data)"; exit 77; }
[ -r "$DATA/nsys/cloverleaf-cuda.nsys.sqlite" ] || { echo "skip: $DATA/nsys absent (shared data)"; exit 77; }
[ -d examples/testbed/traces/mlp_w2_r200_b5/round0 ] || { echo "skip: examples/testbed traces absent"; exit 77; }
tmp=$(mktemp -d /tmp/ts_e2e_summaries.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

n=0
same() {   # same ARGS...: the bounded path and --in-memory print the same and exit alike
    set +e
    "$BIN" "$@" >"$tmp/a" 2>"$tmp/ae"; ra=$?
    "$BIN" "$@" --in-memory >"$tmp/b" 2>"$tmp/be"; rb=$?
    set -e
    [ $ra = $rb ] || { echo "exit $ra bounded, $rb --in-memory: $*"; cat "$tmp/ae"; exit 1; }
    cmp -s "$tmp/a" "$tmp/b" || { echo "bounded and --in-memory differ: $*"; diff "$tmp/a" "$tmp/b" | head; exit 1; }
    cmp -s "$tmp/ae" "$tmp/be" || { echo "stderr differs: $*"; diff "$tmp/ae" "$tmp/be" | head; exit 1; }
    [ $ra != 0 ] || [ -s "$tmp/a" ] || { echo "exit 0 and no output: $*"; exit 1; }
    n=$((n + 1))
}

SETS="$K/trace_filter $K/nccl_parser_config $K/cpu_only $K/call_stack $K/cupti_profiler
$K/critical_path/alexnet $K/critical_path/cuda_event_sync $K/critical_path/cuda_event_sync_multi_stream
$K/critical_path/simple_add $K/distributed_info_unavailable $K/execution_trace $K/large_integer_trace
$K/trace_file_list $K/trace_compare/base $K/trace_compare/test $DATA/torch-cpu-legacy/ddp_gloo_rank0.json
$DATA/torch-cpu-legacy/cnn_cpu_trace.json $DATA/nsys/cloverleaf-cuda.nsys.sqlite examples/ddp_gloo
examples/ddp_memory examples/testbed/traces/mlp_w2_r200_b5/round0"
for set in $SETS; do
    same breakdown "$set"
    same breakdown --format json "$set"
    same breakdown --window all --format json --top 0 "$set"
    same info "$set"
    same info --format json "$set"
    same diff --format json "$set" "$set"
    same diff --device gpu --format json "$set" "$set"
    same stats --format json "$set"
done
# Several ranks: the stragglers, CSV tables, asked iterations.
for set in $K/trace_filter examples/ddp_gloo examples/ddp_memory examples/testbed/traces/mlp_w2_r200_b5/round0; do
    same breakdown --iterations 1:3 "$set"
    same breakdown --kernel-delay 1000 --format csv --table straggler_collectives "$set"
    same info --format csv --table meta "$set"
done
# diff across traces: HTA's pair, two runs of a testbed job, every device.
same diff "$K/trace_compare/base" "$K/trace_compare/test"
same diff --whole --format json "$K/trace_compare/base" "$K/trace_compare/test"
same diff --device gpu --format json examples/testbed/traces/mlp_w2_r200_b5/round0 examples/testbed/traces/mlp_w2_r200_b5/round1
same diff --device cpu --iteration 2 examples/ddp_gloo examples/ddp_memory
# Ranks of two jobs (world sizes 128 and 300): no stragglers graph, the
# warning saying why, the rest of the breakdown as the old path gives it.
mkdir "$tmp/mixed"
cp "$K/trace_filter/sampled_rank-1.json.gz" "$K"/cpu_only/*.gz "$tmp/mixed/"
same breakdown "$tmp/mixed"
same breakdown --format json "$tmp/mixed"
grep -q '"no straggler report: .* says world size 300 but .* says 128: traces of different jobs"' "$tmp/a" ||
    { echo "mixed jobs: no stragglers warning:"; tail -c 400 "$tmp/a"; exit 1; }

# Two files claiming one rank, a dangling rank file: named, alike, exit 2.
mkdir "$tmp/bad" "$tmp/dup"
cp "$K"/trace_filter/*.gz "$tmp/bad/"
ln -s "$tmp/gone.json" "$tmp/bad/rank-2.json"
cp "$K/trace_filter/sampled_rank-0.json.gz" "$K/trace_filter/sampled_rank-1.json.gz" "$tmp/dup/"
cp "$K/trace_filter/sampled_rank-1.json.gz" "$tmp/dup/again.json.gz"
for d in bad dup "$DATA/torch-cpu-legacy"; do
    case $d in /*|.*) set=$d ;; *) set=$tmp/$d ;; esac
    for cmd in breakdown info; do
        same $cmd "$set"
        grep -q "$set" "$tmp/ae" || { echo "$cmd $d: the file is not named:"; cat "$tmp/ae"; exit 1; }
        [ ! -s "$tmp/a" ] || { echo "$cmd $d: partial output"; exit 1; }
    done
    same diff "$set" "$K/trace_filter"
done
grep -q "byte 0: claims rank 0" "$tmp/ae" || { echo "duplicate rank not said:"; cat "$tmp/ae"; exit 1; }

# A budget far too small: exit 2, the reason, nothing on stdout.
for cmd in "breakdown $K/trace_filter" "info $K/trace_filter" "diff $K/trace_filter $K/trace_filter"; do
    set +e
    "$BIN" $cmd --max-rss 0.002 >"$tmp/o" 2>"$tmp/e"; rc=$?
    set -e
    [ $rc = 2 ] || { echo "$cmd --max-rss 0.002: exit $rc, expected 2"; exit 1; }
    grep -q "stopped: needs more than --max-rss 0.002 GB" "$tmp/e" || { echo "$cmd: no budget message:"; cat "$tmp/e"; exit 1; }
    [ ! -s "$tmp/o" ] || { echo "$cmd --max-rss: partial output"; exit 1; }
done
echo "scale_bounded_summaries: ok ($n comparisons)"
