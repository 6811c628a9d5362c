/* build.h - the steps that build a ts_graph, shared by the files of graph/.
 *
 * Order (ts_graph_create): ts__graph_local() for every rank (nodes, lanes and
 * local edges, times on the rank's clock) -> ts__graph_match() (collective
 * instances) -> ts__graph_align() (per-rank offsets) -> ts__graph_barriers()
 * (cross-rank nodes and edges) -> ts__graph_finish() (CSR indexes, gaps,
 * self times, topological order). Edges carry no gap until finish.
 * Not for readers of a graph: they need only graph.h.
 */
#ifndef TS_GRAPH_BUILD_H
#define TS_GRAPH_BUILD_H

#include "graph/graph.h"

/* Per-rank scratch that the matching step reads after the local pass. */
typedef struct ts_graph_members {
    uint32_t *node;      /* collective member nodes of one rank, in time order */
    uint32_t  n, cap;
} ts_graph_members;

/* One rank condensed where it was read (graph/stream.h's ts_graph_part):
 * its local graph as a graph of one rank (nodes, lanes, local edges,
 * mpi_done, the stream-wait counts, the local pass's warnings; slices are
 * rows of `rank`), its collective members, and its compact rank. */
struct ts_graph_part {
    ts_graph        *g;
    ts_graph_members members;
    ts_rank         *rank;
};

ts_graph *ts__graph_alloc(const ts_job *t, uint32_t n_ranks, const ts_graph_options *opt);
/* Grow the node and edge columns to hold at least this many rows (appends
 * then never reallocate) and map the new rows' pages now (they are about to
 * be written); TS_ENOMEM leaves the graph as it was. */
TS_NODISCARD int ts__graph_reserve(ts_graph *g, size_t n_nodes, size_t n_edges);
uint32_t  ts__graph_add_lane(ts_graph *g, uint16_t rank, bool on_gpu, uint32_t track);
uint32_t  ts__graph_add_node(ts_graph *g, uint16_t rank, ts_node_kind kind, uint32_t lane,
                             uint32_t slice, int64_t start_ns, int64_t dur_ns);
void      ts__graph_add_edge(ts_graph *g, uint32_t src, uint32_t dst, ts_edge_kind kind, uint8_t flags);

/* The node table's columns (at most 16), for loops over all of them. */
size_t ts__graph_node_cols(ts_graph_nodes *n, ts_col_ref *c);
/* Put the graph's ranks, built in another order, in order: old rank r
 * becomes rank pos[r]. Before matching: moves every rank's node rows and
 * lanes (lane_first: n_ranks + 1 entries, rank r's lanes are rows
 * [lane_first[r], lane_first[r + 1])), remaps edges, the members' lists
 * (permuted too), mpi_done and replica_of. O(nodes + edges); one column's
 * worth of scratch at a time (reorder.c). */
TS_NODISCARD int ts__graph_reorder_ranks(ts_graph *g, const uint32_t *pos, const uint32_t *lane_first,
                                         ts_graph_members *members);
/* Nodes and local edges of graph rank `ri`, whose slices live in model rank
 * `model`; appends the rank's collective members to *members. */
TS_NODISCARD int ts__graph_local(ts_graph *g, uint16_t ri, const ts_rank *model,
                                 ts_graph_members *members, ts_error *err);
/* The slice that carries member slice s's collective args: s, or the
 * record_param_comms nested right inside a c10d:: call (collective.c). */
uint32_t ts__graph_args_slice(const ts_rank *r, uint32_t s);
/* Collective key of a member node: normalized name and process group (graph strings). */
void ts__graph_coll_key(ts_graph *g, uint32_t node, uint32_t *name, uint32_t *pg, int64_t *seq,
                        int64_t *bytes);
/* Instances from every rank's members; ord_of (per node, INT64_MIN = none;
 * NULL = none at all) overrides the order-based ordinal of a member. */
TS_NODISCARD int ts__graph_match(ts_graph *g, ts_graph_members *members, const int64_t *ord_of, ts_error *err);
/* After a first match and alignment: re-pair by time the ranks whose order
 * pairing left causality violations, when clocks count from the epoch; drops
 * the warnings added since warn_mark and matches and aligns again. */
TS_NODISCARD int ts__graph_rematch_by_time(ts_graph *g, ts_graph_members *members, uint32_t warn_mark, ts_error *err);
/* Offsets (unless opt.no_align) and residuals of every rank. */
void ts__graph_align(ts_graph *g);
void ts__graph_barriers(ts_graph *g);
TS_NODISCARD int ts__graph_finish(ts_graph *g, ts_error *err);
/* Every step after the local passes, in order: match, align, re-match by
 * time where needed, barriers, finish (ts_graph_create and graph/stream.c). */
TS_NODISCARD int ts__graph_join(ts_graph *g, ts_graph_members *members, ts_error *err);
/* Its two halves: match, align and re-match; then barriers and finish. */
TS_NODISCARD int ts__graph_join_match(ts_graph *g, ts_graph_members *members, ts_error *err);
TS_NODISCARD int ts__graph_join_finish(ts_graph *g, ts_error *err);

#endif
