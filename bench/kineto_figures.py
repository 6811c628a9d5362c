"""kineto_figures.py - figures of a Kineto trace computed in Python, apart
from trainscope, for bench/precision_gpu.sh and test/e2e/precision_gpu.sh to
compare trainscope's with: the ProfilerStep#N spans, the GPU ops' spans, the
device [memory] instants, and the union of GPU spans inside each step.
Not a trace reader for anything else (no nesting, no clock alignment).
"""
import gzip
import json


def trace(path):
    """(steps, gpu, mem): ProfilerStep# user annotations as (start, end) us,
    kernel/memcpy/memset spans sorted by start, and device ("Device Type" 1)
    [memory] instants as (ts, bytes, total allocated) in time order."""
    ev = json.load(gzip.open(path, "rt"))["traceEvents"]
    steps = sorted((float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in ev if e.get("ph") == "X"
                   and str(e.get("name", "")).startswith("ProfilerStep#") and e.get("cat") == "user_annotation")
    gpu = sorted((float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in ev
                 if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    mem = sorted((float(e["ts"]), e["args"]["Bytes"], e["args"]["Total Allocated"]) for e in ev
                 if e.get("name") == "[memory]" and e.get("args", {}).get("Device Type") == 1)
    return steps, gpu, mem


def busy(steps, gpu):
    """Per step: the union of the GPU spans inside it (us)."""
    out = []
    for a, b in steps:
        cur, u = a, 0.0
        for s, e in gpu:
            if s >= b:
                break
            lo, hi = max(s, cur), min(e, b)
            if hi > lo:
                u, cur = u + hi - lo, hi
        out.append(u)
    return out


def kernel_sum(steps, gpu):
    """Per step: the sum of the durations of the GPU spans starting in it (us)."""
    return [sum(e - s for s, e in gpu if a <= s < b) for a, b in steps]
