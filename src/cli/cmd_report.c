/* cmd_report.c - `trainscope report PATH... -o report.html`: one
 * self-contained HTML file of what the analyses found (include/trainscope/
 * html.h has what it shows and how it stays small).
 *
 * Thin: parse options, load, ts_report_html_trace.
 * Exit: 0 written, 2 bad input or usage or an output that cannot be written
 * (then no file is left at PATH).
 */
#include <getopt.h>
#include <stdint.h>
#include <string.h>

#include "cli/cli.h"
#include "trainscope/html.h"
#include "trainscope/model.h"

static void usage(FILE *f)
{
    fputs("usage: trainscope report [OPTIONS] PATH... -o FILE.html\n\n"
          "One self-contained HTML page (no network needed: inline SVG, a small script\n"
          "to sort tables) with the job summary, each rank's temporal breakdown, the\n"
          "stragglers at collectives (several ranks), kernel type and op category\n"
          "shares, a timeline of one iteration (ranks x threads and streams, merged to\n"
          "pixels) with the critical path drawn on it, replay against\n"
          "measurement, the top ops, the memory curve when the trace has [memory] events,\n"
          "and every warning.\n\n"
          "options:\n"
          "  -o, --output FILE         the page to write (written whole or not at all)\n"
          "  --title TEXT              page title (default: the first input's name)\n"
          "  --iteration N             the ProfilerStep the timeline shows (default: the\n"
          "                            last complete one)\n"
          "  --timeline-ranks N        ranks drawn in the timeline, those on the critical\n"
          "                            path first (default 8)\n"
          "  --top N                   rows of each top-ops table (default 15)\n"
          "  --iteration-marker NAME   slice-name prefix of iterations (ProfilerStep#)\n"
          TS_CLI_COMMON_HELP
          "  -h, --help                this help\n\n"
          "exit codes: 0 written, 2 bad input or usage, or FILE cannot be written\n", f);
}

typedef struct rp_args {
    ts_report_html_opts opts;
    const char *output, *marker;
} rp_args;

static int parse_args(int argc, char **argv, rp_args *a)
{
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'}, {"title", required_argument, 0, 'T'},
        {"iteration", required_argument, 0, 'i'}, {"timeline-ranks", required_argument, 0, 'r'},
        {"top", required_argument, 0, 't'}, {"iteration-marker", required_argument, 0, 'm'},
        TS_CLI_COMMON_LONGOPTS, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->opts.size = sizeof a->opts;
    a->opts.iteration = -1;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': a->output = optarg; break;
        case 'T': a->opts.title = optarg; break;
        case 'i':
            if (ts_cli_opt_int("report", "--iteration", optarg, 0, INT64_MAX, &a->opts.iteration)) return -1;
            break;
        case 'r':
            if (ts_cli_opt_count("report", "--timeline-ranks", optarg, &a->opts.timeline_ranks)) return -1;
            if (!a->opts.timeline_ranks) { ts_cli_errorf("report: --timeline-ranks wants 1 or more"); return -1; }
            break;
        case 't':
            if (ts_cli_opt_count("report", "--top", optarg, &a->opts.top_ops)) return -1;
            if (!a->opts.top_ops) { ts_cli_errorf("report: --top wants 1 or more"); return -1; }
            break;
        case 'm': a->marker = optarg; break;
        case TS_CLI_OPT_WINDOW: case TS_CLI_OPT_PYTHON_DEPTH:
            if (ts_cli_opt_common("report", c, optarg)) return -1;
            break;
        case 'h': usage(stdout); return 1;
        default: return ts_cli_opt_unknown("report", argv[optind - 1]);
        }
    }
    if (ts_cli_need_trace("report", optind, argc)) return -1;
    if (!a->output) { ts_cli_errorf("report: no output given: -o FILE.html (see 'trainscope report --help')"); return -1; }
    a->opts.window_all = ts_cli_window_all();
    return 0;
}

/* An analysis that could not run (its section is left out or drawn without
 * it, as the page's warnings say), said on stderr too. */
static void note(void *ud, const char *line)
{
    (void)ud;
    fprintf(stderr, "trainscope: warning: report: %s\n", line);
}

int ts_cmd_report(int argc, char **argv)
{
    rp_args a;
    int p = parse_args(argc, argv, &a);
    if (p) return p > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_job *t;
    int rc = ts_cli_load(argv + optind, argc - optind, a.marker, &t);
    if (rc) return rc;
    ts_error err = {0};
    a.opts.on_note = note;
    rc = ts_report_html_trace(t, &a.opts, a.output, &err);
    ts_job_destroy(t);
    if (rc) {
        ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
        return TS_EXIT_BAD;
    }
    printf("wrote %s\n", a.output);
    return TS_EXIT_OK;
}
