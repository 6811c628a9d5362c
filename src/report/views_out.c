/* views_out.c - prints the views' tables (views_out.h) as aligned text,
 * CSV or JSON; each output is built whole in memory and written at once, so
 * a failing write leaves no partial table behind on a file.
 */
#include <math.h>
#include <stdlib.h>

#include "report/report_int.h"
#include "report/views_out.h"
#include "trainscope/report.h"

void ts__views_bytes_str(int64_t b, char *out, size_t cap)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    int u = 0;
    while ((v >= 1024 || v <= -1024) && u < 5) { v /= 1024; u++; }
    if (u == 0) snprintf(out, cap, "%lld B", (long long)b);
    else snprintf(out, cap, "%.*f %s", fabs(v) < 10 ? 2 : fabs(v) < 100 ? 1 : 0, v, unit[u]);
}

static void cell_text(const vo_col *c, const vo_cell *v, char *out, size_t cap)
{
    switch (c->type) {
    case VO_STR: snprintf(out, cap, "%s", v->s ? v->s : ""); break;
    case VO_INDENT: snprintf(out, cap, "%*s%s", (int)(2 * (v->i < 40 ? v->i : 40)), "", v->s ? v->s : ""); break;
    case VO_INT: snprintf(out, cap, "%lld", (long long)v->i); break;
    case VO_ID: if (v->i < 0) snprintf(out, cap, "-"); else snprintf(out, cap, "%lld", (long long)v->i); break;
    case VO_BYTES: if (v->i < 0) snprintf(out, cap, "-"); else ts__views_bytes_str(v->i, out, cap); break;
    case VO_DUR: ts_report_duration((double)v->i, out, cap); break;
    case VO_TIME: snprintf(out, cap, "%.3f", (double)v->i / 1e3); break;
    case VO_REAL: if (isnan(v->d)) out[0] = 0; else snprintf(out, cap, "%.3f", v->d); break;
    }
}

/* CSV and JSON: plain values, durations and times as us. */
static void cell_plain(const vo_col *c, const vo_cell *v, char *out, size_t cap)
{
    if (c->type == VO_BYTES || c->type == VO_ID) snprintf(out, cap, "%lld", (long long)v->i);
    else if (c->type == VO_DUR) snprintf(out, cap, "%.3f", (double)v->i / 1e3);
    else if (c->type == VO_INDENT) snprintf(out, cap, "%s", v->s ? v->s : "");
    else cell_text(c, v, out, cap);
}

static void key_of(const vo_col *c, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s", c->key, c->type == VO_DUR || c->type == VO_TIME ? "_us" : "");
}

static int text_table(FILE *f, const vo_table *t, const void *view, const void *arg)
{
    ts_col cols[32];
    int nc = 0, map[32];
    for (int c = 0; c < t->n_cols && nc < 32; c++) {
        if (t->cols[c].no_text) continue;
        vo_type ty = t->cols[c].type;
        cols[nc] = (ts_col){t->cols[c].title, ty == VO_STR || ty == VO_INDENT ? TS_ALIGN_LEFT : TS_ALIGN_RIGHT,
                            ty == VO_STR || ty == VO_INDENT ? 60 : 0};
        map[nc++] = c;
    }
    ts_table *tab = ts_table_create(cols, nc);
    if (!tab) return TS_ENOMEM;
    vo_cell cells[32];
    char buf[512], text[32][256];
    const char *row[32];
    uint64_t n = t->n_rows(view, arg);
    int rc = TS_OK;
    for (uint64_t i = 0; i < n && !rc; i++) {
        memset(cells, 0, sizeof cells);
        t->row(view, arg, i, cells, buf);
        for (int c = 0; c < nc; c++) { cell_text(&t->cols[map[c]], &cells[map[c]], text[c], sizeof text[c]); row[c] = text[c]; }
        rc = ts_table_add_row(tab, row);
    }
    if (!rc) {
        fprintf(f, "%s\n", t->heading);
        rc = ts_table_write(tab, f);
        fputc('\n', f);
    }
    ts_table_destroy(tab);
    return rc;
}

/* One table through the one CSV record writer (ts_csv, docs/csv.md). */
static void csv_table(ts_buf *b, const vo_table *t, const void *view, const void *arg)
{
    char key[128], text[512], buf[512];
    ts_csv csv;
    ts__csv_init(&csv, b);
    for (int c = 0; c < t->n_cols; c++) {
        key_of(&t->cols[c], key, sizeof key);
        ts_csv_str(&csv, key);
    }
    ts_csv_end_row(&csv);
    vo_cell cells[32];
    uint64_t n = t->n_rows(view, arg);
    for (uint64_t i = 0; i < n; i++) {
        memset(cells, 0, sizeof cells);
        t->row(view, arg, i, cells, buf);
        for (int c = 0; c < t->n_cols; c++) {
            cell_plain(&t->cols[c], &cells[c], text, sizeof text);
            ts_csv_str(&csv, text);
        }
        ts_csv_end_row(&csv);
    }
}

static void json_table(ts_json *j, const vo_table *t, const void *view, const void *arg)
{
    char key[128], buf[512];
    vo_cell cells[32];
    ts__json_key(j, t->name);
    ts__json_arr_begin(j);
    uint64_t n = t->n_rows(view, arg);
    for (uint64_t i = 0; i < n; i++) {
        memset(cells, 0, sizeof cells);
        t->row(view, arg, i, cells, buf);
        ts__json_obj_begin(j);
        for (int c = 0; c < t->n_cols; c++) {
            const vo_col *col = &t->cols[c];
            key_of(col, key, sizeof key);
            ts__json_key(j, key);
            switch (col->type) {
            case VO_STR: case VO_INDENT: ts__json_str(j, cells[c].s ? cells[c].s : ""); break;
            case VO_INT: case VO_ID: case VO_BYTES: ts__json_i64(j, cells[c].i); break;
            case VO_DUR: case VO_TIME: ts__json_us(j, cells[c].i); break;
            case VO_REAL: ts__json_double(j, cells[c].d, 6); break;
            }
        }
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
}

static int unknown_table(const char *name, const vo_table *tables, int n, const char *asked, ts_error *err)
{
    char list[256] = "";
    for (int i = 0; i < n; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", tables[i].name);
    }
    return ts__error(err, TS_EINVAL, "views: the %s view has no table '%s' (it has %s)", name, asked, list);
}

static int flush_buf(FILE *f, ts_buf *b, ts_error *err)
{
    int rc = TS_OK;
    if (b->oom) rc = ts__error(err, TS_ENOMEM, "out of memory");
    else if (b->len && fwrite(b->s, 1, b->len, f) != b->len) rc = TS_EIO;
    if (!rc && (fflush(f) || ferror(f))) rc = TS_EIO;
    if (rc == TS_EIO) ts__error(err, rc, "views: writing the output failed");
    ts__buf_free(b);
    return rc;
}

void ts__views_html_begin(ts_buf *b, const char *view, const char *title)
{
    ts__buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>trainscope views: %s"
                      "</title></head>\n<body style=\"margin:1em;font:13px sans-serif\">\n<section id=\"view-%s\">"
                      "<h2 style=\"font-size:16px\">%s</h2>\n", view, view, title);
}

int ts__views_html_end(FILE *f, ts_buf *b, int rc, ts_error *err)
{
    ts__buf_puts(b, "</section>\n</body></html>\n");
    if (rc) { ts__buf_free(b); return ts__error(err, rc, "out of memory"); }
    return flush_buf(f, b, err);
}

int ts__views_out(FILE *f, const char *name, const vo_table *tables, int n, const void *view, const void *arg,
                  const ts_views_out *o, const char *note, ts_error *err)
{
    int only = -1;
    if (o->table) {
        for (int i = 0; i < n && only < 0; i++) if (!strcmp(tables[i].name, o->table)) only = i;
        if (only < 0) return unknown_table(name, tables, n, o->table, err);
    }
    ts_buf b;
    ts__buf_init(&b);
    if (o->format == TS_VIEWS_JSON) {
        ts_json j;
        ts__json_init(&j, &b);
        ts__json_obj_begin(&j);
        ts__json_kv_str(&j, "view", name);
        if (note) ts__json_kv_str(&j, "note", note);
        ts__json_key(&j, "tables");
        ts__json_obj_begin(&j);
        for (int i = 0; i < n; i++) if (only < 0 || only == i) json_table(&j, &tables[i], view, arg);
        ts__json_obj_end(&j);
        ts__report_warnings_json(&j, o->trace);
        ts__json_obj_end(&j);
        ts__buf_puts(&b, "\n");
        return flush_buf(f, &b, err);
    }
    if (o->trace) ts_report_warnings(stderr, o->trace, NULL, 0, ts_report_warn_all(o->verbose));
    if (o->format == TS_VIEWS_CSV) {
        csv_table(&b, &tables[only < 0 ? 0 : only], view, arg);
        return flush_buf(f, &b, err);
    }
    int rc = TS_OK;
    for (int i = 0; i < n && !rc; i++)   /* the usual tables that have rows, or the one asked for */
        if (only == i || (only < 0 && tables[i].in_text && tables[i].n_rows(view, arg)))
            rc = text_table(f, &tables[i], view, arg);
    if (!rc && note) fprintf(f, "%s\n", note);
    if (rc == TS_ENOMEM) return ts__error(err, rc, "out of memory");
    return flush_buf(f, &b, err);
}
