/* svg.h - small self-contained SVG charts (internal to trainscope): a line
 * chart (memory over an iteration) and an interval chart (idle periods per
 * tensor). They replace G10's two matplotlib scripts; no dependencies.
 * Output is appended to a ts_buf; coordinates are computed here, callers
 * pass data in their own units plus the axis labels.
 */
#ifndef TS_CORE_SVG_H
#define TS_CORE_SVG_H

#include "core/core.h"

/* One horizontal bar of an interval chart: row (0 = top), x from..to. */
typedef struct ts_svg_bar {
    uint32_t row;       /* row index, 0-based */
    double   from, to;  /* x range in data units; from > to is drawn wrapped to x_max */
} ts_svg_bar;

typedef struct ts_svg_axes {
    const char *title;   /* chart title */
    const char *x_label; /* e.g. "time (ms)" */
    const char *y_label; /* e.g. "memory (GiB)" */
    double x_max;        /* right end of the x axis (data units) */
} ts_svg_axes;

/* Append s with <, >, & and " escaped, for XML/HTML text and attributes. */
void ts__xml_esc(ts_buf *b, const char *s);

/* Line chart of y over x (n points, x ascending); mark_x >= 0 draws a
 * vertical marker there (the peak). */
void ts__svg_line_chart(ts_buf *b, const ts_svg_axes *ax, const double *x, const double *y,
                        size_t n, double mark_x);

/* Interval chart: n_rows labelled rows, bars on them. */
void ts__svg_interval_chart(ts_buf *b, const ts_svg_axes *ax, const char *const *row_labels,
                            uint32_t n_rows, const ts_svg_bar *bars, size_t n_bars);

#endif
