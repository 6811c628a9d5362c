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

#endif
