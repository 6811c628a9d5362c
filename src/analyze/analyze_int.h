/* analyze_int.h - what the analysis files share: half-open time intervals
 * and their set arithmetic, slice classification, a sample-statistics helper.
 *
 * Intervals are [start_ns, end_ns). A "merged" list is sorted by start and
 * holds no two intervals that overlap or touch (HTA's merge_kernel_intervals
 * joins an interval that starts at or before the running maximum end).
 */
#ifndef TS_ANALYZE_INT_H
#define TS_ANALYZE_INT_H

#include "trace/model.h"
#include "trainscope/analyze.h"

typedef struct ts_ival {
    int64_t start_ns;
    int64_t end_ns;     /* >= start_ns, except an op HTA's rounding gave -1 us (breakdown.c), which merges as HTA merges it */
} ts_ival;

/* Sort and merge in place; returns the merged count. O(n log n). */
uint32_t ts__ival_merge(ts_ival *v, uint32_t n);
/* Sum of lengths of a merged list. */
int64_t  ts__ival_total(const ts_ival *v, uint32_t n);
/* Length of the intersection of two merged lists. O(na + nb). */
int64_t  ts__ival_overlap(const ts_ival *a, uint32_t na, const ts_ival *b, uint32_t nb);
/* Sweep k merged lists (k <= 3) and add to out[mask] the time during which
 * exactly the lists in `mask` (bit i = list i) are running. out has 1 << k
 * entries; out[0] gets the gaps inside the overall span. O(total log total). */
TS_NODISCARD int ts__ival_sweep(const ts_ival *const *lists, const uint32_t *counts, int k, int64_t *out);

/* What ts_stats_compute reads of a rank (stats.c): the keep function of
 * ts_stats_load, and of a distributed stats run's per-rank summaries (the
 * processes send them with launch ids). */
void ts__stats_keep(const ts_rank *r, uint8_t *keep);

/* Grow-by-doubling append of one interval; false on out-of-memory. */
bool ts__ival_push(ts_ival **v, uint32_t *n, uint32_t *cap, int64_t start_ns, int64_t end_ns);
void ts__ival_free(ts_ival *v, uint32_t cap);

/* True when slice s is a GPU operation in HTA's sense: an event that carries
 * a "stream" arg, i.e. a kernel, memcpy or memset, and also Kineto's cuda_sync
 * events drawn on a stream ("Stream Sync", "Event Sync"), which HTA counts
 * as COMPUTATION kernels. gpu_user_annotation has no stream arg. */
static inline bool ts__is_gpu_op(const ts_rank *r, uint32_t s)
{
    ts_kind k = (ts_kind)r->slices.kind[s];
    if (k == TS_KIND_CUDA_SYNC) {
        /* "Context Sync" carries stream 4294967295 (on tid -1): HTA's test is
         * only stream != -1, so it counts too. */
        int64_t stream;
        return ts__slice_arg_i64(r, s, "stream", &stream) && stream != -1;
    }
    return k == TS_KIND_KERNEL || k == TS_KIND_GPU_MEMCPY || k == TS_KIND_GPU_MEMSET;
}
/* True for Kineto's bookkeeping slices ("PyTorch Profiler (0)", cat "Trace"),
 * which HTA drops on load because they span the whole trace. */
bool ts__is_profiler_bookkeeping(const ts_rank *r, uint32_t s);

/* The time window [*start, *end) of rank r (trace/model.h, THE ANALYSIS
 * WINDOW): the span of its iterations in the window's steps; of every slice
 * when the window is whole or r marks no iterations (and no steps were asked
 * for). Returns false when r has no iteration in the window. */
bool ts__rank_window(const ts_rank *r, const ts_window_sel *w, int64_t *start, int64_t *end, uint32_t *n_iterations);
/* TS_ENODATA and why, when no rank has an iteration in the window sel. */
int ts__window_empty_error(const ts_job *t, const ts_window_sel *sel, ts_error *err);
/* "A:B" as the user wrote it, open ends (INT64_MIN / INT64_MAX) left empty. */
void ts__range_str(int64_t first, int64_t last, char *out, size_t size);

/* Every distinct name of a rank classified once: names are interned, so a
 * rank with a million slices has a few thousand names, and the substring
 * tests of classify.c run per name instead of per slice. */
typedef struct ts_names {
    uint8_t *cls;   /* indexed by string id: 0 = not classified yet, else
                       NAMES_DONE | kernel type | NAMES_COLL (classify.c) */
    uint32_t n;     /* string ids of the rank */
} ts_names;
TS_NODISCARD int ts__names_init(ts_names *m, const ts_rank *r);   /* TS_ENOMEM */
void ts__names_free(ts_names *m);
ts_kernel_type ts__names_kernel_type(ts_names *m, const ts_rank *r, uint32_t name_id);
bool ts__names_collective(ts_names *m, const ts_rank *r, uint32_t name_id);

/* Summary of sorted values: sum, extremes, mean, median (mean of the middle
 * pair for even n), sample stddev (n - 1; 0 when n == 1). All 0 when n == 0. */
typedef struct ts_sample { int64_t total, min, max; double mean, median, stddev; } ts_sample;
ts_sample ts__sample_sorted(const int64_t *sorted, uint64_t n);

/* Durations grouped by a dense key (a category and a string id folded into
 * one number below n_keys): the groups present, in key order, each with
 * durs[first, first + n) ascending. Why not a qsort of the records: a
 * 500 MB trace has 1.4 M of them and the sort with its indirect compares
 * was 12% of `trainscope stats`; with dense keys a counting sort groups
 * them in two linear passes and only each group's durations need sorting
 * (a radix sort). durs holds n; groups are appended to *g. */
typedef struct ts_dgroup { uint32_t key, first, n; } ts_dgroup;
typedef struct ts_dgroups { ts_dgroup *v; uint32_t n, cap; } ts_dgroups;
TS_NODISCARD int ts__group_durations(const uint32_t *key, const int64_t *dur, uint32_t n, uint32_t n_keys,
                                     int64_t *durs, ts_dgroups *g);   /* TS_ENOMEM */

#endif
