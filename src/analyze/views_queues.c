/* views_queues.c - the queue view (Trace Compass's queue_stats analysis):
 * per GPU stream, how many ops were launched and not yet finished, over
 * time. Where the seed read HSA queue sizes, a CUDA trace gives each op's
 * launch (the runtime call with its correlation id) and its end on the GPU.
 *
 * Not for: host-side queues (data loaders) or NCCL's proxy queues.
 * An op joins at its launch call's start (the earliest it can be queued),
 * leaves at its GPU end; at equal times leaves go first, so an op that ends
 * when another is launched is not counted twice. Cost: per rank a hash map
 * of launch calls by correlation id, then per stream a sort of 2 x ops
 * events: O(ops log ops).
 */
#include <stdlib.h>

#include "analyze/views_int.h"

typedef struct q_impl {
    ts_view_queues pub;
    uint32_t cap_streams;
    uint64_t cap_points, cap_bins;
} q_impl;

typedef struct q_ev { int64_t t; int64_t delta; } q_ev;   /* delta -1 sorts before +1 */

static int by_time_delta(const void *a, const void *b)
{
    const q_ev *x = a, *y = b;
    if (x->t != y->t) return (x->t > y->t) - (x->t < y->t);
    return (x->delta > y->delta) - (x->delta < y->delta);
}

static bool queued_op(ts_kind k) { return k == TS_KIND_KERNEL || k == TS_KIND_GPU_MEMCPY || k == TS_KIND_GPU_MEMSET; }

/* correlation id -> start of the runtime/driver call that launched it */
static int launch_map(const ts_rank *r, ts_map64 *m)
{
    for (uint32_t s = 0; s < r->slices.n; s++) {
        ts_kind k = (ts_kind)r->slices.kind[s];
        if ((k == TS_KIND_CUDA_RUNTIME || k == TS_KIND_CUDA_DRIVER) && r->slices.corr[s] >= 0 &&
            ts__map64_put(m, (uint64_t)r->slices.corr[s], (uint64_t)r->slices.ts_ns[s]))
            return TS_ENOMEM;
    }
    return TS_OK;
}

/* Queue length steps of sorted events into points; max, mean, bins. */
static int walk(q_impl *v, ts_queue_stream *st, const q_ev *ev, uint64_t n, uint32_t nb)
{
    int64_t lo = ev[0].t, hi = ev[n - 1].t, len = 0, prev_t = lo;
    double area = 0;
    ts__views_bins(lo, hi, nb, &st->bin_start_ns, &st->bin_ns);
    st->first_point = v->pub.n_points;
    for (uint64_t i = 0; i < n;) {
        int64_t t = ev[i].t;
        area += (double)len * (double)(t - prev_t);
        for (; i < n && ev[i].t == t; i++) len += ev[i].delta;
        if (ts__views_grow((void **)&v->pub.points, &v->cap_points, sizeof *v->pub.points, v->pub.n_points + 1))
            return TS_ENOMEM;
        v->pub.points[v->pub.n_points++] = (ts_queue_point){t, (uint32_t)len};
        if ((uint64_t)len > st->max_len) { st->max_len = (uint32_t)len; st->max_at_ns = t; }
        prev_t = t;
    }
    st->n_points = v->pub.n_points - st->first_point;
    st->mean_len = hi > lo ? area / (double)(hi - lo) : 0;
    return TS_OK;
}

/* Per bin: the most ops queued and the time-weighted mean. */
static void fill_bins(const q_impl *v, const ts_queue_stream *st, ts_queue_bin *bins, uint32_t nb)
{
    const ts_queue_point *p = v->pub.points + st->first_point;
    uint64_t i = 0;
    uint32_t len = 0;
    for (uint32_t k = 0; k < nb; k++) {
        int64_t lo = st->bin_start_ns + (int64_t)k * st->bin_ns, hi = lo + st->bin_ns, at = lo;
        double area = 0;
        bins[k] = (ts_queue_bin){.max_len = len};
        for (; i < st->n_points && p[i].t_ns < hi; i++) {
            int64_t t = p[i].t_ns > lo ? p[i].t_ns : lo;
            area += (double)len * (double)(t - at);
            at = t;
            len = p[i].len;
            if (len > bins[k].max_len) bins[k].max_len = len;
        }
        area += (double)len * (double)(hi - at);
        bins[k].mean_len = area / (double)st->bin_ns;
    }
}

static int add_stream(q_impl *v, const ts_rank *r, const ts_track *tr, const ts_map64 *launch, uint32_t nb,
                      q_ev **ev, uint64_t *cap)
{
    ts_queue_stream st = {.rank = r->rank, .device = tr->device, .stream = tr->stream};
    uint64_t n = 0;
    double wait = 0;
    for (uint32_t s = tr->first_slice; s < tr->first_slice + tr->n_slices; s++) {
        if (!queued_op((ts_kind)r->slices.kind[s])) continue;
        int64_t start = r->slices.ts_ns[s], join = start;
        uint64_t l;
        if (r->slices.corr[s] >= 0 && ts__map64_get(launch, (uint64_t)r->slices.corr[s], &l)) {
            if ((int64_t)l < join) join = (int64_t)l;
            wait += (double)(start - join);
        } else {
            st.n_unlinked++;
        }
        if (ts__views_grow((void **)ev, cap, sizeof **ev, n + 2)) return TS_ENOMEM;
        (*ev)[n++] = (q_ev){join, +1};
        (*ev)[n++] = (q_ev){ts__slice_end(r, s), -1};
        st.n_ops++;
    }
    if (!n) return TS_OK;
    if (st.n_ops > st.n_unlinked) st.launch_to_start_ns = (int64_t)(wait / (double)(st.n_ops - st.n_unlinked));
    qsort(*ev, n, sizeof **ev, by_time_delta);
    if (v->pub.n_streams == v->cap_streams &&
        ts__grow((void **)&v->pub.streams, &v->cap_streams, sizeof st, (size_t)v->pub.n_streams + 1))
        return TS_ENOMEM;
    if (walk(v, &st, *ev, n, nb) ||
        ts__views_grow((void **)&v->pub.bins, &v->cap_bins, sizeof *v->pub.bins, (uint64_t)(v->pub.n_streams + 1) * nb))
        return TS_ENOMEM;
    st.first_bin = v->pub.n_streams * nb;
    fill_bins(v, &st, v->pub.bins + st.first_bin, nb);
    v->pub.streams[v->pub.n_streams++] = st;
    return TS_OK;
}

int ts_view_queues_create(const ts_job *t, const ts_views_opts *opt, ts_view_queues **out, ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    ts__views_cfg cfg;
    ts__views_cfg_from(opt, &cfg);
    q_impl *v = ts__calloc(1, sizeof *v);
    if (!v) return ts__error(err, TS_ENOMEM, "out of memory");
    v->pub.n_bins = cfg.n_bins;
    q_ev *ev = NULL;
    uint64_t cap = 0;
    int rc = TS_OK;
    for (uint32_t ri = 0; ri < t->n_ranks && !rc; ri++) {
        const ts_rank *r = t->ranks[ri];
        if (!ts__views_rank_ok(&cfg, r)) continue;
        ts_map64 launch;
        ts__map64_init(&launch);
        rc = launch_map(r, &launch);
        for (uint32_t k = 0; k < r->n_tracks && !rc; k++)
            if (r->tracks[k].kind == TS_TRACK_GPU_STREAM)
                rc = add_stream(v, r, &r->tracks[k], &launch, cfg.n_bins, &ev, &cap);
        ts__map64_free(&launch);
    }
    ts__free(ev, cap * sizeof *ev);
    if (rc) ts__error(err, rc, "out of memory");
    else if (!v->pub.n_streams) rc = ts__error(err, TS_ENODATA, "no GPU ops (kernels, memcpy, memset) on streams%s",
                                               cfg.rank >= 0 ? " for that rank" : "");
    if (rc) { ts_view_queues_destroy(&v->pub); return rc; }
    *out = &v->pub;
    return TS_OK;
}

void ts_view_queues_destroy(ts_view_queues *pub)
{
    if (!pub) return;
    q_impl *v = (q_impl *)pub;
    ts__free(v->pub.streams, (size_t)v->cap_streams * sizeof *v->pub.streams);
    ts__free(v->pub.points, v->cap_points * sizeof *v->pub.points);
    ts__free(v->pub.bins, v->cap_bins * sizeof *v->pub.bins);
    ts__free(v, sizeof *v);
}
