/* views_out.h - one writer for the views' tables (internal to report/):
 * a view describes each table as columns plus a row callback, and
 * views_out.c prints it as an aligned text table, CSV or JSON.
 *
 * Not for: what a view shows (src/report/views.c) or HTML (views_html.c).
 */
#ifndef TS_REPORT_VIEWS_OUT_H
#define TS_REPORT_VIEWS_OUT_H

#include "core/core.h"
#include "trainscope/views.h"

typedef enum vo_type {
    VO_STR = 0,   /* s */
    VO_INDENT,    /* s indented by 2 * i spaces in text tables (a tree's names) */
    VO_INT,       /* i */
    VO_ID,        /* i: a rank or peer; -1 (none) is "-" in text tables, -1 elsewhere */
    VO_BYTES,     /* i bytes: "12.5 MiB" in text tables, the integer elsewhere */
    VO_DUR,       /* i ns: "1.25ms" in text tables, us with 3 decimals elsewhere */
    VO_TIME,      /* i ns on the trace's clock: us with 3 decimals everywhere */
    VO_REAL,      /* d with 3 decimals; NaN = empty / null */
} vo_type;

typedef struct vo_col {
    const char *key;      /* JSON key and CSV header ("_us" is added for VO_DUR/VO_TIME) */
    const char *title;    /* text table header */
    vo_type     type;
    bool        no_text;  /* left out of text tables (kept in JSON and CSV) */
} vo_col;

typedef struct vo_cell { const char *s; int64_t i; double d; } vo_cell;

typedef struct vo_table {
    const char   *name;
    const char   *heading;   /* text tables: the line above it */
    const vo_col *cols;
    int           n_cols;
    bool          in_text;   /* printed by default on a terminal */
    uint64_t    (*n_rows)(const void *view, const void *arg);
    /* fill cells[0..n_cols) of row i; buf (512 bytes) may back strings */
    void        (*row)(const void *view, const void *arg, uint64_t i, vo_cell *cells, char *buf);
} vo_table;

/* Write view (tables[0..n)) in o's format under "view": name. */
TS_NODISCARD int ts__views_out(FILE *f, const char *name, const vo_table *tables, int n, const void *view,
                               const void *arg, const ts_views_out *o, const char *note, ts_error *err);

/* --format html: the page head and the view's <section id="view-NAME"> and
 * <h2> before its fragment, and their end: the page written to f (rc: the
 * fragment writer's status), b freed. */
void ts__views_html_begin(ts_buf *b, const char *view, const char *title);
TS_NODISCARD int ts__views_html_end(FILE *f, ts_buf *b, int rc, ts_error *err);

/* "12.5 MiB" */
void ts__views_bytes_str(int64_t b, char *out, size_t cap);

#endif
