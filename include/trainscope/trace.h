/* trace.h - the host tracing API: what a program (or a collector inside it)
 * calls to put ranges, instants, counters and flows into a trainscope trace.
 *
 * Not for: reading traces (that is ingest) or analysis. This header is plain C
 * with a stable ABI so that any language can call it (python/trainscope_trace.py
 * does through ctypes); it is implemented by build/libtrainscope-trace.so, which
 * never links the analysis library.
 *
 * Model: each thread writes into its own lock-free buffer; a full buffer drops
 * the event and counts it, it never blocks. Buffers are written to
 * DIR/.raw/<pid>-<n>-<t>.tsr as they fill and at exit, SIGTERM/SIGINT, fork and
 * exec; at exit the process turns its raw stream into Chrome-trace JSON shaped
 * like Kineto's, DIR/rank-<R>.<pid>.json (pid-<pid>.json without a rank).
 * Times are CLOCK_MONOTONIC nanoseconds (ts_trace_now_ns()).
 *
 * Strings passed in are copied (at most TS_TRACE_MAX_STR bytes each, longer
 * ones are cut); the caller keeps ownership. Every function is thread-safe and
 * cheap to call while tracing is off.
 */
#ifndef TRAINSCOPE_TRACE_H
#define TRAINSCOPE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "trainscope/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TS_TRACE_MAX_STR 255   /* bytes kept of a name, category or string arg */
#define TS_TRACE_MAX_ARGS 16   /* args kept per event */

/* Non-zero while tracing is on. Read it with a relaxed load before a probe
 * (the TS_TRACE_* macros below do) so a disabled probe costs one load and a
 * predicted branch. Written only by ts_trace_start/ts_trace_stop. */
TS_API extern int ts_trace_on;

/* Start tracing into directory dir (created if missing). Called implicitly at
 * load time when TRAINSCOPE_DIR is set in the environment. Returns TS_OK,
 * TS_EIO when dir cannot be written, TS_EINVAL when already started. */
TS_API int ts_trace_start(const char *dir);
/* Flush every buffer, write the JSON trace, stop. Runs at exit by itself.
 * With TRAINSCOPE_DEFER_CONVERT=1 (set by `trainscope record`) the raw
 * stream is left for the recorder to convert. Returns TS_OK or TS_EIO. */
TS_API int ts_trace_stop(void);
/* Write every thread's buffered events to the raw stream now. */
TS_API void ts_trace_flush(void);

TS_API int64_t ts_trace_now_ns(void);   /* CLOCK_MONOTONIC */

/* Nested ranges on the calling thread: push opens, pop closes the innermost. */
TS_API void ts_trace_push(const char *cat, const char *name);
TS_API void ts_trace_pop(void);
/* A range identified by id (unique while open), which may end on another
 * thread than the one it began on; it is drawn on the beginning thread. */
TS_API void ts_trace_begin(uint64_t id, const char *cat, const char *name);
TS_API void ts_trace_end(uint64_t id);
TS_API void ts_trace_instant(const char *cat, const char *name);
TS_API void ts_trace_counter(const char *name, double value);
/* A flow arrow between ranges: phase 's' starts flow id inside the current
 * range of this thread, 't' continues it, 'f' ends it in the current range. */
TS_API void ts_trace_flow(uint64_t id, char phase, const char *cat);
TS_API void ts_trace_thread_name(const char *name);
/* The rank and world size written as distributedInfo (collectors call this
 * once they know them; RANK/WORLD_SIZE, OMPI_COMM_WORLD_RANK/SIZE and
 * PMI_RANK/PMI_SIZE are read at start). -1 = unknown. */
TS_API void ts_trace_set_rank(int rank, int world_size);

/* ---- the general event, for collectors (MPI, NCCL, CUDA) ---- */
typedef struct ts_trace_arg {
    const char *key;   /* copied; NULL ends the list early */
    const char *str;   /* string value (copied), or NULL for the integer below */
    int64_t     num;   /* integer value when str == NULL */
} ts_trace_arg;

/* One event with everything spelled out. Callers set size = sizeof(ts_trace_event);
 * fields are only ever added at the end. */
typedef struct ts_trace_event {
    size_t      size;       /* sizeof(ts_trace_event) of the caller's header */
    char        phase;      /* 'X' complete, 'i' instant, 'C' counter */
    const char *cat;        /* Kineto category ("mpi", "kernel", ...); NULL = "" */
    const char *name;       /* NULL = ""; up to 8191 bytes kept (kernel names), counters' 255 */
    int64_t     ts_ns;      /* start, CLOCK_MONOTONIC */
    int64_t     dur_ns;     /* 'X' only, >= 0 */
    int64_t     pid;        /* -1 = this process (GPU work uses the device) */
    int64_t     tid;        /* -1 = the calling thread (GPU work uses the stream) */
    double      value;      /* 'C' only */
    uint64_t    flow_id;    /* 0 = no flow */
    char        flow_phase; /* 's' or 'f' when flow_id != 0 */
    const char *flow_cat;   /* NULL = "ac2g" (Kineto's launch -> GPU flow) */
    const ts_trace_arg *args;
    uint32_t    n_args;     /* at most TS_TRACE_MAX_ARGS are kept */
    uint64_t    json_args;  /* bit i set: args[i].str is JSON text ("[3,7]", "[[8,16],[]]", "1.5"; at most
                               2047 bytes kept), written as is; text that is not valid JSON stays a
                               string. 0 = none */
} ts_trace_event;

/* Record ev; returns 0, or 1 when it was dropped (buffer full, tracing off). */
TS_API int ts_trace_emit(const ts_trace_event *ev);

/* Events dropped so far by this process because a buffer was full. */
TS_API uint64_t ts_trace_dropped(void);

/* ---- the Python collector (python/trainscope_trace.py calls these) ---- */
/* A Py_tracefunc for PyEval_SetProfile: Python calls become ranges, cat
 * "python_function", name "<module>.<qualname>". Arguments are CPython's
 * (PyObject *, PyFrameObject *, int what, PyObject *). Never raises. */
TS_API int ts_trace_py_profile(void *self, void *frame, int what, void *arg);
/* Which calls the profile function records: comma-separated entries, each a
 * module prefix ("torch.nn.modules") or a file ("train.py", "train", or a
 * path tail); NULL or "" records all. Set it before installing the profiler.
 * Returns 0, or -1 when out of memory. */
TS_API int ts_trace_py_set_filter(const char *csv);

/* Probe macros: a disabled probe is one relaxed load and a branch. */
#define TS_TRACE_ON() __builtin_expect(__atomic_load_n(&ts_trace_on, __ATOMIC_RELAXED), 0)
#define TS_TRACE_PUSH(cat, name) do { if (TS_TRACE_ON()) ts_trace_push(cat, name); } while (0)
#define TS_TRACE_POP()           do { if (TS_TRACE_ON()) ts_trace_pop(); } while (0)
#define TS_TRACE_INSTANT(cat, name) do { if (TS_TRACE_ON()) ts_trace_instant(cat, name); } while (0)
#define TS_TRACE_COUNTER(name, v)   do { if (TS_TRACE_ON()) ts_trace_counter(name, v); } while (0)

#ifdef __cplusplus
}
#endif
#endif
