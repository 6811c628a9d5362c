/* test_cupti.c - the CUDA collector's record conversion, fed CUPTI activity
 * records built in memory with the struct versions of the installed headers
 * (no GPU needed: CUPTI's record walker and callback-name table work without
 * one). Built only when the CUPTI headers were found (TS_HAVE_CUPTI, set by
 * src/capture/module.mk); otherwise this binary holds no tests.
 */
#include "test.h"

#ifdef TS_HAVE_CUPTI
#include <stdlib.h>

#include "capture/cupti.h"

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
#endif
