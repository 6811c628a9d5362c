/* part.c - a rank condensed where it was read (graph/stream.h's
 * ts_graph_part) as bytes, and back.
 *
 * For: the other processes of a distributed run, which send process 0 each
 * rank of their share as its local graph and compact rank (what process 0's
 * graph stream keeps of a rank), not the whole rank (docs/distributed.md).
 * Not for: files on disk or other builds (this machine's byte order; the
 * magic names the format version and the reader refuses another), nor a
 * graph past its local pass.
 *
 * Layout: magic; u64 length + the compact rank (trace/serial.c); lanes
 * (u32 n; per lane u8 on_gpu, u32 track, u32 nodes: a local pass makes a
 * lane's nodes one run of rows, lanes in order); nodes (u32 n; kind u8[n],
 * slice u32[n], iteration i32[n]: a node's times are its slice's, so they
 * are not sent); edges (u32 n; src u32[n], dst u32[n], kind u8[n], flags
 * u8[n]); members (u32 n; u32[n]); nonblocking MPI completions (u32 n;
 * (call, wait) u32 pairs, calls ascending); the 4 counts; the warnings (u32
 * n; strings). One spelling per part: a part read back writes the same bytes.
 * The reader checks every row id, kind and range, so damaged bytes are an
 * error naming the byte, never an out-of-bounds read.
 */
#include "graph/build.h"
#include "graph/stream.h"

#include <stdlib.h>

#define PART_MAGIC "TSPART01"
#define PART_MAX_WARNINGS 65   /* ts__graph_warn's bound, with its "(more warnings omitted)" */

/* ---- writer ---- */
static void put(ts_buf *b, const void *p, size_t n) { if (n) ts__buf_add(b, (const char *)p, n); }
static void put_u8(ts_buf *b, uint8_t v) { put(b, &v, 1); }
static void put_u32(ts_buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(ts_buf *b, uint64_t v) { put(b, &v, 8); }

/* The form a local pass leaves (ts__graph_local): every node a slice of the
 * compact rank with the slice's times, lanes' nodes in runs, no barrier,
 * no gap, no collective yet. */
static bool local_form(const ts_graph *g, const ts_rank *r)
{
    uint32_t lane = 0;
    for (uint32_t n = 0; n < g->nodes.n; n++) {
        uint32_t s = g->nodes.slice[n];
        if (g->nodes.lane[n] < lane || g->nodes.lane[n] >= g->n_lanes || s >= r->slices.n ||
            g->nodes.start_ns[n] != r->slices.ts_ns[s] || g->nodes.dur_ns[n] != r->slices.dur_ns[s] ||
            g->nodes.waits[n] || g->nodes.coll[n] != TS_NONE32 || g->nodes.rank[n] != 0)
            return false;
        lane = g->nodes.lane[n];
    }
    for (uint32_t e = 0; e < g->edges.n; e++)
        if (g->edges.gap_ns[e]) return false;
    return g->n_colls == 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The completions as (call << 32 | wait), ascending: one spelling whatever
 * the map's slot order. */
static int put_mpi_done(ts_buf *b, const ts_map64 *m)
{
    uint64_t *kv = ts__malloc((size_t)m->n * sizeof *kv + 8);
    if (!kv) return TS_ENOMEM;
    uint32_t k = 0;
    for (uint32_t i = 0; i < m->n_slots; i++)
        if (m->keys[i] != UINT64_MAX) kv[k++] = m->keys[i] << 32 | (uint32_t)m->vals[i];
    qsort(kv, k, sizeof *kv, cmp_u64);
    put_u32(b, k);
    for (uint32_t i = 0; i < k; i++) { put_u32(b, (uint32_t)(kv[i] >> 32)); put_u32(b, (uint32_t)kv[i]); }
    ts__free(kv, (size_t)m->n * sizeof *kv + 8);
    return TS_OK;
}

int ts__graph_part_serialize(const ts_graph_part *p, ts_buf *b)
{
    const ts_graph *g = p->g;
    if (!local_form(g, p->rank)) return TS_EINVAL;
    put(b, PART_MAGIC, 8);
    size_t at = b->len;
    put_u64(b, 0);
    int rc = ts__rank_serialize(p->rank, b);
    if (rc) return rc;
    if (!b->oom) { uint64_t len = b->len - at - 8; memcpy(b->s + at, &len, 8); }
    put_u32(b, g->n_lanes);
    for (uint32_t l = 0, n = 0; l < g->n_lanes; l++) {
        uint32_t first = n;
        while (n < g->nodes.n && g->nodes.lane[n] == l) n++;
        put_u8(b, g->lanes[l].on_gpu); put_u32(b, g->lanes[l].track); put_u32(b, n - first);
    }
    put_u32(b, g->nodes.n);
    put(b, g->nodes.kind, g->nodes.n);
    put(b, g->nodes.slice, (size_t)g->nodes.n * 4);
    put(b, g->nodes.iteration, (size_t)g->nodes.n * 4);
    put_u32(b, g->edges.n);
    put(b, g->edges.src, (size_t)g->edges.n * 4);
    put(b, g->edges.dst, (size_t)g->edges.n * 4);
    put(b, g->edges.kind, g->edges.n);
    put(b, g->edges.flags, g->edges.n);
    put_u32(b, p->members.n);
    put(b, p->members.node, (size_t)p->members.n * 4);
    if ((rc = put_mpi_done(b, &g->mpi_done)) != TS_OK) return rc;
    put_u32(b, g->n_stream_waits); put_u32(b, g->n_stream_waits_followed); put_u32(b, g->n_stream_waits_idle);
    put_u32(b, g->n_mpi_requests_followed);
    put_u32(b, g->n_warnings);
    for (uint32_t i = 0; i < g->n_warnings; i++) {
        put_u32(b, (uint32_t)strlen(g->warnings[i]));
        put(b, g->warnings[i], strlen(g->warnings[i]));
    }
    return b->oom ? TS_ENOMEM : TS_OK;
}

/* ---- reader ---- */
typedef struct rd {
    const uint8_t *p;
    size_t         n, at;
    const char    *what;
    ts_error      *err;
    int            rc;     /* first failure; later reads are no-ops */
} rd;

static int rd_fail(rd *d, int status, size_t at, const char *why)
{
    if (d->rc == TS_OK) d->rc = ts__error(d->err, status, "%s: byte %zu: %s", d->what, at, why);
    return d->rc;
}

static bool get(rd *d, void *out, size_t n)
{
    if (d->rc) return false;
    if (n == 0) return true;   /* out may be a table's NULL column */
    if (n > d->n - d->at) { rd_fail(d, TS_EFORMAT, d->at, "the condensed rank's data ends early"); return false; }
    memcpy(out, d->p + d->at, n);
    d->at += n;
    return true;
}
static uint32_t get_u32(rd *d) { uint32_t v = 0; get(d, &v, 4); return v; }

/* A count of rows of `row` bytes each that the bytes left can hold. */
static uint32_t get_count(rd *d, size_t row)
{
    size_t at = d->at;
    uint32_t n = get_u32(d);
    if (!d->rc && (uint64_t)n * row > d->n - d->at) rd_fail(d, TS_EFORMAT, at, "a table runs past the end of the data");
    return d->rc ? 0 : n;
}

static bool gpu_kind(uint8_t k)
{
    return k == TS_NODE_KERNEL || k == TS_NODE_MEMCPY || k == TS_NODE_MEMSET || k == TS_NODE_COMM_KERNEL;
}

/* Lanes and nodes: each node a slice of the lane's track, of the lane's
 * side (GPU or CPU), with its slice's times. */
static void read_nodes(rd *d, ts_graph *g, const ts_rank *r)
{
    uint32_t n_lanes = get_count(d, 9), *count = ts__calloc((size_t)n_lanes + 1, sizeof *count);
    if (!count) { rd_fail(d, TS_ENOMEM, d->at, "out of memory"); return; }
    uint64_t total = 0;
    for (uint32_t l = 0; l < n_lanes && !d->rc; l++) {
        size_t at = d->at;
        uint8_t gpu = 2;
        uint32_t track = TS_NONE32;
        get(d, &gpu, 1); get(d, &track, 4); get(d, &count[l], 4);
        total += count[l];
        if (!d->rc && (gpu > 1 || track >= r->n_tracks)) rd_fail(d, TS_EFORMAT, at, "a lane of no known side or track");
        if (!d->rc && ts__graph_add_lane(g, 0, gpu, track) == TS_NONE32) rd_fail(d, TS_ENOMEM, at, "out of memory");
    }
    size_t at = d->at;
    uint32_t n = get_count(d, 9);
    if (!d->rc && total != n) rd_fail(d, TS_EFORMAT, at, "lanes that do not hold the nodes");
    if (!d->rc && ts__graph_reserve(g, n, 0)) rd_fail(d, TS_ENOMEM, at, "out of memory");
    size_t kinds = d->at;
    if (!d->rc) {
        get(d, g->nodes.kind, n); get(d, g->nodes.slice, (size_t)n * 4); get(d, g->nodes.iteration, (size_t)n * 4);
    }
    for (uint32_t i = 0, l = 0, left = n_lanes ? count[0] : 0; i < n && !d->rc; i++) {
        while (left == 0) left = count[++l];
        left--;
        uint32_t s = g->nodes.slice[i];
        int32_t it = g->nodes.iteration[i];
        if (g->nodes.kind[i] >= TS_NODE_BARRIER || gpu_kind(g->nodes.kind[i]) != (g->lanes[l].on_gpu == 1) ||
            s >= r->slices.n || r->slices.track[s] != g->lanes[l].track || it < -1 || it >= (int32_t)r->n_iterations)
            rd_fail(d, TS_EFORMAT, kinds + i, "a node of no known kind, slice, lane or iteration");
        g->nodes.rank[i] = 0;
        g->nodes.lane[i] = l;
        g->nodes.start_ns[i] = d->rc ? 0 : r->slices.ts_ns[s];
        g->nodes.dur_ns[i] = d->rc ? 0 : r->slices.dur_ns[s];
        g->nodes.waits[i] = 0;
        g->nodes.coll[i] = TS_NONE32;
        g->nodes.n = i + 1;
    }
    ts__free(count, ((size_t)n_lanes + 1) * sizeof *count);
}

static bool local_edge(uint8_t k)
{
    return k < TS_EDGE_KIND_COUNT && k != TS_EDGE_COLL_ENTER && k != TS_EDGE_COLL_EXIT && k != TS_EDGE_REPLICA;
}

static void read_edges(rd *d, ts_graph *g)
{
    size_t at = d->at;
    uint32_t n = get_count(d, 10), nn = g->nodes.n;
    if (!d->rc && ts__graph_reserve(g, nn, n)) rd_fail(d, TS_ENOMEM, at, "out of memory");
    size_t first = d->at;
    if (!d->rc) {
        ts_graph_edges *e = &g->edges;
        get(d, e->src, (size_t)n * 4); get(d, e->dst, (size_t)n * 4); get(d, e->kind, n); get(d, e->flags, n);
        if (n) memset(e->gap_ns, 0, (size_t)n * sizeof *e->gap_ns);
    }
    for (uint32_t k = 0; k < n && !d->rc; k++) {
        ts_graph_edges *e = &g->edges;
        if (e->src[k] >= nn || e->dst[k] >= nn || e->src[k] == e->dst[k] || !local_edge(e->kind[k]) ||
            e->flags[k] > (TS_EDGE_FROM_END | TS_EDGE_TO_END))
            rd_fail(d, TS_EFORMAT, first + 4 * (size_t)k, "an edge of no known kind or between nodes that do not exist");
        else e->n = k + 1;
    }
}

static void read_members(rd *d, ts_graph_part *p)
{
    size_t at = d->at;
    uint32_t n = get_count(d, 4);
    if (d->rc || n == 0) return;
    if (ts__grow((void **)&p->members.node, &p->members.cap, sizeof *p->members.node, n)) {
        rd_fail(d, TS_ENOMEM, at, "out of memory");
        return;
    }
    at = d->at;
    get(d, p->members.node, (size_t)n * 4);
    const ts_graph *g = p->g;
    for (uint32_t k = 0; k < n && !d->rc; k++) {
        uint32_t v = p->members.node[k];
        if (v >= g->nodes.n || (g->nodes.kind[v] != TS_NODE_COMM_KERNEL && g->nodes.kind[v] != TS_NODE_COMM_CPU))
            rd_fail(d, TS_EFORMAT, at + 4 * (size_t)k, "a collective member that is no communication node");
        else p->members.n = k + 1;
    }
}

/* Completions, calls ascending; then the counts, which cannot exceed the
 * calls and completions there are. */
static void read_mpi(rd *d, ts_graph *g)
{
    uint32_t n = get_count(d, 8), nn = g->nodes.n;
    int64_t last = -1;
    for (uint32_t k = 0; k < n && !d->rc; k++) {
        size_t at = d->at;
        uint32_t call = get_u32(d), done = get_u32(d);
        if (d->rc) return;
        if (call >= nn || done >= nn || call == done || (int64_t)call <= last) {
            rd_fail(d, TS_EFORMAT, at, "a completion of calls that do not exist or are given twice");
            return;
        }
        last = call;
        if (ts__map64_put(&g->mpi_done, call, done)) rd_fail(d, TS_ENOMEM, at, "out of memory");
    }
    size_t at = d->at;
    g->n_stream_waits = get_u32(d);
    g->n_stream_waits_followed = get_u32(d);
    g->n_stream_waits_idle = get_u32(d);
    g->n_mpi_requests_followed = get_u32(d);
    if (!d->rc && ((uint64_t)g->n_stream_waits_followed + g->n_stream_waits_idle > g->n_stream_waits ||
                   g->n_stream_waits > nn || g->n_mpi_requests_followed > nn))
        rd_fail(d, TS_EFORMAT, at, "counts the nodes cannot hold");
}

/* The local pass's warning lines: at most ts__graph_warn's bound, each a C
 * string shorter than its line buffer. */
static void read_warnings(rd *d, ts_graph *g)
{
    size_t at = d->at;
    uint32_t n = get_count(d, 4);
    if (!d->rc && n > PART_MAX_WARNINGS) rd_fail(d, TS_EFORMAT, at, "more warning lines than a local pass gives");
    for (uint32_t k = 0; k < n && !d->rc; k++) {
        at = d->at;
        uint32_t len = get_u32(d);
        if (d->rc) return;
        if (len >= 512 || len > d->n - d->at || memchr(d->p + d->at, 0, len)) {
            rd_fail(d, TS_EFORMAT, at, "a warning line too long, cut short or with a NUL byte inside");
            return;
        }
        char *s = ts__malloc((size_t)len + 1);
        if (!s || ts__grow((void **)&g->warnings, &g->cap_warnings, sizeof *g->warnings, g->n_warnings + 1)) {
            if (s) ts__free(s, (size_t)len + 1);
            rd_fail(d, TS_ENOMEM, at, "out of memory");
            return;
        }
        memcpy(s, d->p + d->at, len);
        s[len] = 0;
        d->at += len;
        g->warnings[g->n_warnings++] = s;
    }
}

int ts__graph_part_deserialize(const void *bytes, size_t n, const char *what, ts_graph_part **out, ts_error *err)
{
    *out = NULL;
    if (err) { err->status = TS_OK; err->msg[0] = 0; }
    rd d = {.p = bytes, .n = n, .what = what, .err = err};
    uint64_t len = 0;
    if (n < 8 || memcmp(bytes, PART_MAGIC, 8))
        return rd_fail(&d, TS_EFORMAT, 0, "not a condensed rank written by this build of trainscope");
    d.at = 8;
    if (!get(&d, &len, 8)) return d.rc;
    if (len > d.n - d.at) return rd_fail(&d, TS_EFORMAT, 8, "the rank runs past the end of the data");
    ts_graph_part *p = ts__calloc(1, sizeof *p);
    if (!p || !(p->g = ts__graph_alloc(NULL, 1, NULL))) {
        ts__graph_part_free(p);
        return ts__error(err, TS_ENOMEM, "%s: out of memory", what);
    }
    char rwhat[sizeof err->msg / 2];
    snprintf(rwhat, sizeof rwhat, "%s, its rank at byte 16", what);
    d.rc = ts__rank_deserialize(d.p + d.at, (size_t)len, rwhat, &p->rank, err);
    d.at += (size_t)len;
    if (!d.rc) {
        p->g->rank_number[0] = p->rank->rank;
        read_nodes(&d, p->g, p->rank);
        read_edges(&d, p->g);
        read_members(&d, p);
        read_mpi(&d, p->g);
        read_warnings(&d, p->g);
    }
    if (!d.rc && d.at != d.n) rd_fail(&d, TS_EFORMAT, d.at, "bytes after the condensed rank's data");
    if (!d.rc) p->g->rank_first_node[1] = p->g->nodes.n;
    if (d.rc) { ts__graph_part_free(p); return d.rc; }
    *out = p;
    return TS_OK;
}
