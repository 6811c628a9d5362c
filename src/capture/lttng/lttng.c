/* lttng.c - the LTTng backend: build/libtrainscope-lttng.so, preloaded by
 * `trainscope record --lttng` ahead of the tracing runtime.
 *
 * Not for: session control (lttng_session.c) or read-back (ingest/ctf.c).
 * It interposes the host tracing API (include/trainscope/trace.h): each call
 * fires the matching "trainscope:*" tracepoint (lttng_tp.h), then goes on to
 * the real function in libtrainscope-trace.so, so one run yields both the
 * JSON trace and an LTTng (CTF) trace of the same events. Events from the
 * collectors arrive through ts_trace_emit and are sorted into the
 * collective / memcpy / alloc / free / complete tracepoints by their
 * content ("[memory]" instants, e.g. CUPTI's cudaMalloc records, become
 * alloc/free). It also exports ts_lttng_alloc/ts_lttng_free for frameworks
 * that report their own allocator.
 * Invariant: a tracepoint costs one load and a branch while no LTTng session
 * enables it (LTTng-UST's own guarantee), so this library only adds the
 * dlsym'd indirect call when LTTng is not recording.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "capture/lttng/lttng_tp.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/lttng/lttng.h"
#include "trainscope/trace.h"

#define TS_LIKELY_(x) __builtin_expect(!!(x), 1)

/* The real API, resolved once through RTLD_NEXT (the runtime is loaded
 * after this preloaded library). A missing symbol means the runtime is not
 * loaded at all, which `record` never does: say so and stop. */
static void *real(void **slot, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (TS_LIKELY_(p))
        return p;
    p = dlsym(RTLD_NEXT, name);
    if (!p) {
        fprintf(stderr, "trainscope: lttng backend: %s not found (libtrainscope-trace.so not loaded)\n", name);
        abort();
    }
    __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    return p;
}
#define REAL(fn)                                                     \
    static void *slot_##fn;                                          \
    __typeof__(&fn) real_##fn = (__typeof__(&fn))real(&slot_##fn, #fn)

/* The launcher's rank (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK and their
 * sizes), told once per process before its first event, so a CTF trace of a
 * whole node numbers its processes as the JSON traces do. Not from the
 * constructor: LTTng may not have enabled this process's events yet. Forked
 * children (DataLoader workers) inherit the environment but are not that
 * rank, so they never tell it. */
static int rank_told;   /* atomic: 1 once told or not to be told */

static int env_int(const char *a, const char *b, const char *c)
{
    const char *v = getenv(a);
    if (!v)
        v = getenv(b);
    if (!v)
        v = getenv(c);
    return v && *v ? atoi(v) : -1;
}

static void tell_rank_slow(void)
{
    if (__atomic_exchange_n(&rank_told, 1, __ATOMIC_RELAXED))
        return;
    int rank = env_int("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK");
    if (rank >= 0)
        lttng_ust_tracepoint(trainscope, rank, rank, env_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"));
}

static inline void tell_rank(void)
{
    if (!__atomic_load_n(&rank_told, __ATOMIC_RELAXED))
        tell_rank_slow();
}

static void child_after_fork(void)
{
    rank_told = 1;
}

__attribute__((constructor)) static void lttng_backend_init(void)
{
    pthread_atfork(NULL, NULL, child_after_fork);
}

TS_API void ts_trace_push(const char *cat, const char *name)
{
    REAL(ts_trace_push);
    tell_rank();
    lttng_ust_tracepoint(trainscope, push, cat ? cat : "", name ? name : "");
    real_ts_trace_push(cat, name);
}

TS_API void ts_trace_pop(void)
{
    REAL(ts_trace_pop);
    lttng_ust_tracepoint(trainscope, pop, 0);
    real_ts_trace_pop();
}

TS_API void ts_trace_begin(uint64_t id, const char *cat, const char *name)
{
    REAL(ts_trace_begin);
    tell_rank();
    lttng_ust_tracepoint(trainscope, range_begin, id, cat ? cat : "", name ? name : "");
    real_ts_trace_begin(id, cat, name);
}

TS_API void ts_trace_end(uint64_t id)
{
    REAL(ts_trace_end);
    lttng_ust_tracepoint(trainscope, range_end, id);
    real_ts_trace_end(id);
}

TS_API void ts_trace_instant(const char *cat, const char *name)
{
    REAL(ts_trace_instant);
    tell_rank();
    lttng_ust_tracepoint(trainscope, instant, cat ? cat : "", name ? name : "");
    real_ts_trace_instant(cat, name);
}

TS_API void ts_trace_counter(const char *name, double value)
{
    REAL(ts_trace_counter);
    tell_rank();
    lttng_ust_tracepoint(trainscope, counter, name ? name : "", value);
    real_ts_trace_counter(name, value);
}

TS_API void ts_trace_flow(uint64_t id, char phase, const char *cat)
{
    REAL(ts_trace_flow);
    tell_rank();
    lttng_ust_tracepoint(trainscope, flow, id, phase, cat ? cat : "");
    real_ts_trace_flow(id, phase, cat);
}

TS_API void ts_trace_thread_name(const char *name)
{
    REAL(ts_trace_thread_name);
    lttng_ust_tracepoint(trainscope, thread_name, name ? name : "");
    real_ts_trace_thread_name(name);
}

TS_API void ts_trace_set_rank(int rank, int world_size)
{
    REAL(ts_trace_set_rank);
    __atomic_store_n(&rank_told, 1, __ATOMIC_RELAXED);   /* an explicit rank wins over the environment */
    lttng_ust_tracepoint(trainscope, rank, rank, world_size);
    real_ts_trace_set_rank(rank, world_size);
}

/* ---- ts_trace_emit: pick the tracepoint that fits the event ---- */

static const ts_trace_arg *find_arg(const ts_trace_event *ev, const char *key)
{
    for (uint32_t i = 0; i < ev->n_args && ev->args[i].key; i++)
        if (strcmp(ev->args[i].key, key) == 0)
            return &ev->args[i];
    return NULL;
}

static int64_t num_arg(const ts_trace_event *ev, const char *key, int64_t none)
{
    const ts_trace_arg *a = find_arg(ev, key);
    return a && !a->str ? a->num : none;
}

static const char *str_arg(const ts_trace_event *ev, const char *key, const char *none)
{
    const ts_trace_arg *a = find_arg(ev, key);
    return a && a->str ? a->str : none;
}

/* args as "key US 's'|'i' value RS ..." (lttng_tp.h); cut at n bytes. */
static void pack_args(const ts_trace_event *ev, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < ev->n_args && ev->args[i].key; i++) {
        const ts_trace_arg *a = &ev->args[i];
        int w = a->str ? snprintf(out + len, n - len, "%s%c" "s%s%c", a->key, TS_LTTNG_US, a->str, TS_LTTNG_RS)
                       : snprintf(out + len, n - len, "%s%c" "i%lld%c", a->key, TS_LTTNG_US,
                                  (long long)a->num, TS_LTTNG_RS);
        if (w < 0 || (size_t)w >= n - len) {
            out[len] = '\0';   /* drop the pair that does not fit whole */
            return;
        }
        len += (size_t)w;
    }
}

static void fire_emit(const ts_trace_event *ev)
{
    const char *coll = str_arg(ev, "Collective name", NULL);
    if (coll && ev->phase == 'X') {
        ts_lttng_coll c = {
            .api = ev->name ? ev->name : "", .coll = coll, .comm = str_arg(ev, "Process Group Name", ""),
            .dtype = str_arg(ev, "dtype", ""), .seq = num_arg(ev, "Sequence number", -1),
            .in_nelems = num_arg(ev, "In msg nelems", -1), .out_nelems = num_arg(ev, "Out msg nelems", -1),
            .nranks = (int32_t)num_arg(ev, "Group size", -1), .rank = (int32_t)num_arg(ev, "Rank", -1),
            .peer = (int32_t)num_arg(ev, strcmp(coll, "recv") ? "Dst Rank" : "Src Rank", -1),
            .ts_ns = ev->ts_ns, .dur_ns = ev->dur_ns,
        };
        lttng_ust_tracepoint(trainscope, collective, &c);
        return;
    }
    if (ev->phase == 'i' && ev->name && strcmp(ev->name, "[memory]") == 0) {
        int64_t bytes = num_arg(ev, "Bytes", 0);
        uint64_t ptr = (uint64_t)num_arg(ev, "Addr", 0);
        int32_t device = (int32_t)num_arg(ev, "Device Id", -1);
        if (bytes >= 0)
            lttng_ust_tracepoint(trainscope, alloc, ptr, (uint64_t)bytes, device);
        else
            lttng_ust_tracepoint(trainscope, free, ptr, (uint64_t)-bytes, device);
        return;
    }
    if (ev->cat && strcmp(ev->cat, "gpu_memcpy") == 0 && ev->phase == 'X') {
        lttng_ust_tracepoint(trainscope, memcpy, ev->name ? ev->name : "", (uint64_t)num_arg(ev, "bytes", 0),
                             ev->ts_ns, ev->dur_ns, ev->pid, ev->tid, num_arg(ev, "correlation", -1));
        return;
    }
    char args[1024];
    pack_args(ev, args, sizeof args);
    lttng_ust_tracepoint(trainscope, complete, ev, args);
}

TS_API int ts_trace_emit(const ts_trace_event *ev)
{
    REAL(ts_trace_emit);
    tell_rank();
    if (ev && ev->size >= offsetof(ts_trace_event, json_args) &&   /* JSON args go as strings here */
        lttng_ust_tracepoint_enabled(trainscope, complete) | lttng_ust_tracepoint_enabled(trainscope, collective) |
        lttng_ust_tracepoint_enabled(trainscope, memcpy) | lttng_ust_tracepoint_enabled(trainscope, alloc))
        fire_emit(ev);
    return real_ts_trace_emit(ev);
}

/* ---- memory, for frameworks that report their allocator ---- */

TS_API void ts_lttng_alloc(uint64_t ptr, uint64_t bytes, int32_t device)
{
    lttng_ust_tracepoint(trainscope, alloc, ptr, bytes, device);
}

TS_API void ts_lttng_free(uint64_t ptr, uint64_t bytes, int32_t device)
{
    lttng_ust_tracepoint(trainscope, free, ptr, bytes, device);
}
