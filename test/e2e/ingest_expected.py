#!/usr/bin/python3
"""ingest_expected.py - independent counts for the ingest end-to-end test.

Run once with Debian's python3 (json.load, no trainscope code); its output is
pasted into test/unit/test_ingest.c (the `expect[]` table). For each trace:
events in traceEvents, events per phase, slices (X plus matched B/E), instants
(i/I), flows (one per 's' event), iterations (ProfilerStep#N slices on the
first host thread that has one), and the rank (distributedInfo.rank, else the
number in the file name, else 0).
"""
import gzip, json, os, re, sys
from collections import Counter

GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "gpu_user_annotation"}

def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt", encoding="utf-8", errors="replace") as f:
        return json.load(f)

def counts(path):
    d = load(path)
    ev = d.get("traceEvents", []) if isinstance(d, dict) else d
    ph = Counter(e.get("ph") for e in ev)
    marker_track, iters = None, 0
    for e in ev:
        if e.get("ph") != "X" or e.get("cat") in GPU_CATS: continue
        if not str(e.get("name", "")).startswith("ProfilerStep#"): continue
        t = (e.get("pid"), e.get("tid"))
        if marker_track is None: marker_track = t
        if t == marker_track: iters += 1
    rank = None
    if isinstance(d, dict) and isinstance(d.get("distributedInfo"), dict):
        rank = d["distributedInfo"].get("rank")
    if rank is None:
        m = re.search(r"rank[-_]?(\d+)", os.path.basename(path), re.I)
        rank = int(m.group(1)) if m else 0
    return dict(events=len(ev), X=ph["X"], B=ph["B"], E=ph["E"], i=ph["i"] + ph["I"], M=ph["M"],
                s=ph["s"], f=ph["f"], C=ph["C"], iterations=iters, rank=rank)

if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else "../shared/data"
    for sub in ("kineto", "torch-cpu-legacy"):
        for dp, _, fs in sorted(os.walk(os.path.join(root, sub))):
            for f in sorted(fs):
                if not (f.endswith(".json") or f.endswith(".json.gz")): continue
                p = os.path.join(dp, f)
                c = counts(p)
                print('    {"%s", %d, %d, %d, %d, %d, %d, %d, %d},' % (
                    os.path.relpath(p, root), c["rank"], c["events"], c["X"] + min(c["B"], c["E"]),
                    c["i"], c["s"], c["f"], c["M"], c["iterations"]))
