/* sqlite_api.c - the table of libsqlite3 functions of core/sqlite_api.h and
 * ts__sqlite_open, which fills it on first use (core/dynlib.c).
 */
#define TS_SQLITE_API_IMPL
#include "core/sqlite_api.h"

TS_DYNLIB_DEFINE(ts_sqlite_api, ts__sqlite_api, TS_SQLITE_FNS, "libsqlite3.so.0", ts__sqlite_open)
