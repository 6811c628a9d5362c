/* model.h - the public view of a loaded trace: ranks, tables, counts.
 *
 * A ts_job holds one ts_rank per input file (one process of a training job).
 * Create one with ts_job_load() (trainscope/ingest.h); destroy it with
 * ts_job_destroy(). Ranks are borrowed: they live as long as the trace.
 * The columnar layout itself is internal (src/trace/model.h); programs read a
 * trace through the analyses (stats, breakdown, graph, replay) or these counts.
 */
#ifndef TRAINSCOPE_MODEL_H
#define TRAINSCOPE_MODEL_H

#include "trainscope/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_job ts_job;
typedef struct ts_rank ts_rank;

TS_API void     ts_job_destroy(ts_job *t);
TS_API uint32_t ts_job_n_ranks(const ts_job *t);
TS_API const ts_rank *ts_job_borrow_rank(const ts_job *t, uint32_t i);

TS_API int32_t  ts_rank_number(const ts_rank *r);     /* -1 = unknown */
TS_API const char *ts_rank_path(const ts_rank *r);
TS_API uint32_t ts_rank_n_tracks(const ts_rank *r);
TS_API uint32_t ts_rank_n_slices(const ts_rank *r);
TS_API uint32_t ts_rank_n_instants(const ts_rank *r);
TS_API uint32_t ts_rank_n_counters(const ts_rank *r);
TS_API uint32_t ts_rank_n_flows(const ts_rank *r);
TS_API uint32_t ts_rank_n_iterations(const ts_rank *r);
TS_API uint64_t ts_rank_n_events_read(const ts_rank *r);
TS_API uint64_t ts_rank_n_warnings(const ts_rank *r);
/* Slices, instants, counters and flows as the rank was read: the counts
 * above, or those of the file a bounded load's summary rank was made from
 * (ts_job_load_info, ts_stats_load, ts_graph_load, ...). */
TS_API void     ts_rank_read_counts(const ts_rank *r, uint32_t out[4]);
/* Where the rank came from, as its reader recorded it: "format" (e.g.
 * "nsys-sqlite"; NULL for Chrome JSON) and reader-specific keys such as
 * "nsys_version", "nsys_layout". NULL = absent or not a string. */
TS_API const char *ts_rank_meta_str(const ts_rank *r, const char *key);
/* Its keys in order, for listing them: the i-th string metadata key, NULL past the last. */
TS_API const char *ts_rank_meta_key(const ts_rank *r, uint32_t i);

#ifdef __cplusplus
}
#endif
#endif
