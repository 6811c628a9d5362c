/* cmd_critical_path.c - `trainscope critical-path PATH...`: the longest
 * dependency path of one iteration across ranks, where its time went, which
 * rank made the others wait, and the ops on it.
 *
 * Thin: parse options, load, build the global graph, search; src/report/
 * critical_path.c writes it (table, json or csv) and the optional Chrome
 * trace with the path marked.
 * Exit: 0 ok, 1 nothing to follow, 2 bad input or usage.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "trainscope/graph.h"
#include "trainscope/ingest.h"
#include "trainscope/report.h"

typedef struct cp_args {
    int64_t        iteration;   /* -1 = last complete one */
    ts_report_opts out;         /* --format, --top (rows of top ops), --table, -o */
    const char    *export_path; /* NULL = none */
    const char    *marker;      /* --iteration-marker */
    int            leaf_ops;
    int            no_align;    /* --no-align: keep every rank's clock */
    int            verbose;     /* every warning line, also on a terminal */
} cp_args;

static void usage(FILE *f)
{
    fputs("usage: trainscope critical-path [OPTIONS] PATH...\n\n"
          "The longest dependency path of one iteration through the global graph of\n"
          "all ranks (CPU ops, launches, kernels, copies, collectives matched across\n"
          "ranks after clock alignment), split into compute, communication, memory,\n"
          "launch, cpu and waiting on another rank, with the ops that make it up.\n"
          "PATH is a trace file or a directory of per-rank traces.\n\n"
          "options:\n"
          "  --iteration N            ProfilerStep#N (default: the last one all ranks have;\n"
          "                           the whole trace when there are no iterations)\n"
          "  --format table|json|csv  output format (default table); times in json are us\n"
          TS_CLI_CSV_HELP("categories, wait_on_rank, ops, path, ranks,\n"
          "                           edges (times in ns; default: the first)")
          "  --export FILE            write a Chrome trace with the path marked\n"
          "                           (args.critical = 1, flow arrows) for Perfetto UI\n"
          "  --leaf-ops               CPU nodes are leaf ops (default: top-level ops)\n"
          "  --no-align               keep each rank's clock (default: align ranks on\n"
          "                           their matched collectives)\n"
          "  --top N                  ops listed (default 10)\n"
          "  --iteration-marker NAME  slice-name prefix of iterations (ProfilerStep#)\n"
          TS_CLI_COMMON_HELP TS_CLI_GRAPH_HELP
          TS_CLI_DIST_HELP
          "                           (--window all: the whole trace, not an iteration)\n"
          "  -v, --verbose            every warning line (on a terminal warnings are\n"
          "                           folded into one line per kind, summed over ranks\n"
          "                           and files; piped, and in json, all are kept)\n"
          "  -h, --help               this help\n\n"
          "json: length_us, iteration_us, categories (compute/communication/memory/\n"
          "launch/cpu/wait_on_rank _us, summing to length_us; a job without GPU work\n"
          "counts its CPU ops as compute), waited_for_rank,\n"
          "wait_on_rank [{rank, wait_us}], top_ops [{rank, kind, name, count, total_us,\n"
          "edge (kind \"gap\": time between ops that no op owns)}] (all rows together:\n"
          "the path's length),\n"
          "path [{rank, kind, name, start_us (aligned clock), dur_us, on_path_us (its own\n"
          "time on the path, as in top_ops)}], each node once,\n"
          "ranks [{rank, file, clock_offset_ns, matched_collectives, residual_median_ns,\n"
          "residual_max_ns, causality_violations}], graph_nodes, graph_edges,\n"
          "collectives, edges_by_kind, warnings [{rank, file, kind, count, first}]: the\n"
          "trace's ingest warnings, then the graph's and the path's (kind graph or\n"
          "critical_path, file \"\", rank -1 unless the line names one).\n\n"
          "exit codes: 0 ok, 1 nothing to follow, 2 bad input or usage\n", f);
}

static int parse_args(int argc, char **argv, cp_args *a)
{
    static const struct option longopts[] = {
        {"iteration", required_argument, 0, 'i'}, {"format", required_argument, 0, 'f'},
        {"export", required_argument, 0, 'e'}, {"leaf-ops", no_argument, 0, 'l'}, {"no-align", no_argument, 0, 'n'},
        {"top", required_argument, 0, 't'}, {"iteration-marker", required_argument, 0, 'm'},
        {"verbose", no_argument, 0, 'v'}, {"table", required_argument, 0, 'T'}, TS_CLI_COMMON_LONGOPTS, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->iteration = -1;
    a->out.size = sizeof a->out;
    a->out.top = 10;
    optind = 1;
    opterr = 0;
    int c;
    int64_t v;
    while ((c = getopt_long(argc, argv, "hvo:", longopts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (ts_cli_opt_int("critical-path", "--iteration", optarg, 0, INT64_MAX, &a->iteration)) return -1;
            break;
        case 'f': case 'T': case 'o':
            if (ts_cli_opt_output("critical-path", c, optarg, &a->out) < 0) return -1;
            break;
        case 'e': a->export_path = optarg; break;
        case 'l': a->leaf_ops = 1; break;
        case 'n': a->no_align = 1; break;
        case 't':
            if (ts_cli_opt_int("critical-path", "--top", optarg, 0, INT32_MAX, &v)) return -1;
            a->out.top = (uint32_t)v;
            break;
        case 'm': a->marker = optarg; break;
        case 'v': a->verbose = 1; break;
        TS_CLI_COMMON_CASES:
            if (ts_cli_opt_common("critical-path", c, optarg)) return -1;
            break;
        case 'h': usage(stdout); return 1;
        default:
            return ts_cli_opt_unknown("critical-path", argv[optind - 1]);
        }
    }
    if (ts_cli_need_trace("critical-path", optind, argc) ||
        ts_cli_csv_dest("critical-path", a->out.format, a->out.table, a->out.dir))
        return -1;
    if (ts_cli_window_all()) {
        if (a->iteration >= 0) {
            ts_cli_errorf("critical-path: --iteration and --window all ask for different windows; give one");
            return -1;
        }
        a->iteration = TS_CP_WHOLE_TRACE;
    }
    return 0;
}

static int run(const cp_args *a, ts_job *t, ts_graph *g)
{
    ts_error err = {0};
    ts_critical_path *cp = NULL;
    int rc = ts_critical_path_create(g, a->iteration, &cp, &err);
    if (rc == TS_OK && a->export_path) rc = ts_report_critical_path_chrome(cp, a->export_path, &err);
    if (rc == TS_OK) {
        if (a->out.format != TS_FMT_JSON)   /* json carries them inside */
            ts_report_warnings_graph(stderr, t, g, cp, ts_report_warn_all(a->verbose));
        if ((rc = ts_report_critical_path(cp, t, &a->out, stdout, &err)) == TS_ENODATA) rc = TS_EIO;
    }
    if (rc != TS_OK) ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
    ts_critical_path_destroy(cp);
    ts_graph_destroy(g);
    return rc == TS_OK ? TS_EXIT_OK : rc == TS_ENODATA ? TS_EXIT_NOTHING : TS_EXIT_BAD;
}

int ts_cmd_critical_path(int argc, char **argv)
{
    cp_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_job *t = NULL;
    ts_graph *g = NULL;
    ts_graph_options go = {.size = sizeof go, .leaf_ops = a.leaf_ops, .no_align = a.no_align};
    int ex = ts_cli_load_graph(argv + optind, argc - optind, a.marker, a.export_path != NULL, &go, &t, &g);
    if (ex != TS_EXIT_OK) return ex;
    int code = run(&a, t, g);   /* destroys g */
    ts_job_destroy(t);
    return code;
}
