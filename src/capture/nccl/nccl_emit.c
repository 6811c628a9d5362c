/* nccl_emit.c - the NCCL collector's default sink: records become host
 * tracing API events (include/trainscope/trace.h), on the calling thread.
 *
 * Not for: interposition (nccl.c) or the record -> event mapping
 * (nccl_event.c). Costs nothing but one relaxed load while tracing is off.
 */
#include "capture/nccl/nccl.h"

#include <stdlib.h>

/* The first communicator created tells the trace its rank when the launcher
 * did not (no RANK / OMPI_COMM_WORLD_RANK / PMI_RANK in the environment):
 * jobs create the world communicator first. Written once (atomic). */
static int rank_told;

static int launcher_gave_rank(void)
{
    return getenv("RANK") || getenv("OMPI_COMM_WORLD_RANK") || getenv("PMI_RANK");
}

void ts__nccl_emit_default(const ts__nccl_record *r)
{
    if (!TS_TRACE_ON())
        return;
    if (r->coll == NULL && r->rank >= 0 && r->nranks > 0 && r->result == ncclSuccess &&
        !__atomic_exchange_n(&rank_told, 1, __ATOMIC_RELAXED) && !launcher_gave_rank())
        ts_trace_set_rank(r->rank, r->nranks);
    ts_trace_arg args[TS_NCCL_MAX_ARGS];
    char strs[TS_NCCL_STR_BYTES];
    ts_trace_event ev;
    ts__nccl_to_event(r, args, strs, &ev);
    (void)ts_trace_emit(&ev);
}
