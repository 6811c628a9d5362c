/* optimize.h - search for a faster data-parallel strategy on the replay
 * engine (seed 000's dPRO optimizer) and write it as a plan a user can apply.
 *
 * A strategy is a set of edits of the replayed graph, each made by a pass:
 *   tensor fusion   any grouping of the gradients into all-reduce buckets in
 *                   the order they are all-reduced (not only a byte cap);
 *   partition       one gradient's all-reduce cut into k = 2, 4, ... pieces;
 *   op fusion       chains of pointwise ops run as one kernel (PyTorch traces),
 *                   or of the ops an XLA candidate list names (TensorFlow),
 *                   priced with dPRO's estimate or a model fitted on dPRO's
 *                   per-op timing tables (docs/optimize.md);
 *   from-opfs       the tensor fusion that matches a cluster_mapping.txt.
 * Every candidate is priced by replaying the job's graph with the edits
 * (ts_replay_run_graph), and the search (heat-based MCMC as dPRO's, simulated
 * annealing, greedy, or exhaustive when the space is small) keeps the best.
 * The result is always a strategy that was evaluated. Not for: building the
 * graph (graph/), pricing one what-if (replay.h).
 * Ownership: ts_optimize_run's result is the caller's, released with
 * ts_optimize_destroy; strings it returns live as long as it.
 */
#ifndef TRAINSCOPE_OPTIMIZE_H
#define TRAINSCOPE_OPTIMIZE_H

#include <stdbool.h>
#include "trainscope/precision.h"
#include "trainscope/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TS_PASS_TENSOR_FUSION = 1, TS_PASS_PARTITION = 2, TS_PASS_OP_FUSION = 4, TS_PASS_PRECISION = 8 };

typedef enum ts_search_kind {
    TS_SEARCH_AUTO = 0,      /* exhaustive when the space fits the budget, else MCMC */
    TS_SEARCH_MCMC,          /* heat-based MCMC (dPRO) */
    TS_SEARCH_ANNEAL,        /* simulated annealing */
    TS_SEARCH_GREEDY,        /* best single move until none helps (QSync's greedy) */
    TS_SEARCH_EXHAUSTIVE,    /* every strategy (refused when the space exceeds 2^20) */
    TS_SEARCH_LAYER_SAMPLE,  /* reported only: no search, dPRO's layer-by-layer sample (layer_num_limit) */
    TS_SEARCH_FROM_OPFS      /* reported only: no search, the tensor fusion of a cluster_mapping (from_opfs) */
} ts_search_kind;

/* "auto", "mcmc", "anneal", "greedy", "exhaustive", "layer-sample", "from-opfs"; "?" past them. */
TS_API const char *ts_search_kind_name(ts_search_kind k);

/* Progress of a search: evaluations made, the best iteration so far. */
typedef void (*ts_optimize_progress_fn)(void *ud, uint64_t n_evals, int64_t best_ns, double elapsed_s);

/* Options; zero-initialise, set size = sizeof(ts_optimize_options). Grows
 * only at the end. Zero fields take the defaults named. */
typedef struct ts_optimize_options {
    size_t          size;
    unsigned        passes;        /* TS_PASS_* bits; 0 = tensor fusion */
    ts_search_kind  search;
    uint64_t        budget_evals;  /* stop after this many evaluations (deterministic for a seed) */
    double          budget_s;      /* or after this much time, between evaluations; both 0 = 200 evals */
    uint64_t        seed;          /* random seed; 0 is a seed like any other */
    double          mcmc_beta;     /* Metropolis: a move slower by x percent is taken with
                                      probability exp(-beta x); 0 = 10 (dPRO's --mcmc_beta) */
    double          heat_k;        /* k of the heat formula; 0 = 1 (dPRO's code) */
    uint32_t        heat_window;   /* heat history entries kept per op; 0 = 5 (dPRO) */
    uint32_t        layer_num_limit; /* > 0: no search; buckets of every N layers (parameter-name
                                        prefixes), dPRO's --layer_num_limit */
    uint32_t        max_pieces;    /* partition: at most this many pieces; 0 = 8 */
    uint32_t        n_partition;   /* partition: the largest this many gradients may be cut; 0 = 8 */
    const ts_replay_options *replay; /* gradients_json (required for tensor fusion and partition)
                                        and the other what-ifs every
                                        candidate is priced with (bandwidth, calibration log) */
    ts_optimize_progress_fn progress;   /* NULL = none; called at most ~5 times a second */
    void           *progress_ud;
    const char     *xla_candidates; /* op fusion: only ops this XLA candidate list names (dPRO's
                                       --xla_candidate_path, TensorFlow op names); every op it lists
                                       (but those dPRO ignores) must be in the trace; NULL = the
                                       PyTorch pointwise rule */
    const char     *op_table;       /* op fusion: a folder with dPRO's name.txt and avg.txt: a fused
                                       op sheds its fixed cost in the model fitted on them */
    uint32_t        op_table_dtype; /* 0 = fp32, 1 = fp16 rows of op_table */
    bool            simulate;       /* op fusion: dPRO's --simulate estimate (docs/optimize.md) */
    const char     *from_opfs;      /* tensor fusion: no search; the grouping matching this dPRO
                                       cluster_mapping.txt (dPRO's from_opfs2tsfs), priced */
    const ts_graph *representatives; /* g folded (--fold-replicas): its representatives alone
                                        (ts_graph_load_representatives); non-NULL = two stages: the
                                        search prices on them, then its top_k best and the trace's
                                        strategy are re-priced on g and the fastest there is the plan.
                                        Bucket passes only (op fusion names g's nodes): NULL = one stage */
    uint32_t        top_k;          /* two stages: candidates re-priced on g; 0 = 3 */
    double          hook_cost_ms;   /* what applying a plan through a DDP communication hook costs per
                                       step (ms), priced against its predicted gain, plus hook_group_ms
                                       per group the hook all-reduces; a bucket_cap_mb setting costs
                                       nothing. 0 = TS_DDP_HOOK_COST_MS and TS_DDP_HOOK_GROUP_MS
                                       (hook_group_ms ignored), < 0 = free */
    double          hook_group_ms;  /* with hook_cost_ms > 0: ms per group the hook all-reduces */
    uint32_t        prune_folded;   /* two stages: folded replays the pruning of the plan's changes may
                                       spend (each a replay of the whole folded job); 0 = 2 */
    bool            no_cap_proposals; /* tensor fusion: do not propose the groupings a bucket_cap_mb
                                         gives to the search (the walk alone, as dPRO's); by default
                                         they are priced first, as candidates of the search, and the
                                         plan is never predicted slower than the best of them */
} ts_optimize_options;

/* The CPU a DDP communication hook (the ddp_hook.py of -o) adds per step
 * beside DDP's built-in all-reduce, ms: a part per step and a part per group
 * it all-reduces, measured by bench/ddp_hook_cost.sh (docs/optimize.md,
 * "What a comm hook costs": 4.87 ms at DDP's own 2 buckets, 0.47 ms per
 * further group). */
#define TS_DDP_HOOK_COST_MS 3.93
#define TS_DDP_HOOK_GROUP_MS 0.47

typedef struct ts_optimize ts_optimize;

/* Search g for the fastest strategy. TS_ENODATA when there is nothing to
 * optimize (no gradient all-reduce over every rank); TS_EINVAL for bad
 * options (a budget of 0, no gradients.json). */
TS_API TS_NODISCARD int ts_optimize_run(const ts_graph *g, const ts_optimize_options *opt,
                                        ts_optimize **out, ts_error *err);
TS_API void ts_optimize_destroy(ts_optimize *o);

typedef struct ts_optimize_summary {
    int64_t  measured_ns;      /* the trace's iteration (median, slowest rank) */
    int64_t  baseline_ns;      /* predicted with the trace's own buckets */
    int64_t  best_ns;          /* predicted with the best strategy (re-evaluated) */
    uint64_t n_evals;          /* distinct strategies replayed */
    double   search_s;         /* wall time of the search */
    ts_search_kind search;     /* the search that ran */
    uint32_t n_grads;          /* gradients (gradients.json) */
    uint32_t n_old_buckets, n_new_buckets;
    uint32_t n_fusable;        /* op fusion: candidate pairs of pointwise ops (distinct vars) */
    uint32_t n_fused;          /* ... of which the plan fuses */
    double   ddp_bucket_cap_mb;/* a cap whose DDP grouping is the plan's, < 0 = none does */
    double   gain_pct;         /* (baseline - best) / baseline * 100; 0 when baseline is 0 */
    double   evals_per_s;      /* n_evals / search_s; 0 when no time was measured */
    uint64_t n_contended;      /* the search's evaluations that ran the gloo contention rounds */
    uint64_t n_contention_sims;/* ... and the simulations those rounds ran (at most 6 each; fewer
                                  where they reached their fixed point) */
    bool     no_change;        /* the plan is the trace's own strategy: nothing to apply (gain 0) */
    bool     ddp_default;      /* ... and DDP's default bucket_cap_mb (25) gives its buckets */
    /* two stages (options.representatives): n_evals priced on the representatives, then */
    bool     two_stage;
    uint32_t n_rep_ranks;      /* ranks of the representatives' job */
    uint32_t n_repriced;       /* strategies re-priced on the folded graph, the trace's own included;
                                  baseline_ns and best_ns are those prices */
    double   rep_err_min_pct, rep_err_max_pct;   /* (representatives - folded) / folded of those, % */
    /* what applying the plan costs (options.hook_cost_ms), priced on top of best_ns: */
    int64_t  apply_cost_ns;    /* the plan's: the hook's cost when it needs one, else 0 */
    int64_t  hook_cost_ns;     /* what a hook was priced at a step (0: free) */
    int64_t  hook_group_ns;    /* ... and per group it all-reduces */
    int64_t  declined_ns;      /* > 0: the best plan that needed a hook, predicted this much faster
                                  than the trace (before its cost), was not taken: its gain did not
                                  exceed its cost (net of the cost, no strategy beat the plan) */
    int64_t  declined_cost_ns; /* ... that cost */
    int64_t  declined_best_ns; /* ... its predicted iteration */
    uint32_t declined_buckets; /* ... its bucket count */
    uint32_t n_pruned;         /* changes of the search's best dropped for buying nothing (priced
                                  where the plan is: two stages, folded) */
    uint32_t n_prune_evals;    /* the replays the pruning spent (two stages: folded ones) */
    uint32_t n_cap_evals;      /* groupings a cap gives priced after the search, beside its plan
                                  (two stages: on the representatives, the best of them then folded):
                                  those not proposed to it, or with the plan's op fusion */
    uint32_t n_cap_groupings;  /* distinct groupings a whole-KiB bucket_cap_mb gives (up to 64), the
                                  trace's own left out */
    uint32_t n_cap_proposals;  /* ... of which the search priced first, as its candidates (its
                                  evaluations 2 .. n + 1) */
    int64_t  outpriced_ns;     /* > 0: the search's best (this predicted iteration, no hook) was
                                  slower than a grouping a cap gives priced after it, now the plan */
} ts_optimize_summary;
TS_API void ts_optimize_get_summary(const ts_optimize *o, ts_optimize_summary *out);

/* One line per change, saying what to change and what it buys
 * (i = 0 .. n_changes - 1). */
TS_API uint32_t    ts_optimize_n_changes(const ts_optimize *o);
TS_API const char *ts_optimize_change(const ts_optimize *o, uint32_t i);

/* Replay options of the best plan (the base what-ifs kept); the arrays
 * they point to live in o until the next call. For --export. */
TS_API void ts_optimize_best_options(const ts_optimize *o, ts_replay_options *out);

/* Write DIR/plan.json and the files users set (ddp_hook.py when no
 * bucket_cap_mb reproduces the grouping, horovod.env, tensor_groups.txt),
 * each through a temporary name. */
TS_API TS_NODISCARD int ts_optimize_write_plan(const ts_optimize *o, const char *dir, ts_error *err);

/* Replay options that re-predict plan.json on the graph whose gradients
 * are opt->gradients_json: fills *out from base (its other what-ifs kept)
 * and the plan's buckets and partition (owned by *plan, freed with
 * ts_optimize_plan_free). TS_EFORMAT when the plan is for other gradients. */
typedef struct ts_optimize_plan ts_optimize_plan;
TS_API TS_NODISCARD int ts_optimize_plan_load(const char *path, const ts_replay_options *base,
                                              ts_replay_options *out, ts_optimize_plan **plan, ts_error *err);
TS_API void ts_optimize_plan_free(ts_optimize_plan *plan);

/* ---- the precision pass (--passes precision): QSync's greedy plan ----
 * Works on a precision model (precision.h: runs of one model at fp32 and at
 * a lower precision), not on the job's graph: ts_prec_greedy under the
 * options' budgets, units outside an allow list pinned at fp32, written as
 * plan.json (its "precision" section), greedy.plan (the plan file torch users
 * apply with python/trainscope_precision.py) and dPRO's amp_priorlist.txt and
 * amp.env. Not for: pricing gradient communication (replay's
 * grad_bytes_per_elem). */
typedef struct ts_optimize_prec_options {
    size_t       size;               /* sizeof(ts_optimize_prec_options) */
    ts_precision low;                /* the precision to lower to (bf16, fp16, int8) */
    double       accuracy_budget;    /* cap on the lowered units' summed indicators; <= 0 = none */
    int64_t      memory_limit_bytes; /* the plan's peak must fit; 0 = no limit */
    const char  *indicators;         /* "<pattern> <value>" file; NULL = 1 per unit */
    const char  *allow_list;         /* AMP-style op list (ts_prec_allow_list_load); NULL = every unit */
    const char  *runs[TS_PREC_COUNT];/* the runs' paths, recorded in plan.json (NULL = none) */
    double       profiler_overhead_us; /* recorded in plan.json (the model's own setting) */
    ts_prec_granularity granularity; /* what the greedy changes at a time: a module (the default: greedy.plan
                                        is applied per module) or an op */
} ts_optimize_prec_options;

typedef struct ts_optimize_prec ts_optimize_prec;

/* Run the greedy on m (borrowed: it must outlive the result). TS_EINVAL:
 * no run at opt->low; TS_ERANGE: a memory limit below the bytes alive at
 * the step's start, or one no plan within the budget meets (message says
 * which, naming the fp32 run); errors of the indicator and allow-list files
 * name FILE:LINE. */
TS_API TS_NODISCARD int ts_optimize_precision(const ts_prec_model *m, const ts_optimize_prec_options *opt,
                                              ts_optimize_prec **out, ts_error *err);
TS_API void ts_optimize_prec_destroy(ts_optimize_prec *p);

typedef struct ts_optimize_prec_summary {
    ts_prec_prediction before;   /* all fp32 */
    ts_prec_prediction after;    /* the plan */
    uint32_t n_units, n_allowed, n_lowered;
    double   indicator_used;     /* summed indicators of the lowered units */
} ts_optimize_prec_summary;
TS_API void ts_optimize_prec_get_summary(const ts_optimize_prec *p, ts_optimize_prec_summary *out);
/* The plan: one precision per unit (ts_prec_model_n_units rows). */
TS_API const uint8_t *ts_optimize_prec_plan(const ts_optimize_prec *p);

/* Write DIR/plan.json, DIR/greedy.plan and, when the plan lowers any op,
 * DIR/amp_priorlist.txt and DIR/amp.env: all or none (temporary names). */
TS_API TS_NODISCARD int ts_optimize_prec_write_plan(const ts_optimize_prec *p, const char *dir, ts_error *err);

/* Read plan.json's precision section back onto m (replay --plan): prec[]
 * gets each unit's precision. TS_EFORMAT naming the file and byte when the
 * plan is for another model (its units' ops differ from m's) or has no
 * precision section; TS_EINVAL when it plans a precision m has no run at. */
TS_API TS_NODISCARD int ts_optimize_prec_plan_load(const char *path, const ts_prec_model *m, uint8_t *prec,
                                                   ts_error *err);
/* Whether the file at path is a plan of the precision pass (it has a
 * "precision" section); false when unreadable or another plan. */
TS_API bool ts_optimize_plan_is_precision(const char *path);
/* The runs (paths) and profiler cost plan.json records, for a re-prediction
 * given no runs: runs[p] malloc'ed (caller frees) or NULL. */
TS_API TS_NODISCARD int ts_optimize_prec_plan_runs(const char *path, char *runs[TS_PREC_COUNT], double *overhead_us,
                                                   ts_error *err);

#ifdef __cplusplus
}
#endif
#endif
