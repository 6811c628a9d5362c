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
 * sharing, as two flows over one TCP connection interleave): a new bucket
 * takes bytes / rate x (1 + o), o the other new buckets in flight over its
 * simulated span on average, and the schedule is simulated again with
 * these prices until they settle (later rounds go half way, so a schedule
 * that flips between two sharings settles between them; an exact fluid
 * sharing from the starts alone, tried first, ran away: with the first
 * round's short prices every bucket of an iteration overlapped and the next
 * round's prices reached seconds). The schedule (when each bucket's last
 * gradient is ready, the workers' order, backward's compute) is the
 * simulator's, so a merged bucket that starts
 * after backward pays its whole transfer after it, and small buckets that
 * overlap backward pay theirs beside it. Compute keeps its measured time
 * (the link, not the CPU, is the bottleneck: no CPU sharing is modelled).
 * A new bucket that holds exactly an old one's gradients keeps that one's
 * measured time, scaled by the change in its price (so an unchanged
 * partition replays exactly). Not modelled: a fixed cost per all-reduce (a
 * few round trips, small beside a link-bound transfer), the queue a rate
 * limiter keeps, and old all-reduces of iterations left as measured sharing
 * the link with new ones. O(buckets x overlapping buckets) per round, at
 * most 12 rounds.
 */
#include <math.h>
#include <stdlib.h>

#include "replay/linkbound.h"

static int cmp_span(const void *x, const void *y)
{
    const ts_link_span *p = x, *q = y;
    return p->start < q->start ? -1 : p->start > q->start ? 1 : 0;
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

double ts__link_rate(ts_link_span *sp, uint32_t n, int64_t min_bytes, uint32_t *n_used)
{
    if (n > 1) qsort(sp, n, sizeof *sp, cmp_span);
    double bytes = 0;
    int64_t busy = 0, lo = 0, hi = INT64_MIN;
    *n_used = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (sp[i].bytes <= 0 || sp[i].bytes < min_bytes || sp[i].dur <= 0 || sp[i].start == INT64_MIN) continue;
        (*n_used)++;
        bytes += (double)sp[i].bytes;
        if (hi == INT64_MIN || sp[i].start > hi) {
            if (hi != INT64_MIN) busy += hi - lo;
            lo = sp[i].start;
            hi = sp[i].start + sp[i].dur;
        } else if (sp[i].start + sp[i].dur > hi) {
            hi = sp[i].start + sp[i].dur;
        }
    }
    if (hi != INT64_MIN) busy += hi - lo;
    return busy > 0 ? bytes / (double)busy : 0;
}

/* One all-reduce on the link: its span (in the schedule priced) and row. */
typedef struct item { int64_t a, b; uint32_t row; } item;

static int cmp_item(const void *x, const void *y)
{
    const item *p = x, *q = y;
    return p->a != q->a ? (p->a < q->a ? -1 : 1) : (p->row > q->row) - (p->row < q->row);
}

/* The link's price of the new collectives (spans in the simulated
 * schedule), or of the old ones (measured spans): bytes / rate x (1 + o),
 * o the others in flight over its span on average (processor sharing:
 * each of k at once gets 1/k of the link); out[i] = 0 for the others and
 * those without a span or bytes. it: scratch of n_colls items. O(n log n +
 * overlapping pairs). */
static void price_set(const ts_link *lk, const int64_t *start, const int64_t *end, bool want_new, double rate,
                      item *it, double *out)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < lk->n_colls; i++) {
        out[i] = 0;
        if ((lk->coll_new[i] != 0) != want_new || lk->coll_bytes[i] <= 0 || start[i] == INT64_MIN) continue;
        it[n++] = (item){.a = start[i], .b = end[i] > start[i] ? end[i] : start[i], .row = i};
    }
    if (n > 1) qsort(it, n, sizeof *it, cmp_item);
    for (uint32_t q = 0; q < n; q++) {
        double shared = 0;
        for (uint32_t p = 0; p < n && it[p].a < it[q].b; p++) {
            if (p == q || it[p].b <= it[q].a) continue;
            int64_t lo = it[p].a > it[q].a ? it[p].a : it[q].a, hi = it[p].b < it[q].b ? it[p].b : it[q].b;
            if (hi > lo) shared += (double)(hi - lo);
        }
        int64_t len = it[q].b - it[q].a;
        double o = len > 0 ? shared / (double)len : 0;
        out[it[q].row] = (double)lk->coll_bytes[it[q].row] / rate * (1 + o);
    }
}

/* Set every new collective's transfer from the link's prices (half way
 * from its current one when half); returns the largest change in ns. */
static int64_t retime(const ts_link *lk, ts_sim *s, const double *old_price, const double *new_price, bool half)
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
        int64_t was = s->self_ns[lk->coll_bar[i]];
        int64_t v = half ? (was + (int64_t)llround(t)) / 2 : (int64_t)llround(t), d = llabs(v - was);
        if (d > most) most = d;
        s->self_ns[lk->coll_bar[i]] = v;
    }
    return most;
}

int ts__link_apply(const ts_link *lk, ts_sim *s, double rate, ts_error *err)
{
    size_t n = lk->n_colls;
    item *it = ts__malloc(n * sizeof *it + 1);
    int64_t *start = ts__malloc(n * sizeof *start + 1), *end = ts__malloc(n * sizeof *end + 1);
    double *old_price = ts__malloc(n * sizeof *old_price + 1), *new_price = ts__malloc(n * sizeof *new_price + 1);
    int rc = !(rate > 0) ? ts__error(err, TS_EINVAL, "replay: link model without a rate")
           : !it || !start || !end || !old_price || !new_price ? ts__error(err, TS_ENOMEM, "replay: out of memory") : TS_OK;
    if (rc == TS_OK) {
        for (uint32_t i = 0; i < n; i++) {
            start[i] = lk->coll_new[i] ? INT64_MIN : meas_start(lk, s, i);
            end[i] = start[i] == INT64_MIN ? INT64_MIN : start[i] + lk->coll_meas_ns[i];
        }
        price_set(lk, start, end, false, rate, it, old_price);
    }
    /* Rounds: price from the simulated spans, re-simulate, until no transfer
     * moves by a microsecond; from the fifth on each step goes half way, so
     * a schedule that flips between two sharings settles between them. */
    for (int round = 0; rc == TS_OK && round < 12; round++) {
        rc = ts__sim_run(s, err);
        if (rc) break;
        if (lk->after_sim) (void)lk->after_sim(lk->after_sim_ctx, s);
        for (uint32_t i = 0; i < n; i++) {
            start[i] = lk->coll_new[i] ? s->start_ns[lk->coll_bar[i]] : INT64_MIN;
            end[i] = lk->coll_new[i] ? s->end_ns[lk->coll_bar[i]] : INT64_MIN;
        }
        price_set(lk, start, end, true, rate, it, new_price);
        if (retime(lk, s, old_price, new_price, round >= 4) < 1000) break;
    }
    ts__free(it, n * sizeof *it + 1);
    ts__free(start, n * sizeof *start + 1);
    ts__free(end, n * sizeof *end + 1);
    ts__free(old_price, n * sizeof *old_price + 1);
    ts__free(new_price, n * sizeof *new_price + 1);
    return rc;
}
