/* intervals.c - set arithmetic on half-open time intervals (analyze_int.h),
 * the iteration windows analyses restrict themselves to, and the sample
 * statistics every table shares. */
#include "analyze/analyze_int.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* v by (start, end): a stable sort by end, then by start. When tmp cannot
 * be had, qsort (same order). */
static int cmp_ival(const void *a, const void *b)
{
    const ts_ival *x = a, *y = b;
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

static void sort_ivals(ts_ival *v, uint32_t n)
{
    _Static_assert(sizeof(ts_ival) == 16 && offsetof(ts_ival, end_ns) == 8, "ts__sort_rec16 keys");
    ts_ival *tmp = n >= 48 ? ts__malloc((size_t)n * sizeof *tmp) : NULL;
    if (n >= 48 && !tmp) { qsort(v, n, sizeof *v, cmp_ival); return; }
    ts__sort_rec16(v, n, offsetof(ts_ival, end_ns), tmp);
    ts__sort_rec16(v, n, offsetof(ts_ival, start_ns), tmp);
    ts__free(tmp, (size_t)n * sizeof *tmp);
}

uint32_t ts__ival_merge(ts_ival *v, uint32_t n)
{
    if (n == 0) return 0;
    sort_ivals(v, n);
    uint32_t m = 0;
    for (uint32_t i = 1; i < n; i++) {
        if (v[i].start_ns <= v[m].end_ns) {   /* overlaps or touches: extend */
            if (v[i].end_ns > v[m].end_ns) v[m].end_ns = v[i].end_ns;
        } else {
            v[++m] = v[i];
        }
    }
    return m + 1;
}

int64_t ts__ival_total(const ts_ival *v, uint32_t n)
{
    int64_t t = 0;
    for (uint32_t i = 0; i < n; i++) t += v[i].end_ns - v[i].start_ns;
    return t;
}

int64_t ts__ival_overlap(const ts_ival *a, uint32_t na, const ts_ival *b, uint32_t nb)
{
    int64_t t = 0;
    uint32_t i = 0, j = 0;
    while (i < na && j < nb) {
        int64_t lo = a[i].start_ns > b[j].start_ns ? a[i].start_ns : b[j].start_ns;
        int64_t hi = a[i].end_ns < b[j].end_ns ? a[i].end_ns : b[j].end_ns;
        if (hi > lo) t += hi - lo;
        if (a[i].end_ns < b[j].end_ns) i++; else j++;
    }
    return t;
}

typedef struct edge { int64_t t; int delta; } edge;   /* delta = +-(1 << list) */

/* HTA's _get_gpu_kernel_type_time: each merged list adds +bit at a start and
 * -bit at an end; the running sum between consecutive edges is the set of
 * types running. Within one list intervals never touch, so the running sum
 * is always a valid mask. */
int ts__ival_sweep(const ts_ival *const *lists, const uint32_t *counts, int k, int64_t *out)
{
    size_t n = 0;
    for (int l = 0; l < k; l++) n += 2 * (size_t)counts[l];
    if (n == 0) return TS_OK;
    _Static_assert(sizeof(edge) == 16, "ts__sort_rec16 records");
    edge *e = ts__malloc(2 * n * sizeof *e);   /* the second half is the sort's scratch */
    if (!e) return TS_ENOMEM;
    size_t m = 0;
    for (int l = 0; l < k; l++)
        for (uint32_t i = 0; i < counts[l]; i++) {
            e[m++] = (edge){lists[l][i].start_ns, 1 << l};
            e[m++] = (edge){lists[l][i].end_ns, -(1 << l)};
        }
    ts__sort_rec16(e, n, 0, e + n);   /* by time; equal times in any order: they bound empty spans */
    int running = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        running += e[i].delta;
        if (running >= 0 && running < (1 << k)) out[running] += e[i + 1].t - e[i].t;
    }
    ts__free(e, 2 * n * sizeof *e);
    return TS_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int ts__group_durations(const uint32_t *key, const int64_t *dur, uint32_t n, uint32_t n_keys,
                        int64_t *durs, ts_dgroups *g)
{
    uint32_t *next = ts__calloc(n_keys ? n_keys : 1, sizeof *next);   /* per key: count, then next slot */
    uint32_t *seen = ts__malloc((size_t)(n ? n : 1) * sizeof *seen);
    int64_t *tmp = ts__malloc((size_t)(n ? n : 1) * sizeof *tmp);
    uint32_t n_seen = 0, first_group = g->n;
    int rc = next && seen && tmp ? TS_OK : TS_ENOMEM;
    for (uint32_t i = 0; i < n && rc == TS_OK; i++)
        if (next[key[i]]++ == 0) seen[n_seen++] = key[i];
    if (rc == TS_OK) {
        qsort(seen, n_seen, sizeof *seen, cmp_u32);   /* a few thousand keys */
        if (g->n + n_seen > g->cap && ts__grow((void **)&g->v, &g->cap, sizeof *g->v, (size_t)g->n + n_seen))
            rc = TS_ENOMEM;
    }
    if (rc == TS_OK) {
        for (uint32_t k = 0, pos = 0; k < n_seen; k++) {
            uint32_t c = next[seen[k]];
            g->v[g->n++] = (ts_dgroup){seen[k], pos, c};
            next[seen[k]] = pos;
            pos += c;
        }
        for (uint32_t i = 0; i < n; i++) durs[next[key[i]]++] = dur[i];
        for (uint32_t k = first_group; k < g->n; k++) ts__sort_i64(durs + g->v[k].first, g->v[k].n, tmp);
    }
    ts__free(next, (size_t)(n_keys ? n_keys : 1) * sizeof *next);
    ts__free(seen, (size_t)(n ? n : 1) * sizeof *seen);
    ts__free(tmp, (size_t)(n ? n : 1) * sizeof *tmp);
    return rc;
}

bool ts__ival_push(ts_ival **v, uint32_t *n, uint32_t *cap, int64_t start_ns, int64_t end_ns)
{
    if (*n == *cap && ts__grow((void **)v, cap, sizeof **v, (size_t)*n + 1)) return false;
    (*v)[(*n)++] = (ts_ival){start_ns, end_ns};
    return true;
}

void ts__ival_free(ts_ival *v, uint32_t cap) { ts__free(v, (size_t)cap * sizeof *v); }

ts_sample ts__sample_sorted(const int64_t *v, uint64_t n)
{
    ts_sample s = {0};
    if (n == 0) return s;
    for (uint64_t i = 0; i < n; i++) s.total += v[i];
    s.min = v[0];
    s.max = v[n - 1];
    s.mean = (double)s.total / (double)n;
    s.median = n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
    if (n > 1) {
        double ss = 0;
        for (uint64_t i = 0; i < n; i++) ss += ((double)v[i] - s.mean) * ((double)v[i] - s.mean);
        s.stddev = sqrt(ss / (double)(n - 1));
    }
    return s;
}

bool ts__rank_window(const ts_rank *r, const ts_window_sel *w, int64_t *start, int64_t *end, uint32_t *n_iterations)
{
    *start = INT64_MAX;
    *end = INT64_MIN;
    *n_iterations = 0;
    for (uint32_t i = 0; !w->whole && i < r->n_iterations; i++) {
        const ts_iteration *it = &r->iterations[i];
        if (!ts__window_has_step(w, it->step)) continue;
        if (it->start_ns < *start) *start = it->start_ns;
        if (it->end_ns > *end) *end = it->end_ns;
        (*n_iterations)++;
    }
    if (*n_iterations > 0) return true;
    if (!w->whole && (w->steps || r->n_iterations)) return false;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        if (ts__is_profiler_bookkeeping(r, s)) continue;
        if (r->slices.ts_ns[s] < *start) *start = r->slices.ts_ns[s];
        if (ts__slice_end(r, s) > *end) *end = ts__slice_end(r, s);
    }
    if (*start > *end) *start = *end = 0;   /* a rank without slices */
    return true;
}

int ts__window_empty_error(const ts_job *t, const ts_window_sel *sel, ts_error *err)
{
    if (t->n_ranks == 0) return ts__error(err, TS_ENODATA, "the trace holds no rank");
    char range[64];
    ts__range_str(sel->first, sel->last, range, sizeof range);
    if (sel->steps && sel->n_complete)
        return ts__error(err, TS_ENODATA, "no iteration every rank has lies in %s (they have %lld..%lld)", range,
                         (long long)sel->complete[0], (long long)sel->complete[sel->n_complete - 1]);
    if (sel->steps) return ts__error(err, TS_ENODATA, "no rank has an iteration in %s", range);
    return ts__error(err, TS_ENODATA, "no iteration (ProfilerStep#N) is marked on every rank that marks "
                     "iterations; --window all analyses the whole trace");
}

void ts__range_str(int64_t first, int64_t last, char *out, size_t size)
{
    char a[24] = "", b[24] = "";
    if (first != INT64_MIN) snprintf(a, sizeof a, "%lld", (long long)first);
    if (last != INT64_MAX) snprintf(b, sizeof b, "%lld", (long long)last);
    snprintf(out, size, "%s:%s", a, b);
}
