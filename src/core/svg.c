/* svg.c - the line and interval charts declared in svg.h.
 *
 * Fixed 900 px wide canvas, margins for labels, five ticks per axis with
 * "nice" steps (1, 2, 5 x 10^k). Text is XML-escaped. A line chart with
 * many points is thinned to one min/max pair per pixel column, so the file
 * stays small (O(width)) however long the iteration is.
 */
#include <math.h>
#include <stdio.h>
#include "core/svg.h"

enum { W = 900, ML = 80, MR = 20, MT = 40, MB = 50 };
enum { ML_ROWS = 150 };  /* the interval chart's wider left margin for row labels */

void ts__xml_esc(ts_buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': ts__buf_puts(b, "&lt;"); break;
        case '>': ts__buf_puts(b, "&gt;"); break;
        case '&': ts__buf_puts(b, "&amp;"); break;
        case '"': ts__buf_puts(b, "&quot;"); break;
        default: ts__buf_add(b, s, 1);
        }
    }
}

static double nice_step(double range)
{
    if (!(range > 0)) return 1;
    double raw = range / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void frame(ts_buf *b, const ts_svg_axes *ax, int h, int ml, double y_max, bool y_ticks)
{
    ts__buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                   "font-family=\"sans-serif\" font-size=\"12\">\n", W, h);
    ts__buf_printf(b, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, h);
    ts__buf_printf(b, "<text x=\"%d\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">", W / 2);
    ts__xml_esc(b, ax->title);
    ts__buf_printf(b, "</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (W + ml) / 2, h - 10);
    ts__xml_esc(b, ax->x_label);
    ts__buf_printf(b, "</text>\n<text x=\"16\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">",
                   h / 2, h / 2);
    ts__xml_esc(b, ax->y_label);
    ts__buf_puts(b, "</text>\n");
    int pw = W - ml - MR, ph = h - MT - MB;
    ts__buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n",
                   ml, MT, pw, ph);
    double xs = nice_step(ax->x_max);
    for (double x = 0; ax->x_max > 0 && x <= ax->x_max * 1.0001; x += xs) {
        double px = ml + pw * x / ax->x_max;
        ts__buf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#444\"/>"
                       "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
                       px, MT + ph, px, MT + ph + 5, px, MT + ph + 18, x);
    }
    if (!y_ticks) return;
    double ys = nice_step(y_max);
    for (double y = 0; y_max > 0 && y <= y_max * 1.0001; y += ys) {
        double py = MT + ph - ph * y / y_max;
        ts__buf_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                       "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                       ml, py, ml + pw, py, ml - 6, py + 4, y);
    }
}

void ts__svg_line_chart(ts_buf *b, const ts_svg_axes *ax, const double *x, const double *y,
                        size_t n, double mark_x)
{
    enum { H = 420 };
    double y_max = 0;
    for (size_t i = 0; i < n; i++) if (y[i] > y_max) y_max = y[i];
    y_max = y_max > 0 ? y_max * 1.05 : 1;
    frame(b, ax, H, ML, y_max, true);
    int pw = W - ML - MR, ph = H - MT - MB;
    double xm = ax->x_max > 0 ? ax->x_max : 1;
    ts__buf_puts(b, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.2\" points=\"");
    /* one min/max pair per pixel column keeps the file O(width) */
    int col = -1;
    double lo = 0, hi = 0;
    for (size_t i = 0; i <= n; i++) {
        int c = i < n ? (int)(pw * x[i] / xm) : -2;
        if (c != col && col >= 0) {
            ts__buf_printf(b, "%.1f,%.1f %.1f,%.1f ", ML + (double)col, MT + ph - ph * lo / y_max,
                           ML + (double)col, MT + ph - ph * hi / y_max);
        }
        if (i == n) break;
        if (c != col) { col = c; lo = hi = y[i]; }
        if (y[i] < lo) lo = y[i];
        if (y[i] > hi) hi = y[i];
    }
    ts__buf_puts(b, "\"/>\n");
    if (mark_x >= 0) {
        double px = ML + pw * mark_x / xm;
        ts__buf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d62728\" "
                       "stroke-dasharray=\"4 3\"/><text x=\"%.1f\" y=\"%d\" fill=\"#d62728\">peak</text>\n",
                       px, MT, px, MT + ph, px + 4, MT + 14);
    }
    ts__buf_puts(b, "</svg>\n");
}

void ts__svg_interval_chart(ts_buf *b, const ts_svg_axes *ax, const char *const *row_labels,
                            uint32_t n_rows, const ts_svg_bar *bars, size_t n_bars)
{
    double row_h = n_rows > 60 ? 6 : 12;
    int h = MT + MB + (int)(row_h * (n_rows ? n_rows : 1));
    frame(b, ax, h, ML_ROWS, 0, false);
    int pw = W - ML_ROWS - MR;
    double xm = ax->x_max > 0 ? ax->x_max : 1;
    for (uint32_t r = 0; r < n_rows && row_h >= 12; r++) {
        ts__buf_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"9\">", ML_ROWS - 4,
                       MT + row_h * r + row_h - 3);
        ts__xml_esc(b, row_labels ? row_labels[r] : "");
        ts__buf_puts(b, "</text>\n");
    }
    for (size_t i = 0; i < n_bars; i++) {
        const ts_svg_bar *br = &bars[i];
        double y0 = MT + row_h * br->row + 1;
        double segs[2][2] = {{br->from, br->to}, {0, 0}};
        int n = 1;
        if (br->from > br->to) { /* wraps into the next iteration */
            segs[0][1] = xm;
            segs[1][0] = 0;
            segs[1][1] = br->to;
            n = 2;
        }
        for (int s = 0; s < n; s++)
            ts__buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ff7f0e\"/>\n",
                           ML_ROWS + pw * segs[s][0] / xm, y0, pw * (segs[s][1] - segs[s][0]) / xm + 0.3,
                           row_h - 2);
    }
    ts__buf_puts(b, "</svg>\n");
}
