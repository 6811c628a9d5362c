/* test_nsys.c - Nsight Systems SQLite exports (src/ingest/nsys.c).
 *
 * The real export in ../shared/data/nsys/ (nsys 2024.5.1, an A100) is checked
 * against the counts and totals PROVENANCE.md took from it with the sqlite3
 * shell; NVTX and memset tables, which that export lacks, and an older
 * layout (EXPORT_META_DATA, no ENUM_* tables, columns in another order) are
 * checked on small hand-made databases written here with the SQLite API
 * (labelled hand-made: no nsys wrote them).
 */
#include "test.h"

#include <sqlite3.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "trace/model.h"
#include "trainscope/ingest.h"

static ts_job *load1(const char *path, ts_error *err)
{
    ts_job *t = NULL;
    ts_load_opts o = {.size = sizeof o, .n_threads = 1};
    return ts_job_load(&path, 1, &o, &t, err) == TS_OK ? t : NULL;
}

/* Slices of a category string: count and total duration. */
static void cat_totals(const ts_rank *r, const char *cat, uint64_t *n, int64_t *total)
{
    *n = 0;
    *total = 0;
    for (uint32_t s = 0; s < r->slices.n; s++)
        if (!strcmp(ts__rank_str(r, r->slices.cat[s]), cat)) { (*n)++; *total += r->slices.dur_ns[s]; }
}

static const char *meta(const ts_rank *r, const char *key)
{
    ts_arg_type ty;
    uint64_t v;
    return ts__meta_arg(r, key, &ty, &v) && ty == TS_ARG_STR ? ts__rank_str(r, (uint32_t)v) : NULL;
}

TEST(nsys_reads_the_real_export_tables)
{
    const char *path = ts_test_data("nsys/cloverleaf-cuda.nsys.sqlite");
    if (access(path, R_OK)) SKIP("%s missing", path);
    ts_error err;
    ts_job *t = load1(path, &err);
    if (!t) TS_FAIL_("load: %s", err.msg);
    const ts_rank *r = t->ranks[0];
    uint64_t n;
    int64_t total;
    /* PROVENANCE.md (sqlite3): 1,312 kernels 294,404.540 us, 279 memcpy
     * 9,390.923 us, 3,048 runtime calls 571,656.984 us, 1,312 syncs, 1,831
     * OS runtime calls. */
    cat_totals(r, "kernel", &n, &total);
    CHECK_EQ_INT(n, 1312);
    CHECK_EQ_INT(total, 294404540);
    cat_totals(r, "gpu_memcpy", &n, &total);
    CHECK_EQ_INT(n, 279);
    CHECK_EQ_INT(total, 9390923);
    cat_totals(r, "cuda_runtime", &n, &total);
    CHECK_EQ_INT(n, 3048);
    CHECK_EQ_INT(total, 571656984);
    cat_totals(r, "cuda_sync", &n, &total);
    CHECK_EQ_INT(n, 1312);
    cat_totals(r, "os_runtime", &n, &total);
    CHECK_EQ_INT(n, 1831);
    CHECK_EQ_STR(meta(r, "nsys_version"), "2024.5.1.113");
    CHECK_EQ_STR(meta(r, "nsys_export_schema"), "3.13.2");
    CHECK(strstr(meta(r, "nsys_layout"), "META_DATA_EXPORT") != NULL);
    /* times are the session's UTC start (1696392839587175550 ns) + the
     * table's: the first kernel starts at 533338240 */
    CHECK_EQ_INT(r->base_time_ns, 1696392839587175550LL);
    bool kernel_at = false, launch = false, memcpy_name = false;
    int64_t corr = -1;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        const char *name = ts__rank_str(r, r->slices.name[s]);
        if (r->slices.kind[s] == TS_KIND_KERNEL && r->slices.ts_ns[s] == 1696392839587175550LL + 533338240) {
            kernel_at = true;
            corr = r->slices.corr[s];
            CHECK_EQ_INT(r->slices.dur_ns[s], 534705884 - 533338240);
            CHECK_EQ_INT(r->tracks[r->slices.track[s]].stream, 7);
        }
        launch |= !strcmp(name, "cudaLaunchKernel");   /* "_v7000" dropped */
        memcpy_name |= !strcmp(name, "Memcpy HtoD (Pageable -> Device)");
        CHECK(!strstr(name, "_v7000"));
    }
    CHECK(kernel_at);
    CHECK_EQ_INT(corr, 452);
    CHECK(launch);
    CHECK(memcpy_name);
    /* the runtime call of correlation 452 is on a named thread of a named process */
    bool paired = false;
    for (uint32_t s = 0; s < r->slices.n; s++)
        if (r->slices.kind[s] == TS_KIND_CUDA_RUNTIME && r->slices.corr[s] == 452) {
            const ts_track *tr = &r->tracks[r->slices.track[s]];
            paired = tr->kind == TS_TRACK_THREAD && tr->name_id && tr->process_name_id;
        }
    CHECK(paired);
    ts_job_destroy(t);
}

/* A hand-made export in nsys 2022's layout: EXPORT_META_DATA, no ENUM_*
 * tables, columns in another order, NVTX push/pop, start/end and mark, a
 * memset and a kernel with only shortName. Thread 0x010203 of pid 42:
 * globalTid = (42 << 24) | 0x010203. */
static const char *hand_made_2022 =
    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
    "INSERT INTO StringIds VALUES (1,'ProfilerStep#1'),(2,'ProfilerStep#2'),(3,'gemm'),(4,'cudaMemsetAsync_v3020'),"
    "  (5,'main'),(6,'forward');"
    "CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);"
    "INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_PRODUCT_VERSION','2022.4.2.1'),('EXPORT_SCHEMA_VERSION','2.7.1');"
    "CREATE TABLE ThreadNames (globalTid INTEGER, nameId INTEGER, priority INTEGER);"
    "INSERT INTO ThreadNames VALUES (704709123, 5, 0);"
    "CREATE TABLE NVTX_EVENTS (eventType INTEGER, globalTid INTEGER, start INTEGER, end INTEGER, text TEXT,"
    "  textId INTEGER, rangeId INTEGER, domainId INTEGER);"
    "INSERT INTO NVTX_EVENTS VALUES (59, 704709123, 1000, 5000, NULL, 1, 0, 0),"
    "  (59, 704709123, 5000, 9000, NULL, 2, 0, 0), (59, 704709123, 1500, 2500, 'fwd text', NULL, 0, 0),"
    "  (60, 704709123, 1200, 7000, 'async range', NULL, 7, 0), (34, 704709123, 3000, NULL, 'a mark', NULL, 0, 0),"
    "  (75, 704709123, 0, NULL, 'domain', NULL, 0, 0);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (correlationId INTEGER, nameId INTEGER, globalTid INTEGER,"
    "  start INTEGER, end INTEGER);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (11, 4, 704709123, 1600, 1700), (12, 4, 704709123, 1800, 1900);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,"
    "  correlationId INTEGER, bytes INTEGER, memKind INTEGER, value INTEGER);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (2000, 2400, 1, 13, 11, 4096, 2, 0);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (shortName INTEGER, start INTEGER, end INTEGER, deviceId INTEGER,"
    "  streamId INTEGER, correlationId INTEGER);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (3, 2500, 3100, 1, 13, 12), (3, 3200, 3100, 1, 13, NULL);";

static int make_db(const char *path, const char *sql)
{
    unlink(path);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) return -1;
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

TEST(nsys_reads_an_older_layout_with_nvtx_and_memset_by_column_name)
{
    char path[] = "/tmp/ts_nsys_2022_XXXXXX.sqlite";
    int fd = mkstemps(path, 7);
    if (fd < 0) TS_FAIL_("mkstemps");
    close(fd);
    if (make_db(path, hand_made_2022)) TS_FAIL_("cannot write %s", path);
    ts_error err;
    ts_job *t = load1(path, &err);
    unlink(path);
    if (!t) TS_FAIL_("load: %s", err.msg);
    const ts_rank *r = t->ranks[0];
    CHECK_EQ_STR(meta(r, "nsys_version"), "2022.4.2.1");
    CHECK(strstr(meta(r, "nsys_layout"), "EXPORT_META_DATA") != NULL);
    CHECK(strstr(meta(r, "nsys_layout"), "no ENUM_* tables") != NULL);
    /* NVTX ProfilerStep ranges become iterations */
    CHECK_EQ_INT(r->n_iterations, 2);
    CHECK_EQ_INT(r->iterations[0].step, 1);
    CHECK_EQ_INT(r->iterations[1].end_ns, 9000);
    uint64_t n;
    int64_t total;
    cat_totals(r, "nvtx", &n, &total);
    CHECK_EQ_INT(n, 4);   /* three push/pop, one start/end; the mark is an instant, the domain skipped */
    CHECK_EQ_INT(total, 4000 + 4000 + 1000 + 5800);
    CHECK_EQ_INT(r->instants.n, 1);
    CHECK_EQ_STR(ts__rank_str(r, r->instants.name[0]), "a mark");
    cat_totals(r, "gpu_memset", &n, &total);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(total, 400);
    cat_totals(r, "kernel", &n, &total);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(total, 600);   /* the second ends before it starts: 0, and warned */
    CHECK_EQ_INT(r->warn_count[TS_WARN_NEGATIVE_DURATION], 1);
    bool memset_named = false, call_named = false, thread_named = false;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        const char *name = ts__rank_str(r, r->slices.name[s]);
        const ts_track *tr = &r->tracks[r->slices.track[s]];
        if (!strcmp(name, "Memset (Device)")) {
            memset_named = true;
            CHECK_EQ_INT(tr->device, 1);
            CHECK_EQ_INT(tr->stream, 13);
            int64_t bytes;
            CHECK(ts__slice_arg_i64(r, s, "bytes", &bytes) && bytes == 4096);
            CHECK_EQ_INT(r->slices.corr[s], 11);
        }
        if (!strcmp(name, "cudaMemsetAsync")) {
            call_named = true;
            CHECK_EQ_INT(tr->pid, 42);
            CHECK_EQ_INT(tr->tid, 0x010203);
            thread_named = tr->name_id && !strcmp(ts__rank_str(r, tr->name_id), "main");
        }
    }
    CHECK(memset_named);
    CHECK(call_named);
    CHECK(thread_named);
    ts_job_destroy(t);
}

TEST(nsys_refuses_other_databases_and_unknown_layouts)
{
    static const struct { const char *sql, *msg; } cases[] = {
        {"CREATE TABLE t (a); INSERT INTO t VALUES (1);", "not an Nsight Systems export (no StringIds table)"},
        {"CREATE TABLE StringIds (id, value);", "without any table of GPU activity"},
        {"CREATE TABLE StringIds (id, value); CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (begin, finish, deviceId);",
         "unknown nsys export layout: table CUPTI_ACTIVITY_KIND_KERNEL has no column start"},
        {"CREATE TABLE StringIds (id, value); CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid);",
         "table CUPTI_ACTIVITY_KIND_RUNTIME has no column nameId"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[] = "/tmp/ts_nsys_bad_XXXXXX.sqlite";
        int fd = mkstemps(path, 7);
        if (fd < 0) TS_FAIL_("mkstemps");
        close(fd);
        if (make_db(path, cases[i].sql)) TS_FAIL_("cannot write %s", path);
        ts_error err = {0};
        ts_job *t = load1(path, &err);
        unlink(path);
        CHECK(t == NULL);
        CHECK(strstr(err.msg, path) == err.msg);
        if (!strstr(err.msg, cases[i].msg)) TS_FAIL_("case %zu: %s", i, err.msg);
    }
}

/* A database cut short (the first 8 KiB of the real export) fails with a
 * message naming where the bytes ended, never a crash or a partial rank. */
TEST(nsys_refuses_a_truncated_export)
{
    const char *path = ts_test_data("nsys/cloverleaf-cuda.nsys.sqlite");
    if (access(path, R_OK)) SKIP("%s missing", path);
    FILE *f = fopen(path, "rb");
    if (!f) TS_FAIL_("open");
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    ts_rank *r = NULL;
    ts_error err = {0};
    CHECK(ts__nsys_ingest_buffer("cut.sqlite", buf, n, NULL, &r, &err) != TS_OK);
    CHECK(r == NULL);
    CHECK_EQ_STR(err.msg, "cut.sqlite: byte 8192: SQLite database cut short: its header says 2154496 bytes");
    /* a header whose page count is not trusted (version-valid-for differs)
     * reaches SQLite, which reports the damage itself */
    buf[95] ^= 1;
    err = (ts_error){0};
    CHECK(ts__nsys_ingest_buffer("cut.sqlite", buf, n, NULL, &r, &err) != TS_OK);
    CHECK(r == NULL);
    if (strstr(err.msg, "cut.sqlite: byte ") != err.msg) TS_FAIL_("%s", err.msg);
    CHECK(strstr(err.msg, "SQLite: ") != NULL);
}
