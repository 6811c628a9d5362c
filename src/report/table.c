/* table.c - aligned text tables and CSV fields (see trainscope/report.h).
 *
 * Cells are copied into the table's arena when added; widths are computed at
 * write time from the (already truncated) cells, so writing is O(cells).
 * Invariant: every row holds exactly n_cols cell pointers; a rule row holds
 * NULL instead of a cell array.
 */
#include "core/core.h"
#include "trainscope/report.h"

#include <stdio.h>
#include <stdlib.h>

#define ELLIPSIS "\xe2\x80\xa6"   /* U+2026, one column wide */

struct ts_table {
    ts_col    *cols;      /* n_cols column specs (titles borrowed) */
    int        n_cols;
    char    ***rows;      /* rows[i][c] = cell text in arena; rows[i] NULL = rule */
    uint32_t   n_rows, cap_rows;
    ts_arena   arena;     /* cell bytes and cell arrays */
};

int ts_report_width(const char *s)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80) w++;
    return w;
}

void ts_report_truncate(const char *s, int max_width, char *out, size_t out_size)
{
    if (out_size == 0) return;
    size_t n = strlen(s);
    if (max_width <= 0 || ts_report_width(s) <= max_width) {
        if (n >= out_size) n = out_size - 1;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;  /* whole code points only */
        memcpy(out, s, n);
        out[n] = 0;
        return;
    }
    /* Keep max_width - 1 code points, then the ellipsis. */
    size_t keep = 0;
    int w = 0;
    while (s[keep] && w < max_width - 1) {
        keep++;
        while (((unsigned char)s[keep] & 0xC0) == 0x80) keep++;
        w++;
    }
    if (keep + sizeof ELLIPSIS > out_size) keep = out_size > sizeof ELLIPSIS ? out_size - sizeof ELLIPSIS : 0;
    while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80) keep--;
    memcpy(out, s, keep);
    memcpy(out + keep, ELLIPSIS, sizeof ELLIPSIS);
}

ts_table *ts_table_create(const ts_col *cols, int n_cols)
{
    ts_table *t = ts__calloc(1, sizeof *t);
    if (!t) return NULL;
    ts__arena_init(&t->arena);
    t->cols = ts__malloc((size_t)n_cols * sizeof *cols);
    if (!t->cols) { ts__free(t, sizeof *t); return NULL; }
    memcpy(t->cols, cols, (size_t)n_cols * sizeof *cols);
    t->n_cols = n_cols;
    return t;
}

void ts_table_destroy(ts_table *t)
{
    if (!t) return;
    ts__arena_free(&t->arena);
    ts__free(t->rows, (size_t)t->cap_rows * sizeof *t->rows);
    ts__free(t->cols, (size_t)t->n_cols * sizeof *t->cols);
    ts__free(t, sizeof *t);
}

static int push_row(ts_table *t, char **cells)
{
    if (t->n_rows == t->cap_rows &&
        ts__grow((void **)&t->rows, &t->cap_rows, sizeof *t->rows, (size_t)t->n_rows + 1))
        return TS_ENOMEM;
    t->rows[t->n_rows++] = cells;
    return TS_OK;
}

int ts_table_add_row(ts_table *t, const char *const *cells)
{
    char **row = ts__arena_alloc(&t->arena, (size_t)t->n_cols * sizeof *row);
    if (!row) return TS_ENOMEM;
    for (int c = 0; c < t->n_cols; c++) {
        const char *s = cells[c] ? cells[c] : "";
        size_t cap = strlen(s) + sizeof ELLIPSIS;
        row[c] = ts__arena_alloc(&t->arena, cap);
        if (!row[c]) return TS_ENOMEM;
        ts_report_truncate(s, t->cols[c].max_width, row[c], cap);
    }
    return push_row(t, row);
}

int ts_table_add_rule(ts_table *t) { return push_row(t, NULL); }

static void put_cell(FILE *f, const char *s, int width, ts_align align, bool last)
{
    int pad = width - ts_report_width(s);
    if (align == TS_ALIGN_RIGHT) for (int i = 0; i < pad; i++) fputc(' ', f);
    fputs(s, f);
    if (align == TS_ALIGN_LEFT && !last) for (int i = 0; i < pad; i++) fputc(' ', f);
}

int ts_table_write(const ts_table *t, FILE *f)
{
    int *w = ts__calloc((size_t)t->n_cols, sizeof *w);
    if (!w) return TS_ENOMEM;
    for (int c = 0; c < t->n_cols; c++) {
        w[c] = ts_report_width(t->cols[c].title);
        for (uint32_t r = 0; r < t->n_rows; r++)
            if (t->rows[r] && ts_report_width(t->rows[r][c]) > w[c]) w[c] = ts_report_width(t->rows[r][c]);
    }
    for (int c = 0; c < t->n_cols; c++) {
        if (c) fputs("  ", f);
        put_cell(f, t->cols[c].title, w[c], t->cols[c].align, c == t->n_cols - 1);
    }
    fputc('\n', f);
    for (uint32_t r = 0; r <= t->n_rows; r++) {
        char **row = r == 0 ? NULL : t->rows[r - 1];   /* r == 0: the rule under the header */
        if (r > 0 && row == NULL && r - 1 == 0) continue;  /* a rule right after the header rule */
        for (int c = 0; c < t->n_cols; c++) {
            if (c) fputs("  ", f);
            if (row) put_cell(f, row[c], w[c], t->cols[c].align, c == t->n_cols - 1);
            else for (int i = 0; i < w[c]; i++) fputc('-', f);
        }
        fputc('\n', f);
    }
    ts__free(w, (size_t)t->n_cols * sizeof *w);
    return ferror(f) ? TS_EIO : TS_OK;
}

char *ts_report_duration(double ns, char *out, size_t out_size)
{
    static const struct { double scale; const char *unit; } units[] = {
        {1, "ns"}, {1e3, "us"}, {1e6, "ms"}, {1e9, "s"},
    };
    int u = 0;
    double a = ns < 0 ? -ns : ns;
    while (u < 3 && a >= 999.5 * units[u].scale) u++;
    double v = ns / units[u].scale;
    if (u == 0 || a / units[u].scale >= 99.95) snprintf(out, out_size, "%.0f%s", v, units[u].unit);
    else snprintf(out, out_size, "%.*f%s", a / units[u].scale >= 9.995 ? 1 : 2, v, units[u].unit);
    return out;
}

void ts_csv_field(FILE *f, const char *s)
{
    if (!s) s = "";
    if (!strpbrk(s, ",\"\r\n")) { fputs(s, f); return; }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}
