/* cmd_info.c - `trainscope info PATH...`: what was read, per rank: the file,
 * the format its reader recognized and what that reader recorded about it
 * (for an Nsight Systems export: the nsys version, export schema and the
 * table layout found), and the model's row counts.
 *
 * Not for: analysis (stats, breakdown). Thin: load, print.
 * Exit: 0 ok, 2 bad input or usage.
 */
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"
#include "trainscope/ingest.h"
#include "trainscope/model.h"

static void usage(FILE *f)
{
    fputs("usage: trainscope info PATH...\n\n"
          "What each rank was read from: the file, its format, what the reader recorded\n"
          "about it (an Nsight Systems export: nsys version, export schema, the table\n"
          "layout found; a Kineto trace: its top-level string members), and how many\n"
          "tracks, slices, instants, counters, flows and iterations it holds.\n\n"
          "options:\n"
          "  -h, --help   this help\n\n"
          "exit codes: 0 ok, 2 bad input or usage\n", f);
}

static void print_rank(const ts_rank *r)
{
    const char *fmt = ts_rank_meta_str(r, "format");
    printf("rank %d: %s\n", ts_rank_number(r), ts_rank_path(r));
    printf("  format              %s\n", fmt ? fmt : "chrome-json");
    for (uint32_t i = 0; ts_rank_meta_key(r, i); i++) {
        const char *k = ts_rank_meta_key(r, i);
        if (strcmp(k, "format")) printf("  %-19s %s\n", k, ts_rank_meta_str(r, k));
    }
    printf("  tracks              %u\n  slices              %u\n  instants            %u\n  counters            %u\n"
           "  flows               %u\n  iterations          %u\n  warnings            %llu\n",
           ts_rank_n_tracks(r), ts_rank_n_slices(r), ts_rank_n_instants(r), ts_rank_n_counters(r),
           ts_rank_n_flows(r), ts_rank_n_iterations(r), (unsigned long long)ts_rank_n_warnings(r));
}

int ts_cmd_info(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') { usage(stdout); return TS_EXIT_OK; }
        ts_cli_opt_unknown("info", argv[optind - 1]);
        return TS_EXIT_BAD;
    }
    if (ts_cli_need_trace("info", optind, argc)) return TS_EXIT_BAD;
    ts_job *t;
    int rc = ts_cli_load(argv + optind, argc - optind, NULL, &t);
    if (rc) return rc;
    for (uint32_t i = 0; i < ts_job_n_ranks(t); i++) print_rank(ts_job_borrow_rank(t, i));
    ts_job_destroy(t);
    return fflush(stdout) == 0 ? TS_EXIT_OK : TS_EXIT_BAD;
}
