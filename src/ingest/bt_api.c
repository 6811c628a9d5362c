/* bt_api.c - the table of libbabeltrace2 functions of ingest/bt_api.h and
 * ts__bt_open, which fills it on first use (core/dynlib.c). Built only
 * where babeltrace2's headers are (as ctf.c's reader is).
 */
#if defined(__has_include) && __has_include(<babeltrace2/babeltrace.h>)
#define TS_BT_API_IMPL
#include "ingest/bt_api.h"

TS_DYNLIB_DEFINE(ts_bt_api, ts__bt_api, TS_BT_FNS, "libbabeltrace2.so.0", ts__bt_open)
#else
typedef int ts_bt_api_unused;   /* ISO C: no empty translation unit */
#endif
