/* csv.c - CSV tables (RFC 4180) for every command's results, and the one
 * place that decides where they go: one table to a stream (--table NAME), or
 * every table to DIR/NAME.csv written whole or not at all (-o DIR).
 *
 * Not for: choosing columns (each report/<analysis>.c lists its tables) or
 * the aligned text tables (table.c). Records are built in a ts_buf, so a
 * table reaches its file or stream in one checked write.
 */
#include "report/report_int.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

void ts__csv_init(ts_csv *c, ts_buf *out)
{
    c->out = out;
    c->col = 0;
}

static void sep(ts_csv *c)
{
    if (c->col++) ts__buf_add(c->out, ",", 1);
}

void ts_csv_str(ts_csv *c, const char *s)
{
    sep(c);
    if (s) ts__buf_csv_field(c->out, s);
}

void ts_csv_i64(ts_csv *c, int64_t v)
{
    sep(c);
    ts__buf_printf(c->out, "%lld", (long long)v);
}

void ts_csv_u64(ts_csv *c, uint64_t v)
{
    sep(c);
    ts__buf_printf(c->out, "%llu", (unsigned long long)v);
}

void ts_csv_real(ts_csv *c, double v, int decimals)
{
    sep(c);
    if (isfinite(v)) ts__buf_printf(c->out, "%.*f", decimals, v);
}

void ts_csv_end_row(ts_csv *c)
{
    ts__buf_puts(c->out, "\r\n");
    c->col = 0;
}

void ts_csv_header(ts_csv *c, const char *const *names, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) ts_csv_str(c, names[i]);
    ts_csv_end_row(c);
}

int ts__report_flush(const ts_buf *b, FILE *out, ts_error *err)
{
    if (b->oom) return ts__error(err, TS_ENOMEM, "out of memory writing the output");
    if ((b->len && fwrite(b->s, 1, b->len, out) != b->len) || ferror(out))
        return ts__error(err, TS_EIO, "writing the output failed: %s", strerror(errno));
    return TS_OK;
}

/* "a, b, c": the table names, for messages. */
static void name_list(const ts_csv_table *tables, uint32_t n, char *out, size_t size)
{
    size_t at = 0;
    out[0] = 0;
    for (uint32_t i = 0; i < n && at < size; i++)
        at += (size_t)snprintf(out + at, size - at, "%s%s", i ? ", " : "", tables[i].name);
}

/* Every table to DIR/.NAME.csv.tmp, then all renamed (or all removed). */
static int write_dir(const ts_csv_table *tables, uint32_t n, const void *result, const char *dir, ts_error *err)
{
    enum { MAX_TABLES = 32 };
    char names[MAX_TABLES][64];
    const char *np[MAX_TABLES];
    if (n > MAX_TABLES) return ts__error(err, TS_EINVAL, "ts_report_csv: %u tables, at most %d", n, MAX_TABLES);
    bool made;
    if (ts__out_dir(dir, true, &made, err)) return TS_EIO;
    int rc = TS_OK, written = 0;
    for (uint32_t i = 0; i < n && !rc; i++) {
        snprintf(names[i], sizeof names[i], "%s.csv", tables[i].name);
        np[i] = names[i];
        ts_buf b;
        ts_csv c;
        ts__buf_init(&b);
        ts__csv_init(&c, &b);
        tables[i].write(&c, result);
        rc = b.oom ? ts__error(err, TS_ENOMEM, "out of memory") : ts__write_tmp(dir, names[i], &b, err);
        ts__buf_free(&b);
        if (!rc) written++;
    }
    rc = ts__commit_tmp(dir, np, written, rc, err);
    if (rc && made) rmdir(dir);
    return rc;
}

int ts_report_csv(const char *cmd, const ts_csv_table *tables, uint32_t n, const void *result, const char *table,
                  const char *dir, FILE *out, ts_error *err)
{
    ts__error_clear(err);
    if (dir) return write_dir(tables, n, result, dir, err);
    char list[512];
    name_list(tables, n, list, sizeof list);
    const ts_csv_table *t = NULL;
    for (uint32_t i = 0; table && i < n; i++)
        if (!strcmp(tables[i].name, table)) t = &tables[i];
    if (table && !t) return ts__error(err, TS_EINVAL, "%s: --table wants one of %s, got '%s'", cmd, list, table);
    if (!t) t = &tables[0];   /* the command's main table (docs/export.md) */
    ts_buf b;
    ts_csv c;
    ts__buf_init(&b);
    ts__csv_init(&c, &b);
    t->write(&c, result);
    int rc = ts__report_flush(&b, out, err);
    ts__buf_free(&b);
    return rc;
}
