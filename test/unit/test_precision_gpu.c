/* test_precision_gpu.c - the precision what-if on GPU runs: Kineto-shaped
 * traces written here (forward ops on the training thread, backward ops on
 * an autograd thread, kernels on a stream bound to their launches by
 * correlation id, device and host "[memory]" instants), whose answers are
 * worked out by hand below. Not for the CPU rules (test_precision.c).
 *
 * Each iteration (3, identical): unit 0 aten::linear in range m0 (CPU 20 us,
 * launches a kernel of K0 us), unit 1 aten::relu in m1 (CPU 50 us, a 5 us
 * kernel: its launch is the longer part); on thread 2 the backward of unit 1
 * (CPU 10 us, an 8 us kernel) and of unit 0 (CPU 10 us, a KB0 us kernel);
 * the step lasts STEP us. Device memory: unit 0's forward allocates 4096
 * bytes (1,000,000 alive before), its backward frees them; the host
 * allocates 10^9 bytes in unit 1, which the device's peak must not count.
 * Device instants are written as torch 2.x's Kineto does (cat
 * "cpu_instant_event", name "[memory]"), host ones as older Kineto did (cat
 * "[memory]"). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test.h"
#include "trainscope/ingest.h"
#include "trainscope/precision.h"
#include "replay/precision.h"

typedef struct gpu_run { double k0, kb0, step; } gpu_run;
static const gpu_run FP32 = {500, 1000, 2000}, BF16 = {100, 200, 1000}, BF16_FAST = {30, 200, 1000};

static int corr_id;

static void add(char **p, const char *fmt_event)
{
    *p += sprintf(*p, "%s%s", (*p)[-1] == '[' ? "" : ",", fmt_event);
}

/* A CPU op on thread tid with one launch inside it and its kernel of kern us. */
static void op(char **p, int tid, const char *name, double ts, double dur, int seq, double kern, double *gpu_t)
{
    char e[512];
    int c = ++corr_id;
    snprintf(e, sizeof e, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,"
             "\"dur\":%.3f,\"args\":{\"Sequence number\":%d,\"Input Dims\":[[64, 64]]}}", name, tid, ts, dur, seq);
    add(p, e);
    snprintf(e, sizeof e, "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":%d,"
             "\"ts\":%.3f,\"dur\":2,\"args\":{\"correlation\":%d}}", tid, ts + 1, c);
    add(p, e);
    double k = *gpu_t > ts + 3 ? *gpu_t : ts + 3;   /* the stream runs one kernel at a time */
    snprintf(e, sizeof e, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%d\",\"pid\":0,\"tid\":7,\"ts\":%.3f,"
             "\"dur\":%.3f,\"args\":{\"device\":0,\"stream\":7,\"correlation\":%d}}", c, k, kern, c);
    add(p, e);
    *gpu_t = k + kern;
}

static void range(char **p, int tid, const char *name, const char *cat, double ts, double dur)
{
    char e[256];
    snprintf(e, sizeof e, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f}",
             cat, name, tid, ts, dur);
    add(p, e);
}

static void mem(char **p, int device_type, double ts, long long bytes, long long total)
{
    char e[320];
    snprintf(e, sizeof e, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"%s\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,"
             "\"ts\":%.3f,\"args\":{\"Device Type\":%d,\"Device Id\":%d,\"Bytes\":%lld,\"Total Allocated\":%lld}}",
             device_type ? "cpu_instant_event" : "[memory]", ts, device_type, device_type ? 0 : -1, bytes, total);
    add(p, e);
}

static char *write_gpu_run(const gpu_run *g)
{
    static char buf[1 << 16];
    char *p = buf + sprintf(buf, "{\"traceEvents\":[");
    double gpu_t = 0;
    for (int k = 0; k < 3; k++) {
        double t = k * 5000.0;
        range(&p, 1, "ProfilerStep#0", "user_annotation", t, g->step);
        range(&p, 1, "m0", "user_annotation", t + 9, 25);
        op(&p, 1, "aten::linear", t + 10, 20, 10, g->k0, &gpu_t);
        mem(&p, 1, t + 12, 4096, 1000000 + 4096);
        range(&p, 1, "m1", "user_annotation", t + 39, 55);
        op(&p, 1, "aten::relu", t + 40, 50, 11, 5, &gpu_t);
        mem(&p, 0, t + 45, 1000000000, 1000000000);
        mem(&p, 0, t + 80, -1000000000, 0);
        range(&p, 2, "autograd::engine::evaluate_function: ReluBackward0", "cpu_op", t + 100, 10);
        op(&p, 2, "ReluBackward0", t + 100.5, 9, 11, 8, &gpu_t);
        range(&p, 2, "autograd::engine::evaluate_function: AddmmBackward0", "cpu_op", t + 120, 10);
        op(&p, 2, "AddmmBackward0", t + 120.5, 9, 10, g->kb0, &gpu_t);
        mem(&p, 1, t + 125, -4096, 1000000);
    }
    strcpy(p, "]}\n");
    char *path = strdup("/tmp/ts_test_precision_gpu_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, buf, strlen(buf)) != (ssize_t)strlen(buf)) abort();
    close(fd);
    return path;
}

static ts_prec_model *gpu_model_of(const gpu_run *low, ts_error *err)
{
    char *paths[2] = {write_gpu_run(&FP32), write_gpu_run(low)};
    ts_job *t[TS_PREC_COUNT] = {0};
    const char *names[TS_PREC_COUNT] = {paths[0], paths[1]};
    ts_prec_model *m = NULL;
    int rc = ts_job_load((const char *const *)&paths[0], 1, NULL, &t[0], err);
    if (!rc) rc = ts_job_load((const char *const *)&paths[1], 1, NULL, &t[1], err);
    if (!rc) rc = ts_prec_model_create((const ts_job *const *)t, names, &m, err);
    for (int i = 0; i < 2; i++) {
        ts_job_destroy(t[i]);
        unlink(paths[i]);
        free(paths[i]);
    }
    return rc ? NULL : m;
}

static ts_prec_model *gpu_model(ts_error *err) { return gpu_model_of(&BF16, err); }

TEST(precision_gpu_units_cost_the_longer_of_launch_and_kernels)
{
    ts_error err;
    ts_prec_model *m = gpu_model(&err);
    if (!m) TS_FAIL_("%s", err.msg);
    CHECK_EQ_INT(ts_prec_model_n_units(m), 2);
    ts_prec_unit_info u;
    ts_prec_model_unit(m, 0, &u);
    CHECK(!strcmp(u.op, "aten::linear") && !strcmp(u.scope, "m0"));
    CHECK_EQ_INT(u.fwd_ns[TS_PREC_FP32], 500000);    /* kernel 500 us > CPU 20 us */
    CHECK_EQ_INT(u.bwd_ns[TS_PREC_FP32], 1000000);   /* on thread 2, joined by sequence number */
    CHECK_EQ_INT(u.fwd_ns[TS_PREC_BF16], 100000);
    CHECK_EQ_INT(u.bwd_ns[TS_PREC_BF16], 200000);
    ts_prec_model_unit(m, 1, &u);
    CHECK_EQ_INT(u.fwd_ns[TS_PREC_FP32], 50000);     /* CPU 50 us > kernel 5 us */
    CHECK_EQ_INT(u.bwd_ns[TS_PREC_FP32], 10000);     /* CPU 10 us > kernel 8 us */
    bool noted = false;
    for (uint32_t i = 0; i < ts_prec_model_n_notes(m); i++) noted |= strstr(ts_prec_model_note(m, i), "GPU ops run in") != NULL;
    CHECK(noted);
    ts_prec_model_destroy(m);
}

TEST(precision_gpu_plan_time_and_device_peak_by_hand)
{
    ts_error err;
    ts_prec_model *m = gpu_model(&err);
    if (!m) TS_FAIL_("%s", err.msg);
    uint8_t prec[2] = {TS_PREC_FP32, TS_PREC_FP32};
    ts_prec_prediction p;
    ts_prec_predict(m, prec, &p);
    CHECK_EQ_INT(p.iteration_ns, 2000000);
    /* the simulation of the fp32 plan (gaps of 10 us before each op; CPU,
     * GPU clocks): linear 30, 530; relu 90, 535; relu's backward 110, 543;
     * linear's 130, 1543: 1543 us, against the measured 2000 */
    prec[0] = prec[1] = TS_PREC_BF16;
    ts_prec_predict(m, prec, &p);
    /* bf16: 30, 130; 90, 135; 110, 143; 130, 343: 2000 + 343 - 1543 = 800
     * (the runs hold no casts, so the one into unit 0 costs 0; a CPU-time
     * model would say 2000 - 30 + 30 = 2000) */
    CHECK_EQ_INT(p.iteration_ns, 800000);
    CHECK_EQ_INT(p.n_casts, 1);
    /* device memory only: 1,000,000 alive, + 4096 in unit 0's forward; the
     * host's 10^9 bytes are not the device's. The bf16 plan adds the cast
     * it inserts into unit 0: 64 x 64 elements x 2 bytes, alive until the
     * unit's backward */
    CHECK_EQ_INT(p.fp32_peak_bytes, 1000000 + 4096);
    CHECK_EQ_INT(p.peak_bytes, 1000000 + 4096 + 8192);
    ts_prec_model_destroy(m);
}

TEST(precision_gpu_run_against_a_cpu_run_is_refused)
{
    static const char cpu[] =
        "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#0\",\"pid\":1,\"tid\":1,"
        "\"ts\":0,\"dur\":100},{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,"
        "\"ts\":10,\"dur\":20,\"args\":{\"Sequence number\":10}},{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":"
        "\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":40,\"dur\":20,\"args\":{\"Sequence number\":11}}]}\n";
    char *paths[2] = {write_gpu_run(&FP32), strdup("/tmp/ts_test_precision_cpu_XXXXXX")};
    int fd = mkstemp(paths[1]);
    if (fd < 0 || write(fd, cpu, sizeof cpu - 1) != (ssize_t)(sizeof cpu - 1)) abort();
    close(fd);
    ts_error err;
    ts_job *t[TS_PREC_COUNT] = {0};
    const char *names[TS_PREC_COUNT] = {paths[0], paths[1]};
    ts_prec_model *m = NULL;
    CHECK_EQ_INT(ts_job_load((const char *const *)&paths[0], 1, NULL, &t[0], &err), TS_OK);
    CHECK_EQ_INT(ts_job_load((const char *const *)&paths[1], 1, NULL, &t[1], &err), TS_OK);
    CHECK_EQ_INT(ts_prec_model_create((const ts_job *const *)t, names, &m, &err), TS_EFORMAT);
    CHECK(m == NULL && strstr(err.msg, paths[1]) && strstr(err.msg, "GPU ops"));
    for (int i = 0; i < 2; i++) {
        ts_job_destroy(t[i]);
        unlink(paths[i]);
        free(paths[i]);
    }
}

TEST(precision_gpu_simulation_hides_launches_behind_kernels)
{
    ts_error err;
    ts_prec_model *m = gpu_model_of(&BF16_FAST, &err);
    if (!m) TS_FAIL_("%s", err.msg);
    uint8_t prec[2] = {TS_PREC_BF16, TS_PREC_BF16};
    ts_prec_prediction p;
    ts_prec_predict(m, prec, &p);
    /* unit 0's forward kernel takes 30 us at bf16: relu's 50 us on the CPU
     * is no longer hidden behind it. Clocks: 30, 60; 90, 95; 110, 118;
     * 130, 330: 2000 + 330 - 1543 = 787 us; the sum of each part's larger
     * time would say 440 + (30 + 200) + (50 + 10) = 730 */
    CHECK_EQ_INT(p.iteration_ns, 787000);
    ts_prec_model_destroy(m);
}

TEST(precision_align_pairs_a_longest_common_subsequence)
{
    /* ref a b c d e; seq a x b d e y: a-a, b-b, d-d, e-e; x, y, c unpaired */
    const uint64_t ref[] = {1, 2, 3, 4, 5}, seq[] = {1, 9, 2, 4, 5, 8};
    uint32_t match[6];
    CHECK_EQ_INT(ts__prec_align(ref, 5, seq, 6, match), TS_OK);
    const uint32_t want[6] = {0, TS_NONE32, 1, 3, 4, TS_NONE32};
    for (int j = 0; j < 6; j++) CHECK_EQ_INT(match[j], want[j]);
    /* equal sequences pair one to one; a swap keeps the longer side */
    const uint64_t swapped[] = {1, 3, 2, 4, 5};
    CHECK_EQ_INT(ts__prec_align(ref, 5, ref, 5, match), TS_OK);
    for (uint32_t j = 0; j < 5; j++) CHECK_EQ_INT(match[j], j);
    CHECK_EQ_INT(ts__prec_align(ref, 5, swapped, 5, match), TS_OK);
    int paired = 0;
    for (int j = 0; j < 5; j++) paired += match[j] != TS_NONE32;
    CHECK_EQ_INT(paired, 4);
    CHECK(match[0] == 0 && match[3] == 3 && match[4] == 4);
    CHECK(ts__prec_key("aten::linear", "fc1") != ts__prec_key("aten::linear", "fc2"));
    CHECK(ts__prec_key("aten::linear", "fc1") == ts__prec_key("aten::linear", "fc1"));
}

TEST(precision_gpu_profiler_cost_comes_off_cpu_parts_and_gaps)
{
    ts_error err;
    ts_prec_model *m = gpu_model_of(&BF16_FAST, &err);
    if (!m) TS_FAIL_("%s", err.msg);
    ts_prec_model_set_overhead(m, 1000);   /* 1 us per profiled slice */
    uint8_t prec[2] = {TS_PREC_BF16, TS_PREC_BF16};
    ts_prec_prediction p;
    ts_prec_predict(m, prec, &p);
    /* slices (runtime calls not counted): linear 1, relu 1, each backward
     * 2 (evaluate_function and its node); in the gaps ProfilerStep#0 and m0
     * before linear, m1 before relu. Gaps 8, 9, 10, 10; CPU parts 19, 49,
     * 8, 8. fp32: 27, 527; 85, 532; 103, 540; 121, 1540: 2000 + 1540 - 1543.
     * bf16: 27, 57; 85, 90; 103, 111; 121, 321: 2000 + 321 - 1543 */
    CHECK_EQ_INT(p.fp32_iteration_ns, 1997000);
    CHECK_EQ_INT(p.iteration_ns, 778000);
    ts_prec_model_destroy(m);
}

TEST(precision_gpu_model_fails_cleanly_when_memory_runs_out)
{
    char *paths[2] = {write_gpu_run(&FP32), write_gpu_run(&BF16_FAST)};
    ts_job *t[TS_PREC_COUNT] = {0};
    const char *names[TS_PREC_COUNT] = {paths[0], paths[1]};
    ts_error err;
    CHECK_EQ_INT(ts_job_load((const char *const *)&paths[0], 1, NULL, &t[0], &err), TS_OK);
    CHECK_EQ_INT(ts_job_load((const char *const *)&paths[1], 1, NULL, &t[1], &err), TS_OK);
    int failures = 0, successes = 0;
    for (long budget = 0; budget < 400; budget++) {
        ts_test_oom_budget = budget;
        ts_set_allocator(ts_test_oom_alloc, NULL);
        ts_prec_model *m = NULL;
        int rc = ts_prec_model_create((const ts_job *const *)t, names, &m, &err);
        ts_prec_prediction p = {0};
        uint8_t prec[2] = {TS_PREC_BF16, TS_PREC_BF16};
        if (rc == TS_OK) ts_prec_predict(m, prec, &p);
        ts_set_allocator(NULL, NULL);
        if (rc != TS_OK) {
            CHECK_EQ_INT(rc, TS_ENOMEM);
            CHECK(m == NULL);
            failures++;
        } else {
            CHECK_EQ_INT(p.iteration_ns, 787000);   /* as with memory to spare */
            successes++;
        }
        ts_prec_model_destroy(m);
    }
    CHECK(failures > 0 && successes > 0);
    for (int i = 0; i < 2; i++) {
        ts_job_destroy(t[i]);
        unlink(paths[i]);
        free(paths[i]);
    }
}
