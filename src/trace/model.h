/* model.h - the columnar trace model every analysis reads (internal layout).
 *
 * A ts_job is a set of ranks; each ts_rank is self-contained (its own string
 * pool and tables) so ranks are ingested in parallel without locks and a rank
 * can be freed alone. Within a rank, every table is a set of parallel column
 * arrays indexed by a uint32 row id (Perfetto's trace_processor layout).
 *
 * Invariants after ts__rank_finish():
 *   - slices are sorted by (track, ts_ns, dur_ns descending, input order), so a
 *     track's slices are the contiguous rows [track.first_slice, +n_slices) in
 *     time order and a parent precedes its children;
 *   - depth/parent describe proper nesting per track (a child lies inside its
 *     parent; partially overlapping slices are counted in warnings and placed
 *     as siblings);
 *   - flows point at slice rows (TS_NONE32 when an endpoint found no slice);
 *   - iterations are sorted by start time;
 *   - every slice has dur_ns >= 0 and ts_ns + dur_ns within int64, so any
 *     analysis may add them (ts__rank_add_slice clamps; callers of
 *     ts__rank_push_slice keep it themselves, as the JSON reader does).
 * Times are int64 nanoseconds on the rank's own clock (the file's timestamps,
 * plus baseTimeNanoseconds where a trace has one). Graph-level clock alignment
 * lives in graph/, never here.
 *
 * Writers: only ingest/ (through the ts__rank_add_* builder below) and tests.
 * Everything else treats a finished rank as read-only.
 */
#ifndef TS_TRACE_MODEL_H
#define TS_TRACE_MODEL_H

#include "core/core.h"
#include "trainscope/model.h"

/* A child may end this much after its parent and still nest when
 * the times are whole microseconds: the resolution of the older PyTorch format. */
#define TS_ROUNDING_NS 1000

/* What a slice is, from Kineto's "cat" (or inferred for traces without one).
 * The raw category string is kept too (ts_slices.cat). */
typedef enum ts_kind {
    TS_KIND_OTHER = 0,
    TS_KIND_CPU_OP,              /* cpu_op, Operator; legacy aten::/c10d:: events */
    TS_KIND_USER_ANNOTATION,     /* user_annotation, incl. ProfilerStep#N */
    TS_KIND_GPU_USER_ANNOTATION, /* gpu_user_annotation */
    TS_KIND_CUDA_RUNTIME,        /* cuda_runtime, Runtime */
    TS_KIND_CUDA_DRIVER,         /* cuda_driver */
    TS_KIND_CUDA_SYNC,           /* cuda_sync (Kineto's synchronisation events) */
    TS_KIND_KERNEL,              /* kernel, Kernel */
    TS_KIND_GPU_MEMCPY,          /* gpu_memcpy, Memcpy */
    TS_KIND_GPU_MEMSET,          /* gpu_memset, Memset */
    TS_KIND_PYTHON_FUNCTION,     /* python_function */
    TS_KIND_PROFILER_RANGE,      /* cuda_profiler_range and other profiler bookkeeping */
    TS_KIND_COUNT
} ts_kind;

const char *ts__kind_name(ts_kind k);           /* "cpu_op", "kernel", ... */
ts_kind     ts__kind_from_cat(const char *cat, size_t n);
static inline bool ts__kind_on_gpu(ts_kind k)
{
    return k == TS_KIND_KERNEL || k == TS_KIND_GPU_MEMCPY || k == TS_KIND_GPU_MEMSET ||
           k == TS_KIND_GPU_USER_ANNOTATION;
}

typedef enum ts_track_kind {
    TS_TRACK_THREAD = 0,   /* a CPU thread: pid/tid are the OS ids (or synthetic) */
    TS_TRACK_GPU_STREAM,   /* pid = device, tid = stream, as Kineto writes them */
    TS_TRACK_COUNTER,      /* one counter series; name = "event" or "event.series" */
    TS_TRACK_ASYNC,        /* async (b/e/n) slices of one (cat, id) */
} ts_track_kind;

typedef struct ts_track {
    int64_t  pid;              /* as in the file; string pids get synthetic ids */
    int64_t  tid;              /* as in the file; string tids get synthetic ids */
    uint32_t name_id;          /* thread/stream/counter name, 0 = none */
    uint32_t process_name_id;  /* process_name metadata, 0 = none */
    int32_t  device;           /* GPU device index, -1 = host */
    int64_t  stream;           /* GPU stream id, -1 = not a stream */
    int32_t  sort_index;       /* thread_sort_index metadata, 0 = none */
    uint32_t process_label_id; /* process_labels metadata ("CPU", "GPU 0"), 0 = none */
    int64_t  process_sort_index; /* process_sort_index metadata, 0 = none */
    uint8_t  kind;             /* ts_track_kind */
    bool     dropped;          /* before finish: its slices leave at finish (ts__rank_drop_slices) */
    uint32_t first_slice;      /* after finish: first slice row of this track */
    uint32_t n_slices;         /* after finish: number of slices on this track */
} ts_track;

typedef struct ts_slices {
    uint32_t  n, cap;
    int64_t  *ts_ns;       /* start */
    int64_t  *dur_ns;      /* >= 0 (negative input durations are clamped and warned) */
    uint32_t *track;       /* row in tracks */
    uint32_t *name;        /* string id */
    uint32_t *cat;         /* raw category string id, 0 = none */
    uint8_t  *kind;        /* ts_kind */
    uint16_t *depth;       /* nesting depth on its track, 0 = top level */
    uint32_t *parent;      /* enclosing slice row, TS_NONE32 = none */
    uint32_t *args;        /* first row in args, TS_NONE32 = no args */
    uint16_t *n_args;      /* number of arg rows */
    int64_t  *corr;        /* "correlation" arg (launch <-> GPU op), -1 = none; NULL in a
                              compact rank (ts__rank_compact), whose graph is built */
    int64_t  *ext_id;      /* "External id" arg (cpu_op <-> runtime), -1 = none; NULL in a compact rank */
} ts_slices;

typedef enum ts_arg_type {
    TS_ARG_NULL = 0, TS_ARG_BOOL, TS_ARG_INT, TS_ARG_UINT, TS_ARG_DOUBLE,
    TS_ARG_STR,            /* val = string id */
    TS_ARG_JSON,           /* array or object kept as its JSON text; val = string id */
} ts_arg_type;

typedef struct ts_args {
    uint32_t  n, cap;
    uint32_t *key;     /* string id of the key */
    uint8_t  *type;    /* ts_arg_type */
    uint64_t *val;     /* int64/uint64 bits, double bits (memcpy), bool 0/1, or string id */
} ts_args;

typedef struct ts_instants {
    uint32_t  n, cap;
    int64_t  *ts_ns;
    uint32_t *track;
    uint32_t *name;
    uint32_t *cat;
    uint8_t  *kind;     /* ts_kind of its category (Kineto "[memory]" instants: TS_KIND_OTHER, cat "[memory]") */
    char     *scope;    /* 't', 'p', 'g' */
    uint32_t *args;     /* first arg row, TS_NONE32 = none */
    uint16_t *n_args;
} ts_instants;

typedef struct ts_counters {
    uint32_t  n, cap;
    int64_t  *ts_ns;
    uint32_t *track;    /* a TS_TRACK_COUNTER track */
    double   *value;
} ts_counters;

typedef enum ts_flow_kind { TS_FLOW_OTHER = 0, TS_FLOW_AC2G, TS_FLOW_FWDBWD,
                            TS_FLOW_DEP /* "chakra_dep": an execution trace's data or control dependency */ } ts_flow_kind;

typedef struct ts_flows {
    uint32_t  n, cap;
    uint64_t *id;       /* flow id as in the file */
    uint8_t  *kind;     /* ts_flow_kind */
    uint32_t *cat;      /* category string id */
    uint32_t *from;     /* slice row of the 's' end, TS_NONE32 = unbound */
    uint32_t *to;       /* slice row of the 'f' (or last 't') end, TS_NONE32 = unbound */
    /* numbered: id, kind and cat are NULL; row i has id i, kind_all and
     * cat_all (a reader's million dependencies of one category, chakra.c:
     * 8 bytes a flow instead of 21). Read them through ts__flow_id/kind/cat. */
    bool      numbered;
    uint8_t   kind_all;
    uint32_t  cat_all;
    uint32_t  n_counted;   /* flows a summary load counted without storing them (chakra.c); not rows */
} ts_flows;

static inline uint64_t ts__flow_id(const ts_flows *f, uint32_t i) { return f->numbered ? i : f->id[i]; }
static inline uint8_t  ts__flow_kind(const ts_flows *f, uint32_t i) { return f->numbered ? f->kind_all : f->kind[i]; }
static inline uint32_t ts__flow_cat(const ts_flows *f, uint32_t i) { return f->numbered ? f->cat_all : f->cat[i]; }

typedef struct ts_iteration {
    int64_t  step;      /* N of ProfilerStep#N, or the ordinal when unnumbered */
    int64_t  start_ns;
    int64_t  end_ns;
    uint32_t slice;     /* the annotation slice, TS_NONE32 if synthesized */
} ts_iteration;

typedef enum ts_warn_kind {
    TS_WARN_UNKNOWN_PHASE = 0,
    TS_WARN_UNMATCHED_BEGIN,
    TS_WARN_UNMATCHED_END,
    TS_WARN_NEGATIVE_DURATION,
    TS_WARN_INVALID_UTF8,
    TS_WARN_UNBOUND_FLOW,
    TS_WARN_OVERLAP,          /* a slice overlaps its sibling without nesting */
    TS_WARN_TOO_MANY_ARGS,
    TS_WARN_RECORDER_LOSSES,  /* events `trainscope record` dropped or could not complete */
    TS_WARN_OTHER,
    TS_WARN_COUNT
} ts_warn_kind;
const char *ts__warn_name(ts_warn_kind k);

/* Raw flow endpoint, kept until finish binds it to a slice. */
typedef struct ts_flow_end {
    uint64_t id;
    int64_t  ts_ns;
    uint32_t track;
    uint32_t cat;
    uint32_t name;
    char     phase;          /* 's', 't', 'f' */
    bool     bind_enclosing; /* 'f' with bp "e", and always for 's'/'t' */
} ts_flow_end;

struct ts_rank {
    int32_t  rank;            /* distributedInfo.rank, else from file name, else order; -1 = unknown */
    int32_t  world_size;      /* distributedInfo.world_size, -1 = unknown */
    char    *path;            /* the file it came from (owned) */
    int64_t  base_time_ns;    /* baseTimeNanoseconds, 0 = none */
    bool     us_fractions;    /* Chrome JSON whose "ts" had sub-microsecond fractions: HTA's parser
                                 rounds such a file's times to whole microseconds (analyze/breakdown.c) */
    uint32_t meta_args;       /* first args row of the top-level metadata (distributedInfo,
                                 deviceProperties, schemaVersion, ...), TS_NONE32 = none */
    uint16_t n_meta_args;

    ts_strpool strings;
    ts_arena   arena;         /* scratch that lives as long as the rank */

    ts_track  *tracks;
    uint32_t   n_tracks, cap_tracks;
    ts_map64   track_index;   /* (kind, pid, tid) key -> track row */

    ts_slices   slices;
    ts_args     args;
    ts_instants instants;
    ts_counters counters;
    ts_flows    flows;

    ts_iteration *iterations;
    uint32_t      n_iterations, cap_iterations;

    ts_flow_end *flow_ends;   /* raw endpoints; freed by finish */
    uint32_t     n_flow_ends, cap_flow_ends;

    uint64_t n_events_read;   /* every trace event seen, including skipped ones */
    uint64_t n_rounding_overruns; /* children ending <= TS_ROUNDING_NS after their parent, nested anyway */
    uint64_t warn_count[TS_WARN_COUNT];
    char    *warn_first[TS_WARN_COUNT];  /* first message of each kind (owned), NULL = none */
    bool     oom;             /* an append failed; finish reports TS_ENOMEM */
    bool     flow_kind_known; /* the last flow category's kind, memoized (model.c add_flow) */
    uint8_t  flow_kind;
    uint32_t flow_kind_cat;
    bool     finished;
    bool     dropped_tracks;  /* before finish: some track is marked dropped (ts__rank_drop_slices) */
    bool     summary;         /* a compact rank (ts__rank_compact): read_rows are what it was read with */
    uint32_t read_rows[4];    /* slices, instants, counters, flows as read (summary ranks only) */
};

struct ts_job {
    ts_rank **ranks;          /* sorted by rank number */
    uint32_t  n_ranks;
};

/* ---- builder (ingest and tests) ----
 * Appends never fail loudly: on out-of-memory they set rank->oom, return
 * TS_NONE32, and ts__rank_finish() returns TS_ENOMEM. This keeps the hot ingest
 * loop free of error plumbing. */
ts_rank *ts__rank_create(const char *path);
void     ts__rank_destroy(ts_rank *r);
static inline uint32_t ts__rank_intern(ts_rank *r, const char *s, size_t n)
{
    return ts__str_intern(&r->strings, s, n);
}
static inline const char *ts__rank_str(const ts_rank *r, uint32_t id) { return ts__str(&r->strings, id); }

/* Get or create the track for (kind, pid, tid). For GPU streams device/stream
 * are set from pid/tid. */
uint32_t ts__rank_track(ts_rank *r, ts_track_kind kind, int64_t pid, int64_t tid);
/* Counter track for series `name_id` of process pid. */
uint32_t ts__rank_counter_track(ts_rank *r, int64_t pid, uint32_t name_id);

/* Pre-size the empty slice, arg and flow-endpoint tables for about
 * n_slices / n_args / n_flow_ends rows (a reader's estimate from the input
 * size), so they never move while they grow. A hint only: on failure, or
 * when a table is not empty, nothing changes. Rows never written cost
 * address space, not memory. */
void     ts__rank_reserve(ts_rank *r, uint32_t n_slices, uint32_t n_args, uint32_t n_flow_ends);
uint32_t ts__rank_add_slice(ts_rank *r, uint32_t track, int64_t ts_ns, int64_t dur_ns,
                            uint32_t name, uint32_t cat, ts_kind kind);
/* The same hint for the flow table (a reader that adds flows by row after
 * finish, knowing about how many). */
void     ts__rank_reserve_flows(ts_rank *r, uint32_t n_flows);
/* The same for flows numbered 0, 1, 2... in one category `cat`: only their
 * ends are stored (ts_flows.numbered) until a flow that breaks the rule
 * arrives, which gives the table its id, kind and cat columns. */
void     ts__rank_reserve_numbered_flows(ts_rank *r, uint32_t n_flows, uint32_t cat);
/* Args: call ts__rank_add_arg for each arg, then attach the range
 * [first, ts__rank_args_mark(r)) to the event. */
static inline uint32_t ts__rank_args_mark(const ts_rank *r) { return r->args.n; }
uint32_t ts__rank_add_arg(ts_rank *r, uint32_t key, ts_arg_type type, uint64_t val);
/* ts__rank_add_arg inlined for the parser's hot loop: the call grows the
 * columns only when they are full. */
static inline uint32_t ts__rank_push_arg(ts_rank *r, uint32_t key, ts_arg_type type, uint64_t val)
{
    ts_args *a = &r->args;
    if (TS_UNLIKELY(a->n == a->cap)) return ts__rank_add_arg(r, key, type, val);
    uint32_t i = a->n++;
    a->key[i] = key;
    a->type[i] = (uint8_t)type;
    a->val[i] = val;
    return i;
}
void     ts__rank_slice_set_args(ts_rank *r, uint32_t slice, uint32_t first, uint32_t n);
/* A slice with its arg range and ids in one call, inlined for the parser's
 * hot loop; the out-of-line path grows the columns and clamps n_args. */
static inline uint32_t ts__rank_push_slice(ts_rank *r, uint32_t track, int64_t ts_ns, int64_t dur_ns, uint32_t name,
                                           uint32_t cat, ts_kind kind, uint32_t args, uint32_t n_args,
                                           int64_t corr, int64_t ext_id)
{
    ts_slices *s = &r->slices;
    uint32_t i;
    if (TS_UNLIKELY(s->n == s->cap || n_args > UINT16_MAX)) {
        i = ts__rank_add_slice(r, track, ts_ns, dur_ns, name, cat, kind);
        if (i == TS_NONE32) return i;
        ts__rank_slice_set_args(r, i, args, n_args);
    } else {
        i = s->n++;
        s->ts_ns[i] = ts_ns;
        s->dur_ns[i] = dur_ns;
        s->track[i] = track;
        s->name[i] = name;
        s->cat[i] = cat;
        s->kind[i] = (uint8_t)kind;
        s->depth[i] = 0;
        s->parent[i] = TS_NONE32;
        s->args[i] = n_args ? args : TS_NONE32;
        s->n_args[i] = (uint16_t)n_args;
    }
    s->corr[i] = corr;
    s->ext_id[i] = ext_id;
    return i;
}

/* Set the rank's metadata string `key` (replaced when present, appended
 * otherwise); before or after finish. Out of memory sets r->oom. */
void     ts__rank_add_meta_str(ts_rank *r, const char *key, const char *val);
/* Before finish: remove the slices on tracks with drop_track[track] set
 * (a reader that learns late that a line repeats others: tf_timeline.c).
 * The tracks are marked (ts_track.dropped) and their rows left out when
 * finish sorts the slices, which moves every row anyway, instead of a pass
 * of their own; until then slices.n still counts them. */
void     ts__rank_drop_slices(ts_rank *r, const bool *drop_track);
uint32_t ts__rank_add_instant(ts_rank *r, uint32_t track, int64_t ts_ns, uint32_t name,
                              uint32_t cat, ts_kind kind, char scope, uint32_t first_arg, uint32_t n_args);
uint32_t ts__rank_add_counter(ts_rank *r, uint32_t track, int64_t ts_ns, double value);
void     ts__rank_add_flow_end(ts_rank *r, const ts_flow_end *e);
/* After ts__rank_finish: a flow already bound from slice row `from` to row
 * `to` (a reader that knows its edges by row skips the endpoints' sort and
 * binding: chakra.c). TS_ENOMEM when the table cannot grow. */
TS_NODISCARD int ts__rank_add_bound_flow(ts_rank *r, uint32_t from, uint32_t to, uint64_t id, uint32_t cat);
/* The same inlined for readers that add millions (chakra.c): the call grows
 * the columns or works out a new category's kind only when needed. */
static inline int ts__rank_push_bound_flow(ts_rank *r, uint32_t from, uint32_t to, uint64_t id, uint32_t cat)
{
    ts_flows *f = &r->flows;
    if (TS_UNLIKELY(f->n == f->cap || !r->flow_kind_known || cat != r->flow_kind_cat ||
                    (f->numbered && id != f->n)))
        return ts__rank_add_bound_flow(r, from, to, id, cat);
    uint32_t i = f->n++;
    if (!f->numbered) {
        f->id[i] = id;
        f->cat[i] = cat;
        f->kind[i] = r->flow_kind;
    }
    f->from[i] = from;
    f->to[i] = to;
    return 0;
}
void     ts__rank_warn(ts_rank *r, ts_warn_kind k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same, counting n occurrences at once (n events lost, say). */
void     ts__rank_warn_n(ts_rank *r, ts_warn_kind k, uint64_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* (Re)build the iteration table from host slices whose name starts with
 * `marker` (NULL = "ProfilerStep#"); the number after the prefix is the step.
 * Finish calls it with NULL; `--iteration-marker` lets a user name another. */
TS_NODISCARD int ts__rank_find_iterations(ts_rank *r, const char *marker);

/* Sort, nest, bind flows, find iterations. After it the rank is read-only. */
TS_NODISCARD int ts__rank_finish(ts_rank *r, ts_error *err);
/* ts__rank_finish for a rank that goes to a summary keeping no slice
 * (info's loads, ingest.h's counts_only): its slices' cat, args, n_args,
 * corr and ext_id columns, which nothing reads on the way, are freed (NULL
 * after it) instead of sorted; the counts, warnings, flows, iterations and
 * the columns left are as ts__rank_finish leaves them. */
TS_NODISCARD int ts__rank_finish_counts(ts_rank *r, ts_error *err);

/* A trace takes ownership of ranks, on failure too (they are freed); it sorts
 * them by rank number and rejects two ranks claiming one number (that is an
 * input error, not a warning), and times past 2^62 ns of the clock's zero or
 * a trace spanning 2^59 ns (TS_ERANGE): every command takes one rule. */
TS_NODISCARD int ts__job_create(ts_rank **ranks, uint32_t n, ts_job **out, ts_error *err);

/* ---- a finished rank as bytes (trace/serial.c) ----
 * For moving ranks between the processes of one distributed run: the
 * model's own columns in this build's layout, read back row for row and
 * string id for string id. Serialize appends to b (TS_ENOMEM when b ran
 * out, TS_EINVAL for an unfinished rank); deserialize checks every row id
 * and range and names `what` and the byte in err when the bytes are bad. */
TS_NODISCARD int ts__rank_serialize(const ts_rank *r, ts_buf *b);
TS_NODISCARD int ts__rank_deserialize(const void *bytes, size_t n, const char *what, ts_rank **out, ts_error *err);

/* A new finished rank holding only full's slices with keep[s] != 0, each
 * linked to its nearest kept ancestor (depth counts kept ancestors); the
 * args of those with keep[s] == 2 (the others have none); no ext_id column
 * (NULL), no corr column either unless keep_ids; all tracks, the iterations, metadata args, warnings and
 * counts, and the strings these name; no instants, counters or flows
 * (compact.c). map (full->slices.n entries) receives each slice's new row,
 * TS_NONE32 = dropped. full is unaltered; TS_ENOMEM names full's file. */
TS_NODISCARD int ts__rank_compact(const ts_rank *full, const uint8_t *keep, uint32_t *map, bool keep_ids,
                                  ts_rank **out, ts_error *err);

/* ---- read helpers ---- */
/* Arg lookup on a slice by key string; false when absent. "correlation" and
 * "External id" are answered from the corr and ext_id columns when no row
 * has them: the JSON reader keeps a slice's non-negative integer ids only
 * there (a third of a Kineto trace's arg rows otherwise), so iterate rows
 * only for the other keys. */
bool ts__slice_arg(const ts_rank *r, uint32_t slice, const char *key, ts_arg_type *type, uint64_t *val);
bool ts__slice_arg_i64(const ts_rank *r, uint32_t slice, const char *key, int64_t *out);
bool ts__slice_arg_double(const ts_rank *r, uint32_t slice, const char *key, double *out);
const char *ts__slice_arg_str(const ts_rank *r, uint32_t slice, const char *key); /* NULL = absent/not string */
/* Integer arg `key` of instant i; false when absent, a bool, or not a number. */
bool ts__instant_arg_i64(const ts_rank *r, uint32_t i, const char *key, int64_t *out);
bool ts__meta_arg(const ts_rank *r, const char *key, ts_arg_type *type, uint64_t *val);
static inline double ts__arg_as_double(ts_arg_type t, uint64_t v)
{
    double d;
    switch (t) {
    case TS_ARG_INT: return (double)(int64_t)v;
    case TS_ARG_UINT: return (double)v;
    case TS_ARG_BOOL: return (double)v;
    case TS_ARG_DOUBLE: memcpy(&d, &v, 8); return d;
    default: return 0;
    }
}
/* A numeric arg as int64: ints as they are (a uint past INT64_MAX wraps, as
 * "Comms Id"s do), doubles truncated; false for a double outside int64's
 * range or NaN (casting one would be undefined) and for non-numbers. */
static inline bool ts__arg_as_i64(ts_arg_type t, uint64_t v, int64_t *out)
{
    if (t == TS_ARG_INT || t == TS_ARG_UINT || t == TS_ARG_BOOL) { *out = (int64_t)v; return true; }
    if (t != TS_ARG_DOUBLE) return false;
    double d = ts__arg_as_double(t, v);
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return false;
    *out = (int64_t)d;
    return true;
}
static inline int64_t ts__slice_end(const ts_rank *r, uint32_t s) { return r->slices.ts_ns[s] + r->slices.dur_ns[s]; }

/* Iteration window [start, end) for step range; returns false when the rank has none. */
bool ts__rank_span(const ts_rank *r, int64_t *start_ns, int64_t *end_ns);

/* Horovod timelines (HOROVOD_TIMELINE, docs/timeline.rst of Horovod): a
 * Chrome-trace array Horovod never closes, one process per tensor, its
 * activities as B/E ranges. ts__horovod_timeline: r holds one of the
 * activity names only Horovod writes (NEGOTIATE_ALLREDUCE, WAIT_FOR_DATA,
 * MEMCPY_IN_FUSION_BUFFER, ...). ts__horovod_comm_name: an activity that is
 * the transfer itself (NCCL_ALLREDUCE, MPI_BCAST, GLOO_ALLGATHER, ...). */
bool ts__horovod_timeline(const ts_rank *r);

/* THE ANALYSIS WINDOW (every command: stats, breakdown, critical-path,
 * replay). When the trace marks iterations, the complete ones: the steps
 * every rank that marks iterations has (a step some rank lacks, cut off by
 * the end of its trace or by another profiling window, is left out), within
 * the steps asked; a rank without marks, or the whole trace when asked
 * (`--window all`), has its whole span. */
typedef struct ts_window_sel {
    bool     whole;              /* --window all: every rank's whole trace */
    bool     steps;              /* restrict to steps [first, last] */
    int64_t  first, last;        /* inclusive */
    int64_t *complete;           /* steps every marking rank has, ascending (owned) */
    uint32_t n_complete, cap_complete;
    bool     marked;             /* some rank marks iterations */
} ts_window_sel;
/* Fill sel for t (whole, steps, first and last already set); TS_ENOMEM. */
int  ts__window_sel_init(ts_window_sel *sel, const ts_job *t);
void ts__window_sel_free(ts_window_sel *sel);
/* Whether step is one of the window's iterations. */
bool ts__window_has_step(const ts_window_sel *sel, int64_t step);

/* A rank without CPU ops whose ops are Python functions (`record --python`):
 * its python_function ranges at most max_depth Python calls deep (1 = the
 * outermost; 0 = any depth) become CPU ops, so every analysis reads them,
 * with a warning saying so. Returns how many. O(slices x Python depth). */
uint64_t ts__rank_python_as_ops(ts_rank *r, uint32_t max_depth);
bool ts__horovod_comm_name(const char *name);

#endif
