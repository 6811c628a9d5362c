/* cmd_stats.c - `trainscope stats PATH...`: per-name duration statistics of
 * CPU ops, kernels, memcpy/memset, runtime calls and collectives, per rank.
 *
 * Thin: parse options, load, ts_stats_compute, print. Table mode cuts long
 * names with an ellipsis to stay within 80 columns; json and csv never cut.
 * Exit: 0 ok, 1 no iteration in the asked range, 2 bad input or usage.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "report/report_int.h"
#include "trainscope/analyze.h"
#include "trainscope/ingest.h"
#include "trainscope/report.h"

typedef struct stats_args {
    ts_stats_opts opts;
    int           format;
    const char   *marker;   /* --iteration-marker, NULL = ProfilerStep# */
    int           width;    /* --width: table columns, 0 = never cut names */
    int           verbose;  /* --verbose: every warning line, also on a terminal */
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
          "  --format table|json|csv  output format (default table); times in json/csv are us\n"
          "  --width N                table width in columns (default 80); 0 = never cut names\n"
          TS_CLI_COMMON_HELP TS_CLI_IN_MEMORY_HELP
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
        TS_CLI_COMMON_LONGOPTS, {"verbose", no_argument, 0, 'v'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->width = 80;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
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
            if (ts_cli_opt_width("stats", optarg, &a->width)) return -1;
            break;
        case 'f':
            if ((a->format = ts__report_format(optarg)) < 0) {
                ts_cli_errorf("stats: --format wants table, json or csv, got '%s'", optarg);
                return -1;
            }
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
    if (ts_cli_need_trace("stats", optind, argc)) return -1;
    a->opts.window_all = ts_cli_window_all();
    return 0;
}

static void print_json(const ts_trace *t, const ts_stats *st)
{
    ts_buf b;
    ts__buf_init(&b);
    ts_json j;
    ts__json_init(&j, &b);
    ts__json_obj_begin(&j);
    ts__json_key(&j, "ranks");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < st->n_windows; i++) {
        const ts_stats_window *w = &st->windows[i];
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", w->rank);
        ts__json_kv_us(&j, "window_start_us", w->start_ns);
        ts__json_kv_us(&j, "window_us", w->end_ns - w->start_ns);
        ts__json_kv_u64(&j, "iterations", w->n_iterations);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__json_key(&j, "rows");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < st->n_rows; i++) {
        const ts_stat_row *r = &st->rows[i];
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", r->rank);   /* -1 = all ranks (--by category) */
        ts__json_kv_str(&j, "category", ts_stat_cat_name(r->cat));
        if (r->name) ts__json_kv_str(&j, "name", r->name);
        ts__json_kv_u64(&j, "count", r->count);
        ts__json_kv_us(&j, "total_us", r->total_ns);
        ts__json_kv_double(&j, "mean_us", r->mean_ns / 1e3, 3);
        ts__json_kv_double(&j, "median_us", r->median_ns / 1e3, 3);
        ts__json_kv_us(&j, "min_us", r->min_ns);
        ts__json_kv_us(&j, "max_us", r->max_ns);
        ts__json_kv_double(&j, "stddev_us", r->stddev_ns / 1e3, 3);
        ts__json_kv_double(&j, "pct_of_iteration", r->pct_of_window, 3);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__report_warnings_json(&j, t);
    ts__json_obj_end(&j);
    ts__buf_add(&b, "\n", 1);
    fwrite(b.s, 1, b.len, stdout);
    ts__buf_free(&b);
}

static void print_csv(const ts_stats *st)
{
    puts("rank,category,name,count,total_us,mean_us,median_us,min_us,max_us,stddev_us,pct_of_iteration");
    for (uint32_t i = 0; i < st->n_rows; i++) {
        const ts_stat_row *r = &st->rows[i];
        printf("%d,%s,", r->rank, ts_stat_cat_name(r->cat));
        ts_csv_field(stdout, r->name ? r->name : "");
        printf(",%llu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", (unsigned long long)r->count, r->total_ns / 1e3,
               r->mean_ns / 1e3, r->median_ns / 1e3, r->min_ns / 1e3, r->max_ns / 1e3, r->stddev_ns / 1e3,
               r->pct_of_window);
    }
}

/* Widths add up to 80 with a name of 18: count 5 + six durations of 6 +
 * percent 5 + eight 2-space gaps leave width - 62 for the name. */
static const ts_col table_cols[] = {
    {"name", TS_ALIGN_LEFT, 18}, {"count", TS_ALIGN_RIGHT, 0}, {"total", TS_ALIGN_RIGHT, 0},
    {"mean", TS_ALIGN_RIGHT, 0}, {"median", TS_ALIGN_RIGHT, 0}, {"min", TS_ALIGN_RIGHT, 0},
    {"max", TS_ALIGN_RIGHT, 0}, {"stddev", TS_ALIGN_RIGHT, 0}, {"%iter", TS_ALIGN_RIGHT, 0},
};

static int add_table_row(ts_table *tb, const ts_stat_row *r, const char *label)
{
    char c[9][32];   /* c[0] unused: the label goes in whole, the table cuts it */
    snprintf(c[1], sizeof c[1], "%llu", (unsigned long long)r->count);
    ts_report_duration((double)r->total_ns, c[2], sizeof c[2]);
    ts_report_duration(r->mean_ns, c[3], sizeof c[3]);
    ts_report_duration(r->median_ns, c[4], sizeof c[4]);
    ts_report_duration((double)r->min_ns, c[5], sizeof c[5]);
    ts_report_duration((double)r->max_ns, c[6], sizeof c[6]);
    ts_report_duration(r->stddev_ns, c[7], sizeof c[7]);
    snprintf(c[8], sizeof c[8], "%.1f", r->pct_of_window);
    const char *cells[9];
    for (int i = 0; i < 9; i++) cells[i] = c[i];
    cells[0] = label;
    return ts_table_add_row(tb, cells);
}

/* One table per (rank, category) group under a heading line. */
static int print_table(const ts_stats *st, int width)
{
    bool named = st->n_rows && st->rows[0].name;   /* BY_NAME; the others print one table */
    for (uint32_t i = 0, j; i < st->n_rows; i = j) {
        j = named ? i + 1 : st->n_rows;
        while (j < st->n_rows && st->rows[j].rank == st->rows[i].rank && st->rows[j].cat == st->rows[i].cat) j++;
        const ts_stat_row *r = &st->rows[i];
        if (named) {
            if (r->rank >= 0) printf("%srank %d: %s\n", i ? "\n" : "", r->rank, ts_stat_cat_name(r->cat));
            else printf("%s%s\n", i ? "\n" : "", ts_stat_cat_name(r->cat));
        }
        ts_col cols[9];
        memcpy(cols, table_cols, sizeof cols);
        cols[0].max_width = width ? (width - 62 > 8 ? width - 62 : 8) : 0;
        if (!named) cols[0].title = st->rows[i].rank >= 0 ? "rank category" : "category";
        ts_table *tb = ts_table_create(cols, 9);
        if (!tb) return TS_ENOMEM;
        for (uint32_t k = i; k < j; k++) {
            char group[32];   /* BY_RANK / BY_CATEGORY label; names go in whole */
            if (st->rows[k].rank >= 0) snprintf(group, sizeof group, "%d %s", st->rows[k].rank, ts_stat_cat_name(st->rows[k].cat));
            else snprintf(group, sizeof group, "%s", ts_stat_cat_name(st->rows[k].cat));
            if (add_table_row(tb, &st->rows[k], st->rows[k].name ? st->rows[k].name : group)) {
                ts_table_destroy(tb);
                return TS_ENOMEM;
            }
        }
        int rc = ts_table_write(tb, stdout);
        ts_table_destroy(tb);
        if (rc) return rc;
    }
    if (st->n_rows == 0) puts("no CPU op, kernel, copy, runtime call or collective in the window");
    return TS_OK;
}

int ts_cmd_stats(int argc, char **argv)
{
    stats_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_trace *t = NULL;
    if (ts_cli_load_stats(argv + optind, argc - optind, a.marker, &t)) return TS_EXIT_BAD;
    ts_error err = {0};
    ts_stats *st = NULL;
    int rc = ts_stats_compute(t, &a.opts, &st, &err);
    if (rc) {
        ts_cli_errorf("%s", err.msg);
        ts_trace_destroy(t);
        return ts_cli_exit_for(rc);
    }
    if (a.format != TS_FMT_JSON) ts__report_warnings_emit(stderr, t, NULL, 0, ts__report_warn_all(a.verbose));   /* json carries them inside */
    if (a.format == TS_FMT_JSON) print_json(t, st);
    else if (a.format == TS_FMT_CSV) print_csv(st);
    else rc = print_table(st, a.width);
    bool nothing = st->n_rows == 0;
    ts_stats_destroy(st);
    ts_trace_destroy(t);
    if (rc) { ts_cli_errorf("writing the table failed: %s", ts_strerror(rc)); return TS_EXIT_BAD; }
    return nothing ? TS_EXIT_NOTHING : TS_EXIT_OK;
}
