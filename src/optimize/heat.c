/* heat.c - dPRO's heat of an op (seed 000, "Heat-based Search Algorithm"):
 * a short history of what moves on that op bought, which steers the MCMC
 * toward fusing ops whose fusion paid and splitting ops whose fusion hurt.
 *
 * Each op keeps its last `window` entries (dPRO: --heat_window_size, 5).
 * H = (1/n) sum_i (e^{dT_i} - 1) / (k dt_i), dt_i the steps since entry i
 * (at least 1), so old evidence fades; e^{dT} - 1 > -1 and k dt_i >= 1 keep
 * H > -1, so the de-fusion weight 1 / (H + 1) stays finite. dT is clamped to
 * +-30 ms in the exponent: a move worth more than that is certain anyway,
 * and e^dT must not overflow. Not for: choosing moves (search.c).
 */
#include <math.h>

#include "optimize/optimize_int.h"

int ts__heat_init(ts_heat *h, uint32_t n_ops, uint32_t window, double k)
{
    memset(h, 0, sizeof *h);
    h->n_ops = n_ops;
    h->window = window ? window : 5;
    h->k = k >= 1 ? k : 1;
    size_t cells = (size_t)n_ops * h->window + 1;
    h->dt_ms = ts__calloc(cells, sizeof *h->dt_ms);
    h->step = ts__calloc(cells, sizeof *h->step);
    h->n = ts__calloc((size_t)n_ops + 1, sizeof *h->n);
    h->head = ts__calloc((size_t)n_ops + 1, sizeof *h->head);
    if (h->dt_ms && h->step && h->n && h->head) return TS_OK;
    ts__heat_free(h);
    return TS_ENOMEM;
}

void ts__heat_free(ts_heat *h)
{
    size_t cells = (size_t)h->n_ops * h->window + 1;
    ts__free(h->dt_ms, cells * sizeof *h->dt_ms);
    ts__free(h->step, cells * sizeof *h->step);
    ts__free(h->n, ((size_t)h->n_ops + 1) * sizeof *h->n);
    ts__free(h->head, ((size_t)h->n_ops + 1) * sizeof *h->head);
    memset(h, 0, sizeof *h);
}

void ts__heat_record(ts_heat *h, uint32_t op, double dt_ms, bool fusion, uint64_t step)
{
    size_t cell = (size_t)op * h->window + h->head[op];
    h->dt_ms[cell] = fusion ? dt_ms : -dt_ms;
    h->step[cell] = step;
    h->head[op] = (h->head[op] + 1) % h->window;
    if (h->n[op] < h->window) h->n[op]++;
}

double ts__heat_value(const ts_heat *h, uint32_t op, uint64_t now)
{
    uint32_t n = h->n[op];
    if (n == 0) return 0;
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t cell = (size_t)op * h->window + i;
        double dt = fmin(30.0, fmax(-30.0, h->dt_ms[cell]));
        uint64_t age = now > h->step[cell] ? now - h->step[cell] : 1;
        sum += (exp(dt) - 1.0) / (h->k * (double)age);
    }
    return sum / n;
}
