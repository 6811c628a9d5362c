#!/usr/bin/python3
"""views_check.py - the views of `trainscope views` recomputed from the input
files themselves, independently of trainscope's readers and analyses (the
expected values of test/e2e/views*.sh). Times are read as decimals, so a
Kineto trace's microseconds become exact nanoseconds.

Usage:
  scripts/views_check.py kineto TRACE.json[.gz] DIR   DIR holds `views --format json` of transfers,
                                                      queues, comm and callstack (empty file: exit 1)
  scripts/views_check.py snapshot SNAPSHOT.pickle[.gz] ALLOCATOR.json
  scripts/views_check.py memtrace TRACE_DIR ALLOCATOR.json   [memory] events of record --torch --memory
  scripts/views_check.py mpi TRACE_DIR COMM.json             record --mpi traces: send/recv pairs
Prints what it checked; exit 1 with the differences.
"""
import collections, decimal, glob, gzip, json, math, os, pickle, sys

def kineto(argv):
    """Transfers, queues, comm latency and the flame graph of one Kineto trace."""
    D = decimal.Decimal
    path, outdir = argv[0], argv[1]
    op = gzip.open if path.endswith(".gz") else open
    doc = json.load(op(path, "rt"), parse_float=D)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    base = int(doc.get("baseTimeNanoseconds", 0)) if isinstance(doc, dict) else 0
    def ns(x): return int(D(x) * 1000) + base
    def dns(x): return int(D(x) * 1000)
    GPU = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "Kernel", "Memcpy", "Memset"}
    OPS = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memcpy", "Memcpy": "memcpy", "gpu_memset": "memset", "Memset": "memset"}
    gpu_pids = {e["pid"] for e in ev if e.get("ph") == "X" and e.get("cat") in GPU}
    X = [e for e in ev if e.get("ph") == "X"]
    fails = []
    def check(what, a, b):
        if a != b: fails.append("%s: view %r, python %r" % (what, a, b))
    def load(v):
        f = "%s/%s.json" % (outdir, v)
        return json.load(open(f))["tables"] if os.path.getsize(f) else None   # empty: the view found nothing (exit 1)
    view = {v: load(v) for v in ("transfers", "queues", "comm", "callstack")}
    for v in view:
        if view[v] is None: view[v] = {"totals": [], "bins": [], "streams": [], "latency": [], "flame": [], "threads": []}

    dirs = {"HtoD": "H2D", "DtoH": "D2H", "DtoD": "D2D", "PtoP": "P2P"}
    per = collections.defaultdict(list)
    for e in X:
        if OPS.get(e.get("cat")) != "memcpy": continue
        d = next((v for k, v in dirs.items() if k in e["name"]), "other")
        per[d].append((ns(e["ts"]), ns(e["ts"]) + dns(e.get("dur", 0)), int(e.get("args", {}).get("bytes", 0))))
    rows = {r["direction"]: r for r in view["transfers"]["totals"]}
    check("transfer directions", sorted(rows), sorted(per))
    for d, cs in per.items():
        r = rows.get(d, {})
        check(d + " copies", r.get("copies"), len(cs))
        check(d + " bytes", r.get("bytes"), sum(c[2] for c in cs))
        busy, cur = 0, None
        for a, b, _ in sorted(cs):
            if cur and a <= cur[1]: cur[1] = max(cur[1], b)
            else:
                if cur: busy += cur[1] - cur[0]
                cur = [a, b]
        busy += cur[1] - cur[0]
        check(d + " busy_us", r.get("busy_us"), float(D(busy) / 1000))
        check(d + " time_us", r.get("time_us"), float(D(sum(b - a for a, b, _ in cs)) / 1000))
        binsum = sum(b["bytes"] for b in view["transfers"]["bins"] if b["direction"] == d)
        if abs(binsum - sum(c[2] for c in cs)) > len(view["transfers"]["bins"]):
            fails.append("%s: bins hold %d bytes, copies %d" % (d, binsum, sum(c[2] for c in cs)))

    launch = {}
    for e in X:
        if e.get("cat") in ("cuda_runtime", "cuda_driver", "Runtime") and "correlation" in e.get("args", {}):
            launch[int(e["args"]["correlation"])] = ns(e["ts"])
    streams = collections.defaultdict(list)
    unlinked = collections.Counter()
    for e in X:
        if e.get("cat") not in OPS: continue
        s = ns(e["ts"]); c = e.get("args", {}).get("correlation")
        j = launch.get(int(c)) if c is not None else None
        if j is None: unlinked[(e["pid"], e["tid"])] += 1; j = s
        streams[(e["pid"], e["tid"])].append((min(j, s), s + dns(e.get("dur", 0))))
    qrows = {(r["device"], r["stream"]): r for r in view["queues"]["streams"]}
    check("queue streams", sorted(qrows), sorted(streams))
    for k, ops in streams.items():
        evs = sorted([(a, 1) for a, b in ops] + [(b, -1) for a, b in ops], key=lambda x: (x[0], x[1]))
        n = mx = 0
        for t, d in evs:
            n += d; mx = max(mx, n)
        r = qrows.get(k, {})
        check("stream %s ops" % (k,), r.get("ops"), len(ops))
        check("stream %s max queued" % (k,), r.get("max_len"), mx)
        check("stream %s unlinked" % (k,), r.get("unlinked"), unlinked[k])

    size = {"Float": 4, "Half": 2, "BFloat16": 2, "Double": 8, "Int": 4, "Long": 8, "Byte": 1, "Char": 1, "Bool": 1}
    def comm_kernel(e):
        n = e["name"].lower()
        return e.get("cat") in ("kernel", "Kernel") and ("Collective name" in e.get("args", {}) or any(
            m in n for m in ("ncclkernel", "nccldevkernel", "nccl_kernel", "rccl", "gloo")) or n.startswith("mpi_"))
    ANN = ("gloo:", "nccl:", "mpi:", "rccl:")
    cpu = [e for e in X if e.get("cat") not in GPU and e["pid"] not in gpu_pids]
    comm = [e for e in X if comm_kernel(e)] or [e for e in cpu if "Collective name" in e.get("args", {})] or \
           [e for e in cpu if e["name"].startswith(ANN) and e["name"].split(":", 1)[1]]
    kinds = collections.defaultdict(list)
    for e in comm:
        a = e.get("args", {})
        if "Collective name" in a: k = a["Collective name"]
        elif e["name"].startswith(ANN) and e.get("cat") not in ("kernel", "Kernel"): k = e["name"].split(":", 1)[1]
        else: k = e["name"].split("_")[1].split("(")[0].lower() if "_" in e["name"] else e["name"].lower()
        kinds[k].append(e)
    crow = {r["kind"]: r for r in view["comm"]["latency"]}
    check("comm kinds", sorted(crow), sorted(kinds))
    def pct(v, p):
        import math
        k = max(1, math.ceil(p / 100 * len(v)))
        return v[min(k, len(v)) - 1]
    for k, es in kinds.items():
        d = sorted(dns(e["dur"]) for e in es); r = crow.get(k, {})
        check(k + " count", r.get("count"), len(d))
        for name, p in (("min", 0), ("p50", 50), ("p90", 90), ("p99", 99), ("max", 100)):
            check("%s %s_us" % (k, name), r.get(name + "_us"), float(D(d[0] if p == 0 else pct(d, p)) / 1000))
        nb = [int(e["args"]["In msg nelems"]) * size[e["args"]["dtype"]] for e in es
              if "In msg nelems" in e.get("args", {}) and e["args"].get("dtype") in size]
        check(k + " bytes", r.get("bytes"), sum(nb))

    threads = collections.defaultdict(list)
    for e in X:
        if e.get("cat") in GPU or e["pid"] in gpu_pids: continue
        threads[(e["pid"], e["tid"])].append((ns(e["ts"]), dns(e.get("dur", 0)), e["name"]))
    ranges_only = {k for k in threads if all(e.get("cat") == "cuda_profiler_range" for e in X if (e["pid"], e["tid"]) == k)}
    for k in ranges_only: del threads[k]
    flame = collections.defaultdict(lambda: [0, 0, 0])
    nframes = 0
    for k, fs in threads.items():
        fs.sort(key=lambda f: (f[0], -f[1]))
        stack = []   # (end, path, self-list index)
        selfs = []
        for s, d, name in fs:
            # a slice is inside the innermost open one that ends after it starts and not before it ends
            while stack and stack[-1][1] <= s: stack.pop()
            while stack and s + d > stack[-1][1]: stack.pop()
            path = (stack[-1][2] + ";" if stack else "") + name
            if stack:
                selfs[stack[-1][3]][1] -= d
            selfs.append([path, d])
            stack.append((s, s + d, path, len(selfs) - 1))
            flame[path][0] += d; flame[path][2] += 1
        for pth, sf in selfs: flame[pth][1] += max(sf, 0)
        nframes += len(fs)
    vf = {r["path"]: r for r in view["callstack"]["flame"]}
    check("flame paths", len(vf), len(flame))
    bad = 0
    for p, (tot, sf, calls) in flame.items():
        r = vf.get(p)
        if not r or r["total_us"] != float(D(tot) / 1000) or r["calls"] != calls or r["self_us"] != float(D(sf) / 1000):
            bad += 1
            if bad <= 3: fails.append("flame %s: view %s, python total %d self %d calls %d" % (p, r, tot, sf, calls))
    check("frames", sum(t["frames"] for t in view["callstack"]["threads"]), nframes)
    print("%s: %d copies, %d streams, %d comm calls, %d flame paths checked" % (argv[0], sum(len(c) for c in per.values()),
          len(streams), len(comm), len(flame)))
    if fails:
        print("\n".join(fails)); return 1

    return 0


def snapshot(argv):
    """Segments, sets, fragmentation, start/peak/end and size bins of an allocator snapshot."""
    snap = pickle.load(gzip.open(argv[0]) if argv[0].endswith(".gz") else open(argv[0], "rb"))
    view = json.load(open(argv[1]))["tables"]
    fails = []
    def check(what, a, b):
        if a != b: fails.append("%s: view %r, python %r" % (what, a, b))
    segs = snap["segments"]
    check("segments", len(view["segments"]), len(segs))
    check("blocks", [(b["segment"], b["bytes"], b["state"]) for b in view["blocks"]],
          [(i, b["size"], b["state"]) for i, s in enumerate(segs) for b in s["blocks"]])
    sets = collections.defaultdict(lambda: {"free": 0, "largest": 0, "n": 0, "reserved": 0})
    for s in segs:
        st = sets[(s["device"], s["segment_type"])]
        st["n"] += 1; st["reserved"] += s["total_size"]
        for b in s["blocks"]:
            if b["state"] == "inactive":
                st["free"] += b["size"]; st["largest"] = max(st["largest"], b["size"])
    vsets = {(r["device"], r["pool"]): r for r in view["sets"]}
    check("sets", sorted(vsets), sorted(sets))
    for k, st in sets.items():
        r = vsets.get(k, {})
        check("%s segments" % (k,), r.get("segments"), st["n"])
        check("%s reserved" % (k,), r.get("reserved_bytes"), st["reserved"])
        check("%s free" % (k,), r.get("free_bytes"), st["free"])
        frag = 1 - st["largest"] / st["free"] if st["free"] else 0
        if abs(r.get("fragmentation", -9) - frag) > 1e-6: fails.append("%s fragmentation %r vs %r" % (k, r.get("fragmentation"), frag))
    for d, tr in enumerate(snap["device_traces"]):
        # allocated before the trace: freed in it without an alloc in it, or allocated at the snapshot and never in it
        seen, start = set(), 0
        for e in tr:
            if e["action"] == "alloc": seen.add(e["addr"])
            elif e["action"] == "free_completed" and e["addr"] not in seen: start += e["size"]
        ever = {e["addr"] for e in tr if e["action"] == "alloc"}
        start += sum(b["size"] for s in segs if s["device"] == d for b in s["blocks"]
                     if b["state"] == "active_allocated" and b["address"] not in ever)
        run = peak = start; allocs = frees = 0; bins = collections.Counter()
        for e in tr:
            if e["action"] == "alloc": run += e["size"]; allocs += 1; bins[max(e["size"], 1).bit_length() - 1] += 1
            elif e["action"] == "free_completed": run -= e["size"]; frees += 1
            peak = max(peak, run)
        r = next(x for x in view["series"] if x["device"] == "cuda:%d" % d)
        check("start", r["start_bytes"], start); check("peak", r["peak_bytes"], peak); check("end", r["end_bytes"], run)
        check("allocs", r["allocs"], allocs); check("frees", r["frees"], frees)
        vb = {x["from_bytes"].bit_length() - 1 if x["from_bytes"] else 0: x["allocs"] for x in view["sizes"]}
        check("size bins", vb, dict(bins))
        check("points", len(view["points"]), allocs + frees)
        check("bin max = peak", max(b["max_bytes"] for b in view["bins"]), peak)
        check("bin allocs", sum(b["allocs"] for b in view["bins"]), allocs)
    print("snapshot: %d segments, %d sets, peak %d bytes checked" % (len(segs), len(sets), peak))
    if fails: print("\n".join(fails)); return 1

    return 0


def memtrace(argv):
    """Per-device series of [memory] events: peak, allocations, size bins."""
    files = sorted(glob.glob(argv[0] + "/*.json")) if not argv[0].endswith(".json") else [argv[0]]
    view = json.load(open(argv[1]))["tables"]
    fails = []
    def check(what, a, b):
        if a != b: fails.append("%s: view %r, python %r" % (what, a, b))
    n_series = 0
    for f in files:
        t = json.load(open(f))
        rank = t.get("distributedInfo", {}).get("rank", 0)
        per = collections.defaultdict(list)
        for i, e in enumerate(t["traceEvents"]):
            if e.get("name") == "[memory]" and "Bytes" in e.get("args", {}):
                a = e["args"]
                per[(a.get("Device Type", 0), a.get("Device Id", -1))].append((e["ts"], i, a["Bytes"], a.get("Total Allocated", -1)))
        for (ty, dev), evs in per.items():
            evs.sort()
            start = evs[0][3] - evs[0][2]
            peak = max([start] + [e[3] for e in evs])
            name = "cpu" if ty == 0 else "cuda:%d" % dev
            r = [x for x in view["series"] if x["rank"] == rank and x["device"] == name]
            if len(r) != 1: fails.append("no series for rank %d %s" % (rank, name)); continue
            r = r[0]; n_series += 1
            check("peak", r["peak_bytes"], peak); check("end", r["end_bytes"], evs[-1][3]); check("start", r["start_bytes"], start)
            check("allocs", r["allocs"], sum(1 for e in evs if e[2] > 0)); check("frees", r["frees"], sum(1 for e in evs if e[2] < 0))
            bins = collections.Counter(max(e[2], 1).bit_length() - 1 for e in evs if e[2] > 0)
            vb = {x["from_bytes"].bit_length() - 1 if x["from_bytes"] else 0: x["allocs"] for x in view["sizes"]
                  if x["rank"] == rank and x["device"] == name}
            check("size bins", vb, dict(bins))
            check("bins' max = peak", max(b["max_bytes"] for b in view["bins"] if b["rank"] == rank and b["device"] == name), peak)
    check("series", len(view["series"]), n_series)
    print("[memory] trace: %d series checked" % n_series)
    if fails: print("\n".join(fails)); return 1

    return 0


def mpi(argv):
    """MPI send/recv pairs and calls per kind and peer."""
    view = json.load(open(argv[1]))["tables"]
    fails = []
    def check(what, a, b):
        if a != b: fails.append("%s: view %r, python %r" % (what, a, b))
    chan = collections.defaultdict(lambda: ([], []))
    calls = collections.defaultdict(list)
    for f in sorted(glob.glob(argv[0] + "/*.json")):
        t = json.load(open(f))
        me = t["distributedInfo"]["rank"]
        ev = sorted((e for e in t["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "mpi"), key=lambda e: e["ts"])
        for i, e in enumerate(ev):
            a = e.get("args", {}); k = a.get("Collective name")
            if not k: continue
            peer = a.get("Dst Rank", a.get("Src Rank", -1)) if k in ("send", "isend", "recv", "irecv") else -1
            calls[(k, me if k in ("send", "isend", "recv", "irecv") else -1, peer)].append(e["dur"])
            if k not in ("send", "isend", "recv", "irecv"): continue
            end = e["ts"] + e["dur"]
            if k == "irecv":
                end = next(w["ts"] + w["dur"] for w in ev[i + 1:] if (w["name"] == "MPI_Wait" and w["args"].get("request") == a["request"])
                           or (w["name"] == "MPI_Waitall" and a["request"] in json.loads(w["args"]["requests"]) if isinstance(w["args"].get("requests"), str) else a["request"] in w["args"].get("requests", [])))
            send = k in ("send", "isend")
            key = (a["Process Group Name"], me if send else peer, peer if send else me, a["tag"])
            chan[key][0 if send else 1].append((e["ts"], end, a["In msg nelems"]))
    def pct(v, p):
        k = max(1, math.ceil(p / 100 * len(v))); return v[min(k, len(v)) - 1]
    pairs = collections.defaultdict(list)
    for (c, s, d, tag), (sends, recvs) in chan.items():
        sends.sort(); recvs.sort()
        for a, b in zip(sends, recvs): pairs[(s, d)].append((b[1] - a[0], a[2]))
    vp = {(r["src"], r["peer"]): r for r in view["latency"] if r["what"] == "pair"}
    check("pair channels", sorted(vp), sorted(pairs))
    for k, ls in pairs.items():
        lat = sorted(x[0] for x in ls); r = vp.get(k, {})
        check("%s count" % (k,), r.get("count"), len(lat)); check("%s bytes" % (k,), r.get("bytes"), sum(x[1] for x in ls))
        for name, p in (("p50", 50), ("max", 100), ("min", 0)):
            v = lat[0] if p == 0 else pct(lat, p)
            if abs(r.get(name + "_us", -1) - v) > 0.0015: fails.append("%s %s: view %r python %r" % (k, name, r.get(name + "_us"), v))
    vc = {(r["kind"], r["src"], r["peer"]): r for r in view["latency"] if r["what"] == "call"}
    check("call rows", sorted(vc), sorted(calls))
    for k, d in calls.items(): check("%s count" % (k,), vc.get(k, {}).get("count"), len(d))
    print("mpi: %d pairs in %d channels, %d call kinds checked" % (sum(map(len, pairs.values())), len(pairs), len(calls)))
    if fails: print("\n".join(fails)); return 1

    return 0


if __name__ == "__main__":
    checks = {"kineto": kineto, "snapshot": snapshot, "memtrace": memtrace, "mpi": mpi}
    if len(sys.argv) != 4 or sys.argv[1] not in checks:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(checks[sys.argv[1]](sys.argv[2:]))
