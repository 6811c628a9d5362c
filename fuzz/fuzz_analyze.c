/* fuzz_analyze.c - libFuzzer target for everything downstream of the
 * Chrome-trace reader: any input the reader accepts goes through stats (by
 * name, rank and category, with --top), breakdown, the dependency graph,
 * the critical path, an unmodified replay and a --scale what-if, and every
 * view (trainscope views) with its table, JSON and HTML writers. None of
 * these may crash, read out of bounds or loop on a trace the reader took;
 * errors (no iteration, a cycle) are fine. The seed corpus is small real
 * excerpts (fuzz/corpus/fuzz_analyze/), so mutations stay trace-shaped.
 *
 * Build: make fuzz (clang, ASan + UBSan + libFuzzer).
 */
#include "ingest/ingest.h"
#include "trace/model.h"
#include "trainscope/analyze.h"
#include "trainscope/graph.h"
#include "trainscope/replay.h"
#include "trainscope/views.h"
#include "report/views_html.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void analyses(const ts_trace *t)
{
    for (int by = TS_STATS_BY_NAME; by <= TS_STATS_BY_CATEGORY; by++) {
        ts_stats_opts so = {.size = sizeof so, .by = (ts_stats_by)by, .top = by == TS_STATS_BY_NAME ? 3 : 0};
        ts_stats *st = NULL;
        if (ts_stats_compute(t, &so, &st, NULL) == TS_OK) ts_stats_destroy(st);
    }
    ts_breakdown_opts bo = {.size = sizeof bo, .top_kernels = 2};
    ts_breakdown *b = NULL;
    if (ts_breakdown_compute(t, &bo, &b, NULL) == TS_OK) ts_breakdown_destroy(b);
    for (int whole = 0; whole < 2; whole++) {   /* the trace against itself: every row "=" */
        ts_diff_opts dop = {.size = sizeof dop, .whole = whole};
        ts_diff *d = NULL;
        if (ts_diff_compute(t, t, &dop, &d, NULL) == TS_OK) ts_diff_destroy(d);
    }

    ts_graph *g = NULL;
    if (ts_graph_create(t, NULL, &g, NULL) != TS_OK) return;
    ts_critical_path *cp = NULL;
    if (ts_critical_path_create(g, -1, &cp, NULL) == TS_OK) ts_critical_path_destroy(cp);
    ts_replay *r = NULL;
    if (ts_replay_run_graph(g, NULL, &r, NULL) == TS_OK) ts_replay_destroy(r);
    const char *scales[] = {"kernel:*=0.5", "*mm*=2"};
    ts_replay_options ro = {.size = sizeof ro, .scales = scales, .n_scales = 2};
    if (ts_replay_run_graph(g, &ro, &r, NULL) == TS_OK) ts_replay_destroy(r);
    ts_graph_destroy(g);
}

/* Each view, written as a table, as JSON and as its HTML section. */
static void views(const ts_trace *t)
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
    ts_trace *t = NULL;
    if (ts__trace_create(&rank, 1, &t, &err) != TS_OK) return 0;   /* the trace owns the rank either way */
    analyses(t);
    views(t);
    ts_trace_destroy(t);
    return 0;
}
