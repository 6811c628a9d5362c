/* html_summary.c - the HTML report's first and last sections: the job
 * summary (inputs, sizes, iteration times at a glance) and the warnings
 * (ingest warnings summed per kind over ranks, analyses that could not run,
 * what the graph, critical path and replay approximated).
 * Not for: per-rank detail (html_charts.c) or the timeline.
 */
#include "report/html.h"

#include <string.h>

#include "graph/critical_path.h"
#include "trace/model.h"

#define FILES_LISTED 8     /* inputs named one by one; the rest are counted */
#define LINES_LISTED 100   /* analysis warning lines shown per source; the rest are counted */

static void kv_open(ts_buf *b, const char *key)
{
    ts__buf_puts(b, "<tr><th>");
    ts__html_text(b, key);
    ts__buf_puts(b, "</th><td>");
}

static void inputs_row(ts_buf *b, const ts_job *t)
{
    kv_open(b, "inputs");
    for (uint32_t i = 0; i < t->n_ranks && i < FILES_LISTED; i++) {
        ts__buf_printf(b, "%srank %d: ", i ? "<br>" : "", t->ranks[i]->rank);
        ts__html_text(b, t->ranks[i]->path);
        const char *fmt = ts_rank_meta_str(t->ranks[i], "format");
        if (fmt) { ts__buf_puts(b, " ("); ts__html_text(b, fmt); ts__buf_puts(b, ")"); }
    }
    if (t->n_ranks > FILES_LISTED) ts__buf_printf(b, "<br>and %u more", t->n_ranks - FILES_LISTED);
    ts__buf_puts(b, "</td></tr>\n");
}

static void trace_rows(ts_buf *b, const ts_job *t)
{
    uint64_t events = 0, slices = 0;
    uint32_t it_min = UINT32_MAX, it_max = 0;
    for (uint32_t i = 0; i < t->n_ranks; i++) {
        const ts_rank *r = t->ranks[i];
        events += r->n_events_read;
        slices += r->slices.n;
        if (r->n_iterations < it_min) it_min = r->n_iterations;
        if (r->n_iterations > it_max) it_max = r->n_iterations;
    }
    kv_open(b, "ranks loaded");
    ts__buf_printf(b, "%u</td></tr>\n", t->n_ranks);
    kv_open(b, "events read");
    ts__buf_printf(b, "%llu (%llu slices)</td></tr>\n", (unsigned long long)events, (unsigned long long)slices);
    kv_open(b, "iterations per rank");
    if (!t->n_ranks) ts__buf_puts(b, "-");
    else if (it_min == it_max) ts__buf_printf(b, "%u", it_min);
    else ts__buf_printf(b, "%u to %u", it_min, it_max);
    ts__buf_puts(b, "</td></tr>\n");
}

static void breakdown_rows(ts_buf *b, const ts_breakdown *bd)
{
    uint32_t gpu = 0;
    int64_t span = 0, idle = 0;
    for (uint32_t i = 0; i < bd->n_ranks; i++)
        if (bd->ranks[i].has_gpu) { gpu++; span += bd->ranks[i].span_ns; idle += bd->ranks[i].idle_ns; }
    kv_open(b, "ranks with GPU work");
    ts__buf_printf(b, "%u of %u</td></tr>\n", gpu, bd->n_ranks);
    if (gpu) {
        kv_open(b, "GPU idle (all GPU ranks)");
        ts__buf_printf(b, "%.2f%% of their spans</td></tr>\n", ts__html_pct(idle, span));
    }
}

static void graph_rows(ts_buf *b, const ts_graph *g)
{
    int64_t resid = 0;
    for (uint32_t r = 0; r < g->n_ranks; r++)
        if (g->align[r].resid_max_ns > resid) resid = g->align[r].resid_max_ns;
    kv_open(b, "dependency graph");
    ts__buf_printf(b, "%u ranks, %u nodes, %u edges, %u collectives matched across ranks</td></tr>\n", g->n_ranks,
                   ts_graph_n_nodes(g), ts_graph_n_edges(g), ts_graph_n_collectives(g));
    if (g->n_ranks > 1) {
        kv_open(b, "clock alignment");
        ts__buf_puts(b, "largest residual after alignment ");
        ts__html_dur(b, resid);
        ts__buf_puts(b, "</td></tr>\n");
    }
}

static void time_rows(ts_buf *b, const ts_report_html_input *in)
{
    if (in->replay) {
        kv_open(b, "iteration (measured, median of the slowest rank)");
        ts__html_dur(b, ts_replay_measured_iteration_ns(in->replay));
        ts__buf_printf(b, " over %u iterations</td></tr>\n", ts_replay_n_iterations(in->replay));
        kv_open(b, "iteration (replayed)");
        ts__html_dur(b, ts_replay_predicted_iteration_ns(in->replay));
        ts__buf_printf(b, " (%+.2f%%)</td></tr>\n", ts_replay_error_pct(in->replay));
    }
    const ts_critical_path *cp = in->critical_path;
    if (cp) {
        kv_open(b, "critical path");
        ts__html_dur(b, ts_critical_path_length_ns(cp));
        if (cp->step >= 0) ts__buf_printf(b, " (ProfilerStep#%lld)", (long long)cp->step);
        else ts__buf_puts(b, " (whole trace)");
        ts__buf_puts(b, "</td></tr>\n");
    }
}

int ts__html_summary(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err)
{
    ts__buf_puts(out, "<table id=\"summary-table\">\n");
    inputs_row(out, in->trace);
    trace_rows(out, in->trace);
    if (in->breakdown) breakdown_rows(out, in->breakdown);
    if (in->graph) graph_rows(out, in->graph);
    time_rows(out, in);
    ts__buf_puts(out, "</table>\n");
    return TS_OK;
}

/* ---- warnings ---- */

/* Ingest warnings summed per kind over ranks: how many ranks, how many in
 * all, and the first one (with its file). */
static uint32_t ingest_warnings(ts_buf *b, const ts_job *t)
{
    uint32_t kinds = 0;
    for (int k = 0; k < TS_WARN_COUNT; k++) {
        uint64_t count = 0;
        uint32_t ranks = 0;
        const ts_rank *first = NULL;
        for (uint32_t i = 0; i < t->n_ranks; i++) {
            if (!t->ranks[i]->warn_count[k]) continue;
            count += t->ranks[i]->warn_count[k];
            ranks++;
            if (!first) first = t->ranks[i];
        }
        if (!count) continue;
        if (!kinds++) {
            static const char *const h[] = {"kind", "#ranks", "#count", "first"};
            ts__buf_puts(b, "<h3>Read from the input</h3>\n");
            ts__html_table_open(b, "ingest-warnings", h, 4);
        }
        ts__buf_puts(b, "<tr><td>");
        ts__html_text(b, ts__warn_name((ts_warn_kind)k));
        ts__buf_printf(b, "</td><td class=\"num\">%u</td><td class=\"num\">%llu</td><td>", ranks,
                       (unsigned long long)count);
        ts__html_text(b, first->path);
        ts__buf_puts(b, ": ");
        ts__html_text(b, first->warn_first[k] ? first->warn_first[k] : "-");
        ts__buf_puts(b, "</td></tr>\n");
    }
    if (kinds) ts__buf_puts(b, "</tbody></table>\n");
    return kinds;
}

typedef const char *(*line_fn)(const void *obj, uint32_t i);
static const char *graph_line(const void *g, uint32_t i) { return ts_graph_warning(g, i); }
static const char *cp_line(const void *cp, uint32_t i) { return ts_critical_path_warning(cp, i); }
static const char *replay_line(const void *r, uint32_t i) { return ts_replay_warning(r, i); }

static uint32_t line_list(ts_buf *b, const char *heading, const char *id, line_fn line, const void *obj, uint32_t n)
{
    if (!n) return 0;
    ts__buf_puts(b, "<h3>");
    ts__html_text(b, heading);
    ts__buf_printf(b, "</h3>\n<ul id=\"%s\">", id);
    for (uint32_t i = 0; i < n && i < LINES_LISTED; i++) {
        ts__buf_puts(b, "<li>");
        ts__html_text(b, line(obj, i));
        ts__buf_puts(b, "</li>");
    }
    if (n > LINES_LISTED) ts__buf_printf(b, "<li class=\"note\">and %u more</li>", n - LINES_LISTED);
    ts__buf_puts(b, "</ul>\n");
    return n;
}

static const char *note_line(const void *notes, uint32_t i) { return ((const char *const *)notes)[i]; }

int ts__html_warnings(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err)
{
    uint32_t n = line_list(out, "Analyses that could not run", "analysis-notes", note_line, in->notes,
                           in->notes ? in->n_notes : 0);
    n += ingest_warnings(out, in->trace);
    /* The replay's lines include its graph's; without a replay, the graph's own. */
    if (in->replay)
        n += line_list(out, "Graph and replay", "replay-warnings", replay_line, in->replay,
                       ts_replay_n_warnings(in->replay));
    else if (in->graph)
        n += line_list(out, "Graph", "graph-warnings", graph_line, in->graph, ts_graph_n_warnings(in->graph));
    if (in->critical_path)
        n += line_list(out, "Critical path", "cp-warnings", cp_line, in->critical_path,
                       ts_critical_path_n_warnings(in->critical_path));
    if (!n) ts__buf_puts(out, "<p id=\"no-warnings\">No warnings: every event was read and nothing was approximated.</p>\n");
    return TS_OK;
}
