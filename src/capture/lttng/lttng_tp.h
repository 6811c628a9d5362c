/* lttng_tp.h - trainscope's LTTng-UST tracepoint provider ("trainscope").
 *
 * Not for: deciding when to fire them (lttng.c) or reading them back
 * (src/ingest/ctf.c, which must agree with the fields below).
 * Every event also gets LTTng's own timestamp (CLOCK_MONOTONIC, the clock
 * the host tracing API uses) and, from the session trainscope sets up, the
 * vpid/vtid/procname contexts.
 *
 *   event        | fields (units)                        | read back as
 *   -------------+---------------------------------------+------------------------------
 *   push / pop   | cat, name / -                          | slice on the thread (nested)
 *   range_begin  | id, cat, name                          | slice from begin to range_end
 *   range_end    | id                                     |   on the beginning thread
 *   instant      | cat, name                              | instant on the thread
 *   counter      | name, value                            | counter series
 *   complete     | phase (X i C), cat, name, ts_ns,       | the host API's general event,
 *                | dur_ns, pid, tid (-1 = this process/   |   args decoded from `args`
 *                | thread), value, flow_id, flow_phase,   |
 *                | args (key US 's'|'i' value RS ...)     |
 *   memcpy       | name, bytes, ts_ns, dur_ns, device,    | gpu_memcpy slice on the
 *                | stream, correlation (-1 = none)        |   device's stream
 *   collective   | api, coll, comm, seq, in_nelems,       | cpu_op slice with Kineto's
 *                | out_nelems, dtype, nranks, rank, peer, |   collective args
 *                | ts_ns, dur_ns                          |
 *   alloc / free | ptr, bytes, device (-1 = host)         | "[memory]" instants (Bytes
 *                |                                        |   negative for free)
 *   flow         | id, phase ('s','t','f'), cat           | flow end in the thread's range
 *   thread_name  | name                                   | the thread track's name
 *   rank         | rank, world_size                       | the process's rank
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER trainscope

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "capture/lttng/lttng_tp.h"

#if !defined(TS_CAPTURE_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TS_CAPTURE_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

#include "trainscope/trace.h"

#ifndef TS_LTTNG_COLL_DEFINED
#define TS_LTTNG_COLL_DEFINED
/* The collective tracepoint's fields (strings never NULL; -1 = unknown). */
typedef struct ts_lttng_coll {
    const char *api, *coll, *comm, *dtype;   /* "ncclAllReduce", "allreduce", comm id, "Float" */
    int64_t     seq, in_nelems, out_nelems;  /* Kineto's Sequence number, In/Out msg nelems */
    int32_t     nranks, rank, peer;          /* Group size, Rank, Dst Rank (send) / Src Rank (recv) */
    int64_t     ts_ns, dur_ns;               /* CLOCK_MONOTONIC start, duration */
} ts_lttng_coll;
#endif

/* Separators inside complete.args: unit (key|value) and record (pair). */
#define TS_LTTNG_US '\x1f'
#define TS_LTTNG_RS '\x1e'

LTTNG_UST_TRACEPOINT_EVENT(trainscope, push,
    LTTNG_UST_TP_ARGS(const char *, cat, const char *, name),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(cat, cat)
        lttng_ust_field_string(name, name)))

LTTNG_UST_TRACEPOINT_EVENT(trainscope, pop,
    LTTNG_UST_TP_ARGS(int, unused),
    LTTNG_UST_TP_FIELDS())

LTTNG_UST_TRACEPOINT_EVENT(trainscope, range_begin,
    LTTNG_UST_TP_ARGS(uint64_t, id, const char *, cat, const char *, name),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, id, id)
        lttng_ust_field_string(cat, cat)
        lttng_ust_field_string(name, name)))

LTTNG_UST_TRACEPOINT_EVENT(trainscope, range_end,
    LTTNG_UST_TP_ARGS(uint64_t, id),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, id, id)))

LTTNG_UST_TRACEPOINT_EVENT(trainscope, instant,
    LTTNG_UST_TP_ARGS(const char *, cat, const char *, name),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(cat, cat)
        lttng_ust_field_string(name, name)))

LTTNG_UST_TRACEPOINT_EVENT(trainscope, counter,
    LTTNG_UST_TP_ARGS(const char *, name, double, value),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(name, name)
        lttng_ust_field_float(double, value, value)))

/* LTTng-UST takes at most 10 tracepoint arguments: the wide events take
 * a pointer and read their fields from it. */
LTTNG_UST_TRACEPOINT_EVENT(trainscope, complete,
    LTTNG_UST_TP_ARGS(const ts_trace_event *, ev, const char *, args),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int8_t, phase, ev->phase)
        lttng_ust_field_string(cat, ev->cat ? ev->cat : "")
        lttng_ust_field_string(name, ev->name ? ev->name : "")
        lttng_ust_field_integer(int64_t, ts_ns, ev->ts_ns)
        lttng_ust_field_integer(int64_t, dur_ns, ev->dur_ns)
        lttng_ust_field_integer(int64_t, pid, ev->pid)
        lttng_ust_field_integer(int64_t, tid, ev->tid)
        lttng_ust_field_float(double, value, ev->value)
        lttng_ust_field_integer(uint64_t, flow_id, ev->flow_id)
        lttng_ust_field_integer(int8_t, flow_phase, ev->flow_id ? ev->flow_phase : 0)
        lttng_ust_field_string(args, args)))

LTTNG_UST_TRACEPOINT_EVENT(trainscope, memcpy,
    LTTNG_UST_TP_ARGS(const char *, name, uint64_t, bytes, int64_t, ts_ns, int64_t, dur_ns,
                      int64_t, device, int64_t, stream, int64_t, correlation),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(name, name)
        lttng_ust_field_integer(uint64_t, bytes, bytes)
        lttng_ust_field_integer(int64_t, ts_ns, ts_ns)
        lttng_ust_field_integer(int64_t, dur_ns, dur_ns)
        lttng_ust_field_integer(int64_t, device, device)
        lttng_ust_field_integer(int64_t, stream, stream)
        lttng_ust_field_integer(int64_t, correlation, correlation)))

LTTNG_UST_TRACEPOINT_EVENT(trainscope, collective,
    LTTNG_UST_TP_ARGS(const ts_lttng_coll *, c),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(api, c->api)
        lttng_ust_field_string(coll, c->coll)
        lttng_ust_field_string(comm, c->comm)
        lttng_ust_field_integer(int64_t, seq, c->seq)
        lttng_ust_field_integer(int64_t, in_nelems, c->in_nelems)
        lttng_ust_field_integer(int64_t, out_nelems, c->out_nelems)
        lttng_ust_field_string(dtype, c->dtype)
        lttng_ust_field_integer(int32_t, nranks, c->nranks)
        lttng_ust_field_integer(int32_t, rank, c->rank)
        lttng_ust_field_integer(int32_t, peer, c->peer)
        lttng_ust_field_integer(int64_t, ts_ns, c->ts_ns)
        lttng_ust_field_integer(int64_t, dur_ns, c->dur_ns)))

LTTNG_UST_TRACEPOINT_EVENT(trainscope, alloc,
    LTTNG_UST_TP_ARGS(uint64_t, ptr, uint64_t, bytes, int32_t, device),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, ptr, ptr)
        lttng_ust_field_integer(uint64_t, bytes, bytes)
        lttng_ust_field_integer(int32_t, device, device)))

LTTNG_UST_TRACEPOINT_EVENT(trainscope, free,
    LTTNG_UST_TP_ARGS(uint64_t, ptr, uint64_t, bytes, int32_t, device),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, ptr, ptr)
        lttng_ust_field_integer(uint64_t, bytes, bytes)
        lttng_ust_field_integer(int32_t, device, device)))

LTTNG_UST_TRACEPOINT_EVENT(trainscope, flow,
    LTTNG_UST_TP_ARGS(uint64_t, id, int, phase, const char *, cat),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, id, id)
        lttng_ust_field_integer(int8_t, phase, phase)
        lttng_ust_field_string(cat, cat)))

LTTNG_UST_TRACEPOINT_EVENT(trainscope, thread_name,
    LTTNG_UST_TP_ARGS(const char *, name),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(name, name)))

LTTNG_UST_TRACEPOINT_EVENT(trainscope, rank,
    LTTNG_UST_TP_ARGS(int32_t, rank, int32_t, world_size),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int32_t, rank, rank)
        lttng_ust_field_integer(int32_t, world_size, world_size)))

#endif /* TS_CAPTURE_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
