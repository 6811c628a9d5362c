/* local.c - one rank's local dependency graph: which slices become nodes and
 * the edges between them (program order, nesting, launch by correlation id,
 * stream order, cross-stream waits, host syncs, fwdbwd flows, gloo workers).
 *
 * One pass per track in slice order (tracks hold preorder: a parent precedes
 * its children), so nodes of one lane are contiguous node rows in time order;
 * the later passes rely on that to binary-search a lane. Linear in slices
 * except the binary searches (log of a lane's length per sync event).
 * Not here: cross-rank matching and clocks (collective.c).
 */
#include "graph/build.h"

#include <stdlib.h>
#include <strings.h>

enum role { ROLE_NONE = 0, ROLE_OP, ROLE_RUNTIME };

typedef struct lane_range {
    uint32_t lane;         /* graph lane row */
    uint32_t first, n;     /* its nodes: rows [first, first + n) */
    int64_t  key;          /* (device << 32 | stream) for GPU lanes, -1 for threads */
} lane_range;

/* Correlation id -> runtime node. CUPTI numbers its calls densely, so when
 * the ids span a small range this is a plain array (no hashing: the lookup
 * per launch was a tenth of the build); otherwise a hash map. */
typedef struct corr_index {
    int64_t   base;          /* smallest id */
    uint32_t *dense;         /* dense[id - base] = node, TS_NONE32 = none; NULL = use map */
    size_t    n_dense;
    ts_map64  map;
} corr_index;

typedef struct local_ctx {
    ts_graph      *g;
    uint16_t       ri;
    const ts_rank *r;
    uint32_t       node0;       /* first node row of this rank */
    uint32_t      *node_of;     /* per slice: its node or the nearest enclosing node, TS_NONE32 */
    uint32_t      *op_anc;      /* per slice: nearest ancestor-or-self CPU-op node, TS_NONE32 */
    uint8_t       *op_parent;   /* per slice (leaf mode): 1 = encloses another op */
    int64_t       *launch_ts;   /* per rank node (n - node0): launch time of GPU nodes, prefix max per lane */
    lane_range    *lanes;
    uint32_t       n_lanes, cap_lanes;
    uint32_t      *syncs;       /* cuda_sync slices, in row order */
    uint32_t       n_syncs, cap_syncs;
    corr_index     corr_rt;     /* correlation id -> runtime node */
    ts_map64       stream_lane; /* (device << 32 | stream) -> index in lanes */
    uint16_t      *name_class;  /* per string id: NC_* bits, 0 = not classified yet */
    struct { uint32_t node, last; } *stack;   /* open nest parents of the current track */
    uint32_t       cap_stack;
    uint32_t       n_wait_calls; /* cudaStreamWaitEvent runtime nodes of this rank */
} local_ctx;

static bool has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static int corr_init(corr_index *ci, const ts_rank *r)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    size_t n = 0;
    memset(ci, 0, sizeof *ci);
    ts__map64_init(&ci->map);
    for (uint32_t s = 0; s < r->slices.n; s++) {
        ts_kind k = (ts_kind)r->slices.kind[s];
        int64_t v = r->slices.corr[s];
        if ((k != TS_KIND_CUDA_RUNTIME && k != TS_KIND_CUDA_DRIVER) || v < 0) continue;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        n++;
    }
    if (n == 0 || (uint64_t)(hi - lo) >= 16 * (uint64_t)n + 65536) return TS_OK;   /* sparse: map */
    ci->base = lo;
    ci->n_dense = (size_t)(hi - lo) + 1;
    ci->dense = ts__malloc(ci->n_dense * sizeof *ci->dense);
    if (!ci->dense) return TS_ENOMEM;
    memset(ci->dense, 0xff, ci->n_dense * sizeof *ci->dense);
    return TS_OK;
}

static int corr_put(corr_index *ci, int64_t corr, uint32_t node)
{
    if (!ci->dense) return ts__map64_put(&ci->map, (uint64_t)corr, node);
    ci->dense[corr - ci->base] = node;   /* corr_init saw every id: in range */
    return TS_OK;
}

static uint32_t corr_get(const corr_index *ci, int64_t corr)
{
    uint64_t v;
    if (corr < 0) return TS_NONE32;
    if (ci->dense) return corr >= ci->base && (uint64_t)(corr - ci->base) < ci->n_dense ? ci->dense[corr - ci->base] : TS_NONE32;
    return ts__map64_get(&ci->map, (uint64_t)corr, &v) ? (uint32_t)v : TS_NONE32;
}

static void corr_free(corr_index *ci)
{
    ts__free(ci->dense, ci->n_dense * sizeof *ci->dense);
    ts__map64_free(&ci->map);
}

static const char *slice_name(const local_ctx *c, uint32_t s)
{
    return ts__rank_str(c->r, c->r->slices.name[s]);
}

static bool is_sync_call(const char *n)
{
    return !strcmp(n, "cudaDeviceSynchronize") || !strcmp(n, "cudaStreamSynchronize") ||
           !strcmp(n, "cudaEventSynchronize") || !strcmp(n, "cuCtxSynchronize") ||
           !strcmp(n, "cuStreamSynchronize") || !strcmp(n, "cuEventSynchronize");
}

/* What a slice's name says, worked out once per distinct name: string
 * compares per slice would cost more than the rest of the build. */
enum {
    NC_KNOWN = 0x8000,
    NC_STEP = 1,     /* ProfilerStep#N */
    NC_GLOO = 2,     /* gloo:* worker op */
    NC_C10D = 4,     /* c10d::* collective call */
    NC_COMM = 8,     /* any collective call or annotation (c10d::, gloo:, nccl:, record_param_comms, blocking MPI_*,
                        Horovod transfers NCCL_ALLREDUCE ...) */
    NC_SYNC = 16,    /* a host synchronisation call */
    NC_NCCL = 32,    /* nccl* kernel name */
    NC_SYNC_COPY = 64, /* cudaMemcpy / cudaMemset: synchronous, returns after its GPU op */
    NC_WAIT_EVENT = 256, /* cudaStreamWaitEvent */
    NC_MPI_START = 512,  /* nonblocking MPI call that returns a request (MPI_Isend, MPI_Iallreduce, ...) */
    NC_MPI_DONE = 1024,  /* MPI_Wait* / MPI_Test*: where requests complete; CPU work, never a member */
};

/* Blocking MPI calls the MPI collector records with collective args: they are
 * matched across ranks like c10d collectives. Nonblocking ones are matched
 * the same way and complete in the MPI_Wait / MPI_Test with their request
 * handle (mpi_requests below). */
static bool in_list(const char *n, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!strcmp(n, names[i])) return true;
    return false;
}

static bool is_mpi_comm(const char *n)
{
    static const char *const names[] = {
        "MPI_Allreduce", "MPI_Allgather", "MPI_Alltoall", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce",
        "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Send", "MPI_Recv",
    };
    return !strncmp(n, "MPI_", 4) && in_list(n, names, sizeof names / sizeof names[0]);
}

static bool is_mpi_start(const char *n)
{
    static const char *const names[] = {
        "MPI_Isend", "MPI_Irecv", "MPI_Iallreduce", "MPI_Iallgather", "MPI_Ialltoall", "MPI_Ibarrier",
        "MPI_Ibcast", "MPI_Ireduce", "MPI_Ireduce_scatter", "MPI_Ireduce_scatter_block",
    };
    return !strncmp(n, "MPI_I", 5) && in_list(n, names, sizeof names / sizeof names[0]);
}

static uint16_t name_class(const local_ctx *c, uint32_t s)
{
    uint32_t id = c->r->slices.name[s];
    uint16_t v = c->name_class[id];
    if (v) return v;
    const char *n = ts__rank_str(c->r, id);
    v = NC_KNOWN;
    if (has_prefix(n, "ProfilerStep#")) v |= NC_STEP;
    if (has_prefix(n, "gloo:")) v |= NC_GLOO | NC_COMM;
    if (has_prefix(n, "c10d::")) v |= NC_C10D | NC_COMM;
    if (has_prefix(n, "nccl:") || has_prefix(n, "record_param_comms") || is_mpi_comm(n) || ts__horovod_comm_name(n))
        v |= NC_COMM;
    if (is_mpi_start(n)) v |= NC_MPI_START | NC_COMM;
    if (has_prefix(n, "MPI_Wait") || has_prefix(n, "MPI_Test")) v |= NC_MPI_DONE | NC_COMM;
    if (is_sync_call(n)) v |= NC_SYNC;
    if (!strncasecmp(n, "nccl", 4)) v |= NC_NCCL;
    if (!strcmp(n, "cudaMemcpy") || !strcmp(n, "cudaMemset")) v |= NC_SYNC_COPY;
    if (!strcmp(n, "cudaStreamWaitEvent") || !strcmp(n, "cuStreamWaitEvent")) v |= NC_WAIT_EVENT;
    c->name_class[id] = v;
    return v;
}

static enum role cpu_role(const local_ctx *c, uint32_t s)
{
    switch ((ts_kind)c->r->slices.kind[s]) {
    case TS_KIND_CUDA_RUNTIME:
    case TS_KIND_CUDA_DRIVER: return ROLE_RUNTIME;
    case TS_KIND_CPU_OP: return ROLE_OP;
    case TS_KIND_OTHER:   /* legacy traces have no category: their events are ops; so are
                             communication calls of other categories ("mpi") */
        if (name_class(c, s) & NC_COMM) return ROLE_OP;
        return c->r->slices.cat[s] == 0 && !(name_class(c, s) & NC_STEP) ? ROLE_OP : ROLE_NONE;
    case TS_KIND_USER_ANNOTATION: return (name_class(c, s) & NC_GLOO) ? ROLE_OP : ROLE_NONE;
    default: return ROLE_NONE;
    }
}

static uint32_t new_node(local_ctx *c, ts_node_kind k, uint32_t lane, uint32_t s)
{
    const ts_slices *sl = &c->r->slices;
    return ts__graph_add_node(c->g, c->ri, k, lane, s, sl->ts_ns[s], sl->dur_ns[s]);
}

static int push_lane(local_ctx *c, uint32_t lane, uint32_t first, int64_t key)
{
    if (ts__grow((void **)&c->lanes, &c->cap_lanes, sizeof *c->lanes, c->n_lanes + 1)) return TS_ENOMEM;
    c->lanes[c->n_lanes] = (lane_range){.lane = lane, .first = first, .n = 0, .key = key};
    if (key >= 0 && ts__map64_put(&c->stream_lane, (uint64_t)key, c->n_lanes)) return TS_ENOMEM;
    c->n_lanes++;
    return TS_OK;
}

/* Leaf mode: mark every op that encloses another op (through non-op slices). */
static void mark_op_parents(local_ctx *c)
{
    const ts_slices *sl = &c->r->slices;
    for (uint32_t s = 0; s < sl->n; s++) {
        if (cpu_role(c, s) != ROLE_OP) continue;
        for (uint32_t p = sl->parent[s]; p != TS_NONE32; p = sl->parent[p])
            if (cpu_role(c, p) == ROLE_OP) { c->op_parent[p] = 1; break; }
    }
}

static ts_node_kind g_kind(const local_ctx *c, uint32_t n) { return (ts_node_kind)c->g->nodes.kind[n]; }

/* Decide whether CPU slice s is a node; returns its node row or TS_NONE32. */
static uint32_t cpu_node(local_ctx *c, uint32_t s, uint32_t lane)
{
    const ts_slices *sl = &c->r->slices;
    uint32_t p = sl->parent[s];
    uint32_t anc_op = p == TS_NONE32 ? TS_NONE32 : c->op_anc[p];
    enum role role = cpu_role(c, s);
    uint32_t id = TS_NONE32;
    if (role == ROLE_RUNTIME) {
        uint16_t nc = name_class(c, s);
        id = new_node(c, (nc & NC_SYNC) ? TS_NODE_HOST_SYNC : TS_NODE_RUNTIME, lane, s);
        c->n_wait_calls += (nc & NC_WAIT_EVENT) != 0;
        if (id != TS_NONE32 && sl->corr[s] >= 0 && corr_put(&c->corr_rt, sl->corr[s], id))
            c->g->oom = true;
    } else if (role == ROLE_OP) {
        /* Collective calls are dependency endpoints (worker hand-off, matching),
         * so they are nodes even inside another op, like runtime calls. */
        bool comm = (name_class(c, s) & NC_COMM) && (anc_op == TS_NONE32 || g_kind(c, anc_op) != TS_NODE_COMM_CPU);
        bool take = comm || (c->g->opt.leaf_ops ? !c->op_parent[s] : anc_op == TS_NONE32);
        if (take) id = new_node(c, comm ? TS_NODE_COMM_CPU : TS_NODE_CPU_OP, lane, s);
    }
    c->node_of[s] = id != TS_NONE32 ? id : (p == TS_NONE32 ? TS_NONE32 : c->node_of[p]);
    c->op_anc[s] = (role == ROLE_OP && id != TS_NONE32) ? id : anc_op;
    return id;
}

/* Program order and nesting on one thread: siblings in a row, a parent's start
 * before its first child, its last child's end before its end. */
static int thread_track(local_ctx *c, uint32_t t)
{
    const ts_track *tr = &c->r->tracks[t];
    const ts_slices *sl = &c->r->slices;
    uint32_t lane = ts__graph_add_lane(c->g, c->ri, false, t);
    if (lane == TS_NONE32 || push_lane(c, lane, c->g->nodes.n, -1)) return TS_ENOMEM;
    uint32_t sp = 0, last_top = TS_NONE32;
    for (uint32_t s = tr->first_slice; s < tr->first_slice + tr->n_slices; s++) {
        uint32_t id = cpu_node(c, s, lane);
        if (id == TS_NONE32) continue;
        uint32_t p = sl->parent[s], parent = p == TS_NONE32 ? TS_NONE32 : c->node_of[p];
        while (sp > 0 && c->stack[sp - 1].node != parent) {
            sp--;
            ts__graph_add_edge(c->g, c->stack[sp].last, c->stack[sp].node, TS_EDGE_NEST,
                               TS_EDGE_FROM_END | TS_EDGE_TO_END);
        }
        if (sp == 0) {
            ts__graph_add_edge(c->g, last_top, id, TS_EDGE_PROGRAM, TS_EDGE_FROM_END);
            last_top = id;
        } else if (c->stack[sp - 1].last != TS_NONE32) {
            ts__graph_add_edge(c->g, c->stack[sp - 1].last, id, TS_EDGE_PROGRAM, TS_EDGE_FROM_END);
            c->stack[sp - 1].last = id;
        } else {
            ts__graph_add_edge(c->g, parent, id, TS_EDGE_NEST, 0);
            c->stack[sp - 1].last = id;
        }
        if (sp == c->cap_stack && ts__grow((void **)&c->stack, &c->cap_stack, sizeof *c->stack, sp + 1))
            return TS_ENOMEM;
        c->stack[sp].node = id;
        c->stack[sp].last = TS_NONE32;
        sp++;
    }
    while (sp > 0) {
        sp--;
        ts__graph_add_edge(c->g, c->stack[sp].last, c->stack[sp].node, TS_EDGE_NEST,
                           TS_EDGE_FROM_END | TS_EDGE_TO_END);
    }
    c->lanes[c->n_lanes - 1].n = c->g->nodes.n - c->lanes[c->n_lanes - 1].first;
    return TS_OK;
}

/* Stream order on one GPU stream. */
static int gpu_track(local_ctx *c, uint32_t t)
{
    const ts_track *tr = &c->r->tracks[t];
    const ts_slices *sl = &c->r->slices;
    uint32_t lane = ts__graph_add_lane(c->g, c->ri, true, t);
    int64_t key = (int64_t)((uint64_t)(uint32_t)tr->device << 32 | (uint32_t)tr->stream);
    if (lane == TS_NONE32 || push_lane(c, lane, c->g->nodes.n, key)) return TS_ENOMEM;
    uint32_t prev = TS_NONE32;
    for (uint32_t s = tr->first_slice; s < tr->first_slice + tr->n_slices; s++) {
        ts_kind k = (ts_kind)sl->kind[s];
        c->node_of[s] = TS_NONE32;
        c->op_anc[s] = TS_NONE32;
        ts_node_kind nk;
        if (k == TS_KIND_KERNEL) nk = (name_class(c, s) & NC_NCCL) ? TS_NODE_COMM_KERNEL : TS_NODE_KERNEL;
        else if (k == TS_KIND_GPU_MEMCPY) nk = TS_NODE_MEMCPY;
        else if (k == TS_KIND_GPU_MEMSET) nk = TS_NODE_MEMSET;
        else continue;
        uint32_t id = new_node(c, nk, lane, s);
        c->node_of[s] = id;
        ts__graph_add_edge(c->g, prev, id, TS_EDGE_STREAM, TS_EDGE_FROM_END);
        prev = id;
    }
    c->lanes[c->n_lanes - 1].n = c->g->nodes.n - c->lanes[c->n_lanes - 1].first;
    return TS_OK;
}

/* An execution trace's own dependencies (chakra_dep flows) order its GPU ops:
 * it has no launch calls to miss. */
static bool has_dep_flows(const ts_rank *r)
{
    for (uint32_t i = 0; i < r->flows.n; i++)
        if (ts__flow_kind(&r->flows, i) == TS_FLOW_DEP) return true;
    return false;
}

/* Launch -> GPU op by correlation id (never by order). Fills launch_ts and
 * makes it monotone per stream so the sync passes can binary-search it. */
static void link_launches(local_ctx *c)
{
    const ts_slices *sl = &c->r->slices;
    ts_graph *g = c->g;
    uint32_t unlaunched = 0;
    for (uint32_t li = 0; li < c->n_lanes; li++) {
        lane_range *L = &c->lanes[li];
        if (L->key < 0) continue;
        int64_t run_max = INT64_MIN;
        for (uint32_t n = L->first; n < L->first + L->n; n++) {
            uint32_t s = g->nodes.slice[n];
            uint32_t rt = corr_get(&c->corr_rt, sl->corr[s]);
            int64_t t = g->nodes.start_ns[n];
            if (rt != TS_NONE32) {
                ts__graph_add_edge(g, rt, n, TS_EDGE_LAUNCH, 0);
                if (name_class(c, g->nodes.slice[rt]) & NC_SYNC_COPY) {
                    g->nodes.kind[rt] = TS_NODE_HOST_SYNC;   /* synchronous copy: returns after it */
                    ts__graph_add_edge(g, n, rt, TS_EDGE_HOST_SYNC, TS_EDGE_FROM_END | TS_EDGE_TO_END);
                } else if (g->nodes.kind[rt] == TS_NODE_RUNTIME) {
                    g->nodes.kind[rt] = TS_NODE_LAUNCH;
                }
                /* a communication kernel hangs off the collective call that launched it */
                uint32_t op = c->op_anc[g->nodes.slice[rt]];
                if (g->nodes.kind[n] == TS_NODE_COMM_KERNEL && op != TS_NONE32 && g->nodes.kind[op] == TS_NODE_COMM_CPU)
                    ts__graph_add_edge(g, op, n, TS_EDGE_COLL_LAUNCH, 0);
                t = g->nodes.start_ns[rt];
            } else {
                unlaunched++;
            }
            run_max = t > run_max ? t : run_max;
            c->launch_ts[n - c->node0] = run_max;
        }
    }
    if (unlaunched && !has_dep_flows(c->r))
        ts__graph_warn(g, "rank %d: %u GPU ops have no launch call with their correlation id; "
                       "they depend only on stream order", c->r->rank, unlaunched);
}

/* Last node of lane range L launched before t (TS_NONE32 if none), or the
 * first launched after t when `after`. */
static uint32_t lane_search(const local_ctx *c, const lane_range *L, int64_t t, bool after)
{
    uint32_t lo = 0, hi = L->n;   /* first index with launch_ts > t (after) or >= t (before) */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int64_t v = c->launch_ts[L->first + mid - c->node0];
        if (after ? v <= t : v < t) lo = mid + 1; else hi = mid;
    }
    if (after) return lo < L->n ? L->first + lo : TS_NONE32;
    return lo > 0 ? L->first + lo - 1 : TS_NONE32;
}

static const lane_range *stream_lane(const local_ctx *c, int64_t device, int64_t stream)
{
    uint64_t v;
    uint64_t key = (uint64_t)(uint32_t)device << 32 | (uint32_t)stream;
    return ts__map64_get(&c->stream_lane, key, &v) ? &c->lanes[v] : NULL;
}

static void host_wait(local_ctx *c, const lane_range *L, uint32_t call, int64_t before)
{
    if (!L) return;
    uint32_t src = lane_search(c, L, before, false);
    ts__graph_add_edge(c->g, src, call, TS_EDGE_HOST_SYNC, TS_EDGE_FROM_END | TS_EDGE_TO_END);
}

static void wait_all_streams(local_ctx *c, uint32_t call, int64_t before)
{
    for (uint32_t li = 0; li < c->n_lanes; li++)
        if (c->lanes[li].key >= 0) host_wait(c, &c->lanes[li], call, before);
}

static uint32_t runtime_by_corr(const local_ctx *c, int64_t corr) { return corr_get(&c->corr_rt, corr); }

/* Outcome of one Kineto "Stream Wait Event" (counted per rank, reported in
 * one warning line when some were not followed). */
typedef struct wait_counts {
    uint32_t followed;     /* edge recorded op -> next op on the waiting stream */
    uint32_t idle;         /* nothing to wait for: no op on the recorded stream before the record,
                              or none on the waiting stream after the wait */
    uint32_t no_record;    /* the event names no cudaEventRecord and the recorded stream had work,
                              or names no recorded stream at all (wait_on_stream -1: the record was
                              never seen): which op the event captured is unknown, so no edge */
    uint32_t with_sync;    /* cudaStreamWaitEvent calls that a cuda_sync event describes */
} wait_counts;

/* Stream Wait Event: the event captured the work launched on `wait_on_stream`
 * before its cudaEventRecord (named by wait_on_cuda_event_record_corr_id);
 * the waiting stream's next op after the wait call starts after it. Without
 * the record, only "the recorded stream was idle when the wait was issued"
 * is exact (the record came before the wait); anything else is counted, not
 * guessed. wait_on_stream -1 (Kineto and `record --cuda` write it when the
 * record was never seen) leaves even the stream unknown: counted too. */
static void stream_wait_event(local_ctx *c, uint32_t call, int64_t dev, int64_t stream, int64_t wstream,
                              uint32_t rec, wait_counts *w)
{
    const lane_range *from = stream_lane(c, dev, wstream), *to = stream_lane(c, dev, stream);
    int64_t call_ts = c->g->nodes.start_ns[call];
    if (name_class(c, c->g->nodes.slice[call]) & NC_WAIT_EVENT) w->with_sync++;
    uint32_t dst = to ? lane_search(c, to, call_ts, true) : TS_NONE32;
    uint32_t src = from ? lane_search(c, from, rec != TS_NONE32 ? c->g->nodes.start_ns[rec] : call_ts, false) : TS_NONE32;
    if (dst != TS_NONE32 && wstream < 0) { w->no_record++; return; }   /* which stream is unknown */
    if (dst == TS_NONE32 || src == TS_NONE32) { w->idle++; return; }
    if (rec == TS_NONE32) { w->no_record++; return; }
    ts__graph_add_edge(c->g, src, dst, TS_EDGE_STREAM_WAIT, TS_EDGE_FROM_END);
    w->followed++;
}

/* One Kineto cuda_sync event: its correlation names the runtime call; its
 * args name the stream waited on and the cudaEventRecord that captured it. */
static void cuda_sync_event(local_ctx *c, uint32_t s, wait_counts *w)
{
    const ts_rank *r = c->r;
    ts_graph *g = c->g;
    const char *kind = ts__slice_arg_str(r, s, "cuda_sync_kind");
    int64_t dev = 0, stream = -1, wstream = -1, rec_corr = -1;
    (void)ts__slice_arg_i64(r, s, "device", &dev);
    (void)ts__slice_arg_i64(r, s, "stream", &stream);
    (void)ts__slice_arg_i64(r, s, "wait_on_stream", &wstream);
    (void)ts__slice_arg_i64(r, s, "wait_on_cuda_event_record_corr_id", &rec_corr);
    uint32_t call = runtime_by_corr(c, r->slices.corr[s]);
    if (!kind || call == TS_NONE32) return;
    int64_t call_ts = g->nodes.start_ns[call];
    uint32_t rec = runtime_by_corr(c, rec_corr);
    int64_t rec_ts = rec != TS_NONE32 ? g->nodes.start_ns[rec] : call_ts;
    if (!strcmp(kind, "Stream Wait Event")) {
        stream_wait_event(c, call, dev, stream, wstream, rec, w);
        return;
    }
    g->nodes.kind[call] = TS_NODE_HOST_SYNC;
    if (!strcmp(kind, "Event Sync")) host_wait(c, stream_lane(c, dev, wstream), call, rec_ts);
    else if (!strcmp(kind, "Stream Sync")) host_wait(c, stream_lane(c, dev, stream), call, call_ts);
    else if (!strcmp(kind, "Context Sync")) wait_all_streams(c, call, call_ts);
}

/* Kineto writes cudaStreamWaitEvent / cudaEventRecord as runtime events with
 * only correlation, External id and cbid: no stream, no event handle (every
 * trace under ../shared/data/kineto). Only a cuda_sync event says which
 * streams a wait joins, so calls without one are not followed: say how many. */
static void warn_waits(local_ctx *c, const wait_counts *w)
{
    uint32_t calls = c->n_wait_calls, bare = calls > w->with_sync ? calls - w->with_sync : 0;
    if (bare)
        ts__graph_warn(c->g, "rank %d: %u of %u cudaStreamWaitEvent calls have no cuda_sync event naming their "
                       "streams (runtime events carry no stream or event); those cross-stream waits are not in "
                       "the graph", c->r->rank, bare, calls);
    if (w->no_record)
        ts__graph_warn(c->g, "rank %d: %u Stream Wait Events name no cudaEventRecord "
                       "(wait_on_cuda_event_record_corr_id) while the recorded stream had work, or no recorded "
                       "stream (wait_on_stream -1); those waits are not in the graph", c->r->rank, w->no_record);
    c->g->n_stream_waits += calls;
    c->g->n_stream_waits_followed += w->followed;
    c->g->n_stream_waits_idle += w->idle;
}

/* Traces without cuda_sync events: a device or stream sync call waits for the
 * last op launched before it on every stream (the stream is not recorded). */
static void sync_calls_by_name(local_ctx *c)
{
    ts_graph *g = c->g;
    bool approx = false;
    for (uint32_t n = c->node0; n < g->nodes.n; n++) {
        if (g->nodes.kind[n] != TS_NODE_HOST_SYNC) continue;
        const char *name = slice_name(c, g->nodes.slice[n]);
        if (!(name_class(c, g->nodes.slice[n]) & NC_SYNC)) continue;   /* a synchronous copy: tied to its own op already */
        if (strcmp(name, "cudaDeviceSynchronize") && strcmp(name, "cuCtxSynchronize")) approx = true;
        wait_all_streams(c, n, g->nodes.start_ns[n]);
    }
    if (approx)
        ts__graph_warn(g, "rank %d: no cuda_sync events; stream/event syncs are assumed to wait for "
                       "every stream", c->r->rank);
}

static void fwdbwd_flows(local_ctx *c)
{
    const ts_flows *f = &c->r->flows;
    ts_graph *g = c->g;
    for (uint32_t i = 0; i < f->n; i++) {
        uint8_t kind = ts__flow_kind(f, i);
        if ((kind != TS_FLOW_FWDBWD && kind != TS_FLOW_DEP) || f->from[i] == TS_NONE32 || f->to[i] == TS_NONE32) continue;
        uint32_t a = c->node_of[f->from[i]], b = c->node_of[f->to[i]];
        if (a == TS_NONE32 || b == TS_NONE32 || a == b) continue;
        /* A flow pointing back in time would make a cycle; it says nothing causal. */
        if (g->nodes.start_ns[a] + g->nodes.dur_ns[a] > g->nodes.start_ns[b]) continue;
        ts__graph_add_edge(g, a, b, kind == TS_FLOW_DEP ? TS_EDGE_DEP : TS_EDGE_FWDBWD, TS_EDGE_FROM_END);
    }
}

static const lane_range *lane_of(const local_ctx *c, uint32_t node)
{
    for (uint32_t li = 0; li < c->n_lanes; li++)
        if (node >= c->lanes[li].first && node < c->lanes[li].first + c->lanes[li].n) return &c->lanes[li];
    return NULL;
}

/* First node of lane L starting at or after t. */
static uint32_t first_start_after(const ts_graph *g, const lane_range *L, int64_t t)
{
    uint32_t lo = L->first, hi = L->first + L->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->nodes.start_ns[mid] < t) lo = mid + 1; else hi = mid;
    }
    return lo < L->first + L->n ? lo : TS_NONE32;
}

static int cmp_start(const void *a, const void *b, void *arg)
{
    const ts_graph *g = arg;
    int64_t x = g->nodes.start_ns[*(const uint32_t *)a], y = g->nodes.start_ns[*(const uint32_t *)b];
    return (x > y) - (x < y);
}

/* CPU-only jobs (gloo): the k-th c10d:: collective on a training thread hands
 * its work to the next gloo: op starting after it on a worker thread; the
 * training thread's first op after the worker finishes is where the result is
 * consumed. Two sorted lists walked together: O(n log n) in comm ops. */
static int gloo_workers(local_ctx *c)
{
    ts_graph *g = c->g;
    ts_graph_members calls = {0}, workers = {0};
    int rc = TS_OK;
    for (uint32_t n = c->node0; rc == TS_OK && n < g->nodes.n; n++) {
        if (g->nodes.kind[n] != TS_NODE_COMM_CPU) continue;
        uint16_t nc = name_class(c, g->nodes.slice[n]);
        ts_graph_members *m = (nc & NC_C10D) ? &calls : (nc & NC_GLOO) ? &workers : NULL;
        if (!m) continue;
        if (ts__grow((void **)&m->node, &m->cap, sizeof *m->node, m->n + 1)) rc = TS_ENOMEM;
        else m->node[m->n++] = n;
    }
    if (rc == TS_OK && calls.n && workers.n) {
        qsort_r(calls.node, calls.n, sizeof *calls.node, cmp_start, g);
        qsort_r(workers.node, workers.n, sizeof *workers.node, cmp_start, g);
        uint32_t w = 0;
        for (uint32_t i = 0; i < calls.n; i++) {
            uint32_t n = calls.node[i];
            while (w < workers.n && g->nodes.start_ns[workers.node[w]] < g->nodes.start_ns[n]) w++;
            if (w == workers.n) break;
            uint32_t wn = workers.node[w++];
            ts__graph_add_edge(g, n, wn, TS_EDGE_COLL_LAUNCH, 0);
            const lane_range *L = lane_of(c, n);
            if (L) ts__graph_add_edge(g, wn, first_start_after(g, L, ts__slice_end(c->r, g->nodes.slice[wn])),
                                      TS_EDGE_WORKER, TS_EDGE_FROM_END);
        }
    }
    ts__free(calls.node, calls.cap * sizeof *calls.node);
    ts__free(workers.node, workers.cap * sizeof *workers.node);
    return rc;
}

/* Number of iterations starting at or before t (binary search). */
static uint32_t iterations_started(const ts_rank *r, int64_t t)
{
    uint32_t lo = 0, hi = r->n_iterations;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->iterations[mid].start_ns <= t) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* Each node's iteration: the last one starting at or before its start (a GPU
 * op's launch). Consecutive nodes of a lane are in time order and mostly in
 * the same iteration, so the previous answer is checked first: O(1) per
 * node in the common case, a binary search otherwise. */
static void assign_iterations(local_ctx *c)
{
    const ts_rank *r = c->r;
    ts_graph *g = c->g;
    uint32_t lo = 0;   /* iterations started at or before the previous node's time */
    for (uint32_t n = c->node0; n < g->nodes.n; n++) {
        int64_t t = g->nodes.start_ns[n];
        if (g->lanes[g->nodes.lane[n]].on_gpu) t = c->launch_ts[n - c->node0];
        bool same = (lo == 0 || r->iterations[lo - 1].start_ns <= t) &&
                    (lo == r->n_iterations || r->iterations[lo].start_ns > t);
        if (!same) lo = iterations_started(r, t);
        g->nodes.iteration[n] = (lo > 0 && t < r->iterations[lo - 1].end_ns) ? (int32_t)(lo - 1) : -1;
    }
}

/* One request event: a nonblocking call (start) or a Wait/Test (done). */
typedef struct req_ev { int64_t ts, handle; uint32_t node; uint8_t done; } req_ev;

static int cmp_req(const void *a, const void *b)
{
    const req_ev *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (int)x->done - (int)y->done;   /* a start before a wait of the same instant */
}

/* Most handles read from one "requests" list: the MPI collector keeps a
 * list within one 255-byte string arg, which holds at most 128. */
#define MPI_LIST_MAX 128

/* The integers of a JSON array arg ("[3,7]": the MPI collector's "requests"
 * and "indices"), which ingest keeps as JSON text, or of a string holding
 * the same text (the LTTng backend writes strings). At most cap; returns
 * how many were read (0 when the arg is absent or not an array). */
static uint32_t int_array_arg(const ts_rank *r, uint32_t s, const char *key, int64_t *out, uint32_t cap)
{
    const char *p = ts__slice_arg_str(r, s, key);
    uint32_t n = 0;
    while (p && (*p == ' ' || *p == '\n' || *p == '\t')) p++;
    if (!p || *p++ != '[') return 0;
    while (n < cap) {
        char *end;
        while (*p == ',' || *p == ' ' || *p == '\n' || *p == '\t') p++;
        long long v = strtoll(p, &end, 10);
        if (end == p) break;
        out[n++] = v;
        p = end;
    }
    return n;
}

/* Handles an MPI_Wait* or MPI_Test* with a "requests" list completed: the one at
 * "index" (Waitany/Testany), those at "indices" (Waitsome/Testsome), else
 * all of them (Waitall, Testall); none when "completed" is 0. Positions
 * outside the list (MPI_UNDEFINED, or past a cut-off list) name nothing. */
static uint32_t completed_handles(const local_ctx *c, uint32_t s, int64_t *h)
{
    int64_t reqs[MPI_LIST_MAX], pos[MPI_LIST_MAX], idx, done = 1;
    uint32_t n = int_array_arg(c->r, s, "requests", reqs, MPI_LIST_MAX), m, k = 0;
    if (n == 0 || (ts__slice_arg_i64(c->r, s, "completed", &done) && !done)) return 0;
    if (ts__slice_arg_i64(c->r, s, "index", &idx)) pos[0] = idx, m = 1;
    else if (ts__slice_arg_str(c->r, s, "indices")) m = int_array_arg(c->r, s, "indices", pos, MPI_LIST_MAX);
    else for (m = 0; m < n; m++) pos[m] = m;
    for (uint32_t i = 0; i < m; i++)
        if (pos[i] >= 0 && pos[i] < (int64_t)n && reqs[pos[i]] >= 0) h[k++] = reqs[pos[i]];
    return k;
}

static int push_req(req_ev **out, uint32_t *n_out, uint32_t *cap, req_ev e)
{
    if (ts__grow((void **)out, cap, sizeof **out, *n_out + 1)) return TS_ENOMEM;
    (*out)[(*n_out)++] = e;
    return TS_OK;
}

/* Request events of this rank, in time order: nonblocking calls, every
 * MPI_Wait / completed MPI_Test that names its handle, and one event per
 * handle an MPI_Wait* or MPI_Test* with a "requests" list completed. */
static int request_events(local_ctx *c, req_ev **out, uint32_t *n_out, uint32_t *cap)
{
    ts_graph *g = c->g;
    int64_t hs[MPI_LIST_MAX];
    for (uint32_t n = c->node0; n < g->nodes.n; n++) {
        uint32_t s = g->nodes.slice[n];
        uint16_t nc = g->nodes.kind[n] == TS_NODE_COMM_CPU ? name_class(c, s) : 0;
        int64_t h, done = 1, t = g->nodes.start_ns[n];
        if (!(nc & (NC_MPI_START | NC_MPI_DONE))) continue;
        if (!ts__slice_arg_i64(c->r, s, "request", &h)) {
            uint32_t k = (nc & NC_MPI_DONE) ? completed_handles(c, s, hs) : 0;
            for (uint32_t i = 0; i < k; i++)
                if (push_req(out, n_out, cap, (req_ev){t, hs[i], n, 1})) return TS_ENOMEM;
            continue;
        }
        if (h < 0) continue;   /* MPI_REQUEST_NULL's */
        if ((nc & NC_MPI_DONE) && ts__slice_arg_i64(c->r, s, "completed", &done) && !done) continue;
        if (push_req(out, n_out, cap, (req_ev){t, h, n, (nc & NC_MPI_DONE) != 0})) return TS_ENOMEM;
    }
    if (*n_out > 1) qsort(*out, *n_out, sizeof **out, cmp_req);
    return TS_OK;
}

/* Nonblocking MPI (`trainscope record --mpi` writes the request's Fortran
 * handle as "request" on MPI_I*, MPI_Wait and MPI_Test, and the handles as
 * a "requests" list with "index"/"indices" on MPI_Wait{all,any,some} and
 * MPI_Test{all,any,some}): a request completes in the first MPI_Wait*, or
 * MPI_Test* reporting it completed, on this rank after the call with the
 * same handle (MPI reuses a handle only once the request is freed, which
 * completion does). Edge: call.end -> completion.end, and g->mpi_done maps
 * the call (a collective member) to its completion so the barrier releases
 * the wait, not the call. Requests completed where no handle is recorded
 * (other tracers, lists cut at the arg size) are counted in a warning.
 * O(k log k) in request events. */
static int mpi_requests(local_ctx *c)
{
    ts_graph *g = c->g;
    req_ev *ev = NULL;
    uint32_t n = 0, cap = 0, starts = 0, open = 0;
    ts_map64 pending;   /* handle -> call node, TS_NONE32 once completed */
    ts__map64_init(&pending);
    int rc = request_events(c, &ev, &n, &cap);
    for (uint32_t i = 0; rc == TS_OK && i < n; i++) {
        uint64_t call;
        if (!ev[i].done) {
            starts++;
            rc = ts__map64_put(&pending, (uint64_t)ev[i].handle, ev[i].node);
        } else if (ts__map64_get(&pending, (uint64_t)ev[i].handle, &call) && call != TS_NONE32) {
            ts__graph_add_edge(g, (uint32_t)call, ev[i].node, TS_EDGE_MPI_REQUEST, TS_EDGE_FROM_END | TS_EDGE_TO_END);
            rc = ts__map64_put(&g->mpi_done, call, ev[i].node);
            if (rc == TS_OK) rc = ts__map64_put(&pending, (uint64_t)ev[i].handle, TS_NONE32);
            g->n_mpi_requests_followed++;
        }
    }
    for (uint32_t i = 0; i < pending.n_slots; i++)
        open += pending.keys[i] != UINT64_MAX && pending.vals[i] != TS_NONE32;
    if (rc == TS_OK && open)
        ts__graph_warn(g, "rank %d: %u of %u nonblocking MPI requests complete in no MPI_Wait/MPI_Test naming "
                       "them (the trace records no request handles there); the collective is "
                       "taken to end when the call returns", c->r->rank, open, starts);
    ts__free(ev, cap * sizeof *ev);
    ts__map64_free(&pending);
    return rc;
}

/* Members of this rank's collectives: its comm kernels when it has any, else
 * its gloo worker ops, else its top-level c10d:: / MPI calls (not the
 * MPI_Wait* / MPI_Test* that complete requests); in start order. */
static int collect_members(local_ctx *c, ts_graph_members *m)
{
    ts_graph *g = c->g;
    for (int pass = 0; pass < 3 && m->n == 0; pass++) {
        for (uint32_t n = c->node0; n < g->nodes.n; n++) {
            ts_node_kind k = (ts_node_kind)g->nodes.kind[n];
            uint16_t nc = k == TS_NODE_COMM_CPU ? name_class(c, g->nodes.slice[n]) : 0;
            bool take = pass == 0 ? k == TS_NODE_COMM_KERNEL
                      : pass == 1 ? (k == TS_NODE_COMM_CPU && (nc & NC_GLOO))
                                  : (k == TS_NODE_COMM_CPU && !(nc & (NC_GLOO | NC_MPI_DONE)));
            if (!take) continue;
            if (ts__grow((void **)&m->node, &m->cap, sizeof *m->node, m->n + 1)) return TS_ENOMEM;
            m->node[m->n++] = n;
        }
    }
    if (m->n > 1) qsort_r(m->node, m->n, sizeof *m->node, cmp_start, g);
    return TS_OK;
}

static void ctx_free(local_ctx *c)
{
    uint32_t ns = c->r->slices.n;
    ts__free(c->node_of, (size_t)ns * sizeof *c->node_of + 1);
    ts__free(c->op_anc, (size_t)ns * sizeof *c->op_anc + 1);
    ts__free(c->op_parent, (size_t)ns + 1);
    ts__free(c->name_class, ((size_t)c->r->strings.n + 1) * sizeof *c->name_class);
    ts__free(c->launch_ts, (size_t)(c->g->nodes.n - c->node0) * sizeof *c->launch_ts + 8);
    ts__free(c->lanes, c->cap_lanes * sizeof *c->lanes);
    ts__free(c->syncs, c->cap_syncs * sizeof *c->syncs);
    ts__free(c->stack, c->cap_stack * sizeof *c->stack);
    corr_free(&c->corr_rt);
    ts__map64_free(&c->stream_lane);
}

int ts__graph_local(ts_graph *g, uint16_t ri, const ts_rank *r, ts_graph_members *members, ts_error *err)
{
    local_ctx c = {.g = g, .ri = ri, .r = r, .node0 = g->nodes.n};
    uint32_t ns = r->slices.n;
    ts__map64_init(&c.stream_lane);
    c.node_of = ts__malloc((size_t)ns * sizeof *c.node_of + 1);
    c.op_anc = ts__malloc((size_t)ns * sizeof *c.op_anc + 1);
    c.op_parent = ts__calloc((size_t)ns + 1, 1);
    c.name_class = ts__calloc((size_t)r->strings.n + 1, sizeof *c.name_class);
    int rc = (!c.node_of || !c.op_anc || !c.op_parent || !c.name_class || corr_init(&c.corr_rt, r)) ? TS_ENOMEM : TS_OK;
    if (rc == TS_OK && g->opt.leaf_ops) mark_op_parents(&c);
    for (uint32_t t = 0; rc == TS_OK && t < r->n_tracks; t++) {
        if (r->tracks[t].kind == TS_TRACK_THREAD) rc = thread_track(&c, t);
        else if (r->tracks[t].kind == TS_TRACK_GPU_STREAM) rc = gpu_track(&c, t);
    }
    /* Kineto puts cuda_sync events on their own pid/tid rows, which ingest
     * keeps as thread tracks: find them by kind wherever they are. */
    for (uint32_t s = 0; rc == TS_OK && s < ns; s++) {
        if (r->slices.kind[s] != TS_KIND_CUDA_SYNC) continue;
        if (ts__grow((void **)&c.syncs, &c.cap_syncs, sizeof *c.syncs, c.n_syncs + 1)) rc = TS_ENOMEM;
        else c.syncs[c.n_syncs++] = s;
    }
    if (rc == TS_OK) {
        c.launch_ts = ts__malloc((size_t)(g->nodes.n - c.node0) * sizeof *c.launch_ts + 8);
        if (!c.launch_ts) rc = TS_ENOMEM;
    }
    if (rc == TS_OK && !g->oom) {
        for (uint32_t n = c.node0; n < g->nodes.n; n++) c.launch_ts[n - c.node0] = g->nodes.start_ns[n];
        link_launches(&c);
        wait_counts w = {0};
        for (uint32_t i = 0; i < c.n_syncs; i++) cuda_sync_event(&c, c.syncs[i], &w);
        if (c.n_syncs == 0) sync_calls_by_name(&c);
        warn_waits(&c, &w);
        fwdbwd_flows(&c);
        rc = gloo_workers(&c);
        if (rc == TS_OK) rc = mpi_requests(&c);
        assign_iterations(&c);
        if (rc == TS_OK) rc = collect_members(&c, members);
    }
    ctx_free(&c);
    if (rc == TS_OK && g->oom) rc = TS_ENOMEM;
    if (rc != TS_OK) return ts__error(err, rc, "%s: out of memory building its dependency graph", r->path ? r->path : "rank");
    return TS_OK;
}
