/* html.h - the HTML report: one self-contained file (inline SVG and CSS, a
 * few hundred bytes of script to sort tables; nothing fetched from a network)
 * that shows what the analyses found about a job: its summary, per-rank
 * temporal breakdown, stragglers (several ranks), kernel-type and
 * op-category shares, a timeline of one
 * iteration with the critical path drawn on it, replay against measurement,
 * the top ops, the memory curve (when the trace has [memory] events) and
 * every warning.
 *
 * Two entry points:
 *   ts_report_html_trace  runs the analyses itself on a loaded trace (what
 *                         `trainscope report` does);
 *   ts_report_html_write  draws analyses the caller already has (a program
 *                         that computed them for its own use, a benchmark).
 * Not for: the terminal/JSON/CSV outputs of each command.
 * Ownership: every pointer in ts_report_html_input is borrowed for the call.
 * Output is written to a temporary beside PATH and renamed only when whole:
 * a failed write leaves no file (and an existing PATH as it was).
 * Size: drawing is bounded by pixels, not events (a timeline lane holds at
 * most one rectangle per few pixels; at most timeline_ranks ranks are
 * drawn), so a 1,024-rank job's report stays within a few MB.
 */
#ifndef TRAINSCOPE_HTML_H
#define TRAINSCOPE_HTML_H

#include "trainscope/analyze.h"
#include "trainscope/graph.h"
#include "trainscope/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options; a NULL pointer means all defaults. Grows only at the end. */
typedef struct ts_report_html_opts {
    size_t      size;            /* sizeof(ts_report_html_opts) of the caller's header (0 = current) */
    const char *title;           /* page title; NULL = "trainscope report: " + the first rank's file */
    uint32_t    timeline_ranks;  /* ranks drawn in the timeline (those on the critical path first); 0 = 8 */
    uint32_t    top_ops;         /* rows of each top-ops table; 0 = 15 */
    int64_t     iteration;       /* ProfilerStep of the timeline and critical path; -1 = the last
                                    complete one (ts_critical_path_create's rule) */
    bool        window_all;      /* analyses over the whole trace, not its complete iterations */
    /* ts_report_html_trace: called with each analysis that could not run and why
     * ("critical path: rank 0 (a.json) has no iteration 99 ..."), the same lines the
     * page's warnings list; NULL = none. */
    void      (*on_note)(void *ud, const char *line);
    void       *note_ud;
} ts_report_html_opts;

/* The analyses a report draws, all borrowed; a NULL analysis leaves its
 * section out (ts_report_html_write) and `notes` may say why. */
typedef struct ts_report_html_input {
    size_t                   size;         /* sizeof(ts_report_html_input) (0 = current) */
    const ts_job          *trace;        /* required: summary, memory events, ingest warnings */
    const ts_breakdown      *breakdown;    /* per-rank temporal breakdown, kernel types */
    const ts_stats          *stats_by_name;     /* top ops (TS_STATS_BY_NAME, top 0 = every name) */
    const ts_stats          *stats_by_category; /* op-category shares (TS_STATS_BY_CATEGORY) */
    const ts_graph          *graph;        /* the timeline (its lanes and aligned clocks) */
    const ts_critical_path  *critical_path;/* drawn over the timeline; needs graph */
    const ts_replay         *replay;       /* replay vs measured */
    const char *const       *notes;        /* lines for the warnings section, e.g. an analysis that
                                              could not run ("graph: ..."); may be NULL */
    uint32_t                 n_notes;
} ts_report_html_input;

/* Draw in->... into PATH. TS_EINVAL when in->trace is NULL; TS_EIO (message
 * naming PATH and the cause) when PATH cannot be written; TS_ENOMEM. */
TS_API TS_NODISCARD int ts_report_html_write(const ts_report_html_input *in, const ts_report_html_opts *opts,
                                             const char *path, ts_error *err);

/* Run breakdown, stats, graph, critical path and an unmodified replay on t
 * and draw them into PATH. PATH is opened (its temporary created) before any
 * analysis runs, so an unwritable PATH fails at once. An analysis that finds
 * nothing to do or cannot run on this trace leaves its section out and says
 * why in the warnings section; only TS_ENOMEM and write errors fail the call. */
TS_API TS_NODISCARD int ts_report_html_trace(const ts_job *t, const ts_report_html_opts *opts,
                                             const char *path, ts_error *err);

#ifdef __cplusplus
}
#endif
#endif
