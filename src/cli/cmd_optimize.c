/* cmd_optimize.c - `trainscope optimize PATH...`: search the job's graph
 * for a faster grouping (and partition) of its gradient all-reduces, print
 * what to change and what each change buys, and write a plan to apply.
 *
 * Thin: parse options, load, build the graph, ts_optimize_run, print,
 * write. Exit: 0 ok, 1 nothing to optimize, 2 bad input or usage.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "trainscope/graph.h"
#include "trainscope/ingest.h"
#include "trainscope/optimize.h"
#include "trainscope/report_replay.h"

typedef struct opt_args {
    ts_optimize_options o;
    ts_replay_options   r;
    const char *out_dir, *export_path, *marker;
    bool json;
    char gradients_found[4096];   /* DIR/.gradients.json of a recorded job */
} opt_args;

static void usage(FILE *f)
{
    fputs("usage: trainscope optimize [OPTIONS] PATH...\n\n"
          "Search for a faster grouping of the gradient all-reduces of a data-parallel\n"
          "job (dPRO's optimizer), pricing every candidate by replaying the job's graph,\n"
          "and say what to change and what each change buys.\n\n"
          "options:\n"
          "  --gradients FILE         gradients.json (names and bytes, registration order);\n"
          "                           required for tensor-fusion and partition; default:\n"
          "                           DIR/.gradients.json of a directory `record --torch` wrote\n"
          "  --passes LIST            tensor-fusion,partition,op-fusion (default tensor-fusion);\n"
          "                           precision: a mixed-precision plan, a pass of its own\n"
          "                           (see 'trainscope optimize --passes precision --help');\n"
          "                           op-fusion: chains of pointwise ops priced with dPRO's\n"
          "                           estimate, written as cluster_mapping.txt\n"
          "  --xla-candidates FILE    op-fusion: only ops this XLA candidate list names\n"
          "                           (dPRO's --xla_candidate_path; TensorFlow op names)\n"
          "  --op-table DIR           op-fusion: fused time from the model fitted on dPRO's\n"
          "                           timing tables DIR/name.txt, DIR/avg.txt\n"
          "  --op-table-dtype fp32|fp16  which rows of --op-table (default fp32)\n"
          "  --simulate               op-fusion: dPRO's --simulate estimate of fused time\n"
          "  --search KIND            auto (default: exhaustive when the space fits the\n"
          "                           budget, else mcmc), mcmc, anneal, greedy, exhaustive\n"
          "  --budget N|Ts            N evaluations (deterministic with --seed) or T seconds\n"
          "                           (default 200 evaluations)\n"
          "  --seed S                 random seed (default 0)\n"
          "  --mcmc-beta B            Metropolis: a move slower by x percent is taken with\n"
          "                           probability exp(-B x) (default 10, dPRO's)\n"
          "  --heat-k K               k of dPRO's heat formula (default 1, dPRO's code)\n"
          "  --heat-window N          heat history entries per op (default 5)\n"
          "  --layer-num-limit N      no search: one bucket per N layers (dPRO's sample)\n"
          "  --from-opfs FILE         no search: the tensor fusion matching the operator\n"
          "                           fusion of a cluster_mapping.txt (dPRO's from_opfs2tsfs)\n"
          "  --max-pieces N           partition: at most N pieces per gradient (default 8)\n"
          "  --fold-replicas[=TOL]    read the ranks as replay --fold-replicas does, search\n"
          "                           on the replica groups' representatives alone, then\n"
          "                           re-price the best --top-k (default 3) and the trace's\n"
          "                           own strategy by the folded replay: the plan is the\n"
          "                           fastest there (tensor-fusion and partition)\n"
          "  --top-k K                with --fold-replicas: strategies re-priced folded\n"
          "  --prune-folded N         with --fold-replicas: folded replays spent dropping\n"
          "                           the plan's changes that buy nothing (default 2)\n"
          "  --hook-cost-ms STEP[,GROUP]  what applying a plan through ddp_hook.py costs,\n"
          "                           ms a step and per group it all-reduces, priced\n"
          "                           against its gain (default 3.93,0.47, measured by\n"
          "                           bench/ddp_hook_cost.sh; 0: free); a bucket_cap_mb\n"
          "                           setting costs nothing\n"
          "  --no-cap-proposals       tensor-fusion: do not propose the groupings a\n"
          "                           bucket_cap_mb gives to the search (priced first by\n"
          "                           default, so the plan is never predicted slower than\n"
          "                           the best of them): the walk alone, for comparisons\n"
          "  -o, --output DIR         write plan.json, tensor_groups.txt, horovod.env and,\n"
          "                           when no bucket_cap_mb gives the plan, ddp_hook.py\n"
          "  --export FILE            the predicted timeline of the plan as a Chrome trace\n"
          "  --format table|json      output (default table)\n"
          "  --trace-bucket-mb X      the bucket cap the trace was recorded with\n"
          "  --nccl-tests LOG         calibrate the collective cost model from this log\n"
          "  --bandwidth GBPS         price collectives at this bus bandwidth\n"
          "  --latency-us US          with --bandwidth: fixed cost per collective\n"
          "  --no-contention          gloo jobs: keep compute times as measured\n"
          "  --link-bound auto|yes|no gloo jobs: price buckets on a network link (the rate\n"
          "                           the trace's all-reduces achieved together), not as\n"
          "                           CPU work; auto (default) decides from the trace\n"
          "  --iterations N           compare only the first N iterations\n"
          "  --iteration-marker NAME  slice-name prefix of iterations (ProfilerStep#)\n"
          "  -h, --help               this help\n\n"
          "exit codes: 0 ok, 1 nothing to optimize, 2 bad input or usage\n", f);
}

static int parse_passes(const char *s, unsigned *out)
{
    *out = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "tensor-fusion")) *out |= TS_PASS_TENSOR_FUSION;
        else if (!strcmp(tok, "partition")) *out |= TS_PASS_PARTITION;
        else if (!strcmp(tok, "op-fusion")) *out |= TS_PASS_OP_FUSION;
        else {
            ts_cli_errorf("optimize: unknown pass '%s' (passes: tensor-fusion, partition, op-fusion)", tok);
            return -1;
        }
    }
    return *out ? 0 : (ts_cli_errorf("optimize: --passes names no pass"), -1);
}

static int parse_budget(const char *s, ts_optimize_options *o)
{
    char *end;
    double v = strtod(s, &end);
    bool secs = *end == 's' && !end[1];
    if (end == s || (*end && !secs) || !(v > 0) || !isfinite(v) || (!secs && (v != floor(v) || v > 1e12))) {
        ts_cli_errorf("optimize: --budget wants a count of evaluations > 0 or seconds such as 30s, got '%s'", s);
        return -1;
    }
    if (secs) o->budget_s = v;
    else o->budget_evals = (uint64_t)v;
    return 0;
}

static int parse_search(const char *s, ts_search_kind *out)
{
    for (int i = TS_SEARCH_AUTO; i <= TS_SEARCH_EXHAUSTIVE; i++)
        if (!strcmp(s, ts_search_kind_name((ts_search_kind)i))) { *out = (ts_search_kind)i; return 0; }
    ts_cli_errorf("optimize: --search wants auto, mcmc, anneal, greedy or exhaustive, got '%s'", s);
    return -1;
}

static int parse_num(const char *opt, const char *s, double lo, double *out)
{
    char *end;
    *out = strtod(s, &end);
    if (end == s || *end || !isfinite(*out) || *out < lo) {
        ts_cli_errorf("optimize: %s wants a number >= %g, got '%s'", opt, lo, s);
        return -1;
    }
    return 0;
}

/* --hook-cost-ms STEP[,GROUP]: ms a step and per group the hook all-reduces
 * (GROUP 0 when not given); 0 = hooks are free (the API's 0 is the default). */
static int parse_hook_cost(const char *s, ts_optimize_options *o)
{
    char *end;
    double step = strtod(s, &end), group = 0;
    if (end != s && *end == ',') {
        const char *g = end + 1;
        group = strtod(g, &end);
        if (end == g) end = (char *)s;   /* "X," : refused below */
    }
    if (end == s || *end || !isfinite(step) || !isfinite(group) || step < 0 || group < 0) {
        ts_cli_errorf("optimize: --hook-cost-ms wants STEP[,GROUP] in ms >= 0 (such as 3.93,0.47), got '%s'", s);
        return -1;
    }
    o->hook_cost_ms = step > 0 || group > 0 ? (step > 0 ? step : 1e-9) : -1;
    o->hook_group_ms = group;
    return 0;
}

static int parse_option(int c, opt_args *a)
{
    double v;
    switch (c) {
    case 'g': a->r.gradients_json = optarg; return 0;
    case 'p': return parse_passes(optarg, &a->o.passes);
    case 'S': return parse_search(optarg, &a->o.search);
    case 'b': return parse_budget(optarg, &a->o);
    case 's': if (parse_num("--seed", optarg, 0, &v)) return -1; a->o.seed = (uint64_t)v; return 0;
    case 'M': return parse_num("--mcmc-beta", optarg, 1e-9, &a->o.mcmc_beta);
    case 'k': return parse_num("--heat-k", optarg, 1, &a->o.heat_k);
    case 'H': return ts_cli_opt_count("optimize", "--heat-window", optarg, &a->o.heat_window);
    case 'L': return ts_cli_opt_count("optimize", "--layer-num-limit", optarg, &a->o.layer_num_limit);
    case 'x': return ts_cli_opt_count("optimize", "--max-pieces", optarg, &a->o.max_pieces);
    case 'o': a->out_dir = optarg; return 0;
    case 'e': a->export_path = optarg; return 0;
    case 'f':
        if (strcmp(optarg, "json") && strcmp(optarg, "table")) {
            ts_cli_errorf("optimize: --format wants table or json, got '%s'", optarg);
            return -1;
        }
        a->json = !strcmp(optarg, "json");
        return 0;
    case 'T': return parse_num("--trace-bucket-mb", optarg, 1e-9, &a->r.trace_bucket_mb);
    case 'n': a->r.nccl_tests_log = optarg; return 0;
    case 'B': return parse_num("--bandwidth", optarg, 1e-9, &a->r.bandwidth_gbps);
    case 'l': return parse_num("--latency-us", optarg, 0, &a->r.latency_us);
    case 'C': a->r.no_contention = 1; return 0;
    case 0x2010:   /* --link-bound */
        a->r.link_bound = !strcmp(optarg, "yes") ? 1 : !strcmp(optarg, "no") ? -1 : !strcmp(optarg, "auto") ? 0 : 2;
        if (a->r.link_bound != 2) return 0;
        ts_cli_errorf("optimize: --link-bound wants auto, yes or no, got '%s'", optarg);
        return -1;
    case 'i': return ts_cli_opt_count("optimize", "--iterations", optarg, &a->r.max_iterations);
    case 'm': a->marker = optarg; return 0;
    case 'X': a->o.xla_candidates = optarg; return 0;
    case 'O': a->o.op_table = optarg; return 0;
    case 'D':
        if (strcmp(optarg, "fp32") && strcmp(optarg, "fp16")) {
            ts_cli_errorf("optimize: --op-table-dtype wants fp32 or fp16, got '%s'", optarg);
            return -1;
        }
        a->o.op_table_dtype = !strcmp(optarg, "fp16");
        return 0;
    case 'U': a->o.simulate = true; return 0;
    case 'F': a->o.from_opfs = optarg; return 0;
    case TS_CLI_OPT_FOLD: return ts_cli_opt_common("optimize", c, optarg);
    case 0x2011: return ts_cli_opt_count("optimize", "--top-k", optarg, &a->o.top_k);
    case 0x2012: return ts_cli_opt_count("optimize", "--prune-folded", optarg, &a->o.prune_folded);
    case 0x2013: return parse_hook_cost(optarg, &a->o);
    case 0x2014: a->o.no_cap_proposals = true; return 0;
    case 'h': usage(stdout); return 1;
    default: return -1;
    }
}

static int parse_args(int argc, char **argv, opt_args *a)
{
    static const struct option longopts[] = {
        {"gradients", required_argument, 0, 'g'}, {"passes", required_argument, 0, 'p'},
        {"search", required_argument, 0, 'S'}, {"budget", required_argument, 0, 'b'},
        {"seed", required_argument, 0, 's'}, {"mcmc-beta", required_argument, 0, 'M'},
        {"heat-k", required_argument, 0, 'k'}, {"heat-window", required_argument, 0, 'H'},
        {"layer-num-limit", required_argument, 0, 'L'}, {"max-pieces", required_argument, 0, 'x'},
        {"output", required_argument, 0, 'o'}, {"export", required_argument, 0, 'e'},
        {"format", required_argument, 0, 'f'}, {"trace-bucket-mb", required_argument, 0, 'T'},
        {"nccl-tests", required_argument, 0, 'n'}, {"bandwidth", required_argument, 0, 'B'},
        {"latency-us", required_argument, 0, 'l'}, {"no-contention", no_argument, 0, 'C'},
        {"iterations", required_argument, 0, 'i'}, {"iteration-marker", required_argument, 0, 'm'},
        {"help", no_argument, 0, 'h'},
        {"xla-candidates", required_argument, 0, 'X'}, {"op-table", required_argument, 0, 'O'},
        {"op-table-dtype", required_argument, 0, 'D'}, {"simulate", no_argument, 0, 'U'},
        {"from-opfs", required_argument, 0, 'F'},
        {"link-bound", required_argument, 0, 0x2010},
        {"fold-replicas", optional_argument, 0, TS_CLI_OPT_FOLD}, {"top-k", required_argument, 0, 0x2011},
        {"prune-folded", required_argument, 0, 0x2012}, {"hook-cost-ms", required_argument, 0, 0x2013},
        {"no-cap-proposals", no_argument, 0, 0x2014},
        {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->o.size = sizeof a->o;
    a->r.size = sizeof a->r;
    a->o.replay = &a->r;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        int rc = parse_option(c, a);
        if (rc > 0) return 1;
        if (rc < 0) {
            if (c == '?' || c == ':')
                ts_cli_errorf("optimize: unknown or incomplete option '%s' (see 'trainscope optimize --help')", argv[optind - 1]);
            return -1;
        }
    }
    if (ts_cli_need_trace("optimize", optind, argc)) return -1;
    if (!a->r.gradients_json && optind == argc - 1) {   /* a directory `record --torch` wrote */
        snprintf(a->gradients_found, sizeof a->gradients_found, "%s/.gradients.json", argv[optind]);
        if (access(a->gradients_found, R_OK) == 0) {
            a->r.gradients_json = a->gradients_found;
            fprintf(stderr, "trainscope: optimize: gradients from %s (record --torch)\n", a->gradients_found);
        }
    }
    if (!a->r.gradients_json && (!a->o.passes || (a->o.passes & (TS_PASS_TENSOR_FUSION | TS_PASS_PARTITION)))) {
        ts_cli_errorf("optimize: --gradients gradients.json is needed (the gradients' names and sizes)");
        return -1;
    }
    if (a->o.top_k && !(ts_cli_fold_tolerance() > 0)) {
        ts_cli_errorf("optimize: --top-k applies with --fold-replicas (the strategies re-priced folded)");
        return -1;
    }
    if (a->o.prune_folded && !(ts_cli_fold_tolerance() > 0)) {
        ts_cli_errorf("optimize: --prune-folded applies with --fold-replicas (folded replays spent pruning)");
        return -1;
    }
    if (a->o.max_pieces > 64) { ts_cli_errorf("optimize: --max-pieces is at most 64"); return -1; }
    if (a->o.heat_window > 1000) { ts_cli_errorf("optimize: --heat-window is at most 1000"); return -1; }
    return 0;
}

static void progress(void *ud, uint64_t n, int64_t best_ns, double s)
{
    (void)ud;
    fprintf(stderr, "\roptimize: %llu evaluations, best %.3f ms, %.0f evaluations/s   ", (unsigned long long)n,
            (double)best_ns / 1e6, s > 0 ? (double)n / s : 0.0);
}

static int export_plan(const ts_graph *g, const ts_optimize *o, const char *path)
{
    ts_replay_options ro;
    ts_optimize_best_options(o, &ro);
    ts_replay *r;
    ts_error err = {0};
    int rc = ts_replay_run_graph(g, &ro, &r, &err);
    if (rc == TS_OK) {
        rc = ts_replay_export_chrome(r, path, &err);
        ts_replay_destroy(r);
    }
    if (rc) ts_cli_errorf("%s", err.msg);
    return rc;
}

/* Whether argv asks for the precision pass (its input is precision runs). */
static bool precision_pass(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--precision-trace", 17) || (!strcmp(argv[i], "--passes") && i + 1 < argc &&
            strstr(argv[i + 1], "precision")) || (!strncmp(argv[i], "--passes=", 9) && strstr(argv[i], "precision")))
            return true;
    return false;
}

int ts_cmd_optimize(int argc, char **argv)
{
    if (precision_pass(argc, argv)) return ts_cmd_optimize_precision(argc, argv);
    opt_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    if (isatty(STDERR_FILENO)) a.o.progress = progress;
    ts_job *t = NULL, *rt = NULL;
    ts_error err = {0};
    ts_graph *g = NULL, *rg = NULL;
    ts_optimize *o = NULL;
    int rc = TS_OK;
    if (ts_cli_fold_tolerance() > 0) {   /* the bounded path, folded; the representatives apart */
        ts_graph_options go = {.size = sizeof go};
        int ex = ts_cli_load_graph(argv + optind, argc - optind, a.marker, false, &go, &t, &g);
        if (ex == TS_EXIT_OK) ex = ts_cli_load_representatives(g, a.marker, &rt, &rg);
        if (ex != TS_EXIT_OK) { ts_graph_destroy(g); ts_job_destroy(t); return ex; }
        a.o.representatives = rg;
    } else {
        if (ts_cli_load(argv + optind, argc - optind, a.marker, &t) != TS_EXIT_OK) return TS_EXIT_BAD;
        rc = ts_graph_create(t, NULL, &g, &err);
    }
    if (rc == TS_OK) rc = ts_optimize_run(g, &a.o, &o, &err);
    if (a.o.progress) fputc('\n', stderr);
    if (rc == TS_OK) {
        int wrc = a.json ? ts_report_optimize_json(stdout, t, g, o) : ts_report_optimize_table(stdout, stderr, t, g, o);
        (void)wrc;   /* a failed write of stdout: main says so once, naming standard output */
        if (a.out_dir && (rc = ts_optimize_write_plan(o, a.out_dir, &err)) != TS_OK) ts_cli_errorf("%s", err.msg);
        if (rc == TS_OK && a.export_path) rc = export_plan(g, o, a.export_path);
    } else {
        ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
    }
    ts_optimize_destroy(o);
    ts_graph_destroy(rg);
    ts_job_destroy(rt);
    ts_graph_destroy(g);
    ts_job_destroy(t);
    return ts_cli_exit_for(rc);
}
