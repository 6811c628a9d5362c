/* sqlite_api.h - libsqlite3 opened on first use (core/dynlib.h): include
 * this instead of <sqlite3.h>; the sqlite3_* calls below then go through
 * ts__sqlite_api, which ts__sqlite_open fills. Call ts__sqlite_open before
 * the first of them (nsys.c when it opens an export, report/sqlite.c when it
 * writes one).
 *
 * Not for: SQL. A function used anywhere in src/ must be in TS_SQLITE_FNS
 * (a call to one that is not links against nothing and fails the build).
 */
#ifndef TS_CORE_SQLITE_API_H
#define TS_CORE_SQLITE_API_H

#include <sqlite3.h>

#include "core/dynlib.h"

#define TS_SQLITE_FNS(X) \
    X(sqlite3_bind_double) X(sqlite3_bind_int) X(sqlite3_bind_int64) X(sqlite3_bind_text) \
    X(sqlite3_clear_bindings) X(sqlite3_close) X(sqlite3_column_bytes) X(sqlite3_column_count) \
    X(sqlite3_column_int64) X(sqlite3_column_name) X(sqlite3_column_text) X(sqlite3_column_type) \
    X(sqlite3_deserialize) X(sqlite3_errcode) X(sqlite3_errmsg) X(sqlite3_exec) X(sqlite3_finalize) \
    X(sqlite3_open_v2) X(sqlite3_prepare_v2) X(sqlite3_prepare_v3) X(sqlite3_reset) X(sqlite3_step) \
    X(sqlite3_system_errno)

/* ts__sqlite_open(who, err): libsqlite3.so.0, as ts__dynlib_open */
TS_DYNLIB_DECLARE(ts_sqlite_api, ts__sqlite_api, TS_SQLITE_FNS, ts__sqlite_open)

#ifndef TS_SQLITE_API_IMPL
#define sqlite3_bind_double    (ts__sqlite_api.sqlite3_bind_double)
#define sqlite3_bind_int       (ts__sqlite_api.sqlite3_bind_int)
#define sqlite3_bind_int64     (ts__sqlite_api.sqlite3_bind_int64)
#define sqlite3_bind_text      (ts__sqlite_api.sqlite3_bind_text)
#define sqlite3_clear_bindings (ts__sqlite_api.sqlite3_clear_bindings)
#define sqlite3_close          (ts__sqlite_api.sqlite3_close)
#define sqlite3_column_bytes   (ts__sqlite_api.sqlite3_column_bytes)
#define sqlite3_column_count   (ts__sqlite_api.sqlite3_column_count)
#define sqlite3_column_int64   (ts__sqlite_api.sqlite3_column_int64)
#define sqlite3_column_name    (ts__sqlite_api.sqlite3_column_name)
#define sqlite3_column_text    (ts__sqlite_api.sqlite3_column_text)
#define sqlite3_column_type    (ts__sqlite_api.sqlite3_column_type)
#define sqlite3_deserialize    (ts__sqlite_api.sqlite3_deserialize)
#define sqlite3_errcode        (ts__sqlite_api.sqlite3_errcode)
#define sqlite3_errmsg         (ts__sqlite_api.sqlite3_errmsg)
#define sqlite3_exec           (ts__sqlite_api.sqlite3_exec)
#define sqlite3_finalize       (ts__sqlite_api.sqlite3_finalize)
#define sqlite3_open_v2        (ts__sqlite_api.sqlite3_open_v2)
#define sqlite3_prepare_v2     (ts__sqlite_api.sqlite3_prepare_v2)
#define sqlite3_prepare_v3     (ts__sqlite_api.sqlite3_prepare_v3)
#define sqlite3_reset          (ts__sqlite_api.sqlite3_reset)
#define sqlite3_step           (ts__sqlite_api.sqlite3_step)
#define sqlite3_system_errno   (ts__sqlite_api.sqlite3_system_errno)
#endif

#endif
