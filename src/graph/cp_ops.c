/* cp_ops.c - what a critical path is made of, for outputs: its own time per
 * (rank, kind, name) with the gaps no op owns (ts_cp_op), its nodes
 * (ts_cp_node), and the graph's ranks and edge kinds behind it.
 *
 * Not for: finding the path (critical_path.c) or printing it (report/).
 * The op rows are built once when the path is made: O(segments log segments).
 */
#include "graph/critical_path.h"

#include <stdlib.h>
#include <string.h>

/* What the path waited for when it ran along an edge of kind k without an op. */
static const char *gap_name(ts_edge_kind k)
{
    switch (k) {
    case TS_EDGE_PROGRAM: return "host time between ops, in no node";
    case TS_EDGE_LAUNCH: return "launch call -> its GPU op starting";
    case TS_EDGE_STREAM: return "between GPU ops on a stream";
    case TS_EDGE_STREAM_WAIT: return "cross-stream event wait";
    case TS_EDGE_HOST_SYNC: return "GPU op end -> host sync returning";
    case TS_EDGE_FWDBWD: return "forward op -> its backward";
    case TS_EDGE_COLL_LAUNCH: return "collective call -> its kernel/worker";
    case TS_EDGE_WORKER: return "gloo worker result -> the op using it";
    case TS_EDGE_COLL_ENTER: return "collective arrival";
    case TS_EDGE_COLL_EXIT: return "collective transfer";
    case TS_EDGE_MPI_REQUEST: return "MPI request -> its wait";
    case TS_EDGE_DEP: return "execution-trace dependency";
    default: return ts__edge_kind_name(k);
    }
}

/* Sort keys: rank, ops before gaps, kind, name. A gap's kind is "gap" and
 * its edge names the edge kind; the comparison uses the kind numbers. */
typedef struct op_key { ts_cp_op op; uint8_t kind; uint8_t gap; } op_key;

static int cmp_key(const void *x, const void *y)
{
    const op_key *a = x, *b = y;
    if (a->op.rank != b->op.rank) return a->op.rank < b->op.rank ? -1 : 1;
    if (a->gap != b->gap) return a->gap < b->gap ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    return strcmp(a->op.name, b->op.name);
}
static int cmp_ns(const void *x, const void *y)
{
    const op_key *a = x, *b = y;
    return (a->op.total_ns < b->op.total_ns) - (a->op.total_ns > b->op.total_ns);
}

/* One row per segment with time: its owner op, or the gap's edge charged to
 * the rank it ran on; segments on barriers alone are left out. */
static uint32_t segment_rows(const ts_critical_path *cp, op_key *v)
{
    const ts_graph *g = cp->g;
    uint32_t n = 0;
    for (uint32_t i = 0; i < cp->n_segs; i++) {
        const ts_cp_segment *sg = &cp->segs[i];
        uint32_t nd = sg->owner;
        if (sg->dur_ns <= 0) continue;
        if (nd == TS_NONE32 && sg->edge != TS_NONE32) {   /* a gap no op owns: charge the rank it ran on */
            uint32_t at = g->nodes.rank[sg->node] != TS_GRAPH_NO_RANK ? sg->node : g->edges.src[sg->edge];
            if (g->nodes.rank[at] == TS_GRAPH_NO_RANK) continue;
            ts_edge_kind k = (ts_edge_kind)g->edges.kind[sg->edge];
            v[n++] = (op_key){{g->rank_number[g->nodes.rank[at]], "gap", gap_name(k), ts__edge_kind_name(k), 1,
                               sg->dur_ns}, (uint8_t)k, 1};
            continue;
        }
        if (nd == TS_NONE32 || g->nodes.rank[nd] == TS_GRAPH_NO_RANK) continue;
        ts_node_kind k = (ts_node_kind)g->nodes.kind[nd];
        v[n++] = (op_key){{g->rank_number[g->nodes.rank[nd]], ts__node_kind_name(k), ts__graph_node_name(g, nd), NULL,
                           1, sg->dur_ns}, (uint8_t)k, 0};
    }
    return n;
}

int ts__cp_ops_build(ts_critical_path *cp)
{
    size_t cap = (size_t)cp->n_segs + 1;
    op_key *v = ts__malloc(cap * sizeof *v);
    cp->ops = ts__malloc(cap * sizeof *cp->ops);
    if (!v || !cp->ops) {
        ts__free(v, cap * sizeof *v);
        ts__free(cp->ops, cap * sizeof *cp->ops);
        cp->ops = NULL;
        return TS_ENOMEM;
    }
    uint32_t n = segment_rows(cp, v), m = 0;
    qsort(v, n, sizeof *v, cmp_key);
    for (uint32_t i = 0; i < n; i++) {
        if (m && !cmp_key(&v[m - 1], &v[i])) { v[m - 1].op.total_ns += v[i].op.total_ns; v[m - 1].op.count++; }
        else v[m++] = v[i];
    }
    qsort(v, m, sizeof *v, cmp_ns);
    for (uint32_t i = 0; i < m; i++) cp->ops[i] = v[i].op;
    cp->n_ops = m;
    ts__free(v, cap * sizeof *v);
    return TS_OK;
}

uint32_t ts_critical_path_n_ops(const ts_critical_path *cp) { return cp->n_ops; }
const ts_cp_op *ts_critical_path_op(const ts_critical_path *cp, uint32_t i) { return i < cp->n_ops ? &cp->ops[i] : NULL; }
const ts_graph *ts_critical_path_graph(const ts_critical_path *cp) { return cp->g; }
int64_t ts_critical_path_step(const ts_critical_path *cp) { return cp->step; }
int64_t ts_critical_path_window_ns(const ts_critical_path *cp) { return cp->window_ns; }

int32_t ts_critical_path_waited_for(const ts_critical_path *cp, int64_t *wait_ns)
{
    int32_t best = -1;
    *wait_ns = 0;
    for (uint32_t r = 0; r < cp->g->n_ranks; r++)
        if (cp->wait_on_rank_ns[r] > *wait_ns) { *wait_ns = cp->wait_on_rank_ns[r]; best = (int32_t)r; }
    return best;
}

int ts_critical_path_node(const ts_critical_path *cp, uint32_t i, ts_cp_node *out)
{
    memset(out, 0, sizeof *out);
    if (i >= cp->n_nodes) return TS_EINVAL;
    const ts_graph *g = cp->g;
    uint32_t n = cp->nodes[i];
    out->barrier = g->nodes.rank[n] == TS_GRAPH_NO_RANK;
    out->rank = out->barrier ? -1 : g->rank_number[g->nodes.rank[n]];
    out->kind = ts__node_kind_name((ts_node_kind)g->nodes.kind[n]);
    out->name = ts__graph_node_name(g, n);
    out->start_ns = ts__graph_start(g, n);
    out->dur_ns = g->nodes.dur_ns[n];
    out->on_path_ns = cp->node_ns[i];
    return TS_OK;
}

uint32_t ts_graph_n_ranks(const ts_graph *g) { return g->n_ranks; }

int ts_graph_rank_info(const ts_graph *g, uint32_t i, ts_graph_rank *out)
{
    memset(out, 0, sizeof *out);
    if (i >= g->n_ranks) return TS_EINVAL;
    const ts_rank_align *a = &g->align[i];
    *out = (ts_graph_rank){g->rank_number[i], g->trace->ranks[g->rank_model[i]]->path, a->offset_ns, a->n_matched,
                           a->resid_med_ns, a->resid_max_ns, a->n_violations};
    return TS_OK;
}

uint32_t ts_graph_n_edge_kinds(void) { return TS_EDGE_KIND_COUNT; }
const char *ts_graph_edge_kind_name(uint32_t k)
{
    return k < TS_EDGE_KIND_COUNT ? ts__edge_kind_name((ts_edge_kind)k) : NULL;
}

uint32_t ts_graph_n_edges_of_kind(const ts_graph *g, uint32_t k)
{
    uint32_t n = 0;
    for (uint32_t e = 0; e < g->edges.n; e++) n += g->edges.kind[e] == k;
    return n;
}
