/* whatif.c - what-if edits of a replay: scale durations by pattern, and
 * reprice collectives for another bandwidth or world size.
 *
 * Every edit changes self times (or a barrier's transfer time) in r->sim and
 * leaves the measured gaps alone, so what the trace could not explain stays
 * as measured. Bucket regrouping, which changes the graph's shape, is in
 * rebucket.c. Not for: searching over edits (optimize/).
 */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/contention.h"
#include "replay/edit.h"

/* Node kinds a "kind:" prefix of --scale selects, as a bit set over ts_node_kind. */
static bool kind_mask(const char *kind, size_t n, uint32_t *mask)
{
    static const struct { const char *name; uint32_t mask; } kinds[] = {
        {"cpu", 1u << TS_NODE_CPU_OP},          {"cpu_op", 1u << TS_NODE_CPU_OP},
        {"launch", 1u << TS_NODE_LAUNCH},       {"runtime", 1u << TS_NODE_RUNTIME | 1u << TS_NODE_LAUNCH},
        {"sync", 1u << TS_NODE_HOST_SYNC},
        {"kernel", 1u << TS_NODE_KERNEL | 1u << TS_NODE_COMM_KERNEL},
        {"compute", 1u << TS_NODE_KERNEL},
        {"memcpy", 1u << TS_NODE_MEMCPY},       {"memset", 1u << TS_NODE_MEMSET},
        {"memory", 1u << TS_NODE_MEMCPY | 1u << TS_NODE_MEMSET},
        {"comm", 1u << TS_NODE_COMM_KERNEL | 1u << TS_NODE_COMM_CPU | 1u << TS_NODE_BARRIER},
        {"collective", 1u << TS_NODE_BARRIER},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strlen(kinds[i].name) == n && !strncmp(kind, kinds[i].name, n)) { *mask = kinds[i].mask; return true; }
    return false;
}

/* Parse "[kind:]glob=factor" into its parts; the glob is copied to `glob`. */
static int parse_scale(const char *spec, uint32_t *mask, char *glob, size_t glob_cap, double *factor,
                       ts_error *err)
{
    const char *eq = strrchr(spec, '=');
    if (!eq || eq == spec)
        return ts__error(err, TS_EINVAL, "--scale '%s': expected [kind:]pattern=factor", spec);
    char *end;
    *factor = strtod(eq + 1, &end);
    if (end == eq + 1 || *end || !(*factor >= 0) || !isfinite(*factor))
        return ts__error(err, TS_EINVAL, "--scale '%s': factor '%s' is not a number >= 0", spec, eq + 1);
    const char *colon = memchr(spec, ':', (size_t)(eq - spec));
    const char *pat = spec;
    *mask = UINT32_MAX;
    /* "aten::mm=0.5" has a colon that is part of the name: only a known kind counts. */
    if (colon && kind_mask(spec, (size_t)(colon - spec), mask)) pat = colon + 1;
    else *mask = UINT32_MAX;
    size_t n = (size_t)(eq - pat);
    if (n == 0 || n >= glob_cap) return ts__error(err, TS_EINVAL, "--scale '%s': empty or overlong pattern", spec);
    memcpy(glob, pat, n);
    glob[n] = 0;
    return TS_OK;
}

/* Change point (node n, its start or end) by -delta: its own time where it
 * has one (an end explained by its duration), else the gaps of the edges into
 * that point, none below 0. Every edge into a point carries the same gap
 * (graph.h, TIME MODEL), so the point moves by delta where that gap binds. */
static void shorten_point(ts_replay *r, uint32_t n, bool to_end, int64_t delta)
{
    ts_sim *s = &r->sim;
    const ts_graph *g = r->g;
    if (delta == 0) return;
    if (to_end && s->self_ns[n] > 0) {
        s->self_ns[n] = s->self_ns[n] > delta ? s->self_ns[n] - delta : 0;
        return;
    }
    for (uint32_t k = g->in_first[n]; k < g->in_first[n + 1]; k++) {
        uint32_t e = g->in_edge[k];
        if (((g->edges.flags[e] & TS_EDGE_TO_END) != 0) != to_end) continue;
        s->egap_ns[e] = s->egap_ns[e] > delta ? s->egap_ns[e] - delta : 0;
    }
}

/* Per graph rank: each node's enclosing node and its node children in time
 * order (first_child / next_sibling, TS_NONE32 = none), over the rank's rows. */
typedef struct scale_rank {
    uint32_t *slice_node;    /* ts__graph_slice_nodes */
    uint32_t *enclosing;     /* [n - first] */
    uint32_t *first_child;   /* [n - first] */
    uint32_t *next_sibling;  /* [n - first] */
    uint32_t  first, n;
} scale_rank;

static void scale_rank_free(const ts_graph *g, uint32_t ri, scale_rank *sr)
{
    ts__graph_slice_nodes_free(g, ri, sr->slice_node);
    ts__free(sr->enclosing, 3 * ((size_t)sr->n + 1) * sizeof *sr->enclosing);
}

static int scale_rank_init(const ts_graph *g, uint32_t ri, scale_rank *sr)
{
    memset(sr, 0, sizeof *sr);
    sr->first = g->rank_first_node[ri];
    sr->n = g->rank_first_node[ri + 1] - sr->first;
    const ts_rank *r = g->trace->ranks[g->rank_model[ri]];
    sr->slice_node = ts__graph_slice_nodes(g, ri);
    sr->enclosing = ts__malloc(3 * ((size_t)sr->n + 1) * sizeof *sr->enclosing);
    if (!sr->slice_node || !sr->enclosing) return TS_ENOMEM;
    sr->first_child = sr->enclosing + sr->n + 1;
    sr->next_sibling = sr->first_child + sr->n + 1;
    memset(sr->first_child, 0xff, ((size_t)sr->n + 1) * sizeof *sr->first_child);
    /* rows of a lane run in time order: pushing children in reverse row
     * order leaves each list in time order */
    for (uint32_t i = sr->n; i-- > 0;) {
        uint32_t sl = g->nodes.slice[sr->first + i];
        uint32_t p = sl < r->slices.n ? ts__graph_enclosing_node(r, sr->slice_node, sl) : TS_NONE32;
        sr->enclosing[i] = p;
        sr->next_sibling[i] = TS_NONE32;
        if (p == TS_NONE32) continue;
        sr->next_sibling[i] = sr->first_child[p - sr->first];
        sr->first_child[p - sr->first] = sr->first + i;
    }
    return TS_OK;
}

/* Scale the part of [a, b) (rank clock) that node p owns by factor: p's time
 * outside its node children is the stretches before its first child, between
 * children and after its last; each stretch is the gap into the point that
 * ends it (a child's start, p's end), or p's own time when it has no child. */
static void scale_span(ts_replay *r, const scale_rank *sr, uint32_t p, int64_t a, int64_t b, double factor)
{
    const ts_graph *g = r->g;
    int64_t from = g->nodes.start_ns[p];
    for (uint32_t c = sr->first_child[p - sr->first];; c = sr->next_sibling[c - sr->first]) {
        int64_t to = c == TS_NONE32 ? g->nodes.start_ns[p] + g->nodes.dur_ns[p] : g->nodes.start_ns[c];
        int64_t lo = a > from ? a : from, hi = b < to ? b : to;
        if (hi > lo) shorten_point(r, c == TS_NONE32 ? p : c, c == TS_NONE32, (hi - lo) - llround((double)(hi - lo) * factor));
        if (c == TS_NONE32) break;
        from = g->nodes.start_ns[c] + g->nodes.dur_ns[c];
    }
}

/* Whether a model's name (string id) matches the glob, each name tried
 * once per model: the ranks of a replicated job share one model, so a
 * 1,024-rank job calls fnmatch once per distinct name, not per slice. */
typedef struct name_match {
    const char    *glob;
    const ts_rank *model;   /* whose string ids v is indexed by, NULL = none yet */
    uint8_t       *v;       /* per string id: 0 = not tried, 1 = no, 2 = yes */
    uint32_t       n;
} name_match;

static bool name_matches(name_match *m, const ts_rank *rk, uint32_t id)
{
    if (m->model != rk) {
        ts__free(m->v, (size_t)m->n + 1);
        m->n = rk->strings.n;
        m->v = ts__calloc((size_t)m->n + 1, 1);
        m->model = rk;
    }
    if (!m->v || id >= m->n)   /* no memory for the cache: match as is */ return !fnmatch(m->glob, ts__rank_str(rk, id), 0);
    if (!m->v[id]) m->v[id] = fnmatch(m->glob, ts__rank_str(rk, id), 0) ? 1 : 2;
    return m->v[id] == 2;
}

/* Whether slice sl (no node) is an op --scale may reach: a CPU op nested in
 * node `enc`, under no other slice the pattern matches (the outermost match
 * scales, its nested matches are part of it) and not in a matched node. */
static bool nested_target(const ts_rank *rk, const scale_rank *sr, uint32_t sl, uint32_t enc, name_match *m,
                          const uint8_t *node_hit)
{
    if (enc == TS_NONE32 || node_hit[enc - sr->first] || ts__kind_on_gpu((ts_kind)rk->slices.kind[sl]) ||
        !name_matches(m, rk, rk->slices.name[sl]))
        return false;
    for (uint32_t q = rk->slices.parent[sl]; q != TS_NONE32 && sr->slice_node[q] == TS_NONE32; q = rk->slices.parent[q])
        if (name_matches(m, rk, rk->slices.name[q])) return false;
    return true;
}

/* One rank's matches: nodes scaled whole (a node without node children by
 * its own time, one with children over its stretches around them), then ops
 * nested in a node (not nodes themselves: aten::mm under a top-level op)
 * over the stretches of the enclosing node they cover, which shortens it:
 * the parent's own time stays, its child's shrinks. */
static int scale_rank_matches(ts_replay *r, uint32_t ri, uint32_t mask, name_match *m, double factor,
                              uint32_t *hits)
{
    const ts_graph *g = r->g;
    ts_sim *s = &r->sim;
    scale_rank sr;
    uint8_t *node_hit = NULL;
    int rc = scale_rank_init(g, ri, &sr);
    if (rc == TS_OK && !(node_hit = ts__calloc((size_t)sr.n + 1, 1))) rc = TS_ENOMEM;
    const ts_rank *rk = g->trace->ranks[g->rank_model[ri]];
    for (uint32_t i = 0; rc == TS_OK && i < sr.n; i++) {
        uint32_t n = sr.first + i;
        if (!(mask & (1u << s->kind[n])) || !name_matches(m, rk, rk->slices.name[g->nodes.slice[n]])) continue;
        node_hit[i] = 1;
        (*hits)++;
        if (sr.first_child[i] == TS_NONE32) s->self_ns[n] = (int64_t)llround((double)s->self_ns[n] * factor);
        else scale_span(r, &sr, n, g->nodes.start_ns[n], g->nodes.start_ns[n] + g->nodes.dur_ns[n], factor);
    }
    for (uint32_t sl = 0; rc == TS_OK && (mask & (1u << TS_NODE_CPU_OP)) && sl < rk->slices.n; sl++) {
        if (sr.slice_node[sl] != TS_NONE32) continue;
        uint32_t enc = ts__graph_enclosing_node(rk, sr.slice_node, sl);
        if (!nested_target(rk, &sr, sl, enc, m, node_hit)) continue;
        (*hits)++;
        scale_span(r, &sr, enc, rk->slices.ts_ns[sl], ts__slice_end(rk, sl), factor);
    }
    ts__free(node_hit, (size_t)sr.n + 1);
    scale_rank_free(g, ri, &sr);
    return rc;
}

int ts__replay_scale(ts_replay *r, const char *spec, ts_error *err)
{
    uint32_t mask = 0;
    double factor = 1.0;
    char glob[256];
    int rc = parse_scale(spec, &mask, glob, sizeof glob, &factor, err);
    if (rc) return rc;
    const ts_graph *g = r->g;
    ts_sim *s = &r->sim;
    uint32_t hits = 0;
    name_match m = {.glob = glob};
    for (uint32_t ri = 0; ri < g->n_ranks && rc == TS_OK; ri++) rc = scale_rank_matches(r, ri, mask, &m, factor, &hits);
    ts__free(m.v, (size_t)m.n + 1);
    if (rc) return ts__error(err, rc, "replay: out of memory");
    for (uint32_t n = g->rank_first_node[g->n_ranks]; n < s->n_nodes; n++) {   /* barriers: a collective's transfer */
        if (!(mask & (1u << s->kind[n])) || fnmatch(glob, ts__replay_node_name(r, n), 0)) continue;
        double scaled = (double)s->self_ns[n] * factor;
        if (scaled >= 0x1p62)
            return ts__error(err, TS_ERANGE, "--scale '%s': makes '%s' last %.3g s, past the 2^62 ns (146 years) "
                             "a replay can time", spec, ts__replay_node_name(r, n), scaled / 1e9);
        ts__edit_retime(r, n, (int64_t)llround(scaled));
        hits++;
    }
    if (!hits)
        return ts__error(err, TS_EINVAL, "--scale '%s': no op of the trace matches '%s'%s", spec, glob,
                         mask == UINT32_MAX ? "" : " with that kind");
    return TS_OK;
}

/* --profiler-overhead-us: a per-event overhead model of the profiler. Each
 * recorded op on a CPU thread cost the run `us` of the profiler's own work
 * (taking its timestamps, storing its record), which the trace shows as time
 * between ops or inside them. It is taken off the gap before the op's start
 * (the same on every start-edge into it), and what the gap cannot give off
 * the op's own self time; nothing goes below 0. So a replay predicts the run
 * without the profiler. The cost is measured apart, on the same machine:
 * bench/testbed/profiler_overhead.py. O(V + E). */
void ts__replay_unprofile(ts_replay *r, double us)
{
    const ts_graph *g = r->g;
    ts_sim *s = &r->sim;
    int64_t c = (int64_t)llround(us * 1e3), n_ops = 0;
    for (uint32_t n = 0; n < s->n_base_nodes; n++) {
        if ((s->kind[n] != TS_NODE_CPU_OP && s->kind[n] != TS_NODE_COMM_CPU) || g->lanes[s->lane[n]].on_gpu) continue;
        int64_t gap = INT64_MAX;
        for (uint32_t k = g->in_first[n]; k < g->in_first[n + 1]; k++) {
            uint32_t e = g->in_edge[k];
            if (!(g->edges.flags[e] & TS_SIM_TO_END) && s->egap_ns[e] >= 0 && s->egap_ns[e] < gap) gap = s->egap_ns[e];
        }
        int64_t from_gap = gap == INT64_MAX ? 0 : gap < c ? gap : c;
        for (uint32_t k = g->in_first[n]; from_gap && k < g->in_first[n + 1]; k++) {
            uint32_t e = g->in_edge[k];
            if (!(g->edges.flags[e] & TS_SIM_TO_END) && s->egap_ns[e] >= from_gap) s->egap_ns[e] -= from_gap;
        }
        int64_t rest = c - from_gap;
        s->self_ns[n] = s->self_ns[n] > rest ? s->self_ns[n] - rest : 0;
        n_ops++;
    }
    ts__replay_warn(r, "--profiler-overhead-us %g: the profiler's cost taken off %lld recorded CPU ops", us,
                    (long long)n_ops);
}

/* Fit r->model; with nothing to fit it becomes NULL (no error). */
static int fit_or_drop(ts_replay *r, ts_error *err)
{
    ts_error fit_err = {0};
    int rc = ts_coll_model_fit(r->model, &fit_err);
    if (rc == TS_ENODATA) {
        ts_coll_model_destroy(r->model);
        r->model = NULL;
        return TS_OK;
    }
    return rc ? ts__error(err, rc, "replay: out of memory fitting the cost model") : TS_OK;
}

/* The largest group a fitted model prices from its own samples. */
static uint32_t widest_fit(const ts_coll_model *m)
{
    uint32_t widest = 0;
    for (uint32_t i = 0; m && i < ts_coll_model_n_fits(m); i++) {
        ts_coll_fit_info fi;
        ts_coll_model_fit_info(m, i, &fi);
        if (fi.n_ranks > widest) widest = fi.n_ranks;
    }
    return widest;
}

/* Cost model for repricing: from an nccl-tests log when given, else from the
 * trace's own collectives with a known size. NULL model (no error) when there
 * is nothing to fit; the passes that need one say so. */
int ts__replay_fit_model(ts_replay *r, const ts_replay_options *opt, ts_error *err)
{
    int rc = ts_coll_model_create(&r->model);
    if (rc) return ts__error(err, rc, "replay: out of memory");
    r->model_from_trace = false;
    if (opt->nccl_tests_log) {
        rc = ts_coll_model_load_nccl_tests(r->model, opt->nccl_tests_log, err);
        if (rc == TS_OK) rc = fit_or_drop(r, err);
        if (rc || widest_fit(r->model) >= 2) return rc;
        /* A log of one rank (all_reduce_perf -g 1, or one without its
         * "Rank N" lines) times no communication, and the model prices no
         * group from it: say so and calibrate on the trace as without a log,
         * rather than price what-ifs from nothing. */
        ts__replay_warn(r, "--nccl-tests %s: no results over more than one rank (nccl-tests prints a "
                        "\"# Rank N\" line per rank; none, or only rank 0, here): calibrated on the trace's "
                        "own collectives instead", opt->nccl_tests_log);
        ts_coll_model_destroy(r->model);
        if ((rc = ts_coll_model_create(&r->model))) return ts__error(err, rc, "replay: out of memory");
    }
    r->model_from_trace = true;
    for (uint32_t i = 0; i < r->n_colls; i++) {
        const ts_replay_coll *c = &r->colls[i];
        if (c->bytes < 0 || c->transfer_ns <= 0 || c->priced == TS_NONE32 || c->kind >= TS_COLL_COUNT) continue;
        rc = ts_coll_model_add_sample(r->model, c->kind, c->group, (uint64_t)c->bytes, c->transfer_ns);
        if (rc) return ts__error(err, rc, "replay: out of memory");
    }
    return fit_or_drop(r, err);
}

typedef struct wire_price { double fixed, per_share; } wire_price;   /* see price_ns */

/* A collective on a shared link: fixed + per_share x the collectives in
 * flight beside it (itself included, at least 1), in ns; per_share < 0: not
 * on the link (kept as it is). */
static int64_t price_ns(const wire_price *p, double shared)
{
    double v = p->fixed + p->per_share * (shared < 1 ? 1 : shared);
    return v < 0x1p62 ? (int64_t)llround(v) : (int64_t)1 << 62;   /* past it: refused after the run */
}

/* n + 1 prices, none on the link yet; NULL when out of memory. */
static wire_price *new_prices(uint32_t n)
{
    wire_price *p = ts__malloc(((size_t)n + 1) * sizeof *p);
    for (uint32_t i = 0; p && i <= n; i++) p[i] = (wire_price){0, -1};
    return p;
}

/* Relative what-ifs ("--bandwidth xF", "--latency-us xF") of one
 * collective's transfer time t: its fixed cost a (the cost model's time at 0
 * bytes for its group, at most t; 0 without a model) times the latency
 * factor, the rest divided by the bandwidth factor: what the trace's own
 * collective achieved, scaled, whatever the link's nominal figures. */
static wire_price relative_price(const ts_replay *r, const ts_replay_options *opt, const ts_replay_coll *c,
                                 uint32_t n, int64_t t)
{
    /* A model fitted on the trace alone (a few bucket sizes, often one)
     * cannot tell a fixed cost from a per-byte one: only a calibration
     * log's fixed cost is taken. */
    int64_t a = r->model && !r->model_from_trace ? ts_coll_model_predict_ns(r->model, c->kind, 0, n) : 0;
    a = a < 0 ? 0 : a > t ? t : a;
    double bf = opt->bandwidth_factor > 0 ? opt->bandwidth_factor : 1.0;
    double lf = opt->latency_factor > 0 ? opt->latency_factor : 1.0;
    return (wire_price){(double)a * lf, (double)(t - a) / bf};
}

static int64_t relative_time(const ts_replay *r, const ts_replay_options *opt, const ts_replay_coll *c, uint32_t n,
                             int64_t t)
{
    wire_price p = relative_price(r, opt, c, n, t);
    return price_ns(&p, 1);
}

/* What the relative what-ifs took as fixed cost, said once. */
static void warn_relative(ts_replay *r, const ts_replay_options *opt, uint32_t n, bool reshared)
{
    int64_t a = -1;
    for (uint32_t i = 0; r->model && !r->model_from_trace && i < r->n_colls && a < 0; i++)
        if (r->colls[i].priced != TS_NONE32 && r->colls[i].kind < TS_COLL_COUNT)
            a = ts_coll_model_predict_ns(r->model, r->colls[i].kind, 0, opt->world ? opt->world : r->colls[i].group);
    const char *from = !r->model || r->model_from_trace ? "none known: no calibration log (--nccl-tests)"
                       : opt->nccl_tests_log;
    if (opt->bandwidth_factor > 0)
        ts__replay_warn(r, "--bandwidth x%g: each of %u collectives' time past its fixed cost divided by %g (fixed cost "
                        "%.1f us, %s)%s", opt->bandwidth_factor, n, opt->bandwidth_factor, a > 0 ? a / 1e3 : 0.0, from,
                        reshared ? ", per collective in flight beside it as traced, then shared by those in flight in "
                                   "the simulated schedule" : "");
    if (opt->latency_factor > 0)
        ts__replay_warn(r, "--latency-us x%g: each of %u collectives' fixed cost (%.1f us, %s) times %g%s",
                        opt->latency_factor < 1e-6 ? 0 : opt->latency_factor, n, a > 0 ? a / 1e3 : 0.0, from,
                        opt->latency_factor < 1e-6 ? 0 : opt->latency_factor,
                        a > 0 ? "" : ": with no fixed cost known this changes nothing (give --nccl-tests LOG)");
}

/* Set collective c's transfer time to t_new. Each rank's delay after the
 * first rank left the collective (its exit gap) scales with it: on a
 * bandwidth-bound collective that delay is the ring's last transfer reaching
 * the later ranks, not a wake-up (bench/testbed, 100 Mbit/s: rank 0 left a
 * 722 ms all-reduce 25 ms after rank 1, and at 400 Mbit/s 6 ms after; kept
 * as measured, a 4x bandwidth what-if was 11% slow). */
static void set_transfer(ts_replay *r, const ts_replay_coll *c, int64_t t_new)
{
    int64_t old = r->sim.self_ns[c->priced];
    double ratio = old > 0 ? (double)t_new / (double)old : 1.0;
    ts__edit_retime(r, c->priced, t_new);
    if (c->barrier == TS_NONE32 || c->priced != c->barrier || c->barrier >= r->sim.n_base_nodes) return;
    const ts_graph *g = r->g;
    for (uint32_t k = g->out_first[c->barrier]; k < g->out_first[c->barrier + 1]; k++)
        if (g->edges.kind[k] == TS_EDGE_COLL_EXIT && r->sim.egap_ns[k] > 0)
            ts__edit_set_gap(r, k, (int64_t)llround((double)r->sim.egap_ns[k] * ratio));
}

/* How long before its recorded end a gloo worker may already have woken the
 * thread waiting for it: the worker records its end after the wake-up (by
 * 0.1-0.5 ms on the namespaces testbed, bench/testbed). */
#define GLOO_END_LAG_NS 1000000

/* The op on lane `lane` of rank k that woke up from an idle wait less than
 * GLOO_END_LAG_NS before end: the first op starting in [end - lag, end)
 * with no op of the lane running from end - lag up to its start.
 * TS_NONE32 if none. O(the rank's nodes). */
static uint32_t woken_at(const ts_replay *r, uint16_t k, uint32_t lane, int64_t end)
{
    const ts_graph *g = r->g;
    uint32_t q = TS_NONE32;
    int64_t qs = end;
    for (uint32_t n = g->rank_first_node[k]; n < g->rank_first_node[k + 1]; n++) {
        int64_t a = ts__sim_meas_start(&r->sim, n);
        if (g->nodes.lane[n] == lane && a >= end - GLOO_END_LAG_NS && a < qs) { q = n; qs = a; }
    }
    if (q == TS_NONE32) return q;
    for (uint32_t n = g->rank_first_node[k]; n < g->rank_first_node[k + 1]; n++) {
        int64_t a = ts__sim_meas_start(&r->sim, n);
        if (g->nodes.lane[n] == lane && n != q && a < qs && a + r->sim.meas_dur_ns[n] > end - GLOO_END_LAG_NS)
            return TS_NONE32;   /* busy within the window: not a wake-up */
    }
    return q;
}

/* Tie op q to worker member m's end at their measured distance (negative:
 * q woke before m recorded its end), its other waits dropped. */
static void tie(ts_replay *r, uint32_t m, uint32_t q)
{
    const ts_graph *g = r->g;
    int64_t end = ts__sim_meas_start(&r->sim, m) + r->sim.meas_dur_ns[m];
    for (uint32_t k = g->in_first[q]; k < g->in_first[q + 1]; k++) {
        uint32_t e = g->in_edge[k];
        if (!(g->edges.flags[e] & TS_SIM_TO_END) && r->sim.egap_ns[e] > 0 && r->sim.egap_ns[e] != TS_SIM_CUT_GAP)
            r->sim.egap_ns[e] = 0;
    }
    uint32_t ne = ts__sim_add_edge(&r->sim, m, q, TS_SIM_FROM_END, ts__sim_meas_start(&r->sim, q) - end);
    if (ne != TS_NONE32) r->sim.ekind[ne] = TS_EDGE_WORKER;
}

/* A gloo worker member and the op whose start launched it. */
typedef struct launched { uint32_t member, launch; int64_t at; } launched;

static int cmp_launched(const void *a, const void *b)
{
    int64_t x = ((const launched *)a)->at, y = ((const launched *)b)->at;
    return (x > y) - (x < y);
}

static int cmp_node_start(const void *a, const void *b, void *arg)
{
    const ts_replay *r = arg;
    int64_t x = ts__sim_meas_start(&r->sim, *(const uint32_t *)a), y = ts__sim_meas_start(&r->sim, *(const uint32_t *)b);
    return (x > y) - (x < y);
}

/* DDP's finalize on the training thread (after the iteration's last launch)
 * takes its buckets in launch order, each as views (aten::as_strided) then
 * copies: the j-th run of views waits for the j-th bucket. Ties each of the
 * iteration's buckets v[0..n) whose worker recorded its end after its run of
 * views began. false when the finalize shows fewer runs than buckets. */
static bool tie_finalize(ts_replay *r, const launched *v, uint32_t n, uint32_t *ops, uint32_t cap)
{
    const ts_graph *g = r->g;
    uint32_t lane = g->nodes.lane[v[0].launch], k = g->nodes.rank[v[0].launch], n_ops = 0;
    int32_t it = g->nodes.iteration[v[0].launch];
    int64_t last = v[n - 1].at;
    for (uint32_t x = g->rank_first_node[k]; x < g->rank_first_node[k + 1] && n_ops < cap; x++)
        if (g->nodes.lane[x] == lane && g->nodes.iteration[x] == it && ts__sim_meas_start(&r->sim, x) > last)
            ops[n_ops++] = x;
    qsort_r(ops, n_ops, sizeof *ops, cmp_node_start, r);
    uint32_t runs = 0;
    for (uint32_t i = 0; i < n_ops && runs < n; i++) {
        bool view = !strcmp(ts__replay_node_name(r, ops[i]), "aten::as_strided");
        if (!view || (i && !strcmp(ts__replay_node_name(r, ops[i - 1]), "aten::as_strided"))) continue;
        ops[runs++] = ops[i];   /* the run's first view (ops[] is read ahead of runs) */
    }
    if (runs < n) return false;
    for (uint32_t j = 0; j < n; j++) {
        int64_t end = ts__sim_meas_start(&r->sim, v[j].member) + r->sim.meas_dur_ns[v[j].member];
        if (ts__sim_meas_start(&r->sim, ops[j]) < end) tie(r, v[j].member, ops[j]);
    }
    return true;
}

/* gloo's workers record their end after waking the thread that waits for
 * them (by 0.1 ms to several ms on a loaded machine: on the testbed at 50
 * Mbit/s the optimizer had run for 2.9 ms when a worker recorded its end),
 * so the graph ties a worker to the first op after its recorded end and
 * leaves the op that truly woke up with its whole wait as a gap, which no
 * what-if could shorten: `replay --bandwidth x4` of a 100 Mbit/s testbed
 * trace left two of its three steps at the measured 0.7 s. For every
 * what-if but --bucket-mb (which re-ties the waiters of the buckets it
 * regroups), the op that woke waits for the worker's end instead (a
 * negative gap: where it was measured), and its other waits go: DDP's
 * finalize run of views for each bucket (tie_finalize), else an op that
 * started less than 1 ms before a worker's recorded end after an idle
 * millisecond (woken_at). CPU lanes only. O(members x nodes). */
void ts__replay_tie_woken(ts_replay *r)
{
    const ts_graph *g = r->g;
    uint32_t n = 0, cap_ops = 0;
    for (uint32_t k = 0; k < g->n_ranks; k++)
        if (g->rank_first_node[k + 1] - g->rank_first_node[k] > cap_ops) cap_ops = g->rank_first_node[k + 1] - g->rank_first_node[k];
    launched *v = ts__malloc(((size_t)g->n_colls * (g->n_ranks + 1) + 1) * sizeof *v);
    uint32_t *ops = ts__malloc(((size_t)cap_ops + 1) * sizeof *ops);
    if (!v || !ops) goto out;   /* out of memory: the what-if runs without the ties */
    for (uint32_t ci = 0; ci < g->n_colls; ci++)
        for (uint32_t i = 0; i < g->colls[ci].n_members; i++) {
            uint32_t m = g->coll_members[g->colls[ci].first_member + i], launch = TS_NONE32;
            for (uint32_t k = g->in_first[m]; k < g->in_first[m + 1]; k++)
                if (g->edges.kind[g->in_edge[k]] == TS_EDGE_COLL_LAUNCH) launch = g->edges.src[g->in_edge[k]];
            if (launch == TS_NONE32 || g->lanes[g->nodes.lane[m]].on_gpu || g->nodes.iteration[launch] < 0) continue;
            /* sorted by rank, then iteration, then launch time */
            v[n++] = (launched){m, launch, ts__sim_meas_start(&r->sim, launch)};
        }
    qsort(v, n, sizeof *v, cmp_launched);
    for (uint32_t lo = 0, hi; lo < n; lo = hi) {   /* one (rank, iteration) at a time */
        hi = lo;
        uint32_t k = g->nodes.rank[v[lo].launch];
        int32_t it = g->nodes.iteration[v[lo].launch];
        for (uint32_t i = lo; i < n; i++)
            if (g->nodes.rank[v[i].launch] == k && g->nodes.iteration[v[i].launch] == it) {
                launched t = v[hi]; v[hi++] = v[i]; v[i] = t;
            }
        qsort(v + lo, hi - lo, sizeof *v, cmp_launched);
        if (tie_finalize(r, v + lo, hi - lo, ops, cap_ops)) continue;
        for (uint32_t i = lo; i < hi; i++) {
            uint32_t m = v[i].member, used = TS_NONE32;
            for (uint32_t e = g->out_first[m]; e < g->out_first[m + 1]; e++)
                if (g->edges.kind[e] == TS_EDGE_WORKER) used = g->edges.dst[e];
            if (used == TS_NONE32) continue;
            int64_t end = ts__sim_meas_start(&r->sim, m) + r->sim.meas_dur_ns[m];
            uint32_t q = woken_at(r, g->nodes.rank[m], g->nodes.lane[used], end);
            /* An op that started before the all-reduce did was not waiting
             * for it (and may be its ancestor: a tie would close a cycle). */
            if (q != TS_NONE32 && q != used && ts__sim_meas_start(&r->sim, q) > ts__sim_meas_start(&r->sim, m))
                tie(r, m, q);
        }
    }
out:
    ts__free(v, ((size_t)g->n_colls * (g->n_ranks + 1) + 1) * sizeof *v);
    ts__free(ops, ((size_t)cap_ops + 1) * sizeof *ops);
}

/* How many collectives ran at once, on average over c's time, on the rank of
 * its first member (itself included; 1 when unknown): they shared that
 * rank's link. gloo runs two all-reduces at once by default, so DDP's
 * buckets share one link; a cost model fitted on the trace's own times
 * has that sharing in it, a given bandwidth does not. O(collectives). */
static double in_flight(const ts_replay *r, const ts_replay_coll *c)
{
    const ts_graph *g = r->g;
    if (c->graph_coll == TS_NONE32 || !g->colls[c->graph_coll].n_members) return 1.0;
    uint32_t m = g->coll_members[g->colls[c->graph_coll].first_member];
    int64_t a = ts__sim_meas_start(&r->sim, m), b = a + r->sim.meas_dur_ns[m];
    if (a == INT64_MIN || b <= a) return 1.0;
    double overlap = 0;
    for (uint32_t i = 0; i < g->n_colls; i++) {
        const ts_coll *o = &g->colls[i];
        for (uint32_t k = 0; k < o->n_members; k++) {
            uint32_t x = g->coll_members[o->first_member + k];
            if (g->nodes.rank[x] != g->nodes.rank[m]) continue;
            int64_t xa = ts__sim_meas_start(&r->sim, x), xb = xa + r->sim.meas_dur_ns[x];
            if (xa == INT64_MIN) continue;
            int64_t lo = xa > a ? xa : a, hi = xb < b ? xb : b;
            if (hi > lo) overlap += (double)(hi - lo);
        }
    }
    double f = overlap / (double)(b - a);
    return f >= 1.0 ? f : 1.0;
}

/* Collective c at a given bus bandwidth on a model fitted on the trace:
 * its bus bytes (the algorithm's bytes on the wire, ts_coll_bus_factor for
 * n ranks) at gbps shared by the `shared` collectives in flight with it as
 * traced, plus the given fixed cost (--latency-us, else none). The fit's
 * own fixed cost is left out: fitted on a trace, it is time spent on the
 * link behind the other collectives, not a cost per call (the testbed's cnn
 * at 1 MB buckets, rerun set of 26 Nov: 0.46 s at 0 bytes over 50 Mbit/s,
 * 0.10 s over 200, about the 4x of the rates), so a given bandwidth scales
 * it as well. The relative what-ifs leave it out alike (relative_time). */
static wire_price wire_price_at(const ts_replay_options *opt, const ts_replay_coll *c, uint32_t n)
{
    return (wire_price){opt->latency_us > 0 ? opt->latency_us * 1e3 : 0,
                        (double)c->bytes * ts_coll_bus_factor(c->kind, n) / opt->bandwidth_gbps};
}

/* Breakpoints of the number of collectives in flight over the simulated
 * schedule: from pos[k] on, cnt[k] are in flight, and cum[k] is the
 * integral of that number before pos[k]. */
typedef struct flight_curve { int64_t *pos; double *cum; int32_t *cnt; uint32_t n; } flight_curve;

typedef struct flight_pt { int64_t t; int32_t d; } flight_pt;

static int cmp_flight_pt(const void *x, const void *y)
{
    const flight_pt *p = x, *q = y;
    return p->t < q->t ? -1 : p->t > q->t;
}

/* The integral of the number in flight over (-inf, t). O(log n). */
static double flight_integral(const flight_curve *fc, int64_t t)
{
    if (!fc->n || t <= fc->pos[0]) return 0;
    uint32_t lo = 0, hi = fc->n;   /* the last k with pos[k] <= t */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (fc->pos[mid] <= t) lo = mid; else hi = mid;
    }
    return fc->cum[lo] + (double)fc->cnt[lo] * (double)(t - fc->pos[lo]);
}

/* Whether collective i is one rank's member alone in a job of several
 * (unmatched: at a window's edge, say): not a transfer on the job's link. */
static bool lone(const ts_replay *r, uint32_t i)
{
    return r->colls[i].barrier == TS_NONE32 && r->g->n_ranks > 1;
}

/* The curve of every priced collective's simulated transfer [start, end)
 * (lone members left out). pt: scratch of 2 n_colls; fc's arrays hold
 * 2 n_colls. O(n log n). */
static void flight_build(const ts_replay *r, flight_pt *pt, flight_curve *fc)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n_colls; i++) {
        uint32_t p = r->colls[i].priced;
        if (p == TS_NONE32 || lone(r, i) || r->sim.end_ns[p] <= r->sim.start_ns[p]) continue;
        pt[n++] = (flight_pt){r->sim.start_ns[p], 1};
        pt[n++] = (flight_pt){r->sim.end_ns[p], -1};
    }
    qsort(pt, n, sizeof *pt, cmp_flight_pt);
    fc->n = 0;
    int32_t cnt = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (fc->n && fc->pos[fc->n - 1] == pt[i].t) {
            fc->cnt[fc->n - 1] = cnt += pt[i].d;
            continue;
        }
        double cum = fc->n ? fc->cum[fc->n - 1] + (double)fc->cnt[fc->n - 1] * (double)(pt[i].t - fc->pos[fc->n - 1]) : 0;
        fc->pos[fc->n] = pt[i].t;
        fc->cum[fc->n] = cum;
        fc->cnt[fc->n++] = cnt += pt[i].d;
    }
}

/* The collectives in flight on average over node p's simulated span. */
static double span_shared(const ts_replay *r, const flight_curve *fc, uint32_t p)
{
    int64_t a = r->sim.start_ns[p], b = r->sim.end_ns[p];
    return b > a ? (flight_integral(fc, b) - flight_integral(fc, a)) / (double)(b - a) : 1.0;
}

/* Flight-curve scratch for n collectives: pt and fc's arrays (2 n + 1 each). */
typedef struct flight_scratch { flight_pt *pt; flight_curve fc; size_t n2; } flight_scratch;

static int flight_alloc(flight_scratch *f, uint32_t n, ts_error *err)
{
    f->n2 = 2 * (size_t)n + 1;
    f->pt = ts__malloc(f->n2 * sizeof *f->pt);
    f->fc = (flight_curve){ts__malloc(f->n2 * sizeof *f->fc.pos), ts__malloc(f->n2 * sizeof *f->fc.cum),
                           ts__malloc(f->n2 * sizeof *f->fc.cnt), 0};
    return f->pt && f->fc.pos && f->fc.cum && f->fc.cnt ? TS_OK : ts__error(err, TS_ENOMEM, "replay: out of memory");
}

static void flight_free(flight_scratch *f)
{
    ts__free(f->pt, f->n2 * sizeof *f->pt);
    ts__free(f->fc.pos, f->n2 * sizeof *f->fc.pos);
    ts__free(f->fc.cum, f->n2 * sizeof *f->fc.cum);
    ts__free(f->fc.cnt, f->n2 * sizeof *f->fc.cnt);
}

/* The rounds of --bandwidth GBPS on a trace's own model: the collectives
 * priced on the wire (price[i].per_share >= 0) first share the link as traced; that
 * sharing no longer holds once their times change (the testbed's cnn at 1
 * MB: the 8.4 MB bucket beside a chain of three small ones on gloo's other
 * worker, which at the new prices ends early and leaves it the link). So,
 * as the link-bound bucket model does (linkbound.c), each is priced again
 * from the collectives in flight beside it in the simulated schedule
 * (their time-averaged number over its span), and the schedule simulated
 * again, until no price moves by a microsecond; from the fifth round on
 * each step goes half way, so a schedule that flips between two sharings
 * settles between them. At most 12 rounds, O(n log n) each besides the
 * simulation. */
static int reshare_on_wire(ts_replay *r, const wire_price *price, bool *done, ts_error *err)
{
    /* The link is the job's when each collective repriced is one barrier
     * over its ranks; a rank's lone member (unmatched) would count beside
     * other ranks' as if on one link: then the traced sharing stays. */
    *done = false;
    for (uint32_t i = 0; i < r->n_colls; i++)
        if (price[i].per_share >= 0 && lone(r, i)) return TS_OK;
    *done = true;
    flight_scratch f;
    int rc = flight_alloc(&f, r->n_colls, err);
    r->sim.keep_order = true;   /* the rounds and the caller's final run simulate the same graph */
    for (int round = 0; rc == TS_OK && round < 12; round++) {
        if ((rc = ts__sim_run(&r->sim, err))) break;
        flight_build(r, f.pt, &f.fc);
        int64_t most = 0;
        for (uint32_t i = 0; i < r->n_colls; i++) {
            const ts_replay_coll *c = &r->colls[i];
            if (price[i].per_share < 0) continue;
            int64_t was = r->sim.self_ns[c->priced], t = price_ns(&price[i], span_shared(r, &f.fc, c->priced));
            if (round >= 4) t = was + (t - was) / 2;
            if (llabs(t - was) > most) most = llabs(t - was);
            set_transfer(r, c, t);
        }
        if (most < 1000) break;
    }
    flight_free(&f);
    return rc;
}

/* What a given bandwidth on a trace's own model left out, said once: the
 * fitted fixed cost (its largest over the groups repriced, in ns), the
 * sharing's change when it was not simulated again, and a protocol's
 * efficiency below the nominal rate. */
static void warn_wire(ts_replay *r, const ts_replay_options *opt, uint32_t n, int64_t fixed, bool resimulated)
{
    char fit[160] = "";
    if (fixed > 0)
        snprintf(fit, sizeof fit, "the trace's fitted fixed cost (up to %.1f ms; on a trace, time queued behind "
                 "other collectives), ", fixed / 1e6);
    ts__replay_warn(r, "--bandwidth %g: %u collectives priced as their bus bytes at that rate, shared by those in "
                    "flight %s, plus %s; left out: %s%swhat the protocol loses of a nominal rate (over TCP on the "
                    "gloo testbed, 81-96%% of a shaped link)", opt->bandwidth_gbps, n,
                    resimulated ? "in the simulated schedule" : "as traced",
                    opt->latency_us > 0 ? "--latency-us" : "no fixed cost (give --latency-us for one)", fit,
                    resimulated ? "" : "the sharing's change as the times change (unmatched collectives), ");
}

/* Whether the job's collectives run on CPU threads (gloo, MPI): no GPU lane
 * holds a collective member. */
static bool cpu_collectives(const ts_replay *r)
{
    const ts_graph *g = r->g;
    for (uint32_t i = 0; i < g->n_colls; i++)
        for (uint32_t k = 0; k < g->colls[i].n_members; k++)
            if (g->lanes[g->nodes.lane[g->coll_members[g->colls[i].first_member + k]]].on_gpu) return false;
    return g->n_colls > 0;
}

/* Only relative what-ifs: every collective of a known kind, sized or not
 * (the sizes only serve the fixed cost, through the cost model). */
static int reprice_relative(ts_replay *r, const ts_replay_options *opt, ts_error *err)
{
    uint32_t repriced = 0;
    wire_price *price = new_prices(r->n_colls);
    flight_scratch f = {0};
    int rc = price ? flight_alloc(&f, r->n_colls, err) : ts__error(err, TS_ENOMEM, "replay: out of memory");
    if (rc == TS_OK && opt->bandwidth_factor > 0) {   /* the sharing as traced: the unmodified schedule */
        r->sim.keep_order = true;
        if ((rc = ts__sim_run(&r->sim, err)) == TS_OK) flight_build(r, f.pt, &f.fc);
    }
    for (uint32_t i = 0; rc == TS_OK && i < r->n_colls; i++) {
        const ts_replay_coll *c = &r->colls[i];
        if (c->priced == TS_NONE32 || c->kind >= TS_COLL_COUNT) continue;
        wire_price p = relative_price(r, opt, c, c->group, r->sim.self_ns[c->priced]);
        if (opt->bandwidth_factor > 0 && !lone(r, i))   /* its part past the fixed cost per collective beside it */
            price[i] = (wire_price){p.fixed, p.per_share / span_shared(r, &f.fc, c->priced)};
        set_transfer(r, c, price_ns(&p, 1));
        repriced++;
    }
    bool resimulated = false;
    if (rc == TS_OK && repriced && opt->bandwidth_factor > 0) rc = reshare_on_wire(r, price, &resimulated, err);
    warn_relative(r, opt, repriced, resimulated);
    flight_free(&f);
    ts__free(price, ((size_t)r->n_colls + 1) * sizeof *price);
    if (rc) return rc;
    if (!repriced) return ts__error(err, TS_ENODATA, "replay: no collective of a known kind to reprice");
    return TS_OK;
}

/* What the trace's collectives offer a calibration: how many have a known
 * size, how many of those a measured transfer time, and whether some (kind,
 * group) ran at two sizes or more (a line needs two), among the known and
 * among the timed ones; `sizes` names the first few (kind, size) pairs. */
typedef struct calib_census {
    uint32_t known, timed;
    bool     known_two, timed_two;
    char     sizes[160];
} calib_census;

typedef struct census_key { uint32_t kind, group; int64_t bytes, timed_bytes; } census_key;

/* Record one collective under its (kind, group); false when the table is full. */
static void census_add(calib_census *c, census_key *keys, uint32_t *n_keys, const ts_replay_coll *x)
{
    uint32_t k = 0;
    while (k < *n_keys && (keys[k].kind != (uint32_t)x->kind || keys[k].group != x->group)) k++;
    if (k == *n_keys) {
        if (*n_keys == 32) return;
        keys[(*n_keys)++] = (census_key){(uint32_t)x->kind, x->group, x->bytes, -1};
        if (*n_keys <= 3) {
            size_t len = strlen(c->sizes);
            snprintf(c->sizes + len, sizeof c->sizes - len, "%s%s %lld B", len ? ", " : "",
                     ts_coll_kind_name(x->kind), (long long)x->bytes);
        }
    }
    if (keys[k].bytes != x->bytes) c->known_two = true;
    if (x->transfer_ns <= 0) return;
    if (keys[k].timed_bytes >= 0 && keys[k].timed_bytes != x->bytes) c->timed_two = true;
    keys[k].timed_bytes = x->bytes;
}

static calib_census census(const ts_replay *r)
{
    calib_census c = {0};
    census_key keys[32];
    uint32_t n_keys = 0;
    for (uint32_t i = 0; i < r->n_colls; i++) {
        const ts_replay_coll *x = &r->colls[i];
        if (x->bytes < 0 || x->priced == TS_NONE32 || x->kind >= TS_COLL_COUNT) continue;
        c.known++;
        c.timed += x->transfer_ns > 0;
        census_add(&c, keys, &n_keys, x);
    }
    return c;
}

/* Why the trace's own collectives cannot price another world or bandwidth
 * (TS_EINVAL: the what-if lacks what it needs), or TS_OK when they can. */
static int trace_calibration_error(const ts_replay *r, ts_error *err)
{
    calib_census c = census(r);
    const char *give = "give --nccl-tests LOG (an nccl-tests or bench/gloo_allreduce.py sweep over sizes) or "
                       "--bandwidth GBPS [--latency-us US]";
    if (c.known == 0)
        return ts__error(err, TS_EINVAL, "replay: no collective with a known size to calibrate a cost model from; %s",
                         give);
    if (!c.known_two || (c.timed && !c.timed_two))
        return ts__error(err, TS_EINVAL, "replay: each kind of collective in the trace ran at one size (%s%s; %u of "
                         "known size, %u with a measured transfer time): one size cannot fit a line (a fixed cost "
                         "plus a cost per byte) to price another world size or bandwidth; %s", c.sizes,
                         c.known_two ? " among others" : "", c.known, c.timed, give);
    if (c.timed == 0)
        return ts__error(err, TS_EINVAL, "replay: none of the trace's %u collectives of known size has a measured "
                         "transfer time (each ends when its last rank arrives, or in a later wait: nonblocking "
                         "calls), so there is nothing to fit; %s", c.known, give);
    return TS_OK;
}

/* Reprice every collective of known size: its measured transfer time times
 * predicted(new world, new bandwidth) / predicted(as measured), so the
 * instance's own deviation from the model is kept; at a given bandwidth
 * with a model fitted on the trace, its bytes on the wire instead
 * (wire_price_at). Relative what-ifs then scale that (relative_time). */
int ts__replay_reprice(ts_replay *r, const ts_replay_options *opt, ts_error *err)
{
    bool relative = opt->bandwidth_factor > 0 || opt->latency_factor > 0;
    bool absolute = opt->world || opt->bandwidth_gbps > 0 || opt->latency_us > 0;
    if (!absolute) return reprice_relative(r, opt, err);
    if ((!r->model || r->model_from_trace) && !(opt->bandwidth_gbps > 0)) {
        int rc = trace_calibration_error(r, err);
        if (rc) return rc;
    }
    if (!r->model && ts_coll_model_create(&r->model)) return ts__error(err, TS_ENOMEM, "replay: out of memory");
    /* What the calibration covers: its largest group and whether any fitted
     * group spans several servers, to say when a new world goes past it. */
    uint32_t largest = 0;
    bool multi_fit = false, one_server_fit = false;
    for (uint32_t i = 0; i < ts_coll_model_n_fits(r->model); i++) {
        ts_coll_fit_info fi;
        ts_coll_model_fit_info(r->model, i, &fi);
        if (fi.n_ranks > largest) largest = fi.n_ranks;
        int span = ts__coll_model_spans_servers(r->model, fi.n_ranks);
        multi_fit |= span == 1;
        one_server_fit |= span == 0;
    }
    uint32_t repriced = 0, unknown = 0, beyond = 0, wired = 0;
    int64_t fixed = 0;
    bool on_wire = opt->bandwidth_gbps > 0 && r->model_from_trace;
    wire_price *price = on_wire ? new_prices(r->n_colls) : NULL;
    if (on_wire && !price) return ts__error(err, TS_ENOMEM, "replay: out of memory");
    for (uint32_t i = 0; i < r->n_colls; i++) {
        ts_replay_coll *c = &r->colls[i];
        if (c->priced == TS_NONE32) continue;
        if (c->bytes < 0 || c->kind >= TS_COLL_COUNT) { unknown++; continue; }
        uint32_t n_new = opt->world ? opt->world : c->group;
        if (!(opt->bandwidth_gbps > 0) && n_new > largest && largest) beyond++;
        ts_coll_model_set_bandwidth(r->model, 0);
        ts_coll_model_set_latency(r->model, 0);
        int64_t old = ts_coll_model_predict_ns(r->model, c->kind, (uint64_t)c->bytes, c->group);
        int64_t a0 = on_wire ? ts_coll_model_predict_ns(r->model, c->kind, 0, c->group) : 0;
        ts_coll_model_set_bandwidth(r->model, opt->bandwidth_gbps);
        ts_coll_model_set_latency(r->model, opt->latency_us);
        int64_t now = ts_coll_model_predict_ns(r->model, c->kind, (uint64_t)c->bytes, n_new);
        if (on_wire) {
            /* A model fitted on the trace prices the bandwidth each collective
             * got while sharing its link; a given bandwidth is the link's: the
             * collectives share it, first as they did in the trace, then as
             * simulated (reshare_on_wire). Only the bytes share it: until 26 Nov
             * 23:40 the whole price, fixed cost included, was multiplied by the
             * collectives in flight as traced, and no more. */
            if (a0 > fixed) fixed = a0;
            price[i] = wire_price_at(opt, c, n_new);
            now = price_ns(&price[i], in_flight(r, c));
            wired++;
        }
        if (now < 0) { unknown++; continue; }
        int64_t self = r->sim.self_ns[c->priced];
        /* On the wire a collective is its bytes at the given rate: the
         * instance's own excess over the trace's fit is, like the fit's
         * fixed cost, time queued at the traced rate, so it is not kept. */
        double v = !on_wire && old > 0 && self > 0 ? (double)self * (double)now / (double)old : (double)now;
        self = v < 0x1p62 ? (int64_t)llround(v) : (int64_t)1 << 62;   /* past it: refused after the run */
        if (relative) {
            ts_coll_model_set_bandwidth(r->model, 0);
            ts_coll_model_set_latency(r->model, 0);
            self = relative_time(r, opt, c, n_new, self);
        }
        set_transfer(r, c, self);
        repriced++;
    }
    if (unknown)
        ts__replay_warn(r, "%u collective instances of unknown size kept their measured time", unknown);
    /* Past the calibration with only one-server sweeps to go by: the new
     * job likely runs on the network, which no sweep measured. */
    if (beyond && one_server_fit && !multi_fit)
        ts__replay_warn(r, "--world %u: every calibrated nccl-tests group ran on one server (the largest %u ranks); "
                           "a larger job likely spans several and is priced with one server's links, so likely "
                           "too fast (30-45%% on the A100 nccl-tests sweeps); give --nccl-tests with a "
                           "multi-server sweep or --bandwidth", opt->world, largest);
    else if (beyond)
        ts__replay_warn(r, "--world %u is larger than any calibrated group (%u ranks): priced with that group's bus "
                           "bandwidth and latency scaled by log2 of the size; a larger job on other links (more "
                           "servers, another network) differs", opt->world, largest);
    if (relative) warn_relative(r, opt, repriced, false);
    bool resimulated = false;
    int rc = wired ? reshare_on_wire(r, price, &resimulated, err) : TS_OK;
    ts__free(price, on_wire ? ((size_t)r->n_colls + 1) * sizeof *price : 0);
    if (rc) return rc;
    if (wired) warn_wire(r, opt, wired, fixed, resimulated);
    if (opt->world && cpu_collectives(r))
        ts__replay_warn(r, "--world %u on a CPU-only (gloo) job: prices the collectives for %u ranks; the compute "
                        "of more ranks sharing the same cores (and gloo's own CPU work) is outside this what-if, "
                        "so where the ranks share a machine it is likely too fast", opt->world, opt->world);
    if (!repriced)
        return ts__error(err, TS_EINVAL, "replay: no collective could be repriced (sizes unknown; a trace without them "
                                         "needs --gradients gradients.json for its gradient all-reduces)");
    return TS_OK;
}

/* --grad-precision: every gradient all-reduce of known size communicated at
 * grad_bytes_per_elem bytes an element instead of 4 (DDP's bf16/fp16
 * compress hooks; under autocast the gradients of fp32 master weights stay
 * fp32, so only a hook changes these bytes). Its time past the fixed cost
 * (a calibration log's, else none: the trace alone cannot split it) scales
 * with the bytes, and the hook's three passes over the bucket are added to
 * it, each priced as a cast (elements x 6 bytes in the cast fit's terms):
 * compress (bucket.to(P), then div_(world) in place at P) before, decompress
 * (copy_ back into the fp32 bucket) after. Collectives of unknown size keep
 * their time, and are said. */
int ts__replay_grad_precision(ts_replay *r, const ts_replay_options *opt, ts_error *err)
{
    uint32_t bpe = opt->grad_bytes_per_elem;
    if (bpe == 0 || bpe > 4) return ts__error(err, TS_EINVAL, "--grad-precision: %u bytes an element", bpe);
    int rc = TS_OK;
    bool unsized = false;
    for (uint32_t i = 0; i < r->n_colls; i++)
        unsized |= r->colls[i].kind == TS_COLL_ALL_REDUCE && r->colls[i].priced != TS_NONE32 && r->colls[i].bytes < 0;
    bool regrouped = opt->bucket_mb > 0 || opt->n_bucket_groups;   /* rebucketing sized them */
    bool resized = opt->world || opt->bandwidth_gbps > 0 || opt->latency_us > 0 || opt->bandwidth_factor > 0 ||
                   opt->latency_factor > 0;   /* reprice already read gradients.json */
    if (unsized && opt->gradients_json && !regrouped && !resized) rc = ts__replay_sizes_from_gradients(r, opt, err);
    if (rc == TS_OK && !r->model && opt->nccl_tests_log) rc = ts__replay_fit_model(r, opt, err);
    uint32_t n = 0, unknown = 0;
    double cast_sum = 0;
    for (uint32_t i = 0; rc == TS_OK && i < r->n_colls; i++) {
        const ts_replay_coll *c = &r->colls[i];
        if (c->kind != TS_COLL_ALL_REDUCE || c->priced == TS_NONE32) continue;
        if (c->bytes < 0) { unknown++; continue; }
        int64_t t = r->sim.self_ns[c->priced];
        int64_t a = r->model && !r->model_from_trace ? ts_coll_model_predict_ns(r->model, c->kind, 0, c->group) : 0;
        a = a < 0 ? 0 : a > t ? t : a;
        double elems = (double)c->bytes / 4.0;
        double cast = opt->cast_alpha_ns_per_byte * elems * 6.0 + opt->cast_beta_ns;
        double v = (double)a + (double)(t - a) * (double)bpe / 4.0 + 3.0 * cast;
        set_transfer(r, c, v < 0x1p62 ? (int64_t)llround(v) : (int64_t)1 << 62);
        cast_sum += 3.0 * cast;
        n++;
    }
    if (rc) return rc;
    if (n == 0)
        return ts__error(err, TS_ENODATA, "--grad-precision: no gradient all-reduce of known size in the trace%s",
                         opt->gradients_json ? "" : " (give --gradients gradients.json: the trace lacks their sizes)");
    ts__replay_warn(r, "--grad-precision: %u gradient all-reduces at %u bytes an element (time past a fixed cost of "
                    "%s scaled by %u/4), plus the compress hook's 3 passes (to, div_, copy_): %.1f us a bucket on "
                    "average (%.4g ns/byte + %.0f ns a pass)", n, bpe, r->model && !r->model_from_trace ? "the calibration log's" : "0",
                    bpe, cast_sum / n / 1e3, opt->cast_alpha_ns_per_byte, opt->cast_beta_ns);
    if (unknown) ts__replay_warn(r, "--grad-precision: %u all-reduces of unknown size kept their time", unknown);
    return TS_OK;
}
