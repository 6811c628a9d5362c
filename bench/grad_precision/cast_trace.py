#!/usr/bin/python3
"""Casts of the sizes DDP's compress hooks cast, profiled: the trace
`trainscope replay --grad-precision P --cast-trace` fits its cast cost on.

What it is for: the fp16_compress_hook / bf16_compress_hook of
torch.distributed.algorithms.ddp_comm_hooks.default_hooks cast each gradient
bucket fp32 -> 16 bits (and back once reduced); how long such a cast takes
on this machine is what the what-if needs, measured apart from the job (the
job's own trace, without the hook, has no such casts). One thread (as the
testbed's ranks), Debian's torch (/usr/bin/python3), buffers of 2^12 to 2^22
elements cast fp32 -> P and P -> fp32, interleaved in a shuffled order, 5
times each. Written as a Chrome trace of top-level aten::to ops with "Input
Dims" (the legacy profiler's own exporter drops shapes). Not for: timing a
whole step.

Run: /usr/bin/python3 bench/grad_precision/cast_trace.py --precision fp16 -o casts_fp16.json.gz
"""
import argparse
import gzip
import json
import os
import random

import torch
from torch.autograd import profiler_legacy


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--precision", choices=["fp16", "bf16"], default="fp16")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    torch.set_num_threads(1)
    low = torch.float16 if a.precision == "fp16" else torch.bfloat16
    jobs = [(1 << k, d) for k in range(12, 23) for d in ("down", "up")] * a.reps
    random.Random(0).shuffle(jobs)
    bufs = {n: (torch.randn(n), torch.randn(n).to(low)) for n in {j[0] for j in jobs}}
    with profiler_legacy.profile(record_shapes=True) as prof:
        for n, d in jobs:
            hi, lo = bufs[n]
            (hi.to(low) if d == "down" else lo.to(torch.float32))
    out = []
    for e in prof.function_events:
        if e.name != "aten::to" or not e.input_shapes:
            continue
        out.append({"ph": "X", "cat": "cpu_op", "name": e.name, "pid": 1, "tid": 1,
                    "ts": round(e.time_range.start, 3), "dur": round(e.time_range.end - e.time_range.start, 3),
                    "args": {"Input Dims": e.input_shapes, "Sequence number": e.sequence_nr}})
    out.sort(key=lambda x: x["ts"])
    meta = {"precision": a.precision, "torch": torch.__version__, "threads": 1, "casts": len(out),
            "loadavg_1m": os.getloadavg()[0]}
    tmp = a.output + ".tmp"
    with gzip.open(tmp, "wt") as f:
        json.dump({"traceEvents": out, "trainscope_cast_trace": meta}, f, separators=(",", ":"))
    os.replace(tmp, a.output)
    print("cast_trace: %d casts (%s <-> fp32, 2^12 to 2^22 elements) in %s" % (len(out), a.precision, a.output))


if __name__ == "__main__":
    main()
