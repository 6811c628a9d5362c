/* fields.c - one row's fields listed once for its JSON object and its CSV
 * record (report_int.h's ts__fld): a report file fills a row's fields in one
 * function, and the same list gives the JSON keys and values (times as
 * KEY_us in microseconds), the CSV header and the CSV record (times as KEY_ns
 * in integer nanoseconds, docs/csv.md).
 *
 * Not for: which rows a table has, or tables whose JSON and CSV differ.
 */
#include <math.h>
#include <stdio.h>

#include "report/report_int.h"

void ts__fld_json(ts_json *j, const ts__fld *f, int n)
{
    char key[64];
    ts__json_obj_begin(j);
    for (int i = 0; i < n; i++) {
        switch (f[i].type) {
        case TS__FLD_INT: ts__json_kv_i64(j, f[i].key, f[i].i); break;
        case TS__FLD_U64: ts__json_kv_u64(j, f[i].key, (uint64_t)f[i].i); break;
        case TS__FLD_STR: ts__json_kv_str(j, f[i].key, f[i].s); break;   /* NULL: null */
        case TS__FLD_OPT_STR: if (f[i].s) ts__json_kv_str(j, f[i].key, f[i].s); break;   /* NULL: left out */
        case TS__FLD_BOOL: ts__json_kv_bool(j, f[i].key, f[i].i != 0); break;
        case TS__FLD_NS:
            snprintf(key, sizeof key, "%s_us", f[i].key);
            ts__json_kv_us(j, key, f[i].i);
            break;
        case TS__FLD_REAL:
            ts__json_key(j, f[i].key);
            ts__json_double(j, f[i].d, f[i].prec);   /* NaN: null */
            break;
        }
    }
    ts__json_obj_end(j);
}

void ts__fld_csv_head(ts_csv *c, const ts__fld *f, int n)
{
    char key[64];
    for (int i = 0; i < n; i++) {
        if (f[i].type == TS__FLD_NS) snprintf(key, sizeof key, "%s_ns", f[i].key);
        ts_csv_str(c, f[i].type == TS__FLD_NS ? key : f[i].key);
    }
    ts_csv_end_row(c);
}

void ts__fld_csv_row(ts_csv *c, const ts__fld *f, int n)
{
    for (int i = 0; i < n; i++) {
        switch (f[i].type) {
        case TS__FLD_INT: case TS__FLD_BOOL: case TS__FLD_NS: ts_csv_i64(c, f[i].i); break;
        case TS__FLD_U64: ts_csv_u64(c, (uint64_t)f[i].i); break;
        case TS__FLD_STR: case TS__FLD_OPT_STR: ts_csv_str(c, f[i].s); break;
        case TS__FLD_REAL: ts_csv_real(c, f[i].d, 3); break;   /* NaN: empty */
        }
    }
    ts_csv_end_row(c);
}
