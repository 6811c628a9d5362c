/* report_replay.h - the replay's results as a terminal table or JSON: one
 * replay (ts_replay), a job traced in several windows (ts_replay_windows),
 * the precision what-if (ts_prec_report) and the optimizer's plan
 * (ts_optimize_result). What `trainscope replay` and `trainscope optimize`
 * print, so a program on the library prints the same.
 *
 * Not for: computing anything (every figure comes from the result's public
 * accessors) or choosing what to run (the CLI parses options).
 * Streams: `out` gets the table or JSON; `warn` (stderr for the CLI) the
 * warnings beside a table, one line per kind on a terminal unless verbose,
 * every line otherwise. JSON carries its warnings in a "warnings" array.
 * Each returns TS_OK, or TS_EIO when writing `out` failed (TS_ENOMEM when a
 * table could not be built).
 */
#ifndef TRAINSCOPE_REPORT_REPLAY_H
#define TRAINSCOPE_REPORT_REPLAY_H

#include <stdbool.h>
#include <stdio.h>

#include "trainscope/optimize.h"
#include "trainscope/precision.h"
#include "trainscope/replay.h"
#include "trainscope/report.h"   /* ts_report_warnings, ts_report_warn_all */

#ifdef __cplusplus
extern "C" {
#endif

/* Per rank measured, predicted, error (a what-if's change) and clock offset;
 * the medians and the spread of the iterations; t's ingest warnings and r's
 * lines on warn. */
TS_API TS_NODISCARD int ts_report_replay_table(FILE *out, FILE *warn, const ts_job *t, const ts_replay *r,
                                               bool verbose);
/* One JSON object and a newline: medians, per_iteration, ranks, graph sizes,
 * warnings (t's ingest ones, then r's). Times in microseconds. */
TS_API TS_NODISCARD int ts_report_replay_json(FILE *out, const ts_job *t, const ts_replay *r);
/* --windows: one row per window, the medians over the windows and their
 * spread; the windows' distinct replay lines on warn. */
TS_API TS_NODISCARD int ts_report_replay_windows_table(FILE *out, FILE *warn, const ts_replay_windows *w,
                                                       bool verbose);
TS_API TS_NODISCARD int ts_report_replay_windows_json(FILE *out, const ts_replay_windows *w);
/* CSV (RFC 4180, CRLF records, times as integer nanoseconds, percents with 3
 * decimals) of one table, warnings on warn as beside the text table:
 *   replay:    "ranks" (the default: rank, measured_ns, predicted_ns, error_pct,
 *              clock_offset_ns) or "iterations" (step, measured_ns, predicted_ns);
 *   --windows: "windows" (the default: path, iterations, measured_ns,
 *              predicted_ns, error_pct) or "ranks" (rank, measured_ns,
 *              predicted_ns: the medians over the windows).
 * error_pct is a what-if's change when the replay is one. Another table name:
 * TS_EINVAL with err naming the tables, nothing written. */
TS_API TS_NODISCARD int ts_report_replay_csv(FILE *out, FILE *warn, const ts_job *t, const ts_replay *r,
                                             const char *table, bool verbose, ts_error *err);
TS_API TS_NODISCARD int ts_report_replay_windows_csv(FILE *out, FILE *warn, const ts_replay_windows *w,
                                                     const char *table, bool verbose, ts_error *err);
/* The precision what-if (replay --precision-plan / --precision-greedy): the
 * prediction p of model m. JSON: one object closed with the "warnings" of
 * the runs traces[0..TS_PREC_COUNT) (NULL entries: none). Table: every line
 * starts with `pre` ("# " after a greedy plan, so that the whole output is
 * a plan file). */
TS_API TS_NODISCARD int ts_report_prec_json(FILE *out, const ts_prec_model *m, const ts_prec_prediction *p,
                                            const ts_job *const *traces);
TS_API TS_NODISCARD int ts_report_prec_table(FILE *out, const ts_prec_model *m, const ts_prec_prediction *p,
                                             const char *pre);
/* A plan prec[] (one precision per unit) as a plan file: one line per unit
 * lowered, by position ("op:N P  # op in scope"). */
TS_API TS_NODISCARD int ts_report_prec_plan(FILE *out, const ts_prec_model *m, const uint8_t *prec);
/* The precision pass (optimize --passes precision): its summary and plan
 * (table: the figures, then the plan file's lines) or one JSON object. */
TS_API TS_NODISCARD int ts_report_prec_optimize_table(FILE *out, const ts_prec_model *m, const ts_optimize_prec *p);
TS_API TS_NODISCARD int ts_report_prec_optimize_json(FILE *out, const ts_optimize_prec *p);
/* The optimizer's result o on graph g of trace t: its iteration before and
 * after, search, and changes (table; t's and g's warnings on warn first), or
 * one JSON object with them in "warnings". */
TS_API TS_NODISCARD int ts_report_optimize_table(FILE *out, FILE *warn, const ts_job *t, const ts_graph *g,
                                                 const ts_optimize *o);
TS_API TS_NODISCARD int ts_report_optimize_json(FILE *out, const ts_job *t, const ts_graph *g,
                                                const ts_optimize *o);

#ifdef __cplusplus
}
#endif
#endif
