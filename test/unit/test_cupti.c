/* test_cupti.c - the CUDA collector's record conversion, fed CUPTI activity
 * records built in memory with the struct versions of the installed headers
 * (no GPU needed: CUPTI's record walker and callback-name table work without
 * one). Built only when the CUPTI headers were found (TS_HAVE_CUPTI, set by
 * src/capture/module.mk); otherwise this binary holds no tests.
 */
#include "test.h"

#ifdef TS_HAVE_CUPTI
#include <stdlib.h>
#include <unistd.h>

#include "capture/cuda/cupti.h"

/* A converter whose CUPTI clock reads 1,000,000 ns at host time 5,000 ns. */
static ts__cupti_conv *new_conv(void)
{
    ts__cupti_conv *c = malloc(sizeof *c);
    if (c)
        ts__cupti_conv_init(c, 1000000, 5000);
    return c;
}

static CUpti_ActivityKernel10 kernel_rec(uint32_t corr)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = "ampere_sgemm_128x64_nn";
    k.start = 1000000 + 200;
    k.end = 1000000 + 323;
    k.deviceId = 1, k.contextId = 7, k.streamId = 20, k.correlationId = corr;
    k.gridX = 8, k.gridY = 16, k.gridZ = 5, k.blockX = 128, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 122, k.staticSharedMemory = 12544, k.dynamicSharedMemory = 256;
    return k;
}

TEST(cupti_kernel_record_becomes_kernel_on_device_stream)
{
    ts__cupti_conv *c = new_conv();
    CHECK(c);
    CUpti_ActivityKernel10 k = kernel_rec(27);
    ts__gpu_event e;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&k, &e), 1);
    CHECK_EQ_STR(e.name, "ampere_sgemm_128x64_nn");
    CHECK_EQ_STR(e.cat, "kernel");
    CHECK_EQ_INT(e.type, TS_GPU_EV_KERNEL);
    CHECK_EQ_INT(e.ts_ns, 5200);
    CHECK_EQ_INT(e.dur_ns, 123);
    CHECK_EQ_INT(e.pid, 1);
    CHECK_EQ_INT(e.tid, 20);
    CHECK_EQ_INT(e.stream, 20);
    CHECK_EQ_INT(e.context, 7);
    CHECK_EQ_INT(e.correlation, 27);
    CHECK_EQ_INT(e.external_id, -1);
    CHECK_EQ_INT(e.flow, 'f');
    CHECK_EQ_INT(e.grid[1], 16);
    CHECK_EQ_INT(e.block[0], 128);
    CHECK_EQ_INT(e.registers, 122);
    CHECK_EQ_INT(e.shared_bytes, 12800);
    free(c);
}

TEST(cupti_memcpy_record_names_direction_memory_and_bytes)
{
    ts__cupti_conv *c = new_conv();
    CHECK(c);
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 92928;
    m.start = 1000000 + 10000, m.end = 1000000 + 22000;
    m.deviceId = 0, m.contextId = 1, m.streamId = 7, m.correlationId = 14;
    ts__gpu_event e;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&m, &e), 1);
    CHECK_EQ_STR(e.name, "Memcpy HtoD (Pageable -> Device)");
    CHECK_EQ_STR(e.cat, "gpu_memcpy");
    CHECK_EQ_INT(e.bytes, 92928);
    CHECK_EQ_INT(e.ts_ns, 15000);
    CHECK_EQ_INT(e.dur_ns, 12000);
    CHECK_EQ_INT(e.pid, 0);
    CHECK_EQ_INT(e.tid, 7);
    CHECK_EQ_INT(e.correlation, 14);
    free(c);
}

TEST(cupti_peer_memcpy_and_memset_records_convert)
{
    ts__cupti_conv *c = new_conv();
    CHECK(c);
    CUpti_ActivityMemcpyPtoP4 p;
    memset(&p, 0, sizeof p);
    p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p.bytes = 1 << 20, p.start = 1000000, p.end = 1000500, p.deviceId = 2, p.streamId = 3;
    ts__gpu_event e;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&p, &e), 1);
    CHECK_EQ_STR(e.name, "Memcpy PtoP (Device -> Device)");
    CHECK_EQ_INT(e.bytes, 1 << 20);
    CHECK_EQ_INT(e.pid, 2);

    CUpti_ActivityMemset4 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    s.bytes = 512, s.start = 1000100, s.end = 1000101, s.deviceId = 0, s.streamId = 20, s.correlationId = 25;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&s, &e), 1);
    CHECK_EQ_STR(e.name, "Memset (Device)");
    CHECK_EQ_STR(e.cat, "gpu_memset");
    CHECK_EQ_INT(e.bytes, 512);
    CHECK_EQ_INT(e.ts_ns, 5100);
    CHECK_EQ_INT(e.dur_ns, 1);
    CHECK_EQ_INT(e.correlation, 25);
    free(c);
}

TEST(cupti_runtime_call_drops_version_suffix_and_starts_flow)
{
    ts__cupti_conv *c = new_conv();
    CHECK(c);
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    a.start = 1000000 + 100, a.end = 1000000 + 136;
    a.processId = 948300, a.threadId = 948301, a.correlationId = 1482;
    ts__gpu_event e;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&a, &e), 1);
    CHECK_EQ_STR(e.name, "cudaLaunchKernel");
    CHECK_EQ_STR(e.cat, "cuda_runtime");
    CHECK_EQ_INT(e.cbid, 211);
    CHECK_EQ_INT(e.pid, 948300);
    CHECK_EQ_INT(e.tid, 948301);
    CHECK_EQ_INT(e.ts_ns, 5100);
    CHECK_EQ_INT(e.dur_ns, 36);
    CHECK_EQ_INT(e.correlation, 1482);
    CHECK_EQ_INT(e.flow, 's');

    /* A call that queues no GPU work starts no flow. */
    a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&a, &e), 1);
    CHECK_EQ_STR(e.name, "cudaGetDevice");
    CHECK_EQ_INT(e.flow, 0);

    /* Driver calls keep their base name too. */
    a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    a.cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&a, &e), 1);
    CHECK_EQ_STR(e.name, "cuMemcpyHtoD");
    CHECK_EQ_STR(e.cat, "cuda_driver");
    CHECK_EQ_INT(e.flow, 's');
    free(c);
}

TEST(cupti_external_correlation_maps_kernel_and_launch_to_host_range)
{
    ts__cupti_conv *c = new_conv();
    CHECK(c);
    CUpti_ActivityExternalCorrelation x;
    memset(&x, 0, sizeof x);
    x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    x.externalId = 513, x.correlationId = 1482;
    ts__gpu_event e;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&x, &e), 0);

    CUpti_ActivityKernel10 k = kernel_rec(1482);
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&k, &e), 1);
    CHECK_EQ_INT(e.external_id, 513);
    /* A correlation id that shares the slot but is another launch is not mapped. */
    k = kernel_rec(1482 + TS_CUPTI_EXT_SLOTS);
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&k, &e), 1);
    CHECK_EQ_INT(e.external_id, -1);
    free(c);
}

TEST(cupti_sync_records_take_device_from_context_and_no_stream_as_minus_one)
{
    ts__cupti_conv *c = new_conv();
    CHECK(c);
    CUpti_ActivityContext3 ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    ctx.contextId = 1, ctx.deviceId = 3;
    ts__gpu_event e;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&ctx, &e), 0);

    CUpti_ActivitySynchronization2 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    s.start = 1000000 + 1000, s.end = 1000000 + 20000;
    s.correlationId = 1424, s.contextId = 1;
    s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&s, &e), 1);
    CHECK_EQ_STR(e.name, "Context Sync");
    CHECK_EQ_STR(e.cat, "cuda_sync");
    CHECK_EQ_INT(e.pid, 3);
    CHECK_EQ_INT(e.tid, -1);
    CHECK_EQ_INT(e.wait_event_id, -1);
    CHECK_EQ_INT(e.dur_ns, 19000);
    CHECK_EQ_INT(e.flow, 0);

    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
    s.streamId = 24, s.cudaEventId = 19, s.contextId = 99; /* unknown context */
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&s, &e), 1);
    CHECK_EQ_STR(e.name, "Stream Wait Event");
    CHECK_EQ_INT(e.tid, 24);
    CHECK_EQ_INT(e.wait_event_id, 19);
    CHECK_EQ_INT(e.device, -1);
    free(c);
}

static CUpti_ActivityMarker2 marker_rec(uint32_t flags, uint32_t id, uint64_t ts, const char *name)
{
    CUpti_ActivityMarker2 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = (CUpti_ActivityFlag)flags;
    m.id = id, m.timestamp = ts, m.name = name, m.domain = NULL;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.processId = 42, m.objectId.pt.threadId = 43;
    return m;
}

TEST(cupti_nvtx_range_pairs_start_with_end_and_counts_orphan_ends)
{
    ts__cupti_conv *c = new_conv();
    CHECK(c);
    ts__gpu_event e;
    CUpti_ActivityMarker2 m = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_START, 5, 1000000 + 100, "ProfilerStep#3");
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&m, &e), 0);
    m = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_END, 5, 1000000 + 900, NULL);
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&m, &e), 1);
    CHECK_EQ_STR(e.name, "ProfilerStep#3");
    CHECK_EQ_STR(e.cat, "user_annotation");
    CHECK_EQ_INT(e.ts_ns, 5100);
    CHECK_EQ_INT(e.dur_ns, 800);
    CHECK_EQ_INT(e.pid, 42);
    CHECK_EQ_INT(e.tid, 43);
    /* The same end again has no open range any more. */
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&m, &e), 0);
    CHECK_EQ_INT(c->n_unpaired_markers, 1);

    m = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 6, 1000000 + 50, "checkpoint");
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&m, &e), 1);
    CHECK_EQ_INT(e.phase, 'i');
    CHECK_EQ_STR(e.name, "checkpoint");
    CHECK_EQ_INT(e.ts_ns, 5050);
    free(c);
}

TEST(cupti_clock_applies_offset_then_drift_from_second_sample)
{
    ts__cupti_clock k;
    ts__cupti_clock_init(&k, 1000000000, 50);
    CHECK_EQ_INT(ts__cupti_clock_to_host(&k, 1000000000), 50);
    CHECK_EQ_INT(ts__cupti_clock_to_host(&k, 1000001000), 1050);
    /* Host clock ran 10 ppm fast over 10 s of CUPTI time. */
    ts__cupti_clock_refit(&k, 11000000000LL, 50 + 10000100000LL);
    CHECK_EQ_INT(ts__cupti_clock_to_host(&k, 11000000000LL), 50 + 10000100000LL);
    CHECK_EQ_INT(ts__cupti_clock_to_host(&k, 6000000000LL), 50 + 5000050000LL);
    /* Records from before the first sample map backwards on the same line. */
    CHECK_EQ_INT(ts__cupti_clock_to_host(&k, 999000000), 50 - 1000010);
    /* A second sample too close to the first keeps the fitted rate. */
    double rate = k.rate;
    ts__cupti_clock_refit(&k, 1000000500, 600);
    CHECK_NEAR(k.rate, rate, 0);
}

static CUpti_ActivityMemory4 memory_rec(int alloc, uint64_t addr, uint64_t bytes, uint64_t ts)
{
    CUpti_ActivityMemory4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                  : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    m.address = addr, m.bytes = bytes, m.timestamp = ts;
    m.processId = 4242, m.deviceId = 1, m.contextId = 3, m.correlationId = 17;
    return m;
}

TEST(cupti_memory_records_become_memory_instants_with_running_total)
{
    ts__cupti_conv *c = new_conv();
    CHECK(c);
    ts__gpu_event e;
    CUpti_ActivityMemory4 m = memory_rec(1, 0x7f0000, 1 << 20, 1000000 + 10);
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&m, &e), 1);
    m = memory_rec(1, 0x800000, 4096, 1000000 + 20);
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&m, &e), 1);
    CHECK_EQ_INT(e.mem_total, (1 << 20) + 4096);
    m = memory_rec(0, 0x7f0000, 1 << 20, 1000000 + 30);
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&m, &e), 1);
    CHECK_EQ_STR(e.name, "[memory]");
    CHECK_EQ_INT(e.phase, 'i');
    CHECK_EQ_INT(e.ts_ns, 5030);
    CHECK_EQ_INT(e.pid, 4242);
    CHECK_EQ_INT(e.tid, 4242);
    CHECK_EQ_INT(e.mem_delta, -(1 << 20));
    CHECK_EQ_INT(e.mem_total, 4096);
    ts_trace_arg args[TS_CUPTI_MAX_ARGS];
    char strs[TS_CUPTI_MAX_ARGS][TS_CUPTI_STR_BYTES];
    ts_trace_event ev;
    ts__cupti_to_event(&e, args, strs, &ev);
    uint32_t kept = ev.n_args < TS_TRACE_MAX_ARGS ? ev.n_args : TS_TRACE_MAX_ARGS;
    int64_t bytes = 0, total = -1, addr = 0, dev = -1;
    for (uint32_t i = 0; i < kept; i++) {
        if (!strcmp(args[i].key, "Bytes")) bytes = args[i].num;
        if (!strcmp(args[i].key, "Total Allocated")) total = args[i].num;
        if (!strcmp(args[i].key, "Addr")) addr = args[i].num;
        if (!strcmp(args[i].key, "Device Id")) dev = args[i].num;
    }
    CHECK_EQ_INT(bytes, -(1 << 20));
    CHECK_EQ_INT(total, 4096);
    CHECK_EQ_INT(addr, 0x7f0000);
    CHECK_EQ_INT(dev, 1);
    free(c);
}

TEST(cupti_unconverted_kinds_are_counted_not_emitted)
{
    ts__cupti_conv *c = new_conv();
    CHECK(c);
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    ts__gpu_event e;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&a, &e), 0);
    CHECK_EQ_INT(c->n_unknown, 1);
    free(c);
}
static const ts_trace_arg *find_arg(const ts_trace_event *ev, const char *key)
{
    for (uint32_t i = 0; i < ev->n_args; i++)
        if (strcmp(ev->args[i].key, key) == 0)
            return &ev->args[i];
    return NULL;
}

TEST(cupti_kernel_event_carries_kineto_args_and_ac2g_flow_end)
{
    ts__cupti_conv *c = new_conv();
    CHECK(c);
    CUpti_ActivityKernel10 k = kernel_rec(27);
    ts__gpu_event e;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&k, &e), 1);
    ts_trace_arg args[TS_CUPTI_MAX_ARGS];
    char strs[TS_CUPTI_MAX_ARGS][TS_CUPTI_STR_BYTES];
    ts_trace_event ev;
    ts__cupti_to_event(&e, args, strs, &ev);
    CHECK_EQ_INT(ev.phase, 'X');
    CHECK_EQ_STR(ev.cat, "kernel");
    CHECK_EQ_INT(ev.pid, 1);
    CHECK_EQ_INT(ev.tid, 20);
    CHECK_EQ_INT(ev.flow_id, 27);
    CHECK_EQ_INT(ev.flow_phase, 'f');
    CHECK(ev.flow_cat == NULL);   /* the host API's default, "ac2g" */
    const ts_trace_arg *a = find_arg(&ev, "correlation");
    CHECK(a && !a->str && a->num == 27);
    a = find_arg(&ev, "grid");
    CHECK(a && a->str);
    CHECK_EQ_STR(a->str, "[8, 16, 5]");
    a = find_arg(&ev, "stream");
    CHECK(a && a->num == 20);
    a = find_arg(&ev, "shared memory");
    CHECK(a && a->num == 12800);
    /* What the host API keeps (TS_TRACE_MAX_ARGS) starts with the ids. */
    CHECK(TS_TRACE_MAX_ARGS >= 2);
    CHECK_EQ_STR(ev.args[0].key, "correlation");
    free(c);
}

TEST(cupti_context_sync_goes_on_stream_zero_keeping_stream_arg_minus_one)
{
    ts__gpu_event e;
    memset(&e, 0, sizeof e);
    e.type = TS_GPU_EV_SYNC, e.phase = 'X', e.name = "Context Sync", e.cat = "cuda_sync";
    e.pid = e.device = 0, e.tid = e.stream = -1, e.correlation = 9, e.external_id = -1;
    e.context = 1, e.wait_event_id = -1, e.cbid = -1;
    ts_trace_arg args[TS_CUPTI_MAX_ARGS];
    char strs[TS_CUPTI_MAX_ARGS][TS_CUPTI_STR_BYTES];
    ts_trace_event ev;
    ts__cupti_to_event(&e, args, strs, &ev);
    CHECK_EQ_INT(ev.tid, 0);
    CHECK_EQ_INT(ev.flow_id, 0);
    const ts_trace_arg *a = find_arg(&ev, "stream");
    CHECK(a && a->num == -1);
    a = find_arg(&ev, "cuda_sync_kind");
    CHECK(a && a->str);
    CHECK_EQ_STR(a->str, "Context Sync");
}

typedef struct seen { int n; int64_t corr[8]; char cat[8][16]; } seen;
static void keep_event(void *ud, const ts__gpu_event *e)
{
    seen *s = ud;
    if (s->n < 8) {
        s->corr[s->n] = e->correlation;
        snprintf(s->cat[s->n], sizeof s->cat[0], "%s", e->cat);
    }
    s->n++;
}

/* A completed buffer as CUPTI hands it over: records back to back, each
 * padded to 8 bytes, walked by CUPTI's own cuptiActivityGetNextRecord. */
TEST(cupti_completed_buffer_is_walked_record_by_record)
{
    ts__cupti_conv *c = new_conv();
    CHECK(c);
    uint8_t *buf = aligned_alloc(8, 4096);
    CHECK(buf);
    memset(buf, 0, 4096);
    size_t off = 0;
    CUpti_ActivityExternalCorrelation x;
    memset(&x, 0, sizeof x);
    x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, x.externalId = 77, x.correlationId = 5;
    memcpy(buf + off, &x, sizeof x), off += (sizeof x + 7) & ~(size_t)7;
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME, a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    a.start = 1000010, a.end = 1000020, a.correlationId = 5;
    memcpy(buf + off, &a, sizeof a), off += (sizeof a + 7) & ~(size_t)7;
    CUpti_ActivityKernel10 k = kernel_rec(5);
    memcpy(buf + off, &k, sizeof k), off += (sizeof k + 7) & ~(size_t)7;
    seen s;
    memset(&s, 0, sizeof s);
    CHECK_EQ_INT(ts__cupti_process_buffer(c, buf, off, keep_event, &s), 2);
    CHECK_EQ_INT(s.n, 2);
    CHECK_EQ_STR(s.cat[0], "cuda_runtime");
    CHECK_EQ_STR(s.cat[1], "kernel");
    CHECK_EQ_INT(s.corr[1], 5);
    CHECK_EQ_INT(ts__cupti_process_buffer(c, buf, 0, keep_event, &s), 0);
    free(buf);
    free(c);
}

/* ---- cross-stream waits: CUDA event records -> wait_on_stream and the
 * cudaEventRecord's correlation on Event Sync / Stream Wait Event ---- */

static CUpti_ActivityCudaEvent2 event_rec(uint32_t corr, uint32_t stream, uint32_t event_id, uint64_t sync_id)
{
    CUpti_ActivityCudaEvent2 x;
    memset(&x, 0, sizeof x);
    x.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
    x.correlationId = corr, x.contextId = 1, x.streamId = stream, x.eventId = event_id;
    x.deviceId = 0, x.cudaEventSyncId = sync_id;
    return x;
}

static CUpti_ActivitySynchronization2 wait_rec(uint32_t corr, uint32_t stream, uint32_t event_id, uint64_t sync_id)
{
    CUpti_ActivitySynchronization2 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
    s.start = 1000000 + 130, s.end = 1000000 + 135;
    s.correlationId = corr, s.contextId = 1, s.streamId = stream, s.cudaEventId = event_id;
    s.cudaEventSyncId = sync_id;
    return s;
}

TEST(cupti_stream_wait_event_names_recorded_stream_and_record_correlation)
{
    ts__cupti_conv *c = new_conv();
    CHECK(c);
    ts__gpu_event e;
    CUpti_ActivityCudaEvent2 x = event_rec(2, 7, 5, 99);
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&x, &e), 0);
    /* The same event recorded again on stream 9 (a later sync id). */
    x = event_rec(6, 9, 5, 100);
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&x, &e), 0);
    CUpti_ActivitySynchronization2 s = wait_rec(3, 13, 5, 99);
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&s, &e), 1);
    CHECK_EQ_INT(e.wait_on_stream, 7);       /* the record the wait named, not the latest */
    CHECK_EQ_INT(e.wait_record_corr, 2);
    ts_trace_arg args[TS_CUPTI_MAX_ARGS];
    char strs[TS_CUPTI_MAX_ARGS][TS_CUPTI_STR_BYTES];
    ts_trace_event ev;
    ts__cupti_to_event(&e, args, strs, &ev);
    const ts_trace_arg *a = find_arg(&ev, "wait_on_stream");
    CHECK(a && !a->str && a->num == 7);
    a = find_arg(&ev, "wait_on_cuda_event_record_corr_id");
    CHECK(a && !a->str && a->num == 2);
    a = find_arg(&ev, "wait_on_cuda_event_id");
    CHECK(a && a->num == 5);
    /* Without a sync id the event's latest record answers (Kineto's key). */
    s = wait_rec(4, 13, 5, CUPTI_SYNCHRONIZATION_INVALID_VALUE);
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&s, &e), 1);
    CHECK_EQ_STR(e.name, "Event Sync");
    CHECK_EQ_INT(e.wait_on_stream, 9);
    CHECK_EQ_INT(e.wait_record_corr, 6);
    /* Stream and context syncs name no record. */
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&s, &e), 1);
    ts__cupti_to_event(&e, args, strs, &ev);
    CHECK(find_arg(&ev, "wait_on_stream") == NULL);
    free(c);
}

TEST(cupti_wait_before_its_event_record_is_held_until_the_record_or_the_final_drain)
{
    ts__cupti_conv *c = new_conv();
    CHECK(c);
    ts__gpu_event e;
    seen got;
    memset(&got, 0, sizeof got);
    /* Collector without CUDA event records: nothing to wait for, written at once as unknown. */
    CUpti_ActivitySynchronization2 s = wait_rec(3, 13, 5, 99);
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&s, &e), 1);
    CHECK_EQ_INT(e.wait_on_stream, -1);
    CHECK_EQ_INT(e.wait_record_corr, -1);
    CHECK_EQ_INT(c->n_unresolved_waits, 1);

    c->defer_waits = 1;
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&s, &e), 0);   /* held */
    s = wait_rec(8, 13, 6, 200);                                               /* its record never comes */
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&s, &e), 0);
    CHECK_EQ_INT(c->n_pending, 2);
    CHECK_EQ_INT(ts__cupti_drain(c, 0, keep_event, &got), 0);                  /* nothing resolved yet */
    CUpti_ActivityCudaEvent2 x = event_rec(2, 7, 5, 99);
    CHECK_EQ_INT(ts__cupti_convert(c, (const CUpti_Activity *)&x, &e), 0);
    CHECK_EQ_INT(ts__cupti_drain(c, 0, keep_event, &got), 1);
    CHECK_EQ_INT(got.n, 1);
    CHECK_EQ_INT(got.corr[0], 3);
    CHECK_EQ_INT(c->n_pending, 1);
    CHECK_EQ_INT(ts__cupti_drain(c, 1, keep_event, &got), 1);                  /* exit: the rest, unknown */
    CHECK_EQ_INT(got.corr[1], 8);
    CHECK_EQ_INT(c->n_pending, 0);
    CHECK_EQ_INT(c->n_unresolved_waits, 2);
    free(c);
}

static void emit_gpu_event(void *ud, const ts__gpu_event *e)
{
    ts_trace_arg args[TS_CUPTI_MAX_ARGS];
    char strs[TS_CUPTI_MAX_ARGS][TS_CUPTI_STR_BYTES];
    ts_trace_event ev;
    (void)ud;
    ts__cupti_to_event(e, args, strs, &ev);
    (void)ts_trace_emit(&ev);
}

static size_t put_rec(uint8_t *buf, size_t off, const void *rec, size_t size)
{
    memcpy(buf + off, rec, size);
    return off + ((size + 7) & ~(size_t)7);
}

static CUpti_ActivityAPI api_rec(uint32_t cbid, uint32_t corr, uint64_t start)
{
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME, a.cbid = cbid;
    a.start = 1000000 + start, a.end = 1000000 + start + 5;
    a.processId = 4100, a.threadId = 4101, a.correlationId = corr;
    return a;
}

/* The whole way: CUPTI records (the waits in the buffer before their event
 * record) -> converter -> host tracing runtime -> JSON -> `trainscope
 * critical-path`, whose graph must hold the cross-stream edge: kernel 1 on
 * stream 7 (before the record) -> kernel 4 on stream 13 (after the wait),
 * and the host sync edge kernel 1 -> the cudaEventSynchronize waiting for
 * the same event. */
TEST(cupti_recorded_stream_wait_becomes_a_stream_wait_edge_in_the_graph)
{
    char dir[] = "/tmp/ts_cupti_wait_XXXXXX";
    CHECK(mkdtemp(dir));
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    ts__cupti_conv *c = new_conv();
    uint8_t *buf = aligned_alloc(8, 8192);
    CHECK(c && buf);
    c->defer_waits = 1;
    memset(buf, 0, 8192);
    size_t off = 0;
    CUpti_ActivityContext3 ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.kind = CUPTI_ACTIVITY_KIND_CONTEXT, ctx.contextId = 1, ctx.deviceId = 0;
    off = put_rec(buf, off, &ctx, sizeof ctx);
    CUpti_ActivityAPI a = api_rec(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, 100);
    off = put_rec(buf, off, &a, sizeof a);
    a = api_rec(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, 2, 120);
    off = put_rec(buf, off, &a, sizeof a);
    a = api_rec(CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, 3, 130);
    off = put_rec(buf, off, &a, sizeof a);
    a = api_rec(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 4, 140);
    off = put_rec(buf, off, &a, sizeof a);
    a = api_rec(CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, 5, 160);
    a.end = 1000000 + 320;   /* returns after kernel 1 ends at 300 */
    off = put_rec(buf, off, &a, sizeof a);
    CUpti_ActivityKernel10 k = kernel_rec(1);
    k.deviceId = 0, k.contextId = 1, k.streamId = 7, k.start = 1000000 + 200, k.end = 1000000 + 300;
    off = put_rec(buf, off, &k, sizeof k);
    k = kernel_rec(4);
    k.deviceId = 0, k.contextId = 1, k.streamId = 13, k.start = 1000000 + 310, k.end = 1000000 + 400;
    off = put_rec(buf, off, &k, sizeof k);
    CUpti_ActivitySynchronization2 s = wait_rec(3, 13, 5, 99);
    off = put_rec(buf, off, &s, sizeof s);
    s = wait_rec(5, CUPTI_SYNCHRONIZATION_INVALID_VALUE, 5, 99);
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
    s.start = 1000000 + 160, s.end = 1000000 + 320;
    off = put_rec(buf, off, &s, sizeof s);
    CUpti_ActivityCudaEvent2 x = event_rec(2, 7, 5, 99);
    off = put_rec(buf, off, &x, sizeof x);
    CHECK_EQ_INT(ts__cupti_process_buffer(c, buf, off, emit_gpu_event, NULL), 9);
    CHECK_EQ_INT(ts__cupti_drain(c, 1, emit_gpu_event, NULL), 0);
    CHECK_EQ_INT(c->n_unresolved_waits, 0);
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    free(buf);
    free(c);
    char cmd[1024], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "%s critical-path --format json %s/*.json | /usr/bin/python3 -c '"
             "import json, sys; e = json.load(sys.stdin)[\"edges_by_kind\"]; "
             "print(e.get(\"stream_wait\", 0), e.get(\"host_sync\", 0))'; "
             "rm -rf %s", ts_test_cli(), dir, dir);
    CHECK_EQ_INT(ts_test_run(cmd, &out), 0);
    CHECK(out && strcmp(out, "1 1\n") == 0);
    free(out);
}

/* No GPU driver here: the collector must leave the program alone and say in
 * the trace that it could not attach. */
TEST(cupti_collector_without_driver_says_so_in_trace_and_keeps_exit_code)
{
    char bin[1024];
    snprintf(bin, sizeof bin, "%s", ts_test_cli());
    char *slash = strrchr(bin, '/');
    CHECK(slash);
    *slash = '\0';
    char dir[] = "/tmp/ts_cupti_XXXXXX";
    CHECK(mkdtemp(dir));
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "TRAINSCOPE_DIR=%s LD_PRELOAD=\"%s/libtrainscope-preload.so %s/libtrainscope-cuda.so\" "
             "sh -c 'echo out; exit 3'", dir, bin, bin);
    char *out = NULL;
    CHECK_EQ_INT(ts_test_run(cmd, &out), 3);
    CHECK(out && strcmp(out, "out\n") == 0);
    free(out);
    snprintf(cmd, sizeof cmd, "cat %s/*.json; rm -rf %s", dir, dir);
    CHECK_EQ_INT(ts_test_run(cmd, &out), 0);
    CHECK(out && strstr(out, "cuda collector could not attach"));
    free(out);
    /* NVTX is routed to CUPTI for the program (and its children). */
    snprintf(cmd, sizeof cmd,
             "TRAINSCOPE_DIR=%s LD_PRELOAD=\"%s/libtrainscope-preload.so %s/libtrainscope-cuda.so\" "
             "sh -c 'echo $NVTX_INJECTION64_PATH'; rm -rf %s", dir, bin, bin, dir);
    CHECK_EQ_INT(ts_test_run(cmd, &out), 0);
    CHECK(out && strstr(out, "libcupti.so"));
    free(out);
}
/* The CUDA_INJECTION64_PATH way in, with the driver's call made by hand:
 * loading alone must not attach (the driver decides when), and
 * InitializeInjection must report success to the driver even when CUPTI
 * cannot attach, leaving one "could not attach" instant in the trace. */
TEST(cupti_injection_entry_attaches_once_when_the_driver_calls_it)
{
    char bin[1024];
    snprintf(bin, sizeof bin, "%s", ts_test_cli());
    char *slash = strrchr(bin, '/');
    CHECK(slash);
    *slash = '\0';
    char dir[] = "/tmp/ts_cupti_inj_XXXXXX";
    CHECK(mkdtemp(dir));
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "TRAINSCOPE_DIR=%s CUDA_INJECTION64_PATH=%s/libtrainscope-cuda.so "
             "LD_PRELOAD=%s/libtrainscope-preload.so /usr/bin/python3 -c \""
             "import ctypes; lib = ctypes.CDLL('%s/libtrainscope-cuda.so'); "
             "print(lib.InitializeInjection(), lib.InitializeInjection())\"", dir, bin, bin, bin);
    CHECK_EQ_INT(ts_test_run(cmd, &out), 0);
    CHECK(out && strcmp(out, "1 1\n") == 0);
    free(out);
    snprintf(cmd, sizeof cmd, "grep -c 'cuda collector could not attach' %s/*.json; rm -rf %s", dir, dir);
    CHECK_EQ_INT(ts_test_run(cmd, &out), 0);
    CHECK(out && strcmp(out, "1\n") == 0);
    free(out);
}

/* ---- host ranges -> external correlation (cupti_ranges.c) ----
 * The collector's attach state and CUPTI's external-id stack are stood in
 * for here (no GPU, so CUPTI cannot attach); the host tracing runtime is the
 * real one, and the ranges are read back from the JSON it writes. */
static int fake_attached;
static uint64_t ext_stack[16], ext_popped[16];
static int ext_depth, n_popped;
int ts__cupti_attached(void) { return fake_attached; }
void ts_cuda_external_push(uint64_t id) { ext_stack[ext_depth++] = id; }
void ts_cuda_external_pop(void) { ext_popped[n_popped++] = ext_stack[--ext_depth]; }

/* The JSON line of the event named `name` (static buffer), or NULL. */
static const char *json_line(const char *json, const char *name)
{
    static char line[1024];
    char key[128];
    snprintf(key, sizeof key, "\"name\":\"%s\"", name);
    const char *hit = strstr(json, key);
    if (!hit)
        return NULL;
    const char *b = hit, *e = strchr(hit, '\n');
    while (b > json && b[-1] != '\n')
        b--;
    size_t n = e ? (size_t)(e - b) : strlen(b);
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), b);
    return line;
}

TEST(cupti_host_ranges_carry_external_ids_pushed_to_cupti_once_attached)
{
    char dir[] = "/tmp/ts_cupti_rng_XXXXXX";
    CHECK(mkdtemp(dir));
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    fake_attached = 0;
    ts_trace_push("cpu_op", "before_attach");
    fake_attached = 1;
    ts_trace_push("cpu_op", "outer");
    ts_trace_push("cpu_op", "inner");
    CHECK_EQ_INT(ext_depth, 2);
    ts_trace_pop();
    ts_trace_pop();
    ts_trace_pop();                       /* before_attach: straight to the runtime */
    CHECK_EQ_INT(ext_depth, 0);
    CHECK_EQ_INT(n_popped, 2);
    CHECK(ext_popped[0] == ext_stack[1] && ext_popped[1] == ext_stack[0]);
    CHECK(ext_popped[1] < ext_popped[0]); /* ids grow */
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    char cmd[256], *json = NULL;
    snprintf(cmd, sizeof cmd, "cat %s/*.json; rm -rf %s", dir, dir);
    CHECK_EQ_INT(ts_test_run(cmd, &json), 0);
    CHECK(json);
    char want[64];
    const char *l = json_line(json, "inner");
    snprintf(want, sizeof want, "\"External id\":%llu", (unsigned long long)ext_popped[0]);
    CHECK(l && strstr(l, want));
    l = json_line(json, "outer");
    snprintf(want, sizeof want, "\"External id\":%llu", (unsigned long long)ext_popped[1]);
    CHECK(l && strstr(l, want));
    l = json_line(json, "before_attach");
    CHECK(l && !strstr(l, "External id"));
    free(json);
}
#endif
