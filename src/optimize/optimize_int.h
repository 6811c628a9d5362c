/* optimize_int.h - what the files of optimize/ share: the search space (a
 * strategy is a vector of small integers, one per op the passes may change)
 * and the searches over it.
 *
 * Space: var i takes values 0 .. max[i]; raising a value is a de-fusion move
 * (a cut between two gradients' buckets, a gradient cut in more pieces),
 * lowering it a fusion move. The passes (tensor_fusion.c, partition.c) say
 * what the values mean; the searches (search.c, heat.c) only call eval.
 * Not for: pricing (replay/) or output (plan.c).
 */
#ifndef TS_OPTIMIZE_INT_H
#define TS_OPTIMIZE_INT_H

#include "core/core.h"
#include "trainscope/optimize.h"

typedef struct ts_opt_space {
    uint32_t       n_vars;
    const uint8_t *min;       /* [n_vars]: least value of each var; NULL = 0 (min == max: fixed) */
    const uint8_t *max;       /* [n_vars]: largest value of each var */
    const uint8_t *init;      /* [n_vars]: the strategy the trace ran */
    /* Price a strategy: its predicted iteration in *ns. A failure ends the search. */
    int          (*eval)(void *ud, const uint8_t *state, int64_t *ns, ts_error *err);
    void          *ud;
    /* Proposals priced right after init, in order, each counted in the
     * budget and the history like any candidate (those outside the space
     * are skipped); every search then starts from the best priced (init or
     * a proposal; exhaustive search still counts through the whole space).
     * NULL = none. optimize.c proposes the groupings a DDP cap gives. */
    const uint8_t *proposals; /* [n_proposals * n_vars] */
    uint32_t       n_proposals;
} ts_opt_space;

typedef struct ts_opt_cfg {
    ts_search_kind kind;      /* AUTO resolved by the caller or here */
    uint64_t       budget_evals;   /* 0 = none (then budget_s) */
    double         budget_s;       /* 0 = none */
    uint64_t       seed;
    double         beta;           /* Metropolis temperature (MCMC) */
    double         heat_k;
    uint32_t       heat_window;
    ts_optimize_progress_fn progress;
    void          *progress_ud;
    uint32_t       keep_top;       /* > 0: keep the best this many distinct strategies priced (top, below) */
} ts_opt_cfg;

/* Where the best strategy improved: after eval-th evaluation, best_ns. */
typedef struct ts_opt_hist { uint64_t eval; int64_t best_ns; } ts_opt_hist;

typedef struct ts_opt_outcome {
    uint8_t       *best;      /* [n_vars], owned */
    int64_t        init_ns, best_ns;
    uint64_t       n_evals;   /* distinct strategies priced (the cache answers repeats) */
    ts_search_kind kind;      /* the search that ran */
    double         elapsed_s;
    ts_opt_hist   *hist;
    uint32_t       n_hist, cap_hist;
    uint8_t       *top;       /* [keep_top * n_vars]: the best distinct strategies priced, fastest first
                                 (ties: the one priced first), NULL without keep_top */
    int64_t       *top_ns;    /* [keep_top]: their prices */
    uint32_t       n_top, cap_top;
} ts_opt_outcome;

/* Run the search cfg->kind over sp from sp->init. Deterministic for a seed
 * and an evaluation budget. TS_EINVAL when exhaustive search is asked of a
 * space over 2^20 strategies. */
TS_NODISCARD int ts__opt_search(const ts_opt_space *sp, const ts_opt_cfg *cfg, ts_opt_outcome *out, ts_error *err);
void ts__opt_outcome_free(ts_opt_outcome *o, uint32_t n_vars);
/* Strategies in the space (product of max + 1), saturating at UINT64_MAX. */
uint64_t ts__opt_space_size(const ts_opt_space *sp);

/* ---- heat (heat.c): dPRO's per-op heat history ---- */
typedef struct ts_heat {
    uint32_t n_ops, window;   /* window: entries kept per op (the last ones) */
    double   k;               /* the formula's constant, >= 1 */
    double  *dt_ms;           /* [n_ops * window]: recorded delta T (ms), ring per op */
    uint64_t *step;           /* [n_ops * window]: search step it was recorded at */
    uint32_t *n;              /* [n_ops]: entries recorded (capped at window) */
    uint32_t *head;           /* [n_ops]: next slot */
} ts_heat;
TS_NODISCARD int ts__heat_init(ts_heat *h, uint32_t n_ops, uint32_t window, double k);
void   ts__heat_free(ts_heat *h);
/* After a move on op at search step `step`: fusion records dt_ms, de-fusion
 * -dt_ms (dt_ms = predicted time before minus after, in ms). */
void   ts__heat_record(ts_heat *h, uint32_t op, double dt_ms, bool fusion, uint64_t step);
/* H = (1/n) sum (e^dT_i - 1) / (k (now - step_i)); 0 with no history; > -1. */
double ts__heat_value(const ts_heat *h, uint32_t op, uint64_t now);
/* dPRO's move weights: 1 + H for a fusion move, 1 / (H + 1) for a de-fusion. */
static inline double ts__heat_weight(double H, bool fusion) { return fusion ? 1.0 + H : 1.0 / (H + 1.0); }

#endif
