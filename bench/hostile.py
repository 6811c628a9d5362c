#!/usr/bin/python3
"""hostile.py - run every command on classes of bad input and count how each
run ended; bench/hostile.sh runs it (make hostile). Not a test: a measure of
robustness to keep taking (issue 26), printed one line per class.

Every run goes through the sanitizer build (build/san/trainscope, ASan +
UBSan) with a timeout and a memory limit: ASan's hard_rss_limit_mb, since
ASan maps terabytes of shadow and cannot start under `ulimit -v`; a release
binary (TS_BIN=build/trainscope) runs under `ulimit -v` (RLIMIT_AS) instead.
A run is, in this order:
  crash    killed by a signal, a sanitizer report, or an exit other than 0-2
  hang     still running at the timeout
  error    exit 1 or 2 with a "trainscope: " line on stderr (a clear error)
  unclear  exit 1 or 2 without one
  warning  exit 0 with a warning on stderr
  silent   exit 0, no warning, and stdout differs from the clean input's, in
           a class where the right answer is known (truncations, oversize
           numbers, remapped ranks, dropped files, mismatched dumps, bad
           option values, failing outputs); for random byte flips and deep
           nesting only crashes, hangs and partial files count
  ok       the rest
and `partial` counts output files (--export, -o DIR) left behind by a run
that failed, or written short by one that claimed success.

Usage: bench/hostile.sh [--full] [--only CLASS] [--timeout S]
  --full   every byte of the first 4 KB flipped (default: every 4th), and
           every command on each flip (default: stats, critical-path, replay)
Exit 0 when no class has a crash, hang, silent wrong answer or partial file.
"""
import argparse
import gzip
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EX = os.path.join(ROOT, "examples")
TRACE = os.path.join(EX, "ddp_gloo", "rank0.json")
TRACE1 = os.path.join(EX, "ddp_gloo", "rank1.json")
FX = os.path.join(EX, "memory", "mlp")
TRACE_CMDS = [["stats"], ["breakdown"], ["critical-path"], ["replay"], ["report", "-o", os.devnull]]
MEM_LIMIT_MB = 2048

COLS = ["inputs", "runs", "error", "warning", "crash", "hang", "silent", "partial", "unclear"]


class Runner:
    def __init__(self, binary, timeout):
        self.bin = binary
        self.timeout = timeout
        self.san = "/san/" in binary
        self.env = dict(os.environ)
        self.env["ASAN_OPTIONS"] = "detect_leaks=1:hard_rss_limit_mb=%d:allocator_may_return_null=1" % MEM_LIMIT_MB
        self.env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
        self.clean = {}

    def _limit(self):
        if not self.san:
            lim = MEM_LIMIT_MB << 20
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))

    def run(self, args, stdout_path=None):
        """(kind, stdout bytes, stderr text) of one run of the CLI."""
        out = open(stdout_path, "wb") if stdout_path else subprocess.PIPE
        try:
            p = subprocess.Popen([self.bin] + args, stdout=out, stderr=subprocess.PIPE, env=self.env,
                                 preexec_fn=self._limit, start_new_session=True, cwd=ROOT)
            try:
                so, se = p.communicate(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
                return "hang", b"", ""
        finally:
            if stdout_path:
                out.close()
        so = so or b""
        se = se.decode("utf-8", "replace")
        rc = p.returncode
        if rc < 0 or rc > 2 or "Sanitizer" in se or "runtime error:" in se:
            return "crash", so, se
        if rc in (1, 2):
            return ("error" if "trainscope: " in se else "unclear"), so, se
        if "warning" in se:
            return "warning", so, se
        return "ok", so, se

    def clean_output(self, key, args):
        if key not in self.clean:
            kind, so, se = self.run(args)
            self.clean[key] = so if kind in ("ok", "warning") else None
        return self.clean[key]


class Tally:
    def __init__(self, name, judged):
        self.name, self.judged = name, judged
        self.n = dict.fromkeys(COLS, 0)
        self.examples = []

    def add(self, label, kind, silent=False, partial=0, stderr=""):
        self.n["runs"] += 1
        if kind == "ok" and silent and self.judged:
            kind = "silent"
        if kind in self.n and kind != "ok":
            self.n[kind] += 1
        self.n["partial"] += partial
        if kind in ("crash", "hang", "silent", "unclear") or partial:
            if len(self.examples) < 6:
                first = stderr.strip().splitlines()[:1]
                self.examples.append("%s: %s%s%s" % (label, kind, " +partial" if partial else "",
                                                      (" (" + first[0][:120] + ")") if first else ""))

    def bad(self):
        return self.n["crash"] + self.n["hang"] + self.n["silent"] + self.n["partial"] + self.n["unclear"]


def write(path, data):
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return path


def trace_runs(R, T, label, path, cmds, clean_path=TRACE, extra=()):
    """Run each command on path; silent when exit 0 without a warning and
    the output differs from the same command on clean_path."""
    for cmd in cmds:
        args = cmd + list(extra) + [path]
        clean = R.clean_output((tuple(cmd), tuple(extra), clean_path), cmd + list(extra) + [clean_path])
        kind, so, se = R.run(args)
        T.add("%s %s" % (" ".join(cmd), label), kind, silent=(clean is None or so != clean), stderr=se)


# ---- the classes ----

def cls_truncate(R, tmp, full):
    T = Tally("truncate 1/16..15/16", True)
    data = open(TRACE, "rb").read()
    for k in range(1, 16):
        p = write(os.path.join(tmp, "cut%02d.json" % k), data[: len(data) * k // 16])
        T.n["inputs"] += 1
        trace_runs(R, T, "cut %d/16" % k, p, TRACE_CMDS)
    gz = gzip.compress(data)
    for k in (4, 8, 12):
        p = write(os.path.join(tmp, "cut%02d.json.gz" % k), gz[: len(gz) * k // 16])
        T.n["inputs"] += 1
        trace_runs(R, T, "gz cut %d/16" % k, p, TRACE_CMDS[:1])
    return T


def cls_flip(R, tmp, full):
    T = Tally("byte flips, first 4 KB", False)
    data = bytearray(open(TRACE, "rb").read())
    step = 1 if full else 4
    cmds = TRACE_CMDS if full else [["stats"], ["critical-path"], ["replay"]]
    p = os.path.join(tmp, "flip.json")
    for i in range(0, min(4096, len(data)), step):
        d = bytearray(data)
        d[i] ^= 0xFF if i % 2 else 0x01
        write(p, bytes(d))
        T.n["inputs"] += 1
        trace_runs(R, T, "flip byte %d" % i, p, cmds)
    return T


def with_events(events, **top):
    doc = {"traceEvents": events}
    doc.update(top)
    return json.dumps(doc)


def cls_numbers(R, tmp, full):
    T = Tally("oversize numbers", True)
    ev = json.load(open(TRACE))
    clean = write(os.path.join(tmp, "num_clean.json"), with_events(ev))
    big = ["1e300", "-1e300", "99999999999999999999", "1e999", "-9223372036854775808", "9223372036854775807"]
    cases = []
    for field in ("ts", "dur"):
        for v in big:
            cases.append(("%s=%s" % (field, v), field, v))
    cases.append(("pid=huge", "pid", "99999999999999999999999"))
    cases.append(("tid=-huge", "tid", "-99999999999999999999999"))
    for label, field, v in cases:
        text = with_events(ev)
        # the 10th complete event's field, rewritten as raw text (json cannot write 1e999)
        i = [k for k, e in enumerate(ev) if e.get("ph") == "X"][10]
        e2 = dict(ev[i])
        e2[field] = "@@NUM@@"
        doc = list(ev)
        doc[i] = e2
        text = with_events(doc).replace('"@@NUM@@"', v)
        p = write(os.path.join(tmp, "num.json"), text)
        T.n["inputs"] += 1
        trace_runs(R, T, label, p, TRACE_CMDS, clean_path=clean)
    for v in ("9223372036854775807", "-9223372036854775807", "9223372036854000000", "1e300"):
        p = write(os.path.join(tmp, "base.json"), with_events(ev).rstrip("}") + ', "baseTimeNanoseconds": %s}' % v)
        T.n["inputs"] += 1
        trace_runs(R, T, "baseTimeNanoseconds=%s" % v, p, TRACE_CMDS, clean_path=clean)
    return T


def cls_nesting(R, tmp, full):
    T = Tally("deep nesting, long strings", False)
    ev = json.load(open(TRACE))
    inputs = {}
    for depth in (1000, 100000):
        inputs["args nested %d" % depth] = with_events(ev[:20]).replace(
            '"args": {}', '"args": {"x": %s1%s}' % ("[" * depth, "]" * depth), 1)
    be = [{"ph": "B", "name": "n%d" % i, "pid": 1, "tid": 1, "ts": i} for i in range(100000)]
    be += [{"ph": "E", "pid": 1, "tid": 1, "ts": 200000 - i} for i in range(100000)]
    inputs["B/E nested 100000"] = json.dumps(be)
    inputs["name 16 MB"] = json.dumps([{"ph": "X", "name": "x" * (16 << 20), "pid": 1, "tid": 1, "ts": 1, "dur": 2}])
    inputs["100000 args"] = json.dumps([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2,
                                         "args": {"k%d" % i: i for i in range(100000)}}])
    for label, text in inputs.items():
        p = write(os.path.join(tmp, "nest.json"), text)
        T.n["inputs"] += 1
        trace_runs(R, T, label, p, TRACE_CMDS)
    return T


def cls_ranks(R, tmp, full):
    T = Tally("remapped ranks, merged arrays", True)
    ev = json.load(open(TRACE))
    clean = write(os.path.join(tmp, "rank_clean.json"), with_events(ev, distributedInfo={"rank": 1, "world_size": 2}))
    for v in ("-3", '"1"', "99999999999", "null", "1.5", "true"):
        text = with_events(ev, distributedInfo={"rank": "@@R@@", "world_size": 2}).replace('"@@R@@"', v)
        p = write(os.path.join(tmp, "rank.json"), text)
        T.n["inputs"] += 1
        trace_runs(R, T, "rank %s" % v, p, [["stats"], ["critical-path"]], clean_path=clean)
    half = len(ev) // 2
    two = '{"traceEvents": %s, "traceEvents": %s, "distributedInfo": {"rank": 1, "world_size": 2}}' % (
        json.dumps(ev[:half]), json.dumps(ev[half:]))
    T.n["inputs"] += 1
    trace_runs(R, T, "two traceEvents", write(os.path.join(tmp, "two.json"), two), [["stats"]], clean_path=clean)
    nul = with_events(ev, distributedInfo={"rank": 1, "world_size": 2}).replace('"aten::zeros"', '"aten::ze\\u0000ros"')
    T.n["inputs"] += 1
    trace_runs(R, T, "\\u0000 in names", write(os.path.join(tmp, "nul.json"), nul), [["stats"]], clean_path=clean)
    return T


def cls_dirs(R, tmp, full):
    T = Tally("directories: skipped files", True)
    clean = os.path.join(tmp, "dir_clean")
    os.mkdir(clean)
    shutil.copy(TRACE, os.path.join(clean, "rank-0.json"))
    shutil.copy(TRACE1, os.path.join(clean, "rank-1.json"))

    def variant(name, make):
        d = os.path.join(tmp, "dir_" + name)
        os.mkdir(d)
        shutil.copy(TRACE, os.path.join(d, "rank-0.json"))
        make(os.path.join(d, "rank-1.json"))
        T.n["inputs"] += 1
        trace_runs(R, T, name, d, TRACE_CMDS, clean_path=clean)

    variant("dangling link", lambda p: os.symlink("nowhere.json", p))
    variant("link loop", lambda p: os.symlink(os.path.basename(p), p))
    variant("fifo", lambda p: os.mkfifo(p))
    variant("directory", lambda p: os.mkdir(p))
    variant("empty file", lambda p: write(p, b""))
    variant("notes beside", lambda p: (shutil.copy(TRACE1, p), write(p.replace("rank-1.json", "notes.txt"), "x")))
    loop = os.path.join(tmp, "loop.json")
    os.symlink("loop.json", loop)
    T.n["inputs"] += 1
    trace_runs(R, T, "link loop given directly", loop, [["stats"]])
    return T


def cls_special(R, tmp, full):
    T = Tally("special files", True)
    for dev in ("/dev/zero", "/dev/null", "/dev/full", "/dev/urandom"):
        T.n["inputs"] += 1
        trace_runs(R, T, dev, dev, [["stats"]])
    sides = [
        (["memory", "/dev/zero", FX + "/fx_graph_transformed_backward.py"], "fx dump"),
        (["memory", "--times", "/dev/zero", FX + "/fx_graph_transformed_forward.py",
          FX + "/fx_graph_transformed_backward.py"], "--times"),
        (["memory", "--precision-plan", "/dev/zero", FX + "/fx_graph_transformed_forward.py",
          FX + "/fx_graph_transformed_backward.py"], "--precision-plan"),
        (["replay", "--world", "4", "--nccl-tests", "/dev/zero", TRACE, TRACE1], "--nccl-tests"),
        (["replay", "--bucket-mb", "1", "--gradients", "/dev/zero", TRACE, TRACE1], "--gradients"),
        (["memory", "--trace", "/dev/zero"], "memory --trace"),
    ]
    for args, label in sides:
        T.n["inputs"] += 1
        kind, so, se = R.run(args)
        T.add(label + " /dev/zero", kind, silent=True, stderr=se)
    # a fifo with a writer (process substitution): read as a stream, like the file
    fifo = os.path.join(tmp, "stream.json")
    os.mkfifo(fifo)

    def feed():
        try:
            with open(fifo, "wb") as f:
                f.write(open(TRACE, "rb").read())
        except BrokenPipeError:   # the reader stopped early (an error it reported): not ours to judge here
            pass
    th = threading.Thread(target=feed, daemon=True)
    th.start()
    T.n["inputs"] += 1
    trace_runs(R, T, "fifo with a writer", fifo, [["stats"]])
    if th.is_alive():   # the CLI never opened it: unblock the writer
        try:
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        except OSError:
            pass
    return T


BAD_OPTIONS = [
    (["replay", "--world", "-1"], [TRACE, TRACE1]), (["replay", "--world", "99999999999"], [TRACE, TRACE1]),
    (["replay", "--bandwidth", "1e-300"], [TRACE, TRACE1]), (["replay", "--latency-us", "nan"], [TRACE, TRACE1]),
    (["replay", "--bucket-mb", "1e30"], [TRACE, TRACE1]), (["replay", "--iterations", "-1"], [TRACE, TRACE1]),
    (["replay", "--scale", "cpu:*=1e12"], [TRACE, TRACE1]), (["replay", "--scale", "cpu:*=5e10"], [TRACE, TRACE1]),
    (["stats", "--top", "99999999999"], [TRACE]), (["stats", "--iterations", "1:99999999999999999999"], [TRACE]),
    (["stats", "--width", "-1"], [TRACE]), (["breakdown", "--kernel-delay", "99999999999999999999"], [TRACE]),
    (["critical-path", "--top", "99999999999"], [TRACE]), (["critical-path", "--iteration", "-1"], [TRACE]),
    (["memory", "--top", "-1", FX + "/fx_graph_transformed_forward.py"], [FX + "/fx_graph_transformed_backward.py"]),
    (["memory", "--peak-tflops", "1e-300", "--bandwidth-gbps", "1", FX + "/fx_graph_transformed_forward.py"],
     [FX + "/fx_graph_transformed_backward.py"]),
]


def cls_options(R, tmp, full):
    T = Tally("numeric options out of range", True)
    for args, paths in BAD_OPTIONS:
        T.n["inputs"] += 1
        kind, so, se = R.run(args + paths)
        T.add(" ".join(args), kind, silent=True, stderr=se)   # exit 0 is wrong: the value cannot be taken
    return T


def cls_fx(R, tmp, full):
    T = Tally("fx dump pairs", True)
    fwd, bwd = FX + "/fx_graph_transformed_forward.py", FX + "/fx_graph_transformed_backward.py"
    f_text, b_text = open(fwd).read(), open(bwd).read()
    cut = lambda t: "\n".join(l for l in t.splitlines() if not l.strip().startswith("return")) + "\n"
    pairs = {"forward twice": (fwd, fwd), "backward twice": (bwd, bwd), "swapped": (bwd, fwd),
             "forward without return": (write(os.path.join(tmp, "f_noret.py"), cut(f_text)), bwd),
             "backward without return": (fwd, write(os.path.join(tmp, "b_noret.py"), cut(b_text))),
             "forward twice in one file": (write(os.path.join(tmp, "f_two.py"), f_text + f_text), bwd)}
    for k in range(1, 16, 3):
        pairs["forward cut %d/16" % k] = (write(os.path.join(tmp, "f_cut%d.py" % k), f_text[: len(f_text) * k // 16]), bwd)
    clean = R.clean_output(("memory",), ["memory", fwd, bwd])
    for label, (f, b) in pairs.items():
        T.n["inputs"] += 1
        kind, so, se = R.run(["memory", f, b])
        T.add(label, kind, silent=(clean is None or so != clean), stderr=se)
    return T


def can_mount_tmpfs(d, opts):
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", d], capture_output=True).returncode == 0


# What memory -o --plot writes (docs/memory.md): a run that made its missing
# folder is judged whole when each is there and not empty.
MEM_FILES = ["kernels.config", "tensors.config", "liveness_analysis.config", "memory.json", "memory.svg", "periods.svg"]


def cls_outputs(R, tmp, full):
    """Outputs that cannot be written: stdout on /dev/full, --export and -o on
    a full disk (a 64 KiB tmpfs, where root may mount one), a read-only
    filesystem, a missing folder. Exit 0 is a silent failure (but memory -o
    makes a missing folder, as documented: there exit 0 with every file whole
    is right); a file left behind by a failed run (or a short one by a
    'successful' run) is partial."""
    T = Tally("outputs: full, read-only, missing", True)
    fwd, bwd = FX + "/fx_graph_transformed_forward.py", FX + "/fx_graph_transformed_backward.py"
    T.n["inputs"] += 1
    for cmd in (["stats", "--format", "json", TRACE], ["breakdown", TRACE], ["critical-path", TRACE],
                ["replay", TRACE, TRACE1], ["memory", fwd, bwd], ["diff", TRACE, TRACE], ["info", TRACE]):
        kind, so, se = R.run(cmd, stdout_path="/dev/full")
        T.add(cmd[0] + " > /dev/full", kind, silent=True, stderr=se)
    full, ro = os.path.join(tmp, "full"), os.path.join(tmp, "ro")
    os.mkdir(full)
    os.mkdir(ro)
    mounted = []
    if can_mount_tmpfs(full, "size=64k"):
        mounted.append(full)
        write(os.path.join(full, "filler"), b"\0" * (60 << 10))   # leave a few KB
    if can_mount_tmpfs(ro, "ro,size=64k"):
        mounted.append(ro)
    targets = [("missing folder", os.path.join(tmp, "no", "such", "dir"))]
    if full in mounted:
        targets.append(("full disk", full))
    if ro in mounted:
        targets.append(("read-only", ro))
    try:
        for label, d in targets:
            T.n["inputs"] += 1
            for cmd, out in ((["critical-path", "--export"], "cp.json"), (["replay", "--export"], "rp.json")):
                path = os.path.join(d, out)
                kind, so, se = R.run(cmd + [path, TRACE, TRACE1] if cmd[0] == "replay" else cmd + [path, TRACE])
                left = os.path.exists(path)
                T.add("%s --export (%s)" % (cmd[0], label), kind, silent=True, partial=int(left), stderr=se)
                if left:
                    os.remove(path)
            db = os.path.join(d, "out.db")   # export --sqlite: written to a temporary beside it, renamed
            kind, so, se = R.run(["export", "--sqlite", db, TRACE])
            left = [f for f in os.listdir(d) if f.startswith((".out.db", "out.db"))] if os.path.isdir(d) else []
            T.add("export --sqlite (%s)" % label, kind, silent=True, partial=int(bool(left)), stderr=se)
            for f in left:
                os.remove(os.path.join(d, f))
            path = os.path.join(d, "report.html")
            kind, so, se = R.run(["report", "-o", path, TRACE, TRACE1])
            left = os.path.isdir(d) and any(f.startswith((".report.html", "report.html")) for f in os.listdir(d))
            T.add("report -o (%s)" % label, kind, silent=True, partial=int(left), stderr=se)
            for f in os.listdir(d) if left else ():
                if f.startswith((".report.html", "report.html")): os.remove(os.path.join(d, f))
            outdir = os.path.join(d, "mem")
            kind, so, se = R.run(["memory", "-o", outdir, "--plot", fwd, bwd])
            left = os.path.isdir(outdir) and len(os.listdir(outdir)) > 0
            if kind in ("ok", "warning") and label == "missing folder":   # -o makes DIR with its parents
                whole = all(os.path.getsize(os.path.join(outdir, f)) > 0 for f in MEM_FILES) if left else False
                T.add("memory -o (%s)" % label, kind if whole else "ok", silent=not whole, partial=int(not whole),
                      stderr=se)
            else:
                T.add("memory -o (%s)" % label, kind, silent=True, partial=int(left), stderr=se)
            if os.path.isdir(outdir):
                shutil.rmtree(outdir, ignore_errors=True)
    finally:
        for d in mounted:
            subprocess.run(["umount", d], capture_output=True)
    if not mounted:
        T.examples.append("note: no tmpfs could be mounted here (needs root): full-disk and read-only not tried")
    return T


CLASSES = {"truncate": cls_truncate, "flip": cls_flip, "numbers": cls_numbers, "nesting": cls_nesting,
           "ranks": cls_ranks, "dirs": cls_dirs, "special": cls_special, "options": cls_options, "fx": cls_fx,
           "outputs": cls_outputs}


def main():
    ap = argparse.ArgumentParser(description="robustness of every command to hostile input")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--only", action="append", choices=sorted(CLASSES))
    ap.add_argument("--timeout", type=float, default=30.0)
    a = ap.parse_args()
    binary = os.environ.get("TS_BIN", os.path.join(ROOT, "build/san/trainscope"))
    if not os.access(binary, os.X_OK):
        sys.exit("hostile: %s missing (make SAN=1 all, or set TS_BIN)" % binary)
    R = Runner(binary, a.timeout)
    print("hostile: %s, timeout %g s, memory %d MB (%s)" % (
        os.path.relpath(binary, ROOT), a.timeout, MEM_LIMIT_MB,
        "ASan hard_rss_limit_mb" if R.san else "ulimit -v"))
    print("%-34s %s" % ("class", " ".join("%7s" % c for c in COLS)))
    bad = 0
    tmp = tempfile.mkdtemp(prefix="ts_hostile_")
    try:
        for name in a.only or list(CLASSES):
            T = CLASSES[name](R, tmp, a.full)
            print("%-34s %s%s" % (T.name, " ".join("%7d" % T.n[c] for c in COLS), "" if T.judged else "  (silent not judged)"))
            for e in T.examples:
                print("    " + e)
            sys.stdout.flush()
            bad += T.bad()
            shutil.rmtree(tmp, ignore_errors=True)
            os.mkdir(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("total crashes, hangs, silent wrong answers, partial files and unclear errors: %d" % bad)
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
