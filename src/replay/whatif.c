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
#include "replay/replay.h"

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
        s->self_ns[n] = (int64_t)llround(scaled);
        hits++;
    }
    if (!hits)
        return ts__error(err, TS_EINVAL, "--scale '%s': no op of the trace matches '%s'%s", spec, glob,
                         mask == UINT32_MAX ? "" : " with that kind");
    return TS_OK;
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

/* Reprice every collective of known size: its measured transfer time times
 * predicted(new world, new bandwidth) / predicted(as measured), so the
 * instance's own deviation from the model is kept. */
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

int ts__replay_reprice(ts_replay *r, const ts_replay_options *opt, ts_error *err)
{
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
    uint32_t repriced = 0, unknown = 0, beyond = 0;
    for (uint32_t i = 0; i < r->n_colls; i++) {
        ts_replay_coll *c = &r->colls[i];
        if (c->priced == TS_NONE32) continue;
        if (c->bytes < 0 || c->kind >= TS_COLL_COUNT) { unknown++; continue; }
        uint32_t n_new = opt->world ? opt->world : c->group;
        if (!(opt->bandwidth_gbps > 0) && n_new > largest && largest) beyond++;
        ts_coll_model_set_bandwidth(r->model, 0);
        ts_coll_model_set_latency(r->model, 0);
        int64_t old = ts_coll_model_predict_ns(r->model, c->kind, (uint64_t)c->bytes, c->group);
        ts_coll_model_set_bandwidth(r->model, opt->bandwidth_gbps);
        ts_coll_model_set_latency(r->model, opt->latency_us);
        int64_t now = ts_coll_model_predict_ns(r->model, c->kind, (uint64_t)c->bytes, n_new);
        if (now < 0) { unknown++; continue; }
        int64_t *self = &r->sim.self_ns[c->priced];
        *self = old > 0 && *self > 0 ? (int64_t)llround((double)*self * (double)now / (double)old) : now;
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
    if (!repriced)
        return ts__error(err, TS_EINVAL, "replay: no collective could be repriced (sizes unknown)");
    return TS_OK;
}
