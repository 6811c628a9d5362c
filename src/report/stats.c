/* stats.c - the output of `stats` (ts_stats): per-name duration statistics
 * as text tables (one per rank and category), JSON, and CSV tables.
 *
 * Not for: computing them (analyze/stats.c). Table mode cuts long names with
 * an ellipsis to fit the width; JSON and CSV never cut.
 * JSON: {"ranks":[{rank, window_start_us, window_us, iterations}],
 * "rows":[{rank, category, name, count, total_us, ...}], "warnings":[...]}.
 */
#include "report/report_int.h"
#include "trainscope/analyze.h"

#include <string.h>

static void print_json(ts_buf *b, const ts_job *t, const ts_stats *st)
{
    ts_json j;
    ts__json_init(&j, b);
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
    ts__buf_add(b, "\n", 1);
}

/* ---- CSV ---- */
static void csv_rows(ts_csv *c, const void *res)
{
    const ts_stats *st = res;
    TS__CSV_HEAD(c, "rank", "category", "name", "count", "total_ns", "mean_ns", "median_ns", "min_ns", "max_ns", "stddev_ns",
         "pct_of_iteration");
    for (uint32_t i = 0; i < st->n_rows; i++) {
        const ts_stat_row *r = &st->rows[i];
        ts_csv_i64(c, r->rank);
        ts_csv_str(c, ts_stat_cat_name(r->cat));
        ts_csv_str(c, r->name);
        ts_csv_u64(c, r->count);
        ts_csv_i64(c, r->total_ns);
        ts_csv_real(c, r->mean_ns, 3);
        ts_csv_real(c, r->median_ns, 3);
        ts_csv_i64(c, r->min_ns);
        ts_csv_i64(c, r->max_ns);
        ts_csv_real(c, r->stddev_ns, 3);
        ts_csv_real(c, r->pct_of_window, 3);
        ts_csv_end_row(c);
    }
}

static void csv_windows(ts_csv *c, const void *res)
{
    const ts_stats *st = res;
    TS__CSV_HEAD(c, "rank", "window_start_ns", "window_ns", "iterations");
    for (uint32_t i = 0; i < st->n_windows; i++) {
        const ts_stats_window *w = &st->windows[i];
        ts_csv_i64(c, w->rank);
        ts_csv_i64(c, w->start_ns);
        ts_csv_i64(c, w->end_ns - w->start_ns);
        ts_csv_u64(c, w->n_iterations);
        ts_csv_end_row(c);
    }
}

static const ts_csv_table stats_tables[] = {{"rows", csv_rows}, {"windows", csv_windows}};

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
static int print_table(FILE *out, const ts_stats *st, int width)
{
    bool named = st->n_rows && st->rows[0].name;   /* BY_NAME; the others print one table */
    for (uint32_t i = 0, j; i < st->n_rows; i = j) {
        j = named ? i + 1 : st->n_rows;
        while (j < st->n_rows && st->rows[j].rank == st->rows[i].rank && st->rows[j].cat == st->rows[i].cat) j++;
        const ts_stat_row *r = &st->rows[i];
        if (named) {
            if (r->rank >= 0) fprintf(out, "%srank %d: %s\n", i ? "\n" : "", r->rank, ts_stat_cat_name(r->cat));
            else fprintf(out, "%s%s\n", i ? "\n" : "", ts_stat_cat_name(r->cat));
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
        int rc = ts_table_write(tb, out);
        ts_table_destroy(tb);
        if (rc) return rc;
    }
    if (st->n_rows == 0) fputs("no CPU op, kernel, copy, runtime call or collective in the window\n", out);
    return ferror(out) ? TS_EIO : TS_OK;
}


int ts_report_stats(const ts_stats *st, const ts_job *t, const ts_report_opts *o, FILE *out, ts_error *err)
{
    ts__error_clear(err);
    if (o->format == TS_FMT_CSV)
        return ts_report_csv("stats", stats_tables, 2, st, o->table, o->dir, out, err);
    if (o->format == TS_FMT_TABLE) {
        int rc = print_table(out, st, o->width);
        return rc ? ts__error(err, rc, "writing the table failed: %s", ts_strerror(rc)) : TS_OK;
    }
    ts_buf b;
    ts__buf_init(&b);
    print_json(&b, t, st);
    int rc = ts__report_flush(&b, out, err);
    ts__buf_free(&b);
    return rc;
}
