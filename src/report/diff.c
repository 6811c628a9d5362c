/* diff.c - the output of a trace diff (ts_diff): per rank a text table of
 * the largest time changes (cut to --top), JSON and CSV with every row.
 *
 * Not for: matching names or counting (analyze/diff.c).
 * JSON: {"ranks":[{rank, a_iteration, b_iteration, same, added, removed,
 * more, fewer, ops:[...]}], "ranks_only_in_a", "ranks_only_in_b", "warnings"}.
 */
#include "report/report_int.h"
#include "trainscope/analyze.h"

#include <string.h>

static void print_json(ts_buf *b, const ts_diff *d, const ts_job *ta, const ts_job *tb)
{
    ts_json j;
    ts__json_init(&j, b);
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
    ts__buf_add(b, "\n", 1);
}

/* ---- CSV ---- */
/* Every row of every rank (table "ops"). */
static void csv_ops(ts_csv *c, const void *res)
{
    const ts_diff *d = res;
    TS__CSV_HEAD(c, "rank", "name", "a_count", "b_count", "a_total_ns", "b_total_ns", "diff_count", "diff_ns", "change");
    for (uint32_t i = 0; i < d->n_ranks; i++)
        for (uint32_t k = d->ranks[i].first_row; k < d->ranks[i].first_row + d->ranks[i].n_rows; k++) {
            const ts_diff_row *x = &d->rows[k];
            ts_csv_i64(c, d->ranks[i].rank);
            ts_csv_str(c, x->name);
            ts_csv_u64(c, x->a_count);
            ts_csv_u64(c, x->b_count);
            int64_t t[] = {x->a_total_ns, x->b_total_ns, x->b_total_ns - x->a_total_ns};
            for (int n = 0; n < 3; n++) {
                if (n == 2) ts_csv_i64(c, (int64_t)x->b_count - (int64_t)x->a_count);
                ts_csv_i64(c, t[n]);
            }
            ts_csv_str(c, ts_diff_change_name(x->change));
            ts_csv_end_row(c);
        }
}

/* One row per rank compared: the iterations and the rows per change. */
static void csv_ranks(ts_csv *c, const void *res)
{
    const ts_diff *d = res;
    TS__CSV_HEAD(c, "rank", "a_iteration", "b_iteration", "names", "same", "added", "removed", "more", "fewer");
    for (uint32_t i = 0; i < d->n_ranks; i++) {
        const ts_diff_rank *r = &d->ranks[i];
        int64_t v[] = {r->rank, r->a_step, r->b_step, r->n_rows};
        for (int k = 0; k < 4; k++) ts_csv_i64(c, v[k]);
        for (int k = 0; k < 5; k++) ts_csv_u64(c, r->n_change[k]);
        ts_csv_end_row(c);
    }
}

static const ts_csv_table diff_tables[] = {{"ops", csv_ops}, {"ranks", csv_ranks}};

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

static int print_table(FILE *out, const ts_diff *d, uint32_t top, int width)
{
    for (uint32_t i = 0; i < d->n_ranks; i++) {
        const ts_diff_rank *r = &d->ranks[i];
        if (r->a_step >= 0)
            fprintf(out, "%srank %d: ProfilerStep#%lld (A) vs #%lld (B)", i ? "\n" : "", r->rank, (long long)r->a_step,
                   (long long)r->b_step);
        else
            fprintf(out, "%srank %d: whole traces", i ? "\n" : "", r->rank);
        fprintf(out, ": %u names, %u added, %u removed, %u more often, %u fewer, %u as often\n", r->n_rows,
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
        int rc = ts_table_write(tb, out);
        ts_table_destroy(tb);
        if (rc) return rc;
        if (n < r->n_rows) fprintf(out, "... %u more names (--top 0 for all)\n", r->n_rows - n);
    }
    for (uint32_t i = 0; i < d->n_only_a; i++) fprintf(out, "rank %d: only in A\n", d->only_a[i]);
    for (uint32_t i = 0; i < d->n_only_b; i++) fprintf(out, "rank %d: only in B\n", d->only_b[i]);
    return ferror(out) ? TS_EIO : TS_OK;
}


int ts_report_diff(const ts_diff *d, const ts_job *a, const ts_job *b, const ts_report_opts *o, FILE *out,
                   ts_error *err)
{
    ts__error_clear(err);
    if (o->format == TS_FMT_CSV)
        return ts_report_csv("diff", diff_tables, 2, d, o->table, o->dir, out, err);
    if (o->format == TS_FMT_TABLE) {
        int rc = print_table(out, d, o->top, o->width);
        return rc ? ts__error(err, rc, "%s", ts_strerror(rc)) : TS_OK;
    }
    ts_buf buf;
    ts__buf_init(&buf);
    print_json(&buf, d, a, b);
    int rc = ts__report_flush(&buf, out, err);
    ts__buf_free(&buf);
    return rc;
}
