/* views_html.h - one HTML fragment per view, for `trainscope report`
 * (src/report/html*.c) to include as sections: inline SVG charts and a small
 * table, with inline styles only (no script, no external resource), appended
 * to out without the <section> and <h2> the report wraps around it. Its size
 * grows with ranks and streams at most, never with events (charts are drawn
 * per pixel column or per time bin, tables and boxes are capped).
 *
 * Not for: whole pages (the report's own writer) or terminal output
 * (views.c). Each returns TS_OK, or TS_ENOMEM when out ran out of memory.
 */
#ifndef TS_REPORT_VIEWS_HTML_H
#define TS_REPORT_VIEWS_HTML_H

#include "core/core.h"
#include "trainscope/views.h"

/* A flame graph of the merged call stacks (widths = total time), its top
 * paths and the threads. */
int ts_report_html_view_callstack(ts_buf *out, const ts_view_callstack *r);
/* Per allocator: bytes in use over time (a step line, the peak marked),
 * allocations by size bin (bars); segment sets with their fragmentation. */
int ts_report_html_view_allocator(ts_buf *out, const ts_view_allocator *r);
/* Per rank and direction: bytes per time bin (bars), and the totals. */
int ts_report_html_view_transfers(ts_buf *out, const ts_view_transfers *r);
/* Per stream: ops queued over time (a step line), and the streams' table. */
int ts_report_html_view_queues(ts_buf *out, const ts_view_queues *r);
/* Per kind/peer: min-p50-p90-p99-max of latency (a box per row), mean and
 * max per time bin (bars), and the table. */
int ts_report_html_view_comm(ts_buf *out, const ts_view_comm *r);

/* For the report's section adapters (html_sections.c): the view of trace t
 * (every rank, TS_VIEWS_DEFAULT_BINS bins) computed and its fragment
 * appended. TS_ENODATA with err saying why when t has nothing for the view
 * (no memory copies, no [memory] events...): the report leaves it out. */
int ts__html_view_callstack_of(ts_buf *out, const ts_job *t, ts_error *err);
int ts__html_view_allocator_of(ts_buf *out, const ts_job *t, ts_error *err);
int ts__html_view_transfers_of(ts_buf *out, const ts_job *t, ts_error *err);
int ts__html_view_queues_of(ts_buf *out, const ts_job *t, ts_error *err);
int ts__html_view_comm_of(ts_buf *out, const ts_job *t, ts_error *err);

#endif
