/* cmd_diff.c - `trainscope diff A B`: HTA's trace diff, rank by rank: which
 * ops and kernels were added, removed, or ran more or less often and for how
 * much longer in B than in A (ts_diff_compute, src/analyze/diff.c).
 *
 * Thin: parse options, load both (ts_diff_load: each rank kept as the
 * slices the diff reads; --in-memory: whole), compute; ts_report_diff (src/report/diff.c)
 * writes it: table rows per rank are the largest time changes first, cut to
 * --top; json and csv give every row.
 * Exit: 0 ok, 1 nothing to compare (no common rank, an iteration missing),
 * 2 bad input or usage.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "trainscope/analyze.h"
#include "trainscope/ingest.h"
#include "trainscope/report.h"

typedef struct diff_args {
    ts_diff_opts   opts;
    ts_report_opts out;      /* --format, --top, --width, --table, -o */
    const char    *marker;
} diff_args;

static void usage(FILE *f)
{
    fputs("usage: trainscope diff [OPTIONS] A B\n\n"
          "Compare two traces of a job (A before a change, B after), rank by rank (the\n"
          "rank numbers both have), as HTA's trace diff does: per op or kernel name, its\n"
          "count and total time in A and in B, the differences, and whether it was added\n"
          "(only in B), removed (only in A), ran more (+), fewer (-) or as many times (=).\n"
          "By default one iteration of each: every rank's first ProfilerStep (a host\n"
          "slice counts in the step its start lies in, a GPU op in its launching call's).\n"
          "A and B are each a trace file or a directory of per-rank traces.\n\n"
          "options:\n"
          "  --iteration N            compare ProfilerStep#N of both\n"
          "  --whole                  compare every slice of the traces, not one iteration\n"
          "  --device cpu|gpu|all     host slices, GPU ops, or both (default)\n"
          "  --iteration-marker NAME  slice-name prefix of iterations (ProfilerStep#)\n"
          "  --top N                  table: the N largest time changes per rank (default 20, 0 = all)\n"
          "  --format table|json|csv  output format (default table); times in json are us\n"
          "  --width N                table width in columns (default 80); 0 = never cut names\n"
          TS_CLI_CSV_HELP("ops, ranks (times in ns; default: the first)")
          TS_CLI_MAX_RSS_HELP TS_CLI_IN_MEMORY_HELP
          "  -h, --help               this help\n\n"
          "exit codes: 0 ok, 1 nothing to compare, 2 bad input or usage\n", f);
}

static int parse_args(int argc, char **argv, diff_args *a)
{
    static const struct option longopts[] = {
        {"iteration", required_argument, 0, 'i'}, {"whole", no_argument, 0, 'W'},
        {"device", required_argument, 0, 'd'}, {"iteration-marker", required_argument, 0, 'm'},
        {"top", required_argument, 0, 't'}, {"format", required_argument, 0, 'f'},
        {"width", required_argument, 0, 'w'}, {"table", required_argument, 0, 'T'}, {"help", no_argument, 0, 'h'},
        {"max-rss", required_argument, 0, TS_CLI_OPT_MAX_RSS}, {"in-memory", no_argument, 0, TS_CLI_OPT_IN_MEMORY},
        {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->opts.size = sizeof a->opts;
    a->out.size = sizeof a->out;
    a->out.top = 20;
    a->out.width = 80;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'i': {
            int64_t lo, hi;
            if (ts_cli_opt_range("diff", "--iteration", optarg, &lo, &hi)) return -1;
            if (lo != hi) { ts_cli_errorf("diff: --iteration wants one step number, got '%s'", optarg); return -1; }
            a->opts.has_iteration = true;
            a->opts.iteration = lo;
            break;
        }
        case 'W': a->opts.whole = true; break;
        case 'd':
            if (!strcmp(optarg, "all")) a->opts.device = TS_DIFF_ALL;
            else if (!strcmp(optarg, "cpu")) a->opts.device = TS_DIFF_CPU;
            else if (!strcmp(optarg, "gpu")) a->opts.device = TS_DIFF_GPU;
            else { ts_cli_errorf("diff: --device wants cpu, gpu or all, got '%s'", optarg); return -1; }
            break;
        case 'm': a->marker = optarg; break;
        case 't': if (ts_cli_opt_count("diff", "--top", optarg, &a->out.top)) return -1; break;
        case 'w': if (ts_cli_opt_width("diff", optarg, &a->out.width)) return -1; break;
        case 'f': case 'T': case 'o':
            if (ts_cli_opt_output("diff", c, optarg, &a->out) < 0) return -1;
            break;
        case TS_CLI_OPT_MAX_RSS: case TS_CLI_OPT_IN_MEMORY:
            if (ts_cli_opt_common("diff", c, optarg)) return -1;
            break;
        case 'h': usage(stdout); return 1;
        default: return ts_cli_opt_unknown("diff", argv[optind - 1]);
        }
    }
    if (a->opts.whole && a->opts.has_iteration) {
        ts_cli_errorf("diff: --whole and --iteration exclude each other");
        return -1;
    }
    if (ts_cli_csv_dest("diff", a->out.format, a->out.table, a->out.dir)) return -1;
    if (argc - optind != 2) {
        ts_cli_errorf("diff: expected two traces A B (see 'trainscope diff --help')");
        return -1;
    }
    return 0;
}

int ts_cmd_diff(int argc, char **argv)
{
    diff_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_job *ta = NULL, *tb = NULL;
    if (ts_cli_load_diff(argv + optind, 1, a.marker, &ta)) return TS_EXIT_BAD;
    if (ts_cli_load_diff(argv + optind + 1, 1, a.marker, &tb)) { ts_job_destroy(ta); return TS_EXIT_BAD; }
    ts_error err = {0};
    ts_diff *d = NULL;
    int rc = ts_diff_compute(ta, tb, &a.opts, &d, &err);
    if (!rc) {
        if (a.out.format != TS_FMT_JSON) {   /* json carries them inside */
            ts_report_warnings(stderr, ta, NULL, 0, ts_report_warn_all(false));
            ts_report_warnings(stderr, tb, NULL, 0, ts_report_warn_all(false));
        }
        rc = ts_report_diff(d, ta, tb, &a.out, stdout, &err);
    }
    ts_diff_destroy(d);
    ts_job_destroy(ta);
    ts_job_destroy(tb);
    if (rc) {
        ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
        return ts_cli_exit_for(rc);
    }
    return fflush(stdout) == 0 ? TS_EXIT_OK : TS_EXIT_BAD;
}
