/* precision_plan.c - precision plans on a precision model: reading a plan
 * file and an indicator file, predicting a plan's iteration time and peak
 * memory.
 *
 * Not here: building the model from traces (precision.c), the greedy search
 * (precision_greedy.c).
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
int64_t ts__prec_unit_cost(const ts_prec_model *m, uint32_t u, int p, int prev, uint32_t *casts)
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
ts__blk ts__prec_item_blk(const ts_prec_model *m, const uint8_t *prec, uint32_t i)
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
        ts__blk b = ts__prec_item_blk(m, prec, i);
        if (run + b.peak > peak) {
            peak = run + b.peak;
            *at = i;
        }
        run += b.net;
    }
    return peak;
}

int64_t ts__prec_peak(const ts_prec_model *m, const uint8_t *prec)
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
        t += ts__prec_unit_cost(m, u, prec[u], prev, &casts);
        if (casts != before) cast_ns += (int64_t)(casts - before) * ts__prec_cast_ns(m, m->units[u].in_elems);
    }
    out->iteration_ns = t;
    out->fp32_iteration_ns = m->iter_ns;
    if (m->overhead_ns > 0) {   /* the fp32 run as it would run unprofiled */
        out->fp32_iteration_ns = fixed_part(m);
        for (uint32_t u = 0; u < m->n_units; u++)
            out->fp32_iteration_ns += ts__prec_unit_cost(m, u, TS_PREC_FP32, TS_PREC_FP32, NULL);
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
    out->peak_bytes = ts__prec_peak(m, prec);
    out->fp32_peak_bytes = -1;
    if (m->have_memory) {
        uint8_t *all = ts__calloc(m->n_units ? m->n_units : 1, 1);
        if (all) out->fp32_peak_bytes = ts__prec_peak(m, all);
        ts__free(all, m->n_units ? m->n_units : 1);
    }
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
