/* json.c - the JSON writer helpers (see json.h). Each call is O(length of
 * what it writes); the writer holds no allocation of its own. */
#include "core/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

void ts__json_init(ts_json *j, ts_buf *out)
{
    memset(j, 0, sizeof *j);
    j->out = out;
}

/* Comma before a value or key unless it is the first at its level or the
 * value that completes a key. */
static void before_value(ts_json *j)
{
    if (j->after_key) { j->after_key = false; return; }
    if (j->has_item[j->depth]) ts__buf_add(j->out, ",", 1);
    j->has_item[j->depth] = true;
}

static void open_container(ts_json *j, char c)
{
    before_value(j);
    ts__buf_add(j->out, &c, 1);
    /* Deeper than the bound: keep writing valid JSON, stop tracking commas
     * separately (reports never nest this deep). */
    if (j->depth < TS_JSON_MAX_DEPTH - 1) j->depth++;
    j->has_item[j->depth] = false;
}

static void close_container(ts_json *j, char c)
{
    ts__buf_add(j->out, &c, 1);
    if (j->depth > 0) j->depth--;
}

void ts__json_obj_begin(ts_json *j) { open_container(j, '{'); }
void ts__json_obj_end(ts_json *j) { close_container(j, '}'); }
void ts__json_arr_begin(ts_json *j) { open_container(j, '['); }
void ts__json_arr_end(ts_json *j) { close_container(j, ']'); }

void ts__json_key(ts_json *j, const char *key)
{
    before_value(j);
    ts__buf_json_str(j->out, key, strlen(key));
    ts__buf_add(j->out, ":", 1);
    j->after_key = true;
}

void ts__json_str(ts_json *j, const char *s)
{
    if (!s) { ts__json_null(j); return; }
    before_value(j);
    ts__buf_json_str(j->out, s, strlen(s));
}

void ts__json_i64(ts_json *j, int64_t v) { before_value(j); ts__buf_printf(j->out, "%" PRId64, v); }
void ts__json_u64(ts_json *j, uint64_t v) { before_value(j); ts__buf_printf(j->out, "%" PRIu64, v); }
void ts__json_bool(ts_json *j, bool v) { before_value(j); ts__buf_puts(j->out, v ? "true" : "false"); }
void ts__json_null(ts_json *j) { before_value(j); ts__buf_puts(j->out, "null"); }

void ts__json_double(ts_json *j, double v, int decimals)
{
    if (!isfinite(v)) { ts__json_null(j); return; }
    before_value(j);
    ts__buf_printf(j->out, "%.*f", decimals, v);
}

void ts__json_us(ts_json *j, int64_t ns)
{
    before_value(j);
    /* Integer arithmetic: a double would lose nanoseconds past 2^53. */
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    ts__buf_printf(j->out, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", a / 1000, (unsigned)(a % 1000));
}

void ts__buf_csv_field(ts_buf *b, const char *s)
{
    if (!s) s = "";
    if (!strpbrk(s, ",\"\r\n")) { ts__buf_puts(b, s); return; }
    ts__buf_add(b, "\"", 1);
    for (const char *p = s; *p; p++) {
        if (*p == '"') ts__buf_add(b, "\"", 1);
        ts__buf_add(b, p, 1);
    }
    ts__buf_add(b, "\"", 1);
}
