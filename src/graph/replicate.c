/* replicate.c - synthesize an n-rank job from one real rank: the source
 * graph's rank 0 (nodes and local edges) copied n times with jittered
 * durations, re-timed by a local replay so every copy is self-consistent,
 * then matched, aligned, joined by barriers and indexed like a real job.
 *
 * For benchmarks and scaling what-ifs, not for analysis: the copies borrow
 * the source trace's slices for names. Cost O(n * (V + E)) time and about
 * 60 bytes per node and edge copy (a 15k-node rank at 1,024 ranks is ~1 GB).
 */
#include "graph/build.h"

#include <math.h>

/* xorshift64*: deterministic, fast, good enough for jitter. */
static inline double next_unit(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct src_view {
    const ts_graph *g;
    uint32_t first, n;      /* rank 0's node rows */
    uint32_t *topo;         /* rank 0's points in topological order */
    uint32_t  n_topo;
    /* rank 0's local edges (both ends in rank 0), in the graph's src order,
     * as rank-relative rows: every copy adds its first node row */
    uint32_t *esrc, *edst;
    uint8_t  *ekind, *eflags;
    uint32_t  n_edges;
} src_view;

static inline bool local(const src_view *v, uint32_t node) { return node - v->first < v->n; }

/* Start/end of every copied node: a replay of rank 0's local edges with the
 * jittered self times. Collective members keep their (jittered) duration:
 * their barrier is rebuilt later. */
static void retime(const src_view *v, const int64_t *self, int64_t *t)
{
    const ts_graph *g = v->g;
    for (uint32_t i = 0; i < v->n_topo; i++) {
        uint32_t p = v->topo[i], n = p / 2, ln = n - v->first;
        bool to_end = p & 1;
        int64_t best = to_end ? t[2 * ln] + self[ln] : INT64_MIN;
        for (uint32_t k = g->in_first[n]; k < g->in_first[n + 1]; k++) {
            uint32_t e = g->in_edge[k], s = g->edges.src[e];
            if (!local(v, s) || ((g->edges.flags[e] & TS_EDGE_TO_END) != 0) != to_end) continue;
            int64_t sp = t[2 * (s - v->first) + ((g->edges.flags[e] & TS_EDGE_FROM_END) ? 1 : 0)];
            if (sp + g->edges.gap_ns[e] > best) best = sp + g->edges.gap_ns[e];
        }
        if (best == INT64_MIN) best = g->nodes.start_ns[n];
        t[p - 2 * v->first] = best;
    }
}

/* Rank 0's nonblocking MPI calls and their completions, for the copy whose
 * first node is node0. */
static int copy_mpi_done(ts_graph *out, const src_view *v, uint32_t node0)
{
    const ts_map64 *m = &v->g->mpi_done;
    for (uint32_t i = 0; i < m->n_slots; i++)
        if (m->keys[i] != UINT64_MAX && local(v, (uint32_t)m->keys[i]) &&
            ts__map64_put(&out->mpi_done, node0 + m->keys[i] - v->first, node0 + m->vals[i] - v->first))
            return TS_ENOMEM;
    return TS_OK;
}

/* Column by column into rows reserved up front (ts__graph_replicate):
 * no per-row growth checks, and the columns fill sequentially. */
static void copy_nodes(ts_graph *out, const src_view *v, uint16_t r, uint32_t lane_shift, const int64_t *t)
{
    const ts_graph_nodes *in = &v->g->nodes;
    ts_graph_nodes *o = &out->nodes;
    uint32_t base = o->n, f = v->first;
    TS_ASSERT((size_t)base + v->n <= o->cap);
    memcpy(o->kind + base, in->kind + f, v->n * sizeof *o->kind);
    memcpy(o->slice + base, in->slice + f, v->n * sizeof *o->slice);
    memcpy(o->iteration + base, in->iteration + f, v->n * sizeof *o->iteration);
    memset(o->coll + base, 0xff, v->n * sizeof *o->coll);   /* TS_NONE32 */
    memset(o->waits + base, 0, v->n);   /* self time = duration until finish says otherwise */
    for (uint32_t i = 0; i < v->n; i++) {
        int64_t s = t[2 * i], e = t[2 * i + 1], d = e > s ? e - s : 0;
        o->rank[base + i] = r;
        o->lane[base + i] = in->lane[f + i] + lane_shift;
        o->start_ns[base + i] = s;
        o->dur_ns[base + i] = d;
    }
    o->n += v->n;
}

static void copy_edges(ts_graph *out, const src_view *v, uint32_t node0)
{
    ts_graph_edges *o = &out->edges;
    uint32_t base = o->n;
    TS_ASSERT((size_t)base + v->n_edges <= o->cap);
    for (uint32_t k = 0; k < v->n_edges; k++) {
        o->src[base + k] = node0 + v->esrc[k];
        o->dst[base + k] = node0 + v->edst[k];
    }
    memcpy(o->kind + base, v->ekind, v->n_edges);
    memcpy(o->flags + base, v->eflags, v->n_edges);
    memset(o->gap_ns + base, 0, v->n_edges * sizeof *o->gap_ns);
    o->n += v->n_edges;
}

static int copy_rank(ts_graph *out, const src_view *v, uint16_t r, double jitter, uint64_t seed,
                     int64_t *self, int64_t *t)
{
    const ts_graph *g = v->g;
    uint64_t rng = seed ^ ts__hash_u64(r + 1);
    if (!rng) rng = 1;
    for (uint32_t i = 0; i < v->n; i++) {
        uint32_t n = v->first + i;
        double f = 1.0 + jitter * (2.0 * next_unit(&rng) - 1.0);
        int64_t base = g->nodes.coll[n] != TS_NONE32 ? g->nodes.dur_ns[n] : ts__graph_self(g, n);
        self[i] = (int64_t)llround((double)base * (f > 0 ? f : 0));
    }
    retime(v, self, t);
    uint32_t lane0 = out->n_lanes, node0 = out->nodes.n, lane_base = 0;
    while (lane_base < g->n_lanes && g->lanes[lane_base].rank != 0) lane_base++;
    for (uint32_t l = 0; l < g->n_lanes; l++)
        if (g->lanes[l].rank == 0 && ts__graph_add_lane(out, r, g->lanes[l].on_gpu, g->lanes[l].track) == TS_NONE32)
            return TS_ENOMEM;
    copy_nodes(out, v, r, lane0 - lane_base, t);
    copy_edges(out, v, node0);
    return out->oom ? TS_ENOMEM : copy_mpi_done(out, v, node0);
}

/* Rank 0's collective members, in time order, become every copy's members. */
static int members_of(const src_view *v, ts_graph_members *m)
{
    const ts_graph *g = v->g;
    for (uint32_t c = 0; c < g->n_colls; c++) {
        for (uint32_t k = 0; k < g->colls[c].n_members; k++) {
            uint32_t node = g->coll_members[g->colls[c].first_member + k];
            if (!local(v, node)) continue;
            if (ts__grow((void **)&m->node, &m->cap, sizeof *m->node, m->n + 1)) return TS_ENOMEM;
            m->node[m->n++] = node - v->first;
        }
    }
    return TS_OK;
}

/* Rank 0's local edges, rank-relative. */
static int src_edges(src_view *v)
{
    const ts_graph *g = v->g;
    uint32_t n = 0;
    for (uint32_t e = g->out_first[v->first]; e < g->out_first[v->first + v->n]; e++) n += local(v, g->edges.dst[e]);
    v->esrc = ts__malloc((size_t)n * sizeof *v->esrc + 1);
    v->edst = ts__malloc((size_t)n * sizeof *v->edst + 1);
    v->ekind = ts__malloc((size_t)n + 1);
    v->eflags = ts__malloc((size_t)n + 1);
    if (!v->esrc || !v->edst || !v->ekind || !v->eflags) return TS_ENOMEM;
    for (uint32_t e = g->out_first[v->first]; e < g->out_first[v->first + v->n]; e++) {
        if (!local(v, g->edges.dst[e])) continue;
        v->esrc[v->n_edges] = g->edges.src[e] - v->first;
        v->edst[v->n_edges] = g->edges.dst[e] - v->first;
        v->ekind[v->n_edges] = g->edges.kind[e];
        v->eflags[v->n_edges++] = g->edges.flags[e];
    }
    return TS_OK;
}

static void src_free(src_view *v)
{
    ts__free(v->topo, (size_t)v->n * 2 * sizeof *v->topo + 4);
    ts__free(v->esrc, (size_t)v->n_edges * sizeof *v->esrc + 1);
    ts__free(v->edst, (size_t)v->n_edges * sizeof *v->edst + 1);
    ts__free(v->ekind, (size_t)v->n_edges + 1);
    ts__free(v->eflags, (size_t)v->n_edges + 1);
}

static int src_topo(src_view *v)
{
    const ts_graph *g = v->g;
    v->topo = ts__malloc((size_t)v->n * 2 * sizeof *v->topo + 4);
    if (!v->topo) return TS_ENOMEM;
    for (uint32_t i = 0; i < g->nodes.n * 2; i++)
        if (local(v, g->topo[i] / 2)) v->topo[v->n_topo++] = g->topo[i];
    return TS_OK;
}

int ts__graph_replicate(const ts_graph *g, uint32_t n_ranks, double jitter, uint64_t seed,
                        ts_graph **out, ts_error *err)
{
    *out = NULL;
    if (n_ranks == 0 || n_ranks >= TS_GRAPH_NO_RANK)
        return ts__error(err, TS_ERANGE, "cannot synthesize %u ranks (1..%u)", n_ranks, TS_GRAPH_NO_RANK - 1);
    src_view v = {.g = g, .first = g->rank_first_node[0], .n = g->rank_first_node[1] - g->rank_first_node[0]};
    ts_graph *o = ts__graph_alloc(g->trace, n_ranks, &g->opt);
    ts_graph_members *members = ts__calloc(n_ranks, sizeof *members), local_m = {0};
    int64_t *self = ts__malloc((size_t)v.n * sizeof *self + 8);
    int64_t *t = ts__malloc((size_t)v.n * 2 * sizeof *t + 8);
    int rc = (!o || !members || !self || !t || src_topo(&v) || src_edges(&v) || members_of(&v, &local_m))
             ? TS_ENOMEM : TS_OK;
    if (rc == TS_OK)   /* every copy's rows and the barriers: copies write rows directly */
        rc = ts__graph_reserve(o, (size_t)n_ranks * v.n + g->n_colls + 1,
                               (size_t)n_ranks * (v.n_edges + 2 * (size_t)local_m.n) + 1);
    for (uint32_t r = 0; rc == TS_OK && r < n_ranks; r++) {
        o->rank_model[r] = g->rank_model[0];
        o->rank_number[r] = (int32_t)r;
        o->rank_first_node[r] = o->nodes.n;
        rc = copy_rank(o, &v, (uint16_t)r, jitter, seed, self, t);
        o->rank_first_node[r + 1] = o->nodes.n;
        members[r].node = ts__malloc((size_t)local_m.n * sizeof *members[r].node + 4);
        if (rc == TS_OK && !members[r].node) rc = TS_ENOMEM;
        for (uint32_t i = 0; rc == TS_OK && i < local_m.n; i++) members[r].node[i] = o->rank_first_node[r] + local_m.node[i];
        members[r].n = members[r].cap = local_m.n;
    }
    if (rc == TS_OK) rc = ts__graph_match(o, members, NULL, err);
    if (rc == TS_OK) {
        ts__graph_align(o);
        ts__graph_barriers(o);
        rc = ts__graph_finish(o, err);
    } else if (rc == TS_ENOMEM) {
        ts__error(err, rc, "out of memory synthesizing %u ranks", n_ranks);
    }
    for (uint32_t r = 0; members && r < n_ranks; r++) ts__free(members[r].node, (size_t)members[r].cap * sizeof *members[r].node + 4);
    ts__free(members, n_ranks * sizeof *members);
    ts__free(local_m.node, local_m.cap * sizeof *local_m.node);
    src_free(&v);
    ts__free(self, (size_t)v.n * sizeof *self + 8);
    ts__free(t, (size_t)v.n * 2 * sizeof *t + 8);
    if (rc != TS_OK) { ts_graph_destroy(o); return rc; }
    *out = o;
    return TS_OK;
}
