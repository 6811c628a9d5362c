/* graph.h - dependency graphs of a training job, clock alignment, critical path.
 *
 * ts_graph_create() builds every rank's local dependency graph (CPU ops,
 * runtime calls, kernels, copies, collectives and the edges between them),
 * matches collectives across ranks, estimates per-rank clock offsets from them
 * and joins everything into one global graph. ts_critical_path_create() finds
 * the longest dependency path of one iteration through it.
 *
 * Ownership: a graph borrows its trace (destroy the graph first); a critical
 * path borrows its graph. `*_create` results are released with `*_destroy`.
 * Times are int64 nanoseconds.
 */
#ifndef TRAINSCOPE_GRAPH_H
#define TRAINSCOPE_GRAPH_H

#include "trainscope/common.h"
#include "trainscope/ingest.h"
#include "trainscope/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_graph ts_graph;
typedef struct ts_critical_path ts_critical_path;

/* Options; zero-initialise, set size = sizeof(ts_graph_options). Grows at the end. */
typedef struct ts_graph_options {
    size_t size;          /* sizeof(ts_graph_options) */
    int    leaf_ops;      /* 1 = CPU nodes are leaf ops; 0 (default) = top-level ops per thread */
    int    no_align;      /* 1 = keep every rank's clock as is (offsets 0) */
    int    fold_replicas; /* ts_graph_load only: 1 = fold ranks that replicate another (same ops,
                             edges and collectives; span and busy time within fold_tolerance) */
    double fold_tolerance; /* relative, e.g. 0.1 = 10%; <= 0 = the default 0.1 */
} ts_graph_options;

/* Build the global graph of trace t. opt may be NULL (defaults). On failure
 * *out is NULL and err says why (naming rank and op). */
TS_API TS_NODISCARD int ts_graph_create(const ts_job *t, const ts_graph_options *opt,
                                        ts_graph **out, ts_error *err);
TS_API void     ts_graph_destroy(ts_graph *g);

/* From files to a graph in bounded memory: each rank file is read (lo's
 * threads read up to that many at once), its local graph built, and the
 * rank kept only as a summary of the slices the graph names (no instants,
 * counters or flows; the other slices dropped) before the next one is read,
 * so the peak grows with the graph, not with the input. Same answers as
 * ts_job_load + ts_graph_create (tested). *trace is that summary: read it
 * through the graph only, never hand it to stats or breakdown; destroy the
 * graph, then the trace. Files are read in name order (rank files named
 * `rank-N` in rank order); the graph's ranks are in rank-number order
 * whatever the names. Errors name the file (two files claiming one rank:
 * both).
 * With opt->fold_replicas, a rank that replicates an earlier kept rank keeps
 * only its collective members, each following the representative's (so the
 * collectives keep every rank's measured arrival spread);
 * ts_graph_replica_of says which. */
TS_API TS_NODISCARD int ts_graph_load(const char *const *paths, uint32_t n_paths, const ts_load_opts *lo,
                                      const ts_graph_options *opt, ts_job **trace, ts_graph **out,
                                      ts_error *err);
TS_API uint32_t ts_graph_n_ranks(const ts_graph *g);
TS_API int32_t  ts_graph_rank_number(const ts_graph *g, uint32_t rank_idx);   /* -1 = unknown */
/* The rank index rank_idx was folded into, rank_idx itself when kept whole. */
TS_API uint32_t ts_graph_replica_of(const ts_graph *g, uint32_t rank_idx);
/* A folded graph's representatives alone (each replica group's kept rank,
 * read again from its file, opt's fold_replicas ignored): a job of as many
 * ranks as groups, for pricing what touches every replica alike. Release
 * like ts_graph_load's. TS_EINVAL when no representative names a file. */
TS_API TS_NODISCARD int ts_graph_load_representatives(const ts_graph *g, const ts_load_opts *lo,
                                                      const ts_graph_options *opt, ts_job **trace,
                                                      ts_graph **out, ts_error *err);
TS_API uint32_t ts_graph_n_nodes(const ts_graph *g);
TS_API uint32_t ts_graph_n_edges(const ts_graph *g);
TS_API uint32_t ts_graph_n_collectives(const ts_graph *g);   /* matched instances */
TS_API uint32_t ts_graph_n_warnings(const ts_graph *g);
TS_API const char *ts_graph_warning(const ts_graph *g, uint32_t i);
/* Clock offset of rank index i (aligned = local + offset) and its residual. */
TS_API int64_t  ts_graph_rank_offset_ns(const ts_graph *g, uint32_t rank_idx);
TS_API int64_t  ts_graph_rank_residual_ns(const ts_graph *g, uint32_t rank_idx);

/* Time attribution of a critical path. */
typedef enum ts_cp_category {
    TS_CP_COMPUTE = 0,     /* GPU compute kernels */
    TS_CP_COMMUNICATION,   /* communication kernels and collective transfer time */
    TS_CP_MEMORY,          /* memcpy / memset */
    TS_CP_LAUNCH,          /* kernel launch calls and launch-to-start latency */
    TS_CP_CPU,             /* CPU ops and host time between them */
    TS_CP_WAIT_RANK,       /* waiting for another rank to reach a collective */
    TS_CP_COUNT
} ts_cp_category;
TS_API const char *ts_cp_category_name(ts_cp_category c);

/* The critical path of iteration `iteration` (the N of ProfilerStep#N; -1 =
 * the last complete iteration: the last step every rank that marks
 * iterations has, or the whole trace when none marks any;
 * TS_CP_WHOLE_TRACE = the whole trace, marks or not). */
#define TS_CP_WHOLE_TRACE (-2)
TS_API TS_NODISCARD int ts_critical_path_create(const ts_graph *g, int64_t iteration,
                                                ts_critical_path **out, ts_error *err);
TS_API void    ts_critical_path_destroy(ts_critical_path *cp);
TS_API int64_t ts_critical_path_length_ns(const ts_critical_path *cp);
TS_API int64_t ts_critical_path_category_ns(const ts_critical_path *cp, ts_cp_category c);
TS_API uint32_t ts_critical_path_n_nodes(const ts_critical_path *cp);
/* Time other ranks waited on the path for rank index i (it arrived last). */
TS_API int64_t ts_critical_path_wait_on_rank_ns(const ts_critical_path *cp, uint32_t rank_idx);
TS_API uint32_t ts_critical_path_n_warnings(const ts_critical_path *cp);
TS_API const char *ts_critical_path_warning(const ts_critical_path *cp, uint32_t i);   /* NULL past the end */


/* ---- reading a graph and a critical path (for outputs) ---- */
/* One rank of the graph and its clock alignment. */
typedef struct ts_graph_rank {
    int32_t     rank;             /* the job's rank number, -1 = unknown */
    const char *file;             /* the file it was read from (borrowed from the trace) */
    int64_t     offset_ns;        /* aligned = local + offset_ns */
    uint32_t    n_matched;        /* collective instances the offset was estimated from */
    int64_t     resid_median_ns;  /* median |end mismatch| after alignment */
    int64_t     resid_max_ns;     /* max |end mismatch| after alignment */
    uint32_t    n_violations;     /* instances where it still leaves before the last enters */
} ts_graph_rank;
/* Rank index i (0 .. ts_graph_n_ranks - 1); TS_EINVAL past the end (*out zeroed). */
TS_API int ts_graph_rank_info(const ts_graph *g, uint32_t i, ts_graph_rank *out);
/* Edge kinds: how many there are, their names ("program", "launch", ...), and
 * how many edges of kind k the graph has (O(edges)). */
TS_API uint32_t    ts_graph_n_edge_kinds(void);
TS_API const char *ts_graph_edge_kind_name(uint32_t k);
TS_API uint32_t    ts_graph_n_edges_of_kind(const ts_graph *g, uint32_t k);

TS_API const ts_graph *ts_critical_path_graph(const ts_critical_path *cp);   /* borrowed */
TS_API int64_t ts_critical_path_step(const ts_critical_path *cp);       /* ProfilerStep N, -1 = whole trace */
TS_API int64_t ts_critical_path_window_ns(const ts_critical_path *cp);  /* aligned span of the iteration, all ranks */
/* The rank index others waited for longest on the path, -1 = none; *wait_ns its time. */
TS_API int32_t ts_critical_path_waited_for(const ts_critical_path *cp, int64_t *wait_ns);

/* Node i of the path (0 .. ts_critical_path_n_nodes - 1), in the order the path first reaches it. */
typedef struct ts_cp_node {
    bool        barrier;     /* a synthetic collective barrier (no rank; outputs leave it out) */
    int32_t     rank;        /* the job's rank number (barrier: -1) */
    const char *kind;        /* "cpu_op", "kernel", "launch", ... */
    const char *name;        /* borrowed from the trace or graph */
    int64_t     start_ns;    /* aligned clock */
    int64_t     dur_ns;
    int64_t     on_path_ns;  /* its own time on the path */
} ts_cp_node;
TS_API int ts_critical_path_node(const ts_critical_path *cp, uint32_t i, ts_cp_node *out);   /* TS_EINVAL past the end */

/* Own time on the path per (rank, kind, name), largest first, count = path
 * segments; the path's time in edge gaps no op owns (untraced host time
 * between ops, a kernel queued after its launch, a transfer) is listed too,
 * per (rank, edge kind), kind "gap", so the rows sum to the path's length. */
typedef struct ts_cp_op {
    int32_t     rank;       /* the job's rank number */
    const char *kind;       /* node kind, or "gap" */
    const char *name;       /* op name, or what the path waited for in the gap */
    const char *edge;       /* gaps: the edge kind ("program", "launch", ...); NULL for ops */
    uint32_t    count;      /* path segments */
    int64_t     total_ns;
} ts_cp_op;
TS_API uint32_t        ts_critical_path_n_ops(const ts_critical_path *cp);
TS_API const ts_cp_op *ts_critical_path_op(const ts_critical_path *cp, uint32_t i);   /* NULL past the end */

#ifdef __cplusplus
}
#endif
#endif
