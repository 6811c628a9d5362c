/* precision.h (internal) - the precision model's tables, shared by
 * precision.c (building it from traces, the cast fit) and precision_plan.c
 * (plans, prediction, the greedy search).
 *
 * A "block" is a stretch of one iteration summarised for memory: net bytes
 * (allocated minus freed) and its own peak above where it started.
 * Invariants: units[] are in forward program order; every time is a 20% trimmed
 * mean over the run's iterations, -1 where the run at that precision is absent;
 * items[] is the fp32 run's first iteration in time order.
 */
#ifndef TS_REPLAY_PRECISION_H
#define TS_REPLAY_PRECISION_H

#include "core/core.h"
#include "trainscope/precision.h"

typedef struct ts__blk { int64_t net, peak; } ts__blk;   /* bytes; peak >= 0 */

static inline ts__blk ts__blk_cat(ts__blk a, ts__blk b)
{
    ts__blk c = {a.net + b.net, a.peak > a.net + b.peak ? a.peak : a.net + b.peak};
    return c;
}

enum { TS__IN_NONE = -1, TS__IN_UNKNOWN = -2 };

typedef struct ts__prec_unit {
    uint32_t op, scope;              /* strpool ids (scope 0 = none) */
    bool     has_bwd;                /* a backward block in the fp32 timeline */
    int64_t  in_elems;               /* first input's elements; TS__IN_NONE: its first argument is no tensor
                                        (record_function's aten::zeros, aten::empty): nothing to cast;
                                        TS__IN_UNKNOWN: no "Input Dims" (a cast of unknown size) */
    uint32_t prev_in, next_in;       /* the nearest unit before (after) it that takes a tensor, TS_NONE32 = none */
    bool     keeps_out;              /* its backward keeps its output (torch's formula uses `result`) */
    int64_t  fwd[TS_PREC_COUNT], bwd[TS_PREC_COUNT];           /* the op and its backward ops */
    int64_t  entry_fwd[TS_PREC_COUNT], entry_bwd[TS_PREC_COUNT]; /* its entry cast, 0 = none */
    uint32_t ev_fwd[TS_PREC_COUNT], ev_bwd[TS_PREC_COUNT];     /* profiled slices in them (first iteration),
                                                                   entry cast included, for the overhead */
    int64_t  gfwd[TS_PREC_COUNT], gbwd[TS_PREC_COUNT];         /* GPU traces: the same parts' kernel time */
    int64_t  gentry_fwd[TS_PREC_COUNT], gentry_bwd[TS_PREC_COUNT];
    ts__blk  m_fwd[TS_PREC_COUNT], m_bwd[TS_PREC_COUNT];       /* memory of the op, its backward */
    ts__blk  m_entry_fwd[TS_PREC_COUNT], m_entry_bwd[TS_PREC_COUNT];
} ts__prec_unit;

/* The precision unit u's input arrives in: that of the nearest unit before
 * it that takes a tensor (its producer in a chain; the ops between, such as
 * record_function's aten::zeros, carry no activation), fp32 (the batch) for
 * the first; a unit that takes no tensor has nothing to cast: its own. */
static inline int ts__prec_prev(const ts__prec_unit *units, const uint8_t *prec, uint32_t u)
{
    if (units[u].in_elems == TS__IN_NONE) return prec[u];
    return units[u].prev_in == TS_NONE32 ? TS_PREC_FP32 : prec[units[u].prev_in];
}

enum { TS__ITEM_FIXED = 0, TS__ITEM_FWD, TS__ITEM_BWD };
typedef struct ts__prec_item {   /* one step of the fp32 run's memory timeline */
    uint8_t  kind;               /* TS__ITEM_* */
    uint32_t unit;               /* FWD/BWD: the unit */
    ts__blk  mem;                /* FIXED: as recorded */
} ts__prec_item;

typedef struct ts__prec_titem {   /* GPU runs: one op of the fp32 run's first iteration, for the time simulation */
    uint8_t  kind;               /* TS__ITEM_FIXED: a precision-free op; FWD, BWD: the unit's part, at its first op */
    uint32_t unit;
    int64_t  gap_ns;             /* CPU time before it that no op covers (Python, the profiler, waits) */
    uint32_t gap_ev;             /* profiled slices (ranges) that start in that gap */
    int64_t  cpu_ns, gpu_ns;     /* FIXED: the op's CPU time and its GPU ops' */
    uint32_t ev;                 /* FIXED: profiled slices in it */
} ts__prec_titem;

struct ts_prec_model {
    ts_strpool     names;
    ts__prec_unit *units;   uint32_t n_units, cap_units;
    ts__prec_item *items;   uint32_t n_items, cap_items;
    uint32_t       have;             /* bit set of precisions with a run */
    int64_t        iter_ns;          /* fp32 run: its step (trimmed mean) */
    int64_t        fixed_ns;         /* fp32 run: iter_ns less the units' times: other ops and gaps */
    uint32_t       fixed_ev;         /* fp32 run: profiled slices outside units (first iteration) */
    double         overhead_ns;      /* profiler cost per profiled slice, taken off every time; 0 = none */
    int64_t        base_bytes;       /* fp32 run: bytes alive when its first iteration starts, -1 = no memory */
    bool           have_memory;
    bool           gpu;              /* the runs' ops launch kernels: a part costs max(CPU, GPU time) */
    ts__prec_titem *titems; uint32_t n_titems, cap_titems;   /* GPU runs: the fp32 run's first iteration */
    int64_t        sim0_ns;          /* GPU runs: the simulation of the all-fp32 plan, no overhead */
    double         gpu_busy_pct;     /* fp32 run: share of its steps some GPU op runs in */
    double         alpha_ns_per_elem, beta_ns;
    uint32_t       n_fit;
    double         fit_err_pct;
    char         **notes;   uint32_t n_notes, cap_notes;
};

/* GPU runs, the greedy's additive price: a unit's forward and backward at p
 * (its op and backward ops, less the profiler's cost per slice) and its
 * entry cast's, each part the larger of its CPU time and its kernels' time
 * (docs/precision.md). CPU runs add the CPU times (precision_plan.c). */
static inline int64_t ts__prec_max(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t ts__prec_body_ns(const ts_prec_model *m, const ts__prec_unit *u, int p)
{
    int64_t f = u->fwd[p] - (int64_t)(m->overhead_ns * u->ev_fwd[p]);
    int64_t b = u->bwd[p] - (int64_t)(m->overhead_ns * u->ev_bwd[p]);
    return ts__prec_max(f, u->gfwd[p]) + ts__prec_max(b, u->gbwd[p]);
}
static inline int64_t ts__prec_entry_ns(const ts__prec_unit *u, int p)
{
    return ts__prec_max(u->entry_fwd[p], u->gentry_fwd[p]) + ts__prec_max(u->entry_bwd[p], u->gentry_bwd[p]);
}

/* precision_align.c: a key of an op (its name and scope); the alignment of
 * seq[m] with ref[n] on a longest common subsequence: match[j] = the ref
 * index seq[j] is paired with, or TS_NONE32. TS_ERANGE when the unequal
 * middle needs more than TS__PREC_ALIGN_MAX_CELLS cells, TS_ENOMEM. */
#define TS__PREC_ALIGN_MAX_CELLS (64u << 20)
uint64_t ts__prec_key(const char *name, const char *scope);
TS_NODISCARD int ts__prec_align(const uint64_t *ref, uint32_t n, const uint64_t *seq, uint32_t m, uint32_t *match);

/* precision_sim.c: the step of plan prec[] on GPU runs, simulated over
 * the fp32 run's first iteration (titems): the CPU issues the ops one after
 * the other with their gaps, each op's GPU work starts when the op's CPU
 * part ends and the GPU is free; the step ends when both are done. */
int64_t ts__prec_sim_ns(const ts_prec_model *m, const uint8_t *prec);

/* precision_plan.c: cost of a cast of n elements (forward or backward);
 * unit u's time at precision p after a unit at prev (*casts += the casts it
 * adds; casts may be NULL); a timeline item's memory block under plan prec;
 * the plan's peak (-1 without memory events). */
int64_t ts__prec_cast_ns(const ts_prec_model *m, int64_t elems);
int64_t ts__prec_unit_cost(const ts_prec_model *m, uint32_t u, int p, int prev, uint32_t *casts);
ts__blk ts__prec_item_blk(const ts_prec_model *m, const uint8_t *prec, uint32_t i);
int64_t ts__prec_peak(const ts_prec_model *m, const uint8_t *prec);

#endif
