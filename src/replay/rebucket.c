/* rebucket.c - the --bucket-mb what-if: regroup data parallelism's gradient
 * all-reduces into buckets of another size, in backward order.
 *
 * Per rank and iteration, the old gradient all-reduces (all-reduce instances
 * over every rank) are the old buckets. Gradient sizes come from
 * gradients.json (registration order; reduced in reverse), the old bucket of
 * each gradient from DDP's own assignment at the cap that yields the observed
 * bucket count; without gradients.json the old buckets themselves (sizes from
 * the collective args) are the units, split when larger than the new cap.
 * A gradient is ready when its old bucket's launch (the c10d:: call that
 * handed it to the worker, else the member itself) started, interpolated in
 * bytes between the previous bucket's launch and this one for the earlier
 * gradients of a bucket; the ready time is tied to the op on the launching
 * thread that was running then, so other edits still move it.
 * Each new bucket becomes a member node per rank (on the rank's collective
 * channel, after the previous bucket on that worker lane plus the old
 * bucket's pick-up latency, which only the new bucket holding the old one's
 * last gradient inherits) and a barrier whose time is first one fixed cost
 * (the cost model's at 0 bytes) plus a per-byte time taken from the measured
 * old buckets (new_transfer); on CPU-only (gloo) jobs contention.c then
 * re-prices it by processor sharing (load x cost model x threads sharing the
 * core) and re-times compute for the new overlap. Whoever waited for an old
 * bucket now waits for the new bucket that holds that bucket's last
 * gradient, counted from the collective's completion; with a new partition
 * DDP's finalize keeps no other waits, and of an old bucket cut into pieces
 * only the last piece's copies back into the gradients are left after it
 * (the others were made while it ran). Old members and barriers are kept at
 * zero time with their exits cut. O(V + E + gradients x iterations).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "replay/contention.h"
#include "replay/edit.h"
#include "replay/gradients.h"
#include "replay/linkbound.h"
#include "replay/replay.h"

typedef struct old_bucket {
    uint32_t member;      /* sim node of this rank's member */
    uint32_t launch;      /* node whose start launched it (COLL_LAUNCH src, else member) */
    uint32_t coll;        /* row in r->colls */
    bool     retired;     /* replaced by new buckets (false: its iteration was left as measured) */
} old_bucket;

enum { RB_MAX_SLOTS = 8 };

typedef struct rb_ctx {
    ts_replay *r;
    int64_t    new_cap;       /* bytes */
    int64_t    trace_cap;     /* bytes of the cap the trace was recorded with, 0 = infer */
    const int64_t *grad;      /* gradient bytes in reduction (backward) order, NULL = old buckets are units */
    uint32_t   n_grad;
    const uint32_t *pieces;   /* [n_grad]: pieces each gradient is cut into (tensor partition), NULL = 1 */
    uint32_t   n_grad_units;  /* units the gradients make once cut (n_grad without pieces) */
    const uint32_t *group_units; /* [n_groups]: units per new bucket in order (any grouping), NULL = DDP's at new_cap */
    uint32_t   n_groups;
    int64_t   *units;         /* scratch: unit bytes of one iteration */
    uint32_t  *unit_old;      /* scratch: old bucket of each unit */
    uint32_t  *unit_new;      /* scratch: new bucket of each unit */
    uint32_t   cap_units;
    /* A rank's collective channel: the worker lanes its old members ran on
     * (gloo runs gloo_num_threads all-reduces at once, one per worker thread;
     * an NCCL communicator has one stream). New buckets take the lanes in
     * turn, each lane serial. Indexed [rank * RB_MAX_SLOTS + slot]. */
    uint32_t  *slot_lane;     /* lane row */
    uint32_t  *chain;         /* last new member on that lane, TS_NONE32 = none */
    int64_t   *chain_end;     /* measured end of the old member that chain[] stands for (unchanged partition) */
    uint32_t  *n_slots;       /* per rank */
    uint32_t  *next_slot;     /* per rank: slot of the next new bucket */
    int64_t    alpha_ns;      /* fixed cost per collective (model at 0 bytes), >= 0 */
    int64_t    last_launch_ns;/* measured start of the last old bucket's launch in the rank iteration
                                 being regrouped: DDP's finalize (the only real waits) comes after it */
    uint32_t   n_old, n_new;  /* totals, for the summary warning */
    /* The new buckets, for contention.c: n_nb of them, cap_nb room. */
    uint32_t  *nb_coll;       /* row in r->colls */
    int32_t   *nb_same;       /* r->colls row of the old bucket holding exactly its gradients, -1 = none */
    uint32_t  *nb_member;     /* [i * n_ranks + k]: its member on rank k */
    uint32_t   n_nb, cap_nb;
    /* gloo's worker pool, for rebalance_lanes(): the new buckets of each
     * regrouped rank iteration (a "group") in queue order, each with its
     * lane edge (from the previous bucket on its lane, or a copy of its
     * readiness edge when none) and its readiness edge. */
    uint32_t  *pool_x, *pool_lane_e, *pool_ready_e;
    int64_t   *pool_pickup;   /* the pick-up latency its lane edge carries */
    uint32_t   n_pool, cap_pool;
    uint32_t  *grp_first;     /* group g holds pool rows [grp_first[g], grp_first[g + 1]) */
    uint32_t  *grp_head;      /* [g * RB_MAX_SLOTS + q]: the bucket before the group on slot q, TS_NONE32 = none */
    uint8_t   *grp_follows;   /* 1 = the rank's previous regrouped iteration was a group too: its lanes,
                                 as rebalanced, lead into g (grp_head names them as first made) */
    uint16_t  *grp_rank;
    uint32_t   n_grp, cap_grp;
    uint8_t   *rank_pooled;   /* per rank, while building: its last regrouped iteration made a group */
    uint32_t  *grp_last_scratch; /* [rank * RB_MAX_SLOTS + q], rebalance_lanes() */
} rb_ctx;

static int64_t meas_start(const ts_replay *r, uint32_t n) { return ts__sim_meas_start(&r->sim, n); }

/* The COLL_LAUNCH source of a member, from the graph's in-edge index. */
static uint32_t launch_of(const ts_graph *g, uint32_t m)
{
    for (uint32_t k = g->in_first[m]; k < g->in_first[m + 1]; k++) {
        uint32_t e = g->in_edge[k];
        if (g->edges.kind[e] == TS_EDGE_COLL_LAUNCH) return g->edges.src[e];
    }
    return m;
}

static int cmp_old(const void *a, const void *b, void *arg)
{
    const ts_replay *r = arg;
    int64_t x = meas_start(r, ((const old_bucket *)a)->member), y = meas_start(r, ((const old_bucket *)b)->member);
    return (x > y) - (x < y);
}

/* Whether r->colls[ci] is a gradient all-reduce over every rank. */
static bool grad_allreduce(const ts_replay *r, uint32_t ci)
{
    const ts_replay_coll *c = &r->colls[ci];
    return c->kind == TS_COLL_ALL_REDUCE && c->barrier != TS_NONE32 && c->graph_coll != TS_NONE32 &&
           c->n_members == r->g->n_ranks;
}

/* The gradient all-reduce members of ranks 0 .. nr - 1 inside iterations,
 * each rank's in start order (out[k], n_out[k]; NULL when none): one pass
 * over the members, so O(members) for any number of ranks (a pass per rank
 * over every member was 1,024 x 0.9 M reads a candidate at 1,024 ranks).
 * The sort sees each rank's members in the same order as a pass per rank
 * would give it (instances in row order, members in instance order). */
static int rank_buckets(const ts_replay *r, uint32_t nr, old_bucket **out, uint32_t *n_out)
{
    const ts_graph *g = r->g;
    memset(n_out, 0, nr * sizeof *n_out);
    for (uint32_t ci = 0; ci < r->n_colls; ci++) {
        if (!grad_allreduce(r, ci)) continue;
        const ts_coll *gc = &g->colls[r->colls[ci].graph_coll];
        for (uint32_t k = 0; k < gc->n_members; k++) {
            uint32_t m = g->coll_members[gc->first_member + k];
            if (g->nodes.rank[m] < nr && g->nodes.iteration[m] >= 0) n_out[g->nodes.rank[m]]++;
        }
    }
    uint32_t *fill = ts__calloc((size_t)nr + 1, sizeof *fill);
    bool ok = fill != NULL;
    for (uint32_t k = 0; k < nr; k++) {
        out[k] = ok && n_out[k] ? ts__malloc(n_out[k] * sizeof *out[k]) : NULL;
        if (n_out[k] && !out[k]) { ok = false; n_out[k] = 0; }   /* freed as n_out[k] says */
    }
    for (uint32_t ci = 0; ok && ci < r->n_colls; ci++) {
        if (!grad_allreduce(r, ci)) continue;
        const ts_coll *gc = &g->colls[r->colls[ci].graph_coll];
        for (uint32_t k = 0; k < gc->n_members; k++) {
            uint32_t m = g->coll_members[gc->first_member + k];
            uint16_t q = g->nodes.rank[m];
            if (q < nr && g->nodes.iteration[m] >= 0) out[q][fill[q]++] = (old_bucket){m, launch_of(g, m), ci, false};
        }
    }
    for (uint32_t k = 0; ok && k < nr; k++)
        if (n_out[k]) qsort_r(out[k], n_out[k], sizeof *out[k], cmp_old, (void *)r);
    ts__free(fill, ((size_t)nr + 1) * sizeof *fill);
    return ok ? TS_OK : TS_ENOMEM;
}

/* Old partition of the gradients into `n_old` buckets: DDP's assignment at
 * the cap the trace was recorded with when known (trace_cap > 0); else at
 * the first of the usual caps (25 MiB, DDP's default, then round sizes) that
 * gives that many buckets, since caps giving the same count can still cut in
 * different places; else at the smallest cap giving that many (the count
 * falls as the cap grows, so a binary search finds it). false when the cap
 * gives another count. */
static bool infer_old_partition(rb_ctx *c, uint32_t n_old)
{
    static const double usual_mb[] = {25, 1, 2, 4, 5, 8, 10, 16, 32, 50, 64, 100, 128, 256, 0.5, 0.25};
    if (c->trace_cap > 0)
        return ts__ddp_buckets(c->grad, c->n_grad, TS_DDP_FIRST_BUCKET_BYTES, c->trace_cap, c->unit_old) == n_old;
    for (size_t i = 0; i < sizeof usual_mb / sizeof usual_mb[0]; i++)
        if (ts__ddp_buckets(c->grad, c->n_grad, TS_DDP_FIRST_BUCKET_BYTES, (int64_t)(usual_mb[i] * 1048576.0),
                            c->unit_old) == n_old)
            return true;
    int64_t lo = 1, hi = 0;
    for (uint32_t i = 0; i < c->n_grad; i++) hi += c->grad[i];
    hi = hi > TS_DDP_FIRST_BUCKET_BYTES ? hi : TS_DDP_FIRST_BUCKET_BYTES;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ts__ddp_buckets(c->grad, c->n_grad, TS_DDP_FIRST_BUCKET_BYTES, mid, c->unit_old) <= n_old) hi = mid;
        else lo = mid + 1;
    }
    return ts__ddp_buckets(c->grad, c->n_grad, TS_DDP_FIRST_BUCKET_BYTES, lo, c->unit_old) == n_old;
}

static bool grow_units(rb_ctx *c, uint32_t n)
{
    if (n <= c->cap_units) return true;
    uint32_t old = c->cap_units;
    int64_t *u = ts__realloc(c->units, old * sizeof *u, n * sizeof *u);
    if (u) c->units = u;
    uint32_t *o = ts__realloc(c->unit_old, old * sizeof *o, n * sizeof *o);
    if (o) c->unit_old = o;
    uint32_t *w = ts__realloc(c->unit_new, old * sizeof *w, n * sizeof *w);
    if (w) c->unit_new = w;
    if (!u || !o || !w) return false;
    c->cap_units = n;
    return true;
}

/* The gradients as units: each cut into pieces[i] of equal bytes (one
 * piece without a partition), each piece in its gradient's old bucket.
 * unit_old[] holds the old bucket per gradient on entry; written back to
 * front in place, since gradient i's pieces start at or after row i. */
static void cut_gradients(rb_ctx *c)
{
    uint32_t end = c->n_grad_units;
    for (uint32_t i = c->n_grad; i-- > 0;) {
        uint32_t k = c->pieces ? c->pieces[i] : 1, old = c->unit_old[i];
        end -= k;
        for (uint32_t p = 0; p < k; p++) {
            c->units[end + p] = c->grad[i] / k + ((int64_t)p < c->grad[i] % k ? 1 : 0);
            c->unit_old[end + p] = old;
        }
    }
}

/* New bucket of every unit: the given grouping, else DDP's at the new cap. */
static uint32_t assign_new(rb_ctx *c, uint32_t n_units)
{
    if (!c->group_units) return ts__ddp_buckets(c->units, n_units, TS_DDP_FIRST_BUCKET_BYTES, c->new_cap, c->unit_new);
    for (uint32_t j = 0, i = 0; j < c->n_groups; j++)
        for (uint32_t k = 0; k < c->group_units[j]; k++) c->unit_new[i++] = j;
    return c->n_groups;
}

/* Units of one iteration (gradients, or old buckets split at the new cap)
 * with their old bucket; bytes of old buckets filled in when inferred. */
static int iteration_units(rb_ctx *c, const old_bucket *ob, uint32_t n_old, uint32_t *n_units, ts_error *err)
{
    ts_replay *r = c->r;
    if (c->grad) {
        if (!grow_units(c, c->n_grad)) return ts__error(err, TS_ENOMEM, "replay: out of memory");
        if (!infer_old_partition(c, n_old))
            return ts__error(err, TS_EFORMAT, "--bucket-mb: the trace has %u gradient all-reduces per iteration, "
                             "which %s gives for these %u gradients (wrong gradients.json or --trace-bucket-mb?)",
                             n_old, c->trace_cap ? "its bucket cap never" : "no DDP bucket cap", c->n_grad);
        for (uint32_t b = 0; b < n_old; b++) r->colls[ob[b].coll].bytes = 0;
        for (uint32_t i = 0; i < c->n_grad; i++) r->colls[ob[c->unit_old[i]].coll].bytes += c->grad[i];
        if (!r->old_group_grads && (r->old_group_grads = ts__calloc(n_old, sizeof *r->old_group_grads))) {
            r->n_old_groups = n_old;   /* what the optimizer starts from */
            for (uint32_t i = 0; i < c->n_grad; i++) r->old_group_grads[c->unit_old[i]]++;
        }
        if (!grow_units(c, c->n_grad_units)) return ts__error(err, TS_ENOMEM, "replay: out of memory");
        cut_gradients(c);
        *n_units = c->n_grad_units;
        return TS_OK;
    }
    uint32_t n = 0;
    for (uint32_t b = 0; b < n_old; b++) {
        int64_t bytes = r->colls[ob[b].coll].bytes;
        if (bytes < 0)
            return ts__error(err, TS_EINVAL, "--bucket-mb: all-reduce '%s' (rank %u) has no size in the trace; "
                             "give --gradients gradients.json", ts__replay_node_name(r, ob[b].member), (unsigned)r->sim.rank[ob[b].member]);
        int64_t pieces = bytes > c->new_cap ? (bytes + c->new_cap - 1) / c->new_cap : 1;
        if (!grow_units(c, n + (uint32_t)pieces)) return ts__error(err, TS_ENOMEM, "replay: out of memory");
        for (int64_t p = 0; p < pieces; p++) {
            c->units[n] = bytes / pieces + (p < bytes % pieces ? 1 : 0);
            c->unit_old[n++] = b;
        }
    }
    *n_units = n;
    return TS_OK;
}

/* The node on `anchor`'s lane (same rank) running at time t: walk back from
 * the anchor over the lane's earlier rows. Returns the node and the gap from
 * its start to t. */
static uint32_t node_at(const ts_replay *r, uint32_t anchor, int64_t t, int64_t *gap)
{
    const ts_sim *s = &r->sim;
    const ts_graph *g = r->g;
    uint32_t first = g->rank_first_node[s->rank[anchor]];
    uint32_t best = anchor;
    for (uint32_t n = anchor; n > first && ts__sim_meas_start(s, best) > t;) {
        n--;
        if (s->lane[n] == s->lane[anchor]) best = n;
    }
    *gap = t - ts__sim_meas_start(s, best);
    return best;
}

/* Start of backward on the launching thread: its first op of the iteration
 * named like an autograd op; INT64_MIN when none is found. */
static int64_t backward_start(const ts_replay *r, uint32_t launch, int32_t iter)
{
    const ts_sim *s = &r->sim;
    int64_t t = INT64_MIN;
    uint32_t first = r->g->rank_first_node[s->rank[launch]];
    for (uint32_t n = launch + 1; n-- > first;) {
        if (s->lane[n] != s->lane[launch]) continue;
        if (s->iteration[n] != iter) break;
        const char *name = ts__replay_node_name(r, n);
        if (strstr(name, "Backward") || strstr(name, "backward")) t = ts__sim_meas_start(s, n);
    }
    return t;
}

/* Ready point of every unit: t_prev + frac * (t_b - t_prev) within its old
 * bucket, as (anchor node, gap). */
static void ready_points(const rb_ctx *c, const old_bucket *ob, uint32_t n_units, uint32_t *anchor, int64_t *gap)
{
    const ts_replay *r = c->r;
    int64_t t_prev = backward_start(r, ob[0].launch, r->sim.iteration[ob[0].member]);
    for (uint32_t i = 0, j; i < n_units; i = j) {
        uint32_t b = c->unit_old[i];
        int64_t t_b = meas_start(r, ob[b].launch), total = 0, run = 0;
        for (j = i; j < n_units && c->unit_old[j] == b; j++) total += c->units[j];
        if (t_prev == INT64_MIN || t_prev > t_b) t_prev = t_b;
        for (uint32_t k = i; k < j; k++) {
            run += c->units[k];
            int64_t t = t_prev + (int64_t)((double)(t_b - t_prev) * (total ? (double)run / (double)total : 1.0));
            anchor[k] = node_at(r, ob[b].launch, t, &gap[k]);
        }
        t_prev = t_b;
    }
}

/* Cut an old bucket out: no time, no exit, and its waiters re-pointed at the
 * new bucket j0 (new_member[j0]) that holds its last gradient. A waiter that
 * started before that bucket could even be launched (the graph ties a gloo
 * result to the next op on the training thread, which mid-backward is no real
 * wait) waits instead for the latest new bucket launched before it, or for
 * none: waiting for a later bucket would be a cycle. */
/* The old barrier's exit edge into member m (the first by edge row, as a
 * scan of the barrier's out-edges finds it), TS_NONE32 = none. Read from m's
 * few in-edges: the barrier's out-edges are one per rank, so scanning them
 * for every member made the regrouping O(ranks^2) per bucket (at 1,024
 * ranks most of a candidate's price). */
static uint32_t exit_edge(const ts_graph *g, uint32_t bar, uint32_t m)
{
    uint32_t best = TS_NONE32;
    for (uint32_t k = g->in_first[m]; k < g->in_first[m + 1]; k++) {
        uint32_t e = g->in_edge[k];
        if (g->edges.src[e] == bar && g->edges.kind[e] == TS_EDGE_COLL_EXIT && e < best) best = e;
    }
    return best;
}

/* Gap of the old barrier's exit into member m: this rank's own delay after
 * the collective completed (collect_colls left the smallest one at 0). */
static int64_t exit_residual(const ts_replay *r, uint32_t bar, uint32_t m)
{
    uint32_t e = exit_edge(r->g, bar, m);
    return e == TS_NONE32 ? 0 : r->sim.egap_ns[e];
}

/* Zero the positive gaps of the start-edges into `waiter` other than the
 * worker edges: they held its measured wait for an old bucket (the thread's
 * wake-up after it), which an earlier op now waits out for it. */
static void drop_wait_gaps(ts_replay *r, uint32_t waiter)
{
    const ts_graph *g = r->g;
    for (uint32_t k = g->in_first[waiter]; k < g->in_first[waiter + 1]; k++) {
        uint32_t e = g->in_edge[k];
        if (g->edges.kind[e] != TS_EDGE_WORKER && !(g->edges.flags[e] & TS_SIM_TO_END) && r->sim.egap_ns[e] > 0 &&
            !ts__edit_is_cut(r, e))
            ts__edit_set_gap(r, e, 0);
    }
}

/* DDP's finalize on the launching thread (after the last launch, up to the
 * last op that waited for a bucket) waits for the buckets in turn; its
 * measured gaps are those waits and the wake-ups after them, wherever the
 * graph tied them (a worker that records its end late leaves the real
 * consumer with a plain gap). With a new partition the waits are the new
 * buckets' worker edges, so every other gap in there goes. O(ops of the
 * finalize + the rank's rows between). */
static void drop_finalize_gaps(const rb_ctx *c, const old_bucket *ob, uint32_t n_old)
{
    ts_replay *r = c->r;
    const ts_graph *g = r->g;
    const ts_sim *s = &r->sim;
    uint32_t launch = ob[n_old - 1].launch, lane = s->lane[launch];
    int64_t last_wait = INT64_MIN;
    for (uint32_t b = 0; b < n_old; b++)
        for (uint32_t e = g->out_first[ob[b].member]; e < g->out_first[ob[b].member + 1]; e++)
            if (g->edges.kind[e] == TS_EDGE_WORKER && meas_start(r, g->edges.dst[e]) > last_wait)
                last_wait = meas_start(r, g->edges.dst[e]);
    uint32_t end = g->rank_first_node[s->rank[launch] + 1];
    for (uint32_t n = launch + 1; n < end; n++) {
        if (s->lane[n] != lane) continue;
        if (meas_start(r, n) > last_wait) break;
        drop_wait_gaps(r, n);
    }
}

/* A waiter that started before the iteration's last launch is an op of the
 * backward that happened to start after a bucket finished: DDP waits for
 * buckets only in its finalize, after the last launch. Its edge from the old
 * bucket is cut, and its other start-edges take the gaps that place it where
 * it was measured after each of their sources, so it keeps its measured
 * place in program order and waits for no new bucket (a merged bucket ends
 * later than the old one did, which held up the backward by milliseconds).
 * An unchanged schedule still reproduces its measured start. O(in-edges). */
static void unbind_waiter(ts_replay *r, uint32_t waiter, uint32_t cut_edge)
{
    const ts_graph *g = r->g;
    ts_sim *s = &r->sim;
    ts__edit_cut(r, cut_edge);
    for (uint32_t k = g->in_first[waiter]; k < g->in_first[waiter + 1]; k++) {
        uint32_t e = g->in_edge[k], src = g->edges.src[e];
        if (e == cut_edge || (s->eflags[e] & TS_SIM_TO_END) || ts__edit_is_cut(r, e)) continue;
        int64_t at = (s->eflags[e] & TS_SIM_FROM_END) ? ts__sim_meas_end(s, src) : ts__sim_meas_start(s, src);
        if (at != INT64_MIN) ts__edit_set_gap(r, e, ts__sim_meas_start(s, waiter) - at);
    }
}

/* DDP's finalize takes each bucket once it is done: views of it
 * (aten::as_strided), then a copy back per gradient (copy_bucket_to_grad),
 * in the bucket's order. An old bucket cut into pieces would have had the
 * copies of its earlier pieces done while the later pieces still ran, with
 * the training thread idle, so only the last piece's copies are left after
 * it: the other copies (and the ops nested in them) take no time. w is the
 * old bucket's finalize waiter (its first view), u0..u1 its units; nothing
 * changes unless the views are followed by exactly one copy per unit. The
 * views themselves (microseconds) stay. Until 22 Nov every copy ran after
 * the last piece: on mlp 25 -> 4 MB the copies of the 4 MiB piece, 1-2 ms,
 * came after the 3 MiB one. O(nodes of the bucket's finalize). */
static bool named(const ts_replay *r, uint32_t n, const char *what)
{
    return strstr(ts__replay_node_name(r, n), what) != NULL;
}

/* The next node on w's lane from q on that is not a view; end if none. */
static uint32_t after_views(const ts_replay *r, uint32_t q, uint32_t lane, uint32_t end)
{
    for (; q < end; q++)
        if (r->sim.lane[q] == lane && !named(r, q, "as_strided")) break;
    return q;
}

static void hide_done_copies(const rb_ctx *c, uint32_t w, uint32_t u0, uint32_t u1)
{
    ts_replay *r = c->r;
    ts_sim *s = &r->sim;
    uint32_t lane = s->lane[w], end = r->g->rank_first_node[s->rank[w] + 1], n = u1 - u0 + 1, copies = 0, last = u1;
    while (last > u0 && c->unit_new[last - 1] == c->unit_new[u1]) last--;   /* first unit of the last piece */
    if (last == u0 || !named(r, w, "as_strided")) return;
    uint32_t first = after_views(r, w, lane, end), q;
    int64_t copy_end = INT64_MIN;
    for (q = first; q < end; q++) {   /* the shape first: n copies and their children */
        if (s->lane[q] != lane) continue;
        if (named(r, q, "copy_bucket_to_grad")) { if (++copies > n) return; copy_end = ts__sim_meas_end(s, q); }
        else if (meas_start(r, q) > copy_end) break;
    }
    if (copies != n) return;
    copies = 0;
    for (q = first; q < end && copies <= last - u0; q++) {
        if (s->lane[q] != lane) continue;
        if (named(r, q, "copy_bucket_to_grad") && copies++ == last - u0) break;
        ts__edit_retime(c->r, q, 0);
    }
}

static void retire_old(rb_ctx *c, old_bucket *o, const uint32_t *new_member, const int64_t *new_resid,
                       const int64_t *new_ready, uint32_t u0, uint32_t u1, int64_t *waited)
{
    uint32_t j0 = c->unit_new[u1];
    ts_replay *r = c->r;
    const ts_graph *g = r->g;
    ts_sim *s = &r->sim;
    uint32_t m = o->member, bar = r->colls[o->coll].barrier;
    int64_t resid = exit_residual(r, bar, m);
    o->retired = true;
    ts__edit_remove(r, m);
    ts__edit_remove(r, bar);
    for (uint32_t k = g->in_first[m]; k < g->in_first[m + 1]; k++) {   /* only this rank's exit: */
        uint32_t e = g->in_edge[k];                                       /* later ranks read theirs */
        if (g->edges.kind[e] == TS_EDGE_COLL_EXIT && g->edges.src[e] == bar) ts__edit_cut(r, e);
    }
    for (uint32_t e = g->out_first[m]; e < g->out_first[m + 1]; e++) {
        if (g->edges.kind[e] != TS_EDGE_WORKER) continue;
        uint32_t waiter = g->edges.dst[e], j = j0 + 1;
        /* A waiter in another iteration (the next one's forward) is a gloo
         * worker that recorded its end late: DDP's finalize had waited for
         * the bucket before the optimizer ran (wait_for_optimizer below
         * keeps that), so nothing in the next iteration waits for it. */
        bool late_record = c->last_launch_ns != INT64_MIN && s->iteration[waiter] != s->iteration[m];
        if ((meas_start(r, waiter) < c->last_launch_ns || late_record) && !(g->edges.flags[e] & TS_SIM_TO_END)) {
            unbind_waiter(r, waiter, e);
            continue;
        }
        while (j > 0 && new_ready[j - 1] >= meas_start(r, waiter)) j--;
        if (j > 0) {
            /* The waiter's delay counts from the completion of the
             * collective (the member's end can be recorded late), and a
             * second waiter of one new bucket finds it done: no wait, no
             * wake-up. */
            bool again = j - 1 == j0 && (int64_t)j0 == *waited;
            int64_t after_done = again ? 0 : s->egap_ns[e] + resid;
            ts__edit_add_edge(r, new_member[j - 1], waiter, TS_SIM_FROM_END | (g->edges.flags[e] & TS_SIM_TO_END),
                              after_done - new_resid[j - 1], TS_EDGE_WORKER);
            if (again) drop_wait_gaps(r, waiter);
            if (j - 1 == j0 && meas_start(r, waiter) >= c->last_launch_ns) hide_done_copies(c, waiter, u0, u1);
            *waited = (int64_t)j - 1;
        }
        ts__edit_cut(r, e);
    }
}

/* Open a pool group for a regrouped iteration of `rank`: remember the
 * buckets its lanes follow, and whether they are the rank's previous
 * group's (then rebalance_lanes() takes them from that group's final lanes:
 * only add_rank_iteration() moves the lane chains). */
static int pool_group_begin(rb_ctx *c, uint16_t rank)
{
    const ts_col_ref gcols[] = {{(void **)&c->grp_first, sizeof *c->grp_first},
                                {(void **)&c->grp_head, RB_MAX_SLOTS * sizeof *c->grp_head},
                                {(void **)&c->grp_follows, sizeof *c->grp_follows},
                                {(void **)&c->grp_rank, sizeof *c->grp_rank}};
    if (ts__grow_cols(gcols, 4, &c->cap_grp, (size_t)c->n_grp + 2, 64)) return TS_ENOMEM;   /* g and g + 1 */
    uint32_t g = c->n_grp++, base = (uint32_t)rank * RB_MAX_SLOTS;
    c->grp_first[g] = c->n_pool;
    c->grp_first[g + 1] = c->n_pool;
    c->grp_rank[g] = rank;
    c->grp_follows[g] = c->rank_pooled[rank];
    for (uint32_t q = 0; q < RB_MAX_SLOTS; q++)
        c->grp_head[(size_t)g * RB_MAX_SLOTS + q] = q < c->n_slots[rank] ? c->chain[base + q] : TS_NONE32;
    return TS_OK;
}

static int pool_add(rb_ctx *c, uint32_t x, uint32_t lane_e, uint32_t ready_e, int64_t pickup)
{
    const ts_col_ref pcols[] = {{(void **)&c->pool_x, sizeof *c->pool_x}, {(void **)&c->pool_lane_e, sizeof *c->pool_lane_e},
                                {(void **)&c->pool_ready_e, sizeof *c->pool_ready_e},
                                {(void **)&c->pool_pickup, sizeof *c->pool_pickup}};
    if (ts__grow_cols(pcols, 4, &c->cap_pool, (size_t)c->n_pool + 1, 256)) return TS_ENOMEM;
    if (lane_e == TS_NONE32 || ready_e == TS_NONE32) return TS_ENOMEM;   /* ts__sim_add_edge ran out */
    c->pool_x[c->n_pool] = x;
    c->pool_lane_e[c->n_pool] = lane_e;
    c->pool_ready_e[c->n_pool] = ready_e;
    c->pool_pickup[c->n_pool] = pickup;
    c->n_pool++;
    c->grp_first[c->n_grp] = c->n_pool;
    return TS_OK;
}

/* Value of an edge's source point in the last simulation. */
static int64_t edge_src_value(const ts_sim *s, uint32_t e)
{
    return (s->eflags[e] & TS_SIM_FROM_END) ? s->end_ns[s->esrc[e]] : s->start_ns[s->esrc[e]];
}

/* gloo hands each queued all-reduce to whichever worker is free first. The
 * lanes new buckets take when they are made (in turn) are right only while
 * the buckets take about as long; when one worker is held by a long bucket
 * (the first, beside backward compute, can take 5-7x its time alone), the
 * other takes every bucket queued meanwhile. So after each simulation this
 * replays each group's queue on its workers, in queue order, with the
 * simulated ready times and durations, gives each bucket the worker that
 * frees first, and moves its lane edge there. The contention pass calls it
 * between its rounds until the schedule settles. Before 24 Nov 17:00 the
 * lanes stayed in turn: deepmlp 0.5 -> 0.25 MB left one worker idle for the
 * last 5 ms of the queue while the other ran every other bucket. O(buckets
 * x lanes). Returns whether it moved a bucket or an edge. */
static bool rebalance_lanes(void *ctx, ts_sim *s)
{
    rb_ctx *c = ctx;
    bool changed = false;
    for (uint32_t g = 0; g < c->n_grp; g++) {
        uint16_t rank = c->grp_rank[g];
        uint32_t base = (uint32_t)rank * RB_MAX_SLOTS, n = c->n_slots[rank];
        uint32_t *tail = c->grp_last_scratch + base;   /* the last bucket on each slot so far */
        if (!c->grp_follows[g])
            for (uint32_t q = 0; q < n; q++) tail[q] = c->grp_head[(size_t)g * RB_MAX_SLOTS + q];
        if (n < 2) continue;
        int64_t free_at[RB_MAX_SLOTS], prev_start = INT64_MIN;
        for (uint32_t q = 0; q < n; q++) free_at[q] = tail[q] == TS_NONE32 ? INT64_MIN : s->end_ns[tail[q]];
        for (uint32_t i = c->grp_first[g]; i < c->grp_first[g + 1]; i++) {
            uint32_t x = c->pool_x[i], re = c->pool_ready_e[i], le = c->pool_lane_e[i], cur = 0;
            while (cur < n && c->slot_lane[base + cur] != s->lane[x]) cur++;
            uint32_t best = cur < n ? cur : 0;
            for (uint32_t q = 0; q < n; q++) if (free_at[q] < free_at[best]) best = q;
            int64_t ready = edge_src_value(s, re) + s->egap_ns[re], start = ready;
            int64_t lane_free = free_at[best] == INT64_MIN ? INT64_MIN : free_at[best] + c->pool_pickup[i];
            if (lane_free > start) start = lane_free;
            if (prev_start > start) start = prev_start;
            int64_t dur = s->end_ns[x] - s->start_ns[x];
            free_at[best] = start + (dur > 0 ? dur : 0);
            prev_start = start;
            changed |= s->lane[x] != c->slot_lane[base + best];
            ts__edit_move_lane(c->r, x, c->slot_lane[base + best]);
            /* nothing before it on that worker: its readiness again */
            uint32_t src = tail[best] != TS_NONE32 ? tail[best] : s->esrc[re];
            uint8_t flags = tail[best] != TS_NONE32 ? TS_SIM_FROM_END : s->eflags[re];
            int64_t gap = tail[best] != TS_NONE32 ? c->pool_pickup[i] : s->egap_ns[re];
            changed |= s->esrc[le] != src || s->eflags[le] != flags || s->egap_ns[le] != gap;
            ts__edit_reroute(c->r, le, src, flags, gap);
            tail[best] = x;
        }
    }
    return changed;
}

/* The channel slot for a new bucket. An unchanged partition keeps every
 * bucket on the lane it ran on. A new one takes the lanes in turn: gloo
 * hands queued work to whichever worker is free, which for back-to-back
 * buckets alternates between its workers (keeping the old lane of the last
 * gradient would put every merged bucket of a pairwise merge on one worker).
 * Returns the slot index. */
static uint32_t pick_slot(rb_ctx *c, uint32_t rank, uint32_t old_lane, bool unchanged, bool first)
{
    uint32_t base = rank * RB_MAX_SLOTS, n = c->n_slots[rank], k = 0;
    while (k < n && c->slot_lane[base + k] != old_lane) k++;
    if (k == n) k = 0;
    if (!unchanged && !first) k = (c->next_slot[rank] + 1) % n;
    c->next_slot[rank] = k;
    return base + k;
}


/* Delay of old bucket b between its launch and its start that was not
 * queueing: the start minus the later of its launch and the end of the
 * previous bucket on its worker lane, >= 0 (the worker's pick-up latency).
 * The queueing itself is the lane chain's, which the new schedule redoes. */
static int64_t start_delay(const ts_replay *r, const old_bucket *ob, uint32_t b)
{
    const ts_sim *s = &r->sim;
    int64_t free_at = meas_start(r, ob[b].launch);
    for (uint32_t p = b; p-- > 0;)
        if (s->lane[ob[p].member] == s->lane[ob[b].member]) {
            if (ts__sim_meas_end(s, ob[p].member) > free_at) free_at = ts__sim_meas_end(s, ob[p].member);
            break;
        }
    int64_t d = meas_start(r, ob[b].member) - free_at;
    return d > 0 ? d : 0;
}

/* DDP's finalize waits for every bucket of the iteration before backward()
 * returns, so the optimizer step starts after all of them completed. The
 * waits above tie each old bucket's consumer to the new bucket holding its
 * last gradient; the other pieces of a split bucket run on the other worker
 * and can end later, and a consumer recorded in the next iteration was cut.
 * So every new bucket also gets an edge to the iteration's first
 * Optimizer.* op on the launching thread after the last launch (none found:
 * nothing is added). O(ops of the finalize + new buckets). */
static void wait_for_optimizer(const rb_ctx *c, const old_bucket *ob, uint32_t n_old, const uint32_t *new_member,
                               uint32_t n_new)
{
    ts_replay *r = c->r;
    ts_sim *s = &r->sim;
    uint32_t launch = ob[n_old - 1].launch, lane = s->lane[launch], opt = TS_NONE32;
    int32_t iter = s->iteration[ob[0].member];
    uint32_t end = r->g->rank_first_node[s->rank[launch] + 1];
    for (uint32_t n = launch + 1; n < end && opt == TS_NONE32; n++) {
        if (s->lane[n] != lane) continue;
        if (s->iteration[n] != iter) break;
        if (!strncmp(ts__replay_node_name(r, n), "Optimizer.", 10)) opt = n;
    }
    if (opt == TS_NONE32) return;
    for (uint32_t j = 0; j < n_new; j++) {
        ts__edit_add_edge(c->r, new_member[j], opt, TS_SIM_FROM_END, 0, TS_EDGE_WORKER);
    }
}

/* New members of one rank's iteration; new_member[j] receives bucket j's
 * node and new_resid[j] the exit delay it inherits. Each new bucket takes,
 * from the old bucket of its last gradient, the delay between launch and
 * start and this rank's delay after completion, so an unchanged partition
 * replays as measured. */
static int add_rank_iteration(rb_ctx *c, old_bucket *ob, uint32_t n_units, uint32_t *new_member,
                              int64_t *new_resid, int64_t *new_ready, const uint32_t *anchor, const int64_t *gap)
{
    ts_replay *r = c->r;
    ts_sim *s = &r->sim;
    uint16_t rank = s->rank[ob[0].member];
    const old_bucket *prev_old = NULL;
    bool same = true;      /* the new partition is the old one */
    for (uint32_t i = 0; i < n_units; i++) same = same && c->unit_new[i] == c->unit_old[i];
    /* The least pick-up latency and exit delay of this rank's old buckets:
     * what a piece of a split old bucket gets (below). */
    uint32_t n_old = c->unit_old[n_units - 1] + 1;
    int64_t least_pickup = INT64_MAX, least_resid = INT64_MAX;
    for (uint32_t b = 0; b < n_old; b++) {
        int64_t p = start_delay(r, ob, b), e = exit_residual(r, r->colls[ob[b].coll].barrier, ob[b].member);
        if (p < least_pickup) least_pickup = p;
        if (e < least_resid) least_resid = e;
    }
    if (!same && pool_group_begin(c, rank)) return TS_ENOMEM;
    c->rank_pooled[rank] = !same;
    uint32_t prev_x = TS_NONE32;
    for (uint32_t i = 0; i < n_units; i++) {
        uint32_t j = c->unit_new[i];
        if (i + 1 < n_units && c->unit_new[i + 1] == j) continue;   /* j's last unit decides */
        const old_bucket *o = &ob[c->unit_old[i]];
        uint32_t slot = pick_slot(c, rank, s->lane[o->member], same, prev_old == NULL);
        prev_old = o;
        uint32_t x = ts__edit_add_node(r, rank, TS_NODE_COMM_CPU, c->slot_lane[slot], s->iteration[ob[0].member],
                                       "allreduce (what-if bucket)");
        if (x == TS_NONE32) return TS_ENOMEM;
        /* An old bucket's own delays (a worker woken late, a rank that
         * recorded its end late) happened once: the new bucket holding its
         * last gradient inherits them, and the other pieces of a split take
         * the rank's least ones. Before 22 Nov every piece inherited them:
         * one 1.6 ms late pick-up of a 7 MB bucket, copied to each of its
         * 27 pieces of 256 KiB on two lanes, added 20 ms to the what-if. */
        bool holds_last = i + 1 == n_units || c->unit_old[i + 1] != c->unit_old[i];
        int64_t pickup = holds_last ? start_delay(r, ob, (uint32_t)(o - ob)) : least_pickup;
        uint32_t ready_e = ts__edit_add_edge(r, anchor[i], x, 0, gap[i] + pickup, 0), lane_e = TS_NONE32;
        new_resid[j] = holds_last ? exit_residual(r, r->colls[o->coll].barrier, o->member) : least_resid;
        new_ready[j] = meas_start(r, anchor[i]) + gap[i];
        /* In an unchanged partition each new bucket is its old one and its
         * lane predecessor is the old one's. gloo's workers record their
         * end late, so a bucket can have started before its predecessor's
         * recorded end (36 us in one trace of the 24 Nov 96-round ground
         * truth, whose identity replay was then +0.008%): the lane edge
         * takes the measured distance, negative or not, so that the
         * partition replays exactly. */
        if (c->chain[slot] != TS_NONE32) {
            int64_t measured = meas_start(r, o->member) - c->chain_end[slot];
            lane_e = ts__edit_add_edge(r, c->chain[slot], x, TS_SIM_FROM_END, same && measured < pickup ? measured : pickup, 0);
        } else if (!same) {
            lane_e = ts__edit_add_edge(r, anchor[i], x, 0, gap[i] + pickup, 0);   /* a placeholder the pool may move */
        }
        if (!same) {
            /* gloo's queue is first in, first out: no bucket starts before
             * the one queued ahead of it. */
            if (prev_x != TS_NONE32) ts__edit_add_edge(r, prev_x, x, 0, 0, 0);
            if (pool_add(c, x, lane_e, ready_e, pickup)) return TS_ENOMEM;
        }
        prev_x = x;
        c->chain[slot] = x;
        c->chain_end[slot] = ts__sim_meas_end(s, o->member);
        new_member[j] = x;
    }
    int64_t waited = -1;   /* the last new bucket a waiter was pointed at */
    c->last_launch_ns = same ? INT64_MIN : meas_start(r, ob[c->unit_old[n_units - 1]].launch);
    for (uint32_t i = 0, u0 = 0; i < n_units; i++) {
        if (i + 1 < n_units && c->unit_old[i + 1] == c->unit_old[i]) continue;
        retire_old(c, &ob[c->unit_old[i]], new_member, new_resid, new_ready, u0, i, &waited);
        u0 = i + 1;
    }
    if (!same) {
        drop_finalize_gaps(c, ob, c->unit_old[n_units - 1] + 1);
        wait_for_optimizer(c, ob, n_old, new_member, c->unit_new[n_units - 1] + 1);
    }
    return s->oom ? TS_ENOMEM : TS_OK;
}

/* The distinct lanes a rank's old members ran on, in first-use order. */
static void find_slots(rb_ctx *c, uint32_t rank, const old_bucket *ob, uint32_t n)
{
    uint32_t *lanes = c->slot_lane + (size_t)rank * RB_MAX_SLOTS, k = 0;
    for (uint32_t i = 0; i < n && k < RB_MAX_SLOTS; i++) {
        uint32_t l = c->r->sim.lane[ob[i].member], q = 0;
        while (q < k && lanes[q] != l) q++;
        if (q == k) lanes[k++] = l;
    }
    if (k == 0) lanes[k++] = TS_NONE32;
    c->n_slots[rank] = k;
    for (uint32_t q = 0; q < RB_MAX_SLOTS; q++) c->chain[(size_t)rank * RB_MAX_SLOTS + q] = TS_NONE32;
}

/* One group per iteration: the rows [lo, hi) of a rank's old buckets. */
static uint32_t group_end(const ts_replay *r, const old_bucket *ob, uint32_t n, uint32_t lo)
{
    uint32_t hi = lo;
    while (hi < n && r->sim.iteration[ob[hi].member] == r->sim.iteration[ob[lo].member]) hi++;
    return hi;
}

/* Transfer time of new bucket j: one fixed cost plus a variable part per
 * byte. A bucket cut from one old bucket (unchanged, or a piece of a split)
 * takes that bucket's measured time per byte in this iteration, so an
 * unchanged partition replays as measured and a split adds one fixed cost. A
 * bucket merged from several takes the iteration's least time per byte: an
 * old bucket's time is inflated mostly by the compute it overlapped (gloo
 * reduces on the CPU), and merging moves bytes toward the end of backward,
 * where the last, least-slowed bucket ran. On the 2-rank gloo ground truth
 * this halved the relative error of the what-ifs (median 15.6% -> 10.1%). */
static double var_per_byte(const rb_ctx *c, const ts_replay_coll *old)
{
    double var = (double)(old->transfer_ns > c->alpha_ns ? old->transfer_ns - c->alpha_ns : 0);
    return old->bytes > 0 ? var / (double)old->bytes : 0;
}

/* The iteration's least time per byte over its old buckets. */
static double least_per_byte(const rb_ctx *c, const old_bucket *ob, uint32_t n_old)
{
    double least = INFINITY;
    for (uint32_t b = 0; b < n_old; b++) {
        double v = var_per_byte(c, &c->r->colls[ob[b].coll]);
        if (v < least) least = v;
    }
    return least;
}

/* New bucket j's time. Its units are those of [u0, u1) with unit_new j
 * (the caller narrows the range to j's run when the buckets are runs of
 * units, as every grouping in reduction order is); least: least_per_byte. */
static int64_t new_transfer(const rb_ctx *c, const old_bucket *ob, double least, uint32_t u0, uint32_t u1, uint32_t j,
                            int64_t *bytes, int32_t *same)
{
    const ts_replay *r = c->r;
    uint32_t first = UINT32_MAX, last = 0;
    double t = (double)c->alpha_ns;
    *bytes = 0;
    for (uint32_t i = u0; i < u1; i++) {
        if (c->unit_new[i] != j) continue;
        if (first == UINT32_MAX) first = c->unit_old[i];
        last = c->unit_old[i];
        t += var_per_byte(c, &r->colls[ob[c->unit_old[i]].coll]) * (double)c->units[i];
        *bytes += c->units[i];
    }
    if (first != last) t = (double)c->alpha_ns + least * (double)*bytes;
    *same = first == last && *bytes == r->colls[ob[first].coll].bytes ? (int32_t)ob[first].coll : -1;
    /* An unchanged bucket keeps its measured time even when that was below
     * the fitted fixed cost (var_per_byte's 0 would price it at alpha): the
     * contention pass re-simulates from these times, and an unchanged
     * partition must start from the measured schedule to reproduce it
     * (22 Nov: mlp 4 -> 4 MB came out -0.012% with a fitted kappa). */
    if (*same >= 0) return r->colls[*same].transfer_ns;
    return (int64_t)t;
}

/* A barrier for a new bucket over every rank's member (exit gaps resid[]). */
static int add_barrier(rb_ctx *c, const uint32_t *members, const int64_t *resid, uint32_t n_ranks, int64_t bytes,
                       int64_t t, uint32_t lane)
{
    return ts__edit_add_collective(c->r, members, resid, n_ranks, TS_COLL_ALL_REDUCE, bytes, t, lane, NULL);
}

/* Remember the new bucket add_barrier just made (the last row of r->colls). */
static int note_new_bucket(rb_ctx *c, const uint32_t *members, uint32_t n_ranks, int32_t same)
{
    const ts_col_ref cols[] = {{(void **)&c->nb_coll, sizeof *c->nb_coll}, {(void **)&c->nb_same, sizeof *c->nb_same},
                               {(void **)&c->nb_member, n_ranks * sizeof *c->nb_member}};
    if (ts__grow_cols(cols, 3, &c->cap_nb, (size_t)c->n_nb + 1, 64)) return TS_ENOMEM;
    c->nb_coll[c->n_nb] = c->r->n_colls - 1;
    c->nb_same[c->n_nb] = same;
    memcpy(c->nb_member + (size_t)c->n_nb * n_ranks, members, n_ranks * sizeof *members);
    c->n_nb++;
    return TS_OK;
}

typedef struct rb_ranks {
    old_bucket **ob;          /* per rank: its old buckets in start order */
    uint32_t    *n_ob;
    uint32_t    *cursor;      /* per rank: first row of the current iteration */
    uint32_t    *anchor;      /* per unit */
    int64_t     *gap;         /* per unit */
    uint32_t    *new_member;  /* [rank * cap + j] */
    int64_t     *new_resid;   /* [rank * cap + j]: exit gap of that member */
    int64_t     *new_ready;   /* [j]: measured time bucket j's last gradient was ready (one rank) */
    uint32_t     cap;         /* units the four arrays above hold (per rank) */
} rb_ranks;

static void rb_ranks_free_units(rb_ranks *R, uint32_t n_ranks)
{
    size_t n = R->cap;
    ts__free(R->anchor, n * sizeof *R->anchor);
    ts__free(R->gap, n * sizeof *R->gap);
    ts__free(R->new_ready, n * sizeof *R->new_ready);
    ts__free(R->new_member, n_ranks * n * sizeof *R->new_member);
    ts__free(R->new_resid, n_ranks * n * sizeof *R->new_resid);
    R->anchor = NULL;
    R->gap = NULL;
    R->new_ready = NULL;
    R->new_member = NULL;
    R->new_resid = NULL;
    R->cap = 0;
}

/* Room for n units per rank; contents need not survive (one iteration's). */
static bool grow_ranks(rb_ranks *R, uint32_t n_ranks, uint32_t n)
{
    if (n <= R->cap) return true;
    size_t old = R->cap;
    ts__free(R->anchor, old * sizeof *R->anchor);
    ts__free(R->gap, old * sizeof *R->gap);
    ts__free(R->new_ready, old * sizeof *R->new_ready);
    ts__free(R->new_member, n_ranks * old * sizeof *R->new_member);
    ts__free(R->new_resid, n_ranks * old * sizeof *R->new_resid);
    R->anchor = ts__malloc((size_t)n * sizeof *R->anchor);
    R->gap = ts__malloc((size_t)n * sizeof *R->gap);
    R->new_ready = ts__malloc((size_t)n * sizeof *R->new_ready);
    R->new_member = ts__malloc((size_t)n_ranks * n * sizeof *R->new_member);
    R->new_resid = ts__malloc((size_t)n_ranks * n * sizeof *R->new_resid);
    R->cap = n;
    if (R->anchor && R->gap && R->new_ready && R->new_member && R->new_resid) return true;
    rb_ranks_free_units(R, n_ranks);
    return false;
}

/* Regroup one iteration (rows [cursor, end) of every rank). */
/* Regroup one iteration whose n_old old buckets start at every rank's cursor. */
static int regroup_iteration(rb_ctx *c, rb_ranks *R, uint32_t n_ranks, uint32_t n_old, bool fill_only, ts_error *err)
{
    ts_replay *r = c->r;
    for (uint32_t k = 0; k < n_ranks; k++) {
        old_bucket *ob = R->ob[k] + R->cursor[k];
        uint32_t n_units = 0;
        int rc = iteration_units(c, ob, n_old, &n_units, err);
        if (rc) return rc;
        if (fill_only) continue;
        uint32_t n_new = assign_new(c, n_units);
        if (k == 0 && !grow_ranks(R, n_ranks, n_units)) return ts__error(err, TS_ENOMEM, "replay: out of memory");
        ready_points(c, ob, n_units, R->anchor, R->gap);
        if (add_rank_iteration(c, ob, n_units, R->new_member + (size_t)k * R->cap,
                               R->new_resid + (size_t)k * R->cap, R->new_ready, R->anchor, R->gap))
            return ts__error(err, TS_ENOMEM, "replay: out of memory");
        if (k + 1 < n_ranks) continue;
        c->n_old += n_old;
        c->n_new += n_new;
        uint32_t members[n_ranks];
        int64_t resid[n_ranks];
        double least = least_per_byte(c, ob, n_old);
        bool runs = true;   /* each new bucket's units a run (then j's are [u0, u1)) */
        for (uint32_t i = 1; i < n_units; i++) runs = runs && c->unit_new[i] >= c->unit_new[i - 1];
        for (uint32_t j = 0, u0 = 0, u1 = 0; j < n_new; j++, u0 = u1) {
            while (u1 < n_units && (!runs || c->unit_new[u1] <= j)) u1++;
            if (!runs) u0 = 0;
            int32_t same;
            int64_t bytes, t = new_transfer(c, ob, least, u0, u1, j, &bytes, &same);
            for (uint32_t q = 0; q < n_ranks; q++) {
                members[q] = R->new_member[(size_t)q * R->cap + j];
                resid[q] = R->new_resid[(size_t)q * R->cap + j];
            }
            if (add_barrier(c, members, resid, n_ranks, bytes, t, r->sim.lane[r->colls[ob[0].coll].barrier]) ||
                note_new_bucket(c, members, n_ranks, same))
                return ts__error(err, TS_ENOMEM, "replay: out of memory");
        }
    }
    return TS_OK;
}

/* The usual number of gradient all-reduces per iteration: the most frequent
 * count on rank 0 (the first wins ties). */
static uint32_t usual_count(const ts_replay *r, const rb_ranks *R)
{
    uint32_t best = 0, best_times = 0;
    for (uint32_t lo = 0, hi; lo < R->n_ob[0]; lo = hi) {
        hi = group_end(r, R->ob[0], R->n_ob[0], lo);
        uint32_t times = 0;
        for (uint32_t a = 0, b; a < R->n_ob[0]; a = b) {
            b = group_end(r, R->ob[0], R->n_ob[0], a);
            times += b - a == hi - lo;
        }
        if (times > best_times) { best = hi - lo; best_times = times; }
    }
    return best;
}

/* An iteration left as measured keeps its old buckets, but the first of
 * them on a worker lane followed an old bucket of the iteration before,
 * which was retired (zero time, at its start): without more, it could start
 * as soon as its launch allowed, milliseconds early, and shift the sharing
 * the contention model sees (an unchanged partition then did not replay
 * exactly: +0.64% on a 48-round ground-truth trace cut at its edge). So it
 * also follows the last new bucket on that lane, with its measured gap.
 * ob/n: this rank's old buckets of the kept iteration; before: the rank's
 * old buckets of earlier iterations. O(in-edges x previous iteration). */
static void keep_lane_order(rb_ctx *c, uint16_t rank, const old_bucket *before, uint32_t n_before,
                            const old_bucket *ob, uint32_t n)
{
    ts_replay *r = c->r;
    const ts_graph *g = r->g;
    ts_sim *s = &r->sim;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t m = ob[i].member;
        for (uint32_t k = g->in_first[m]; k < g->in_first[m + 1]; k++) {
            uint32_t e = g->in_edge[k], p = g->edges.src[e];
            if (g->edges.kind[e] != TS_EDGE_PROGRAM || !(g->edges.flags[e] & TS_EDGE_FROM_END)) continue;
            bool retired = false;
            for (uint32_t q = n_before; q-- > 0 && !retired;) {
                if (s->iteration[before[q].member] + 1 < s->iteration[m]) break;
                retired = before[q].member == p && before[q].retired;
            }
            if (!retired) continue;
            uint32_t base = (uint32_t)rank * RB_MAX_SLOTS;
            for (uint32_t q = 0; q < c->n_slots[rank]; q++)
                if (c->slot_lane[base + q] == s->lane[m] && c->chain[base + q] != TS_NONE32)
                    ts__edit_add_edge(r, c->chain[base + q], m, TS_SIM_FROM_END, s->egap_ns[e], 0);
        }
    }
}

/* Walk every iteration of rank 0; fill_only = pass 1 (sizes of old buckets).
 * An iteration where some rank holds another count of all-reduces than the
 * usual one (cut off at the trace's edge: the profiler stopped before a
 * worker recorded its last all-reduce) is left as measured, and counted. */
static int regroup_all(rb_ctx *c, rb_ranks *R, uint32_t n_ranks, bool fill_only, uint32_t *n_skipped, ts_error *err)
{
    const ts_replay *r = c->r;
    uint32_t usual = usual_count(r, R);
    memset(R->cursor, 0, n_ranks * sizeof *R->cursor);
    *n_skipped = 0;
    int rc = TS_OK;
    while (rc == TS_OK && R->cursor[0] < R->n_ob[0]) {
        int32_t iter = r->sim.iteration[R->ob[0][R->cursor[0]].member];
        bool ok = true;
        uint32_t n_here[n_ranks];
        for (uint32_t k = 0; k < n_ranks; k++) {
            while (R->cursor[k] < R->n_ob[k] && r->sim.iteration[R->ob[k][R->cursor[k]].member] < iter) R->cursor[k]++;
            bool has = R->cursor[k] < R->n_ob[k] && r->sim.iteration[R->ob[k][R->cursor[k]].member] == iter;
            n_here[k] = has ? group_end(r, R->ob[k], R->n_ob[k], R->cursor[k]) - R->cursor[k] : 0;
            ok = ok && n_here[k] == usual;
        }
        if (ok) rc = regroup_iteration(c, R, n_ranks, usual, fill_only, err);
        else {
            (*n_skipped)++;
            for (uint32_t k = 0; k < n_ranks && !fill_only; k++)
                if (n_here[k])   /* a rank with no old buckets has no array to point into */
                    keep_lane_order(c, (uint16_t)k, R->ob[k], R->cursor[k], R->ob[k] + R->cursor[k], n_here[k]);
            if (c->r->sim.oom) rc = ts__error(err, TS_ENOMEM, "replay: out of memory");
        }
        for (uint32_t k = 0; k < n_ranks; k++) R->cursor[k] += n_here[k];
    }
    return rc;
}

/* How many ops of this name the rank ran before in this iteration (0 = this
 * is the first), counted in `seen` (key rank|name -> iteration << 32 |
 * count); a lane's rows come in time order. -1 = out of memory. */
static int64_t occurrence(ts_map64 *seen, uint64_t rank_name, int32_t iter)
{
    uint64_t v;
    uint32_t count = ts__map64_get(seen, rank_name, &v) && (int32_t)(v >> 32) == iter ? (uint32_t)v + 1 : 0;
    if (ts__map64_put(seen, rank_name, (uint64_t)(uint32_t)iter << 32 | count)) return -1;
    return count;
}

/* Compute ops a gloo reduction can slow: the training threads' CPU ops
 * inside iterations, each named per (rank, op name, occurrence in the
 * iteration): the same layer's op in every iteration. Naming by op name
 * alone put every layer's ConvolutionBackward0 under one base time, and the
 * layers that run while a bucket is in flight are the big ones at the end
 * of backward, so kappa read the layers' sizes as contention (63% on a cnn
 * trace). */
static int contention_ops(const ts_replay *r, const rb_ranks *R, ts_contention *ct)
{
    const ts_sim *s = &r->sim;
    const ts_graph *g = r->g;
    ts_map64 names, seen;
    ts__map64_init(&names);
    ts__map64_init(&seen);
    ct->op = ts__malloc((size_t)s->n_base_nodes * sizeof *ct->op + 1);
    ct->name_of = ts__malloc((size_t)s->n_base_nodes * sizeof *ct->name_of + 1);
    int rc = ct->op && ct->name_of ? TS_OK : TS_ENOMEM;
    for (uint32_t n = 0; rc == TS_OK && n < s->n_base_nodes; n++) {
        uint16_t k = s->rank[n];
        if (k >= ct->n_ranks || !R->n_ob[k] || s->kind[n] != TS_NODE_CPU_OP || s->iteration[n] < 0 ||
            s->self_ns[n] <= 0 || s->lane[n] != s->lane[R->ob[k][0].launch] || g->nodes.slice[n] == TS_NONE32)
            continue;
        uint64_t rank_name = (uint64_t)k << 32 | ts__graph_rank(g, n)->slices.name[g->nodes.slice[n]], id;
        int64_t nth = occurrence(&seen, rank_name, s->iteration[n]);
        if (nth < 0) { rc = TS_ENOMEM; break; }
        if (nth >= 1 << 16) continue;   /* room in the key: the rank takes bits 32-47, nth 48-63 */
        uint64_t key = rank_name | (uint64_t)nth << 48;
        if (!ts__map64_get(&names, key, &id)) {
            id = ct->n_names++;
            if (ts__map64_put(&names, key, id)) { rc = TS_ENOMEM; break; }
        }
        ct->name_of[ct->n_ops] = (uint32_t)id;
        ct->op[ct->n_ops++] = n;
    }
    ts__map64_free(&names);
    ts__map64_free(&seen);
    return rc;
}

/* Members whose activity slows compute: every old one (measured; active
 * unless retired) and every new one. */
static int contention_members(const ts_replay *r, const rb_ranks *R, ts_contention *ct)
{
    const ts_sim *s = &r->sim;
    uint32_t cap = s->n_nodes - s->n_base_nodes;
    for (uint32_t k = 0; k < ct->n_ranks; k++) cap += R->n_ob[k];
    ct->member = ts__malloc((size_t)cap * sizeof *ct->member + 1);
    ct->active = ts__malloc((size_t)cap + 1);
    if (!ct->member || !ct->active) return TS_ENOMEM;
    for (uint32_t k = 0; k < ct->n_ranks; k++)
        for (uint32_t i = 0; i < R->n_ob[k]; i++) {
            ct->member[ct->n_members] = R->ob[k][i].member;
            ct->active[ct->n_members++] = !R->ob[k][i].retired;
        }
    for (uint32_t n = s->n_base_nodes; n < s->n_nodes; n++)
        if (s->kind[n] == TS_NODE_COMM_CPU) {
            ct->member[ct->n_members] = n;
            ct->active[ct->n_members++] = 1;
        }
    return TS_OK;
}

/* The cost model's time for an all-reduce of `bytes` over n ranks alone on
 * an idle machine; 0 = unknown. */
static int64_t work_ns(const ts_replay *r, int64_t bytes, uint32_t n)
{
    int64_t t = r->model && bytes > 0 ? ts_coll_model_predict_ns(r->model, TS_COLL_ALL_REDUCE, (uint64_t)bytes, n) : 0;
    return t > 0 ? t : 0;
}

static bool alloc_colls(ts_contention *ct, uint32_t n)
{
    size_t nr = ct->n_ranks;
    ct->coll_bar = ts__malloc(n * sizeof *ct->coll_bar + 1);
    ct->coll_member = ts__malloc(n * nr * sizeof *ct->coll_member + 1);
    ct->coll_work_ns = ts__malloc(n * sizeof *ct->coll_work_ns + 1);
    ct->coll_meas_ns = ts__malloc(n * sizeof *ct->coll_meas_ns + 1);
    ct->coll_same = ts__malloc(n * sizeof *ct->coll_same + 1);
    ct->coll_new = ts__malloc(n + 1);
    return ct->coll_bar && ct->coll_member && ct->coll_work_ns && ct->coll_meas_ns && ct->coll_same && ct->coll_new;
}

static void free_colls(ts_contention *ct, uint32_t n)
{
    size_t nr = ct->n_ranks;
    ts__free(ct->coll_bar, n * sizeof *ct->coll_bar + 1);
    ts__free(ct->coll_member, n * nr * sizeof *ct->coll_member + 1);
    ts__free(ct->coll_work_ns, n * sizeof *ct->coll_work_ns + 1);
    ts__free(ct->coll_meas_ns, n * sizeof *ct->coll_meas_ns + 1);
    ts__free(ct->coll_same, n * sizeof *ct->coll_same + 1);
    ts__free(ct->coll_new, n + 1);
}

/* The gradient all-reduces for contention.c: every old one (rank 0's old
 * buckets, members from the graph) with its measured transfer, then every
 * new one; each with the cost model's time for its bytes. */
static int contention_colls(const rb_ctx *c, const rb_ranks *R, ts_contention *ct)
{
    const ts_replay *r = c->r;
    const ts_graph *g = r->g;
    uint32_t nr = ct->n_ranks, n = 0;
    int32_t *row_of = ts__malloc((size_t)r->n_colls * sizeof *row_of + 1);
    if (!row_of || !alloc_colls(ct, R->n_ob[0] + c->n_nb)) { ts__free(row_of, (size_t)r->n_colls * sizeof *row_of + 1); return TS_ENOMEM; }
    for (uint32_t i = 0; i < r->n_colls; i++) row_of[i] = -1;
    for (uint32_t i = 0; i < R->n_ob[0]; i++, n++) {
        const ts_replay_coll *rc = &r->colls[R->ob[0][i].coll];
        const ts_coll *gc = &g->colls[rc->graph_coll];
        for (uint32_t k = 0; k < nr; k++) ct->coll_member[(size_t)n * nr + k] = R->ob[0][i].member;
        for (uint32_t q = 0; q < gc->n_members; q++) {
            uint32_t m = g->coll_members[gc->first_member + q];
            if (g->nodes.rank[m] < nr) ct->coll_member[(size_t)n * nr + g->nodes.rank[m]] = m;
        }
        ct->coll_bar[n] = rc->barrier;
        ct->coll_work_ns[n] = work_ns(r, rc->bytes, nr);
        ct->coll_meas_ns[n] = rc->transfer_ns;
        ct->coll_same[n] = -1;
        ct->coll_new[n] = 0;
        row_of[R->ob[0][i].coll] = (int32_t)n;
    }
    for (uint32_t i = 0; i < c->n_nb; i++, n++) {
        const ts_replay_coll *rc = &r->colls[c->nb_coll[i]];
        memcpy(ct->coll_member + (size_t)n * nr, c->nb_member + (size_t)i * nr, nr * sizeof *ct->coll_member);
        ct->coll_bar[n] = rc->barrier;
        ct->coll_work_ns[n] = work_ns(r, rc->bytes, nr);
        ct->coll_meas_ns[n] = 0;
        ct->coll_same[n] = c->nb_same[i] >= 0 ? row_of[c->nb_same[i]] : -1;
        ct->coll_new[n] = 1;
    }
    ct->n_colls = n;
    ct->alpha_ns = c->alpha_ns;
    ts__free(row_of, (size_t)r->n_colls * sizeof *row_of + 1);
    return TS_OK;
}

/* CPU-only jobs: re-time compute and the new all-reduces for the new
 * buckets' overlap (contention.c). */
static int apply_contention(rb_ctx *c, const rb_ranks *R, uint32_t n_ranks, ts_error *err)
{
    ts_replay *r = c->r;
    const ts_graph *g = r->g;
    if (g->lanes[r->sim.lane[R->ob[0][0].member]].on_gpu) return TS_OK;   /* NCCL reduces on the GPU */
    ts_contention ct = {.n_ranks = (uint16_t)n_ranks, .kappa_given = ts__coll_model_cpu_kappa(r->model),
                        .after_sim = c->n_grp ? rebalance_lanes : NULL, .after_sim_ctx = c,
                        .memo = r->session ? r->session->ct : NULL,
                        .n_memo = r->session ? (uint32_t)(sizeof r->session->ct / sizeof r->session->ct[0]) : 0,
                        .memo_next = r->session ? &r->session->ct_next : NULL,
                        .all_rounds = r->session && r->session->all_rounds, .replica_of = g->replica_of};
    size_t n_base = r->sim.n_base_nodes, n_all = r->sim.n_nodes;
    uint32_t cap_members = (uint32_t)(n_all - n_base);
    for (uint32_t k = 0; k < n_ranks; k++) cap_members += R->n_ob[k];
    uint32_t cap_colls = R->n_ob[0] + c->n_nb;
    int rc = contention_ops(r, R, &ct);
    if (rc == TS_OK) rc = contention_members(r, R, &ct);
    if (rc == TS_OK) rc = contention_colls(c, R, &ct);
    double kappa = 0;
    if (rc == TS_OK) rc = ts__contention_apply(&ct, &r->sim, &kappa, err);
    else ts__error(err, rc, "replay: out of memory");
    if (r->session) {
        r->session->n_rounds += ct.n_rounds;
        r->session->n_contended++;
    }
    if (rc == TS_OK && ct.kappa_given <= 0 && ts__coll_model_cpu_disturbed(r->model) > 0)
        ts__replay_warn(r, "--bucket-mb: the calibration log's sharing test is disturbed (the matmuls ran %.2fx "
                        "faster beside the all-reduces than alone: the machine's load changed while it ran), so "
                        "it gives no compute slowdown; rerun bench/gloo_allreduce.py on a quiet machine",
                        ts__coll_model_cpu_disturbed(r->model));
    if (rc == TS_OK && kappa > 0)
        ts__replay_warn(r, "--bucket-mb: compute slowed %.0f%% per concurrent gloo all-reduce (%s); "
                        "training-thread ops re-timed for the new overlap", kappa * 100,
                        ct.kappa_given > 0 ? "from the calibration log" : "fitted on the trace");
    if (rc == TS_OK && ct.load > 0)
        ts__replay_warn(r, "--bucket-mb: new all-reduces priced at %.2f x the cost model x the threads sharing "
                        "their core (load factor fitted on the trace's all-reduces)", ct.load);
    /* The trace's own all-reduces, of one or two sizes at mixed sharing,
     * cannot tell the fixed cost from the per-byte one: uncalibrated, these
     * what-ifs miss by about twice as much and get orders wrong
     * (docs/replay.md, "Calibrating gloo"). */
    if (rc == TS_OK && r->model_from_trace && c->n_grp)   /* a group: some iteration's partition changed */
        ts__replay_warn(r, "--bucket-mb: no gloo calibration given (--nccl-tests LOG, written on this machine by "
                        "bench/gloo_allreduce.py): the cost of an all-reduce is fitted on the trace's own, which "
                        "cannot separate its fixed cost from its cost per byte, so this prediction can be off by "
                        "tens of percent");
    ts__free(ct.op, n_base * sizeof *ct.op + 1);
    ts__free(ct.name_of, n_base * sizeof *ct.name_of + 1);
    ts__free(ct.member, (size_t)cap_members * sizeof *ct.member + 1);
    ts__free(ct.active, (size_t)cap_members + 1);
    free_colls(&ct, cap_colls);
    return rc;
}

/* Whether the trace's gradient all-reduces are bound by a link rather than
 * by gloo's CPU work (linkbound.h): as asked (mode 1 yes, -1 no), else
 * decided from the tail all-reduces (tail_rate: each iteration's last
 * launched one, of 1 MiB or more, which runs while DDP's finalize waits and
 * the training threads are idle): link-bound when they achieved under the
 * CPU floor, in bus bandwidth (x 2(n - 1) / n). Beside backward a loopback
 * all-reduce of 1 MiB achieved 0.093 GB/s on a loaded machine
 * (bench/data/optimize_transformer12), so all-reduces beside compute
 * cannot tell; with the training threads idle gloo's CPU work is what the
 * calibration logs measure alone (0.56-1.06 GB/s), and a link is its rate
 * (the testbed's tails: 0.005-0.047 GB/s). A calibration log does not move
 * the floor. why: the reason, for the warning. */
static bool link_bound(int mode, double tail, uint32_t n_tail, uint32_t n_ranks, char *why, size_t n_why)
{
    double bus = tail * 2.0 * (n_ranks - 1) / n_ranks;
    if (mode != 0) {
        snprintf(why, n_why, "as asked (--link-bound %s)", mode > 0 ? "yes" : "no");
        return mode > 0;
    }
    if (!n_tail) {
        snprintf(why, n_why, "no iteration ends with an all-reduce of 1 MiB or more to tell a link from gloo's "
                 "CPU work");
        return false;
    }
    snprintf(why, n_why, "the last all-reduce of %u iterations, 1 MiB or more while the training threads wait, "
             "achieved %.3g GB/s of bus bandwidth (median), %s %.2g GB/s, a floor under what gloo's CPU work "
             "reaches", n_tail, bus, bus < TS_LINK_CPU_FLOOR_BPNS ? "under" : "not under", TS_LINK_CPU_FLOOR_BPNS);
    return bus < TS_LINK_CPU_FLOOR_BPNS;
}

static int cmp_double(const void *x, const void *y)
{
    double p = *(const double *)x, q = *(const double *)y;
    return p < q ? -1 : p > q;
}

/* The median over iterations of bytes / transfer (bytes per ns) of each
 * iteration's last launched gradient all-reduce of 1 MiB or more (rank 0's
 * launches); 0 = none (*n: how many iterations had one). */
static double tail_rate(const rb_ctx *c, const rb_ranks *R, uint32_t *n, ts_error *err, int *status)
{
    const ts_replay *r = c->r;
    const old_bucket *ob = R->ob[0];
    double *v = ts__malloc((size_t)R->n_ob[0] * sizeof *v + 1);
    *n = 0;
    *status = v ? TS_OK : ts__error(err, TS_ENOMEM, "replay: out of memory");
    for (uint32_t lo = 0, hi; v && lo < R->n_ob[0]; lo = hi) {
        hi = group_end(r, ob, R->n_ob[0], lo);
        uint32_t last = lo;
        for (uint32_t b = lo + 1; b < hi; b++)
            if (meas_start(r, ob[b].launch) > meas_start(r, ob[last].launch)) last = b;
        const ts_replay_coll *col = &r->colls[ob[last].coll];
        if (col->bytes >= TS_LINK_MIN_BYTES && col->transfer_ns > 0) v[(*n)++] = (double)col->bytes / (double)col->transfer_ns;
    }
    double med = 0;
    if (v && *n) {
        qsort(v, *n, sizeof *v, cmp_double);
        med = *n % 2 ? v[*n / 2] : (v[*n / 2 - 1] + v[*n / 2]) / 2;
    }
    ts__free(v, (size_t)R->n_ob[0] * sizeof *v + 1);
    return med;
}

/* The measured gradient all-reduces (rank 0's old buckets): each from its
 * last rank's measured start, for its measured transfer. */
static ts_link_span *old_spans(const rb_ctx *c, const rb_ranks *R)
{
    const ts_replay *r = c->r;
    const ts_graph *g = r->g;
    ts_link_span *sp = ts__malloc((size_t)R->n_ob[0] * sizeof *sp + 1);
    for (uint32_t i = 0; sp && i < R->n_ob[0]; i++) {
        const ts_replay_coll *rc = &r->colls[R->ob[0][i].coll];
        int64_t start = ts__sim_meas_start(&r->sim, R->ob[0][i].member);
        if (rc->graph_coll != TS_NONE32) {
            const ts_coll *gc = &g->colls[rc->graph_coll];
            for (uint32_t q = 0; q < gc->n_members; q++) {
                int64_t t = ts__sim_meas_start(&r->sim, g->coll_members[gc->first_member + q]);
                if (t == INT64_MIN || start == INT64_MIN) { start = INT64_MIN; break; }
                if (t > start) start = t;
            }
        }
        sp[i] = (ts_link_span){start, rc->transfer_ns, rc->bytes};
    }
    return sp;
}

/* CPU-only jobs whose all-reduces a link bounds (linkbound.c): the new
 * buckets priced on the link, shared by those in flight, compute as
 * measured. *done = false when the job is not link-bound (the caller then
 * takes the CPU-sharing model). */
static int apply_link(rb_ctx *c, const rb_ranks *R, uint32_t n_ranks, int mode, bool *done, ts_error *err)
{
    ts_replay *r = c->r;
    *done = false;
    if (mode < 0 || r->g->lanes[r->sim.lane[R->ob[0][0].member]].on_gpu) return TS_OK;   /* NCCL: not modelled here */
    size_t n_sp = (size_t)R->n_ob[0] * sizeof(ts_link_span) + 1;
    ts_link_span *sp = old_spans(c, R);
    if (!sp) return ts__error(err, TS_ENOMEM, "replay: out of memory");
    uint32_t n_tail = 0, n_used = 0;
    int rc = TS_OK;
    double tail = tail_rate(c, R, &n_tail, err, &rc);
    double rate = ts__link_rate(sp, R->n_ob[0], 0, &n_used);
    ts__free(sp, n_sp);
    if (rc) return rc;
    char why[320];
    *done = rate > 0 && link_bound(mode, tail, n_tail, n_ranks, why, sizeof why);
    if (!*done) {
        if (mode == 0 && rate > 0)
            ts__replay_warn(r, "--bucket-mb: not link-bound (%s): new all-reduces priced as gloo's CPU work "
                            "(--link-bound yes prices them on a link)", why);
        return TS_OK;
    }
    ts_contention ct = {.n_ranks = (uint16_t)n_ranks};
    uint32_t cap = R->n_ob[0] + c->n_nb;
    int64_t *bytes = ts__malloc((size_t)cap * sizeof *bytes + 1);
    rc = bytes ? contention_colls(c, R, &ct) : TS_ENOMEM;
    if (rc == TS_OK) {
        for (uint32_t i = 0; i < R->n_ob[0]; i++) bytes[i] = r->colls[R->ob[0][i].coll].bytes;
        for (uint32_t i = 0; i < c->n_nb; i++) bytes[R->n_ob[0] + i] = r->colls[c->nb_coll[i]].bytes;
        ts_link lk = {.n_ranks = (uint16_t)n_ranks, .n_colls = ct.n_colls, .coll_bar = ct.coll_bar,
                      .coll_member = ct.coll_member, .coll_bytes = bytes, .coll_meas_ns = ct.coll_meas_ns,
                      .coll_same = ct.coll_same, .coll_new = ct.coll_new,
                      .after_sim = c->n_grp ? rebalance_lanes : NULL, .after_sim_ctx = c};
        rc = ts__link_apply(&lk, &r->sim, rate, err);
    } else {
        rc = ts__error(err, rc, "replay: out of memory");
    }
    if (rc == TS_OK)
        ts__replay_warn(r, "--bucket-mb: link-bound (%s): new all-reduces priced on one link at %.4g MB/s (%.4g "
                        "Mbit/s), what the trace's %u gradient all-reduces achieved together, shared by those in "
                        "flight at once; compute kept as measured", why, rate * 1e3, rate * 8e3, n_used);
    ts__free(bytes, (size_t)cap * sizeof *bytes + 1);
    free_colls(&ct, cap);
    return rc;
}

static int load_grads(const char *path, int64_t **rev, uint32_t *n, ts_error *err)
{
    ts_gradients gr;
    int rc = ts__gradients_load(path, &gr, err);
    if (rc) return rc;
    *rev = ts__malloc((size_t)gr.n * sizeof **rev);
    if (!*rev) { ts__gradients_free(&gr); return ts__error(err, TS_ENOMEM, "replay: out of memory"); }
    for (uint32_t i = 0; i < gr.n; i++) (*rev)[i] = gr.bytes[gr.n - 1 - i];   /* DDP reduces in reverse */
    *n = gr.n;
    ts__gradients_free(&gr);
    return TS_OK;
}

int ts__replay_grads_session(ts_replay *r, const char *path, int64_t **rev, uint32_t *n, bool *owned, ts_error *err)
{
    ts_replay_session *se = r->session;
    *owned = true;
    if (se && se->grads_path && !strcmp(se->grads_path, path)) {
        *rev = se->grads_rev;
        *n = se->n_grads;
        *owned = false;
        se->n_grads_reused++;
        return TS_OK;
    }
    int rc = load_grads(path, rev, n, err);
    if (rc || !se || se->grads_path) return rc;
    if (!(se->grads_path = ts__strdup(path))) return TS_OK;   /* not kept: the next replay reads the file again */
    se->grads_rev = *rev;   /* the session keeps them */
    se->n_grads = *n;
    *owned = false;
    return TS_OK;
}

/* A given grouping or partition needs gradients.json, and its units must
 * be the gradients' pieces, in number. */
static int check_groups(rb_ctx *c, const ts_replay_options *opt, ts_error *err)
{
    c->n_grad_units = c->n_grad;
    if (!opt->n_bucket_groups && !opt->grad_pieces) return TS_OK;
    if (!c->grad)
        return ts__error(err, TS_EINVAL, "bucket plan: a grouping or partition of the gradients needs gradients.json");
    uint64_t units = 0, grouped = 0;
    for (uint32_t i = 0; i < c->n_grad; i++) {
        uint32_t k = opt->grad_pieces ? opt->grad_pieces[i] : 1;
        if (k == 0 || k > 4096 || (int64_t)k > (c->grad[i] > 0 ? c->grad[i] : 1))
            return ts__error(err, TS_EINVAL, "bucket plan: gradient %u (reduction order) cut into %u pieces", i, k);
        units += k;
    }
    for (uint32_t j = 0; j < opt->n_bucket_groups; j++) {
        if (opt->bucket_group_units[j] == 0) return ts__error(err, TS_EINVAL, "bucket plan: bucket %u is empty", j);
        grouped += opt->bucket_group_units[j];
    }
    if (opt->n_bucket_groups && grouped != units)
        return ts__error(err, TS_EINVAL, "bucket plan: the buckets hold %llu gradient pieces, the gradients make %llu "
                         "(a plan for another model?)", (unsigned long long)grouped, (unsigned long long)units);
    if (units > UINT32_MAX / 2) return ts__error(err, TS_EINVAL, "bucket plan: too many gradient pieces");
    c->n_grad_units = (uint32_t)units;
    c->pieces = opt->grad_pieces;
    c->group_units = opt->n_bucket_groups ? opt->bucket_group_units : NULL;
    c->n_groups = opt->n_bucket_groups;
    return TS_OK;
}

int ts__replay_rebucket(ts_replay *r, const ts_replay_options *opt, ts_error *err)
{
    uint32_t nr = r->g->n_ranks;
    rb_ctx c = {.r = r, .new_cap = (int64_t)(opt->bucket_mb * 1024.0 * 1024.0),
                .trace_cap = (int64_t)(opt->trace_bucket_mb * 1024.0 * 1024.0)};
    rb_ranks R = {0};
    int64_t *rev = NULL;
    bool own_rev = true;
    int rc = opt->gradients_json ? ts__replay_grads_session(r, opt->gradients_json, &rev, &c.n_grad, &own_rev, err) : TS_OK;
    c.grad = rev;
    if (rc == TS_OK) rc = check_groups(&c, opt, err);
    R.ob = ts__calloc(nr, sizeof *R.ob);
    R.n_ob = ts__calloc(nr, sizeof *R.n_ob);
    R.cursor = ts__calloc(nr, sizeof *R.cursor);
    c.chain = ts__malloc((size_t)nr * RB_MAX_SLOTS * sizeof *c.chain);
    c.chain_end = ts__malloc((size_t)nr * RB_MAX_SLOTS * sizeof *c.chain_end);
    c.slot_lane = ts__malloc((size_t)nr * RB_MAX_SLOTS * sizeof *c.slot_lane);
    c.n_slots = ts__calloc(nr, sizeof *c.n_slots);
    c.next_slot = ts__calloc(nr, sizeof *c.next_slot);
    c.rank_pooled = ts__calloc(nr, sizeof *c.rank_pooled);
    c.grp_last_scratch = ts__malloc((size_t)nr * RB_MAX_SLOTS * sizeof *c.grp_last_scratch);
    if (!r->removed) r->removed = ts__calloc(r->sim.n_base_nodes + 1, 1);
    if (rc == TS_OK && (!r->removed || !R.ob || !R.n_ob || !R.cursor || !c.chain || !c.chain_end || !c.slot_lane || !c.n_slots || !c.next_slot ||
                        !c.rank_pooled || !c.grp_last_scratch))
        rc = ts__error(err, TS_ENOMEM, "replay: out of memory");
    if (rc == TS_OK && rank_buckets(r, nr, R.ob, R.n_ob)) rc = ts__error(err, TS_ENOMEM, "replay: out of memory");
    for (uint32_t k = 0; rc == TS_OK && k < nr; k++) find_slots(&c, k, R.ob[k], R.n_ob[k]);
    if (rc == TS_OK && (nr < 2 || R.n_ob[0] == 0))
        rc = ts__error(err, TS_ENODATA, "--bucket-mb: no gradient all-reduce over every rank inside an iteration");
    uint32_t n_skipped = 0;
    if (rc == TS_OK) rc = regroup_all(&c, &R, nr, true, &n_skipped, err);
    if (rc == TS_OK) {
        if (!r->model_borrowed) ts_coll_model_destroy(r->model);
        r->model = NULL;
        r->model_borrowed = false;
        rc = ts__replay_fit_model_session(r, opt, err);
        int64_t a = r->model ? ts_coll_model_predict_ns(r->model, TS_COLL_ALL_REDUCE, 0, nr) : 0;
        c.alpha_ns = a > 0 ? a : 0;
    }
    if (rc == TS_OK) rc = regroup_all(&c, &R, nr, false, &n_skipped, err);
    if (rc == TS_OK && c.n_old == 0)
        rc = ts__error(err, TS_ENODATA, "--bucket-mb: no iteration holds the same gradient all-reduces on every rank");
    bool priced = false;
    if (rc == TS_OK) rc = apply_link(&c, &R, nr, opt->link_bound, &priced, err);
    if (rc == TS_OK && !priced && !opt->no_contention) rc = apply_contention(&c, &R, nr, err);
    if (rc == TS_OK && n_skipped)
        ts__replay_warn(r, "--bucket-mb: %u iterations left as measured: a rank holds another number of gradient "
                        "all-reduces there than usual (cut off at the trace's edge?)", n_skipped);
    if (rc == TS_OK && c.group_units)
        ts__replay_warn(r, "bucket plan: %u gradient all-reduces regrouped into %u", c.n_old, c.n_new);
    else if (rc == TS_OK)
        ts__replay_warn(r, "--bucket-mb %g: %u gradient all-reduces regrouped into %u",
                        opt->bucket_mb, c.n_old, c.n_new);
    for (uint32_t k = 0; R.ob && R.n_ob && k < nr; k++) ts__free(R.ob[k], R.n_ob[k] * sizeof *R.ob[k]);
    ts__free(R.ob, nr * sizeof *R.ob);
    ts__free(R.n_ob, nr * sizeof *R.n_ob);
    ts__free(R.cursor, nr * sizeof *R.cursor);
    rb_ranks_free_units(&R, nr);
    ts__free(c.chain, (size_t)nr * RB_MAX_SLOTS * sizeof *c.chain);
    ts__free(c.chain_end, (size_t)nr * RB_MAX_SLOTS * sizeof *c.chain_end);
    ts__free(c.slot_lane, (size_t)nr * RB_MAX_SLOTS * sizeof *c.slot_lane);
    ts__free(c.n_slots, nr * sizeof *c.n_slots);
    ts__free(c.next_slot, nr * sizeof *c.next_slot);
    ts__free(c.rank_pooled, nr * sizeof *c.rank_pooled);
    ts__free(c.grp_last_scratch, (size_t)nr * RB_MAX_SLOTS * sizeof *c.grp_last_scratch);
    ts__free(c.pool_x, c.cap_pool * sizeof *c.pool_x);
    ts__free(c.pool_lane_e, c.cap_pool * sizeof *c.pool_lane_e);
    ts__free(c.pool_ready_e, c.cap_pool * sizeof *c.pool_ready_e);
    ts__free(c.pool_pickup, c.cap_pool * sizeof *c.pool_pickup);
    ts__free(c.grp_first, c.cap_grp * sizeof *c.grp_first);
    ts__free(c.grp_head, (size_t)c.cap_grp * RB_MAX_SLOTS * sizeof *c.grp_head);
    ts__free(c.grp_follows, c.cap_grp * sizeof *c.grp_follows);
    ts__free(c.grp_rank, c.cap_grp * sizeof *c.grp_rank);
    ts__free(c.units, c.cap_units * sizeof *c.units);
    ts__free(c.unit_old, c.cap_units * sizeof *c.unit_old);
    ts__free(c.unit_new, c.cap_units * sizeof *c.unit_new);
    if (own_rev) ts__free(rev, (size_t)c.n_grad * sizeof *rev);
    ts__free(c.nb_coll, c.cap_nb * sizeof *c.nb_coll);
    ts__free(c.nb_same, c.cap_nb * sizeof *c.nb_same);
    ts__free(c.nb_member, (size_t)c.cap_nb * nr * sizeof *c.nb_member);
    return rc;
}

/* Sizes for the repricing what-ifs (--bandwidth, --latency-us, --world) on a
 * trace whose gradient all-reduces carry none (Debian's torch writes no
 * sizes for gloo): per iteration, rank 0's gradient all-reduces in start
 * order are DDP's buckets at the trace's cap (given, else inferred from
 * their count as --bucket-mb infers it), and each takes its gradients'
 * bytes. An iteration whose count no cap gives (cut at a window's edge, or
 * not DDP's buckets: a communication hook's own groups) keeps its sizes
 * unknown, and is said. O(gradients x iterations). */
int ts__replay_sizes_from_gradients(ts_replay *r, const ts_replay_options *opt, ts_error *err)
{
    rb_ctx c = {.r = r, .trace_cap = (int64_t)(opt->trace_bucket_mb * 1024.0 * 1024.0)};
    int64_t *rev = NULL;
    int rc = load_grads(opt->gradients_json, &rev, &c.n_grad, err);
    if (rc) return rc;
    c.grad = rev;
    old_bucket *ob = NULL;
    uint32_t n = 0, sized = 0, skipped = 0;
    if (!grow_units(&c, c.n_grad) || rank_buckets(r, 1, &ob, &n)) rc = ts__error(err, TS_ENOMEM, "replay: out of memory");
    for (uint32_t lo = 0, hi; rc == TS_OK && lo < n; lo = hi) {
        hi = group_end(r, ob, n, lo);
        bool unknown = false;
        for (uint32_t b = lo; b < hi; b++) unknown |= r->colls[ob[b].coll].bytes < 0;
        if (!unknown) continue;
        if (!infer_old_partition(&c, hi - lo)) { skipped++; continue; }
        for (uint32_t b = lo; b < hi; b++) r->colls[ob[b].coll].bytes = 0;
        for (uint32_t i = 0; i < c.n_grad; i++) r->colls[ob[lo + c.unit_old[i]].coll].bytes += c.grad[i];
        sized += hi - lo;
    }
    if (rc == TS_OK && sized)
        ts__replay_warn(r, "--gradients: sizes of %u gradient all-reduces taken from %s (DDP's buckets at %s)", sized,
                        opt->gradients_json, c.trace_cap ? "--trace-bucket-mb" : "the cap their count implies");
    if (rc == TS_OK && skipped)
        ts__replay_warn(r, "--gradients: %u iterations keep their all-reduces' sizes unknown: no DDP bucket cap gives "
                        "their count for these %u gradients (cut at the trace's edge, or not DDP's buckets)",
                        skipped, c.n_grad);
    ts__free(ob, n * sizeof *ob);
    ts__free(c.units, c.cap_units * sizeof *c.units);
    ts__free(c.unit_old, c.cap_units * sizeof *c.unit_old);
    ts__free(c.unit_new, c.cap_units * sizeof *c.unit_new);
    ts__free(rev, (size_t)c.n_grad * sizeof *rev);
    return rc;
}
