/* graph.h - the dependency graph of a training job (internal layout).
 *
 * One ts_graph holds every rank's local graph plus the cross-rank part (the
 * "global graph"): nodes of all ranks live in one set of column arrays, rank r's
 * nodes are the contiguous rows [rank_first_node[r], rank_first_node[r+1]), and
 * synthetic collective "barrier" nodes come after all ranks' nodes.
 *
 * TIME MODEL (what replay must follow to reproduce the trace exactly).
 * Every node has two points, its start and its end. An edge constrains one
 * point of its dst from one point of its src (flags TS_EDGE_FROM_END /
 * TS_EDGE_TO_END). Replay computes, in topological order:
 *     start(n) = max( own_start_if_no_start_edges,
 *                     max over start-edges e of point(e.src) + e.gap_ns )
 *     end(n)   = max( start(n) + self_ns(n),
 *                     max over end-edges e of point(e.src) + e.gap_ns )
 * gap_ns is dPRO's measured gap: for every edge into one point it is the same
 * number, point - max(src points into that point), so each point is explained
 * by its binding (latest) predecessor and an unmodified replay reproduces every
 * measured time. A node with no start-edges is a source: it starts at its own
 * aligned start_ns. self_ns (ts__graph_self: dur_ns, or 0 where nodes.waits is
 * set) is dur_ns when no end-edge was binding, 0 when the
 * end was explained by an end-edge (a parent waiting for its last child, a sync
 * call waiting for the kernel, a collective member waiting for the barrier).
 * End-edges count as binding when max(their src points) >= the node's start;
 * when they are not, their gap_ns is 0 (they only bound the end from below).
 * Start gaps may be negative (a kernel stamped before its launch call on a
 * skewed clock); replay must keep the sign to reproduce the trace.
 *
 * CLOCKS: start_ns/dur_ns are on the node's rank clock as in the model;
 * aligned time = start_ns + rank_offset_ns[rank]. Barrier nodes (rank =
 * TS_GRAPH_NO_RANK) are already in aligned time. Every gap_ns is computed on
 * aligned times.
 *
 * EDGES are stored sorted by src (out-edge CSR: out_first[n], out_first[n+1])
 * with a second index sorted by dst (in_first / in_edge). Both are immutable
 * once ts_graph_create() (ts__graph_finish) returns; so is topo, the order of
 * start/end points replay and the critical path walk. All ids are uint32 rows;
 * TS_NONE32 = none.
 *
 * Writers: only graph/ (build, align, replicate). Readers (replay, critical
 * path, export) treat a built graph as read-only. Fields are only ever added.
 */
#ifndef TS_GRAPH_GRAPH_H
#define TS_GRAPH_GRAPH_H

#include "trace/model.h"
#include "trainscope/graph.h"

#define TS_GRAPH_NO_RANK UINT16_MAX  /* node.rank of synthetic barrier nodes */

/* What a node is; it decides how critical-path time is attributed and which
 * resource replay runs it on. */
typedef enum ts_node_kind {
    TS_NODE_CPU_OP = 0,     /* a CPU op (top-level per thread, or leaf on request) */
    TS_NODE_LAUNCH,         /* runtime/driver call that launches GPU work (cudaLaunchKernel, cudaMemcpyAsync, ...) */
    TS_NODE_RUNTIME,        /* any other runtime/driver call (cudaMalloc, cudaEventRecord, ...) */
    TS_NODE_HOST_SYNC,      /* host waits for the GPU: cudaDeviceSynchronize, cudaStreamSynchronize,
                               cudaEventSynchronize (as named by Kineto's cuda_sync "Context Sync",
                               "Stream Sync", "Event Sync"), synchronous cudaMemcpy/cudaMemset */
    TS_NODE_KERNEL,         /* a compute kernel */
    TS_NODE_MEMCPY,         /* gpu_memcpy */
    TS_NODE_MEMSET,         /* gpu_memset */
    TS_NODE_COMM_KERNEL,    /* a communication kernel (nccl*) */
    TS_NODE_COMM_CPU,       /* a collective / p2p op on a CPU thread (c10d::allreduce_,
                               record_param_comms, gloo:all_reduce on a worker, ...) */
    TS_NODE_BARRIER,        /* synthetic: one collective instance across ranks (aligned time) */
    TS_NODE_KIND_COUNT
} ts_node_kind;
const char *ts__node_kind_name(ts_node_kind k);

typedef enum ts_edge_kind {
    TS_EDGE_PROGRAM = 0,    /* program order on one CPU thread: prev.end -> next.start */
    TS_EDGE_NEST,           /* parent.start -> child.start (TO_END clear) or child.end -> parent.end */
    TS_EDGE_LAUNCH,         /* launch call.start -> GPU op.start, matched by correlation id */
    TS_EDGE_STREAM,         /* order on one GPU stream: prev.end -> next.start */
    TS_EDGE_STREAM_WAIT,    /* cross-stream: last op before cudaEventRecord on stream A .end ->
                               first op after cudaStreamWaitEvent on stream B .start */
    TS_EDGE_HOST_SYNC,      /* GPU op.end -> sync call.end */
    TS_EDGE_FWDBWD,         /* forward op.end -> backward op.start (fwdbwd flow) */
    TS_EDGE_COLL_LAUNCH,    /* collective CPU op.start -> its comm kernel / worker op .start */
    TS_EDGE_WORKER,         /* gloo worker op.end -> the first op on the calling thread that starts
                               after it (where the result is consumed) .start */
    TS_EDGE_COLL_ENTER,     /* collective member.start -> barrier.start (cross-rank) */
    TS_EDGE_COLL_EXIT,      /* barrier.end -> member.end (or its MPI completion's end), gap = that
                               rank's transfer time */
    TS_EDGE_MPI_REQUEST,    /* nonblocking MPI call.end -> the MPI_Wait/MPI_Test completing its request .end */
    TS_EDGE_DEP,            /* execution-trace dependency (chakra_dep flow): producer.end -> consumer.start */
    TS_EDGE_REPLICA,        /* --fold-replicas: the representative's collective member.start -> the
                               folded replica's same member.start, gap = the replica's measured lag */
    TS_EDGE_KIND_COUNT
} ts_edge_kind;
const char *ts__edge_kind_name(ts_edge_kind k);

enum {
    TS_EDGE_FROM_END = 1,   /* edge leaves src's end point (else its start) */
    TS_EDGE_TO_END   = 2,   /* edge constrains dst's end point (else its start) */
};

/* A lane is what executes nodes one after another: a CPU thread or a GPU stream
 * of one rank (replay's resources). */
typedef struct ts_lane {
    uint16_t rank;          /* rank index in the trace (0..n_ranks-1), TS_GRAPH_NO_RANK = barrier lane */
    uint8_t  on_gpu;        /* 1 = GPU stream, 0 = CPU thread */
    uint32_t track;         /* track row in that rank's model, TS_NONE32 = synthetic */
} ts_lane;

typedef struct ts_graph_nodes {
    uint32_t  n, cap;
    uint16_t *rank;         /* rank index, TS_GRAPH_NO_RANK = barrier */
    uint8_t  *kind;         /* ts_node_kind */
    uint32_t *lane;         /* row in lanes */
    uint32_t *slice;        /* slice row in the rank's model, TS_NONE32 = synthetic */
    int64_t  *start_ns;     /* measured start on the rank's clock (barrier: aligned) */
    int64_t  *dur_ns;       /* measured duration, >= 0 */
    uint8_t  *waits;        /* 1 = its end is explained by an end-edge, so it needs no time
                               itself (self time 0, see TIME MODEL); 0 = self time is dur_ns.
                               A byte, not a self-time column: 112 MB less at 16 M nodes */
    uint32_t *coll;         /* collective instance row, TS_NONE32 = not a collective member */
    int32_t  *iteration;    /* index into the rank's iterations, -1 = outside every iteration */
} ts_graph_nodes;

typedef struct ts_graph_edges {
    uint32_t  n, cap;
    uint32_t *src;          /* node row */
    uint32_t *dst;          /* node row */
    uint8_t  *kind;         /* ts_edge_kind */
    uint8_t  *flags;        /* TS_EDGE_FROM_END | TS_EDGE_TO_END */
    int64_t  *gap_ns;       /* dPRO gap of dst's point (same for all edges into that point) */
} ts_graph_edges;

/* One collective (or p2p pair) instance matched across ranks. */
typedef struct ts_coll {
    uint32_t name;          /* graph string id: "allreduce", "allgather", ...; "p2p A>B" for a send
                               from rank A matched with rank B's receive */
    uint32_t pg;            /* graph string id of the process group, 0 = unknown/default */
    int64_t  seq;           /* sequence number in its process group, -1 = matched by order */
    int64_t  bytes;         /* message size in bytes, -1 = unknown */
    uint32_t first_member;  /* members are coll_members[first_member .. +n_members): node rows */
    uint32_t n_members;
    uint32_t barrier;       /* barrier node row, TS_NONE32 = single member (no cross-rank part) */
    uint16_t last_rank;     /* rank whose arrival completed the instance (the straggler) */
    int64_t  wait_ns;       /* aligned last arrival - first arrival */
    int64_t  ordinal;       /* its seq, or the k of "k-th op of this key on each rank" */
} ts_coll;

typedef struct ts_rank_align {
    int64_t  offset_ns;     /* aligned = local + offset_ns; rank 0 (reference) has 0 */
    uint32_t n_matched;     /* collective instances this rank's offset was estimated from */
    int64_t  resid_med_ns;  /* median |end mismatch| after alignment */
    int64_t  resid_max_ns;  /* max |end mismatch| after alignment */
    uint32_t n_violations;  /* instances where the rank still leaves before the last enters */
} ts_rank_align;

struct ts_graph {
    const ts_job *trace;      /* borrowed; the graph must not outlive it */
    uint32_t        n_ranks;
    uint32_t       *rank_first_node;   /* n_ranks + 1 entries; barrier nodes follow */
    uint32_t       *rank_model;        /* per graph rank: index of the trace rank whose model holds
                                          its slices (identity, except in replicated graphs) */
    int32_t        *rank_number;       /* per graph rank: the job's rank number, -1 = unknown */
    ts_rank_align  *align;      /* per rank */

    ts_lane  *lanes;
    uint32_t  n_lanes, cap_lanes;

    ts_graph_nodes nodes;
    ts_graph_edges edges;       /* sorted by src after build */
    uint32_t *out_first;        /* n_nodes + 1: out-edges of n are edges [out_first[n], out_first[n+1]) */
    uint32_t *in_first;         /* n_nodes + 1 */
    uint32_t *in_edge;          /* edge rows sorted by dst: in-edges of n are in_edge[in_first[n] ..) */
    uint32_t *topo;             /* 2 * n_nodes points in topological order; point 2n = start of
                                   node n, 2n+1 = its end (start -> end is implicit) */

    ts_coll  *colls;
    uint32_t  n_colls, cap_colls;
    uint32_t *coll_members;     /* node rows, grouped per instance */
    uint32_t  n_coll_members, cap_coll_members;

    ts_strpool strings;         /* collective names and process groups */

    char    **warnings;         /* owned lines saying what was approximated */
    uint32_t  n_warnings, cap_warnings;
    bool      oom;
    ts_graph_options opt;

    /* cudaStreamWaitEvent calls over all ranks (graph/local.c): how many there
     * are, how many became a TS_EDGE_STREAM_WAIT, how many needed none (the
     * recorded stream had no earlier work or the waiting one no later work);
     * the rest are not followed and a warning says why. */
    uint32_t  n_stream_waits, n_stream_waits_followed, n_stream_waits_idle;

    ts_map64  mpi_done;         /* nonblocking MPI call node -> the MPI_Wait/MPI_Test node completing
                                   its request (graph/local.c); empty for other traces */
    uint32_t  n_mpi_requests_followed;   /* entries put into mpi_done */

    /* --fold-replicas (graph/stream.c): per graph rank, the graph rank it was
     * folded into (itself for a representative or a rank kept whole); NULL =
     * nothing folded. A folded rank keeps only its collective members, each
     * following its representative's by a TS_EDGE_REPLICA edge. */
    uint32_t *replica_of;
    uint32_t  n_folded;        /* ranks folded into another */
};

/* The node whose end a collective member's completion binds: the member
 * itself, or the MPI_Wait/MPI_Test that completes a nonblocking member. */
static inline uint32_t ts__graph_member_exit(const ts_graph *g, uint32_t m)
{
    uint64_t v;
    return g->mpi_done.n && ts__map64_get(&g->mpi_done, m, &v) ? (uint32_t)v : m;
}

/* Aligned time of a node's start/end. */
static inline int64_t ts__graph_start(const ts_graph *g, uint32_t n)
{
    uint16_t r = g->nodes.rank[n];
    return g->nodes.start_ns[n] + (r == TS_GRAPH_NO_RANK ? 0 : g->align[r].offset_ns);
}
static inline int64_t ts__graph_end(const ts_graph *g, uint32_t n)
{
    return ts__graph_start(g, n) + g->nodes.dur_ns[n];
}
/* Time node n needs by itself (TIME MODEL). */
static inline int64_t ts__graph_self(const ts_graph *g, uint32_t n)
{
    return g->nodes.waits[n] ? 0 : g->nodes.dur_ns[n];
}
/* The model rank of a node (NULL for barriers). */
static inline const ts_rank *ts__graph_rank(const ts_graph *g, uint32_t n)
{
    uint16_t r = g->nodes.rank[n];
    return r == TS_GRAPH_NO_RANK ? NULL : g->trace->ranks[g->rank_model[r]];
}
/* Name of a node: its slice name, or the collective name for a barrier. */
const char *ts__graph_node_name(const ts_graph *g, uint32_t n);

/* Per slice of graph rank ri's model: the node made of it, TS_NONE32 = none
 * (an op nested in a node, a leaf op's parent). O(slices); NULL = out of
 * memory. Free with ts__graph_slice_nodes_free. */
uint32_t *ts__graph_slice_nodes(const ts_graph *g, uint32_t ri);
void ts__graph_slice_nodes_free(const ts_graph *g, uint32_t ri, uint32_t *map);
/* The nearest node enclosing node n on its lane (its parent op's node, or
 * the parent's parent ...), TS_NONE32 = none; no memory, O(depth x log of
 * the lane's rows): a lane's rows run in slice (preorder) order. */
uint32_t ts__graph_parent_node(const ts_graph *g, uint32_t n);
/* The nearest node enclosing `slice` on its track (its parent op, or the
 * parent's parent ...), TS_NONE32 = none. O(nesting depth). */
uint32_t ts__graph_enclosing_node(const ts_rank *r, const uint32_t *slice_node, uint32_t slice);

void ts__graph_warn(ts_graph *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Synthesize an n-rank job from a single-rank graph by replicating rank 0's
 * local graph with multiplicative jitter on every duration (uniform in
 * [1 - jitter, 1 + jitter], deterministic in seed), then matching, aligning and
 * indexing as a real job. Used by bench/replay. The result borrows g->trace. */
TS_NODISCARD int ts__graph_replicate(const ts_graph *g, uint32_t n_ranks, double jitter,
                                     uint64_t seed, ts_graph **out, ts_error *err);

#endif
