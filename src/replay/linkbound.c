/* linkbound.c - the price of regrouped gradient all-reduces on a job whose
 * all-reduces are bound by a network link (ranks over a shaped or slow
 * link), for --bucket-mb and bucket plans on CPU (gloo) jobs.
 *
 * Over such a link an all-reduce is bytes on the wire: the ranks' CPUs are
 * mostly idle while it runs, and the all-reduces in flight at once (gloo runs
 * two, one per worker thread, over one connection per peer) share the link.
 * So the link is one server of the rate the trace's all-reduces achieved
 * together (ts__link_rate: their bytes over the time at least one was in
 * flight, which folds in what the wire, TCP and the token bucket left of the
 * nominal rate), shared equally by the all-reduces in flight (processor
 * sharing, as two flows over one TCP connection interleave). A new bucket's
 * transfer is what that sharing gives it from its simulated start; the
 * schedule (when each bucket's last gradient is ready, the workers' order,
 * backward's compute) is the simulator's, so a merged bucket that starts
 * after backward pays its whole transfer after it, and small buckets that
 * overlap backward pay theirs beside it. Compute keeps its measured time
 * (the link, not the CPU, is the bottleneck: no CPU sharing is modelled).
 * A new bucket that holds exactly an old one's gradients keeps that one's
 * measured time, scaled by the change in its price (so an unchanged
 * partition replays exactly). Not modelled: a fixed cost per all-reduce (a
 * few round trips, small beside a link-bound transfer), the queue a rate
 * limiter keeps, and old all-reduces of iterations left as measured sharing
 * the link with new ones. O(buckets^2) per round, a few rounds.
 */
#include <math.h>
#include <stdlib.h>

#include "replay/linkbound.h"

typedef struct span { int64_t a, b; } span;

static int cmp_span(const void *x, const void *y)
{
    const span *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a ? 1 : 0;
}

/* Measured start of old collective i: its last member's measured start
 * (the barrier starts when the last rank arrives); INT64_MIN = unmeasured. */
static int64_t meas_start(const ts_link *lk, const ts_sim *s, uint32_t i)
{
    int64_t t = INT64_MIN;
    for (uint32_t k = 0; k < lk->n_ranks; k++) {
        int64_t m = ts__sim_meas_start(s, lk->coll_member[(size_t)i * lk->n_ranks + k]);
        if (m == INT64_MIN) return INT64_MIN;
        if (m > t) t = m;
    }
    return t;
}

double ts__link_rate(const ts_link *lk, const ts_sim *s, uint32_t *n_used)
{
    size_t cap = (size_t)lk->n_colls * sizeof(span) + 1;
    span *sp = ts__malloc(cap);
    uint32_t n = 0;
    double bytes = 0;
    for (uint32_t i = 0; sp && i < lk->n_colls; i++) {
        if (lk->coll_new[i] || lk->coll_bytes[i] <= 0 || lk->coll_meas_ns[i] <= 0) continue;
        int64_t a = meas_start(lk, s, i);
        if (a == INT64_MIN) continue;
        sp[n++] = (span){a, a + lk->coll_meas_ns[i]};
        bytes += (double)lk->coll_bytes[i];
    }
    *n_used = n;
    if (!sp || !n) { ts__free(sp, cap); return 0; }
    qsort(sp, n, sizeof *sp, cmp_span);
    int64_t busy = 0, lo = sp[0].a, hi = sp[0].b;
    for (uint32_t i = 1; i < n; i++) {
        if (sp[i].a > hi) { busy += hi - lo; lo = sp[i].a; hi = sp[i].b; }
        else if (sp[i].b > hi) hi = sp[i].b;
    }
    busy += hi - lo;
    ts__free(sp, cap);
    return busy > 0 ? bytes / (double)busy : 0;
}

/* One all-reduce on the link: its start, bytes, row, and the sharing's state. */
typedef struct item { int64_t a, w; uint32_t row; double rem, dur; } item;

static int cmp_item(const void *x, const void *y)
{
    const item *p = x, *q = y;
    return p->a != q->a ? (p->a < q->a ? -1 : 1) : (p->row > q->row) - (p->row < q->row);
}

/* Processor sharing on one server of `rate` bytes/ns: it[] sorted by start;
 * each item's dur = its finish - its start. O(n^2). */
static void share_link(item *it, uint32_t n, double rate)
{
    uint32_t next = 0, n_active = 0;
    double t = 0;
    for (uint32_t i = 0; i < n; i++) it[i].rem = -1;   /* -1: not started; 0: done */
    while (next < n || n_active) {
        if (!n_active) t = (double)it[next].a;
        while (next < n && (double)it[next].a <= t) { it[next].rem = (double)it[next].w; next++; n_active++; }
        double least = INFINITY;
        for (uint32_t q = 0; q < next; q++)
            if (it[q].rem > 0 && it[q].rem < least) least = it[q].rem;
        double step = least * n_active / rate;   /* until the smallest finishes */
        if (next < n && (double)it[next].a - t < step) step = (double)it[next].a - t;
        double sent = step * rate / n_active;
        t += step;
        for (uint32_t q = 0; q < next; q++) {
            if (it[q].rem <= 0) continue;
            it[q].rem -= sent;
            if (it[q].rem <= 1e-6 * (double)it[q].w) { it[q].rem = 0; it[q].dur = t - (double)it[q].a; n_active--; }
        }
    }
}

/* The link's price of the new collectives, or of the old ones at their
 * measured starts: out[i] for each of them with a start and bytes, else 0.
 * it: scratch of n_colls items. */
static void price_set(const ts_link *lk, const int64_t *start, bool want_new, double rate, item *it, double *out)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < lk->n_colls; i++) {
        out[i] = 0;
        if ((lk->coll_new[i] != 0) != want_new || lk->coll_bytes[i] <= 0 || start[i] == INT64_MIN) continue;
        it[n++] = (item){.a = start[i], .w = lk->coll_bytes[i], .row = i};
    }
    qsort(it, n, sizeof *it, cmp_item);
    share_link(it, n, rate);
    for (uint32_t q = 0; q < n; q++) out[it[q].row] = it[q].dur;
}

/* Set every new collective's transfer from the link's prices; returns the
 * largest change in ns. */
static int64_t retime(const ts_link *lk, ts_sim *s, const double *old_price, const double *new_price)
{
    int64_t most = 0;
    for (uint32_t i = 0; i < lk->n_colls; i++) {
        if (!lk->coll_new[i]) continue;
        int32_t o = lk->coll_same[i];
        double t;
        if (o >= 0 && lk->coll_meas_ns[o] > 0 && old_price[o] > 0 && new_price[i] > 0)
            t = fabs(new_price[i] - old_price[o]) <= 1e-9 * old_price[o]
              ? (double)lk->coll_meas_ns[o] : (double)lk->coll_meas_ns[o] * new_price[i] / old_price[o];
        else if (new_price[i] > 0)
            t = new_price[i];
        else
            continue;
        int64_t v = (int64_t)llround(t), d = llabs(v - s->self_ns[lk->coll_bar[i]]);
        if (d > most) most = d;
        s->self_ns[lk->coll_bar[i]] = v;
    }
    return most;
}

int ts__link_apply(const ts_link *lk, ts_sim *s, double rate, ts_error *err)
{
    size_t n = lk->n_colls;
    item *it = ts__malloc(n * sizeof *it + 1);
    int64_t *start = ts__malloc(n * sizeof *start + 1);
    double *old_price = ts__malloc(n * sizeof *old_price + 1), *new_price = ts__malloc(n * sizeof *new_price + 1);
    int rc = !(rate > 0) ? ts__error(err, TS_EINVAL, "replay: link model without a rate")
           : !it || !start || !old_price || !new_price ? ts__error(err, TS_ENOMEM, "replay: out of memory") : TS_OK;
    if (rc == TS_OK) {
        for (uint32_t i = 0; i < n; i++) start[i] = lk->coll_new[i] ? INT64_MIN : meas_start(lk, s, i);
        price_set(lk, start, false, rate, it, old_price);
    }
    /* A few rounds: price from the simulated starts, re-simulate, until no
     * transfer moves by a microsecond. */
    for (int round = 0; rc == TS_OK && round < 8; round++) {
        rc = ts__sim_run(s, err);
        if (rc) break;
        if (lk->after_sim) lk->after_sim(lk->after_sim_ctx, s);
        for (uint32_t i = 0; i < n; i++) start[i] = lk->coll_new[i] ? s->start_ns[lk->coll_bar[i]] : INT64_MIN;
        price_set(lk, start, true, rate, it, new_price);
        if (retime(lk, s, old_price, new_price) < 1000) break;
    }
    ts__free(it, n * sizeof *it + 1);
    ts__free(start, n * sizeof *start + 1);
    ts__free(old_price, n * sizeof *old_price + 1);
    ts__free(new_price, n * sizeof *new_price + 1);
    return rc;
}
