/* mpi.c - the MPI collector (build/libtrainscope-mpi.so, preloaded by
 * `trainscope record --mpi`): PMPI interposition of the collectives and the
 * point-to-point calls (blocking and nonblocking, Wait and Test), each
 * recorded as a complete event, cat "mpi".
 *
 * Not for: matching calls across ranks (graph/ does that from the args).
 *
 * Args use the names PyTorch's record_param_comms writes in Kineto traces,
 * so the cross-rank matching that reads those reads these too:
 *   "Process Group Name"  "mpi_comm_<f>", f the communicator's Fortran handle
 *                         (equal on all ranks for communicators created in
 *                         the same order; MPI_COMM_WORLD is mpi_comm_0)
 *   "Group size", "Rank"  size of the communicator and this rank in it
 *   "Collective name"     allreduce, broadcast, reduce, allgather, reduce_scatter,
 *                         alltoall, barrier; send, recv, isend, irecv for p2p
 *   "Seq"                 collectives: per-communicator call number, equal on
 *                         every rank for the same call
 *   "In msg nelems"       bytes of this rank's payload, with "dtype" "Byte"
 *   "Dst Rank" / "Src Rank", "tag"   point-to-point peer (actual source for a
 *                         wildcard receive) and tag; "root" for rooted collectives
 *   "request"             nonblocking calls, Wait and Test: the request's Fortran handle
 *   "requests", "n_requests"   Waitall/any/some, Testall/any/some: the handles (a JSON array,
 *                         read before the call, since completion frees them; as many as fit in
 *                         TS_TRACE_MAX_STR bytes, about 40) and how many were passed
 *   "index", "indices"    Waitany/Testany: position in "requests" of the one completed;
 *                         Waitsome/Testsome: positions of those completed (JSON array);
 *                         MPI_UNDEFINED (-32766) when none was active
 *   "completed"           Test*: the flag (Testsome: the count); Waitsome: the count;
 *                         0 when the call failed (nothing is claimed complete then)
 *
 * The real functions are found with dlsym(RTLD_NEXT, "PMPI_*") on first use
 * and the file names no MPI data symbol (MPI_COMM_WORLD, ...), so the library
 * also loads into processes without libmpi (mpirun itself, shells, Python).
 * A thread-local guard keeps nested MPI calls (an MPI library calling its
 * own MPI_ entry points) from being recorded twice.
 */
#include <mpi.h>

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "trainscope/trace.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_ARGS 12
#define N_SEQ 1024   /* sequence counters; comm ids beyond share slots modulo */

static __thread int in_mpi __attribute__((tls_model("initial-exec")));
static atomic_llong coll_seq[N_SEQ];

static void *pmpi(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) p = dlsym(RTLD_DEFAULT, name);
    if (!p) {
        fprintf(stderr, "trainscope: mpi collector: real symbol %s not found\n", name);
        abort();
    }
    return p;
}

/* real_<name>: the PMPI function, typed like the MPI one. */
#define REAL(name) \
    static __typeof__(P##name) *real_##name; \
    if (!real_##name) real_##name = (__typeof__(P##name) *)pmpi("P" #name)

/* One event under construction: its start and args. */
typedef struct mpi_ev {
    const char  *name;
    int64_t      t0_ns;
    ts_trace_arg args[MAX_ARGS];
    uint32_t     n;
    uint64_t     json_args;   /* bit i: args[i] is a JSON array */
    uint32_t     n_json;      /* json_text[] used */
} mpi_ev;

/* Texts of an event's JSON array args. Thread-local like pg_name (one traced
 * MPI call at a time per thread: the in_mpi guard), so calls that write no
 * array do not clear half a kilobyte of stack. */
static __thread char json_text[2][TS_TRACE_MAX_STR + 1];

static void arg_i(mpi_ev *e, const char *key, int64_t v)
{
    if (e->n < MAX_ARGS) e->args[e->n++] = (ts_trace_arg){key, NULL, v};
}

static void arg_s(mpi_ev *e, const char *key, const char *v)
{
    if (e->n < MAX_ARGS) e->args[e->n++] = (ts_trace_arg){key, v, 0};
}

/* Append v to the JSON array being built in out (len bytes so far);
 * returns 0, leaving out as it was, when it would not fit with the "]". */
static int append_int(char *out, size_t *len, int64_t v)
{
    size_t cap = TS_TRACE_MAX_STR + 1;
    int w = snprintf(out + *len, cap - *len, "%s%lld", *len > 1 ? "," : "", (long long)v);
    if (w < 0 || *len + (size_t)w + 2 > cap) {
        out[*len] = '\0';
        return 0;
    }
    *len += (size_t)w;
    return 1;
}

/* Start a JSON array arg; returns its text buffer, or NULL when full. */
static char *json_begin(mpi_ev *e, size_t *len)
{
    if (e->n_json == 2 || e->n >= MAX_ARGS) return NULL;
    char *out = json_text[e->n_json];
    out[0] = '[', out[1] = '\0';
    *len = 1;
    return out;
}

static void json_end(mpi_ev *e, const char *key, char *out, size_t len)
{
    out[len] = ']', out[len + 1] = '\0';
    e->n_json++;
    e->json_args |= 1ull << e->n;
    e->args[e->n++] = (ts_trace_arg){key, out, 0};
}

/* The requests' Fortran handles, read before the call (completion frees
 * them and sets the C handles to MPI_REQUEST_NULL), and their number. */
static void requests_arg(mpi_ev *e, int n, const MPI_Request reqs[])
{
    REAL(MPI_Request_c2f);
    size_t len;
    arg_i(e, "n_requests", n);
    char *out = json_begin(e, &len);
    if (!out) return;
    for (int i = 0; i < n && append_int(out, &len, real_MPI_Request_c2f(reqs[i])); i++) {}
    json_end(e, "requests", out, len);
}

/* Waitsome/Testsome: positions of the completed requests. */
static void indices_arg(mpi_ev *e, int rc, int outcount, const int idx[])
{
    size_t len;
    arg_i(e, "completed", rc == MPI_SUCCESS && outcount != MPI_UNDEFINED ? outcount : 0);
    char *out = rc == MPI_SUCCESS ? json_begin(e, &len) : NULL;
    if (!out) return;
    for (int i = 0; i < outcount && outcount != MPI_UNDEFINED && append_int(out, &len, idx[i]); i++) {}
    json_end(e, "indices", out, len);
}

static int64_t type_bytes(MPI_Datatype dt, int64_t count)
{
    static __typeof__(PMPI_Type_size) *real_type_size;
    if (!real_type_size) real_type_size = (__typeof__(PMPI_Type_size) *)pmpi("PMPI_Type_size");
    int size = 0;
    if (real_type_size(dt, &size) != MPI_SUCCESS) return -1;
    return (int64_t)size * count;
}

/* Thread-local so the string outlives the event's construction. */
static __thread char pg_name[32];

static int comm_args(mpi_ev *e, MPI_Comm comm)
{
    REAL(MPI_Comm_c2f);
    REAL(MPI_Comm_size);
    REAL(MPI_Comm_rank);
    int size = -1, rank = -1, id = real_MPI_Comm_c2f(comm);
    real_MPI_Comm_size(comm, &size);
    real_MPI_Comm_rank(comm, &rank);
    snprintf(pg_name, sizeof pg_name, "mpi_comm_%d", id);
    arg_s(e, "Process Group Name", pg_name);
    arg_i(e, "Group size", size);
    arg_i(e, "Rank", rank);
    return id;
}

static void bytes_arg(mpi_ev *e, int64_t bytes)
{
    arg_i(e, "In msg nelems", bytes);
    arg_s(e, "dtype", "Byte");
}

/* Collective: comm args, its name, the per-communicator sequence number. */
static void coll_args(mpi_ev *e, const char *coll, MPI_Comm comm, int64_t bytes)
{
    int id = comm_args(e, comm);
    arg_s(e, "Collective name", coll);
    arg_i(e, "Seq", atomic_fetch_add(&coll_seq[(unsigned)id % N_SEQ], 1));
    bytes_arg(e, bytes);
}

/* kind: "send", "recv", "isend", "irecv"; peer is the destination of a send. */
static void p2p_args(mpi_ev *e, const char *kind, MPI_Comm comm, int peer, int tag, int64_t bytes)
{
    comm_args(e, comm);
    arg_s(e, "Collective name", kind);
    arg_i(e, kind[0] == 's' || kind[1] == 's' ? "Dst Rank" : "Src Rank", peer);
    arg_i(e, "tag", tag);
    bytes_arg(e, bytes);
}

static void req_arg(mpi_ev *e, MPI_Request req)
{
    REAL(MPI_Request_c2f);
    arg_i(e, "request", real_MPI_Request_c2f(req));
}

static void emit(mpi_ev *e)
{
    ts_trace_event ev = {.size = sizeof ev, .phase = 'X', .cat = "mpi", .name = e->name,
                         .ts_ns = e->t0_ns, .dur_ns = ts_trace_now_ns() - e->t0_ns,
                         .pid = -1, .tid = -1, .args = e->args, .n_args = e->n, .json_args = e->json_args};
    ts_trace_emit(&ev);
    in_mpi = 0;
}

/* Start an event when tracing is on and we are not inside another MPI call. */
#define BEGIN(fname) \
    mpi_ev ev_ = {.name = fname}; \
    int traced_ = TS_TRACE_ON() && !in_mpi; \
    if (traced_) { in_mpi = 1; ev_.t0_ns = ts_trace_now_ns(); }

/* After init, the rank and size in MPI_COMM_WORLD become the trace's
 * distributedInfo (launchers that set no rank variable). The world handle is
 * looked up by name: naming MPI_COMM_WORLD would make this library need libmpi
 * at load time (Open MPI's handle is the address of ompi_mpi_comm_world; this
 * file is compiled against Open MPI's mpi.h, so that is the ABI it has). */
static void record_world_rank(void)
{
    REAL(MPI_Comm_rank);
    REAL(MPI_Comm_size);
    MPI_Comm world = (MPI_Comm)dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world");
    int rank = -1, size = -1;
    if (world && real_MPI_Comm_rank(world, &rank) == MPI_SUCCESS && real_MPI_Comm_size(world, &size) == MPI_SUCCESS)
        ts_trace_set_rank(rank, size);
}

EXPORT int MPI_Init(int *argc, char ***argv)
{
    REAL(MPI_Init);
    BEGIN("MPI_Init");
    int rc = real_MPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) record_world_rank();
    if (traced_) emit(&ev_);
    return rc;
}

EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    REAL(MPI_Init_thread);
    BEGIN("MPI_Init_thread");
    int rc = real_MPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) record_world_rank();
    if (traced_) { arg_i(&ev_, "required", required); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    REAL(MPI_Allreduce);
    BEGIN("MPI_Allreduce");
    int rc = real_MPI_Allreduce(sbuf, rbuf, count, dt, op, comm);
    if (traced_) { coll_args(&ev_, "allreduce", comm, type_bytes(dt, count)); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                          MPI_Comm comm, MPI_Request *req)
{
    REAL(MPI_Iallreduce);
    BEGIN("MPI_Iallreduce");
    int rc = real_MPI_Iallreduce(sbuf, rbuf, count, dt, op, comm, req);
    if (traced_) {
        coll_args(&ev_, "allreduce", comm, type_bytes(dt, count));
        req_arg(&ev_, *req);
        emit(&ev_);
    }
    return rc;
}

EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm)
{
    REAL(MPI_Reduce);
    BEGIN("MPI_Reduce");
    int rc = real_MPI_Reduce(sbuf, rbuf, count, dt, op, root, comm);
    if (traced_) { coll_args(&ev_, "reduce", comm, type_bytes(dt, count)); arg_i(&ev_, "root", root); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    REAL(MPI_Bcast);
    BEGIN("MPI_Bcast");
    int rc = real_MPI_Bcast(buf, count, dt, root, comm);
    if (traced_) { coll_args(&ev_, "broadcast", comm, type_bytes(dt, count)); arg_i(&ev_, "root", root); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                         MPI_Datatype rdt, MPI_Comm comm)
{
    REAL(MPI_Allgather);
    BEGIN("MPI_Allgather");
    int rc = real_MPI_Allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm);
    if (traced_) { coll_args(&ev_, "allgather", comm, type_bytes(rdt, rcount)); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm)
{
    REAL(MPI_Reduce_scatter);
    REAL(MPI_Comm_size);
    BEGIN("MPI_Reduce_scatter");
    int rc = real_MPI_Reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm);
    if (traced_) {
        int size = 0;
        int64_t total = 0;
        real_MPI_Comm_size(comm, &size);
        for (int i = 0; i < size; i++) total += rcounts[i];
        coll_args(&ev_, "reduce_scatter", comm, type_bytes(dt, total));
        emit(&ev_);
    }
    return rc;
}

EXPORT int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt,
                                    MPI_Op op, MPI_Comm comm)
{
    REAL(MPI_Reduce_scatter_block);
    REAL(MPI_Comm_size);
    BEGIN("MPI_Reduce_scatter_block");
    int rc = real_MPI_Reduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm);
    if (traced_) {
        int size = 0;
        real_MPI_Comm_size(comm, &size);
        coll_args(&ev_, "reduce_scatter", comm, type_bytes(dt, (int64_t)rcount * size));
        emit(&ev_);
    }
    return rc;
}

EXPORT int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                        MPI_Datatype rdt, MPI_Comm comm)
{
    REAL(MPI_Alltoall);
    REAL(MPI_Comm_size);
    BEGIN("MPI_Alltoall");
    int rc = real_MPI_Alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm);
    if (traced_) {
        int size = 0;
        real_MPI_Comm_size(comm, &size);
        coll_args(&ev_, "alltoall", comm, type_bytes(rdt, (int64_t)rcount * size));
        emit(&ev_);
    }
    return rc;
}

EXPORT int MPI_Barrier(MPI_Comm comm)
{
    REAL(MPI_Barrier);
    BEGIN("MPI_Barrier");
    int rc = real_MPI_Barrier(comm);
    if (traced_) { coll_args(&ev_, "barrier", comm, 0); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    REAL(MPI_Send);
    BEGIN("MPI_Send");
    int rc = real_MPI_Send(buf, count, dt, dest, tag, comm);
    if (traced_) { p2p_args(&ev_, "send", comm, dest, tag, type_bytes(dt, count)); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *st)
{
    REAL(MPI_Recv);
    BEGIN("MPI_Recv");
    MPI_Status local;
    MPI_Status *s = st == MPI_STATUS_IGNORE && traced_ ? &local : st;
    int rc = real_MPI_Recv(buf, count, dt, source, tag, comm, s);
    if (traced_) {
        /* The actual source and tag when the call used wildcards. */
        int peer = source, t = tag;
        if (rc == MPI_SUCCESS && s) { peer = s->MPI_SOURCE; t = s->MPI_TAG; }
        p2p_args(&ev_, "recv", comm, peer, t, type_bytes(dt, count));
        emit(&ev_);
    }
    return rc;
}

EXPORT int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                     MPI_Request *req)
{
    REAL(MPI_Isend);
    BEGIN("MPI_Isend");
    int rc = real_MPI_Isend(buf, count, dt, dest, tag, comm, req);
    if (traced_) { p2p_args(&ev_, "isend", comm, dest, tag, type_bytes(dt, count)); req_arg(&ev_, *req); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
                     MPI_Request *req)
{
    REAL(MPI_Irecv);
    BEGIN("MPI_Irecv");
    int rc = real_MPI_Irecv(buf, count, dt, source, tag, comm, req);
    if (traced_) { p2p_args(&ev_, "irecv", comm, source, tag, type_bytes(dt, count)); req_arg(&ev_, *req); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    REAL(MPI_Wait);
    BEGIN("MPI_Wait");
    if (traced_) req_arg(&ev_, *req);   /* before: completion frees the request */
    int rc = real_MPI_Wait(req, st);
    if (traced_) emit(&ev_);
    return rc;
}

EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    REAL(MPI_Waitall);
    BEGIN("MPI_Waitall");
    if (traced_) requests_arg(&ev_, n, reqs);
    int rc = real_MPI_Waitall(n, reqs, sts);
    if (traced_) { if (rc != MPI_SUCCESS) arg_i(&ev_, "completed", 0); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    REAL(MPI_Waitany);
    BEGIN("MPI_Waitany");
    if (traced_) requests_arg(&ev_, n, reqs);
    int rc = real_MPI_Waitany(n, reqs, idx, st);
    if (traced_) { arg_i(&ev_, "index", rc == MPI_SUCCESS ? *idx : MPI_UNDEFINED); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    REAL(MPI_Waitsome);
    BEGIN("MPI_Waitsome");
    if (traced_) requests_arg(&ev_, n, reqs);
    int rc = real_MPI_Waitsome(n, reqs, outcount, idx, sts);
    if (traced_) { indices_arg(&ev_, rc, *outcount, idx); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    REAL(MPI_Test);
    BEGIN("MPI_Test");
    if (traced_) req_arg(&ev_, *req);
    int rc = real_MPI_Test(req, flag, st);
    if (traced_) { arg_i(&ev_, "completed", *flag); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    REAL(MPI_Testall);
    BEGIN("MPI_Testall");
    if (traced_) requests_arg(&ev_, n, reqs);
    int rc = real_MPI_Testall(n, reqs, flag, sts);
    if (traced_) { arg_i(&ev_, "completed", rc == MPI_SUCCESS && *flag); emit(&ev_); }
    return rc;
}

EXPORT int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    REAL(MPI_Testany);
    BEGIN("MPI_Testany");
    if (traced_) requests_arg(&ev_, n, reqs);
    int rc = real_MPI_Testany(n, reqs, idx, flag, st);
    if (traced_) {
        int done = rc == MPI_SUCCESS && *flag;
        arg_i(&ev_, "completed", done);
        arg_i(&ev_, "index", done ? *idx : MPI_UNDEFINED);
        emit(&ev_);
    }
    return rc;
}

EXPORT int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    REAL(MPI_Testsome);
    BEGIN("MPI_Testsome");
    if (traced_) requests_arg(&ev_, n, reqs);
    int rc = real_MPI_Testsome(n, reqs, outcount, idx, sts);
    if (traced_) { indices_arg(&ev_, rc, *outcount, idx); emit(&ev_); }
    return rc;
}
