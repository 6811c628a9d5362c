/* critical_path.c - the longest dependency path of one iteration through the
 * global graph, and where its time went.
 *
 * Longest path by dynamic programming over the graph's topological order of
 * points: t(p) = max over in-arcs (t(src point) + weight), weights being the
 * edges' gaps and the nodes' self times; sources sit at their measured time.
 * Because the gaps are dPRO's measured gaps, t(p) equals the measured time and
 * the arg-max arc of every point is its binding dependency; following arg-max
 * arcs back from the iteration's last end gives the path. O(points + edges).
 *
 * Attribution: a node's own time (its execution, and a parent's time before,
 * between and after its children) goes to its kind's category, CPU ops to
 * compute on jobs without GPU work; any other edge's gap to the edge kind's
 * category (launch latency, untraced host gaps, transfer time).
 * When the path crosses a collective from rank A to the straggler S, the part
 * of the path between A's arrival and the barrier is time A spent waiting:
 * it is charged to TS_CP_WAIT_RANK and to S in wait_on_rank_ns.
 */
#include "graph/critical_path.h"

#include <stdio.h>
#include <stdlib.h>

#define ARC_SELF   (UINT32_MAX - 1)   /* the node's own start -> end */
#define ARC_SOURCE UINT32_MAX         /* no in-arc: the point sits at its measured time */

const char *ts_cp_category_name(ts_cp_category c)
{
    static const char *const names[TS_CP_COUNT] = {
        "compute", "communication", "memory", "launch", "cpu", "wait_on_rank",
    };
    return (unsigned)c < TS_CP_COUNT ? names[c] : "?";
}

/* On a job without GPU work (cpu_only) the CPU ops are the model's compute. */
static ts_cp_category node_category(ts_node_kind k, bool cpu_only)
{
    switch (k) {
    case TS_NODE_CPU_OP: return cpu_only ? TS_CP_COMPUTE : TS_CP_CPU;
    case TS_NODE_KERNEL: return TS_CP_COMPUTE;
    case TS_NODE_COMM_KERNEL: case TS_NODE_COMM_CPU: case TS_NODE_BARRIER: return TS_CP_COMMUNICATION;
    case TS_NODE_MEMCPY: case TS_NODE_MEMSET: return TS_CP_MEMORY;
    case TS_NODE_LAUNCH: return TS_CP_LAUNCH;
    default: return TS_CP_CPU;
    }
}

static ts_cp_category edge_category(ts_edge_kind k)
{
    switch (k) {
    case TS_EDGE_LAUNCH: case TS_EDGE_STREAM: case TS_EDGE_STREAM_WAIT: return TS_CP_LAUNCH;
    case TS_EDGE_COLL_ENTER: case TS_EDGE_COLL_EXIT: case TS_EDGE_MPI_REQUEST: return TS_CP_COMMUNICATION;
    default: return TS_CP_CPU;
    }
}

static inline uint32_t edge_src_pt(const ts_graph *g, uint32_t e)
{
    return g->edges.src[e] * 2 + ((g->edges.flags[e] & TS_EDGE_FROM_END) ? 1 : 0);
}

static bool in_target(const ts_graph *g, const int32_t *idx, uint32_t n);

/* Longest-path values and arg-max arcs of every point of the iteration's
 * nodes; points outside it sit at their measured time (the path never
 * continues through them, so their own predecessors do not matter). */
static void longest_paths(const ts_graph *g, const int32_t *idx, int64_t *t, uint32_t *arc)
{
    uint32_t np = g->nodes.n * 2;
    for (uint32_t i = 0; i < np; i++) {
        uint32_t p = g->topo[i], n = p / 2;
        bool to_end = p & 1;
        if (!in_target(g, idx, n)) {
            t[p] = to_end ? ts__graph_end(g, n) : ts__graph_start(g, n);
            arc[p] = ARC_SOURCE;
            continue;
        }
        int64_t best = INT64_MIN;
        uint32_t best_arc = ARC_SOURCE;
        if (to_end) { best = t[2 * n] + ts__graph_self(g, n); best_arc = ARC_SELF; }
        for (uint32_t k = g->in_first[n]; k < g->in_first[n + 1]; k++) {
            uint32_t e = g->in_edge[k];
            if (((g->edges.flags[e] & TS_EDGE_TO_END) != 0) != to_end) continue;
            int64_t v = t[edge_src_pt(g, e)] + g->edges.gap_ns[e];
            if (v > best) { best = v; best_arc = e; }
        }
        if (best_arc == ARC_SOURCE) best = to_end ? ts__graph_end(g, n) : ts__graph_start(g, n);
        t[p] = best;
        arc[p] = best_arc;
    }
}

static bool cp_warn_room(const ts_critical_path *cp) { return cp->n_warnings < sizeof cp->warnings / sizeof cp->warnings[0]; }

/* Per graph rank, the iteration index holding step `step` (-1 = none). With
 * step < 0, picks the last step that every rank with iterations has. */
static int find_iteration(const ts_graph *g, ts_critical_path *cp, int64_t *step, int32_t *idx, ts_error *err)
{
    bool any = false;
    for (uint32_t r = 0; r < g->n_ranks; r++) any |= g->trace->ranks[g->rank_model[r]]->n_iterations > 0;
    if (!any || *step == TS_CP_WHOLE_TRACE) {
        if (*step >= 0) return ts__error(err, TS_EINVAL, "no iteration %lld: the trace has no ProfilerStep#N marks",
                                         (long long)*step);
        for (uint32_t r = 0; r < g->n_ranks; r++) idx[r] = -1;
        *step = -1;
        return TS_OK;
    }
    if (*step < 0) {   /* the last complete one (trace/model.h, THE ANALYSIS WINDOW) */
        ts_window_sel sel = {0};
        if (ts__window_sel_init(&sel, g->trace)) return ts__error(err, TS_ENOMEM, "out of memory");
        bool none = sel.n_complete == 0;
        if (!none) *step = sel.complete[sel.n_complete - 1];
        ts__window_sel_free(&sel);
        if (none)
            return ts__error(err, TS_ENODATA, "no iteration (ProfilerStep#N) is marked on every rank that marks "
                             "iterations; --window all follows the whole trace");
    }
    for (uint32_t r = 0; r < g->n_ranks; r++) {
        const ts_rank *m = g->trace->ranks[g->rank_model[r]];
        idx[r] = -1;
        for (uint32_t i = 0; i < m->n_iterations; i++)
            if (m->iterations[i].step == *step) idx[r] = (int32_t)i;
        if (m->n_iterations == 0 && cp_warn_room(cp))
            snprintf(cp->warnings[cp->n_warnings++], sizeof cp->warnings[0],
                     "rank %d has no iterations: all of its ops take part in iteration %lld", g->rank_number[r],
                     (long long)*step);
        if (idx[r] < 0 && m->n_iterations)
            return ts__error(err, TS_EINVAL, "rank %d (%s) has no iteration %lld (it has %lld..%lld)",
                             g->rank_number[r], m->path ? m->path : "?", (long long)*step,
                             (long long)m->iterations[0].step, (long long)m->iterations[m->n_iterations - 1].step);
    }
    return TS_OK;
}

static bool in_target(const ts_graph *g, const int32_t *idx, uint32_t n)
{
    uint16_t r = g->nodes.rank[n];
    if (r == TS_GRAPH_NO_RANK) {   /* a barrier belongs to the iteration of its members */
        const ts_coll *c = &g->colls[g->nodes.coll[n]];
        uint32_t m = g->coll_members[c->first_member];
        return in_target(g, idx, m);
    }
    return idx[r] < 0 || g->nodes.iteration[n] == idx[r];
}

typedef struct walk {
    ts_critical_path *cp;
    bool cpu_only;            /* no GPU lane in the graph */
    int64_t floor_ns;     /* waits: path time above it is another rank's wait, INT64_MAX = none */
    uint16_t wait_rank;
    uint32_t last_ranked;  /* the latest (in path order: earliest visited) node with a real rank */
} walk;

/* Charge [a, b) of category c, carving out the part above the wait floor. */
static void charge(walk *w, int64_t a, int64_t b, ts_cp_category c)
{
    if (b <= a) { w->cp->cat_ns[c] += b - a; return; }
    if (w->floor_ns < b) {
        int64_t from = a > w->floor_ns ? a : w->floor_ns;
        w->cp->cat_ns[TS_CP_WAIT_RANK] += b - from;
        w->cp->wait_on_rank_ns[w->wait_rank] += b - from;
        b = from;
    }
    if (b > a) w->cp->cat_ns[c] += b - a;
    if (w->floor_ns >= a) w->floor_ns = INT64_MAX;   /* the wait is fully accounted for */
}

static int push_seg(ts_critical_path *cp, ts_cp_segment s)
{
    if (ts__grow((void **)&cp->segs, &cp->cap_segs, sizeof *cp->segs, cp->n_segs + 1)) return TS_ENOMEM;
    cp->segs[cp->n_segs++] = s;
    return TS_OK;
}

/* The node whose own time the arc a into point p is: the node itself for its
 * execution; the parent for a nest edge (its time before its first child or
 * after its last); for program order between two ops nested in the same node,
 * that node (its time between its children). TS_NONE32 = a gap no op owns. */
static uint32_t arc_owner(walk *w, uint32_t a, uint32_t n)
{
    const ts_graph *g = w->cp->g;
    if (a == ARC_SELF) return n;
    if (g->edges.kind[a] == TS_EDGE_NEST) return (g->edges.flags[a] & TS_EDGE_TO_END) ? n : g->edges.src[a];
    uint32_t src = g->edges.src[a];
    if (g->edges.kind[a] != TS_EDGE_PROGRAM || g->nodes.lane[src] != g->nodes.lane[n]) return TS_NONE32;
    uint32_t parent = ts__graph_parent_node(g, n);
    return parent != TS_NONE32 && parent == ts__graph_parent_node(g, src) ? parent : TS_NONE32;
}

/* Follow arg-max arcs back from point p. */
static int backtrack(walk *wp, const int32_t *idx, const int64_t *t, const uint32_t *arc, uint32_t p)
{
    ts_critical_path *cp = wp->cp;
    const ts_graph *g = cp->g;
    walk w = *wp;
    cp->end_ns = t[p];
    for (;;) {
        uint32_t a = arc[p], n = p / 2;
        if (a == ARC_SOURCE) break;
        uint32_t q = a == ARC_SELF ? 2 * n : edge_src_pt(g, a);
        if (!in_target(g, idx, q / 2)) break;
        uint32_t owner = arc_owner(&w, a, n);
        ts_cp_category c = owner != TS_NONE32 ? node_category((ts_node_kind)g->nodes.kind[owner], w.cpu_only)
                                              : edge_category((ts_edge_kind)g->edges.kind[a]);
        /* Crossing a collective backwards: from a member's end (rank A) through
         * its barrier to the straggler's arrival (rank S). */
        if (a != ARC_SELF && g->edges.kind[a] == TS_EDGE_COLL_ENTER && (p & 1) == 0) {
            uint16_t s_rank = g->nodes.rank[q / 2];
            uint32_t prev = w.last_ranked;
            if (prev != TS_NONE32 && g->nodes.rank[prev] != s_rank) {
                int64_t arrived = ts__graph_start(g, prev);
                if (arrived < w.floor_ns) { w.floor_ns = arrived; w.wait_rank = s_rank; }
            }
        }
        charge(&w, t[q], t[p], c);
        if (g->nodes.rank[n] != TS_GRAPH_NO_RANK) w.last_ranked = n;
        if (push_seg(cp, (ts_cp_segment){.node = n, .edge = a == ARC_SELF ? TS_NONE32 : a, .owner = owner,
                                               .start_ns = t[q], .dur_ns = t[p] - t[q], .category = (uint8_t)c}))
            return TS_ENOMEM;
        p = q;
    }
    cp->start_ns = t[p];
    /* the path is collected backwards: reverse into time order */
    for (uint32_t i = 0, j = cp->n_segs ? cp->n_segs - 1 : 0; i < j; i++, j--) {
        ts_cp_segment tmp = cp->segs[i];
        cp->segs[i] = cp->segs[j];
        cp->segs[j] = tmp;
    }
    return TS_OK;
}

/* backtrack over a walk of a job with or without GPU lanes. */
static int backtrack_path(ts_critical_path *cp, const int32_t *idx, const int64_t *t, const uint32_t *arc, uint32_t p)
{
    const ts_graph *g = cp->g;
    walk w = {.cp = cp, .floor_ns = INT64_MAX, .last_ranked = TS_NONE32, .cpu_only = true};
    for (uint32_t l = 0; l < g->n_lanes; l++) w.cpu_only &= !g->lanes[l].on_gpu;
    cp->cpu_only = w.cpu_only;
    return backtrack(&w, idx, t, arc, p);
}

/* The node of the path's first point: the first segment's edge source. */
static uint32_t first_path_node(const ts_critical_path *cp, uint32_t last)
{
    if (cp->n_segs == 0) return last;
    const ts_cp_segment *s = &cp->segs[0];
    return s->edge == TS_NONE32 ? s->node : cp->g->edges.src[s->edge];
}

/* Index of node n in cp->nodes, appending it when new. */
static uint32_t path_node(ts_critical_path *cp, ts_map64 *at, uint32_t n, int *rc)
{
    uint64_t v;
    if (ts__map64_get(at, n, &v)) return (uint32_t)v;
    if (ts__map64_put(at, n, cp->n_nodes)) *rc = TS_ENOMEM;
    cp->nodes[cp->n_nodes] = n;
    return cp->n_nodes++;
}

/* Distinct nodes in the order the path first reaches them (each segment
 * starts where the one before it ended; a parent whose time between its
 * children is on the path counts), each with its own time on the path: the
 * segments it owns, so the table's op rows and these agree. */
static int collect_nodes(ts_critical_path *cp, uint32_t first_node)
{
    size_t cap = 2 * (size_t)cp->n_segs + 1;
    cp->nodes = ts__malloc(cap * sizeof *cp->nodes);
    cp->node_ns = ts__calloc(cap, sizeof *cp->node_ns);
    if (!cp->nodes || !cp->node_ns) return TS_ENOMEM;
    ts_map64 at;
    ts__map64_init(&at);
    int rc = TS_OK;
    path_node(cp, &at, first_node, &rc);
    for (uint32_t i = 0; i < cp->n_segs && rc == TS_OK; i++) {
        const ts_cp_segment *s = &cp->segs[i];
        if (s->owner != TS_NONE32) cp->node_ns[path_node(cp, &at, s->owner, &rc)] += s->dur_ns;
        path_node(cp, &at, s->node, &rc);
    }
    ts__map64_free(&at);
    return rc;
}

static bool is_launch_call(const char *n)
{
    return !strncmp(n, "cudaLaunch", 10) || !strncmp(n, "cuLaunch", 8) || !strcmp(n, "cudaMemcpyAsync") ||
           !strcmp(n, "cudaMemsetAsync");
}

/* An iteration cut off at the trace's edge shows as launches after the last
 * one whose GPU op made it into the trace (an unmatched launch in the middle
 * of a trace is a different matter); say so per rank rather than report a
 * short path as if it were whole. */
static void check_cut_off(ts_critical_path *cp, const int32_t *idx)
{
    const ts_graph *g = cp->g;
    for (uint32_t r = 0; r < g->n_ranks && cp_warn_room(cp); r++) {
        uint32_t lost = 0;
        int64_t last_kept = INT64_MIN;   /* latest launch whose GPU op is in the trace */
        for (uint32_t n = g->rank_first_node[r]; n < g->rank_first_node[r + 1]; n++)
            if (g->nodes.kind[n] == TS_NODE_LAUNCH && g->nodes.start_ns[n] > last_kept) last_kept = g->nodes.start_ns[n];
        for (uint32_t n = g->rank_first_node[r]; n < g->rank_first_node[r + 1]; n++)
            if (g->nodes.kind[n] == TS_NODE_RUNTIME && g->nodes.start_ns[n] > last_kept && in_target(g, idx, n) &&
                is_launch_call(ts__graph_node_name(g, n)))
                lost++;
        if (lost)
            snprintf(cp->warnings[cp->n_warnings++], sizeof cp->warnings[0],
                     "rank %d: %u launches in this iteration have no GPU op in the trace (cut off at the "
                     "trace's edge?); the path may be short", g->rank_number[r], lost);
    }
}

static void window(ts_critical_path *cp, const int32_t *idx)
{
    const ts_graph *g = cp->g;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t n = 0; n < g->rank_first_node[g->n_ranks]; n++) {
        if (!in_target(g, idx, n)) continue;
        if (ts__graph_start(g, n) < lo) lo = ts__graph_start(g, n);
        if (ts__graph_end(g, n) > hi) hi = ts__graph_end(g, n);
    }
    cp->window_ns = hi > lo ? hi - lo : 0;
}

int ts_critical_path_create(const ts_graph *g, int64_t iteration, ts_critical_path **out, ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    ts__mem_phase("finding the critical path");
    uint32_t np = g->nodes.n * 2;
    ts_critical_path *cp = ts__calloc(1, sizeof *cp);
    int32_t *idx = ts__malloc((g->n_ranks + 1) * sizeof *idx);
    int64_t *t = ts__malloc((size_t)np * sizeof *t + 8);
    uint32_t *arc = ts__malloc((size_t)np * sizeof *arc + 4);
    int rc = (!cp || !idx || !t || !arc) ? ts__error(err, TS_ENOMEM, "out of memory") : TS_OK;
    if (rc == TS_OK) {
        cp->g = g;
        cp->step = iteration;
        cp->wait_on_rank_ns = ts__calloc(g->n_ranks + 1, sizeof *cp->wait_on_rank_ns);
        if (!cp->wait_on_rank_ns) rc = ts__error(err, TS_ENOMEM, "out of memory");
    }
    if (rc == TS_OK) rc = find_iteration(g, cp, &cp->step, idx, err);
    if (rc == TS_OK) {
        if (idx[0] < 0 && g->n_ranks && g->trace->ranks[g->rank_model[0]]->n_iterations == 0) cp->step = -1;
        longest_paths(g, idx, t, arc);
        uint32_t last = TS_NONE32;
        for (uint32_t n = 0; n < g->rank_first_node[g->n_ranks]; n++)
            if (in_target(g, idx, n) && (last == TS_NONE32 || t[2 * n + 1] >= t[2 * last + 1])) last = n;
        if (last == TS_NONE32 && cp->step >= 0)
            rc = ts__error(err, TS_ENODATA, "iteration %lld has no ops to follow", (long long)cp->step);
        else if (last == TS_NONE32)
            rc = ts__error(err, TS_ENODATA, "the trace has no ops to follow (no CPU op, runtime call, GPU op or "
                           "collective)");
        else if (backtrack_path(cp, idx, t, arc, 2 * last + 1) ||
                 collect_nodes(cp, first_path_node(cp, last)) || ts__cp_ops_build(cp))
            rc = ts__error(err, TS_ENOMEM, "out of memory");
        window(cp, idx);
        check_cut_off(cp, idx);
    }
    ts__free(idx, (g->n_ranks + 1) * sizeof *idx);
    ts__free(t, (size_t)np * sizeof *t + 8);
    ts__free(arc, (size_t)np * sizeof *arc + 4);
    if (rc != TS_OK) { ts_critical_path_destroy(cp); return rc; }
    *out = cp;
    return TS_OK;
}

void ts_critical_path_destroy(ts_critical_path *cp)
{
    if (!cp) return;
    ts__free(cp->segs, cp->cap_segs * sizeof *cp->segs);
    ts__free(cp->nodes, (2 * (size_t)cp->n_segs + 1) * sizeof *cp->nodes);
    ts__free(cp->node_ns, (2 * (size_t)cp->n_segs + 1) * sizeof *cp->node_ns);
    ts__free(cp->wait_on_rank_ns, (cp->g ? cp->g->n_ranks + 1 : 1) * sizeof *cp->wait_on_rank_ns);
    ts__free(cp->ops, ((size_t)cp->n_segs + 1) * sizeof *cp->ops);
    ts__free(cp, sizeof *cp);
}

int64_t ts_critical_path_length_ns(const ts_critical_path *cp) { return cp->end_ns - cp->start_ns; }
int64_t ts_critical_path_category_ns(const ts_critical_path *cp, ts_cp_category c)
{
    return (unsigned)c < TS_CP_COUNT ? cp->cat_ns[c] : 0;
}
uint32_t ts_critical_path_n_nodes(const ts_critical_path *cp) { return cp->n_nodes; }
int64_t ts_critical_path_wait_on_rank_ns(const ts_critical_path *cp, uint32_t r)
{
    return r < cp->g->n_ranks ? cp->wait_on_rank_ns[r] : 0;
}
uint32_t ts_critical_path_n_warnings(const ts_critical_path *cp) { return cp->n_warnings; }
const char *ts_critical_path_warning(const ts_critical_path *cp, uint32_t i)
{
    return i < cp->n_warnings ? cp->warnings[i] : NULL;
}
