/* contention.h - CPU contention between compute and gloo reductions (the
 * model is described in contention.c). Used by rebucket.c.
 */
#ifndef TS_REPLAY_CONTENTION_H
#define TS_REPLAY_CONTENTION_H

#include "replay/sim.h"

/* What the model reads; every array is owned by the caller. */
typedef struct ts_contention {
    uint16_t  n_ranks;
    uint32_t *op;          /* sim rows of the compute ops that can be slowed */
    uint32_t *name_of;     /* per op: index of its (rank, name) in [0, n_names) */
    uint32_t  n_ops, n_names;
    uint32_t *member;      /* sim rows of all-reduce members: measured (old) and what-if (new) */
    uint8_t  *active;      /* per member: 1 = it runs in the edited schedule */
    uint32_t  n_members;
} ts_contention;

/* Fit kappa on the measured overlaps (into *kappa), then re-time the ops of
 * s for the edited schedule's overlaps and re-simulate until it settles.
 * On failure s may be half re-timed; the caller discards it. */
TS_NODISCARD int ts__contention_apply(ts_contention *ct, ts_sim *s, double *kappa, ts_error *err);

#endif
