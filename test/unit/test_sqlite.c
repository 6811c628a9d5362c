/* test_sqlite.c - the SQLite export (src/report/sqlite*.c, ts_sqlite_write):
 * a hand-made trace read back through the sqlite3 library row by row
 * (expected values counted by hand from the JSON below), refusals that
 * leave nothing behind, and out-of-memory at every allocation. The
 * analyses' tables on real data: test/e2e/export_sqlite.sh. */
#include <dirent.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "trainscope/trainscope.h"

/* outer [10, 110) us holds inner [20, 50); a launch at 60 and its kernel at
 * 80 on stream 7, joined by an ac2g flow; one counter sample; one instant. */
static const char TRACE[] =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"outer\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":100,"
    "\"args\":{\"External id\":5,\"n\":3,\"x\":1.5,\"s\":\"hi\",\"big\":18446744073709551615}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"inner\",\"pid\":1,\"tid\":2,\"ts\":20,\"dur\":30},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":2,\"ts\":60,\"dur\":10,"
    "\"args\":{\"correlation\":7}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":80,\"dur\":20,"
    "\"args\":{\"correlation\":7,\"device\":0,\"stream\":7}},\n"
    "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":7,\"pid\":1,\"tid\":2,\"ts\":60},\n"
    "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":7,\"pid\":0,\"tid\":7,\"ts\":80,\"bp\":\"e\"},\n"
    "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":15,\"args\":{\"bytes\":100}},\n"
    "{\"ph\":\"i\",\"name\":\"mark\",\"pid\":1,\"tid\":2,\"ts\":55,\"s\":\"t\"},\n"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"main\"}},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"python\"}}\n"
    "]}\n";

/* TRACE loaded from a fresh folder made from the mkdtemp template dir. */
static ts_job *setup(char *dir)
{
    if (!mkdtemp(dir)) return NULL;
    char path[512];
    snprintf(path, sizeof path, "%s/t.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    fputs(TRACE, f);
    fclose(f);
    const char *paths[] = {path};
    ts_job *job = NULL;
    return ts_job_load(paths, 1, NULL, &job, NULL) == TS_OK ? job : NULL;
}

/* The one text a query returns ("" for none or NULL; fields joined by '|'). */
static char *one(sqlite3 *db, const char *sql)
{
    static char out[512];
    out[0] = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) { snprintf(out, sizeof out, "error: %s", sqlite3_errmsg(db)); return out; }
    if (sqlite3_step(st) == SQLITE_ROW)
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            const unsigned char *v = sqlite3_column_text(st, c);
            size_t n = strlen(out);
            snprintf(out + n, sizeof out - n, "%s%s", c ? "|" : "", v ? (const char *)v : "NULL");
        }
    sqlite3_finalize(st);
    return out;
}

/* Entries of dir other than t.json (temporaries left behind, a stray database). */
static int n_other_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "t.json");
    if (d) closedir(d);
    return n;
}

static void cleanup(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

TEST(sqlite_export_writes_the_trace_tables_counted_by_hand)
{
    char dir[] = "/tmp/ts_test_sqlite.XXXXXX";
    ts_job *job = setup(dir);
    CHECK(job != NULL);
    if (!job) return;
    char path[512];
    snprintf(path, sizeof path, "%s/out.db", dir);
    ts_sqlite_input in = {.size = sizeof in, .job = job, .replay_why = "not asked"};
    ts_sqlite_stats st;
    ts_error err;
    CHECK_EQ_INT(ts_sqlite_write(&in, path, &st, &err), TS_OK);
    CHECK_EQ_INT(st.n_slices, 5);   /* 4 X + 1 instant */
    CHECK_EQ_INT(st.n_args, 6);     /* n, x, s, big; device, stream (ids are slice columns) */
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_EQ_STR(one(db, "SELECT count(*) FROM slice"), "5");
    CHECK_EQ_STR(one(db, "SELECT s.ts, s.dur, s.depth, p.name, s.category, s.kind FROM slice s JOIN slice p"
                         " ON s.parent_id = p.id WHERE s.name = 'inner'"), "20000|30000|1|outer|cpu_op|cpu_op");
    CHECK_EQ_STR(one(db, "SELECT external_id, correlation FROM slice WHERE name = 'outer'"), "5|NULL");
    CHECK_EQ_STR(one(db, "SELECT group_concat(key || '=' || value_type || ':' || coalesce(int_value, real_value,"
                         " string_value), ' ') FROM (SELECT a.* FROM args a JOIN slice s USING (arg_set_id)"
                         " WHERE s.name = 'outer' ORDER BY a.id)"),
                 "n=int:3 x=real:1.5 s=string:hi big=uint:18446744073709551615");
    CHECK_EQ_STR(one(db, "SELECT thread.name, thread.tid, process.name, process.pid FROM slice"
                         " JOIN thread_track ON slice.track_id = thread_track.id JOIN thread USING (utid)"
                         " JOIN process USING (upid) WHERE slice.name = 'outer'"), "main|2|python|1");
    CHECK_EQ_STR(one(db, "SELECT tt.device, tt.stream, s.correlation FROM slice s JOIN thread_track tt"
                         " ON s.track_id = tt.id WHERE s.name = 'k'"), "0|7|7");
    CHECK_EQ_STR(one(db, "SELECT o.name, i.name, f.trace_id, f.category FROM flow f JOIN slice o ON o.id = f.slice_out"
                         " JOIN slice i ON i.id = f.slice_in"), "cudaLaunchKernel|k|7|ac2g");
    CHECK_EQ_STR(one(db, "SELECT s.ts, s.dur, s.depth FROM slice s WHERE s.name = 'mark'"), "55000|0|0");
    CHECK_EQ_STR(one(db, "SELECT c.ts, c.value, t.name FROM counter c JOIN counter_track t ON c.track_id = t.id"),
                 "15000|100.0|mem.bytes");
    CHECK_EQ_STR(one(db, "SELECT count(*) FROM critical_path"), "0");   /* not given: empty, but there */
    CHECK_EQ_STR(one(db, "SELECT source, kind, message FROM warning WHERE source = 'replay'"),
                 "replay|not_computed|not asked");
    sqlite3_close(db);
    CHECK_EQ_INT(n_other_files(dir), 1);   /* out.db alone: no temporary */
    ts_job_destroy(job);
    cleanup(dir);
}

TEST(sqlite_export_refusals_name_the_path_and_leave_nothing)
{
    char dir[] = "/tmp/ts_test_sqlite.XXXXXX";
    ts_job *job = setup(dir);
    CHECK(job != NULL);
    if (!job) return;
    ts_sqlite_input in = {.size = sizeof in, .job = job};
    ts_error err;
    char path[600];
    CHECK_EQ_INT(ts_sqlite_write(&in, dir, NULL, &err), TS_EIO);   /* a folder */
    CHECK(strstr(err.msg, "not a regular file") != NULL);
    snprintf(path, sizeof path, "%s/missing/out.db", dir);
    CHECK_EQ_INT(ts_sqlite_write(&in, path, NULL, &err), TS_EIO);
    char want[700];
    snprintf(want, sizeof want, "%s: cannot write: No such file or directory", path);
    CHECK_EQ_STR(err.msg, want);
    snprintf(path, sizeof path, "%s/", dir);
    CHECK_EQ_INT(ts_sqlite_write(&in, path, NULL, &err), TS_EIO);
    CHECK_EQ_INT(n_other_files(dir), 0);
    ts_job_destroy(job);
    cleanup(dir);
}

/* Out of memory at each of the writer's own allocations: TS_ENOMEM, no
 * database and no temporary (ASan checks for leaks). */
TEST(sqlite_export_out_of_memory_leaves_nothing)
{
    char dir[] = "/tmp/ts_test_sqlite.XXXXXX";
    ts_job *job = setup(dir);
    CHECK(job != NULL);
    if (!job) return;
    char path[512];
    snprintf(path, sizeof path, "%s/out.db", dir);
    ts_sqlite_input in = {.size = sizeof in, .job = job};
    int failures = 0, rc = TS_ENOMEM;
    for (long budget = 0; budget < 1000 && rc != TS_OK; budget++) {
        ts_test_oom_budget = budget;
        ts_set_allocator(ts_test_oom_alloc, NULL);
        rc = ts_sqlite_write(&in, path, NULL, NULL);
        ts_set_allocator(NULL, NULL);
        if (rc != TS_OK) {
            CHECK_EQ_INT(rc, TS_ENOMEM);
            CHECK_EQ_INT(n_other_files(dir), 0);
            failures++;
        }
    }
    CHECK_EQ_INT(rc, TS_OK);
    CHECK(failures > 0);
    ts_job_destroy(job);
    cleanup(dir);
}
