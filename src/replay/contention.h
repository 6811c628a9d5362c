/* contention.h - CPU contention between compute and gloo reductions, and
 * the price of a regrouped gloo all-reduce (the model is described in
 * contention.c). Used by rebucket.c.
 */
#ifndef TS_REPLAY_CONTENTION_H
#define TS_REPLAY_CONTENTION_H

#include "replay/sim.h"
#include "trainscope/replay.h"

/* The measured side of the model (kappa, each op's measured overlap, each
 * measured all-reduce's measured sharing, the load factor) depends only on
 * measured times, so the candidates of one search share it. A memo keeps
 * it with the inputs it was computed from (the ops, their measured times
 * and names, the measured members, the measured all-reduces and their
 * prices); ts__contention_apply reuses it only when this call's inputs are
 * the same, element for element, so a reuse never changes a result. */
typedef struct ts_contention_memo {
    bool      valid;
    uint16_t  n_ranks;
    uint32_t  n_ops, n_names, n_meas_members, n_old;
    int64_t   alpha_ns;
    double    kappa_given;
    uint32_t *op, *name_of, *meas_members, *old_member;   /* old_member: [n_old * n_ranks] */
    int64_t  *meas, *old_work_ns, *old_meas_ns;
    double   *f_meas, *g_meas;                             /* [n_ops], [n_old] */
    double    kappa, load;
    uint64_t  n_reused;    /* calls that took it */
} ts_contention_memo;

void ts__contention_memo_free(ts_contention_memo *m);

/* What the model reads; every array is owned by the caller. */
typedef struct ts_contention {
    uint16_t  n_ranks;
    uint32_t *op;          /* sim rows of the compute ops that can be slowed */
    uint32_t *name_of;     /* per op: index of its (rank, name) in [0, n_names) */
    uint32_t  n_ops, n_names;
    uint32_t *member;      /* sim rows of all-reduce members: measured (old) and what-if (new) */
    uint8_t  *active;      /* per member: 1 = it runs in the edited schedule */
    uint32_t  n_members;
    /* Gradient all-reduce instances, measured (old) and what-if (new). Each
     * has one member per rank; its transfer is its barrier's self time. */
    uint32_t  n_colls;
    uint32_t *coll_bar;    /* sim row of its barrier */
    uint32_t *coll_member; /* [i * n_ranks + k]: its member on rank k */
    int64_t  *coll_work_ns;/* the cost model's time for its bytes alone on an idle machine, <= 0 = unknown */
    int64_t  *coll_meas_ns;/* measured transfer time of an old instance; 0 for new ones */
    int32_t  *coll_same;   /* new instance holding exactly the gradients of old instance coll_same[i]: that
                              index; -1 = none; old instances: -1 */
    uint8_t  *coll_new;    /* 1 = what-if bucket (re-timed for its simulated sharing), 0 = measured */
    int64_t   alpha_ns;    /* the cost model's fixed cost of one all-reduce (its time at 0 bytes), 0 = none:
                              sharing slows it twice (contention.c, price()) */
    /* Called after each simulation of the re-timing rounds (may be NULL):
     * rebucket.c hands the new buckets to gloo's workers there. Returns
     * whether it changed the graph (a lane or an edge). */
    bool    (*after_sim)(void *ctx, ts_sim *s);
    void     *after_sim_ctx;
    double    load;        /* out: the trace's load factor s (measured transfer / model x sharing), 0 = none */
    double    kappa_given; /* > 0: compute slowdown per all-reduce in flight measured by the calibration
                              log (ts__coll_model_cpu_kappa), used instead of fitting kappa on the trace */
    ts_contention_memo *memo; /* [n_memo] kept measured sides, NULL = none: a matching one is taken, else it
                                 is computed and kept in slot *memo_next (round robin) */
    uint32_t  n_memo, *memo_next;
    const uint32_t *replica_of; /* [n_ranks]: the representative of each rank of a folded graph (--fold-replicas:
                              a replica keeps only its collective members), NULL = none; a replica's all-reduces
                              share the core with its representative's compute */
    uint32_t  n_rounds;    /* out: simulations the re-timing rounds ran (they stop at the fixed point) */
    bool      all_rounds;  /* run every round, even past the fixed point (tests: the stop changes nothing) */
} ts_contention;

/* The most re-timing rounds: they stop earlier when a round changes nothing. */
#define TS_CONTENTION_ROUNDS 6

/* gloo's worker threads per process group (ProcessGroupGloo's default): the
 * all-reduces in flight at once in bench/gloo_allreduce.py's sharing test. */
#define TS_GLOO_WORKERS 2

/* Compute slowdown per gloo all-reduce in flight on this machine, from the
 * calibration log's sharing line (collective.c); 0 = the log has none. */
double ts__coll_model_cpu_kappa(const ts_coll_model *m);
/* > 1 when the log's sharing line ran compute faster beside the all-reduces
 * than alone (a test the machine's load disturbed): that ratio; it then
 * gives no slowdown. 0 otherwise. */
double ts__coll_model_cpu_disturbed(const ts_coll_model *m);

/* Whether a group of n ranks spans several servers, as the loaded nccl-tests
 * logs tell (their "Rank N ... on HOST" lines): 1 yes, 0 no, -1 unknown. */
int ts__coll_model_spans_servers(const ts_coll_model *m, uint32_t n);

/* Fit kappa on the measured overlaps (into *kappa; or take ct->kappa_given) and the load factor on
 * the measured all-reduces (into ct->load), then re-time the ops and the new
 * all-reduces of s for the edited schedule's overlaps and re-simulate until
 * it settles.
 * On failure s may be half re-timed; the caller discards it. */
TS_NODISCARD int ts__contention_apply(ts_contention *ct, ts_sim *s, double *kappa, ts_error *err);

#endif
