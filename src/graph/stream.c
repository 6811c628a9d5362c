/* stream.c - per-rank streaming into a graph (stream.h) and ts_graph_load,
 * the bounded-memory path from rank files to a graph.
 *
 * Not for: parsing (ingest/) or the graph's steps themselves (local.c,
 * collective.c, graph.c). Memory: at any time the loader threads hold at most
 * n_threads + 1 full ranks (a bounded window over the file list); every rank
 * added is its graph rows plus a compact summary (trace/compact.c). Folding
 * (--fold-replicas) keeps a folded rank's collective members only.
 */
#include "graph/stream.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "graph/build.h"
#include "ingest/ingest.h"

/* One group of replicas: the shape of its representative's local graph. */
typedef struct fold_group {
    uint64_t shape;       /* hash of node kinds, names, lanes and local edges */
    uint32_t rep;         /* graph rank of the representative */
    uint32_t n_nodes, n_edges, n_members;
    int64_t  span_ns, busy_ns;
} fold_group;

/* The lines one rank's local graph warned of, and where the rank stands in
 * the order of the files (a rank added out of that order warns in it). */
typedef struct rank_warnings {
    char   **line;
    uint32_t n, cap;
    uint32_t pos;
} rank_warnings;

struct ts_graph_stream {
    ts_graph         *g;
    ts_graph_members *members;   /* per graph rank */
    ts_rank         **ranks;     /* compact summaries, per graph rank */
    uint32_t         *lane_first; /* per graph rank + 1: its lanes' first row */
    uint32_t          n_ranks, n_added;
    fold_group       *groups;
    uint32_t          n_groups, cap_groups;
    double            fold_tol;
    char             *note;      /* owned, NULL = none */
    ts_keep_fn        extra_keep; /* also kept, NULL = the graph's slices only (ts__graph_stream_keep) */
    bool              keep_ids;
    rank_warnings    *warn;      /* per graph rank: its local graph's warnings, merged in order at finish */
};

int ts__graph_stream_begin(uint32_t n_ranks, const ts_graph_options *opt, ts_graph_stream **out, ts_error *err)
{
    *out = NULL;
    if (n_ranks == 0) return ts__error(err, TS_ENODATA, "no ranks to build a graph from");
    if (n_ranks >= TS_GRAPH_NO_RANK) return ts__error(err, TS_ERANGE, "too many ranks (%u)", n_ranks);
    ts_graph_stream *s = ts__calloc(1, sizeof *s);
    if (!s) return ts__error(err, TS_ENOMEM, "out of memory");
    s->n_ranks = n_ranks;
    s->g = ts__graph_alloc(NULL, n_ranks, opt);
    s->members = ts__calloc(n_ranks, sizeof *s->members);
    s->ranks = ts__calloc(n_ranks, sizeof *s->ranks);
    s->lane_first = ts__calloc((size_t)n_ranks + 1, sizeof *s->lane_first);
    s->warn = ts__calloc(n_ranks, sizeof *s->warn);
    if (s->g && s->g->opt.fold_replicas) {
        s->fold_tol = s->g->opt.fold_tolerance > 0 ? s->g->opt.fold_tolerance : 0.1;
        s->g->replica_of = ts__calloc(n_ranks + 1, sizeof *s->g->replica_of);
    }
    if (!s->g || !s->members || !s->ranks || !s->lane_first || !s->warn ||
        (s->g->opt.fold_replicas && !s->g->replica_of)) {
        ts__graph_stream_abort(s);
        return ts__error(err, TS_ENOMEM, "out of memory");
    }
    *out = s;
    return TS_OK;
}

void ts__graph_stream_abort(ts_graph_stream *s)
{
    if (!s) return;
    for (uint32_t r = 0; s->members && r < s->n_ranks; r++)
        ts__free(s->members[r].node, s->members[r].cap * sizeof *s->members[r].node);
    for (uint32_t r = 0; s->ranks && r < s->n_ranks; r++) ts__rank_destroy(s->ranks[r]);
    ts__free(s->members, s->n_ranks * sizeof *s->members);
    ts__free(s->ranks, s->n_ranks * sizeof *s->ranks);
    ts__free(s->lane_first, ((size_t)s->n_ranks + 1) * sizeof *s->lane_first);
    for (uint32_t r = 0; s->warn && r < s->n_ranks; r++) {
        for (uint32_t k = 0; k < s->warn[r].n; k++) ts__free(s->warn[r].line[k], strlen(s->warn[r].line[k]) + 1);
        ts__free(s->warn[r].line, s->warn[r].cap * sizeof *s->warn[r].line);
    }
    ts__free(s->warn, s->n_ranks * sizeof *s->warn);
    ts__free(s->groups, s->cap_groups * sizeof *s->groups);
    if (s->note) ts__free(s->note, strlen(s->note) + 1);
    ts_graph_destroy(s->g);
    ts__free(s, sizeof *s);
}

void ts__graph_stream_note(ts_graph_stream *s, const char *note)
{
    if (s->note || !note || !*note) return;
    s->note = ts__strdup(note);
}

void ts__graph_stream_keep(ts_graph_stream *s, ts_keep_fn keep, bool keep_ids)
{
    s->extra_keep = keep;
    s->keep_ids = keep_ids;
}

/* ---- what a compact rank keeps ---- */

static void mark(uint8_t *keep, uint32_t s, uint8_t how) { if (keep[s] < how) keep[s] = how; }

/* Slices the graph and its readers name: every node's slice, the slice a
 * collective member takes its args from (ts__graph_args_slice: itself or a
 * child), iteration marks. Only collective members and those children keep
 * their args (2): nothing but matching (collective.c) reads a slice's args
 * once the local graph is built, and a child found again in the compact rank
 * is the same one (no other kept row there has args). Dropped ancestors are
 * skipped (ts__rank_compact links each slice to its nearest kept one), so a
 * node's enclosing node (ts__graph_parent_node) is found as before. */
static void mark_keep(const ts_graph *g, uint32_t ri, const ts_rank *r, const ts_graph_members *m, uint8_t *keep)
{
    for (uint32_t n = g->rank_first_node[ri]; n < g->nodes.n; n++)
        if (g->nodes.slice[n] < r->slices.n) mark(keep, g->nodes.slice[n], 1);
    for (uint32_t k = 0; k < m->n; k++) {   /* members keep their args: matching reads them */
        uint32_t s = g->nodes.slice[m->node[k]];
        if (s >= r->slices.n) continue;
        keep[s] = 2;
        keep[ts__graph_args_slice(r, s)] = 2;
    }
    for (uint32_t i = 0; i < r->n_iterations; i++)
        if (r->iterations[i].slice < r->slices.n) mark(keep, r->iterations[i].slice, 1);
}

/* full reduced to what a stream keeps of it beside graph rank ri's local
 * graph (rows from rank_first_node[ri] to the end; m its members): *out, and
 * those nodes' slices renumbered to its rows. */
static int compact_rank(ts_graph *g, uint32_t ri, const ts_rank *full, const ts_graph_members *m, ts_keep_fn extra,
                        bool keep_ids, ts_rank **out, ts_error *err)
{
    size_t n = (size_t)full->slices.n + 1;
    uint8_t *keep = ts__calloc(n, 1);
    uint32_t *map = ts__malloc(n * sizeof *map);
    int rc = !keep || !map ? ts__error(err, TS_ENOMEM, "%s: out of memory", full->path) : TS_OK;
    if (rc == TS_OK) {
        if (extra) extra(full, keep);   /* first: mark_keep only raises its marks */
        mark_keep(g, ri, full, m, keep);
        rc = ts__rank_compact(full, keep, map, keep_ids, out, err);
    }
    for (uint32_t k = g->rank_first_node[ri]; rc == TS_OK && k < g->nodes.n; k++)
        if (g->nodes.slice[k] < full->slices.n) g->nodes.slice[k] = map[g->nodes.slice[k]];
    ts__free(keep, n);
    ts__free(map, n * sizeof *map);
    return rc;
}

static int compact(ts_graph_stream *s, uint32_t ri, const ts_rank *full, ts_error *err)
{
    return compact_rank(s->g, ri, full, &s->members[ri], s->extra_keep, s->keep_ids, &s->ranks[ri], err);
}

/* ---- folding replicas ---- */

static uint64_t mix(uint64_t h, uint64_t v) { return ts__hash_u64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6))); }

/* The shape of rank ri's local graph (rows from node0, edges from edge0,
 * lanes from lane0), and its span and busy time. Names hash by content. */
static fold_group shape_of(const ts_graph *g, const ts_rank *r, uint32_t node0, uint32_t edge0, uint32_t lane0,
                           uint32_t n_members)
{
    fold_group f = {.n_nodes = g->nodes.n - node0, .n_edges = g->edges.n - edge0, .n_members = n_members};
    uint64_t h = mix(mix(f.n_nodes, f.n_edges), g->n_lanes - lane0);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t n = node0; n < g->nodes.n; n++) {
        uint32_t sl = g->nodes.slice[n];
        const char *name = sl < r->slices.n ? ts__rank_str(r, r->slices.name[sl]) : "";
        h = mix(mix(mix(h, g->nodes.kind[n]), g->nodes.lane[n] - lane0), ts__hash_bytes(name, strlen(name)));
        h = mix(h, g->nodes.coll[n] != TS_NONE32);
        f.busy_ns += g->nodes.dur_ns[n];
        if (g->nodes.start_ns[n] < lo) lo = g->nodes.start_ns[n];
        if (g->nodes.start_ns[n] + g->nodes.dur_ns[n] > hi) hi = g->nodes.start_ns[n] + g->nodes.dur_ns[n];
    }
    for (uint32_t e = edge0; e < g->edges.n; e++)
        h = mix(mix(mix(h, g->edges.src[e] - node0), g->edges.dst[e] - node0),
                (uint64_t)g->edges.kind[e] << 8 | g->edges.flags[e]);
    f.shape = h;
    f.span_ns = hi > lo ? hi - lo : 0;
    return f;
}

static bool near(int64_t a, int64_t b, double tol)
{
    int64_t d = a > b ? a - b : b - a, m = a > b ? a : b;
    return (double)d <= tol * (double)m;
}

static uint32_t find_group(const ts_graph_stream *s, const fold_group *f)
{
    for (uint32_t i = 0; i < s->n_groups; i++) {
        const fold_group *q = &s->groups[i];
        if (q->shape == f->shape && q->n_nodes == f->n_nodes && q->n_edges == f->n_edges &&
            q->n_members == f->n_members && near(q->span_ns, f->span_ns, s->fold_tol) &&
            near(q->busy_ns, f->busy_ns, s->fold_tol))
            return i;
    }
    return TS_NONE32;
}

/* Rank ri replicates group q's representative: keep only its collective
 * members (on their lanes, with their slices and measured times); once
 * matched, each follows the representative's member of its instance
 * (replica_edges). */
static int fold_into(ts_graph_stream *s, uint32_t ri, uint32_t edge0, uint32_t lane0, const fold_group *q)
{
    ts_graph *g = s->g;
    ts_graph_members *m = &s->members[ri];
    uint32_t node0 = g->rank_first_node[ri];
    size_t bytes = (size_t)m->n * (sizeof(uint32_t) * 3 + 1 + 16) + 1;
    uint8_t *buf = ts__malloc(bytes);
    if (!buf) return TS_ENOMEM;
    int64_t *t = (int64_t *)(void *)buf;   /* start, duration per member; then the 4- and 1-byte columns */
    uint32_t *lane = (uint32_t *)(void *)(t + 2 * (size_t)m->n), *slice = lane + m->n;
    int32_t *iter = (int32_t *)(void *)(slice + m->n);
    uint8_t *kind = (uint8_t *)(iter + m->n);
    for (uint32_t k = 0; k < m->n; k++) {
        uint32_t n = m->node[k];
        lane[k] = g->nodes.lane[n] - lane0;
        slice[k] = g->nodes.slice[n];
        t[2 * k] = g->nodes.start_ns[n];
        t[2 * k + 1] = g->nodes.dur_ns[n];
        kind[k] = g->nodes.kind[n];
        iter[k] = g->nodes.iteration[n];
    }
    const ts_lane *lanes = g->lanes;
    uint32_t n_lanes = g->n_lanes - lane0;
    ts_lane *keep_lanes = ts__malloc((size_t)n_lanes * sizeof *keep_lanes + 1);
    if (!keep_lanes) { ts__free(buf, bytes); return TS_ENOMEM; }
    memcpy(keep_lanes, lanes + lane0, (size_t)n_lanes * sizeof *keep_lanes);
    g->nodes.n = node0;   /* drop the local graph: nodes, edges and lanes were the last appended */
    g->edges.n = edge0;
    g->n_lanes = lane0;
    for (uint32_t l = 0; l < n_lanes; l++)
        ts__graph_add_lane(g, keep_lanes[l].rank, keep_lanes[l].on_gpu, keep_lanes[l].track);
    for (uint32_t k = 0; k < m->n; k++) {
        uint32_t n = ts__graph_add_node(g, (uint16_t)ri, (ts_node_kind)kind[k], lane0 + lane[k], slice[k], t[2 * k],
                                        t[2 * k + 1]);
        if (n == TS_NONE32) break;
        g->nodes.iteration[n] = iter[k];
        m->node[k] = n;
    }
    ts__free(keep_lanes, (size_t)n_lanes * sizeof *keep_lanes + 1);
    ts__free(buf, bytes);
    g->replica_of[ri] = q->rep;
    g->n_folded++;
    return g->oom ? TS_ENOMEM : TS_OK;
}

/* After matching: a folded rank's member starts after its representative's
 * member of the same instance (its measured lag is the edge's gap, set by
 * finish), so it arrives as late as it did, relative to the representative,
 * whatever a what-if does to the representative. A member whose
 * representative has none in its instance stays a source (its measured
 * start). O(members) with one scratch slot per rank. */
static int replica_edges(ts_graph *g)
{
    uint32_t *rep_member = ts__malloc((size_t)g->n_ranks * sizeof *rep_member + 4);
    if (!rep_member) return TS_ENOMEM;
    memset(rep_member, 0xff, (size_t)g->n_ranks * sizeof *rep_member);
    for (uint32_t c = 0; c < g->n_colls; c++) {
        const uint32_t *mem = g->coll_members + g->colls[c].first_member;
        uint32_t n = g->colls[c].n_members;
        for (uint32_t k = 0; k < n; k++) {
            uint16_t r = g->nodes.rank[mem[k]];
            if (g->replica_of[r] == r) rep_member[r] = mem[k];
        }
        for (uint32_t k = 0; k < n; k++) {
            uint16_t r = g->nodes.rank[mem[k]];
            uint32_t rep = g->replica_of[r];
            if (rep != r && rep_member[rep] != TS_NONE32) ts__graph_add_edge(g, rep_member[rep], mem[k], TS_EDGE_REPLICA, 0);
        }
        for (uint32_t k = 0; k < n; k++) rep_member[g->nodes.rank[mem[k]]] = TS_NONE32;
    }
    ts__free(rep_member, (size_t)g->n_ranks * sizeof *rep_member + 4);
    return g->oom ? TS_ENOMEM : TS_OK;
}

/* After rank ri's local pass: fold it into a group, or start one. Ranks
 * with nonblocking MPI requests are kept whole (their completions are in a
 * map keyed by node row). */
static int fold(ts_graph_stream *s, uint32_t ri, const ts_rank *r, uint32_t edge0, uint32_t lane0, uint32_t mpi0)
{
    ts_graph *g = s->g;
    g->replica_of[ri] = ri;
    fold_group f = shape_of(g, r, g->rank_first_node[ri], edge0, lane0, s->members[ri].n);
    uint32_t q = g->mpi_done.n == mpi0 ? find_group(s, &f) : TS_NONE32;
    if (q != TS_NONE32) return fold_into(s, ri, edge0, lane0, &s->groups[q]);
    if (ts__grow((void **)&s->groups, &s->cap_groups, sizeof *s->groups, s->n_groups + 1)) return TS_ENOMEM;
    f.rep = ri;
    s->groups[s->n_groups++] = f;
    return TS_OK;
}

/* ---- the local graphs' warnings, in the files' order ---- */

/* Rank ri's local pass warns into a list of its own (g's lines set aside). */
static void warn_begin(ts_graph *g, rank_warnings *held)
{
    held->line = g->warnings;
    held->n = g->n_warnings;
    held->cap = g->cap_warnings;
    g->warnings = NULL;
    g->n_warnings = g->cap_warnings = 0;
}

static void warn_end(ts_graph *g, rank_warnings *held, rank_warnings *mine, uint32_t pos)
{
    mine->line = g->warnings;
    mine->n = g->n_warnings;
    mine->cap = g->cap_warnings;
    mine->pos = pos;
    g->warnings = held->line;
    g->n_warnings = held->n;
    g->cap_warnings = held->cap;
}

static int cmp_pos(const void *a, const void *b)
{
    const rank_warnings *x = *(rank_warnings *const *)a, *y = *(rank_warnings *const *)b;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Every rank's lines, ranks in the files' order, through ts__graph_warn (its
 * bound applies as if they had been written one rank after another). */
static int warn_merge(ts_graph_stream *s)
{
    rank_warnings **by = ts__malloc((size_t)s->n_ranks * sizeof *by + 1);
    if (!by) return TS_ENOMEM;
    for (uint32_t r = 0; r < s->n_ranks; r++) by[r] = &s->warn[r];
    qsort(by, s->n_ranks, sizeof *by, cmp_pos);
    for (uint32_t r = 0; r < s->n_ranks; r++)
        for (uint32_t k = 0; k < by[r]->n; k++) ts__graph_warn(s->g, "%s", by[r]->line[k]);
    ts__free(by, (size_t)s->n_ranks * sizeof *by + 1);
    return s->g->oom ? TS_ENOMEM : TS_OK;
}

/* ---- adding ranks ---- */

int ts__graph_stream_add(ts_graph_stream *s, ts_rank *full, ts_error *err)
{
    return ts__graph_stream_add_at(s, full, s->n_added, err);
}

int ts__graph_stream_add_at(ts_graph_stream *s, ts_rank *full, uint32_t pos, ts_error *err)
{
    ts_graph *g = s->g;
    uint32_t ri = s->n_added;
    int rc = TS_OK;
    if (ri >= s->n_ranks) {
        rc = ts__error(err, TS_EINVAL, "%s: more ranks than announced (%u)", full->path, s->n_ranks);
        ts__rank_destroy(full);
        return rc;
    }
    uint32_t edge0 = g->edges.n, lane0 = g->n_lanes, mpi0 = g->mpi_done.n;
    s->lane_first[ri] = lane0;
    g->rank_model[ri] = ri;
    g->rank_number[ri] = full->rank;
    g->rank_first_node[ri] = g->nodes.n;
    rank_warnings held;
    warn_begin(g, &held);
    rc = ts__graph_local(g, (uint16_t)ri, full, &s->members[ri], err);
    warn_end(g, &held, &s->warn[ri], pos);
    if (rc == TS_OK && g->replica_of) rc = fold(s, ri, full, edge0, lane0, mpi0);
    if (rc == TS_ENOMEM && err && !err->msg[0]) ts__error(err, rc, "%s: out of memory building its graph", full->path);
    g->rank_first_node[ri + 1] = g->nodes.n;
    s->lane_first[ri + 1] = g->n_lanes;
    if (rc == TS_OK) rc = compact(s, ri, full, err);
    ts__rank_destroy(full);
    if (rc == TS_OK) s->n_added++;
    return rc;
}

/* ---- ranks condensed elsewhere ---- */

void ts__graph_part_free(ts_graph_part *p)
{
    if (!p) return;
    ts_graph_destroy(p->g);
    ts__free(p->members.node, p->members.cap * sizeof *p->members.node);
    ts__rank_destroy(p->rank);
    ts__free(p, sizeof *p);
}

const char *ts__graph_part_path(const ts_graph_part *p) { return p->rank ? p->rank->path : "?"; }

/* add_at's local pass and compaction, into a graph of this one rank. */
int ts__graph_part_build(ts_rank *full, const ts_graph_options *opt, ts_graph_part **out, ts_error *err)
{
    *out = NULL;
    ts_graph_part *p = ts__calloc(1, sizeof *p);
    int rc = p && (p->g = ts__graph_alloc(NULL, 1, opt)) ? TS_OK : TS_ENOMEM;
    if (rc == TS_OK) {
        p->g->rank_number[0] = full->rank;
        rc = ts__graph_local(p->g, 0, full, &p->members, err);
        p->g->rank_first_node[1] = p->g->nodes.n;
    }
    if (rc == TS_OK) rc = compact_rank(p->g, 0, full, &p->members, NULL, false, &p->rank, err);
    if (rc == TS_ENOMEM && (!err || !err->msg[0])) ts__error(err, rc, "%s: out of memory building its graph", full->path);
    ts__rank_destroy(full);
    if (rc) { ts__graph_part_free(p); return rc; }
    *out = p;
    return TS_OK;
}

/* p's rows after g's, as graph rank ri: lanes, nodes (rank and lane
 * shifted), edges (ends shifted), completions, counts. */
static int append_rows(ts_graph *g, uint32_t ri, const ts_graph *q)
{
    uint32_t node0 = g->nodes.n, lane0 = g->n_lanes, edge0 = g->edges.n;
    if (ts__graph_reserve(g, (size_t)node0 + q->nodes.n, (size_t)edge0 + q->edges.n)) return TS_ENOMEM;
    for (uint32_t l = 0; l < q->n_lanes; l++)
        if (ts__graph_add_lane(g, (uint16_t)ri, q->lanes[l].on_gpu, q->lanes[l].track) == TS_NONE32) return TS_ENOMEM;
    ts_col_ref to[16], from[16];
    size_t nc = ts__graph_node_cols(&g->nodes, to);
    ts__graph_node_cols((ts_graph_nodes *)&q->nodes, from);
    for (size_t c = 0; c < nc && q->nodes.n; c++)
        memcpy((char *)*to[c].p + (size_t)node0 * to[c].elem, *from[c].p, (size_t)q->nodes.n * to[c].elem);
    for (uint32_t n = node0; n < node0 + q->nodes.n; n++) {
        g->nodes.rank[n] = (uint16_t)ri;
        g->nodes.lane[n] += lane0;
    }
    g->nodes.n += q->nodes.n;
    ts_graph_edges *e = &g->edges;
    for (uint32_t k = 0; k < q->edges.n; k++) {
        e->src[edge0 + k] = q->edges.src[k] + node0;
        e->dst[edge0 + k] = q->edges.dst[k] + node0;
    }
    if (q->edges.n) {
        memcpy(e->kind + edge0, q->edges.kind, q->edges.n);
        memcpy(e->flags + edge0, q->edges.flags, q->edges.n);
        memcpy(e->gap_ns + edge0, q->edges.gap_ns, (size_t)q->edges.n * sizeof *e->gap_ns);
    }
    e->n += q->edges.n;
    const ts_map64 *md = &q->mpi_done;
    for (uint32_t i = 0; i < md->n_slots; i++)
        if (md->keys[i] != UINT64_MAX && ts__map64_put(&g->mpi_done, md->keys[i] + node0, md->vals[i] + node0))
            return TS_ENOMEM;
    g->n_stream_waits += q->n_stream_waits;
    g->n_stream_waits_followed += q->n_stream_waits_followed;
    g->n_stream_waits_idle += q->n_stream_waits_idle;
    g->n_mpi_requests_followed += q->n_mpi_requests_followed;
    return TS_OK;
}

int ts__graph_stream_add_part_at(ts_graph_stream *s, ts_graph_part *p, uint32_t pos, ts_error *err)
{
    ts_graph *g = s->g;
    uint32_t ri = s->n_added;
    int rc = TS_OK;
    if (ri >= s->n_ranks) rc = ts__error(err, TS_EINVAL, "%s: more ranks than announced (%u)", p->rank->path, s->n_ranks);
    else if (g->replica_of || s->extra_keep || s->keep_ids)
        rc = ts__error(err, TS_EINVAL, "%s: a rank condensed elsewhere is neither folded nor kept larger", p->rank->path);
    if (rc == TS_OK) {
        s->lane_first[ri] = g->n_lanes;
        g->rank_model[ri] = ri;
        g->rank_number[ri] = p->rank->rank;
        g->rank_first_node[ri] = g->nodes.n;
        if ((rc = append_rows(g, ri, p->g)) != TS_OK)
            ts__error(err, rc, "%s: out of memory adding its graph", p->rank->path);
        g->rank_first_node[ri + 1] = g->nodes.n;
        s->lane_first[ri + 1] = g->n_lanes;
    }
    if (rc == TS_OK) {   /* what add_at keeps: the members (shifted), the warnings, the compact rank */
        ts_graph_members *m = &s->members[ri];
        *m = p->members;
        memset(&p->members, 0, sizeof p->members);
        for (uint32_t k = 0; k < m->n; k++) m->node[k] += g->rank_first_node[ri];
        s->warn[ri] = (rank_warnings){.line = p->g->warnings, .n = p->g->n_warnings, .cap = p->g->cap_warnings,
                                      .pos = pos};
        p->g->warnings = NULL;
        p->g->n_warnings = p->g->cap_warnings = 0;
        s->ranks[ri] = p->rank;
        p->rank = NULL;
        s->n_added++;
    }
    ts__graph_part_free(p);
    return rc;
}

/* t holds the ranks sorted by number (ts__job_create); the graph's ranks
 * are in the order they were added: where that differs (files named
 * otherwise than by rank), move the graph's ranks to t's order. */
static int in_rank_order(ts_graph_stream *s, const ts_job *t)
{
    uint32_t n = s->n_ranks, *pos = ts__malloc((size_t)n * sizeof *pos + 1);
    if (!pos) return TS_ENOMEM;
    bool moved = false;
    for (uint32_t r = 0; r < n; r++) {   /* numbers are unique now: a binary search finds each */
        uint32_t lo = 0, hi = n;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (t->ranks[mid]->rank < s->ranks[r]->rank) lo = mid + 1;
            else hi = mid;
        }
        pos[r] = lo;
        moved |= lo != r;
    }
    int rc = moved ? ts__graph_reorder_ranks(s->g, pos, s->lane_first, s->members) : TS_OK;
    ts__free(pos, (size_t)n * sizeof *pos + 1);
    return rc;
}

int ts__graph_stream_finish(ts_graph_stream *s, ts_job **trace, ts_graph **graph, ts_error *err)
{
    return ts__graph_stream_finish_soft(s, trace, graph, NULL, err);
}

int ts__graph_stream_finish_soft(ts_graph_stream *s, ts_job **trace, ts_graph **graph, ts_error *graph_err,
                                 ts_error *err)
{
    *trace = NULL;
    *graph = NULL;
    if (s->n_added != s->n_ranks) {
        int rc = ts__error(err, TS_EINVAL, "graph stream: %u of %u ranks added", s->n_added, s->n_ranks);
        ts__graph_stream_abort(s);
        return rc;
    }
    if (s->note) {   /* on the first file's rank, as a whole load leaves it */
        uint32_t first = 0;
        for (uint32_t r = 1; r < s->n_ranks; r++)
            if (s->warn[r].pos < s->warn[first].pos) first = r;
        ts__rank_warn(s->ranks[first], TS_WARN_OTHER, "%s", s->note);
    }
    ts_job *t = NULL;
    int rc = ts__job_create(s->ranks, s->n_ranks, &t, err);   /* owns the ranks from here, on failure too */
    ts_graph *g = s->g;
    if (rc == TS_OK) rc = in_rank_order(s, t);
    memset(s->ranks, 0, s->n_ranks * sizeof *s->ranks);
    if (rc == TS_ENOMEM) ts__error(err, rc, "out of memory putting %u ranks in order", s->n_ranks);
    bool joining = rc == TS_OK;   /* failures from here are the graph's */
    if (rc == TS_OK && (rc = warn_merge(s)) != TS_OK) ts__error(err, rc, "out of memory");
    if (rc == TS_OK) {
        g->trace = t;
        rc = ts__graph_join_match(g, s->members, err);
    }
    if (rc == TS_OK && g->replica_of && (rc = replica_edges(g)) != TS_OK)
        ts__error(err, rc, "out of memory folding replicas");
    if (rc == TS_OK) rc = ts__graph_join_finish(g, err);
    if (rc == TS_OK) s->g = NULL;
    ts__graph_stream_abort(s);
    if (rc && joining && graph_err && rc != TS_ENOMEM) {   /* the trace stands without its graph */
        if (err) *graph_err = *err;
        else ts__error(graph_err, rc, "%s", ts_strerror(rc));
        ts__error_clear(err);
        *trace = t;
        return TS_OK;
    }
    if (rc) { ts_job_destroy(t); return rc; }
    *trace = t;
    *graph = g;
    return TS_OK;
}
