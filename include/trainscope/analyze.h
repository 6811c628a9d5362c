/* analyze.h - statistics and breakdowns of a loaded trace: where the time of
 * each rank went.
 *
 * Two analyses, each a library call returning a result struct:
 *   ts_stats_compute      per-name duration statistics (count, total, mean,
 *                         median, min, max, stddev, % of the iteration window)
 *                         of CPU ops, kernels, memcpy/memset, runtime calls and
 *                         collectives;
 *   ts_breakdown_compute  per rank what Holistic Trace Analysis (HTA,
 *                         facebookresearch) computes, with HTA's definitions:
 *                         temporal breakdown, kernel-type breakdown, idle time
 *                         per stream, comm/comp overlap, launch statistics,
 *                         queue length, memcpy/memset bandwidth; and for
 *                         CPU-only ranks the same per thread.
 * Ownership: results are created by the compute call and released with the
 * matching destroy. Name strings inside results are borrowed from the trace:
 * they live as long as the trace, so destroy results before the trace.
 * Times are int64 nanoseconds.
 */
#ifndef TRAINSCOPE_ANALYZE_H
#define TRAINSCOPE_ANALYZE_H

#include <stdbool.h>
#include "trainscope/ingest.h"
#include "trainscope/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- statistics ---- */

/* The category a slice is counted in; each slice counts in at most one. A
 * collective (c10d/gloo/NCCL/MPI/record_param_comms op, or a communication
 * kernel) counts as a collective, not as a CPU op or kernel. */
typedef enum ts_stat_cat {
    TS_STAT_CPU_OP = 0,
    TS_STAT_KERNEL,
    TS_STAT_MEMCPY,
    TS_STAT_MEMSET,
    TS_STAT_RUNTIME,      /* cuda_runtime and cuda_driver calls */
    TS_STAT_COLLECTIVE,
    TS_STAT_CAT_COUNT
} ts_stat_cat;
TS_API const char *ts_stat_cat_name(ts_stat_cat c);   /* "cpu_op", "kernel", ... */

/* Rows are one group of slices each:
 *   BY_NAME      (rank, category, name)
 *   BY_RANK      (rank, category)
 *   BY_CATEGORY  (category) over all ranks */
typedef enum ts_stats_by { TS_STATS_BY_NAME = 0, TS_STATS_BY_RANK, TS_STATS_BY_CATEGORY } ts_stats_by;

/* Options; a NULL pointer means all defaults. Grows only at the end. */
typedef struct ts_stats_opts {
    size_t      size;            /* sizeof(ts_stats_opts) of the caller's header (0 is taken as current) */
    ts_stats_by by;
    bool        has_iterations;  /* restrict to iterations [iter_first, iter_last] */
    int64_t     iter_first;      /* ProfilerStep number, inclusive */
    int64_t     iter_last;       /* inclusive */
    uint32_t    top;             /* keep the N largest totals per (rank, category); 0 = all */
    bool        window_all;      /* the whole trace, not its complete iterations (--window all) */
} ts_stats_opts;

typedef struct ts_stat_row {
    int32_t     rank;        /* -1 = all ranks (BY_CATEGORY) */
    ts_stat_cat cat;
    const char *name;        /* borrowed from the trace; NULL unless BY_NAME */
    uint64_t    count;
    int64_t     total_ns;
    int64_t     min_ns;
    int64_t     max_ns;
    double      mean_ns;
    double      median_ns;   /* mean of the two middle values for even counts */
    double      stddev_ns;   /* sample stddev (n-1, as pandas and HTA); 0 when count == 1 */
    double      pct_of_window; /* 100 * total / window of its rank(s); window = iteration span */
} ts_stat_row;

/* The time window each rank's slices were taken from. */
typedef struct ts_stats_window {
    int32_t  rank;
    int64_t  start_ns;
    int64_t  end_ns;
    uint32_t n_iterations;   /* iterations inside the window; 0 = whole trace (no markers) */
} ts_stats_window;

typedef struct ts_stats {
    ts_stat_row     *rows;       /* sorted by rank, category, total descending */
    uint32_t         n_rows;
    ts_stats_window *windows;    /* one per rank, in trace order */
    uint32_t         n_windows;
} ts_stats;

/* Fails with TS_ENODATA (message says why) when opts asks for iterations and
 * no rank has one in that range; TS_ENOMEM on allocation failure. On failure
 * *out is NULL and the trace is unaltered. */
TS_API TS_NODISCARD int ts_stats_compute(const ts_job *t, const ts_stats_opts *opts,
                                         ts_stats **out, ts_error *err);
TS_API void ts_stats_destroy(ts_stats *s);
/* ts_job_load for ts_stats_compute only, in bounded memory: each rank is
 * kept, as soon as it is read, as the slices statistics count (with the
 * runtime calls that place GPU ops in time, iteration marks and the rank's
 * first and last slice), without args, instants, counters or flows; the
 * loader's threads hold at most one whole rank each. ts_stats_compute on it
 * gives what it gives on ts_job_load's trace (tested); other analyses
 * must not be given it. */
TS_API TS_NODISCARD int ts_stats_load(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts,
                                      ts_job **out, ts_error *err);

/* Re-find every rank's iterations from slices whose name starts with marker
 * (e.g. "ProfilerStep#", the default). Rank tables other than iterations are
 * untouched. */
TS_API TS_NODISCARD int ts_analyze_set_iteration_marker(ts_job *t, const char *marker, ts_error *err);

/* ---- breakdown ---- */

/* HTA's kernel types (hta/utils/utils.py get_kernel_type), by kernel name. */
typedef enum ts_kernel_type { TS_KT_COMPUTATION = 0, TS_KT_COMMUNICATION, TS_KT_MEMORY, TS_KT_COUNT } ts_kernel_type;
TS_API const char *ts_kernel_type_name(ts_kernel_type k);   /* "COMPUTATION", ... */
TS_API ts_kernel_type ts_kernel_type_of(const char *kernel_name);
/* True for a CPU-side name of a collective (c10d::, gloo:, nccl:, mpi,
 * record_param_comms, ProcessGroup...). */
TS_API bool ts_is_collective_name(const char *name);

/* Options; a NULL pointer means all defaults. Grows only at the end. */
typedef struct ts_breakdown_opts {
    size_t  size;                        /* sizeof(ts_breakdown_opts) of the caller's header (0 = current) */
    int64_t consecutive_kernel_delay_ns; /* HTA idle-time threshold; default 30 ns when 0 */
    uint32_t top_kernels;                /* per-kernel rows kept per type, the rest
                                            folded into "others"; 0 = all */
    bool     has_iterations;             /* only GPU ops launched in (CPU-only: the
                                            time of) iterations [iter_first, iter_last],
                                            in place of HTA's drop-the-last-step filter */
    int64_t  iter_first, iter_last;      /* ProfilerStep numbers, inclusive */
    bool     window_all;                 /* CPU-only ranks: the whole trace, not its complete
                                            iterations (--window all) */
} ts_breakdown_opts;

/* One kernel name's share of its kernel type on one rank; with top_kernels
 * set, the names past the top are folded into one row named "others". */
typedef struct ts_kernel_share {
    const char    *name;      /* borrowed; "others" for the folded remainder */
    ts_kernel_type type;
    uint64_t       count;
    int64_t        total_ns, min_ns, max_ns;
    double         mean_ns, stddev_ns;  /* sample stddev */
    double         pct_of_type;         /* 100 * total / total of its type */
} ts_kernel_share;

/* HTA get_idle_time_breakdown for one stream, and HTA's queue-length summary. */
typedef struct ts_stream_breakdown {
    int32_t  device;          /* GPU index */
    int64_t  stream;
    uint64_t n_ops;           /* kernels + memcpy + memset */
    int64_t  busy_ns;         /* sum of op durations */
    int64_t  host_wait_ns;    /* gaps where the launching runtime call began after the previous op ended */
    int64_t  kernel_wait_ns;  /* other gaps shorter than consecutive_kernel_delay */
    int64_t  other_wait_ns;   /* the remaining gaps */
    uint64_t queue_points;    /* queue-length time-series points (launches and op ends) */
    double   queue_mean;      /* mean over points (pandas describe) */
    int64_t  queue_max;
} ts_stream_breakdown;

/* Memcpy/memset bandwidth per copy kind ("Memcpy HtoD", "Memset", ...). */
typedef struct ts_membw {
    char     kind[16];        /* HTA get_memory_kernel_type: first 11 chars, or "Memset" */
    uint64_t count;
    uint64_t bytes;           /* sum of the "bytes" arg; ops without it count 0 */
    int64_t  dur_ns;          /* sum of durations of ops with bytes */
    double   gbps;            /* bytes / dur_ns (1 B/ns = 1 GB/s) */
    double   max_gbps;        /* fastest single op */
} ts_membw;

/* CPU-only ranks: one thread's time in the window. */
typedef struct ts_thread_breakdown {
    int64_t  pid, tid;
    int64_t  span_ns;         /* the rank's window */
    int64_t  compute_ns;      /* busy and not communicating */
    int64_t  comm_ns;         /* inside c10d/gloo/MPI/NCCL ops */
    int64_t  idle_ns;         /* span - compute - comm */
} ts_thread_breakdown;

typedef struct ts_breakdown_rank {
    int32_t rank;
    bool    has_gpu;              /* false: CPU-only, see threads */
    bool    iterations_filtered;  /* HTA's filter applied (>= 2 ProfilerSteps), or
                                     restricted to the asked iterations */
    /* temporal breakdown (HTA get_temporal_breakdown), GPU ranks */
    int64_t span_ns;              /* last GPU op end - first GPU op start */
    int64_t idle_ns;              /* span - union of all GPU ops */
    int64_t compute_ns;           /* union of COMPUTATION kernels */
    int64_t non_compute_ns;       /* union of all - compute = comm_ns + memory_ns */
    int64_t comm_ns;              /* communication not overlapped by compute */
    int64_t memory_ns;            /* memory ops overlapped by neither */
    /* kernel-type breakdown (HTA _get_gpu_kernel_type_time): time in each
     * combination of running types, indexed by bit mask 1 = COMPUTATION,
     * 2 = COMMUNICATION, 4 = MEMORY; [0] unused */
    int64_t type_ns[8];
    int64_t type_total_ns[TS_KT_COUNT]; /* plain sum of durations per type */
    double  comm_comp_overlap_pct;      /* HTA get_comm_comp_overlap; -1 = no communication */
    /* launch statistics (runtime call -> GPU op by correlation) */
    uint64_t n_launches;
    double   launch_delay_mean_ns, launch_delay_median_ns;
    int64_t  launch_delay_max_ns;
    double   runtime_mean_ns, gpu_mean_ns;  /* mean durations of the paired calls and ops */
    uint64_t n_gpu_shorter_than_runtime;    /* ops that ran shorter than their launch call */
    uint64_t n_runtime_outliers;            /* launch calls longer than 50 us (HTA runtime_cutoff) */
    uint64_t n_delay_outliers;              /* launch delays over 100 us (HTA launch_delay_cutoff) */
    ts_stream_breakdown *streams; uint32_t n_streams;
    ts_kernel_share     *kernels; uint32_t n_kernels;  /* sorted by type, total descending */
    ts_membw            *membw;   uint32_t n_membw;
    ts_thread_breakdown *threads; uint32_t n_threads;  /* CPU-only ranks */
} ts_breakdown_rank;

typedef struct ts_breakdown {
    ts_breakdown_rank *ranks;
    uint32_t           n_ranks;
} ts_breakdown;

/* TS_ENOMEM on allocation failure, TS_ENODATA when iterations were asked for
 * and no rank has one in the range; then *out is NULL. A rank with neither
 * GPU ops nor thread slices (or none of the asked iterations) gets an
 * all-zero entry (has_gpu false, no threads). */
TS_API TS_NODISCARD int ts_breakdown_compute(const ts_job *t, const ts_breakdown_opts *opts,
                                             ts_breakdown **out, ts_error *err);
TS_API void ts_breakdown_destroy(ts_breakdown *b);
/* A rank's temporal figures in one shape: a GPU rank's own; a CPU-only
 * rank's busiest thread's (the least idle: the training loop), its
 * communication being its non-compute time; all idle when it has no thread. */
typedef struct ts_breakdown_temporal {
    int64_t span_ns, idle_ns, compute_ns, non_compute_ns, comm_ns, memory_ns;
} ts_breakdown_temporal;
TS_API ts_breakdown_temporal ts_breakdown_rank_temporal(const ts_breakdown_rank *r);
/* The kernel-type combination times (type_ns) summed over all ranks: HTA's
 * get_gpu_kernel_breakdown total. */
TS_API void ts_breakdown_type_totals(const ts_breakdown *b, int64_t out[8]);
/* Name of a kernel-type combination mask (1 = COMPUTATION, 2 = COMMUNICATION,
 * 4 = MEMORY): HTA's "COMPUTATION overlapping COMMUNICATION"; "" for 0 or > 7. */
TS_API const char *ts_kernel_type_combo_name(unsigned mask);

/* ---- trace diff (HTA's TraceDiff.compare_traces / ops_diff) ----
 * Two traces of the same job (before and after a change), rank by rank (the
 * ranks both have, matched by number): per op or kernel name, how often it
 * ran and for how long in A and in B, within one iteration of each (HTA's
 * default: each rank's first ProfilerStep; host slices by their start in the
 * step, GPU ops by their launching call's), or over the whole traces. */
typedef enum ts_diff_device { TS_DIFF_ALL = 0, TS_DIFF_CPU, TS_DIFF_GPU } ts_diff_device;
typedef enum ts_diff_change { TS_DIFF_SAME = 0, TS_DIFF_ADDED, TS_DIFF_REMOVED, TS_DIFF_MORE, TS_DIFF_FEWER } ts_diff_change;

typedef struct ts_diff_opts {
    size_t         size;            /* sizeof(ts_diff_opts) */
    ts_diff_device device;          /* host slices (no "stream"), GPU ops, or both (default) */
    bool           whole;           /* every slice, not one iteration */
    bool           has_iteration;   /* compare ProfilerStep#iteration in both (else each rank's first) */
    int64_t        iteration;
} ts_diff_opts;

typedef struct ts_diff_row {
    const char    *name;            /* borrowed from the traces */
    uint64_t       a_count, b_count;
    int64_t        a_total_ns, b_total_ns;
    ts_diff_change change;          /* added: only in B; removed: only in A; more/fewer: count in B vs A */
} ts_diff_row;

typedef struct ts_diff_rank {
    int32_t  rank;
    int64_t  a_step, b_step;        /* the iterations compared; -1 = whole trace */
    uint32_t first_row, n_rows;     /* rows of ts_diff.rows, by |B - A| total time descending */
    uint32_t n_change[5];           /* rows per ts_diff_change */
} ts_diff_rank;

typedef struct ts_diff {
    ts_diff_rank *ranks;  uint32_t n_ranks;
    ts_diff_row  *rows;   uint32_t n_rows;
    int32_t      *only_a; uint32_t n_only_a;   /* rank numbers without a partner in B */
    int32_t      *only_b; uint32_t n_only_b;
} ts_diff;

TS_API const char *ts_diff_change_name(ts_diff_change c);   /* "=", "added", "removed", "+", "-" */
/* TS_ENODATA (nothing compared, *out NULL) when no rank is in both traces or,
 * without `whole`, a rank of both lacks the iteration asked for. */
TS_API TS_NODISCARD int ts_diff_compute(const ts_job *a, const ts_job *b, const ts_diff_opts *opts,
                                        ts_diff **out, ts_error *err);
TS_API void ts_diff_destroy(ts_diff *d);

/* ---- stragglers (breakdown on several ranks) ----
 * At every collective instance matched across ranks (graph/collective.c), on
 * the aligned clock: each member's arrival (its start), the last arrival
 * (the straggler), and each rank's lateness = its arrival - the first
 * arrival; every other rank waited last - its own arrival for the straggler.
 * Summed per rank, per (waiter, straggler) pair, and per iteration (the
 * ProfilerStep the member's start lies in on its rank, -1 = none). */
typedef struct ts_graph ts_graph;
typedef struct ts_straggler_rank {
    int32_t  rank;
    uint32_t n_colls;        /* instances it took part in */
    uint32_t n_last;         /* instances it arrived last at (ties: the first found) */
    int64_t  late_ns;        /* summed lateness (arrival - first arrival) */
    int64_t  max_late_ns;
    int64_t  waited_ns;      /* time it waited for the last arrival */
    int64_t  caused_ns;      /* time the others waited while it was the last */
} ts_straggler_rank;
typedef struct ts_straggler_pair { int32_t waiter, straggler; uint32_t n; int64_t wait_ns; } ts_straggler_pair;
typedef struct ts_straggler_iter { int64_t step; int32_t rank; uint32_t n_colls; int64_t waited_ns, caused_ns; } ts_straggler_iter;
typedef struct ts_straggler_coll {
    const char *name;        /* "allreduce", ... (borrowed from the graph) */
    int64_t     ordinal;     /* sequence number in its group, or order */
    int64_t     step;        /* iteration of its first member, -1 = none */
    int32_t     last_rank;   /* the straggler */
    int64_t     spread_ns;   /* last - first arrival */
    uint32_t    first_late, n_late; /* rows of ts_stragglers.late: (rank, lateness) per member */
} ts_straggler_coll;
typedef struct ts_straggler_late { int32_t rank; int64_t late_ns; } ts_straggler_late;
typedef struct ts_stragglers {
    uint32_t n_ranks;        ts_straggler_rank *ranks;   /* by rank number */
    uint32_t n_pairs;        ts_straggler_pair *pairs;   /* by wait descending */
    uint32_t n_iters;        ts_straggler_iter *iters;   /* by step, then rank */
    uint32_t n_colls;        ts_straggler_coll *colls;   /* matched instances of 2+ ranks, in graph order */
    uint32_t n_late;         ts_straggler_late *late;
    int64_t  total_wait_ns;  /* all ranks' waits summed */
} ts_stragglers;
/* The result borrows collective names from g: destroy it before g. */
TS_API TS_NODISCARD int ts_stragglers_compute(const ts_graph *g, ts_stragglers **out, ts_error *err);
TS_API void ts_stragglers_destroy(ts_stragglers *s);

/* ---- bounded loads for breakdown and diff (src/analyze/bounded.c) ----
 * ts_job_load for one analysis, in bounded memory (docs/scale.md): each rank
 * is kept, as soon as it is read, as the slices that analysis reads, with
 * args only where it reads them, without instants, counters or flows; the
 * loader's threads hold at most one whole rank each. The analysis on it
 * gives what it gives on ts_job_load's trace (tested); other analyses must
 * not be given it. A PyTorch execution trace among the files (its join reads
 * every op's args) or one CTF session is read whole.
 * ts_breakdown_load: for ts_breakdown_compute (GPU ops and the runtime
 * calls that launch them, ProfilerStep annotations, iteration marks, the
 * rank's first and last slice; every slice of a rank without GPU ops), and
 * the stragglers' graph beside it, built rank by rank as ts_graph_load builds
 * it: *graph is what ts_graph_create(trace, NULL) gives on the whole trace,
 * or NULL when that fails for a reason other than memory (graph_err then
 * says what ts_graph_create says). Destroy the graph before the trace.
 * ts_diff_load: for ts_diff_compute (every slice but Kineto's bookkeeping). */
TS_API TS_NODISCARD int ts_breakdown_load(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts,
                                          ts_job **trace, ts_graph **graph, ts_error *graph_err, ts_error *err);
TS_API TS_NODISCARD int ts_diff_load(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts,
                                     ts_job **out, ts_error *err);

#ifdef __cplusplus
}
#endif
#endif
