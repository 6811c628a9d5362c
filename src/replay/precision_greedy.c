/* precision_greedy.c - QSync's greedy plan search on a precision model
 * (ts_prec_greedy, include/trainscope/precision.h): what changes at a time is
 * a group of units, a module (its units lowered, priced and counted in
 * memory together, as a per-module autocast plan runs them) or one unit.
 *
 * Not here: the model (precision.c), pricing one plan (precision_plan.c).
 * Passes: memory, when the all-high plan is over the limit (lower the run of
 * adjacent groups losing the least time per peak byte saved until it fits),
 * then time (lower the run saving the most time per unit of indicator,
 * within the budget and, once the plan fits, within the limit), then raise
 * (give back a lowered group whose raising saves time and keeps the plan
 * within the limit) and time again, in turn until neither changes it. Time of a change: on CPU
 * runs the units it touches and their consumers (O(group)); on GPU runs per
 * module, the two-resource simulation the prediction uses (O(ops)); per op on
 * GPU runs, the additive price (each part the larger of its CPU and GPU time).
 * Peak of a change: the timeline items it touches against a sparse table of
 * the current curve's range maxima.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay/precision.h"
#include "core/core.h"

typedef struct groups {
    uint32_t n;          /* groups, in forward order of their first unit */
    uint32_t *start;     /* n + 1: group g's units are unit[start[g] .. start[g + 1]) */
    uint32_t *unit;      /* units by group, ascending */
    double   *w;         /* a group's indicator */
    bool      sim;       /* price a change by the GPU simulation */
    uint32_t *stamp, epoch;   /* scratch: units already counted in one pricing */
    uint32_t *touch;     /* scratch: the units one pricing touches */
    uint32_t *pos;       /* scratch: timeline items one change touches */
    uint8_t  *keep;      /* scratch: precisions before a trial change */
    uint32_t *chg;       /* scratch: the units of a trial change */
} groups;

static bool is_module_name(const char *s)
{
    if (!s || !*s) return false;
    for (; *s; s++)
        if (!(((*s | 32) >= 'a' && (*s | 32) <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
            return false;
    return true;
}

const char *ts_prec_model_unit_module(const ts_prec_model *m, uint32_t u)
{
    if (u >= m->n_units || !m->units[u].scope) return NULL;
    const char *s = ts__str(&m->names, m->units[u].scope);
    return is_module_name(s) ? s : NULL;
}

static double weight(const double *indicator, uint32_t u)
{
    double w = indicator ? indicator[u] : 1.0;
    return w > 1e-12 ? w : 1e-12;   /* a free unit still costs a little, so ratios stay finite */
}

static void groups_free(groups *g, uint32_t n_units)
{
    size_t nu = n_units + 1;
    ts__free(g->start, nu * sizeof *g->start);
    ts__free(g->unit, nu * sizeof *g->unit);
    ts__free(g->w, nu * sizeof *g->w);
    ts__free(g->stamp, nu * sizeof *g->stamp);
    ts__free(g->touch, 2 * nu * sizeof *g->touch);
    ts__free(g->pos, 4 * nu * sizeof *g->pos);
    ts__free(g->keep, nu);
    ts__free(g->chg, nu * sizeof *g->chg);
}

/* Group of each unit by module: a module's group is numbered at its first
 * unit; units in no module get none. */
static void group_by_module(const ts_prec_model *m, groups *g, uint32_t *of)
{
    for (uint32_t u = 0; u < m->n_units; u++) {
        of[u] = TS_NONE32;
        if (!ts_prec_model_unit_module(m, u)) continue;
        for (uint32_t v = 0; v < u && of[u] == TS_NONE32; v++)
            if (m->units[v].scope == m->units[u].scope && of[v] != TS_NONE32) of[u] = of[v];
        if (of[u] == TS_NONE32) of[u] = g->n++;
    }
}

/* The groups' members and indicators (counting sort by group). A module's
 * indicator: the largest of its units' that take a tensor (an indicator file
 * of `trainscope_precision indicators` gives each unit its module's), or of
 * all its units where none does. */
static void group_fill(const ts_prec_model *m, const double *ind, groups *g, const uint32_t *of, bool by_module)
{
    memset(g->start, 0, (g->n + 1) * sizeof *g->start);
    memset(g->keep, 0, g->n + 1);   /* scratch: the group has a unit that takes a tensor */
    for (uint32_t u = 0; u < m->n_units; u++)
        if (of[u] != TS_NONE32) {
            g->start[of[u] + 1]++;
            g->keep[of[u]] |= m->units[u].in_elems != TS__IN_NONE;
        }
    for (uint32_t k = 0; k < g->n; k++) g->start[k + 1] += g->start[k];
    for (uint32_t k = 0; k < g->n; k++) g->w[k] = 0;
    uint32_t *fill = g->touch;   /* scratch: next free slot per group */
    memcpy(fill, g->start, g->n * sizeof *fill);
    for (uint32_t u = 0; u < m->n_units; u++) {
        uint32_t k = of[u];
        if (k == TS_NONE32) continue;
        g->unit[fill[k]++] = u;
        double w = weight(ind, u);
        bool counts = !by_module || !g->keep[k] || m->units[u].in_elems != TS__IN_NONE;
        if (counts && w > g->w[k]) g->w[k] = w;
    }
}

static int groups_make(const ts_prec_model *m, const double *ind, ts_prec_granularity by, groups *g)
{
    memset(g, 0, sizeof *g);
    size_t nu = m->n_units + 1;
    g->start = ts__malloc(nu * sizeof *g->start);
    g->unit = ts__malloc(nu * sizeof *g->unit);
    g->w = ts__malloc(nu * sizeof *g->w);
    g->stamp = ts__calloc(nu, sizeof *g->stamp);
    g->touch = ts__malloc(2 * nu * sizeof *g->touch);
    g->pos = ts__malloc(4 * nu * sizeof *g->pos);
    g->keep = ts__malloc(nu);
    g->chg = ts__malloc(nu * sizeof *g->chg);
    uint32_t *of = ts__malloc(nu * sizeof *of);
    if (!g->start || !g->unit || !g->w || !g->stamp || !g->touch || !g->pos || !g->keep || !g->chg || !of) {
        ts__free(of, nu * sizeof *of);
        groups_free(g, m->n_units);
        return TS_ENOMEM;
    }
    if (by == TS_PREC_BY_MODULE) group_by_module(m, g, of);
    else for (uint32_t u = 0; u < m->n_units; u++) of[u] = g->n++;
    group_fill(m, ind, g, of, by == TS_PREC_BY_MODULE);
    ts__free(of, nu * sizeof *of);
    g->sim = by == TS_PREC_BY_MODULE && m->gpu && m->n_titems;
    if (by == TS_PREC_BY_MODULE && !g->n) {
        groups_free(g, m->n_units);
        return TS_ENOENT;
    }
    return TS_OK;
}

/* Units of groups [a, a + w) into g->chg; returns how many. */
static uint32_t window_units(const groups *g, uint32_t a, uint32_t w)
{
    uint32_t n = 0;
    for (uint32_t i = g->start[a]; i < g->start[a + w]; i++) g->chg[n++] = g->unit[i];
    return n;
}

/* Time of the units whose cost a change of units chg[0..n) touches: those
 * units and the consumers of their outputs (next_in), each counted once. */
static int64_t touched_cost(const ts_prec_model *m, groups *g, const uint8_t *prec, const uint32_t *chg, uint32_t n)
{
    uint32_t k = 0;
    g->epoch++;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t u = chg[i], v = m->units[u].next_in;
        if (g->stamp[u] != g->epoch) { g->stamp[u] = g->epoch; g->touch[k++] = u; }
        if (m->units[u].in_elems != TS__IN_NONE && v != TS_NONE32 && g->stamp[v] != g->epoch) {
            g->stamp[v] = g->epoch;
            g->touch[k++] = v;
        }
    }
    int64_t t = 0;
    for (uint32_t i = 0; i < k; i++) t += ts__prec_unit_cost(m, g->touch[i], prec[g->touch[i]],
                                                             ts__prec_prev(m->units, prec, g->touch[i]), NULL);
    return t;
}

/* Time saved by setting units chg[0..n) to p (negative: slower); prec is
 * left as it was. */
static int64_t change_saving(const ts_prec_model *m, groups *g, uint8_t *prec, const uint32_t *chg, uint32_t n, int p)
{
    for (uint32_t i = 0; i < n; i++) g->keep[i] = prec[chg[i]];
    int64_t before = g->sim ? ts__prec_sim_ns(m, prec) : touched_cost(m, g, prec, chg, n);
    for (uint32_t i = 0; i < n; i++) prec[chg[i]] = (uint8_t)p;
    int64_t after = g->sim ? ts__prec_sim_ns(m, prec) : touched_cost(m, g, prec, chg, n);
    for (uint32_t i = 0; i < n; i++) prec[chg[i]] = g->keep[i];
    return before - after;
}

static void group_set(const groups *g, uint32_t k, uint8_t *prec, int p)
{
    for (uint32_t i = g->start[k]; i < g->start[k + 1]; i++) prec[g->unit[i]] = (uint8_t)p;
}

/* The current plan's memory curve: per timeline item the running total
 * before it and its net; a sparse table of range maxima of run + block
 * peak, so that a change to a few units' items is priced in O(changed items)
 * instead of a walk of the whole timeline. */
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
        ts__blk b = ts__prec_item_blk(m, prec, i);
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

static void curve_free(const ts_prec_model *m, curve *c)
{
    ts__free(c->run, (c->n + 1) * sizeof *c->run);
    ts__free(c->net, (c->n + 1) * sizeof *c->net);
    ts__free(c->top, ((size_t)c->levels * c->n + 1) * sizeof *c->top);
    ts__free(c->fwd_at, (m->n_units + 1) * sizeof *c->fwd_at);
    ts__free(c->bwd_at, (m->n_units + 1) * sizeof *c->bwd_at);
}

static int curve_alloc(const ts_prec_model *m, curve *c)
{
    memset(c, 0, sizeof *c);
    c->n = m->n_items;
    c->levels = c->n ? 32 - (uint32_t)__builtin_clz(c->n) : 0;
    c->run = ts__malloc((c->n + 1) * sizeof *c->run);
    c->net = ts__malloc((c->n + 1) * sizeof *c->net);
    c->top = ts__malloc(((size_t)c->levels * c->n + 1) * sizeof *c->top);
    c->fwd_at = ts__malloc((m->n_units + 1) * sizeof *c->fwd_at);
    c->bwd_at = ts__malloc((m->n_units + 1) * sizeof *c->bwd_at);
    if (!c->run || !c->net || !c->top || !c->fwd_at || !c->bwd_at) return TS_ENOMEM;
    for (uint32_t x = 0; x < m->n_units; x++) c->fwd_at[x] = c->bwd_at[x] = -1;
    for (uint32_t i = 0; i < m->n_items; i++) {
        if (m->items[i].kind == TS__ITEM_FWD) c->fwd_at[m->items[i].unit] = (int32_t)i;
        if (m->items[i].kind == TS__ITEM_BWD) c->bwd_at[m->items[i].unit] = (int32_t)i;
    }
    return TS_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint32_t add_items(const curve *c, uint32_t *pos, uint32_t k, uint32_t x)
{
    if (c->fwd_at[x] >= 0) pos[k++] = (uint32_t)c->fwd_at[x];
    if (c->bwd_at[x] >= 0) pos[k++] = (uint32_t)c->bwd_at[x];
    return k;
}

/* Peak once units chg[0..n) are changed (prec already holds the change):
 * their items and those of their outputs' consumers (whose entry casts
 * depend on them) change; between them the old curve shifts by the nets
 * changed so far. */
static int64_t change_peak(const ts_prec_model *m, const curve *c, groups *g, const uint8_t *prec,
                           const uint32_t *chg, uint32_t n)
{
    uint32_t k = 0, *pos = g->pos;
    for (uint32_t i = 0; i < n; i++) {
        k = add_items(c, pos, k, chg[i]);
        if (m->units[chg[i]].next_in != TS_NONE32) k = add_items(c, pos, k, m->units[chg[i]].next_in);
    }
    qsort(pos, k, sizeof *pos, cmp_u32);
    int64_t peak = m->base_bytes, shift = 0;
    uint32_t next = 0;   /* first item not yet accounted */
    for (uint32_t t = 0; t < k; t++) {
        uint32_t j = pos[t];
        if (t && j == pos[t - 1]) continue;
        if (j > next) {
            int64_t v = range_max(c, next, j - 1) + shift;
            if (v > peak) peak = v;
        }
        ts__blk b = ts__prec_item_blk(m, prec, j);
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

/* Window lengths tried: per op one unit, then 2, 4, ... (the shortest
 * that saves anything wins); per module every length to 16, then 32, 64. */
static uint32_t next_length(uint32_t w, bool every_length)
{
    return every_length && w < 16 ? w + 1 : 2 * w;
}

/* Window [a, a + w) lowered: time saved (its units into g->chg, n of
 * them); with a curve, its peak into *peak (prec left as it was). */
static int64_t window_trial(const ts_prec_model *m, const curve *c, groups *g, uint8_t *prec, int low, uint32_t a,
                            uint32_t w, int64_t *peak)
{
    uint32_t n = window_units(g, a, w);
    int64_t gain = change_saving(m, g, prec, g->chg, n, low);
    if (!c) return gain;
    for (uint32_t i = 0; i < n; i++) g->keep[i] = prec[g->chg[i]];
    for (uint32_t i = 0; i < n; i++) prec[g->chg[i]] = (uint8_t)low;
    *peak = change_peak(m, c, g, prec, g->chg, n);
    for (uint32_t i = 0; i < n; i++) prec[g->chg[i]] = g->keep[i];
    return gain;
}

/* Indicator of the window's groups still at high (0: nothing to lower). */
static double window_cost(const groups *g, const uint8_t *prec, int high, uint32_t a, uint32_t w)
{
    double cost = 0;
    for (uint32_t k = a; k < a + w; k++) cost += prec[g->unit[g->start[k]]] == high ? g->w[k] : 0;
    return cost;
}

/* Time pass: lower, one at a time, the run of adjacent groups (per module
 * 1, 2, 4, ... 64 long; per op one unit) with the most time saved per unit
 * of indicator, within the budget, while one saves time. With a limit
 * (limit > 0) that the starting plan meets, only lowerings that keep the
 * plan within it are taken (lowering can add memory: CPU autocast keeps a
 * 16-bit copy of each weight; casts between modules hold memory, so two
 * modules lowered together may fit where either alone does not). */
static int time_pass(const ts_prec_model *m, groups *g, bool every_length, double budget, double *used,
                     int64_t limit, int high, int low, uint8_t *prec, bool *changed)
{
    bool have = limit > 0 && m->have_memory && ts__prec_peak(m, prec) <= limit;
    curve c;
    int rc = have ? curve_alloc(m, &c) : TS_OK;
    bool fit = have && !rc && c.n;
    for (bool again = !rc; again;) {
        if (fit) curve_build(m, prec, &c);
        uint32_t best = UINT32_MAX, best_w = 0;
        double best_ratio = 0, best_cost = 0;
        for (uint32_t w = 1; w <= g->n && w <= (every_length ? 64u : 1u); w = next_length(w, every_length))
            for (uint32_t a = 0; a + w <= g->n; a++) {
                double cost = window_cost(g, prec, high, a, w);
                if (cost == 0 || *used + cost > budget + 1e-12) continue;
                int64_t np = 0, gain = window_trial(m, NULL, g, prec, low, a, w, NULL);
                if (gain <= 0 || (double)gain / cost <= best_ratio) continue;
                if (fit && (window_trial(m, &c, g, prec, low, a, w, &np), np > limit)) continue;
                best = a, best_w = w, best_ratio = (double)gain / cost, best_cost = cost;
            }
        again = best != UINT32_MAX;
        if (!again) break;
        for (uint32_t k = best; k < best + best_w; k++) group_set(g, k, prec, low);
        *used += best_cost;
        *changed = true;
    }
    if (have) curve_free(m, &c);
    return rc;
}

typedef struct pick {
    uint32_t a, w;        /* groups [a, a + w); w = 0: none */
    int64_t  lost, peak;  /* time lost (negative: saved), the peak after */
    double   ratio;       /* time lost per peak byte saved */
} pick;

/* One window's trial in the memory pass: lower groups [a, a + w), price
 * it, keep it if it saves peak bytes and betters a pick. */
static void try_window(const ts_prec_model *m, const curve *c, groups *g, uint8_t *prec, int low, int64_t peak,
                       int64_t limit, uint32_t a, uint32_t w, pick *by_ratio, pick *fits)
{
    int64_t np = 0, lost = -window_trial(m, c, g, prec, low, a, w, &np);
    if (np >= peak) return;
    pick p = {a, w, lost, np, (double)lost / (double)(peak - np)};
    if (!by_ratio->w || p.ratio < by_ratio->ratio) *by_ratio = p;
    if (np <= limit && (!fits->w || lost < fits->lost)) *fits = p;
}

static void lower_window(const groups *g, pick p, int high, int low, uint8_t *prec, double *used)
{
    for (uint32_t k = p.a; k < p.a + p.w; k++) {
        if (prec[g->unit[g->start[k]]] == high) *used += g->w[k];
        group_set(g, k, prec, low);
    }
}

/* Memory pass: while over the limit, lower the run of adjacent groups that
 * loses the least time per peak byte saved, or the cheapest run that fits
 * on its own when it loses no more time than that one. Per op, lengths
 * shorter than the last one that helped are not tried again. A run may
 * hold groups lowered already: they stay low and cost nothing. If the
 * budget runs out before the plan fits, the cheapest single run that fitted
 * on its own from the starting plan is taken instead. */
static int memory_pass(const ts_prec_model *m, groups *g, bool every_length, double budget, double *used,
                       int64_t limit, int high, int low, uint8_t *prec)
{
    curve c;
    int rc = curve_alloc(m, &c);
    uint8_t *start = ts__malloc(m->n_units + 1);
    if (!start) rc = TS_ENOMEM;
    else memcpy(start, prec, m->n_units);
    double used0 = *used;
    pick first_fit = {0};
    uint32_t w0 = 1;
    int64_t peak = rc || !c.n ? limit : ts__prec_peak(m, prec);
    for (bool first = true; peak > limit; first = false) {
        curve_build(m, prec, &c);
        pick by_ratio = {0}, fits = {0};
        for (uint32_t w = w0; w <= g->n && w <= 64 && (every_length || !by_ratio.w); w = next_length(w, every_length))
            for (uint32_t a = 0; a + w <= g->n; a++) {
                double cost = window_cost(g, prec, high, a, w);
                if (cost == 0 || *used + cost > budget + 1e-12) continue;
                try_window(m, &c, g, prec, low, peak, limit, a, w, &by_ratio, &fits);
            }
        if (first) first_fit = fits;
        if (!by_ratio.w) break;
        pick p = fits.w && fits.lost <= by_ratio.lost ? fits : by_ratio;
        if (!every_length) w0 = p.w;
        lower_window(g, p, high, low, prec, used);
        peak = p.peak;
    }
    if (!rc && peak > limit && first_fit.w) {
        memcpy(prec, start, m->n_units);
        *used = used0;
        lower_window(g, first_fit, high, low, prec, used);
    }
    ts__free(start, m->n_units + 1);
    curve_free(m, &c);
    return rc;
}

/* Raise pass: while some lowered group saves time by going back to `high`
 * and the plan still fits, raise the one that saves the most. */
static int raise_pass(const ts_prec_model *m, groups *g, double *used, int64_t limit, int high, int low,
                      uint8_t *prec, bool *changed)
{
    curve c;
    int rc = curve_alloc(m, &c);
    for (bool again = !rc && c.n; again;) {
        curve_build(m, prec, &c);
        uint32_t best = UINT32_MAX;
        int64_t best_gain = 0;
        for (uint32_t k = 0; k < g->n; k++) {
            uint32_t n = window_units(g, k, 1);
            if (prec[g->chg[0]] != low) continue;
            int64_t gain = change_saving(m, g, prec, g->chg, n, high);
            if (gain <= best_gain) continue;
            group_set(g, k, prec, high);
            if (change_peak(m, &c, g, prec, g->chg, n) <= limit) { best = k; best_gain = gain; }
            group_set(g, k, prec, low);
        }
        again = best != UINT32_MAX;
        if (again) {
            group_set(g, best, prec, high);
            *used -= g->w[best];
            *changed = true;
        }
    }
    curve_free(m, &c);
    return rc;
}

int ts_prec_greedy(const ts_prec_model *m, const double *indicator, double budget, int64_t limit,
                   ts_precision high, ts_precision low, ts_prec_granularity by, uint8_t *prec, ts_prec_prediction *out)
{
    if (!(m->have & (1u << high)) || !(m->have & (1u << low))) return TS_EINVAL;
    memset(prec, high, m->n_units);
    groups g;
    int rc = groups_make(m, indicator, by, &g);
    if (rc) return rc;
    double used = 0;
    bool modules = by == TS_PREC_BY_MODULE, memory = limit > 0 && m->have_memory, changed = false;
    /* over the limit from the start: fit first, spending the accuracy budget
     * on memory only as far as needed, then spend the rest on time */
    if (memory && ts__prec_peak(m, prec) > limit)
        rc = memory_pass(m, &g, modules, budget, &used, limit, high, low, prec);
    if (!rc) rc = time_pass(m, &g, modules, budget, &used, limit, high, low, prec, &changed);
    /* once it fits: give back what the memory pass made needless, lower what now saves time and still fits */
    changed = !rc && memory && ts__prec_peak(m, prec) <= limit;
    for (uint32_t round = 0; changed && round < 2 * g.n + 2; round++) {
        changed = false;
        rc = raise_pass(m, &g, &used, limit, high, low, prec, &changed);
        if (!rc) rc = time_pass(m, &g, modules, budget, &used, limit, high, low, prec, &changed);
        if (rc) break;
    }
    groups_free(&g, m->n_units);
    if (rc) return rc;
    ts_prec_predict(m, prec, out);
    return limit > 0 && out->peak_bytes > limit ? TS_ERANGE : TS_OK;
}
