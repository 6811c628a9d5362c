/* optimize_priv.h - the ts_optimize result, shared by optimize.c (which
 * fills it) and report/plan.c (which writes it). Not for: the searches. */
#ifndef TS_OPTIMIZE_PRIV_H
#define TS_OPTIMIZE_PRIV_H

#include <stdarg.h>

#include "optimize/cost_model.h"
#include "optimize/op_fusion.h"
#include "optimize/passes.h"
#include "replay/replay.h"

/* Cap groupings kept (ts__tf_cap_groupings takes them evenly when more). */
#define TS_OPT_MAX_CAPS 64

struct ts_optimize {
    const ts_graph   *g;          /* borrowed */
    ts_replay_options base;       /* the user's what-ifs every candidate is priced with (strings borrowed) */
    ts_replay_session *session;   /* what every candidate's replay shares (replay.h), NULL = none */
    unsigned          passes;
    ts_opt_grads      grads;      /* empty (n = 0) when only op fusion runs */
    ts_opf            opf;        /* op-fusion candidates; n_vars = 0 without that pass */
    ts_xla            xla;        /* the XLA candidate list (n = 0: none) */
    ts_cost_model     table;      /* fitted on dPRO's timing tables (n = 0: none) */
    const char       *opf_rule;   /* how fused times were estimated, in words */
    uint32_t         *old_grads;  /* [n_old]: gradients per bucket in the trace */
    uint32_t          n_old;
    uint32_t          n_vars;
    uint8_t          *min, *max, *init, *best;   /* [n_vars]: the space, the trace's strategy, the plan;
                                                    vars: tensor fusion, partition, op fusion */
    uint32_t         *pieces;     /* [grads.n] scratch: pieces per gradient */
    uint32_t         *units;      /* [cap_units] scratch: units per bucket */
    uint32_t          cap_units;
    ts_opt_outcome    oc;
    ts_optimize_summary sum;
    uint64_t          n_attrib_evals;   /* replays spent pruning changes and saying what each buys */
    uint32_t          n_pruned;         /* changes of the search's best that bought nothing, dropped */
    char            **pruned;           /* [n_pruned] owned lines: each dropped change and its price */
    uint32_t          cap_pruned;
    uint32_t          prune_max;        /* pricings the pruning may spend (two stages: folded replays) */
    int64_t           hook_cost_ns;     /* what a plan applied by ddp_hook.py costs a step; 0 = free */
    int64_t           hook_group_ns;    /* ... plus this per group it all-reduces */
    uint8_t          *caps;             /* [n_caps * n_vars]: every grouping a whole-KiB bucket_cap_mb
                                           gives (up to 64) but the trace's, as strategies (no gradient
                                           cut, the ops as the trace ran them) */
    uint32_t          n_caps;
    bool              cap_proposed[TS_OPT_MAX_CAPS]; /* [n_caps]: the search priced it as a proposal */
    uint8_t          *proposals;        /* [n_proposals * n_vars]: those the search prices first (all,
                                           or half the evaluation budget's worth taken evenly) */
    uint32_t          n_proposals;
    uint8_t          *cap_best;         /* [n_vars]: the fastest strategy priced that a bucket_cap_mb
                                           gives (NULL without the bucket passes) */
    int64_t           cap_best_ns;      /* ... its price (INT64_MAX: none priced) */
    bool              same_buckets;     /* the plan's buckets are the trace's: no bucket setting to make */
    const ts_graph   *eval_g;     /* where eval_vars prices: g, or rep during a two-stage search */
    ts_replay_session *eval_session;
    const ts_graph   *rep;        /* two stages: the folded job's representatives (borrowed), NULL = one */
    ts_replay_session *rep_session;
    uint32_t          top_k;
    int64_t          *st_rep, *st_full;   /* [n_st]: re-priced strategies (the trace's first, then the
                                             search's best by representatives' price, then st_cap):
                                             both prices */
    int32_t           st_chosen;  /* index into st_*: the plan (0 = the trace's own) */
    int32_t           st_cap;     /* index into st_*: the fastest cap grouping, re-priced since the
                                     search's best lacked it (-1: none) */
    uint32_t          n_st;
    char            **changes;    /* owned lines */
    uint32_t          n_changes, cap_changes;
};

/* First op-fusion var (after the tensor-fusion and partition vars). */
static inline uint32_t ts__opt_opf_first(const ts_optimize *o) { return ts__tf_n_vars(&o->grads) + o->grads.n_part; }

#endif
