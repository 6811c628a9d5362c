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
#include "ingest/ingest.h"

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

/* What ts_stats_compute reads of a rank, for ts_stats_load: the counted
 * slices, every slice carrying a launch's correlation id (where a GPU op is
 * placed in time), the iteration marks, and the first-starting and the
 * last-ending slice that is not profiler bookkeeping (the whole-trace window
 * of a rank without marks is their span). No args. */
void ts__stats_keep(const ts_rank *r, uint8_t *keep)
{
    ts_names names;
    if (ts__names_init(&names, r) != TS_OK) {   /* no memory to classify: keep every slice */
        memset(keep, 1, r->slices.n);
        return;
    }
    uint32_t first = TS_NONE32, last = TS_NONE32;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        if (slice_category(r, &names, s) >= 0 || r->slices.corr[s] >= 0) keep[s] = 1;
        if (ts__is_profiler_bookkeeping(r, s)) continue;
        if (first == TS_NONE32 || r->slices.ts_ns[s] < r->slices.ts_ns[first]) first = s;
        if (last == TS_NONE32 || ts__slice_end(r, s) > ts__slice_end(r, last)) last = s;
    }
    if (first != TS_NONE32) keep[first] = keep[last] = 1;
    for (uint32_t i = 0; i < r->n_iterations; i++)
        if (r->iterations[i].slice < r->slices.n) keep[r->iterations[i].slice] = 1;
    ts__names_free(&names);
}

int ts_stats_load(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts, ts_job **out, ts_error *err)
{
    return ts__trace_load_summary(paths, n_paths, opts, ts__stats_keep, true, out, err);
}

/* Window of rank r (ts__rank_window); false when it has no iteration in it. */
static bool rank_window(const ts_rank *r, const ts_window_sel *sel, ts_stats_window *w)
{
    w->rank = r->rank;
    return ts__rank_window(r, sel, &w->start_ns, &w->end_ns, &w->n_iterations);
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

/* One row's records: its key and its durations, durs[first, first + n),
 * ascending. */
typedef struct group {
    uint32_t rank_idx, name, first, n;
    uint8_t  cat;
} group;

typedef struct groups { group *v; uint32_t n, cap; } groups;

/* Group the records by (rank, category, name) in that order, each group's
 * durations sorted (ts__group_durations), into *out and durs (rs->n
 * entries). Records of one rank are contiguous (collect_rank appends rank by
 * rank); names are that rank's string ids. */
static int group_records(const recs *rs, int64_t *durs, groups *out)
{
    uint32_t *key = ts__malloc((size_t)(rs->n ? rs->n : 1) * sizeof *key);
    int64_t *dur = ts__malloc((size_t)(rs->n ? rs->n : 1) * sizeof *dur);
    ts_dgroups dg = {0};
    int rc = key && dur ? TS_OK : TS_ENOMEM;
    for (uint32_t a = 0, b; a < rs->n && rc == TS_OK; a = b) {
        uint32_t rank_idx = rs->v[a].rank_idx, width = 1;
        for (b = a; b < rs->n && rs->v[b].rank_idx == rank_idx; b++)
            if (rs->v[b].name + 1 > width) width = rs->v[b].name + 1;
        for (uint32_t i = a; i < b; i++) {
            key[i - a] = rs->v[i].cat * width + rs->v[i].name;
            dur[i - a] = rs->v[i].dur_ns;
        }
        dg.n = 0;
        rc = ts__group_durations(key, dur, b - a, TS_STAT_CAT_COUNT * width, durs + a, &dg);
        if (rc == TS_OK && out->n + dg.n > out->cap &&
            ts__grow((void **)&out->v, &out->cap, sizeof *out->v, (size_t)out->n + dg.n))
            rc = TS_ENOMEM;
        for (uint32_t g = 0; g < dg.n && rc == TS_OK; g++)
            out->v[out->n++] = (group){rank_idx, dg.v[g].key % width, a + dg.v[g].first, dg.v[g].n,
                                       (uint8_t)(dg.v[g].key / width)};
    }
    ts__free(dg.v, (size_t)dg.cap * sizeof *dg.v);
    ts__free(key, (size_t)(rs->n ? rs->n : 1) * sizeof *key);
    ts__free(dur, (size_t)(rs->n ? rs->n : 1) * sizeof *dur);
    return rc;
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

/* One row from a group and its sorted durations. */
static ts_stat_row make_row(const ts_job *t, const ts_stats *st, const ts_stats_opts *o,
                            const group *gr, const int64_t *durs)
{
    ts_stat_row row = {0};
    const ts_rank *r = t->ranks[gr->rank_idx];
    row.rank = o->by == TS_STATS_BY_CATEGORY ? -1 : r->rank;
    row.cat = (ts_stat_cat)gr->cat;
    row.name = o->by == TS_STATS_BY_NAME ? ts__rank_str(r, gr->name) : NULL;
    row.count = gr->n;
    ts_sample smp = ts__sample_sorted(durs + gr->first, gr->n);
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

/* The records grouped into rows; keep `top` per (rank, category). */
static int build_rows(const ts_job *t, ts_stats *st, const ts_stats_opts *o, const recs *rs)
{
    groups gs = {0};
    int64_t *durs = ts__malloc((size_t)(rs->n ? rs->n : 1) * sizeof *durs);
    int rc = durs ? group_records(rs, durs, &gs) : TS_ENOMEM;
    if (rc == TS_OK) {
        ((stats_impl *)st)->cap_rows = gs.n ? gs.n : 1;
        st->rows = ts__calloc(gs.n ? gs.n : 1, sizeof *st->rows);
        if (!st->rows) rc = TS_ENOMEM;
    }
    for (uint32_t g = 0; g < gs.n && rc == TS_OK; g++) st->rows[st->n_rows++] = make_row(t, st, o, &gs.v[g], durs);
    ts__free(durs, (size_t)(rs->n ? rs->n : 1) * sizeof *durs);
    ts__free(gs.v, (size_t)gs.cap * sizeof *gs.v);
    if (rc) return rc;
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

int ts_stats_compute(const ts_job *t, const ts_stats_opts *opts, ts_stats **out, ts_error *err)
{
    ts_stats_opts o = opts ? *opts : (ts_stats_opts){0};
    ts__error_clear(err);
    *out = NULL;
    stats_impl *impl = ts__calloc(1, sizeof *impl);
    ts_stats *st = impl ? &impl->pub : NULL;
    recs rs = {0};
    ts_window_sel sel = {.whole = o.window_all, .steps = o.has_iterations, .first = o.iter_first, .last = o.iter_last};
    int rc = TS_ENOMEM;
    if (!st) goto fail;
    impl->cap_windows = t->n_ranks ? t->n_ranks : 1;
    if (!(st->windows = ts__calloc(impl->cap_windows, sizeof *st->windows))) goto fail;
    if (ts__window_sel_init(&sel, t)) goto fail;
    for (uint32_t i = 0; i < t->n_ranks; i++) {
        ts_stats_window w;
        if (!rank_window(t->ranks[i], &sel, &w)) continue;
        st->windows[st->n_windows++] = w;
        if ((rc = collect_rank(t->ranks[i], i, &o, &w, &rs))) goto fail;
    }
    if (st->n_windows == 0) {
        rc = ts__window_empty_error(t, &sel, err);
        goto fail_quiet;
    }
    if ((rc = build_rows(t, st, &o, &rs))) goto fail;
    ts__free(rs.v, (size_t)rs.cap * sizeof *rs.v);
    ts__window_sel_free(&sel);
    *out = st;
    return TS_OK;
fail:
    ts__error(err, rc, "out of memory while computing statistics");
fail_quiet:
    ts__free(rs.v, (size_t)rs.cap * sizeof *rs.v);
    ts__window_sel_free(&sel);
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

int ts_analyze_set_iteration_marker(ts_job *t, const char *marker, ts_error *err)
{
    for (uint32_t i = 0; i < t->n_ranks; i++)
        if (ts__rank_find_iterations(t->ranks[i], marker))
            return ts__error(err, TS_ENOMEM, "%s: out of memory while finding iterations", t->ranks[i]->path);
    return TS_OK;
}
