/* sim.h - the replay simulator's editable version of a global graph (columns
 * it owns, and columns it borrows from the graph until it must change them).
 *
 * A ts_sim is a set of nodes, each with two points (start, end), and edges
 * that constrain one point of their dst from one point of their src, with the
 * same time model as graph/graph.h:
 *     start(n) = has start-edges ? max over them of point(src) + gap_ns
 *                                : own_start_ns(n)
 *     end(n)   = max(start(n) + self_ns(n), max over end-edges of point(src) + gap_ns)
 * Resources (one kernel at a time per GPU stream, CPU threads serial, a rank's
 * collective channel shared) are the lane-order edges (program order, stream
 * order, the worker thread's order), so a fixed per-lane order is the resource
 * model, as in dPRO: a stream executes in launch order and a thread in program
 * order whatever the durations. What-if edits change self_ns and gaps, or add
 * nodes and edges; ts__sim_run then recomputes every point in O(V + E).
 *
 * Invariants: edge endpoints are < n_nodes; gaps may be negative (a kernel may
 * start before its launch call returns); self_ns >= 0. Cycles are an input
 * error reported by ts__sim_run, never a hang.
 * Writers: replay/ only. Not for: building graphs from traces (graph/).
 */
#ifndef TS_REPLAY_SIM_H
#define TS_REPLAY_SIM_H

#include "core/core.h"

enum { TS_SIM_FROM_END = 1, TS_SIM_TO_END = 2 };   /* same bits as TS_EDGE_FROM_END / TO_END */

typedef struct ts_sim {
    uint32_t     n_nodes, cap_nodes;
    /* Read the three time columns through the accessors below: while a
     * graph lends them, own_start_ns and meas_start_ns are on each rank's
     * own clock and meas_offset_ns aligns them. */
    int64_t     *own_start_ns;  /* start of a node with no start-edge (measured start) */
    int64_t     *self_ns;       /* time the node needs by itself, >= 0 */
    int64_t     *meas_start_ns; /* measured start; INT64_MIN = synthetic (never measured) */
    int64_t     *meas_dur_ns;   /* measured duration (meaningless when meas_start_ns is INT64_MIN) */
    uint32_t    *lane;          /* lane (thread/stream) id for export, TS_NONE32 = none */
    uint16_t    *rank;          /* rank index, UINT16_MAX = cross-rank (barrier) */
    uint8_t     *kind;          /* ts_node_kind of graph/graph.h */
    int32_t     *iteration;     /* the rank's iteration index, -1 = none */
    const char **name;          /* borrowed display name of a node added after the first
                                   n_base_nodes (whose rows are a graph's own node rows and
                                   whose names replay.h reads from the graph; never set) */

    uint32_t  n_edges, cap_edges;
    uint32_t *esrc, *edst;      /* node rows */
    uint8_t  *eflags;           /* TS_SIM_FROM_END | TS_SIM_TO_END */
    int64_t  *egap_ns;          /* added to the src point */
    uint8_t  *ekind;            /* ts_edge_kind of graph/graph.h (for what-ifs), 0 when synthetic */
    /* Optional borrowed index of the first n_base_edges edges, which are
     * sorted by src node: node n's are [base_out[n], base_out[n + 1]) for
     * n < n_base_nodes (a graph's out_first). Saves re-sorting a copied
     * graph on every run; edges added later are indexed by the run. */
    const uint32_t *base_out;   /* NULL = none */
    uint32_t  n_base_nodes, n_base_edges;
    /* Optional borrowed in-edge index and topological order of the base
     * graph (a graph's in_first / in_edge / topo: 2 * n_base_nodes points).
     * While nothing was appended, ts__sim_run evaluates in that order with
     * no scratch memory; edits of gaps and self times keep it valid. */
    const uint32_t *base_in_first, *base_in_edge, *base_topo;   /* NULL = none */

    /* Columns own_start_ns, self_ns, lane, rank, kind, iteration,
     * meas_start_ns, meas_dur_ns, esrc, edst, eflags, ekind and egap_ns may be
     * borrowed (ts__sim_borrow) from a graph. A borrowed column's rows are
     * read-only; the first append copies it. */
    uint32_t  cap_nodes_ro;     /* capacity of the borrowable node columns (cap_nodes: the others;
                                   cap_edges: every edge column) */
    uint16_t  borrowed;         /* bit per borrowable column, in sim.c's lendable_cols order */
    /* Per rank (owned, n_offsets entries): added to own_start_ns and
     * meas_start_ns of the nodes of that rank to put them on the aligned
     * clock; NULL = they are aligned already. Ranks at or past n_offsets
     * (barriers) are aligned already. The first append adds the offsets into
     * the copied columns and frees this. Lending the graph's own start
     * column this way keeps 256 MB of fresh memory out of a 16 M-node replay. */
    int64_t  *meas_offset_ns;
    uint32_t  n_offsets;

    /* The point order of the first full run on these nodes and edges
     * (Kahn's pass) and an in-edge index by destination node, owned, for
     * the runs after it (the contention rounds change self times, gaps and
     * the sources of a few edges, never the nodes, the edge count or an
     * edge's destination point): such
     * a run pulls each point from its in-edges in that order, and a point
     * whose source is not evaluated yet (a reroute since) first evaluates
     * that source, depth first. order_nodes/order_edges: the shape it was
     * made on, 0 = none. */
    uint32_t *order;               /* [2 order_nodes]: points in evaluation order */
    uint32_t *mark;                /* [2 order_nodes]: 2 stamp = evaluated in run `stamp`, 2 stamp - 1 = pending */
    uint32_t *dfs;                 /* [4 order_nodes]: depth-first stack, (point, next in-edge) pairs */
    uint32_t *in_first, *in_edge;  /* [2 order_nodes + 1], [order_edges]: edges into each point */
    uint32_t  order_nodes, order_edges, stamp;
    bool      order_stale;         /* an edge changed the point it constrains (edit.h's reroute) */
    bool      keep_order;          /* set by a caller that will run the sim again (contention.c): only
                                      then does a Kahn run keep its order (about 40 bytes a node) */

    /* Results of the last ts__sim_run; n_nodes entries each. */
    int64_t  *start_ns;
    int64_t  *end_ns;
    bool      oom;              /* an add failed; ts__sim_run reports TS_ENOMEM */
    bool      edited;           /* a what-if changed times: ts__sim_run checks their range */
    bool      overflow;         /* the last run summed past int64 (ts__sim_run reports TS_ERANGE) */
} ts_sim;

/* Measured start and end of node n on the aligned clock, INT64_MIN when no
 * trace measured it; own_start: where it starts when nothing constrains it. */
static inline bool ts__sim_measured(const ts_sim *s, uint32_t n) { return s->meas_start_ns[n] != INT64_MIN; }
static inline int64_t ts__sim_offset(const ts_sim *s, uint32_t n)
{
    return s->meas_offset_ns && s->rank[n] < s->n_offsets ? s->meas_offset_ns[s->rank[n]] : 0;
}
static inline int64_t ts__sim_meas_start(const ts_sim *s, uint32_t n)
{
    return ts__sim_measured(s, n) ? s->meas_start_ns[n] + ts__sim_offset(s, n) : INT64_MIN;
}
static inline int64_t ts__sim_meas_end(const ts_sim *s, uint32_t n)
{
    return ts__sim_measured(s, n) ? s->meas_start_ns[n] + ts__sim_offset(s, n) + s->meas_dur_ns[n] : INT64_MIN;
}
static inline int64_t ts__sim_own_start(const ts_sim *s, uint32_t n)
{
    return s->own_start_ns[n] + ts__sim_offset(s, n);
}

void ts__sim_init(ts_sim *s);
void ts__sim_free(ts_sim *s);
/* Append a node; returns its row, or TS_NONE32 (and sets s->oom). meas_* may
 * be INT64_MIN for a node no trace measured. */
uint32_t ts__sim_add_node(ts_sim *s, uint16_t rank, uint8_t kind, int64_t own_start_ns,
                          int64_t self_ns, int64_t meas_start_ns, int64_t meas_end_ns);
/* Append an edge; returns its row, or TS_NONE32 (and sets s->oom). */
uint32_t ts__sim_add_edge(ts_sim *s, uint32_t src, uint32_t dst, uint8_t flags, int64_t gap_ns);

/* Make room for n_nodes nodes and n_edges edges in all (bulk copies). */
TS_NODISCARD bool ts__sim_reserve(ts_sim *s, uint32_t n_nodes, uint32_t n_edges);

/* What ts__sim_borrow may take instead of copying: a graph's columns (which
 * must outlive the sim and stay unchanged). NULL = the sim owns that column. */
typedef struct ts_sim_lend {
    const int64_t  *meas_start_ns; /* also lent as own_start_ns; NULL = allocate both */
    const int64_t  *meas_dur_ns;
    uint32_t        n_offsets;     /* ranks whose clock offsets the caller then writes into
                                      ts_sim.meas_offset_ns (allocated here); 0 = none */
    const uint32_t *lane;
    const uint16_t *rank;
    const uint8_t  *kind;
    const int32_t  *iteration;
    const int64_t  *self_ns;       /* lend only when no what-if will edit self times */
    const uint32_t *esrc, *edst;
    const uint8_t  *eflags, *ekind;
    const int64_t  *egap_ns;       /* lend only when no what-if will edit gaps */
} ts_sim_lend;

/* On an empty sim: take n_nodes / n_edges rows of the lent columns instead
 * of copying them (at 16 M nodes a full copy was ~1 GB of fresh memory, and
 * first touches of fresh memory are what a big replay waits on). The lent
 * rows are read-only; appending copies the columns first. Sets n_nodes /
 * n_edges and allocates the other columns for exactly that many rows
 * (uninitialised); false when that fails (ts__sim_free still works). */
TS_NODISCARD bool ts__sim_borrow(ts_sim *s, uint32_t n_nodes, uint32_t n_edges, const ts_sim_lend *lend);

/* Evaluate every point in topological order of the point graph (Kahn's
 * algorithm over 2 points per node): O(V + E) time, O(V + E) scratch.
 * TS_EFORMAT when the graph has a cycle (err names a node on it). */
TS_NODISCARD int ts__sim_run(ts_sim *s, ts_error *err);

/* Fill gaps and self times from the measured points so that ts__sim_run
 * reproduces every measured time (the graph's TIME MODEL): each point's gap is
 * point - max(src points + 0) of the edges into it, the same for all of them;
 * self_ns is the duration unless an end-edge explains the end. Nodes with no
 * measurement keep what they have. Used for hand-built graphs and for the
 * nodes a what-if adds. */
void ts__sim_calibrate(ts_sim *s);

#endif
