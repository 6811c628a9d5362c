/* cupti.c - the CUDA collector: CUPTI activity tracing inside the traced
 * program, loaded as build/libtrainscope-cuda.so.
 *
 * Not for: record conversion (cupti_convert.c). Two ways in:
 *   - CUDA_INJECTION64_PATH=libtrainscope-cuda.so: the driver calls
 *     InitializeInjection() at cuInit, so only processes that use CUDA pay
 *     for CUPTI; preloading the same library as well (the recommended setup
 *     for `trainscope record --cuda`) adds host ranges tied to kernels and
 *     NVTX routed to CUPTI, and the constructor then leaves attaching to
 *     the driver;
 *   - LD_PRELOAD alone: attaches from the constructor.
 * Records reach us in buffers CUPTI fills and hands back on its own worker
 * thread (or on the flushing thread at exit), never on the application's
 * threads; they are converted there and emitted through the host tracing API.
 * A failure to attach (no driver, no GPU, CUPTI busy with another profiler)
 * never touches the program (its output stays its own): the trace gets an
 * instant "cuda collector could not attach: <CUPTI error>".
 * Host ranges get CUPTI external correlation ids in cupti_ranges.c.
 * Event Sync / Stream Wait Event records may be held back in the converter
 * until their cudaEventRecord's record arrives (another thread's buffer);
 * the exit flush hands out the rest.
 * Invariant: the converter state is only touched under conv_lock.
 */
#include "capture/cuda/cupti.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUFFER_BYTES (4u << 20)   /* per CUPTI buffer; CUPTI keeps several in flight */

static ts__cupti_conv *conv;      /* NULL until attached */
static pthread_mutex_t conv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t attach_once = PTHREAD_ONCE_INIT;
static uint64_t n_events, n_dropped_records;   /* under conv_lock */
static int yielded;               /* ts_cuda_yield() was called: never attach again */

/* One (cupti, host) clock pair, the host read on both sides of CUPTI's so
 * the pair is off by at most half the gap. */
static void clock_sample(int64_t *cupti_ns, int64_t *host_ns)
{
    uint64_t t = 0;
    int64_t h0 = ts_trace_now_ns();
    (void)cuptiGetTimestamp(&t);
    int64_t h1 = ts_trace_now_ns();
    *cupti_ns = (int64_t)t;
    *host_ns = h0 + (h1 - h0) / 2;
}

static void emit_event(void *ud, const ts__gpu_event *e)
{
    ts_trace_arg args[TS_CUPTI_MAX_ARGS];
    char strs[TS_CUPTI_MAX_ARGS][TS_CUPTI_STR_BYTES];
    ts_trace_event ev;
    ts__cupti_to_event(e, args, strs, &ev);
    (void)ts_trace_emit(&ev);
}

static void note(const char *text)
{
    ts_trace_event ev = {.size = sizeof ev, .phase = 'i', .cat = "trainscope", .name = text,
                         .ts_ns = ts_trace_now_ns(), .pid = -1, .tid = -1};
    (void)ts_trace_emit(&ev);
}

static void say(const char *what, CUptiResult res)
{
    const char *text = NULL;
    char name[200];
    if (cuptiGetResultString(res, &text) != CUPTI_SUCCESS || !text)
        text = "unknown CUPTI error";
    snprintf(name, sizeof name, "cuda collector %s: %s", what, text);
    note(name);
}

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
    *buf = aligned_alloc(8, BUFFER_BYTES);
    *size = *buf ? BUFFER_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
    size_t dropped = 0;
    pthread_mutex_lock(&conv_lock);
    if (conv) {
        int64_t cupti_ns, host_ns;
        clock_sample(&cupti_ns, &host_ns);
        ts__cupti_clock_refit(&conv->clock, cupti_ns, host_ns);
        n_events += ts__cupti_process_buffer(conv, buf, valid, emit_event, NULL);
        if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
            n_dropped_records += dropped;
    }
    pthread_mutex_unlock(&conv_lock);
    free(buf);
    if (dropped > 0)
        TS_TRACE_COUNTER("cupti dropped records", (double)n_dropped_records);
}

/* Kinds the converter handles; each is enabled on its own so one that this
 * CUPTI or device lacks does not stop the rest. */
static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONTEXT,       CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,       CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,        CUPTI_ACTIVITY_KIND_MARKER,
    CUPTI_ACTIVITY_KIND_MEMORY2,       CUPTI_ACTIVITY_KIND_CUDA_EVENT,
};

static void drain_final(void)
{
    pthread_mutex_lock(&conv_lock);
    n_events += ts__cupti_drain(conv, 1, emit_event, NULL);
    pthread_mutex_unlock(&conv_lock);
}

static void flush_at_exit(void)
{
    if (!conv)
        return;
    (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    /* Every buffer has been handed back: waits still held get -1s. */
    drain_final();
}

/* CUPTI's own clock is CLOCK_REALTIME, which NTP can step; handing it the
 * host clock makes the fit below an identity. The fit stays, for a CUPTI
 * that refuses the callback. */
static uint64_t CUPTIAPI host_clock_ns(void)
{
    return (uint64_t)ts_trace_now_ns();
}

static void attach(void)
{
    if (__atomic_load_n(&yielded, __ATOMIC_ACQUIRE))
        return;
    ts__cupti_conv *c = malloc(sizeof *c);
    if (!c) {
        say("could not attach", CUPTI_ERROR_OUT_OF_MEMORY);
        return;
    }
    (void)cuptiActivityRegisterTimestampCallback(host_clock_ns);
    int64_t cupti_ns, host_ns;
    clock_sample(&cupti_ns, &host_ns);
    ts__cupti_conv_init(c, cupti_ns, host_ns);
    /* API records name the OS thread (gettid), as host ranges do, so a
     * runtime call nests inside the host range that made it. */
    CUptiResult res = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (res == CUPTI_SUCCESS)
        res = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (res != CUPTI_SUCCESS) {
        say("could not attach", res);
        free(c);
        return;
    }
    int n_on = 0;
    CUptiResult first_err = CUPTI_SUCCESS;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        CUptiResult r = cuptiActivityEnable(kinds[i]);
        n_on += r == CUPTI_SUCCESS;
        /* Waits are held back for their cudaEventRecord only when those records come. */
        if (kinds[i] == CUPTI_ACTIVITY_KIND_CUDA_EVENT)
            c->defer_waits = r == CUPTI_SUCCESS;
        if (r != CUPTI_SUCCESS && first_err == CUPTI_SUCCESS)
            first_err = r;
    }
    if (n_on == 0) {
        say("could not attach", first_err);
        free(c);
        return;
    }
    if (first_err != CUPTI_SUCCESS)
        say("attached without some activity kinds", first_err);
    pthread_mutex_lock(&conv_lock);
    __atomic_store_n(&conv, c, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&conv_lock);
    atexit(flush_at_exit);   /* runs before the trace runtime's own exit hook, registered earlier */
}

/* CUPTI's activity API takes one pair of buffer callbacks per process: a
 * second profiler that registers its own (torch's Kineto does at profiler
 * start) is handed our buffers and drops them, and we get nothing. So a
 * process whose Kineto will record the GPU calls this first (python/
 * trainscope_torch.py does, under `record --torch --cuda`): what we recorded
 * is flushed and emitted, our kinds are disabled, and we never attach again.
 * An instant in the trace says so. Safe to call before CUDA starts (we then
 * never attach) and more than once. */
TS_API void ts_cuda_yield(void)
{
    if (__atomic_exchange_n(&yielded, 1, __ATOMIC_ACQ_REL))
        return;
    pthread_once(&attach_once, attach);    /* a later attach now does nothing */
    if (!__atomic_load_n(&conv, __ATOMIC_ACQUIRE)) {
        note("cuda collector yielded CUPTI to the program's own profiler (Kineto)");
        return;
    }
    (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        (void)cuptiActivityDisable(kinds[i]);
    pthread_mutex_lock(&conv_lock);
    ts__cupti_conv *c = conv;
    n_events += ts__cupti_drain(c, 1, emit_event, NULL);
    __atomic_store_n(&conv, NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&conv_lock);
    free(c);
    note("cuda collector yielded CUPTI to the program's own profiler (Kineto)");
}

int ts__cupti_attached(void)
{
    return __atomic_load_n(&conv, __ATOMIC_ACQUIRE) != NULL;
}

/* Host code may tie GPU work to its own ranges: work launched between push
 * and pop carries "External id" = id (Kineto's mechanism). */
TS_API void ts_cuda_external_push(uint64_t id)
{
    if (conv)
        (void)cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
}

TS_API void ts_cuda_external_pop(void)
{
    uint64_t last;
    if (conv)
        (void)cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

/* Called by the CUDA driver when CUDA_INJECTION64_PATH names this library;
 * returning 1 tells it the injection succeeded. */
TS_API int InitializeInjection(void)
{
    if (TS_TRACE_ON())
        pthread_once(&attach_once, attach);
    return 1;
}

/* NVTX ranges reach CUPTI only through NVTX's own injection hook: point it
 * at the libcupti this library uses, unless the user chose one. Done in the
 * constructor because setenv is only safe before other threads exist, and
 * NVTX reads the variable at its first call. */
static void route_nvtx_to_cupti(void)
{
    Dl_info info;
    if (getenv("NVTX_INJECTION64_PATH") || !dladdr((void *)cuptiGetTimestamp, &info) || !info.dli_fname)
        return;
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

__attribute__((constructor)) static void cupti_preload_init(void)
{
    if (!TS_TRACE_ON())
        return;
    route_nvtx_to_cupti();
    if (!getenv("CUDA_INJECTION64_PATH"))
        pthread_once(&attach_once, attach);
}
