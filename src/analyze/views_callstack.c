/* views_callstack.c - the call-stack view (Trace Compass's callstack
 * analysis): per CPU thread, its ops nested in time with self times, and the
 * flame graph that merges frames with the same stack path.
 *
 * Not for: GPU streams and other rows of GPU processes (their kernels do not
 * nest; see the queues view) or drawing. Reads the finished model: a track's slices are in start order,
 * parents before children, with depth and parent set (trace/model.h).
 * Cost: O(frames) with one hash probe per frame, then a sort of each node's
 * children: O(frames + nodes log nodes).
 */
#include <stdlib.h>

#include "analyze/views_int.h"

typedef struct cs_impl {
    ts_view_callstack pub;   /* first: a ts_view_callstack* is a cs_impl* */
    uint64_t   cap_frames;
    uint32_t   cap_threads;
    uint32_t   cap_nodes;    /* rows allocated in pub.nodes */
    ts_strpool names;        /* node names */
} cs_impl;

/* Flame nodes while they are built, before the depth-first order. */
typedef struct tmp_node {
    uint32_t parent, name, depth;
    int64_t  total_ns, self_ns;
    uint64_t calls;
    uint32_t first_child, next;   /* child lists, filled after the pass */
} tmp_node;

typedef struct build {
    cs_impl   *v;
    tmp_node  *nodes;
    uint64_t   n_nodes, cap_nodes;
    ts_map64   index;             /* (parent + 1) << 32 | name id -> node */
    uint32_t  *node_of;           /* per frame of the thread being read: its node */
    uint64_t   cap_node_of;
} build;

static uint32_t node_for(build *b, uint32_t parent, const char *name, uint32_t depth)
{
    uint32_t id = ts__str_intern(&b->v->names, name, strlen(name));
    if (ts__strpool_oom(&b->v->names)) return TS_NONE32;
    uint64_t key = ((uint64_t)(parent == TS_NONE32 ? 0 : parent + 1) << 32) | id, n;
    if (ts__map64_get(&b->index, key, &n)) return (uint32_t)n;
    if (b->n_nodes >= UINT32_MAX - 1 ||
        ts__views_grow((void **)&b->nodes, &b->cap_nodes, sizeof *b->nodes, b->n_nodes + 1) ||
        ts__map64_put(&b->index, key, b->n_nodes))
        return TS_NONE32;
    b->nodes[b->n_nodes] = (tmp_node){.parent = parent, .name = id, .depth = depth,
                                      .first_child = TS_NONE32, .next = TS_NONE32};
    return (uint32_t)b->n_nodes++;
}

/* The frames of one thread track, their self times and their flame nodes. */
static int read_thread(build *b, const ts_rank *r, uint32_t track)
{
    cs_impl *v = b->v;
    const ts_track *tr = &r->tracks[track];
    uint64_t first = v->pub.n_frames;
    if (ts__views_grow((void **)&v->pub.frames, &v->cap_frames, sizeof *v->pub.frames, first + tr->n_slices) ||
        ts__views_grow((void **)&b->node_of, &b->cap_node_of, sizeof *b->node_of, tr->n_slices))
        return TS_ENOMEM;
    if (v->pub.n_threads == v->cap_threads &&
        ts__grow((void **)&v->pub.threads, &v->cap_threads, sizeof *v->pub.threads, (size_t)v->pub.n_threads + 1))
        return TS_ENOMEM;
    ts_cs_thread *th = &v->pub.threads[v->pub.n_threads];
    *th = (ts_cs_thread){.rank = r->rank, .pid = tr->pid, .tid = tr->tid,
                         .name = tr->name_id ? ts__rank_str(r, tr->name_id) : "", .first_frame = first,
                         .n_frames = tr->n_slices};
    for (uint32_t k = 0; k < tr->n_slices; k++) {
        uint32_t s = tr->first_slice + k, p = r->slices.parent[s];
        ts_cs_frame *f = &v->pub.frames[first + k];
        *f = (ts_cs_frame){.thread = v->pub.n_threads, .depth = r->slices.depth[s],
                           .parent = p == TS_NONE32 ? UINT64_MAX : first + (p - tr->first_slice),
                           .name = ts__rank_str(r, r->slices.name[s]), .start_ns = r->slices.ts_ns[s],
                           .dur_ns = r->slices.dur_ns[s], .self_ns = r->slices.dur_ns[s]};
        if (f->depth > th->max_depth) th->max_depth = f->depth;
        if (p == TS_NONE32) { th->busy_ns += f->dur_ns; }
        else {
            /* the part of the child inside its parent (older traces may end a child 1 us late) */
            ts_cs_frame *pf = &v->pub.frames[f->parent];
            int64_t end = f->start_ns + f->dur_ns, pend = pf->start_ns + pf->dur_ns;
            int64_t in = (end < pend ? end : pend) - f->start_ns;
            pf->self_ns -= in > 0 ? in : 0;
            if (pf->self_ns < 0) pf->self_ns = 0;
        }
        uint32_t pn = p == TS_NONE32 ? TS_NONE32 : b->node_of[p - tr->first_slice];
        uint32_t n = node_for(b, pn, f->name, f->depth);
        if (n == TS_NONE32) return TS_ENOMEM;
        b->node_of[k] = n;
    }
    v->pub.n_frames += tr->n_slices;
    v->pub.n_threads++;
    return TS_OK;
}

/* Self times are final only after every child was seen: add them up then. */
static void add_times(build *b, uint64_t first_frame)
{
    cs_impl *v = b->v;
    const ts_cs_thread *th = &v->pub.threads[v->pub.n_threads - 1];
    for (uint64_t k = 0; k < th->n_frames; k++) {
        const ts_cs_frame *f = &v->pub.frames[first_frame + k];
        tmp_node *n = &b->nodes[b->node_of[k]];
        n->total_ns += f->dur_ns;
        n->self_ns += f->self_ns;
        n->calls++;
    }
}

static const tmp_node *g_sort_nodes;   /* qsort has no context argument */
static int by_total_desc(const void *a, const void *b)
{
    const tmp_node *x = &g_sort_nodes[*(const uint32_t *)a], *y = &g_sort_nodes[*(const uint32_t *)b];
    if (x->total_ns != y->total_ns) return x->total_ns > y->total_ns ? -1 : 1;
    return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

/* Link each node's children, heaviest first (roots under a virtual parent). */
static int link_children(build *b, uint32_t *roots_head)
{
    uint32_t *order = ts__malloc(b->n_nodes * sizeof *order);
    if (!order && b->n_nodes) return TS_ENOMEM;
    for (uint32_t i = 0; i < b->n_nodes; i++) order[i] = i;
    g_sort_nodes = b->nodes;
    if (b->n_nodes) qsort(order, b->n_nodes, sizeof *order, by_total_desc);
    *roots_head = TS_NONE32;
    uint32_t *tail = ts__malloc((b->n_nodes + 1) * sizeof *tail);   /* last child linked, per parent */
    if (!tail) { ts__free(order, b->n_nodes * sizeof *order); return TS_ENOMEM; }
    for (uint32_t i = 0; i <= b->n_nodes; i++) tail[i] = TS_NONE32;
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        uint32_t n = order[i], p = b->nodes[n].parent, slot = p == TS_NONE32 ? (uint32_t)b->n_nodes : p;
        uint32_t *head = p == TS_NONE32 ? roots_head : &b->nodes[p].first_child;
        if (tail[slot] == TS_NONE32) *head = n;
        else b->nodes[tail[slot]].next = n;
        tail[slot] = n;
    }
    ts__free(tail, (b->n_nodes + 1) * sizeof *tail);
    ts__free(order, b->n_nodes * sizeof *order);
    return TS_OK;
}

/* Depth-first order into pub.nodes, iteratively (stacks can be deep). */
static int flatten(build *b)
{
    cs_impl *v = b->v;
    uint32_t root;
    if (link_children(b, &root)) return TS_ENOMEM;
    v->cap_nodes = b->n_nodes ? (uint32_t)b->n_nodes : 1;
    v->pub.nodes = ts__calloc(v->cap_nodes, sizeof *v->pub.nodes);
    uint32_t *stack = ts__malloc((b->n_nodes + 1) * sizeof *stack), *row = ts__malloc((b->n_nodes + 1) * sizeof *row);
    int rc = v->pub.nodes && stack && row ? TS_OK : TS_ENOMEM;
    uint32_t sp = 0, out = 0;
    for (uint32_t n = root; n != TS_NONE32 && !rc; n = b->nodes[n].next) {
        stack[sp++] = n;
        while (sp) {
            uint32_t t = stack[--sp];
            if (t & 0x80000000u) { t &= 0x7fffffffu; v->pub.nodes[row[t]].subtree_end = out; continue; }
            const tmp_node *tn = &b->nodes[t];
            row[t] = out;
            v->pub.nodes[out++] = (ts_cs_node){
                .parent = tn->parent == TS_NONE32 ? UINT32_MAX : row[tn->parent], .depth = (uint16_t)tn->depth,
                .name = ts__str(&v->names, tn->name), .total_ns = tn->total_ns, .self_ns = tn->self_ns,
                .calls = tn->calls};
            stack[sp++] = t | 0x80000000u;   /* close the subtree after the children */
            /* push children in reverse so the heaviest comes out first */
            uint32_t mark = sp;
            for (uint32_t c = tn->first_child; c != TS_NONE32; c = b->nodes[c].next) stack[sp++] = c;
            for (uint32_t i = mark, j = sp - 1; i < j; i++, j--) { uint32_t x = stack[i]; stack[i] = stack[j]; stack[j] = x; }
        }
        v->pub.total_ns += b->nodes[n].total_ns;
    }
    v->pub.n_nodes = out;
    ts__free(stack, (b->n_nodes + 1) * sizeof *stack);
    ts__free(row, (b->n_nodes + 1) * sizeof *row);
    return rc;
}

/* Whether track k is a row of the GPU, not a CPU thread: one of a GPU
 * process (the pid of one of the rank's streams, as Kineto's device-wide
 * cuda_sync rows are), or one holding only CUPTI counter ranges of kernels. */
static bool gpu_row(const ts_rank *r, uint32_t k)
{
    for (uint32_t i = 0; i < r->n_tracks; i++)
        if (r->tracks[i].kind == TS_TRACK_GPU_STREAM && r->tracks[i].pid == r->tracks[k].pid) return true;
    const ts_track *t = &r->tracks[k];
    for (uint32_t s = t->first_slice; s < t->first_slice + t->n_slices; s++)
        if (r->slices.kind[s] != TS_KIND_PROFILER_RANGE) return false;
    return true;
}

int ts_view_callstack_create(const ts_job *t, const ts_views_opts *opt, ts_view_callstack **out, ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    ts__views_cfg cfg;
    ts__views_cfg_from(opt, &cfg);
    cs_impl *v = ts__calloc(1, sizeof *v);
    if (!v || ts__strpool_init(&v->names)) { ts__free(v, sizeof *v); return ts__error(err, TS_ENOMEM, "out of memory"); }
    build b = {.v = v};
    ts__map64_init(&b.index);
    int rc = TS_OK;
    for (uint32_t ri = 0; ri < t->n_ranks && !rc; ri++) {
        const ts_rank *r = t->ranks[ri];
        if (!ts__views_rank_ok(&cfg, r)) continue;
        for (uint32_t k = 0; k < r->n_tracks && !rc; k++) {
            if (r->tracks[k].kind != TS_TRACK_THREAD || r->tracks[k].n_slices == 0 || gpu_row(r, k) ||
                (cfg.one_thread && r->tracks[k].tid != cfg.tid))
                continue;
            uint64_t first = v->pub.n_frames;
            rc = read_thread(&b, r, k);
            if (!rc) add_times(&b, first);
            /* flatten marks closing entries with bit 31: nodes stay below it */
            if (!rc && b.n_nodes >= 0x7fffffffu) rc = TS_ERANGE;
        }
    }
    if (!rc) rc = flatten(&b);
    ts__map64_free(&b.index);
    ts__free(b.nodes, b.cap_nodes * sizeof *b.nodes);
    ts__free(b.node_of, b.cap_node_of * sizeof *b.node_of);
    if (!rc && v->pub.n_frames == 0) rc = ts__error(err, TS_ENODATA, "no ops on CPU threads%s%s", cfg.rank >= 0 ? " of that rank" : "",
                                              cfg.one_thread ? " with that tid" : "");
    else if (rc == TS_ERANGE) ts__error(err, rc, "more than 2^31 distinct stack paths");
    else if (rc && rc != TS_ENODATA) ts__error(err, rc, "out of memory");
    if (rc) { ts_view_callstack_destroy(&v->pub); return rc; }
    *out = &v->pub;
    return TS_OK;
}

void ts_view_callstack_destroy(ts_view_callstack *pub)
{
    if (!pub) return;
    cs_impl *v = (cs_impl *)pub;
    ts__free(v->pub.threads, (size_t)v->cap_threads * sizeof *v->pub.threads);
    ts__free(v->pub.frames, v->cap_frames * sizeof *v->pub.frames);
    ts__free(v->pub.nodes, (size_t)v->cap_nodes * sizeof *v->pub.nodes);
    ts__strpool_free(&v->names);
    ts__free(v, sizeof *v);
}
