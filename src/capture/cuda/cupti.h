/* cupti.h - the CUDA collector's record conversion: CUPTI activity records in,
 * Kineto-shaped trace events out (internal to src/capture/cupti*.c and tests).
 *
 * Not for: talking to CUPTI (subscription, buffers, injection live in
 * cupti.c). Conversion is a pure function of the record and a small converter
 * state (clock mapping, recent external correlations, open NVTX ranges, the
 * context -> device table), so tests feed it records built in memory.
 *
 * Invariants: every produced time is host CLOCK_MONOTONIC nanoseconds (the
 * clock ts__now_ns() reads); GPU work goes on pid = device, tid = stream and
 * API calls on pid = process, tid = thread, as Kineto writes them.
 */
#ifndef TS_CAPTURE_CUPTI_H
#define TS_CAPTURE_CUPTI_H

#include <stdint.h>
#include <cupti.h>

#include "trainscope/trace.h"

/* CUPTI's clock -> host clock, a line through two (cupti, host) samples:
 * host = host0 + (cupti - cupti0) * rate. One sample gives rate 1 (offset
 * only); the second, taken at flush, corrects drift between the clocks. */
typedef struct ts__cupti_clock {
    int64_t cupti0_ns;   /* CUPTI timestamp of the first sample */
    int64_t host0_ns;    /* host monotonic time of the first sample */
    double  rate;        /* host ns per CUPTI ns; 1.0 until a second sample */
} ts__cupti_clock;

void    ts__cupti_clock_init(ts__cupti_clock *c, int64_t cupti_ns, int64_t host_ns);
/* Refit the rate from a later sample; ignored when it is not later. */
void    ts__cupti_clock_refit(ts__cupti_clock *c, int64_t cupti_ns, int64_t host_ns);
int64_t ts__cupti_clock_to_host(const ts__cupti_clock *c, uint64_t cupti_ns);

typedef enum ts__gpu_event_type {
    TS_GPU_EV_KERNEL = 1,
    TS_GPU_EV_MEMCPY,
    TS_GPU_EV_MEMSET,
    TS_GPU_EV_SYNC,           /* cuda_sync: stream/event/context sync, stream wait event */
    TS_GPU_EV_RUNTIME,        /* cuda_runtime API call */
    TS_GPU_EV_DRIVER,         /* cuda_driver API call */
    TS_GPU_EV_MARKER_RANGE,   /* NVTX push/pop or start/end range */
    TS_GPU_EV_MARKER_INSTANT, /* NVTX mark */
    TS_GPU_EV_MEMORY,         /* cudaMalloc/cudaFree seen by CUPTI: a "[memory]" instant */
} ts__gpu_event_type;

/* One produced event. Strings are borrowed (from the record, the converter
 * or static tables) and valid until the next ts__cupti_convert call. */
typedef struct ts__gpu_event {
    uint8_t     type;          /* ts__gpu_event_type */
    char        phase;         /* 'X' complete, 'i' instant */
    char        flow;          /* ac2g flow end: 's' on a launching API call, 'f' on GPU work, 0 = none */
    const char *name;          /* kernel name, "Memcpy HtoD (Pageable -> Device)", "cudaLaunchKernel", ... */
    const char *cat;           /* Kineto category: "kernel", "gpu_memcpy", "cuda_runtime", ... */
    int64_t     ts_ns;         /* start, host clock */
    int64_t     dur_ns;        /* >= 0; 0 for instants */
    int64_t     pid;           /* device for GPU work, process id for API calls and markers */
    int64_t     tid;           /* stream for GPU work (-1 = none, e.g. context sync), thread id otherwise */
    int64_t     correlation;   /* CUPTI correlation id, -1 = none */
    int64_t     external_id;   /* pushed host range id (external correlation), -1 = none */
    int64_t     device;        /* -1 = unknown */
    int64_t     context;       /* -1 = unknown */
    int64_t     stream;        /* -1 = none */
    uint64_t    bytes;         /* memcpy/memset size, 0 otherwise */
    int32_t     grid[3];       /* kernels: grid dimensions, 0 otherwise */
    int32_t     block[3];      /* kernels: block dimensions, 0 otherwise */
    int32_t     registers;     /* kernels: registers per thread */
    int32_t     shared_bytes;  /* kernels: static + dynamic shared memory per block */
    int32_t     cbid;          /* API calls: CUPTI callback id, -1 otherwise */
    int64_t     wait_event_id; /* sync: CUDA event waited on, -1 = none */
    int64_t     wait_on_stream; /* Event Sync / Stream Wait Event: stream the event was recorded on, -1 = unknown */
    int64_t     wait_record_corr; /* ... and the correlation id of that cudaEventRecord, -1 = unknown */
    uint32_t    return_value;  /* API calls: CUresult/cudaError_t */
    uint64_t    address;       /* memory: the allocation's device address */
    int64_t     mem_delta;     /* memory: +bytes allocated, -bytes released */
    int64_t     mem_total;     /* memory: bytes allocated on the device after it */
} ts__gpu_event;

/* Recent external correlations, direct-mapped by correlation id. CUPTI hands
 * out correlation ids in increasing order, so a table of the last 2^16
 * launches finds every kernel whose launch is less than 65536 launches old,
 * in O(1) and bounded memory (a long job must not grow a map forever). */
#define TS_CUPTI_EXT_SLOTS 65536u
/* Open NVTX ranges, direct-mapped by marker id; names are copied (CUPTI's
 * string lives only as long as its buffer) and cut at 127 bytes. */
#define TS_CUPTI_MARKER_SLOTS 1024u
#define TS_CUPTI_MARKER_NAME 128u
#define TS_CUPTI_CONTEXT_SLOTS 256u
#define TS_CUPTI_DEVICES 64u   /* devices whose allocation totals are kept; more count as device 63 */
/* CUDA event records (cudaEventRecord: which stream, which call), kept in
 * two direct-mapped tables: by the record's unique cudaEventSyncId (the last
 * 4096 records) and by (context, event id) (the latest record of each event,
 * Kineto's key). A wait whose record has not been converted yet (records of
 * other threads may come in later buffers) is held back, at most
 * TS_CUPTI_PENDING_WAITS at a time. */
#define TS_CUPTI_EVENT_SLOTS 4096u
#define TS_CUPTI_PENDING_WAITS 256u

typedef struct ts__cupti_event_rec {
    uint64_t sync_id;      /* cudaEventSyncId of the record */
    uint32_t context;      /* context id */
    uint32_t event_id;     /* CUPTI's event id */
    uint32_t stream;       /* stream the event was recorded on */
    uint32_t correlation;  /* correlation id of the cudaEventRecord call, 0 = empty slot */
} ts__cupti_event_rec;

typedef struct ts__cupti_conv {
    ts__cupti_clock clock;
    uint32_t ext_corr[TS_CUPTI_EXT_SLOTS];  /* correlation id in the slot, 0 = empty */
    uint64_t ext_id[TS_CUPTI_EXT_SLOTS];    /* its external id */
    struct {
        uint32_t id;                 /* marker id, 0 = empty */
        int64_t  start_ns;           /* host clock */
        int64_t  pid, tid;           /* thread that opened it */
        char     name[TS_CUPTI_MARKER_NAME];
    } marker[TS_CUPTI_MARKER_SLOTS];
    int32_t  ctx_device[TS_CUPTI_CONTEXT_SLOTS]; /* context id % slots -> device, -1 = unknown */
    uint32_t ctx_id[TS_CUPTI_CONTEXT_SLOTS];     /* context id held in the slot */
    int64_t  allocated[TS_CUPTI_DEVICES]; /* bytes allocated per device (memory records) */
    ts__cupti_event_rec ev_by_sync[TS_CUPTI_EVENT_SLOTS];  /* slot sync_id % slots */
    ts__cupti_event_rec ev_by_event[TS_CUPTI_EVENT_SLOTS]; /* slot hash(context, event_id) % slots */
    struct {
        ts__gpu_event ev;            /* the converted wait; name and cat are static strings */
        uint64_t sync_id;            /* the record it waits for */
        uint8_t  resolved;           /* 1 = record found, ready to emit */
    } pending[TS_CUPTI_PENDING_WAITS];
    uint32_t n_pending;              /* used entries of pending, in arrival order */
    uint8_t  defer_waits;            /* 1 = CUDA_EVENT records are collected, so waiting for one is worth it */
    char     name_buf[256];          /* API names without their _vNNNN suffix */
    uint64_t n_unknown;              /* records of kinds this converter skips */
    uint64_t n_unpaired_markers;     /* NVTX ends with no start (evicted or lost) */
    uint64_t n_unresolved_waits;     /* event waits written with wait_on_stream -1: record never seen */
} ts__cupti_conv;

/* The state is about 1 MiB: allocate it, never put it on a stack. */
void ts__cupti_conv_init(ts__cupti_conv *c, int64_t cupti_ns, int64_t host_ns);

/* Convert one record. Returns 1 and fills *out when the record makes an
 * event, 0 when it only updates the state (external correlation, NVTX range
 * start, context, CUDA event record) or is of a kind not converted, or when
 * it is an Event Sync / Stream Wait Event held back until its cudaEventRecord
 * arrives (only with defer_waits; ts__cupti_drain hands those out). Never fails. */
int ts__cupti_convert(ts__cupti_conv *c, const CUpti_Activity *rec, ts__gpu_event *out);

/* "HtoD", "DtoH", ... and "Pageable", "Device", ... as Kineto names them. */
const char *ts__cupti_memcpy_kind_name(uint8_t kind);
const char *ts__cupti_memory_kind_name(uint8_t kind);

/* Whether an API call of that name queues GPU work (so it starts an ac2g flow). */
int ts__cupti_api_launches(const char *name);

/* Walk the valid bytes of a completed activity buffer with CUPTI's record
 * walker, converting each record and handing produced events to fn.
 * Returns the number of events produced. */
typedef void (*ts__gpu_event_fn)(void *ud, const ts__gpu_event *e);
uint64_t ts__cupti_process_buffer(ts__cupti_conv *c, uint8_t *buf, size_t valid_bytes,
                                  ts__gpu_event_fn fn, void *ud);
/* Hand held-back waits to fn: those whose record has arrived, or, when
 * final (after the last buffer), all of them, the rest with wait_on_stream
 * and the record's correlation -1 (counted in n_unresolved_waits). Returns
 * the number handed out. */
uint64_t ts__cupti_drain(ts__cupti_conv *c, int final, ts__gpu_event_fn fn, void *ud);

/* Event -> host tracing API event (pure), args in Kineto's names, most
 * useful first so a smaller TS_TRACE_MAX_ARGS drops the least. args must
 * hold TS_CUPTI_MAX_ARGS entries and strs TS_CUPTI_MAX_ARGS strings of
 * TS_CUPTI_STR_BYTES; both must outlive the emit. No stream (a context-wide
 * sync) goes on tid 0 of the device, since the host API reads a negative tid
 * as "the calling thread"; its "stream" arg stays -1. */
#define TS_CUPTI_MAX_ARGS 10
#define TS_CUPTI_STR_BYTES 40
void ts__cupti_to_event(const ts__gpu_event *e, ts_trace_arg *args, char (*strs)[TS_CUPTI_STR_BYTES],
                        ts_trace_event *ev);

/* Exported by libtrainscope-cuda.so (cupti.c). InitializeInjection is the
 * entry the CUDA driver calls for CUDA_INJECTION64_PATH; the push/pop pair
 * makes GPU work launched in between carry "External id" = id. */
TS_API int  InitializeInjection(void);
TS_API void ts_cuda_external_push(uint64_t id);
TS_API void ts_cuda_external_pop(void);
TS_API void ts_cuda_yield(void);
/* Non-zero once the collector is attached (cupti.c). */
int ts__cupti_attached(void);

#endif
