#!/bin/sh
# gpu-check.sh - one command, a few minutes, on a machine with NVIDIA GPUs and
# its own PyTorch (with Kineto) where nothing can be installed: `trainscope
# record --torch --cuda --nccl` of a small CUDA DDP training (one process per
# GPU through torchrun; one GPU makes a one-rank NCCL communicator, since NCCL
# refuses two ranks on one GPU), then stats, breakdown and critical-path on
# the result. One line per check: PASS, FAIL or SKIP, then a count.
#
#   make gpu-bundle    (here), carry build/gpu-bundle, then there:
#   sh build/gpu-bundle/gpu-check.sh [OUTDIR]       PY=python3 by default
#
# Without a GPU (or a torch without CUDA) it runs the same job on CPU over gloo
# with a shell launcher and 2 ranks, and the GPU checks say SKIP: that is how
# the bundle is rehearsed on a machine without a GPU.
# Checks: record's exit and one file per rank; torch's profiler (Kineto where
# torch has it) with the asked iterations and input shapes; kernels bound to
# their launches (ac2g flows); NCCL collectives recorded by the collector and
# matched across ranks; CUPTI timestamps on the host clock (CUPTI's launch
# records inside the torch ops that made them, each kernel after its launch
# and within torch's span); each analysis exits 0 with output.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TS=${TS:-$HERE/trainscope}
[ -x "$TS" ] || TS=$HERE/../build/gpu-bundle/trainscope
PY=${PY:-python3}
OUT=${1:-$(mktemp -d /tmp/ts_gpu_check.XXXXXX)}
mkdir -p "$OUT"
n_pass=0 n_fail=0 n_skip=0
check() {  # check NAME PASS|FAIL|SKIP DETAIL
    echo "$2 $1: $3"
    case $2 in PASS) n_pass=$((n_pass + 1)) ;; FAIL) n_fail=$((n_fail + 1)) ;; *) n_skip=$((n_skip + 1)) ;; esac
}
finish() {
    echo "gpu-check: $n_pass passed, $n_fail failed, $n_skip skipped (files in $OUT)"
    [ $n_fail = 0 ]
    exit $?
}
[ -x "$TS" ] || { check bundle FAIL "no trainscope at $TS (make gpu-bundle)"; finish; }
if ! info=$($PY -c "import torch; print(torch.__version__, torch.cuda.device_count() if torch.cuda.is_available() else 0, int(torch.autograd.kineto_available()))" 2>/dev/null); then
    check torch SKIP "$PY has no torch"; finish
fi
set -- $info
ver=$1 ngpu=$2 kineto=$3
echo "gpu-check: torch $ver, $ngpu GPU(s), Kineto $kineto, $($TS --version 2>/dev/null || echo trainscope)"

STEPS=8 WIN=2:6   # 8 optimizer steps, iterations 2..5 recorded
cat >"$OUT/train.py" <<'P'
import os, sys, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
local = int(os.environ.get("LOCAL_RANK", rank))
gpu = torch.cuda.is_available()
dev = torch.device("cuda", local) if gpu else torch.device("cpu")
if gpu:
    torch.cuda.set_device(dev)
torch.manual_seed(0)
dist.init_process_group("nccl" if gpu else "gloo")
h = 4096 if gpu else 512
model = DDP(torch.nn.Sequential(torch.nn.Linear(1024, h), torch.nn.ReLU(), torch.nn.Linear(h, h),
                                torch.nn.ReLU(), torch.nn.Linear(h, 10)).to(dev),
            device_ids=[local] if gpu else None, bucket_cap_mb=8)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(int(sys.argv[1])):
    x, y = torch.randn(256, 1024, device=dev), torch.randint(0, 10, (256,), device=dev)
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
if gpu:
    torch.cuda.synchronize()
print("rank %d trained" % rank)
dist.destroy_process_group()
P
port=$($PY -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
if [ "$ngpu" -gt 0 ]; then
    world=$ngpu flags="--cuda --nccl"
    set -- $PY -m torch.distributed.run --nproc_per_node "$ngpu" --master_port "$port" "$OUT/train.py" $STEPS
else
    world=2 flags=""
    cat >"$OUT/launch.sh" <<P
#!/bin/sh
for r in 0 1; do MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=\$r WORLD_SIZE=2 $PY "$OUT/train.py" $STEPS & done
wait
P
    set -- sh "$OUT/launch.sh"
fi

# ---- record ----
rm -rf "$OUT/t"
rc=0
timeout 240 "$TS" record --torch --steps $WIN $flags -o "$OUT/t" -- "$@" \
    >"$OUT/record.out" 2>"$OUT/record.err" || rc=$?
n_files=$(ls "$OUT"/t/rank-*.json 2>/dev/null | wc -l)
if [ $rc = 0 ] && [ "$n_files" = "$world" ]; then
    check record PASS "exit 0, $n_files rank files ($(grep -c trained "$OUT/record.out") ranks trained)"
else
    check record FAIL "exit $rc, $n_files rank files of $world: $(tail -3 "$OUT/record.err" | tr '\n' ' ')"
fi
grep '^trainscope:' "$OUT/record.err" | sed 's/^/  /'

# ---- the trace's content ----
$PY - "$OUT/t" "$ngpu" "$kineto" <<'P' >"$OUT/content"
import bisect, glob, itertools, json, statistics, sys
files, ngpu, kineto = sorted(glob.glob(sys.argv[1] + "/rank-*.json")), int(sys.argv[2]), sys.argv[3] == "1"
def line(name, ok, detail):
    print("%s %s: %s" % ("SKIP" if ok is None else "PASS" if ok else "FAIL", name, detail))
docs = []
for f in files:
    try:
        docs.append(json.load(open(f)))
    except Exception as e:
        line("json", False, "%s: %s" % (f, e))
if not docs:
    line("torch_profiler", False, "no trace to read"); sys.exit()
steps, shapes = [], 0
for d in docs:
    x = [e for e in d["traceEvents"] if e.get("ph") == "X"]
    steps.append(sorted(e["name"] for e in x if e["name"].startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation"))
    shapes += sum(1 for e in x if e.get("cat") == "cpu_op" and (e.get("args") or {}).get("Input Dims"))
want = ["ProfilerStep#%d" % i for i in range(2, 6)]
line("torch_profiler", all(s == want for s in steps) and shapes > 0,
     "iterations per rank %s (want 2..5), %d ops with Input Dims, %s" % ([len(s) for s in steps], shapes,
     "Kineto" if kineto else "legacy profiler"))
if ngpu == 0:
    for n in ("kernels_bound", "nccl_recorded", "host_clock"):
        line(n, None, "no GPU")
    sys.exit()
n_k = n_bound = n_launch = n_inside = 0
lags, outside = [], 0
n_nccl, n_nccl_k = [], []
for d in docs:
    ev = d["traceEvents"]
    at = {}
    for e in ev:
        if e.get("ph") in ("s", "f") and e.get("cat") == "ac2g":
            at[(e["ph"], e["pid"], e["tid"], e["ts"])] = e["id"]
    launch = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            i = at.get(("s", e["pid"], e["tid"], e["ts"]))
            if i is not None:
                launch[i] = e
    cpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    lo, hi = min(e["ts"] for e in cpu), max(e["ts"] + e["dur"] for e in cpu)
    # CUPTI's launch records (its clock) inside torch's ops (the host clock) on the same thread:
    # per thread, ops by start with the running maximum of their ends
    ops = {}
    for e in sorted(cpu, key=lambda e: e["ts"]):
        ops.setdefault((e["pid"], e["tid"]), []).append(e)
    idx = {k: ([e["ts"] for e in v], list(itertools.accumulate((e["ts"] + e["dur"] for e in v), max)))
           for k, v in ops.items()}
    for e in launch.values():
        starts, ends = idx.get((e["pid"], e["tid"]), ([], []))
        i = bisect.bisect_right(starts, e["ts"]) - 1
        n_launch += 1
        n_inside += i >= 0 and ends[i] >= e["ts"] + e["dur"]
    for e in ev:
        if e.get("ph") != "X" or e.get("cat") != "kernel":
            continue
        n_k += 1
        i = at.get(("f", e["pid"], e["tid"], e["ts"]))
        if i in launch:
            n_bound += 1
            lags.append(e["ts"] - launch[i]["ts"])
        if not (lo - 1e6 <= e["ts"] <= hi + 5e6):
            outside += 1
    n_nccl.append(sum(1 for e in ev if e.get("ph") == "X" and e["name"].startswith("nccl:")
                      and "Collective name" in (e.get("args") or {})))
    n_nccl_k.append(sum(1 for e in ev if e.get("cat") == "kernel" and e["name"].startswith("nccl")))
line("kernels_bound", n_k > 0 and n_bound >= 0.99 * n_k,
     "%d of %d kernels bound to their launch by an ac2g flow" % (n_bound, n_k))
# A one-rank communicator (one GPU) launches no NCCL kernel: NCCL copies out-of-place buffers (a DtoD memcpy)
# and does nothing in place, as DDP's buckets are; seen on an H200 with NCCL 2.28.9.
line("nccl_recorded", all(n >= 4 for n in n_nccl) and (ngpu == 1 or all(n > 0 for n in n_nccl_k)),
     "NCCL calls with Collective name per rank %s (>= 4 iterations), NCCL kernels %s%s"
     % (n_nccl, n_nccl_k, " (one rank: NCCL launches none)" if ngpu == 1 else ""))
# A kernel may wait seconds in its queue (the HTA sample trace has one 4.2 s after its launch); a wrong
# clock is off by hours or decades: no kernel before its launch, a median lag under 100 ms.
ok = bool(lags) and min(lags) >= 0 and statistics.median(lags) < 1e5 and outside == 0 and n_inside >= 0.9 * n_launch > 0
line("host_clock", ok, "%d of %d CUPTI launches inside a torch op of their thread; kernel start - launch start: "
     "min %.1f us, median %.1f us, max %.1f us; %d kernels outside torch's span"
     % (n_inside, n_launch, min(lags or [0]), statistics.median(lags or [0]), max(lags or [0]), outside))
P
while read -r st name detail; do check "${name%:}" "$st" "$detail"; done <"$OUT/content"

# ---- the CUDA collector alone: no torch profiler, so trainscope's CUPTI records the GPU ----
if [ "$ngpu" -gt 0 ]; then
    cat >"$OUT/cuda_only.py" <<'P'
import torch
x = torch.randn(2048, 2048, device="cuda")
for i in range(20):
    y = (x @ x).cpu()      # a GEMM kernel, then a device-to-host copy
torch.cuda.synchronize()
print("cuda_only done")
P
    rm -rf "$OUT/c"
    rc=0
    timeout 120 "$TS" record --cuda -o "$OUT/c" -- $PY "$OUT/cuda_only.py" >"$OUT/cuda_only.out" 2>"$OUT/cuda_only.err" || rc=$?
    $PY - "$OUT/c" $rc <<'P' >"$OUT/content_cuda"
import glob, json, statistics, sys
files, rc = sorted(glob.glob(sys.argv[1] + "/*.json")), int(sys.argv[2])
ev = [e for f in files for e in json.load(open(f))["traceEvents"]]
flow = {(e["ph"], e["pid"], e["tid"], e["ts"]): e["id"] for e in ev if e.get("ph") in ("s", "f") and e.get("cat") == "ac2g"}
launch = {flow[k]: e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")
          for k in [("s", e["pid"], e["tid"], e["ts"])] if k in flow}
kern = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
copies = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "gpu_memcpy" and "DtoH" in e["name"]]
lags = [k["ts"] - launch[i]["ts"] for k in kern for i in [flow.get(("f", k["pid"], k["tid"], k["ts"]))] if i in launch]
notes = [e["name"] for e in ev if e.get("cat") == "trainscope" and "cuda collector" in e.get("name", "")]
ok = rc == 0 and len(kern) >= 20 and len(lags) >= 0.99 * len(kern) and len(copies) >= 20 and min(lags) >= 0 \
    and statistics.median(lags) < 1e5
print("%s cuda_collector: exit %d, %d kernels (%d bound to their launch), %d DtoH copies, launch->kernel lag min %.1f us "
      "median %.1f us%s" % ("PASS" if ok else "FAIL", rc, len(kern), len(lags), len(copies), min(lags or [0]),
      statistics.median(lags or [0]), "; " + "; ".join(notes) if notes else ""))
P
    while read -r st name detail; do check "${name%:}" "$st" "$detail"; done <"$OUT/content_cuda"
else
    check cuda_collector SKIP "no GPU"
fi

# ---- the analyses ----
for cmd in stats breakdown critical-path; do
    rc=0
    timeout 120 "$TS" $cmd "$OUT"/t/rank-*.json >"$OUT/$cmd.out" 2>"$OUT/$cmd.err" || rc=$?
    lines=$(wc -l <"$OUT/$cmd.out")
    if [ $rc = 0 ] && [ "$lines" -gt 2 ]; then
        check "$cmd" PASS "exit 0, $lines lines: $(head -1 "$OUT/$cmd.out")"
    else
        check "$cmd" FAIL "exit $rc, $lines lines: $(head -2 "$OUT/$cmd.err" | tr '\n' ' ')"
    fi
done
matched=$(sed -n 's/.* \([0-9][0-9]*\) collectives matched.*/\1/p' "$OUT/critical-path.out")
if [ -n "$matched" ] && [ "$matched" -gt 0 ]; then
    check collectives_matched PASS "$(grep 'collectives matched' "$OUT/critical-path.out" | sed 's/^ *//')"
else
    check collectives_matched FAIL "critical-path matched none: $(sed -n 3p "$OUT/critical-path.out")"
fi
finish
