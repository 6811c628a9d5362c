/* test_html.c - the HTML report on small hand-built traces: the timeline is
 * bounded by pixels, not events; names are escaped; a section with nothing
 * to show is left out of the page and its contents; unwritable paths and
 * out-of-memory fail cleanly and leave no file. (The page in a real browser,
 * on real traces: test/e2e/report_html.sh.) */
#include "test.h"

#include <unistd.h>

#include "core/core.h"
#include "trace/model.h"
#include "trainscope/html.h"

static uint32_t S(ts_rank *r, const char *s) { return ts__rank_intern(r, s, strlen(s)); }

static uint32_t add(ts_rank *r, uint32_t track, int64_t ts, int64_t dur, const char *name, const char *cat, ts_kind kind)
{
    return ts__rank_add_slice(r, track, ts, dur, S(r, name), cat ? S(r, cat) : 0, kind);
}

static ts_job *wrap(ts_rank *r)
{
    ts_job *t = NULL;
    if (ts__rank_finish(r, NULL) != TS_OK || ts__job_create(&r, 1, &t, NULL) != TS_OK) return NULL;
    return t;
}

/* Whole file into a malloc'd string (NULL when absent). */
static char *slurp(const char *path)
{
    char cmd[512], *out = NULL;
    snprintf(cmd, sizeof cmd, "cat '%s' 2>/dev/null", path);
    if (ts_test_run(cmd, &out) != 0) { free(out); return NULL; }
    return out;
}

/* One thread: ProfilerStep#1 over [0, 1000) and op `name` at [10, 510). */
static ts_job *one_op(const char *name)
{
    ts_rank *r = ts__rank_create("r.json");
    uint32_t th = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
    add(r, th, 0, 1000, "ProfilerStep#1", "user_annotation", TS_KIND_USER_ANNOTATION);
    add(r, th, 10, 500, name, "cpu_op", TS_KIND_CPU_OP);
    return wrap(r);
}

static int count(const char *from, const char *to, const char *what)
{
    int n = 0;
    for (const char *p = strstr(from, what); p && (!to || p < to); p = strstr(p + 1, what)) n++;
    return n;
}

static void out_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "/tmp/ts_test_html.%d.%s", (int)getpid(), name);
}

/* 200,000 ops of 2 us, 3 us apart, in two ProfilerSteps of one thread:
 * 0.6 s per step on a 1,100-pixel plot is 367 ops a pixel. Drawn one
 * rectangle each, the step's timeline would have 100,000 of them; merged to
 * pixels it has at most one per pixel for the ops plus one per pixel for the
 * path, plus the lane's background and the 5 legend swatches. */
TEST(html_timeline_draws_pixels_not_events)
{
    ts_rank *r = ts__rank_create("r.json");
    uint32_t th = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
    enum { OPS = 200000 };
    add(r, th, 0, 300000 * (int64_t)1000, "ProfilerStep#1", "user_annotation", TS_KIND_USER_ANNOTATION);
    add(r, th, 300000 * (int64_t)1000, 300000 * (int64_t)1000, "ProfilerStep#2", "user_annotation",
        TS_KIND_USER_ANNOTATION);
    for (int64_t i = 0; i < OPS; i++) add(r, th, i * 3000, 2000, "aten::add", "cpu_op", TS_KIND_CPU_OP);
    ts_job *t = wrap(r);
    CHECK(t != NULL);
    char path[256];
    out_path(path, sizeof path, "timeline.html");
    ts_error err;
    CHECK_EQ_INT(ts_report_html_trace(t, NULL, path, &err), TS_OK);
    char *s = slurp(path);
    CHECK(s != NULL);
    const char *tl = strstr(s, "<section id=\"timeline\">"), *end = tl ? strstr(tl, "</section>") : NULL;
    CHECK(tl && end);
    int rects = count(tl, end, "<rect");
    CHECK(rects > 5 + 1);   /* something was drawn */
    CHECK(rects <= 2 * 1100 + 1 + 5);
    CHECK(strstr(tl, "class=\"cp\"") != NULL && strstr(tl, "ProfilerStep#") != NULL);
    CHECK(strlen(s) < 1000000);
    free(s);
    unlink(path);
    ts_job_destroy(t);
}

/* An op's name is text, never markup; the page refers to nothing outside it. */
TEST(html_escapes_names_and_names_no_url)
{
    ts_job *t = one_op("<script>alert('x')</script>&\"");
    char path[256];
    out_path(path, sizeof path, "escape.html");
    CHECK_EQ_INT(ts_report_html_trace(t, NULL, path, NULL), TS_OK);
    char *s = slurp(path);
    CHECK(s != NULL);
    CHECK(strstr(s, "<script>alert") == NULL);
    CHECK(strstr(s, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;") != NULL);
    CHECK_EQ_INT(count(s, NULL, "<script>"), 1);   /* the page's own */
    CHECK(strstr(s, "http") == NULL && strstr(s, "src=") == NULL);
    free(s);
    unlink(path);
    ts_job_destroy(t);
}

/* Given only a trace, the page has the summary, the views that need only
 * the trace and find something in it (one CPU op: its call stack) and the
 * warnings: every other section (and its table-of-contents link) is left
 * out, none half-written. */
TEST(html_sections_without_data_are_left_out)
{
    ts_job *t = one_op("aten::mm");
    char path[256];
    out_path(path, sizeof path, "bare.html");
    const char *note = "graph: made up for this test";
    ts_report_html_input in = {.size = sizeof in, .trace = t, .notes = &note, .n_notes = 1};
    CHECK_EQ_INT(ts_report_html_write(&in, NULL, path, NULL), TS_OK);
    char *s = slurp(path);
    CHECK(s != NULL);
    CHECK_EQ_INT(count(s, NULL, "<section "), 3);
    CHECK(strstr(s, "<section id=\"summary\">") && strstr(s, "<section id=\"warnings\">"));
    CHECK(strstr(s, "<section id=\"view-callstack\">") != NULL);
    CHECK(strstr(s, "<section id=\"view-transfers\">") == NULL && strstr(s, "<section id=\"view-allocator\">") == NULL);
    CHECK(strstr(s, "href=\"#timeline\"") == NULL && strstr(s, "href=\"#warnings\"") != NULL);
    CHECK(strstr(s, "graph: made up for this test") != NULL);
    CHECK(strstr(s, "</html>") != NULL);
    free(s);
    unlink(path);
    /* a critical path without its graph is a usage error */
    ts_report_html_input bad = {.size = sizeof bad};
    ts_error err;
    CHECK_EQ_INT(ts_report_html_write(&bad, NULL, path, &err), TS_EINVAL);
    CHECK(access(path, F_OK) != 0);
    ts_job_destroy(t);
}

TEST(html_unwritable_path_fails_with_its_name_and_no_file)
{
    ts_job *t = one_op("aten::mm");
    ts_error err;
    const char *path = "/tmp/ts_test_html_no_such_dir/r.html";
    CHECK_EQ_INT(ts_report_html_trace(t, NULL, path, &err), TS_EIO);
    CHECK(strstr(err.msg, path) != NULL);
    CHECK(access(path, F_OK) != 0);
    ts_job_destroy(t);
}

/* Out of memory at any allocation: TS_ENOMEM and no file (ASan checks
 * leaks), or a whole page. */
TEST(html_out_of_memory_fails_cleanly)
{
    ts_rank *r = ts__rank_create("r.json");
    uint32_t cpu = ts__rank_track(r, TS_TRACK_THREAD, 1, 1), gpu = ts__rank_track(r, TS_TRACK_GPU_STREAM, 0, 7);
    add(r, cpu, 0, 1000, "ProfilerStep#1", "user_annotation", TS_KIND_USER_ANNOTATION);
    for (int i = 0; i < 20; i++) {
        uint32_t c = add(r, cpu, 10 + i * 40, 5, "cudaLaunchKernel", "cuda_runtime", TS_KIND_CUDA_RUNTIME);
        uint32_t k = add(r, gpu, 20 + i * 40, 20, i % 2 ? "gemm" : "ncclKernel_AllReduce", "kernel", TS_KIND_KERNEL);
        r->slices.corr[c] = r->slices.corr[k] = i + 1;
    }
    ts_job *t = wrap(r);
    char path[256];
    out_path(path, sizeof path, "oom.html");
    int failures = 0, whole = 0;
    for (long budget = 0; budget < 400; budget += 3) {
        ts_test_oom_budget = budget;
        ts_set_allocator(ts_test_oom_alloc, NULL);
        ts_error err;
        int rc = ts_report_html_trace(t, NULL, path, &err);
        ts_set_allocator(NULL, NULL);
        if (rc != TS_OK) {
            CHECK_EQ_INT(rc, TS_ENOMEM);
            CHECK(access(path, F_OK) != 0);
            failures++;
        } else {
            char *s = slurp(path);
            CHECK(s && strstr(s, "</html>"));
            free(s);
            unlink(path);
            whole++;
        }
    }
    CHECK(failures > 0 && whole > 0);
    ts_job_destroy(t);
}
