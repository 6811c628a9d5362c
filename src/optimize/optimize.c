/* optimize.c - ts_optimize_run: set up the passes' search space on a
 * job's graph, search it, re-evaluate the best strategy, prune the changes
 * that buy nothing, weigh what applying it costs (a bucket_cap_mb setting
 * nothing, a DDP comm hook its measured cost: price_form) and say what each
 * change buys.
 *
 * The trace's own grouping (as the bucket what-if infers it) is the start
 * and the baseline, priced by the same replay as every candidate, so the
 * predicted gain compares like with like. Each candidate is one replay of
 * the borrowed graph in an evaluation session (replay.h: gradients.json,
 * the cost model and the contention model's measured side computed once
 * per search, each reuse checked against its inputs), so its price is a
 * full ts_replay_run_graph's: O(V + E) per evaluation. A folded job given
 * with its representatives (options.representatives) is searched in two
 * stages: candidates priced on the representatives, the best top_k and the
 * trace's own re-priced on the folded graph (reprice), the plan then pruned
 * and its form priced there too, at a bounded count of folded replays.
 * Not for: the search itself (search.c) or files (plan.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "optimize/dpro_table.h"
#include "optimize/optimize_priv.h"


static int eval_vars(ts_optimize *o, const uint8_t *vars, int64_t *ns, ts_error *err)
{
    ts_replay_options ro = o->base;
    if (o->grads.n) ts__part_replay_edits(&o->grads, vars, o->pieces, o->units, &ro);
    if (o->opf.n_vars) {
        ro.n_retime = ts__opf_retimes(&o->opf, vars + ts__opt_opf_first(o));
        ro.retime_nodes = o->opf.rt_nodes;
        ro.retime_ns = o->opf.rt_ns;
    }
    ts_replay *r;
    int rc = ts__replay_run_session(o->eval_g, &ro, o->eval_session, &r, err);
    if (rc) return rc;
    *ns = ts_replay_predicted_iteration_ns(r);
    ts_replay_destroy(r);
    return TS_OK;
}

/* Whether vars' buckets need ddp_hook.py: a gradient cut, or a grouping
 * no bucket_cap_mb gives (DDP's own assignment at that cap); not the
 * trace's own buckets. */
static bool needs_hook(const ts_optimize *o, const uint8_t *vars)
{
    uint32_t nt = ts__tf_n_vars(&o->grads);
    bool cut = false;
    if (!o->grads.n || !memcmp(vars, o->init, ts__opt_opf_first(o))) return false;
    for (uint32_t p = 0; p < o->grads.n_part; p++) cut |= vars[nt + p] != 0;
    return cut || ts__tf_ddp_cap_mb(&o->grads, vars) < 0;
}

/* How many all-reduces vars' buckets and pieces make (o's pieces and
 * units are its scratch arrays: pieces holds vars' afterwards). */
static uint32_t n_groups(const ts_optimize *o, const uint8_t *vars)
{
    ts_optimize *m = (ts_optimize *)o;
    ts__part_pieces(&m->grads, m->grads.n_part ? vars + ts__tf_n_vars(&m->grads) : NULL, m->pieces);
    return ts__tf_groups(&m->grads, vars, m->pieces, m->units);
}

/* What applying vars costs a step: nothing for the trace's own buckets or a
 * grouping a bucket_cap_mb gives; the hook's cost for any other grouping or
 * a cut gradient (ddp_hook.py applies those). Op fusion is not priced here
 * (torch on CPU cannot apply it). */
static int64_t apply_cost(const ts_optimize *o, const uint8_t *vars)
{
    if ((!o->hook_cost_ns && !o->hook_group_ns) || !needs_hook(o, vars)) return 0;
    return o->hook_cost_ns + o->hook_group_ns * n_groups(o, vars);
}

/* A search's evaluation; the fastest strategy a cap gives (other than the
 * trace's buckets) is kept aside for price_form. */
static int eval_cb(void *ud, const uint8_t *vars, int64_t *ns, ts_error *err)
{
    ts_optimize *o = ud;
    int rc = eval_vars(o, vars, ns, err);
    if (rc == TS_OK && o->cap_best && *ns < o->cap_best_ns && memcmp(vars, o->init, ts__opt_opf_first(o)) &&
        !needs_hook(o, vars)) {
        o->cap_best_ns = *ns;
        memcpy(o->cap_best, vars, o->n_vars);
    }
    return rc;
}

/* The trace's grouping and measured iteration, from one bucket what-if. */
static int learn_baseline(ts_optimize *o, ts_error *err)
{
    ts_replay_options ro = o->base;
    ro.bucket_mb = 25;
    ro.n_bucket_groups = 0;
    ro.grad_pieces = NULL;
    ts_replay *r;
    int rc = ts__replay_run_session(o->g, &ro, o->session, &r, err);
    if (rc == TS_ENODATA && err) {   /* the bucket what-if's words are about --bucket-mb */
        char why[sizeof err->msg];
        const char *m = strstr(err->msg, ": ");
        snprintf(why, sizeof why, "%s", m ? m + 2 : err->msg);
        why[sizeof why - 64] = 0;   /* room for the prefix */
        ts__error_clear(err);
        return ts__error(err, rc, "optimize: nothing to optimize: %s", why);
    }
    if (rc) return rc;
    o->sum.measured_ns = ts_replay_measured_iteration_ns(r);
    if (!r->old_group_grads) rc = ts__error(err, TS_ENODATA, "optimize: no gradient all-reduce over every rank to regroup");
    else if ((o->old_grads = ts__malloc((size_t)r->n_old_groups * sizeof *o->old_grads))) {
        memcpy(o->old_grads, r->old_group_grads, (size_t)r->n_old_groups * sizeof *o->old_grads);
        o->n_old = r->n_old_groups;
    } else rc = ts__error(err, TS_ENOMEM, "optimize: out of memory");
    ts_replay_destroy(r);
    return rc;
}

/* The measured iteration when no bucket what-if runs (op fusion alone). */
static int learn_measured(ts_optimize *o, ts_error *err)
{
    ts_replay *r;
    int rc = ts_replay_run_graph(o->g, &o->base, &r, err);
    if (rc) return rc;
    o->sum.measured_ns = ts_replay_measured_iteration_ns(r);
    ts_replay_destroy(r);
    return TS_OK;
}

static int setup_space(ts_optimize *o, const ts_optimize_options *opt, ts_error *err)
{
    uint32_t nt = ts__tf_n_vars(&o->grads), max_pieces = opt->max_pieces ? opt->max_pieces : 8;
    if ((o->passes & TS_PASS_PARTITION) &&
        ts__part_candidates(&o->grads, opt->n_partition ? opt->n_partition : 8, max_pieces))
        return ts__error(err, TS_ENOMEM, "optimize: out of memory");
    uint32_t np = o->grads.n_part, first_opf = nt + np;
    o->n_vars = first_opf + o->opf.n_vars;
    o->min = ts__calloc((size_t)o->n_vars + 1, 1);
    o->max = ts__malloc((size_t)o->n_vars + 1);
    o->init = ts__calloc((size_t)o->n_vars + 1, 1);
    o->pieces = ts__malloc((size_t)o->grads.n * sizeof *o->pieces + 1);
    o->cap_units = o->grads.n * (max_pieces > 1 ? max_pieces : 1) + 1;
    o->units = ts__malloc((size_t)o->cap_units * sizeof *o->units);
    if (!o->min || !o->max || !o->init || !o->pieces || !o->units)
        return ts__error(err, TS_ENOMEM, "optimize: out of memory");
    ts__tf_init(&o->grads, o->old_grads, o->n_old, o->init);
    bool tf = o->passes & TS_PASS_TENSOR_FUSION;
    for (uint32_t i = 0; i < nt; i++) {   /* without the pass the trace's boundaries stay: min = max */
        o->min[i] = tf ? 0 : o->init[i];
        o->max[i] = tf ? 1 : o->init[i];
    }
    if (np) memcpy(o->max + nt, o->grads.part_max, np);   /* no candidates: no array (memcpy from NULL is undefined) */
    memset(o->max + first_opf, 1, o->opf.n_vars);   /* op fusion: 1 = apart (the trace), 0 = fused */
    memset(o->init + first_opf, 1, o->opf.n_vars);
    return TS_OK;
}

static int add_change(ts_optimize *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add_change(ts_optimize *o, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (ts__grow((void **)&o->changes, &o->cap_changes, sizeof *o->changes, (size_t)o->n_changes + 1)) return TS_ENOMEM;
    if (!(o->changes[o->n_changes] = ts__strdup(line))) return TS_ENOMEM;
    o->n_changes++;
    return TS_OK;
}

/* One var's change in words. */
static void describe(const ts_optimize *o, uint32_t v, char *buf, size_t n)
{
    uint8_t val = o->best[v];
    uint32_t nt = ts__tf_n_vars(&o->grads);
    if (v < nt) {
        snprintf(buf, n, "%s '%s' | '%s'", val ? "cut the bucket between" : "fuse into one bucket",
                 o->grads.name[v], o->grads.name[v + 1]);
        return;
    }
    if (v >= ts__opt_opf_first(o)) {
        uint32_t i = o->opf.var_rep[v - ts__opt_opf_first(o)];
        snprintf(buf, n, "fuse '%s' into the kernel of the '%s' before it", ts__graph_node_name(o->g, o->opf.inst_b[i]),
                 ts__graph_node_name(o->g, o->opf.inst_a[i]));
        return;
    }
    uint32_t gi = o->grads.part_grad[v - nt];
    snprintf(buf, n, "all-reduce '%s' (%.2f MiB) in %u pieces", o->grads.name[gi],
             (double)o->grads.bytes[gi] / 1048576.0, 1u << val);
}

/* Record a dropped change: what it was and the plan's price without it
 * against with it (<= 0: it bought nothing). */
static int note_pruned(ts_optimize *o, uint32_t v, int64_t delta_ns)
{
    char what[400], line[512];
    describe(o, v, what, sizeof what);
    snprintf(line, sizeof line, "%s (the plan without it: %+.3f ms%s)", what, (double)delta_ns / 1e6,
             o->rep ? ", folded" : "");
    if (ts__grow((void **)&o->pruned, &o->cap_pruned, sizeof *o->pruned, (size_t)o->n_pruned + 1)) return TS_ENOMEM;
    if (!(o->pruned[o->n_pruned] = ts__strdup(line))) return TS_ENOMEM;
    o->n_pruned++;
    return TS_OK;
}

/* Drop the changes that buy nothing, greedily: the plan priced without
 * each changed var in turn (the n vars of order, or every var by index when
 * order is NULL), at most max pricings (a plan of hundreds of changes stays
 * cheap); where it is no slower, that change goes. Replay prices alone:
 * what applying the plan costs is weighed after (price_form). The plan
 * stays one that was priced: best_ns is the last accepted pricing. */
static int prune(ts_optimize *o, uint8_t *tmp, const uint32_t *order, uint32_t n, uint32_t max, ts_error *err)
{
    uint32_t tried = 0;
    for (uint32_t k = 0; k < n && tried < max; k++) {
        uint32_t v = order ? order[k] : k;
        if (o->best[v] == o->init[v]) continue;
        memcpy(tmp, o->best, o->n_vars);
        tmp[v] = o->init[v];
        int64_t ns;
        int rc = eval_vars(o, tmp, &ns, err);
        if (rc) return rc;
        o->n_attrib_evals++;
        o->sum.n_prune_evals++;
        tried++;
        if (ns > o->sum.best_ns) continue;
        if (note_pruned(o, v, ns - o->sum.best_ns)) return ts__error(err, TS_ENOMEM, "optimize: out of memory");
        o->best[v] = o->init[v];
        o->sum.best_ns = ns;
    }
    return TS_OK;
}

/* Where eval_vars prices: price_at points it at g and session and returns
 * where it priced before (to put back with price_at); on_reps points it at
 * the representatives in two stages (else leaves it). */
typedef struct pricing { const ts_graph *g; ts_replay_session *s; } pricing;
static pricing price_at(ts_optimize *o, const ts_graph *g, ts_replay_session *s)
{
    pricing was = {o->eval_g, o->eval_session};
    o->eval_g = g;
    o->eval_session = s;
    return was;
}
static pricing on_reps(ts_optimize *o)
{
    return o->rep ? price_at(o, o->rep, o->rep_session) : price_at(o, o->eval_g, o->eval_session);
}

typedef struct ranked { int64_t ns; uint32_t v; } ranked;
static int by_price(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    return x->ns != y->ns ? (x->ns < y->ns ? -1 : 1) : (x->v > y->v) - (x->v < y->v);
}

/* Two stages: the plan's changes (the first 64) ranked by the
 * representatives' price of the plan without each, least first (the
 * likeliest to buy nothing), then pruned by the folded replay, at most
 * prune_max folded pricings. Leaves eval_vars pricing folded. */
static int prune_folded(ts_optimize *o, uint8_t *tmp, ts_error *err)
{
    ranked *rk = ts__malloc(64 * sizeof *rk);
    uint32_t *order = ts__malloc(64 * sizeof *order), n = 0;
    int rc = rk && order ? TS_OK : ts__error(err, TS_ENOMEM, "optimize: out of memory");
    pricing was = on_reps(o);
    for (uint32_t v = 0; v < o->n_vars && n < 64 && rc == TS_OK; v++) {
        if (o->best[v] == o->init[v]) continue;
        memcpy(tmp, o->best, o->n_vars);
        tmp[v] = o->init[v];
        rc = eval_vars(o, tmp, &rk[n].ns, err);
        rk[n++].v = v;
        o->n_attrib_evals++;
    }
    price_at(o, was.g, was.s);
    if (rc == TS_OK) {
        qsort(rk, n, sizeof *rk, by_price);
        for (uint32_t i = 0; i < n; i++) order[i] = rk[i].v;
        rc = prune(o, tmp, order, n, o->prune_max, err);
    }
    ts__free(rk, 64 * sizeof *rk);
    ts__free(order, 64 * sizeof *order);
    return rc;
}

/* The groupings a bucket_cap_mb gives (o->caps) priced where the search
 * priced (two stages: the representatives) into cap_best: with the plan's
 * op fusion, every one (with_plan_ops); else as proposed (the ops as the
 * trace ran them), those the search did not price. */
static int price_caps(ts_optimize *o, bool with_plan_ops, ts_error *err)
{
    uint32_t first_opf = ts__opt_opf_first(o);
    uint8_t *v = ts__malloc((size_t)o->n_vars + 1);
    int rc = v ? TS_OK : ts__error(err, TS_ENOMEM, "optimize: out of memory");
    pricing was = on_reps(o);
    for (uint32_t i = 0; i < o->n_caps && rc == TS_OK; i++) {
        if (!with_plan_ops && o->cap_proposed[i]) continue;
        memcpy(v, with_plan_ops ? o->best : o->init, o->n_vars);
        memcpy(v, o->caps + (size_t)i * o->n_vars, first_opf);
        int64_t ns;
        rc = eval_vars(o, v, &ns, err);
        o->n_attrib_evals++;
        o->sum.n_cap_evals++;
        if (rc == TS_OK && ns < o->cap_best_ns) {
            o->cap_best_ns = ns;
            memcpy(o->cap_best, v, o->n_vars);
        }
    }
    price_at(o, was.g, was.s);
    ts__free(v, (size_t)o->n_vars + 1);
    return rc;
}

/* After a search whose budget held only some of the cap groupings as
 * proposals: the rest priced beside it (outside the budget), so that the
 * plan is never predicted slower than the best of them. One stage: that
 * best, if faster than the search's, becomes the search's result
 * (sum.outpriced_ns says so); two stages: reprice weighs it folded. */
static int complete_caps(ts_optimize *o, ts_error *err)
{
    if (!o->n_proposals || o->n_proposals == o->n_caps) return TS_OK;
    int rc = price_caps(o, false, err);
    if (rc || o->rep || o->cap_best_ns >= o->oc.best_ns) return rc;
    o->sum.outpriced_ns = o->oc.best_ns;
    o->oc.best_ns = o->cap_best_ns;
    memcpy(o->oc.best, o->cap_best, o->n_vars);
    return TS_OK;
}

/* What applying the plan costs, priced: a bucket_cap_mb setting nothing, a
 * hook hook_cost_ns a step. The plan stands only if, with that cost, it is
 * faster than the trace's own strategy (nothing to apply) and than the
 * fastest strategy a cap gives (the search's proposals and the rest priced
 * after it, or without proposals every cap grouping priced here with the
 * plan's op fusion); else the faster of those two is the plan and the
 * declined one is said (sum.declined_*). A plan without a hook is already
 * no slower than that cap grouping (complete_caps, reprice). Decided on
 * predicted prices alone (two stages: folded ones). */
static int price_form(ts_optimize *o, ts_error *err)
{
    int64_t cost = apply_cost(o, o->best), cap_ns = INT64_MAX;
    o->sum.hook_cost_ns = o->hook_cost_ns;
    o->sum.hook_group_ns = o->hook_group_ns;
    o->sum.apply_cost_ns = cost;
    if (!cost || o->sum.best_ns >= o->sum.baseline_ns) return TS_OK;   /* no hook, or no change anyway */
    if (!o->n_proposals || o->opf.n_vars) {
        int rc = price_caps(o, true, err);
        if (rc) return rc;
    }
    if (o->cap_best_ns < INT64_MAX) {
        int rc = eval_vars(o, o->cap_best, &cap_ns, err);   /* afresh (two stages: folded) */
        if (rc) return rc;
        o->n_attrib_evals++;
    }
    if (o->sum.best_ns + cost < o->sum.baseline_ns && o->sum.best_ns + cost < cap_ns) return TS_OK;
    o->sum.declined_ns = o->sum.baseline_ns - o->sum.best_ns;
    o->sum.declined_best_ns = o->sum.best_ns;
    o->sum.declined_cost_ns = cost;
    o->sum.declined_buckets = n_groups(o, o->best);
    o->sum.apply_cost_ns = 0;
    if (cap_ns < o->sum.baseline_ns) {
        memcpy(o->best, o->cap_best, o->n_vars);
        o->sum.best_ns = cap_ns;
    } else {
        memcpy(o->best, o->init, o->n_vars);
        o->sum.best_ns = o->sum.baseline_ns;
    }
    return TS_OK;
}

/* A plan that is the trace's own strategy, in words: what to keep. */
static int say_no_change(ts_optimize *o)
{
    const char *ops = o->opf.n_vars ? " and the ops unfused" : "";
    const char *why = "nothing predicted faster than the trace as it ran";
    if (!o->grads.n) return add_change(o, "no change: keep the ops unfused: %s", why);
    if (o->sum.declined_ns > 0 &&
        add_change(o, "no change: best predicted gain %.3f ms (%.2f%%) below the cost of applying it, %.3f ms a step "
                   "(its %u buckets need ddp_hook.py, which no bucket_cap_mb replaces; --hook-cost-ms)",
                   (double)o->sum.declined_ns / 1e6, 100.0 * (double)o->sum.declined_ns / (double)o->sum.baseline_ns,
                   (double)o->sum.declined_cost_ns / 1e6, o->sum.declined_buckets))
        return TS_ENOMEM;
    if (o->sum.declined_ns > 0) why = "nothing predicted faster, net of what applying it costs";
    if (o->sum.ddp_default)
        return add_change(o, "no change: keep DDP's default (bucket_cap_mb=%d, %u buckets)%s: %s", TS_DDP_DEFAULT_CAP_MB,
                          o->sum.n_old_buckets, ops, why);
    if (o->sum.ddp_bucket_cap_mb >= 0)
        return add_change(o, "no change: keep the traced buckets (bucket_cap_mb=%g gives them, %u buckets)%s: %s",
                          o->sum.ddp_bucket_cap_mb, o->sum.n_old_buckets, ops, why);
    return add_change(o, "no change: keep the trace's %u buckets as they ran%s: %s", o->sum.n_old_buckets, ops, why);
}

/* A search's plan no faster than the trace is the trace's own strategy
 * (the prediction is deterministic to the ns: any positive gain is one the
 * model sees); no_change says the plan changes nothing, and then the DDP
 * setting named is the one that gives the trace's buckets (25 MB first). */
static void settle(ts_optimize *o, bool sample)
{
    if (!sample && o->sum.best_ns >= o->sum.baseline_ns) {
        memcpy(o->best, o->init, o->n_vars);
        o->sum.best_ns = o->sum.baseline_ns;
    }
    o->sum.no_change = memcmp(o->best, o->init, o->n_vars) == 0;
    o->same_buckets = memcmp(o->best, o->init, ts__opt_opf_first(o)) == 0;
    if (o->sum.no_change) o->sum.best_ns = o->sum.baseline_ns;
}

/* The DDP bucket_cap_mb that gives the plan's buckets (-1: none does); for
 * the trace's own buckets DDP's default is named where it gives them. */
static void ddp_setting(ts_optimize *o)
{
    bool cut = false;
    for (uint32_t i = 0; i < o->grads.n; i++) cut = cut || o->pieces[i] > 1;
    o->sum.ddp_default = !cut && o->same_buckets &&
                         ts__tf_is_ddp_cap(&o->grads, o->best, TS_DDP_DEFAULT_CAP_MB * 1048576ll);
    o->sum.ddp_bucket_cap_mb = o->sum.ddp_default ? TS_DDP_DEFAULT_CAP_MB : cut ? -1 : ts__tf_ddp_cap_mb(&o->grads, o->best);
}

/* The setting to make, with the whole gain, then each changed var with what
 * it buys: the plan priced once more without that one change. */
static int explain(ts_optimize *o, uint8_t *tmp, ts_error *err)
{
    int64_t ref = o->sum.best_ns;   /* priced where eval_vars prices (two stages: the representatives) */
    const char *where = o->rep ? ", on the representatives" : "";
    double delta_ms = (double)(o->sum.best_ns - o->sum.baseline_ns) / 1e6;   /* < 0: the plan is faster */
    int rc = TS_OK;
    if (o->sum.no_change) return say_no_change(o) ? ts__error(err, TS_ENOMEM, "optimize: out of memory") : TS_OK;
    if (o->rep && (rc = eval_vars(o, o->best, &ref, err))) return rc;
    o->n_attrib_evals += o->rep != NULL;
    if (o->sum.n_fused)
        rc = add_change(o, "fuse %u pairs of %s into kernels (cluster_mapping.txt; %s)%s: %+.3f ms per iteration",
                        o->sum.n_fused, o->xla.n ? "XLA candidate ops" : "pointwise ops", o->opf_rule,
                        o->grads.n && !o->same_buckets ? ", with the buckets below" : "", delta_ms);
    if (!o->grads.n || rc) {
        /* op fusion alone: no bucket setting to make */
    } else if (o->same_buckets)   /* op fusion with the trace's buckets: keep them */
        rc = add_change(o, "keep the trace's %u buckets%s", o->sum.n_old_buckets,
                        o->sum.ddp_default ? " (DDP's default, bucket_cap_mb=25)" : "");
    else if (o->sum.ddp_bucket_cap_mb >= 0)
        rc = add_change(o, "set DDP bucket_cap_mb=%g (%u buckets, was %u): %+.3f ms per iteration",
                        o->sum.ddp_bucket_cap_mb, o->sum.n_new_buckets, o->sum.n_old_buckets, delta_ms);
    else if (!o->sum.apply_cost_ns)
        rc = add_change(o, "register ddp_hook.py (%u buckets, was %u; no bucket_cap_mb gives them): %+.3f ms per iteration",
                        o->sum.n_new_buckets, o->sum.n_old_buckets, delta_ms);
    else
        rc = add_change(o, "register ddp_hook.py (%u buckets, was %u; no bucket_cap_mb gives them): %+.3f ms per iteration, "
                        "%+.3f ms net of the hook's cost (%.3f ms a step, --hook-cost-ms)", o->sum.n_new_buckets,
                        o->sum.n_old_buckets, delta_ms, delta_ms + (double)o->sum.apply_cost_ns / 1e6,
                        (double)o->sum.apply_cost_ns / 1e6);
    if (rc == TS_OK && o->sum.declined_ns > 0)
        rc = add_change(o, "  (a plan of %u buckets needing ddp_hook.py was predicted %.3f ms faster than the trace, "
                        "less than this one net of the hook's cost, %.3f ms a step: not taken)", o->sum.declined_buckets,
                        (double)o->sum.declined_ns / 1e6, (double)o->sum.declined_cost_ns / 1e6);
    if (rc == TS_OK && o->sum.outpriced_ns > 0)
        rc = add_change(o, "  (the search's best, %.3f ms, was slower than this grouping a cap gives, priced after the search: "
                        "%u of the %u cap groupings were proposed to it, --budget)", (double)o->sum.outpriced_ns / 1e6,
                        o->n_proposals, o->n_caps);
    uint32_t shown = 0, more = 0;
    for (uint32_t v = 0; v < o->n_vars && rc == TS_OK; v++) {
        if (o->best[v] == o->init[v]) continue;
        if (shown == 16) { more++; continue; }
        memcpy(tmp, o->best, o->n_vars);
        tmp[v] = o->init[v];
        int64_t ns;
        rc = eval_vars(o, tmp, &ns, err);
        o->n_attrib_evals++;
        char what[400];
        describe(o, v, what, sizeof what);
        if (rc == TS_OK) rc = add_change(o, "  %s: %+.3f ms (the plan without it: %+.3f ms%s)", what,
                                         (double)(ref - ns) / 1e6, (double)(ns - ref) / 1e6, where);
        shown++;
    }
    if (rc == TS_OK && more) rc = add_change(o, "  ... and %u more changes (plan.json lists every edit)", more);
    if (rc == TS_OK && o->n_pruned)
        rc = add_change(o, "pruned %u change%s of the search's best that bought nothing (the plan without each no slower%s):",
                        o->n_pruned, o->n_pruned == 1 ? "" : "s", o->rep ? " by the folded replay" : "");
    for (uint32_t i = 0; i < o->n_pruned && i < 16 && rc == TS_OK; i++) rc = add_change(o, "  %s", o->pruned[i]);
    if (rc == TS_OK && o->n_pruned > 16) rc = add_change(o, "  ... and %u more (plan.json lists them)", o->n_pruned - 16);
    if (rc == TS_ENOMEM) ts__error(err, rc, "optimize: out of memory");
    return rc;
}

static int check_options(const ts_optimize_options *opt, ts_error *err)
{
    if (!opt || opt->size < offsetof(ts_optimize_options, passes) + sizeof opt->passes)
        return ts__error(err, TS_EINVAL, "optimize: options.size is not set");
    unsigned passes = opt->passes ? opt->passes : TS_PASS_TENSOR_FUSION;
    if (!opt->replay || (!opt->replay->gradients_json && (passes & (TS_PASS_TENSOR_FUSION | TS_PASS_PARTITION))))
        return ts__error(err, TS_EINVAL, "optimize: the gradients' sizes are needed (--gradients gradients.json)");
    if (opt->passes & ~(unsigned)(TS_PASS_TENSOR_FUSION | TS_PASS_PARTITION | TS_PASS_OP_FUSION))
        return ts__error(err, TS_EINVAL, "optimize: unknown pass bits 0x%x", opt->passes);
    if (opt->max_pieces > 64) return ts__error(err, TS_EINVAL, "optimize: at most 64 pieces per gradient");
    bool opf_opts = opt->size >= offsetof(ts_optimize_options, simulate) + sizeof opt->simulate &&
                    (opt->xla_candidates || opt->op_table || opt->simulate);
    if (opf_opts && !(passes & TS_PASS_OP_FUSION))
        return ts__error(err, TS_EINVAL, "optimize: --xla-candidates, --op-table and --simulate are for --passes op-fusion");
    bool from_opfs = opt->size >= offsetof(ts_optimize_options, from_opfs) + sizeof opt->from_opfs && opt->from_opfs;
    if (from_opfs && passes != TS_PASS_TENSOR_FUSION)
        return ts__error(err, TS_EINVAL, "optimize: --from-opfs derives a tensor fusion: --passes tensor-fusion only");
    if (from_opfs && opt->layer_num_limit)
        return ts__error(err, TS_EINVAL, "optimize: --from-opfs and --layer-num-limit each choose the strategy: give one");
    return TS_OK;
}

/* Op-fusion candidates: the PyTorch pointwise rule, or an XLA candidate
 * list priced by dPRO's --simulate rule or the model fitted on its tables. */
static int setup_opf(ts_optimize *o, const ts_optimize_options *opt, ts_error *err)
{
    ts_opf_cfg cfg = {.rule = opt->simulate ? TS_OPF_SIMULATE : TS_OPF_FLOOR, .table_name = opt->op_table};
    o->opf_rule = opt->simulate ? "dPRO's --simulate estimate" : opt->op_table ? "fixed costs from the model fitted on dPRO's timing tables"
                                                                                : "each fused op sheds its floor, dPRO-style estimate";
    int rc = TS_OK;
    if (opt->xla_candidates) {
        if (!opt->simulate && !opt->op_table)
            return ts__error(err, TS_EINVAL, "optimize: --xla-candidates needs the fused time's source: "
                                             "--op-table DIR (dPRO's timing tables) or --simulate");
        if ((rc = ts__xla_load(&o->xla, opt->xla_candidates, err)) || (rc = ts__xla_check(&o->xla, o->g, err))) return rc;
        cfg.xla = &o->xla;
    }
    if (opt->op_table && !opt->simulate) {
        ts_dpt t;
        if ((rc = ts__dpt_load(&t, opt->op_table, err))) return rc;
        uint32_t rows = 0;
        for (uint32_t r = 0; r < t.n_rows; r++) rows += t.rows[r].dtype == (opt->op_table_dtype & 1);
        if (rows < 2)
            rc = ts__error(err, TS_EFORMAT, "%s: %u distinct %s rows; the model of an op's fixed cost needs two batch sizes",
                           opt->op_table, rows, opt->op_table_dtype ? "fp16" : "fp32");
        if (rc == TS_OK && ts__dpt_fit(&t, (int)(opt->op_table_dtype & 1), 0, &o->table))
            rc = ts__error(err, TS_ENOMEM, "optimize: out of memory");
        ts__dpt_free(&t);
        if (rc) return rc;
        cfg.rule = TS_OPF_TABLE;
        cfg.table = &o->table;
    }
    return ts__opf_find(&o->opf, o->g, &cfg, err);
}

/* Every grouping a whole-KiB bucket_cap_mb gives (up to 64) but the
 * trace's, as strategies; with the tensor-fusion pass and a search, the
 * proposals: all of them, or when they are more than half an evaluation
 * budget, that many taken evenly (the walk keeps the other half). */
static int setup_caps(ts_optimize *o, const ts_optimize_options *opt, ts_error *err)
{
    uint32_t nt = ts__tf_n_vars(&o->grads), first_opf = ts__opt_opf_first(o);
    uint8_t *gv = ts__malloc((size_t)TS_OPT_MAX_CAPS * nt + 1);
    o->caps = ts__malloc((size_t)TS_OPT_MAX_CAPS * o->n_vars + 1);
    o->cap_best = ts__malloc((size_t)o->n_vars + 1);
    if (!gv || !o->caps || !o->cap_best) {
        ts__free(gv, (size_t)TS_OPT_MAX_CAPS * nt + 1);
        return ts__error(err, TS_ENOMEM, "optimize: out of memory");
    }
    uint32_t k = ts__tf_cap_groupings(&o->grads, gv, TS_OPT_MAX_CAPS);
    for (uint32_t i = 0; i < k; i++) {
        uint8_t *v = o->caps + (size_t)o->n_caps * o->n_vars;
        memcpy(v, o->init, o->n_vars);
        memcpy(v, gv + (size_t)i * nt, nt);
        memset(v + nt, 0, first_opf - nt);   /* no gradient cut */
        if (memcmp(v, o->init, first_opf)) o->n_caps++;   /* the trace's own: the baseline */
    }
    ts__free(gv, (size_t)TS_OPT_MAX_CAPS * nt + 1);
    bool search = !opt->layer_num_limit && !opt->from_opfs;
    if (opt->no_cap_proposals || !search || !(o->passes & TS_PASS_TENSOR_FUSION) || !o->n_caps) return TS_OK;
    uint64_t budget = opt->budget_evals ? opt->budget_evals : opt->budget_s > 0 ? 0 : 200;   /* run_search's default */
    o->n_proposals = budget && budget / 2 < o->n_caps ? (uint32_t)(budget / 2) : o->n_caps;
    if (!(o->proposals = ts__malloc((size_t)o->n_proposals * o->n_vars + 1)))
        return ts__error(err, TS_ENOMEM, "optimize: out of memory");
    for (uint32_t i = 0; i < o->n_proposals; i++) {
        uint32_t c = (uint32_t)((uint64_t)i * o->n_caps / o->n_proposals);
        memcpy(o->proposals + (size_t)i * o->n_vars, o->caps + (size_t)c * o->n_vars, o->n_vars);
        o->cap_proposed[c] = true;
    }
    return TS_OK;
}

static int run_search(ts_optimize *o, const ts_optimize_options *opt, ts_error *err)
{
    ts_opt_space sp = {o->n_vars, o->min, o->max, o->init, eval_cb, o, o->proposals, o->n_proposals};
    ts_opt_cfg cfg = {opt->search, opt->budget_evals, opt->budget_s, opt->seed,
                      opt->mcmc_beta > 0 ? opt->mcmc_beta : 10, opt->heat_k > 0 ? opt->heat_k : 1,
                      opt->heat_window ? opt->heat_window : 5, opt->progress, opt->progress_ud, o->top_k};
    if (!cfg.budget_evals && !(cfg.budget_s > 0)) cfg.budget_evals = 200;
    if (opt->layer_num_limit || opt->from_opfs) {   /* dPRO's layer-by-layer sample or from_opfs2tsfs:
                                                       the baseline and one strategy */
        memcpy(o->best, o->init, o->n_vars);
        if (opt->from_opfs) {
            uint32_t grouped;
            int rc = ts__opfs_to_tsfs(o->g, &o->grads, opt->from_opfs, o->best, &grouped, err);
            if (rc) return rc;
        } else {
            ts__tf_layers(&o->grads, opt->layer_num_limit, o->best);
        }
        sp.init = o->best;
        sp.n_proposals = 0;
        cfg.kind = TS_SEARCH_GREEDY;
        cfg.budget_evals = 1;
        cfg.budget_s = 0;
        int64_t ns;
        int rc = eval_vars(o, o->init, &ns, err);
        if (rc == TS_OK) rc = ts__opt_search(&sp, &cfg, &o->oc, err);
        if (rc == TS_OK) { o->oc.init_ns = ns; o->oc.n_evals++; }
        return rc;
    }
    return ts__opt_search(&sp, &cfg, &o->oc, err);
}

static int finish(ts_optimize *o, ts_search_kind sample, ts_error *err)
{
    memcpy(o->best, o->oc.best, o->n_vars);
    o->sum.baseline_ns = o->oc.init_ns;
    o->sum.n_evals = o->oc.n_evals;
    o->sum.search_s = o->oc.elapsed_s;
    o->sum.search = sample ? sample : o->oc.kind;
    o->sum.n_grads = o->grads.n;
    o->sum.n_old_buckets = o->n_old;
    o->sum.n_cap_groupings = o->n_caps;
    o->sum.n_cap_proposals = o->n_proposals;
    uint8_t *tmp = ts__malloc((size_t)o->n_vars + 1);
    if (!tmp) return ts__error(err, TS_ENOMEM, "optimize: out of memory");
    /* the plan is priced afresh, not taken from the search's cache (two
       stages: the re-pricing on the folded graph was that, and pruning and
       the form's price are folded too) */
    int rc = TS_OK;
    if (o->rep) o->sum.best_ns = o->oc.best_ns;
    else rc = eval_vars(o, o->best, &o->sum.best_ns, err);
    if (rc == TS_OK && !sample)   /* a layer sample is shown as asked */
        rc = o->rep ? prune_folded(o, tmp, err) : prune(o, tmp, NULL, o->n_vars, o->prune_max, err);
    if (rc == TS_OK && !sample) rc = price_form(o, err);
    on_reps(o);   /* what each change buys is said on the representatives */
    if (rc == TS_OK) {
        settle(o, sample != 0);
        o->sum.ddp_bucket_cap_mb = -1;
        if (o->grads.n) {
            o->sum.n_new_buckets = n_groups(o, o->best);
            ddp_setting(o);
        }
        o->sum.n_fusable = o->opf.n_vars;
        for (uint32_t v = 0; v < o->opf.n_vars; v++) o->sum.n_fused += o->best[ts__opt_opf_first(o) + v] == 0;
        rc = explain(o, tmp, err);
    }
    ts__free(tmp, (size_t)o->n_vars + 1);
    return rc;
}

/* Re-price v (the representatives priced it at rep_ns) on the folded
 * graph into the next st_* slot; the fastest so far is the chosen. */
static int reprice_one(ts_optimize *o, const uint8_t *v, int64_t rep_ns, ts_error *err)
{
    int rc = eval_vars(o, v, &o->st_full[o->n_st], err);
    o->st_rep[o->n_st] = rep_ns;
    if (rc == TS_OK && o->st_full[o->n_st] < o->st_full[o->st_chosen]) {
        o->st_chosen = (int32_t)o->n_st;
        memcpy(o->oc.best, v, o->n_vars);
    }
    o->n_st++;
    return rc;
}

/* Whether the search's top strategies hold v. */
static bool in_top(const ts_optimize *o, const uint8_t *v)
{
    for (uint32_t i = 0; i < o->oc.n_top; i++)
        if (!memcmp(o->oc.top + (size_t)i * o->n_vars, v, o->n_vars)) return true;
    return false;
}

/* The second stage: the trace's strategy, the search's top_k best (by
 * the representatives' price) and, with cap proposals, the fastest cap
 * grouping there where those lack it, re-priced by a replay of the folded
 * graph; the fastest there is the plan, the trace's own unless one is
 * faster. eval_vars prices folded afterwards (pruning, the form's price);
 * finish turns it back to the representatives to say what each change buys. */
static int reprice(ts_optimize *o, ts_error *err)
{
    uint32_t k = o->oc.n_top;
    o->st_rep = ts__malloc(((size_t)o->top_k + 2) * sizeof *o->st_rep);
    o->st_full = ts__malloc(((size_t)o->top_k + 2) * sizeof *o->st_full);
    if (!o->st_rep || !o->st_full) return ts__error(err, TS_ENOMEM, "optimize: out of memory");
    price_at(o, o->g, o->session);
    o->st_rep[0] = o->oc.init_ns;
    int rc = eval_vars(o, o->init, &o->st_full[0], err);
    o->n_st = 1;
    o->st_chosen = 0;
    o->st_cap = -1;
    for (uint32_t i = 0; i < k && rc == TS_OK; i++) {
        const uint8_t *v = o->oc.top + (size_t)i * o->n_vars;
        if (memcmp(v, o->init, o->n_vars)) rc = reprice_one(o, v, o->oc.top_ns[i], err);   /* the trace's own: priced first */
    }
    if (rc == TS_OK && o->n_proposals && o->cap_best_ns < INT64_MAX && !in_top(o, o->cap_best)) {
        o->st_cap = (int32_t)o->n_st;
        rc = reprice_one(o, o->cap_best, o->cap_best_ns, err);
    }
    if (o->st_chosen == 0) memcpy(o->oc.best, o->init, o->n_vars);
    o->oc.init_ns = o->st_full[0];
    o->oc.best_ns = o->st_full[o->st_chosen];
    o->sum.two_stage = true;
    o->sum.n_rep_ranks = ts_graph_n_ranks(o->rep);
    o->sum.n_repriced = o->n_st;
    o->sum.rep_err_min_pct = o->sum.rep_err_max_pct = 0;
    for (uint32_t i = 0; i < o->n_st; i++) {
        double e = 100.0 * (double)(o->st_rep[i] - o->st_full[i]) / (double)(o->st_full[i] ? o->st_full[i] : 1);
        if (i == 0 || e < o->sum.rep_err_min_pct) o->sum.rep_err_min_pct = e;
        if (i == 0 || e > o->sum.rep_err_max_pct) o->sum.rep_err_max_pct = e;
    }
    return rc;
}

/* Two stages when the caller gave a folded job's representatives and the
 * search is over buckets alone (an op-fusion var names nodes of g). */
static int setup_stages(ts_optimize *o, const ts_optimize_options *opt, ts_error *err)
{
    bool given = opt->size >= offsetof(ts_optimize_options, top_k) + sizeof opt->top_k && opt->representatives;
    if (!given || (o->passes & TS_PASS_OP_FUSION) || opt->layer_num_limit || opt->from_opfs) return TS_OK;
    o->rep = opt->representatives;
    o->top_k = opt->top_k ? opt->top_k : 3;
    o->prune_max = opt->prune_folded ? opt->prune_folded : 2;
    if (ts__replay_session_create(o->rep, &o->rep_session)) return ts__error(err, TS_ENOMEM, "optimize: out of memory");
    on_reps(o);
    return TS_OK;
}

int ts_optimize_run(const ts_graph *g, const ts_optimize_options *opt, ts_optimize **out, ts_error *err)
{
    *out = NULL;
    int rc = check_options(opt, err);
    if (rc) return rc;
    ts_optimize_options o_opt = {.size = sizeof o_opt};
    memcpy(&o_opt, opt, opt->size < sizeof o_opt ? opt->size : sizeof o_opt);
    ts_optimize *o = ts__calloc(1, sizeof *o);
    if (!o) return ts__error(err, TS_ENOMEM, "optimize: out of memory");
    o->g = o->eval_g = g;
    o->base = *opt->replay;
    o->base.size = sizeof o->base;
    o->passes = o_opt.passes ? o_opt.passes : TS_PASS_TENSOR_FUSION;
    if (ts__replay_session_create(g, &o->session)) { ts_optimize_destroy(o); return ts__error(err, TS_ENOMEM, "optimize: out of memory"); }
    o->eval_session = o->session;
    bool buckets = o->passes & (TS_PASS_TENSOR_FUSION | TS_PASS_PARTITION);
    if (buckets) rc = ts__opt_grads_load(opt->replay->gradients_json, &o->grads, err);
    if (rc == TS_OK && buckets && o->grads.n < 2)
        rc = ts__error(err, TS_ENODATA, "optimize: %s: one gradient, nothing to group", opt->replay->gradients_json);
    if (rc == TS_OK && (o->passes & TS_PASS_OP_FUSION)) rc = setup_opf(o, &o_opt, err);
    if (rc == TS_OK && (o->passes & TS_PASS_OP_FUSION) && !o->opf.n_vars && !buckets)
        rc = ts__error(err, TS_ENODATA, "optimize: nothing to optimize: no two pointwise ops run back to back");
    if (rc == TS_OK) rc = buckets ? learn_baseline(o, err) : learn_measured(o, err);
    if (rc == TS_OK) rc = setup_space(o, &o_opt, err);
    if (rc == TS_OK && !(o->best = ts__malloc((size_t)o->n_vars + 1))) rc = ts__error(err, TS_ENOMEM, "optimize: out of memory");
    o->prune_max = 64;
    bool dflt = o_opt.hook_cost_ms == 0, free = o_opt.hook_cost_ms < 0;
    o->hook_cost_ns = free ? 0 : (int64_t)llround((dflt ? TS_DDP_HOOK_COST_MS : o_opt.hook_cost_ms) * 1e6);
    o->hook_group_ns = free || (!dflt && !(o_opt.hook_group_ms > 0)) ? 0
                       : (int64_t)llround((dflt ? TS_DDP_HOOK_GROUP_MS : o_opt.hook_group_ms) * 1e6);
    o->cap_best_ns = INT64_MAX;
    if (rc == TS_OK && buckets) rc = setup_caps(o, &o_opt, err);
    if (rc == TS_OK) rc = setup_stages(o, &o_opt, err);
    uint64_t contended0 = o->eval_session->n_contended, rounds0 = o->eval_session->n_rounds;
    if (rc == TS_OK) rc = run_search(o, &o_opt, err);
    o->sum.n_contended = o->eval_session->n_contended - contended0;   /* the search's evaluations alone */
    o->sum.n_contention_sims = o->eval_session->n_rounds - rounds0;
    if (rc == TS_OK) rc = complete_caps(o, err);
    if (rc == TS_OK && o->rep) rc = reprice(o, err);
    if (rc == TS_OK)
        rc = finish(o, o_opt.from_opfs ? TS_SEARCH_FROM_OPFS : o_opt.layer_num_limit ? TS_SEARCH_LAYER_SAMPLE : 0, err);
    if (rc) { ts_optimize_destroy(o); return rc; }
    *out = o;
    return TS_OK;
}

void ts_optimize_destroy(ts_optimize *o)
{
    if (!o) return;
    ts__replay_session_destroy(o->session);
    ts__replay_session_destroy(o->rep_session);
    ts__free(o->st_rep, ((size_t)o->top_k + 2) * sizeof *o->st_rep);
    ts__free(o->st_full, ((size_t)o->top_k + 2) * sizeof *o->st_full);
    ts__opt_outcome_free(&o->oc, o->n_vars);
    for (uint32_t i = 0; i < o->n_changes; i++) ts__free(o->changes[i], strlen(o->changes[i]) + 1);
    ts__free(o->changes, (size_t)o->cap_changes * sizeof *o->changes);
    for (uint32_t i = 0; i < o->n_pruned; i++) ts__free(o->pruned[i], strlen(o->pruned[i]) + 1);
    ts__free(o->pruned, (size_t)o->cap_pruned * sizeof *o->pruned);
    if (o->cap_best) ts__free(o->cap_best, (size_t)o->n_vars + 1);
    if (o->caps) ts__free(o->caps, (size_t)TS_OPT_MAX_CAPS * o->n_vars + 1);
    if (o->proposals) ts__free(o->proposals, (size_t)o->n_proposals * o->n_vars + 1);
    ts__free(o->min, (size_t)o->n_vars + 1);
    ts__free(o->max, (size_t)o->n_vars + 1);
    ts__opf_free(&o->opf);
    ts__xla_free(&o->xla);
    ts__cost_model_free(&o->table);
    ts__free(o->init, (size_t)o->n_vars + 1);
    ts__free(o->best, (size_t)o->n_vars + 1);
    ts__free(o->pieces, (size_t)o->grads.n * sizeof *o->pieces + 1);
    ts__free(o->units, (size_t)o->cap_units * sizeof *o->units);
    ts__free(o->old_grads, (size_t)o->n_old * sizeof *o->old_grads);
    ts__opt_grads_free(&o->grads);
    ts__free(o, sizeof *o);
}

const char *ts_search_kind_name(ts_search_kind k)
{
    static const char *const n[] = {"auto", "mcmc", "anneal", "greedy", "exhaustive", "layer-sample", "from-opfs"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "?";
}

void ts_optimize_get_summary(const ts_optimize *o, ts_optimize_summary *out)
{
    *out = o->sum;
    out->n_pruned = o->n_pruned;
    out->gain_pct = out->baseline_ns ? 100.0 * (double)(out->baseline_ns - out->best_ns) / (double)out->baseline_ns : 0;
    out->evals_per_s = out->search_s > 0 ? (double)out->n_evals / out->search_s : 0.0;
}
uint32_t ts_optimize_n_changes(const ts_optimize *o) { return o->n_changes; }
const char *ts_optimize_change(const ts_optimize *o, uint32_t i) { return i < o->n_changes ? o->changes[i] : NULL; }

void ts_optimize_best_options(const ts_optimize *o, ts_replay_options *out)
{
    ts_optimize *m = (ts_optimize *)o;   /* the scratch arrays hold the best plan's edits after this */
    *out = o->base;
    if (o->grads.n) ts__part_replay_edits(&m->grads, m->best, m->pieces, m->units, out);
    if (o->opf.n_vars) {
        out->n_retime = ts__opf_retimes(&m->opf, m->best + ts__opt_opf_first(m));
        out->retime_nodes = m->opf.rt_nodes;
        out->retime_ns = m->opf.rt_ns;
    }
}
