/* html_timeline.c - the HTML report's timeline: one iteration (the critical
 * path's) of the job's dependency graph, a row per lane (CPU thread or GPU
 * stream) of up to opts->timeline_ranks ranks on the aligned clock, with the
 * critical path drawn over it as a red line through the rows; then where the
 * path's time went.
 * Not for: finding the path (graph/critical_path.c) or every event: this is
 * an overview at pixel resolution, Perfetto is for zooming.
 *
 * Bound (why a 1,024-rank job gives a small file): ranks on the critical
 * path are drawn first, at most timeline_ranks of them and MAX_ROWS lanes.
 * On a lane, nodes come in start order; a node that starts less than
 * MERGE_PX after the current rectangle ends joins it when it lies inside it
 * (a child op) or when both are narrower than WIDE_PX, so every rectangle is
 * followed by a gap of a pixel or more or is WIDE_PX wide: at most
 * plot-width rectangles per lane whatever the number of events, each titled
 * with its op, or its op count, dominant kind and largest op when merged.
 * The path is merged the same way. O(nodes of the drawn ranks + segments).
 */
#include "report/html.h"

#include <stdlib.h>
#include <string.h>

#include "graph/critical_path.h"
#include "trainscope/report.h"

#define ROW_H    16
#define TOP      24        /* above the first row */
#define MAX_ROWS 96
#define MERGE_PX 1.0
#define WIDE_PX  3.0
#define TITLE_CHARS 90

enum { C_CPU, C_RT, C_COMPUTE, C_MEM, C_COMM, C_N };
static const char *const cls_name[C_N] = {"k-cpu", "k-rt", "k-compute", "k-mem", "k-comm"};
static const char *const cls_label[C_N] = {"CPU op", "runtime / launch", "compute kernel", "memcpy / memset",
                                           "communication"};

static int node_class(ts_node_kind k, bool cpu_only)
{
    switch (k) {
    case TS_NODE_CPU_OP: return cpu_only ? C_COMPUTE : C_CPU;
    case TS_NODE_LAUNCH: case TS_NODE_RUNTIME: case TS_NODE_HOST_SYNC: return C_RT;
    case TS_NODE_KERNEL: return C_COMPUTE;
    case TS_NODE_MEMCPY: case TS_NODE_MEMSET: return C_MEM;
    default: return C_COMM;
    }
}

/* A rectangle being grown on one row. */
typedef struct run {
    double   x0, x1;          /* pixels from the plot's left; x1 < 0 = none open */
    uint32_t n;               /* nodes (segments) merged */
    int64_t  cls_ns[C_N];     /* time per class */
    uint32_t big;             /* the longest node in it */
    int64_t  big_ns;
} run;

typedef struct tl {
    const ts_graph *g;
    const ts_critical_path *cp;
    int64_t  lo, hi;          /* the window, aligned ns */
    double   px_per_ns;
    bool     cpu_only;
    uint32_t *lane_row;       /* per lane: row, TS_NONE32 = not drawn */
    uint32_t n_rows;
    uint32_t *row_lane;       /* per row: its lane */
    run      *runs;           /* per row */
    ts_buf   *b;
} tl;

static double to_px(const tl *t, int64_t ns)
{
    if (ns < t->lo) ns = t->lo;
    if (ns > t->hi) ns = t->hi;
    return (double)(ns - t->lo) * t->px_per_ns;
}

/* ---- the window and the ranks drawn ---- */

/* The aligned span of the critical path's iteration over all ranks (every
 * node when the path covers the whole trace or there is none). */
static void find_window(tl *t)
{
    const ts_graph *g = t->g;
    int64_t step = t->cp ? t->cp->step : -1;
    t->lo = INT64_MAX;
    t->hi = INT64_MIN;
    for (uint32_t r = 0; r < g->n_ranks; r++) {
        const ts_rank *mr = g->trace->ranks[g->rank_model[r]];
        int32_t idx = -1;
        for (uint32_t i = 0; step >= 0 && i < mr->n_iterations; i++)
            if (mr->iterations[i].step == step) idx = (int32_t)i;
        if (step >= 0 && idx < 0) continue;
        for (uint32_t n = g->rank_first_node[r]; n < g->rank_first_node[r + 1]; n++) {
            if (step >= 0 && g->nodes.iteration[n] != idx) continue;
            if (ts__graph_start(g, n) < t->lo) t->lo = ts__graph_start(g, n);
            if (ts__graph_end(g, n) > t->hi) t->hi = ts__graph_end(g, n);
        }
    }
    if (t->cp && t->cp->n_segs) {   /* the path may start before the iteration's first op */
        if (t->cp->start_ns < t->lo) t->lo = t->cp->start_ns;
        if (t->cp->end_ns > t->hi) t->hi = t->cp->end_ns;
    }
}

typedef struct rank_key { int64_t cp_ns; uint32_t rank; } rank_key;
static int by_cp_desc(const void *a, const void *b)
{
    const rank_key *x = a, *y = b;
    if (x->cp_ns != y->cp_ns) return x->cp_ns > y->cp_ns ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static uint32_t seg_node(const ts_cp_segment *s) { return s->owner != TS_NONE32 ? s->owner : s->node; }

/* Ranks by their time on the critical path, then by index: the first
 * `want` are drawn (sel[r] = 1). */
static int pick_ranks(const tl *t, uint32_t want, uint8_t *sel)
{
    const ts_graph *g = t->g;
    rank_key *k = ts__calloc(g->n_ranks + 1, sizeof *k);
    if (!k) return TS_ENOMEM;
    for (uint32_t r = 0; r < g->n_ranks; r++) k[r].rank = r;
    for (uint32_t i = 0; t->cp && i < t->cp->n_segs; i++) {
        uint16_t r = g->nodes.rank[seg_node(&t->cp->segs[i])];
        if (r != TS_GRAPH_NO_RANK) k[r].cp_ns += t->cp->segs[i].dur_ns;
    }
    qsort(k, g->n_ranks, sizeof *k, by_cp_desc);
    for (uint32_t i = 0; i < g->n_ranks && i < want; i++) sel[k[i].rank] = 1;
    ts__free(k, (g->n_ranks + 1) * sizeof *k);
    return TS_OK;
}

static bool overlaps(const tl *t, uint32_t n)
{
    return ts__graph_start(t->g, n) <= t->hi && ts__graph_end(t->g, n) >= t->lo;
}

/* Rows: the lanes of the drawn ranks that have a node in the window, rank
 * by rank, CPU threads before GPU streams, at most MAX_ROWS. */
static void assign_rows(tl *t, const uint8_t *sel, uint32_t *n_cut)
{
    const ts_graph *g = t->g;
    uint8_t *used = (uint8_t *)t->runs;   /* scratch: runs are zeroed after */
    memset(used, 0, g->n_lanes);
    for (uint32_t r = 0; r < g->n_ranks; r++)
        for (uint32_t n = g->rank_first_node[r]; sel[r] && n < g->rank_first_node[r + 1]; n++)
            if (overlaps(t, n)) used[g->nodes.lane[n]] = 1;
    *n_cut = 0;
    for (uint32_t r = 0; r < g->n_ranks; r++)
        for (int gpu = 0; sel[r] && gpu < 2; gpu++)
            for (uint32_t l = 0; l < g->n_lanes; l++) {
                if (!used[l] || g->lanes[l].rank != r || g->lanes[l].on_gpu != gpu) continue;
                if (t->n_rows == MAX_ROWS) { (*n_cut)++; continue; }
                t->lane_row[l] = t->n_rows;
                t->row_lane[t->n_rows++] = l;
            }
    memset(t->runs, 0, MAX_ROWS * sizeof *t->runs);
    for (uint32_t i = 0; i < MAX_ROWS; i++) t->runs[i].x1 = -1;
}

/* ---- drawing ---- */

static void lane_label(tl *t, uint32_t row)
{
    const ts_graph *g = t->g;
    const ts_lane *ln = &g->lanes[t->row_lane[row]];
    const ts_rank *mr = g->trace->ranks[g->rank_model[ln->rank]];
    ts_buf *b = t->b;
    ts__buf_printf(b, "<text x=\"4\" y=\"%d\">rank %d ", TOP + (int)row * ROW_H + 12, g->rank_number[ln->rank]);
    if (ln->track == TS_NONE32) ts__buf_puts(b, ln->on_gpu ? "GPU" : "CPU");
    else {
        const ts_track *tr = &mr->tracks[ln->track];
        if (ln->on_gpu) ts__buf_printf(b, "GPU %d stream %lld", tr->device, (long long)tr->stream);
        else if (tr->name_id) {
            char cut[40];
            ts_report_truncate(ts__rank_str(mr, tr->name_id), 18, cut, sizeof cut);
            ts__html_text(b, cut);
        } else ts__buf_printf(b, "thread %lld", (long long)tr->tid);
    }
    ts__buf_printf(b, "</text><rect class=\"lane\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n",
                   TS_HTML_LABEL_W, TOP + (int)row * ROW_H, TS_HTML_PLOT_W, ROW_H - 2);
}

/* Close row's open rectangle: cp draws the path's thin bar, else an op's. */
static void flush(tl *t, uint32_t row, bool cp)
{
    run *u = &t->runs[row];
    if (u->x1 < 0) return;
    ts_buf *b = t->b;
    int best = 0;
    for (int c = 1; c < C_N; c++)
        if (u->cls_ns[c] > u->cls_ns[best]) best = c;
    double w = u->x1 - u->x0 < 0.5 ? 0.5 : u->x1 - u->x0;
    int y = TOP + (int)row * ROW_H + (cp ? ROW_H - 6 : 1);
    ts__buf_printf(b, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" class=\"%s\"><title>%s",
                   TS_HTML_LABEL_W + u->x0, y, w, cp ? 4 : ROW_H - 4, cp ? "cp" : cls_name[best],
                   cp ? "critical path: " : "");
    char name[400];   /* kernel names run to hundreds of characters: a title keeps TITLE_CHARS */
    ts_report_truncate(ts__graph_node_name(t->g, u->big), TITLE_CHARS, name, sizeof name);
    if (u->n > 1) ts__buf_printf(b, "%u %s, mostly %s; longest: ", u->n, cp ? "segments" : "ops", cls_label[best]);
    ts__html_text(b, name);
    ts__buf_puts(b, " (");
    ts__html_dur(b, u->big_ns);
    ts__buf_puts(b, ")</title></rect>\n");
    u->x1 = -1;
}

/* Add node n's [x0, x1) of class c and duration d to row's run. */
static void add(tl *t, uint32_t row, double x0, double x1, int c, uint32_t n, int64_t d, bool cp)
{
    run *u = &t->runs[row];
    bool inside = x1 <= u->x1, narrow = u->x1 - u->x0 < WIDE_PX && x1 - x0 < WIDE_PX;
    if (u->x1 >= 0 && x0 <= u->x1 + MERGE_PX && (inside || narrow)) {
        if (x1 > u->x1) u->x1 = x1;
    } else {
        flush(t, row, cp);
        *u = (run){.x0 = x0, .x1 = x1, .big = n, .big_ns = -1};
    }
    u->n++;
    u->cls_ns[c] += d;
    if (d > u->big_ns) { u->big_ns = d; u->big = n; }
}

static void draw_nodes(tl *t, const uint8_t *sel)
{
    const ts_graph *g = t->g;
    for (uint32_t r = 0; r < g->n_ranks; r++)
        for (uint32_t n = g->rank_first_node[r]; sel[r] && n < g->rank_first_node[r + 1]; n++) {
            uint32_t row = t->lane_row[g->nodes.lane[n]];
            if (row == TS_NONE32 || !overlaps(t, n)) continue;
            add(t, row, to_px(t, ts__graph_start(g, n)), to_px(t, ts__graph_end(g, n)),
                node_class((ts_node_kind)g->nodes.kind[n], t->cpu_only), n, g->nodes.dur_ns[n], false);
        }
    for (uint32_t row = 0; row < t->n_rows; row++) flush(t, row, false);
}

/* The path: thin red bars on the rows it runs on, and one <path> joining
 * them where it moves from row to row. */
static void draw_path(tl *t)
{
    const ts_critical_path *cp = t->cp;
    ts_buf line;
    ts__buf_init(&line);
    uint32_t prev_row = TS_NONE32;
    double prev_x = 0;
    for (uint32_t i = 0; i < cp->n_segs; i++) {
        const ts_cp_segment *s = &cp->segs[i];
        uint32_t n = seg_node(s);
        if (t->g->nodes.rank[n] == TS_GRAPH_NO_RANK) continue;
        uint32_t row = t->lane_row[t->g->nodes.lane[n]];
        if (row == TS_NONE32) continue;
        double x0 = to_px(t, s->start_ns), x1 = to_px(t, s->start_ns + s->dur_ns);
        if (prev_row != TS_NONE32 && row != prev_row) {
            flush(t, prev_row, true);
            ts__buf_printf(&line, "M%.1f %dL%.1f %d", TS_HTML_LABEL_W + prev_x, TOP + (int)prev_row * ROW_H + ROW_H - 4,
                           TS_HTML_LABEL_W + x0, TOP + (int)row * ROW_H + ROW_H - 4);
        }
        add(t, row, x0, x1, node_class((ts_node_kind)t->g->nodes.kind[n], t->cpu_only), n, s->dur_ns, true);
        prev_row = row;
        prev_x = x1;
    }
    if (prev_row != TS_NONE32) flush(t, prev_row, true);
    if (line.len) ts__buf_printf(t->b, "<path class=\"cpl\" d=\"%s\"/>\n", ts__buf_cstr(&line));
    if (line.oom) t->b->oom = true;
    ts__buf_free(&line);
}

static void cp_table(ts_buf *b, const ts_critical_path *cp)
{
    int64_t len = ts_critical_path_length_ns(cp);
    ts__buf_puts(b, "<h3>Where the critical path's time went</h3>\n");
    static const char *const h[] = {"category", "#time (us)", "#% of the path"};
    ts__html_table_open(b, "critical-path-table", h, 3);
    for (int c = 0; c < TS_CP_COUNT; c++) {
        ts__buf_printf(b, "<tr><td>%s</td><td class=\"num\">", ts_cp_category_name((ts_cp_category)c));
        ts__html_us(b, cp->cat_ns[c]);
        ts__buf_printf(b, "</td><td class=\"num\">%.2f</td></tr>\n", ts__html_pct(cp->cat_ns[c], len));
    }
    ts__buf_puts(b, "</tbody></table>\n");
}

static void heading(tl *t, uint32_t n_drawn, uint32_t n_cut)
{
    ts_buf *b = t->b;
    const ts_critical_path *cp = t->cp;
    ts__buf_puts(b, "<p class=\"note\">");
    if (cp && cp->step >= 0) ts__buf_printf(b, "ProfilerStep#%lld", (long long)cp->step);
    else ts__buf_puts(b, "The whole trace");
    ts__buf_puts(b, ", ");
    ts__html_dur(b, t->hi - t->lo);
    ts__buf_printf(b, " on the aligned clock; %u of %u ranks drawn%s", n_drawn, t->g->n_ranks,
                   cp ? " (those on the critical path first)" : "");
    if (n_cut) ts__buf_printf(b, "; %u more lanes not drawn", n_cut);
    if (cp) {
        ts__buf_puts(b, ". The red line is the critical path (");
        ts__html_dur(b, ts_critical_path_length_ns(cp));
        ts__buf_puts(b, ")");
    }
    ts__buf_puts(b, ". Ops closer than a pixel are merged; hover for what a bar holds.</p>\n");
}

int ts__html_timeline(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err)
{
    const ts_graph *g = in->graph;
    if (!g || !g->n_ranks) return TS_ENODATA;
    tl t = {.g = g, .cp = in->critical_path, .b = out};
    find_window(&t);
    if (t.hi <= t.lo) return TS_ENODATA;
    t.px_per_ns = (double)TS_HTML_PLOT_W / (double)(t.hi - t.lo);
    t.cpu_only = t.cp ? t.cp->cpu_only : false;
    uint8_t *sel = ts__calloc(g->n_ranks + 1, 1);
    t.lane_row = ts__malloc((g->n_lanes + 1) * sizeof *t.lane_row);
    t.row_lane = ts__malloc(MAX_ROWS * sizeof *t.row_lane);
    size_t runs_bytes = (g->n_lanes + 1 > MAX_ROWS * sizeof(run) ? g->n_lanes + 1 : MAX_ROWS * sizeof(run));
    t.runs = ts__malloc(runs_bytes);
    int rc = sel && t.lane_row && t.row_lane && t.runs ? pick_ranks(&t, o->timeline_ranks, sel) : TS_ENOMEM;
    if (rc == TS_OK) {
        memset(t.lane_row, 0xff, (g->n_lanes + 1) * sizeof *t.lane_row);
        uint32_t n_cut, n_drawn = 0;
        assign_rows(&t, sel, &n_cut);
        for (uint32_t r = 0; r < g->n_ranks; r++) n_drawn += sel[r];
        heading(&t, n_drawn, n_cut);
        int h = TOP + (int)t.n_rows * ROW_H + 48;
        ts__html_svg_open(out, "timeline-svg", TS_HTML_LABEL_W + TS_HTML_PLOT_W, h, "timeline of one iteration");
        ts__buf_puts(out, "<g class=\"tl\">");
        for (uint32_t row = 0; row < t.n_rows; row++) lane_label(&t, row);
        draw_nodes(&t, sel);
        if (t.cp) draw_path(&t);
        ts__buf_puts(out, "</g>");
        ts__html_time_axis(out, TS_HTML_LABEL_W, TS_HTML_PLOT_W, TOP + t.n_rows * ROW_H + 2, t.hi - t.lo);
        const char *labels[C_N];   /* a job without GPU work draws its CPU ops as its compute */
        memcpy(labels, cls_label, sizeof labels);
        if (t.cpu_only) labels[C_COMPUTE] = "compute (CPU op)";
        ts__html_legend(out, TS_HTML_LABEL_W, h - 14, cls_name + !!t.cpu_only, labels + !!t.cpu_only,
                        C_N - !!t.cpu_only);
        ts__buf_puts(out, "</svg>\n");
        if (t.cp) cp_table(out, t.cp);
    }
    if (rc) ts__error(err, rc, "out of memory");
    ts__free(t.runs, runs_bytes);
    ts__free(t.row_lane, MAX_ROWS * sizeof *t.row_lane);
    ts__free(t.lane_row, (g->n_lanes + 1) * sizeof *t.lane_row);
    ts__free(sel, g->n_ranks + 1);
    return rc;
}
