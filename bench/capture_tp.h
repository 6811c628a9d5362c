/* capture_tp.h - the LTTng-UST tracepoint provider bench/capture.c compares
 * the host tracing API with: the same two events per range (push with a
 * category and a name, pop), with the strings copied like ours are. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER ts_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "capture_tp.h"

#if !defined(TS_BENCH_CAPTURE_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TS_BENCH_CAPTURE_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(ts_bench, push,
    LTTNG_UST_TP_ARGS(const char *, cat, const char *, name),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(cat, cat)
        lttng_ust_field_string(name, name)))

LTTNG_UST_TRACEPOINT_EVENT(ts_bench, pop,
    LTTNG_UST_TP_ARGS(int, unused),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(int, unused, unused)))

#endif

#include <lttng/tracepoint-event.h>
