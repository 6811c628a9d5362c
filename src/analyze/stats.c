/* stats.c - per-name duration statistics (trainscope stats).
 *
 * Every counted slice becomes one record (group key, duration); the records
 * are sorted once by (rank, category, name, duration), so each group is a
 * contiguous run already sorted for its median. O(n log n) time, 24 bytes of
 * scratch per counted slice.
 * A slice counts when its time falls in its rank's window: the span of the
 * selected iterations, or the whole trace when the rank has no iteration
 * markers. A GPU operation is placed in time by the runtime call that
 * launched it (by correlation id), since a GPU op launched in the last
 * iteration may run after that iteration's CPU annotation ends.
 */
#include "analyze/analyze_int.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct rec {
    uint32_t rank_idx;   /* index into trace ranks; 0 for BY_CATEGORY */
    uint32_t name;       /* rank string id; 0 unless BY_NAME */
    uint8_t  cat;        /* ts_stat_cat */
    int64_t  dur_ns;
} rec;

typedef struct recs { rec *v; uint32_t n, cap; } recs;

/* The result with the allocation sizes the public struct does not show. */
typedef struct stats_impl {
    ts_stats pub;          /* first, so a ts_stats* is a stats_impl* */
    uint32_t cap_rows;     /* rows allocated (n_rows only shrinks under --top) */
    uint32_t cap_windows;  /* windows allocated (one per rank) */
} stats_impl;

/* The statistics category of slice s, or -1 when it is not counted. */
static int slice_category(const ts_rank *r, ts_names *names, uint32_t s)
{
    ts_kind k = (ts_kind)r->slices.kind[s];
    uint32_t name = r->slices.name[s];
    switch (k) {
    case TS_KIND_KERNEL:
        return ts__names_kernel_type(names, r, name) == TS_KT_COMMUNICATION ? TS_STAT_COLLECTIVE : TS_STAT_KERNEL;
    case TS_KIND_GPU_MEMCPY: return TS_STAT_MEMCPY;
    case TS_KIND_GPU_MEMSET: return TS_STAT_MEMSET;
    case TS_KIND_CUDA_RUNTIME:
    case TS_KIND_CUDA_DRIVER: return TS_STAT_RUNTIME;
    case TS_KIND_CPU_OP: return ts__names_collective(names, r, name) ? TS_STAT_COLLECTIVE : TS_STAT_CPU_OP;
    case TS_KIND_USER_ANNOTATION:
    case TS_KIND_PYTHON_FUNCTION:
    case TS_KIND_OTHER:
        /* gloo/c10d collectives appear as user annotations in CPU-only Kineto
         * traces and without a category in legacy ones. */
        if (ts__is_profiler_bookkeeping(r, s)) return -1;
        return ts__names_collective(names, r, name) ? TS_STAT_COLLECTIVE : -1;
    default: return -1;
    }
}

/* Window of rank r (ts__rank_window); false when iterations were asked for
 * and none matched. */
static bool rank_window(const ts_rank *r, const ts_stats_opts *o, ts_stats_window *w)
{
    w->rank = r->rank;
    return ts__rank_window(r, o->has_iterations, o->iter_first, o->iter_last, &w->start_ns, &w->end_ns,
                           &w->n_iterations);
}

/* correlation id -> start of the CPU-side slice that carries it. */
static int launch_times(const ts_rank *r, ts_map64 *m)
{
    for (uint32_t s = 0; s < r->slices.n; s++) {
        if (r->slices.corr[s] < 0 || ts__kind_on_gpu((ts_kind)r->slices.kind[s]) || ts__is_gpu_op(r, s)) continue;
        if (ts__map64_put(m, (uint64_t)r->slices.corr[s], (uint64_t)r->slices.ts_ns[s])) return TS_ENOMEM;
    }
    return TS_OK;
}

static int collect_rank(const ts_rank *r, uint32_t rank_idx, const ts_stats_opts *o,
                        const ts_stats_window *w, recs *out)
{
    ts_map64 launch;
    ts__map64_init(&launch);
    ts_names names;
    int rc = ts__names_init(&names, r);
    if (rc == TS_OK) rc = launch_times(r, &launch);
    for (uint32_t s = 0; s < r->slices.n && rc == TS_OK; s++) {
        int cat = slice_category(r, &names, s);
        if (cat < 0) continue;
        int64_t t = r->slices.ts_ns[s];
        uint64_t lt;
        if (ts__is_gpu_op(r, s) && r->slices.corr[s] >= 0 && ts__map64_get(&launch, (uint64_t)r->slices.corr[s], &lt))
            t = (int64_t)lt;
        if (t < w->start_ns || t >= w->end_ns) continue;
        if (out->n == out->cap && ts__grow((void **)&out->v, &out->cap, sizeof *out->v, (size_t)out->n + 1)) {
            rc = TS_ENOMEM;
            break;
        }
        out->v[out->n++] = (rec){
            .rank_idx = o->by == TS_STATS_BY_CATEGORY ? 0 : rank_idx,
            .name = o->by == TS_STATS_BY_NAME ? r->slices.name[s] : 0,
            .cat = (uint8_t)cat,
            .dur_ns = r->slices.dur_ns[s],
        };
    }
    ts__map64_free(&launch);
    ts__names_free(&names);
    return rc;
}

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->rank_idx != y->rank_idx) return x->rank_idx < y->rank_idx ? -1 : 1;
    if (x->cat != y->cat) return x->cat < y->cat ? -1 : 1;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    return (x->dur_ns > y->dur_ns) - (x->dur_ns < y->dur_ns);
}

static bool same_group(const rec *a, const rec *b)
{
    return a->rank_idx == b->rank_idx && a->cat == b->cat && a->name == b->name;
}

static int cmp_row(const void *a, const void *b)
{
    const ts_stat_row *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if (x->cat != y->cat) return x->cat < y->cat ? -1 : 1;
    if (x->total_ns != y->total_ns) return x->total_ns > y->total_ns ? -1 : 1;
    if (x->name && y->name) return strcmp(x->name, y->name);
    return 0;
}

/* One row from a run of records of one group, durations ascending. */
static ts_stat_row make_row(const ts_trace *t, const ts_stats *st, const ts_stats_opts *o,
                            const rec *run, uint32_t n, int64_t *scratch)
{
    ts_stat_row row = {0};
    const ts_rank *r = t->ranks[run[0].rank_idx];
    row.rank = o->by == TS_STATS_BY_CATEGORY ? -1 : r->rank;
    row.cat = (ts_stat_cat)run[0].cat;
    row.name = o->by == TS_STATS_BY_NAME ? ts__rank_str(r, run[0].name) : NULL;
    row.count = n;
    for (uint32_t i = 0; i < n; i++) scratch[i] = run[i].dur_ns;
    ts_sample smp = ts__sample_sorted(scratch, n);
    row.total_ns = smp.total;
    row.min_ns = smp.min;
    row.max_ns = smp.max;
    row.mean_ns = smp.mean;
    row.median_ns = smp.median;
    row.stddev_ns = smp.stddev;
    int64_t window = 0;
    for (uint32_t i = 0; i < st->n_windows; i++)
        if (o->by == TS_STATS_BY_CATEGORY || st->windows[i].rank == r->rank)
            window += st->windows[i].end_ns - st->windows[i].start_ns;
    row.pct_of_window = window > 0 ? 100.0 * (double)row.total_ns / (double)window : 0;
    return row;
}

/* Group the sorted records into rows; keep `top` per (rank, category). */
static int build_rows(const ts_trace *t, ts_stats *st, const ts_stats_opts *o, const recs *rs)
{
    uint32_t n_groups = 0, longest = 0;
    for (uint32_t i = 0, j; i < rs->n; i = j) {
        for (j = i + 1; j < rs->n && same_group(&rs->v[i], &rs->v[j]); j++) {}
        n_groups++;
        if (j - i > longest) longest = j - i;
    }
    ((stats_impl *)st)->cap_rows = n_groups ? n_groups : 1;
    st->rows = ts__calloc(n_groups ? n_groups : 1, sizeof *st->rows);
    int64_t *scratch = ts__malloc((size_t)(longest ? longest : 1) * sizeof *scratch);
    if (!st->rows || !scratch) { ts__free(scratch, (size_t)(longest ? longest : 1) * 8); return TS_ENOMEM; }
    for (uint32_t i = 0, j; i < rs->n; i = j) {
        for (j = i + 1; j < rs->n && same_group(&rs->v[i], &rs->v[j]); j++) {}
        st->rows[st->n_rows++] = make_row(t, st, o, &rs->v[i], j - i, scratch);
    }
    ts__free(scratch, (size_t)(longest ? longest : 1) * 8);
    qsort(st->rows, st->n_rows, sizeof *st->rows, cmp_row);
    if (o->top == 0) return TS_OK;
    uint32_t kept = 0, in_group = 0;
    for (uint32_t i = 0; i < st->n_rows; i++) {
        bool same = i > 0 && st->rows[i].rank == st->rows[i - 1].rank && st->rows[i].cat == st->rows[i - 1].cat;
        in_group = same ? in_group + 1 : 0;
        if (in_group < o->top) st->rows[kept++] = st->rows[i];
    }
    st->n_rows = kept;
    return TS_OK;
}

int ts_stats_compute(const ts_trace *t, const ts_stats_opts *opts, ts_stats **out, ts_error *err)
{
    ts_stats_opts o = opts ? *opts : (ts_stats_opts){0};
    ts__error_clear(err);
    *out = NULL;
    stats_impl *impl = ts__calloc(1, sizeof *impl);
    ts_stats *st = impl ? &impl->pub : NULL;
    recs rs = {0};
    int rc = TS_ENOMEM;
    if (!st) goto fail;
    impl->cap_windows = t->n_ranks ? t->n_ranks : 1;
    if (!(st->windows = ts__calloc(impl->cap_windows, sizeof *st->windows))) goto fail;
    for (uint32_t i = 0; i < t->n_ranks; i++) {
        ts_stats_window w;
        if (!rank_window(t->ranks[i], &o, &w)) continue;
        st->windows[st->n_windows++] = w;
        if ((rc = collect_rank(t->ranks[i], i, &o, &w, &rs))) goto fail;
    }
    if (st->n_windows == 0 && !o.has_iterations) {
        rc = ts__error(err, TS_ENODATA, "the trace holds no rank");
        goto fail_quiet;
    }
    if (st->n_windows == 0) {
        char range[64];
        ts__range_str(o.iter_first, o.iter_last, range, sizeof range);
        rc = ts__error(err, TS_ENODATA, "no rank has an iteration in %s", range);
        goto fail_quiet;
    }
    if (rs.n > 1) qsort(rs.v, rs.n, sizeof *rs.v, cmp_rec);
    if ((rc = build_rows(t, st, &o, &rs))) goto fail;
    ts__free(rs.v, (size_t)rs.cap * sizeof *rs.v);
    *out = st;
    return TS_OK;
fail:
    ts__error(err, rc, "out of memory while computing statistics");
fail_quiet:
    ts__free(rs.v, (size_t)rs.cap * sizeof *rs.v);
    ts_stats_destroy(st);
    return rc;
}

void ts_stats_destroy(ts_stats *s)
{
    if (!s) return;
    stats_impl *impl = (stats_impl *)s;
    ts__free(s->rows, (size_t)impl->cap_rows * sizeof *s->rows);
    ts__free(s->windows, (size_t)impl->cap_windows * sizeof *s->windows);
    ts__free(impl, sizeof *impl);
}

int ts_analyze_set_iteration_marker(ts_trace *t, const char *marker, ts_error *err)
{
    for (uint32_t i = 0; i < t->n_ranks; i++)
        if (ts__rank_find_iterations(t->ranks[i], marker))
            return ts__error(err, TS_ENOMEM, "%s: out of memory while finding iterations", t->ranks[i]->path);
    return TS_OK;
}
