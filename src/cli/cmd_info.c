/* cmd_info.c - `trainscope info PATH...`: what was read, per rank: the file,
 * the format its reader recognized and what that reader recorded about it
 * (for an Nsight Systems export: the nsys version, export schema and the
 * table layout found), and the model's row counts.
 *
 * Not for: analysis (stats, breakdown). Thin: parse options, load
 * (ts_job_load_info: each rank kept as what info shows, not its events;
 * --in-memory: whole); ts_report_info (src/report/info.c) writes it.
 * Exit: 0 ok, 2 bad input or usage.
 */
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"
#include "trainscope/ingest.h"
#include "trainscope/model.h"
#include "trainscope/report.h"

static void usage(FILE *f)
{
    fputs("usage: trainscope info [OPTIONS] PATH...\n\n"
          "What each rank was read from: the file, its format, what the reader recorded\n"
          "about it (an Nsight Systems export: nsys version, export schema, the table\n"
          "layout found; a Kineto trace: its top-level string members), and how many\n"
          "tracks, slices, instants, counters, flows and iterations it holds.\n\n"
          "options:\n"
          "  --format table|json|csv  output format (default table)\n"
          TS_CLI_CSV_HELP("ranks, meta (default: the first)")
          TS_CLI_MAX_RSS_HELP TS_CLI_IN_MEMORY_HELP
          "  -h, --help               this help\n\n"
          "exit codes: 0 ok, 2 bad input or usage\n", f);
}

/* 1 after --help, 0 to go on, -1 on bad usage. */
static int parse_args(int argc, char **argv, ts_report_opts *o)
{
    static const struct option longopts[] = {
        {"format", required_argument, 0, 'f'}, {"table", required_argument, 0, 'T'},
        {"max-rss", required_argument, 0, TS_CLI_OPT_MAX_RSS}, {"in-memory", no_argument, 0, TS_CLI_OPT_IN_MEMORY},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'f': case 'T': case 'o':
            if (ts_cli_opt_output("info", c, optarg, o) < 0) return -1;
            break;
        case TS_CLI_OPT_MAX_RSS: case TS_CLI_OPT_IN_MEMORY:
            if (ts_cli_opt_common("info", c, optarg)) return -1;
            break;
        case 'h': usage(stdout); return 1;
        default: return ts_cli_opt_unknown("info", argv[optind - 1]);
        }
    }
    if (ts_cli_need_trace("info", optind, argc) || ts_cli_csv_dest("info", o->format, o->table, o->dir)) return -1;
    return 0;
}

int ts_cmd_info(int argc, char **argv)
{
    ts_report_opts o;
    int prc = parse_args(argc, argv, &o);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_job *t;
    int rc = ts_cli_load_info(argv + optind, argc - optind, &t);
    if (rc) return rc;
    ts_error err = {0};
    rc = ts_report_info(t, &o, stdout, &err);
    ts_job_destroy(t);
    if (rc) { ts_cli_errorf("%s", err.msg); return TS_EXIT_BAD; }
    return fflush(stdout) == 0 ? TS_EXIT_OK : TS_EXIT_BAD;
}
