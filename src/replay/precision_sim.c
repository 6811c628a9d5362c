/* precision_sim.c - the time of a precision plan on GPU runs: a two-resource
 * replay of the fp32 run's first iteration (the CPU that issues ops, the GPU
 * that runs what they launch), each unit's parts taken at its planned
 * precision. A GPU-bound step (the queue never empties) comes out as its
 * kernels' time, a launch-bound one as its CPU time, and a mixed one as
 * what the queue lets overlap.
 *
 * Not here: the additive per-unit costs the greedy search prices changes with
 * (precision_plan.c), building the items (precision.c).
 * Rules (docs/precision.md): an op's GPU work becomes ready when its CPU part
 * ends; the GPU runs one op's work at a time; an inserted cast adds its
 * fitted GPU time to the unit's part; the profiler's cost per slice comes off
 * the CPU parts and off the gaps (per range starting in them). Cost: O(items).
 */
#include "replay/precision.h"

/* CPU and GPU time of unit u's forward (bwd false) or backward at its plan. */
static void part(const ts_prec_model *m, const uint8_t *prec, uint32_t u, bool bwd, int64_t *cpu, int64_t *gpu)
{
    const ts__prec_unit *un = &m->units[u];
    int p = prec[u], prev = ts__prec_prev(m->units, prec, u);
    if (!bwd) {
        *cpu = un->fwd[p] - (int64_t)(m->overhead_ns * un->ev_fwd[p]);
        *gpu = un->gfwd[p];
        if (p == prev) { *cpu += un->entry_fwd[p]; *gpu += un->gentry_fwd[p]; }
        else *gpu += ts__prec_cast_ns(m, un->in_elems);
    } else {
        *cpu = un->bwd[p] - (int64_t)(m->overhead_ns * un->ev_bwd[p]);
        *gpu = un->gbwd[p];
        if (p == prev) { *cpu += un->entry_bwd[p]; *gpu += un->gentry_bwd[p]; }
        else if (un->prev_in != TS_NONE32) *gpu += ts__prec_cast_ns(m, un->in_elems);   /* the batch takes no gradient */
    }
}

int64_t ts__prec_sim_ns(const ts_prec_model *m, const uint8_t *prec)
{
    int64_t tc = 0, tg = 0;
    for (uint32_t i = 0; i < m->n_titems; i++) {
        const ts__prec_titem *it = &m->titems[i];
        int64_t cpu, gpu;
        if (it->kind == TS__ITEM_FIXED) {
            cpu = it->cpu_ns - (int64_t)(m->overhead_ns * it->ev);
            gpu = it->gpu_ns;
        } else {
            part(m, prec, it->unit, it->kind == TS__ITEM_BWD, &cpu, &gpu);
        }
        int64_t gap = it->gap_ns - (int64_t)(m->overhead_ns * it->gap_ev);
        tc += (gap > 0 ? gap : 0) + (cpu > 0 ? cpu : 0);
        if (gpu > 0) tg = (tg > tc ? tg : tc) + gpu;
    }
    return tc > tg ? tc : tg;
}
