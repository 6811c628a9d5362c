/* nccl_event.c - the NCCL collector's pure parts: datatype names and sizes,
 * the communicator-id hash, and record -> host tracing API event.
 *
 * Not for: interposition (nccl.c) or emitting (nccl_emit.c). Nothing here
 * has state, so tests call it directly.
 */
#include "capture/nccl/nccl.h"

#include <string.h>

uint64_t ts__nccl_hash(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* PyTorch's names (c10::ScalarType) so dtype matches Kineto traces. */
static const struct { const char *name; size_t bytes; } dtypes[] = {
    [ncclInt8] = {"Char", 1},        [ncclUint8] = {"Byte", 1},
    [ncclInt32] = {"Int", 4},        [ncclUint32] = {"UInt32", 4},
    [ncclInt64] = {"Long", 8},       [ncclUint64] = {"UInt64", 8},
    [ncclFloat16] = {"Half", 2},     [ncclFloat32] = {"Float", 4},
    [ncclFloat64] = {"Double", 8},   [ncclBfloat16] = {"BFloat16", 2},
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 21900
    [ncclFloat8e4m3] = {"Float8_e4m3fn", 1}, [ncclFloat8e5m2] = {"Float8_e5m2", 1},
#endif
};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

const char *ts__nccl_dtype_name(ncclDataType_t t)
{
    return (unsigned)t < N_DTYPES && dtypes[t].name ? dtypes[t].name : "Unknown";
}

size_t ts__nccl_dtype_bytes(ncclDataType_t t)
{
    return (unsigned)t < N_DTYPES ? dtypes[t].bytes : 0;
}

static void add_num(ts_trace_arg *args, uint32_t *n, const char *key, int64_t v)
{
    args[*n].key = key;
    args[*n].str = NULL;
    args[(*n)++].num = v;
}

static void add_str(ts_trace_arg *args, uint32_t *n, const char *key, const char *s)
{
    args[*n].key = key;
    args[*n].str = s;
    args[(*n)++].num = 0;
}

const char *ts__nccl_event_name(const char *coll)
{
    static const char *const names[][2] = {
        {"allreduce", "nccl:all_reduce"}, {"allgather", "nccl:all_gather"},
        {"reduce_scatter", "nccl:reduce_scatter"}, {"broadcast", "nccl:broadcast"},
        {"reduce", "nccl:reduce"}, {"all_to_all", "nccl:all_to_all"},
        {"send", "nccl:send"}, {"recv", "nccl:recv"},
    };
    for (size_t i = 0; coll && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(coll, names[i][0]) == 0)
            return names[i][1];
    return NULL;
}

/* 16 lowercase hex digits and a NUL; by hand because snprintf costs more
 * than the rest of a wrapped call's bookkeeping together. */
static void hex16(char *out, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--, v >>= 4)
        out[i] = digits[v & 15];
    out[16] = '\0';
}

void ts__nccl_to_event(const ts__nccl_record *r, ts_trace_arg *args, char *strs, ts_trace_event *ev)
{
    const char *coll_name = ts__nccl_event_name(r->coll);
    uint32_t n = 0;
    memset(ev, 0, sizeof *ev);
    ev->size = sizeof *ev;
    ev->phase = 'X';
    ev->cat = "cpu_op";
    ev->name = coll_name ? coll_name : r->api;
    ev->ts_ns = r->start_ns;
    ev->dur_ns = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
    ev->pid = -1;
    ev->tid = -1;
    if (r->comm_id != 0) {
        hex16(strs, r->comm_id);
        add_str(args, &n, "Process Group Name", strs);
    }
    /* A failure outranks what matching needs: a failed call is matched with nothing. */
    if (r->result != ncclSuccess)
        add_num(args, &n, "NCCL result", r->result);
    if (r->coll) {
        add_str(args, &n, "Collective name", r->coll);
        add_num(args, &n, "Sequence number", r->seq);
        add_num(args, &n, "seq", r->seq);   /* what the graph matcher and the MPI collector use */
        add_num(args, &n, "In msg nelems", r->in_nelems);
        add_num(args, &n, "Out msg nelems", r->out_nelems);
        add_str(args, &n, "dtype", r->dtype ? r->dtype : "Unknown");
    }
    if (r->peer >= 0)
        add_num(args, &n, r->coll && strcmp(r->coll, "recv") == 0 ? "Src Rank" : "Dst Rank", r->peer);
    if (r->root >= 0)
        add_num(args, &n, "Root", r->root);
    if (r->nranks >= 0)
        add_num(args, &n, "Group size", r->nranks);
    if (r->rank >= 0)
        add_num(args, &n, "Rank", r->rank);
    if (r->coll) {
        add_num(args, &n, "Bytes", (int64_t)r->bytes);
        add_num(args, &n, "Stream", (int64_t)r->stream);
    }
    ev->args = args;
    ev->n_args = n;
}
