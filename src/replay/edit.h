/* edit.h - the edit API of a replay's simulator: the only way what-if
 * passes (whatif.c, rebucket.c, contention.c) and the optimizer's passes
 * change the graph they replay.
 *
 * Nodes: add, remove (it takes no time and the export leaves it out),
 * retime (its self time), move to another lane. Edges: add, set a gap, cut
 * (the edge never binds again), reroute (another source point). Collectives:
 * add one over a member per rank (regroup and split are: retire the old
 * instances' nodes, add new ones), reprice one (its transfer time on the
 * node that carries it). Every write keeps sim.h's invariants (self time
 * >= 0; edges between existing nodes); adds report out of memory through
 * sim.oom, which ts__sim_run turns into TS_ENOMEM. O(1) each. Only rows
 * the sim owns may be written: callers edit after sim_from_graph copied the
 * times (what-ifs requested). Not for: deciding what to edit.
 */
#ifndef TS_REPLAY_EDIT_H
#define TS_REPLAY_EDIT_H

#include "replay/replay.h"

/* A node of the what-if; TS_NONE32 when out of memory. */
uint32_t ts__edit_add_node(ts_replay *r, uint16_t rank, uint8_t kind, uint32_t lane, int32_t iteration,
                           const char *name);
static inline void ts__edit_retime(ts_replay *r, uint32_t n, int64_t self_ns)
{
    r->sim.self_ns[n] = self_ns > 0 ? self_ns : 0;
}
/* A base node the what-if replaced: no time, left out of the export. */
void ts__edit_remove(ts_replay *r, uint32_t n);
static inline void ts__edit_move_lane(ts_replay *r, uint32_t n, uint32_t lane) { r->sim.lane[n] = lane; }

/* An edge of kind ekind (a ts_edge_kind, 0 = synthetic); TS_NONE32 when out of memory. */
uint32_t ts__edit_add_edge(ts_replay *r, uint32_t src, uint32_t dst, uint8_t flags, int64_t gap_ns, uint8_t ekind);
static inline void ts__edit_set_gap(ts_replay *r, uint32_t e, int64_t gap_ns) { r->sim.egap_ns[e] = gap_ns; }
static inline void ts__edit_cut(ts_replay *r, uint32_t e) { r->sim.egap_ns[e] = TS_SIM_CUT_GAP; }
static inline bool ts__edit_is_cut(const ts_replay *r, uint32_t e) { return r->sim.egap_ns[e] == TS_SIM_CUT_GAP; }
/* Edge e now constrains its destination from src's point (flags' FROM_END) plus gap. */
static inline void ts__edit_reroute(ts_replay *r, uint32_t e, uint32_t src, uint8_t flags, int64_t gap_ns)
{
    if ((r->sim.eflags[e] ^ flags) & TS_SIM_TO_END) r->sim.order_stale = true;   /* sim.h: its in-edge index */
    r->sim.esrc[e] = src;
    r->sim.eflags[e] = flags;
    r->sim.egap_ns[e] = gap_ns;
}

/* A collective instance over members[0..n) (one per rank, in rank order): a
 * barrier node on `lane` that starts when the last member starts and takes
 * transfer_ns; member k ends exit_gap_ns[k] after it. Appended to r->colls
 * (its row in *coll, may be NULL). TS_ENOMEM when out of memory. */
TS_NODISCARD int ts__edit_add_collective(ts_replay *r, const uint32_t *members, const int64_t *exit_gap_ns, uint32_t n,
                                         ts_coll_kind kind, int64_t bytes, int64_t transfer_ns, uint32_t lane,
                                         uint32_t *coll);
/* Collective row ci now takes transfer_ns (on its priced node). */
static inline void ts__edit_reprice(ts_replay *r, uint32_t ci, int64_t transfer_ns)
{
    ts__edit_retime(r, r->colls[ci].priced, transfer_ns);
}

#endif
