"""trainscope_trace - trainscope's host tracing API for Python, over the C
library (libtrainscope-trace.so) through ctypes, plus the Python collector.

Ranges, instants, counters and thread names go into the same per-thread
buffers as the C API, so they land in the trace `trainscope record` writes:

    import trainscope_trace as tt
    with tt.range("data loading"):
        batch = next(it)
    tt.counter("loss", loss.item())

install_profiler() records Python function calls through the interpreter's
profiling hook (PyEval_SetProfile) with a callback implemented in C, on this
thread and on every thread started later; `trainscope record --python` calls it
from sitecustomize.py. Nothing happens (and nothing fails) when the library
cannot be found or tracing is off.
"""
import contextlib
import ctypes
import os
import sys
import threading

_lib = None


def _find_library():
    """The libtrainscope-trace.so the process already uses, else a build one."""
    cands = []
    libdir = os.environ.get("TRAINSCOPE_LIB_DIR")
    if libdir:
        cands.append(os.path.join(libdir, "libtrainscope-trace.so"))
    for p in os.environ.get("LD_PRELOAD", "").replace(" ", ":").split(":"):
        if os.path.basename(p).startswith("libtrainscope-"):
            cands.append(os.path.join(os.path.dirname(p), "libtrainscope-trace.so"))
    here = os.path.dirname(os.path.abspath(__file__))
    cands.append(os.path.join(here, "..", "build", "libtrainscope-trace.so"))
    for c in cands:
        if os.path.exists(c):
            return c
    return None


def _load():
    global _lib
    if _lib is not None:
        return _lib or None
    path = _find_library()
    try:
        lib = ctypes.CDLL(path) if path else None
    except OSError:
        lib = None
    if lib is None:
        _lib = False
        return None
    c_char_p, c_int, c_uint64, c_double = ctypes.c_char_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_double
    for name, args, res in [
        ("ts_trace_start", [c_char_p], c_int), ("ts_trace_stop", [], c_int),
        ("ts_trace_flush", [], None), ("ts_trace_push", [c_char_p, c_char_p], None),
        ("ts_trace_pop", [], None), ("ts_trace_begin", [c_uint64, c_char_p, c_char_p], None),
        ("ts_trace_end", [c_uint64], None), ("ts_trace_instant", [c_char_p, c_char_p], None),
        ("ts_trace_counter", [c_char_p, c_double], None), ("ts_trace_thread_name", [c_char_p], None),
        ("ts_trace_set_rank", [c_int, c_int], None), ("ts_trace_dropped", [], c_uint64),
        ("ts_trace_py_set_filter", [c_char_p], c_int),
        ("ts_trace_emit", [ctypes.POINTER(_Event)], c_int),
    ]:
        f = getattr(lib, name)
        f.argtypes, f.restype = args, res
    _lib = lib
    return lib


class _Arg(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("str", ctypes.c_char_p), ("num", ctypes.c_int64)]


class _Event(ctypes.Structure):   # ts_trace_event (include/trainscope/trace.h)
    _fields_ = [("size", ctypes.c_size_t), ("phase", ctypes.c_char), ("cat", ctypes.c_char_p),
                ("name", ctypes.c_char_p), ("ts_ns", ctypes.c_int64), ("dur_ns", ctypes.c_int64),
                ("pid", ctypes.c_int64), ("tid", ctypes.c_int64), ("value", ctypes.c_double),
                ("flow_id", ctypes.c_uint64), ("flow_phase", ctypes.c_char), ("flow_cat", ctypes.c_char_p),
                ("args", ctypes.POINTER(_Arg)), ("n_args", ctypes.c_uint32), ("json_args", ctypes.c_uint64)]


class Emitter:
    """Events with explicit times (CLOCK_MONOTONIC ns), tracks and args, for
    collectors written in Python (trainscope_torch). Arg values: int, str, or
    an object with .text holding JSON text (written as JSON; one longer than
    the runtime keeps, MAX_JSON bytes, is left out rather than cut)."""

    MAX_ARGS = 16
    MAX_JSON = 2047
    HEAD = ("phase", "cat", "name", "ts_ns", "dur_ns", "pid", "tid")

    def __init__(self):
        self.lib = _load()
        self.dropped = 0
        self.ev = _Event()
        self.ev.size = ctypes.sizeof(_Event)
        self.arr = (_Arg * self.MAX_ARGS)()   # reused: ts_trace_emit copies what it keeps
        self.ev.args = self.arr
        self.bytes = {}                       # str -> bytes: names, cats and keys repeat
        self.emit_c = self.lib.ts_trace_emit if self.lib is not None else None
        self.ev_ref = ctypes.byref(self.ev)
        self.last = (None,) * 7                       # the previous event's head, args, flow
        self.last_args = [(None, None)] * self.MAX_ARGS
        self.last_n = (0, 0)
        self.last_flow = None
        self.held = [None] * self.MAX_ARGS            # bytes the reused args point to

    def _enc(self, s):
        b = self.bytes.get(s)
        if b is None:
            b = self.bytes[s] = _b(s) if len(self.bytes) < 65536 else None
            if b is None:
                return _b(s)
        return b

    def emit(self, phase, cat, name, ts_ns, dur_ns, pid, tid, args=(), flow=None):
        """Returns 1 when recorded, 0 when dropped (buffer full, tracing off).
        A field of a ctypes Structure costs about a microsecond to set, so only
        those that differ from the previous event's are set."""
        if self.emit_c is None:
            return 0
        ev, enc, arr, last = self.ev, self._enc, self.arr, self.last
        head = (phase, cat, name, ts_ns, dur_ns, pid, tid)
        for i, f in enumerate(self.HEAD):
            if head[i] != last[i]:
                setattr(ev, f, head[i] if i > 2 else enc(head[i]))
        self.last = head
        fl = (flow["id"], flow["ph"], flow.get("cat") or "ac2g") if (
            flow is not None and isinstance(flow.get("id"), int) and flow["id"] > 0) else None
        if fl != self.last_flow:
            ev.flow_id, ev.flow_phase, ev.flow_cat = (fl[0], enc(fl[1]), enc(fl[2])) if fl else (0, b"\0", None)
            self.last_flow = fl
        n = json_bits = 0
        for k, v in args:
            if n == self.MAX_ARGS:
                break
            if not isinstance(v, (int, str)):
                if len(v.text) > self.MAX_JSON:
                    continue   # longer than the runtime keeps: left out rather than cut
                json_bits |= 1 << n
                v = v.text
            if (k, v) != self.last_args[n]:
                a = arr[n]
                if self.last_args[n][0] != k:
                    a.key = enc(k)
                if isinstance(v, int) and not isinstance(v, bool):
                    a.str, a.num = None, v
                else:
                    t = enc(v) if not json_bits >> n & 1 else v.encode("utf-8", "replace")
                    self.held[n] = t   # alive while the array points to it
                    a.str = t
                self.last_args[n] = (k, v)
            n += 1
        if (n, json_bits) != self.last_n:
            ev.n_args, ev.json_args = n, json_bits
            self.last_n = (n, json_bits)
        if self.emit_c(self.ev_ref):
            self.dropped += 1
            return 0
        return 1


def _b(s):
    return s.encode("utf-8", "replace") if isinstance(s, str) else s


def available():
    """True when the C library was found."""
    return _load() is not None


def enabled():
    """True while tracing is on."""
    lib = _load()
    return bool(lib and ctypes.c_int.in_dll(lib, "ts_trace_on").value)


def start(directory):
    """Start tracing into directory (not needed under `trainscope record`)."""
    lib = _load()
    return lib.ts_trace_start(_b(directory)) if lib else -1


def stop():
    lib = _load()
    return lib.ts_trace_stop() if lib else -1


def push(name, cat="user_annotation"):
    lib = _load()
    if lib:
        lib.ts_trace_push(_b(cat), _b(name))


def pop():
    lib = _load()
    if lib:
        lib.ts_trace_pop()


@contextlib.contextmanager
def range(name, cat="user_annotation"):  # noqa: A001 - mirrors the C API's "range"
    push(name, cat)
    try:
        yield
    finally:
        pop()


def begin(range_id, name, cat="user_annotation"):
    """A range that may end on another thread (end(range_id))."""
    lib = _load()
    if lib:
        lib.ts_trace_begin(range_id, _b(cat), _b(name))


def end(range_id):
    lib = _load()
    if lib:
        lib.ts_trace_end(range_id)


def instant(name, cat="user_annotation"):
    lib = _load()
    if lib:
        lib.ts_trace_instant(_b(cat), _b(name))


def counter(name, value):
    lib = _load()
    if lib:
        lib.ts_trace_counter(_b(name), float(value))


def thread_name(name):
    lib = _load()
    if lib:
        lib.ts_trace_thread_name(_b(name))


def dropped():
    lib = _load()
    return lib.ts_trace_dropped() if lib else 0


def _set_c_profile():
    """Make the C callback this thread's profile function."""
    set_profile = ctypes.pythonapi.PyEval_SetProfile
    set_profile.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    set_profile.restype = None
    set_profile(ctypes.cast(_lib.ts_trace_py_profile, ctypes.c_void_p), None)


def _thread_hook(frame, event, arg):
    # threading calls this on a new thread's first event: name the thread's
    # track after the Python thread, then hand over to C.
    _lib.ts_trace_thread_name(_b(threading.current_thread().name))
    _set_c_profile()


def install_profiler(filter_csv=None):
    """Record Python calls as ranges (cat python_function) on this thread and
    threads started later; filter_csv limits them to modules ("torch.nn.modules")
    or files ("train.py"), comma-separated. Returns False when unavailable."""
    lib = _load()
    if lib is None or not hasattr(ctypes, "pythonapi"):
        return False
    lib.ts_trace_py_set_filter(_b(filter_csv) if filter_csv else None)
    threading.setprofile(_thread_hook)
    _set_c_profile()
    return True


def uninstall_profiler():
    threading.setprofile(None)
    sys.setprofile(None)
