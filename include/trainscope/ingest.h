/* ingest.h - loading Chrome-trace / Kineto JSON traces into a ts_job.
 *
 * A path may be one trace file or a directory of per-rank files (*.json,
 * *.json.gz, *.json.zst, *.pt.trace.json[.gz]). Each file becomes one rank;
 * ranks load in parallel. The rank number comes from `distributedInfo.rank`,
 * else from the file name (`rank-3`, `rank3`, `rank_3`), else from the order
 * the files were given (directory entries in name order).
 *
 * Ownership: ts_job_load() hands back a trace the caller destroys with
 * ts_job_destroy(). On failure *out is NULL and err says, on one line,
 * `FILE: byte OFFSET: what is wrong`.
 */
#ifndef TRAINSCOPE_INGEST_H
#define TRAINSCOPE_INGEST_H

#include "trainscope/common.h"
#include "trainscope/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options; a NULL pointer means all defaults. Grows only at the end. */
typedef struct ts_load_opts {
    size_t      size;             /* sizeof(ts_load_opts), set by the caller */
    int         n_threads;        /* ranks loaded at once; <= 0 = online cores, one per 8 MB of input */
    const char *iteration_marker; /* iteration slice-name prefix; NULL = "ProfilerStep#" */
    uint32_t    python_depth;     /* ranks without CPU ops: their python_function ranges at most this
                                     many Python calls deep are CPU ops (1 = outermost); 0 = all */
} ts_load_opts;

/* Load every trace named by paths[0..n_paths) into one trace. A rank with
 * no CPU ops but python_function ranges (`record --python`) gets those as
 * its CPU ops (opts->python_depth, a warning says so). Fatal input
 * errors (malformed JSON, truncated gzip, empty file, empty directory, a `ts`
 * that is not a number, two files claiming one rank) return TS_EPARSE or
 * TS_EFORMAT and no trace; recoverable oddities are counted as rank warnings. */
TS_API TS_NODISCARD int ts_job_load(const char *const *paths, uint32_t n_paths,
                                      const ts_load_opts *opts, ts_job **out, ts_error *err);
/* ts_job_load for `trainscope info` (ts_report_info), in bounded memory:
 * each rank, as soon as it is read, is kept as its file, metadata, tracks,
 * iterations, warnings and row counts (ts_rank_read_counts), none of its
 * events; the loader's threads hold at most one whole rank each. */
TS_API TS_NODISCARD int ts_job_load_info(const char *const *paths, uint32_t n_paths,
                                         const ts_load_opts *opts, ts_job **out, ts_error *err);

#ifdef __cplusplus
}
#endif
#endif
