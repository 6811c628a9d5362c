#!/usr/bin/python3
"""What-if testbed: DDP ranks in network namespaces over tc-shaped links.

What it is for: ground truth whose effects are larger than its noise. Each
rank runs in a network namespace of its own, joined to the others through a
bridge (itself in a namespace of its own, so nothing touches the host's
network); each rank's link is shaped by tc (tbf: rate; netem: delay, where
the kernel has it) in both directions. Real PyTorch DDP over gloo (TCP,
Debian's /usr/bin/python3) trains the models of models.py under several
settings (link rate, bucket cap or plan, world size, batch), round by round
in a fresh (seeded) order each round, so drift hits every setting alike. Each
run of a setting gives unprofiled step times and a profiled window (the
torch profiler's legacy Chrome trace, what `trainscope replay` reads).
Writes, under --out (only once every run completed; a failed or interrupted
run leaves no results):
  settings/<name>.json       the setting, its step times per round, medians,
                             the 90% interval of the unprofiled median, the
                             profiler's overhead, the trace figure per round
  traces/<name>/round<R>/rank<K>.json.zst   the profiled windows
  gradients/<model>.json     parameter names and bytes (gradients.json)
  summary.json               settings, link checks, noise report, timing
What it is not for: scoring predictions (bench/testbed_accuracy.sh does).

It removes every namespace it created (and so every veth, bridge and qdisc,
which live in them) on exit, error, Ctrl-C, SIGTERM or SIGHUP; namespaces
left by an earlier run that was killed outright are removed first, and said.
Needs root, ip and tc (iproute2); refuses clearly otherwise.

Run:  /usr/bin/python3 bench/testbed/testbed.py --out DIR          (default set, ~20 min)
      /usr/bin/python3 bench/testbed/testbed.py --preset ci --out DIR   (~1 min)
"""
import argparse
import fcntl
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"
PREFIX = "tstb"                     # namespace names: tstb<pid>-sw, tstb<pid>-r<K>
SUBNET = "10.77.0"                  # private, on our own bridge only; no route anywhere else
LOCK = os.environ.get("TS_TESTBED_LOCK", "/run/lock/trainscope-testbed.lock")   # another path: tests of the wait


class Fail(Exception):
    """A condition the run cannot go on from; its message is printed as is."""


def sh(*cmd, check=True, ns=None, timeout=60):
    """Run a command (in namespace ns); its CompletedProcess. Raises Fail with
    its stderr when check and it fails."""
    full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
    p = subprocess.run(full, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode:
        raise Fail("testbed: `%s` failed: %s" % (" ".join(full), (p.stderr or p.stdout).strip()))
    return p


# ---- the network ----

class Net:
    """The namespaces of one run: a switch (bridge) and up to max_world ranks."""

    def __init__(self, max_world):
        self.tag = f"{PREFIX}{os.getpid()}"
        self.sw = f"{self.tag}-sw"
        self.ranks = [f"{self.tag}-r{k}" for k in range(max_world)]
        self.made = []
        self.rate = None

    def addr(self, k):
        return f"{SUBNET}.{k + 1}"

    def up(self):
        sh("ip", "netns", "add", self.sw)
        self.made.append(self.sw)
        sh("ip", "-n", self.sw, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", self.sw, "link", "set", "br0", "up")
        sh("ip", "-n", self.sw, "link", "set", "lo", "up")
        for k, ns in enumerate(self.ranks):
            sh("ip", "netns", "add", ns)
            self.made.append(ns)
            sh("ip", "-n", self.sw, "link", "add", f"p{k}", "type", "veth", "peer", "name", "eth0", "netns", ns)
            sh("ip", "-n", self.sw, "link", "set", f"p{k}", "master", "br0", "up")
            sh("ip", "-n", ns, "addr", "add", f"{self.addr(k)}/24", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")

    def shape(self, rate_mbit, delay_ms=0.0):
        """Every link at rate_mbit in both directions (tbf on the rank's eth0
        and on its bridge port), plus delay_ms one way with netem under it."""
        if (rate_mbit, delay_ms) == self.rate:
            return
        burst = max(32768, int(rate_mbit * 1e6 / 8 * 0.004))    # 4 ms of the rate
        for k, ns in enumerate(self.ranks):
            for where, dev in ((ns, "eth0"), (self.sw, f"p{k}")):
                sh("tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "tbf", "rate", f"{rate_mbit}mbit",
                   "burst", str(burst), "latency", "100ms", ns=where)
                if delay_ms:
                    p = sh("tc", "qdisc", "replace", "dev", dev, "parent", "1:1", "handle", "10:", "netem",
                           "delay", f"{delay_ms}ms", ns=where, check=False)
                    if p.returncode:
                        raise Fail("testbed: cannot add a delay: `tc ... netem` says: %s (this kernel lacks "
                                   "CONFIG_NET_SCH_NETEM?); run without --delay-ms" % p.stderr.strip())
        self.rate = (rate_mbit, delay_ms)

    def down(self):
        for ns in reversed(self.made):
            kill_ns_procs(ns)
            sh("ip", "netns", "del", ns, check=False)
        self.made = []


def kill_ns_procs(ns):
    p = sh("ip", "netns", "pids", ns, check=False)
    for pid in p.stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (OSError, ValueError):
            pass


def remove_stale():
    """Namespaces of earlier runs whose process is gone: removed, and said."""
    out = sh("ip", "netns", "list", check=False).stdout
    for line in out.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.fullmatch(PREFIX + r"(\d+)-(sw|r\d+)", name)
        if not m:
            continue
        pid = int(m.group(1))
        if pid != os.getpid() and os.path.exists(f"/proc/{pid}"):
            continue                      # a live run's (the lock keeps us apart from it)
        kill_ns_procs(name)
        sh("ip", "netns", "del", name, check=False)
        print(f"testbed: removed namespace {name} left by an earlier run (pid {pid}, no longer running)", flush=True)


def preflight():
    if os.geteuid() != 0:
        raise Fail("testbed: needs root (it creates network namespaces, veth pairs, a bridge and tc qdiscs); "
                   "run it as root")
    for tool in ("ip", "tc"):
        if not shutil.which(tool):
            raise Fail(f"testbed: `{tool}` not found: install iproute2 (scripts/install-deps.sh)")
    if not os.path.exists(PY):
        raise Fail(f"testbed: {PY} not found: Debian's python3 with python3-torch is needed")


class LockWait(Exception):
    pass


def on_lock_alarm(_sig, _frame):
    raise LockWait()


def take_lock(wait_s=None):
    """One testbed run at a time on a machine (they would share the CPUs and
    disturb each other's times): wait for a running one to finish, at most
    wait_s seconds when given (then Fail, naming the holder: each holder
    writes its pid and command line into the lock file)."""
    os.makedirs(os.path.dirname(LOCK), exist_ok=True)
    f = open(LOCK, "a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.seek(0)
        holder = f.read().strip() or "its pid not written yet"
        print("testbed: another testbed run (%s) holds %s; waiting for it%s" % (
            holder, LOCK, "" if wait_s is None else " (at most %d s)" % wait_s), flush=True)
        t0 = time.time()
        old = signal.signal(signal.SIGALRM, on_lock_alarm)
        try:
            if wait_s is not None:   # SIGALRM ends the flock below; 0 would disarm the timer, so it fails here
                if wait_s <= 0:
                    raise LockWait()
                signal.setitimer(signal.ITIMER_REAL, wait_s)
            fcntl.flock(f, fcntl.LOCK_EX)
        except LockWait:
            raise Fail("testbed: waited %d s for %s, still held by another testbed run (%s); giving up "
                       "(--lock-wait)" % (time.time() - t0, LOCK, holder)) from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        print("testbed: got %s after %.0f s" % (LOCK, time.time() - t0), flush=True)
    f.seek(0)
    f.truncate()
    f.write("pid %d: %s\n" % (os.getpid(), " ".join(sys.argv)))
    f.flush()
    return f


def link_check(net, rate_mbit, seconds=0.6):
    """A short TCP transfer rank 0 -> rank 1 at the shaped rate: what the
    link carried, in Mbit/s."""
    nbytes = max(1 << 20, int(rate_mbit * 1e6 / 8 * seconds))
    server = subprocess.Popen(["ip", "netns", "exec", net.ranks[1], PY, "-c", SERVER, net.addr(1)],
                              stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(50):
            p = sh(PY, "-c", CLIENT, net.addr(1), str(nbytes), ns=net.ranks[0], check=False)
            if p.returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise Fail("testbed: link check: rank 0 cannot reach rank 1: %s" % p.stderr.strip())
        out, _ = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
    got, secs = out.split()
    return int(got) * 8 / float(secs) / 1e6


SERVER = """
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], 5201)); s.listen(1)
c, _ = s.accept(); n = 0; t0 = None
while True:
    b = c.recv(1 << 20)
    if not b: break
    if t0 is None: t0 = time.perf_counter()
    n += len(b)
print(n, time.perf_counter() - t0)
"""
CLIENT = """
import socket, sys
s = socket.create_connection((sys.argv[1], 5201), timeout=5); n = int(sys.argv[2]); buf = b"x" * 65536
while n > 0:
    s.sendall(buf[:min(n, len(buf))]); n -= len(buf)
s.close()
"""


# ---- settings ----

def setting_name(s):
    name = f"{s['model']}_w{s['world']}_r{s['rate']:g}_b{s['bucket_mb']:g}"
    if s.get("batch"):
        name += f"_batch{s['batch']}"
    if s.get("delay_ms"):
        name += f"_d{s['delay_ms']:g}"
    if s.get("shapes"):
        name += "_shapes"
    if s.get("hook"):
        name += "_hook-" + s["hook"]
    if s.get("plan"):
        name += "_plan-" + re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.splitext(os.path.basename(s["plan"]))[0])
    return name


def preset(name):
    """The settings of a preset, each a dict; see the module's docstring."""
    S = []

    def add(model, rate, bucket_mb=25, world=2, **kw):
        s = dict(model=model, rate=rate, bucket_mb=bucket_mb, world=world, **kw)
        if all(setting_name(s) != setting_name(t) for t in S):
            S.append(s)
    if name == "ci":
        add("wide", 100)
        add("wide", 400)
        return S
    for m in ("mlp", "cnn", "wide"):             # link rates at 25 MB
        for r in (50, 100, 200, 400):
            add(m, r)
    for m in ("mlp", "transformer"):             # bucket caps at one rate
        for b in (1, 5, 25):
            add(m, 200, b)
    add("mlp", 200, world=3)                     # world size
    add("mlp", 200, batch=32)                    # compute really changed: twice the batch,
    add("mlp_matmul", 200)                       # and an extra matmul per layer
    add("transformer", 200, shapes=1)            # the profiler recording shapes (its distortion)
    add("mlp", 200, plan=os.path.join(HERE, "plans", "mlp_layers.json"))   # a plan: one group per layer
    return S


def parse_setting(text):
    """--setting model=mlp,rate=200[,bucket=25][,world=2][,batch=N][,plan=FILE][,delay=MS][,shapes=1][,hook=fp16|bf16]"""
    s = {"bucket_mb": 25.0, "world": 2}
    keys = {"model": ("model", str), "rate": ("rate", float), "bucket": ("bucket_mb", float),
            "world": ("world", int), "batch": ("batch", int), "plan": ("plan", os.path.abspath),
            "delay": ("delay_ms", float), "shapes": ("shapes", int),
            "hook": ("hook", str)}
    for part in text.split(","):
        k, _, v = part.partition("=")
        if k not in keys or not v:
            raise Fail(f"testbed: --setting '{text}': unknown or empty '{part}' (keys: {', '.join(keys)})")
        try:
            s[keys[k][0]] = keys[k][1](v)
        except ValueError:
            raise Fail(f"testbed: --setting '{text}': '{v}' is not a valid {k}") from None
    if "model" not in s or "rate" not in s:
        raise Fail(f"testbed: --setting '{text}': model= and rate= are required")
    if not 2 <= s["world"] <= 4:
        raise Fail(f"testbed: --setting '{text}': world must be 2 to 4")
    if s.get("hook") not in (None, "fp16", "bf16"):
        raise Fail(f"testbed: --setting '{text}': hook= takes fp16 or bf16 (DDP's compress hooks)")
    if s.get("plan") and not os.path.isfile(s["plan"]):
        raise Fail(f"testbed: --setting '{text}': no plan file {s['plan']}")
    return s


# ---- one run of one setting ----

def run_setting(net, s, rnd, args, run_dir, port):
    """Start the setting's ranks in their namespaces and wait for all; a rank
    that fails stops the others and raises Fail naming it."""
    net.shape(s["rate"], s.get("delay_ms", 0.0))
    os.makedirs(run_dir)
    procs = []
    for k in range(s["world"]):
        cmd = ["ip", "netns", "exec", net.ranks[k], PY, os.path.join(HERE, "rank.py"),
               "--rank", str(k), "--world", str(s["world"]), "--master", net.addr(0), "--port", str(port),
               "--model", s["model"], "--bucket-mb", str(s["bucket_mb"]), "--warmup", str(args.warmup),
               "--steps", str(args.steps), "--profiled-steps", str(args.profiled_steps), "--out", run_dir]
        if s.get("batch"):
            cmd += ["--batch", str(s["batch"])]
        if s.get("plan"):
            cmd += ["--plan", s["plan"]]
        if s.get("shapes"):
            cmd += ["--record-shapes"]
        if s.get("hook"):
            cmd += ["--comm-hook", s["hook"]]
        log = open(os.path.join(run_dir, f"rank{k}.log"), "w")
        procs.append((subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True), log))
    t0 = time.time()
    try:
        while True:
            codes = [p.poll() for p, _ in procs]
            bad = [(k, c) for k, c in enumerate(codes) if c not in (None, 0)]
            if bad:
                k, c = bad[0]
                lines = open(os.path.join(run_dir, f"rank{k}.log")).read().strip().splitlines()
                errs = [x for x in lines if re.match(r"\w*(Error|Exception)\b", x)]
                tail = lines[-6:] + (["(first error) " + errs[0]] if errs and errs[0] not in lines[-6:] else [])
                raise Fail("testbed: rank %d of %s (round %d) died with exit %d; its last lines:\n    %s"
                           % (k, setting_name(s), rnd, c, "\n    ".join(tail)))
            if all(c == 0 for c in codes):
                break
            if time.time() - t0 > args.run_timeout:
                raise Fail("testbed: %s (round %d) still running after %d s: stopped"
                           % (setting_name(s), rnd, args.run_timeout))
            time.sleep(0.2)
    finally:
        for p, log in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
                p.wait()
            log.close()
    return time.time() - t0


def trace_steps_ms(path):
    with open(path) as f:
        ev = json.load(f)
    steps = sorted((int(e["name"].split("#")[1]), e["dur"]) for e in ev
                   if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))
    return [d / 1e3 for _, d in steps]


def collect_run(s, run_dir):
    """The ranks' results of one run: per step the mean over ranks (unprofiled
    and profiled), the trace figure (per step the slowest rank's ProfilerStep,
    median over steps: what replay reports), and DDP's buckets."""
    ranks = [json.load(open(os.path.join(run_dir, f"rank{k}.json"))) for k in range(s["world"])]
    mean = lambda key: [round(statistics.fmean(x), 3) for x in zip(*(r[key] for r in ranks))]  # noqa: E731
    steps = [trace_steps_ms(os.path.join(run_dir, "trace", f"rank{k}.json")) for k in range(s["world"])]
    figure = statistics.median(max(x) for x in zip(*steps))
    return {"unprofiled_ms": mean("unprofiled_ms"), "profiled_ms": mean("profiled_ms"),
            "trace_figure_ms": round(figure, 3), "buckets": ranks[0]["buckets"], "batch": ranks[0]["batch"],
            "loadavg_1m": max(r["loadavg_1m"] for r in ranks)}


# ---- the noise report ----

def interval90(rounds, B=2000, seed=1):
    """Half-width of the 90% interval of the median step over all rounds, in
    % of it: a two-level bootstrap (rounds drawn with replacement, then each
    drawn round's steps), since steps of one run share its luck (the
    machine's load then, where its processes landed): on the first default
    run, mlp at caps 5 and 25 MB (the same two buckets) measured 675 and 609
    ms, while a bootstrap over steps alone gave each a 1.0-1.4% interval."""
    rng = random.Random(seed)
    meds = []
    for _ in range(B):
        pick = [x for r in rng.choices(rounds, k=len(rounds)) for x in rng.choices(r, k=len(r))]
        meds.append(statistics.median(pick))
    meds.sort()
    return 100.0 * (meds[int(0.95 * B)] - meds[int(0.05 * B)]) / 2 / statistics.median([x for r in rounds for x in r])


def summarize(s, runs):
    unprof = [x for r in runs for x in r["unprofiled_ms"]]
    prof = [x for r in runs for x in r["profiled_ms"]]
    figs = [r["trace_figure_ms"] for r in runs]
    return {
        "unprofiled": {"median_ms": round(statistics.median(unprof), 3),
                       "interval90_pct": round(interval90([r["unprofiled_ms"] for r in runs]), 2),
                       "min_ms": min(unprof), "max_ms": max(unprof), "n": len(unprof),
                       "round_medians_ms": [round(statistics.median(r["unprofiled_ms"]), 3) for r in runs]},
        "profiled": {"median_ms": round(statistics.median(prof), 3), "n": len(prof)},
        "profiler_overhead_pct": round(100 * (statistics.median(prof) / statistics.median(unprof) - 1), 2),
        "trace_figure": {"median_ms": round(statistics.median(figs), 3), "rounds_ms": figs},
    }


def print_report(docs):
    print("\nnoise report: unprofiled median step time per setting, its 90% interval (half-width; bootstrap over the "
          "rounds, then their steps), the round medians, the profiled median and the profiler's overhead")
    print("%-34s %9s %7s %-23s %9s %8s" % ("setting", "median ms", "+-90%", "round medians", "profiled", "overhead"))
    for d in docs:
        u = d["unprofiled"]
        print("%-34s %9.1f %6.1f%% %-23s %9.1f %+7.1f%%" % (
            d["name"], u["median_ms"], u["interval90_pct"], " ".join("%.0f" % x for x in u["round_medians_ms"]),
            d["profiled"]["median_ms"], d["profiler_overhead_pct"]))
    w = [d["unprofiled"]["interval90_pct"] for d in docs]
    print("90%% interval half-width: median %.2f%%, widest %.2f%% over %d settings"
          % (statistics.median(w), max(w), len(w)))


# ---- main ----

def measure(args, settings, net, tmp):
    """Every round, every setting (a fresh seeded order each round); the per-setting docs."""
    rates = sorted({s["rate"] for s in settings})
    checks = []
    for r in rates:
        net.shape(r)
        got = link_check(net, r)
        print(f"link check: {r:g} Mbit/s set, {got:.1f} Mbit/s carried by TCP ({100 * got / r:.0f}%)", flush=True)
        checks.append({"rate_mbit": r, "carried_mbit": round(got, 2)})
        if not 0.8 * r <= got <= 1.1 * r:
            raise Fail(f"testbed: the link carried {got:.1f} Mbit/s at {r:g} Mbit/s set: shaping misbehaves here, "
                       "so no ground truth is taken")
    runs = {setting_name(s): [] for s in settings}
    port = 29500
    t_start = time.time()
    for rnd in range(args.rounds):
        # A fresh order every round (seeded: the same every run): rotating by one kept
        # each setting beside the same neighbours, at about the same place in the
        # machine's load, in both rounds of the first default run.
        order = list(settings)
        random.Random(rnd).shuffle(order)
        for s in order:
            name = setting_name(s)
            run_dir = os.path.join(tmp, "runs", name, f"round{rnd}")
            port += 1
            secs = run_setting(net, s, rnd, args, run_dir, port)
            res = collect_run(s, run_dir)
            res["run_dir"] = run_dir
            runs[name].append(res)
            print("round %d %-34s %5.1f s  unprofiled median %8.1f ms  trace figure %8.1f ms  (%.0f s elapsed)"
                  % (rnd, name, secs, statistics.median(res["unprofiled_ms"]), res["trace_figure_ms"],
                     time.time() - t_start), flush=True)
    return checks, runs


def profiler_cost(settings, tmp):
    """The profiler's cost per recorded op on this machine, measured apart
    (profiler_overhead.py), with record_shapes off and, where a setting
    records shapes, on: {"off": doc, "on": doc}."""
    out = {}
    for mode in ("off", "on") if any(s.get("shapes") for s in settings) else ("off",):
        path = os.path.join(tmp, f"profiler_overhead_{mode}.json")
        cmd = [PY, os.path.join(HERE, "profiler_overhead.py"), "--out", path, "--models",
               *sorted({s["model"] for s in settings})] + (["--record-shapes"] if mode == "on" else [])
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if p.returncode:
            raise Fail("testbed: profiler_overhead.py failed: %s" % p.stderr.strip()[-400:])
        out[mode] = json.load(open(path))
        print("profiler cost (record_shapes %s): %.1f us per recorded op" % (mode, out[mode]["us_per_event"]), flush=True)
    return out


def write_out(args, settings, checks, runs, tmp, elapsed, prof_cost):
    """Settings, traces (zstd) and gradients into tmp/out; its path."""
    out = os.path.join(tmp, "out")
    for sub in ("settings", "traces", "gradients"):
        os.makedirs(os.path.join(out, sub))
    docs, jobs = [], []
    for s in settings:
        name = setting_name(s)
        rs = runs[name]
        grads = os.path.join("gradients", f"{s['model']}.json")
        shutil.copy(os.path.join(rs[0]["run_dir"], "gradients.json"), os.path.join(out, grads))
        trace_rounds = []
        for rnd, r in enumerate(rs):
            d = os.path.join("traces", name, f"round{rnd}")
            os.makedirs(os.path.join(out, d))
            files = []
            for k in range(s["world"]):
                dst = os.path.join(d, f"rank{k}.json.zst")
                jobs.append(["zstd", "-q", "-12", "-f", os.path.join(r["run_dir"], "trace", f"rank{k}.json"),
                             "-o", os.path.join(out, dst)])
                files.append(dst)
            trace_rounds.append(files)
        if s.get("plan"):   # the plan as applied, so bench/testbed_accuracy.sh can re-predict it
            os.makedirs(os.path.join(out, "plans"), exist_ok=True)
            shutil.copyfile(s["plan"], os.path.join(out, "plans", name + ".json"))
        doc = {"name": name, "setting": {k: (os.path.basename(v) if k == "plan" else v) for k, v in s.items()},
               "batch": rs[0]["batch"], "buckets": rs[0]["buckets"], "gradients": grads,
               "trace_rounds": trace_rounds, **summarize(s, rs),
               "rounds": [{k: r[k] for k in ("unprofiled_ms", "profiled_ms", "trace_figure_ms", "loadavg_1m")}
                          for r in rs]}
        with open(os.path.join(out, "settings", name + ".json"), "w") as f:
            json.dump(doc, f, indent=1)
        docs.append(doc)
    for j in jobs:
        subprocess.run(j, check=True)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"complete": True, "settings": [d["name"] for d in docs], "link_checks": checks,
                   "rounds": args.rounds, "warmup_steps": args.warmup, "steps": args.steps,
                   "profiled_steps": args.profiled_steps, "elapsed_s": round(elapsed, 1),
                   "made": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                   "interval90": "two-level bootstrap: rounds, then each round's unprofiled steps (mean over ranks "
                                 "per step)",
                   "cpu_count": os.cpu_count(), "profiler_cost": prof_cost}, f, indent=1)
    return out, docs


def on_signal(sig, _frame):
    raise KeyboardInterrupt(signal.Signals(sig).name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="results folder (replaced once the run completed)")
    ap.add_argument("--preset", choices=["default", "ci", "none"], default="default")
    ap.add_argument("--setting", action="append", default=[],
                    help="model=M,rate=MBIT[,bucket=MB][,world=N][,batch=N][,plan=FILE][,delay=MS][,shapes=1][,hook=fp16|bf16] "
                         "(repeatable; shapes=1 profiles with record_shapes; hook: DDP's compress hook)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=8, help="unprofiled steps per run")
    ap.add_argument("--profiled-steps", type=int, default=4)
    ap.add_argument("--run-timeout", type=int, default=600, help="seconds one run of one setting may take")
    ap.add_argument("--lock-wait", type=int, default=None,
                    help="seconds to wait at most for another testbed run to end (default: as long as it takes)")
    args = ap.parse_args()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    net, tmp, code = None, None, 1
    try:
        preflight()
        settings = (preset(args.preset) if args.preset != "none" else []) + [parse_setting(t) for t in args.setting]
        if not settings:
            raise Fail("testbed: no settings (--preset none and no --setting)")
        names = [setting_name(s) for s in settings]
        if len(set(names)) != len(names):
            raise Fail("testbed: a setting is given twice")
        lock = take_lock(args.lock_wait)  # noqa: F841  (held until exit)
        remove_stale()
        tmp = tempfile.mkdtemp(prefix="ts_testbed_")
        net = Net(max(s["world"] for s in settings))
        net.up()
        t0 = time.time()
        checks, runs = measure(args, settings, net, tmp)
        net.down()
        prof_cost = profiler_cost(settings, tmp)
        out, docs = write_out(args, settings, checks, runs, tmp, time.time() - t0, prof_cost)
        print_report(docs)
        if os.path.exists(args.out):
            shutil.rmtree(args.out)
        shutil.move(out, args.out)
        print(f"testbed: {len(docs)} settings x {args.rounds} rounds in {time.time() - t0:.0f} s; results in {args.out}")
        code = 0
    except Fail as e:
        print(str(e), file=sys.stderr)
    except KeyboardInterrupt as e:
        print(f"testbed: interrupted ({e or 'SIGINT'}): cleaning up; no results written", file=sys.stderr)
        code = 130
    finally:
        if net:
            net.down()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    if code and code != 130:
        print("testbed: cleaned up; no results written", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
