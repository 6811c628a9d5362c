/* search.c - the searches over a strategy space (optimize_int.h): dPRO's
 * heat-based MCMC, simulated annealing, a greedy descent (QSync's method)
 * and exhaustive enumeration for small spaces.
 *
 * Every search prices the trace's own strategy first, then the space's
 * proposals (optimize.c: the groupings a DDP cap gives), and starts from
 * the best of those; it prices candidates with the space's eval (a replay)
 * and keeps the best one priced: the result is never a strategy that was
 * not evaluated, nor slower than a proposal priced. Priced strategies are cached by
 * a 64-bit hash of their values, so a revisit costs no replay and budgets
 * count distinct strategies. The only randomness is a splitmix64 stream
 * from the seed, so a search is deterministic for a seed and an evaluation
 * budget (a time budget stops wherever the clock says). With cfg->keep_top
 * the best few distinct strategies priced are kept too (a second stage
 * re-prices them). Not for: what the
 * values mean (the passes) or pricing (replay/).
 */
#include <math.h>

#include "optimize/optimize_int.h"

typedef struct srch {
    const ts_opt_space *sp;
    const ts_opt_cfg   *cfg;
    ts_opt_outcome     *out;
    ts_map64  cache;          /* hash of a strategy -> its predicted ns */
    uint64_t  rng;
    int64_t   t0_ns, last_progress_ns;
    bool      stop;           /* the budget is spent */
    uint64_t  space;          /* strategies in the space */
    ts_error *err;
} srch;

static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double next_unit(uint64_t *s) { return (double)(next_u64(s) >> 11) * (1.0 / 9007199254740992.0); }

static inline uint8_t lo_of(const ts_opt_space *sp, uint32_t i) { return sp->min ? sp->min[i] : 0; }

static uint64_t hash_state(const uint8_t *v, uint32_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < n; i++) h = (h ^ v[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

uint64_t ts__opt_space_size(const ts_opt_space *sp)
{
    uint64_t n = 1;
    for (uint32_t i = 0; i < sp->n_vars; i++) {
        uint64_t k = (uint64_t)sp->max[i] - lo_of(sp, i) + 1;
        if (n > UINT64_MAX / k) return UINT64_MAX;
        n *= k;
    }
    return n;
}

static double elapsed_s(const srch *s) { return (double)(ts__now_ns() - s->t0_ns) / 1e9; }

static bool budget_spent(const srch *s)
{
    if (s->cfg->budget_evals && s->out->n_evals >= s->cfg->budget_evals) return true;
    if (s->cfg->budget_s > 0 && elapsed_s(s) >= s->cfg->budget_s) return true;
    return s->out->n_evals >= s->space;   /* every strategy priced */
}

/* The budget used so far, 0..1, for annealing's schedule. */
static double progress_frac(const srch *s)
{
    if (s->cfg->budget_evals) return (double)s->out->n_evals / (double)s->cfg->budget_evals;
    return s->cfg->budget_s > 0 ? fmin(1.0, elapsed_s(s) / s->cfg->budget_s) : 1.0;
}

static int note_best(srch *s, const uint8_t *v, int64_t ns)
{
    ts_opt_outcome *o = s->out;
    if (o->n_evals > 1 && ns >= o->best_ns) return TS_OK;
    o->best_ns = ns;
    memcpy(o->best, v, s->sp->n_vars);
    if (ts__grow((void **)&o->hist, &o->cap_hist, sizeof *o->hist, (size_t)o->n_hist + 1)) return TS_ENOMEM;
    o->hist[o->n_hist++] = (ts_opt_hist){o->n_evals, ns};
    return TS_OK;
}

/* Keep v among the best cfg->keep_top distinct strategies (every strategy
 * reaches here once: the cache answers repeats). */
static void note_top(srch *s, const uint8_t *v, int64_t ns)
{
    ts_opt_outcome *o = s->out;
    uint32_t k = s->cfg->keep_top, nv = s->sp->n_vars, at = o->n_top;
    if (!k || !o->top) return;
    while (at > 0 && o->top_ns[at - 1] > ns) at--;
    if (at >= k) return;
    uint32_t last = o->n_top < k ? o->n_top : k - 1;   /* the slot the list grows into or drops */
    memmove(o->top + (size_t)(at + 1) * nv, o->top + (size_t)at * nv, (size_t)(last - at) * nv);
    memmove(o->top_ns + at + 1, o->top_ns + at, (size_t)(last - at) * sizeof *o->top_ns);
    memcpy(o->top + (size_t)at * nv, v, nv);
    o->top_ns[at] = ns;
    if (o->n_top < k) o->n_top++;
}

/* Price v: from the cache, else by a replay (false when the budget is
 * spent first, or on failure: s->stop and the error are set). */
static bool price(srch *s, const uint8_t *v, int64_t *ns, int *rc)
{
    uint64_t h = hash_state(v, s->sp->n_vars), got;
    if (ts__map64_get(&s->cache, h, &got)) { *ns = (int64_t)got; return true; }
    if (budget_spent(s)) { s->stop = true; return false; }
    *rc = s->sp->eval(s->sp->ud, v, ns, s->err);
    if (*rc == TS_OK) {
        s->out->n_evals++;
        *rc = ts__map64_put(&s->cache, h, (uint64_t)*ns);
    }
    if (*rc == TS_OK) *rc = note_best(s, v, *ns);
    if (*rc == TS_OK) note_top(s, v, *ns);
    if (*rc) { s->stop = true; return false; }
    int64_t now = ts__now_ns();
    if (s->cfg->progress && now - s->last_progress_ns > 200000000) {
        s->last_progress_ns = now;
        s->cfg->progress(s->cfg->progress_ud, s->out->n_evals, s->out->best_ns, elapsed_s(s));
    }
    return true;
}

/* ---- heat-based MCMC (dPRO) ---- */

typedef struct move { uint32_t var; bool fusion; double w; } move;

/* Every move from cur with its heat weight; returns their count. */
static uint32_t list_moves(const ts_opt_space *sp, const uint8_t *cur, const ts_heat *h, uint64_t step, move *mv)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < sp->n_vars; i++) {
        double H = h ? ts__heat_value(h, i, step) : 0;
        if (cur[i] > lo_of(sp, i)) mv[n++] = (move){i, true, h ? ts__heat_weight(H, true) : 1.0};
        if (cur[i] < sp->max[i]) mv[n++] = (move){i, false, h ? ts__heat_weight(H, false) : 1.0};
    }
    return n;
}

static const move *pick_move(srch *s, const move *mv, uint32_t n)
{
    double total = 0;
    for (uint32_t i = 0; i < n; i++) total += mv[i].w;
    double x = next_unit(&s->rng) * total;
    for (uint32_t i = 0; i < n; i++) {
        if (x < mv[i].w) return &mv[i];
        x -= mv[i].w;
    }
    return &mv[n - 1];
}

/* Metropolis: always take a faster strategy; one slower by d percent with
 * probability exp(-beta d) (dPRO's --mcmc_beta; beta 10 takes a move 0.1%
 * slower 37% of the time, 1% slower once in 22,000). Percent, because a
 * bucket change moves an iteration by tenths of a percent to a few: a
 * relative fraction made beta 10 a random walk. */
static bool metropolis(srch *s, int64_t cur, int64_t next, double beta)
{
    if (next <= cur) return true;
    double d = 100.0 * (double)(next - cur) / (double)(cur > 0 ? cur : 1);
    return next_unit(&s->rng) < exp(-beta * d);
}

/* Leave a walk stuck among priced strategies: from the best one, a few
 * uniform random moves (1 + n_vars / 8). */
static int64_t kick(srch *s, uint8_t *cur)
{
    memcpy(cur, s->out->best, s->sp->n_vars);
    for (uint32_t k = 0; k < 1 + s->sp->n_vars / 8; k++) {
        uint32_t v = (uint32_t)(next_u64(&s->rng) % s->sp->n_vars);
        uint8_t lo = lo_of(s->sp, v);
        if (s->sp->max[v] > lo) cur[v] = (uint8_t)(lo + next_u64(&s->rng) % ((uint64_t)s->sp->max[v] - lo + 1));
    }
    int64_t ns = 0;
    int rc = TS_OK;
    if (!price(s, cur, &ns, &rc)) { memcpy(cur, s->out->best, s->sp->n_vars); return s->out->best_ns; }
    return ns;
}

/* A walk of single moves. heat != NULL: dPRO's heat-weighted moves and
 * Metropolis at cfg->beta; NULL: uniform moves, annealed acceptance. A
 * walk that priced nothing new for 8 steps per var (every neighbour of
 * where it sits is priced and worse) is kicked (above); the step cap keeps
 * a walk in a space it has priced whole from spinning forever. */
static int walk(srch *s, uint8_t *cur, int64_t cur_ns, ts_heat *heat)
{
    const ts_opt_space *sp = s->sp;
    move *mv = ts__malloc(2 * (size_t)sp->n_vars * sizeof *mv + 1);
    if (!mv) return TS_ENOMEM;
    int rc = TS_OK;
    uint64_t max_steps = 64 * (s->cfg->budget_evals ? s->cfg->budget_evals : 1000000) + 1024, stall = 0;
    for (uint64_t step = 1; step <= max_steps && !s->stop && rc == TS_OK; step++) {
        uint64_t priced = s->out->n_evals;
        if (stall > 8 * (uint64_t)sp->n_vars + 8) { cur_ns = kick(s, cur); stall = 0; }
        uint32_t n = list_moves(sp, cur, heat, step, mv);
        if (n == 0) break;
        move m = *pick_move(s, mv, n);
        uint8_t was = cur[m.var];
        cur[m.var] = (uint8_t)(m.fusion ? was - 1 : was + 1);
        int64_t ns;
        if (!price(s, cur, &ns, &rc)) { cur[m.var] = was; break; }
        if (heat) ts__heat_record(heat, m.var, (double)(cur_ns - ns) / 1e6, m.fusion, step);
        /* annealing: a temperature of 1% falling to 0.01% over the budget */
        double beta = heat ? s->cfg->beta : 1.0 / pow(0.01, progress_frac(s));
        if (metropolis(s, cur_ns, ns, beta)) cur_ns = ns;
        else cur[m.var] = was;
        stall = s->out->n_evals == priced ? stall + 1 : 0;
    }
    ts__free(mv, 2 * (size_t)sp->n_vars * sizeof *mv + 1);
    return rc;
}

/* ---- greedy: the best single move, until none is faster ---- */

static int greedy(srch *s, uint8_t *cur, int64_t cur_ns)
{
    int rc = TS_OK;
    while (!s->stop && rc == TS_OK) {
        uint32_t best_var = UINT32_MAX;
        uint8_t best_val = 0;
        int64_t best_ns = cur_ns;
        for (uint32_t i = 0; i < s->sp->n_vars && !s->stop; i++)
            for (int d = -1; d <= 1; d += 2) {
                int next = cur[i] + d;
                if (next < lo_of(s->sp, i) || next > s->sp->max[i]) continue;
                uint8_t was = cur[i];
                cur[i] = (uint8_t)next;
                int64_t ns;
                bool ok = price(s, cur, &ns, &rc);
                cur[i] = was;
                if (ok && ns < best_ns) { best_ns = ns; best_var = i; best_val = (uint8_t)next; }
            }
        if (best_var == UINT32_MAX) break;
        cur[best_var] = best_val;
        cur_ns = best_ns;
    }
    return rc;
}

/* ---- exhaustive: a mixed-radix count over every strategy ---- */

static int exhaustive(srch *s, uint8_t *cur)
{
    int rc = TS_OK;
    for (uint32_t i = 0; i < s->sp->n_vars; i++) cur[i] = lo_of(s->sp, i);
    for (;;) {
        int64_t ns;
        if (!price(s, cur, &ns, &rc)) break;
        uint32_t i = 0;
        while (i < s->sp->n_vars && cur[i] == s->sp->max[i]) { cur[i] = lo_of(s->sp, i); i++; }
        if (i == s->sp->n_vars) break;
        cur[i]++;
    }
    return rc;
}

static bool in_space(const ts_opt_space *sp, const uint8_t *v)
{
    for (uint32_t i = 0; i < sp->n_vars; i++)
        if (v[i] < lo_of(sp, i) || v[i] > sp->max[i]) return false;
    return true;
}

/* Price the space's proposals (those inside it), then put the best priced
 * so far (init or a proposal) in cur and its price in *ns: where the
 * search starts. */
static int propose(srch *s, uint8_t *cur, int64_t *ns)
{
    const ts_opt_space *sp = s->sp;
    int rc = TS_OK;
    for (uint32_t k = 0; k < sp->n_proposals && !s->stop && rc == TS_OK; k++) {
        const uint8_t *v = sp->proposals + (size_t)k * sp->n_vars;
        int64_t got;
        if (in_space(sp, v)) price(s, v, &got, &rc);
    }
    memcpy(cur, s->out->best, sp->n_vars);
    *ns = s->out->best_ns;
    return rc;
}

static ts_search_kind resolve(const srch *s)
{
    if (s->cfg->kind != TS_SEARCH_AUTO) return s->cfg->kind;
    uint64_t small = s->cfg->budget_evals ? s->cfg->budget_evals : 4096;
    return s->space <= small ? TS_SEARCH_EXHAUSTIVE : TS_SEARCH_MCMC;
}

void ts__opt_outcome_free(ts_opt_outcome *o, uint32_t n_vars)
{
    ts__free(o->best, (size_t)n_vars + 1);
    ts__free(o->hist, (size_t)o->cap_hist * sizeof *o->hist);
    ts__free(o->top, (size_t)o->cap_top * n_vars + 1);
    ts__free(o->top_ns, (size_t)o->cap_top * sizeof *o->top_ns + 1);
    memset(o, 0, sizeof *o);
}

int ts__opt_search(const ts_opt_space *sp, const ts_opt_cfg *cfg, ts_opt_outcome *out, ts_error *err)
{
    memset(out, 0, sizeof *out);
    srch s = {.sp = sp, .cfg = cfg, .out = out, .rng = cfg->seed, .err = err, .space = ts__opt_space_size(sp)};
    s.t0_ns = s.last_progress_ns = ts__now_ns();
    out->kind = resolve(&s);
    if (out->kind == TS_SEARCH_EXHAUSTIVE && s.space > (1u << 20))
        return ts__error(err, TS_EINVAL, "optimize: exhaustive search of %llu strategies refused (at most 2^20)",
                         (unsigned long long)s.space);
    if (out->kind == TS_SEARCH_EXHAUSTIVE && cfg->budget_evals && s.space > cfg->budget_evals)
        return ts__error(err, TS_EINVAL, "optimize: exhaustive search of %llu strategies needs a budget of as many "
                         "evaluations (--budget %llu)", (unsigned long long)s.space, (unsigned long long)s.space);
    ts__map64_init(&s.cache);
    out->best = ts__malloc((size_t)sp->n_vars + 1);
    uint8_t *cur = ts__malloc((size_t)sp->n_vars + 1);
    ts_heat heat = {0};
    int rc = out->best && cur ? TS_OK : TS_ENOMEM;
    if (rc == TS_OK && cfg->keep_top) {
        out->cap_top = cfg->keep_top;
        out->top = ts__malloc((size_t)out->cap_top * sp->n_vars + 1);
        out->top_ns = ts__malloc((size_t)out->cap_top * sizeof *out->top_ns + 1);
        if (!out->top || !out->top_ns) rc = TS_ENOMEM;
    }
    if (rc == TS_OK && out->kind == TS_SEARCH_MCMC) rc = ts__heat_init(&heat, sp->n_vars, cfg->heat_window, cfg->heat_k);
    if (rc) ts__error(err, rc, "optimize: out of memory");
    int64_t ns = 0;
    if (rc == TS_OK) {
        memcpy(cur, sp->init, sp->n_vars);
        s.space = s.space ? s.space : 1;
        if (price(&s, cur, &ns, &rc)) out->init_ns = ns;   /* the first evaluation: the budget is >= 1 */
    }
    if (rc == TS_OK && !s.stop) rc = propose(&s, cur, &ns);
    if (rc == TS_OK && !s.stop) {
        switch (out->kind) {
        case TS_SEARCH_MCMC:       rc = walk(&s, cur, ns, &heat); break;
        case TS_SEARCH_ANNEAL:     rc = walk(&s, cur, ns, NULL); break;
        case TS_SEARCH_GREEDY:     rc = greedy(&s, cur, ns); break;
        default:                   rc = exhaustive(&s, cur); break;
        }
    }
    if (rc == TS_ENOMEM && err && !err->msg[0]) ts__error(err, rc, "optimize: out of memory");
    out->elapsed_s = elapsed_s(&s);
    if (cfg->progress) cfg->progress(cfg->progress_ud, out->n_evals, out->best_ns, out->elapsed_s);
    ts__heat_free(&heat);
    ts__free(cur, (size_t)sp->n_vars + 1);
    ts__map64_free(&s.cache);
    if (rc) ts__opt_outcome_free(out, sp->n_vars);
    return rc;
}
