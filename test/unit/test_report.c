/* test_report.c - the generic writers: table alignment and truncation, UTF-8
 * widths, CSV quoting, JSON commas and escapes. */
#include <math.h>

#include "test.h"
#include "core/json.h"
#include "trainscope/report.h"
#include "report/report_int.h"

/* Render a table into a malloc'd string through a memory stream. */
static char *render(const ts_table *t)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    if (!f) return NULL;
    if (ts_table_write(t, f) != TS_OK) { fclose(f); free(s); return NULL; }
    fclose(f);
    return s;
}

TEST(table_aligns_names_left_and_numbers_right)
{
    ts_col cols[] = {{"name", TS_ALIGN_LEFT, 0}, {"count", TS_ALIGN_RIGHT, 0}};
    ts_table *t = ts_table_create(cols, 2);
    const char *r1[] = {"aten::mm", "7"}, *r2[] = {"x", "1234"};
    CHECK_EQ_INT(ts_table_add_row(t, r1), TS_OK);
    CHECK_EQ_INT(ts_table_add_row(t, r2), TS_OK);
    char *s = render(t);
    CHECK_EQ_STR(s, "name      count\n"
                    "--------  -----\n"
                    "aten::mm      7\n"
                    "x          1234\n");
    free(s);
    ts_table_destroy(t);
}

TEST(table_cuts_long_cells_with_an_ellipsis)
{
    ts_col cols[] = {{"kernel", TS_ALIGN_LEFT, 8}, {"n", TS_ALIGN_RIGHT, 0}};
    ts_table *t = ts_table_create(cols, 2);
    const char *r1[] = {"void at::native::vectorized_elementwise_kernel", "3"};
    CHECK_EQ_INT(ts_table_add_row(t, r1), TS_OK);
    char *s = render(t);
    CHECK_EQ_STR(s, "kernel    n\n"
                    "--------  -\n"
                    "void at\xe2\x80\xa6  3\n");
    free(s);
    ts_table_destroy(t);
}

TEST(truncation_never_splits_a_utf8_character)
{
    char out[64];
    /* "é" is two bytes, one column: 5 columns fit without cutting */
    ts_report_truncate("h\xc3\xa9llo", 5, out, sizeof out);
    CHECK_EQ_STR(out, "h\xc3\xa9llo");
    CHECK_EQ_INT(ts_report_width(out), 5);
    ts_report_truncate("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 3, out, sizeof out);
    CHECK_EQ_STR(out, "\xc3\xa9\xc3\xa9\xe2\x80\xa6");
    CHECK_EQ_INT(ts_report_width(out), 3);
}

TEST(csv_fields_are_quoted_only_when_needed)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    ts_csv_field(f, "plain");
    fputc(',', f);
    ts_csv_field(f, "void f<a, b>(int)");
    fputc(',', f);
    ts_csv_field(f, "say \"hi\"");
    fclose(f);
    CHECK_EQ_STR(s, "plain,\"void f<a, b>(int)\",\"say \"\"hi\"\"\"");
    free(s);
    ts_buf b;
    ts__buf_init(&b);
    ts__buf_csv_field(&b, "a\nb");
    CHECK_EQ_STR(ts__buf_cstr(&b), "\"a\nb\"");
    ts__buf_free(&b);
}

TEST(json_writer_places_commas_and_escapes)
{
    ts_buf b;
    ts__buf_init(&b);
    ts_json j;
    ts__json_init(&j, &b);
    ts__json_obj_begin(&j);
    ts__json_key(&j, "ranks");
    ts__json_arr_begin(&j);
    for (int i = 0; i < 2; i++) {
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", i);
        ts__json_kv_us(&j, "span_us", 1234567 + i);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__json_kv_str(&j, "name", "a\"b\n");
    ts__json_kv_double(&j, "pct", NAN, 2);
    ts__json_kv_us(&j, "neg", -1500);
    ts__json_obj_end(&j);
    CHECK_EQ_STR(ts__buf_cstr(&b), "{\"ranks\":[{\"rank\":0,\"span_us\":1234.567},{\"rank\":1,\"span_us\":1234.568}],"
                                    "\"name\":\"a\\\"b\\n\",\"pct\":null,\"neg\":-1.500}");
    ts__buf_free(&b);
}

TEST(durations_fit_six_columns_with_a_unit)
{
    char b[16];
    CHECK_EQ_STR(ts_report_duration(850, b, sizeof b), "850ns");
    CHECK_EQ_STR(ts_report_duration(1234, b, sizeof b), "1.23us");
    CHECK_EQ_STR(ts_report_duration(12345, b, sizeof b), "12.3us");
    CHECK_EQ_STR(ts_report_duration(845000, b, sizeof b), "845us");
    CHECK_EQ_STR(ts_report_duration(999999, b, sizeof b), "1.00ms");
    CHECK_EQ_STR(ts_report_duration(2.5e9, b, sizeof b), "2.50s");
    CHECK_EQ_STR(ts_report_duration(1234e9, b, sizeof b), "1234s");
}

/* Warnings folded for a terminal: lines "rank N: ..." alike but for their
 * counts become one line naming the ranks with the counts summed; a number
 * with a sign ("-1"), a decimal or a digit inside a word stays as written
 * and must match; other repeated kinds keep their first line. By hand. */
TEST(warnings_fold_per_rank_lines_summing_counts_only)
{
    ts_rank *r = ts__rank_create("r0.json");
    ts_job *t = NULL;
    CHECK(r && ts__rank_finish(r, NULL) == TS_OK && ts__job_create(&r, 1, &t, NULL) == TS_OK);
    if (!t) return;
    const char *lines[] = {
        "rank 0: 3 of 10 calls have no event (wait_on_stream -1)",
        "rank 1: 4 of 12 calls have no event (wait_on_stream -1)",
        "rank 3: 5 of 5 calls have no event (wait_on_stream -1)",
        "rank 2: no cuda_sync events in int8 kernels",
        "collective 'x' (instance 0) reached by 1 of 2 ranks",
        "collective 'x' (instance 3) reached by 1 of 2 ranks",
        "recorded 1.5 s apart",
    };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ts_report_warnings(f, t, lines, 7, false);
    fclose(f);
    CHECK_EQ_STR(buf,
        "trainscope: warning: ranks 0-1, 3, summed: 12 of 27 calls have no event (wait_on_stream -1)\n"
        "trainscope: warning: rank 2: no cuda_sync events in int8 kernels\n"
        "trainscope: warning: collective 'x' (instance 0) reached by 1 of 2 ranks (and 1 more like it)\n"
        "trainscope: warning: recorded 1.5 s apart\n"
        "trainscope: warning: (7 warning lines folded into these 4; --verbose lists each)\n");
    free(buf);
    ts_job_destroy(t);
}

TEST(warnings_json_ingest_and_analysis_items_share_one_shape)
{
    ts_rank *r = ts__rank_create("r0.json");
    ts_job *t = NULL;
    CHECK(r != NULL);
    if (!r) return;
    r->rank = 3;
    ts__rank_warn(r, TS_WARN_NEGATIVE_DURATION, "\"a\" has negative duration");
    ts__rank_warn(r, TS_WARN_NEGATIVE_DURATION, "\"b\" has negative duration");
    CHECK(ts__rank_finish(r, NULL) == TS_OK && ts__job_create(&r, 1, &t, NULL) == TS_OK);
    if (!t) return;
    ts_buf b;
    ts__buf_init(&b);
    ts_json j;
    ts__json_init(&j, &b);
    ts__json_obj_begin(&j);
    ts__report_warnings_json_open(&j, t);
    ts__report_warning_json_line(&j, "graph", "rank 12: 3 of 4 calls have no event");
    ts__report_warning_json_line(&j, "replay", "ranks 0-1 straddle");   /* "ranks", not "rank N" */
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    CHECK_EQ_STR(ts__buf_cstr(&b),
        "{\"warnings\":[{\"rank\":3,\"file\":\"r0.json\",\"kind\":\"negative_duration\",\"count\":2,"
        "\"first\":\"\\\"a\\\" has negative duration\"},"
        "{\"rank\":12,\"file\":\"\",\"kind\":\"graph\",\"count\":1,\"first\":\"rank 12: 3 of 4 calls have no event\"},"
        "{\"rank\":-1,\"file\":\"\",\"kind\":\"replay\",\"count\":1,\"first\":\"ranks 0-1 straddle\"}]}");
    ts__buf_free(&b);
    ts_job_destroy(t);
}

/* Two tables for ts_report_csv: numbers plain, a quoted name, an empty field. */
static void csv_a(ts_csv *c, const void *res)
{
    static const char *const head[] = {"rank", "name", "time_ns", "pct"};
    ts_csv_header(c, head, 4);
    ts_csv_i64(c, *(const int *)res);
    ts_csv_str(c, "f<a, b>");
    ts_csv_i64(c, 1250000);
    ts_csv_real(c, NAN, 3);
    ts_csv_end_row(c);
    ts_csv_i64(c, -1);
    ts_csv_str(c, NULL);
    ts_csv_u64(c, UINT64_MAX);
    ts_csv_real(c, 12.5, 3);
    ts_csv_end_row(c);
}
static void csv_b(ts_csv *c, const void *res)
{
    static const char *const head[] = {"x"};
    ts_csv_header(c, head, 1);
}

TEST(csv_tables_are_rfc4180_with_plain_numbers)
{
    static const ts_csv_table tables[] = {{"a", csv_a}, {"b", csv_b}};
    int rank = 3;
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    ts_error err = {0};
    CHECK_EQ_INT(ts_report_csv("cmd", tables, 2, &rank, "a", NULL, f, &err), TS_OK);
    fclose(f);
    CHECK_EQ_STR(s, "rank,name,time_ns,pct\r\n3,\"f<a, b>\",1250000,\r\n-1,,18446744073709551615,12.500\r\n");
    free(s);
    /* a table that does not exist: TS_EINVAL naming the choices, nothing written */
    f = open_memstream(&s, &n);
    CHECK_EQ_INT(ts_report_csv("cmd", tables, 2, &rank, "c", NULL, f, &err), TS_EINVAL);
    CHECK(strstr(err.msg, "a, b") != NULL);
    fflush(f);
    CHECK_EQ_INT((int)n, 0);
    /* none chosen among several: the first, the command's main table (docs/csv.md) */
    CHECK_EQ_INT(ts_report_csv("cmd", tables, 2, &rank, NULL, NULL, f, &err), TS_OK);
    fclose(f);
    CHECK_EQ_STR(s, "rank,name,time_ns,pct\r\n3,\"f<a, b>\",1250000,\r\n-1,,18446744073709551615,12.500\r\n");
    free(s);
}
