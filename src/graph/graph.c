/* graph.c - ts_graph life cycle: column appends, the build driver, and the
 * final indexing pass (CSR by src and by dst, dPRO gaps, self times,
 * topological order of start/end points with cycle detection).
 *
 * Not here: what becomes a node or an edge (local.c), collectives and clocks
 * (collective.c). After ts__graph_finish() the graph is read-only.
 */
#include "graph/build.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const node_kind_names[TS_NODE_KIND_COUNT] = {
    "cpu_op", "launch", "runtime", "host_sync", "kernel", "memcpy", "memset",
    "comm_kernel", "comm_cpu", "barrier",
};
static const char *const edge_kind_names[TS_EDGE_KIND_COUNT] = {
    "program", "nest", "launch", "stream", "stream_wait", "host_sync", "fwdbwd",
    "coll_launch", "worker", "coll_enter", "coll_exit", "mpi_request", "dep", "replica",
};
const char *ts__node_kind_name(ts_node_kind k)
{
    return (unsigned)k < TS_NODE_KIND_COUNT ? node_kind_names[k] : "?";
}
const char *ts__edge_kind_name(ts_edge_kind k)
{
    return (unsigned)k < TS_EDGE_KIND_COUNT ? edge_kind_names[k] : "?";
}

/* The column arrays of the node and edge tables, so growing and freeing
 * them is one loop each. */
typedef ts_col_ref col_ref;

size_t ts__graph_node_cols(ts_graph_nodes *n, col_ref *c)
{
    col_ref cols[] = {
        {(void **)&n->rank, sizeof *n->rank}, {(void **)&n->kind, sizeof *n->kind},
        {(void **)&n->lane, sizeof *n->lane}, {(void **)&n->slice, sizeof *n->slice},
        {(void **)&n->start_ns, sizeof *n->start_ns}, {(void **)&n->dur_ns, sizeof *n->dur_ns},
        {(void **)&n->waits, sizeof *n->waits}, {(void **)&n->coll, sizeof *n->coll},
        {(void **)&n->iteration, sizeof *n->iteration},
    };
    memcpy(c, cols, sizeof cols);
    return sizeof cols / sizeof cols[0];
}

static size_t edge_cols(ts_graph_edges *e, col_ref *c)
{
    col_ref cols[] = {
        {(void **)&e->src, sizeof *e->src}, {(void **)&e->dst, sizeof *e->dst},
        {(void **)&e->kind, sizeof *e->kind}, {(void **)&e->flags, sizeof *e->flags},
        {(void **)&e->gap_ns, sizeof *e->gap_ns},
    };
    memcpy(c, cols, sizeof cols);
    return sizeof cols / sizeof cols[0];
}

/* Capacity doubles (from `first`) until it holds `need` rows. A failure part
 * way leaves some columns larger than *cap: that only understates the size
 * later given to ts__free, which the hook uses for accounting. */
static int grow_cols(const col_ref *cols, size_t n_cols, uint32_t *cap, size_t need, uint32_t first)
{
    if (need <= *cap) return TS_OK;
    uint32_t c = *cap ? *cap : first;
    while (c < need) c *= 2;
    for (size_t i = 0; i < n_cols; i++) {
        void *p = ts__realloc(*cols[i].p, *cap * cols[i].elem, c * cols[i].elem);
        if (!p) return TS_ENOMEM;
        *cols[i].p = p;
    }
    *cap = c;
    return TS_OK;
}

static void free_cols(const col_ref *cols, size_t n_cols, uint32_t cap)
{
    for (size_t i = 0; i < n_cols; i++) ts__free(*cols[i].p, cap * cols[i].elem);
}

ts_graph *ts__graph_alloc(const ts_job *t, uint32_t n_ranks, const ts_graph_options *opt)
{
    ts_graph *g = ts__calloc(1, sizeof *g);
    if (!g) return NULL;
    g->trace = t;
    g->n_ranks = n_ranks;
    if (opt && opt->size) memcpy(&g->opt, opt, opt->size < sizeof g->opt ? opt->size : sizeof g->opt);
    g->opt.size = sizeof g->opt;
    ts__map64_init(&g->mpi_done);
    g->rank_first_node = ts__calloc(n_ranks + 1, sizeof *g->rank_first_node);
    g->rank_model = ts__calloc(n_ranks + 1, sizeof *g->rank_model);
    g->rank_number = ts__calloc(n_ranks + 1, sizeof *g->rank_number);
    g->align = ts__calloc(n_ranks + 1, sizeof *g->align);
    if (!g->rank_first_node || !g->rank_model || !g->rank_number || !g->align ||
        ts__strpool_init(&g->strings) != TS_OK) {
        ts_graph_destroy(g);
        return NULL;
    }
    return g;
}

void ts_graph_destroy(ts_graph *g)
{
    if (!g) return;
    ts_graph_nodes *n = &g->nodes;
    ts_graph_edges *e = &g->edges;
    col_ref cols[16];
    free_cols(cols, ts__graph_node_cols(n, cols), n->cap);
    free_cols(cols, edge_cols(e, cols), e->cap);
    ts__free(g->out_first, ((size_t)n->n + 1) * sizeof *g->out_first);
    ts__free(g->in_first, ((size_t)n->n + 1) * sizeof *g->in_first);
    ts__free(g->in_edge, (size_t)e->n * sizeof *g->in_edge);
    ts__free(g->topo, (size_t)n->n * 2 * sizeof *g->topo);
    ts__free(g->lanes, g->cap_lanes * sizeof *g->lanes);
    ts__free(g->colls, g->cap_colls * sizeof *g->colls);
    ts__free(g->coll_members, g->cap_coll_members * sizeof *g->coll_members);
    ts__free(g->rank_first_node, (g->n_ranks + 1) * sizeof *g->rank_first_node);
    ts__free(g->rank_model, (g->n_ranks + 1) * sizeof *g->rank_model);
    ts__free(g->rank_number, (g->n_ranks + 1) * sizeof *g->rank_number);
    ts__free(g->align, (g->n_ranks + 1) * sizeof *g->align);
    ts__map64_free(&g->mpi_done);
    if (g->replica_of) ts__free(g->replica_of, (g->n_ranks + 1) * sizeof *g->replica_of);
    for (uint32_t i = 0; i < g->n_warnings; i++) ts__free(g->warnings[i], strlen(g->warnings[i]) + 1);
    ts__free(g->warnings, g->cap_warnings * sizeof *g->warnings);
    ts__strpool_free(&g->strings);
    ts__free(g, sizeof *g);
}

void ts__graph_warn(ts_graph *g, const char *fmt, ...)
{
    /* Bounded so a trace with a million unmatched ops cannot flood the report;
     * the last line says how many were dropped. */
    enum { MAX_WARNINGS = 64 };
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (g->n_warnings == MAX_WARNINGS) snprintf(line, sizeof line, "(more warnings omitted)");
    else if (g->n_warnings > MAX_WARNINGS) return;
    if (ts__grow((void **)&g->warnings, &g->cap_warnings, sizeof *g->warnings, g->n_warnings + 1)) {
        g->oom = true;
        return;
    }
    char *s = ts__strdup(line);
    if (!s) { g->oom = true; return; }
    g->warnings[g->n_warnings++] = s;
}

uint32_t ts__graph_add_lane(ts_graph *g, uint16_t rank, bool on_gpu, uint32_t track)
{
    if (ts__grow((void **)&g->lanes, &g->cap_lanes, sizeof *g->lanes, g->n_lanes + 1)) {
        g->oom = true;
        return TS_NONE32;
    }
    g->lanes[g->n_lanes] = (ts_lane){.rank = rank, .on_gpu = on_gpu, .track = track};
    return g->n_lanes++;
}

static int grow_nodes(ts_graph_nodes *n, size_t need)
{
    col_ref cols[16];
    return grow_cols(cols, ts__graph_node_cols(n, cols), &n->cap, need, 1024);
}

static int grow_edges(ts_graph_edges *e, size_t need)
{
    col_ref cols[16];
    return grow_cols(cols, edge_cols(e, cols), &e->cap, need, 2048);
}

/* Map the pages of rows [from, to) of every column now (they are about to
 * be written). */
static void prefault_rows(const col_ref *cols, size_t n_cols, size_t from, size_t to)
{
    for (size_t i = 0; to > from && i < n_cols; i++)
        ts__prefault((char *)*cols[i].p + from * cols[i].elem, (to - from) * cols[i].elem);
}

int ts__graph_reserve(ts_graph *g, size_t n_nodes, size_t n_edges)
{
    if (n_nodes > (1u << 31) || n_edges > (1u << 31)) return TS_ERANGE;   /* capacities double in uint32 */
    if (grow_nodes(&g->nodes, n_nodes) || grow_edges(&g->edges, n_edges)) return TS_ENOMEM;
    col_ref cols[16];
    prefault_rows(cols, ts__graph_node_cols(&g->nodes, cols), g->nodes.n, n_nodes);
    prefault_rows(cols, edge_cols(&g->edges, cols), g->edges.n, n_edges);
    return TS_OK;
}

uint32_t ts__graph_add_node(ts_graph *g, uint16_t rank, ts_node_kind kind, uint32_t lane,
                            uint32_t slice, int64_t start_ns, int64_t dur_ns)
{
    ts_graph_nodes *n = &g->nodes;
    if (TS_UNLIKELY(n->n == n->cap) && grow_nodes(n, (size_t)n->n + 1)) {
        g->oom = true;
        return TS_NONE32;
    }
    uint32_t i = n->n++;
    n->rank[i] = rank;
    n->kind[i] = (uint8_t)kind;
    n->lane[i] = lane;
    n->slice[i] = slice;
    n->start_ns[i] = start_ns;
    n->dur_ns[i] = dur_ns;
    n->waits[i] = 0;
    n->coll[i] = TS_NONE32;
    n->iteration[i] = -1;
    return i;
}

void ts__graph_add_edge(ts_graph *g, uint32_t src, uint32_t dst, ts_edge_kind kind, uint8_t flags)
{
    ts_graph_edges *e = &g->edges;
    if (src == TS_NONE32 || dst == TS_NONE32 || src == dst) return;
    if (TS_UNLIKELY(e->n == e->cap) && grow_edges(e, (size_t)e->n + 1)) {
        g->oom = true;
        return;
    }
    uint32_t i = e->n++;
    e->src[i] = src;
    e->dst[i] = dst;
    e->kind[i] = (uint8_t)kind;
    e->flags[i] = flags;
    e->gap_ns[i] = 0;
}

const char *ts__graph_node_name(const ts_graph *g, uint32_t n)
{
    if (g->nodes.kind[n] == TS_NODE_BARRIER) {
        uint32_t c = g->nodes.coll[n];
        return c == TS_NONE32 ? "barrier" : ts__str(&g->strings, g->colls[c].name);
    }
    const ts_rank *r = ts__graph_rank(g, n);
    return ts__rank_str(r, r->slices.name[g->nodes.slice[n]]);
}

uint32_t *ts__graph_slice_nodes(const ts_graph *g, uint32_t ri)
{
    const ts_rank *r = g->trace->ranks[g->rank_model[ri]];
    uint32_t *map = ts__malloc(((size_t)r->slices.n + 1) * sizeof *map);
    if (!map) return NULL;
    memset(map, 0xff, ((size_t)r->slices.n + 1) * sizeof *map);
    for (uint32_t n = g->rank_first_node[ri]; n < g->rank_first_node[ri + 1]; n++)
        if (g->nodes.slice[n] < r->slices.n) map[g->nodes.slice[n]] = n;
    return map;
}

void ts__graph_slice_nodes_free(const ts_graph *g, uint32_t ri, uint32_t *map)
{
    if (map) ts__free(map, ((size_t)g->trace->ranks[g->rank_model[ri]]->slices.n + 1) * sizeof *map);
}

uint32_t ts__graph_enclosing_node(const ts_rank *r, const uint32_t *slice_node, uint32_t slice)
{
    for (uint32_t p = r->slices.parent[slice]; p != TS_NONE32; p = r->slices.parent[p])
        if (slice_node[p] != TS_NONE32) return slice_node[p];
    return TS_NONE32;
}

/* First row of node n's lane run (rows of one lane are contiguous within its
 * rank): exponential then binary search back from n, O(log run). */
static uint32_t lane_first_row(const ts_graph *g, uint32_t n)
{
    uint32_t lane = g->nodes.lane[n], floor = g->rank_first_node[g->nodes.rank[n]], lo = n, step = 1;
    while (lo > floor && g->nodes.lane[lo - 1] == lane) {
        uint32_t probe = lo - floor > step ? lo - step : floor;
        if (g->nodes.lane[probe] == lane) { lo = probe; step *= 2; continue; }
        uint32_t a = probe + 1, b = lo;   /* the run starts in (probe, lo] */
        while (a < b) {
            uint32_t mid = a + (b - a) / 2;
            if (g->nodes.lane[mid] == lane) b = mid;
            else a = mid + 1;
        }
        return a;
    }
    return lo;
}

uint32_t ts__graph_parent_node(const ts_graph *g, uint32_t n)
{
    if (g->nodes.rank[n] == TS_GRAPH_NO_RANK || g->nodes.slice[n] == TS_NONE32) return TS_NONE32;
    const ts_rank *r = ts__graph_rank(g, n);
    uint32_t lo = lane_first_row(g, n);
    for (uint32_t p = r->slices.parent[g->nodes.slice[n]]; p != TS_NONE32; p = r->slices.parent[p]) {
        uint32_t a = lo, b = n;   /* a lane's rows run in slice order: find slice p among [lo, n) */
        while (a < b) {
            uint32_t mid = a + (b - a) / 2;
            if (g->nodes.slice[mid] < p) a = mid + 1;
            else b = mid;
        }
        if (a < n && g->nodes.slice[a] == p) return a;
    }
    return TS_NONE32;
}

/* ---- finish: CSR, gaps, topological order ---- */

/* An index array that lives as long as the graph, about to be filled. */
static uint32_t *index_alloc(size_t n)
{
    uint32_t *p = ts__malloc(n * sizeof *p + 4);
    ts__prefault(p, n * sizeof *p);
    return p;
}

/* Stable counting sort of the edge columns by src: O(E + N). `scratch`
 * holds 2 * E + N + 1 uint32 (finish_scratch_words). */
static int sort_edges_by_src(ts_graph *g, uint32_t *scratch)
{
    ts_graph_edges *e = &g->edges;
    uint32_t nn = g->nodes.n, ne = e->n;
    g->out_first = index_alloc((size_t)nn + 1);
    if (!g->out_first) return TS_ENOMEM;
    memset(g->out_first, 0, ((size_t)nn + 1) * sizeof *g->out_first);
    for (uint32_t i = 0; i < ne; i++) g->out_first[e->src[i] + 1]++;
    for (uint32_t i = 0; i < nn; i++) g->out_first[i + 1] += g->out_first[i];
    bool sorted = true;
    for (uint32_t i = 1; i < ne && sorted; i++) sorted = e->src[i - 1] <= e->src[i];
    if (sorted) return TS_OK;   /* a stable sort would not move anything */
    uint32_t *perm = scratch, *cursor = scratch + ne, *tmp = cursor + nn + 1;
    memcpy(cursor, g->out_first, (size_t)nn * sizeof *cursor);
    for (uint32_t i = 0; i < ne; i++) perm[cursor[e->src[i]]++] = i;
    /* Apply the permutation column by column through one buffer. */
#define PERMUTE(col, T) do { T *t_ = (T *)tmp; for (uint32_t i = 0; i < ne; i++) t_[i] = e->col[perm[i]]; \
                             memcpy(e->col, t_, (size_t)ne * sizeof(T)); } while (0)
    PERMUTE(src, uint32_t);
    PERMUTE(dst, uint32_t);
    uint8_t *t8 = (uint8_t *)tmp;   /* kind and flags side by side: one pass */
    for (uint32_t i = 0; i < ne; i++) { t8[i] = e->kind[perm[i]]; t8[ne + i] = e->flags[perm[i]]; }
    memcpy(e->kind, t8, ne);
    memcpy(e->flags, t8 + ne, ne);
#undef PERMUTE
    return TS_OK;
}

/* In-edge index (edges by dst); `scratch` holds N uint32. */
static int index_by_dst(ts_graph *g, uint32_t *cursor)
{
    uint32_t nn = g->nodes.n, ne = g->edges.n;
    g->in_first = index_alloc((size_t)nn + 1);
    g->in_edge = index_alloc(ne);
    if (!g->in_first || !g->in_edge) return TS_ENOMEM;
    memset(g->in_first, 0, ((size_t)nn + 1) * sizeof *g->in_first);
    for (uint32_t i = 0; i < ne; i++) g->in_first[g->edges.dst[i] + 1]++;
    for (uint32_t i = 0; i < nn; i++) g->in_first[i + 1] += g->in_first[i];
    memcpy(cursor, g->in_first, (size_t)nn * sizeof *cursor);
    for (uint32_t i = 0; i < ne; i++) g->in_edge[cursor[g->edges.dst[i]]++] = i;
    return TS_OK;
}

/* dPRO gaps: every edge into a point gets point - max(src points into it).
 * The end point is explained by its end-edges when they arrive no earlier
 * than the node's start (self_ns = 0), else by the node's own duration.
 * `ast` holds every node's aligned start (one offset lookup per node instead
 * of one per edge). */
static void compute_gaps(ts_graph *g, int64_t *ast)
{
    ts_graph_edges *e = &g->edges;
    const int64_t *dur = g->nodes.dur_ns;
    for (uint32_t n = 0; n < g->nodes.n; n++) ast[n] = ts__graph_start(g, n);
    for (uint32_t n = 0; n < g->nodes.n; n++) {
        int64_t ms = INT64_MIN, me = INT64_MIN;
        for (uint32_t k = g->in_first[n]; k < g->in_first[n + 1]; k++) {
            uint32_t ei = g->in_edge[k], s = e->src[ei];
            int64_t p = ast[s] + ((e->flags[ei] & TS_EDGE_FROM_END) ? dur[s] : 0);
            if (e->flags[ei] & TS_EDGE_TO_END) { if (p > me) me = p; }
            else if (p > ms) ms = p;
        }
        int64_t start = ast[n], end = ast[n] + dur[n];
        bool end_bound = me != INT64_MIN && me >= start;
        g->nodes.waits[n] = end_bound;
        for (uint32_t k = g->in_first[n]; k < g->in_first[n + 1]; k++) {
            uint32_t ei = g->in_edge[k];
            if (e->flags[ei] & TS_EDGE_TO_END) e->gap_ns[ei] = end_bound ? end - me : 0;
            else e->gap_ns[ei] = start - ms;
        }
    }
}

/* Kahn's algorithm over points (2n = start, 2n+1 = end; start -> end implied),
 * O(N + E). Ready points go on a stack, not a queue: the walk then follows one
 * rank's chain of ops until a barrier holds it, which keeps it inside one
 * rank's rows of memory instead of visiting every rank in turn. A cycle is an
 * input error: report one node on it. */
static int topo_sort(ts_graph *g, uint32_t *scratch, ts_error *err)
{
    uint32_t np = g->nodes.n * 2, out = 0, sp = 0;
    uint32_t *indeg = scratch, *stack = scratch + np + 1;   /* 2 * np + 1 words */
    g->topo = index_alloc(np);
    if (!g->topo) return ts__error(err, TS_ENOMEM, "out of memory building the dependency graph");
    memset(indeg, 0, ((size_t)np + 1) * sizeof *indeg);
    for (uint32_t i = 0; i < g->edges.n; i++)
        indeg[g->edges.dst[i] * 2 + ((g->edges.flags[i] & TS_EDGE_TO_END) ? 1 : 0)]++;
    for (uint32_t n = 0; n < g->nodes.n; n++) indeg[2 * n + 1]++;
    for (uint32_t p = np; p-- > 0;) if (!indeg[p]) stack[sp++] = p;   /* lowest row on top */
    while (sp > 0) {
        uint32_t p = stack[--sp], n = p / 2;
        g->topo[out++] = p;
        for (uint32_t ei = g->out_first[n + 1]; ei-- > g->out_first[n];) {
            if (((g->edges.flags[ei] & TS_EDGE_FROM_END) ? 1u : 0u) != (p & 1)) continue;
            uint32_t q = g->edges.dst[ei] * 2 + ((g->edges.flags[ei] & TS_EDGE_TO_END) ? 1 : 0);
            if (!--indeg[q]) stack[sp++] = q;
        }
        if (!(p & 1) && !--indeg[p + 1]) stack[sp++] = p + 1;   /* its own end first */
    }
    int rc = TS_OK;
    if (out < np) {
        uint32_t bad = 0;
        while (bad < np && !indeg[bad]) bad++;
        uint32_t n = bad / 2;
        uint16_t r = g->nodes.rank[n];
        rc = ts__error(err, TS_EFORMAT, "dependency cycle through rank %d op '%s' at %lld ns (%u of %u points ordered)",
                       r == TS_GRAPH_NO_RANK ? -1 : g->rank_number[r], ts__graph_node_name(g, n),
                       (long long)ts__graph_start(g, n), out, np);
    }
    return rc;
}

/* Words of scratch the phases of finish need at most: the edge sort's
 * permutation, cursor and column buffer (2E + N + 1), the topological sort's
 * in-degrees and stack (4N + 1), the aligned starts (2N as int64). */
static size_t finish_scratch_words(const ts_graph *g)
{
    size_t nn = g->nodes.n, ne = g->edges.n, sort = 2 * ne + nn + 1, topo = 4 * nn + 1;
    return (sort > topo ? sort : topo) + 2;
}

/* One scratch block serves every phase in turn: allocating per phase cost
 * ~700 MB of freshly faulted pages at 16 M nodes, and first touches of fresh
 * memory are what a big build waits on (clear_page was half its time). */
int ts__graph_finish(ts_graph *g, ts_error *err)
{
    size_t words = finish_scratch_words(g);
    uint32_t *scratch = g->oom ? NULL : ts__malloc(words * sizeof *scratch);
    ts__prefault(scratch, words * sizeof *scratch);
    int rc = !scratch || sort_edges_by_src(g, scratch) || index_by_dst(g, scratch) ? TS_ENOMEM : TS_OK;
    if (rc == TS_OK) {
        int64_t *ast = (int64_t *)(void *)(((uintptr_t)scratch + 7) & ~(uintptr_t)7);   /* 8-byte aligned */
        compute_gaps(g, ast);
        rc = topo_sort(g, scratch, err);
    } else {
        ts__error(err, TS_ENOMEM, "out of memory building the dependency graph");
    }
    ts__free(scratch, words * sizeof *scratch);
    return rc;
}

int ts__graph_join_match(ts_graph *g, ts_graph_members *members, ts_error *err)
{
    uint32_t warn_mark = g->n_warnings;
    ts__mem_phase("matching collectives");
    int rc = ts__graph_match(g, members, NULL, err);
    if (rc == TS_OK) {
        ts__graph_align(g);
        rc = ts__graph_rematch_by_time(g, members, warn_mark, err);
    }
    return rc;
}

int ts__graph_join_finish(ts_graph *g, ts_error *err)
{
    ts__graph_barriers(g);
    ts__mem_phase("indexing the graph");
    return ts__graph_finish(g, err);
}

int ts__graph_join(ts_graph *g, ts_graph_members *members, ts_error *err)
{
    int rc = ts__graph_join_match(g, members, err);
    return rc ? rc : ts__graph_join_finish(g, err);
}

/* ---- public ---- */

/* Every time of a trace lies within 2^62 ns of its clock's zero and the
 * whole trace within 2^59 ns (ts__job_create refuses others, for every
 * command alike): the graph, its alignment, the critical path and replay
 * then add points, gaps and offsets within int64. */
int ts_graph_create(const ts_job *t, const ts_graph_options *opt, ts_graph **out, ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    if (!t || t->n_ranks == 0) return ts__error(err, TS_ENODATA, "no ranks to build a graph from");
    if (t->n_ranks >= TS_GRAPH_NO_RANK) return ts__error(err, TS_ERANGE, "too many ranks (%u)", t->n_ranks);
    ts__mem_phase("building the graph");
    ts_graph *g = ts__graph_alloc(t, t->n_ranks, opt);
    ts_graph_members *members = ts__calloc(t->n_ranks, sizeof *members);
    int rc = (!g || !members) ? ts__error(err, TS_ENOMEM, "out of memory") : TS_OK;
    for (uint32_t r = 0; rc == TS_OK && r < t->n_ranks; r++) {
        g->rank_model[r] = r;
        g->rank_number[r] = t->ranks[r]->rank;
        g->rank_first_node[r] = g->nodes.n;
        rc = ts__graph_local(g, (uint16_t)r, t->ranks[r], &members[r], err);
        g->rank_first_node[r + 1] = g->nodes.n;
    }
    if (rc == TS_OK) rc = ts__graph_join(g, members, err);
    for (uint32_t r = 0; members && r < t->n_ranks; r++)
        ts__free(members[r].node, members[r].cap * sizeof *members[r].node);
    ts__free(members, t->n_ranks * sizeof *members);
    if (rc != TS_OK) { ts_graph_destroy(g); return rc; }
    *out = g;
    return TS_OK;
}

uint32_t ts_graph_n_nodes(const ts_graph *g) { return g->nodes.n; }
uint32_t ts_graph_n_edges(const ts_graph *g) { return g->edges.n; }
uint32_t ts_graph_n_collectives(const ts_graph *g) { return g->n_colls; }
uint32_t ts_graph_n_warnings(const ts_graph *g) { return g->n_warnings; }
const char *ts_graph_warning(const ts_graph *g, uint32_t i) { return i < g->n_warnings ? g->warnings[i] : NULL; }
int64_t ts_graph_rank_offset_ns(const ts_graph *g, uint32_t r) { return r < g->n_ranks ? g->align[r].offset_ns : 0; }
int64_t ts_graph_rank_residual_ns(const ts_graph *g, uint32_t r) { return r < g->n_ranks ? g->align[r].resid_max_ns : 0; }
