/* diff.c - `trainscope diff A B`: HTA's trace diff (hta/trace_diff.py,
 * TraceDiff.compare_traces and ops_diff), rank by rank.
 *
 * Not for: timing alignment of the two traces (names and sums only, as HTA).
 * HTA's rules: the events of one iteration of one rank (default: the first
 * ProfilerStep of each trace; a host slice belongs to the step its start lies
 * in, [ts, ts + dur), the last such step when steps overlap; a GPU op to its
 * launching call's step by correlation, none when no call is in the trace);
 * Kineto's "Trace" bookkeeping slices are not events; CPU = no "stream" arg,
 * GPU = an op with one (gpu_user_annotation counts as CPU, as in HTA); per
 * name: count and summed duration in A and B; the change is "added" (only in
 * B), "removed" (only in A), "+"/"-" (more or fewer in B), "=" (same count).
 * Cost: O(slices) per rank with hash maps by name; rows sorted per rank.
 */
#include "analyze/analyze_int.h"

#include <stdlib.h>

typedef struct diff_impl {
    ts_diff  pub;          /* first: a ts_diff* is a diff_impl* */
    uint32_t cap_ranks, cap_rows, cap_only_a, cap_only_b;
} diff_impl;

const char *ts_diff_change_name(ts_diff_change c)
{
    static const char *const names[] = {"=", "added", "removed", "+", "-"};
    return (unsigned)c < 5 ? names[c] : "?";
}

/* The step of ProfilerStep iteration `want` (first = the first one), or
 * false when the rank has no such iteration. */
static bool pick_iteration(const ts_rank *r, const ts_diff_opts *o, int64_t *step)
{
    for (uint32_t i = 0; i < r->n_iterations; i++)
        if (!o->has_iteration || r->iterations[i].step == o->iteration) { *step = r->iterations[i].step; return true; }
    return false;
}

/* HTA add_iteration for host slices: the last step whose [start, end) holds ts. */
static int64_t step_of(const ts_rank *r, int64_t ts)
{
    int64_t step = INT64_MIN;
    for (uint32_t i = 0; i < r->n_iterations; i++)
        if (r->iterations[i].slice != TS_NONE32 && r->iterations[i].start_ns <= ts && ts < r->iterations[i].end_ns)
            step = r->iterations[i].step;
    return step;
}

/* Whether slice s of r is compared: bookkeeping, device and iteration. */
typedef struct side {
    const ts_rank *r;
    int64_t  step;            /* INT64_MIN with whole traces */
    ts_map64 launch_step;     /* correlation -> step + 2^62 of the launching host slice */
} side;

static int side_init(side *sd, const ts_rank *r, int64_t step, bool whole)
{
    sd->r = r;
    sd->step = whole ? INT64_MIN : step;
    ts__map64_init(&sd->launch_step);
    if (whole) return TS_OK;
    for (uint32_t s = 0; s < r->slices.n; s++)
        if (r->slices.corr[s] >= 0 && !ts__is_gpu_op(r, s) && !ts__map64_get(&sd->launch_step, (uint64_t)r->slices.corr[s], NULL) &&
            ts__map64_put(&sd->launch_step, (uint64_t)r->slices.corr[s], (uint64_t)step_of(r, r->slices.ts_ns[s])))
            return TS_ENOMEM;
    return TS_OK;
}

static bool counted(const side *sd, uint32_t s, ts_diff_device dev)
{
    const ts_rank *r = sd->r;
    if (ts__is_profiler_bookkeeping(r, s)) return false;
    bool gpu = ts__is_gpu_op(r, s);
    if ((dev == TS_DIFF_CPU && gpu) || (dev == TS_DIFF_GPU && !gpu)) return false;
    if (sd->step == INT64_MIN) return true;
    if (!gpu) return step_of(r, r->slices.ts_ns[s]) == sd->step;
    uint64_t v;
    return r->slices.corr[s] >= 0 && ts__map64_get(&sd->launch_step, (uint64_t)r->slices.corr[s], &v) &&
           (int64_t)v == sd->step;
}

/* Rows by name: a map from the name's hash to row + 1, probing on. */
typedef struct names_map { ts_map64 m; diff_impl *d; uint32_t first; } names_map;

static ts_diff_row *row_for(names_map *nm, const char *name)
{
    uint64_t h = ts__hash_bytes(name, strlen(name)), v;
    for (;; h++) {
        if (h == UINT64_MAX) h = 0;   /* the map's empty key */
        if (!ts__map64_get(&nm->m, h, &v)) break;
        if (!strcmp(nm->d->pub.rows[v - 1].name, name)) return &nm->d->pub.rows[v - 1];
    }
    diff_impl *d = nm->d;
    if (d->pub.n_rows == d->cap_rows &&
        ts__grow((void **)&d->pub.rows, &d->cap_rows, sizeof *d->pub.rows, (size_t)d->pub.n_rows + 1))
        return NULL;
    if (ts__map64_put(&nm->m, h, (uint64_t)d->pub.n_rows + 1)) return NULL;
    ts_diff_row *row = &d->pub.rows[d->pub.n_rows++];
    memset(row, 0, sizeof *row);
    row->name = name;
    return row;
}

static int add_side(names_map *nm, const side *sd, ts_diff_device dev, bool is_b)
{
    const ts_rank *r = sd->r;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        if (!counted(sd, s, dev)) continue;
        ts_diff_row *row = row_for(nm, ts__rank_str(r, r->slices.name[s]));
        if (!row) return TS_ENOMEM;
        if (is_b) { row->b_count++; row->b_total_ns += r->slices.dur_ns[s]; }
        else { row->a_count++; row->a_total_ns += r->slices.dur_ns[s]; }
    }
    return TS_OK;
}

static int64_t abs_diff(const ts_diff_row *x) { int64_t d = x->b_total_ns - x->a_total_ns; return d < 0 ? -d : d; }

static int cmp_row(const void *a, const void *b)
{
    const ts_diff_row *x = a, *y = b;
    if (abs_diff(x) != abs_diff(y)) return abs_diff(x) > abs_diff(y) ? -1 : 1;
    return strcmp(x->name, y->name);
}

static ts_diff_change change_of(const ts_diff_row *x)
{
    if (!x->a_count) return TS_DIFF_ADDED;
    if (!x->b_count) return TS_DIFF_REMOVED;
    return x->b_count > x->a_count ? TS_DIFF_MORE : x->b_count < x->a_count ? TS_DIFF_FEWER : TS_DIFF_SAME;
}

static int diff_rank(diff_impl *d, const ts_rank *ra, const ts_rank *rb, const ts_diff_opts *o, ts_error *err)
{
    ts_diff_rank dr = {.rank = ra->rank, .a_step = -1, .b_step = -1, .first_row = d->pub.n_rows};
    if (!o->whole && (!pick_iteration(ra, o, &dr.a_step) || !pick_iteration(rb, o, &dr.b_step))) {
        const ts_rank *missing = !pick_iteration(ra, o, &dr.a_step) ? ra : rb;
        if (o->has_iteration)
            return ts__error(err, TS_ENODATA, "%s: rank %d has no ProfilerStep#%lld (--whole compares every slice)",
                             missing->path, missing->rank, (long long)o->iteration);
        return ts__error(err, TS_ENODATA, "%s: rank %d has no ProfilerStep iteration (--whole compares every slice)",
                         missing->path, missing->rank);
    }
    side sa, sb;
    names_map nm = {.d = d, .first = d->pub.n_rows};
    ts__map64_init(&nm.m);
    int rc = side_init(&sa, ra, dr.a_step, o->whole);
    int rc2 = side_init(&sb, rb, dr.b_step, o->whole);
    if (!rc) rc = rc2;
    if (!rc) rc = add_side(&nm, &sa, o->device, false);
    if (!rc) rc = add_side(&nm, &sb, o->device, true);
    ts__map64_free(&sa.launch_step);
    ts__map64_free(&sb.launch_step);
    ts__map64_free(&nm.m);
    if (rc) return ts__error(err, TS_ENOMEM, "out of memory while comparing rank %d", ra->rank);
    dr.n_rows = d->pub.n_rows - dr.first_row;
    for (uint32_t i = dr.first_row; i < d->pub.n_rows; i++) {
        d->pub.rows[i].change = change_of(&d->pub.rows[i]);
        dr.n_change[d->pub.rows[i].change]++;
    }
    if (dr.n_rows) qsort(d->pub.rows + dr.first_row, dr.n_rows, sizeof *d->pub.rows, cmp_row);
    if (d->pub.n_ranks == d->cap_ranks &&
        ts__grow((void **)&d->pub.ranks, &d->cap_ranks, sizeof *d->pub.ranks, (size_t)d->pub.n_ranks + 1))
        return ts__error(err, TS_ENOMEM, "out of memory while comparing rank %d", ra->rank);
    d->pub.ranks[d->pub.n_ranks++] = dr;
    return TS_OK;
}

static const ts_rank *find_rank(const ts_job *t, int32_t rank)
{
    for (uint32_t i = 0; i < t->n_ranks; i++)
        if (t->ranks[i]->rank == rank) return t->ranks[i];
    return NULL;
}

static int note_alone(int32_t **v, uint32_t *n, uint32_t *cap, int32_t rank)
{
    if (*n == *cap && ts__grow((void **)v, cap, sizeof **v, (size_t)*n + 1)) return TS_ENOMEM;
    (*v)[(*n)++] = rank;
    return TS_OK;
}

int ts_diff_compute(const ts_job *a, const ts_job *b, const ts_diff_opts *opts, ts_diff **out, ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    ts_diff_opts o = opts ? *opts : (ts_diff_opts){0};
    diff_impl *d = ts__calloc(1, sizeof *d);
    if (!d) return ts__error(err, TS_ENOMEM, "out of memory while comparing traces");
    int rc = TS_OK;
    for (uint32_t i = 0; i < a->n_ranks && !rc; i++) {
        const ts_rank *rb = find_rank(b, a->ranks[i]->rank);
        rc = rb ? diff_rank(d, a->ranks[i], rb, &o, err)
                : note_alone(&d->pub.only_a, &d->pub.n_only_a, &d->cap_only_a, a->ranks[i]->rank);
    }
    for (uint32_t i = 0; i < b->n_ranks && !rc; i++)
        if (!find_rank(a, b->ranks[i]->rank)) rc = note_alone(&d->pub.only_b, &d->pub.n_only_b, &d->cap_only_b, b->ranks[i]->rank);
    if (rc == TS_ENOMEM) ts__error(err, rc, "out of memory while comparing traces");
    if (!rc && d->pub.n_ranks == 0) rc = ts__error(err, TS_ENODATA, "no rank number is in both traces");
    if (rc) { ts_diff_destroy(&d->pub); return rc; }
    *out = &d->pub;
    return TS_OK;
}

void ts_diff_destroy(ts_diff *pub)
{
    if (!pub) return;
    diff_impl *d = (diff_impl *)pub;
    ts__free(d->pub.ranks, (size_t)d->cap_ranks * sizeof *d->pub.ranks);
    ts__free(d->pub.rows, (size_t)d->cap_rows * sizeof *d->pub.rows);
    ts__free(d->pub.only_a, (size_t)d->cap_only_a * sizeof *d->pub.only_a);
    ts__free(d->pub.only_b, (size_t)d->cap_only_b * sizeof *d->pub.only_b);
    ts__free(d, sizeof *d);
}
