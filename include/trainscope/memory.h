/* memory.h - tensor liveness, inactive periods, memory curves and offload
 * candidates for one training iteration described by a torch.fx /
 * AOTAutograd forward+backward dump pair (the inputs of G10's tool).
 *
 * Ownership: ts_memgraph_load() creates a graph owned by the caller, freed
 * with ts_memgraph_destroy(); ts_mem_device_find() returns a static preset.
 * Times are int64 nanoseconds; sizes are bytes.
 *
 * Two rule sets:
 *   exact (default)  views (reshape, permute, expand, squeeze, ...) alias the
 *                    storage of their base, copy_ is a kernel, dtypes have
 *                    their real sizes; gradients and the forward's user
 *                    outputs (logits, loss) live to the end of the iteration;
 *   g10_compat       G10's own rules, reproducing its .config files byte for
 *                    byte (see docs/memory.md for each difference).
 */
#ifndef TRAINSCOPE_MEMORY_H
#define TRAINSCOPE_MEMORY_H

#include "trainscope/common.h"
#include "trainscope/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_memgraph ts_memgraph;

/* Kernel-internal scratch memory, alive only while the kernel runs. The CPU
 * rules were read off torch 1.13's oneDNN/ATen CPU allocation records
 * (examples/memory/, table in docs/memory.md): convolution and its backward
 * reorder tensors into blocked layouts (channels padded to 16), and
 * native_batch_norm_backward allocates one temporary of grad_out's size. */
enum { TS_MEM_WORKSPACE_NONE = 0, TS_MEM_WORKSPACE_CPU = 1 };

typedef struct ts_mem_options {
    size_t size;          /* sizeof(ts_mem_options); grows only at the end */
    int    g10_compat;    /* 1 = G10's rules */
    const char *precision_plan; /* path of a precision plan, NULL = none */
    int    hold_saved;    /* exact mode: tensors saved for backward live until the
                             backward ends (torch < 2.1 AOT runtime) instead of
                             dying at their last use */
    int    workspace;     /* TS_MEM_WORKSPACE_*: transient bytes inside kernels */
    double gpu_ghz;       /* g10_compat: G10's GPU_frequency_GHz; every kernel time becomes
                             (long)(ms * GHz * 1e9 / 1000) cycles, summed as cycles / (GHz * 1000)
                             microseconds; 0 = 1 GHz */
} ts_mem_options;

typedef struct ts_mem_summary {
    uint32_t n_kernels, n_tensors;
    int64_t  global_bytes;   /* weights, buffers, input batch */
    int64_t  peak_bytes;     /* most bytes alive while one kernel runs */
    int32_t  peak_kernel;    /* that kernel; -1 when the graph is empty */
    int64_t  iteration_ns;   /* sum of kernel times; -1 when unknown */
    int64_t  peak_at_ns;     /* start time of the peak kernel; -1 when unknown */
} ts_mem_summary;

/* A device for the roofline estimate: peak FLOP/s and memory bytes/s. */
typedef struct ts_mem_device {
    const char *name;
    double peak_tflops;      /* dense FP32 (non-tensor-core) TFLOP/s */
    double bandwidth_gbps;   /* DRAM GB/s (1e9 bytes/s) */
    double launch_us;        /* fixed cost per kernel */
} ts_mem_device;

/* Read a forward and a backward dump. On failure returns a negative TS_E*
 * with err->msg "FILE:LINE: what" and *out is NULL. */
TS_API TS_NODISCARD int ts_memgraph_load(const char *forward_path, const char *backward_path,
                                         const ts_mem_options *opt, ts_memgraph **out,
                                         ts_error *err);
TS_API void ts_memgraph_destroy(ts_memgraph *g);

/* The G10 tool's own config file: the settings of one analysis. Paths are
 * resolved (see src/memory/g10_config.c); "" where the config has none. */
typedef struct ts_mem_g10_config {
    char   forward[4096], backward[4096];  /* nn_model_input_forward / _backward */
    char   times[4096];                    /* orig_kernel_time_file ("<id> <ms> ms" lines) */
    char   output_folder[4096];            /* G10 writes output_folder/statistics/ */
    double gpu_ghz;                        /* GPU_frequency_GHz; 0 = not given */
    double gpu_memory_gb;                  /* GPU_memory_size_GB; 0 = not given */
} ts_mem_g10_config;
TS_API TS_NODISCARD int ts_mem_g10_config_load(const char *path, ts_mem_g10_config *out, ts_error *err);

/* Kernel times from a G10 time table (time_dict.json: {"<outputs>_<id>": ms},
 * or a text file with one "<key> <ms>" or "<ms>" per line, in kernel order). */
TS_API TS_NODISCARD int ts_memgraph_load_times(ts_memgraph *g, const char *path, ts_error *err);
/* Kernel times from a profiled run of the same step (rank 0, CPU ops): each
 * kernel takes the duration of the next "aten::<op>" slice in start order.
 * TS_EFORMAT when a kernel finds no match (not the same graph). */
TS_API TS_NODISCARD int ts_memgraph_times_from_trace(ts_memgraph *g, const ts_job *t, ts_error *err);
/* Roofline times: max(flops / peak, bytes / bandwidth) + launch. */
TS_API void ts_memgraph_estimate_times(ts_memgraph *g, const ts_mem_device *dev);
/* Named presets "a100", "v100", "h100", "cpu"; NULL when unknown. */
TS_API const ts_mem_device *ts_mem_device_find(const char *name);

/* Liveness, periods and the memory curve (call after times are set, or not).
 * TS_ERANGE when the kernel times add up past 2^62 ns. */
TS_API TS_NODISCARD int ts_memgraph_analyze(ts_memgraph *g, ts_mem_summary *out);

/* Write kernels.config, tensors.config, liveness_analysis.config and
 * memory.json into dir (created if missing), with plots memory.svg and
 * periods.svg too (without, those of an earlier run are removed). Each file
 * is written to a temporary name and renamed only when all succeeded: no
 * partial output. */
TS_API TS_NODISCARD int ts_memgraph_write(const ts_memgraph *g, const char *dir,
                                          double offload_gbps, int plots, ts_error *err);

/* Offload candidates: idle periods long enough to move the tensor to host
 * memory and back at gbps (GB/s each way). Returns the bytes that would be
 * freed at the peak; *n_candidates counts (tensor, period) pairs. */
TS_API int64_t ts_memgraph_offload(const ts_memgraph *g, double gbps, uint32_t *n_candidates);

/* ---- what the analysis found, one kernel or tensor at a time ----
 * Strings are borrowed from the graph and live as long as it. */
typedef struct ts_mem_kernel_info {
    const char *op;          /* aten op name without overload ("mm"), "" = unknown */
    bool        in_backward; /* from the backward dump */
    uint32_t    line;        /* 1-based line in its dump */
} ts_mem_kernel_info;
typedef struct ts_mem_tensor_info {
    const char *name;        /* the dump's variable name */
    const char *type;        /* its annotated type ("f32[64, 128]"), "" = none */
    int64_t     bytes;
    bool        is_global;   /* weight, buffer or input: alive all iteration */
} ts_mem_tensor_info;
/* Where the kernel times came from: "time table", "roofline a100", ... */
TS_API const char *ts_memgraph_time_source(const ts_memgraph *g);
/* Kernel k (0 .. n_kernels - 1); out-of-range k gives op "" and line 0. */
TS_API void ts_memgraph_kernel(const ts_memgraph *g, int32_t k, ts_mem_kernel_info *out);
/* Tensor row t (0 .. n_tensors - 1); out-of-range t gives name "" and 0 bytes. */
TS_API void ts_memgraph_tensor(const ts_memgraph *g, uint32_t t, ts_mem_tensor_info *out);
/* The tensor rows alive while kernel k runs (globals always; in exact mode
 * storages, not their views), largest first: fills rows[0..cap) and returns
 * how many were written (at most the summary's n_tensors). After analyze. */
TS_API uint32_t ts_memgraph_alive_at(const ts_memgraph *g, int32_t k, uint32_t *rows, uint32_t cap);

/* ---- fitting a memory limit (src/memory/budget.c has the rules) ----
 * Each option is a greedy that frees memory where the curve is highest until
 * it fits: offload in idle periods the link hides (no time), recomputation of
 * saved activations (their producing kernel's time again), gradient
 * accumulation (the fewest micro-batches, each kernel's fixed 2 us paid per
 * micro-batch), and offload followed by recomputation. */
enum { TS_MEM_FIT_OFFLOAD = 0, TS_MEM_FIT_RECOMPUTE, TS_MEM_FIT_ACCUMULATE, TS_MEM_FIT_OFFLOAD_RECOMPUTE,
       TS_MEM_FIT_COUNT };
typedef struct ts_mem_fit_option {
    bool     fits;           /* the option reaches the limit */
    int64_t  peak_bytes;     /* the peak it reaches (the lowest it found when it does not fit) */
    uint32_t n_choices;      /* tensors offloaded or recomputed; micro-batches for accumulation */
    int64_t  cost_ns;        /* added step time */
    int64_t  bytes_moved;    /* offload: bytes over the link each way and back */
} ts_mem_fit_option;
typedef struct ts_mem_fit {
    int64_t  limit_bytes, peak_bytes;
    bool     fits;           /* the step as it is fits */
    ts_mem_fit_option option[TS_MEM_FIT_COUNT];
    int      cheapest;       /* TS_MEM_FIT_* that fits at the least cost, -1 = none fits */
} ts_mem_fit;
/* After ts_memgraph_analyze (times set: costs are in the graph's kernel times).
 * TS_ERANGE with a message when the limit is below the global bytes. */
TS_API TS_NODISCARD int ts_memgraph_fit(const ts_memgraph *g, int64_t limit_bytes, double link_gbps,
                                        ts_mem_fit *out, ts_error *err);
TS_API const char *ts_mem_fit_name(int option);   /* "offload", "recompute", ... */

/* ---- measured memory: PyTorch's export_memory_timeline_raw files ----
 * Rows [t_ns, action, bytes, category]; action 1 preexisting, 2 create,
 * 3 increment version (a -bytes/+bytes pair that moves a tensor between
 * categories), 4 destroy (bytes < 0). Categories follow
 * torch.profiler._memory_profiler: 0 parameter, 1 optimizer state, 2 input,
 * 3 temporary, 4 activation, 5 gradient, 6 autograd detail, 7 unknown. */
#define TS_MEM_N_CATEGORIES 8
typedef struct ts_mem_timeline {
    uint64_t n_events;
    int64_t  first_ns, last_ns;      /* time range of timed rows (preexisting rows are -1) */
    int64_t  peak_bytes;             /* most bytes alive at once */
    int64_t  peak_ns;                /* when; -1 if before the first timed row */
    int64_t  final_bytes;            /* alive after the last row */
    int64_t  at_peak[TS_MEM_N_CATEGORIES];  /* bytes per category at the peak */
    int64_t  max_bytes[TS_MEM_N_CATEGORIES];/* each category's own maximum */
} ts_mem_timeline;
TS_API const char *ts_mem_category_name(int category);
/* Read a (gzip or plain) raw timeline. */
TS_API TS_NODISCARD int ts_mem_timeline_load_raw(const char *path, ts_mem_timeline *out, ts_error *err);

/* ---- measured memory: Kineto "[memory]" instant events (profile_memory) ----
 * Per rank and device: the highest "Total Allocated" and the CPU ops that
 * enclose that allocation on its thread (innermost first). */
typedef struct ts_mem_trace_peak {
    uint32_t rank;             /* rank number */
    int32_t  device_type;      /* Kineto "Device Type": 0 CPU, 1 CUDA, ... */
    int32_t  device_id;        /* "Device Id" */
    uint64_t n_events;         /* memory events of this device */
    int64_t  peak_bytes;       /* max "Total Allocated" */
    int64_t  peak_ns;          /* when */
    int64_t  first_ns, last_ns;/* time range of the device's events */
    uint32_t n_ops;            /* enclosing ops found (<= 4) */
    char     ops[4][96];       /* innermost first; truncated names */
} ts_mem_trace_peak;
/* Fill out[0..cap) with one row per (rank, device) that has memory events;
 * *n = rows found (may exceed cap). TS_ENODATA when there are none. */
TS_API TS_NODISCARD int ts_mem_trace_peaks(const ts_job *t, ts_mem_trace_peak *out,
                                           uint32_t cap, uint32_t *n, ts_error *err);

/* ---- measured memory curves and their files (memory --trace -o DIR) ---- */
typedef struct ts_mem_curve {
    size_t   n;          /* points, in event order */
    int64_t *t_ns;       /* event time; -1 = before the first timed event (a preexisting tensor) */
    int64_t *bytes;      /* bytes alive after the event */
    size_t   cap;        /* private: points allocated */
} ts_mem_curve;
/* The bytes alive after each row of a raw timeline (all categories). */
TS_API TS_NODISCARD int ts_mem_timeline_curve(const char *path, ts_mem_curve *out, ts_error *err);
/* "Total Allocated" after each [memory] event of the (rank, device) of row
 * (a row ts_mem_trace_peaks filled from the same trace). */
TS_API TS_NODISCARD int ts_mem_trace_curve(const ts_job *t, const ts_mem_trace_peak *row, ts_mem_curve *out,
                                           ts_error *err);
TS_API void ts_mem_curve_free(ts_mem_curve *c);
/* Write memory.json (summary_json as given) into dir (created if missing) and,
 * with plots, one chart per curve: memory.svg for one curve, memory_K.svg
 * (K = 0..n-1, titled titles[K]) for several. Temporary names renamed only
 * when all succeeded: no partial output; then the charts and PNG copies of an
 * earlier run that this one did not write are removed from dir. */
TS_API TS_NODISCARD int ts_mem_curves_write(const char *dir, const char *summary_json, const ts_mem_curve *curves,
                                            const char *const *titles, uint32_t n, int plots, ts_error *err);
/* ---- PyTorch allocator snapshots (torch.cuda.memory._snapshot() pickles,
 * gzipped or not, as PyTorch's memory_viz reads them) ----
 * Per device: the segments at the snapshot (reserved, allocated,
 * fragmentation = reserved - allocated, the largest free block), and the
 * alloc/free trace: bytes allocated over time (an alloc adds its size, a
 * free_completed removes it; blocks freed in the trace without an alloc in it,
 * and blocks still allocated at the snapshot without one, were allocated
 * before the trace began), its peak, and the blocks alive at the peak with
 * the Python frames that allocated them. */
typedef struct ts_mem_snap_device {
    int32_t  device;
    uint32_t n_segments, n_blocks;
    int64_t  reserved_bytes;       /* sum of segment sizes at the snapshot */
    int64_t  allocated_bytes;      /* sum of segments' allocated_size */
    int64_t  requested_bytes;      /* sum of segments' requested_size (what the program asked for) */
    int64_t  fragmentation_bytes;  /* reserved - allocated: cached by the allocator, not in use */
    int64_t  largest_free_bytes;   /* largest inactive block: the biggest request served without cudaMalloc */
    uint64_t n_trace, n_alloc, n_free, n_segment_events; /* trace entries; allocs; free_completed; segment_* */
    int64_t  first_us, last_us;    /* trace time range (time_us), -1 = none */
    int64_t  start_bytes;          /* allocated when the trace begins */
    int64_t  peak_bytes;           /* most bytes allocated at once */
    int64_t  peak_us;              /* when, -1 = at the start */
    int64_t  end_bytes;            /* allocated after the last entry */
    uint32_t first_alive, n_alive; /* rows of ts_mem_snapshot.alive: blocks alive at the peak, largest first */
    uint64_t n_oom;                /* "oom" entries: requests the allocator failed (by action, as PyTorch writes them) */
} ts_mem_snap_device;
typedef struct ts_mem_snap_block {
    uint64_t    addr;
    int64_t     bytes;
    int64_t     alloc_us;          /* -1 = allocated before the trace */
    const char *frame;             /* innermost Python frame "name file:line", "" = none */
    const char *user_frame;        /* first frame outside torch and site-packages, "" = none */
} ts_mem_snap_block;
typedef struct ts_mem_snapshot {
    uint32_t            n_devices;
    ts_mem_snap_device *devices;
    uint32_t            n_alive;
    ts_mem_snap_block  *alive;
} ts_mem_snapshot;
TS_API TS_NODISCARD int ts_mem_snapshot_load(const char *path, ts_mem_snapshot **out, ts_error *err);
/* One entry of a device's alloc/free timeline, in trace order; strings are
 * valid during the callback only. */
typedef struct ts_mem_snap_entry {
    int32_t     device;
    uint32_t    index;             /* in the device's trace */
    int64_t     time_us;           /* -1 when not recorded */
    const char *action;            /* "alloc", "free_requested", ... ("" when none) */
    uint64_t    addr;              /* the pickle's int64 (-1 is UINT64_MAX); 0 when none ("oom") */
    int64_t     bytes;
    int64_t     allocated_bytes;   /* the running total after it */
    const char *frame;             /* the innermost frame */
    const char *user_frame;        /* the first frame outside torch */
} ts_mem_snap_entry;
typedef void (*ts_mem_snap_entry_fn)(void *ud, const ts_mem_snap_entry *e);
/* Every device's timeline entries to fn, device by device, without keeping
 * the snapshot (report_memory.h's ts_mem_snapshot_write_timeline writes them
 * as CSV). */
TS_API TS_NODISCARD int ts_mem_snapshot_each_entry(const char *snapshot_path, ts_mem_snap_entry_fn fn, void *ud,
                                                   ts_error *err);
TS_API void ts_mem_snapshot_destroy(ts_mem_snapshot *s);
/* The blocks of device d alive at its peak, grouped by allocating frame (the
 * first outside torch, else the innermost; "(allocated before the trace)" or
 * "(no frames recorded)" when there is none), largest bytes first (then by
 * frame). out has room for d->n_alive groups; returns how many there are.
 * Frames are borrowed from s. O(n_alive * groups). */
typedef struct ts_mem_frame_group {
    const char *frame;
    int64_t     bytes;
    uint32_t    blocks;
} ts_mem_frame_group;
TS_API uint32_t ts_mem_snapshot_frames(const ts_mem_snapshot *s, const ts_mem_snap_device *d,
                                       ts_mem_frame_group *out);

#ifdef __cplusplus
}
#endif
#endif
