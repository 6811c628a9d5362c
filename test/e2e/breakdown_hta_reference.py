#!/usr/bin/python3
"""breakdown_hta_reference.py - an independent re-implementation, in plain
Python over the raw JSON, of the HTA definitions trainscope's breakdown and
stats follow (see src/analyze/breakdown.c for the citations). It is the oracle
the numbers in test/e2e/breakdown_*.sh and stats_*.sh were taken from:

    /usr/bin/python3 test/e2e/breakdown_hta_reference.py TRACE.json[.gz]

It shares no code with trainscope: timestamps are read as exact decimals
(microseconds with nanosecond fractions) and converted to integer ns.
HTA itself could not be run here (no network); this follows its source as of
0.6.1: when the file's "ts" column is float (a timestamp written with a
fraction, or an event without one: pandas' float64), every event's start is
rounded up and its end (ts + dur) down to whole microseconds
(hta/common/trace_parser.py, after PyTorch PR 122425); GPU ops are events with
a "stream" arg; with >= 2 ProfilerStep events, only GPU ops whose correlated
CPU event starts before the last ProfilerStep are kept; temporal = span /
union / union of COMPUTATION kernels. `--exact` skips the rounding (HTA v0.2).
On nccl_data.json.gz this prints HTA 0.6.1's own figures: idle 338,781,
compute 75,169, non-compute 21,636 us.
"""
import collections
import gzip
import json
import statistics
import sys
from decimal import Decimal


def load(path, hta_times=True):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        d = json.load(f, parse_float=Decimal)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    base = int(d.get("baseTimeNanoseconds", 0)) if isinstance(d, dict) else 0
    float_ts = any("ts" not in e or isinstance(e["ts"], Decimal) for e in ev)
    out = []
    for e in ev:
        if e.get("ph") != "X" or "dur" not in e or e.get("cat") == "Trace":
            continue
        ts = int(Decimal(e["ts"]) * 1000) + base
        dur = max(int(Decimal(e["dur"]) * 1000), 0)
        end = ts + dur
        if float_ts and hta_times:   # HTA's parser: ceil(ts), floor(ts + dur), in the file's microseconds
            ts = base + -((base - ts) // 1000) * 1000
            end = base + ((end - base) // 1000) * 1000
        args = e.get("args") or {}
        out.append(dict(name=e["name"], cat=e.get("cat"), ts=ts, dur=end - ts, end=end,
                        stream=args.get("stream", -1), corr=args.get("correlation", -1),
                        bytes=args.get("bytes"), tid=e.get("tid"), pid=e.get("pid")))
    return out


def kernel_type(name):
    low = name.lower()
    if "ncclkernel" in low or "nccldevkernel" in low or "nccl_kernel" in low or "rccl" in low or "gloo" in low \
            or low.startswith("mpi_"):
        return 1  # COMMUNICATION
    if "Memcpy" in name or "Memset" in name:
        return 2  # MEMORY
    return 0      # COMPUTATION


def merge(iv):
    iv = sorted(iv)
    out = []
    for a, b in iv:
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def total(iv):
    return sum(b - a for a, b in iv)


def overlap(x, y):
    t = 0
    i = j = 0
    while i < len(x) and j < len(y):
        lo, hi = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        t += max(0, hi - lo)
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return t


def breakdown(ev, delay_ns=30):
    cpu = [e for e in ev if e["stream"] == -1]
    gpu = [e for e in ev if e["stream"] != -1]
    launcher = {}
    dup = 0
    for e in cpu:
        if e["corr"] != -1:
            if e["corr"] in launcher:
                dup += 1
            launcher.setdefault(e["corr"], e)
    steps = [e for e in cpu if "ProfilerStep" in e["name"]]
    if len(set(e["name"] for e in steps)) >= 2:
        cutoff = max(e["ts"] for e in steps)
        gpu = [g for g in gpu if g["corr"] == -1 or (g["corr"] in launcher and launcher[g["corr"]]["ts"] < cutoff)]
    lists = [merge([(g["ts"], g["end"]) for g in gpu if kernel_type(g["name"]) == k]) for k in range(3)]
    allm = merge([(g["ts"], g["end"]) for g in gpu])
    span = allm[-1][1] - allm[0][0]
    idle = span - total(allm)
    compute = total(lists[0])
    # sweep over the three merged lists
    edges = []
    for k in range(3):
        for a, b in lists[k]:
            edges += [(a, 1 << k), (b, -(1 << k))]
    edges.sort(key=lambda x: x[0])
    combo = collections.Counter()
    run = 0
    for i in range(len(edges) - 1):
        run += edges[i][1]
        combo[run] += edges[i + 1][0] - edges[i][0]
    comm = total(lists[1])
    ov = 100.0 * overlap(lists[1], lists[0]) / comm if comm else None
    # idle per stream
    streams = {}
    for s in sorted(set(g["stream"] for g in gpu)):
        ops = sorted([g for g in gpu if g["stream"] == s], key=lambda g: g["ts"])
        hw = kw = ot = 0
        for p, g in zip(ops, ops[1:]):
            gap = g["ts"] - p["end"]
            l = launcher.get(g["corr"])
            if l is not None and l["ts"] > p["end"]:
                hw += gap
            elif gap < delay_ns:
                kw += gap
            else:
                ot += gap
        streams[s] = dict(ops=len(ops), host_wait=hw, kernel_wait=kw, other=ot)
    delays = sorted(g["ts"] - launcher[g["corr"]]["ts"] for g in gpu if g["corr"] in launcher)
    return dict(n_gpu=len(gpu), dup_corr=dup, span=span, idle=idle, compute=compute, non_compute=span - compute - idle,
                combo=dict(combo), overlap_pct=ov, streams=streams, n_launch=len(delays),
                delay_mean=statistics.mean(delays) if delays else None,
                delay_median=statistics.median(delays) if delays else None)


def stats(ev, names):
    """count, total, median, sample stddev of slices named `names`, inside the
    ProfilerStep window (whole trace without steps), by start time."""
    steps = [e for e in ev if e["name"].startswith("ProfilerStep#") and e["stream"] == -1]
    if steps:
        a, b = min(e["ts"] for e in steps), max(e["end"] for e in steps)
    else:
        a, b = min(e["ts"] for e in ev), max(e["end"] for e in ev)
    out = {}
    for n in names:
        d = sorted(e["dur"] for e in ev if e["name"] == n and e["stream"] == -1 and a <= e["ts"] < b)
        if d:
            out[n] = dict(count=len(d), total=sum(d), median=statistics.median(d),
                          stddev=statistics.stdev(d) if len(d) > 1 else 0.0, window=b - a)
    return out


if __name__ == "__main__":
    exact = sys.argv[1] == "--exact"
    if exact:
        del sys.argv[1]
    ev = load(sys.argv[1], hta_times=not exact)
    if any(e["stream"] != -1 for e in ev):
        print(json.dumps(breakdown(ev), indent=1, default=str))
    names = sys.argv[2:]
    if names:   # stats: trainscope's own exact times, never HTA's rounding
        print(json.dumps(stats(load(sys.argv[1], hta_times=False), names), indent=1, default=str))
