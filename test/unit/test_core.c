/* test_core.c - arenas, string pool, map64, string builder, allocation hook. */
#include "test.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/core.h"
#include "core/dynlib.h"

TEST(strpool_interns_once_and_keeps_ids_stable)
{
    ts_strpool p;
    CHECK_EQ_INT(ts__strpool_init(&p), TS_OK);
    uint32_t a = ts__str_intern(&p, "aten::mm", 8);
    uint32_t b = ts__str_intern(&p, "aten::add", 9);
    CHECK(a != 0 && b != 0 && a != b);
    char buf[32];
    for (int i = 0; i < 5000; i++) {   /* forces several table resizes */
        int n = snprintf(buf, sizeof buf, "name%d", i);
        CHECK(ts__str_intern(&p, buf, (size_t)n) != 0);
    }
    CHECK_EQ_INT(ts__str_intern(&p, "aten::mm", 8), a);
    CHECK_EQ_STR(ts__str(&p, b), "aten::add");
    CHECK_EQ_INT(ts__str_find(&p, "name4999", 8) != 0, 1);
    CHECK_EQ_INT(ts__str_find(&p, "absent", 6), 0);
    CHECK_EQ_INT(ts__str_intern(&p, "", 0), 0);
    ts__strpool_free(&p);
}

/* Strings of 16 bytes and more (hashed 16 bytes a step): lengths around the
 * step, strings that differ in one byte anywhere, each its own id, found
 * again after the table grew. */
TEST(strpool_tells_long_strings_apart)
{
    ts_strpool p;
    CHECK_EQ_INT(ts__strpool_init(&p), TS_OK);
    static const size_t lens[] = {15, 16, 17, 31, 32, 33, 100};
    char buf[128];
    uint32_t ids[7][101];
    for (int k = 0; k < 7; k++) {
        size_t n = lens[k];
        for (size_t at = 0; at <= n; at++) {   /* at == n: the unchanged string */
            memset(buf, 'a', n);
            if (at < n) buf[at] = 'b';
            ids[k][at] = ts__str_intern(&p, buf, n);
            CHECK(ids[k][at] != 0);
        }
    }
    for (int k = 0; k < 7; k++) {
        size_t n = lens[k];
        for (size_t at = 0; at <= n; at++) {
            memset(buf, 'a', n);
            if (at < n) buf[at] = 'b';
            CHECK_EQ_INT(ts__str_find(&p, buf, n), ids[k][at]);
            CHECK_EQ_INT(ts__str_intern(&p, buf, n), ids[k][at]);
            CHECK(memcmp(ts__str(&p, ids[k][at]), buf, n) == 0 && ts__str_len(&p, ids[k][at]) == n);
        }
    }
    CHECK_EQ_INT(p.n, 1 + 16 + 17 + 18 + 32 + 33 + 34 + 101);   /* id 0 and each string once */
    ts__strpool_free(&p);
}

TEST(map64_put_get_overwrite_and_grow)
{
    ts_map64 m;
    ts__map64_init(&m);
    for (uint64_t k = 0; k < 10000; k++) CHECK_EQ_INT(ts__map64_put(&m, k * 7919, k), TS_OK);
    uint64_t v = 0;
    CHECK(ts__map64_get(&m, 7919 * 1234, &v));
    CHECK_EQ_INT(v, 1234);
    CHECK(!ts__map64_get(&m, 5, &v));
    CHECK_EQ_INT(ts__map64_put(&m, 7919, 42), TS_OK);
    CHECK(ts__map64_get(&m, 7919, &v));
    CHECK_EQ_INT(v, 42);
    CHECK_EQ_INT(m.n, 10000);
    ts__map64_free(&m);
}

TEST(buf_escapes_json_strings)
{
    ts_buf b;
    ts__buf_init(&b);
    ts__buf_json_str(&b, "a\"b\\c\n\x01", 7);
    CHECK_EQ_STR(ts__buf_cstr(&b), "\"a\\\"b\\\\c\\n\\u0001\"");
    ts__buf_printf(&b, "%d-%s", 7, "x");
    CHECK(strstr(ts__buf_cstr(&b), "7-x") != NULL);
    ts__buf_free(&b);
}

static int fail_after;
static void *failing_alloc(void *ud, void *ptr, size_t old_size, size_t new_size)
{
    (void)ud; (void)old_size;
    if (new_size == 0) { free(ptr); return NULL; }
    if (fail_after-- <= 0) return NULL;
    return realloc(ptr, new_size);
}

TEST(strpool_init_reports_out_of_memory)
{
    for (int k = 0; k < 5; k++) {
        fail_after = k;
        ts_set_allocator(failing_alloc, NULL);
        ts_strpool p;
        int rc = ts__strpool_init(&p);
        ts_set_allocator(NULL, NULL);
        CHECK_EQ_INT(rc, TS_ENOMEM);
    }
}

TEST(arena_allocations_are_aligned_and_large_ones_fit)
{
    ts_arena a;
    ts__arena_init(&a);
    char *p = ts__arena_alloc(&a, 3);
    char *q = ts__arena_alloc(&a, 5);
    CHECK(((uintptr_t)q & 7) == 0 && q != p);
    char *big = ts__arena_alloc(&a, 3u << 20);
    CHECK(big != NULL);
    memset(big, 1, 3u << 20);
    CHECK_EQ_STR(ts__arena_strndup(&a, "hello", 4), "hell");
    ts__arena_free(&a);
}

TEST(strerror_comes_from_the_status_table)
{
    CHECK_EQ_STR(ts_strerror(TS_EPARSE), "malformed input");
    CHECK_EQ_STR(ts_strerror(12345), "unknown error");
}

/* The radix sorts against qsort on random keys (negative, wide and narrow
 * ranges, short and long arrays); the 16-byte one is stable: records with
 * equal keys keep their input order (the second word numbers them). */
TEST(radix_sorts_match_qsort_and_are_stable)
{
    enum { N = 5000 };
    static int64_t a[N], b[N], tmp[2 * N];
    static uint64_t r[N][2], t16[N][2];
    uint64_t seed = 7;
    const int64_t ranges[] = {3, 1000, (int64_t)1 << 40, INT64_MAX};
    const size_t sizes[] = {0, 1, 5, 47, 48, 1000, N};
    for (size_t ri = 0; ri < sizeof ranges / sizeof ranges[0]; ri++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            for (size_t i = 0; i < n; i++) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                int64_t x = (int64_t)((seed >> 1) % (uint64_t)ranges[ri]) - ranges[ri] / 2;
                a[i] = b[i] = x;
                r[i][0] = (uint64_t)x;
                r[i][1] = i;
            }
            qsort(b, n, sizeof *b, ts__cmp_i64);
            ts__sort_i64(a, n, tmp);
            CHECK(n == 0 || memcmp(a, b, n * sizeof *a) == 0);
            ts__sort_rec16(r, n, 0, t16);
            for (size_t i = 0; i < n; i++) {
                CHECK((int64_t)r[i][0] == b[i]);
                if (i && r[i][0] == r[i - 1][0]) CHECK(r[i][1] > r[i - 1][1]);
            }
            for (size_t i = 0; i < n; i++) { uint64_t w = r[i][0]; r[i][0] = r[i][1]; r[i][1] = w; }
            ts__sort_rec16(r, n, 8, t16);   /* by the second word: already sorted, must not move */
            for (size_t i = 0; i < n; i++) CHECK((int64_t)r[i][1] == b[i]);
        }
}

/* The one parser of numeric options: the whole text, within range, nothing
 * saturated or wrapped (2026-11-26: --world 99999999999 became 1215752191). */
TEST(numbers_parse_strictly_within_their_range)
{
    int64_t v = 7, a, b;
    double d = 7;
    CHECK(ts__parse_i64("42", 0, 100, &v) && v == 42);
    CHECK(ts__parse_i64("-9223372036854775808", INT64_MIN, 0, &v) && v == INT64_MIN);
    CHECK(!ts__parse_i64("9223372036854775808", INT64_MIN, INT64_MAX, &v));   /* overflow */
    CHECK(!ts__parse_i64("99999999999", 1, UINT32_MAX, &v));
    CHECK(!ts__parse_i64("-1", 1, 100, &v));
    CHECK(!ts__parse_i64("", 0, 100, &v) && !ts__parse_i64("4x", 0, 100, &v) && !ts__parse_i64(" ", 0, 9, &v));
    CHECK(v == INT64_MIN);   /* untouched by a refusal */
    CHECK(ts__parse_f64("1e-3", 1e-3, 1e6, &d) && d == 1e-3);
    CHECK(!ts__parse_f64("nan", 0, 1e6, &d) && !ts__parse_f64("inf", 0, 1e300, &d));
    CHECK(!ts__parse_f64("1e400", 0, HUGE_VAL, &d));   /* overflow (ERANGE) */
    CHECK(!ts__parse_f64("1e-300", 1e-3, 1e6, &d) && !ts__parse_f64("2.5s", 0, 9, &d));
    CHECK(ts__parse_range("3:5", &a, &b) && a == 3 && b == 5);
    CHECK(ts__parse_range("3", &a, &b) && a == 3 && b == 3);
    CHECK(ts__parse_range(":5", &a, &b) && a == INT64_MIN && b == 5);
    CHECK(ts__parse_range("3:", &a, &b) && a == 3 && b == INT64_MAX);
    CHECK(!ts__parse_range("5:3", &a, &b) && !ts__parse_range("1:99999999999999999999", &a, &b));
    CHECK(!ts__parse_range("99999999999999999999:", &a, &b) && !ts__parse_range("1x:2", &a, &b));
    CHECK(!ts__parse_range("1:2:3", &a, &b));
}

/* One file written whole or not at all (issue 26 item 2: `replay --export`
 * on a full disk left an empty file): a good write replaces the old file
 * and leaves no temporary; a write that fails (/dev/full, written in place as
 * a device is never replaced) is TS_EIO naming the path and its errno; a
 * caller's own failure (ok = false) keeps the old file and removes the
 * temporary; a folder that is not there is an error naming the file. */
static size_t dir_entries(const char *dir)
{
    char cmd[4200], line[64] = "";
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    if (!p) return (size_t)-1;
    if (!fgets(line, sizeof line, p)) line[0] = 0;
    pclose(p);
    return (size_t)strtoul(line, NULL, 10);
}

TEST(files_are_written_whole_or_not_at_all)
{
    char dir[] = "/tmp/ts_core_fileXXXXXX", path[4200], back[16] = "";
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/out.json", dir);
    ts_buf b;
    ts__buf_init(&b);
    ts__buf_puts(&b, "new");
    ts_error err = {0};
    FILE *old = fopen(path, "w");
    CHECK(old && fputs("old", old) >= 0 && fclose(old) == 0);
    CHECK_EQ_INT(ts__write_file(path, &b, &err), TS_OK);
    FILE *f = fopen(path, "r");
    CHECK(f && fgets(back, sizeof back, f));
    if (f) fclose(f);
    CHECK_EQ_STR(back, "new");
    CHECK_EQ_INT(dir_entries(dir), 1);   /* no temporary beside it */

    ts__file o;
    CHECK_EQ_INT(ts__file_open(&o, path, &err), TS_OK);
    CHECK(fputs("half", o.f) >= 0);
    CHECK_EQ_INT(ts__file_close(&o, false, &err), TS_EIO);   /* the caller gave up: old file kept */
    f = fopen(path, "r");
    CHECK(f && fgets(back, sizeof back, f));
    if (f) fclose(f);
    CHECK_EQ_STR(back, "new");
    CHECK_EQ_INT(dir_entries(dir), 1);

    err = (ts_error){0};   /* ts__error keeps the first cause */
    CHECK_EQ_INT(ts__write_file("/dev/full", &b, &err), TS_EIO);   /* every write: ENOSPC */
    CHECK(strstr(err.msg, "/dev/full") && strstr(err.msg, strerror(ENOSPC)));
    snprintf(path, sizeof path, "%s/no/such/out.json", dir);
    err = (ts_error){0};
    CHECK_EQ_INT(ts__write_file(path, &b, &err), TS_EIO);
    CHECK(strstr(err.msg, path) != NULL);
    ts__buf_free(&b);
    snprintf(path, sizeof path, "%s/out.json", dir);
    remove(path);
    CHECK(rmdir(dir) == 0);
}

/* An optional library that is not there, or lacks a function, is a clear
 * error naming the caller and the library, every time it is asked for; one
 * that is there fills its table (libm's cos, compared with cos itself). */
TEST(dynlib_missing_library_or_function_is_a_clear_error)
{
    static const char *const none[] = {"cos"};
    void *fn[1] = {NULL};
    ts_dynlib absent = {"libtrainscope-no-such-lib.so.9", none, fn, 1, 0, ""};
    ts_error err = {0};
    CHECK_EQ_INT(ts__dynlib_open(&absent, "trace.x", &err), TS_EFORMAT);
    CHECK(strstr(err.msg, "trace.x: needs libtrainscope-no-such-lib.so.9") != NULL);
    err = (ts_error){0};
    CHECK_EQ_INT(ts__dynlib_open(&absent, "again.x", &err), TS_EFORMAT);   /* tried once, said every time */
    CHECK(strstr(err.msg, "again.x: needs libtrainscope-no-such-lib.so.9") != NULL);
    CHECK(fn[0] == NULL);

    static const char *const bad[] = {"cos", "no_such_function_in_libm"};
    void *fb[2] = {NULL, NULL};
    ts_dynlib lacking = {"libm.so.6", bad, fb, 2, 0, ""};
    err = (ts_error){0};
    CHECK_EQ_INT(ts__dynlib_open(&lacking, "y", &err), TS_EFORMAT);
    CHECK(strstr(err.msg, "libm.so.6 has no no_such_function_in_libm") != NULL);

    void *fc[1] = {NULL};
    ts_dynlib libm = {"libm.so.6", none, fc, 1, 0, ""};
    err = (ts_error){0};
    CHECK_EQ_INT(ts__dynlib_open(&libm, "z", &err), TS_OK);
    double (*c)(double);
    memcpy(&c, &fc[0], sizeof c);
    CHECK(c != NULL && c(0.0) == 1.0);
}
