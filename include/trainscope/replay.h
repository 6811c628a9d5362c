/* replay.h - collective cost models and the discrete-event replay of a
 * training job's global dependency graph (seeds 000 dPRO, 001 QSync).
 *
 * Two parts:
 *   ts_coll_model   alpha-beta cost models of collectives, per algorithm (ring,
 *                   tree) and kind, in nccl-tests' bus-bandwidth terms; fitted
 *                   from samples (the trace's own collectives or nccl-tests
 *                   logs) or given (bandwidth, latency). Predicts the time of
 *                   (kind, bytes, n_ranks).
 *   ts_replay_*     replays a loaded trace (see ts_replay_run) with optional
 *                   what-if edits and reports measured vs predicted iteration
 *                   time per rank.
 * Not for: building the dependency graph (graph/) or searching over what-ifs
 * (optimize/).
 * Ownership: *_create results are owned by the caller and released with the
 * matching *_destroy. Times are int64 nanoseconds, sizes bytes.
 */
#ifndef TRAINSCOPE_REPLAY_H
#define TRAINSCOPE_REPLAY_H

#include <stdbool.h>
#include "trainscope/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- collective cost models ---- */

typedef enum ts_coll_kind {
    TS_COLL_ALL_REDUCE = 0,
    TS_COLL_ALL_GATHER,
    TS_COLL_REDUCE_SCATTER,
    TS_COLL_ALL_TO_ALL,
    TS_COLL_BROADCAST,
    TS_COLL_REDUCE,
    TS_COLL_SEND_RECV,       /* point to point: one transfer of `bytes` */
    TS_COLL_COUNT
} ts_coll_kind;

typedef enum ts_coll_algo { TS_ALGO_TREE = 0, TS_ALGO_RING, TS_ALGO_COUNT } ts_coll_algo;

TS_API const char *ts_coll_kind_name(ts_coll_kind k);      /* "all_reduce", ... */
/* Recognise a collective from an op or kernel name ("c10d::allreduce_",
 * "gloo:all_reduce", "ncclDevKernel_AllGather_RING_LL", "nccl:all_to_all",
 * "record_param_comms" is not one: its kind is in its args). */
TS_API bool ts_coll_kind_from_name(const char *name, ts_coll_kind *out);

/* nccl-tests' bus-bandwidth factor: busBw = algBw * factor, i.e. the bytes
 * each rank moves per byte of message. 2(n-1)/n for all-reduce; (n-1)/n for
 * all-gather, reduce-scatter, all-to-all; 1 for broadcast, reduce and
 * send/recv. For n <= 1 the factor is 1 (a local copy). */
TS_API double ts_coll_bus_factor(ts_coll_kind k, uint32_t n_ranks);

typedef struct ts_coll_model ts_coll_model;

TS_API TS_NODISCARD int ts_coll_model_create(ts_coll_model **out);
TS_API void ts_coll_model_destroy(ts_coll_model *m);

/* One measured collective: its kind, group size, message bytes (per rank's
 * buffer, as nccl-tests' "size") and time. Samples take effect at the next
 * ts_coll_model_fit. */
TS_API TS_NODISCARD int ts_coll_model_add_sample(ts_coll_model *m, ts_coll_kind kind,
                                                 uint32_t n_ranks, uint64_t bytes, int64_t time_ns);
/* Add every row of an nccl-tests log (all_reduce_perf and friends; the
 * "[1,0]<stdout>:" mpirun prefix is accepted). The kind comes from the log's
 * header or file name, the group size from its "Rank N" lines; each row's
 * out-of-place time becomes a sample (with one GPU the in-place one is a
 * no-op). On failure the model is
 * unaltered and err says "FILE: line N: what". */
TS_API TS_NODISCARD int ts_coll_model_load_nccl_tests(ts_coll_model *m, const char *path, ts_error *err);
/* Fit every (kind, n_ranks) group of samples: a tree line for the small-message
 * regime and a ring line for the large one, each by least squares on relative
 * error over two sizes or more. TS_ENODATA when there are no samples and nothing was given. */
TS_API TS_NODISCARD int ts_coll_model_fit(ts_coll_model *m, ts_error *err);
/* User-given figures. Bandwidth is the bus bandwidth in GB/s (1e9 bytes/s):
 * every line moves its bus bytes (bytes x ts_coll_bus_factor) at it, keeping
 * its fitted fixed cost.
 * Latency is the whole fixed cost of one collective. 0 = keep the fit. */
TS_API void ts_coll_model_set_bandwidth(ts_coll_model *m, double busbw_gbps);
TS_API void ts_coll_model_set_latency(ts_coll_model *m, double latency_us);

/* Predicted time of one collective: the faster algorithm's alpha + bus
 * bytes / bus bandwidth. A group size with no fit of its own is priced
 * between the fitted sizes around it (each line's alpha and bandwidth
 * interpolated in log2 of the size), else from the nearest fitted size of
 * the same kind (else all-reduce's fit: bus bandwidth is the same link
 * whatever the kind), its alpha scaled by 2 log2 n latency steps; fits on
 * the same side of the server boundary as n first, when the nccl-tests logs'
 * "Rank N ... on HOST" lines tell. -1 when the model knows nothing (no fit,
 * nothing given); 2^62 for a time at or past 2^62 ns. */
TS_API int64_t ts_coll_model_predict_ns(const ts_coll_model *m, ts_coll_kind kind,
                                        uint64_t bytes, uint32_t n_ranks);

/* What a fit found, for reports. */
typedef struct ts_coll_fit_info {
    ts_coll_kind kind;
    uint32_t n_ranks;
    uint32_t n_samples;
    double   latency_us[TS_ALGO_COUNT];   /* alpha of each algorithm's line */
    double   busbw_gbps[TS_ALGO_COUNT];   /* bus bandwidth of each line */
    uint64_t switch_bytes;                /* smallest sample size the ring line fitted */
    double   median_abs_err_pct;          /* over this group's samples */
    double   max_abs_err_pct;
} ts_coll_fit_info;
TS_API uint32_t ts_coll_model_n_fits(const ts_coll_model *m);
TS_API void ts_coll_model_fit_info(const ts_coll_model *m, uint32_t i, ts_coll_fit_info *out);

/* ---- replay ---- */

typedef struct ts_graph ts_graph;
typedef struct ts_replay ts_replay;

/* Options; zero-initialise, set size = sizeof(ts_replay_options). Grows only
 * at the end. Strings are borrowed for the duration of the call. */
typedef struct ts_replay_options {
    size_t       size;            /* sizeof(ts_replay_options) */
    uint32_t     max_iterations;  /* compare only the first N iterations; 0 = all */
    const char *const *scales;    /* what-if: "[kind:]glob=factor", e.g. "kernel:*gemm*=0.5" */
    uint32_t     n_scales;
    double       bucket_mb;       /* what-if: regroup gradient all-reduces into buckets of
                                     this many MiB (DDP's bucket_cap_mb); 0 = keep */
    const char  *gradients_json;  /* parameter names and byte sizes in registration order;
                                     NULL = sizes from the trace's collective args */
    uint32_t     world;           /* what-if: collectives priced for this many ranks; 0 = keep */
    double       bandwidth_gbps;  /* what-if: bus bandwidth of the collectives; 0 = keep */
    double       latency_us;      /* with bandwidth: fixed cost per collective; 0 = fitted */
    const char  *nccl_tests_log;  /* calibrate the cost model from this log instead of the trace */
    double       trace_bucket_mb; /* with bucket_mb: the cap the trace was recorded with; 0 = infer
                                     it from the bucket count (caps giving one count can cut
                                     in different places) */
    int          no_contention;   /* with bucket_mb on a CPU-only (gloo) job: 1 = keep compute times
                                     as measured; 0 = re-time them for their new overlap with
                                     the reductions (contention.c) */
    int          window_all;      /* 1 = compare the whole trace as one, not its complete
                                     iterations (--window all) */
    double       bandwidth_factor;/* what-if: the bandwidth each collective achieved in the trace
                                     times this ("--bandwidth x2"): its per-byte time divided by
                                     it; 0 = keep */
    double       latency_factor;  /* what-if: each collective's fixed cost (the cost model's at 0
                                     bytes) times this ("--latency-us x2"); 0 = keep */
    double       profiler_overhead_us; /* what-if: the profiler's own cost per recorded CPU op,
                                     taken off the gap before each op (then off its self time):
                                     predicts the unprofiled run; 0 = keep */
    /* What-if: any grouping of the gradients into buckets (needs gradients_json), in the
     * order they are all-reduced (reduction order: gradients.json reversed). Each
     * gradient i may first be cut into grad_pieces[i] pieces of equal bytes (tensor
     * partition; NULL = 1 each); the resulting units, in order, fill the buckets:
     * bucket j holds the next bucket_group_units[j] units. n_bucket_groups = 0: the
     * grouping is DDP's at bucket_mb. The units must add up to the pieces' count. */
    const uint32_t *bucket_group_units;
    uint32_t     n_bucket_groups;
    const uint32_t *grad_pieces;  /* [gradients], reduction order; NULL = no partition */
    /* What-if: graph node rows whose self time becomes retime_ns[i] (op fusion: the ops
     * of a fused kernel after its first one no longer pay their own overhead); rows past
     * the graph's nodes are a usage error. Applied before --scale. */
    const uint32_t *retime_nodes;
    const int64_t  *retime_ns;
    uint32_t        n_retime;
    /* What-if: the gradient all-reduces communicated at this many bytes an element (2:
     * DDP's bf16_compress_hook / fp16_compress_hook; under autocast alone the gradients
     * of fp32 master weights stay 4 bytes); 0 = as traced. Their time past the fixed
     * cost scales with the bytes, plus the hook's three passes over the bucket (to(P),
     * div_, copy_ back), each cast_alpha_ns_per_byte x (elements x 6) + cast_beta_ns (the
     * precision model's cast fit: ts_prec_cast_fit_trace). Sizes from the trace or
     * gradients_json. */
    uint32_t        grad_bytes_per_elem;
    double          cast_alpha_ns_per_byte;
    double          cast_beta_ns;
    /* With bucket_mb or a bucket grouping on a CPU-only (gloo) job: whether a network link,
     * not gloo's CPU work, bounds the gradient all-reduces, so new buckets are priced on
     * the link (the bandwidth the trace's all-reduces achieved together, shared by those
     * in flight) with compute as measured: 0 = decided from the trace (what they achieved
     * against what gloo's CPU work reaches), 1 = yes, -1 = no (the CPU-sharing model). */
    int             link_bound;
} ts_replay_options;

/* Build the global graph of t, replay it with the what-if edits of opt (NULL
 * = unmodified) and compare the predicted iteration time with the measured
 * one. On failure *out is NULL and err names the rank and op at fault. */
TS_API TS_NODISCARD int ts_replay_run(const ts_job *t, const ts_replay_options *opt,
                                      ts_replay **out, ts_error *err);
/* The same on a graph already built (borrowed: it must outlive the result). */
TS_API TS_NODISCARD int ts_replay_run_graph(const ts_graph *g, const ts_replay_options *opt,
                                            ts_replay **out, ts_error *err);
TS_API void ts_replay_destroy(ts_replay *r);

/* Iteration times: the median over compared iterations of the slowest rank's
 * iteration; error_pct = (predicted - measured) / measured * 100. */
TS_API int64_t  ts_replay_measured_iteration_ns(const ts_replay *r);
TS_API int64_t  ts_replay_predicted_iteration_ns(const ts_replay *r);
TS_API double   ts_replay_error_pct(const ts_replay *r);
/* True when the options asked for an edit (--scale, --bucket-mb, --world,
 * --bandwidth, --latency-us): error_pct is then the edit's predicted change. */
TS_API bool     ts_replay_is_what_if(const ts_replay *r);
TS_API uint32_t ts_replay_n_iterations(const ts_replay *r);   /* iterations compared */

/* Iteration k (0 .. n_iterations - 1) of the job, in trace order: the figures
 * whose medians the calls above report, so a user can see how much the
 * iterations themselves vary before reading much into a few percent. */
typedef struct ts_replay_iteration_info {
    int64_t step;                   /* N of ProfilerStep#N; -1 = the whole trace (no iterations) */
    int64_t measured_iteration_ns;  /* the slowest rank's */
    int64_t predicted_iteration_ns; /* the slowest rank's as replayed (it may be another rank) */
} ts_replay_iteration_info;
TS_API void ts_replay_iteration(const ts_replay *r, uint32_t k, ts_replay_iteration_info *out);

typedef struct ts_replay_rank_info {
    int32_t  rank;                  /* the job's rank number, -1 = unknown */
    int64_t  measured_iteration_ns; /* median over compared iterations */
    int64_t  predicted_iteration_ns;
    int64_t  clock_offset_ns;       /* the graph's alignment of this rank */
} ts_replay_rank_info;
TS_API uint32_t ts_replay_n_ranks(const ts_replay *r);
TS_API void     ts_replay_rank(const ts_replay *r, uint32_t i, ts_replay_rank_info *out);

/* Lines saying what was approximated (graph warnings included). */
TS_API uint32_t ts_replay_n_warnings(const ts_replay *r);
TS_API const char *ts_replay_warning(const ts_replay *r, uint32_t i);

/* Counts and wall times of the stages, for benchmarks. */
typedef struct ts_replay_stats {
    uint32_t n_nodes, n_edges;      /* of the simulated graph */
    uint32_t n_collectives;         /* collective instances simulated */
    int64_t  graph_ns;              /* building the graph (0 when given one) */
    int64_t  replay_ns;             /* copying, editing and simulating */
} ts_replay_stats;
TS_API void ts_replay_get_stats(const ts_replay *r, ts_replay_stats *out);

/* Predicted against measured in percent, the replay's one definition of
 * error (and of a what-if's change): (predicted - measured) / measured * 100;
 * 0 when nothing was measured (measured <= 0). */
TS_API double ts_replay_change_pct(int64_t predicted_ns, int64_t measured_ns);

/* The least and greatest of a run's iterations (or windows), measured and
 * predicted, and of each one's change in percent (counted only where it was
 * measured: change_min_pct > change_max_pct when none was). */
typedef struct ts_replay_spread {
    uint32_t n;                               /* iterations or windows spanned */
    int64_t  measured_min_ns, measured_max_ns;
    int64_t  predicted_min_ns, predicted_max_ns;
    double   change_min_pct, change_max_pct;
} ts_replay_spread;
TS_API void ts_replay_iteration_spread(const ts_replay *r, ts_replay_spread *out);

/* ---- one job traced in several windows (replay --windows) ----
 * torch.profiler's schedule with repeat > 1 writes one set of rank files per
 * window. Each window is replayed alone, with the same options, and the job's
 * figures are the medians over the windows: the steps of one window scatter
 * by 5-20% on a shared machine and a what-if starts from that window's luck
 * (on the gloo ground truths, predicting from half of the saved windows
 * instead of all of them raised the median error from 4.2% to 5.1-5.4%,
 * docs/accuracy.md). Only each window's figures are kept, so a caller can
 * replay the windows one after another in one window's memory. */
typedef struct ts_replay_windows ts_replay_windows;
TS_API TS_NODISCARD int ts_replay_windows_create(ts_replay_windows **out);
TS_API void ts_replay_windows_destroy(ts_replay_windows *w);
/* Keep window `path`'s figures from its replay r, the distinct warning lines
 * of r and the ingest warnings of its trace t (t NULL: none). Every window
 * must hold the first one's ranks: else TS_EINVAL with err "replay: window
 * PATH holds ranks A to B (N), window PATH0 ranks ...", and the window is
 * not kept. TS_ENOMEM: the window may be kept without all its warnings
 * (err says "out of memory"); stop there. */
TS_API TS_NODISCARD int ts_replay_windows_add(ts_replay_windows *w, const char *path, const ts_job *t,
                                              const ts_replay *r, ts_error *err);
typedef struct ts_replay_window_info {
    const char *path;               /* as given to ts_replay_windows_add (a copy) */
    uint32_t    n_iterations;       /* iterations the window's replay compared */
    int64_t     measured_iteration_ns, predicted_iteration_ns;   /* its medians */
    double      error_pct;          /* ts_replay_change_pct of the two */
} ts_replay_window_info;
TS_API uint32_t ts_replay_windows_n(const ts_replay_windows *w);
TS_API void     ts_replay_windows_window(const ts_replay_windows *w, uint32_t i, ts_replay_window_info *out);
/* The job's figures: medians over the windows (of each window's median). */
TS_API int64_t  ts_replay_windows_measured_ns(const ts_replay_windows *w);
TS_API int64_t  ts_replay_windows_predicted_ns(const ts_replay_windows *w);
TS_API double   ts_replay_windows_error_pct(const ts_replay_windows *w);
TS_API bool     ts_replay_windows_is_what_if(const ts_replay_windows *w);
/* Per rank: the medians over the windows (clock_offset_ns: the first window's). */
TS_API uint32_t ts_replay_windows_n_ranks(const ts_replay_windows *w);
TS_API void     ts_replay_windows_rank(const ts_replay_windows *w, uint32_t k, ts_replay_rank_info *out);
TS_API void     ts_replay_windows_spread(const ts_replay_windows *w, ts_replay_spread *out);
/* Every window's distinct replay warning lines, in first-seen order. */
TS_API uint32_t ts_replay_windows_n_warnings(const ts_replay_windows *w);
TS_API const char *ts_replay_windows_warning(const ts_replay_windows *w, uint32_t i);
/* Every window's ingest warnings, window by window: one per (rank, kind). */
typedef struct ts_replay_window_ingest_warning {
    int32_t     rank;               /* -1 = unknown */
    const char *file;               /* the rank's file */
    const char *kind;               /* "unknown_phase", ... */
    uint64_t    count;
    const char *first;              /* the first occurrence's message, "" = none */
} ts_replay_window_ingest_warning;
TS_API uint32_t ts_replay_windows_n_ingest_warnings(const ts_replay_windows *w);
TS_API void     ts_replay_windows_ingest_warning(const ts_replay_windows *w, uint32_t i,
                                                 ts_replay_window_ingest_warning *out);

/* Write the replayed schedule as a Chrome trace (open it in Perfetto UI):
 * one process per rank, one thread per CPU thread or GPU stream, every node
 * at its simulated time with its measured time in args. */
TS_API TS_NODISCARD int ts_replay_export_chrome(const ts_replay *r, const char *path, ts_error *err);

#ifdef __cplusplus
}
#endif
#endif
