/* report_int.h - report helpers that read the internal trace model (for the
 * CLI commands). Generic writers live in trainscope/report.h and core/json.h. */
#ifndef TS_REPORT_INT_H
#define TS_REPORT_INT_H

#include <stdio.h>

#include "core/json.h"
#include "trace/model.h"
#include "trainscope/graph.h"
#include "trainscope/report.h"

/* Output formats every analysis command offers (ts_format: trainscope/report.h). */
/* "table", "json" or "csv" to its ts_format; -1 for anything else (= ts_report_format_parse). */
int ts__report_format(const char *s);

/* "warnings": [{"rank", "file", "kind", "count", "first"}, ...]: t's ingest warnings. */
void ts__report_warnings_json(ts_json *j, const ts_job *t);
/* The same key and array left open after t's items (t NULL: none), for the
 * analysis's own lines and other traces; close it with ts__json_arr_end. */
void ts__report_warnings_json_open(ts_json *j, const ts_job *t);
/* t's ingest warnings as items of an open array (t NULL: none). */
void ts__report_warnings_json_trace(ts_json *j, const ts_job *t);
/* One item of that shape, from its fields (first NULL: ""). */
void ts__report_warning_json_item(ts_json *j, int64_t rank, const char *file, const char *kind, uint64_t count,
                                  const char *first);
/* One analysis line as an item of the same shape: kind is the stage that said
 * it ("graph", "critical_path", "replay", ...), rank the line's leading
 * "rank N" (-1 when none), file "", count 1, first the line itself. */
void ts__report_warning_json_line(ts_json *j, const char *kind, const char *line);
/* One line per (rank, kind) on f: "trainscope: warning: FILE: N kind (first: msg)". */
void ts__report_warnings_print(FILE *f, const ts_job *t);
/* Warnings on a stream: ts_report_warnings, ts_report_warnings_graph and
 * ts_report_warn_all (trainscope/report.h). */
/* `,"warnings":[...]}\n` on f, closing a JSON object a command printed
 * itself: the ingest warnings of ts[0..n) (NULL entries: none), then g's. */
void ts__report_warnings_json_close(FILE *f, const ts_job *const *ts, uint32_t n, const ts_graph *g);
/* g's warnings (NULL: none) as items of kind "graph" of an open "warnings" array. */
void ts__report_warnings_json_graph(ts_json *j, const ts_graph *g);

/* The CSV record writer behind trainscope/report.h's ts_csv: records go to a
 * buffer, each ending in "\r\n" (RFC 4180). */
struct ts_csv {
    ts_buf     *out;   /* borrowed */
    uint32_t    col;   /* fields written in the current record */
};
void ts__csv_init(ts_csv *c, ts_buf *out);
/* The header row from literal column names. */
#define TS__CSV_HEAD(c, ...) do { \
    static const char *const h_[] = {__VA_ARGS__}; \
    ts_csv_header(c, h_, (uint32_t)(sizeof h_ / sizeof h_[0])); \
} while (0)
/* A row's fields listed once for JSON and CSV (fields.c). */
typedef enum ts__fld_type {
    TS__FLD_INT = 0,   /* i */
    TS__FLD_U64,       /* i as uint64_t */
    TS__FLD_STR,       /* s; NULL: JSON null, an empty CSV field */
    TS__FLD_OPT_STR,   /* s; NULL: left out of JSON, an empty CSV field */
    TS__FLD_BOOL,      /* i: JSON true/false, CSV 1/0 */
    TS__FLD_NS,        /* i ns: JSON "KEY_us" (us, 3 decimals, exact), CSV "KEY_ns" (integer) */
    TS__FLD_REAL,      /* d: JSON with prec decimals, CSV with 3; NaN: JSON null, CSV empty */
} ts__fld_type;
typedef struct ts__fld { const char *key; ts__fld_type type; int64_t i; double d; const char *s; int prec; } ts__fld;
enum { TS__FLD_MAX = 16 };   /* fields in a row at most */
void ts__fld_json(ts_json *j, const ts__fld *f, int n);       /* one object */
void ts__fld_csv_head(ts_csv *c, const ts__fld *f, int n);    /* the header record */
void ts__fld_csv_row(ts_csv *c, const ts__fld *f, int n);     /* one record */

/* out (stdout) gets b; TS_EIO when the buffer ran out of memory or out failed. */
int ts__report_flush(const ts_buf *b, FILE *out, ts_error *err);

#endif
