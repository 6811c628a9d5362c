/* chakra.c - MLCommons Chakra execution traces (`*.et`: the protobuf stream
 * chakra's converters write) into the trace model: one file = one rank.
 *
 * Not for: PyTorch host execution traces (JSON without times) or Chakra's
 * JSON dumps. The schema is mlcommons/chakra's et_def.proto, read field by
 * field with protobuf.h's cursor (no generated code):
 *
 *   file        varint length + GlobalMetadata, then varint length + Node, repeated
 *   GlobalMetadata 1 version, 2 attr (AttributeProto)
 *   Node        1 id, 2 name, 3 type (NodeType), 4 ctrl_deps, 5 data_deps (packed uint64),
 *               6 start_time_micros, 7 duration_micros (the "runtime"), 10 attr
 *   AttributeProto 1 name, 3 double, 7/9/11/13 int32/int64/uint32/uint64, 15/17 sint32/64,
 *               27 bool, 29 string (list values are skipped)
 *
 * Model: a node with is_cpu_op (or, without it, a compute node) is a cpu_op
 * slice on thread (pid 0, attr tid); the others kernels on GPU stream (0,
 * attr tid). COMM_COLL nodes carry comm_type and comm_size as the collective
 * args the graph reads ("Collective name", "In msg nelems" with dtype Byte).
 * Times: the nodes' own start_time_micros when every timed node has one;
 * otherwise the graph is replayed as ASTRA-sim does: a node starts when all
 * its dependencies ended and its lane is free (ready nodes in file order).
 * ctrl_deps on a node earlier in the file (the enclosing op, the op that
 * launched a kernel) are followed in the replay as start-after-start: the
 * node starts once that one started. PyTorch-converted traces also point
 * them at later nodes (the sample has 2-cycles through them) and at ids no
 * node has: those are counted, not followed. A node without an id (proto3
 * leaves 0 out) is node 0. Data dependencies become
 * "chakra_dep" flows, bound by slice row once the model is finished (no
 * timestamped endpoints to sort; numbered, so only their ends are stored;
 * info's summary loads only count them), which the graph turns into "dep"
 * edges; a
 * node without runtime is an instant, and edges through it join its
 * predecessors to its successors.
 */
#include "ingest/ingest.h"
#include "ingest/icache.h"
#include "ingest/protobuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ck_node {
    uint64_t id;
    size_t   at;           /* byte offset of its message */
    uint32_t name, track;
    uint32_t dep0, n_deps; /* into ck.deps */
    uint32_t ctl0, n_ctl;  /* into ck.ctrl */
    uint32_t arg0, n_args;
    int64_t  dur_ns, start_ns;
    int64_t  tid, comm_type, comm_size;
    int32_t  type;
    int8_t   is_cpu;       /* -1 = no attribute */
    bool     has_start;
} ck_node;

/* Dependency ids as read: 32 bits each (the ids converters write), an id of
 * 2^32 - 1 or more as WIDE_ID with the id itself next in `wide`. */
typedef struct ck_ids {
    uint32_t *v;
    uint32_t  n, cap;
    uint64_t *wide;
    uint32_t  n_wide, cap_wide;
} ck_ids;

#define WIDE_ID UINT32_MAX

typedef struct ck {
    const char *path;
    ts_rank    *r;
    ts_error   *err;
    ck_node    *nodes;
    uint32_t    n, cap;
    ck_ids      deps;      /* data dependency ids; resolve_deps turns them into node rows in place (drow) */
    ck_ids      ctrl;      /* control dependency ids, then node rows in place (crow) */
    uint32_t    n_deps, n_ctrl;   /* deps.n, ctrl.n */
    uint64_t    ctrl_later, ctrl_absent; /* control dependencies on a node not before it in the file / on no node */
    uint32_t   *drow, *crow;   /* deps / ctrl as node rows (TS_NONE32 = absent, not followed): their buffers */
    uint32_t    k_id, k_type;  /* interned "chakra_id", "chakra_type" (0 = not yet) */
    ts_pb_input in;        /* the input; in.err: the first damaged bytes met */
    ts_icache  *icache;    /* names, attribute keys and string values */
    bool        summary;   /* a summary load: flows counted, not stored (ts__chakra_ingest) */
} ck;

static const char *const coll_names[] = {"all_reduce", "reduce", "all_gather", "gather", "scatter", "broadcast",
                                         "all_to_all", "reduce_scatter", "reduce_scatter_block", "barrier"};

static int fail_at(ck *c, size_t at, const char *what)
{
    return ts__error(c->err, TS_EFORMAT, "%s: byte %zu: %s", c->path, at, what);
}

static uint32_t intern_sub(ck *c, const ts_pb *s) { return ts__icache_intern(c->icache, c->r, (const char *)s->p, ts__pb_len(s)); }
static uint32_t intern(ck *c, const char *s) { return ts__rank_intern(c->r, s, strlen(s)); }

static bool name_is(const ts_pb *s, const char *want)
{
    size_t n = strlen(want);
    return ts__pb_len(s) == n && memcmp(s->p, want, n) == 0;
}

static int64_t zigzag(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

/* One AttributeProto: the attributes the model uses into the node, every
 * scalar one as an arg. */
static void attribute(ck *c, ts_pb a, ck_node *nd)
{
    ts_pb_field f;
    ts_pb key = {0};
    ts_arg_type ty = TS_ARG_NULL;
    uint64_t val = 0;
    while (ts__pb_next(&a, &f)) {
        if (f.num == 1 && f.wire == 2) { key = f.sub; continue; }
        if (f.wire == 0 && (f.num == 7 || f.num == 9)) { ty = TS_ARG_INT; val = f.num == 7 ? (uint64_t)(int64_t)(int32_t)f.u : f.u; }
        else if (f.wire == 0 && (f.num == 11 || f.num == 13)) { ty = TS_ARG_UINT; val = f.u; }
        else if (f.wire == 0 && (f.num == 15 || f.num == 17)) { ty = TS_ARG_INT; val = (uint64_t)zigzag(f.u); }
        else if (f.wire == 0 && f.num == 27) { ty = TS_ARG_BOOL; val = f.u != 0; }
        else if (f.wire == 1 && f.num == 3) { ty = TS_ARG_DOUBLE; val = f.u; }
        else if (f.wire == 2 && f.num == 29) { ty = TS_ARG_STR; val = intern_sub(c, &f.sub); }
    }
    if (!key.p || ty == TS_ARG_NULL) return;
    bool integral = ty == TS_ARG_INT || ty == TS_ARG_UINT || ty == TS_ARG_BOOL;
    if (integral && name_is(&key, "is_cpu_op")) nd->is_cpu = val != 0;
    else if (integral && name_is(&key, "tid")) nd->tid = (int64_t)val;
    else if (integral && name_is(&key, "comm_type")) nd->comm_type = (int64_t)val;
    else if (integral && name_is(&key, "comm_size")) nd->comm_size = (int64_t)val;
    ts__rank_add_arg(c->r, intern_sub(c, &key), ty, val);
}

static int add_id(ck_ids *v, uint64_t id)
{
    if (v->n == v->cap && ts__grow((void **)&v->v, &v->cap, sizeof *v->v, (size_t)v->n + 1)) return TS_ENOMEM;
    v->v[v->n++] = id < WIDE_ID ? (uint32_t)id : WIDE_ID;
    if (id < WIDE_ID) return TS_OK;
    if (v->n_wide == v->cap_wide && ts__grow((void **)&v->wide, &v->cap_wide, sizeof *v->wide, (size_t)v->n_wide + 1))
        return TS_ENOMEM;
    v->wide[v->n_wide++] = id;
    return TS_OK;
}

/* Packed (or, as older writers did, unpacked) uint64 dependency ids: data
 * dependencies (field 5) into c->deps, control ones (4) into c->ctrl. */
static int deps_field(ck *c, const ts_pb_field *f)
{
    ck_ids *v = f->num == 5 ? &c->deps : &c->ctrl;
    int rc = TS_OK;
    if (f->wire == 0) rc = add_id(v, f->u);
    if (f->wire != 2 || rc) return rc;
    /* at most one id per byte: room for all, then a loop without checks
     * but the bytes' end (most ids here take 1-3 bytes) */
    ts_pb p = f->sub;
    size_t room = ts__pb_len(&p);
    if (room == 0) return TS_OK;
    if ((size_t)v->n + room > UINT32_MAX - 1) return TS_ENOMEM;
    if (v->n + room > v->cap && ts__grow((void **)&v->v, &v->cap, sizeof *v->v, (size_t)v->n + room)) return TS_ENOMEM;
    uint32_t *out = v->v + v->n;
    const unsigned char *q = p.p, *end = p.end;
    while (end - q >= 3) {
        if (q[0] < 0x80) *out++ = *q++;
        else if (q[1] < 0x80) { *out++ = (uint32_t)(q[0] & 0x7f) | (uint32_t)q[1] << 7; q += 2; }
        else if (q[2] < 0x80) {
            *out++ = (uint32_t)(q[0] & 0x7f) | (uint32_t)(q[1] & 0x7f) << 7 | (uint32_t)q[2] << 14;
            q += 3;
        } else break;
    }
    p.p = q;
    v->n = (uint32_t)(out - v->v);
    uint64_t id;
    while (!rc && p.p < p.end)   /* the rest (longer ids, the last bytes); a failed cursor jumps to its end */
        if (ts__pb_varint(&p, &id)) rc = add_id(v, id);
    return rc;
}

static void comm_args(ck *c, const ck_node *nd)
{
    if (nd->comm_type >= 0 && nd->comm_type < (int64_t)(sizeof coll_names / sizeof coll_names[0]))
        ts__rank_add_arg(c->r, intern(c, "Collective name"), TS_ARG_STR, intern(c, coll_names[nd->comm_type]));
    if (nd->comm_size >= 0) {
        ts__rank_add_arg(c->r, intern(c, "In msg nelems"), TS_ARG_INT, (uint64_t)nd->comm_size);
        ts__rank_add_arg(c->r, intern(c, "dtype"), TS_ARG_STR, intern(c, "Byte"));
        ts__rank_add_arg(c->r, intern(c, "bytes"), TS_ARG_INT, (uint64_t)nd->comm_size);
    }
}

static int one_node(ck *c, ts_pb msg, size_t at)
{
    if (ts__grow((void **)&c->nodes, &c->cap, sizeof *c->nodes, c->n + 1)) return TS_ENOMEM;
    ck_node *nd = &c->nodes[c->n++];
    *nd = (ck_node){.at = at, .dep0 = c->deps.n, .ctl0 = c->ctrl.n, .is_cpu = -1, .comm_type = -1, .comm_size = -1};
    nd->arg0 = ts__rank_args_mark(c->r);
    ts_pb_field f;
    int rc = TS_OK;
    while (!rc && ts__pb_next(&msg, &f)) {
        if (f.num == 1 && f.wire == 0) nd->id = f.u;   /* absent: 0, which proto3 writers leave out */
        else if (f.num == 2 && f.wire == 2) nd->name = intern_sub(c, &f.sub);
        else if (f.num == 3 && f.wire == 0) nd->type = (int32_t)(f.u > 100 ? 100 : f.u);
        else if (f.num == 5 || f.num == 4) rc = deps_field(c, &f);
        else if (f.num == 6 && f.wire == 0) { nd->start_ns = (int64_t)(f.u > (1ULL << 52) ? 1ULL << 52 : f.u) * 1000; nd->has_start = true; }
        else if (f.num == 7 && f.wire == 0) nd->dur_ns = (int64_t)(f.u > (1ULL << 40) ? 1ULL << 40 : f.u) * 1000;
        else if (f.num == 10 && f.wire == 2) attribute(c, f.sub, nd);
    }
    nd = &c->nodes[c->n - 1];
    if (!c->k_id) c->k_id = intern(c, "chakra_id"), c->k_type = intern(c, "chakra_type");
    ts__rank_add_arg(c->r, c->k_id, TS_ARG_UINT, nd->id);
    ts__rank_add_arg(c->r, c->k_type, TS_ARG_INT, (uint64_t)(int64_t)nd->type);
    if (nd->type == 7) comm_args(c, nd);
    c->n_deps = c->deps.n;
    c->n_ctrl = c->ctrl.n;
    nd->n_deps = c->n_deps - nd->dep0;
    nd->n_ctl = c->n_ctrl - nd->ctl0;
    nd->n_args = ts__rank_args_mark(c->r) - nd->arg0;
    if (rc) return rc;
    if (c->in.err) return fail_at(c, c->in.err_at, c->in.err);
    if (!nd->name) return fail_at(c, at, "not a Chakra execution trace (a Node without a name)");
    return TS_OK;
}

/* The GlobalMetadata message: fields 1 (version) and 2 (attributes) only. */
static int global_metadata(ck *c, ts_pb msg, size_t at)
{
    ts_pb_field f;
    bool any = false;
    while (ts__pb_next(&msg, &f)) {
        if (f.wire != 2 || (f.num != 1 && f.num != 2)) break;
        any = true;
    }
    if (c->in.err || msg.p < msg.end || !any)
        return fail_at(c, at, "not a Chakra execution trace (no GlobalMetadata message first)");
    return TS_OK;
}

static int read_stream(ck *c, const unsigned char *data, size_t n)
{
    ts_pb s = ts__pb_open(&c->in, data, n);
    for (uint32_t k = 0; s.p < s.end; k++) {
        size_t at = ts__pb_offset(&s, s.p);
        uint64_t len;
        if (!ts__pb_varint(&s, &len)) return fail_at(c, c->in.err_at, c->in.err);
        if (len > ts__pb_len(&s)) return fail_at(c, at, "Chakra message length past the end of the file");
        ts_pb msg = {s.p, s.p + len, &c->in};
        s.p += len;
        int rc = k == 0 ? global_metadata(c, msg, at) : one_node(c, msg, at);
        if (rc) return rc;
    }
    if (c->n == 0) return fail_at(c, n, "not a Chakra execution trace (no Node after its GlobalMetadata)");
    return TS_OK;
}

static bool on_cpu(const ck_node *nd)
{
    return nd->is_cpu >= 0 ? nd->is_cpu == 1 : !(nd->type >= 5 && nd->type <= 7);
}

/* Lanes: one track per (CPU thread | GPU stream, tid). */
static void assign_tracks(ck *c)
{
    for (uint32_t i = 0; i < c->n; i++) {
        ck_node *nd = &c->nodes[i];
        bool cpu = on_cpu(nd);
        nd->track = ts__rank_track(c->r, cpu ? TS_TRACK_THREAD : TS_TRACK_GPU_STREAM, 0, nd->tid);
        if (nd->track == TS_NONE32) continue;
        ts_track *t = &c->r->tracks[nd->track];
        if (!t->process_name_id) t->process_name_id = intern(c, cpu ? "Chakra host" : "Chakra GPU");
    }
}

/* Dependency ids to node rows; an id no node has is counted and dropped. */
/* Node ids to rows: a table indexed by id when the ids are dense (chakra's
 * converters number nodes from 0 or 1), else a hash map. */
typedef struct id_rows {
    uint32_t *dense;     /* id -> row + 1 (0 = no node), NULL = use map */
    uint64_t  n_dense;
    ts_map64  map;
} id_rows;

static bool id_row(const id_rows *t, uint64_t id, uint64_t *row)
{
    if (!t->dense) return ts__map64_get(&t->map, id, row);
    if (id >= t->n_dense || !t->dense[id]) return false;
    *row = t->dense[id] - 1;
    return true;
}

static int id_rows_build(ck *c, id_rows *t)
{
    memset(t, 0, sizeof *t);
    ts__map64_init(&t->map);
    uint64_t max = 0;
    for (uint32_t i = 0; i < c->n; i++) if (c->nodes[i].id > max) max = c->nodes[i].id;
    if (max < 4 * (uint64_t)c->n + 64) {
        t->n_dense = max + 1;
        t->dense = ts__calloc(t->n_dense, sizeof *t->dense);
        if (!t->dense) return TS_ENOMEM;
    }
    for (uint32_t i = 0; i < c->n; i++) {
        uint64_t id = c->nodes[i].id, old;
        if (id_row(t, id, &old)) {
            char buf[96];
            snprintf(buf, sizeof buf, "two Chakra nodes with id %llu", (unsigned long long)id);
            return fail_at(c, c->nodes[i].at, buf);
        }
        if (t->dense) t->dense[id] = i + 1;
        else if (ts__map64_put(&t->map, id, i)) return TS_ENOMEM;
    }
    return TS_OK;
}

static void id_rows_free(id_rows *t)
{
    ts__free(t->dense, t->n_dense * sizeof *t->dense);
    ts__map64_free(&t->map);
}

static int resolve_deps(ck *c)
{
    id_rows row;
    int rc = id_rows_build(c, &row);
    uint64_t absent = 0;
    /* Rows are written over the ids, so no new memory is touched. */
    c->drow = c->deps.v;
    c->crow = c->ctrl.v;
    uint32_t wide = 0;
    for (uint32_t d = 0; !rc && d < c->n_deps; d++) {
        uint64_t v, id = c->deps.v[d];
        if (id == WIDE_ID) id = c->deps.wide[wide++];
        uint32_t r32 = TS_NONE32;
        if (id_row(&row, id, &v)) r32 = (uint32_t)v;
        else absent++;
        c->drow[d] = r32;
    }
    wide = 0;
    /* Control dependencies are followed on nodes before the node in the file
     * (its enclosing op, the op that launched it); later ones cannot be
     * (converted traces have 2-cycles through them). */
    for (uint32_t i = 0; !rc && i < c->n; i++)
        for (uint32_t d = c->nodes[i].ctl0; d < c->nodes[i].ctl0 + c->nodes[i].n_ctl; d++) {
            uint64_t v, id = c->ctrl.v[d];
            if (id == WIDE_ID) id = c->ctrl.wide[wide++];
            uint32_t r32 = TS_NONE32;
            if (!id_row(&row, id, &v)) c->ctrl_absent++;
            else if (v >= i) c->ctrl_later++;
            else r32 = (uint32_t)v;
            c->crow[d] = r32;
        }
    id_rows_free(&row);
    if (!rc && absent)
        ts__rank_warn_n(c->r, TS_WARN_OTHER, absent, "%s: %llu dependencies on node ids absent from the trace "
                        "dropped", c->path, (unsigned long long)absent);
    return rc == TS_ENOMEM ? ts__error(c->err, TS_ENOMEM, "%s: out of memory", c->path) : rc;
}

/* A min-heap of node rows: ready nodes are started in file order. */
typedef struct heap { uint32_t *v; uint32_t n; } heap;

static void heap_push(heap *h, uint32_t x)
{
    uint32_t i = h->n++;
    while (i && h->v[(i - 1) / 2] > x) { h->v[i] = h->v[(i - 1) / 2]; i = (i - 1) / 2; }
    h->v[i] = x;
}

static uint32_t heap_pop(heap *h)
{
    uint32_t top = h->v[0], x = h->v[--h->n], i = 0;
    for (;;) {
        uint32_t k = 2 * i + 1;
        if (k >= h->n) break;
        if (k + 1 < h->n && h->v[k + 1] < h->v[k]) k++;
        if (h->v[k] >= x) break;
        h->v[i] = h->v[k];
        i = k;
    }
    if (h->n) h->v[i] = x;
    return top;
}

/* The replay walks the nodes in file order and reads each one's own
 * dependency lists (no table of dependents): a node whose dependencies all
 * ended is the next to start unless a node woken earlier, smaller in file
 * order, is ready (the heap). A node with a dependency not yet done waits on
 * that one's list and is checked again when it is done. The order is the one
 * a heap of all ready nodes gives; converted traces point nearly all data
 * dependencies backwards, so few nodes ever wait. */
typedef struct sched {
    bool     *done;
    uint32_t *wait_head, *wait_next;   /* per node: the nodes waiting on it / the next one on the same list */
    uint32_t *pos;                     /* per node: its dependencies found done so far (data, then control) */
    int64_t  *ready_ns;                /* per node: when those allow it to start */
    int64_t  *lane_free;
    heap      woken;
    uint32_t  cand;                    /* the scan's next ready node (TS_NONE32: none found yet) */
} sched;

static void sched_free(sched *s, uint32_t n, uint32_t n_tracks)
{
    ts__free(s->done, (size_t)n + 1);
    ts__free(s->wait_head, ((size_t)n + 1) * sizeof *s->wait_head);
    ts__free(s->wait_next, ((size_t)n + 1) * sizeof *s->wait_next);
    ts__free(s->pos, ((size_t)n + 1) * sizeof *s->pos);
    ts__free(s->ready_ns, ((size_t)n + 1) * sizeof *s->ready_ns);
    ts__free(s->lane_free, ((size_t)n_tracks + 1) * sizeof *s->lane_free);
    ts__free(s->woken.v, (size_t)n * sizeof *s->woken.v + 4);
}

/* Whether all of node i's followed dependencies are done, going on from
 * the ones found done before (so each is looked at once while done); the
 * ready time takes data ones at their end, control ones at their start.
 * Else *blocker is one not done. */
static bool deps_done(const ck *c, sched *s, uint32_t i, uint32_t *blocker)
{
    const ck_node *nd = &c->nodes[i];
    uint32_t k = s->pos[i];
    int64_t at = s->ready_ns[i];
    bool ok = true;
    for (; k < nd->n_deps; k++) {
        uint32_t a = c->drow[nd->dep0 + k];
        if (a == TS_NONE32) continue;
        if (!s->done[a]) { *blocker = a; ok = false; break; }
        int64_t end = c->nodes[a].start_ns + c->nodes[a].dur_ns;
        if (end > at) at = end;
    }
    for (; ok && k < nd->n_deps + nd->n_ctl; k++) {
        uint32_t a = c->crow[nd->ctl0 + k - nd->n_deps];
        if (a == TS_NONE32) continue;
        if (!s->done[a]) { *blocker = a; ok = false; break; }
        if (c->nodes[a].start_ns > at) at = c->nodes[a].start_ns;
    }
    s->pos[i] = k;
    s->ready_ns[i] = at;
    return ok;
}

static void wait_on(sched *s, uint32_t i, uint32_t blocker)
{
    s->wait_next[i] = s->wait_head[blocker];
    s->wait_head[blocker] = i;
}

/* Node `self` is done: the nodes waiting on it are checked again. */
static void wake(const ck *c, sched *s, uint32_t self)
{
    uint32_t i = s->wait_head[self];
    s->wait_head[self] = TS_NONE32;
    while (i != TS_NONE32) {
        uint32_t next = s->wait_next[i], blocker;
        if (deps_done(c, s, i, &blocker)) heap_push(&s->woken, i);
        else wait_on(s, i, blocker);
        i = next;
    }
}

/* The next node to start, TS_NONE32 when none is ready; *scan moves past
 * the nodes it finds not ready (they wait). */
static uint32_t next_node(const ck *c, sched *s, uint32_t *scan)
{
    while (s->cand == TS_NONE32 && *scan < c->n) {
        uint32_t i = (*scan)++, blocker;
        if (deps_done(c, s, i, &blocker)) s->cand = i;
        else wait_on(s, i, blocker);
    }
    if (s->woken.n && (s->cand == TS_NONE32 || s->woken.v[0] < s->cand)) return heap_pop(&s->woken);
    uint32_t i = s->cand;
    s->cand = TS_NONE32;
    return i;
}

static int sched_init(ck *c, sched *s)
{
    uint32_t n = c->n;
    s->done = ts__calloc((size_t)n + 1, 1);
    s->wait_head = ts__malloc(((size_t)n + 1) * sizeof *s->wait_head);
    s->wait_next = ts__malloc(((size_t)n + 1) * sizeof *s->wait_next);
    s->lane_free = ts__calloc((size_t)c->r->n_tracks + 1, sizeof *s->lane_free);
    s->woken.v = ts__malloc((size_t)n * sizeof *s->woken.v + 4);
    s->pos = ts__calloc((size_t)n + 1, sizeof *s->pos);
    s->ready_ns = ts__calloc((size_t)n + 1, sizeof *s->ready_ns);
    s->cand = TS_NONE32;
    if (!s->done || !s->wait_head || !s->wait_next || !s->lane_free || !s->woken.v || !s->pos || !s->ready_ns)
        return TS_ENOMEM;
    memset(s->wait_head, 0xff, ((size_t)n + 1) * sizeof *s->wait_head);
    return TS_OK;
}

/* Start times by replaying the graph: each node as soon as its dependencies
 * ended and its lane is free; a cycle is an error naming one of its nodes. */
static int schedule(ck *c)
{
    sched s = {0};
    int rc = sched_init(c, &s);
    uint32_t done = 0, late = TS_NONE32, scan = 0;
    while (!rc) {
        uint32_t self = next_node(c, &s, &scan);
        if (self == TS_NONE32) break;
        int64_t ready = s.ready_ns[self];
        ck_node *nd = &c->nodes[self];
        int64_t *lane = nd->track == TS_NONE32 ? &s.lane_free[c->r->n_tracks] : &s.lane_free[nd->track];
        nd->start_ns = ready > *lane ? ready : *lane;
        if (nd->start_ns > ((int64_t)1 << 62) - nd->dur_ns) { late = self; break; }
        if (nd->dur_ns > 0) *lane = nd->start_ns + nd->dur_ns;
        s.done[self] = true;
        done++;
        wake(c, &s, self);
    }
    uint32_t stuck = 0;
    while (!rc && late == TS_NONE32 && done < c->n && stuck < c->n && s.done[stuck]) stuck++;
    sched_free(&s, c->n, c->r->n_tracks);
    if (rc) return ts__error(c->err, TS_ENOMEM, "%s: out of memory", c->path);
    if (late != TS_NONE32) return fail_at(c, c->nodes[late].at, "Chakra replay past 2^62 ns (runtimes too large)");
    if (done < c->n) {
        char buf[96];
        snprintf(buf, sizeof buf, "Chakra dependency cycle through node %llu", (unsigned long long)c->nodes[stuck].id);
        return fail_at(c, c->nodes[stuck].at, buf);
    }
    return TS_OK;
}

/* Every timed node has its own start time: use those (else replay). */
static bool recorded_times(const ck *c)
{
    bool any = false;
    for (uint32_t i = 0; i < c->n; i++) {
        if (c->nodes[i].dur_ns > 0 && !c->nodes[i].has_start) return false;
        any |= c->nodes[i].has_start;
    }
    return any;
}

/* Slices (timed nodes) and instants (nodes without runtime), with their args. */
static void emit_nodes(ck *c)
{
    uint32_t cat_cpu = intern(c, "cpu_op"), cat_gpu = intern(c, "kernel");
    for (uint32_t i = 0; i < c->n; i++) {
        ck_node *nd = &c->nodes[i];
        if (nd->track == TS_NONE32) continue;
        bool cpu = on_cpu(nd);
        uint32_t first = nd->arg0, n_args = nd->n_args;
        ts_kind kind = cpu ? TS_KIND_CPU_OP : TS_KIND_KERNEL;
        if (nd->dur_ns > 0) {
            uint32_t s = ts__rank_add_slice(c->r, nd->track, nd->start_ns, nd->dur_ns, nd->name, cpu ? cat_cpu : cat_gpu, kind);
            if (s != TS_NONE32) ts__rank_slice_set_args(c->r, s, first, n_args);
        } else {
            ts__rank_add_instant(c->r, nd->track, nd->start_ns, nd->name, cpu ? cat_cpu : cat_gpu, kind, 't', first, n_args);
        }
    }
}

/* Each timed node's slice row after ts__rank_finish sorted the slices: the
 * slice on its track starting at its start with its duration and name. */
static void node_rows(ck *c, uint32_t *row)
{
    const ts_slices *sl = &c->r->slices;
    for (uint32_t i = 0; i < c->n; i++) {
        const ck_node *nd = &c->nodes[i];
        row[i] = TS_NONE32;
        if (nd->dur_ns <= 0 || nd->track == TS_NONE32) continue;
        const ts_track *t = &c->r->tracks[nd->track];
        uint32_t lo = t->first_slice, hi = lo + t->n_slices;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (sl->ts_ns[mid] < nd->start_ns) lo = mid + 1; else hi = mid;
        }
        for (uint32_t k = lo; k < t->first_slice + t->n_slices && sl->ts_ns[k] == nd->start_ns; k++)
            if (sl->dur_ns[k] == nd->dur_ns && sl->name[k] == nd->name) { row[i] = k; break; }
    }
}

/* One "chakra_dep" flow per dependency between timed nodes; an untimed
 * dependency is looked through to its own dependencies (each node once per
 * dependent, so the walk ends on any graph). */
static int emit_deps(ck *c, uint32_t cat)
{
    uint32_t *stamp = ts__calloc((size_t)c->n + 1, sizeof *stamp), *row = ts__malloc((size_t)c->n * sizeof *row + 4);
    uint32_t *stack = ts__malloc((size_t)c->n_deps * sizeof *stack + 4);
    int rc = !stamp || !stack || !row ? TS_ENOMEM : TS_OK;
    if (!rc) node_rows(c, row);
    if (!rc && !c->summary) ts__rank_reserve_numbered_flows(c->r, c->n_deps, cat);
    uint64_t id = 0;
    for (uint32_t b = 0; !rc && b < c->n; b++) {
        if (row[b] == TS_NONE32) continue;
        uint32_t top = 0, from = b;
        /* b's dependencies, then those of the untimed ones met, once each:
         * a timed one is a flow, an untimed one is looked through */
        for (;;) {
            const ck_node *nd = &c->nodes[from];
            for (uint32_t d = nd->dep0; d < nd->dep0 + nd->n_deps && !rc; d++) {
                uint32_t a = c->drow[d];
                if (a == TS_NONE32 || stamp[a] == b + 1) continue;
                stamp[a] = b + 1;
                /* a slice row only for a timed node on a track; an untimed
                 * one (no row) is looked through */
                if (row[a] != TS_NONE32 && c->summary) c->r->flows.n_counted++;
                else if (row[a] != TS_NONE32) rc = ts__rank_push_bound_flow(c->r, row[a], row[b], id++, cat);
                else if (c->nodes[a].dur_ns <= 0) stack[top++] = a;
            }
            if (!top || rc) break;
            from = stack[--top];
        }
    }
    ts__free(stamp, ((size_t)c->n + 1) * sizeof *stamp);
    ts__free(stack, (size_t)c->n_deps * sizeof *stack + 4);
    ts__free(row, (size_t)c->n * sizeof *row + 4);
    return rc ? ts__error(c->err, TS_ENOMEM, "%s: out of memory", c->path) : TS_OK;
}

static void meta_str(ts_rank *r, const char *key, const char *val)
{
    ts__rank_add_arg(r, ts__rank_intern(r, key, strlen(key)), TS_ARG_STR, ts__rank_intern(r, val, strlen(val)));
}

static int build(ck *c, const void *data, size_t n)
{
    int rc = read_stream(c, data, n);
    if (!rc) {
        assign_tracks(c);
        rc = resolve_deps(c);
    }
    bool own_times = !rc && recorded_times(c);
    if (!rc && !own_times) rc = schedule(c);
    if (rc) return rc;
    emit_nodes(c);
    uint32_t dep_cat = intern(c, "chakra_dep");
    c->r->meta_args = ts__rank_args_mark(c->r);
    meta_str(c->r, "format", "chakra-et");
    meta_str(c->r, "chakra_times", own_times ? "recorded (start_time_micros)" : "replayed from runtimes and dependencies");
    char ctrl[200];
    uint64_t followed = c->n_ctrl - c->ctrl_later - c->ctrl_absent;
    if (own_times)
        snprintf(ctrl, sizeof ctrl, "%u, held by the recorded start times", c->n_ctrl);
    else
        snprintf(ctrl, sizeof ctrl, "%llu followed (a node starts once they started), %llu on a node later in the "
                 "file and %llu on absent ids not", (unsigned long long)followed, (unsigned long long)c->ctrl_later,
                 (unsigned long long)c->ctrl_absent);
    meta_str(c->r, "ctrl_deps", ctrl);
    c->r->n_meta_args = 3;
    c->r->n_events_read = c->n;
    rc = ts__rank_finish(c->r, c->err);
    return rc ? rc : emit_deps(c, dep_cat);
}

static int ingest_buffer(const char *name, const void *data, size_t n, bool summary, ts_rank **out, ts_error *err)
{
    *out = NULL;
    ck c = {.path = name, .err = err, .summary = summary};
    c.r = ts__rank_create(name);
    c.icache = ts__calloc(1, sizeof *c.icache);
    int rc = c.r && c.icache ? build(&c, data, n) : ts__error(err, TS_ENOMEM, "%s: out of memory", name);
    ts__free(c.icache, sizeof *c.icache);
    ts__free(c.nodes, (size_t)c.cap * sizeof *c.nodes);
    ck_ids *ids[] = {&c.deps, &c.ctrl};
    for (int i = 0; i < 2; i++) {
        ts__free(ids[i]->v, (size_t)ids[i]->cap * sizeof *ids[i]->v);
        ts__free(ids[i]->wide, (size_t)ids[i]->cap_wide * sizeof *ids[i]->wide);
    }
    if (rc) { ts__rank_destroy(c.r); return rc; }
    *out = c.r;
    return TS_OK;
}

/* The rank of chakra's `<prefix>.<rank>.et` names, -1 if there is none. */
static int32_t rank_from_et_name(const char *path)
{
    const char *base = strrchr(path, '/'), *et = strstr(base ? base : path, ".et");
    base = base ? base + 1 : path;
    if (!et || et == base) return -1;
    const char *p = et;
    while (p > base && p[-1] >= '0' && p[-1] <= '9') p--;
    if (p == et || p == base || p[-1] != '.' || et - p > 9) return -1;
    return (int32_t)strtol(p, NULL, 10);
}

int ts__chakra_ingest_buffer(const char *name, const void *data, size_t n, ts_rank **out, ts_error *err)
{
    return ingest_buffer(name, data, n, false, out, err);
}

typedef struct ck_call { const char *path; bool summary; ts_rank **out; ts_error *err; } ck_call;

static int ck_bytes(void *ud, const char *data, size_t n)
{
    ck_call *c = ud;
    return ingest_buffer(c->path, data, n, c->summary, c->out, c->err);
}

int ts__chakra_ingest(const char *path, int32_t order, bool summary, ts_rank **out, ts_error *err)
{
    ck_call c = {path, summary, out, err};
    int rc = ts__with_file_bytes(path, (size_t)16 << 30, ck_bytes, &c, err);
    if (!rc) {
        int32_t from_name = ts__rank_from_filename(path);
        if (from_name < 0) from_name = rank_from_et_name(path);
        (*out)->rank = from_name >= 0 ? from_name : order;
    }
    return rc;
}

/* `name.et`, also gzipped or zstd'd; chakra's converters write `<prefix>.<rank>.et`. */
bool ts__chakra_is_name(const char *path)
{
    size_t n = strlen(path);
    const char *ends[] = {".et", ".et.gz", ".et.zst"};
    for (size_t i = 0; i < 3; i++) {
        size_t k = strlen(ends[i]);
        if (n > k && !strcmp(path + n - k, ends[i])) return true;
    }
    return false;
}
