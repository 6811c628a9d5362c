"""trainscope_torch - torch's profiler in every process of a job that imports
torch, for `trainscope record --torch`; not for use by hand (use
torch.profiler directly) nor for processes that never import torch.

sitecustomize.py puts a finder first on sys.meta_path that only compares the
name of each import with "torch" (all it costs a process that never imports
torch) and imports this module on `import torch`; right after torch's own
import finishes (torch_spec) it starts torch's profiler with the
window from TRAINSCOPE_TORCH_SCHEDULE ("wait,warmup,active", active 0 = until
exit) and marks iterations ProfilerStep#N at each step() of the first
optimizer that steps. When the window closes, the process exits or SIGTERM
arrives, the profiler's events go through libtrainscope-trace.so
(ts_trace_emit) into the process's own trace, on CLOCK_MONOTONIC, so record
writes them in the same per-rank file as its other collectors.

Two sources, one output (Kineto-shaped events):
- a torch with Kineto: torch's own Kineto JSON export, read back and emitted
  event by event (GPU kernels, flows and args as Kineto wrote them);
- a torch without Kineto (Debian's 1.13 CPU build): the profiler's event tree,
  with Kineto's arg names (Input Dims, Input type, [memory] Bytes / Total
  Allocated / Total Reserved, and In msg nelems / dtype on gloo collectives).
The first DistributedDataParallel model a process makes has its gradients
written to DIR/.gradients.json (names and bytes in registration order, what
`trainscope optimize` and `replay --gradients` read).
Each process leaves one status line in DIR/.raw/torch-<pid>.txt that record
reads for its summary. Never raises into the program: a failure is one line
on stderr and a status line.
"""
import atexit
import decimal
import json
import os
import signal
import sys
import threading
import time

_state = None          # _Run while the profiler is set up in this process
SYNTH_TID = 1 << 22    # above Linux's pid_max: torch thread numbers never clash with OS tids


class _Run:
    def __init__(self, torch, wait, warmup, active, memory, gpu):
        self.torch = torch
        self.wait, self.warmup, self.active = wait, warmup, active
        self.memory, self.gpu = memory, gpu
        self.prof = None
        self.kineto = False
        self.opt_id = None         # id() of the optimizer whose steps count
        self.steps = 0
        self.step_tid = threading.get_native_id()   # OS tid of the stepping thread
        self.done = False
        self.rank_set = False
        self.dist_extra = []       # Kineto's other distributedInfo keys (pg_count, nccl_version, ...)
        self.pid = os.getpid()


def _warn(msg):
    try:
        sys.stderr.write("trainscope: --torch: %s\n" % msg)
    except Exception:
        pass


def _status(**kv):
    """One line for record's summary: key=value pairs, values without spaces."""
    d = os.environ.get("TRAINSCOPE_DIR")
    if not d:
        return
    kv.setdefault("pid", os.getpid())
    reason = kv.pop("reason", None)   # free text: last, to the end of the line
    line = " ".join("%s=%s" % (k, str(v).replace(" ", "_")) for k, v in kv.items())
    if reason is not None:
        line += " reason=" + " ".join(str(reason).split())
    try:
        raw = os.path.join(d, ".raw")
        os.makedirs(raw, exist_ok=True)
        path = os.path.join(raw, "torch-%d.txt" % os.getpid())
        with open(path + ".tmp", "w") as f:
            f.write(line + "\n")
        os.replace(path + ".tmp", path)
    except OSError:
        pass


def _config():
    parts = (os.environ.get("TRAINSCOPE_TORCH_SCHEDULE") or "0,0,0").split(",")
    try:
        wait, warmup, active = (max(0, int(p)) for p in parts)
    except ValueError:
        wait, warmup, active = 0, 0, 0
    return (wait, warmup, active, os.environ.get("TRAINSCOPE_TORCH_MEMORY") == "1",
            os.environ.get("TRAINSCOPE_TORCH_GPU", "1") == "1")


# ---- activation: after `import torch` ----

def torch_spec():
    """torch's module spec with its loader wrapped: _activate runs right
    after torch's own import (sitecustomize's finder calls this once)."""
    import importlib.util
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
        return spec
    real = spec.loader.exec_module

    def exec_module(module):
        real(module)
        _activate(module)
    spec.loader.exec_module = exec_module
    return spec


def _is_launcher():
    """torchrun / torch.distributed.run / .launch import torch but train nothing."""
    a0 = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return (os.path.basename(a0) == "torchrun" or a0.endswith(os.path.join("torch", "distributed", "run.py"))
            or a0.endswith(os.path.join("torch", "distributed", "launch.py")))


def _activate(torch):
    global _state
    if _state is not None or _is_launcher():
        return
    try:
        _state = _Run(torch, *_config())
        _start(_state)
    except Exception as e:
        _warn("torch's profiler did not start in pid %d (%s: %s): torch ops are not recorded there"
              % (os.getpid(), type(e).__name__, e))
        _status(state="failed", reason="%s: %s" % (type(e).__name__, e))
        _state = None


def _schedule(run):
    from torch.profiler import ProfilerAction as A
    w, wu, act = run.wait, run.warmup, run.active

    def sched(step):
        if step < w:
            return A.NONE
        if step < w + wu:
            return A.WARMUP
        if act == 0 or step < w + wu + act - 1:
            return A.RECORD
        return A.RECORD_AND_SAVE if step == w + wu + act - 1 else A.NONE
    return sched


def _start(run):
    import torch.optim
    import torch.profiler as tp
    from trainscope_trace import _load
    if _load() is None:
        raise RuntimeError("libtrainscope-trace.so not found")
    ka = getattr(run.torch.autograd, "kineto_available", None)
    run.kineto = bool(ka and ka())
    acts = [tp.ProfilerActivity.CPU]
    if run.kineto:
        _yield_cuda_collector()   # before is_available(), which starts CUDA
        if run.gpu and run.torch.cuda.is_available():
            acts.append(tp.ProfilerActivity.CUDA)
    run.prof = tp.profile(activities=acts, schedule=_schedule(run), on_trace_ready=_ready,
                          record_shapes=True, profile_memory=run.memory)
    _hook_optimizer(torch.optim)
    _hook_ddp(run.torch)
    run.prof.start()
    atexit.register(_at_exit)
    os.register_at_fork(after_in_child=_in_child)
    _hook_sigterm()
    _status(state="started", steps=0)


def _yield_cuda_collector():
    """CUPTI's activity API serves one profiler per process, and Kineto takes
    it over at profiler start (our buffers would go to Kineto, which drops
    them). Where Kineto records the GPU, trainscope's CUDA collector
    (`record --cuda`, preloaded) stands aside first: ts_cuda_yield() flushes
    what it has and never attaches again. Kineto takes CUPTI over even when
    it records the CPU only (seen with torch 2.11), so this is done whenever
    Kineto profiles."""
    if os.environ.get("TRAINSCOPE_CUDA") != "1":
        return
    import ctypes
    try:
        ctypes.CDLL(None).ts_cuda_yield()
    except (AttributeError, OSError):
        pass   # the collector is not in this process


def _hook_ddp(torch):
    """DDP's gradients (trainable parameters, registration order) into
    DIR/.gradients.json when the first DDP model is made (written whole, then
    renamed; a rank that finds it there leaves it)."""
    try:
        from torch.nn.parallel import DistributedDataParallel as DDP
    except Exception:
        return
    real_init = DDP.__init__
    if getattr(real_init, "_trainscope", False):
        return

    def init(self, module, *a, **k):
        real_init(self, module, *a, **k)
        try:
            _write_gradients(module)
        except Exception as e:
            _warn("gradients.json not written (%s: %s)" % (type(e).__name__, e))
    init._trainscope = True
    DDP.__init__ = init


def _write_gradients(module):
    d = os.environ.get("TRAINSCOPE_DIR")
    if not d or getattr(_write_gradients, "done", False):
        return
    _write_gradients.done = True
    params = [{"name": n, "bytes": p.numel() * p.element_size()}
              for n, p in module.named_parameters() if p.requires_grad]
    path = os.path.join(d, ".gradients.json")
    if os.path.exists(path):   # another rank's: the same model (DDP checks it)
        return
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump({"parameters": params}, f)
    os.replace(tmp, path)


def _hook_optimizer(optim):
    """Only the outermost step() of a call counts: a subclass's step() that
    calls super().step() is one iteration, not two (depth counts them)."""
    mod = getattr(optim, "optimizer", None)
    pre = getattr(mod, "register_optimizer_step_pre_hook", None)
    post = getattr(mod, "register_optimizer_step_post_hook", None)
    if pre is not None and post is not None:
        pre(lambda opt, args, kwargs: _enter_step())
        post(lambda opt, args, kwargs: _leave_step(opt))
        return
    # torch < 2.0: wrap step() of each optimizer class when its first instance is made
    base = optim.Optimizer
    real_init = base.__init__

    def init(self, *a, **k):
        real_init(self, *a, **k)
        _wrap_step(type(self))
    base.__init__ = init


def _wrap_step(cls):
    real = cls.step
    if getattr(real, "_trainscope", False):
        return

    def step(self, *a, **k):
        _enter_step()
        try:
            out = real(self, *a, **k)
        except BaseException:
            _depth[0] = max(0, _depth[0] - 1)
            raise
        _leave_step(self)
        return out
    step._trainscope = True
    step.__wrapped__ = real
    step.__name__, step.__doc__ = real.__name__, real.__doc__
    cls.step = step


_depth = [0]   # step() calls under way on the stepping thread


def _enter_step():
    _depth[0] += 1


def _leave_step(opt):
    _depth[0] = max(0, _depth[0] - 1)
    if _depth[0] == 0:
        _on_step(opt)


def _on_step(opt):
    run = _state
    if run is None or run.done or os.getpid() != run.pid:
        return
    if run.opt_id is None:
        run.opt_id = id(opt)
    if id(opt) != run.opt_id:
        return
    run.steps += 1
    run.step_tid = threading.get_native_id()
    if not run.rank_set:
        _set_rank(run)
    try:
        run.prof.step()
    except Exception as e:
        _give_up(run, e)


def _give_up(run, e):
    run.done = True
    _warn("torch's profiler failed in pid %d (%s: %s): its torch ops are not recorded"
          % (os.getpid(), type(e).__name__, e))
    _status(state="failed", steps=run.steps, reason="%s: %s" % (type(e).__name__, e))


def _at_exit():
    run = _state
    if run is None or run.done or os.getpid() != run.pid:
        return
    if run.steps == 0 and _is_launcher():
        # `python -m torch.distributed.run` imports torch before sys.argv[0]
        # names the module: a launcher is only known here, and leaves nothing
        run.done = True
        _quiet_stop(run)
        _status_remove()
        return
    try:
        run.prof.stop()   # an open window is saved: _ready runs
    except Exception as e:
        _give_up(run, e)
        return
    if not run.done:      # the window never opened
        run.done = True
        _status(state="nowindow", steps=run.steps, wait=run.wait + run.warmup)


def _quiet_stop(run):
    try:
        run.prof.stop()
    except Exception:
        pass


def _status_remove():
    try:
        os.unlink(os.path.join(os.environ.get("TRAINSCOPE_DIR", ""), ".raw", "torch-%d.txt" % os.getpid()))
    except OSError:
        pass


def _in_child():
    """A forked child (DataLoader worker) neither profiles nor writes."""
    global _state
    if _state is not None:
        _state.done = True


def _hook_sigterm():
    """A job scheduler's SIGTERM: save what was recorded, then die of it."""
    try:
        if signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
            return

        def on_term(sig, frame):
            _at_exit()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
        signal.signal(signal.SIGTERM, on_term)
    except ValueError:   # not the main thread: leave signals alone
        pass


def _set_rank(run):
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            from trainscope_trace import _load
            _load().ts_trace_set_rank(dist.get_rank(), dist.get_world_size())
            run.rank_set = True
    except Exception:
        pass


# ---- writing: the profiler's events into the process's trace ----

def _clock_offset_ns():
    """CLOCK_REALTIME - CLOCK_MONOTONIC (torch stamps realtime), from the
    tightest of a few bracketed readings."""
    best = None
    for _ in range(5):
        m1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        r = time.clock_gettime_ns(time.CLOCK_REALTIME)
        m2 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        if best is None or m2 - m1 < best[0]:
            best = (m2 - m1, r - (m1 + m2) // 2)
    return best[1]


def _ready(prof):
    run = _state
    if run is None or run.done:
        return
    run.done = True
    try:
        import trainscope_trace as tt
        _set_rank(run)
        em = tt.Emitter()
        off = _clock_offset_ns()
        fmt = "kineto" if run.kineto else "legacy"
        n = _emit_kineto(prof, em, off, run) if run.kineto else _emit_tree(prof, em, off, run)
        _emit_dist_info(em, run)
        _status(state="ok", format=fmt, events=n, dropped=em.dropped, steps=run.steps,
                window="%d:%d" % (run.wait + run.warmup, run.wait + run.warmup + run.active if run.active else -1))
    except Exception as e:
        _warn("torch's events could not be written in pid %d (%s: %s)" % (os.getpid(), type(e).__name__, e))
        _status(state="failed", steps=run.steps, reason="writing its events: %s: %s" % (type(e).__name__, e))


def _emit_dist_info(em, run):
    try:
        import torch.distributed as dist
        if not (dist.is_available() and dist.is_initialized()):
            return
        em.emit("i", "trainscope_meta", "distributedInfo", 0, 0, -1, -1,
                [("backend", str(dist.get_backend()))] + run.dist_extra)
    except Exception:
        pass


# torch's C type names (Input type) -> the ScalarType names Kineto's
# record_param_comms writes as "dtype" (graph/collective.c sizes by them)
_DTYPE = {"float": "Float", "double": "Double", "c10::Half": "Half", "c10::BFloat16": "BFloat16",
          "long int": "Long", "int": "Int", "short int": "Short", "signed char": "Char",
          "unsigned char": "Byte", "bool": "Bool", "c10::complex<float>": "ComplexFloat"}


def _comm_args(name, shapes, dtypes):
    """A gloo collective's size, as Kineto's record_param_comms names it."""
    if not name.startswith("gloo:"):
        return []
    nel, dt = 0, None
    for shp, d in zip(shapes, dtypes):
        if d in _DTYPE and isinstance(shp, (list, tuple)):
            k = 1
            for x in shp:
                k *= int(x)
            nel += k
            dt = dt or _DTYPE[d]
    if dt is None:
        return []
    return [("In msg nelems", nel), ("Out msg nelems", nel), ("dtype", dt)]


def _emit_tree(prof, em, off, run):
    """torch without Kineto: walk the profiler's event tree."""
    res = prof.profiler.kineto_results
    try:
        roots = res.experimental_event_tree()
    except Exception:
        return _emit_flat(res, em, off, run)
    main_tid, marks = None, []
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n.name.startswith("ProfilerStep#"):
            main_tid = n.start_tid
            marks.append((int(n.start_time_ns), n.name))
        stack.extend(n.children)
    steps = _step_names(marks, run)
    pid = os.getpid()
    count = 0
    stack = list(reversed(roots))
    while stack:
        n = stack.pop()
        stack.extend(reversed(n.children))
        tid = run.step_tid if n.start_tid == main_tid else SYNTH_TID + int(n.start_tid)
        ts = int(n.start_time_ns) - off
        ef = n.extra_fields
        kind = type(ef).__name__
        if kind.endswith("Allocation"):
            if not run.memory:
                continue
            dev = getattr(ef, "device", None)
            dtype = 1 if getattr(dev, "type", "cpu") == "cuda" else 0
            args = [("Device Type", dtype), ("Device Id", getattr(dev, "index", None) if dtype else -1),
                    ("Addr", int(ef.ptr)), ("Bytes", int(ef.alloc_size)),
                    ("Total Allocated", int(ef.total_allocated)), ("Total Reserved", int(ef.total_reserved))]
            args = [(k, -1 if v is None else v) for k, v in args]
            count += em.emit("i", "cpu_instant_event", "[memory]", ts, 0, pid, tid, args)
            continue
        if not kind.endswith("TorchOp"):
            continue
        name, args = n.name, []
        if name.startswith("ProfilerStep#"):
            if run.steps == 0:
                continue   # never stepped: the mark only spans the process
            name, cat = steps.get((int(n.start_time_ns), name), name), "user_annotation"
        else:
            inp = ef.inputs
            shapes, dtypes = list(inp.shapes), list(inp.dtypes)
            # record_function ranges too (gloo:all_reduce, Optimizer.step#SGD.step): cpu_op,
            # as legacy traces have them, so every analysis reads them as ops
            cat = "cpu_op"
            args = [("Input Dims", _Json(shapes)), ("Input type", _Json(dtypes))]
            if getattr(ef, "sequence_number", -1) >= 0:
                args.append(("Sequence number", int(ef.sequence_number)))
            args += _comm_args(name, shapes, dtypes)
        dur = max(0, int(n.end_time_ns) - int(n.start_time_ns))
        count += em.emit("X", cat, name, ts, dur, pid, tid, args)
    return count


def _step_names(marks, run):
    """ProfilerStep#N names by iteration: torch 1.x names the step begun by
    its k-th step() #k-1 (so #0 twice when the window starts at once), so the
    recorded marks (start, name) are renumbered in time order from the
    window's first iteration (wait + warmup). Returns {(start, name): new
    name}, and {name: new name of its first mark} for copies of a mark
    elsewhere (Kineto's gpu_user_annotation)."""
    first = run.wait + run.warmup
    names = {}
    for i, (ts, name) in enumerate(sorted(set(marks))):
        names[(ts, name)] = "ProfilerStep#%d" % (first + i)
        names.setdefault(name, names[(ts, name)])
    return names


def _emit_flat(res, em, off, run):
    """Older trees: the flat event list (microsecond stamps, no allocator totals)."""
    pid = os.getpid()
    evs = list(res.events())
    main = next((e.start_thread_id() for e in evs if e.name().startswith("ProfilerStep#")), None)
    steps = _step_names([(e.start_us(), e.name()) for e in evs if e.name().startswith("ProfilerStep#")], run)
    count = 0
    for e in evs:
        name = e.name()
        if name == "[memory]" or (name.startswith("ProfilerStep#") and run.steps == 0):
            continue
        tid = run.step_tid if e.start_thread_id() == main else SYNTH_TID + int(e.start_thread_id())
        shapes, dtypes = list(e.shapes()), list(e.dtypes())
        cat = "user_annotation" if name.startswith("ProfilerStep#") else "cpu_op"
        args = [("Input Dims", _Json(shapes)), ("Input type", _Json(dtypes))] + _comm_args(name, shapes, dtypes)
        if cat == "user_annotation":
            name, args = steps.get((e.start_us(), name), name), []
        count += em.emit("X", cat, name, int(e.start_us()) * 1000 - off, int(e.duration_us()) * 1000, pid, tid, args)
    return count


def _emit_kineto(prof, em, off, run):
    """torch with Kineto: its own export, read back (every field as Kineto wrote it)."""
    import tempfile
    fd, path = tempfile.mkstemp(prefix="trainscope-kineto-", suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:   # Decimal: epoch microseconds need 19 digits to keep the nanoseconds
            doc = json.load(f, parse_float=decimal.Decimal)
    finally:
        os.unlink(path)
    return emit_kineto_doc(doc, em, off, run)


def emit_kineto_doc(doc, em, off, run):
    """The events of a Kineto trace (a parsed JSON document) through em, times
    moved by -off ns; ProfilerStep#N renumbered from run's window. Returns the
    number of events recorded (test/e2e/record_torch_kineto_reader.sh feeds it
    real Kineto traces)."""
    base = int(doc.get("baseTimeNanoseconds", 0))
    evs = doc.get("traceEvents", [])
    flows = {}
    for e in evs:
        if e.get("ph") in ("s", "f") and "id" in e:
            key = (e.get("pid"), e.get("tid"), e.get("ts"))
            if key not in flows or e.get("cat") == "ac2g":
                flows[key] = e
    steps = _step_names([(_ns(e.get("ts", 0)), e["name"]) for e in evs if e.get("ph") == "X"
                         and str(e.get("name", "")).startswith("ProfilerStep#")
                         and e.get("cat") != "gpu_user_annotation"], run)
    count = 0
    for e in evs:
        ph = e.get("ph")
        if ph not in ("X", "i") or "ts" not in e:
            continue
        if str(e.get("name", "")).startswith("ProfilerStep#"):
            e["name"] = steps.get((_ns(e["ts"]), e["name"]), steps.get(e["name"], e["name"]))
        ts = base + _ns(e["ts"]) - off
        pid, tid = e.get("pid"), e.get("tid")
        if not isinstance(pid, int) or not isinstance(tid, int):
            continue   # Kineto's own spans ("pid": "Spans"): no track of the job
        # -1 means "the calling thread" to ts_trace_emit: Kineto's stream -1
        # (a context-wide sync) goes on track 0, as the CUPTI collector puts it
        pid, tid = (0 if pid == -1 else pid), (0 if tid == -1 else tid)
        args = [(k, v if isinstance(v, (int, str)) and not isinstance(v, bool) else _Json(v))
                for k, v in (e.get("args") or {}).items()]
        fl = flows.get((e.get("pid"), e.get("tid"), e.get("ts"))) if ph == "X" else None
        dur = _ns(e.get("dur", 0))
        count += em.emit(ph, e.get("cat", ""), e.get("name", ""), ts, dur, pid, tid, args, fl)
    info = doc.get("distributedInfo") or {}
    run.dist_extra = [(k, v if isinstance(v, (int, str)) else _Json(v)) for k, v in info.items()
                         if k not in ("rank", "world_size", "backend")]
    return count


def _ns(us):
    """Kineto's microseconds (int, or Decimal from the reader) in ns, exactly."""
    return int(decimal.Decimal(us) * 1000) if not isinstance(us, float) else int(round(us * 1000))


class _Json:
    """An arg written as JSON text (lists, floats, objects)."""
    __slots__ = ("text",)

    def __init__(self, v):
        self.text = json.dumps(v, separators=(",", ":"), default=float)   # Decimal -> number
