/* optimize.c - optimizer benchmark (issue 22, "Speed"): candidate
 * evaluations per second of `trainscope optimize`'s search against a full
 * replay per candidate on the same graph, and against a replay that also
 * rebuilds the graph from the trace per candidate (what a Python replayer
 * such as dPRO's pays per candidate at least).
 *
 * Figures (one core; the search, the graph and the replays are single-
 * threaded), each replay the best of R runs:
 *   search       ts_optimize_run's MCMC, distinct strategies priced per
 *                second of the search (cache hits not counted), every one
 *                simulated (a replay in the search's evaluation session,
 *                replay.h; no candidate is decided by a bound);
 *   full replay  ts_replay_run_graph of one candidate on the graph built
 *                once: the trace's own grouping (its contention rounds
 *                settle after one), and DDP's buckets at 1 MB, a regrouped
 *                candidate like the search's (the ratios use this one);
 *   from trace   ts_replay_run of that candidate (graph build + replay).
 *   same candidates  N random groupings and partitions (the optimizer's
 *                forms) priced twice in one run: by a plain full replay
 *                each, and in one evaluation session (replay.h); user CPU
 *                per candidate both ways, their ratio, and how many prices
 *                were equal (all must be), with and without the calibration
 *                log (without it the cost model is fitted per replay).
 *   first change  for 40 random candidates and a child of each with one
 *                boundary flipped (an MCMC move), the share of the child's
 *                simulated nodes that start before the first node whose
 *                times differ: an upper bound on what re-simulating from a
 *                candidate's first change could skip (prefix_ceiling).
 *   condensation  for 20 random candidates replayed in full beside the
 *                trace's grouping, the graph nodes any candidate changes
 *                (a self time the contention model re-timed, comm nodes,
 *                an edge moved) and the runs of unchanged nodes per lane:
 *                an upper bound on how much smaller a candidate-invariant
 *                condensed graph could be; and how a candidate's change
 *                of the iteration differs between iterations (whether one
 *                iteration could stand for the others). With and without
 *                --no-contention (condensation_bound).
 * The targets (10,000 evaluations/s, 100x a full replay) are
 * printed beside. Then the per-op cost model (optimize/cost_model.c) fitted
 * on one trace with shapes (--cost-train, Kineto "Input Dims") and scored on
 * another (--cost-test): the median relative error of its predictions on the
 * held-out ops, against the shape-blind per-name median. Usage: build/bench/optimize [--trace DIR] [--gradients FILE]
 * [--trace-bucket-mb X] [--log LOG] [--evals N] [--repeat R] [--fold-dir DIR [--top-k K]]
 * (--fold-dir: only the search on DIR's rank files, folded, in two stages: on the
 * representatives, then the top K re-priced folded; folded_search;
 * --fold-compare N: then N random candidates priced by a full folded replay
 * and by the trace's two ranks alone, the representatives).
 * Not a test: nothing asserts a speed; a shared machine makes wall time noisy
 * (user CPU is printed too).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/core.h"
#include "optimize/cost_model.h"
#include "optimize/passes.h"
#include "replay/replay.h"
#include "optimize_dpro.h"
#include "trainscope/graph.h"
#include "trainscope/ingest.h"
#include "trainscope/optimize.h"
#include "trainscope/replay.h"

typedef struct bench_args {
    const char *trace, *gradients, *log, *cost_train, *cost_test, *fold_dir;
    double      trace_cap_mb;
    uint64_t    evals;
    int         repeat;
    uint32_t    fold_compare;   /* --fold-compare N: random candidates priced folded and on the representatives */
    uint32_t    top_k;          /* --top-k K: the folded search's re-priced candidates (0 = the default, 3) */
} bench_args;

static double user_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
}

/* The first field of /proc/loadavg ("?" where it cannot be read): wall
 * times on a shared machine mean little without it. */
static const char *loadavg(void)
{
    static char buf[32];
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f || fscanf(f, "%31s", buf) != 1) snprintf(buf, sizeof buf, "?");
    if (f) fclose(f);
    return buf;
}

static int parse(int argc, char **argv, bench_args *a)
{
    *a = (bench_args){"bench/data/optimize_transformer12/trace", "bench/data/optimize_transformer12/gradients.json",
                      "examples/workloads/results/gloo_allreduce_perf.log",
                      "../shared/data/kineto/trace_filter/sampled_rank-0.json.gz",
                      "../shared/data/kineto/trace_filter/sampled_rank-1.json.gz", NULL, 0.0001, 60, 3, 0, 0};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--trace")) a->trace = argv[i + 1];
        else if (!strcmp(argv[i], "--gradients")) a->gradients = argv[i + 1];
        else if (!strcmp(argv[i], "--log")) a->log = argv[i + 1];
        else if (!strcmp(argv[i], "--cost-train")) a->cost_train = argv[i + 1];
        else if (!strcmp(argv[i], "--cost-test")) a->cost_test = argv[i + 1];
        else if (!strcmp(argv[i], "--trace-bucket-mb")) a->trace_cap_mb = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--evals")) a->evals = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--repeat")) a->repeat = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--fold-dir")) a->fold_dir = argv[i + 1];
        else if (!strcmp(argv[i], "--top-k")) a->top_k = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--fold-compare")) a->fold_compare = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else { fprintf(stderr, "optimize bench: unknown option %s\n", argv[i]); return -1; }
    }
    return a->evals && a->repeat > 0 ? 0 : -1;
}

/* Best wall time of R replays of one candidate; from_trace rebuilds the graph each time. */
static int64_t best_replay(const ts_job *t, const ts_graph *g, const ts_replay_options *ro, int repeat,
                           bool from_trace, double *user)
{
    int64_t best = INT64_MAX;
    double u0 = user_s();
    for (int k = 0; k < repeat; k++) {
        ts_replay *r = NULL;
        ts_error err = {0};
        int64_t t0 = ts__now_ns();
        int rc = from_trace ? ts_replay_run(t, ro, &r, &err) : ts_replay_run_graph(g, ro, &r, &err);
        int64_t dt = ts__now_ns() - t0;
        if (rc) { fprintf(stderr, "optimize bench: %s\n", err.msg); return -1; }
        ts_replay_destroy(r);
        if (dt < best) best = dt;
    }
    *user = (user_s() - u0) / repeat;
    return best;
}

static int cmp_dbl(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int load_samples(const char *path, ts_op_samples *s)
{
    const char *paths[1] = {path};
    ts_job *t = NULL;
    ts_error err = {0};
    int rc = ts_job_load(paths, 1, NULL, &t, &err);
    if (rc == TS_OK) rc = ts__cost_samples(t, s, &err);
    if (rc) fprintf(stderr, "optimize bench: %s\n", err.msg);
    ts_job_destroy(t);
    return rc;
}

/* One random candidate in the forms eval_vars (optimize.c) hands the replay. */
static void random_plan(ts_opt_grads *gr, uint64_t *x, uint8_t *vars, uint32_t *pieces, uint32_t *units,
                        ts_replay_options *ro)
{
    uint32_t nt = ts__tf_n_vars(gr);
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t cut_pct = (uint32_t)(*x >> 57);   /* 0..127: few to many buckets */
    for (uint32_t i = 0; i < nt; i++) {
        *x = *x * 6364136223846793005ull + 1442695040888963407ull;
        vars[i] = (uint32_t)(*x >> 57) < cut_pct;
    }
    for (uint32_t j = 0; j < gr->n_part; j++) {
        *x = *x * 6364136223846793005ull + 1442695040888963407ull;
        vars[nt + j] = (uint8_t)((*x >> 60) < 5 ? (*x >> 33) % (gr->part_max[j] + 1u) : 0);
    }
    ts__part_replay_edits(gr, vars, pieces, units, ro);
}

/* The same n random candidates priced by full replays and in a session. */
static int same_candidates(const ts_graph *g, const bench_args *a, const char *log, uint32_t n)
{
    ts_opt_grads gr;
    ts_error err = {0};
    if (ts__opt_grads_load(a->gradients, &gr, &err) || ts__part_candidates(&gr, 8, 8)) {
        fprintf(stderr, "optimize bench: %s\n", err.msg);
        return -1;
    }
    uint8_t *vars = malloc(gr.n + gr.n_part + 1);
    uint32_t *pieces = malloc((gr.n + 1) * sizeof *pieces), *units = malloc((8 * gr.n + 1) * sizeof *units);
    int64_t *full = malloc((n + 1) * sizeof *full);
    ts_replay_session *se = NULL;
    int rc = vars && pieces && units && full && ts__replay_session_create(g, &se) == TS_OK ? 0 : -1;
    double u_full = 0, u_sess = 0;
    uint32_t equal = 0;
    for (int pass = 0; rc == 0 && pass < 2; pass++) {   /* 0: full replays, 1: the session */
        uint64_t x = 22;
        double u0 = user_s();
        for (uint32_t k = 0; k < n && rc == 0; k++) {
            ts_replay_options ro = {.size = sizeof ro, .gradients_json = a->gradients, .nccl_tests_log = log,
                                    .trace_bucket_mb = a->trace_cap_mb};
            random_plan(&gr, &x, vars, pieces, units, &ro);
            ts_replay *r = NULL;
            if ((pass ? ts__replay_run_session(g, &ro, se, &r, &err) : ts_replay_run_graph(g, &ro, &r, &err))) {
                fprintf(stderr, "optimize bench: %s\n", err.msg);
                rc = -1;
                break;
            }
            int64_t ns = ts_replay_predicted_iteration_ns(r);
            if (pass == 0) full[k] = ns;
            else equal += ns == full[k];
            ts_replay_destroy(r);
        }
        *(pass ? &u_sess : &u_full) = (user_s() - u0) / n;
    }
    if (rc == 0)
        printf("same %u random candidates, %s: full replay %.3f ms user each, in a session %.3f ms (%.2fx); "
               "prices equal: %u of %u\n", n, log ? "calibration log given" : "no calibration log", u_full * 1e3,
               u_sess * 1e3, u_sess > 0 ? u_full / u_sess : 0, equal, n);
    ts__replay_session_destroy(se);
    free(vars);
    free(pieces);
    free(units);
    free(full);
    ts__opt_grads_free(&gr);
    return rc == 0 && equal == n ? 0 : -1;
}

/* How much of a child candidate's simulation a re-simulation from its first
 * change could keep: parent = a random candidate, child = the parent with
 * one bucket boundary flipped (an MCMC move), both replayed in full. tau is
 * the earliest simulated start of any graph node (the trace's own rows,
 * which both share) whose start or end differs between the two; every node
 * of the child that starts before tau is counted as reusable (its own rows
 * are equal there by tau's definition; the child's added rows before tau
 * are counted too, so the share is an upper bound). The share bounds what
 * checkpointing the parent's final simulation could save on that
 * simulation; the contention rounds before it re-time ops from overlaps over
 * the whole iteration and are bounded the same way at best. */
static int prefix_ceiling(const ts_graph *g, const bench_args *a, uint32_t n)
{
    ts_opt_grads gr;
    ts_error err = {0};
    if (ts__opt_grads_load(a->gradients, &gr, &err) || ts__part_candidates(&gr, 8, 8)) {
        fprintf(stderr, "optimize bench: %s\n", err.msg);
        return -1;
    }
    uint32_t nt = ts__tf_n_vars(&gr), nv = nt + gr.n_part;
    uint8_t *vars = malloc(nv + 1);
    uint32_t *pieces = malloc((gr.n + 1) * sizeof *pieces), *units = malloc((8 * gr.n + 1) * sizeof *units);
    double *share = malloc((n + 1) * sizeof *share);
    int rc = vars && pieces && units && share ? 0 : -1;
    uint64_t x = 77;
    uint32_t done = 0;
    for (uint32_t k = 0; rc == 0 && k < n; k++) {
        ts_replay *r[2] = {NULL, NULL};
        ts_replay_options ro[2];
        for (int c = 0; c < 2 && rc == 0; c++) {
            ro[c] = (ts_replay_options){.size = sizeof ro[c], .gradients_json = a->gradients, .nccl_tests_log = a->log,
                                        .trace_bucket_mb = a->trace_cap_mb};
            if (c == 0) random_plan(&gr, &x, vars, pieces, units, &ro[c]);
            else {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                vars[(x >> 33) % nt] ^= 1;   /* one boundary flipped */
                ts__part_replay_edits(&gr, vars, pieces + 0, units, &ro[c]);
            }
            if (ts_replay_run_graph(g, &ro[c], &r[c], &err)) { fprintf(stderr, "optimize bench: %s\n", err.msg); rc = -1; }
        }
        if (rc == 0) {
            const ts_sim *p = &r[0]->sim, *q = &r[1]->sim;
            uint32_t nb = p->n_base_nodes < q->n_base_nodes ? p->n_base_nodes : q->n_base_nodes, keep = 0;
            int64_t tau = INT64_MAX;
            for (uint32_t i = 0; i < nb; i++)
                if (p->start_ns[i] != q->start_ns[i] || p->end_ns[i] != q->end_ns[i]) {
                    int64_t t = p->start_ns[i] < q->start_ns[i] ? p->start_ns[i] : q->start_ns[i];
                    if (t < tau) tau = t;
                }
            for (uint32_t i = 0; i < q->n_nodes; i++) keep += q->start_ns[i] < tau;
            share[done++] = (double)keep / (double)q->n_nodes;
        }
        ts_replay_destroy(r[0]);
        ts_replay_destroy(r[1]);
    }
    if (rc == 0 && done) {
        qsort(share, done, sizeof *share, cmp_dbl);
        double mean = 0;
        for (uint32_t k = 0; k < done; k++) mean += share[k];
        mean /= done;
        printf("re-simulation from the first change (%u random candidates, one boundary flipped each): nodes "
               "starting before the first changed one, of the child's: median %.1f%%, mean %.1f%%, max %.1f%% "
               "(an upper bound on what it could skip: at most %.2fx fewer simulated nodes on average)\n",
               done, 100 * share[done / 2], 100 * mean, 100 * share[done - 1], 1 / (1 - mean));
    }
    free(vars);
    free(pieces);
    free(units);
    free(share);
    ts__opt_grads_free(&gr);
    return rc;
}

/* How a candidate's change of the predicted iteration (against the trace's
 * grouping, r0) differs between iterations: max - min over the compared
 * iterations, in ms, into *spread; |change| of the reported median into *gain. */
static void iteration_spread(const ts_replay *r0, const ts_replay *r, double *spread, double *gain)
{
    double lo = INFINITY, hi = -INFINITY;
    uint32_t ni = ts_replay_n_iterations(r0) < ts_replay_n_iterations(r) ? ts_replay_n_iterations(r0)
                                                                             : ts_replay_n_iterations(r);
    for (uint32_t k = 0; k < ni; k++) {
        ts_replay_iteration_info a, b;
        ts_replay_iteration(r0, k, &a);
        ts_replay_iteration(r, k, &b);
        double d = (double)(b.predicted_iteration_ns - a.predicted_iteration_ns) / 1e6;
        if (d < lo) lo = d;
        if (d > hi) hi = d;
    }
    *spread = ni ? hi - lo : 0;
    *gain = fabs((double)(ts_replay_predicted_iteration_ns(r) - ts_replay_predicted_iteration_ns(r0))) / 1e6;
}

/* What condensing the candidate-invariant part of the graph could save,
 * measured: n random candidates (the optimizer's forms) replayed in full
 * (every replay's rows are the graph's rows first). A base node is dropped
 * when every candidate removes it (old buckets a regrouping retires: a
 * purpose-built evaluator would not hold them), variant when candidates
 * differ on it: its self time (contention.c re-times ops for their
 * overlap), whether it is removed, an edge into or out of it (ready
 * points, waits), an edge a candidate adds to it, or it is a comm node or
 * barrier kept; else invariant. Every maximal run of invariant nodes on
 * one lane (in row order, dropped nodes skipped) could be one node of a
 * condensed graph built once, which so holds at least variant + runs + the
 * nodes a candidate adds; the kept nodes over that is an upper bound on
 * how many times fewer nodes a condensed evaluation would simulate and
 * re-time (edges that would keep a run from merging are ignored). Also
 * how a candidate's change of the iteration (against the trace's
 * grouping) differs between iterations: whether one could stand for all. */
typedef struct cond_ref { int64_t *self; uint32_t *esrc; int64_t *egap; uint8_t *eflags, *variant; uint32_t *n_removed; } cond_ref;

static void cond_mark(cond_ref *c, const ts_replay *r, bool first, uint64_t *retimed_ops)
{
    const ts_sim *q = &r->sim;
    for (uint32_t i = 0; i < q->n_base_nodes; i++) {
        bool removed = r->removed && r->removed[i];
        c->n_removed[i] += removed;
        if (q->kind[i] == TS_NODE_COMM_CPU || q->kind[i] == TS_NODE_BARRIER) c->variant[i] |= 2;
        if (first) c->self[i] = q->self_ns[i];
        else if (q->self_ns[i] != c->self[i]) c->variant[i] |= 1, *retimed_ops += q->kind[i] == TS_NODE_CPU_OP;
    }
    for (uint32_t e = 0; e < q->n_base_edges; e++) {
        if (first) { c->esrc[e] = q->esrc[e]; c->egap[e] = q->egap_ns[e]; c->eflags[e] = q->eflags[e]; continue; }
        if (q->esrc[e] != c->esrc[e] || q->egap_ns[e] != c->egap[e] || q->eflags[e] != c->eflags[e])
            c->variant[q->esrc[e]] |= 4, c->variant[q->edst[e]] |= 4, c->variant[c->esrc[e]] |= 4;
    }
    for (uint32_t e = q->n_base_edges; e < q->n_edges; e++) {   /* added edges: their base ends attach */
        if (q->esrc[e] < q->n_base_nodes) c->variant[q->esrc[e]] |= 4;
        if (q->edst[e] < q->n_base_nodes) c->variant[q->edst[e]] |= 4;
    }
}

/* Print the bound from the marks of n candidates on r0's lanes. */
static int cond_print(const cond_ref *c, const ts_sim *p, uint32_t n, double mean_added, uint64_t retimed_ops,
                      int no_contention)
{
    uint32_t nb = p->n_base_nodes, n_var = 0, n_drop = 0, runs = 0, max_lane = 0, by[3] = {0, 0, 0}, n_cpu = 0;
    for (uint32_t i = 0; i < nb; i++)
        if (p->lane[i] != TS_NONE32 && p->lane[i] > max_lane) max_lane = p->lane[i];
    uint32_t *last = malloc(((size_t)max_lane + 2) * sizeof *last);
    if (!last) return -1;
    for (uint32_t l = 0; l <= max_lane + 1; l++) last[l] = TS_NONE32;
    for (uint32_t i = 0; i < nb; i++) {
        uint32_t l = p->lane[i] == TS_NONE32 ? max_lane + 1 : p->lane[i];
        n_cpu += p->kind[i] == TS_NODE_CPU_OP;
        if (c->n_removed[i] == n) { n_drop++; continue; }
        bool var = c->variant[i] || c->n_removed[i];
        for (int b = 1; b < 3; b++) by[b] += c->variant[i] >> b & 1;
        by[0] += (c->variant[i] & 1) && p->kind[i] == TS_NODE_CPU_OP;
        if (var) n_var++;
        else if (l > max_lane || last[l] == TS_NONE32 || c->variant[last[l]] || c->n_removed[last[l]]) runs++;
        last[l] = i;
    }
    free(last);
    double kept = (double)(nb - n_drop) + mean_added, cond = n_var + runs + mean_added;
    printf("condensation bound (%u random candidates%s): of %u graph nodes %u are removed by every candidate, %u "
           "differ between candidates (re-timed %u of %u CPU ops; comm or barrier %u; an edge moved or added %u) and "
           "the other %u make %u runs on their lanes; candidates add %.0f nodes: a condensed graph holds >= %.0f "
           "nodes against %.0f, at most %.2fx fewer; %.1f%% of the CPU ops re-timed otherwise than in the first "
           "candidate, in an average candidate\n", n, no_contention ? ", --no-contention" : "", nb, n_drop, n_var,
           by[0], n_cpu, by[1], by[2], nb - n_drop - n_var, runs, mean_added, cond, kept, kept / cond,
           n > 1 && n_cpu ? 100.0 * (double)retimed_ops / (double)(n - 1) / (double)n_cpu : 0);
    return 0;
}

static int condensation_bound(const ts_graph *g, const bench_args *a, uint32_t n, int no_contention)
{
    ts_opt_grads gr;
    ts_error err = {0};
    if (ts__opt_grads_load(a->gradients, &gr, &err) || ts__part_candidates(&gr, 8, 8)) {
        fprintf(stderr, "optimize bench: %s\n", err.msg);
        return -1;
    }
    uint32_t nn = ts_graph_n_nodes(g) + 1, ne = ts_graph_n_edges(g) + 1;
    cond_ref c = {malloc(nn * sizeof *c.self), malloc(ne * sizeof *c.esrc), malloc(ne * sizeof *c.egap), malloc(ne),
                  calloc(nn, 1), calloc(nn, sizeof *c.n_removed)};
    uint8_t *vars = malloc(gr.n + gr.n_part + 1);
    uint32_t *pieces = malloc((gr.n + 1) * sizeof *pieces), *units = malloc((8 * gr.n + 1) * sizeof *units);
    double *spread = malloc((n + 1) * sizeof *spread), *gain = malloc((n + 1) * sizeof *gain);
    ts_replay *r0 = NULL;
    ts_replay_options ro = {.size = sizeof ro, .gradients_json = a->gradients, .nccl_tests_log = a->log,
                            .trace_bucket_mb = a->trace_cap_mb, .bucket_mb = a->trace_cap_mb,
                            .no_contention = no_contention};
    int rc = c.self && c.esrc && c.egap && c.eflags && c.variant && c.n_removed && vars && pieces && units && spread &&
             gain && ts_replay_run_graph(g, &ro, &r0, &err) == TS_OK ? 0 : -1;
    uint64_t x = 99, added = 0, retimed_ops = 0;
    for (uint32_t k = 0; rc == 0 && k < n; k++) {
        ts_replay_options rk = {.size = sizeof rk, .gradients_json = a->gradients, .nccl_tests_log = a->log,
                                .trace_bucket_mb = a->trace_cap_mb, .no_contention = no_contention};
        random_plan(&gr, &x, vars, pieces, units, &rk);
        ts_replay *r = NULL;
        if (ts_replay_run_graph(g, &rk, &r, &err)) { rc = -1; break; }
        cond_mark(&c, r, k == 0, &retimed_ops);
        added += r->sim.n_nodes - r->sim.n_base_nodes;
        iteration_spread(r0, r, &spread[k], &gain[k]);
        ts_replay_destroy(r);
    }
    if (rc) fprintf(stderr, "optimize bench: %s\n", err.msg);
    else rc = cond_print(&c, &r0->sim, n, (double)added / n, retimed_ops, no_contention);
    if (rc == 0) {
        qsort(spread, n, sizeof *spread, cmp_dbl);
        qsort(gain, n, sizeof *gain, cmp_dbl);
        printf("one iteration for all: a candidate's change of the predicted iteration differs between the %u "
               "iterations by a median %.3f ms (max %.3f ms) over the candidates, against a median |change| of the "
               "reported (median) iteration of %.3f ms\n", ts_replay_n_iterations(r0), spread[n / 2], spread[n - 1],
               gain[n / 2]);
    }
    ts_replay_destroy(r0);
    free(c.self), free(c.esrc), free(c.egap), free(c.eflags), free(c.variant), free(c.n_removed);
    free(vars);
    free(pieces);
    free(units);
    free(spread);
    free(gain);
    ts__opt_grads_free(&gr);
    return rc;
}

/* One representative per replica group instead of the folded job: the
 * same n random candidates priced by a full replay of the folded graph g
 * and of the trace's two ranks (the representatives: scale_gen's copies
 * keep their source's shape), printed with their difference. */
static int fold_vs_representatives(const ts_graph *g, const bench_args *a, uint32_t n)
{
    const char *paths[1] = {a->trace};
    ts_job *t = NULL;
    ts_graph *g2 = NULL;
    ts_opt_grads gr;
    ts_error err = {0};
    if (ts_job_load(paths, 1, NULL, &t, &err) || ts_graph_create(t, NULL, &g2, &err) ||
        ts__opt_grads_load(a->gradients, &gr, &err) || ts__part_candidates(&gr, 8, 8)) {
        fprintf(stderr, "optimize bench: %s\n", err.msg);
        return -1;
    }
    uint8_t *vars = malloc(gr.n + gr.n_part + 1);
    uint32_t *pieces = malloc((gr.n + 1) * sizeof *pieces), *units = malloc((8 * gr.n + 1) * sizeof *units);
    int rc = vars && pieces && units ? 0 : -1;
    uint64_t x = 5;
    double worst = 0;
    for (uint32_t k = 0; rc == 0 && k < n; k++) {
        ts_replay_options ro = {.size = sizeof ro, .gradients_json = a->gradients, .nccl_tests_log = a->log,
                                .trace_bucket_mb = a->trace_cap_mb};
        random_plan(&gr, &x, vars, pieces, units, &ro);
        ts_replay *rf = NULL, *rr = NULL;
        double u0 = user_s();
        int64_t t0 = ts__now_ns();
        rc = ts_replay_run_graph(g, &ro, &rf, &err) ? -1 : 0;
        double f_s = (double)(ts__now_ns() - t0) / 1e9, f_u = user_s() - u0;
        u0 = user_s();
        if (rc == 0) rc = ts_replay_run_graph(g2, &ro, &rr, &err) ? -1 : 0;
        double r_u = user_s() - u0;
        if (rc) fprintf(stderr, "optimize bench: %s\n", err.msg);
        else {
            double pf = (double)ts_replay_predicted_iteration_ns(rf), pr = (double)ts_replay_predicted_iteration_ns(rr);
            double d = 100 * (pr - pf) / pf;
            if (fabs(d) > worst) worst = fabs(d);
            printf("  candidate %u: folded %.3f ms (%.2f s wall, %.2f s user), representatives alone %.3f ms "
                   "(%.4f s user): %+.3f%%\n", k, pf / 1e6, f_s, f_u, pr / 1e6, r_u, d);
        }
        ts_replay_destroy(rf);
        ts_replay_destroy(rr);
    }
    if (rc == 0) printf("  representatives alone against the folded replay: at most %.3f%% apart over %u random candidates\n", worst, n);
    free(vars);
    free(pieces);
    free(units);
    ts__opt_grads_free(&gr);
    ts_graph_destroy(g2);
    ts_job_destroy(t);
    return rc;
}

/* The search on a job of many rank files (bench/optimize.sh writes 1,024
 * copies of the trace's two ranks with bench/scale_gen --jitter -1): read
 * by the bounded path with --fold-replicas (docs/scale.md), so one
 * representative per group of replica ranks is replayed whole and the
 * others keep only their collective members; then the same MCMC search as
 * above. Prints the load and the search apart, wall and user CPU. */
static int folded_search(const bench_args *a)
{
    const char *paths[1] = {a->fold_dir};
    ts_load_opts lo = {.size = sizeof lo};
    ts_graph_options go = {.size = sizeof go, .fold_replicas = 1};
    ts_job *t = NULL;
    ts_graph *g = NULL;
    ts_error err = {0};
    double u0 = user_s();
    int64_t t0 = ts__now_ns();
    if (ts_graph_load(paths, 1, &lo, &go, &t, &g, &err)) {
        fprintf(stderr, "optimize bench: %s\n", err.msg);
        return -1;
    }
    double load_s = (double)(ts__now_ns() - t0) / 1e9, load_u = user_s() - u0;
    uint32_t n = ts_graph_n_ranks(g), groups = 0;
    for (uint32_t r = 0; r < n; r++) groups += ts_graph_replica_of(g, r) == r;
    ts_job *rt = NULL;
    ts_graph *rg = NULL;
    u0 = user_s();
    t0 = ts__now_ns();
    if (ts_graph_load_representatives(g, &lo, NULL, &rt, &rg, &err)) {
        fprintf(stderr, "optimize bench: %s\n", err.msg);
        ts_graph_destroy(g);
        ts_job_destroy(t);
        return -1;
    }
    double rep_s = (double)(ts__now_ns() - t0) / 1e9, rep_u = user_s() - u0;
    ts_replay_options ro = {.size = sizeof ro, .gradients_json = a->gradients, .nccl_tests_log = a->log,
                            .trace_bucket_mb = a->trace_cap_mb};
    ts_optimize_options oo = {.size = sizeof oo, .search = TS_SEARCH_MCMC, .budget_evals = a->evals, .seed = 1,
                              .replay = &ro, .representatives = rg, .top_k = a->top_k};
    ts_optimize *o = NULL;
    u0 = user_s();
    t0 = ts__now_ns();
    int rc = ts_optimize_run(g, &oo, &o, &err);
    double run_s = (double)(ts__now_ns() - t0) / 1e9, run_u = user_s() - u0;
    if (rc) fprintf(stderr, "optimize bench: %s\n", err.msg);
    else {
        ts_optimize_summary s;
        ts_optimize_get_summary(o, &s);
        printf("folded job: %s, %u ranks in %u replica groups, %u graph nodes; load (bounded, --fold-replicas) "
               "%.2f s wall, %.2f s user; the representatives read again %.2f s wall, %.2f s user\n", a->fold_dir, n,
               groups, ts_graph_n_nodes(g), load_s, load_u, rep_s, rep_u);
        printf("  two stages: search (mcmc, %llu evaluations on the %u representatives) %.3f s (%.1f evaluations/s); "
               "%u strategies re-priced by the folded replay (top %u, the trace's own and the best cap grouping where the "
               "top lack it), representatives %+.3f%% to "
               "%+.3f%% off them; optimize run in all (baseline, search, re-pricing, attribution) %.2f s wall, %.2f s "
               "user; with the loads %.2f s wall, %.2f s user (target: a search of 1,024 ranks in 60 s)\n",
               (unsigned long long)s.n_evals, s.n_rep_ranks, s.search_s, s.evals_per_s, s.n_repriced,
               a->top_k ? a->top_k : 3, s.rep_err_min_pct, s.rep_err_max_pct, run_s, run_u,
               load_s + rep_s + run_s, load_u + rep_u + run_u);
        printf("  found: %.3f -> %.3f ms per iteration (%+.2f%%, folded replay), %u -> %u buckets%s\n",
               (double)s.baseline_ns / 1e6, (double)s.best_ns / 1e6,
               100.0 * (double)(s.best_ns - s.baseline_ns) / (double)s.baseline_ns, s.n_old_buckets, s.n_new_buckets,
               s.no_change ? " (no change)" : "");
    }
    ts_optimize_destroy(o);
    ts_graph_destroy(rg);
    ts_job_destroy(rt);
    if (rc == 0 && a->fold_compare) rc = fold_vs_representatives(g, a, a->fold_compare);
    ts_graph_destroy(g);
    ts_job_destroy(t);
    return rc ? -1 : 0;
}

/* The cost model's held-out error: fitted on one trace, scored on another. */
static void cost_model_figures(const bench_args *a)
{
    ts_op_samples train, test;
    if (load_samples(a->cost_train, &train)) return;
    if (load_samples(a->cost_test, &test)) { ts__cost_samples_free(&train); return; }
    ts_cost_model m;
    double *em = malloc((test.n + 1) * sizeof *em), *eb = malloc((test.n + 1) * sizeof *eb);
    uint32_t n = 0;
    if (em && eb && ts__cost_fit(&train, 5, &m) == TS_OK) {
        for (uint32_t i = 0; i < test.n; i++) {
            const ts_cost_fit *f = ts__cost_lookup(&m, test.v[i].name);
            if (!f) continue;
            double t = test.v[i].time_ns, p = f->alpha_ns + f->beta_ns * test.v[i].work;
            em[n] = fabs(p - t) / t;
            eb[n++] = fabs(f->median_ns - t) / t;
        }
        qsort(em, n, sizeof *em, cmp_dbl);
        qsort(eb, n, sizeof *eb, cmp_dbl);
        printf("cost model: %u ops with shapes in %s, %u op names fitted (>= 5 samples); on %u held-out ops of %s: "
               "median relative error %.1f%% (p90 %.1f%%) against %.1f%% (p90 %.1f%%) for the shape-blind per-name median\n",
               train.n, a->cost_train, m.n, n, a->cost_test, n ? 100 * em[n / 2] : 0, n ? 100 * em[n * 9 / 10] : 0,
               n ? 100 * eb[n / 2] : 0, n ? 100 * eb[n * 9 / 10] : 0);
        ts__cost_model_free(&m);
    }
    free(em);
    free(eb);
    ts__cost_samples_free(&train);
    ts__cost_samples_free(&test);
}

int main(int argc, char **argv)
{
    bench_args a;
    if (parse(argc, argv, &a)) {
        fprintf(stderr, "usage: optimize [--trace DIR] [--gradients FILE] [--trace-bucket-mb X] [--log LOG] "
                        "[--evals N] [--repeat R] [--fold-dir DIR [--fold-compare N]]\n");
        return 2;
    }
    if (a.fold_dir) return folded_search(&a) == 0 ? 0 : 1;   /* that search alone (bench/optimize.sh runs both) */
    const char *paths[1] = {a.trace};
    ts_job *t = NULL;
    ts_graph *g = NULL;
    ts_error err = {0};
    if (ts_job_load(paths, 1, NULL, &t, &err) || ts_graph_create(t, NULL, &g, &err)) {
        fprintf(stderr, "optimize bench: %s\n", err.msg);
        return 2;
    }
    ts_replay_options ro = {.size = sizeof ro, .gradients_json = a.gradients, .nccl_tests_log = a.log,
                            .trace_bucket_mb = a.trace_cap_mb, .bucket_mb = a.trace_cap_mb};
    double u_full, u_trace, u_rg;
    int64_t full = best_replay(t, g, &ro, a.repeat, false, &u_full);
    int64_t whole = best_replay(t, g, &ro, a.repeat, true, &u_trace);
    ts_replay_options rg = ro;   /* a regrouped candidate: DDP's buckets at 1 MB (the trace's grouping settles in a round) */
    rg.bucket_mb = 1;
    int64_t full_rg = best_replay(t, g, &rg, a.repeat, false, &u_rg);
    ts_optimize_options oo = {.size = sizeof oo, .search = TS_SEARCH_MCMC, .budget_evals = a.evals, .seed = 1,
                              .replay = &ro};
    ro.bucket_mb = 0;
    ts_optimize *o = NULL;
    double u0 = user_s();
    if (full < 0 || whole < 0 || full_rg < 0 || ts_optimize_run(g, &oo, &o, &err)) {
        fprintf(stderr, "optimize bench: %s\n", err.msg);
        return 2;
    }
    double u_search = user_s() - u0;
    ts_optimize_summary s;
    ts_optimize_get_summary(o, &s);
    double rate = (double)s.n_evals / s.search_s, rate_full = 1e9 / (double)full_rg, rate_trace = 1e9 / (double)whole;
    printf("graph: %s, %u nodes, %u edges, %u gradients, %u all-reduces per iteration in the trace\n", a.trace,
           ts_graph_n_nodes(g), ts_graph_n_edges(g), s.n_grads, s.n_old_buckets);
    printf("full replay, the trace's grouping:        %8.3f ms  (%7.1f candidates/s; user %.3f ms)\n",
           (double)full / 1e6, 1e9 / (double)full, u_full * 1e3);
    printf("full replay per candidate (same graph; DDP at 1 MB, regrouped): %8.3f ms  (%7.1f candidates/s; user %.3f ms)\n",
           (double)full_rg / 1e6, rate_full, u_rg * 1e3);
    printf("replay per candidate from the trace:     %8.3f ms  (%7.1f candidates/s; user %.3f ms)\n",
           (double)whole / 1e6, rate_trace, u_trace * 1e3);
    printf("search (mcmc, %llu evaluations):        %8.3f s   (%7.1f evaluations/s; user %.3f s)\n",
           (unsigned long long)s.n_evals, s.search_s, rate, u_search);
    printf("  of which simulated: %llu (%.1f/s, each a replay in the search's evaluation session); decided by a "
           "bound without simulation: 0 (no bound is built: dPRO's heat needs every candidate's exact time)\n",
           (unsigned long long)s.n_evals, rate);
    printf("  contention rounds: %.2f simulations per evaluation (%llu in %llu evaluations; at most %d, fewer where "
           "the rounds reach their fixed point), plus the final simulation of each\n",
           s.n_contended ? (double)s.n_contention_sims / (double)s.n_contended : 0.0,
           (unsigned long long)s.n_contention_sims, (unsigned long long)s.n_contended, TS_CONTENTION_ROUNDS);
    printf("evaluations/s: %.1f wall, %.1f per user CPU second of the whole optimize run (baseline, search, "
           "re-pricing, attribution; load average %s) (target 10,000: %s); %.2fx a full replay per candidate on the "
           "same graph (target 100x: %s), %.2fx a replay from the trace\n", rate,
           u_search > 0 ? (double)s.n_evals / u_search : 0, loadavg(), rate >= 10000 ? "met" : "NOT met",
           rate / rate_full, rate / rate_full >= 100 ? "met" : "NOT met", rate / rate_trace);
    printf("found: %.3f -> %.3f ms per iteration (%+.2f%%), %u -> %u buckets\n", (double)s.baseline_ns / 1e6,
           (double)s.best_ns / 1e6, 100.0 * (double)(s.best_ns - s.baseline_ns) / (double)s.baseline_ns,
           s.n_old_buckets, s.n_new_buckets);
    ts_optimize_destroy(o);
    int same = same_candidates(g, &a, a.log, 30);
    if (same == 0) same = prefix_ceiling(g, &a, 40);
    if (same == 0) same = condensation_bound(g, &a, 20, 0);
    if (same == 0) same = condensation_bound(g, &a, 20, 1);
    if (same == 0) same = same_candidates(g, &a, NULL, 30);
    ts_graph_destroy(g);
    ts_job_destroy(t);
    cost_model_figures(&a);
    dpro_table_figures();
    return same == 0 ? 0 : 1;
}
