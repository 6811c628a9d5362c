/* views.h - the views of Trace Compass's analyses (seed 003) over a loaded
 * trace: call stacks per thread with their flame-graph aggregation, allocator
 * state over time (Kineto [memory] events, PyTorch allocator snapshots),
 * memory transfers per direction, GPU stream queue lengths, and communication
 * latency per collective kind and per peer (with MPI send/recv pairs).
 *
 * Not for: drawing them; src/report/views*.c writes tables, JSON, CSV and
 * HTML fragments from these values.
 *
 * Ownership: each ts_view_<name>_create fills a result the caller releases
 * with the matching _destroy. Results borrow the trace's strings (op, thread
 * and kernel names): destroy a result before its trace. Times are int64
 * nanoseconds on each rank's own clock; sizes in bytes.
 * Over-time series are cut into n_bins equal bins over the series' own time
 * range [bin_start_ns, bin_start_ns + n_bins * bin_ns); the last bin also
 * holds the range's end.
 */
#ifndef TRAINSCOPE_VIEWS_H
#define TRAINSCOPE_VIEWS_H

#include <stdio.h>

#include "trainscope/common.h"
#include "trainscope/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options every view takes; zero = defaults. Grows only at the end. */
typedef struct ts_views_opts {
    size_t   size;     /* sizeof(ts_views_opts) */
    uint32_t n_bins;   /* time bins of over-time series; 0 = 20 */
    bool     one_rank; /* only the rank numbered `rank` (false: every rank) */
    int32_t  rank;
    bool     one_thread; /* callstack: only threads with this tid (false: every thread) */
    int64_t  tid;
} ts_views_opts;

#define TS_VIEWS_DEFAULT_BINS 20

/* ---- callstack: per CPU thread, its ops nested in time ---- */
typedef struct ts_cs_thread {
    int32_t     rank;          /* rank number, -1 = unknown */
    int64_t     pid, tid;      /* as in the file */
    const char *name;          /* thread name, "" = none */
    uint64_t    first_frame, n_frames; /* rows of frames[], in start order */
    uint16_t    max_depth;     /* deepest nesting (0 = flat) */
    int64_t     busy_ns;       /* sum of its top-level ops' durations */
} ts_cs_thread;
typedef struct ts_cs_frame {
    uint32_t    thread;        /* row of threads[] */
    uint16_t    depth;         /* 0 = top level */
    uint64_t    parent;        /* row of frames[], UINT64_MAX = top level */
    const char *name;
    int64_t     start_ns, dur_ns;
    int64_t     self_ns;       /* dur - time covered by its children (>= 0) */
} ts_cs_frame;
/* The flame graph: frames merged by stack path (root to frame, names), over
 * every thread shown. Nodes are in depth-first order, siblings by total time
 * descending, so a node's children follow it, each subtree contiguous. */
typedef struct ts_cs_node {
    uint32_t    parent;        /* row of nodes[], UINT32_MAX = a root */
    uint16_t    depth;         /* 0 = a top-level op */
    const char *name;          /* owned by the result */
    int64_t     total_ns;      /* sum of the durations of the frames on this path */
    int64_t     self_ns;       /* sum of their self times */
    uint64_t    calls;         /* frames on this path */
    uint32_t    subtree_end;   /* one past the last row of this node's subtree */
} ts_cs_node;
typedef struct ts_view_callstack {
    uint32_t      n_threads;
    ts_cs_thread *threads;
    uint64_t      n_frames;
    ts_cs_frame  *frames;
    uint32_t      n_nodes;
    ts_cs_node   *nodes;
    int64_t       total_ns;    /* sum of the roots' total_ns */
} ts_view_callstack;
TS_API TS_NODISCARD int ts_view_callstack_create(const ts_job *t, const ts_views_opts *opt,
                                                 ts_view_callstack **out, ts_error *err);
TS_API void ts_view_callstack_destroy(ts_view_callstack *v);

/* ---- allocator: bytes in use over time, sizes, segments and blocks ---- */
#define TS_ALLOC_SIZE_BINS 64   /* bin k: sizes in [2^k, 2^(k+1)); bin 0 also holds size 0 */
typedef struct ts_alloc_point {
    int64_t t_ns;              /* event time */
    int64_t bytes;             /* in use after the event */
    int64_t reserved_bytes;    /* reserved by the allocator after it, -1 = unknown */
} ts_alloc_point;
typedef struct ts_alloc_bin {
    int64_t  max_bytes;        /* most in use during the bin (carried in from the bin before) */
    int64_t  end_bytes;        /* in use at its end */
    uint64_t n_allocs, n_frees;
    int64_t  alloc_bytes;      /* bytes allocated in it */
} ts_alloc_bin;
/* One allocator: a (rank, device) of [memory] events, or a snapshot's device. */
typedef struct ts_alloc_series {
    int32_t  rank;             /* rank number; -1 for a snapshot */
    int32_t  device_type;      /* Kineto "Device Type": 0 CPU, 1 CUDA; 1 for a snapshot */
    int32_t  device_id;        /* -1 = none (CPU) */
    uint64_t n_allocs, n_frees;
    int64_t  start_bytes;      /* in use before the first event */
    int64_t  peak_bytes;       /* most in use at once */
    int64_t  peak_ns;          /* when, -1 = before the first event */
    int64_t  peak_reserved_bytes; /* most reserved, -1 = unknown */
    int64_t  end_bytes;        /* in use after the last event */
    uint64_t size_count[TS_ALLOC_SIZE_BINS];  /* allocations by size bin */
    int64_t  size_bytes[TS_ALLOC_SIZE_BINS];  /* their bytes */
    uint64_t first_point, n_points;           /* rows of points[], time order */
    int64_t  bin_start_ns, bin_ns;            /* bins: bins[first_bin .. + n_bins) */
    uint32_t first_bin;
} ts_alloc_series;
/* Segments and blocks as PyTorch's caching allocator has them (snapshots only). */
typedef struct ts_alloc_block {
    uint64_t    addr;
    int64_t     bytes, requested_bytes;
    const char *state;         /* "active_allocated", "active_pending_free", "inactive" */
} ts_alloc_block;
typedef struct ts_alloc_segment {
    int32_t     device;
    const char *pool;          /* segment_type: "large" or "small" ("" = not said) */
    uint64_t    addr;
    int64_t     total_bytes, allocated_bytes, requested_bytes;
    int64_t     stream;
    uint32_t    first_block, n_blocks;   /* rows of blocks[] */
    int64_t     largest_free_bytes;      /* largest inactive block */
} ts_alloc_segment;
/* A segment set: the segments of one (device, pool). */
typedef struct ts_alloc_set {
    int32_t     device;
    const char *pool;
    uint32_t    n_segments, n_blocks, n_free_blocks;
    int64_t     reserved_bytes, allocated_bytes;
    int64_t     free_bytes;              /* sum of inactive blocks */
    int64_t     largest_free_bytes;
    double      fragmentation;           /* 1 - largest free / free bytes; 0 when nothing is free */
} ts_alloc_set;
typedef struct ts_view_allocator {
    const char       *source;  /* "trace" or "snapshot" */
    uint32_t          n_series;
    ts_alloc_series  *series;
    uint64_t          n_points;
    ts_alloc_point   *points;
    uint32_t          n_bins;  /* per series */
    ts_alloc_bin     *bins;
    uint32_t          n_segments, n_blocks, n_sets;
    ts_alloc_segment *segments;
    ts_alloc_block   *blocks;
    ts_alloc_set     *sets;
} ts_view_allocator;
/* From Kineto "[memory]" instants ("Bytes" > 0 an allocation, < 0 a free,
 * "Total Allocated" the bytes in use after it, "Total Reserved"). TS_ENODATA
 * when the trace has none. */
TS_API TS_NODISCARD int ts_view_allocator_create(const ts_job *t, const ts_views_opts *opt,
                                                 ts_view_allocator **out, ts_error *err);
/* From a PyTorch allocator snapshot (torch.cuda.memory._snapshot() pickle,
 * plain, gzip or zstd): its device traces (alloc adds, free_completed
 * removes; what was allocated before the trace as memory.h says) and its
 * segments. */
TS_API TS_NODISCARD int ts_view_allocator_from_snapshot(const char *path, const ts_views_opts *opt,
                                                        ts_view_allocator **out, ts_error *err);
/* Whether path holds a pickle (an allocator snapshot) rather than a trace. */
TS_API bool ts_views_path_is_snapshot(const char *path);
TS_API void ts_view_allocator_destroy(ts_view_allocator *v);

/* ---- transfers: memory copies per direction ---- */
enum { TS_XFER_H2D = 0, TS_XFER_D2H, TS_XFER_D2D, TS_XFER_P2P, TS_XFER_OTHER, TS_XFER_N_DIRS };
TS_API const char *ts_xfer_dir_name(int dir);   /* "H2D", "D2H", "D2D", "P2P", "other" */
typedef struct ts_xfer_bin {
    uint64_t n;                /* copies that started in it */
    double   bytes;            /* bytes moved in it (a copy's bytes spread over its duration) */
    int64_t  busy_ns;          /* time some copy of this row ran in it */
} ts_xfer_bin;
typedef struct ts_xfer_row {
    int32_t  rank;
    int      dir;              /* TS_XFER_* */
    uint64_t n;                /* copies */
    uint64_t n_no_bytes;       /* copies without a "bytes" arg (counted, 0 bytes) */
    int64_t  bytes;
    int64_t  dur_ns;           /* sum of durations */
    int64_t  busy_ns;          /* union of their intervals */
    double   min_gbps, max_gbps; /* of single copies with bytes and duration > 0 (1e9 B/s); 0 = none */
    int64_t  bin_start_ns, bin_ns;
    uint32_t first_bin;        /* n_bins rows of bins[] */
} ts_xfer_row;
typedef struct ts_view_transfers {
    uint32_t     n_rows;       /* by rank, then direction; only directions with copies */
    ts_xfer_row *rows;
    uint32_t     n_bins;
    ts_xfer_bin *bins;
} ts_view_transfers;
TS_API TS_NODISCARD int ts_view_transfers_create(const ts_job *t, const ts_views_opts *opt,
                                                 ts_view_transfers **out, ts_error *err);
TS_API void ts_view_transfers_destroy(ts_view_transfers *v);

/* ---- queues: GPU ops launched but not finished, per stream ----
 * An op (kernel, memcpy, memset) joins its stream's queue when the runtime
 * call that launched it (same correlation id) starts, and leaves when it
 * ends on the GPU; an op whose launch is not in the trace joins at its own
 * start (n_unlinked counts them). */
typedef struct ts_queue_point { int64_t t_ns; uint32_t len; } ts_queue_point;  /* length from t on */
typedef struct ts_queue_bin { uint32_t max_len; double mean_len; } ts_queue_bin;
typedef struct ts_queue_stream {
    int32_t  rank;
    int32_t  device;
    int64_t  stream;
    uint64_t n_ops, n_unlinked;
    uint32_t max_len;
    int64_t  max_at_ns;        /* first time it reached max_len */
    double   mean_len;         /* time-weighted over [first launch, last end] */
    int64_t  launch_to_start_ns; /* mean time from launch to GPU start of linked ops */
    uint64_t first_point, n_points;
    int64_t  bin_start_ns, bin_ns;
    uint32_t first_bin;
} ts_queue_stream;
typedef struct ts_view_queues {
    uint32_t         n_streams;
    ts_queue_stream *streams;
    uint64_t         n_points;
    ts_queue_point  *points;
    uint32_t         n_bins;
    ts_queue_bin    *bins;
} ts_view_queues;
TS_API TS_NODISCARD int ts_view_queues_create(const ts_job *t, const ts_views_opts *opt,
                                              ts_view_queues **out, ts_error *err);
TS_API void ts_view_queues_destroy(ts_view_queues *v);

/* ---- comm: communication latency per collective kind and per peer ----
 * Calls: GPU communication kernels (NCCL) on ranks that have them, else CPU
 * ops carrying "Collective name" (MPI calls, gloo's record_param_comms),
 * else process-group annotations ("gloo:all_reduce").
 * Latency of a call = its duration. Pairs: an MPI send from rank a to b
 * (blocking or not, on MPI_COMM_WORLD) matched with b's receive from a in
 * order per tag; latency = receive end (for MPI_Irecv: the end of the
 * MPI_Wait/MPI_Waitall that completed it) - send start, on the ranks' own
 * clocks (one host: one clock; negative ones are counted, not hidden). */
enum { TS_COMM_CALL = 0, TS_COMM_PAIR };
typedef struct ts_comm_bin { uint64_t n; int64_t mean_ns, max_ns; } ts_comm_bin;
typedef struct ts_comm_row {
    int         what;          /* TS_COMM_CALL or TS_COMM_PAIR */
    const char *kind;          /* "allreduce", "send", "recv", ...; "send>recv" for pairs */
    int32_t     src, dst;      /* pairs: sender and receiver; send/recv calls: the caller and its
                                  peer; collectives: -1, -1 (every rank's calls together) */
    uint64_t    n;
    uint64_t    n_negative;    /* pairs whose receive ended before the send began (clocks) */
    int64_t     bytes;         /* sum of message bytes where known */
    int64_t     total_ns, min_ns, p50_ns, p90_ns, p99_ns, max_ns; /* nearest-rank percentiles */
    int64_t     bin_start_ns, bin_ns;
    uint32_t    first_bin;
} ts_comm_row;
typedef struct ts_view_comm {
    uint32_t     n_rows;       /* calls by kind (then peer), then pairs by (src, dst) */
    ts_comm_row *rows;
    uint32_t     n_bins;
    ts_comm_bin *bins;
    uint64_t     n_unpaired;   /* MPI sends or receives left without a partner */
} ts_view_comm;
TS_API TS_NODISCARD int ts_view_comm_create(const ts_job *t, const ts_views_opts *opt,
                                            ts_view_comm **out, ts_error *err);
TS_API void ts_view_comm_destroy(ts_view_comm *v);

/* ---- writing them (src/report/views.c) ----
 * Each view is a set of named tables. TS_VIEWS_TABLE prints the view's usual
 * tables for a terminal (or the one named), TS_VIEWS_CSV one table (the
 * first, or the one named), TS_VIEWS_JSON {"view", "tables": {NAME: [rows]},
 * "warnings"} with every table (times in us, keys ending "_us"). t (NULL =
 * none) gives the ingest warnings: in the JSON, else on stderr. TS_EINVAL
 * (err lists the tables) for an unknown table name, TS_EIO when f fails. */
typedef enum ts_views_format { TS_VIEWS_TABLE = 0, TS_VIEWS_JSON, TS_VIEWS_CSV,
                               TS_VIEWS_HTML /* a page holding the view's HTML section (the report's) */ } ts_views_format;
typedef struct ts_views_out {
    size_t          size;      /* sizeof(ts_views_out) */
    ts_views_format format;
    const char     *table;     /* NULL = the view's default */
    const ts_job *trace;     /* for warnings; NULL = none */
    uint32_t        top;       /* callstack flame rows: the N heaviest paths; 0 = all */
    bool            verbose;   /* table/csv: every warning line */
} ts_views_out;
/* "flame", "threads", "frames" */
TS_API TS_NODISCARD int ts_views_write_callstack(FILE *f, const ts_view_callstack *v, const ts_views_out *o,
                                                 ts_error *err);
/* "series", "sizes", "bins", "sets", "segments", "blocks", "points" */
TS_API TS_NODISCARD int ts_views_write_allocator(FILE *f, const ts_view_allocator *v, const ts_views_out *o,
                                                 ts_error *err);
/* "totals", "bins" */
TS_API TS_NODISCARD int ts_views_write_transfers(FILE *f, const ts_view_transfers *v, const ts_views_out *o,
                                                 ts_error *err);
/* "streams", "bins", "points" */
TS_API TS_NODISCARD int ts_views_write_queues(FILE *f, const ts_view_queues *v, const ts_views_out *o,
                                              ts_error *err);
/* "latency", "bins" */
TS_API TS_NODISCARD int ts_views_write_comm(FILE *f, const ts_view_comm *v, const ts_views_out *o, ts_error *err);

#ifdef __cplusplus
}
#endif
#endif
