/* report.h - generic writers for what the analyses produce: aligned text
 * tables for a terminal, and CSV fields. (JSON output is built with the
 * internal ts_buf helpers in src/core/json.h.)
 *
 * Not for: deciding what to print; each command picks its columns.
 * Ownership: ts_table_create's result is released with ts_table_destroy; the
 * table copies every cell it is given, so callers may pass temporaries.
 * Widths are counted in UTF-8 code points, so a truncated cell never splits a
 * multi-byte character.
 */
#ifndef TRAINSCOPE_REPORT_H
#define TRAINSCOPE_REPORT_H

#include <stdio.h>
#include "trainscope/common.h"
#include "trainscope/analyze.h"
#include "trainscope/graph.h"
#include "trainscope/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ts_align { TS_ALIGN_LEFT = 0, TS_ALIGN_RIGHT } ts_align;

/* One column of a text table. */
typedef struct ts_col {
    const char *title;   /* header text (borrowed for the table's lifetime) */
    ts_align    align;   /* numbers right, names left */
    int         max_width; /* cells wider than this are cut and end in "…"; 0 = no limit */
} ts_col;

typedef struct ts_table ts_table;

/* NULL on out-of-memory. */
TS_API ts_table *ts_table_create(const ts_col *cols, int n_cols);
TS_API void      ts_table_destroy(ts_table *t);
/* Append a row of n_cols cells (NULL cell = empty). TS_ENOMEM on failure,
 * the table is then unaltered. */
TS_API TS_NODISCARD int ts_table_add_row(ts_table *t, const char *const *cells);
/* Append a horizontal rule (drawn with '-' under every column). */
TS_API TS_NODISCARD int ts_table_add_rule(ts_table *t);
/* Write header, rule and rows, columns separated by two spaces, no trailing
 * blanks. Returns TS_EIO when the stream fails. */
TS_API TS_NODISCARD int ts_table_write(const ts_table *t, FILE *f);

/* Cut s to at most max_width code points, ending in "…" when cut; writes a
 * NUL-terminated result of at most out_size bytes into out. */
TS_API void ts_report_truncate(const char *s, int max_width, char *out, size_t out_size);
/* Number of UTF-8 code points in s (bytes 10xxxxxx are not counted). */
TS_API int ts_report_width(const char *s);

/* A duration in at most 6 columns with its unit: "850ns", "12.3us", "845us",
 * "1.25ms"... up to seconds. Writes into out (>= 16 bytes) and returns it. */
TS_API char *ts_report_duration(double ns, char *out, size_t out_size);

/* Write one CSV field (RFC 4180): quoted when it holds a comma, quote, CR or
 * LF, with quotes doubled. */
TS_API void ts_csv_field(FILE *f, const char *s);


/* ---- the output stage of the analysis commands ----
 * Each ts_report_<analysis>() writes a result the library returned as a text
 * table, JSON or CSV; it never recomputes the analysis. Warnings: in JSON
 * inside the document ("warnings"), else the caller writes them to stderr
 * with ts_report_warnings() first. */
typedef enum ts_format { TS_FMT_TABLE = 0, TS_FMT_JSON, TS_FMT_CSV } ts_format;
/* "table", "json" or "csv" to its ts_format; -1 for anything else. */
TS_API int ts_report_format_parse(const char *s);

/* How a command wants its result written. Zero-initialise, set size. Grows at the end. */
typedef struct ts_report_opts {
    size_t      size;     /* sizeof(ts_report_opts) */
    ts_format   format;
    int         width;    /* table: columns, 0 = never cut names */
    uint32_t    top;      /* rows where the command cuts: diff per rank (0 = all), critical-path ops */
    const char *table;    /* csv: the one table to write to the stream (NULL = see ts_report_csv) */
    const char *dir;      /* csv: write every table to DIR/NAME.csv instead (NULL = none) */
} ts_report_opts;

/* Whether to print every warning line: asked (verbose), or stderr is not a
 * terminal (logs and scripts keep the full list). */
TS_API bool ts_report_warn_all(bool verbose);
/* The ingest warnings of t (NULL: none) and an analysis's own lines[0..n) on
 * f: with `all` every line, else one line per kind, summed over files and
 * over ranks. */
TS_API void ts_report_warnings(FILE *f, const ts_job *t, const char *const *lines, uint32_t n, bool all);

/* ---- CSV tables (RFC 4180; docs/csv.md) ----
 * A command's result as one or more named tables, the main one first: a header row, then one
 * record per row; fields quoted only when they hold a comma, quote, CR or LF
 * (quotes doubled); records end in CRLF. Numbers are written plain: times as
 * integer nanoseconds (columns named *_ns), counts as integers, ratios with
 * fixed decimals; never "1.25ms". */
typedef struct ts_csv ts_csv;   /* a record writer, handed to a table's write function */
/* The header row: n column names. */
TS_API void ts_csv_header(ts_csv *c, const char *const *names, uint32_t n);
TS_API void ts_csv_str(ts_csv *c, const char *s);          /* NULL = empty field */
TS_API void ts_csv_i64(ts_csv *c, int64_t v);
TS_API void ts_csv_u64(ts_csv *c, uint64_t v);
TS_API void ts_csv_real(ts_csv *c, double v, int decimals); /* NaN or infinite = empty field */
TS_API void ts_csv_end_row(ts_csv *c);

/* One table of a result: its name (the file stem under -o DIR and the NAME
 * of --table) and the function that writes its header and rows. */
typedef void (*ts_csv_table_fn)(ts_csv *c, const void *result);
typedef struct ts_csv_table { const char *name; ts_csv_table_fn write; } ts_csv_table;

/* Write tables[0..n) of `result`: with dir, every table to DIR/NAME.csv
 * (DIR made when missing), each written to a temporary and all renamed only
 * when all were written (nothing left behind on failure: TS_EIO); else with
 * `table`, that table to out (TS_EINVAL naming the choices when no table has
 * that name); else tables[0], the command's main table (docs/csv.md).
 * `cmd` names the command in messages. TS_EIO when out fails. */
TS_API TS_NODISCARD int ts_report_csv(const char *cmd, const ts_csv_table *tables, uint32_t n, const void *result,
                                      const char *table, const char *dir, FILE *out, ts_error *err);


/* The same, then the lines of graph g and of critical path cp (either NULL: none). */
TS_API void ts_report_warnings_graph(FILE *f, const ts_job *t, const ts_graph *g, const ts_critical_path *cp, bool all);

/* ---- one function per analysis: its result in o->format on out ----
 * TS_OK; TS_EIO when a write fails, TS_ENOMEM, TS_EINVAL for a CSV table
 * choice that does not exist (err says which exist). The trace (and graph)
 * give the JSON "warnings" array: ingest warnings, then the analysis's lines. */

/* breakdown: the per-rank breakdown, and st (NULL: one rank) built on g;
 * note: one more warning line of kind "breakdown" (NULL: none). CSV tables:
 * temporal, kernel_types, kernels, streams, launches, memory_bandwidth,
 * threads, stragglers, straggler_pairs, straggler_iterations,
 * straggler_collectives. */
TS_API TS_NODISCARD int ts_report_breakdown(const ts_breakdown *b, const ts_stragglers *st, const ts_job *t,
                                            const ts_graph *g, const char *note, const ts_report_opts *o, FILE *out,
                                            ts_error *err);
/* stats. CSV tables: rows, windows. */
TS_API TS_NODISCARD int ts_report_stats(const ts_stats *st, const ts_job *t, const ts_report_opts *o, FILE *out,
                                        ts_error *err);
/* diff of traces a and b; the table lists o->top rows per rank. CSV tables:
 * ops, ranks. */
TS_API TS_NODISCARD int ts_report_diff(const ts_diff *d, const ts_job *a, const ts_job *b, const ts_report_opts *o,
                                       FILE *out, ts_error *err);
/* info: what each rank was read from and its row counts. CSV tables: ranks, meta. */
TS_API TS_NODISCARD int ts_report_info(const ts_job *t, const ts_report_opts *o, FILE *out, ts_error *err);
/* critical path cp; o->top op rows. CSV tables: categories, wait_on_rank,
 * ops, path, ranks, edges. */
TS_API TS_NODISCARD int ts_report_critical_path(const ts_critical_path *cp, const ts_job *t, const ts_report_opts *o,
                                                FILE *out, ts_error *err);
/* A Chrome trace of cp's trace with the path marked (args.critical = 1, flow
 * arrows) at path, written whole or not at all. */
TS_API TS_NODISCARD int ts_report_critical_path_chrome(const ts_critical_path *cp, const char *path, ts_error *err);

#ifdef __cplusplus
}
#endif
#endif
