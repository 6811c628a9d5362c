/* contention.c - CPU contention between compute and gloo's reductions, for
 * the --bucket-mb what-if of CPU-only jobs.
 *
 * gloo reduces on worker threads of the same process, so on a small machine a
 * backward op runs slower while all-reduces are active. Model: an op on the
 * training thread that overlaps on average f active all-reduces of its rank
 * takes base(name) x (1 + kappa f). kappa is fitted on the trace (alternating
 * least squares over every op with a name seen more than once); a regrouped
 * schedule then re-times each op from its simulated overlap, and the
 * simulation is repeated until it settles (a few rounds). An op whose overlap
 * did not change keeps its measured time, so an unchanged partition still
 * replays as measured. Cost O(ops x log spans + ops x overlapping spans) per
 * round. Not for GPU jobs: NCCL reduces on the GPU, not on host cores.
 */
#include <math.h>
#include <stdlib.h>

#include "replay/contention.h"

typedef struct span { int64_t a, b; } span;

static int cmp_span(const void *x, const void *y)
{
    const span *p = x, *q = y;
    return (p->a > q->a) - (p->a < q->a);
}

/* Average number of spans active over [a, b): spans sorted by start, the
 * longest max_len long, so only those starting after a - max_len can reach a. */
static double avg_active(const span *sp, uint32_t n, int64_t max_len, int64_t a, int64_t b)
{
    if (b <= a) return 0;
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sp[mid].a < a - max_len) lo = mid + 1; else hi = mid;
    }
    double covered = 0;
    for (uint32_t i = lo; i < n && sp[i].a < b; i++) {
        int64_t x = sp[i].a > a ? sp[i].a : a, y = sp[i].b < b ? sp[i].b : b;
        if (y > x) covered += (double)(y - x);
    }
    return covered / (double)(b - a);
}

/* The spans of one rank: measured (old members) or simulated (active ones). */
static uint32_t collect_spans(const ts_contention *ct, const ts_sim *s, uint16_t rank, bool simulated, span *out,
                              int64_t *max_len)
{
    uint32_t n = 0;
    *max_len = 0;
    for (uint32_t i = 0; i < ct->n_members; i++) {
        uint32_t m = ct->member[i];
        if (s->rank[m] != rank) continue;
        if (simulated && !ct->active[i]) continue;
        if (!simulated && s->meas_start_ns[m] == INT64_MIN) continue;
        span x = simulated ? (span){s->start_ns[m], s->end_ns[m]} : (span){s->meas_start_ns[m], s->meas_end_ns[m]};
        if (x.b - x.a > *max_len) *max_len = x.b - x.a;
        out[n++] = x;
    }
    qsort(out, n, sizeof *out, cmp_span);
    return n;
}

/* Fill f[] (per op) with each op's average overlap, measured or simulated. */
static void overlaps(const ts_contention *ct, const ts_sim *s, bool simulated, span *scratch, double *f)
{
    for (uint16_t rank = 0; rank < ct->n_ranks; rank++) {
        int64_t max_len;
        uint32_t n = collect_spans(ct, s, rank, simulated, scratch, &max_len);
        for (uint32_t k = 0; k < ct->n_ops; k++) {
            uint32_t op = ct->op[k];
            if (s->rank[op] != rank) continue;
            f[k] = simulated ? avg_active(scratch, n, max_len, s->start_ns[op], s->start_ns[op] + s->self_ns[op])
                             : avg_active(scratch, n, max_len, s->meas_start_ns[op], s->meas_end_ns[op]);
        }
    }
}

/* Alternating least squares for dur = base(name) (1 + kappa f), base[] of
 * 2 x n_names doubles as scratch: O(rounds x ops). kappa is kept in [0, 4]. */
static double fit_kappa(const ts_contention *ct, const int64_t *dur, const double *f, double *base)
{
    double kappa = 0, *den = base + ct->n_names;
    for (int round = 0; round < 60; round++) {   /* converges geometrically; 60 rounds of O(ops) */
        for (uint32_t k = 0; k < ct->n_names; k++) base[k] = den[k] = 0;
        for (uint32_t k = 0; k < ct->n_ops; k++) {
            double g = 1 + kappa * f[k];
            base[ct->name_of[k]] += (double)dur[k] * g;
            den[ct->name_of[k]] += g * g;
        }
        for (uint32_t k = 0; k < ct->n_names; k++) base[k] = den[k] > 0 ? base[k] / den[k] : 0;
        double sn = 0, sd = 0;
        for (uint32_t k = 0; k < ct->n_ops; k++) {
            double b = base[ct->name_of[k]];
            sn += b * f[k] * ((double)dur[k] - b);
            sd += b * f[k] * b * f[k];
        }
        double next = sd > 0 ? sn / sd : 0;
        kappa = next < 0 ? 0 : next > 4 ? 4 : next;
    }
    return kappa;
}

int ts__contention_apply(ts_contention *ct, ts_sim *s, double *kappa_out, ts_error *err)
{
    size_t n_ops = ct->n_ops;
    double *f_meas = ts__malloc(n_ops * sizeof *f_meas + 1), *f_sim = ts__malloc(n_ops * sizeof *f_sim + 1);
    double *base = ts__malloc(2 * (size_t)ct->n_names * sizeof *base + 1);
    int64_t *meas = ts__malloc(n_ops * sizeof *meas + 1);
    span *scratch = ts__malloc((size_t)ct->n_members * sizeof *scratch + 1);
    int rc = (!f_meas || !f_sim || !base || !meas || !scratch) ? ts__error(err, TS_ENOMEM, "replay: out of memory") : TS_OK;
    double kappa = 0;
    if (rc == TS_OK) {
        for (uint32_t k = 0; k < n_ops; k++) meas[k] = s->self_ns[ct->op[k]];
        overlaps(ct, s, false, scratch, f_meas);
        kappa = fit_kappa(ct, meas, f_meas, base);
    }
    /* A few rounds: re-time every op from its simulated overlap, re-simulate.
     * An op whose overlap is as measured keeps its measured time exactly. */
    for (int round = 0; rc == TS_OK && kappa > 0 && round < 4; round++) {
        rc = ts__sim_run(s, err);
        if (rc) break;
        overlaps(ct, s, true, scratch, f_sim);
        for (uint32_t k = 0; k < n_ops; k++) {
            double g_meas = 1 + kappa * f_meas[k], g_sim = 1 + kappa * f_sim[k];
            s->self_ns[ct->op[k]] = fabs(f_sim[k] - f_meas[k]) < 1e-9 ? meas[k]
                                                                      : (int64_t)((double)meas[k] * g_sim / g_meas);
        }
    }
    *kappa_out = kappa;
    ts__free(f_meas, n_ops * sizeof *f_meas + 1);
    ts__free(f_sim, n_ops * sizeof *f_sim + 1);
    ts__free(base, 2 * (size_t)ct->n_names * sizeof *base + 1);
    ts__free(meas, n_ops * sizeof *meas + 1);
    ts__free(scratch, (size_t)ct->n_members * sizeof *scratch + 1);
    return rc;
}
