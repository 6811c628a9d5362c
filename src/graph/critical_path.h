/* critical_path.h - the result of a critical-path search (internal layout,
 * read by the CLI and the Chrome-trace export).
 *
 * The path is a chain of points (node starts and ends) from the iteration's
 * first binding point to its last end; every stretch between two consecutive
 * points is one segment, attributed to one ts_cp_category, so the categories
 * sum to length_ns exactly. Times are aligned (graph clock).
 */
#ifndef TS_GRAPH_CRITICAL_PATH_H
#define TS_GRAPH_CRITICAL_PATH_H

#include "graph/graph.h"

typedef struct ts_cp_segment {
    uint32_t node;          /* the node whose point ends this segment */
    uint32_t edge;          /* the edge it came through, TS_NONE32 = the node's own execution */
    int64_t  start_ns;      /* aligned */
    int64_t  dur_ns;
    uint32_t owner;         /* the op whose own time this is (its execution, or a parent's time
                               before its first, between its, or after its last child),
                               TS_NONE32 = a gap */
    uint8_t  category;      /* ts_cp_category of its time (before waits are carved out) */
} ts_cp_segment;

struct ts_critical_path {
    const ts_graph *g;          /* borrowed */
    int64_t   step;             /* the iteration's step number, -1 = whole trace */
    int64_t   start_ns, end_ns; /* aligned ends of the path */
    int64_t   window_ns;        /* aligned span of the iteration over all ranks (last end - first start) */
    int64_t   cat_ns[TS_CP_COUNT];
    int64_t  *wait_on_rank_ns;  /* per graph rank: time others waited for it on the path */
    ts_cp_segment *segs;        /* in time order */
    uint32_t  n_segs, cap_segs;
    uint32_t *nodes;            /* distinct path nodes in the order the path first reaches them
                                   (barriers and parents owning path time included) */
    uint32_t  n_nodes;
    int64_t  *node_ns;          /* per path node (parallel to nodes): its own time on the path (the
                                   segments it owns) */
    bool      cpu_only;         /* no GPU lane: CPU ops' own time is compute */
    char      warnings[4][256]; /* what was approximated ("" = unused), e.g. an iteration cut off */
    uint32_t  n_warnings;
    ts_cp_op *ops;              /* own time per (rank, kind, name) and gaps, largest first (cp_ops.c) */
    uint32_t  n_ops;
};

/* Fill cp->ops from cp->segs; TS_ENOMEM on failure (cp->ops NULL). */
TS_NODISCARD int ts__cp_ops_build(ts_critical_path *cp);

#endif
