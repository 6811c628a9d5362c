/* nccl.h - the NCCL collector's internals (src/capture/nccl*.c and tests).
 *
 * Not for: the wrappers' public face; those are NCCL's own names (ncclAllReduce,
 * ...) defined in nccl.c and exported from build/libtrainscope-nccl.so, which
 * `trainscope record --nccl` preloads.
 *
 * Each wrapped call becomes one ts__nccl_record, handed to a sink; the default
 * sink (nccl_emit.c) turns it into a host tracing API event (cat "cpu_op")
 * named like PyTorch's ProcessGroupNCCL ranges ("nccl:all_reduce", ...; the
 * API's own name for group and communicator calls) with Kineto's argument
 * names, so the cross-rank matcher reads it like record_param_comms:
 *
 *   arg (in this order)  | value
 *   ---------------------+--------------------------------------------------
 *   "Process Group Name" | communicator id, 16 hex digits, equal on every rank
 *   "NCCL result"        | only when the call failed: its ncclResult_t
 *   "Collective name"    | allreduce, allgather, reduce_scatter, broadcast,
 *                        | reduce, all_to_all, send, recv
 *   "Sequence number"    | per communicator, from 1: collectives count in one
 *                        | sequence, send/recv in one per (peer, direction)
 *   "seq"                | the same number under the name the graph matcher
 *                        | and the MPI collector use
 *   "In msg nelems"      | elements read by this rank
 *   "Out msg nelems"     | elements written by this rank
 *   "dtype"              | PyTorch's dtype names: Float, Half, BFloat16, ...
 *   "Dst Rank"/"Src Rank"| send's / recv's peer (PyTorch's p2p arg names)
 *   "Root"               | broadcast/reduce root
 *   "Group size", "Rank", "Bytes", "Stream"
 * The host API keeps the first TS_TRACE_MAX_ARGS (8): everything matching
 * needs comes first.
 */
#ifndef TS_CAPTURE_NCCL_H
#define TS_CAPTURE_NCCL_H

#include <stdint.h>
#include <nccl.h>

#include "trainscope/trace.h"

#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 22800
#define TS_NCCL_HAVE_ALLTOALL 1
#else
#define TS_NCCL_HAVE_ALLTOALL 0
#endif

#if TS_NCCL_HAVE_ALLTOALL
#define TS_NCCL_ALLTOALL_FUNC(X) \
    X(AlltoAll, (const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t))
#else
#define TS_NCCL_ALLTOALL_FUNC(X)
#endif

/* The real functions, resolved through the pnccl* aliases. Fields named after
 * the API without its "nccl" prefix. */
#define TS_NCCL_COLL_FUNCS(X)                                                                      \
    X(AllReduce, (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t)) \
    X(AllGather, (const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t))         \
    X(ReduceScatter, (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t)) \
    X(Broadcast, (const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))   \
    X(Bcast, (void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))                     \
    X(Reduce, (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, cudaStream_t)) \
    X(Send, (const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))                 \
    X(Recv, (void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))                       \
    TS_NCCL_ALLTOALL_FUNC(X)

#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 22300
#define TS_NCCL_SCALABLE_FUNC(X) X(CommInitRankScalable, (ncclComm_t *, int, int, int, ncclUniqueId *, ncclConfig_t *))
#define TS_NCCL_HAVE_SCALABLE 1
#else
#define TS_NCCL_SCALABLE_FUNC(X)
#define TS_NCCL_HAVE_SCALABLE 0
#endif
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 22700
#define TS_NCCL_SHRINK_FUNC(X) X(CommShrink, (ncclComm_t, int *, int, ncclComm_t *, ncclConfig_t *, int))
#define TS_NCCL_HAVE_SHRINK 1
#else
#define TS_NCCL_SHRINK_FUNC(X)
#define TS_NCCL_HAVE_SHRINK 0
#endif

#define TS_NCCL_OTHER_FUNCS(X)                                                                      \
    X(GroupStart, (void))                                                                           \
    X(GroupEnd, (void))                                                                             \
    X(CommInitRank, (ncclComm_t *, int, ncclUniqueId, int))                                        \
    X(CommInitRankConfig, (ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *))                  \
    X(CommInitAll, (ncclComm_t *, int, const int *))                                               \
    X(CommSplit, (ncclComm_t, int, int, ncclComm_t *, ncclConfig_t *))                             \
    X(CommDestroy, (ncclComm_t))                                                                    \
    X(CommCount, (const ncclComm_t, int *))                                                         \
    X(CommUserRank, (const ncclComm_t, int *))                                                      \
    TS_NCCL_SCALABLE_FUNC(X)                                                                        \
    TS_NCCL_SHRINK_FUNC(X)

/* nccl.h declares these with "()"; give them prototypes. */
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);

typedef struct ts__nccl_next {
#define TS_X_(fn, params) ncclResult_t (*fn) params;
    TS_NCCL_COLL_FUNCS(TS_X_)
    TS_NCCL_OTHER_FUNCS(TS_X_)
#undef TS_X_
} ts__nccl_next;

/* Tests only: use table t instead of resolving the real library (NULL goes
 * back to resolving). Fields left NULL in t are resolved as usual. */
void ts__nccl_set_next(const ts__nccl_next *t);

/* One intercepted call. Strings are static. */
typedef struct ts__nccl_record {
    const char *api;          /* "ncclAllReduce", "ncclGroupEnd", "ncclCommInitRank", ... */
    const char *coll;         /* "Collective name" value; NULL for group and communicator calls */
    int64_t     start_ns;     /* CLOCK_MONOTONIC at entry */
    int64_t     end_ns;       /* CLOCK_MONOTONIC at return */
    int64_t     in_nelems;    /* -1 = not a data call */
    int64_t     out_nelems;   /* -1 = not a data call */
    const char *dtype;        /* "Float", ...; NULL = not a data call */
    uint64_t    bytes;        /* max(in, out) elements times the element size; 0 = none */
    uint64_t    comm_id;      /* 0 = no communicator */
    int32_t     rank;         /* this rank in comm, -1 = unknown */
    int32_t     nranks;       /* comm size, -1 = unknown */
    int32_t     peer;         /* send/recv peer, -1 = none */
    int32_t     root;         /* broadcast/reduce root, -1 = none */
    uint64_t    stream;       /* cudaStream_t bits, 0 = default stream */
    int64_t     seq;          /* sequence number, -1 = none */
    int32_t     group_depth;  /* ncclGroupStart nesting on this thread at the call */
    int32_t     result;       /* ncclResult_t the real call returned */
} ts__nccl_record;

typedef void (*ts__nccl_sink)(const ts__nccl_record *r);
/* Where records go; NULL = the default sink (the host tracing API). */
void ts__nccl_set_sink(ts__nccl_sink sink);
void ts__nccl_emit_default(const ts__nccl_record *r);

/* 64-bit FNV-1a: communicator ids must be equal on every rank, so they are a
 * fixed function of bytes every rank sees (the unique id), never of pointers. */
uint64_t ts__nccl_hash(uint64_t h, const void *data, size_t n);
#define TS_NCCL_HASH_SEED 0xcbf29ce484222325ULL

/* "allreduce" -> "nccl:all_reduce", ...; NULL for anything else. */
const char *ts__nccl_event_name(const char *coll);
const char *ts__nccl_dtype_name(ncclDataType_t t);   /* "Float", ...; "Unknown" */
size_t      ts__nccl_dtype_bytes(ncclDataType_t t);  /* 0 = unknown */

/* Record -> host API event (pure). args must hold TS_NCCL_MAX_ARGS entries
 * and strs TS_NCCL_STR_BYTES bytes; both must outlive the emit. Args are in
 * priority order so that a smaller TS_TRACE_MAX_ARGS keeps the ones the
 * cross-rank matcher needs first. */
#define TS_NCCL_MAX_ARGS 13
#define TS_NCCL_STR_BYTES 32
void ts__nccl_to_event(const ts__nccl_record *r, ts_trace_arg *args, char *strs, ts_trace_event *ev);

#endif
