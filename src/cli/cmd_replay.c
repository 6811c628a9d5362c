/* cmd_replay.c - `trainscope replay PATH...`: simulate the job's global
 * dependency graph, optionally with what-if edits, and compare the predicted
 * iteration time with the measured one.
 *
 * Thin: parse options, load, ts_replay_run, and the report functions
 * (trainscope/report_replay.h) print; --windows keeps each window in a
 * ts_replay_windows. Exit: 0 ok,
 * 1 nothing to replay (no iteration on every rank), 2 bad input or usage.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "trainscope/graph.h"
#include "trainscope/ingest.h"
#include "trainscope/optimize.h"
#include "trainscope/replay.h"
#include "trainscope/report_replay.h"

enum { MAX_SCALES = 32 };
enum { FMT_TABLE = 0, FMT_JSON, FMT_CSV };
enum { OPT_TABLE = 0x2002 };   /* --table: long only */

typedef struct replay_args {
    ts_replay_options opts;
    const char  *scales[MAX_SCALES];
    int          format;        /* FMT_TABLE, FMT_JSON or FMT_CSV */
    const char  *table;         /* --table NAME (csv), NULL = the first */
    const char  *export_path;   /* --export, NULL = none */
    const char  *marker;        /* --iteration-marker, NULL = ProfilerStep# */
    bool         windows;       /* --windows: each PATH is one window of the job */
    bool         verbose;       /* --verbose: every warning line, also on a terminal */
    const char  *plan_path;     /* --plan plan.json, NULL = none */
    const char  *cast_trace;    /* --cast-trace RUN: the cast fit of --grad-precision */
    bool         cast_given;    /* --cast-cost A,B given */
} replay_args;

static void usage(FILE *f)
{
    fputs("usage: trainscope replay [OPTIONS] PATH...\n\n"
          "Replay the job's global dependency graph in a discrete-event simulation (GPU\n"
          "streams run one op at a time, compute and communication streams overlap, CPU\n"
          "threads are serial, a rank's collectives share one channel) and compare the\n"
          "predicted iteration time with the measured one. An unmodified replay\n"
          "reproduces the trace; the what-if options predict a changed job.\n\n"
          "options:\n"
          "  --iterations N           compare only the first N iterations (default all)\n"
          "  --format table|json|csv  output format (default table); json times are us,\n"
          "                           csv times integer ns\n"
          "  --table NAME             csv: the table to print: ranks (default) or\n"
          "                           iterations; with --windows, windows (default) or ranks\n"
          "  --export FILE            write the replayed schedule as a Chrome trace\n"
          "  --scale [KIND:]GLOB=F    multiply the time of matching ops by F (repeatable);\n"
          "                           KIND: cpu, launch, runtime, sync, kernel, compute,\n"
          "                           memcpy, memset, memory, comm, collective\n"
          "  --bucket-mb X            regroup the gradient all-reduces into X MiB buckets\n"
          "  --gradients FILE         gradients.json: parameter names and bytes in\n"
          "                           registration order (for --bucket-mb, and the\n"
          "                           sizes of gradient all-reduces a trace lacks)\n"
          "  --trace-bucket-mb X      the bucket cap the trace was recorded with\n"
          "                           (default: inferred from its bucket count)\n"
"  --plan FILE              re-predict a plan of `trainscope optimize` (plan.json;\n"
          "                           with --gradients, and any other what-if)\n"
          "  --grad-precision P       gradient all-reduces at P (bf16, fp16: DDP's compress\n"
          "                           hooks), with the hook's casts (needs --cast-trace or\n"
          "                           --cast-cost)\n"
          "  --cast-trace RUN         fit the cast cost on a trace's cast ops (e.g. a\n"
          "                           precision run: replay --precision-plan's cast fit)\n"
          "  --cast-cost A,B          a cast costs A ns/byte x elements x 6 + B ns\n"
          "  --no-contention          with --bucket-mb on a gloo (CPU) job: keep compute\n"
          "                           times as measured instead of re-timing them for\n"
          "                           their new overlap with the reductions\n"
          "  --link-bound auto|yes|no with --bucket-mb or --plan on a gloo (CPU) job:\n"
          "                           price new buckets on a network link (the rate the\n"
          "                           trace's all-reduces achieved together, shared by\n"
          "                           those in flight) instead of as CPU work; auto\n"
          "                           (default) decides from the trace\n"
          "  --world N                price collectives for N ranks\n"
          "  --bandwidth GBPS         price collectives at this bus bandwidth (GB/s);\n"
          "                           xF: F times what the trace's collectives achieved\n"
          "  --latency-us US          with --bandwidth: fixed cost per collective;\n"
          "                           xF: F times the fixed cost of the trace's\n"
          "                           collectives (calibrated by --nccl-tests, else\n"
          "                           fitted on the trace)\n"
          "  --nccl-tests LOG         calibrate the cost model from an nccl-tests log\n"
          "  --profiler-overhead-us US  the profiler's cost per recorded CPU op, taken\n"
          "                           off the trace: predicts the unprofiled run\n"
          "  --iteration-marker NAME  slice-name prefix of iterations (ProfilerStep#)\n"
          "  --windows                each PATH is one profiling window of the job (a\n"
          "                           directory of its rank files, or one file): each\n"
          "                           is replayed alone and the figures are the medians\n"
          "                           over the windows\n"
          TS_CLI_COMMON_HELP TS_CLI_GRAPH_HELP
          TS_CLI_DIST_HELP
          "  -v, --verbose            every warning line (on a terminal they fold into\n"
          "                           one line per kind, summed over ranks)\n"
          "  -h, --help               this help\n\n"
          "exit codes: 0 ok, 1 nothing to replay, 2 bad input or usage\n", f);
}

/* Ranges of the numeric options: wide enough for any real job, narrow
 * enough that every time derived from them stays within int64 ns (a bucket
 * of 1 TiB at 1 MB/s is 1.1e15 ns). */
#define MIB_MAX   1048576.0   /* --bucket-mb, --trace-bucket-mb: 1 TiB */
#define GBPS_MIN  1e-3        /* --bandwidth: 1 MB/s */
#define GBPS_MAX  1e6
#define US_MAX    1e9         /* --latency-us: 1000 s */
#define WORLD_MAX (1 << 20)   /* --world: ranks */
enum { OPT_PLAN = 0x2001 };   /* --plan: long only */
enum { OPT_GRAD_PREC = 0x2003, OPT_CAST_TRACE, OPT_CAST_COST };   /* long only */
enum { OPT_LINK_BOUND = 0x2010 };   /* --link-bound: long only */
#define FACTOR_MIN 1e-6       /* --bandwidth xF, --latency-us xF */
#define FACTOR_MAX 1e6

static int grad_precision_opt(const char *arg, replay_args *a)
{
    ts_precision p;
    if (!ts_precision_from_name(arg, &p) || p == TS_PREC_FP32) {
        ts_cli_errorf("replay: --grad-precision takes bf16, fp16 or int8, not '%s'", arg);
        return -1;
    }
    a->opts.grad_bytes_per_elem = (uint32_t)ts_precision_bytes(p);
    return 0;
}

static int cast_cost_opt(const char *arg, replay_args *a)
{
    char alpha[64];
    const char *comma = strchr(arg, ',');
    snprintf(alpha, sizeof alpha, "%.*s", comma ? (int)(comma - arg < 63 ? comma - arg : 63) : 0, arg);
    if (!comma || ts_cli_opt_real("replay", "--cast-cost A", alpha, 0, 1e9, &a->opts.cast_alpha_ns_per_byte) ||
        ts_cli_opt_real("replay", "--cast-cost B", comma + 1, 0, 1e12, &a->opts.cast_beta_ns)) {
        if (!comma) ts_cli_errorf("replay: --cast-cost wants NS_PER_BYTE,NS, got '%s'", arg);
        return -1;
    }
    a->cast_given = true;
    return 0;
}

/* --grad-precision's cast cost: --cast-cost, or the fit on --cast-trace's casts. */
static int cast_fit(replay_args *a)
{
    if (!a->opts.grad_bytes_per_elem) return 0;
    if (a->cast_given == !!a->cast_trace) {
        ts_cli_errorf("replay: --grad-precision prices the compress hook's casts: give --cast-trace RUN (a trace "
                      "with cast ops, such as a precision run) or --cast-cost NS_PER_BYTE,NS (one of them)");
        return -1;
    }
    if (a->cast_given) return 0;
    ts_job *t = NULL;
    if (ts_cli_load((char **)&a->cast_trace, 1, NULL, &t) != TS_EXIT_OK) return -1;
    ts_prec_cast_fit fit;
    int rc = ts_prec_cast_fit_trace(t, &fit);
    ts_job_destroy(t);
    if (rc) {
        ts_cli_errorf("replay: --cast-trace %s: %s", a->cast_trace, rc == TS_ENODATA ? "fewer than two casts "
                      "(aten::to / aten::_to_copy with \"Input Dims\") of different sizes: no cost line to fit"
                      : ts_strerror(rc));
        return -1;
    }
    a->opts.cast_alpha_ns_per_byte = fit.alpha_ns_per_byte;
    a->opts.cast_beta_ns = fit.beta_ns;
    fprintf(stderr, "trainscope: replay: cast cost %.4g ns/byte + %.0f ns, fitted on %u casts of %s\n",
            fit.alpha_ns_per_byte, fit.beta_ns, fit.n_casts, a->cast_trace);
    return 0;
}

static int parse_option(int c, replay_args *a)
{
    int64_t v;
    switch (c) {
    case 'i': return ts_cli_opt_count("replay", "--iterations", optarg, &a->opts.max_iterations);
    case 'f':
        a->format = !strcmp(optarg, "table") ? FMT_TABLE : !strcmp(optarg, "json") ? FMT_JSON
                  : !strcmp(optarg, "csv") ? FMT_CSV : -1;
        if (a->format < 0) {
            ts_cli_errorf("replay: --format wants table, json or csv, got '%s'", optarg);
            return -1;
        }
        return 0;
    case 'e': a->export_path = optarg; return 0;
    case 's':
        if (a->opts.n_scales == MAX_SCALES) { ts_cli_errorf("replay: at most %d --scale options", MAX_SCALES); return -1; }
        a->scales[a->opts.n_scales++] = optarg;
        return 0;
    case 'b':
        if (ts_cli_opt_real("replay", "--bucket-mb", optarg, 0, MIB_MAX, &a->opts.bucket_mb)) return -1;
        if (a->opts.bucket_mb > 0) return 0;
        ts_cli_errorf("replay: --bucket-mb wants a size in MiB > 0, got '%s'", optarg);
        return -1;
    case 'g': a->opts.gradients_json = optarg; return 0;
    case 'C': a->opts.no_contention = 1; return 0;
    case 'T':
        if (ts_cli_opt_real("replay", "--trace-bucket-mb", optarg, 0, MIB_MAX, &a->opts.trace_bucket_mb)) return -1;
        if (a->opts.trace_bucket_mb > 0) return 0;
        ts_cli_errorf("replay: --trace-bucket-mb wants a size in MiB > 0, got '%s'", optarg);
        return -1;
    case 'w':
        if (ts_cli_opt_int("replay", "--world", optarg, 1, WORLD_MAX, &v)) return -1;
        a->opts.world = (uint32_t)v;
        return 0;
    case 'B':
        if (optarg[0] == 'x')
            return ts_cli_opt_real("replay", "--bandwidth xF", optarg + 1, FACTOR_MIN, FACTOR_MAX, &a->opts.bandwidth_factor);
        return ts_cli_opt_real("replay", "--bandwidth", optarg, GBPS_MIN, GBPS_MAX, &a->opts.bandwidth_gbps);
    case 'l':
        if (optarg[0] == 'x') {
            if (ts_cli_opt_real("replay", "--latency-us xF", optarg + 1, 0, FACTOR_MAX, &a->opts.latency_factor)) return -1;
            if (a->opts.latency_factor == 0) a->opts.latency_factor = 1e-9;   /* x0: no fixed cost (0 = not asked) */
            return 0;
        }
        return ts_cli_opt_real("replay", "--latency-us", optarg, 0, US_MAX, &a->opts.latency_us);
    case 'n': a->opts.nccl_tests_log = optarg; return 0;
    case 'P': return ts_cli_opt_real("replay", "--profiler-overhead-us", optarg, 0, US_MAX, &a->opts.profiler_overhead_us);
    case 'm': a->marker = optarg; return 0;
    case 'W': a->windows = true; return 0;
    case 'v': a->verbose = true; return 0;
    TS_CLI_COMMON_CASES: return ts_cli_opt_common("replay", c, optarg);
    case OPT_PLAN: a->plan_path = optarg; return 0;
    case OPT_TABLE: a->table = optarg; return 0;
    case OPT_GRAD_PREC: return grad_precision_opt(optarg, a);
    case OPT_CAST_TRACE: a->cast_trace = optarg; return 0;
    case OPT_CAST_COST: return cast_cost_opt(optarg, a);
    case OPT_LINK_BOUND:
        a->opts.link_bound = !strcmp(optarg, "yes") ? 1 : !strcmp(optarg, "no") ? -1 : !strcmp(optarg, "auto") ? 0 : 2;
        if (a->opts.link_bound != 2) return 0;
        ts_cli_errorf("replay: --link-bound wants auto, yes or no, got '%s'", optarg);
        return -1;
    case 'h': usage(stdout); return 1;
    default: return -1;
    }
}

static int parse_args(int argc, char **argv, replay_args *a)
{
    static const struct option longopts[] = {
        {"iterations", required_argument, 0, 'i'}, {"format", required_argument, 0, 'f'},
        {"export", required_argument, 0, 'e'},     {"scale", required_argument, 0, 's'},
        {"bucket-mb", required_argument, 0, 'b'},  {"gradients", required_argument, 0, 'g'},
        {"trace-bucket-mb", required_argument, 0, 'T'}, {"no-contention", no_argument, 0, 'C'},
        {"world", required_argument, 0, 'w'},      {"bandwidth", required_argument, 0, 'B'},
        {"latency-us", required_argument, 0, 'l'}, {"nccl-tests", required_argument, 0, 'n'},
        {"iteration-marker", required_argument, 0, 'm'}, {"windows", no_argument, 0, 'W'},
        {"profiler-overhead-us", required_argument, 0, 'P'}, {"plan", required_argument, 0, OPT_PLAN},
        {"table", required_argument, 0, OPT_TABLE}, {"grad-precision", required_argument, 0, OPT_GRAD_PREC},
        {"cast-trace", required_argument, 0, OPT_CAST_TRACE}, {"cast-cost", required_argument, 0, OPT_CAST_COST},
        {"link-bound", required_argument, 0, OPT_LINK_BOUND},
        {"verbose", no_argument, 0, 'v'}, TS_CLI_COMMON_LONGOPTS, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->opts.size = sizeof a->opts;
    a->opts.scales = a->scales;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
        int rc = parse_option(c, a);
        if (rc > 0) return 1;
        if (rc < 0) {
            if (c == '?' || c == ':')
                ts_cli_errorf("replay: unknown or incomplete option '%s' (see 'trainscope replay --help')", argv[optind - 1]);
            return -1;
        }
    }
    if (ts_cli_need_trace("replay", optind, argc)) return -1;
    a->opts.window_all = ts_cli_window_all();
    if (a->table && a->format != FMT_CSV) {
        ts_cli_errorf("replay: --table goes with --format csv");
        return -1;
    }
    if (a->plan_path && a->opts.bucket_mb > 0) {
        ts_cli_errorf("replay: --plan sets the buckets; drop --bucket-mb");
        return -1;
    }
    if (cast_fit(a)) return -1;
    if (a->windows && a->export_path) {
        ts_cli_errorf("replay: --export draws one schedule; give it one window, not --windows");
        return -1;
    }
    return 0;
}

/* --windows: one job traced in several profiling windows, each replayed
 * alone with the same options, one after another so memory is one window's;
 * the library keeps each window's figures and takes the medians
 * (ts_replay_windows). On failure prints why, naming the window, and returns
 * the exit status (nothing else is printed: no partial output). */
static int windows_replay(char **paths, uint32_t n, const replay_args *a, ts_replay_windows *wr)
{
    for (uint32_t i = 0; i < n; i++) {
        ts_job *t = NULL;
        if (ts_cli_load(&paths[i], 1, a->marker, &t) != TS_EXIT_OK) return TS_EXIT_BAD;
        ts_error err = {0};
        ts_replay *r = NULL;
        int rc = ts_replay_run(t, &a->opts, &r, &err);
        if (rc) {
            const char *why = err.msg[0] ? err.msg : ts_strerror(rc);
            if (!strncmp(why, "replay: ", 8)) why += 8;   /* said once, before the window */
            ts_cli_errorf("replay: window %s: %s", paths[i], why);
            ts_job_destroy(t);
            return ts_cli_exit_for(rc);
        }
        rc = ts_replay_windows_add(wr, paths[i], a->format == FMT_JSON ? t : NULL, r, &err);
        if (rc == TS_OK && a->format != FMT_JSON) ts_report_warnings(stderr, t, NULL, 0, ts_report_warn_all(a->verbose));
        ts_replay_destroy(r);
        ts_job_destroy(t);
        if (rc) { ts_cli_errorf("%s", err.msg); return TS_EXIT_BAD; }
    }
    return TS_EXIT_OK;
}

static int cmd_replay_windows(char **paths, uint32_t n, replay_args *a)
{
    ts_replay_windows *wr = NULL;
    if (ts_replay_windows_create(&wr)) { ts_cli_errorf("replay: out of memory"); return TS_EXIT_BAD; }
    int ex = windows_replay(paths, n, a, wr);
    if (ex == TS_EXIT_OK) {
        ts_error err = {0};
        int rc = a->format == FMT_JSON ? ts_report_replay_windows_json(stdout, wr)
               : a->format == FMT_CSV ? ts_report_replay_windows_csv(stdout, stderr, wr, a->table, a->verbose, &err)
                                      : ts_report_replay_windows_table(stdout, stderr, wr, a->verbose);
        if (rc == TS_EINVAL) ts_cli_errorf("%s", err.msg);   /* no such --table */
        else if (rc) ts_cli_errorf("writing the result failed: %s", ts_strerror(rc));
        if (rc) ex = TS_EXIT_BAD;
    }
    ts_replay_windows_destroy(wr);
    return ex;
}

static int cmd_replay_one(int argc, char **argv, replay_args *ap);

int ts_cmd_replay(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)   /* the precision what-if has options of its own */
        if (!strncmp(argv[i], "--precision-", 12) || (!strcmp(argv[i], "--plan") && i + 1 < argc &&
                                                      ts_optimize_plan_is_precision(argv[i + 1])))
            return ts_cmd_replay_precision(argc, argv);
    replay_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_optimize_plan *plan = NULL;
    if (a.plan_path) {
        ts_error perr = {0};
        int prc2 = ts_optimize_plan_load(a.plan_path, &a.opts, &a.opts, &plan, &perr);
        if (prc2) { ts_cli_errorf("%s", perr.msg); return TS_EXIT_BAD; }
    }
    int ex = cmd_replay_one(argc, argv, &a);
    ts_optimize_plan_free(plan);
    return ex;
}

static int cmd_replay_one(int argc, char **argv, replay_args *ap)
{
    replay_args a = *ap;
    if (a.windows) return cmd_replay_windows(argv + optind, (uint32_t)(argc - optind), &a);
    ts_job *t = NULL;
    ts_graph *g = NULL;
    ts_graph_options go = {.size = sizeof go};
    int ex = ts_cli_load_graph(argv + optind, argc - optind, a.marker, a.opts.n_scales > 0, &go, &t, &g);
    if (ex != TS_EXIT_OK) return ex;
    ts_error err = {0};
    ts_replay *r = NULL;
    int rc = ts_replay_run_graph(g, &a.opts, &r, &err);
    if (rc) {
        ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
        ts_graph_destroy(g);
        ts_job_destroy(t);
        return ts_cli_exit_for(rc);
    }
    if (a.format == FMT_JSON) {
        int jrc = ts_report_replay_json(stdout, t, r);
        (void)jrc;   /* a failed write of stdout: main says so once, naming standard output */
    }
    else if (a.format == FMT_CSV) rc = ts_report_replay_csv(stdout, stderr, t, r, a.table, a.verbose, &err);
    else rc = ts_report_replay_table(stdout, stderr, t, r, a.verbose);
    if (rc == TS_OK && a.export_path) {
        rc = ts_replay_export_chrome(r, a.export_path, &err);
        if (rc) ts_cli_errorf("%s", err.msg);
    } else if (rc == TS_EINVAL) {
        ts_cli_errorf("%s", err.msg);   /* no such --table */
    } else if (rc) {
        ts_cli_errorf("writing the table failed: %s", ts_strerror(rc));
    }
    ts_replay_destroy(r);
    ts_graph_destroy(g);
    ts_job_destroy(t);
    return rc ? TS_EXIT_BAD : TS_EXIT_OK;
}
