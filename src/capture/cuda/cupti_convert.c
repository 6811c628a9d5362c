/* cupti_convert.c - CUPTI activity record -> Kineto-shaped trace event.
 *
 * Not for: CUPTI calls with side effects (subscription, buffers, flushing:
 * cupti.c). The only CUPTI function used here is cuptiGetCallbackName, a
 * table lookup that works without a GPU.
 *
 * Record struct versions are the ones of the installed headers (CUDA 13:
 * Kernel10, Memcpy6, MemcpyPtoP4, Memset4, API, Marker2, Synchronization2,
 * ExternalCorrelation, Context3, Memory4, CudaEvent2); the collector enables exactly the kinds
 * converted here, and CUPTI writes each kind in its newest struct version.
 * Names follow Kineto so traces read like the PyTorch profiler's:
 *   kernel      -> the kernel name, cat "kernel", pid device, tid stream
 *   memcpy      -> "Memcpy HtoD (Pageable -> Device)", cat "gpu_memcpy"
 *   memset      -> "Memset (Device)", cat "gpu_memset"
 *   sync        -> "Stream Sync" / "Event Sync" / "Context Sync" /
 *                  "Stream Wait Event", cat "cuda_sync", tid -1 when no stream;
 *                  the two event kinds also name the stream the event was
 *                  recorded on and the cudaEventRecord's correlation
 *                  (wait_on_stream, wait_on_cuda_event_record_corr_id; -1 =
 *                  unknown), from the CUDA event records, as Kineto does
 *   CUDA event  -> no event: remembered for the waits above
 *   runtime/driver API -> "cudaLaunchKernel" (version suffix dropped),
 *                  cat "cuda_runtime" / "cuda_driver", pid/tid of the caller
 *   NVTX range  -> cat "user_annotation" on the calling thread
 *   memory      -> "[memory]" instant (Addr, Bytes +/-, Total Allocated)
 */
#include "capture/cuda/cupti.h"

#include <stdio.h>
#include <string.h>

/* ---- clock ---- */

void ts__cupti_clock_init(ts__cupti_clock *c, int64_t cupti_ns, int64_t host_ns)
{
    c->cupti0_ns = cupti_ns;
    c->host0_ns = host_ns;
    c->rate = 1.0;
}

void ts__cupti_clock_refit(ts__cupti_clock *c, int64_t cupti_ns, int64_t host_ns)
{
    /* Under a millisecond apart the sampling jitter (a few hundred ns)
     * would dominate the slope; keep the offset-only fit then. */
    if (cupti_ns - c->cupti0_ns < 1000000 || host_ns <= c->host0_ns)
        return;
    c->rate = (double)(host_ns - c->host0_ns) / (double)(cupti_ns - c->cupti0_ns);
}

int64_t ts__cupti_clock_to_host(const ts__cupti_clock *c, uint64_t cupti_ns)
{
    double delta = (double)((int64_t)cupti_ns - c->cupti0_ns);
    return c->host0_ns + (int64_t)(delta * c->rate + (delta >= 0 ? 0.5 : -0.5));
}

/* ---- converter state ---- */

void ts__cupti_conv_init(ts__cupti_conv *c, int64_t cupti_ns, int64_t host_ns)
{
    memset(c, 0, sizeof *c);
    ts__cupti_clock_init(&c->clock, cupti_ns, host_ns);
    for (uint32_t i = 0; i < TS_CUPTI_CONTEXT_SLOTS; i++)
        c->ctx_device[i] = -1;
}

static void remember_context(ts__cupti_conv *c, uint32_t ctx, uint32_t device)
{
    uint32_t slot = ctx % TS_CUPTI_CONTEXT_SLOTS;
    c->ctx_id[slot] = ctx;
    c->ctx_device[slot] = (int32_t)device;
}

static int64_t device_of_context(const ts__cupti_conv *c, uint32_t ctx)
{
    uint32_t slot = ctx % TS_CUPTI_CONTEXT_SLOTS;
    return c->ctx_id[slot] == ctx && c->ctx_device[slot] >= 0 ? c->ctx_device[slot] : -1;
}

static int64_t external_of(const ts__cupti_conv *c, uint32_t corr)
{
    uint32_t slot = corr % TS_CUPTI_EXT_SLOTS;
    return corr != 0 && c->ext_corr[slot] == corr ? (int64_t)c->ext_id[slot] : -1;
}

/* ---- names ---- */

const char *ts__cupti_memcpy_kind_name(uint8_t kind)
{
    static const char *const names[] = {
        [CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN] = "Unknown", [CUPTI_ACTIVITY_MEMCPY_KIND_HTOD] = "HtoD",
        [CUPTI_ACTIVITY_MEMCPY_KIND_DTOH] = "DtoH",       [CUPTI_ACTIVITY_MEMCPY_KIND_HTOA] = "HtoA",
        [CUPTI_ACTIVITY_MEMCPY_KIND_ATOH] = "AtoH",       [CUPTI_ACTIVITY_MEMCPY_KIND_ATOA] = "AtoA",
        [CUPTI_ACTIVITY_MEMCPY_KIND_ATOD] = "AtoD",       [CUPTI_ACTIVITY_MEMCPY_KIND_DTOA] = "DtoA",
        [CUPTI_ACTIVITY_MEMCPY_KIND_DTOD] = "DtoD",       [CUPTI_ACTIVITY_MEMCPY_KIND_HTOH] = "HtoH",
        [CUPTI_ACTIVITY_MEMCPY_KIND_PTOP] = "PtoP",
    };
    return kind < sizeof names / sizeof names[0] ? names[kind] : "Unknown";
}

const char *ts__cupti_memory_kind_name(uint8_t kind)
{
    static const char *const names[] = {
        [CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN] = "Unknown",   [CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE] = "Pageable",
        [CUPTI_ACTIVITY_MEMORY_KIND_PINNED] = "Pinned",     [CUPTI_ACTIVITY_MEMORY_KIND_DEVICE] = "Device",
        [CUPTI_ACTIVITY_MEMORY_KIND_ARRAY] = "Array",       [CUPTI_ACTIVITY_MEMORY_KIND_MANAGED] = "Managed",
        [CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC] = "Device Static",
        [CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC] = "Managed Static",
    };
    return kind < sizeof names / sizeof names[0] ? names[kind] : "Unknown";
}

int ts__cupti_api_launches(const char *name)
{
    return strncmp(name, "cudaLaunch", 10) == 0 || strncmp(name, "cuLaunch", 8) == 0 ||
           strstr(name, "Memcpy") != NULL || strstr(name, "Memset") != NULL ||
           strstr(name, "GraphLaunch") != NULL;
}

/* API name without CUPTI's version suffix: "cudaLaunchKernel_v7000" ->
 * "cudaLaunchKernel", "cuMemcpyHtoD_v2" -> "cuMemcpyHtoD". */
static const char *api_name(ts__cupti_conv *c, CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    const char *raw = NULL;
    if (cuptiGetCallbackName(domain, cbid, &raw) != CUPTI_SUCCESS || raw == NULL) {
        snprintf(c->name_buf, sizeof c->name_buf, "%s cbid %u",
                 domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime" : "driver", (unsigned)cbid);
        return c->name_buf;
    }
    size_t n = strlen(raw);
    size_t cut = n;
    while (cut > 0 && raw[cut - 1] >= '0' && raw[cut - 1] <= '9')
        cut--;
    if (cut >= 2 && cut < n && raw[cut - 1] == 'v' && raw[cut - 2] == '_')
        n = cut - 2;
    if (n >= sizeof c->name_buf)
        n = sizeof c->name_buf - 1;
    memcpy(c->name_buf, raw, n);
    c->name_buf[n] = '\0';
    return c->name_buf;
}

/* ---- one function per record kind ---- */

static void event_clear(ts__gpu_event *e)
{
    memset(e, 0, sizeof *e);
    e->phase = 'X';
    e->correlation = e->external_id = e->device = e->context = e->stream = -1;
    e->wait_event_id = e->wait_on_stream = e->wait_record_corr = -1;
    e->cbid = -1;
}

static void set_span(const ts__cupti_conv *c, ts__gpu_event *e, uint64_t start, uint64_t end)
{
    e->ts_ns = ts__cupti_clock_to_host(&c->clock, start);
    int64_t end_ns = ts__cupti_clock_to_host(&c->clock, end);
    e->dur_ns = end_ns > e->ts_ns ? end_ns - e->ts_ns : 0;
}

static void set_gpu_place(ts__cupti_conv *c, ts__gpu_event *e, uint32_t device, uint32_t ctx,
                          uint32_t stream, uint32_t corr)
{
    remember_context(c, ctx, device);
    e->device = e->pid = device;
    e->context = ctx;
    e->stream = e->tid = stream;
    e->correlation = corr;
    e->external_id = external_of(c, corr);
    e->flow = corr != 0 ? 'f' : 0;
}

static int convert_kernel(ts__cupti_conv *c, const CUpti_ActivityKernel10 *k, ts__gpu_event *e)
{
    e->type = TS_GPU_EV_KERNEL;
    e->cat = "kernel";
    e->name = k->name ? k->name : "(unnamed kernel)";
    set_span(c, e, k->start, k->end);
    set_gpu_place(c, e, k->deviceId, k->contextId, k->streamId, k->correlationId);
    e->grid[0] = k->gridX, e->grid[1] = k->gridY, e->grid[2] = k->gridZ;
    e->block[0] = k->blockX, e->block[1] = k->blockY, e->block[2] = k->blockZ;
    e->registers = k->registersPerThread;
    e->shared_bytes = k->staticSharedMemory + k->dynamicSharedMemory;
    return 1;
}

static int convert_memcpy(ts__cupti_conv *c, const CUpti_ActivityMemcpy6 *m, ts__gpu_event *e)
{
    e->type = TS_GPU_EV_MEMCPY;
    e->cat = "gpu_memcpy";
    snprintf(c->name_buf, sizeof c->name_buf, "Memcpy %s (%s -> %s)",
             ts__cupti_memcpy_kind_name(m->copyKind), ts__cupti_memory_kind_name(m->srcKind),
             ts__cupti_memory_kind_name(m->dstKind));
    e->name = c->name_buf;
    set_span(c, e, m->start, m->end);
    set_gpu_place(c, e, m->deviceId, m->contextId, m->streamId, m->correlationId);
    e->bytes = m->bytes;
    return 1;
}

static int convert_memcpy_p2p(ts__cupti_conv *c, const CUpti_ActivityMemcpyPtoP4 *m, ts__gpu_event *e)
{
    e->type = TS_GPU_EV_MEMCPY;
    e->cat = "gpu_memcpy";
    snprintf(c->name_buf, sizeof c->name_buf, "Memcpy PtoP (%s -> %s)",
             ts__cupti_memory_kind_name(m->srcKind), ts__cupti_memory_kind_name(m->dstKind));
    e->name = c->name_buf;
    set_span(c, e, m->start, m->end);
    set_gpu_place(c, e, m->deviceId, m->contextId, m->streamId, m->correlationId);
    e->bytes = m->bytes;
    return 1;
}

static int convert_memset(ts__cupti_conv *c, const CUpti_ActivityMemset4 *m, ts__gpu_event *e)
{
    e->type = TS_GPU_EV_MEMSET;
    e->cat = "gpu_memset";
    snprintf(c->name_buf, sizeof c->name_buf, "Memset (%s)",
             ts__cupti_memory_kind_name((uint8_t)m->memoryKind));
    e->name = c->name_buf;
    set_span(c, e, m->start, m->end);
    set_gpu_place(c, e, m->deviceId, m->contextId, m->streamId, m->correlationId);
    e->bytes = m->bytes;
    return 1;
}

/* ---- CUDA event records and the waits that name them ---- */

/* CUPTI marks "no sync id" with its 32-bit invalid value in a 64-bit field. */
static int sync_id_valid(uint64_t id)
{
    return id != CUPTI_SYNCHRONIZATION_INVALID_VALUE && id != UINT64_MAX;
}

static uint32_t event_slot(uint32_t ctx, uint32_t event_id)
{
    return (uint32_t)(((uint64_t)ctx * 0x9E3779B1u) ^ event_id) % TS_CUPTI_EVENT_SLOTS;
}

/* A cudaEventRecord: remembered by its sync id and as its event's latest
 * record; resolves any wait held back for it. */
static void remember_event_record(ts__cupti_conv *c, const CUpti_ActivityCudaEvent2 *x)
{
    if (x->correlationId == 0)
        return;   /* 0 marks an empty slot; CUPTI numbers calls from 1 */
    ts__cupti_event_rec r = {x->cudaEventSyncId, x->contextId, x->eventId, x->streamId, x->correlationId};
    c->ev_by_event[event_slot(x->contextId, x->eventId)] = r;
    if (!sync_id_valid(x->cudaEventSyncId))
        return;   /* held waits all have a sync id */
    c->ev_by_sync[x->cudaEventSyncId % TS_CUPTI_EVENT_SLOTS] = r;
    for (uint32_t i = 0; i < c->n_pending; i++) {
        if (c->pending[i].resolved || c->pending[i].sync_id != x->cudaEventSyncId)
            continue;
        c->pending[i].ev.wait_on_stream = x->streamId;
        c->pending[i].ev.wait_record_corr = x->correlationId;
        c->pending[i].resolved = 1;
    }
}

/* The record a wait names: the one with its sync id (exact, even when the
 * event was recorded again later); without a sync id, the event's latest
 * record converted so far (what Kineto does). NULL = not seen (yet). */
static const ts__cupti_event_rec *find_event_record(const ts__cupti_conv *c, uint32_t ctx, uint32_t event_id,
                                                    uint64_t sync_id)
{
    const ts__cupti_event_rec *by_event = &c->ev_by_event[event_slot(ctx, event_id)];
    int same_event = by_event->correlation != 0 && by_event->context == ctx && by_event->event_id == event_id;
    if (!sync_id_valid(sync_id))
        return same_event ? by_event : NULL;
    const ts__cupti_event_rec *by_sync = &c->ev_by_sync[sync_id % TS_CUPTI_EVENT_SLOTS];
    if (by_sync->correlation != 0 && by_sync->sync_id == sync_id)
        return by_sync;
    return same_event && by_event->sync_id == sync_id ? by_event : NULL;
}

/* Hold a wait back until its record arrives (returns 0), or, when waiting
 * is pointless (no CUDA event records collected) or the list is full,
 * hand it out now with the record unknown (returns 1). Bounded: a wait
 * whose record never comes costs one slot until the final drain. */
static int defer_wait(ts__cupti_conv *c, ts__gpu_event *e, uint64_t sync_id)
{
    if (!c->defer_waits || c->n_pending == TS_CUPTI_PENDING_WAITS) {
        c->n_unresolved_waits++;
        return 1;
    }
    c->pending[c->n_pending].ev = *e;
    c->pending[c->n_pending].sync_id = sync_id;
    c->pending[c->n_pending].resolved = 0;
    c->n_pending++;
    return 0;
}

uint64_t ts__cupti_drain(ts__cupti_conv *c, int final, ts__gpu_event_fn fn, void *ud)
{
    uint32_t kept = 0;
    uint64_t n = 0;
    for (uint32_t i = 0; i < c->n_pending; i++) {
        if (!c->pending[i].resolved && !final) {
            c->pending[kept++] = c->pending[i];
            continue;
        }
        c->n_unresolved_waits += !c->pending[i].resolved;
        fn(ud, &c->pending[i].ev);
        n++;
    }
    c->n_pending = kept;
    return n;
}

static int convert_sync(ts__cupti_conv *c, const CUpti_ActivitySynchronization2 *s, ts__gpu_event *e)
{
    static const char *const names[] = {
        [CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN] = "Unknown Sync",
        [CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE] = "Event Sync",
        [CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT] = "Stream Wait Event",
        [CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE] = "Stream Sync",
        [CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE] = "Context Sync",
    };
    e->type = TS_GPU_EV_SYNC;
    e->cat = "cuda_sync";
    e->name = (unsigned)s->type < sizeof names / sizeof names[0] ? names[s->type] : names[0];
    set_span(c, e, s->start, s->end);
    e->context = s->contextId;
    e->device = e->pid = device_of_context(c, s->contextId);
    e->stream = e->tid = s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : (int64_t)s->streamId;
    e->correlation = s->correlationId;
    e->external_id = external_of(c, s->correlationId);
    if (s->cudaEventId != CUPTI_SYNCHRONIZATION_INVALID_VALUE)
        e->wait_event_id = s->cudaEventId;
    if (s->type != CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE &&
        s->type != CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT)
        return 1;
    const ts__cupti_event_rec *r = find_event_record(c, s->contextId, s->cudaEventId, s->cudaEventSyncId);
    if (r) {
        e->wait_on_stream = r->stream;
        e->wait_record_corr = r->correlation;
        return 1;
    }
    return sync_id_valid(s->cudaEventSyncId) ? defer_wait(c, e, s->cudaEventSyncId) : 1;
}

static int convert_api(ts__cupti_conv *c, const CUpti_ActivityAPI *a, ts__gpu_event *e)
{
    int runtime = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
    e->type = runtime ? TS_GPU_EV_RUNTIME : TS_GPU_EV_DRIVER;
    e->cat = runtime ? "cuda_runtime" : "cuda_driver";
    e->name = api_name(c, runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid);
    set_span(c, e, a->start, a->end);
    e->pid = a->processId;
    e->tid = a->threadId;
    e->cbid = (int32_t)a->cbid;
    e->correlation = a->correlationId;
    e->external_id = external_of(c, a->correlationId);
    e->return_value = a->returnValue;
    e->flow = ts__cupti_api_launches(e->name) ? 's' : 0;
    return 1;
}

static void marker_place(const CUpti_ActivityMarker2 *m, int64_t *pid, int64_t *tid)
{
    *pid = m->objectId.pt.processId;
    *tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? (int64_t)m->objectId.pt.threadId : 0;
}

/* NVTX: a range arrives as a START record (with the name) and an END record
 * with the same id; a mark is one INSTANTANEOUS record. */
static int convert_marker(ts__cupti_conv *c, const CUpti_ActivityMarker2 *m, ts__gpu_event *e)
{
    uint32_t slot = m->id % TS_CUPTI_MARKER_SLOTS;
    int64_t t = ts__cupti_clock_to_host(&c->clock, m->timestamp);
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        c->marker[slot].id = m->id;
        c->marker[slot].start_ns = t;
        marker_place(m, &c->marker[slot].pid, &c->marker[slot].tid);
        snprintf(c->marker[slot].name, TS_CUPTI_MARKER_NAME, "%s", m->name ? m->name : "");
        return 0;
    }
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        if (c->marker[slot].id != m->id || m->id == 0) {
            c->n_unpaired_markers++;
            return 0;
        }
        c->marker[slot].id = 0;
        e->type = TS_GPU_EV_MARKER_RANGE;
        e->cat = "user_annotation";
        memcpy(c->name_buf, c->marker[slot].name, TS_CUPTI_MARKER_NAME);
        e->name = c->name_buf;
        e->ts_ns = c->marker[slot].start_ns;
        e->dur_ns = t > e->ts_ns ? t - e->ts_ns : 0;
        e->pid = c->marker[slot].pid;
        e->tid = c->marker[slot].tid;
        return 1;
    }
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        e->type = TS_GPU_EV_MARKER_INSTANT;
        e->cat = "user_annotation";
        e->phase = 'i';
        e->name = m->name ? m->name : "";
        e->ts_ns = t;
        marker_place(m, &e->pid, &e->tid);
        return 1;
    }
    return 0;
}

/* cudaMalloc/cudaFree (and pool) operations as Kineto's "[memory]" instants.
 * CUPTI names the process but not the thread, so they go on the process's
 * main thread (tid = pid). */
static int convert_memory(ts__cupti_conv *c, const CUpti_ActivityMemory4 *m, ts__gpu_event *e)
{
    int alloc = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    if (!alloc && m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
        return 0;
    uint32_t dev = m->deviceId < TS_CUPTI_DEVICES ? m->deviceId : TS_CUPTI_DEVICES - 1;
    e->type = TS_GPU_EV_MEMORY;
    e->phase = 'i';
    e->cat = "cpu_instant_event";
    e->name = "[memory]";
    e->ts_ns = ts__cupti_clock_to_host(&c->clock, m->timestamp);
    e->pid = e->tid = m->processId;
    e->device = m->deviceId;
    e->context = m->contextId;
    e->correlation = m->correlationId ? (int64_t)m->correlationId : -1;
    e->address = m->address;
    e->mem_delta = alloc ? (int64_t)m->bytes : -(int64_t)m->bytes;
    c->allocated[dev] += e->mem_delta;
    e->mem_total = c->allocated[dev];
    return 1;
}

int ts__cupti_convert(ts__cupti_conv *c, const CUpti_Activity *rec, ts__gpu_event *out)
{
    event_clear(out);
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return convert_kernel(c, (const CUpti_ActivityKernel10 *)rec, out);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return convert_memcpy(c, (const CUpti_ActivityMemcpy6 *)rec, out);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        return convert_memcpy_p2p(c, (const CUpti_ActivityMemcpyPtoP4 *)rec, out);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return convert_memset(c, (const CUpti_ActivityMemset4 *)rec, out);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        return convert_sync(c, (const CUpti_ActivitySynchronization2 *)rec, out);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return convert_api(c, (const CUpti_ActivityAPI *)rec, out);
    case CUPTI_ACTIVITY_KIND_MARKER:
        return convert_marker(c, (const CUpti_ActivityMarker2 *)rec, out);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        return convert_memory(c, (const CUpti_ActivityMemory4 *)rec, out);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *x = (const CUpti_ActivityExternalCorrelation *)rec;
        uint32_t slot = x->correlationId % TS_CUPTI_EXT_SLOTS;
        c->ext_corr[slot] = x->correlationId;
        c->ext_id[slot] = x->externalId;
        return 0;
    }
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
        remember_event_record(c, (const CUpti_ActivityCudaEvent2 *)rec);
        return 0;
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
        const CUpti_ActivityContext3 *x = (const CUpti_ActivityContext3 *)rec;
        remember_context(c, x->contextId, x->deviceId);
        return 0;
    }
    default:
        c->n_unknown++;
        return 0;
    }
}

/* ---- buffers and host API events ---- */

uint64_t ts__cupti_process_buffer(ts__cupti_conv *c, uint8_t *buf, size_t valid_bytes,
                                  ts__gpu_event_fn fn, void *ud)
{
    CUpti_Activity *rec = NULL;
    ts__gpu_event e;
    uint64_t n = 0;
    if (buf == NULL || valid_bytes == 0)
        return 0;
    while (cuptiActivityGetNextRecord(buf, valid_bytes, &rec) == CUPTI_SUCCESS) {
        if (ts__cupti_convert(c, rec, &e) == 1) {
            fn(ud, &e);
            n++;
        }
        if (rec->kind == CUPTI_ACTIVITY_KIND_CUDA_EVENT && c->n_pending > 0)
            n += ts__cupti_drain(c, 0, fn, ud);
    }
    return n;
}

typedef struct arg_list {
    ts_trace_arg *args;
    char (*strs)[TS_CUPTI_STR_BYTES];
    uint32_t n, n_strs;
} arg_list;

static void put_num(arg_list *l, const char *key, int64_t v)
{
    if (l->n < TS_CUPTI_MAX_ARGS)
        l->args[l->n++] = (ts_trace_arg){key, NULL, v};
}

static void put_str(arg_list *l, const char *key, const char *v)
{
    if (l->n < TS_CUPTI_MAX_ARGS)
        l->args[l->n++] = (ts_trace_arg){key, v, 0};
}

static void put_dim3(arg_list *l, const char *key, const int32_t d[3])
{
    if (l->n_strs >= TS_CUPTI_MAX_ARGS)
        return;
    char *s = l->strs[l->n_strs++];
    snprintf(s, TS_CUPTI_STR_BYTES, "[%d, %d, %d]", (int)d[0], (int)d[1], (int)d[2]);
    put_str(l, key, s);
}

static void put_ids(arg_list *l, const ts__gpu_event *e)
{
    if (e->correlation >= 0)
        put_num(l, "correlation", e->correlation);
    if (e->external_id >= 0)
        put_num(l, "External id", e->external_id);
}

void ts__cupti_to_event(const ts__gpu_event *e, ts_trace_arg *args, char (*strs)[TS_CUPTI_STR_BYTES],
                        ts_trace_event *ev)
{
    arg_list l = {args, strs, 0, 0};
    memset(ev, 0, sizeof *ev);
    ev->size = sizeof *ev;
    ev->phase = e->phase;
    ev->cat = e->cat;
    ev->name = e->name;
    ev->ts_ns = e->ts_ns;
    ev->dur_ns = e->dur_ns;
    ev->pid = e->pid;
    ev->tid = e->tid >= 0 ? e->tid : 0;
    if (e->flow && e->correlation > 0) {
        ev->flow_id = (uint64_t)e->correlation;
        ev->flow_phase = e->flow;
    }
    put_ids(&l, e);
    switch (e->type) {
    case TS_GPU_EV_RUNTIME:
    case TS_GPU_EV_DRIVER:
        put_num(&l, "cbid", e->cbid);
        break;
    case TS_GPU_EV_SYNC:
        put_str(&l, "cuda_sync_kind", e->name);
        if (e->wait_event_id >= 0)
            put_num(&l, "wait_on_cuda_event_id", e->wait_event_id);
        if (!strcmp(e->name, "Stream Wait Event") || !strcmp(e->name, "Event Sync")) {
            put_num(&l, "wait_on_stream", e->wait_on_stream);
            put_num(&l, "wait_on_cuda_event_record_corr_id", e->wait_record_corr);
        }
        /* syncs carry device and stream like GPU work */
        __attribute__((fallthrough));
    case TS_GPU_EV_KERNEL:
    case TS_GPU_EV_MEMCPY:
    case TS_GPU_EV_MEMSET:
        put_num(&l, "device", e->device);
        put_num(&l, "stream", e->stream);
        break;
    default:
        break;
    }
    if (e->type == TS_GPU_EV_MEMORY) {
        /* Kineto's allocator instants: Device Type 1 = CUDA. */
        put_num(&l, "Addr", (int64_t)e->address);
        put_num(&l, "Bytes", e->mem_delta);
        put_num(&l, "Total Allocated", e->mem_total);
        put_num(&l, "Device Type", 1);
        put_num(&l, "Device Id", e->device);
    }
    if (e->type == TS_GPU_EV_KERNEL) {
        put_dim3(&l, "grid", e->grid);
        put_dim3(&l, "block", e->block);
        put_num(&l, "registers per thread", e->registers);
        put_num(&l, "shared memory", e->shared_bytes);
    } else if (e->type == TS_GPU_EV_MEMCPY || e->type == TS_GPU_EV_MEMSET) {
        put_num(&l, "bytes", (int64_t)e->bytes);
    }
    if (e->context >= 0)
        put_num(&l, "context", e->context);
    ev->args = args;
    ev->n_args = l.n;
}
