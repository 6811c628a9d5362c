/* info.c - the output of `info`: what each rank of a loaded trace was read
 * from (file, format, what its reader recorded) and its row counts, as text,
 * JSON or CSV tables (ranks, meta).
 *
 * Not for: reading anything (ingest/) or analysis; only the public counts of
 * trainscope/model.h are shown.
 * JSON: {"ranks":[{rank, file, format, meta:{KEY: VALUE}, tracks, slices,
 * instants, counters, flows, iterations, warnings}], "warnings":[...]}.
 */
#include "report/report_int.h"

#include <string.h>

static const char *rank_format(const ts_rank *r)
{
    const char *fmt = ts_rank_meta_str(r, "format");
    return fmt ? fmt : "chrome-json";
}

static void print_rank(FILE *out, const ts_rank *r)
{
    fprintf(out, "rank %d: %s\n", ts_rank_number(r), ts_rank_path(r));
    fprintf(out, "  format              %s\n", rank_format(r));
    for (uint32_t i = 0; ts_rank_meta_key(r, i); i++) {
        const char *k = ts_rank_meta_key(r, i);
        if (strcmp(k, "format")) fprintf(out, "  %-19s %s\n", k, ts_rank_meta_str(r, k));
    }
    uint32_t rows[4];   /* as read: a bounded load keeps the counts, not the rows */
    ts_rank_read_counts(r, rows);
    fprintf(out, "  tracks              %u\n  slices              %u\n  instants            %u\n  counters            %u\n"
            "  flows               %u\n  iterations          %u\n  warnings            %llu\n",
            ts_rank_n_tracks(r), rows[0], rows[1], rows[2], rows[3], ts_rank_n_iterations(r),
            (unsigned long long)ts_rank_n_warnings(r));
}

/* The counts of a rank, in the order of the text and the CSV columns. */
static const char *const count_names[] = {"tracks", "slices", "instants", "counters", "flows", "iterations", "warnings"};
static void rank_counts(const ts_rank *r, uint64_t v[7])
{
    uint32_t rows[4];   /* as read (ts_rank_read_counts) */
    ts_rank_read_counts(r, rows);
    v[0] = ts_rank_n_tracks(r); v[1] = rows[0]; v[2] = rows[1];
    v[3] = rows[2]; v[4] = rows[3]; v[5] = ts_rank_n_iterations(r);
    v[6] = ts_rank_n_warnings(r);
}

static void print_json(ts_buf *b, const ts_job *t)
{
    ts_json j;
    ts__json_init(&j, b);
    ts__json_obj_begin(&j);
    ts__json_key(&j, "ranks");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < ts_job_n_ranks(t); i++) {
        const ts_rank *r = ts_job_borrow_rank(t, i);
        uint64_t v[7];
        rank_counts(r, v);
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", ts_rank_number(r));
        ts__json_kv_str(&j, "file", ts_rank_path(r));
        ts__json_kv_str(&j, "format", rank_format(r));
        ts__json_key(&j, "meta");
        ts__json_obj_begin(&j);
        for (uint32_t k = 0; ts_rank_meta_key(r, k); k++)
            if (strcmp(ts_rank_meta_key(r, k), "format"))
                ts__json_kv_str(&j, ts_rank_meta_key(r, k), ts_rank_meta_str(r, ts_rank_meta_key(r, k)));
        ts__json_obj_end(&j);
        for (int k = 0; k < 7; k++) ts__json_kv_u64(&j, count_names[k], v[k]);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__report_warnings_json(&j, t);
    ts__json_obj_end(&j);
    ts__buf_add(b, "\n", 1);
}

static void csv_ranks(ts_csv *c, const void *res)
{
    const ts_job *t = res;
    static const char *const head[] = {"rank", "file", "format", "tracks", "slices", "instants", "counters", "flows",
                                       "iterations", "warnings"};
    ts_csv_header(c, head, 10);
    for (uint32_t i = 0; i < ts_job_n_ranks(t); i++) {
        const ts_rank *r = ts_job_borrow_rank(t, i);
        uint64_t v[7];
        rank_counts(r, v);
        ts_csv_i64(c, ts_rank_number(r));
        ts_csv_str(c, ts_rank_path(r));
        ts_csv_str(c, rank_format(r));
        for (int k = 0; k < 7; k++) ts_csv_u64(c, v[k]);
        ts_csv_end_row(c);
    }
}

/* What each reader recorded about its file, one row per key (format included). */
static void csv_meta(ts_csv *c, const void *res)
{
    const ts_job *t = res;
    static const char *const head[] = {"rank", "key", "value"};
    ts_csv_header(c, head, 3);
    for (uint32_t i = 0; i < ts_job_n_ranks(t); i++) {
        const ts_rank *r = ts_job_borrow_rank(t, i);
        for (uint32_t k = 0; ts_rank_meta_key(r, k); k++) {
            ts_csv_i64(c, ts_rank_number(r));
            ts_csv_str(c, ts_rank_meta_key(r, k));
            ts_csv_str(c, ts_rank_meta_str(r, ts_rank_meta_key(r, k)));
            ts_csv_end_row(c);
        }
    }
}

static const ts_csv_table info_tables[] = {{"ranks", csv_ranks}, {"meta", csv_meta}};

int ts_report_info(const ts_job *t, const ts_report_opts *o, FILE *out, ts_error *err)
{
    ts__error_clear(err);
    if (o->format == TS_FMT_CSV) return ts_report_csv("info", info_tables, 2, t, o->table, o->dir, out, err);
    if (o->format == TS_FMT_TABLE) {
        for (uint32_t i = 0; i < ts_job_n_ranks(t); i++) print_rank(out, ts_job_borrow_rank(t, i));
        return ferror(out) ? ts__error(err, TS_EIO, "writing the output failed") : TS_OK;
    }
    ts_buf b;
    ts__buf_init(&b);
    print_json(&b, t);
    int rc = ts__report_flush(&b, out, err);
    ts__buf_free(&b);
    return rc;
}
