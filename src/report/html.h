/* html.h - the HTML report's sections and the helpers they share (internal).
 *
 * The report (html.c) is a list of sections. A section is an id, a title and
 * a writer that appends one HTML fragment (no <section>/<h2>: html.c wraps
 * it) for the analyses in `in`. The list is the table ts__html_sections[] in
 * html_sections.c, drawn in its order.
 *
 * ADDING A SECTION (e.g. branch `views`' call-stack, allocator, transfer,
 * queue and communication-latency views):
 *   1. write `int ts_report_html_view_<name>(ts_buf *out, ...)` appending a
 *      fragment (any arguments it needs: a trace, a result of its analysis);
 *   2. in html_sections.c add a static adapter with the ts_html_section_fn
 *      signature that computes what the view needs from `in` (in->trace,
 *      in->graph, ...) and calls it, and one line {"id", "Title", adapter}
 *      in ts__html_sections[] where the section should appear.
 * A writer returns TS_OK (fragment appended), TS_ENODATA (nothing to show for
 * this job: html.c drops whatever it appended and leaves the section out of
 * the page and its table of contents), or another TS_E* with err filled: the
 * page keeps the section with that message and lists it under warnings.
 * Fragments must be self-contained: inline SVG, escaped text (ts__html_text),
 * class names from the shared style sheet (html.c: `num`, `sortable`, the
 * k-* colours), no external URL, no script of their own.
 * Bounds: draw per pixel, not per event (see html_timeline.c): a section's
 * size must not grow with the number of events, only with ranks at most.
 */
#ifndef TS_REPORT_HTML_H
#define TS_REPORT_HTML_H

#include "core/core.h"
#include "trainscope/html.h"

/* Plot width in pixels of every chart (labels come on top of it). */
#define TS_HTML_PLOT_W 1100
#define TS_HTML_LABEL_W 190
/* Above this many ranks, per-rank tables fold into <details> behind a summary. */
#define TS_HTML_MANY_RANKS 32

typedef int (*ts_html_section_fn)(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *opts,
                                  ts_error *err);

typedef struct ts_html_section {
    const char        *id;     /* HTML id and anchor: [a-z0-9-] */
    const char        *title;  /* the <h2> text */
    ts_html_section_fn write;
} ts_html_section;

extern const ts_html_section ts__html_sections[];
extern const uint32_t ts__html_n_sections;

/* The built-in sections (html_*.c). */
int ts__html_summary(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err);
int ts__html_breakdown(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err);
int ts__html_stragglers(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err);
int ts__html_shares(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err);
int ts__html_timeline(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err);
int ts__html_replay(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err);
int ts__html_top_ops(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err);
int ts__html_memory(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err);
int ts__html_warnings(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err);

/* ---- helpers ---- */
/* s with & < > " ' escaped (NULL writes nothing). */
void ts__html_text(ts_buf *b, const char *s);
/* A duration as text ("1.25ms", "845us"; report.h's ts_report_duration). */
void ts__html_dur(ts_buf *b, int64_t ns);
/* Bytes as "1.50 GiB", "12.0 MiB", "512 B". */
void ts__html_bytes(ts_buf *b, int64_t bytes);
/* Nanoseconds as microseconds with 3 decimals, exactly as the JSON outputs
 * write them (so a test can compare the two as text). */
void ts__html_us(ts_buf *b, int64_t ns);
/* 100 * part / whole with 2 decimals, 0 when whole <= 0. */
double ts__html_pct(int64_t part, int64_t whole);
/* Open a sortable table: <table id=ID class="sortable"> and its header row;
 * headers whose name starts with '#' are numeric columns (the '#' is not
 * shown). Close with ts__buf_puts(b, "</tbody></table>\n"). */
void ts__html_table_open(ts_buf *b, const char *id, const char *const *headers, int n);
/* Open an inline <svg> of w x h pixels with an accessible title. */
void ts__html_svg_open(ts_buf *b, const char *id, int w, int h, const char *title);
/* An x-axis of time from 0 to span_ns across [x0, x0 + w) at height y: ticks
 * at a round step with labels in ms or us. */
void ts__html_time_axis(ts_buf *b, double x0, double w, double y, int64_t span_ns);
/* A colour legend: n (class, label) pairs as small swatches at (x, y). */
void ts__html_legend(ts_buf *b, double x, double y, const char *const *classes, const char *const *labels, int n);

#endif
