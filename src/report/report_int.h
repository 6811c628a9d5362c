/* report_int.h - report helpers that read the internal trace model (for the
 * CLI commands). Generic writers live in trainscope/report.h and json.h. */
#ifndef TS_REPORT_INT_H
#define TS_REPORT_INT_H

#include <stdio.h>

#include "report/json.h"
#include "trace/model.h"

/* Output formats every analysis command offers. */
typedef enum ts_format { TS_FMT_TABLE = 0, TS_FMT_JSON, TS_FMT_CSV } ts_format;
/* "table", "json" or "csv" to its ts_format; -1 for anything else. */
int ts__report_format(const char *s);

/* "warnings": [{"rank", "file", "kind", "count", "first"}, ...] */
void ts__report_warnings_json(ts_json *j, const ts_trace *t);
/* One line per (rank, kind) on f: "trainscope: warning: FILE: N kind (first: msg)". */
void ts__report_warnings_print(FILE *f, const ts_trace *t);
/* Whether to print every warning line: asked (--verbose), or stderr is not a
 * terminal (logs and scripts keep the full list). */
bool ts__report_warn_all(bool verbose);
/* The ingest warnings of t (NULL: none) and an analysis's own lines on f: with `all`,
 * every line; else one line per kind, summed over files (ingest) and over
 * ranks (lines "rank N: ..." alike but for their numbers). */
void ts__report_warnings_emit(FILE *f, const ts_trace *t, const char *const *lines, uint32_t n, bool all);

#endif
