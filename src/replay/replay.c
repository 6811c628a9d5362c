/* replay.c - replay a job's global graph and compare iteration times.
 *
 * The graph's gaps make an unmodified replay reproduce every measured time
 * (dPRO's method), so the unmodified error measures the graph's consistency
 * (clock alignment, matching) and what-if predictions inherit every
 * unexplained delay of the trace.
 * Iteration time of rank r, iteration k: the measured ProfilerStep duration,
 * moved by how far the simulation shifted the first start and the last end
 * of the iteration's nodes; the job's iteration is the slowest rank's; the
 * reported figure is the median over iterations. Cost O(V + E).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "replay/edit.h"

void ts__replay_warn(ts_replay *r, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (ts__grow((void **)&r->warnings, &r->cap_warnings, sizeof *r->warnings, r->n_warnings + 1)) return;
    char *copy = ts__strdup(line);
    if (copy) r->warnings[r->n_warnings++] = copy;
}

void ts_replay_destroy(ts_replay *r)
{
    if (!r) return;
    ts__free(r->removed, r->removed ? r->sim.n_base_nodes + 1 : 0);   /* before the sim forgets its size */
    ts__sim_free(&r->sim);
    ts__free(r->old_group_grads, (size_t)r->n_old_groups * sizeof *r->old_group_grads);
    ts__free(r->colls, (size_t)r->cap_colls * sizeof *r->colls);
    if (!r->model_borrowed) ts_coll_model_destroy(r->model);
    ts__free(r->ranks, (size_t)r->n_ranks * sizeof *r->ranks);
    ts__free(r->iters, (size_t)r->n_ranks * r->n_iter_slots * sizeof *r->iters);
    ts__free(r->job_iters, (size_t)r->n_iter_slots * sizeof *r->job_iters);
    for (uint32_t i = 0; i < r->n_warnings; i++) ts__free(r->warnings[i], strlen(r->warnings[i]) + 1);
    ts__free(r->warnings, (size_t)r->cap_warnings * sizeof *r->warnings);
    if (r->owned_graph) ts_graph_destroy(r->owned_graph);
    ts__free(r, sizeof *r);
}

/* Collective kind of a graph collective instance from its normalized name;
 * TS_COLL_COUNT when the name says no kind (never guessed as an all-reduce:
 * regrouping and repricing skip it). */
static ts_coll_kind coll_kind_of(const ts_graph *g, const ts_coll *c)
{
    const char *name = ts__str(&g->strings, c->name);
    static const struct { const char *s; ts_coll_kind k; } map[] = {
        {"allreduce", TS_COLL_ALL_REDUCE}, {"all_reduce", TS_COLL_ALL_REDUCE},
        {"allgather", TS_COLL_ALL_GATHER}, {"all_gather", TS_COLL_ALL_GATHER},
        {"_allgather_base", TS_COLL_ALL_GATHER}, {"reduce_scatter", TS_COLL_REDUCE_SCATTER},
        {"_reduce_scatter_base", TS_COLL_REDUCE_SCATTER}, {"reducescatter", TS_COLL_REDUCE_SCATTER},
        {"all_to_all", TS_COLL_ALL_TO_ALL}, {"alltoall", TS_COLL_ALL_TO_ALL},
        {"alltoall_base", TS_COLL_ALL_TO_ALL}, {"broadcast", TS_COLL_BROADCAST},
        {"reduce", TS_COLL_REDUCE}, {"send", TS_COLL_SEND_RECV}, {"recv", TS_COLL_SEND_RECV},
        {"sendrecv", TS_COLL_SEND_RECV},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(name, map[i].s)) return map[i].k;
    char tagged[96];   /* the name is already known to be a collective: say so */
    snprintf(tagged, sizeof tagged, "nccl:%s", name);
    ts_coll_kind k;
    return ts_coll_kind_from_name(tagged, &k) ? k : TS_COLL_COUNT;
}

static int add_coll(ts_replay *r, const ts_replay_coll *c)
{
    if (ts__grow((void **)&r->colls, &r->cap_colls, sizeof *r->colls, r->n_colls + 1)) return TS_ENOMEM;
    r->colls[r->n_colls++] = *c;
    return TS_OK;
}

/* Move a collective's transfer time onto its barrier: the smallest exit gap
 * (the last rank to arrive waits only for the transfer) becomes the barrier's
 * self time and is taken off every exit gap. Unmodified results are equal,
 * so when the times are the graph's (borrowed: no what-if) nothing moves and
 * the transfer is only recorded. */
static int collect_colls(ts_replay *r, bool move)
{
    const ts_graph *g = r->g;
    ts_sim *s = &r->sim;
    for (uint32_t ci = 0; ci < g->n_colls; ci++) {
        const ts_coll *c = &g->colls[ci];
        ts_replay_coll rc = {c->barrier, ci, coll_kind_of(g, c), c->bytes, c->n_members, 0, c->barrier, c->n_members};
        if (c->barrier == TS_NONE32 && c->n_members == 1) {
            uint32_t m = g->coll_members[c->first_member];
            int32_t world = ts__graph_rank(g, m)->world_size;
            rc.priced = m;
            rc.transfer_ns = ts__graph_self(g, m);
            rc.group = world > 1 ? (uint32_t)world : 1;
        } else if (c->barrier != TS_NONE32) {
            uint32_t b = c->barrier;
            int64_t t = INT64_MAX;
            for (uint32_t k = g->out_first[b]; k < g->out_first[b + 1]; k++)
                if (g->edges.kind[k] == TS_EDGE_COLL_EXIT && g->edges.gap_ns[k] < t) t = g->edges.gap_ns[k];
            if (t == INT64_MAX || t < 0) t = 0;
            rc.transfer_ns = ts__graph_self(g, b) + t;
            r->transfers_moved = move;
            if (move) {
                for (uint32_t k = g->out_first[b]; k < g->out_first[b + 1]; k++)
                    if (g->edges.kind[k] == TS_EDGE_COLL_EXIT) s->egap_ns[k] -= t;
                s->self_ns[b] += t;
            }
        }
        if (add_coll(r, &rc)) return TS_ENOMEM;
    }
    return TS_OK;
}

/* The graph as the simulator's base: same node and edge rows (edges stay in
 * the graph's src order, so a graph edge row is a sim edge row). Borrowed
 * from the graph, not copied: the read-only columns, the measured starts
 * (on each rank's clock, with the ranks' offsets beside them) and
 * durations, the edge indexes and the topological order, and also the self
 * times and gaps when no what-if will edit them. At 16 M nodes this keeps
 * ~1.2 GB of fresh memory out of a replay. Names stay in the graph. */
static int sim_from_graph(ts_replay *r, bool edits)
{
    const ts_graph *g = r->g;
    ts_sim *s = &r->sim;
    uint32_t nn = g->nodes.n, ne = g->edges.n;
    /* Without edits the durations serve as self times: where a node waits
     * (self time 0), its end-edge's gap already puts its end at start +
     * duration, so the replay is the same, and the graph keeps no self-time
     * column to lend. */
    ts_sim_lend lend = {g->nodes.start_ns, g->nodes.dur_ns, g->n_ranks,
                        g->nodes.lane, g->nodes.rank, g->nodes.kind, g->nodes.iteration,
                        edits ? NULL : g->nodes.dur_ns, g->edges.src, g->edges.dst, g->edges.flags,
                        g->edges.kind, edits ? NULL : g->edges.gap_ns};
    if (!ts__sim_borrow(s, nn, ne, &lend)) return TS_ENOMEM;
    for (uint32_t rk = 0; rk < s->n_offsets; rk++) s->meas_offset_ns[rk] = g->align[rk].offset_ns;
    if (edits) {   /* a graph without edges has no gap column (memcpy from NULL is undefined even for 0 bytes) */
        for (uint32_t n = 0; n < nn; n++) s->self_ns[n] = ts__graph_self(g, n);
        if (ne) memcpy(s->egap_ns, g->edges.gap_ns, ne * sizeof *s->egap_ns);
    }
    s->base_out = g->out_first;
    s->base_in_first = g->in_first;
    s->base_in_edge = g->in_edge;
    s->base_topo = g->topo;
    s->n_base_nodes = nn;
    s->n_base_edges = ne;
    return collect_colls(r, edits);
}

/* Per (rank, iteration) extremes of measured and simulated node times. */
typedef struct iter_span { int64_t meas_lo, meas_hi, sim_lo, sim_hi; } iter_span;

static void span_add(iter_span *sp, const ts_sim *s, uint32_t n)
{
    if (s->start_ns[n] < sp->sim_lo) sp->sim_lo = s->start_ns[n];
    if (s->end_ns[n] > sp->sim_hi) sp->sim_hi = s->end_ns[n];
    if (!ts__sim_measured(s, n)) return;
    int64_t a = ts__sim_meas_start(s, n), b = a + s->meas_dur_ns[n];
    if (a < sp->meas_lo) sp->meas_lo = a;
    if (b > sp->meas_hi) sp->meas_hi = b;
}

static const ts_rank *model_of(const ts_graph *g, uint32_t ri)
{
    return g->trace->ranks[g->rank_model[ri]];
}

/* The iterations compared (trace/model.h, THE ANALYSIS WINDOW): the steps
 * every rank has (ranks cut at a profiling window's edge have fewer), the
 * first max_iter of them; 0 = the whole trace as one (asked for, or a rank
 * marks none). */
static uint32_t common_iterations(ts_replay *r, const ts_window_sel *sel, uint32_t max_iter)
{
    const ts_graph *g = r->g;
    uint32_t least = UINT32_MAX, most = 0;
    for (uint32_t ri = 0; ri < g->n_ranks; ri++) {
        uint32_t k = model_of(g, ri)->n_iterations;
        if (k < least) least = k;
        if (k > most) most = k;
    }
    if (sel->whole || least == 0 || !g->n_ranks) return 0;
    uint32_t n_it = sel->n_complete;
    if (n_it != most)
        ts__replay_warn(r, "ranks hold %u to %u iterations: comparing the %u every rank has", least, most, n_it);
    if (max_iter && max_iter < n_it) n_it = max_iter;
    return n_it;
}

/* Slot of step among the first n_it complete steps, -1 = none. */
static int32_t step_slot(const ts_window_sel *sel, uint32_t n_it, int64_t step)
{
    uint32_t lo = 0, hi = n_it;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sel->complete[mid] < step) lo = mid + 1;
        else hi = mid;
    }
    return lo < n_it && sel->complete[lo] == step ? (int32_t)lo : -1;
}

/* Fill spans[ri * n_slots + k] (k = slot of the node's iteration's step, or
 * 0 for the whole trace when n_it is 0), and iter_of[ri * n_slots + k] = the
 * rank's iteration index of slot k (-1 = none). */
static void collect_spans(const ts_replay *r, const ts_window_sel *sel, iter_span *spans, int32_t *iter_of,
                          uint32_t n_slots, uint32_t n_it)
{
    const ts_sim *s = &r->sim;
    for (uint32_t i = 0; i < (size_t)r->g->n_ranks * n_slots; i++) {
        spans[i] = (iter_span){INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN};
        iter_of[i] = -1;
    }
    for (uint32_t ri = 0; n_it && ri < r->g->n_ranks; ri++) {
        const ts_rank *m = model_of(r->g, ri);
        for (uint32_t i = 0; i < m->n_iterations; i++) {
            int32_t k = step_slot(sel, n_it, m->iterations[i].step);
            if (k >= 0) iter_of[(size_t)ri * n_slots + (uint32_t)k] = (int32_t)i;
        }
    }
    for (uint32_t n = 0; n < s->n_nodes; n++) {
        if (s->rank[n] == TS_GRAPH_NO_RANK) continue;
        int32_t k = 0;
        if (n_it) {
            int32_t i = s->iteration[n];
            k = i < 0 ? -1 : step_slot(sel, n_it, model_of(r->g, s->rank[n])->iterations[i].step);
        }
        if (k < 0 || (uint32_t)k >= n_slots) continue;
        span_add(&spans[(size_t)s->rank[n] * n_slots + (uint32_t)k], s, n);
    }
}

/* One (rank, iteration) measured and as replayed; meas_dur_ns = -1 when
 * the rank has no nodes there. */
static ts_replay_iter iter_times(const ts_replay *r, const iter_span *sp, uint32_t ri, int32_t k, uint32_t n_it)
{
    ts_replay_iter x = {n_it && k >= 0 ? model_of(r->g, ri)->iterations[k].step : -1, 0, -1, 0, 0};
    if (sp->meas_lo == INT64_MAX || sp->sim_lo == INT64_MAX || (n_it && k < 0)) return x;
    x.meas_start_ns = sp->meas_lo;
    x.meas_dur_ns = sp->meas_hi - sp->meas_lo;
    if (n_it) {
        const ts_iteration *it = &model_of(r->g, ri)->iterations[k];
        x.meas_start_ns = it->start_ns + r->g->align[ri].offset_ns;   /* the sim's clock is the aligned one */
        x.meas_dur_ns = it->end_ns - it->start_ns;
    }
    x.pred_start_ns = x.meas_start_ns + (sp->sim_lo - sp->meas_lo);
    x.pred_dur_ns = x.meas_dur_ns + (sp->sim_hi - sp->meas_hi) - (sp->sim_lo - sp->meas_lo);
    return x;
}

/* A rank folded into a representative (--fold-replicas) keeps only its
 * collectives: its own measured iteration, moved by what the replay did to
 * its representative's. */
static ts_replay_iter as_replica(ts_replay_iter x, ts_replay_iter rep)
{
    if (x.meas_dur_ns < 0 || rep.meas_dur_ns < 0) return x;
    x.pred_start_ns = x.meas_start_ns + (rep.pred_start_ns - rep.meas_start_ns);
    x.pred_dur_ns = x.meas_dur_ns + (rep.pred_dur_ns - rep.meas_dur_ns);
    return x;
}

static int compare_iterations(ts_replay *r, uint32_t max_iter, bool whole)
{
    const ts_graph *g = r->g;
    ts_window_sel sel = {.whole = whole};
    if (ts__window_sel_init(&sel, g->trace)) return TS_ENOMEM;
    uint32_t n_it = common_iterations(r, &sel, max_iter);
    if (n_it == 0 && !whole)
        ts__replay_warn(r, "no iterations (ProfilerStep#N) %s: the whole trace is compared as one",
                        sel.marked ? "on some rank" : "in the trace");
    uint32_t n_slots = n_it ? n_it : 1, nr = g->n_ranks;
    size_t n_cells = (size_t)nr * n_slots;
    int32_t *iter_of = ts__malloc(n_cells * sizeof *iter_of);
    iter_span *spans = ts__malloc(n_cells * sizeof *spans);
    int64_t *scratch = ts__malloc((4 * (size_t)n_slots + 1) * sizeof *scratch);
    r->ranks = ts__calloc(nr, sizeof *r->ranks);
    r->iters = ts__malloc(n_cells * sizeof *r->iters);
    ts_replay_iteration_info *job = ts__malloc(n_slots * sizeof *job);
    r->n_ranks = r->ranks ? nr : 0;               /* what ts_replay_destroy frees */
    r->n_iter_slots = r->ranks && r->iters ? n_slots : 0;
    if (!spans || !iter_of || !scratch || !r->ranks || !r->iters || !job) {
        if (!r->n_iter_slots) { ts__free(r->iters, n_cells * sizeof *r->iters); r->iters = NULL; }
        ts__free(job, n_slots * sizeof *job);
        ts__free(spans, n_cells * sizeof *spans);
        ts__free(iter_of, n_cells * sizeof *iter_of);
        ts__free(scratch, (4 * (size_t)n_slots + 1) * sizeof *scratch);
        ts__window_sel_free(&sel);
        return TS_ENOMEM;
    }
    collect_spans(r, &sel, spans, iter_of, n_slots, n_it);
    int64_t *job_m = scratch, *job_p = scratch + n_slots, *rm = scratch + 2 * n_slots, *rp = scratch + 3 * n_slots;
    uint32_t n_job = 0;
    for (uint32_t k = 0; k < n_slots; k++) job_m[k] = job_p[k] = INT64_MIN;
    for (uint32_t k = 0; k < n_slots; k++) job[k].step = -1;
    for (uint32_t ri = 0; ri < nr; ri++) {
        uint32_t n_ok = 0;
        for (uint32_t k = 0; k < n_slots; k++) {
            size_t cell = (size_t)ri * n_slots + k;
            ts_replay_iter x = r->iters[cell] = iter_times(r, &spans[cell], ri, iter_of[cell], n_it);
            if (g->replica_of && g->replica_of[ri] != ri) {   /* folded: changes as its representative does */
                size_t rc = (size_t)g->replica_of[ri] * n_slots + k;
                x = r->iters[cell] = as_replica(x, iter_times(r, &spans[rc], g->replica_of[ri], iter_of[rc], n_it));
            }
            if (x.meas_dur_ns < 0) continue;
            int64_t m = x.meas_dur_ns, p = x.pred_dur_ns;
            rm[n_ok] = m; rp[n_ok++] = p;
            if (job_m[k] == INT64_MIN) job[k].step = x.step;
            if (m > job_m[k]) job_m[k] = m;
            if (p > job_p[k]) job_p[k] = p;
        }
        r->ranks[ri] = (ts_replay_rank_row){g->rank_number[ri], ts__median_i64(rm, n_ok), ts__median_i64(rp, n_ok),
                                            g->align[ri].offset_ns};
    }
    for (uint32_t k = 0; k < n_slots; k++)
        if (job_m[k] != INT64_MIN) {
            job[n_job] = (ts_replay_iteration_info){job[k].step, job_m[k], job_p[k]};
            job_m[n_job] = job_m[k];
            job_p[n_job++] = job_p[k];
        }
    r->job_iters = job;   /* n_iter_slots (= n_slots here) entries, as destroy frees them */
    r->n_iterations = n_job;
    r->meas_ns = ts__median_i64(job_m, n_job);
    r->pred_ns = ts__median_i64(job_p, n_job);
    ts__free(spans, n_cells * sizeof *spans);
    ts__free(iter_of, n_cells * sizeof *iter_of);
    ts__free(scratch, (4 * (size_t)n_slots + 1) * sizeof *scratch);
    ts__window_sel_free(&sel);
    return n_job ? TS_OK : TS_ENODATA;
}

/* Whether opt asks for any what-if edit (apply_whatifs does nothing
 * otherwise, and the sim may then borrow the graph's times). */
static bool whatifs_requested(const ts_replay_options *opt)
{
    return opt->n_scales || opt->n_retime || opt->bucket_mb > 0 || opt->n_bucket_groups || opt->world ||
           opt->bandwidth_gbps > 0 || opt->latency_us > 0 || opt->bandwidth_factor > 0 || opt->latency_factor > 0 ||
           opt->profiler_overhead_us > 0 || opt->grad_bytes_per_elem;
}

static int apply_whatifs(ts_replay *r, const ts_replay_options *opt, ts_error *err)
{
    int rc = TS_OK;
    if (!whatifs_requested(opt)) return TS_OK;
    bool rebucket = opt->bucket_mb > 0 || opt->n_bucket_groups;
    if (!rebucket) ts__replay_tie_woken(r);   /* rebucketing re-ties the waiters itself */
    if (opt->profiler_overhead_us > 0) ts__replay_unprofile(r, opt->profiler_overhead_us);
    for (uint32_t i = 0; rc == TS_OK && i < opt->n_retime; i++) {
        if (opt->retime_nodes[i] >= r->sim.n_base_nodes)
            return ts__error(err, TS_EINVAL, "replay: retimed node %u is not in the graph (%u nodes)",
                             opt->retime_nodes[i], r->sim.n_base_nodes);
        ts__edit_retime(r, opt->retime_nodes[i], opt->retime_ns[i]);
    }
    for (uint32_t i = 0; rc == TS_OK && i < opt->n_scales; i++) rc = ts__replay_scale(r, opt->scales[i], err);
    bool reprice = opt->world || opt->bandwidth_gbps > 0 || opt->latency_us > 0 || opt->bandwidth_factor > 0 ||
                   opt->latency_factor > 0;
    if (rc == TS_OK && rebucket) rc = ts__replay_rebucket(r, opt, err);   /* fits the model itself */
    else if (rc == TS_OK && reprice && opt->gradients_json) rc = ts__replay_sizes_from_gradients(r, opt, err);
    if (rc == TS_OK && reprice && !r->model) rc = ts__replay_fit_model(r, opt, err);
    if (rc == TS_OK && reprice) rc = ts__replay_reprice(r, opt, err);
    if (rc == TS_OK && opt->grad_bytes_per_elem) rc = ts__replay_grad_precision(r, opt, err);
    return rc;
}

int ts_replay_run_graph(const ts_graph *g, const ts_replay_options *opt, ts_replay **out, ts_error *err)
{
    return ts__replay_run_session(g, opt, NULL, out, err);
}

int ts__replay_run_session(const ts_graph *g, const ts_replay_options *opt, ts_replay_session *session,
                           ts_replay **out, ts_error *err)
{
    *out = NULL;
    if (session && session->g != g) return ts__error(err, TS_EINVAL, "replay: a session is for one graph");
    /* Options grow only at the end: a caller built against an older header
     * passes a smaller size, and the fields it does not know stay zero. */
    ts_replay_options o = {.size = sizeof o};
    if (opt) {
        if (opt->size < offsetof(ts_replay_options, max_iterations))
            return ts__error(err, TS_EINVAL, "replay: options.size %zu is not set", opt->size);
        memcpy(&o, opt, opt->size < sizeof o ? opt->size : sizeof o);
    }
    opt = &o;
    ts__mem_phase("replaying");
    ts_replay *r = ts__calloc(1, sizeof *r);
    if (!r) return ts__error(err, TS_ENOMEM, "replay: out of memory");
    int64_t t0 = ts__now_ns();
    r->g = g;
    r->session = session;
    ts__sim_init(&r->sim);
    for (uint32_t i = 0; i < g->n_warnings; i++) ts__replay_warn(r, "%s", g->warnings[i]);
    r->what_if = whatifs_requested(opt);
    int rc = sim_from_graph(r, r->what_if);
    if (rc) ts__error(err, rc, "replay: out of memory copying the graph");
    r->sim.edited = r->what_if;
    if (rc == TS_OK) rc = apply_whatifs(r, opt, err);
    if (rc == TS_OK) rc = ts__sim_run(&r->sim, err);
    if (rc == TS_OK) {
        rc = compare_iterations(r, opt->max_iterations, opt->window_all);
        if (rc == TS_ENODATA) ts__error(err, rc, "replay: no iteration has nodes on every rank");
        else if (rc) ts__error(err, rc, "replay: out of memory");
    }
    r->replay_ns = ts__now_ns() - t0;
    if (rc) { ts_replay_destroy(r); return rc; }
    *out = r;
    return TS_OK;
}

int ts_replay_run(const ts_job *t, const ts_replay_options *opt, ts_replay **out, ts_error *err)
{
    *out = NULL;
    int64_t t0 = ts__now_ns();
    ts_graph *g;
    int rc = ts_graph_create(t, NULL, &g, err);
    if (rc) return rc;
    int64_t graph_ns = ts__now_ns() - t0;
    rc = ts_replay_run_graph(g, opt, out, err);
    if (rc) { ts_graph_destroy(g); return rc; }
    (*out)->owned_graph = g;
    (*out)->graph_ns = graph_ns;
    return TS_OK;
}

int64_t ts_replay_measured_iteration_ns(const ts_replay *r) { return r->meas_ns; }
int64_t ts_replay_predicted_iteration_ns(const ts_replay *r) { return r->pred_ns; }
double ts_replay_error_pct(const ts_replay *r)
{
    return r->meas_ns ? 100.0 * (double)(r->pred_ns - r->meas_ns) / (double)r->meas_ns : 0.0;
}

double ts_replay_change_pct(int64_t predicted_ns, int64_t measured_ns)
{
    return measured_ns > 0 ? 100.0 * (double)(predicted_ns - measured_ns) / (double)measured_ns : 0;
}

void ts__replay_spread_init(ts_replay_spread *sp)
{
    *sp = (ts_replay_spread){0, INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, INFINITY, -INFINITY};
}

void ts__replay_spread_add(ts_replay_spread *sp, int64_t m, int64_t p)
{
    sp->n++;
    if (m < sp->measured_min_ns) sp->measured_min_ns = m;
    if (m > sp->measured_max_ns) sp->measured_max_ns = m;
    if (p < sp->predicted_min_ns) sp->predicted_min_ns = p;
    if (p > sp->predicted_max_ns) sp->predicted_max_ns = p;
    if (m <= 0) return;
    double ch = ts_replay_change_pct(p, m);
    if (ch < sp->change_min_pct) sp->change_min_pct = ch;
    if (ch > sp->change_max_pct) sp->change_max_pct = ch;
}

/* The least and greatest iteration beside the medians: steps of one run
 * differ by 5-20% on a shared machine, and a what-if's change smaller than
 * that spread is worth measuring before it is believed. */
void ts_replay_iteration_spread(const ts_replay *r, ts_replay_spread *out)
{
    ts__replay_spread_init(out);
    for (uint32_t k = 0; k < r->n_iterations; k++)
        ts__replay_spread_add(out, r->job_iters[k].measured_iteration_ns, r->job_iters[k].predicted_iteration_ns);
}
bool ts_replay_is_what_if(const ts_replay *r) { return r->what_if; }
uint32_t ts_replay_n_iterations(const ts_replay *r) { return r->n_iterations; }
uint32_t ts_replay_n_ranks(const ts_replay *r) { return r->n_ranks; }

void ts_replay_iteration(const ts_replay *r, uint32_t k, ts_replay_iteration_info *out)
{
    if (k >= r->n_iterations) { *out = (ts_replay_iteration_info){-1, 0, 0}; return; }
    *out = r->job_iters[k];
}

void ts_replay_rank(const ts_replay *r, uint32_t i, ts_replay_rank_info *out)
{
    memset(out, 0, sizeof *out);
    if (i >= r->n_ranks) { out->rank = -1; return; }
    out->rank = r->ranks[i].rank;
    out->measured_iteration_ns = r->ranks[i].meas_ns;
    out->predicted_iteration_ns = r->ranks[i].pred_ns;
    out->clock_offset_ns = r->ranks[i].offset_ns;
}

uint32_t ts_replay_n_warnings(const ts_replay *r) { return r->n_warnings; }
const char *ts_replay_warning(const ts_replay *r, uint32_t i) { return i < r->n_warnings ? r->warnings[i] : NULL; }

void ts_replay_get_stats(const ts_replay *r, ts_replay_stats *out)
{
    out->n_nodes = r->sim.n_nodes;
    out->n_edges = r->sim.n_edges;
    out->n_collectives = r->n_colls;
    out->graph_ns = r->graph_ns;
    out->replay_ns = r->replay_ns;
}
