/* test_nccl.c - the NCCL collector's wrappers, called in-process.
 *
 * Most tests give the wrappers a fake `next` table (a GPU-less stand-in for
 * libnccl whose answers the test chooses) and a sink that keeps the records.
 * One test uses the real libnccl, which fails without a GPU: the wrapper must
 * return exactly what the real function returns. One goes through the real
 * host tracing API and checks the JSON it writes. Built only when nccl.h was
 * found (TS_HAVE_NCCL, set by src/capture/module.mk).
 */
#include "test.h"

#ifdef TS_HAVE_NCCL
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trainscope/graph.h"
#include "trainscope/ingest.h"

#include "capture/nccl/nccl.h"

/* ---- a sink that keeps records ---- */
#define MAX_RECS 64
static ts__nccl_record recs[MAX_RECS];
static int n_recs;
static void keep(const ts__nccl_record *r)
{
    if (n_recs < MAX_RECS)
        recs[n_recs++] = *r;
}

/* ---- a fake NCCL: communicators are addresses in this array ---- */
static char fake_comms[8];
static ncclResult_t fake_result;     /* what the fake data calls return */
static int fake_errno;               /* errno the fake data calls leave, 0 = untouched */
static int fake_calls;

static ncclResult_t fake_init(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    *comm = (ncclComm_t)&fake_comms[rank];
    return ncclSuccess;
}
static ncclResult_t fake_allreduce(const void *s, void *d, size_t n, ncclDataType_t t, ncclRedOp_t op,
                                   ncclComm_t c, cudaStream_t st)
{
    fake_calls++;
    if (fake_errno)
        errno = fake_errno;
    return fake_result;
}
static ncclResult_t fake_allgather(const void *s, void *d, size_t n, ncclDataType_t t, ncclComm_t c,
                                   cudaStream_t st)
{
    fake_calls++;
    return fake_result;
}
static ncclResult_t fake_reduce_scatter(const void *s, void *d, size_t n, ncclDataType_t t, ncclRedOp_t op,
                                        ncclComm_t c, cudaStream_t st)
{
    fake_calls++;
    return fake_result;
}
static ncclResult_t fake_send(const void *s, size_t n, ncclDataType_t t, int peer, ncclComm_t c, cudaStream_t st)
{
    fake_calls++;
    return fake_result;
}
static ncclResult_t fake_recv(void *d, size_t n, ncclDataType_t t, int peer, ncclComm_t c, cudaStream_t st)
{
    fake_calls++;
    return fake_result;
}
static ncclResult_t fake_group(void) { return ncclSuccess; }
/* A real NCCL may call its own public API; the wrapper must not record it. */
static ncclResult_t fake_bcast_calling_group(void *b, size_t n, ncclDataType_t t, int root, ncclComm_t c,
                                             cudaStream_t st)
{
    fake_calls++;
    ncclGroupStart();
    ncclGroupEnd();
    return ncclSuccess;
}
static ncclResult_t fake_count(const ncclComm_t c, int *n) { *n = 2; return ncclSuccess; }
static ncclResult_t fake_user_rank(const ncclComm_t c, int *r) { *r = (int)((char *)c - fake_comms) % 2; return ncclSuccess; }
static ncclResult_t fake_split(ncclComm_t c, int color, int key, ncclComm_t *out, ncclConfig_t *cfg)
{
    *out = (ncclComm_t)((char *)c + 4);
    return ncclSuccess;
}
static ncclResult_t fake_destroy(ncclComm_t c) { return ncclSuccess; }
#if TS_NCCL_HAVE_SHRINK
static ncclResult_t fake_shrink(ncclComm_t c, int *ex, int n_ex, ncclComm_t *out, ncclConfig_t *cfg, int flags)
{
    *out = (ncclComm_t)((char *)c + 2);
    return ncclSuccess;
}
#endif
#if TS_NCCL_HAVE_SCALABLE
static ncclResult_t fake_scalable(ncclComm_t *comm, int nranks, int rank, int n_ids, ncclUniqueId *ids,
                                  ncclConfig_t *cfg)
{
    *comm = (ncclComm_t)&fake_comms[rank];
    return ncclSuccess;
}
#endif

static void use_fake(void)
{
    ts__nccl_next t;
    memset(&t, 0, sizeof t);
    t.CommInitRank = fake_init;
    t.AllReduce = fake_allreduce;
    t.AllGather = fake_allgather;
    t.ReduceScatter = fake_reduce_scatter;
    t.Send = fake_send;
    t.Recv = fake_recv;
    t.GroupStart = fake_group;
    t.GroupEnd = fake_group;
    t.Bcast = fake_bcast_calling_group;
    t.CommCount = fake_count;
    t.CommUserRank = fake_user_rank;
    t.CommSplit = fake_split;
    t.CommDestroy = fake_destroy;
#if TS_NCCL_HAVE_SHRINK
    t.CommShrink = fake_shrink;
#endif
#if TS_NCCL_HAVE_SCALABLE
    t.CommInitRankScalable = fake_scalable;
#endif
    ts__nccl_set_next(&t);
    ts__nccl_set_sink(keep);
    n_recs = 0;
    fake_result = ncclSuccess;
}

static ncclUniqueId unique_id(char fill)
{
    ncclUniqueId id;
    memset(id.internal, fill, sizeof id.internal);
    return id;
}

/* Two ranks of one job, simulated in one process: comms[0] is rank 0's. */
static void init_two_ranks(ncclComm_t comms[2], char fill)
{
    CHECK_EQ_INT(ncclCommInitRank(&comms[0], 2, unique_id(fill), 0), ncclSuccess);
    CHECK_EQ_INT(ncclCommInitRank(&comms[1], 2, unique_id(fill), 1), ncclSuccess);
}

TEST(nccl_allreduce_records_kind_count_dtype_bytes_comm_and_sequence)
{
    use_fake();
    ncclComm_t comms[2];
    init_two_ranks(comms, 'a');
    CHECK_EQ_INT(n_recs, 2);
    CHECK_EQ_STR(recs[0].api, "ncclCommInitRank");
    CHECK(recs[0].comm_id != 0);
    CHECK_EQ_INT(recs[0].comm_id == recs[1].comm_id, 1);
    uint64_t id = recs[0].comm_id;

    n_recs = 0;
    CHECK_EQ_INT(ncclAllReduce(NULL, NULL, 2049000, ncclFloat32, ncclSum, comms[0], (cudaStream_t)0x70), ncclSuccess);
    CHECK_EQ_INT(ncclAllReduce(NULL, NULL, 10, ncclBfloat16, ncclSum, comms[0], NULL), ncclSuccess);
    CHECK_EQ_INT(ncclAllReduce(NULL, NULL, 2049000, ncclFloat32, ncclSum, comms[1], NULL), ncclSuccess);
    CHECK_EQ_INT(n_recs, 3);
    CHECK_EQ_STR(recs[0].coll, "allreduce");
    CHECK_EQ_STR(recs[0].dtype, "Float");
    CHECK_EQ_INT(recs[0].in_nelems, 2049000);
    CHECK_EQ_INT(recs[0].out_nelems, 2049000);
    CHECK_EQ_INT(recs[0].bytes, 2049000 * 4);
    CHECK_EQ_INT(recs[0].stream, 0x70);
    CHECK_EQ_INT(recs[0].rank, 0);
    CHECK_EQ_INT(recs[0].nranks, 2);
    CHECK_EQ_INT(recs[0].comm_id == id, 1);
    CHECK_EQ_INT(recs[0].seq, 1);
    CHECK_EQ_STR(recs[1].dtype, "BFloat16");
    CHECK_EQ_INT(recs[1].seq, 2);
    /* Rank 1's first allreduce pairs with rank 0's first: same id, same sequence. */
    CHECK_EQ_INT(recs[2].rank, 1);
    CHECK_EQ_INT(recs[2].seq, 1);
    CHECK_EQ_INT(recs[2].comm_id == id, 1);
    CHECK(recs[0].end_ns >= recs[0].start_ns);
}

TEST(nccl_different_unique_ids_give_different_communicator_ids)
{
    use_fake();
    ncclComm_t a[2], b[2];
    init_two_ranks(a, 'a');
    init_two_ranks(b, 'b');
    CHECK_EQ_INT(n_recs, 4);
    CHECK(recs[0].comm_id != recs[2].comm_id);
}

TEST(nccl_wrapper_passes_return_value_and_errno_through)
{
    use_fake();
    ncclComm_t comms[2];
    init_two_ranks(comms, 'c');
    fake_result = ncclInvalidUsage;
    fake_errno = EAGAIN;
    errno = 0;
    fake_calls = 0;
    CHECK_EQ_INT(ncclAllReduce(NULL, NULL, 4, ncclInt32, ncclSum, comms[0], NULL), ncclInvalidUsage);
    CHECK_EQ_INT(errno, EAGAIN);
    CHECK_EQ_INT(fake_calls, 1);
    CHECK_EQ_INT(recs[n_recs - 1].result, ncclInvalidUsage);
    fake_errno = 0;
}

TEST(nccl_allgather_and_reduce_scatter_scale_by_group_size)
{
    use_fake();
    ncclComm_t comms[2];
    init_two_ranks(comms, 'd');
    n_recs = 0;
    CHECK_EQ_INT(ncclAllGather(NULL, NULL, 100, ncclFloat16, comms[0], NULL), ncclSuccess);
    CHECK_EQ_INT(ncclReduceScatter(NULL, NULL, 50, ncclFloat64, ncclSum, comms[0], NULL), ncclSuccess);
    CHECK_EQ_INT(n_recs, 2);
    CHECK_EQ_STR(recs[0].coll, "allgather");
    CHECK_EQ_INT(recs[0].in_nelems, 100);
    CHECK_EQ_INT(recs[0].out_nelems, 200);
    CHECK_EQ_INT(recs[0].bytes, 400);
    CHECK_EQ_STR(recs[1].coll, "reduce_scatter");
    CHECK_EQ_INT(recs[1].in_nelems, 100);
    CHECK_EQ_INT(recs[1].out_nelems, 50);
    CHECK_EQ_INT(recs[1].bytes, 800);
    /* Collectives of every kind share one sequence per communicator. */
    CHECK_EQ_INT(recs[0].seq, 1);
    CHECK_EQ_INT(recs[1].seq, 2);
}

TEST(nccl_send_recv_count_per_peer_and_direction)
{
    use_fake();
    ncclComm_t comms[2];
    init_two_ranks(comms, 'e');
    n_recs = 0;
    CHECK_EQ_INT(ncclGroupStart(), ncclSuccess);
    CHECK_EQ_INT(ncclSend(NULL, 8, ncclUint8, 1, comms[0], NULL), ncclSuccess);
    CHECK_EQ_INT(ncclRecv(NULL, 8, ncclUint8, 1, comms[0], NULL), ncclSuccess);
    CHECK_EQ_INT(ncclSend(NULL, 8, ncclUint8, 1, comms[0], NULL), ncclSuccess);
    CHECK_EQ_INT(ncclGroupEnd(), ncclSuccess);
    CHECK_EQ_INT(ncclRecv(NULL, 8, ncclUint8, 0, comms[1], NULL), ncclSuccess);
    CHECK_EQ_INT(n_recs, 6);
    CHECK_EQ_STR(recs[0].api, "ncclGroupStart");
    CHECK_EQ_INT(recs[0].group_depth, 0);
    CHECK_EQ_STR(recs[1].coll, "send");
    CHECK_EQ_INT(recs[1].peer, 1);
    CHECK_EQ_INT(recs[1].seq, 1);
    CHECK_EQ_INT(recs[1].group_depth, 1);
    CHECK_EQ_INT(recs[1].bytes, 8);
    CHECK_EQ_STR(recs[2].coll, "recv");
    CHECK_EQ_INT(recs[2].seq, 1);
    CHECK_EQ_INT(recs[3].seq, 2);
    CHECK_EQ_STR(recs[4].api, "ncclGroupEnd");
    /* Rank 1's first receive from rank 0 pairs with rank 0's first send to 1. */
    CHECK_EQ_INT(recs[5].seq, 1);
    CHECK_EQ_INT(recs[5].group_depth, 0);
}

TEST(nccl_split_children_get_one_id_on_every_rank)
{
    use_fake();
    ncclComm_t comms[2], kids[2];
    init_two_ranks(comms, 'f');
    n_recs = 0;
    CHECK_EQ_INT(ncclCommSplit(comms[0], 0, 0, &kids[0], NULL), ncclSuccess);
    CHECK_EQ_INT(ncclCommSplit(comms[1], 0, 1, &kids[1], NULL), ncclSuccess);
    CHECK_EQ_INT(n_recs, 2);
    CHECK(recs[0].comm_id != 0);
    CHECK_EQ_INT(recs[0].comm_id == recs[1].comm_id, 1);
    CHECK_EQ_INT(recs[1].rank, 1);
    CHECK_EQ_INT(recs[1].nranks, 2);
    uint64_t kid_id = recs[0].comm_id;
    CHECK_EQ_INT(ncclAllReduce(NULL, NULL, 1, ncclFloat, ncclSum, kids[1], NULL), ncclSuccess);
    CHECK_EQ_INT(recs[2].comm_id == kid_id, 1);
    CHECK_EQ_INT(recs[2].seq, 1);
    /* A second split of the same parent is a different communicator. */
    CHECK_EQ_INT(ncclCommDestroy(kids[0]), ncclSuccess);
    CHECK_EQ_INT(ncclCommSplit(comms[0], 0, 0, &kids[0], NULL), ncclSuccess);
    CHECK(recs[n_recs - 1].comm_id != kid_id);
}

#if TS_NCCL_HAVE_SHRINK && TS_NCCL_HAVE_SCALABLE
TEST(nccl_scalable_init_and_shrink_give_one_id_on_every_rank)
{
    use_fake();
    ncclUniqueId ids[2] = {unique_id('s'), unique_id('t')};
    ncclComm_t comms[2], small[2];
    CHECK_EQ_INT(ncclCommInitRankScalable(&comms[0], 2, 0, 2, ids, NULL), ncclSuccess);
    CHECK_EQ_INT(ncclCommInitRankScalable(&comms[1], 2, 1, 2, ids, NULL), ncclSuccess);
    CHECK_EQ_INT(n_recs, 2);
    CHECK(recs[0].comm_id != 0 && recs[0].comm_id == recs[1].comm_id);
    CHECK_EQ_INT(recs[1].rank, 1);
    int exclude[1] = {3};
    CHECK_EQ_INT(ncclCommShrink(comms[0], exclude, 1, &small[0], NULL, 0), ncclSuccess);
    CHECK_EQ_INT(ncclCommShrink(comms[1], exclude, 1, &small[1], NULL, 0), ncclSuccess);
    CHECK_EQ_INT(n_recs, 4);
    CHECK(recs[2].comm_id != 0 && recs[2].comm_id == recs[3].comm_id);
    CHECK(recs[2].comm_id != recs[0].comm_id);
    CHECK_EQ_STR(recs[2].api, "ncclCommShrink");
}
#endif

TEST(nccl_calls_made_inside_nccl_are_not_recorded)
{
    use_fake();
    ncclComm_t comms[2];
    init_two_ranks(comms, 'g');
    n_recs = 0;
    fake_calls = 0;
    CHECK_EQ_INT(ncclBcast(NULL, 3, ncclInt64, 0, comms[0], NULL), ncclSuccess);
    CHECK_EQ_INT(fake_calls, 1);
    CHECK_EQ_INT(n_recs, 1);
    CHECK_EQ_STR(recs[0].coll, "broadcast");
    CHECK_EQ_INT(recs[0].root, 0);
    CHECK_EQ_INT(recs[0].bytes, 24);
}

TEST(nccl_unknown_communicator_asks_nccl_for_rank_and_size)
{
    use_fake();
    n_recs = 0;
    ncclComm_t stranger = (ncclComm_t)&fake_comms[7];
    CHECK_EQ_INT(ncclAllReduce(NULL, NULL, 1, ncclFloat, ncclSum, stranger, NULL), ncclSuccess);
    CHECK_EQ_INT(n_recs, 1);
    CHECK_EQ_INT(recs[0].rank, 1);
    CHECK_EQ_INT(recs[0].nranks, 2);
    CHECK(recs[0].comm_id != 0);
    CHECK_EQ_INT(recs[0].seq, 1);
}

static const char *arg_str(const ts_trace_event *ev, const char *key)
{
    for (uint32_t i = 0; i < ev->n_args; i++)
        if (strcmp(ev->args[i].key, key) == 0)
            return ev->args[i].str;
    return NULL;
}

static int64_t arg_num(const ts_trace_event *ev, const char *key)
{
    for (uint32_t i = 0; i < ev->n_args; i++)
        if (strcmp(ev->args[i].key, key) == 0 && !ev->args[i].str)
            return ev->args[i].num;
    return -999;
}

#define CHECK_STR_ARG_KEPT(ev, key) CHECK(arg_str(ev, key) != NULL)

TEST(nccl_record_becomes_event_with_kineto_arg_names_matcher_args_first)
{
    ts__nccl_record r;
    memset(&r, 0, sizeof r);
    r.api = "ncclSend", r.coll = "send", r.start_ns = 100, r.end_ns = 350;
    r.in_nelems = r.out_nelems = 16, r.dtype = "Float", r.bytes = 64;
    r.comm_id = 0xabcdef, r.rank = 0, r.nranks = 2, r.peer = 1, r.root = -1, r.seq = 7;
    ts_trace_arg args[TS_NCCL_MAX_ARGS];
    char strs[TS_NCCL_STR_BYTES];
    ts_trace_event ev;
    ts__nccl_to_event(&r, args, strs, &ev);
    CHECK_EQ_STR(ev.name, "nccl:send");
    CHECK_EQ_STR(ev.cat, "cpu_op");
    CHECK_EQ_INT(ev.phase, 'X');
    CHECK_EQ_INT(ev.ts_ns, 100);
    CHECK_EQ_INT(ev.dur_ns, 250);
    CHECK_EQ_STR(arg_str(&ev, "Process Group Name"), "0000000000abcdef");
    CHECK_EQ_STR(arg_str(&ev, "Collective name"), "send");
    CHECK_EQ_STR(arg_str(&ev, "dtype"), "Float");
    CHECK_EQ_INT(arg_num(&ev, "Sequence number"), 7);
    CHECK_EQ_INT(arg_num(&ev, "seq"), 7);
    CHECK_EQ_INT(arg_num(&ev, "In msg nelems"), 16);
    CHECK_EQ_INT(arg_num(&ev, "Out msg nelems"), 16);
    CHECK_EQ_INT(arg_num(&ev, "Group size"), 2);
    /* The host API keeps TS_TRACE_MAX_ARGS: everything matching needs fits. */
    ev.n_args = ev.n_args < TS_TRACE_MAX_ARGS ? ev.n_args : TS_TRACE_MAX_ARGS;
    CHECK_EQ_INT(arg_num(&ev, "Dst Rank"), 1);
    CHECK_EQ_INT(arg_num(&ev, "seq"), 7);
    CHECK_STR_ARG_KEPT(&ev, "Process Group Name");
    /* Group and communicator calls keep the API's name. */
    r.coll = NULL, r.api = "ncclGroupEnd";
    ts__nccl_to_event(&r, args, strs, &ev);
    CHECK_EQ_STR(ev.name, "ncclGroupEnd");
    /* A receive names its peer as the source. */
    r.coll = "recv", r.api = "ncclRecv";
    ts__nccl_to_event(&r, args, strs, &ev);
    CHECK_EQ_STR(ev.name, "nccl:recv");
    CHECK_EQ_INT(arg_num(&ev, "Src Rank"), 1);
    CHECK_EQ_INT(arg_num(&ev, "Dst Rank"), -999);
}

extern ncclResult_t pncclAllReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                   cudaStream_t);
extern ncclResult_t pncclCommInitRank(ncclComm_t *, int, ncclUniqueId, int);

TEST(nccl_real_library_failure_without_gpu_is_returned_unchanged)
{
    ts__nccl_set_next(NULL);
    ts__nccl_set_sink(keep);
    n_recs = 0;
    ncclResult_t direct = pncclAllReduce(NULL, NULL, 10, ncclFloat, ncclSum, NULL, NULL);
    CHECK(direct != ncclSuccess);
    CHECK_EQ_INT(ncclAllReduce(NULL, NULL, 10, ncclFloat, ncclSum, NULL, NULL), direct);
    CHECK_EQ_INT(n_recs, 1);
    CHECK_EQ_INT(recs[0].result, direct);

    ncclUniqueId id = unique_id('r');
    ncclComm_t comm = NULL;
    direct = pncclCommInitRank(&comm, 1, id, 0);
    CHECK(direct != ncclSuccess);   /* no GPU here; with one this test says so */
    CHECK_EQ_INT(ncclCommInitRank(&comm, 1, id, 0), direct);
}

TEST(nccl_default_sink_writes_collective_args_into_the_trace)
{
    char dir[] = "/tmp/ts_nccl_XXXXXX";
    CHECK(mkdtemp(dir));
    use_fake();
    ts__nccl_set_sink(NULL);
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    ncclComm_t comms[2];
    CHECK_EQ_INT(ncclCommInitRank(&comms[0], 2, unique_id('h'), 0), ncclSuccess);
    CHECK_EQ_INT(ncclAllReduce(NULL, NULL, 1234, ncclFloat, ncclSum, comms[0], NULL), ncclSuccess);
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cat %s/*.json", dir);
    char *json = NULL;
    CHECK_EQ_INT(ts_test_run(cmd, &json), 0);
    CHECK(json && strstr(json, "\"nccl:all_reduce\""));
    CHECK(strstr(json, "\"Collective name\": \"allreduce\"") || strstr(json, "\"Collective name\":\"allreduce\""));
    CHECK(strstr(json, "1234"));
    CHECK(strstr(json, "\"Sequence number\""));
    free(json);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
}
/* The preloaded library in a separate process, as `record --nccl` runs it:
 * libnccl opened by the program itself, once in the global scope and once
 * RTLD_LOCAL (as Python extensions open it), must be found either way, and
 * the real result (no GPU here, so an error) must reach the program and the
 * trace. */
TEST(nccl_preloaded_wrapper_finds_real_nccl_opened_global_or_local)
{
    static char bin[1024];
    snprintf(bin, sizeof bin, "%s", ts_test_cli());
    char *slash = strrchr(bin, '/');
    CHECK(slash);
    *slash = '\0';
    const char *modes[] = {"ctypes.RTLD_GLOBAL", "ctypes.RTLD_LOCAL"};
    for (int m = 0; m < 2; m++) {
        char dir[] = "/tmp/ts_nccl_pre_XXXXXX";
        CHECK(mkdtemp(dir));
        char cmd[4096], *out = NULL;
        snprintf(cmd, sizeof cmd,
                 "TRAINSCOPE_DIR=%s LD_PRELOAD='%s/libtrainscope-preload.so %s/libtrainscope-nccl.so' "
                 "LD_LIBRARY_PATH=%s /usr/bin/python3 -c \"\n"
                 "import ctypes\n"
                 "real = ctypes.CDLL('libnccl.so.2', mode=%s)\n"
                 "wrapped = ctypes.CDLL(None).ncclAllReduce\n"
                 "direct = real.pncclAllReduce\n"
                 "args = (None, None, ctypes.c_size_t(10), 7, 0, None, None)\n"
                 "print(wrapped(*args), direct(*args))\n"
                 "\"", dir, bin, bin, TS_NCCL_LIBDIR, modes[m]);
        CHECK_EQ_INT(ts_test_run(cmd, &out), 0);
        CHECK(out);
        int got = -1, want = -2;
        CHECK_EQ_INT(sscanf(out, "%d %d", &got, &want), 2);
        CHECK_EQ_INT(got, want);
        CHECK(got != ncclSuccess);
        free(out);
        snprintf(cmd, sizeof cmd, "cat %s/*.json; rm -rf %s", dir, dir);
        CHECK_EQ_INT(ts_test_run(cmd, &out), 0);
        CHECK(out && strstr(out, "\"nccl:all_reduce\""));
        CHECK(strstr(out, "\"Collective name\":\"allreduce\""));
        char want_res[64];
        snprintf(want_res, sizeof want_res, "\"NCCL result\":%d", want);
        CHECK(strstr(out, want_res));
        free(out);
    }
}
/* Two ranks of one job, each its own process with its own trace file, as a
 * real run has them; NCCL itself is the fake table (inherited by fork). The
 * traces go through the real ingest and graph: every collective must be
 * matched across the two ranks by (communicator id, sequence). */
static void run_rank(const char *dir, int rank)
{
    if (ts_trace_start(dir) != TS_OK)
        _exit(3);
    ts_trace_set_rank(rank, 2);
    ts_trace_push("user_annotation", "ProfilerStep#1");
    ncclComm_t comm;
    if (ncclCommInitRank(&comm, 2, unique_id('m'), rank) != ncclSuccess)
        _exit(4);
    for (int i = 0; i < 3; i++)
        (void)ncclAllReduce(NULL, NULL, 1000, ncclFloat, ncclSum, comm, NULL);
    (void)ncclAllGather(NULL, NULL, 10, ncclFloat, comm, NULL);
    ts_trace_pop();
    _exit(ts_trace_stop() == TS_OK ? 0 : 5);
}

TEST(nccl_events_of_two_rank_processes_match_in_the_graph)
{
    char dir[] = "/tmp/ts_nccl_job_XXXXXX";
    CHECK(mkdtemp(dir));
    use_fake();
    ts__nccl_set_sink(NULL);
    pid_t kids[2];
    for (int r = 0; r < 2; r++) {
        kids[r] = fork();
        CHECK(kids[r] >= 0);
        if (kids[r] == 0)
            run_rank(dir, r);
    }
    for (int r = 0; r < 2; r++) {
        int st = 0;
        CHECK(waitpid(kids[r], &st, 0) == kids[r]);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    const char *paths[] = {dir};
    ts_job *t = NULL;
    ts_error err;
    if (ts_job_load(paths, 1, NULL, &t, &err) != TS_OK)
        TS_FAIL_("load: %s", err.msg);
    CHECK_EQ_INT(ts_job_n_ranks(t), 2);
    ts_graph *g = NULL;
    if (ts_graph_create(t, NULL, &g, &err) != TS_OK)
        TS_FAIL_("graph: %s", err.msg);
    /* (The fake returns at once on both ranks, so the graph may warn that
     * ranks left before the last one entered; matching is what counts.) */
    CHECK_EQ_INT(ts_graph_n_collectives(g), 4);
    ts_graph_destroy(g);
    ts_job_destroy(t);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
}
#endif
