/* cmd_breakdown.c - `trainscope breakdown PATH...`: per rank, what Holistic
 * Trace Analysis computes (definitions in src/analyze/breakdown.c): temporal
 * breakdown, kernel types, top kernels, idle time and queue length per
 * stream, launch statistics, memcpy/memset bandwidth; per thread for CPU-only
 * ranks.
 *
 * Thin: parse options, load (ts_breakdown_load: each rank kept as what the
 * breakdown reads, the stragglers' graph built rank by rank; --in-memory:
 * whole ranks, the graph after), ts_breakdown_compute (and
 * ts_stragglers_compute on several ranks); ts_report_breakdown
 * (src/report/breakdown.c) writes it as tables, JSON or CSV.
 * Exit: 0 ok, 1 no GPU op and no CPU slice to analyze, 2 bad input or usage.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "trainscope/analyze.h"
#include "trainscope/graph.h"
#include "trainscope/ingest.h"
#include "trainscope/report.h"

typedef struct bd_args {
    ts_breakdown_opts opts;
    ts_report_opts    out;     /* --format, --width, --table, -o */
    const char       *marker;
    int               verbose; /* --verbose: every warning line, also on a terminal */
} bd_args;

static void usage(FILE *f)
{
    fputs("usage: trainscope breakdown [OPTIONS] PATH...\n\n"
          "Where each rank's time went, with Holistic Trace Analysis' definitions:\n"
          "temporal breakdown over the GPU span of complete iterations (idle, compute,\n"
          "non-compute = communication + memory), kernel types and top kernels, idle time\n"
          "per stream (host wait, kernel wait, other), communication/computation overlap,\n"
          "kernel launch statistics, queue length per stream, memcpy/memset bandwidth.\n"
          "CPU-only ranks: compute, communication and idle time per thread. Several ranks:\n"
          "stragglers: lateness of each rank at each collective matched across ranks (on\n"
          "aligned clocks), who waited for whom and how long, summed per iteration.\n\n"
          "options:\n"
          "  --top N                   kernels listed per kernel type (default 5, 0 = all)\n"
          "  --kernel-delay NS         HTA consecutive_kernel_delay for idle time (default 30)\n"
          "  --iterations A:B          only GPU ops launched in ProfilerStep#A..#B (CPU-only:\n"
          "                            their time) instead of HTA's drop-the-last-step rule\n"
          "  --iteration-marker NAME   slice-name prefix of iterations (ProfilerStep#)\n"
          "  --format table|json|csv   output format (default table); json times are us\n"
          "  --width N                 table width in columns (default 80); 0 = never cut names\n"
          TS_CLI_CSV_HELP("temporal, kernel_types, kernels, streams,\n"
          "                           launches, memory_bandwidth, threads, stragglers,\n"
          "                           straggler_pairs, straggler_iterations,\n"
          "                           straggler_collectives (times in ns; default:\n"
          "                           the first)")
          TS_CLI_COMMON_HELP TS_CLI_IN_MEMORY_HELP
          "  -v, --verbose            every warning line (on a terminal: one per kind,\n"
          "                           summed over files)\n"          "                           (--window: the CPU-only threads' window; GPU ops\n"
          "                           follow HTA's filter or --iterations)\n"
          "  -h, --help                this help\n\n"
          "exit codes: 0 ok, 1 nothing to analyze (or no iteration in the range),\n"
          "2 bad input or usage\n", f);
}

static int parse_args(int argc, char **argv, bd_args *a)
{
    static const struct option longopts[] = {
        {"top", required_argument, 0, 't'}, {"kernel-delay", required_argument, 0, 'd'},
        {"iterations", required_argument, 0, 'i'},
        {"iteration-marker", required_argument, 0, 'm'}, {"format", required_argument, 0, 'f'},
        {"width", required_argument, 0, 'w'}, {"table", required_argument, 0, 'T'}, TS_CLI_COMMON_LONGOPTS, {"verbose", no_argument, 0, 'v'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->opts.top_kernels = 5;
    a->out.size = sizeof a->out;
    a->out.width = 80;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "hvo:", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (ts_cli_opt_count("breakdown", "--top", optarg, &a->opts.top_kernels)) return -1;
            break;
        case 'd':
            if (ts_cli_opt_int("breakdown", "--kernel-delay", optarg, 1, 3600000000000LL,   /* 1 ns to 1 h */
                               &a->opts.consecutive_kernel_delay_ns)) return -1;
            break;
        case 'm': a->marker = optarg; break;
        case 'i':
            if (ts_cli_opt_range("breakdown", "--iterations", optarg, &a->opts.iter_first, &a->opts.iter_last)) return -1;
            a->opts.has_iterations = true;
            break;
        case 'w':
            if (ts_cli_opt_width("breakdown", optarg, &a->out.width)) return -1;
            break;
        case 'f': case 'T': case 'o':
            if (ts_cli_opt_output("breakdown", c, optarg, &a->out) < 0) return -1;
            break;
        TS_CLI_COMMON_CASES:
            if (ts_cli_opt_common("breakdown", c, optarg)) return -1;
            break;
        case 'v': a->verbose = 1; break;
        case 'h': usage(stdout); return 1;
        default:
            return ts_cli_opt_unknown("breakdown", argv[optind - 1]);
        }
    }
    if (ts_cli_need_trace("breakdown", optind, argc) ||
        ts_cli_csv_dest("breakdown", a->out.format, a->out.table, a->out.dir))
        return -1;
    a->opts.window_all = ts_cli_window_all();
    return 0;
}

/* Stragglers of a multi-rank trace, through the global graph (matched
 * collectives, aligned clocks): *g as loaded (with_graph; NULL when it could
 * not be built, gerr says why) or built here. NULL with one rank (and *g
 * too), or when the graph cannot be built (then *why says so, a warning; the
 * rest of the breakdown stands). */
static ts_stragglers *stragglers_of(const ts_job *t, ts_graph **g, bool with_graph, const ts_error *gerr, char *why,
                                    size_t why_size)
{
    if (ts_job_n_ranks(t) < 2) { ts_graph_destroy(*g); *g = NULL; return NULL; }
    ts_stragglers *st = NULL;
    ts_error err = {0};
    if (with_graph && !*g) err = *gerr;
    if ((with_graph ? !*g : ts_graph_create(t, NULL, g, &err) != TS_OK) || ts_stragglers_compute(*g, &st, &err))
        snprintf(why, why_size, "no straggler report: %s", err.msg);
    if (st && st->n_colls == 0) { ts_stragglers_destroy(st); st = NULL; }
    return st;
}

/* Nothing to analyze: no rank has a GPU op or a CPU thread with work. */
static bool empty(const ts_breakdown *b)
{
    for (uint32_t i = 0; i < b->n_ranks; i++)
        if (b->ranks[i].has_gpu || b->ranks[i].n_threads) return false;
    return true;
}

int ts_cmd_breakdown(int argc, char **argv)
{
    bd_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_job *t = NULL;
    ts_graph *g = NULL;   /* lives as long as st, which borrows its names */
    ts_error err = {0}, gerr = {0};
    bool with_graph;
    if (ts_cli_load_breakdown(argv + optind, argc - optind, a.marker, &t, &g, &gerr, &with_graph)) return TS_EXIT_BAD;
    int rc;
    ts_breakdown *b = NULL;
    if ((rc = ts_breakdown_compute(t, &a.opts, &b, &err))) {
        ts_cli_errorf("%s", err.msg);
        ts_graph_destroy(g);
        ts_job_destroy(t);
        return ts_cli_exit_for(rc);
    }
    int exit_code = TS_EXIT_OK;
    char why[sizeof err.msg + 32] = "";   /* the stragglers' warning, "" when none */
    if (empty(b)) { ts_graph_destroy(g); g = NULL; }
    ts_stragglers *st = empty(b) ? NULL : stragglers_of(t, &g, with_graph, &gerr, why, sizeof why);
    if (why[0] && a.out.format != TS_FMT_JSON) fprintf(stderr, "trainscope: warning: %s\n", why);   /* json carries it inside */
    if (empty(b)) {
        ts_cli_errorf("breakdown: no GPU operation and no CPU slice to analyze");
        exit_code = TS_EXIT_NOTHING;
    } else {
        if (a.out.format != TS_FMT_JSON) ts_report_warnings_graph(stderr, t, g, NULL, ts_report_warn_all(a.verbose));
        if (ts_report_breakdown(b, st, t, g, why, &a.out, stdout, &err)) {
            ts_cli_errorf("%s", err.msg);
            exit_code = TS_EXIT_BAD;
        }
    }
    ts_stragglers_destroy(st);
    ts_graph_destroy(g);
    ts_breakdown_destroy(b);
    ts_job_destroy(t);
    return exit_code;
}
