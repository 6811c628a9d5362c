/* bounded.c - what breakdown and diff read of a rank, for their bounded
 * loads (ts_breakdown_load, ts_diff_load in trainscope/analyze.h): keep
 * functions for ts__rank_compact, marking every slice the analysis' scans
 * would consider, so that the analysis on the compact ranks sees the same
 * rows in the same order (stats.c's ts_stats_load does the same for stats).
 *
 * Not for: the analyses themselves (breakdown.c, diff.c, stragglers.c) or the
 * loading (ingest/load.c, graph/load.c). Invariant: a keep function marks a
 * superset of what its analysis reads (args, 2, where it reads them), so
 * slices another keeper adds (the graph's, for breakdown's stragglers) change
 * nothing the analysis computes.
 */
#include "analyze/analyze_int.h"
#include "graph/stream.h"
#include "ingest/ingest.h"

#include <string.h>

static void mark(uint8_t *keep, uint32_t s, uint8_t how) { if (keep[s] < how) keep[s] = how; }

/* The first-starting and the last-ending slice that is not profiler
 * bookkeeping (the whole-trace window of a rank without iteration marks,
 * ts__rank_window), and the iteration marks. */
static void keep_window(const ts_rank *r, uint8_t *keep)
{
    uint32_t first = TS_NONE32, last = TS_NONE32;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        if (ts__is_profiler_bookkeeping(r, s)) continue;
        if (first == TS_NONE32 || r->slices.ts_ns[s] < r->slices.ts_ns[first]) first = s;
        if (last == TS_NONE32 || ts__slice_end(r, s) > ts__slice_end(r, last)) last = s;
    }
    if (first != TS_NONE32) { mark(keep, first, 1); mark(keep, last, 1); }
    for (uint32_t i = 0; i < r->n_iterations; i++)
        if (r->iterations[i].slice < r->slices.n) mark(keep, r->iterations[i].slice, 1);
}

/* breakdown.c reads, of a rank with GPU ops: the GPU ops (args where it
 * reads them: "stream" of a CUDA sync, "stream"/"device" of an op off a GPU
 * stream track, "bytes" of a memcpy/memset), every non-GPU slice with a
 * correlation id (the first one of each id launches), the non-GPU slices
 * named *ProfilerStep* (HTA's filter), the window. Of a rank without: every
 * slice of its threads, no args. */
static void breakdown_keep(const ts_rank *r, uint8_t *keep)
{
    bool any_gpu = false;
    for (uint32_t s = 0; s < r->slices.n && !any_gpu; s++) any_gpu = ts__is_gpu_op(r, s);
    if (!any_gpu) {
        memset(keep, 1, r->slices.n);
        return;
    }
    for (uint32_t s = 0; s < r->slices.n; s++) {
        const char *name = ts__rank_str(r, r->slices.name[s]);
        if ((ts_kind)r->slices.kind[s] == TS_KIND_CUDA_SYNC) keep[s] = 2;
        else if (ts__is_gpu_op(r, s))
            keep[s] = ts_kernel_type_of(name) == TS_KT_MEMORY ||
                      r->tracks[r->slices.track[s]].kind != TS_TRACK_GPU_STREAM ? 2 : 1;
        else if (r->slices.corr[s] >= 0 || strstr(name, "ProfilerStep")) keep[s] = 1;
    }
    keep_window(r, keep);
}

int ts_breakdown_load(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts, ts_job **trace,
                      ts_graph **graph, ts_error *graph_err, ts_error *err)
{
    return ts__graph_load_keep(paths, n_paths, opts, NULL, breakdown_keep, true, trace, graph, graph_err, err);
}

/* diff.c reads every slice but Kineto's bookkeeping (its name, duration,
 * start; "stream" of a CUDA sync, which decides whether it is a GPU op),
 * the launching calls by correlation id, and the iteration marks. */
static void diff_keep(const ts_rank *r, uint8_t *keep)
{
    for (uint32_t s = 0; s < r->slices.n; s++)
        if (!ts__is_profiler_bookkeeping(r, s) || r->slices.corr[s] >= 0)
            keep[s] = (ts_kind)r->slices.kind[s] == TS_KIND_CUDA_SYNC ? 2 : 1;
    for (uint32_t i = 0; i < r->n_iterations; i++)
        if (r->iterations[i].slice < r->slices.n) mark(keep, r->iterations[i].slice, 1);
}

int ts_diff_load(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts, ts_job **out, ts_error *err)
{
    return ts__trace_load_summary(paths, n_paths, opts, diff_keep, true, out, err);
}
