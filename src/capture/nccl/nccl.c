/* nccl.c - the NCCL collector: NCCL's API interposed by LD_PRELOAD.
 *
 * Not for: turning records into trace events (nccl_event.c, nccl_emit.c).
 *
 * Each wrapper calls the real function, found lazily through its pnccl*
 * alias (NCCL exports ncclX as a weak alias of pncclX, as MPI does with
 * PMPI_X), and hands one ts__nccl_record to the sink. Invariants:
 *   - the real return value is passed back unchanged, and errno is what the
 *     real call left;
 *   - a call made while this thread is already inside a wrapper (NCCL calling
 *     its own public API) goes straight to the real function, unrecorded;
 *   - communicator ids and sequence numbers depend only on what every rank
 *     sees in the same order (the unique id, split order, call order), so the
 *     same collective carries the same (id, sequence) on every rank.
 * The communicator table is written under a mutex (communicator creation is
 * rare) and read lock-free (collectives are frequent and may come from many
 * threads).
 */
#include "capture/nccl/nccl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the real functions ---- */

static ts__nccl_next next_tab;   /* each slot NULL until resolved; atomics */

static void *resolve_slow(void **slot, const char *name)
{
    char sym[64];
    snprintf(sym, sizeof sym, "pnccl%s", name);
    void *p = dlsym(RTLD_NEXT, sym);
    if (!p) {
        /* libnccl opened with RTLD_LOCAL (Python extensions are) is not in
         * the RTLD_NEXT scope; look in it directly if it is loaded at all. */
        void *h = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            p = dlsym(h, sym);
            dlclose(h);
        }
    }
    if (!p) {
        fprintf(stderr, "trainscope: nccl collector: the real %s is missing "
                        "(libnccl not loaded, or too old for this call)\n", sym);
        abort();
    }
    __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    return p;
}

static inline void *next_fn(void **slot, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    return p ? p : resolve_slow(slot, name);
}
#define NEXT(fn) ((__typeof__(next_tab.fn))next_fn((void **)&next_tab.fn, #fn))

void ts__nccl_set_next(const ts__nccl_next *t)
{
    void **dst = (void **)&next_tab;
    void *const *src = (void *const *)t;
    for (size_t i = 0; i < sizeof next_tab / sizeof(void *); i++)
        __atomic_store_n(&dst[i], t ? src[i] : NULL, __ATOMIC_RELEASE);
}

/* ---- sink ---- */

static ts__nccl_sink sink_fn = ts__nccl_emit_default;

void ts__nccl_set_sink(ts__nccl_sink sink)
{
    __atomic_store_n(&sink_fn, sink ? sink : ts__nccl_emit_default, __ATOMIC_RELEASE);
}

/* ---- per-thread state ---- */

static __thread int tls_inside __attribute__((tls_model("initial-exec")));      /* wrapper nesting */
static __thread int tls_group_depth __attribute__((tls_model("initial-exec"))); /* ncclGroupStart nesting */

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* ---- communicator table ---- */

#define COMM_SLOTS 1024u              /* live communicators at once; more are traced without ids */
#define COMM_TOMBSTONE ((uintptr_t)1) /* a destroyed communicator's slot */

typedef struct comm_info {
    uintptr_t comm;        /* ncclComm_t bits; 0 = empty, COMM_TOMBSTONE = freed */
    uint64_t  id;          /* equal on every rank of the communicator */
    int32_t   rank;        /* -1 = unknown */
    int32_t   nranks;      /* -1 = unknown */
    uint64_t  coll_seq;    /* collectives issued so far (atomic) */
    uint64_t  split_seq;   /* ncclCommSplit calls so far (atomic) */
    uint64_t *p2p_seq;     /* [2 * nranks]: sends then receives per peer (atomic), NULL = none */
} comm_info;

static comm_info comms[COMM_SLOTS];
static pthread_mutex_t comms_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t initall_seq;          /* ncclCommInitAll calls so far (atomic) */

static uint32_t comm_slot0(uintptr_t c)
{
    return (uint32_t)((c >> 4) * 0x9E3779B97F4A7C15ULL >> 54) % COMM_SLOTS;
}

static comm_info *comm_find(ncclComm_t comm)
{
    uintptr_t key = (uintptr_t)comm;
    if (key <= COMM_TOMBSTONE)
        return NULL;
    for (uint32_t i = 0, s = comm_slot0(key); i < COMM_SLOTS; i++, s = (s + 1) % COMM_SLOTS) {
        uintptr_t k = __atomic_load_n(&comms[s].comm, __ATOMIC_ACQUIRE);
        if (k == key)
            return &comms[s];
        if (k == 0)
            return NULL;
    }
    return NULL;
}

/* Register comm; the slot is filled before its key is published, so a
 * lock-free reader never sees half an entry. NULL when the table is full. */
static comm_info *comm_add(ncclComm_t comm, uint64_t id, int rank, int nranks)
{
    uintptr_t key = (uintptr_t)comm;
    comm_info *found = NULL;
    if (key <= COMM_TOMBSTONE)
        return NULL;
    pthread_mutex_lock(&comms_lock);
    found = comm_find(comm);
    for (uint32_t i = 0, s = comm_slot0(key); !found && i < COMM_SLOTS; i++, s = (s + 1) % COMM_SLOTS) {
        uintptr_t k = comms[s].comm;
        if (k != 0 && k != COMM_TOMBSTONE)
            continue;
        comm_info *c = &comms[s];
        free(c->p2p_seq);
        c->id = id;
        c->rank = rank;
        c->nranks = nranks;
        c->coll_seq = c->split_seq = 0;
        c->p2p_seq = nranks > 0 ? calloc(2 * (size_t)nranks, sizeof *c->p2p_seq) : NULL;
        __atomic_store_n(&c->comm, key, __ATOMIC_RELEASE);
        found = c;
    }
    pthread_mutex_unlock(&comms_lock);
    return found;
}

static void comm_remove(ncclComm_t comm)
{
    pthread_mutex_lock(&comms_lock);
    comm_info *c = comm_find(comm);
    if (c)
        __atomic_store_n(&c->comm, COMM_TOMBSTONE, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&comms_lock);
}

/* A communicator this collector did not see created (ncclCommInitRankScalable,
 * ncclCommShrink, created before preload): its rank and size are asked of
 * NCCL, and its id is local to this process (pid and pointer), so matching
 * across ranks cannot use it. */
static comm_info *comm_get(ncclComm_t comm)
{
    comm_info *c = comm_find(comm);
    if (c || comm == NULL)
        return c;
    int rank = -1, nranks = -1;
    if (NEXT(CommUserRank)(comm, &rank) != ncclSuccess)
        rank = -1;
    if (NEXT(CommCount)(comm, &nranks) != ncclSuccess)
        nranks = -1;
    uintptr_t key = (uintptr_t)comm;
    pid_t pid = getpid();
    uint64_t id = ts__nccl_hash(TS_NCCL_HASH_SEED, &pid, sizeof pid);
    return comm_add(comm, ts__nccl_hash(id, &key, sizeof key), rank, nranks);
}

/* ---- the common part of every wrapper ---- */

static void record_init(ts__nccl_record *r, const char *api, const char *coll)
{
    memset(r, 0, sizeof *r);
    r->api = api;
    r->coll = coll;
    r->in_nelems = r->out_nelems = -1;
    r->rank = r->nranks = r->peer = r->root = -1;
    r->seq = -1;
    r->group_depth = tls_group_depth;
    r->start_ns = now_ns();
}

static void record_comm(ts__nccl_record *r, const comm_info *c)
{
    if (!c)
        return;
    r->comm_id = c->id;
    r->rank = c->rank;
    r->nranks = c->nranks;
}

/* A data call: in/out are element counts, nranks_mul_in/out say whether the
 * count is per rank on that side (allgather's output, reduce_scatter's input). */
static void record_data(ts__nccl_record *r, ncclComm_t comm, ncclDataType_t t, size_t count,
                        int in_per_rank, int out_per_rank, cudaStream_t stream)
{
    comm_info *c = comm_get(comm);
    record_comm(r, c);
    int64_t mul = r->nranks > 0 ? r->nranks : -1;
    r->in_nelems = in_per_rank ? (mul > 0 ? (int64_t)count * mul : -1) : (int64_t)count;
    r->out_nelems = out_per_rank ? (mul > 0 ? (int64_t)count * mul : -1) : (int64_t)count;
    r->dtype = ts__nccl_dtype_name(t);
    int64_t most = r->in_nelems > r->out_nelems ? r->in_nelems : r->out_nelems;
    r->bytes = most > 0 ? (uint64_t)most * ts__nccl_dtype_bytes(t) : 0;
    r->stream = (uint64_t)(uintptr_t)stream;
    if (c)
        r->seq = (int64_t)__atomic_add_fetch(&c->coll_seq, 1, __ATOMIC_RELAXED);
}

/* Send/recv count per (peer, direction) so the k-th send from A to B pairs
 * with the k-th receive on B from A. */
static void record_p2p(ts__nccl_record *r, ncclComm_t comm, ncclDataType_t t, size_t count, int peer,
                       int is_recv, cudaStream_t stream)
{
    comm_info *c = comm_get(comm);
    record_comm(r, c);
    r->peer = peer;
    r->in_nelems = r->out_nelems = (int64_t)count;
    r->dtype = ts__nccl_dtype_name(t);
    r->bytes = (uint64_t)count * ts__nccl_dtype_bytes(t);
    r->stream = (uint64_t)(uintptr_t)stream;
    if (c && c->p2p_seq && peer >= 0 && peer < c->nranks)
        r->seq = (int64_t)__atomic_add_fetch(&c->p2p_seq[(size_t)is_recv * (size_t)c->nranks + (size_t)peer],
                                             1, __ATOMIC_RELAXED);
}

static void record_finish(ts__nccl_record *r, ncclResult_t res)
{
    r->end_ns = now_ns();
    r->result = res;
    __atomic_load_n(&sink_fn, __ATOMIC_ACQUIRE)(r);
}

/* Every wrapper has this shape: straight through when nested, else record
 * around the real call, with errno kept as the real call left it. */
#define WRAP_BEGIN(fn)                                   \
    __typeof__(next_tab.fn) real = NEXT(fn);             \
    if (tls_inside)                                      \
        return real
#define WRAP_CALL(call)                                  \
    tls_inside++;                                        \
    ncclResult_t res = real call;                        \
    int saved_errno = errno;                             \
    tls_inside--
#define WRAP_END()                                       \
    record_finish(&r, res);                              \
    errno = saved_errno;                                 \
    return res

/* ---- collectives ---- */

TS_API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t t,
                                  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    WRAP_BEGIN(AllReduce)(sendbuff, recvbuff, count, t, op, comm, stream);
    ts__nccl_record r;
    record_init(&r, "ncclAllReduce", "allreduce");
    record_data(&r, comm, t, count, 0, 0, stream);
    WRAP_CALL((sendbuff, recvbuff, count, t, op, comm, stream));
    WRAP_END();
}

TS_API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t t,
                                  ncclComm_t comm, cudaStream_t stream)
{
    WRAP_BEGIN(AllGather)(sendbuff, recvbuff, sendcount, t, comm, stream);
    ts__nccl_record r;
    record_init(&r, "ncclAllGather", "allgather");
    record_data(&r, comm, t, sendcount, 0, 1, stream);
    WRAP_CALL((sendbuff, recvbuff, sendcount, t, comm, stream));
    WRAP_END();
}

TS_API ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t t,
                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    WRAP_BEGIN(ReduceScatter)(sendbuff, recvbuff, recvcount, t, op, comm, stream);
    ts__nccl_record r;
    record_init(&r, "ncclReduceScatter", "reduce_scatter");
    record_data(&r, comm, t, recvcount, 1, 0, stream);
    WRAP_CALL((sendbuff, recvbuff, recvcount, t, op, comm, stream));
    WRAP_END();
}

TS_API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t t,
                                  int root, ncclComm_t comm, cudaStream_t stream)
{
    WRAP_BEGIN(Broadcast)(sendbuff, recvbuff, count, t, root, comm, stream);
    ts__nccl_record r;
    record_init(&r, "ncclBroadcast", "broadcast");
    record_data(&r, comm, t, count, 0, 0, stream);
    r.root = root;
    WRAP_CALL((sendbuff, recvbuff, count, t, root, comm, stream));
    WRAP_END();
}

TS_API ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                              cudaStream_t stream)
{
    WRAP_BEGIN(Bcast)(buff, count, t, root, comm, stream);
    ts__nccl_record r;
    record_init(&r, "ncclBcast", "broadcast");
    record_data(&r, comm, t, count, 0, 0, stream);
    r.root = root;
    WRAP_CALL((buff, count, t, root, comm, stream));
    WRAP_END();
}

TS_API ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t t,
                               ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
    WRAP_BEGIN(Reduce)(sendbuff, recvbuff, count, t, op, root, comm, stream);
    ts__nccl_record r;
    record_init(&r, "ncclReduce", "reduce");
    record_data(&r, comm, t, count, 0, 0, stream);
    r.root = root;
    WRAP_CALL((sendbuff, recvbuff, count, t, op, root, comm, stream));
    WRAP_END();
}

#if TS_NCCL_HAVE_ALLTOALL
/* count is what goes to each peer, so both sides hold count * nranks. */
TS_API ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t t,
                                 ncclComm_t comm, cudaStream_t stream)
{
    WRAP_BEGIN(AlltoAll)(sendbuff, recvbuff, count, t, comm, stream);
    ts__nccl_record r;
    record_init(&r, "ncclAlltoAll", "all_to_all");
    record_data(&r, comm, t, count, 1, 1, stream);
    WRAP_CALL((sendbuff, recvbuff, count, t, comm, stream));
    WRAP_END();
}
#endif

TS_API ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                             cudaStream_t stream)
{
    WRAP_BEGIN(Send)(sendbuff, count, t, peer, comm, stream);
    ts__nccl_record r;
    record_init(&r, "ncclSend", "send");
    record_p2p(&r, comm, t, count, peer, 0, stream);
    WRAP_CALL((sendbuff, count, t, peer, comm, stream));
    WRAP_END();
}

TS_API ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                             cudaStream_t stream)
{
    WRAP_BEGIN(Recv)(recvbuff, count, t, peer, comm, stream);
    ts__nccl_record r;
    record_init(&r, "ncclRecv", "recv");
    record_p2p(&r, comm, t, count, peer, 1, stream);
    WRAP_CALL((recvbuff, count, t, peer, comm, stream));
    WRAP_END();
}

/* ---- groups ---- */

TS_API ncclResult_t ncclGroupStart(void)
{
    WRAP_BEGIN(GroupStart)();
    ts__nccl_record r;
    record_init(&r, "ncclGroupStart", NULL);
    WRAP_CALL(());
    if (res == ncclSuccess)
        tls_group_depth++;
    WRAP_END();
}

TS_API ncclResult_t ncclGroupEnd(void)
{
    WRAP_BEGIN(GroupEnd)();
    ts__nccl_record r;
    record_init(&r, "ncclGroupEnd", NULL);
    WRAP_CALL(());
    if (tls_group_depth > 0)
        tls_group_depth--;
    WRAP_END();
}

/* ---- communicators ---- */

static int created(ncclResult_t res)
{
    return res == ncclSuccess || res == ncclInProgress;
}

/* Ranks joining with one unique id form one communicator: its id is the
 * hash of the unique id's bytes. */
static void note_init(ts__nccl_record *r, ncclResult_t res, ncclComm_t *comm, const ncclUniqueId *id,
                      int rank, int nranks)
{
    r->comm_id = ts__nccl_hash(TS_NCCL_HASH_SEED, id->internal, sizeof id->internal);
    r->rank = rank, r->nranks = nranks;
    if (created(res))
        comm_add(*comm, r->comm_id, rank, nranks);
}

TS_API ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    WRAP_BEGIN(CommInitRank)(comm, nranks, id, rank);
    ts__nccl_record r;
    record_init(&r, "ncclCommInitRank", NULL);
    WRAP_CALL((comm, nranks, id, rank));
    note_init(&r, res, comm, &id, rank, nranks);
    WRAP_END();
}

TS_API ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                           ncclConfig_t *config)
{
    WRAP_BEGIN(CommInitRankConfig)(comm, nranks, id, rank, config);
    ts__nccl_record r;
    record_init(&r, "ncclCommInitRankConfig", NULL);
    WRAP_CALL((comm, nranks, id, rank, config));
    note_init(&r, res, comm, &id, rank, nranks);
    WRAP_END();
}

/* One process drives every device: the communicators never leave it, so
 * the id only has to differ between this process's ncclCommInitAll calls. */
TS_API ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
{
    WRAP_BEGIN(CommInitAll)(comm, ndev, devlist);
    ts__nccl_record r;
    record_init(&r, "ncclCommInitAll", NULL);
    WRAP_CALL((comm, ndev, devlist));
    uint64_t ordinal = __atomic_add_fetch(&initall_seq, 1, __ATOMIC_RELAXED);
    pid_t pid = getpid();
    r.comm_id = ts__nccl_hash(ts__nccl_hash(TS_NCCL_HASH_SEED, "all", 3), &pid, sizeof pid);
    r.comm_id = ts__nccl_hash(r.comm_id, &ordinal, sizeof ordinal);
    r.nranks = ndev;
    for (int i = 0; created(res) && i < ndev; i++)
        comm_add(comm[i], r.comm_id, i, ndev);
    WRAP_END();
}

/* A communicator made from another (split, shrink): NCCL knows its rank
 * and size; its id comes from the parent's. */
static void note_child(ts__nccl_record *r, ncclResult_t res, ncclComm_t *newcomm, uint64_t id)
{
    if (!created(res) || !newcomm || !*newcomm)
        return;
    int rank = -1, nranks = -1;
    tls_inside++;
    if (NEXT(CommUserRank)(*newcomm, &rank) != ncclSuccess)
        rank = -1;
    if (NEXT(CommCount)(*newcomm, &nranks) != ncclSuccess)
        nranks = -1;
    tls_inside--;
    r->comm_id = id;
    r->rank = rank, r->nranks = nranks;
    comm_add(*newcomm, id, rank, nranks);
}

/* The parent's id and its next derivation ordinal: every rank of the parent
 * splits and shrinks it in the same order, so (id, ordinal) is equal on all. */
static uint64_t child_seed(ncclComm_t comm)
{
    comm_info *parent = comm_get(comm);
    uint64_t ordinal = parent ? __atomic_add_fetch(&parent->split_seq, 1, __ATOMIC_RELAXED) : 0;
    uint64_t id = ts__nccl_hash(TS_NCCL_HASH_SEED, parent ? &parent->id : &ordinal, sizeof(uint64_t));
    return ts__nccl_hash(id, &ordinal, sizeof ordinal);
}

TS_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                  ncclConfig_t *config)
{
    WRAP_BEGIN(CommSplit)(comm, color, key, newcomm, config);
    ts__nccl_record r;
    record_init(&r, "ncclCommSplit", NULL);
    uint64_t seed = child_seed(comm);
    WRAP_CALL((comm, color, key, newcomm, config));
    note_child(&r, res, newcomm, ts__nccl_hash(seed, &color, sizeof color));
    WRAP_END();
}

#if TS_NCCL_HAVE_SHRINK
/* Every remaining rank passes the same exclude list. */
TS_API ncclResult_t ncclCommShrink(ncclComm_t comm, int *exclude, int n_exclude, ncclComm_t *newcomm,
                                   ncclConfig_t *config, int flags)
{
    WRAP_BEGIN(CommShrink)(comm, exclude, n_exclude, newcomm, config, flags);
    ts__nccl_record r;
    record_init(&r, "ncclCommShrink", NULL);
    uint64_t seed = child_seed(comm);
    WRAP_CALL((comm, exclude, n_exclude, newcomm, config, flags));
    if (exclude && n_exclude > 0)
        seed = ts__nccl_hash(seed, exclude, (size_t)n_exclude * sizeof *exclude);
    note_child(&r, res, newcomm, ts__nccl_hash(seed, "shrink", 6));
    WRAP_END();
}
#endif

#if TS_NCCL_HAVE_SCALABLE
/* The same nId unique ids on every rank name the communicator. */
TS_API ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int n_ids,
                                             ncclUniqueId *ids, ncclConfig_t *config)
{
    WRAP_BEGIN(CommInitRankScalable)(comm, nranks, rank, n_ids, ids, config);
    ts__nccl_record r;
    record_init(&r, "ncclCommInitRankScalable", NULL);
    WRAP_CALL((comm, nranks, rank, n_ids, ids, config));
    uint64_t id = TS_NCCL_HASH_SEED;
    for (int i = 0; ids && i < n_ids; i++)
        id = ts__nccl_hash(id, ids[i].internal, sizeof ids[i].internal);
    r.comm_id = id;
    r.rank = rank, r.nranks = nranks;
    if (created(res))
        comm_add(*comm, id, rank, nranks);
    WRAP_END();
}
#endif

TS_API ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    WRAP_BEGIN(CommDestroy)(comm);
    ts__nccl_record r;
    record_init(&r, "ncclCommDestroy", NULL);
    record_comm(&r, comm_find(comm));
    comm_remove(comm);
    WRAP_CALL((comm));
    WRAP_END();
}
