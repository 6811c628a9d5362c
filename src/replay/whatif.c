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

int ts__replay_scale(ts_replay *r, const char *spec, ts_error *err)
{
    uint32_t mask = 0;
    double factor = 1.0;
    char glob[256];
    int rc = parse_scale(spec, &mask, glob, sizeof glob, &factor, err);
    if (rc) return rc;
    ts_sim *s = &r->sim;
    uint32_t hits = 0;
    for (uint32_t n = 0; n < s->n_nodes; n++) {
        if (!(mask & (1u << s->kind[n])) || fnmatch(glob, ts__replay_node_name(r, n), 0)) continue;
        ts__edit_retime(r, n, (int64_t)llround((double)s->self_ns[n] * factor));
        hits++;
    }
    if (!hits) ts__replay_warn(r, "--scale '%s' matched no node", spec);
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
int ts__replay_reprice(ts_replay *r, const ts_replay_options *opt, ts_error *err)
{
    if (!r->model && !(opt->bandwidth_gbps > 0))
        return ts__error(err, TS_ENODATA, "replay: no collective with a known size to calibrate a cost model "
                                          "from; give --nccl-tests LOG or --bandwidth");
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
        int64_t self = r->sim.self_ns[c->priced];
        ts__edit_reprice(r, i, old > 0 && self > 0 ? (int64_t)llround((double)self * (double)now / (double)old) : now);
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
        return ts__error(err, TS_ENODATA, "replay: no collective could be repriced (sizes unknown)");
    return TS_OK;
}
