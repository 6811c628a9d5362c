/* views_html.c - HTML fragments of the views (views_html.h): inline SVG
 * charts and tables with inline styles, for the HTML report's sections.
 *
 * Not for: the page or the <section> and <h2> around them (the report's
 * html.c, or views_out.c for `views --format html`), or script. Sizes stay bounded whatever the
 * trace: a flame graph draws at most MAX_BOXES boxes (boxes narrower than
 * half a pixel are left out, with their subtrees), step lines are cut to one
 * min/max pair per pixel column, bar charts have one bar per time bin.
 */
#include <math.h>
#include <stdlib.h>

#include "core/svg.h"
#include "report/views_html.h"
#include "report/views_out.h"
#include "trainscope/report.h"

#define CHART_W 960      /* plot width in px */
#define CHART_H 160      /* plot height in px */
#define PAD_L 70         /* room for the y labels */
#define MAX_BOXES 4000   /* flame graph boxes at most */
#define ROW_H 17         /* flame graph row height */

static int done(ts_buf *b) { return b->oom ? TS_ENOMEM : TS_OK; }

static void dur_str(int64_t ns, char *out, size_t cap) { ts_report_duration((double)ns, out, cap); }

/* ---- small charts ---- */
typedef struct chart { double x0, x1, y1; const char *ylabel; bool bytes; } chart;

static double px_x(const chart *c, double x) { return PAD_L + (c->x1 > c->x0 ? (x - c->x0) / (c->x1 - c->x0) : 0) * CHART_W; }
static double px_y(const chart *c, double y) { return 10 + CHART_H - (c->y1 > 0 ? y / c->y1 : 0) * CHART_H; }

static void y_label(ts_buf *b, const chart *c, double v, char *buf, size_t cap)
{
    if (c->bytes) ts__views_bytes_str((int64_t)v, buf, cap);
    else snprintf(buf, cap, "%.3g", v);
    (void)b;
}

static void chart_begin(ts_buf *b, const chart *c, const char *caption)
{
    char top[32], span[32];
    y_label(b, c, c->y1, top, sizeof top);
    dur_str((int64_t)(c->x1 - c->x0), span, sizeof span);
    ts__buf_printf(b, "<figure style=\"margin:0.5em 0\"><svg width=\"%d\" "
                      "height=\"%d\" role=\"img\"><rect x=\"%d\" y=\"10\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" "
                      "stroke=\"#ccc\"/>", PAD_L + CHART_W + 10, CHART_H + 34, PAD_L, CHART_W, CHART_H);
    ts__buf_printf(b, "<text x=\"%d\" y=\"18\" font-size=\"11\" text-anchor=\"end\">%s</text>", PAD_L - 4, top);
    ts__buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">0</text>", PAD_L - 4, CHART_H + 10);
    ts__buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\">0</text><text x=\"%d\" y=\"%d\" font-size=\"11\" "
                      "text-anchor=\"end\">+%s</text>", PAD_L, CHART_H + 24, PAD_L + CHART_W, CHART_H + 24, span);
    ts__buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">", PAD_L + CHART_W / 2, CHART_H + 24);
    ts__xml_esc(b, c->ylabel);
    ts__buf_puts(b, "</text>");
    (void)caption;
}

static void chart_end(ts_buf *b, const char *caption)
{
    ts__buf_puts(b, "</svg><figcaption style=\"font-size:12px;color:#555\">");
    ts__xml_esc(b, caption);
    ts__buf_puts(b, "</figcaption></figure>\n");
}

/* A step line of n (t, v) points: per pixel column the value entering it and
 * the column's max, so a spike of one event still shows. */
typedef double (*val_fn)(const void *pts, uint64_t i, int64_t *t);
static void step_line(ts_buf *b, const chart *c, const void *pts, uint64_t n, val_fn val, double start_v, const char *color)
{
    ts__buf_printf(b, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" d=\"M%.1f %.1f", color, px_x(c, c->x0),
                   px_y(c, start_v));
    double level = start_v;
    uint64_t i = 0;
    for (int col = 0; col < CHART_W && i < n; col++) {
        double hi_t = c->x0 + (c->x1 - c->x0) * (col + 1) / CHART_W;
        int64_t t;
        val(pts, i, &t);
        if ((double)t >= hi_t && col + 1 < CHART_W) continue;
        double mx = level, x = px_x(c, (double)t);
        for (; i < n; i++) {
            double v = val(pts, i, &t);
            if ((double)t >= hi_t && col + 1 < CHART_W) break;
            level = v;
            if (v > mx) mx = v;
        }
        ts__buf_printf(b, " H%.1f V%.1f V%.1f", x, px_y(c, mx), px_y(c, level));
    }
    ts__buf_printf(b, " H%.1f\"/>", px_x(c, c->x1));
}

/* Bars of v[0..n) over equal bins. */
static void bars(ts_buf *b, const chart *c, const double *v, uint32_t n, const char *color, int64_t bin_ns)
{
    double w = (double)CHART_W / n;
    char d[32];
    dur_str(bin_ns, d, sizeof d);
    for (uint32_t k = 0; k < n; k++) {
        if (!(v[k] > 0)) continue;
        double y = px_y(c, v[k]);
        char val[32];
        y_label(b, c, v[k], val, sizeof val);
        ts__buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>bin %u (%s "
                          "each): %s</title></rect>", PAD_L + k * w + 0.5, y, w > 2 ? w - 1 : w, 10 + CHART_H - y, color, k,
                       d, val);
    }
}

/* A table from a view's table spec (text cells). */
static void html_table(ts_buf *b, const vo_col *cols, int n_cols, uint64_t n_rows,
                       void (*row)(const void *, uint64_t, vo_cell *, char *), const void *view, uint64_t max_rows)
{
    ts__buf_puts(b, "<table style=\"border-collapse:collapse;font-size:12px\"><thead><tr>");
    for (int c = 0; c < n_cols; c++) {
        ts__buf_puts(b, "<th style=\"border-bottom:1px solid #999;padding:2px 6px;text-align:left\">");
        ts__xml_esc(b, cols[c].title);
        ts__buf_puts(b, "</th>");
    }
    ts__buf_puts(b, "</tr></thead><tbody>");
    vo_cell cells[16];
    char buf[512], text[256];
    for (uint64_t i = 0; i < n_rows && i < max_rows; i++) {
        memset(cells, 0, sizeof cells);
        row(view, i, cells, buf);
        ts__buf_puts(b, "<tr>");
        for (int c = 0; c < n_cols; c++) {
            const vo_cell *v = &cells[c];
            switch (cols[c].type) {
            case VO_STR: case VO_INDENT: snprintf(text, sizeof text, "%s", v->s ? v->s : ""); break;
            case VO_INT: snprintf(text, sizeof text, "%lld", (long long)v->i); break;
            case VO_ID: if (v->i < 0) snprintf(text, sizeof text, "-"); else snprintf(text, sizeof text, "%lld", (long long)v->i); break;
            case VO_BYTES: if (v->i < 0) snprintf(text, sizeof text, "-"); else ts__views_bytes_str(v->i, text, sizeof text); break;
            case VO_DUR: dur_str(v->i, text, sizeof text); break;
            case VO_TIME: snprintf(text, sizeof text, "%.3f", (double)v->i / 1e3); break;
            case VO_REAL: if (isnan(v->d)) text[0] = 0; else snprintf(text, sizeof text, "%.3f", v->d); break;
            }
            bool num = cols[c].type != VO_STR && cols[c].type != VO_INDENT;
            ts__buf_printf(b, "<td style=\"padding:1px 6px;text-align:%s%s\">", num ? "right" : "left",
                           cols[c].type == VO_INDENT ? ";white-space:pre" : "");
            if (cols[c].type == VO_INDENT) for (int64_t d = 0; d < v->i && d < 40; d++) ts__buf_puts(b, "  ");
            ts__xml_esc(b, text);
            ts__buf_puts(b, "</td>");
        }
        ts__buf_puts(b, "</tr>");
    }
    ts__buf_puts(b, "</tbody></table>\n");
    if (n_rows > max_rows)
        ts__buf_printf(b, "<p style=\"font-size:12px;color:#555\">%llu of %llu rows</p>\n", (unsigned long long)max_rows,
                       (unsigned long long)n_rows);
}

/* ---- callstack ---- */
static void flame_color(const char *name, char *out, size_t cap)
{
    uint64_t h = ts__hash_bytes(name, strlen(name));
    snprintf(out, cap, "hsl(%d,80%%,%d%%)", (int)(h % 50), 55 + (int)((h >> 8) % 15));
}

static const vo_col cs_top_cols[] = {
    {"name", "stack path", VO_INDENT, false}, {"total", "total", VO_DUR, false}, {"self", "self", VO_DUR, false},
    {"calls", "calls", VO_INT, false},
};
static void cs_top_row(const void *view, uint64_t i, vo_cell *c, char *buf)
{
    const ts_cs_node *n = &((const ts_view_callstack *)view)->nodes[i];
    c[0].s = n->name, c[0].i = n->depth, c[1].i = n->total_ns, c[2].i = n->self_ns, c[3].i = (int64_t)n->calls;
}

int ts_report_html_view_callstack(ts_buf *b, const ts_view_callstack *r)
{
    uint16_t max_depth = 0;
    for (uint32_t i = 0; i < r->n_nodes; i++) if (r->nodes[i].depth > max_depth) max_depth = r->nodes[i].depth;
    if (max_depth > 60) max_depth = 60;
    double *x = ts__malloc(((size_t)r->n_nodes + 1) * 2 * sizeof *x), scale = r->total_ns > 0 ? (double)CHART_W / (double)r->total_ns : 0;
    if (!x) return TS_ENOMEM;
    double *cursor = x + r->n_nodes + 1, root_x = 0;   /* cursor[n]: where n's next child starts */
    int h = (max_depth + 1) * ROW_H;
    ts__buf_printf(b, "<figure style=\"margin:0.5em 0\"><svg width=\"%d\" height=\"%d\" "
                      "font-size=\"11\" role=\"img\">", CHART_W + 2, h + 2);
    uint32_t boxes = 0, left_out = 0;
    for (uint32_t i = 0; i < r->n_nodes;) {
        const ts_cs_node *n = &r->nodes[i];
        x[i] = n->parent == UINT32_MAX ? root_x : cursor[n->parent];
        cursor[i] = x[i];
        if (n->parent == UINT32_MAX) root_x += (double)n->total_ns * scale;
        else cursor[n->parent] += (double)n->total_ns * scale;
        double w = (double)n->total_ns * scale;
        if (w < 0.5 || n->depth > 60 || boxes >= MAX_BOXES) { left_out += n->subtree_end - i; i = n->subtree_end; continue; }
        char color[40], tot[32], self[32];
        flame_color(n->name, color, sizeof color);
        dur_str(n->total_ns, tot, sizeof tot);
        dur_str(n->self_ns, self, sizeof self);
        /* top-down: roots on top, as Trace Compass and speedscope draw them */
        ts__buf_printf(b, "<g><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" stroke=\"#fff\" "
                          "stroke-width=\"0.5\"><title>", x[i] + 1, n->depth * ROW_H + 1, w, ROW_H - 1, color);
        ts__xml_esc(b, n->name);
        ts__buf_printf(b, " | total %s, self %s, %llu calls</title></rect>", tot, self, (unsigned long long)n->calls);
        if (w > 30) {
            char label[128];
            int fit = (int)(w / 6.5);
            ts_report_truncate(n->name, fit < 127 ? fit : 127, label, sizeof label);
            ts__buf_printf(b, "<text x=\"%.2f\" y=\"%d\" clip-path=\"none\">", x[i] + 4, n->depth * ROW_H + 13);
            ts__xml_esc(b, label);
            ts__buf_puts(b, "</text>");
        }
        ts__buf_puts(b, "</g>");
        boxes++;
        i++;
    }
    ts__free(x, ((size_t)r->n_nodes + 1) * 2 * sizeof *x);
    char tot[32];
    dur_str(r->total_ns, tot, sizeof tot);
    char cap[256];
    snprintf(cap, sizeof cap, "Width: total time of each stack path over %u threads (%s in all); %u boxes, %u paths too "
             "narrow to draw. Hover a box for its times.", r->n_threads, tot, boxes, left_out);
    chart_end(b, cap);
    html_table(b, cs_top_cols, 4, r->n_nodes, cs_top_row, r, 30);
    return done(b);
}

/* ---- allocator ---- */
static double alloc_val(const void *pts, uint64_t i, int64_t *t)
{
    const ts_alloc_point *p = pts;
    *t = p[i].t_ns;
    return (double)p[i].bytes;
}

static const vo_col set_cols[] = {
    {"device", "device", VO_INT, false}, {"pool", "pool", VO_STR, false}, {"segments", "segments", VO_INT, false},
    {"blocks", "blocks", VO_INT, false}, {"reserved", "reserved", VO_BYTES, false},
    {"allocated", "allocated", VO_BYTES, false}, {"free", "free", VO_BYTES, false},
    {"largest", "largest free", VO_BYTES, false}, {"frag", "fragmentation", VO_REAL, false},
};
static void set_row(const void *view, uint64_t i, vo_cell *c, char *buf)
{
    const ts_alloc_set *s = &((const ts_view_allocator *)view)->sets[i];
    c[0].i = s->device, c[1].s = s->pool, c[2].i = s->n_segments, c[3].i = s->n_blocks, c[4].i = s->reserved_bytes;
    c[5].i = s->allocated_bytes, c[6].i = s->free_bytes, c[7].i = s->largest_free_bytes, c[8].d = s->fragmentation;
}

static void alloc_series(ts_buf *b, const ts_view_allocator *r, const ts_alloc_series *s)
{
    const ts_alloc_point *p = r->points + s->first_point;
    char dev[32], peak[32], cap[256];
    if (s->device_type == 0) snprintf(dev, sizeof dev, "cpu");
    else snprintf(dev, sizeof dev, "cuda:%d", s->device_id);
    ts__views_bytes_str(s->peak_bytes, peak, sizeof peak);
    chart c = {(double)p[0].t_ns, (double)p[s->n_points - 1].t_ns, (double)s->peak_bytes * 1.05, "bytes in use", true};
    chart_begin(b, &c, NULL);
    step_line(b, &c, p, s->n_points, alloc_val, (double)s->start_bytes, "#1f77b4");
    if (s->peak_ns >= 0)
        ts__buf_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"10\" y2=\"%d\" stroke=\"#d62728\" stroke-dasharray=\"3 2\">"
                          "<title>peak %s</title></line>", px_x(&c, (double)s->peak_ns), px_x(&c, (double)s->peak_ns),
                       CHART_H + 10, peak);
    if (s->rank >= 0) snprintf(cap, sizeof cap, "Rank %d %s: bytes in use over time, peak %s (dashed), %llu allocations",
                               s->rank, dev, peak, (unsigned long long)s->n_allocs);
    else snprintf(cap, sizeof cap, "%s: bytes in use over time, peak %s (dashed), %llu allocations", dev, peak,
                  (unsigned long long)s->n_allocs);
    chart_end(b, cap);
    /* sizes: one bar per power-of-two bin from the smallest used to the largest */
    uint32_t lo = TS_ALLOC_SIZE_BINS, hi = 0;
    for (uint32_t k = 0; k < TS_ALLOC_SIZE_BINS; k++) if (s->size_count[k]) { if (k < lo) lo = k; hi = k; }
    if (lo > hi) return;
    double v[TS_ALLOC_SIZE_BINS], mx = 0;
    for (uint32_t k = lo; k <= hi; k++) { v[k - lo] = (double)s->size_count[k]; if (v[k - lo] > mx) mx = v[k - lo]; }
    ts__buf_printf(b, "<svg width=\"%d\" height=\"110\" font-size=\"10\">",
                   PAD_L + CHART_W + 10);
    double w = (double)CHART_W / (hi - lo + 1);
    for (uint32_t k = lo; k <= hi; k++) {
        double bh = mx > 0 ? 80 * v[k - lo] / mx : 0;
        char from[32];
        static const char *const unit[] = {"B", "K", "M", "G", "T", "P", "E"};
        snprintf(from, sizeof from, "%d%s", 1 << (k % 10), unit[k / 10]);   /* 2^k: "4B", "2K", "16M" */
        ts__buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#2ca02c\"><title>%s and up: "
                          "%llu allocations</title></rect><text x=\"%.1f\" y=\"104\" text-anchor=\"middle\">%s</text>",
                       PAD_L + (k - lo) * w + 1, 90 - bh, w - 2, bh, from, (unsigned long long)s->size_count[k],
                       PAD_L + (k - lo + 0.5) * w, from);
    }
    ts__buf_puts(b, "</svg><figcaption style=\"font-size:12px;color:#555\">Allocations by size (power-of-two bins)</figcaption>\n");
}

int ts_report_html_view_allocator(ts_buf *b, const ts_view_allocator *r)
{
    ts__buf_puts(b, !strcmp(r->source, "snapshot") ? "<p>From a PyTorch allocator snapshot.</p>\n"
                                                   : "<p>From the trace's [memory] events.</p>\n");
    for (uint32_t i = 0; i < r->n_series; i++) if (r->series[i].n_points) alloc_series(b, r, &r->series[i]);
    if (r->n_sets) {
        ts__buf_puts(b, "<p>Segment sets (fragmentation = 1 - largest free block / free bytes):</p>\n");
        html_table(b, set_cols, 9, r->n_sets, set_row, r, 100);
    }
    return done(b);
}

/* ---- transfers ---- */
static const vo_col xfer_cols[] = {
    {"rank", "rank", VO_INT, false}, {"dir", "direction", VO_STR, false}, {"copies", "copies", VO_INT, false},
    {"bytes", "bytes", VO_BYTES, false}, {"busy", "busy", VO_DUR, false}, {"gbps", "GB/s", VO_REAL, false},
};
static void xfer_row(const void *view, uint64_t i, vo_cell *c, char *buf)
{
    const ts_xfer_row *x = &((const ts_view_transfers *)view)->rows[i];
    c[0].i = x->rank, c[1].s = ts_xfer_dir_name(x->dir), c[2].i = (int64_t)x->n, c[3].i = x->bytes, c[4].i = x->busy_ns;
    c[5].d = x->busy_ns > 0 ? (double)x->bytes / (double)x->busy_ns : NAN;
}

int ts_report_html_view_transfers(ts_buf *b, const ts_view_transfers *r)
{
    static const char *const colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#7f7f7f"};
    double *v = ts__malloc((size_t)r->n_bins * sizeof *v);
    if (!v) return TS_ENOMEM;
    for (uint32_t i = 0; i < r->n_rows; i++) {
        const ts_xfer_row *x = &r->rows[i];
        double mx = 0;
        for (uint32_t k = 0; k < r->n_bins; k++) { v[k] = r->bins[x->first_bin + k].bytes; if (v[k] > mx) mx = v[k]; }
        chart c = {(double)x->bin_start_ns, (double)(x->bin_start_ns + (int64_t)r->n_bins * x->bin_ns), mx * 1.05,
                   "bytes per bin", true};
        chart_begin(b, &c, NULL);
        bars(b, &c, v, r->n_bins, colors[x->dir < TS_XFER_N_DIRS ? x->dir : 4], x->bin_ns);
        char cap[160], tot[32];
        ts__views_bytes_str(x->bytes, tot, sizeof tot);
        snprintf(cap, sizeof cap, "Rank %d %s: %llu copies, %s, bytes moved per time bin", x->rank, ts_xfer_dir_name(x->dir),
                 (unsigned long long)x->n, tot);
        chart_end(b, cap);
    }
    ts__free(v, (size_t)r->n_bins * sizeof *v);
    html_table(b, xfer_cols, 6, r->n_rows, xfer_row, r, 200);
    return done(b);
}

/* ---- queues ---- */
static double queue_val(const void *pts, uint64_t i, int64_t *t)
{
    const ts_queue_point *p = pts;
    *t = p[i].t_ns;
    return (double)p[i].len;
}

static const vo_col qs_cols[] = {
    {"rank", "rank", VO_INT, false}, {"device", "device", VO_INT, false}, {"stream", "stream", VO_INT, false},
    {"ops", "ops", VO_INT, false}, {"max", "max queued", VO_INT, false}, {"mean", "mean queued", VO_REAL, false},
    {"l2s", "launch to start", VO_DUR, false},
};
static void qs_row(const void *view, uint64_t i, vo_cell *c, char *buf)
{
    const ts_queue_stream *s = &((const ts_view_queues *)view)->streams[i];
    c[0].i = s->rank, c[1].i = s->device, c[2].i = s->stream, c[3].i = (int64_t)s->n_ops, c[4].i = s->max_len;
    c[5].d = s->mean_len, c[6].i = s->launch_to_start_ns;
}

int ts_report_html_view_queues(ts_buf *b, const ts_view_queues *r)
{
    for (uint32_t i = 0; i < r->n_streams && i < 64; i++) {
        const ts_queue_stream *s = &r->streams[i];
        const ts_queue_point *p = r->points + s->first_point;
        chart c = {(double)p[0].t_ns, (double)p[s->n_points - 1].t_ns, s->max_len * 1.1 + 0.5, "ops queued", false};
        chart_begin(b, &c, NULL);
        step_line(b, &c, p, s->n_points, queue_val, 0, "#9467bd");
        char cap[160];
        snprintf(cap, sizeof cap, "Rank %d device %d stream %lld: ops launched and not finished (max %u, mean %.2f)",
                 s->rank, s->device, (long long)s->stream, s->max_len, s->mean_len);
        chart_end(b, cap);
    }
    html_table(b, qs_cols, 7, r->n_streams, qs_row, r, 200);
    return done(b);
}

/* ---- comm ---- */
static const vo_col cl_cols[] = {
    {"what", "what", VO_STR, false}, {"kind", "kind", VO_STR, false}, {"src", "src", VO_ID, false},
    {"peer", "peer", VO_ID, false}, {"n", "count", VO_INT, false}, {"min", "min", VO_DUR, false},
    {"p50", "p50", VO_DUR, false}, {"p90", "p90", VO_DUR, false}, {"p99", "p99", VO_DUR, false},
    {"max", "max", VO_DUR, false},
};
static void cl_row(const void *view, uint64_t i, vo_cell *c, char *buf)
{
    const ts_comm_row *r = &((const ts_view_comm *)view)->rows[i];
    c[0].s = r->what == TS_COMM_PAIR ? "pair" : "call", c[1].s = r->kind, c[2].i = r->src, c[3].i = r->dst;
    c[4].i = (int64_t)r->n, c[5].i = r->min_ns, c[6].i = r->p50_ns, c[7].i = r->p90_ns, c[8].i = r->p99_ns;
    c[9].i = r->max_ns;
}

/* One box per row on a shared log axis: whiskers min..max, box p50..p90, tick at p99. */
static void comm_boxes(ts_buf *b, const ts_view_comm *r)
{
    double lo = INFINITY, hi = 0;
    for (uint32_t i = 0; i < r->n_rows; i++) {
        if (r->rows[i].min_ns > 0 && r->rows[i].min_ns < lo) lo = (double)r->rows[i].min_ns;
        if (r->rows[i].max_ns > hi) hi = (double)r->rows[i].max_ns;
    }
    if (!(hi > 0) || !isfinite(lo)) return;
    double l0 = log10(lo) - 0.1, l1 = log10(hi) + 0.1;
    int rows = r->n_rows < 40 ? (int)r->n_rows : 40;
    ts__buf_printf(b, "<figure style=\"margin:0.5em 0\"><svg width=\"%d\" height=\"%d\" "
                      "font-size=\"11\">", PAD_L + CHART_W + 130, rows * 20 + 24);
#define LX(v) (PAD_L + 120 + ((v) > 0 ? (log10((double)(v)) - l0) / (l1 - l0) : 0) * (CHART_W - 120))
    for (int i = 0; i < rows; i++) {
        const ts_comm_row *w = &r->rows[i];
        double y = 10 + i * 20;
        char label[96], p50[32];
        if (w->what == TS_COMM_PAIR) snprintf(label, sizeof label, "pairs %d>%d", w->src, w->dst);
        else if (w->dst >= 0) snprintf(label, sizeof label, "%s peer %d", w->kind, w->dst);
        else snprintf(label, sizeof label, "%s", w->kind);
        dur_str(w->p50_ns, p50, sizeof p50);
        ts__buf_puts(b, "<text x=\"4\" y=\"");
        ts__buf_printf(b, "%.0f\">", y + 12);
        ts__xml_esc(b, label);
        ts__buf_printf(b, "</text><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#555\"/>"
                          "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"12\" fill=\"#17becf\"><title>p50 %s</title>"
                          "</rect><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#d62728\"/>",
                       LX(w->min_ns), LX(w->max_ns), y + 8, y + 8, LX(w->p50_ns), y + 2,
                       fmax(1, LX(w->p90_ns) - LX(w->p50_ns)), p50, LX(w->p99_ns), LX(w->p99_ns), y + 1, y + 15);
    }
    char a[32], z[32];
    dur_str((int64_t)pow(10, l0), a, sizeof a);
    dur_str((int64_t)pow(10, l1), z, sizeof z);
    ts__buf_printf(b, "<text x=\"%d\" y=\"%d\">%s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s (log scale)</text>",
                   PAD_L + 120, rows * 20 + 20, a, PAD_L + CHART_W, rows * 20 + 20, z);
#undef LX
    chart_end(b, "Latency per kind and peer: line min..max, box p50..p90, red tick p99");
}

int ts_report_html_view_comm(ts_buf *b, const ts_view_comm *r)
{
    comm_boxes(b, r);
    double *v = ts__malloc((size_t)r->n_bins * sizeof *v);
    if (!v) return TS_ENOMEM;
    for (uint32_t i = 0; i < r->n_rows && i < 16; i++) {
        const ts_comm_row *w = &r->rows[i];
        double mx = 0;
        for (uint32_t k = 0; k < r->n_bins; k++) { v[k] = (double)r->bins[w->first_bin + k].mean_ns / 1e3; if (v[k] > mx) mx = v[k]; }
        chart c = {(double)w->bin_start_ns, (double)(w->bin_start_ns + (int64_t)r->n_bins * w->bin_ns), mx * 1.05,
                   "mean latency (us) per bin", false};
        chart_begin(b, &c, NULL);
        bars(b, &c, v, r->n_bins, "#17becf", w->bin_ns);
        char cap[160];
        snprintf(cap, sizeof cap, "%s %s%s: mean latency of the calls starting in each bin", w->what == TS_COMM_PAIR ? "pairs" : "calls",
                 w->kind, w->dst >= 0 ? " (one peer)" : "");
        chart_end(b, cap);
    }
    ts__free(v, (size_t)r->n_bins * sizeof *v);
    html_table(b, cl_cols, 10, r->n_rows, cl_row, r, 200);
    return done(b);
}

/* ---- the views of a trace, for the report ---- */
#define VIEW_OF(NAME)                                                                          \
    int ts__html_view_##NAME##_of(ts_buf *out, const ts_job *t, ts_error *err)               \
    {                                                                                          \
        ts_view_##NAME *v;                                                                     \
        int rc = ts_view_##NAME##_create(t, NULL, &v, err);                                    \
        if (rc) return rc;                                                                     \
        rc = ts_report_html_view_##NAME(out, v);                                               \
        ts_view_##NAME##_destroy(v);                                                           \
        return rc ? ts__error(err, rc, "out of memory") : TS_OK;                               \
    }
VIEW_OF(callstack)
VIEW_OF(allocator)
VIEW_OF(transfers)
VIEW_OF(queues)
VIEW_OF(comm)
#undef VIEW_OF
