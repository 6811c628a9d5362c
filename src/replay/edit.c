/* edit.c - the out-of-line parts of the simulator's edit API (edit.h):
 * adding nodes, edges and collectives, removing base nodes. */
#include "replay/edit.h"

uint32_t ts__edit_add_node(ts_replay *r, uint16_t rank, uint8_t kind, uint32_t lane, int32_t iteration,
                           const char *name)
{
    ts_sim *s = &r->sim;
    uint32_t x = ts__sim_add_node(s, rank, kind, 0, 0, INT64_MIN, INT64_MIN);
    if (x == TS_NONE32) return x;
    s->lane[x] = lane;
    s->iteration[x] = iteration;
    s->name[x] = name;
    return x;
}

void ts__edit_remove(ts_replay *r, uint32_t n)
{
    r->sim.self_ns[n] = 0;
    if (r->removed && n < r->sim.n_base_nodes) r->removed[n] = 1;
}

uint32_t ts__edit_add_edge(ts_replay *r, uint32_t src, uint32_t dst, uint8_t flags, int64_t gap_ns, uint8_t ekind)
{
    uint32_t e = ts__sim_add_edge(&r->sim, src, dst, flags, gap_ns);
    if (e != TS_NONE32 && ekind) r->sim.ekind[e] = ekind;
    return e;
}

int ts__edit_add_collective(ts_replay *r, const uint32_t *members, const int64_t *exit_gap_ns, uint32_t n,
                            ts_coll_kind kind, int64_t bytes, int64_t transfer_ns, uint32_t lane, uint32_t *coll)
{
    ts_sim *s = &r->sim;
    int64_t t = transfer_ns > 0 ? transfer_ns : 0;
    uint32_t y = ts__sim_add_node(s, TS_GRAPH_NO_RANK, TS_NODE_BARRIER, 0, t, INT64_MIN, INT64_MIN);
    if (y == TS_NONE32) return TS_ENOMEM;
    s->lane[y] = lane;
    s->name[y] = kind == TS_COLL_ALL_REDUCE ? "allreduce" : ts_coll_kind_name(kind);
    s->iteration[y] = s->iteration[members[0]];
    for (uint32_t k = 0; k < n; k++) {
        ts__sim_add_edge(s, members[k], y, 0, 0);
        ts__sim_add_edge(s, y, members[k], TS_SIM_FROM_END | TS_SIM_TO_END, exit_gap_ns[k]);
    }
    ts_replay_coll rc = {y, TS_NONE32, kind, bytes, n, transfer_ns, y, n};
    if (ts__grow((void **)&r->colls, &r->cap_colls, sizeof *r->colls, (size_t)r->n_colls + 1)) return TS_ENOMEM;
    if (coll) *coll = r->n_colls;
    r->colls[r->n_colls++] = rc;
    return s->oom ? TS_ENOMEM : TS_OK;
}
