/* cmd_diff.c - `trainscope diff A B`: HTA's trace diff, rank by rank: which
 * ops and kernels were added, removed, or ran more or less often and for how
 * much longer in B than in A (ts_diff_compute, src/analyze/diff.c).
 *
 * Thin: parse options, load both, compute, print. Table rows per rank are the
 * largest time changes first, cut to --top; json and csv give every row.
 * Exit: 0 ok, 1 nothing to compare (no common rank, an iteration missing),
 * 2 bad input or usage.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "report/report_int.h"
#include "trainscope/analyze.h"
#include "trainscope/ingest.h"
#include "trainscope/report.h"

typedef struct diff_args {
    ts_diff_opts opts;
    int          format;
    const char  *marker;
    uint32_t     top;
    int          width;
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
          "  --format table|json|csv  output format (default table); times in json/csv are us\n"
          "  --width N                table width in columns (default 80); 0 = never cut names\n"
          "  -h, --help               this help\n\n"
          "exit codes: 0 ok, 1 nothing to compare, 2 bad input or usage\n", f);
}

static int parse_args(int argc, char **argv, diff_args *a)
{
    static const struct option longopts[] = {
        {"iteration", required_argument, 0, 'i'}, {"whole", no_argument, 0, 'W'},
        {"device", required_argument, 0, 'd'}, {"iteration-marker", required_argument, 0, 'm'},
        {"top", required_argument, 0, 't'}, {"format", required_argument, 0, 'f'},
        {"width", required_argument, 0, 'w'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->opts.size = sizeof a->opts;
    a->top = 20;
    a->width = 80;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
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
        case 't': if (ts_cli_opt_count("diff", "--top", optarg, &a->top)) return -1; break;
        case 'w': if (ts_cli_opt_width("diff", optarg, &a->width)) return -1; break;
        case 'f':
            if ((a->format = ts__report_format(optarg)) < 0) {
                ts_cli_errorf("diff: --format wants table, json or csv, got '%s'", optarg);
                return -1;
            }
            break;
        case 'h': usage(stdout); return 1;
        default: return ts_cli_opt_unknown("diff", argv[optind - 1]);
        }
    }
    if (a->opts.whole && a->opts.has_iteration) {
        ts_cli_errorf("diff: --whole and --iteration exclude each other");
        return -1;
    }
    if (argc - optind != 2) {
        ts_cli_errorf("diff: expected two traces A B (see 'trainscope diff --help')");
        return -1;
    }
    return 0;
}

static void print_json(const ts_diff *d, const ts_job *ta, const ts_job *tb)
{
    ts_buf b;
    ts__buf_init(&b);
    ts_json j;
    ts__json_init(&j, &b);
    ts__json_obj_begin(&j);
    ts__json_key(&j, "ranks");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < d->n_ranks; i++) {
        const ts_diff_rank *r = &d->ranks[i];
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", r->rank);
        ts__json_kv_i64(&j, "a_iteration", r->a_step);
        ts__json_kv_i64(&j, "b_iteration", r->b_step);
        static const char *const keys[] = {"same", "added", "removed", "more", "fewer"};
        for (int k = 0; k < 5; k++) ts__json_kv_u64(&j, keys[k], r->n_change[k]);
        ts__json_key(&j, "ops");
        ts__json_arr_begin(&j);
        for (uint32_t k = r->first_row; k < r->first_row + r->n_rows; k++) {
            const ts_diff_row *x = &d->rows[k];
            ts__json_obj_begin(&j);
            ts__json_kv_str(&j, "name", x->name);
            ts__json_kv_u64(&j, "a_count", x->a_count);
            ts__json_kv_u64(&j, "b_count", x->b_count);
            ts__json_kv_us(&j, "a_total_us", x->a_total_ns);
            ts__json_kv_us(&j, "b_total_us", x->b_total_ns);
            ts__json_kv_i64(&j, "diff_count", (int64_t)x->b_count - (int64_t)x->a_count);
            ts__json_kv_us(&j, "diff_us", x->b_total_ns - x->a_total_ns);
            ts__json_kv_str(&j, "change", ts_diff_change_name(x->change));
            ts__json_obj_end(&j);
        }
        ts__json_arr_end(&j);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__json_key(&j, "ranks_only_in_a");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < d->n_only_a; i++) ts__json_i64(&j, d->only_a[i]);
    ts__json_arr_end(&j);
    ts__json_key(&j, "ranks_only_in_b");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < d->n_only_b; i++) ts__json_i64(&j, d->only_b[i]);
    ts__json_arr_end(&j);
    ts__report_warnings_json_open(&j, ta);   /* both traces' ingest warnings, each item names its file */
    ts__report_warnings_json_trace(&j, tb);
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    ts__buf_add(&b, "\n", 1);
    fwrite(b.s, 1, b.len, stdout);
    ts__buf_free(&b);
}

static void print_csv(const ts_diff *d)
{
    puts("rank,name,a_count,b_count,a_total_us,b_total_us,diff_count,diff_us,change");
    for (uint32_t i = 0; i < d->n_ranks; i++)
        for (uint32_t k = d->ranks[i].first_row; k < d->ranks[i].first_row + d->ranks[i].n_rows; k++) {
            const ts_diff_row *x = &d->rows[k];
            printf("%d,", d->ranks[i].rank);
            ts_csv_field(stdout, x->name);
            printf(",%llu,%llu,%.3f,%.3f,%lld,%.3f,%s\n", (unsigned long long)x->a_count,
                   (unsigned long long)x->b_count, x->a_total_ns / 1e3, x->b_total_ns / 1e3,
                   (long long)x->b_count - (long long)x->a_count, (x->b_total_ns - x->a_total_ns) / 1e3,
                   ts_diff_change_name(x->change));
        }
}

/* Name column: what 80 columns leave after the seven others (6 + 6 + 7 + 7 +
 * 6 + 8 + 7, two-space gaps). */
static const ts_col table_cols[] = {
    {"name", TS_ALIGN_LEFT, 18}, {"A n", TS_ALIGN_RIGHT, 0}, {"B n", TS_ALIGN_RIGHT, 0},
    {"A time", TS_ALIGN_RIGHT, 0}, {"B time", TS_ALIGN_RIGHT, 0}, {"diff n", TS_ALIGN_RIGHT, 0},
    {"diff time", TS_ALIGN_RIGHT, 0}, {"change", TS_ALIGN_LEFT, 0},
};

static int table_row(ts_table *tb, const ts_diff_row *x)
{
    char c[8][32];
    snprintf(c[1], sizeof c[1], "%llu", (unsigned long long)x->a_count);
    snprintf(c[2], sizeof c[2], "%llu", (unsigned long long)x->b_count);
    ts_report_duration((double)x->a_total_ns, c[3], sizeof c[3]);
    ts_report_duration((double)x->b_total_ns, c[4], sizeof c[4]);
    snprintf(c[5], sizeof c[5], "%+lld", (long long)x->b_count - (long long)x->a_count);
    int64_t dt = x->b_total_ns - x->a_total_ns;
    c[6][0] = dt > 0 ? '+' : dt < 0 ? '-' : ' ';
    ts_report_duration((double)(dt < 0 ? -dt : dt), c[6] + 1, sizeof c[6] - 1);
    snprintf(c[7], sizeof c[7], "%s", ts_diff_change_name(x->change));
    const char *cells[8] = {x->name, c[1], c[2], c[3], c[4], c[5], c[6], c[7]};
    return ts_table_add_row(tb, cells);
}

static int print_table(const ts_diff *d, uint32_t top, int width)
{
    for (uint32_t i = 0; i < d->n_ranks; i++) {
        const ts_diff_rank *r = &d->ranks[i];
        if (r->a_step >= 0)
            printf("%srank %d: ProfilerStep#%lld (A) vs #%lld (B)", i ? "\n" : "", r->rank, (long long)r->a_step,
                   (long long)r->b_step);
        else
            printf("%srank %d: whole traces", i ? "\n" : "", r->rank);
        printf(": %u names, %u added, %u removed, %u more often, %u fewer, %u as often\n", r->n_rows,
               r->n_change[TS_DIFF_ADDED], r->n_change[TS_DIFF_REMOVED], r->n_change[TS_DIFF_MORE],
               r->n_change[TS_DIFF_FEWER], r->n_change[TS_DIFF_SAME]);
        ts_col cols[8];
        memcpy(cols, table_cols, sizeof cols);
        cols[0].max_width = width ? (width - 62 > 8 ? width - 62 : 8) : 0;
        ts_table *tb = ts_table_create(cols, 8);
        if (!tb) return TS_ENOMEM;
        uint32_t n = top && top < r->n_rows ? top : r->n_rows;
        for (uint32_t k = 0; k < n; k++)
            if (table_row(tb, &d->rows[r->first_row + k])) { ts_table_destroy(tb); return TS_ENOMEM; }
        int rc = ts_table_write(tb, stdout);
        ts_table_destroy(tb);
        if (rc) return rc;
        if (n < r->n_rows) printf("... %u more names (--top 0 for all)\n", r->n_rows - n);
    }
    for (uint32_t i = 0; i < d->n_only_a; i++) printf("rank %d: only in A\n", d->only_a[i]);
    for (uint32_t i = 0; i < d->n_only_b; i++) printf("rank %d: only in B\n", d->only_b[i]);
    return TS_OK;
}

int ts_cmd_diff(int argc, char **argv)
{
    diff_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_job *ta = NULL, *tb = NULL;
    if (ts_cli_load(argv + optind, 1, a.marker, &ta)) return TS_EXIT_BAD;
    if (ts_cli_load(argv + optind + 1, 1, a.marker, &tb)) { ts_job_destroy(ta); return TS_EXIT_BAD; }
    ts_error err = {0};
    ts_diff *d = NULL;
    int rc = ts_diff_compute(ta, tb, &a.opts, &d, &err);
    if (!rc) {
        if (a.format != TS_FMT_JSON) {   /* json carries them inside */
            ts__report_warnings_emit(stderr, ta, NULL, 0, ts__report_warn_all(false));
            ts__report_warnings_emit(stderr, tb, NULL, 0, ts__report_warn_all(false));
        }
        if (a.format == TS_FMT_JSON) print_json(d, ta, tb);
        else if (a.format == TS_FMT_CSV) print_csv(d);
        else rc = print_table(d, a.top, a.width);
        if (rc) err.msg[0] = 0;
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
