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
 * error. TS_ENODATA when there are no samples and nothing was given. */
TS_API TS_NODISCARD int ts_coll_model_fit(ts_coll_model *m, ts_error *err);
/* User-given figures. Bandwidth is the bus bandwidth in GB/s (1e9 bytes/s):
 * it replaces the fitted ring bandwidth and scales the tree one alike.
 * Latency is the whole fixed cost of one collective. 0 = keep the fit. */
TS_API void ts_coll_model_set_bandwidth(ts_coll_model *m, double busbw_gbps);
TS_API void ts_coll_model_set_latency(ts_coll_model *m, double latency_us);

/* Predicted time of one collective: the faster algorithm's alpha + bus
 * bytes / bus bandwidth. A group size with no fit of its own uses the nearest
 * fitted size of the same kind (else all-reduce's fit: bus bandwidth is the
 * same link whatever the kind), with the latency scaled by the algorithm's
 * step count (ring 2(n-1) or n-1, tree 2 log2 n). -1 when the model knows
 * nothing (no fit, nothing given). */
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

#ifdef __cplusplus
}
#endif
#endif
