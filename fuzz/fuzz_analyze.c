/* fuzz_analyze.c - libFuzzer target for everything downstream of the
 * Chrome-trace reader: any input the reader accepts goes through stats (by
 * name, rank and category, with --top), breakdown, the dependency graph,
 * the critical path, an unmodified replay and a --scale what-if, every
 * output of stats, breakdown, diff, info and the critical path (table, JSON,
 * each CSV table; src/report/), the HTML report drawing all of them, and
 * every view (trainscope views) with its table, JSON and HTML writers, into
 * /dev/null. None of
 * these may crash, read out of bounds or loop on a trace the reader took;
 * errors (no iteration, a cycle) are fine. The seed corpus is small real
 * excerpts (fuzz/corpus/fuzz_analyze/), so mutations stay trace-shaped.
 *
 * Build: make fuzz (clang, ASan + UBSan + libFuzzer).
 */
#include <stdlib.h>

#include "ingest/ingest.h"
#include "trace/model.h"
#include "trainscope/analyze.h"
#include "trainscope/graph.h"
#include "trainscope/html.h"
#include "trainscope/replay.h"
#include "trainscope/report.h"
#include "trainscope/views.h"
#include "report/views_html.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every format of one result, and each of its CSV tables (names[] ends with NULL). */
typedef int (*report_fn)(const void *res, const ts_job *t, const ts_report_opts *o, FILE *out);
static void outputs(report_fn fn, const void *res, const ts_job *t, const char *const *names)
{
    FILE *out = fopen("/dev/null", "w");
    if (!out) return;
    for (int f = TS_FMT_TABLE; f <= TS_FMT_JSON; f++) {
        ts_report_opts o = {.size = sizeof o, .format = (ts_format)f, .width = f ? 0 : 40, .top = 3};
        (void)fn(res, t, &o, out);
    }
    for (int i = 0; names[i]; i++) {
        ts_report_opts o = {.size = sizeof o, .format = TS_FMT_CSV, .table = names[i]};
        (void)fn(res, t, &o, out);
    }
    ts_report_opts o = {.size = sizeof o, .format = TS_FMT_CSV};   /* no table named: the main one (docs/csv.md) */
    (void)fn(res, t, &o, out);
    fclose(out);
}
static int out_stats(const void *r, const ts_job *t, const ts_report_opts *o, FILE *f)
{
    return ts_report_stats(r, t, o, f, NULL);
}
static int out_breakdown(const void *r, const ts_job *t, const ts_report_opts *o, FILE *f)
{
    return ts_report_breakdown(r, NULL, t, NULL, "a note", o, f, NULL);
}
static int out_diff(const void *r, const ts_job *t, const ts_report_opts *o, FILE *f)
{
    return ts_report_diff(r, t, t, o, f, NULL);
}
static int out_info(const void *r, const ts_job *t, const ts_report_opts *o, FILE *f)
{
    return ts_report_info(r, o, f, NULL);
}
static int out_cp(const void *r, const ts_job *t, const ts_report_opts *o, FILE *f)
{
    return ts_report_critical_path(r, t, o, f, NULL);
}

static void analyses(const ts_job *t)
{
    for (int by = TS_STATS_BY_NAME; by <= TS_STATS_BY_CATEGORY; by++) {
        ts_stats_opts so = {.size = sizeof so, .by = (ts_stats_by)by, .top = by == TS_STATS_BY_NAME ? 3 : 0};
        ts_stats *st = NULL;
        static const char *const names[] = {"rows", "windows", NULL};
        if (ts_stats_compute(t, &so, &st, NULL) != TS_OK) continue;
        outputs(out_stats, st, t, names);
        ts_stats_destroy(st);
    }
    ts_breakdown_opts bo = {.size = sizeof bo, .top_kernels = 2};
    ts_breakdown *b = NULL;
    static const char *const bd_names[] = {"temporal", "kernel_types", "kernels", "streams", "launches",
                                           "memory_bandwidth", "threads", "stragglers", NULL};
    if (ts_breakdown_compute(t, &bo, &b, NULL) == TS_OK) {
        outputs(out_breakdown, b, t, bd_names);
        ts_breakdown_destroy(b);
    }
    for (int whole = 0; whole < 2; whole++) {   /* the trace against itself: every row "=" */
        ts_diff_opts dop = {.size = sizeof dop, .whole = whole};
        ts_diff *d = NULL;
        static const char *const names[] = {"ops", "ranks", NULL};
        if (ts_diff_compute(t, t, &dop, &d, NULL) != TS_OK) continue;
        outputs(out_diff, d, t, names);
        ts_diff_destroy(d);
    }
    static const char *const info_names[] = {"ranks", "meta", NULL};
    outputs(out_info, t, t, info_names);

    if (ts_report_html_trace(t, NULL, "/dev/null", NULL) != TS_OK) abort();   /* only ENOMEM or a write may fail */

    ts_graph *g = NULL;
    if (ts_graph_create(t, NULL, &g, NULL) != TS_OK) return;
    ts_critical_path *cp = NULL;
    static const char *const cp_names[] = {"categories", "wait_on_rank", "ops", "path", "ranks", "edges", NULL};
    if (ts_critical_path_create(g, -1, &cp, NULL) == TS_OK) {
        outputs(out_cp, cp, t, cp_names);
        ts_critical_path_destroy(cp);
    }
    ts_replay *r = NULL;
    if (ts_replay_run_graph(g, NULL, &r, NULL) == TS_OK) ts_replay_destroy(r);
    const char *scales[] = {"kernel:*=0.5", "*mm*=2"};
    ts_replay_options ro = {.size = sizeof ro, .scales = scales, .n_scales = 2};
    if (ts_replay_run_graph(g, &ro, &r, NULL) == TS_OK) ts_replay_destroy(r);
    ts_graph_destroy(g);
}

/* Each view, written as a table, as JSON and as its HTML section. */
static void views(const ts_job *t)
{
    FILE *devnull = fopen("/dev/null", "w");
    ts_views_opts o = {.size = sizeof o, .n_bins = 3};
    ts_buf b;
    ts__buf_init(&b);
#define VIEW(NAME)                                                                          \
    do {                                                                                    \
        ts_view_##NAME *v = NULL;                                                           \
        if (ts_view_##NAME##_create(t, &o, &v, NULL) != TS_OK) break;                       \
        for (int f = TS_VIEWS_TABLE; devnull && f <= TS_VIEWS_JSON; f++) {                  \
            ts_views_out out = {.size = sizeof out, .format = (ts_views_format)f, .top = 2};  \
            (void)ts_views_write_##NAME(devnull, v, &out, NULL);                            \
        }                                                                                   \
        (void)ts_report_html_view_##NAME(&b, v);                                            \
        ts_view_##NAME##_destroy(v);                                                        \
    } while (0)
    VIEW(callstack);
    VIEW(allocator);
    VIEW(transfers);
    VIEW(queues);
    VIEW(comm);
#undef VIEW
    ts__buf_free(&b);
    if (devnull) fclose(devnull);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_rank *rank = NULL;
    ts_error err;
    if (ts__ingest_json_buffer("fuzz.json", data, size, NULL, &rank, &err) != TS_OK) return 0;
    ts_job *t = NULL;
    if (ts__job_create(&rank, 1, &t, &err) != TS_OK) return 0;   /* the trace owns the rank either way */
    analyses(t);
    views(t);
    ts_job_destroy(t);
    return 0;
}
