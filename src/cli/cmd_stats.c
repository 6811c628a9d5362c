/* cmd_stats.c - `trainscope stats PATH...`: per-name duration statistics of
 * CPU ops, kernels, memcpy/memset, runtime calls and collectives, per rank.
 *
 * Thin: parse options, load, ts_stats_compute, ts_report_stats
 * (src/report/stats.c) writes it.
 * Exit: 0 ok, 1 no iteration in the asked range, 2 bad input or usage.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "trainscope/analyze.h"
#include "trainscope/ingest.h"
#include "trainscope/report.h"

typedef struct stats_args {
    ts_stats_opts  opts;
    ts_report_opts out;     /* --format, --width, --table, -o */
    const char    *marker;  /* --iteration-marker, NULL = ProfilerStep# */
    int            verbose; /* --verbose: every warning line, also on a terminal */
} stats_args;

static void usage(FILE *f)
{
    fputs("usage: trainscope stats [OPTIONS] PATH...\n\n"
          "Per-name duration statistics (count, total, mean, median, min, max, stddev,\n"
          "% of the iteration window) of CPU ops, kernels, memcpy/memset, runtime calls\n"
          "and collectives, per rank. PATH is a trace file or a directory of per-rank\n"
          "traces (.json, .json.gz, .json.zst). A slice counts when it starts in the\n"
          "window (GPU ops: when their launch does); %iter sums whole durations, so\n"
          "nested ops, parallel threads and GPU streams can take it past 100.\n\n"
          "options:\n"
          "  --top N                  keep the N largest totals per rank and category\n"
          "  --by name|rank|category  one row per name (default), per rank and category,\n"
          "                           or per category over all ranks\n"
          "  --iterations A:B         only ProfilerStep#A..#B (inclusive); A: or :B open\n"
          "  --iteration-marker NAME  slice-name prefix of iterations (ProfilerStep#)\n"
          "  --format table|json|csv  output format (default table); times in json are us\n"
          "  --width N                table width in columns (default 80); 0 = never cut names\n"
          TS_CLI_CSV_HELP("rows, windows (times in ns; default: the first)")
          TS_CLI_COMMON_HELP TS_CLI_IN_MEMORY_HELP
          TS_CLI_DIST_HELP
          "  -v, --verbose            every warning line (on a terminal: one per kind,\n"
          "                           summed over files)\n"          "  -h, --help               this help\n\n"
          "exit codes: 0 ok, 1 nothing to analyse (no iteration in the window, no op in\n"
          "it), 2 bad input or usage\n", f);
}

static int parse_args(int argc, char **argv, stats_args *a)
{
    static const struct option longopts[] = {
        {"top", required_argument, 0, 't'}, {"by", required_argument, 0, 'b'},
        {"iterations", required_argument, 0, 'i'}, {"iteration-marker", required_argument, 0, 'm'},
        {"format", required_argument, 0, 'f'}, {"width", required_argument, 0, 'w'},
        {"table", required_argument, 0, 'T'}, TS_CLI_COMMON_LONGOPTS, {"verbose", no_argument, 0, 'v'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->out.size = sizeof a->out;
    a->out.width = 80;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "hvo:", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (ts_cli_opt_count("stats", "--top", optarg, &a->opts.top)) return -1;
            break;
        case 'b':
            if (!strcmp(optarg, "name")) a->opts.by = TS_STATS_BY_NAME;
            else if (!strcmp(optarg, "rank")) a->opts.by = TS_STATS_BY_RANK;
            else if (!strcmp(optarg, "category")) a->opts.by = TS_STATS_BY_CATEGORY;
            else { ts_cli_errorf("stats: --by wants name, rank or category, got '%s'", optarg); return -1; }
            break;
        case 'i':
            if (ts_cli_opt_range("stats", "--iterations", optarg, &a->opts.iter_first, &a->opts.iter_last)) return -1;
            a->opts.has_iterations = true;
            break;
        case 'm': a->marker = optarg; break;
        case 'w':
            if (ts_cli_opt_width("stats", optarg, &a->out.width)) return -1;
            break;
        case 'f': case 'T': case 'o':
            if (ts_cli_opt_output("stats", c, optarg, &a->out) < 0) return -1;
            break;
        TS_CLI_COMMON_CASES:
            if (ts_cli_opt_common("stats", c, optarg)) return -1;
            break;
        case 'v': a->verbose = 1; break;
        case 'h': usage(stdout); return 1;
        default:
            return ts_cli_opt_unknown("stats", argv[optind - 1]);
        }
    }
    if (ts_cli_need_trace("stats", optind, argc) || ts_cli_csv_dest("stats", a->out.format, a->out.table, a->out.dir))
        return -1;
    a->opts.window_all = ts_cli_window_all();
    return 0;
}

int ts_cmd_stats(int argc, char **argv)
{
    stats_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_job *t = NULL;
    if (ts_cli_load_stats(argv + optind, argc - optind, a.marker, &t)) return TS_EXIT_BAD;
    ts_error err = {0};
    ts_stats *st = NULL;
    int rc = ts_stats_compute(t, &a.opts, &st, &err);
    if (rc) {
        ts_cli_errorf("%s", err.msg);
        ts_job_destroy(t);
        return ts_cli_exit_for(rc);
    }
    if (a.out.format != TS_FMT_JSON) ts_report_warnings(stderr, t, NULL, 0, ts_report_warn_all(a.verbose));   /* json carries them inside */
    rc = ts_report_stats(st, t, &a.out, stdout, &err);
    bool nothing = st->n_rows == 0;
    ts_stats_destroy(st);
    ts_job_destroy(t);
    if (rc) { ts_cli_errorf("%s", err.msg); return TS_EXIT_BAD; }
    return nothing ? TS_EXIT_NOTHING : TS_EXIT_OK;
}
