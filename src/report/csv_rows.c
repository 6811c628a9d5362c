/* csv_rows.c - a small CSV record writer (RFC 4180) for the tables of
 * replay and memory: fields quoted only when they hold a comma, quote, CR or
 * LF (quotes doubled, ts_csv_field), records ending in CRLF, numbers plain
 * (times as integer nanoseconds in *_ns columns, bytes as integers, percents
 * with fixed decimals), and the choice of one table by name.
 *
 * Not for: the layout of any table (each report file writes its own rows).
 */
#include <string.h>

#include "report/csv_rows.h"
#include "trainscope/report.h"

static void sep(ts__csv_rows *c)
{
    if (c->col++) fputc(',', c->out);
}

void ts__csv_rows_head(ts__csv_rows *c, const char *const *names, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) ts__csv_rows_str(c, names[i]);
    ts__csv_rows_end(c);
}

void ts__csv_rows_str(ts__csv_rows *c, const char *s)
{
    sep(c);
    if (s) ts_csv_field(c->out, s);
}

void ts__csv_rows_i64(ts__csv_rows *c, int64_t v)
{
    sep(c);
    fprintf(c->out, "%lld", (long long)v);
}

void ts__csv_rows_real(ts__csv_rows *c, double v, int decimals)
{
    sep(c);
    if (v == v && v - v == 0) fprintf(c->out, "%.*f", decimals, v);   /* NaN or infinite: empty */
}

void ts__csv_rows_end(ts__csv_rows *c)
{
    fputs("\r\n", c->out);
    c->col = 0;
}

int ts__csv_rows_pick(const char *cmd, const char *const *names, uint32_t n, const char *table, ts_error *err)
{
    if (!table) return 0;
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(names[i], table)) return (int)i;
    char list[256] = "";
    for (uint32_t i = 0; i < n; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? (i + 1 == n ? " or " : ", ") : "", names[i]);
    }
    snprintf(err->msg, sizeof err->msg, "%s: --table wants %s, got '%s'", cmd, list, table);
    err->status = TS_EINVAL;
    return -1;
}
