/* ctf.c - reading an LTTng (CTF) trace of trainscope's tracepoints back into
 * the trace model, through libbabeltrace2.
 *
 * Not for: Chrome-trace JSON (chrome_json.c). trainscope's tracepoints and
 * their fields are defined in src/capture/lttng/lttng_tp.h; this file must agree
 * with it. Events of other providers (lttng_ust_cyg_profile, lttng_ust_libc,
 * ust_php, a CUDA tracer's ...) are read generically: a pair of events whose
 * names differ only in a last word entry/exit, begin/end, start/end or
 * start/stop is one cpu_op slice on its thread (LIFO per thread and pair),
 * named by the pair and the payload's function, name or file field (or its
 * "addr" in hex), with the entry's payload as args; any other event is an
 * instant with its payload as args, category = the provider.
 *
 * Pipeline: src.ctf.fs (every stream of the trace under DIR) -> flt.utils.muxer
 * (one time-ordered message flow) -> a simple sink that turns each
 * trainscope:* event into model rows. One rank per traced process (vpid
 * context), numbered by its trainscope:rank event, else in order of first
 * appearance after the numbered ones. Times: the event clock's raw value in
 * nanoseconds, i.e. CLOCK_MONOTONIC, the clock explicit ts_ns fields and the
 * JSON traces of the same run use (the CTF clock offset to the epoch is
 * ignored on purpose so the two agree).
 * Invariant: a push is closed by the next pop of the same thread; a range by
 * range_end with its id in the same process. What is left open at the end is
 * closed at the last event time and counted as TS_WARN_UNMATCHED_BEGIN.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ingest/ingest.h"

#if defined(__has_include) && __has_include(<babeltrace2/babeltrace.h>)
#include "ingest/bt_api.h"

#define CTF_US '\x1f'   /* lttng_tp.h: TS_LTTNG_US */
#define CTF_RS '\x1e'   /* lttng_tp.h: TS_LTTNG_RS */

enum ev_kind {
    EV_OTHER = 0, EV_PUSH, EV_POP, EV_RANGE_BEGIN, EV_RANGE_END, EV_INSTANT, EV_COUNTER,
    EV_COMPLETE, EV_MEMCPY, EV_COLLECTIVE, EV_ALLOC, EV_FREE, EV_RANK, EV_FLOW, EV_THREAD_NAME,
};

static const struct { const char *name; enum ev_kind kind; } ev_names[] = {
    {"trainscope:push", EV_PUSH},         {"trainscope:pop", EV_POP},
    {"trainscope:range_begin", EV_RANGE_BEGIN}, {"trainscope:range_end", EV_RANGE_END},
    {"trainscope:instant", EV_INSTANT},   {"trainscope:counter", EV_COUNTER},
    {"trainscope:complete", EV_COMPLETE}, {"trainscope:memcpy", EV_MEMCPY},
    {"trainscope:collective", EV_COLLECTIVE}, {"trainscope:alloc", EV_ALLOC},
    {"trainscope:free", EV_FREE},         {"trainscope:rank", EV_RANK},
    {"trainscope:flow", EV_FLOW},         {"trainscope:thread_name", EV_THREAD_NAME},
};

typedef struct open_slice {
    int64_t  ts_ns;     /* start */
    uint32_t track;     /* where it will go */
    uint32_t name, cat; /* string ids in the rank */
    uint64_t id;        /* range id (ranges only) */
    bool     live;      /* false once closed (ranges only) */
    uint32_t key;       /* other providers' entry/exit pairs: the pair's key string id; 0 = a trainscope push */
    uint32_t first_arg, n_args; /* other providers: the entry's payload as args */
} open_slice;

typedef struct stack { open_slice *v; uint32_t n, cap; } stack;

/* One traced process, becoming one rank. */
typedef struct proc {
    int64_t   pid;            /* vpid */
    ts_rank  *rank;
    int32_t   rank_no;        /* from trainscope:rank, -1 = none */
    int32_t   world_size;     /* from trainscope:rank, -1 = none */
    ts_map64  stack_of_tid;   /* vtid -> index in stacks */
    stack    *stacks;
    uint32_t  n_stacks, cap_stacks;
    stack     ranges;         /* open and closed ranges; ts_map64 range_of maps id -> index + 1 */
    ts_map64  range_of;
    double    allocated[64];  /* "Total Allocated" per device + 1 (0 = host), bytes */
} proc;

enum { PLAN_ARGS = 32, PLAN_NAME_FIELDS = 8 };

/* What is fixed per event class, found on its first event: its kind, where
 * vpid and vtid sit in the common context and, for other providers' events,
 * the name's role and the payload members foreign_name and payload_args read.
 * Looking members up by name (a hash lookup in libbabeltrace2, eight per
 * entry event) and interning the same keys again for every event were most
 * of the reader's own instructions. Member indices: -1 = absent. String ids
 * are cached for one rank at a time (ids_for), each on its first use, where
 * it was interned before, so every rank's string ids come out as they did. */
typedef struct class_plan {
    enum ev_kind kind;
    int32_t      vpid, vtid;                   /* integer members of the common context */
    const char  *name;                         /* the class's name, libbabeltrace2's */
    int          role;                         /* FOREIGN_* (other providers) */
    size_t       key_n;                        /* the pair's key: name[0, key_n) */
    int32_t      name_at[PLAN_NAME_FIELDS];    /* foreign_name's fields, where a string */
    int32_t      lineno, line;                 /* where an integer */
    int32_t      addr;                         /* of any type (foreign_name asks whether it is there) */
    uint32_t     n_args;                       /* payload members read as args (at most PLAN_ARGS) */
    const char  *arg_key[PLAN_ARGS];
    ts_rank     *ids_for;                      /* the rank the ids below belong to */
    uint32_t     cat_id, key_id, name_id, arg_key_id[PLAN_ARGS];   /* 0 = not interned yet */
} class_plan;

typedef struct reader {
    const char *path;
    proc      *procs;
    uint32_t   n_procs, cap_procs;
    ts_map64   proc_of_pid;   /* vpid -> index in procs */
    ts_map64   plan_of_class; /* event class address -> index in plans + 1 */
    class_plan *plans;
    uint32_t   n_plans, cap_plans;
    int64_t    last_ns;       /* time of the latest event */
    uint64_t   n_events, n_foreign;
    /* What the tracer's ring buffers lost (discard mode, buffers full), from
     * babeltrace's discarded-events and discarded-packets messages; the
     * buffers are shared by the traced processes (per user), so the loss
     * cannot be laid at one rank's door. */
    uint64_t   n_discarded_events, n_discarded_packets, n_losses_uncounted;
    bool       oom;
} reader;

/* ---- growing arrays (the reader's own bookkeeping, not model rows) ---- */

static bool grow(void *p, uint32_t *cap, size_t elem, uint32_t need)
{
    return ts__grow((void **)p, cap, elem, need) == TS_OK;
}

static proc *proc_for(reader *R, int64_t pid)
{
    uint64_t v;
    if (ts__map64_get(&R->proc_of_pid, (uint64_t)pid, &v))
        return &R->procs[v];
    char name[4200];
    snprintf(name, sizeof name, "%s (pid %lld)", R->path, (long long)pid);
    ts_rank *rank = ts__rank_create(name);
    if (!rank || !grow(&R->procs, &R->cap_procs, sizeof *R->procs, R->n_procs + 1) ||
        ts__map64_put(&R->proc_of_pid, (uint64_t)pid, R->n_procs) != TS_OK) {
        ts__rank_destroy(rank);
        R->oom = true;
        return NULL;
    }
    proc *p = &R->procs[R->n_procs++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->rank = rank;
    p->rank_no = p->world_size = -1;
    ts__map64_init(&p->stack_of_tid);
    ts__map64_init(&p->range_of);
    return p;
}

static stack *stack_for(reader *R, proc *p, int64_t tid)
{
    uint64_t v;
    if (ts__map64_get(&p->stack_of_tid, (uint64_t)tid, &v))
        return &p->stacks[v];
    if (!grow(&p->stacks, &p->cap_stacks, sizeof *p->stacks, p->n_stacks + 1) ||
        ts__map64_put(&p->stack_of_tid, (uint64_t)tid, p->n_stacks) != TS_OK) {
        R->oom = true;
        return NULL;
    }
    stack *s = &p->stacks[p->n_stacks++];
    memset(s, 0, sizeof *s);
    return s;
}

static open_slice *stack_push(reader *R, stack *s)
{
    if (!grow(&s->v, &s->cap, sizeof *s->v, s->n + 1)) {
        R->oom = true;
        return NULL;
    }
    open_slice *o = &s->v[s->n++];
    memset(o, 0, sizeof *o);
    return o;
}

/* ---- field access ---- */

/* A member of a structure field; NULL when st is absent or not a structure
 * (a trace may name its events like ours without their layout). */
static const bt_field *member(const bt_field *st, const char *name)
{
    if (!st || bt_field_get_class_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE)
        return NULL;
    return bt_field_structure_borrow_member_field_by_name_const(st, name);
}

/* An integer field's value (enumerations too); none for anything else. */
static int64_t int_field(const bt_field *f, int64_t none)
{
    if (!f)
        return none;
    bt_field_class_type t = bt_field_get_class_type(f);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
        return bt_field_integer_signed_get_value(f);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
        return (int64_t)bt_field_integer_unsigned_get_value(f);
    return none;
}

static int64_t int_of(const bt_field *st, const char *name, int64_t none)
{
    return int_field(member(st, name), none);
}

/* Member i of structure st (a plan's index: st's class is a structure). */
static const bt_field *member_at(const bt_field *st, int32_t i)
{
    return i < 0 ? NULL : bt_field_structure_borrow_member_field_by_index_const(st, (uint64_t)i);
}

/* A plan's cached string id of s for rank r: interned on first use. */
static uint32_t plan_id(uint32_t *id, ts_rank *r, const char *s, size_t n)
{
    if (!*id)
        *id = ts__rank_intern(r, s, n);
    return *id;
}

static double real_of(const bt_field *st, const char *name)
{
    const bt_field *f = member(st, name);
    if (!f)
        return 0;
    bt_field_class_type t = bt_field_get_class_type(f);
    if (t == BT_FIELD_CLASS_TYPE_DOUBLE_PRECISION_REAL)
        return bt_field_real_double_precision_get_value(f);
    if (t == BT_FIELD_CLASS_TYPE_SINGLE_PRECISION_REAL)
        return bt_field_real_single_precision_get_value(f);
    return (double)int_of(st, name, 0);
}

static const char *str_of(const bt_field *st, const char *name)
{
    const bt_field *f = member(st, name);
    return f && bt_field_get_class_type(f) == BT_FIELD_CLASS_TYPE_STRING ? bt_field_string_get_value(f) : "";
}

static uint32_t intern(ts_rank *r, const char *s)
{
    return ts__rank_intern(r, s, strlen(s));
}

/* ---- model rows ---- */

static void add_num_arg(ts_rank *r, const char *key, int64_t v)
{
    ts__rank_add_arg(r, intern(r, key), TS_ARG_INT, (uint64_t)v);
}

static void add_str_arg(ts_rank *r, const char *key, const char *v)
{
    ts__rank_add_arg(r, intern(r, key), TS_ARG_STR, intern(r, v));
}

/* complete.args: "key US ('s'|'i') value RS ..." (lttng_tp.h). A pair cut
 * short by the writer's size limit is dropped whole there, so every pair
 * here is complete; anything else is skipped. */
static void add_packed_args(ts_rank *r, uint32_t slice, const char *p)
{
    uint32_t first = ts__rank_args_mark(r);
    while (*p) {
        const char *us = strchr(p, CTF_US);
        const char *rs = us ? strchr(us, CTF_RS) : NULL;
        if (!us || !rs || rs - us < 2)
            break;
        uint32_t key = ts__rank_intern(r, p, (size_t)(us - p));
        const char *val = us + 2;
        size_t n = (size_t)(rs - val);
        if (us[1] == 'i') {
            int64_t v = strtoll(val, NULL, 10);
            ts__rank_add_arg(r, key, TS_ARG_INT, (uint64_t)v);
            if (slice != TS_NONE32 && strncmp(p, "correlation", 11) == 0 && us - p == 11)
                r->slices.corr[slice] = v;
            if (slice != TS_NONE32 && strncmp(p, "External id", 11) == 0 && us - p == 11)
                r->slices.ext_id[slice] = v;
        } else {
            ts__rank_add_arg(r, key, TS_ARG_STR, ts__rank_intern(r, val, n));
        }
        p = rs + 1;
    }
    if (slice != TS_NONE32)
        ts__rank_slice_set_args(r, slice, first, ts__rank_args_mark(r) - first);
}

static void add_flow(ts_rank *r, uint64_t id, char phase, int64_t ts_ns, uint32_t track, uint32_t name)
{
    ts_flow_end f = {.id = id, .ts_ns = ts_ns, .track = track, .cat = intern(r, "ac2g"),
                     .name = name, .phase = phase, .bind_enclosing = true};
    ts__rank_add_flow_end(r, &f);
}

/* Explicit pid/tid of -1 mean the emitting process/thread; an explicit pid
 * other than the process's own is a device (the host API puts GPU work there). */
static uint32_t track_of(proc *p, int64_t pid, int64_t tid, int64_t vtid, ts_kind kind)
{
    if (pid >= 0 && pid != p->pid && tid >= 0)
        return ts__rank_track(p->rank, TS_TRACK_GPU_STREAM, pid, tid);
    if (ts__kind_on_gpu(kind))
        return ts__rank_track(p->rank, TS_TRACK_GPU_STREAM, pid < 0 ? 0 : pid, tid < 0 ? 0 : tid);
    return ts__rank_track(p->rank, TS_TRACK_THREAD, p->pid, tid < 0 ? vtid : tid);
}

static void on_complete(proc *p, const bt_field *f, int64_t now_ns, int64_t vtid)
{
    ts_rank *r = p->rank;
    int phase = (int)int_of(f, "phase", 'X');
    const char *cat = str_of(f, "cat");
    uint32_t name = intern(r, str_of(f, "name")), cat_id = intern(r, cat);
    ts_kind kind = ts__kind_from_cat(cat, strlen(cat));
    int64_t ts_ns = int_of(f, "ts_ns", now_ns);
    uint32_t track = track_of(p, int_of(f, "pid", -1), int_of(f, "tid", -1), vtid, kind);
    if (phase == 'C') {
        uint32_t ct = ts__rank_counter_track(r, p->pid, name);
        ts__rank_add_counter(r, ct, ts_ns, real_of(f, "value"));
        return;
    }
    if (phase == 'i') {
        uint32_t first = ts__rank_args_mark(r);
        add_packed_args(r, TS_NONE32, str_of(f, "args"));
        ts__rank_add_instant(r, track, ts_ns, name, cat_id, kind, 't', first, (uint16_t)(ts__rank_args_mark(r) - first));
        return;
    }
    uint32_t s = ts__rank_add_slice(r, track, ts_ns, int_of(f, "dur_ns", 0), name, cat_id, kind);
    if (s == TS_NONE32)
        return;
    add_packed_args(r, s, str_of(f, "args"));
    int64_t flow_id = int_of(f, "flow_id", 0);
    int flow_phase = (int)int_of(f, "flow_phase", 0);
    if (flow_id != 0 && (flow_phase == 's' || flow_phase == 'f'))
        add_flow(r, (uint64_t)flow_id, (char)flow_phase, ts_ns, track, intern(r, "ac2g"));
}

static void on_memcpy(proc *p, const bt_field *f)
{
    ts_rank *r = p->rank;
    int64_t device = int_of(f, "device", 0), stream = int_of(f, "stream", 0);
    int64_t corr = int_of(f, "correlation", -1), ts_ns = int_of(f, "ts_ns", 0);
    uint32_t track = ts__rank_track(r, TS_TRACK_GPU_STREAM, device < 0 ? 0 : device, stream < 0 ? 0 : stream);
    uint32_t s = ts__rank_add_slice(r, track, ts_ns, int_of(f, "dur_ns", 0), intern(r, str_of(f, "name")),
                                    intern(r, "gpu_memcpy"), TS_KIND_GPU_MEMCPY);
    if (s == TS_NONE32)
        return;
    uint32_t first = ts__rank_args_mark(r);
    add_num_arg(r, "bytes", int_of(f, "bytes", 0));
    add_num_arg(r, "device", device);
    add_num_arg(r, "stream", stream);
    if (corr >= 0) {
        add_num_arg(r, "correlation", corr);
        r->slices.corr[s] = corr;
        if (corr > 0)
            add_flow(r, (uint64_t)corr, 'f', ts_ns, track, intern(r, "ac2g"));
    }
    ts__rank_slice_set_args(r, s, first, ts__rank_args_mark(r) - first);
}

static void on_collective(proc *p, const bt_field *f, int64_t vtid)
{
    ts_rank *r = p->rank;
    uint32_t track = ts__rank_track(r, TS_TRACK_THREAD, p->pid, vtid);
    uint32_t s = ts__rank_add_slice(r, track, int_of(f, "ts_ns", 0), int_of(f, "dur_ns", 0),
                                    intern(r, str_of(f, "api")), intern(r, "cpu_op"), TS_KIND_CPU_OP);
    if (s == TS_NONE32)
        return;
    uint32_t first = ts__rank_args_mark(r);
    add_str_arg(r, "Collective name", str_of(f, "coll"));
    add_str_arg(r, "Process Group Name", str_of(f, "comm"));
    add_num_arg(r, "Sequence number", int_of(f, "seq", -1));
    add_num_arg(r, "seq", int_of(f, "seq", -1));
    add_num_arg(r, "In msg nelems", int_of(f, "in_nelems", -1));
    add_num_arg(r, "Out msg nelems", int_of(f, "out_nelems", -1));
    add_str_arg(r, "dtype", str_of(f, "dtype"));
    add_num_arg(r, "Group size", int_of(f, "nranks", -1));
    add_num_arg(r, "Rank", int_of(f, "rank", -1));
    if (int_of(f, "peer", -1) >= 0)
        add_num_arg(r, strcmp(str_of(f, "coll"), "recv") ? "Dst Rank" : "Src Rank", int_of(f, "peer", -1));
    ts__rank_slice_set_args(r, s, first, ts__rank_args_mark(r) - first);
}

/* Kineto's "[memory]" instants: Bytes is negative for a free; Total
 * Allocated is the running sum on that device. */
static void on_memory(proc *p, const bt_field *f, int64_t now_ns, int64_t vtid, bool is_free)
{
    ts_rank *r = p->rank;
    int64_t bytes = int_of(f, "bytes", 0), device = int_of(f, "device", -1);
    uint32_t slot = device >= -1 && device < 63 ? (uint32_t)(device + 1) : 0;
    if (bytes == INT64_MIN) bytes = INT64_MAX;   /* a damaged field; its negation would overflow */
    p->allocated[slot] += is_free ? -(double)bytes : (double)bytes;
    double total = p->allocated[slot];
    uint32_t first = ts__rank_args_mark(r);
    add_num_arg(r, "Addr", int_of(f, "ptr", 0));
    add_num_arg(r, "Bytes", is_free ? -bytes : bytes);
    add_num_arg(r, "Device Id", device);
    add_num_arg(r, "Total Allocated", total > -9.2e18 && total < 9.2e18 ? (int64_t)total : total > 0 ? INT64_MAX : INT64_MIN);
    uint32_t track = ts__rank_track(r, TS_TRACK_THREAD, p->pid, vtid);
    ts__rank_add_instant(r, track, now_ns, intern(r, "[memory]"), intern(r, "cpu_instant_event"),
                         TS_KIND_OTHER, 't', first, (uint16_t)(ts__rank_args_mark(r) - first));
}

static void close_slice(proc *p, const open_slice *o, int64_t end_ns)
{
    ts_rank *r = p->rank;
    const char *cat = ts__rank_str(r, o->cat);
    int64_t dur;
    if (__builtin_sub_overflow(end_ns, o->ts_ns, &dur)) dur = end_ns > o->ts_ns ? INT64_MAX : 0;
    /* other providers' pairs are function calls of the traced program */
    ts_kind kind = o->key ? TS_KIND_CPU_OP : ts__kind_from_cat(cat, strlen(cat));
    uint32_t s = ts__rank_add_slice(r, o->track, o->ts_ns, dur, o->name, o->cat, kind);
    if (s != TS_NONE32 && o->n_args) ts__rank_slice_set_args(r, s, o->first_arg, o->n_args);
}

static void on_push(reader *R, proc *p, const bt_field *f, int64_t now_ns, int64_t vtid)
{
    stack *s = stack_for(R, p, vtid);
    open_slice *o = s ? stack_push(R, s) : NULL;
    if (!o)
        return;
    o->ts_ns = now_ns;
    o->track = ts__rank_track(p->rank, TS_TRACK_THREAD, p->pid, vtid);
    o->name = intern(p->rank, str_of(f, "name"));
    o->cat = intern(p->rank, str_of(f, "cat"));
}

static void on_pop(reader *R, proc *p, int64_t now_ns, int64_t vtid)
{
    stack *s = stack_for(R, p, vtid);
    if (!s)
        return;
    if (s->n == 0) {
        ts__rank_warn(p->rank, TS_WARN_UNMATCHED_END, "%s: pop with no open push on thread %lld",
                      R->path, (long long)vtid);
        return;
    }
    close_slice(p, &s->v[--s->n], now_ns);
}

static void on_range(reader *R, proc *p, const bt_field *f, int64_t now_ns, int64_t vtid, bool begin)
{
    uint64_t id = (uint64_t)int_of(f, "id", 0), v = 0;
    bool known = ts__map64_get(&p->range_of, id, &v) && v != 0;
    if (begin) {
        open_slice *o = stack_push(R, &p->ranges);
        if (!o || ts__map64_put(&p->range_of, id, p->ranges.n) != TS_OK) {
            R->oom = true;
            return;
        }
        o->ts_ns = now_ns, o->id = id, o->live = true;
        o->track = ts__rank_track(p->rank, TS_TRACK_THREAD, p->pid, vtid);
        o->name = intern(p->rank, str_of(f, "name"));
        o->cat = intern(p->rank, str_of(f, "cat"));
        return;
    }
    if (!known) {
        ts__rank_warn(p->rank, TS_WARN_UNMATCHED_END, "%s: range_end %llu with no open range_begin",
                      R->path, (unsigned long long)id);
        return;
    }
    open_slice *o = &p->ranges.v[v - 1];
    o->live = false;
    if (ts__map64_put(&p->range_of, id, 0) != TS_OK)
        R->oom = true;
    close_slice(p, o, now_ns);
}

/* ---- events of other providers ---- */

enum { FOREIGN_INSTANT, FOREIGN_OPEN, FOREIGN_CLOSE };

/* Whether name opens or closes a pair, and the length of the pair's key
 * (the name without its last word): "ust_php:function_entry" opens
 * "ust_php:function". */
static int foreign_role(const char *name, size_t *key_n)
{
    static const char *const opens[] = {"entry", "begin", "start"}, *const closes[] = {"exit", "end", "stop"};
    const char *us = strrchr(name, '_'), *col = strrchr(name, ':');
    const char *sep = !us || (col && col > us) ? col : us;
    if (!sep) return FOREIGN_INSTANT;
    *key_n = (size_t)(sep - name);
    for (int i = 0; i < 3; i++) {
        if (!strcmp(sep + 1, opens[i])) return FOREIGN_OPEN;
        if (!strcmp(sep + 1, closes[i])) return FOREIGN_CLOSE;
    }
    return FOREIGN_INSTANT;
}

/* The payload's integer, real and string members as args (at most 32). */
static uint32_t payload_args(ts_rank *r, class_plan *pl, const bt_field *f, uint32_t *first)
{
    *first = ts__rank_args_mark(r);
    for (uint32_t i = 0; i < pl->n_args; i++) {
        const bt_field *m = bt_field_structure_borrow_member_field_by_index_const(f, i);
        bt_field_class_type t = bt_field_get_class_type(m);
        uint32_t *key = &pl->arg_key_id[i];
        const char *ks = pl->arg_key[i];
        if (t == BT_FIELD_CLASS_TYPE_STRING) {
            uint32_t k = plan_id(key, r, ks, strlen(ks));
            ts__rank_add_arg(r, k, TS_ARG_STR, intern(r, bt_field_string_get_value(m)));
        } else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_INTEGER))
            ts__rank_add_arg(r, plan_id(key, r, ks, strlen(ks)), TS_ARG_INT, (uint64_t)int_field(m, 0));
        else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_REAL)) {
            double d = t == BT_FIELD_CLASS_TYPE_DOUBLE_PRECISION_REAL ? bt_field_real_double_precision_get_value(m)
                                                                       : bt_field_real_single_precision_get_value(m);
            uint64_t bits;
            memcpy(&bits, &d, 8);
            ts__rank_add_arg(r, plan_id(key, r, ks, strlen(ks)), TS_ARG_DOUBLE, bits);
        }
    }
    return ts__rank_args_mark(r) - *first;
}

/* "KEY WHAT": what the payload says is being entered (a function, a name,
 * a file's base name with its line), else its "addr" in hex. */
/* names first; a file (its base name, with its line when there is one) after */
static const char *const name_fields[PLAN_NAME_FIELDS] = {"funcname", "function", "func", "name",
                                                          "filename", "path", "file", "method"};

/* A name of at most 511 bytes, cut there as snprintf cuts it (snprintf
 * itself was 700 instructions a call, most of foreign_name). */
typedef struct name_buf { char b[512]; size_t n; } name_buf;

static void nb_put(name_buf *nb, const char *s, size_t len)
{
    size_t room = sizeof nb->b - 1 - nb->n;
    memcpy(nb->b + nb->n, s, len < room ? len : room);
    nb->n += len < room ? len : room;
}

/* v in base 10 or 16 (lower case), as %llu / %llx write it */
static void nb_num(name_buf *nb, uint64_t v, unsigned base)
{
    char d[24];
    size_t i = sizeof d;
    do d[--i] = "0123456789abcdef"[v % base]; while ((v /= base) != 0);
    nb_put(nb, d + i, sizeof d - i);
}

static uint32_t foreign_name(ts_rank *r, const class_plan *pl, const bt_field *f)
{
    name_buf nb = {.n = 0};
    nb_put(&nb, pl->name, pl->key_n);
    for (size_t i = 0; i < PLAN_NAME_FIELDS; i++) {
        if (pl->name_at[i] < 0) continue;
        const char *v = bt_field_string_get_value(member_at(f, pl->name_at[i]));
        if (!*v) continue;
        const char *base = strrchr(v, '/');
        int64_t line = i < 4 || i > 6 ? -1
                     : pl->lineno >= 0 ? int_field(member_at(f, pl->lineno), -1)
                     : int_field(member_at(f, pl->line), -1);
        base = base ? base + 1 : v;
        nb_put(&nb, " ", 1);
        nb_put(&nb, base, strlen(base));
        if (line >= 0) {
            nb_put(&nb, ":", 1);
            nb_num(&nb, (uint64_t)line, 10);
        }
        return ts__rank_intern(r, nb.b, nb.n);
    }
    if (pl->addr >= 0) {
        nb_put(&nb, " 0x", 3);
        nb_num(&nb, (uint64_t)int_field(member_at(f, pl->addr), 0), 16);
    }
    return ts__rank_intern(r, nb.b, nb.n);
}

/* Close the latest open slice of this pair on the thread; slices opened
 * above it and never closed end here too, counted as unmatched. */
static void foreign_close(reader *R, proc *p, stack *s, uint32_t key, int64_t now_ns, int64_t vtid)
{
    uint32_t j = s->n;
    while (j > 0 && s->v[j - 1].key != key) j--;
    if (j == 0) {
        ts__rank_warn(p->rank, TS_WARN_UNMATCHED_END, "%s: \"%s\" exit with no open entry on thread %lld",
                      R->path, ts__rank_str(p->rank, key), (long long)vtid);
        return;
    }
    if (s->n > j)
        ts__rank_warn_n(p->rank, TS_WARN_UNMATCHED_BEGIN, s->n - j, "%s: %u entries on thread %lld never exited; "
                        "closed with their caller", R->path, s->n - j, (long long)vtid);
    while (s->n >= j) close_slice(p, &s->v[--s->n], now_ns);
}

static void on_foreign(reader *R, proc *p, class_plan *pl, const bt_field *f, int64_t now_ns, int64_t vtid)
{
    ts_rank *r = p->rank;
    const char *name = pl->name;
    if (pl->ids_for != r) {
        pl->ids_for = r;
        pl->cat_id = pl->key_id = pl->name_id = 0;
        memset(pl->arg_key_id, 0, sizeof pl->arg_key_id);
    }
    const char *colon = strchr(name, ':');
    uint32_t cat = plan_id(&pl->cat_id, r, name, colon ? (size_t)(colon - name) : strlen(name));
    uint32_t track = ts__rank_track(r, TS_TRACK_THREAD, p->pid, vtid);
    if (pl->role == FOREIGN_INSTANT) {
        uint32_t first, n = payload_args(r, pl, f, &first);
        ts__rank_add_instant(r, track, now_ns, plan_id(&pl->name_id, r, name, strlen(name)), cat, TS_KIND_OTHER, 't',
                             n ? first : TS_NONE32, (uint16_t)n);
        return;
    }
    uint32_t key = plan_id(&pl->key_id, r, name, pl->key_n);
    stack *s = stack_for(R, p, vtid);
    if (!s) return;
    if (pl->role == FOREIGN_CLOSE) { foreign_close(R, p, s, key, now_ns, vtid); return; }
    open_slice *o = stack_push(R, s);
    if (!o) return;
    o->ts_ns = now_ns;
    o->track = track;
    o->name = foreign_name(r, pl, f);
    o->cat = cat;
    o->key = key;
    o->n_args = payload_args(r, pl, f, &o->first_arg);
}

/* ---- the sink ---- */

/* The index of the member `name` of structure field st, -1 when st
 * is no structure or has no such member, or (want_int) it is no integer. */
static int32_t member_index(const bt_field *st, const char *name, bool want_int)
{
    if (!st || bt_field_get_class_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE)
        return -1;
    const bt_field_class *fc = bt_field_borrow_class_const(st);
    uint64_t n = bt_field_class_structure_get_member_count(fc);
    for (uint64_t i = 0; i < n && i < INT32_MAX; i++)
        if (!strcmp(bt_field_class_structure_member_get_name(bt_field_class_structure_borrow_member_by_index_const(fc, i)),
                    name)) {
            bt_field_class_type t = bt_field_get_class_type(bt_field_structure_borrow_member_field_by_index_const(st, i));
            return !want_int || bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_INTEGER) ? (int32_t)i : -1;
        }
    return -1;
}

/* Other providers' events: what on_foreign reads of the payload f. */
static void plan_foreign(class_plan *pl, const bt_field *f)
{
    if (!pl->name) pl->name = "(unnamed event)";
    pl->role = foreign_role(pl->name, &pl->key_n);
    for (int i = 0; i < PLAN_NAME_FIELDS; i++) {
        int32_t at = member_index(f, name_fields[i], false);
        pl->name_at[i] = at >= 0 && bt_field_get_class_type(member_at(f, at)) == BT_FIELD_CLASS_TYPE_STRING ? at : -1;
    }
    pl->lineno = member_index(f, "lineno", true);
    pl->line = member_index(f, "line", true);
    pl->addr = member_index(f, "addr", false);
    if (!f || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_STRUCTURE) return;   /* no args */
    const bt_field_class *fc = bt_field_borrow_class_const(f);
    uint64_t n = bt_field_class_structure_get_member_count(fc);
    for (uint64_t i = 0; i < n && i < PLAN_ARGS; i++)
        pl->arg_key[pl->n_args++] =
            bt_field_class_structure_member_get_name(bt_field_class_structure_borrow_member_by_index_const(fc, i));
}

/* The plan of ev's class, made from ev on the first event of the class. */
static class_plan *plan_for(reader *R, const bt_event *ev)
{
    const bt_event_class *ec = bt_event_borrow_class_const(ev);
    uint64_t v;
    if (ts__map64_get(&R->plan_of_class, (uint64_t)(uintptr_t)ec, &v))
        return &R->plans[v - 1];
    if (!grow(&R->plans, &R->cap_plans, sizeof *R->plans, R->n_plans + 1) ||
        ts__map64_put(&R->plan_of_class, (uint64_t)(uintptr_t)ec, (uint64_t)R->n_plans + 1) != TS_OK) {
        R->oom = true;
        return NULL;
    }
    class_plan *pl = &R->plans[R->n_plans++];
    memset(pl, 0, sizeof *pl);
    pl->name = bt_event_class_get_name(ec);
    pl->kind = EV_OTHER;
    for (size_t i = 0; pl->name && i < sizeof ev_names / sizeof ev_names[0]; i++)
        if (strcmp(pl->name, ev_names[i].name) == 0)
            pl->kind = ev_names[i].kind;
    const bt_field *ctx = bt_event_borrow_common_context_field_const(ev);
    pl->vpid = member_index(ctx, "vpid", true);
    pl->vtid = member_index(ctx, "vtid", true);
    if (pl->kind == EV_OTHER)
        plan_foreign(pl, bt_event_borrow_payload_field_const(ev));
    return pl;
}

static int64_t event_ns(const bt_message *msg)
{
    if (!bt_message_event_borrow_stream_class_default_clock_class_const(msg))
        return 0;
    const bt_clock_snapshot *cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
    uint64_t cycles = bt_clock_snapshot_get_value(cs);
    uint64_t freq = bt_clock_class_get_frequency(bt_clock_snapshot_borrow_clock_class_const(cs));
    if (freq == 1000000000ULL || freq == 0)
        return (int64_t)cycles;
    return (int64_t)((unsigned __int128)cycles * 1000000000ULL / freq);
}

static void on_event(reader *R, const bt_message *msg)
{
    const bt_event *ev = bt_message_event_borrow_event_const(msg);
    class_plan *pl = plan_for(R, ev);
    if (!pl)
        return;
    enum ev_kind k = pl->kind;
    R->n_events++;
    int64_t now_ns = event_ns(msg);
    if (now_ns > R->last_ns)
        R->last_ns = now_ns;
    const bt_field *ctx = bt_event_borrow_common_context_field_const(ev);
    int64_t pid = int_field(member_at(ctx, pl->vpid), 0), tid = int_field(member_at(ctx, pl->vtid), pid);
    proc *p = proc_for(R, pid);
    if (!p)
        return;
    p->rank->n_events_read++;
    const bt_field *f = bt_event_borrow_payload_field_const(ev);
    if (k == EV_OTHER) {
        R->n_foreign++;
        on_foreign(R, p, pl, f, now_ns, tid);
        return;
    }
    switch (k) {
    case EV_PUSH: on_push(R, p, f, now_ns, tid); break;
    case EV_POP: on_pop(R, p, now_ns, tid); break;
    case EV_RANGE_BEGIN: on_range(R, p, f, now_ns, tid, true); break;
    case EV_RANGE_END: on_range(R, p, f, now_ns, tid, false); break;
    case EV_INSTANT: {
        const char *cat = str_of(f, "cat");
        ts__rank_add_instant(p->rank, ts__rank_track(p->rank, TS_TRACK_THREAD, pid, tid), now_ns,
                             intern(p->rank, str_of(f, "name")), intern(p->rank, cat),
                             ts__kind_from_cat(cat, strlen(cat)), 't', TS_NONE32, 0);
        break;
    }
    case EV_COUNTER:
        ts__rank_add_counter(p->rank, ts__rank_counter_track(p->rank, pid, intern(p->rank, str_of(f, "name"))),
                             now_ns, real_of(f, "value"));
        break;
    case EV_COMPLETE: on_complete(p, f, now_ns, tid); break;
    case EV_MEMCPY: on_memcpy(p, f); break;
    case EV_COLLECTIVE: on_collective(p, f, tid); break;
    case EV_ALLOC: on_memory(p, f, now_ns, tid, false); break;
    case EV_FREE: on_memory(p, f, now_ns, tid, true); break;
    case EV_FLOW: {
        /* Like the JSON writer's flow events: an end inside the thread's
         * current range; 't' continues, so it binds like 's'. */
        int ph = (int)int_of(f, "phase", 0);
        const char *cat = str_of(f, "cat");
        ts_flow_end fe = {.id = (uint64_t)int_of(f, "id", 0), .ts_ns = now_ns,
                          .track = ts__rank_track(p->rank, TS_TRACK_THREAD, pid, tid),
                          .cat = intern(p->rank, cat), .name = intern(p->rank, cat),
                          .phase = (char)ph, .bind_enclosing = true};
        if (ph == 's' || ph == 't' || ph == 'f')
            ts__rank_add_flow_end(p->rank, &fe);
        break;
    }
    case EV_THREAD_NAME: {
        uint32_t t = ts__rank_track(p->rank, TS_TRACK_THREAD, pid, tid);
        if (t != TS_NONE32)
            p->rank->tracks[t].name_id = intern(p->rank, str_of(f, "name"));
        break;
    }
    case EV_RANK:
        p->rank_no = (int32_t)int_of(f, "rank", -1);
        p->world_size = (int32_t)int_of(f, "world_size", -1);
        break;
    default: break;
    }
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *it, void *data)
{
    reader *R = data;
    bt_message_array_const msgs;
    uint64_t count = 0;
    switch (bt_message_iterator_next(it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
        break;
    default:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    for (uint64_t i = 0; i < count; i++) {
        bt_message_type type = bt_message_get_type(msgs[i]);
        uint64_t n = 0;
        if (type == BT_MESSAGE_TYPE_EVENT && !R->oom)
            on_event(R, msgs[i]);
        else if (type == BT_MESSAGE_TYPE_DISCARDED_EVENTS) {
            if (bt_message_discarded_events_get_count(msgs[i], &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
                R->n_discarded_events += n;
            else
                R->n_losses_uncounted++;
        } else if (type == BT_MESSAGE_TYPE_DISCARDED_PACKETS) {
            if (bt_message_discarded_packets_get_count(msgs[i], &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
                R->n_discarded_packets += n;
            else
                R->n_losses_uncounted++;
        }
        bt_message_put_ref(msgs[i]);
    }
    return R->oom ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR
                  : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* ---- graph ---- */

/* A failure with babeltrace's root cause (cause 0) appended, on one line. */
static int bt_fail(ts_error *err, int status, const char *path, const char *what)
{
    const bt_error *e = bt_current_thread_take_error();
    const char *cause = NULL;
    if (e && bt_error_get_cause_count(e) > 0)
        cause = bt_error_cause_get_message(bt_error_borrow_cause_by_index(e, 0));
    int len = cause ? (int)strcspn(cause, "\n") : 0;
    int rc = ts__error(err, status, "%s: %s%s%.*s", path, what, cause ? ": " : "", len, cause ? cause : "");
    if (e)
        bt_error_release(e);
    return rc;
}

/* The plugin `name` from its own file, babeltrace-plugin-NAME.so, in the
 * plugin directory of the libbabeltrace2 this process loaded (LIBDIR/
 * babeltrace2/plugins), when bt_plugin_find would search nowhere before it
 * (no BABELTRACE_PLUGIN_PATH, no ~/.local/lib/babeltrace2/plugins); NULL
 * otherwise. bt_plugin_find loads every plugin it finds, on each call:
 * lttng-utils and text too, with libdw, libelf, liblzma and libbz2, a tenth
 * of reading the foreign sample. */
static const bt_plugin *plugin_from_own_file(const char *name)
{
    char path[4096];
    Dl_info where;
    const char *home = getenv("HOME");
    struct stat st;
    if (getenv("BABELTRACE_PLUGIN_PATH") || !home ||
        (snprintf(path, sizeof path, "%s/.local/lib/babeltrace2/plugins", home) < (int)sizeof path &&
         stat(path, &st) == 0) ||
        !dladdr((void *)(uintptr_t)bt_plugin_find, &where) || !where.dli_fname)
        return NULL;
    const char *slash = strrchr(where.dli_fname, '/');
    if (!slash || snprintf(path, sizeof path, "%.*s/babeltrace2/plugins/babeltrace-plugin-%s.so",
                           (int)(slash - where.dli_fname), where.dli_fname, name) >= (int)sizeof path ||
        stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    const bt_plugin_set *set = NULL;
    const bt_plugin *found = NULL;
    if (bt_plugin_find_all_from_file(path, BT_FALSE, &set) != BT_PLUGIN_FIND_ALL_FROM_FILE_STATUS_OK)
        return NULL;
    for (uint64_t i = 0; i < bt_plugin_set_get_plugin_count(set) && !found; i++) {
        const bt_plugin *p = bt_plugin_set_borrow_plugin_by_index_const(set, i);
        if (strcmp(bt_plugin_get_name(p), name) == 0) {
            bt_plugin_get_ref(p);
            found = p;
        }
    }
    bt_plugin_set_put_ref(set);
    return found;
}

static const bt_plugin *find_plugin(const char *name)
{
    const bt_plugin *p = plugin_from_own_file(name);
    if (p)
        return p;
    bt_current_thread_clear_error();   /* a failed load above leaves one; the search below starts clean */
    if (bt_plugin_find(name, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &p) != BT_PLUGIN_FIND_STATUS_OK)
        return NULL;
    return p;
}

static uint32_t find_trace_dirs(const char *dir, int depth, void (*add)(void *, const char *), void *ud);

static void add_input(void *inputs, const char *dir)
{
    (void)bt_value_array_append_string_element(inputs, dir);
}

typedef struct check_ctx { ts_error *err; int rc; } check_ctx;

static void check_dir(void *ud, const char *dir)
{
    check_ctx *c = ud;
    if (c->rc == TS_OK) c->rc = ts__ctf_check_packets(dir, c->err);
}

/* src.ctf.fs -> flt.utils.muxer -> our sink. Ports of the source exist once
 * it is added (one per data stream); the muxer grows an input per connection. */
static int build_graph(bt_graph *g, const char *path, reader *R, ts_error *err)
{
    const bt_plugin *ctf = find_plugin("ctf"), *utils = find_plugin("utils");
    int rc = TS_OK;
    bt_value *params = bt_value_map_create(), *inputs = NULL;
    const bt_component_source *src = NULL;
    const bt_component_filter *mux = NULL;
    const bt_component_sink *sink = NULL;
    if (!ctf || !utils) {
        rc = ts__error(err, TS_EFORMAT, "%s: babeltrace2's ctf/utils plugins are not installed", path);
        goto out;
    }
    if (!params || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
        find_trace_dirs(path, 0, add_input, inputs) != bt_value_array_get_length(inputs)) {
        rc = ts__error(err, TS_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    if (bt_graph_add_source_component(g, bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs"), "src",
                                      params, BT_LOGGING_LEVEL_NONE, &src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        rc = bt_fail(err, TS_EPARSE, path, "not a readable CTF trace");
        goto out;
    }
    if (bt_graph_add_filter_component(g, bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer"),
                                      "mux", NULL, BT_LOGGING_LEVEL_NONE, &mux) != BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
        bt_graph_add_simple_sink_component(g, "sink", NULL, consume, NULL, R, &sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        rc = bt_fail(err, TS_ENOMEM, path, "cannot set up the babeltrace2 graph");
        goto out;
    }
    uint64_t n_ports = bt_component_source_get_output_port_count(src);
    for (uint64_t i = 0; i < n_ports && rc == TS_OK; i++)
        if (bt_graph_connect_ports(g, bt_component_source_borrow_output_port_by_index_const(src, i),
                                   bt_component_filter_borrow_input_port_by_index_const(mux, i), NULL) !=
            BT_GRAPH_CONNECT_PORTS_STATUS_OK)
            rc = bt_fail(err, TS_EPARSE, path, "cannot connect a CTF stream");
    if (rc == TS_OK &&
        bt_graph_connect_ports(g, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
                               bt_component_sink_borrow_input_port_by_index_const(sink, 0), NULL) !=
            BT_GRAPH_CONNECT_PORTS_STATUS_OK)
        rc = bt_fail(err, TS_EPARSE, path, "cannot connect the muxer");
out:
    bt_value_put_ref(params);
    bt_plugin_put_ref(ctf);
    bt_plugin_put_ref(utils);
    return rc;
}

/* ---- ranks ---- */

static void close_leftovers(reader *R, proc *p)
{
    uint64_t n_open = 0;
    for (uint32_t t = 0; t < p->n_stacks; t++)
        for (stack *s = &p->stacks[t]; s->n > 0; n_open++)
            close_slice(p, &s->v[--s->n], R->last_ns);
    for (uint32_t i = 0; i < p->ranges.n; i++)
        if (p->ranges.v[i].live) {
            close_slice(p, &p->ranges.v[i], R->last_ns);
            n_open++;
        }
    if (n_open > 0)
        ts__rank_warn(p->rank, TS_WARN_UNMATCHED_BEGIN, "%s: %llu ranges still open at the end, closed there",
                      R->path, (unsigned long long)n_open);
}

static void proc_free(proc *p)
{
    for (uint32_t t = 0; t < p->n_stacks; t++)
        ts__free(p->stacks[t].v, p->stacks[t].cap * sizeof *p->stacks[t].v);
    ts__free(p->stacks, p->cap_stacks * sizeof *p->stacks);
    ts__free(p->ranges.v, p->ranges.cap * sizeof *p->ranges.v);
    ts__map64_free(&p->stack_of_tid);
    ts__map64_free(&p->range_of);
    ts__rank_destroy(p->rank);   /* NULL once handed to the trace */
}

/* Number the ranks, finish them and hand them to a new trace. */
static int make_trace(reader *R, const ts_load_opts *opts, ts_job **out, ts_error *err)
{
    int32_t next = 0;
    for (uint32_t i = 0; i < R->n_procs; i++)
        if (R->procs[i].rank_no >= next)
            next = R->procs[i].rank_no + 1;
    ts_rank **ranks = ts__calloc(R->n_procs, sizeof *ranks);
    if (!ranks)
        return ts__error(err, TS_ENOMEM, "%s: out of memory", R->path);
    int rc = TS_OK;
    for (uint32_t i = 0; i < R->n_procs && rc == TS_OK; i++) {
        proc *p = &R->procs[i];
        close_leftovers(R, p);
        p->rank->meta_args = ts__rank_args_mark(p->rank);
        add_str_arg(p->rank, "format", "lttng-ctf");
        p->rank->n_meta_args = 1;
        p->rank->rank = p->rank_no >= 0 ? p->rank_no : next++;
        p->rank->world_size = p->world_size;
        rc = ts__rank_finish(p->rank, err);
        if (rc == TS_OK && opts && opts->size >= sizeof *opts && opts->iteration_marker)
            rc = ts__rank_find_iterations(p->rank, opts->iteration_marker);
        ranks[i] = p->rank;
    }
    /* Said once, on the first process's rank: the loss is the session's. */
    uint64_t lost = R->n_discarded_events + R->n_discarded_packets + R->n_losses_uncounted;
    if (rc == TS_OK && lost) {
        char what[160];
        int n = snprintf(what, sizeof what, "%llu events", (unsigned long long)R->n_discarded_events);
        if (R->n_discarded_packets && n > 0 && (size_t)n < sizeof what)
            n += snprintf(what + n, sizeof what - (size_t)n, " and %llu whole packets",
                          (unsigned long long)R->n_discarded_packets);
        if (R->n_losses_uncounted && n > 0 && (size_t)n < sizeof what)
            snprintf(what + n, sizeof what - (size_t)n, ", and lost events %llu more times without a count",
                     (unsigned long long)R->n_losses_uncounted);
        ts__rank_warn_n(R->procs[0].rank, TS_WARN_RECORDER_LOSSES, lost,
                        "%s: the LTTng session discarded %s (its ring buffers, shared by every traced process, "
                        "were full: give the channel larger or more sub-buffers)", R->path, what);
    }
    if (rc == TS_OK) {
        rc = ts__job_create(ranks, R->n_procs, out, err);
        for (uint32_t i = 0; i < R->n_procs; i++)
            R->procs[i].rank = NULL;   /* owned by the trace now, or freed by it on failure */
    }
    ts__free(ranks, R->n_procs * sizeof *ranks);
    return rc;
}

int ts__ctf_load(const char *path, const ts_load_opts *opts, ts_job **out, ts_error *err)
{
    reader R;
    memset(&R, 0, sizeof R);
    R.path = path;
    ts__map64_init(&R.proc_of_pid);
    ts__map64_init(&R.plan_of_class);
    *out = NULL;
    int rc = ts__bt_open(path, err);
    if (rc) return rc;
    check_ctx cc = {err, TS_OK};
    find_trace_dirs(path, 0, check_dir, &cc);   /* what libbabeltrace2 would abort on (ctf_check.c) */
    if (cc.rc) return cc.rc;
    /* libbabeltrace2 aborts the process when an API function is called while
     * the thread holds an error; one left by the caller's own babeltrace use
     * must not take this load down with it. */
    bt_current_thread_clear_error();
    bt_graph *g = bt_graph_create(0);
    rc = g ? build_graph(g, path, &R, err) : ts__error(err, TS_ENOMEM, "%s: out of memory", path);
    if (rc == TS_OK) {
        bt_graph_run_status st;
        while ((st = bt_graph_run(g)) == BT_GRAPH_RUN_STATUS_AGAIN)
            ;
        if (R.oom)
            rc = ts__error(err, TS_ENOMEM, "%s: out of memory", path);
        else if (st != BT_GRAPH_RUN_STATUS_OK)
            rc = bt_fail(err, TS_EPARSE, path, "cannot read the CTF trace");
        else {
            /* A stream that cannot be decoded ends its part of the run with
             * an error but the graph with OK (2.0.4: "Cannot handle state"),
             * so the events after it would be lost in silence. */
            const bt_error *e = bt_current_thread_take_error();
            if (e) {
                bt_current_thread_move_error(e);
                rc = bt_fail(err, TS_EPARSE, path, "cannot decode the CTF trace");
            }
        }
    }
    bt_current_thread_clear_error();   /* none left behind for the next load (see above) */
    bt_graph_put_ref(g);
    if (rc == TS_OK && R.n_procs == 0)
        rc = ts__error(err, TS_ENODATA, "%s: no events in this CTF trace", path);
    if (rc == TS_OK)
        rc = make_trace(&R, opts, out, err);
    for (uint32_t i = 0; i < R.n_procs; i++)
        proc_free(&R.procs[i]);
    ts__free(R.procs, R.cap_procs * sizeof *R.procs);
    ts__map64_free(&R.proc_of_pid);
    ts__map64_free(&R.plan_of_class);
    ts__free(R.plans, R.cap_plans * sizeof *R.plans);
    return rc;
}

#else /* built without libbabeltrace2 */

int ts__ctf_load(const char *path, const ts_load_opts *opts, ts_job **out, ts_error *err)
{
    *out = NULL;
    return ts__error(err, TS_EFORMAT, "%s: a CTF trace, but this trainscope was built without libbabeltrace2", path);
}
#endif

/* A CTF trace is a directory holding a `metadata` file; LTTng writes one per
 * buffer domain below its output (ust/uid/<uid>/64-bit/, or per pid), and
 * babeltrace's src.ctf.fs does not search, so every such directory down to
 * depth 6 is found here and given to it. add (may be NULL) gets each. */
static uint32_t find_trace_dirs(const char *dir, int depth, void (*add)(void *, const char *), void *ud)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/metadata", dir);
    if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
        if (add)
            add(ud, dir);
        return 1;
    }
    if (depth >= 6)
        return 0;
    DIR *d = opendir(dir);
    uint32_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if (e->d_type != DT_DIR && e->d_type != DT_LNK && e->d_type != DT_UNKNOWN)
            continue;   /* a file: no stat (a folder of rank files is walked too) */
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            n += find_trace_dirs(p, depth + 1, add, ud);
    }
    if (d)
        closedir(d);
    return n;
}

/* Whether dir itself holds JSON traces: `record --lttng -o DIR` leaves both
 * DIR/<rank>.json and DIR/lttng/, and DIR then means the JSON traces (the
 * CTF one is DIR/lttng). */
static bool holds_json(const char *dir)
{
    DIR *d = opendir(dir);
    bool found = false;
    for (struct dirent *e; d && !found && (e = readdir(d));)
        found = strstr(e->d_name, ".json") != NULL;
    if (d)
        closedir(d);
    return found;
}

bool ts__ctf_is_trace(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && !holds_json(path) &&
           find_trace_dirs(path, 0, NULL, NULL) > 0;
}
