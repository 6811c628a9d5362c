#!/bin/sh
# cuda_collector_yield.sh - the CPU side of the CUDA collector standing aside
# for a program's own CUPTI profiler (torch's Kineto): a process under
# `record --cuda` that calls ts_cuda_yield() (trainscope_torch.py does, through
# ctypes, before Kineto starts) keeps running, exits 0, and its trace holds
# the instant saying the collector yielded. On a GPU machine the rest (Kineto's
# kernels recorded, none lost) is scripts/gpu-check.sh's kernels_bound check.
set -e
TS_BIN=${TS_BIN:-build/trainscope}
BIN_DIR=$(dirname "$TS_BIN")
[ -f "$BIN_DIR/libtrainscope-cuda.so" ] || { echo "skip: libtrainscope-cuda.so not built (no CUPTI)"; exit 77; }
tmp=$(mktemp -d /tmp/ts_e2e_cuda_yield.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$TS_BIN" record --cuda -o "$tmp/t" -- python3 -c '
import ctypes
lib = ctypes.CDLL(None)
lib.ts_cuda_yield()
lib.ts_cuda_yield()    # twice: one instant, no harm
print("after yield")' >"$tmp/out" 2>"$tmp/err" || { echo "record failed:"; cat "$tmp/err"; exit 1; }
grep -q "after yield" "$tmp/out" || { echo "the program's output is missing"; exit 1; }
n=$(python3 - "$tmp/t" <<'P'
import glob, json, sys
ev = [e for f in glob.glob(sys.argv[1] + "/*.json") for e in json.load(open(f))["traceEvents"]]
print(sum(1 for e in ev if e.get("cat") == "trainscope" and "cuda collector yielded CUPTI" in e.get("name", "")))
P
)
[ "$n" = 1 ] || { echo "expected one 'yielded' instant, found $n"; exit 1; }
echo ok
