/* json.h - a small JSON writer on top of ts_buf (internal to trainscope).
 *
 * It tracks nesting so callers never place commas by hand: every value or key
 * written after another at the same level gets its comma. Output is compact
 * (no spaces) and always valid when begins and ends pair up; non-finite
 * doubles are written as null because JSON has no NaN.
 * Not for: parsing (that is ingest/).
 */
#ifndef TS_CORE_JSON_H
#define TS_CORE_JSON_H

#include "core/core.h"

#define TS_JSON_MAX_DEPTH 32

typedef struct ts_json {
    ts_buf *out;                         /* borrowed; appends go here */
    int     depth;                       /* open containers, 0 = top level */
    bool    has_item[TS_JSON_MAX_DEPTH]; /* a value was written at this depth */
    bool    after_key;                   /* the next value completes "key": */
} ts_json;

void ts__json_init(ts_json *j, ts_buf *out);
void ts__json_obj_begin(ts_json *j);
void ts__json_obj_end(ts_json *j);
void ts__json_arr_begin(ts_json *j);
void ts__json_arr_end(ts_json *j);
void ts__json_key(ts_json *j, const char *key);
void ts__json_str(ts_json *j, const char *s);          /* NULL writes null */
void ts__json_i64(ts_json *j, int64_t v);
void ts__json_u64(ts_json *j, uint64_t v);
void ts__json_double(ts_json *j, double v, int decimals); /* fixed decimals; NaN/inf -> null */
void ts__json_bool(ts_json *j, bool v);
void ts__json_null(ts_json *j);
/* Nanoseconds as microseconds with 3 decimals (exact: ns resolution kept). */
void ts__json_us(ts_json *j, int64_t ns);

/* Convenience: "key": value. */
static inline void ts__json_kv_str(ts_json *j, const char *k, const char *v) { ts__json_key(j, k); ts__json_str(j, v); }
static inline void ts__json_kv_i64(ts_json *j, const char *k, int64_t v) { ts__json_key(j, k); ts__json_i64(j, v); }
static inline void ts__json_kv_u64(ts_json *j, const char *k, uint64_t v) { ts__json_key(j, k); ts__json_u64(j, v); }
static inline void ts__json_kv_us(ts_json *j, const char *k, int64_t ns) { ts__json_key(j, k); ts__json_us(j, ns); }
static inline void ts__json_kv_double(ts_json *j, const char *k, double v, int d) { ts__json_key(j, k); ts__json_double(j, v, d); }
static inline void ts__json_kv_bool(ts_json *j, const char *k, bool v) { ts__json_key(j, k); ts__json_bool(j, v); }

/* Append one CSV field (RFC 4180 quoting) to a buffer. */
void ts__buf_csv_field(ts_buf *b, const char *s);

#endif
