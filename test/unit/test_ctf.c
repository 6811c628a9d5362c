/* test_ctf.c - reading CTF traces of trainscope's tracepoints (src/ingest/ctf.c).
 *
 * Each test writes a small scenario (one tracepoint per line, known times and
 * fields), turns it into a real CTF trace with babeltrace2's own CTF writer
 * (test/e2e/lttng_ctf_gen.py, python3-bt2), loads it with ts_job_load and
 * checks the model rows. Tests skip, saying so, when python3-bt2 is missing.
 * The LTTng session path itself is tested end to end by test/e2e/lttng_*.sh.
 */
#include "test.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/lttng/lttng.h"
#include "ingest/ingest.h"
#include "trace/model.h"
#include "trainscope/ingest.h"

static bool have_bt2(void)
{
    static int have = -1;
    if (have < 0)
        have = system("/usr/bin/python3 -c 'import bt2' >/dev/null 2>&1") == 0;
    return have;
}

/* Write scenario lines (tab-separated, see lttng_ctf_gen.py) into a fresh
 * directory's trace; returns the directory (static buffer) or NULL. */
static const char *make_ctf(const char *scenario)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/ts_ctf_XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    char path[128], cmd[512];
    snprintf(path, sizeof path, "%s/scenario.tsv", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    fputs(scenario, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 test/e2e/lttng_ctf_gen.py %s %s/ctf >/dev/null 2>&1", path, dir);
    if (system(cmd) != 0)
        return NULL;
    snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/ctf");
    return dir;
}

static void remove_dir(const char *ctf_dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %.*s", (int)(strrchr(ctf_dir, '/') - ctf_dir), ctf_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", ctf_dir);
}

static ts_job *load(const char *dir, ts_error *err)
{
    ts_job *t = NULL;
    const char *paths[] = {dir};
    if (ts_job_load(paths, 1, NULL, &t, err) != TS_OK)
        return NULL;
    return t;
}

static uint32_t find_slice(const ts_rank *r, const char *name)
{
    for (uint32_t i = 0; i < r->slices.n; i++)
        if (strcmp(ts__rank_str(r, r->slices.name[i]), name) == 0)
            return i;
    return TS_NONE32;
}

#define L(...) __VA_ARGS__ "\n"

TEST(ctf_directory_with_metadata_below_is_detected_and_plain_one_is_not)
{
    char dir[] = "/tmp/ts_ctfd_XXXXXX";
    CHECK(mkdtemp(dir));
    char sub[128], cmd[512];
    snprintf(sub, sizeof sub, "%s/ust/uid/0/64-bit", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s && : > %s/metadata", sub, sub);
    CHECK_EQ_INT(system(cmd), 0);
    CHECK(ts__ctf_is_trace(dir));
    /* JSON traces beside it (record --lttng -o DIR) make DIR a JSON directory. */
    snprintf(cmd, sizeof cmd, ": > %s/rank-0.123.json", dir);
    CHECK_EQ_INT(system(cmd), 0);
    CHECK(!ts__ctf_is_trace(dir));
    snprintf(cmd, sizeof cmd, "rm %s/rank-0.123.json", dir);
    CHECK_EQ_INT(system(cmd), 0);
    CHECK(ts__ctf_is_trace(dir));
    snprintf(cmd, sizeof cmd, "rm %s/metadata", sub);
    CHECK_EQ_INT(system(cmd), 0);
    CHECK(!ts__ctf_is_trace(dir));
    CHECK(!ts__ctf_is_trace("/nonexistent/dir"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
}

TEST(ctf_push_pop_become_nested_slices_with_exact_times_and_gpu_work_on_its_stream)
{
    if (!have_bt2())
        SKIP("/usr/bin/python3 has no bt2 module (python3-bt2)");
    const char *dir = make_ctf(
        L("1000\t10\t11\tpush\tcat=user_annotation\tname=ProfilerStep#4")
        L("1100\t10\t11\tpush\tcat=cpu_op\tname=aten::mm")
        L("1400\t10\t11\tpop")
        L("1500\t10\t11\tcomplete\tphase=X\tcat=kernel\tname=sgemm\tts_ns=1450\tdur_ns=30\tpid=0\ttid=7"
          "\targs=correlation^i5~grid^s[1, 2, 3]~")
        L("2000\t10\t11\tpop"));
    CHECK(dir);
    ts_error err;
    ts_job *t = load(dir, &err);
    if (!t)
        TS_FAIL_("load failed: %s", err.msg);
    CHECK_EQ_INT(ts_job_n_ranks(t), 1);
    const ts_rank *r = ts_job_borrow_rank(t, 0);
    CHECK_EQ_INT(r->slices.n, 3);
    uint32_t step = find_slice(r, "ProfilerStep#4"), mm = find_slice(r, "aten::mm"), k = find_slice(r, "sgemm");
    CHECK(step != TS_NONE32 && mm != TS_NONE32 && k != TS_NONE32);
    CHECK_EQ_INT(r->slices.ts_ns[step], 1000);
    CHECK_EQ_INT(r->slices.dur_ns[step], 1000);
    CHECK_EQ_INT(r->slices.ts_ns[mm], 1100);
    CHECK_EQ_INT(r->slices.dur_ns[mm], 300);
    CHECK_EQ_INT(r->slices.depth[mm], 1);
    CHECK_EQ_INT(r->slices.parent[mm], step);
    CHECK_EQ_INT(r->slices.kind[mm], TS_KIND_CPU_OP);
    CHECK_EQ_INT(r->tracks[r->slices.track[mm]].pid, 10);
    CHECK_EQ_INT(r->tracks[r->slices.track[mm]].tid, 11);
    const ts_track *gpu = &r->tracks[r->slices.track[k]];
    CHECK_EQ_INT(gpu->kind, TS_TRACK_GPU_STREAM);
    CHECK_EQ_INT(gpu->pid, 0);
    CHECK_EQ_INT(gpu->tid, 7);
    CHECK_EQ_INT(r->slices.ts_ns[k], 1450);
    CHECK_EQ_INT(r->slices.dur_ns[k], 30);
    CHECK_EQ_INT(r->slices.corr[k], 5);
    CHECK_EQ_STR(ts__slice_arg_str(r, k, "grid"), "[1, 2, 3]");
    CHECK_EQ_INT(r->n_iterations, 1);
    CHECK_EQ_INT(r->iterations[0].step, 4);
    ts_job_destroy(t);
    remove_dir(dir);
}

TEST(ctf_processes_become_ranks_numbered_by_their_rank_event)
{
    if (!have_bt2())
        SKIP("/usr/bin/python3 has no bt2 module (python3-bt2)");
    const char *dir = make_ctf(
        L("100\t10\t10\tpush\tcat=cpu_op\tname=a")
        L("150\t20\t21\trank\trank=0\tworld_size=2")
        L("200\t20\t21\tpush\tcat=cpu_op\tname=b")
        L("300\t10\t10\tpop")
        L("400\t20\t21\tpop"));
    CHECK(dir);
    ts_error err;
    ts_job *t = load(dir, &err);
    if (!t)
        TS_FAIL_("load failed: %s", err.msg);
    CHECK_EQ_INT(ts_job_n_ranks(t), 2);
    const ts_rank *r0 = ts_job_borrow_rank(t, 0), *r1 = ts_job_borrow_rank(t, 1);
    CHECK_EQ_INT(r0->rank, 0);
    CHECK_EQ_INT(r0->world_size, 2);
    CHECK(find_slice(r0, "b") != TS_NONE32);
    CHECK_EQ_INT(r1->rank, 1);
    CHECK(find_slice(r1, "a") != TS_NONE32);
    CHECK(strstr(r1->path, "pid 10"));
    ts_job_destroy(t);
    remove_dir(dir);
}

TEST(ctf_collective_memcpy_and_memory_events_take_kineto_shapes)
{
    if (!have_bt2())
        SKIP("/usr/bin/python3 has no bt2 module (python3-bt2)");
    const char *dir = make_ctf(
        L("100\t10\t11\tcollective\tapi=ncclAllReduce\tcoll=allreduce\tcomm=00000000deadbeef\tseq=3"
          "\tin_nelems=1024\tout_nelems=1024\tdtype=Float\tnranks=2\trank=1\tpeer=-1\tts_ns=90\tdur_ns=50")
        L("150\t10\t11\tcollective\tapi=nccl:recv\tcoll=recv\tcomm=00000000deadbeef\tseq=1"
          "\tin_nelems=8\tout_nelems=8\tdtype=Byte\tnranks=2\trank=1\tpeer=0\tts_ns=140\tdur_ns=5")
        L("200\t10\t11\tmemcpy\tname=Memcpy HtoD (Pageable -> Device)\tbytes=4096\tts_ns=180\tdur_ns=20"
          "\tdevice=1\tstream=13\tcorrelation=44")
        L("300\t10\t11\talloc\tptr=0x1000\tbytes=512\tdevice=0")
        L("310\t10\t11\talloc\tptr=0x2000\tbytes=256\tdevice=0")
        L("320\t10\t11\tfree\tptr=0x1000\tbytes=512\tdevice=0"));
    CHECK(dir);
    ts_error err;
    ts_job *t = load(dir, &err);
    if (!t)
        TS_FAIL_("load failed: %s", err.msg);
    const ts_rank *r = ts_job_borrow_rank(t, 0);
    uint32_t c = find_slice(r, "ncclAllReduce");
    CHECK(c != TS_NONE32);
    CHECK_EQ_INT(r->slices.ts_ns[c], 90);
    CHECK_EQ_INT(r->slices.dur_ns[c], 50);
    CHECK_EQ_STR(ts__slice_arg_str(r, c, "Collective name"), "allreduce");
    CHECK_EQ_STR(ts__slice_arg_str(r, c, "Process Group Name"), "00000000deadbeef");
    int64_t v = 0;
    CHECK(ts__slice_arg_i64(r, c, "Sequence number", &v) && v == 3);
    CHECK(ts__slice_arg_i64(r, c, "seq", &v) && v == 3);
    CHECK(ts__slice_arg_i64(r, c, "In msg nelems", &v) && v == 1024);
    CHECK(ts__slice_arg_i64(r, c, "Group size", &v) && v == 2);
    CHECK(!ts__slice_arg_i64(r, c, "Dst Rank", &v) && !ts__slice_arg_i64(r, c, "Src Rank", &v));
    uint32_t rv = find_slice(r, "nccl:recv");
    CHECK(rv != TS_NONE32);
    CHECK(ts__slice_arg_i64(r, rv, "Src Rank", &v) && v == 0);
    uint32_t m = find_slice(r, "Memcpy HtoD (Pageable -> Device)");
    CHECK(m != TS_NONE32);
    CHECK_EQ_INT(r->slices.kind[m], TS_KIND_GPU_MEMCPY);
    CHECK_EQ_INT(r->tracks[r->slices.track[m]].pid, 1);
    CHECK_EQ_INT(r->tracks[r->slices.track[m]].tid, 13);
    CHECK(ts__slice_arg_i64(r, m, "bytes", &v) && v == 4096);
    CHECK_EQ_INT(r->slices.corr[m], 44);
    CHECK_EQ_INT(r->instants.n, 3);
    /* The third "[memory]" instant is the free: Bytes -512, 256 left. */
    uint32_t last = r->instants.args[2], n = r->instants.n_args[2];
    int64_t bytes = 0, total = -1;
    for (uint32_t a = last; a < last + n; a++) {
        const char *key = ts__rank_str(r, r->args.key[a]);
        if (strcmp(key, "Bytes") == 0) bytes = (int64_t)r->args.val[a];
        if (strcmp(key, "Total Allocated") == 0) total = (int64_t)r->args.val[a];
    }
    CHECK_EQ_INT(bytes, -512);
    CHECK_EQ_INT(total, 256);
    ts_job_destroy(t);
    remove_dir(dir);
}

TEST(ctf_ranges_end_on_another_thread_and_flows_link_launch_to_kernel)
{
    if (!have_bt2())
        SKIP("/usr/bin/python3 has no bt2 module (python3-bt2)");
    const char *dir = make_ctf(
        L("100\t10\t11\trange_begin\tid=7\tcat=user_annotation\tname=step")
        L("150\t10\t11\tcomplete\tphase=X\tcat=cuda_runtime\tname=cudaLaunchKernel\tts_ns=120\tdur_ns=10"
          "\tpid=-1\ttid=-1\tflow_id=9\tflow_phase=s\targs=correlation^i9~")
        L("250\t10\t11\tcomplete\tphase=X\tcat=kernel\tname=k\tts_ns=200\tdur_ns=40\tpid=0\ttid=7"
          "\tflow_id=9\tflow_phase=f\targs=correlation^i9~")
        L("300\t10\t12\trange_end\tid=7"));
    CHECK(dir);
    ts_error err;
    ts_job *t = load(dir, &err);
    if (!t)
        TS_FAIL_("load failed: %s", err.msg);
    const ts_rank *r = ts_job_borrow_rank(t, 0);
    uint32_t step = find_slice(r, "step"), launch = find_slice(r, "cudaLaunchKernel"), k = find_slice(r, "k");
    CHECK(step != TS_NONE32 && launch != TS_NONE32 && k != TS_NONE32);
    CHECK_EQ_INT(r->slices.dur_ns[step], 200);
    CHECK_EQ_INT(r->tracks[r->slices.track[step]].tid, 11);
    CHECK_EQ_INT(r->tracks[r->slices.track[launch]].tid, 11);
    CHECK_EQ_INT(r->slices.parent[launch], step);
    CHECK_EQ_INT(r->flows.n, 1);
    CHECK_EQ_INT(r->flows.from[0], launch);
    CHECK_EQ_INT(r->flows.to[0], k);
    CHECK_EQ_INT(r->flows.kind[0], TS_FLOW_AC2G);
    ts_job_destroy(t);
    remove_dir(dir);
}

TEST(ctf_flow_events_link_ranges_across_threads_and_threads_get_names)
{
    if (!have_bt2())
        SKIP("/usr/bin/python3 has no bt2 module (python3-bt2)");
    const char *dir = make_ctf(
        L("100\t10\t11\tthread_name\tname=main")
        L("110\t10\t11\tpush\tcat=cpu_op\tname=forward")
        L("120\t10\t11\tflow\tid=3\tphase=s\tcat=fwdbwd")
        L("130\t10\t11\tpop")
        L("200\t10\t12\tpush\tcat=cpu_op\tname=backward")
        L("210\t10\t12\tflow\tid=3\tphase=f\tcat=fwdbwd")
        L("230\t10\t12\tpop"));
    CHECK(dir);
    ts_error err;
    ts_job *t = load(dir, &err);
    if (!t)
        TS_FAIL_("load failed: %s", err.msg);
    const ts_rank *r = ts_job_borrow_rank(t, 0);
    uint32_t fw = find_slice(r, "forward"), bw = find_slice(r, "backward");
    CHECK(fw != TS_NONE32 && bw != TS_NONE32);
    CHECK_EQ_INT(r->flows.n, 1);
    CHECK_EQ_INT(r->flows.from[0], fw);
    CHECK_EQ_INT(r->flows.to[0], bw);
    CHECK_EQ_INT(r->flows.kind[0], TS_FLOW_FWDBWD);
    CHECK_EQ_STR(ts__rank_str(r, r->tracks[r->slices.track[fw]].name_id), "main");
    ts_job_destroy(t);
    remove_dir(dir);
}

TEST(ctf_unmatched_pop_and_unclosed_push_are_warned_not_fatal)
{
    if (!have_bt2())
        SKIP("/usr/bin/python3 has no bt2 module (python3-bt2)");
    const char *dir = make_ctf(
        L("100\t10\t11\tpop")
        L("200\t10\t11\tpush\tcat=cpu_op\tname=never_closed")
        L("500\t10\t11\tinstant\tcat=cpu_op\tname=mark"));
    CHECK(dir);
    ts_error err;
    ts_job *t = load(dir, &err);
    if (!t)
        TS_FAIL_("load failed: %s", err.msg);
    const ts_rank *r = ts_job_borrow_rank(t, 0);
    CHECK_EQ_INT(r->warn_count[TS_WARN_UNMATCHED_END], 1);
    CHECK_EQ_INT(r->warn_count[TS_WARN_UNMATCHED_BEGIN], 1);
    uint32_t s = find_slice(r, "never_closed");
    CHECK(s != TS_NONE32);
    CHECK_EQ_INT(r->slices.dur_ns[s], 300);   /* closed at the last event */
    CHECK_EQ_INT(r->instants.n, 1);
    ts_job_destroy(t);
    remove_dir(dir);
}

/* LTTng's ring buffers in discard mode drop events when full, and CTF says
 * how many between two packets: the loss is one recorder_losses warning on
 * the first process's rank (the buffers are the session's, not a rank's),
 * never silent. Without it the trace reads as whole. */
TEST(ctf_events_the_tracer_discarded_are_warned_once)
{
    if (!have_bt2())
        SKIP("/usr/bin/python3 has no bt2 module (python3-bt2)");
    const char *dir = make_ctf(
        L("100\t10\t11\tpush\tcat=cpu_op\tname=a")
        L("200\t10\t11\tpop")
        L("210\t20\t21\tinstant\tcat=cpu_op\tname=other_process")
        L("250\t0\t0\tdiscarded\tcount=42")
        L("300\t10\t11\tpush\tcat=cpu_op\tname=b")
        L("400\t10\t11\tpop"));
    CHECK(dir);
    ts_error err;
    ts_job *t = load(dir, &err);
    if (!t)
        TS_FAIL_("load failed: %s", err.msg);
    CHECK_EQ_INT(ts_job_n_ranks(t), 2);
    const ts_rank *r0 = ts_job_borrow_rank(t, 0), *r1 = ts_job_borrow_rank(t, 1);
    CHECK_EQ_INT(r0->warn_count[TS_WARN_RECORDER_LOSSES] + r1->warn_count[TS_WARN_RECORDER_LOSSES], 42);
    const ts_rank *w = r0->warn_count[TS_WARN_RECORDER_LOSSES] ? r0 : r1;
    CHECK(strstr(w->warn_first[TS_WARN_RECORDER_LOSSES], "discarded 42 events") != NULL);
    CHECK(find_slice(r0, "b") != TS_NONE32 || find_slice(r1, "b") != TS_NONE32);
    ts_job_destroy(t);
    remove_dir(dir);
    dir = make_ctf(L("100\t10\t11\tpush\tcat=cpu_op\tname=a") L("200\t10\t11\tpop"));
    CHECK(dir);
    t = load(dir, &err);
    if (!t)
        TS_FAIL_("load failed: %s", err.msg);
    CHECK_EQ_INT(ts_job_borrow_rank(t, 0)->warn_count[TS_WARN_RECORDER_LOSSES], 0);
    ts_job_destroy(t);
    remove_dir(dir);
}

/* A stream babeltrace cannot decode part-way (fuzz/corpus/fuzz_ctf/
 * decode_error_after_events.stream, found by fuzz_ctf) ends its graph with OK
 * and an error left on the thread: the load must fail naming it rather than
 * keep the events before it as if they were all, and must not leave the
 * error behind, since libbabeltrace2 aborts the next load that finds one. */
TEST(ctf_stream_that_cannot_be_decoded_fails_and_the_next_load_works)
{
    if (!have_bt2())
        SKIP("/usr/bin/python3 has no bt2 module (python3-bt2)");
    char dir[] = "/tmp/ts_ctf_bad_XXXXXX", cmd[512];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "cp fuzz/ctf_metadata.tsdl %s/metadata && cp fuzz/corpus/fuzz_ctf/decode_error_after_events.stream %s/stream",
             dir, dir);
    CHECK_EQ_INT(system(cmd), 0);
    for (int round = 0; round < 2; round++) {
        ts_error err;
        CHECK(load(dir, &err) == NULL);
        CHECK(strstr(err.msg, "cannot decode the CTF trace") != NULL);
    }
    const char *good = make_ctf(L("100\t10\t11\tpush\tcat=cpu_op\tname=a") L("200\t10\t11\tpop"));
    CHECK(good);
    ts_error err;
    ts_job *t = load(good, &err);
    if (!t)
        TS_FAIL_("load after a failed one: %s", err.msg);
    ts_job_destroy(t);
    remove_dir(good);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
}

/* Another provider's events: an entry/exit pair (nested, LIFO per thread)
 * becomes a cpu_op slice named by the pair and the payload's name field,
 * with the entry's payload as args; other events are instants; an exit
 * without its entry is warned. */
TEST(ctf_other_providers_events_become_slices_and_instants)
{
    if (!have_bt2())
        SKIP("/usr/bin/python3 has no bt2 module (python3-bt2)");
    const char *dir = make_ctf(
        L("100\t10\t11\tother:thing\tmsg=hello")
        L("150\t10\t11\tother:call_entry\tfuncname=outer")
        L("170\t10\t11\tother:call_entry\tfuncname=inner")
        L("190\t10\t11\tother:call_exit\tfuncname=inner")
        L("250\t10\t11\tother:call_exit\tfuncname=outer")
        L("260\t10\t11\tother:span_begin\tname=/a/b/file.py")
        L("300\t10\t12\tother:call_exit\tfuncname=lost")
        L("400\t10\t11\tother:span_end"));
    CHECK(dir);
    ts_error err;
    ts_job *t = load(dir, &err);
    if (!t)
        TS_FAIL_("load failed: %s", err.msg);
    const ts_rank *r = ts_job_borrow_rank(t, 0);
    CHECK_EQ_INT(r->slices.n, 3);
    uint32_t outer = find_slice(r, "other:call outer"), inner = find_slice(r, "other:call inner");
    uint32_t span = find_slice(r, "other:span file.py");
    CHECK(outer != TS_NONE32 && inner != TS_NONE32 && span != TS_NONE32);
    CHECK_EQ_INT(r->slices.dur_ns[outer], 100);
    CHECK_EQ_INT(r->slices.dur_ns[inner], 20);
    CHECK_EQ_INT(r->slices.depth[inner], 1);
    CHECK_EQ_INT(r->slices.parent[inner], outer);
    CHECK_EQ_INT(r->slices.kind[outer], TS_KIND_CPU_OP);
    CHECK_EQ_STR(ts__rank_str(r, r->slices.cat[outer]), "other");
    CHECK_EQ_STR(ts__slice_arg_str(r, outer, "funcname"), "outer");
    CHECK_EQ_INT(r->slices.dur_ns[span], 140);
    CHECK_EQ_INT(r->instants.n, 1);
    CHECK_EQ_STR(ts__rank_str(r, r->instants.name[0]), "other:thing");
    CHECK_EQ_INT(r->warn_count[TS_WARN_UNMATCHED_END], 1);
    CHECK_EQ_INT(r->n_events_read, 8);
    ts_job_destroy(t);
    remove_dir(dir);
}

TEST(ctf_other_providers_events_are_read_beside_ours)
{
    if (!have_bt2())
        SKIP("/usr/bin/python3 has no bt2 module (python3-bt2)");
    const char *dir = make_ctf(
        L("100\t10\t11\tpush\tcat=cpu_op\tname=op")
        L("150\t10\t11\tother:thing\tmsg=hello")
        L("200\t10\t11\tpop"));
    CHECK(dir);
    ts_error err;
    ts_job *t = load(dir, &err);
    if (!t)
        TS_FAIL_("load failed: %s", err.msg);
    const ts_rank *r = ts_job_borrow_rank(t, 0);
    CHECK_EQ_INT(r->slices.n, 1);
    CHECK_EQ_INT(r->slices.dur_ns[0], 100);
    CHECK_EQ_INT(r->instants.n, 1);
    CHECK_EQ_INT(r->instants.ts_ns[0], 150);
    CHECK_EQ_STR(ts__rank_str(r, r->instants.cat[0]), "other");
    CHECK_EQ_INT(r->n_events_read, 3);
    ts_job_destroy(t);
    remove_dir(dir);
}

/* Another tool's events that happen to use our names, with string fields
 * where ours are integers: read with defaults, never trusted blindly. */
TEST(ctf_events_named_like_ours_with_other_layouts_are_read_with_defaults)
{
    if (!have_bt2())
        SKIP("/usr/bin/python3 has no bt2 module (python3-bt2)");
    const char *dir = make_ctf(
        L("100\t10\t11\ttrainscope:complete\tphase=X\tts_ns=soon\tname=odd")
        L("200\t10\t11\ttrainscope:range_end\tid=seven")
        L("300\t10\t11\ttrainscope:pop"));
    CHECK(dir);
    ts_error err;
    ts_job *t = load(dir, &err);
    if (!t)
        TS_FAIL_("load failed: %s", err.msg);
    const ts_rank *r = ts_job_borrow_rank(t, 0);
    uint32_t s = find_slice(r, "odd");
    CHECK(s != TS_NONE32);
    CHECK_EQ_INT(r->slices.ts_ns[s], 100);   /* no usable ts_ns: the event time */
    CHECK_EQ_INT(r->warn_count[TS_WARN_UNMATCHED_END], 2);
    ts_job_destroy(t);
    remove_dir(dir);
}

TEST(ctf_garbage_metadata_is_a_parse_error_naming_the_directory)
{
    char dir[] = "/tmp/ts_ctfbad_XXXXXX";
    CHECK(mkdtemp(dir));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "printf 'this is not CTF metadata {' > %s/metadata", dir);
    CHECK_EQ_INT(system(cmd), 0);
    ts_error err;
    ts_job *t = load(dir, &err);
    CHECK(t == NULL);
    CHECK(err.status < 0);
    CHECK(strncmp(err.msg, dir, strlen(dir)) == 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
}

/* Build directory of the libraries under test: next to $TS_BIN. */
static const char *build_dir(void)
{
    static char bin[1024];
    snprintf(bin, sizeof bin, "%s", ts_test_cli());
    char *slash = strrchr(bin, '/');
    if (!slash)
        return ".";
    *slash = '\0';
    return bin;
}

/* The whole LTTng path: a session started by ts__lttng_session_start (as
 * `trainscope record --lttng` does), a program calling the host tracing API
 * with libtrainscope-lttng.so preloaded, the session stopped, and both
 * traces (CTF through babeltrace2, JSON from the runtime) read back: they
 * must hold the same ranges. */
TEST(ctf_reads_back_a_real_lttng_session_like_the_json_trace)
{
    char cmd[4096];
    const char *b = build_dir();
    snprintf(cmd, sizeof cmd, "lttng --version >/dev/null 2>&1 && test -f %s/libtrainscope-lttng.so", b);
    if (system(cmd) != 0) {
        SKIP("lttng-tools or %s/libtrainscope-lttng.so missing", b);
    }
    char dir[] = "/tmp/ts_lttng_XXXXXX", name[64];
    CHECK(mkdtemp(dir));
    snprintf(name, sizeof name, "trainscope-test-%d", (int)getpid());
    ts_error err;
    if (ts__lttng_session_start(dir, name, &err) != TS_OK)
        TS_FAIL_("session start: %s", err.msg);
    snprintf(cmd, sizeof cmd,
             "RANK=1 WORLD_SIZE=2 TRAINSCOPE_DIR=%s "
             "LD_PRELOAD='%s/libtrainscope-preload.so %s/libtrainscope-lttng.so' "
             "/usr/bin/python3 -c \"\n"
             "import ctypes, os\n"
             "if os.fork() == 0:\n"          /* a forked worker is not rank 1 */
             "    L = ctypes.CDLL(None)\n"
             "    L.ts_trace_push(b'cpu_op', b'worker')\n"
             "    L.ts_trace_pop()\n"
             "    os._exit(0)\n"
             "os.wait()\n"
             "L = ctypes.CDLL(None)\n"
             "L.ts_trace_counter.argtypes = [ctypes.c_char_p, ctypes.c_double]\n"
             "L.ts_lttng_alloc.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int32]\n"
             "for i in range(3):\n"
             "    L.ts_trace_push(b'user_annotation', b'ProfilerStep#%%d' %% i)\n"
             "    L.ts_trace_push(b'cpu_op', b'aten::mm')\n"
             "    L.ts_trace_pop()\n"
             "    L.ts_trace_pop()\n"
             "L.ts_trace_counter(b'queue', 5.0)\n"
             "L.ts_lttng_alloc(0x10, 100, 0)\n"
             "class Arg(ctypes.Structure):\n"
             "    _fields_ = [('key', ctypes.c_char_p), ('str', ctypes.c_char_p), ('num', ctypes.c_int64)]\n"
             "class Ev(ctypes.Structure):\n"
             "    _fields_ = [('size', ctypes.c_size_t), ('phase', ctypes.c_char), ('cat', ctypes.c_char_p),\n"
             "                ('name', ctypes.c_char_p), ('ts_ns', ctypes.c_int64), ('dur_ns', ctypes.c_int64),\n"
             "                ('pid', ctypes.c_int64), ('tid', ctypes.c_int64), ('value', ctypes.c_double),\n"
             "                ('flow_id', ctypes.c_uint64), ('flow_phase', ctypes.c_char), ('flow_cat', ctypes.c_char_p),\n"
             "                ('args', ctypes.POINTER(Arg)), ('n_args', ctypes.c_uint32)]\n"
             "now = L.ts_trace_now_ns\n"
             "now.restype = ctypes.c_int64\n"
             "def emit(phase, cat, name, pid, tid, dur, args):\n"
             "    a = (Arg * len(args))(*[Arg(k, s, n) for k, s, n in args])\n"
             "    e = Ev(ctypes.sizeof(Ev), phase, cat, name, now(), dur, pid, tid, 0.0, 0, b'\\\\0', None, a, len(args))\n"
             "    assert L.ts_trace_emit(ctypes.byref(e)) == 0\n"
             "emit(b'i', b'cpu_instant_event', b'[memory]', -1, -1, 0, [(b'Addr', None, 32), (b'Bytes', None, 256), (b'Device Id', None, 0)])\n"
             "emit(b'X', b'kernel', b'sgemm', 0, 7, 1500, [(b'correlation', None, 3)])\n"
             "\" >/dev/null 2>&1", dir, b, b);
    int rc = system(cmd);
    int stop = ts__lttng_session_stop(name, &err);
    CHECK_EQ_INT(rc, 0);
    if (stop != TS_OK)
        TS_FAIL_("session stop: %s", err.msg);

    char path[256];
    snprintf(path, sizeof path, "%s/lttng", dir);
    ts_job *ctf = load(path, &err);
    if (!ctf)
        TS_FAIL_("CTF load failed: %s", err.msg);
    /* The launcher's RANK numbers the process as in its JSON trace; the
     * forked worker gets the next free number. */
    CHECK_EQ_INT(ts_job_n_ranks(ctf), 2);
    const ts_rank *r = ts_job_borrow_rank(ctf, 0);
    CHECK_EQ_INT(r->rank, 1);
    CHECK_EQ_INT(r->world_size, 2);
    const ts_rank *worker = ts_job_borrow_rank(ctf, 1);
    CHECK_EQ_INT(worker->rank, 2);
    CHECK(find_slice(worker, "worker") != TS_NONE32);
    CHECK_EQ_INT(r->slices.n, 7);
    CHECK_EQ_INT(r->n_iterations, 3);
    CHECK_EQ_INT(r->counters.n, 1);
    CHECK_EQ_INT(r->instants.n, 2);   /* ts_lttng_alloc, and the emitted [memory] instant */
    uint32_t k = find_slice(r, "sgemm");
    CHECK(k != TS_NONE32 && r->tracks[r->slices.track[k]].kind == TS_TRACK_GPU_STREAM);
    CHECK(k != TS_NONE32 && r->slices.dur_ns[k] == 1500 && r->slices.corr[k] == 3);
    uint32_t mm = find_slice(r, "aten::mm");
    CHECK(mm != TS_NONE32 && r->slices.depth[mm] == 1);

    /* The main process's JSON (the worker writes its own file). */
    snprintf(cmd, sizeof cmd, "grep -l ProfilerStep %s/*.json > %s/json.txt", dir, dir);
    CHECK_EQ_INT(system(cmd), 0);
    snprintf(path, sizeof path, "%s/json.txt", dir);
    char json_path[256] = "";
    FILE *f = fopen(path, "r");
    CHECK(f && fgets(json_path, sizeof json_path, f));
    fclose(f);
    json_path[strcspn(json_path, "\n")] = '\0';
    ts_job *js = load(json_path, &err);
    if (!js)
        TS_FAIL_("JSON load failed: %s", err.msg);
    const ts_rank *rj = ts_job_borrow_rank(js, 0);
    CHECK_EQ_INT(rj->slices.n, r->slices.n);
    CHECK_EQ_INT(rj->n_iterations, r->n_iterations);
    CHECK_EQ_INT(rj->instants.n, 1);  /* ts_lttng_alloc exists in LTTng only */
    /* Both clocks are CLOCK_MONOTONIC: the first step starts within 1 ms. */
    int64_t d = rj->iterations[0].start_ns - r->iterations[0].start_ns;
    CHECK(d < 1000000 && d > -1000000);
    ts_job_destroy(js);
    ts_job_destroy(ctf);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
}

/* The real LTTng-UST trace of `ls -l` built with -finstrument-functions
 * (../shared/data/ctf-foreign/ls-ust.tgz): PROVENANCE.md counts 14,580 events,
 * 5,915 lttng_ust_cyg_profile:func_entry and as many func_exit, 2,037
 * malloc, 568 calloc, 109 free, 3 realloc. */
TEST(ctf_reads_a_real_foreign_lttng_trace)
{
    const char *tgz = ts_test_data("ctf-foreign/ls-ust.tgz");
    if (access(tgz, R_OK))
        SKIP("%s missing", tgz);
    char dir[] = "/tmp/ts_ctf_ls_XXXXXX", cmd[512], path[600];
    if (!mkdtemp(dir))
        TS_FAIL_("mkdtemp");
    snprintf(cmd, sizeof cmd, "tar -xzf %s -C %s", tgz, dir);
    CHECK_EQ_INT(system(cmd), 0);
    snprintf(path, sizeof path, "%s/ls-ust", dir);
    ts_error err;
    ts_job *t = load(path, &err);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
    if (!t)
        TS_FAIL_("load failed: %s", err.msg);
    CHECK_EQ_INT(ts_job_n_ranks(t), 1);
    const ts_rank *r = ts_job_borrow_rank(t, 0);
    CHECK_EQ_INT(r->n_events_read, 14580);
    uint32_t funcs = 0, deepest = 0, n_malloc = 0, n_calloc = 0;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        if (strncmp(ts__rank_str(r, r->slices.name[s]), "lttng_ust_cyg_profile:func 0x", 29)) continue;
        funcs++;
        if (r->slices.depth[s] > deepest) deepest = r->slices.depth[s];
    }
    for (uint32_t i = 0; i < r->instants.n; i++) {
        const char *name = ts__rank_str(r, r->instants.name[i]);
        n_malloc += !strcmp(name, "lttng_ust_libc:malloc");
        n_calloc += !strcmp(name, "lttng_ust_libc:calloc");
    }
    CHECK_EQ_INT(funcs, 5915);
    CHECK(deepest >= 3);   /* calls nest */
    CHECK_EQ_INT(n_malloc, 2037);
    CHECK_EQ_INT(n_calloc, 568);
    CHECK_EQ_INT(r->instants.n, 14580 - 2 * 5915 - 2);   /* all but the pairs and statedump start/end */
    CHECK_EQ_INT(r->warn_count[TS_WARN_UNMATCHED_END] + r->warn_count[TS_WARN_UNMATCHED_BEGIN], 0);
    ts_job_destroy(t);
}

/* ---- ctf_check.c: what libbabeltrace2 aborts or loops on, refused first ---- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *s = malloc(1 << 20);
    *len = s ? fread(s, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    return s;
}

/* Header sizes counted by hand from each metadata's packet.header: the
 * babeltrace writer's (fuzz/ctf_metadata.tsdl) magic 4 + uuid 16 + stream_id
 * 8 + stream_instance_id 8 bytes; LTTng's (ls-ust) 4 + 16 + 4 + 8. A header
 * holding an enum is not a layout the check reads. */
TEST(ctf_check_reads_the_packet_layouts_of_written_and_real_metadata)
{
    size_t len;
    uint32_t bits = 0;
    char *s = slurp("fuzz/ctf_metadata.tsdl", &len);
    CHECK(s != NULL);
    int rc0 = ts__ctf_check_layout_text(s, len, &bits);
    free(s);
    CHECK_EQ_INT(rc0, TS_OK);
    CHECK_EQ_INT(bits, 36 * 8);
    const char *tgz = ts_test_data("ctf-foreign/ls-ust.tgz");
    if (access(tgz, R_OK))
        SKIP("%s missing", tgz);
    char dir[] = "/tmp/ts_ctf_lay_XXXXXX", cmd[512], path[600];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "tar -xzf %s -C %s", tgz, dir);
    CHECK_EQ_INT(system(cmd), 0);
    snprintf(path, sizeof path, "%s/ls-ust/metadata", dir);
    s = slurp(path, &len);
    CHECK(s != NULL);
    int rc = ts__ctf_check_layout_text(s, len, &bits);   /* LTTng's packetized form */
    free(s);
    CHECK_EQ_INT(rc, TS_OK);
    CHECK_EQ_INT(bits, 32 * 8);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
    static const char odd[] = "typealias integer { size = 8; } := uint8_t;\n"
                              "trace { byte_order = le; packet.header := struct { enum : uint8_t { A = 0 } k; }; };\n"
                              "stream { packet.context := struct { uint8_t packet_size; }; };\n";
    CHECK_EQ_INT(ts__ctf_check_layout_text(odd, sizeof odd - 1, &bits), TS_ENODATA);
}

/* Rewrite LTTng's packetized metadata file at path as the plain text it
 * wraps (each packet: a 37-byte header whose bytes 24-27 give the content's
 * size in bits, then the text, then padding to its packet size, bytes 28-31). */
static int write_plain(const char *path)
{
    size_t len, out = 0;
    char *s = slurp(path, &len);
    if (!s) return -1;
    char *text = malloc(len + 1);
    for (size_t at = 0; text && at + 37 <= len;) {
        uint32_t content, packet;
        memcpy(&content, s + at + 24, 4);
        memcpy(&packet, s + at + 28, 4);
        if (packet == 0 || content / 8 < 37 || at + packet / 8 > len) break;
        memcpy(text + out, s + at + 37, content / 8 - 37);
        out += content / 8 - 37;
        at += packet / 8;
    }
    FILE *f = text && out ? fopen(path, "wb") : NULL;
    int rc = f && fwrite(text, 1, out, f) == out ? 0 : -1;
    if (f && fclose(f) != 0) rc = -1;
    free(text);
    free(s);
    return rc;
}

/* The real LTTng trace with one field of its first packet overwritten at the
 * byte LTTng's packet.context puts it (after the 32-byte header):
 * timestamp_begin 32, timestamp_end 40, packet_size 56, packet_seq_num 64.
 * libbabeltrace2 2.0.4 aborts the process on the all-ones values and loops
 * on a packet_size of 0; the load must instead fail naming file and byte,
 * with the metadata packetized as LTTng wrote it and as plain text. */
TEST(ctf_damaged_packets_are_refused_naming_the_file_and_byte)
{
    const char *tgz = ts_test_data("ctf-foreign/ls-ust.tgz");
    if (access(tgz, R_OK))
        SKIP("%s missing", tgz);
    static const struct { int at; unsigned char byte; const char *what; } cases[] = {
        {32, 0xff, "packet timestamp_begin has every bit set"}, {40, 0xff, "packet timestamp_end has every bit set"},
        {56, 0x00, "packet_size is 0"}, {64, 0xff, "packet packet_seq_num has every bit set"}};
    for (int packetized = 0; packetized < 2; packetized++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            char dir[] = "/tmp/ts_ctf_dmg_XXXXXX", cmd[512], path[600], want[700];
            CHECK(mkdtemp(dir) != NULL);
            snprintf(cmd, sizeof cmd, "tar -xzf %s -C %s", tgz, dir);
            CHECK_EQ_INT(system(cmd), 0);
            snprintf(path, sizeof path, "%s/ls-ust/u_0", dir);
            FILE *f = fopen(path, "r+b");
            CHECK(f != NULL);
            unsigned char v[8];
            memset(v, cases[c].byte, 8);
            CHECK(fseek(f, cases[c].at, SEEK_SET) == 0 && fwrite(v, 1, 8, f) == 8);
            CHECK_EQ_INT(fclose(f), 0);
            if (!packetized) {
                snprintf(path, sizeof path, "%s/ls-ust/metadata", dir);
                CHECK_EQ_INT(write_plain(path), 0);
            }
            snprintf(path, sizeof path, "%s/ls-ust", dir);
            ts_error err;
            ts_job *t = load(path, &err);
            CHECK(t == NULL);
            CHECK_EQ_INT(err.status, TS_EPARSE);
            snprintf(want, sizeof want, "%s/u_0: byte %d: %s", path, cases[c].at, cases[c].what);
            if (!strstr(err.msg, want)) TS_FAIL_("want '%s' in '%s'", want, err.msg);
            ts_job_destroy(t);
            snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
            CHECK_EQ_INT(system(cmd), 0);
        }
}
