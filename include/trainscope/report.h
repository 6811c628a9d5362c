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

#ifdef __cplusplus
}
#endif
#endif
