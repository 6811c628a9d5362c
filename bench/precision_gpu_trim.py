#!/usr/bin/env python3
"""precision_gpu_trim.py - copies the output of precision_gt_gpu.py into the
repository's bench/precision-gpu/ smaller: the same events, with the CPU
ops' arguments the precision what-if does not read dropped ("Concrete
Inputs", "Input type", "Input Strides", ...; "Input Dims", "Sequence
number", "External id" and the ids kept), the flow events dropped (the
what-if binds kernels to launches by their "correlation" argument), and
the JSON minified and gzipped at level 9. Every kernel, runtime call, op,
range and [memory] instant stays, with its times unchanged. Not for
anything else: the untrimmed run is the ground truth.

    python3 bench/precision_gpu_trim.py SRC_DIR DST_DIR
"""
import gzip
import json
import os
import shutil
import sys

KEEP_OP_ARGS = {"Input Dims", "Sequence number", "External id", "Fwd thread id", "Record function id",
                "correlation"}


def trim(src, dst):
    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    out, dropped_args, dropped_flows = [], 0, 0
    for e in ev:
        if e.get("ph") in ("s", "f", "t"):
            dropped_flows += 1
            continue
        if e.get("cat") in ("cpu_op", "user_annotation") and isinstance(e.get("args"), dict):
            a = {k: v for k, v in e["args"].items() if k in KEEP_OP_ARGS}
            dropped_args += len(e["args"]) - len(a)
            e["args"] = a
        out.append(e)
    if isinstance(doc, dict):
        doc["traceEvents"] = out
        doc["trainscope_trimmed"] = {"by": "bench/precision_gpu_trim.py", "op_args_dropped": dropped_args,
                                     "flow_events_dropped": dropped_flows}
    else:
        doc = out
    tmp = dst + ".tmp"
    with gzip.open(tmp, "wt", compresslevel=9) as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, dst)


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    total = 0
    for name in sorted(os.listdir(src)):
        s, d = os.path.join(src, name), os.path.join(dst, name)
        if name.endswith(".json.gz"):
            trim(s, d)
        elif name.endswith((".json", ".plan", ".greedy", ".txt", ".log")):
            shutil.copy(s, d)
        else:
            continue
        total += os.path.getsize(d)
        print("%-28s %9d -> %9d bytes" % (name, os.path.getsize(s), os.path.getsize(d)))
    print("total %.2f MB in %s" % (total / 1e6, dst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
