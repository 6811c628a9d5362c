/* precision_plan.c - precision plans on a precision model: reading a plan
 * file, predicting its iteration time and peak memory, and QSync's greedy
 * search for a plan.
 *
 * Not here: building the model from traces (precision.c).
 * The time of a plan (docs/precision.md):
 *   T = fixed + sum over units u of cost(u, p(u), p(u-1)), where
 *   cost(u, p, prev) = fwd_p + bwd_p + (p == prev ? the entry cast of u in the
 *   run at p, forward and backward : a cast of u's input, alpha * n + beta,
 *   in the forward and, past the first unit, again for its gradient);
 *   fixed = the fp32 run's other ops and gaps; the unit before the first is
 *   the input batch, fp32. A unit's cost depends only on it and its
 *   predecessor, so the greedy prices a change in O(1).
 * Memory: the fp32 run's first iteration replayed block by block, each unit's
 * forward and backward blocks taken from the run at its planned precision;
 * an inserted cast allocates its output (input elements x the planned
 * precision's bytes) until the unit's backward.
 */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/precision.h"
#include "core/core.h"

int64_t ts__prec_cast_ns(const ts_prec_model *m, int64_t elems)
{
    return elems < 0 ? (int64_t)m->beta_ns : (int64_t)(m->alpha_ns_per_elem * (double)elems + m->beta_ns);
}

/* GPU runs: unit_cost with each part the larger of its CPU and GPU time. */
static __attribute__((noinline)) int64_t gpu_unit_cost(const ts_prec_model *m, uint32_t u, int p, int prev, uint32_t *casts)
{
    const ts__prec_unit *un = &m->units[u];
    int64_t t = ts__prec_body_ns(m, un, p);
    if (p == prev) return t + ts__prec_entry_ns(un, p);
    int64_t c = ts__prec_cast_ns(m, un->in_elems);
    bool grad = un->prev_in != TS_NONE32;   /* the batch takes no gradient */
    if (casts) *casts += grad ? 2 : 1;
    return t + (grad ? 2 * c : c);
}

/* Time of unit u at precision p after a unit at prev; *casts += casts added. */
static int64_t unit_cost(const ts_prec_model *m, uint32_t u, int p, int prev, uint32_t *casts)
{
    if (TS_UNLIKELY(m->gpu)) return gpu_unit_cost(m, u, p, prev, casts);
    const ts__prec_unit *un = &m->units[u];
    int64_t t = un->fwd[p] + un->bwd[p] - (int64_t)(m->overhead_ns * (un->ev_fwd[p] + un->ev_bwd[p]));
    if (p == prev) return t + un->entry_fwd[p] + un->entry_bwd[p];
    int64_t c = ts__prec_cast_ns(m, un->in_elems);
    bool grad = un->prev_in != TS_NONE32;   /* the first input (the batch) takes no gradient */
    if (casts) *casts += grad ? 2 : 1;
    return t + (grad ? 2 * c : c);
}

bool ts_prec_model_matches(const ts_prec_model *m, uint32_t ui, const char *pat)
{
    const ts__prec_unit *u = &m->units[ui];
    const char *op = ts__str(&m->names, u->op);
    if (!strcmp(pat, "*")) return true;
    if (!strncmp(pat, "op:", 3)) {
        char *end;
        unsigned long k = strtoul(pat + 3, &end, 10);
        return end != pat + 3 && !*end && k == ui;
    }
    if (!strncmp(pat, "name:", 5)) {
        size_t n = strlen(pat + 5);
        return (u->scope && !strncmp(ts__str(&m->names, u->scope), pat + 5, n)) || !strncmp(op, pat + 5, n);
    }
    return !strcmp(op, pat) || (!strncmp(op, "aten::", 6) && !strcmp(op + 6, pat));
}

typedef struct plan_ctx { const ts_prec_model *m; const char *path; uint8_t *prec; } plan_ctx;

/* One plan line "<pattern> <precision>" (comment already cut). */
static int plan_line(void *ctx, unsigned line, char *p, ts_error *err)
{
    const plan_ctx *c = ctx;
    const ts_prec_model *m = c->m;
    char pat[256], dt[32], extra[8];
    int n = sscanf(p, "%255s %31s %7s", pat, dt, extra);
    if (n <= 0) return TS_OK;
    ts_precision pr;
    if (n != 2 || !ts_precision_from_name(dt, &pr))
        return ts__error(err, TS_EPARSE, "%s:%u: expected \"<op|name:prefix|*> <fp32|bf16|fp16|int8>\"", c->path, line);
    if (!(m->have & (1u << pr)))
        return ts__error(err, TS_EINVAL, "%s:%u: no %s run was given to take the times of '%s' from", c->path, line,
                         ts_precision_name(pr), pat);
    uint32_t hits = 0;
    for (uint32_t u = 0; u < m->n_units; u++)
        if (ts_prec_model_matches(m, u, pat)) { c->prec[u] = (uint8_t)pr; hits++; }
    if (!hits)
        return ts__error(err, TS_ENOENT, "%s:%u: '%s' matches no op of the fp32 run (ops are named like "
                         "aten::linear; name:P matches a record_function range or op name starting with P; op:N the N-th forward op)",
                         c->path, line, pat);
    return TS_OK;
}

int ts_prec_plan_write(FILE *out, const ts_prec_model *m, const uint8_t *prec)
{
    fprintf(out, "# greedy plan: ops in forward order (op:N = the N-th forward op of the fp32 run)\n");
    for (uint32_t u = 0; u < m->n_units; u++) {
        const char *scope = m->units[u].scope ? ts__str(&m->names, m->units[u].scope) : "";
        if (prec[u] != TS_PREC_FP32)
            fprintf(out, "op:%u %s  # %s%s%s\n", u, ts_precision_name((ts_precision)prec[u]),
                    ts__str(&m->names, m->units[u].op), *scope ? " in " : "", scope);
    }
    return ferror(out) ? TS_EIO : TS_OK;
}

int ts_prec_plan_load(const ts_prec_model *m, const char *path, uint8_t *prec, ts_error *err)
{
    ts__error_clear(err);
    memset(prec, TS_PREC_FP32, m->n_units);
    plan_ctx c = {m, path, prec};
    return ts__for_lines(path, "a precision plan", true, plan_line, &c, err);
}

/* The plan's peak; *at = the timeline item where it is reached. */
/* Memory block of timeline item i under the plan. */
static ts__blk item_blk(const ts_prec_model *m, const uint8_t *prec, uint32_t i)
{
    const ts__prec_item *it = &m->items[i];
    if (it->kind == TS__ITEM_FIXED) return it->mem;
    const ts__prec_unit *u = &m->units[it->unit];
    int p = prec[it->unit], prev = ts__prec_prev(m->units, prec, it->unit);
    if (p == prev)
        return it->kind == TS__ITEM_FWD ? ts__blk_cat(u->m_entry_fwd[p], u->m_fwd[p]) : ts__blk_cat(u->m_bwd[p], u->m_entry_bwd[p]);
    /* An inserted cast: its output (n elements at p) replaces the input (at
     * prev) as what the unit takes. The batch (first unit: the run at p cast
     * it too, and the unit's blocks free that cast's output) stays alive.
     * Otherwise, where the producer keeps its output for its own backward,
     * the run at p freed the unit's input in the producer's backward, not in
     * the unit's blocks: the cast's output is freed in the unit's backward
     * (after the op if it has none) and the input stays as in the run at
     * prev. Where it does not, the input is freed at the cast and the unit's
     * blocks free the output as they freed its input. The cast's backward
     * turns the input gradient (at p) into one at prev. */
    int64_t n = u->in_elems > 0 ? u->in_elems : 0, np = n * ts_precision_bytes((ts_precision)p);
    int64_t nq = n * ts_precision_bytes((ts_precision)prev);
    ts__blk grad = {nq - np, nq};
    if (u->prev_in == TS_NONE32)
        return it->kind == TS__ITEM_FWD ? ts__blk_cat((ts__blk){np, np}, u->m_fwd[p]) : u->m_bwd[p];
    if (m->units[u->prev_in].keeps_out) {
        if (it->kind == TS__ITEM_FWD) return ts__blk_cat((ts__blk){u->has_bwd ? np : 0, np}, u->m_fwd[p]);
        return ts__blk_cat(ts__blk_cat(u->m_bwd[p], (ts__blk){-np, 0}), grad);
    }
    if (it->kind == TS__ITEM_FWD) return ts__blk_cat((ts__blk){np - nq, np}, u->m_fwd[p]);
    return ts__blk_cat(u->m_bwd[p], grad);
}

static int64_t predict_peak_at(const ts_prec_model *m, const uint8_t *prec, uint32_t *at)
{
    *at = 0;
    if (!m->have_memory) return -1;
    int64_t run = m->base_bytes, peak = m->base_bytes;
    for (uint32_t i = 0; i < m->n_items; i++) {
        ts__blk b = item_blk(m, prec, i);
        if (run + b.peak > peak) {
            peak = run + b.peak;
            *at = i;
        }
        run += b.net;
    }
    return peak;
}

static int64_t predict_peak(const ts_prec_model *m, const uint8_t *prec)
{
    uint32_t at;
    return predict_peak_at(m, prec, &at);
}

void ts_prec_model_set_overhead(ts_prec_model *m, double ns_per_slice)
{
    m->overhead_ns = ns_per_slice > 0 ? ns_per_slice : 0;
}

/* The fp32 run's other ops and gaps; on GPU runs kept as measured (idle GPU,
 * precision-free kernels: the profiler's CPU cost is hidden there or not, one
 * trace cannot say). */
static int64_t fixed_part(const ts_prec_model *m)
{
    return m->fixed_ns - (m->gpu ? 0 : (int64_t)(m->overhead_ns * m->fixed_ev));
}

void ts_prec_predict(const ts_prec_model *m, const uint8_t *prec, ts_prec_prediction *out)
{
    int64_t t = fixed_part(m);
    uint32_t casts = 0;
    int64_t cast_ns = 0;
    for (uint32_t u = 0; u < m->n_units; u++) {
        int prev = ts__prec_prev(m->units, prec, u);
        uint32_t before = casts;
        t += unit_cost(m, u, prec[u], prev, &casts);
        if (casts != before) cast_ns += (int64_t)(casts - before) * ts__prec_cast_ns(m, m->units[u].in_elems);
    }
    out->iteration_ns = t;
    out->fp32_iteration_ns = m->iter_ns;
    if (m->overhead_ns > 0) {   /* the fp32 run as it would run unprofiled */
        out->fp32_iteration_ns = fixed_part(m);
        for (uint32_t u = 0; u < m->n_units; u++)
            out->fp32_iteration_ns += unit_cost(m, u, TS_PREC_FP32, TS_PREC_FP32, NULL);
    }
    if (m->gpu && m->n_titems) {   /* GPU runs: the simulation's change on the measured step */
        uint8_t *all = ts__calloc(m->n_units ? m->n_units : 1, 1);
        out->iteration_ns = m->iter_ns + ts__prec_sim_ns(m, prec) - m->sim0_ns;
        if (all) out->fp32_iteration_ns = m->iter_ns + ts__prec_sim_ns(m, all) - m->sim0_ns;
        ts__free(all, m->n_units ? m->n_units : 1);
    }
    out->n_casts = casts;
    out->cast_ns = cast_ns;
    out->change_pct = out->fp32_iteration_ns > 0
                    ? 100.0 * ((double)out->iteration_ns / (double)out->fp32_iteration_ns - 1) : 0;
    out->peak_bytes = predict_peak(m, prec);
    out->fp32_peak_bytes = -1;
    if (m->have_memory) {
        uint8_t *all = ts__calloc(m->n_units ? m->n_units : 1, 1);
        if (all) out->fp32_peak_bytes = predict_peak(m, all);
        ts__free(all, m->n_units ? m->n_units : 1);
    }
}

/* Time saved by moving unit u from its precision to p (negative: slower). */
static int64_t saving(const ts_prec_model *m, const uint8_t *prec, uint32_t u, int p)
{
    int prev = ts__prec_prev(m->units, prec, u), old = prec[u];
    const ts__prec_unit *un = &m->units[u];
    int64_t before = unit_cost(m, u, old, un->in_elems == TS__IN_NONE ? old : prev, NULL);
    int64_t after = unit_cost(m, u, p, un->in_elems == TS__IN_NONE ? p : prev, NULL);
    uint32_t v = un->next_in;   /* the unit whose input u's output is: its cast changes too */
    if (un->in_elems != TS__IN_NONE && v != TS_NONE32) {
        before += unit_cost(m, v, prec[v], old, NULL);
        after += unit_cost(m, v, prec[v], p, NULL);
    }
    return before - after;
}

static double weight(const double *indicator, uint32_t u)
{
    double w = indicator ? indicator[u] : 1.0;
    return w > 1e-12 ? w : 1e-12;   /* a free unit still costs a little, so ratios stay finite */
}

/* Time pass: lower, one at a time, the unit with the most time saved per
 * unit of indicator, within the budget, while one saves time. With a limit
 * (limit > 0) that the starting plan meets, a unit whose lowering would take
 * the plan's peak over it is passed over for good (lowering can add memory:
 * CPU autocast keeps a 16-bit copy of each weight beside the fp32 one), so
 * the plan stays the fastest found that fits; one peak walk per lowering. */
static int time_pass(const ts_prec_model *m, const double *ind, double budget, double *used, int64_t limit,
                     int high, int low, uint8_t *prec)
{
    bool fit = limit > 0 && m->have_memory && predict_peak(m, prec) <= limit;
    uint8_t *skip = fit ? ts__calloc(m->n_units ? m->n_units : 1, 1) : NULL;
    if (fit && !skip) return TS_ENOMEM;
    for (;;) {
        uint32_t best = UINT32_MAX;
        double best_ratio = 0;
        for (uint32_t u = 0; u < m->n_units; u++) {
            if (prec[u] != high || (skip && skip[u]) || *used + weight(ind, u) > budget + 1e-12) continue;
            double gain = (double)saving(m, prec, u, low);
            if (gain > 0 && gain / weight(ind, u) > best_ratio) { best_ratio = gain / weight(ind, u); best = u; }
        }
        if (best == UINT32_MAX) break;
        prec[best] = (uint8_t)low;
        if (fit && predict_peak(m, prec) > limit) {
            prec[best] = (uint8_t)high;
            skip[best] = 1;
            continue;
        }
        *used += weight(ind, best);
    }
    ts__free(skip, skip ? (m->n_units ? m->n_units : 1) : 0);
    return TS_OK;
}

/* The memory pass's view of the current plan's curve: per timeline item the
 * running total before it (run) and its net; a sparse table of range maxima
 * of run + block peak, so that a change to a few units' items is priced in
 * O(changed items) instead of a walk of the whole timeline. */
typedef struct curve {
    uint32_t n, levels;
    int64_t *run, *net, *top;   /* top[l * n + i] = max of run + peak over items i .. i + 2^l - 1 */
    int32_t *fwd_at, *bwd_at;   /* per unit: its forward / backward item, -1 = none */
} curve;

static int64_t range_max(const curve *c, uint32_t a, uint32_t b)   /* a <= b */
{
    uint32_t l = 31 - (uint32_t)__builtin_clz(b - a + 1);
    int64_t x = c->top[(size_t)l * c->n + a], y = c->top[(size_t)l * c->n + b + 1 - (1u << l)];
    return x > y ? x : y;
}

static void curve_build(const ts_prec_model *m, const uint8_t *prec, curve *c)
{
    int64_t run = m->base_bytes;
    for (uint32_t i = 0; i < c->n; i++) {
        ts__blk b = item_blk(m, prec, i);
        c->run[i] = run;
        c->net[i] = b.net;
        c->top[i] = run + b.peak;
        run += b.net;
    }
    for (uint32_t l = 1; l < c->levels; l++)
        for (uint32_t i = 0; i + (1u << l) <= c->n; i++) {
            int64_t x = c->top[(size_t)(l - 1) * c->n + i], y = c->top[(size_t)(l - 1) * c->n + i + (1u << (l - 1))];
            c->top[(size_t)l * c->n + i] = x > y ? x : y;
        }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Peak once units [u, u + w) are lowered (prec already holds the change):
 * the items of those units and of the first unit after them that takes a
 * tensor (whose entry cast depends on its producer) change; between them the
 * old curve shifts by the nets changed so far. */
static int64_t window_peak(const ts_prec_model *m, const curve *c, const uint8_t *prec, uint32_t u, uint32_t w)
{
    uint32_t pos[2 * 66], k = 0, after = m->units[u + w - 1].next_in;
    for (uint32_t i = 0; i <= w && k + 2 <= sizeof pos / sizeof pos[0]; i++) {
        uint32_t x = i < w ? u + i : after;
        if (x == TS_NONE32) break;
        if (c->fwd_at[x] >= 0) pos[k++] = (uint32_t)c->fwd_at[x];
        if (c->bwd_at[x] >= 0) pos[k++] = (uint32_t)c->bwd_at[x];
    }
    qsort(pos, k, sizeof *pos, cmp_u32);
    int64_t peak = m->base_bytes, shift = 0;
    uint32_t next = 0;   /* first item not yet accounted */
    for (uint32_t t = 0; t < k; t++) {
        uint32_t j = pos[t];
        if (j > next) {
            int64_t v = range_max(c, next, j - 1) + shift;
            if (v > peak) peak = v;
        }
        ts__blk b = item_blk(m, prec, j);
        if (c->run[j] + shift + b.peak > peak) peak = c->run[j] + shift + b.peak;
        shift += b.net - c->net[j];
        next = j + 1;
    }
    if (next < c->n) {
        int64_t v = range_max(c, next, c->n - 1) + shift;
        if (v > peak) peak = v;
    }
    return peak;
}

/* Memory pass: while over the limit, lower the run of adjacent units with
 * the most peak bytes saved per unit of indicator. Runs of 1, 2, 4, ... 64
 * units are tried, the shortest length that saves anything wins (one unit
 * alone may save nothing, since the casts into and out of it take memory
 * too); lengths shorter than the last one that helped are not tried again.
 * A window may hold units lowered already (by the time pass): they stay low
 * and cost nothing, so scattered lowerings do not fence off a long run.
 * Cost per step: a curve build, O(items log items), then O(units) windows of
 * O(length) each. */
static int memory_pass(const ts_prec_model *m, const double *ind, double budget, double *used, int64_t limit,
                       int high, int low, uint8_t *prec)
{
    curve c = {.n = m->n_items};
    if (!c.n) return TS_OK;
    c.levels = 32 - (uint32_t)__builtin_clz(c.n);
    size_t top_n = (size_t)c.levels * c.n;
    c.run = ts__malloc(c.n * sizeof *c.run);
    c.net = ts__malloc(c.n * sizeof *c.net);
    c.top = ts__malloc(top_n * sizeof *c.top);
    c.fwd_at = ts__malloc((m->n_units + 1) * sizeof *c.fwd_at);
    c.bwd_at = ts__malloc((m->n_units + 1) * sizeof *c.bwd_at);
    int rc = c.run && c.net && c.top && c.fwd_at && c.bwd_at ? TS_OK : TS_ENOMEM;
    for (uint32_t x = 0; !rc && x < m->n_units; x++) c.fwd_at[x] = c.bwd_at[x] = -1;
    for (uint32_t i = 0; !rc && i < m->n_items; i++) {
        if (m->items[i].kind == TS__ITEM_FWD) c.fwd_at[m->items[i].unit] = (int32_t)i;
        if (m->items[i].kind == TS__ITEM_BWD) c.bwd_at[m->items[i].unit] = (int32_t)i;
    }
    uint32_t w0 = 1;
    uint8_t keep[64];
    int64_t peak = rc ? limit : predict_peak(m, prec);
    while (peak > limit) {
        curve_build(m, prec, &c);
        uint32_t best = UINT32_MAX, best_w = 0;
        double best_ratio = 0;
        int64_t best_peak = peak;
        for (uint32_t w = w0; w <= m->n_units && w <= 64 && best == UINT32_MAX; w *= 2)
            for (uint32_t u = 0; u + w <= m->n_units; u++) {
                double cost = 0;   /* the window's units still high; those lowered already stay so */
                for (uint32_t i = u; i < u + w; i++) cost += prec[i] == high ? weight(ind, i) : 0;
                if (cost == 0 || *used + cost > budget + 1e-12) continue;
                memcpy(keep, prec + u, w);
                memset(prec + u, low, w);
                int64_t np = window_peak(m, &c, prec, u, w);
                memcpy(prec + u, keep, w);
                if (np < peak && (double)(peak - np) / cost > best_ratio) {
                    best_ratio = (double)(peak - np) / cost;
                    best = u;
                    best_w = w;
                    best_peak = np;
                }
            }
        if (best == UINT32_MAX) break;
        w0 = best_w;
        for (uint32_t i = best; i < best + best_w; i++) *used += prec[i] == high ? weight(ind, i) : 0;
        memset(prec + best, low, best_w);
        peak = best_peak;
    }
    ts__free(c.run, c.n * sizeof *c.run);
    ts__free(c.net, c.n * sizeof *c.net);
    ts__free(c.top, top_n * sizeof *c.top);
    ts__free(c.fwd_at, (m->n_units + 1) * sizeof *c.fwd_at);
    ts__free(c.bwd_at, (m->n_units + 1) * sizeof *c.bwd_at);
    return rc;
}

int ts_prec_greedy(const ts_prec_model *m, const double *indicator, double budget, int64_t limit,
                   ts_precision high, ts_precision low, uint8_t *prec, ts_prec_prediction *out)
{
    if (!(m->have & (1u << high)) || !(m->have & (1u << low))) return TS_EINVAL;
    memset(prec, high, m->n_units);
    double used = 0;
    if (time_pass(m, indicator, budget, &used, limit, high, low, prec)) return TS_ENOMEM;
    if (limit > 0 && m->have_memory && memory_pass(m, indicator, budget, &used, limit, high, low, prec))
        return TS_ENOMEM;
    ts_prec_predict(m, prec, out);
    return limit > 0 && out->peak_bytes > limit ? TS_ERANGE : TS_OK;
}

typedef struct ind_ctx { const ts_prec_model *m; const char *path; double *ind; } ind_ctx;

static int indicator_line(void *ctx, unsigned ln, char *line, ts_error *err)
{
    ind_ctx *c = ctx;
    char pat[256], extra[8];
    double v;
    int k = sscanf(line, "%255s %lf %7s", pat, &v, extra);
    if (k <= 0) return TS_OK;
    if (k != 2 || !(v >= 0) || v > 1e300)
        return ts__error(err, TS_EPARSE, "%s:%u: expected \"<op|name:prefix|*> <indicator >= 0>\"", c->path, ln);
    uint32_t hits = 0;
    for (uint32_t u = 0; u < ts_prec_model_n_units(c->m); u++)
        if (ts_prec_model_matches(c->m, u, pat)) { c->ind[u] = v; hits++; }
    return hits ? TS_OK : ts__error(err, TS_ENOENT, "%s:%u: '%s' matches no op of the fp32 run", c->path, ln, pat);
}

int ts_prec_indicators_load(const ts_prec_model *m, const char *path, double *ind, ts_error *err)
{
    for (uint32_t u = 0; u < ts_prec_model_n_units(m); u++) ind[u] = 1.0;
    ind_ctx c = {m, path, ind};
    return path ? ts__for_lines(path, "an indicator file", true, indicator_line, &c, err) : TS_OK;
}
