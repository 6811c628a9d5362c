/* test_replay.c - collective cost models and the replay simulator.
 *
 * Cost models are checked against real nccl-tests sweeps (A100, 1-128 GPUs);
 * the simulator on small hand-built graphs whose schedule can be worked out
 * by hand, and on real traces (skipped when the shared data is absent).
 */
#include <math.h>
#include <stddef.h>

#include "test.h"
#include "core/core.h"
#include "replay/sim.h"
#include "replay/contention.h"
#include "replay/linkbound.h"
#include "replay/edit.h"
#include "trainscope/replay.h"

/* ---- collective cost models ---- */

TEST(coll_bus_factors_follow_nccl_tests)
{
    CHECK_NEAR(ts_coll_bus_factor(TS_COLL_ALL_REDUCE, 8), 2.0 * 7 / 8, 1e-12);
    CHECK_NEAR(ts_coll_bus_factor(TS_COLL_ALL_GATHER, 8), 7.0 / 8, 1e-12);
    CHECK_NEAR(ts_coll_bus_factor(TS_COLL_REDUCE_SCATTER, 4), 3.0 / 4, 1e-12);
    CHECK_NEAR(ts_coll_bus_factor(TS_COLL_ALL_TO_ALL, 2), 0.5, 1e-12);
    CHECK_NEAR(ts_coll_bus_factor(TS_COLL_BROADCAST, 16), 1.0, 1e-12);
}

TEST(coll_kind_recognised_from_op_and_kernel_names)
{
    ts_coll_kind k;
    CHECK(ts_coll_kind_from_name("c10d::allreduce_", &k) && k == TS_COLL_ALL_REDUCE);
    CHECK(ts_coll_kind_from_name("gloo:all_reduce", &k) && k == TS_COLL_ALL_REDUCE);
    CHECK(ts_coll_kind_from_name("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", &k) && k == TS_COLL_REDUCE_SCATTER);
    CHECK(ts_coll_kind_from_name("ncclKernel_AllGather_RING_LL_Sum_int8_t", &k) && k == TS_COLL_ALL_GATHER);
    CHECK(ts_coll_kind_from_name("nccl:all_to_all", &k) && k == TS_COLL_ALL_TO_ALL);
    CHECK(!ts_coll_kind_from_name("aten::mm", &k));
    CHECK(!ts_coll_kind_from_name("aten::reduce_sum", &k));
}

TEST(coll_model_recovers_exact_alpha_beta)
{
    ts_coll_model *m;
    CHECK_EQ_INT(ts_coll_model_create(&m), TS_OK);
    /* 8 ranks, alpha 20 us, bus bandwidth 100 GB/s = 100 bytes/ns. */
    for (uint64_t b = 1024; b <= (1u << 30); b *= 2) {
        double t = 20e3 + b * ts_coll_bus_factor(TS_COLL_ALL_REDUCE, 8) / 100.0;
        CHECK_EQ_INT(ts_coll_model_add_sample(m, TS_COLL_ALL_REDUCE, 8, b, (int64_t)t), TS_OK);
    }
    CHECK_EQ_INT(ts_coll_model_fit(m, NULL), TS_OK);
    int64_t p = ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, 100u << 20, 8);
    double want = 20e3 + (100u << 20) * 1.75 / 100.0;
    CHECK_NEAR(p, want, want * 0.001);
    ts_coll_fit_info fi;
    ts_coll_model_fit_info(m, 0, &fi);
    CHECK(fi.max_abs_err_pct < 0.1);
    /* Other kinds share the bus bandwidth: all-gather moves (n-1)/n, half as much. */
    int64_t ag = ts_coll_model_predict_ns(m, TS_COLL_ALL_GATHER, 100u << 20, 8);
    CHECK(ag < p && ag > p / 3);
    ts_coll_model_destroy(m);
}

/* The rate a link-bound job's all-reduces achieved together: their bytes
 * over the union of their spans, counted by hand: [0, 15) and [30, 40) are
 * 25 ns busy for 100 + 100 + 200 bytes = 16 bytes/ns; with a 150-byte
 * floor only the last counts (200 / 10); unknown sizes, unmeasured starts
 * and empty spans are left out; none left is 0. */
TEST(link_rate_is_bytes_over_the_busy_union)
{
    ts_link_span sp[] = {{30, 10, 200}, {0, 10, 100}, {5, 10, 100}, {50, 10, -1}, {INT64_MIN, 10, 100}, {60, 0, 100}};
    uint32_t n = 0;
    CHECK(fabs(ts__link_rate(sp, 6, 0, &n) - 16.0) < 1e-12);
    CHECK_EQ_INT(n, 3);
    CHECK(fabs(ts__link_rate(sp, 6, 150, &n) - 20.0) < 1e-12);
    CHECK_EQ_INT(n, 1);
    CHECK(ts__link_rate(sp, 6, 1000, &n) == 0);
    CHECK_EQ_INT(n, 0);
}

TEST(coll_model_given_bandwidth_and_latency)
{
    ts_coll_model *m;
    CHECK_EQ_INT(ts_coll_model_create(&m), TS_OK);
    CHECK_EQ_INT(ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, 1000, 2), -1);
    ts_coll_model_set_bandwidth(m, 10.0);   /* 10 bytes/ns */
    ts_coll_model_set_latency(m, 5.0);
    CHECK_EQ_INT(ts_coll_model_fit(m, NULL), TS_OK);
    /* 2 ranks all-reduce: factor 1; 1e6 bytes / 10 B/ns = 1e5 ns + 5e3. */
    CHECK_EQ_INT(ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, 1000000, 2), 105000);
    ts_coll_model_destroy(m);
}

/* The all-reduces of a real trace (the rerun set of 26 Nov, examples/testbed-rerun
 * at commit 4504fcb: cnn_w2_r50_b1, round 0: four 1 MB-cap buckets of 302592-8411176 bytes over 50 Mbit/s, 4
 * steps, transfer times in ns as replay reads them). The split between the
 * two lines that fits these best put the four 8411176-byte rows alone on
 * the ring side, where one size cannot place a line: it came out flat,
 * 2.3 s at 0 bytes. Each line must now span two sizes, so neither line's
 * fixed cost may exceed the fastest row (506 ms), and neither is flat. */
TEST(coll_model_lines_span_two_sizes_each)
{
    static const int64_t rows[][2] = {
        {302592, 529087000}, {302592, 506433000}, {302592, 541079500}, {302592, 628473500},
        {1180672, 714057500}, {1180672, 648811000}, {1180672, 677849000}, {1180672, 710576000},
        {2360320, 982915500}, {2360320, 1040674000}, {2360320, 1134744000}, {2360320, 965259500},
        {8411176, 2333488000}, {8411176, 2367990000}, {8411176, 2329216500}, {8411176, 2185754000},
    };
    ts_coll_model *m;
    CHECK_EQ_INT(ts_coll_model_create(&m), TS_OK);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        CHECK_EQ_INT(ts_coll_model_add_sample(m, TS_COLL_ALL_REDUCE, 2, (uint64_t)rows[i][0], rows[i][1]), TS_OK);
    CHECK_EQ_INT(ts_coll_model_fit(m, NULL), TS_OK);
    ts_coll_fit_info fi;
    ts_coll_model_fit_info(m, 0, &fi);
    for (int a = 0; a < TS_ALGO_COUNT; a++) {
        printf("line %d: %.1f ms + bytes / %.4g GB/s\n", a, fi.latency_us[a] / 1e3, fi.busbw_gbps[a]);
        CHECK(fi.latency_us[a] * 1e3 < 506433000);
        CHECK(fi.busbw_gbps[a] < 1);   /* a flat line reads 1e12 GB/s; the rows, ~0.005 */
    }
    /* A given bandwidth moves the bus bytes at it: 8411176 / 0.025 ns past the fixed cost. */
    int64_t fitted = ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, 0, 2);
    ts_coll_model_set_bandwidth(m, 0.025);
    CHECK_EQ_INT(ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, 8411176, 2), fitted + 336447040);
    ts_coll_model_destroy(m);
}

/* A real gloo calibration (that of the held-out set heldout-2026-11-24e, kept
 * in examples/workloads/calibration/ when the set left the tree: two
 * sweeps of bench/gloo_allreduce.py, 4 KiB-16 MiB), whose smallest rows do
 * not grow with size (~400 us each): the fitted lines must not price an
 * all-reduce below the smallest row far under it. Until 24 Nov 07:15 a
 * line whose best fit had a negative latency was forced through the origin,
 * and a 1-byte all-reduce came out at 0.1 us. */
TEST(coll_model_flat_small_rows_keep_their_latency)
{
    const char *path = "examples/workloads/calibration/heldout-2026-11-24e.log";
    ts_coll_model *m;
    ts_error err = {0};
    CHECK_EQ_INT(ts_coll_model_create(&m), TS_OK);
    CHECK_EQ_INT(ts_coll_model_load_nccl_tests(m, path, &err), TS_OK);
    CHECK_EQ_INT(ts_coll_model_fit(m, &err), TS_OK);
    int64_t one = ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, 1, 2);
    int64_t small = ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, 4096, 2);
    printf("1 B: %.1f us, 4 KiB: %.1f us\n", one / 1e3, small / 1e3);
    CHECK(small > 300000 && one >= small / 2 && one <= small);
    ts_coll_model_destroy(m);
}

TEST(coll_model_fit_without_samples_is_nodata)
{
    ts_coll_model *m;
    CHECK_EQ_INT(ts_coll_model_create(&m), TS_OK);
    ts_error err = {0};
    CHECK_EQ_INT(ts_coll_model_fit(m, &err), TS_ENODATA);
    CHECK(strstr(err.msg, "no samples") != NULL);
    ts_coll_model_destroy(m);
}

TEST(coll_model_rejects_missing_and_malformed_logs)
{
    ts_coll_model *m;
    CHECK_EQ_INT(ts_coll_model_create(&m), TS_OK);
    ts_error err = {0};
    CHECK_EQ_INT(ts_coll_model_load_nccl_tests(m, "/nonexistent/nccl.log", &err), TS_EIO);
    char path[] = "/tmp/ts_replay_badlog_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("# nThread 1 nGpus 2\n#   Rank  0 Pid 1\n#   Rank  1 Pid 1\n"
          "#  size count type redop time algbw busbw error time algbw busbw error\n"
          "  1024 256 float sum 30.1 0.03 0.03 0 30.0 0.03 0.03 0\n"
          "  2048x 512 float sum 30.1 0.03 0.03 0 30.0 0.03 0.03 0\n", f);
    fclose(f);
    err = (ts_error){0};
    CHECK_EQ_INT(ts_coll_model_load_nccl_tests(m, path, &err), TS_EPARSE);
    printf("%s\n", err.msg);
    CHECK(strstr(err.msg, "line 6") != NULL && strstr(err.msg, path) != NULL);
    CHECK_EQ_INT(ts_coll_model_fit(m, NULL), TS_ENODATA);   /* the failed load added nothing */
    remove(path);
    ts_coll_model_destroy(m);
}

/* Regression guard, not an accuracy claim: each real A100 sweep is fitted
 * and scored on its own rows, so the bounds below are what the two-line
 * alpha-beta fit measured on these very logs (2026-11-22), with margin: the
 * median per log is 2-9% and 9 sizes in 10 are within 20%. The test fails
 * when a change makes the fit worse than it was; the model's accuracy on
 * sweeps it was not fitted on is checked by the tests below. The worst single
 * sizes (74-93%) are the first, warm-up rows of the 64- and 128-GPU logs
 * (1 KiB taking 315 us and 1242 us where their neighbours take ~80 us) and a
 * 2x bump at 64-128 KiB that no alpha-beta line follows; they are printed,
 * not asserted. Raise the bounds only with a reason. */
TEST(coll_model_fit_error_on_its_own_a100_sweeps_regression)
{
    static const int gpus[] = {1, 2, 4, 8, 16, 32, 64, 128};
    double all_err[4096];
    uint32_t n_all = 0;
    for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++) {
        char rel[64];
        snprintf(rel, sizeof rel, "nccl-tests/nccl_%d.log", gpus[g]);
        const char *path = ts_test_data(rel);
        NEED_DATA(path);
        ts_coll_model *m;
        ts_error err = {0};
        CHECK_EQ_INT(ts_coll_model_create(&m), TS_OK);
        CHECK_EQ_INT(ts_coll_model_load_nccl_tests(m, path, &err), TS_OK);
        CHECK_EQ_INT(ts_coll_model_fit(m, &err), TS_OK);
        CHECK_EQ_INT(ts_coll_model_n_fits(m), 1);
        ts_coll_fit_info fi;
        ts_coll_model_fit_info(m, 0, &fi);
        CHECK_EQ_INT(fi.n_ranks, gpus[g]);
        printf("%3d GPUs: tree %.1f us %.1f GB/s | ring %.1f us %.1f GB/s | switch %llu B | median %.1f%% max %.1f%%\n",
               gpus[g], fi.latency_us[0], fi.busbw_gbps[0], fi.latency_us[1], fi.busbw_gbps[1],
               (unsigned long long)fi.switch_bytes, fi.median_abs_err_pct, fi.max_abs_err_pct);
        /* Re-read the rows to print prediction vs measurement per size. */
        FILE *f = fopen(path, "r");
        char line[1024];
        while (f && fgets(line, sizeof line, f)) {
            char *p = line[0] == '[' && strstr(line, ">:") ? strstr(line, ">:") + 2 : line;
            unsigned long long bytes, count;
            char type[16], op[16];
            double us;
            if (sscanf(p, "%llu %llu %15s %15s %lf", &bytes, &count, type, op, &us) != 5) continue;
            double pred = ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, bytes, (uint32_t)gpus[g]) / 1e3;
            double e = fabs(pred - us) / us * 100;
            if (n_all < sizeof all_err / sizeof all_err[0]) all_err[n_all++] = e;
            printf("    %12llu B  measured %10.1f us  predicted %10.1f us  error %5.1f%%\n", bytes, us, pred, e);
        }
        if (f) fclose(f);
        CHECK(fi.median_abs_err_pct < 10.0);
        ts_coll_model_destroy(m);
    }
    qsort(all_err, n_all, sizeof all_err[0], ts__cmp_double);
    double med = all_err[n_all / 2], p90 = all_err[n_all * 9 / 10], mx = all_err[n_all - 1];
    printf("all sweeps: %u sizes, median error %.1f%%, 90th percentile %.1f%%, worst %.1f%%\n",
           n_all, med, p90, mx);
    CHECK(n_all > 150);
    CHECK(med < 6.0);
    CHECK(p90 < 20.0);
}

static int sweep_rows(const char *path, unsigned long long *bytes, double *us, int max);

/* Calibrated on 8 and 64 GPUs, the model predicts the 32-GPU sweep's large
 * messages (bandwidth-bound) from the nearest fit: 1 GiB within 25% of the
 * time nccl_32.log measured for it (16562 us out of place). */
TEST(coll_model_extrapolates_across_group_sizes)
{
    ts_coll_model *m;
    ts_error err = {0};
    CHECK_EQ_INT(ts_coll_model_create(&m), TS_OK);
    const char *p64 = ts_test_data("nccl-tests/nccl_64.log");
    if (!ts_test_readable(p64)) ts_coll_model_destroy(m);
    NEED_DATA(p64);
    CHECK_EQ_INT(ts_coll_model_load_nccl_tests(m, p64, &err), TS_OK);
    CHECK_EQ_INT(ts_coll_model_load_nccl_tests(m, ts_test_data("nccl-tests/nccl_8.log"), &err), TS_OK);
    CHECK_EQ_INT(ts_coll_model_fit(m, &err), TS_OK);
    CHECK_EQ_INT(ts_coll_model_n_fits(m), 2);
    /* 32 GPUs, 1 GiB: the row measured in nccl_32.log. */
    const char *p32 = ts_test_data("nccl-tests/nccl_32.log");
    unsigned long long bytes[64];
    double us[64], truth = 0;
    int n = sweep_rows(p32, bytes, us, 64);
    for (int i = 0; i < n; i++)
        if (bytes[i] == 1u << 30) truth = us[i] * 1e3;
    CHECK_NEAR(truth, 16562e3, 1);
    int64_t pred = ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, 1u << 30, 32);
    printf("32 GPUs 1 GiB: from the 8+64-GPU fits %.1f us, measured %.1f us\n", pred / 1e3, truth / 1e3);
    CHECK(fabs((double)pred - truth) / truth < 0.25);
    ts_coll_model_destroy(m);
}

/* Rows of an nccl-tests log: message bytes and out-of-place time (us). */
static int sweep_rows(const char *path, unsigned long long *bytes, double *us, int max)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    int n = 0;
    while (f && n < max && fgets(line, sizeof line, f)) {
        char *p = line[0] == '[' && strstr(line, ">:") ? strstr(line, ">:") + 2 : line;
        unsigned long long count;
        char type[16], op[16];
        if (sscanf(p, "%llu %llu %15s %15s %lf", &bytes[n], &count, type, op, &us[n]) == 5) n++;
    }
    if (f) fclose(f);
    return n;
}

/* 90th percentile |error| (%) of the model's all-reduce times for `gpus`
 * against the sweep's rows of 1 MiB and more. */
static double p90_err_from_1mib(const ts_coll_model *m, int gpus)
{
    char rel[64];
    snprintf(rel, sizeof rel, "nccl-tests/nccl_%d.log", gpus);
    unsigned long long bytes[64];
    double us[64], e[64];
    int n = sweep_rows(ts_test_data(rel), bytes, us, 64), k = 0;
    for (int i = 0; i < n; i++) {
        if (bytes[i] < (1u << 20)) continue;
        double pred = ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, bytes[i], (uint32_t)gpus) / 1e3;
        e[k++] = fabs(pred - us[i]) / us[i] * 100;
    }
    if (k == 0) return INFINITY;
    qsort(e, (size_t)k, sizeof e[0], ts__cmp_double);
    return e[(k * 9 + 9) / 10 - 1];
}

/* --world beyond the measured group: a 16-GPU (two-server) sweep prices the
 * 64- and 128-GPU sweeps' messages of 1 MiB and more within 30% at the 90th
 * percentile (measured 21-22%; scaling the ring line's alpha with 2(n-1)
 * steps, as this model once did, gave 91% and 226%). Between two fitted
 * sizes the lines are interpolated: 16 and 64 GPUs price 32 within 25% (19%;
 * its own fit does 20%). */
TEST(coll_model_prices_group_sizes_it_was_not_fitted_on)
{
    const char *p16 = ts_test_data("nccl-tests/nccl_16.log");
    NEED_DATA(p16);
    ts_coll_model *m;
    ts_error err = {0};
    CHECK_EQ_INT(ts_coll_model_create(&m), TS_OK);
    CHECK_EQ_INT(ts_coll_model_load_nccl_tests(m, p16, &err), TS_OK);
    CHECK_EQ_INT(ts_coll_model_fit(m, &err), TS_OK);
    double e64 = p90_err_from_1mib(m, 64), e128 = p90_err_from_1mib(m, 128);
    printf("from 16 GPUs: p90 error >= 1 MiB at 64 GPUs %.1f%%, at 128 GPUs %.1f%%\n", e64, e128);
    CHECK(e64 < 30.0);
    CHECK(e128 < 30.0);
    CHECK_EQ_INT(ts_coll_model_load_nccl_tests(m, ts_test_data("nccl-tests/nccl_64.log"), &err), TS_OK);
    CHECK_EQ_INT(ts_coll_model_fit(m, &err), TS_OK);
    double e32 = p90_err_from_1mib(m, 32);
    printf("from 16 + 64 GPUs: p90 error >= 1 MiB at 32 GPUs %.1f%%\n", e32);
    CHECK(e32 < 25.0);
    ts_coll_model_destroy(m);
}

/* The logs' "Rank N ... on HOST" lines tell one server from several: with
 * sweeps at 8 GPUs (one server) and 32 (four), 16 GPUs is priced from the
 * 32-GPU fit, not between NVLink and the network (p90 error on sizes of
 * 1 MiB and more: 7.9%; 20% interpolating across the boundary). */
TEST(coll_model_keeps_to_its_side_of_the_server_boundary)
{
    const char *p8 = ts_test_data("nccl-tests/nccl_8.log");
    NEED_DATA(p8);
    ts_coll_model *m;
    ts_error err = {0};
    CHECK_EQ_INT(ts_coll_model_create(&m), TS_OK);
    CHECK_EQ_INT(ts_coll_model_load_nccl_tests(m, p8, &err), TS_OK);
    CHECK_EQ_INT(ts__coll_model_spans_servers(m, 8), 0);
    CHECK_EQ_INT(ts__coll_model_spans_servers(m, 16), -1);   /* one server seen: its size is unknown */
    CHECK_EQ_INT(ts_coll_model_load_nccl_tests(m, ts_test_data("nccl-tests/nccl_32.log"), &err), TS_OK);
    CHECK_EQ_INT(ts_coll_model_fit(m, &err), TS_OK);
    CHECK_EQ_INT(ts__coll_model_spans_servers(m, 32), 1);
    CHECK_EQ_INT(ts__coll_model_spans_servers(m, 16), 1);    /* 8 GPUs a server in the 32-GPU log */
    CHECK_EQ_INT(ts__coll_model_spans_servers(m, 4), 0);
    double e16 = p90_err_from_1mib(m, 16);
    printf("from 8 + 32 GPUs: p90 error >= 1 MiB at 16 GPUs %.1f%%\n", e16);
    CHECK(e16 < 12.0);
    ts_coll_model_destroy(m);
}

/* ---- the simulator on hand-built graphs ---- */

enum { K_CPU = 0, K_LAUNCH = 1, K_KERNEL = 4, K_COMM = 7, K_BARRIER = 9 };  /* ts_node_kind values */

/* One launch thread issuing three 10 ns kernels at t = 0, 1, 2 onto one
 * stream: the stream runs them back to back, 0-10, 10-20, 20-30. */
static void build_serial_stream(ts_sim *s, uint32_t k[3])
{
    ts__sim_init(s);
    uint32_t prev_l = TS_NONE32, prev_k = TS_NONE32;
    for (int i = 0; i < 3; i++) {
        uint32_t l = ts__sim_add_node(s, 0, K_LAUNCH, i, 1, i, i + 1);
        k[i] = ts__sim_add_node(s, 0, K_KERNEL, 0, 10, i * 10, i * 10 + 10);
        ts__sim_add_edge(s, l, k[i], 0, 0);                       /* launch.start -> kernel.start */
        if (prev_l != TS_NONE32) ts__sim_add_edge(s, prev_l, l, TS_SIM_FROM_END, 0);
        if (prev_k != TS_NONE32) ts__sim_add_edge(s, prev_k, k[i], TS_SIM_FROM_END, 0);
        prev_l = l; prev_k = k[i];
    }
    ts__sim_calibrate(s);
}

TEST(sim_serial_stream_runs_one_kernel_at_a_time)
{
    ts_sim s;
    uint32_t k[3];
    build_serial_stream(&s, k);
    CHECK_EQ_INT(ts__sim_run(&s, NULL), TS_OK);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(s.start_ns[k[i]], i * 10);
        CHECK_EQ_INT(s.end_ns[k[i]], i * 10 + 10);
    }
    /* Halving the middle kernel pulls the third one 5 ns earlier: it was
     * waiting for the stream, not for its launch. */
    s.self_ns[k[1]] = 5;
    CHECK_EQ_INT(ts__sim_run(&s, NULL), TS_OK);
    CHECK_EQ_INT(s.end_ns[k[1]], 15);
    CHECK_EQ_INT(s.start_ns[k[2]], 15);
    CHECK_EQ_INT(s.end_ns[k[2]], 25);
    ts__sim_free(&s);
}

static uint64_t sim_rnd(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

/* The same random acyclic graph (edges from lower to higher rows, any
 * points, gaps -20..79) into a and b. */
static void random_dag(ts_sim *a, ts_sim *b, uint32_t n, uint64_t seed)
{
    ts__sim_init(a);
    ts__sim_init(b);
    uint64_t x = seed;
    for (uint32_t i = 0; i < n; i++) {
        int64_t self = (int64_t)(sim_rnd(&x) % 50), t = (int64_t)i * 7;
        ts__sim_add_node(a, 0, K_CPU, t, self, t, t + self);
        ts__sim_add_node(b, 0, K_CPU, t, self, t, t + self);
    }
    for (uint32_t d = 1; d < n; d++)
        for (uint32_t k = sim_rnd(&x) % 4; k-- > 0;) {
            uint32_t src = (uint32_t)(sim_rnd(&x) % d);
            uint8_t flags = (uint8_t)(sim_rnd(&x) % 4);
            int64_t gap = (int64_t)(sim_rnd(&x) % 100) - 20;
            ts__sim_add_edge(a, src, d, flags, gap);
            ts__sim_add_edge(b, src, d, flags, gap);
        }
}

/* A sim run again on the same nodes and edges pulls each point in the
 * first run's order (sim.h, keep_order), evaluating first a source that a
 * reroute moved later: after random re-timings and reroutes (some changing
 * the point an edge constrains), every point equals Kahn's pass on a twin
 * that keeps no order, and the kept order was used. */
TEST(sim_runs_in_the_kept_order_equal_kahns_pass_after_reroutes)
{
    ts_replay a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    random_dag(&a.sim, &b.sim, 400, 3);
    a.sim.keep_order = true;
    uint64_t x = 11;
    uint32_t kept = 0;
    for (int round = 0; round < 30; round++) {
        kept += a.sim.order != NULL && !a.sim.order_stale;
        CHECK_EQ_INT(ts__sim_run(&a.sim, NULL), TS_OK);
        CHECK_EQ_INT(ts__sim_run(&b.sim, NULL), TS_OK);
        for (uint32_t i = 0; i < a.sim.n_nodes; i++) {
            CHECK_EQ_INT(a.sim.start_ns[i], b.sim.start_ns[i]);
            CHECK_EQ_INT(a.sim.end_ns[i], b.sim.end_ns[i]);
        }
        for (uint32_t i = 0; i < a.sim.n_nodes; i++)
            if (sim_rnd(&x) % 3 == 0) a.sim.self_ns[i] = b.sim.self_ns[i] = (int64_t)(sim_rnd(&x) % 80);
        for (uint32_t e = 0; e < a.sim.n_edges; e++) {
            if (sim_rnd(&x) % 10) continue;
            uint32_t d = a.sim.edst[e], src = (uint32_t)(sim_rnd(&x) % d);
            /* the same point constrained (as the rounds' lane edges); every fifth round, now and then the other */
            bool other = round % 5 == 4 && sim_rnd(&x) % 4 == 0;
            uint8_t flags = (uint8_t)((sim_rnd(&x) % 2) | ((a.sim.eflags[e] & TS_SIM_TO_END) ^ (other ? TS_SIM_TO_END : 0)));
            int64_t gap = (int64_t)(sim_rnd(&x) % 100) - 20;
            ts__edit_reroute(&a, e, src, flags, gap);
            ts__edit_reroute(&b, e, src, flags, gap);
        }
    }
    CHECK(kept >= 20);               /* runs took the kept order (not those after a changed point) */
    CHECK(b.sim.order == NULL);      /* the twin never kept one */
    ts__sim_free(&a.sim);
    ts__sim_free(&b.sim);
}

/* A compute kernel (0-100) and a communication kernel (0-60) on two streams
 * overlap; a host sync waits for both, so it ends at 100. */
TEST(sim_compute_and_comm_streams_overlap)
{
    ts_sim s;
    ts__sim_init(&s);
    uint32_t comp = ts__sim_add_node(&s, 0, K_KERNEL, 0, 100, 0, 100);
    uint32_t comm = ts__sim_add_node(&s, 0, K_COMM, 0, 60, 0, 60);
    uint32_t sync = ts__sim_add_node(&s, 0, K_CPU, 0, 0, 0, 100);
    ts__sim_add_edge(&s, comp, sync, TS_SIM_FROM_END | TS_SIM_TO_END, 0);
    ts__sim_add_edge(&s, comm, sync, TS_SIM_FROM_END | TS_SIM_TO_END, 0);
    ts__sim_calibrate(&s);
    CHECK_EQ_INT(ts__sim_run(&s, NULL), TS_OK);
    CHECK_EQ_INT(s.end_ns[sync], 100);
    s.self_ns[comm] = 120;              /* communication now the longer one */
    CHECK_EQ_INT(ts__sim_run(&s, NULL), TS_OK);
    CHECK_EQ_INT(s.end_ns[sync], 120);
    s.self_ns[comm] = 30;               /* hidden behind compute: no change */
    CHECK_EQ_INT(ts__sim_run(&s, NULL), TS_OK);
    CHECK_EQ_INT(s.end_ns[sync], 100);
    ts__sim_free(&s);
}

/* Rank 0 reaches the all-reduce at 10, rank 1 at 50 (after 50 ns of
 * compute); the barrier starts when the last one arrives, transfers for 20,
 * and both members end together at 70. */
TEST(sim_collective_waits_for_last_rank)
{
    ts_sim s;
    ts__sim_init(&s);
    uint32_t c0 = ts__sim_add_node(&s, 0, K_CPU, 0, 10, 0, 10);
    uint32_t c1 = ts__sim_add_node(&s, 1, K_CPU, 0, 50, 0, 50);
    uint32_t m0 = ts__sim_add_node(&s, 0, K_COMM, 10, 0, 10, 70);
    uint32_t m1 = ts__sim_add_node(&s, 1, K_COMM, 50, 0, 50, 70);
    uint32_t bar = ts__sim_add_node(&s, UINT16_MAX, K_BARRIER, 50, 20, 50, 70);
    ts__sim_add_edge(&s, c0, m0, TS_SIM_FROM_END, 0);
    ts__sim_add_edge(&s, c1, m1, TS_SIM_FROM_END, 0);
    ts__sim_add_edge(&s, m0, bar, 0, 0);
    ts__sim_add_edge(&s, m1, bar, 0, 0);
    ts__sim_add_edge(&s, bar, m0, TS_SIM_FROM_END | TS_SIM_TO_END, 0);
    ts__sim_add_edge(&s, bar, m1, TS_SIM_FROM_END | TS_SIM_TO_END, 0);
    ts__sim_calibrate(&s);
    CHECK_EQ_INT(ts__sim_run(&s, NULL), TS_OK);
    CHECK_EQ_INT(s.start_ns[bar], 50);
    CHECK_EQ_INT(s.end_ns[m0], 70);
    CHECK_EQ_INT(s.end_ns[m1], 70);
    /* The straggler gets faster by 30: everyone finishes 30 earlier. */
    s.self_ns[c1] = 20;
    CHECK_EQ_INT(ts__sim_run(&s, NULL), TS_OK);
    CHECK_EQ_INT(s.end_ns[m0], 40);
    CHECK_EQ_INT(s.end_ns[m1], 40);
    /* Speeding up the rank that was early changes nothing. */
    s.self_ns[c1] = 50;
    s.self_ns[c0] = 1;
    CHECK_EQ_INT(ts__sim_run(&s, NULL), TS_OK);
    CHECK_EQ_INT(s.end_ns[m0], 70);
    ts__sim_free(&s);
}

/* Parent/child nesting looks like a cycle between the two nodes but is none
 * between their points; a real cycle is reported with a node name. */
TEST(sim_nesting_is_no_cycle_but_a_real_cycle_is_reported)
{
    ts_sim s;
    ts__sim_init(&s);
    uint32_t parent = ts__sim_add_node(&s, 0, K_CPU, 0, 0, 0, 30);
    uint32_t child = ts__sim_add_node(&s, 0, K_CPU, 5, 20, 5, 25);
    ts__sim_add_edge(&s, parent, child, 0, 0);
    ts__sim_add_edge(&s, child, parent, TS_SIM_FROM_END | TS_SIM_TO_END, 0);
    ts__sim_calibrate(&s);
    CHECK_EQ_INT(ts__sim_run(&s, NULL), TS_OK);
    CHECK_EQ_INT(s.start_ns[child], 5);
    CHECK_EQ_INT(s.end_ns[parent], 30);
    s.self_ns[child] = 10;              /* the parent ends 10 earlier with it */
    CHECK_EQ_INT(ts__sim_run(&s, NULL), TS_OK);
    CHECK_EQ_INT(s.end_ns[parent], 20);
    s.name[child] = "aten::mm";
    ts__sim_add_edge(&s, parent, child, TS_SIM_FROM_END, 0);  /* parent.end -> child.start */
    ts_error err = {0};
    CHECK_EQ_INT(ts__sim_run(&s, &err), TS_EFORMAT);
    CHECK(strstr(err.msg, "cycle") != NULL);
    ts__sim_free(&s);
}

/* ---- replay of whole traces ---- */

#include "replay/contention.h"
#include "replay/gradients.h"
#include "trace/model.h"
#include "trainscope/graph.h"
#include "trainscope/ingest.h"

static uint32_t S(ts_rank *r, const char *s) { return ts__rank_intern(r, s, strlen(s)); }

/* One thread, two 100 ns iterations, each a 40 ns aten::mm then a 15 ns
 * aten::relu: ProfilerStep#k = [100k, 100k + 100), mm at +10, relu at +55. */
static ts_job *two_step_trace(void)
{
    ts_rank *r = ts__rank_create("hand.json");
    uint32_t th = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
    for (int k = 0; k < 2; k++) {
        char step[32];
        snprintf(step, sizeof step, "ProfilerStep#%d", k);
        ts__rank_add_slice(r, th, 100 * k, 100, S(r, step), S(r, "user_annotation"), TS_KIND_USER_ANNOTATION);
        ts__rank_add_slice(r, th, 100 * k + 10, 40, S(r, "aten::mm"), S(r, "cpu_op"), TS_KIND_CPU_OP);
        ts__rank_add_slice(r, th, 100 * k + 55, 15, S(r, "aten::relu"), S(r, "cpu_op"), TS_KIND_CPU_OP);
    }
    ts_job *t = NULL;
    if (ts__rank_finish(r, NULL) != TS_OK || ts__job_create(&r, 1, &t, NULL) != TS_OK) return NULL;
    return t;
}

TEST(replay_reproduces_hand_built_trace_and_scales_by_expected_amount)
{
    ts_job *t = two_step_trace();
    CHECK(t != NULL);
    ts_replay *r;
    CHECK_EQ_INT(ts_replay_run(t, NULL, &r, NULL), TS_OK);
    CHECK_EQ_INT(ts_replay_n_iterations(r), 2);
    CHECK_EQ_INT(ts_replay_measured_iteration_ns(r), 100);
    CHECK_EQ_INT(ts_replay_predicted_iteration_ns(r), 100);
    ts_replay_destroy(r);
    /* Halving aten::mm saves 20 ns per iteration, and nothing else moves. */
    const char *scales[] = {"cpu:aten::mm=0.5"};
    ts_replay_options o = {.size = sizeof o, .scales = scales, .n_scales = 1};
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, NULL), TS_OK);
    CHECK_EQ_INT(ts_replay_predicted_iteration_ns(r), 80);
    CHECK_NEAR(ts_replay_error_pct(r), -20.0, 1e-9);
    /* Each iteration, in trace order, as measured and as replayed. */
    for (uint32_t k = 0; k < 2; k++) {
        ts_replay_iteration_info it;
        ts_replay_iteration(r, k, &it);
        CHECK_EQ_INT(it.step, k);
        CHECK_EQ_INT(it.measured_iteration_ns, 100);
        CHECK_EQ_INT(it.predicted_iteration_ns, 80);
    }
    ts_replay_iteration_info past;
    ts_replay_iteration(r, 2, &past);
    CHECK_EQ_INT(past.step, -1);
    CHECK_EQ_INT(past.measured_iteration_ns, 0);
    ts_replay_destroy(r);
    /* A kind prefix that matches nothing (no kernels here) is an error, not a +0% what-if. */
    scales[0] = "kernel:aten::mm=0.5";
    ts_error err = {0};
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, &err), TS_EINVAL);
    CHECK(strstr(err.msg, "no op of the trace matches 'aten::mm' with that kind") != NULL);
    scales[0] = "aten::mm";
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, &err), TS_EINVAL);
    CHECK(strstr(err.msg, "expected [kind:]pattern=factor") != NULL);
    ts_job_destroy(t);
}

/* Regression (issue 21, 26 Nov 2026): `--scale aten::mm=0.5` matched no node
 * on a trace whose aten::mm ran nested in top-level ops, and printed +0.00%.
 * By hand, two 1000 ns steps on one thread, each: forward [0, 900) holding
 * aten::mm [100, 500), aten::mm [550, 750) around a c10d::allreduce_ call
 * [600, 700) (a node of its own), aten::mm [800, 850); optimizer [900, 1000).
 * Halving aten::mm saves 200 + (50 + 50) / 2 + 25 = 275 ns (the all-reduce
 * keeps its time); halving forward saves half its own 800 ns (900 less the
 * all-reduce it holds) = 400. */
static ts_job *nested_mm_trace(void)
{
    ts_rank *r = ts__rank_create("nested.json");
    uint32_t th = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
    uint32_t cpu = S(r, "cpu_op");
    for (int k = 0; k < 2; k++) {
        char step[32];
        int64_t b = 1000 * k;
        snprintf(step, sizeof step, "ProfilerStep#%d", k);
        ts__rank_add_slice(r, th, b, 1000, S(r, step), S(r, "user_annotation"), TS_KIND_USER_ANNOTATION);
        ts__rank_add_slice(r, th, b, 900, S(r, "forward"), cpu, TS_KIND_CPU_OP);
        ts__rank_add_slice(r, th, b + 100, 400, S(r, "aten::mm"), cpu, TS_KIND_CPU_OP);
        ts__rank_add_slice(r, th, b + 550, 200, S(r, "aten::mm"), cpu, TS_KIND_CPU_OP);
        ts__rank_add_slice(r, th, b + 600, 100, S(r, "c10d::allreduce_"), cpu, TS_KIND_CPU_OP);
        ts__rank_add_slice(r, th, b + 800, 50, S(r, "aten::mm"), cpu, TS_KIND_CPU_OP);
        ts__rank_add_slice(r, th, b + 900, 100, S(r, "optimizer"), cpu, TS_KIND_CPU_OP);
    }
    ts_job *t = NULL;
    if (ts__rank_finish(r, NULL) != TS_OK || ts__job_create(&r, 1, &t, NULL) != TS_OK) return NULL;
    return t;
}

static int64_t scaled_iteration_ns(ts_job *t, const char *spec)
{
    const char *scales[] = {spec};
    ts_replay_options o = {.size = sizeof o, .scales = scales, .n_scales = 1};
    ts_replay *r = NULL;
    if (ts_replay_run(t, &o, &r, NULL) != TS_OK) return -1;
    int64_t ns = ts_replay_predicted_iteration_ns(r);
    ts_replay_destroy(r);
    return ns;
}

TEST(scale_reaches_ops_nested_in_nodes_and_shortens_their_parents)
{
    ts_job *t = nested_mm_trace();
    CHECK(t != NULL);
    if (!t) return;
    CHECK_EQ_INT(scaled_iteration_ns(t, "forward=1"), 1000);
    CHECK_EQ_INT(scaled_iteration_ns(t, "aten::mm=0.5"), 1000 - 275);
    CHECK_EQ_INT(scaled_iteration_ns(t, "cpu:aten::mm=0.5"), 1000 - 275);
    CHECK_EQ_INT(scaled_iteration_ns(t, "forward=0.5"), 1000 - 400);
    CHECK_EQ_INT(scaled_iteration_ns(t, "aten::mm=2"), 1000 + 550);   /* doubling adds all 550 */
    ts_job_destroy(t);
}

/* Every multi-iteration trace in the shared data replays to its measured
 * iteration time (the dPRO gaps make this exact; a non-zero error would mean
 * the graph and the simulator disagree on the time model). */
TEST(replay_reproduces_unmodified_real_traces)
{
    static const char *const sets[][2] = {
        {"kineto/nccl_parser_config/nccl_data.json.gz", NULL},
        {"kineto/trace_filter/sampled_rank-0.json.gz", "kineto/trace_filter/sampled_rank-1.json.gz"},
        {"kineto/trace_compare/base/base.json.gz", NULL},
        {"torch-cpu-legacy/cnn_cpu_trace.json", NULL},
    };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        char p0[512], p1[512];
        snprintf(p0, sizeof p0, "%s", ts_test_data(sets[i][0]));
        const char *paths[2] = {p0, NULL};
        uint32_t n = 1;
        if (sets[i][1]) { snprintf(p1, sizeof p1, "%s", ts_test_data(sets[i][1])); paths[1] = p1; n = 2; }
        NEED_DATA(p0);
        ts_job *t;
        ts_error err = {0};
        CHECK_EQ_INT(ts_job_load(paths, n, NULL, &t, &err), TS_OK);
        ts_replay *r;
        CHECK_EQ_INT(ts_replay_run(t, NULL, &r, &err), TS_OK);
        printf("%s: %u iterations, measured %lld ns, predicted %lld ns\n", sets[i][0], ts_replay_n_iterations(r),
               (long long)ts_replay_measured_iteration_ns(r), (long long)ts_replay_predicted_iteration_ns(r));
        CHECK(ts_replay_n_iterations(r) >= 2);
        CHECK_EQ_INT(ts_replay_predicted_iteration_ns(r), ts_replay_measured_iteration_ns(r));
        /* Every iteration reproduced, and the reported figure is their median. */
        int64_t below = 0, above = 0, prev_step = -1;
        for (uint32_t k = 0; k < ts_replay_n_iterations(r); k++) {
            ts_replay_iteration_info it;
            ts_replay_iteration(r, k, &it);
            CHECK_EQ_INT(it.predicted_iteration_ns, it.measured_iteration_ns);
            CHECK(it.step > prev_step);
            prev_step = it.step;
            below += it.measured_iteration_ns < ts_replay_measured_iteration_ns(r);
            above += it.measured_iteration_ns > ts_replay_measured_iteration_ns(r);
        }
        CHECK(below <= ts_replay_n_iterations(r) / 2 && above <= ts_replay_n_iterations(r) / 2);
        for (uint32_t k = 0; k < ts_replay_n_ranks(r); k++) {
            ts_replay_rank_info ri;
            ts_replay_rank(r, k, &ri);
            CHECK_EQ_INT(ri.predicted_iteration_ns, ri.measured_iteration_ns);
        }
        ts_replay_destroy(r);
        ts_job_destroy(t);
    }
}

/* On a real single-rank NCCL trace: slower links make the iteration longer,
 * monotonically, and a faster network never makes it longer. */
TEST(replay_bandwidth_whatif_moves_in_the_expected_direction)
{
    const char *p = ts_test_data("kineto/nccl_parser_config/nccl_data.json.gz");
    NEED_DATA(p);
    ts_job *t;
    CHECK_EQ_INT(ts_job_load(&p, 1, NULL, &t, NULL), TS_OK);
    int64_t prev = 0;
    static const double gbps[] = {1000, 10, 1, 0.1};
    for (size_t i = 0; i < 4; i++) {
        ts_replay_options o = {.size = sizeof o, .bandwidth_gbps = gbps[i]};
        ts_replay *r;
        ts_error err = {0};
        CHECK_EQ_INT(ts_replay_run(t, &o, &r, &err), TS_OK);
        int64_t pred = ts_replay_predicted_iteration_ns(r);
        printf("%g GB/s: %lld ns\n", gbps[i], (long long)pred);
        CHECK(pred >= prev);
        if (i == 0) CHECK(pred <= ts_replay_measured_iteration_ns(r));
        prev = pred;
        ts_replay_destroy(r);
    }
    CHECK(prev > 2 * 222442191LL);   /* at 0.1 GB/s the 26 MB all-reduces dominate */
    ts_job_destroy(t);
}

/* ---- bucket regrouping ---- */

TEST(ddp_bucket_assignment_matches_pytorch_rule)
{
    /* Reduction order; first bucket capped at 1 MiB, then 4 MiB; a bucket
     * closes once it reaches its cap, so it may exceed it by one tensor. */
    const int64_t bytes[] = {40, 20480, 2048, 1048576, 2048, 4194304, 100, 4194304};
    uint32_t b[8];
    CHECK_EQ_INT(ts__ddp_buckets(bytes, 8, 1 << 20, 4 << 20, b), 3);
    CHECK(b[0] == 0 && b[3] == 0 && b[4] == 1 && b[5] == 1 && b[6] == 2 && b[7] == 2);
    CHECK_EQ_INT(ts__ddp_buckets(bytes, 8, 1 << 20, 1, b), 5);
    CHECK_EQ_INT(ts__ddp_buckets(bytes, 0, 1 << 20, 1, b), 0);
}

/* Regression 2026-11-26: `--nccl-tests /dev/zero` never ended (one line
 * that never ends) and --gradients read whole files without a bound. */
TEST(nccl_tests_logs_and_gradients_are_read_up_to_a_bound_that_the_error_names)
{
    ts_coll_model *m;
    ts_error err = {0};
    CHECK_EQ_INT(ts_coll_model_create(&m), TS_OK);
    CHECK_EQ_INT(ts_coll_model_load_nccl_tests(m, "/dev/zero", &err), TS_ERANGE);
    CHECK(strstr(err.msg, "/dev/zero: larger than 64 MiB, the most read for an nccl-tests log") != NULL);
    ts_coll_model_destroy(m);
    ts_gradients g;
    err = (ts_error){0};
    CHECK_EQ_INT(ts__gradients_load("/dev/zero", &g, &err), TS_ERANGE);
    CHECK(strstr(err.msg, "/dev/zero: larger than 64 MiB, the most read for a gradients file") != NULL);
}

/* Does loading an nccl-tests log of `text` fail to parse, with `why` in the
 * message? (Printed when not.) */
static bool log_is_refused(const char *text, const char *why)
{
    char path[] = "/tmp/ts_log_XXXXXX";
    FILE *f = fdopen(mkstemp(path), "w");
    fputs(text, f);
    fclose(f);
    ts_coll_model *m = NULL;
    ts_error err = {0};
    bool ok = ts_coll_model_create(&m) == TS_OK && ts_coll_model_load_nccl_tests(m, path, &err) == TS_EPARSE &&
              strstr(err.msg, why) != NULL;
    if (!ok) fprintf(stderr, "%s: got '%s', expected '%s'\n", path, err.msg, why);
    ts_coll_model_destroy(m);
    remove(path);
    return ok;
}

/* A log line longer than any nccl-tests line is an error naming it, where
 * it was cut in pieces that were each read as a line. */
TEST(nccl_tests_log_line_longer_than_the_reader_takes_is_an_error)
{
    char log[2200] = "# nThread 1 nGpus 2\n";
    size_t n = strlen(log);
    memset(log + n, '#', 2000);
    strcpy(log + n + 2000, "\n  1024 256 float sum 30.1 0.03 0.03 0 30.0 0.03 0.03 0\n");
    CHECK(log_is_refused(log, "line 2: longer than 1023 bytes"));
}

/* A huge size at the slowest bandwidth an option takes passes int64 ns:
 * the price is held at 2^62 (which replay then refuses), where llround gave
 * an unspecified, negative time (2026-11-26). A log row of 1e300 us is
 * refused. */
TEST(coll_model_prices_past_int64_are_held_at_2_to_the_62)
{
    ts_coll_model *m;
    CHECK_EQ_INT(ts_coll_model_create(&m), TS_OK);
    ts_coll_model_set_bandwidth(m, 1e-3);
    CHECK_EQ_INT(ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, UINT64_MAX / 2, 8), (int64_t)1 << 62);
    CHECK_EQ_INT(ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, 1000, 2), 1000000);   /* 1000 B x 2(n-1)/n at 1 MB/s */
    ts_coll_model_destroy(m);
    CHECK(log_is_refused("#  size count type redop time algbw busbw error time algbw busbw error\n"
                         "  1024 256 float sum 1e300 0.03 0.03 0 30.0 0.03 0.03 0\n",
                         "line 2: malformed nccl-tests row"));
}

TEST(gradients_json_is_read_and_malformed_files_rejected)
{
    char path[] = "/tmp/ts_grad_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs("{\"world_size\": 2, \"parameters\": [{\"name\": \"0.weight\", \"bytes\": 1048576, \"shape\": [512, 512]},\n"
          " {\"name\": \"0.bias\", \"bytes\": 2048}]}", f);
    fclose(f);
    ts_gradients g;
    ts_error err = {0};
    CHECK_EQ_INT(ts__gradients_load(path, &g, &err), TS_OK);
    CHECK_EQ_INT(g.n, 2);
    CHECK_EQ_INT(g.bytes[0], 1048576);
    CHECK_EQ_INT(g.bytes[1], 2048);
    ts__gradients_free(&g);
    f = fopen(path, "w");
    fputs("{\"parameters\": [{\"name\": \"w\", \"bytes\": -3}]}", f);
    fclose(f);
    CHECK_EQ_INT(ts__gradients_load(path, &g, &err), TS_EPARSE);
    printf("%s\n", err.msg);
    CHECK(strstr(err.msg, "byte 39") != NULL);
    /* sizes whose sum would wrap int64 (hostile files): refused at the one past 2^50 bytes */
    f = fopen(path, "w");
    fputs("[1125899906842620, 5]", f);   /* 2^50 - 4, then 5: byte 19 */
    fclose(f);
    err = (ts_error){0};
    CHECK_EQ_INT(ts__gradients_load(path, &g, &err), TS_ERANGE);
    CHECK(strstr(err.msg, "byte 19: the gradients add up to more than 2^50 bytes") != NULL);
    f = fopen(path, "w");
    fputs("[99999999999999999999]", f);   /* past int64 */
    fclose(f);
    err = (ts_error){0};
    CHECK_EQ_INT(ts__gradients_load(path, &g, &err), TS_EPARSE);
    CHECK(strstr(err.msg, "byte 1: expected a byte count") != NULL);
    f = fopen(path, "w");
    fputs("[1024, 2048]", f);
    fclose(f);
    err = (ts_error){0};
    CHECK_EQ_INT(ts__gradients_load(path, &g, &err), TS_OK);
    CHECK_EQ_INT(g.n, 2);
    ts__gradients_free(&g);
    remove(path);
}

/* The bundled 2-rank gloo example: regrouping into the partition the job
 * already had reproduces it; a tiny cap (three buckets instead of two)
 * predicts a different iteration. */
TEST(bucket_whatif_with_unchanged_partition_reproduces_the_trace)
{
    const char *paths[2] = {"examples/ddp_gloo/rank0.json", "examples/ddp_gloo/rank1.json"};
    if (!ts_test_readable(paths[0])) TS_FAIL_("%s absent: run from the repository root", paths[0]);
    char gpath[] = "/tmp/ts_grad_XXXXXX";
    FILE *f = fdopen(mkstemp(gpath), "w");
    /* make_trace.py's MLP 256 -> 512 -> 512 -> 10, fp32, registration order. */
    fputs("{\"parameters\": [{\"bytes\": 524288}, {\"bytes\": 2048}, {\"bytes\": 1048576},"
          " {\"bytes\": 2048}, {\"bytes\": 20480}, {\"bytes\": 40}]}", f);
    fclose(f);
    ts_job *t;
    ts_error err = {0};
    CHECK_EQ_INT(ts_job_load(paths, 2, NULL, &t, &err), TS_OK);
    ts_replay_options o = {.size = sizeof o, .bucket_mb = 1, .gradients_json = gpath};
    ts_replay *r;
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, &err), TS_OK);
    CHECK_EQ_INT(ts_replay_predicted_iteration_ns(r), ts_replay_measured_iteration_ns(r));
    ts_replay_destroy(r);
    o.bucket_mb = 0.001;
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, &err), TS_OK);
    CHECK(ts_replay_predicted_iteration_ns(r) != ts_replay_measured_iteration_ns(r));
    CHECK(strstr(ts_replay_warning(r, ts_replay_n_warnings(r) - 1), "10 gradient all-reduces regrouped into 15"));
    ts_replay_destroy(r);
    /* Without sizes (legacy traces carry none) the what-if says what it needs. */
    o.gradients_json = NULL;
    err = (ts_error){0};
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, &err), TS_EINVAL);
    CHECK(strstr(err.msg, "--gradients") != NULL);
    ts_job_destroy(t);
    remove(gpath);
}

static int budget;
static void *budget_alloc(void *ud, void *ptr, size_t old_size, size_t new_size)
{
    (void)ud; (void)old_size;
    if (new_size == 0) { free(ptr); return NULL; }
    if (budget-- <= 0) return NULL;
    return realloc(ptr, new_size);
}

/* Every allocation of a replay with a bucket what-if fails in turn: the
 * result is TS_ENOMEM (or success once the budget suffices), never a crash
 * or a leak (ASan checks the latter). */
TEST(replay_out_of_memory_is_reported_not_crashed)
{
    const char *paths[2] = {"examples/ddp_gloo/rank0.json", "examples/ddp_gloo/rank1.json"};
    if (!ts_test_readable(paths[0])) TS_FAIL_("%s absent: run from the repository root", paths[0]);
    char gpath[] = "/tmp/ts_grad_XXXXXX";
    FILE *f = fdopen(mkstemp(gpath), "w");
    fputs("[524288, 2048, 1048576, 2048, 20480, 40]", f);
    fclose(f);
    ts_job *t;
    ts_graph *g;
    CHECK_EQ_INT(ts_job_load(paths, 2, NULL, &t, NULL), TS_OK);
    CHECK_EQ_INT(ts_graph_create(t, NULL, &g, NULL), TS_OK);
    const char *scales[] = {"cpu:aten::*=0.9"};
    ts_replay_options o = {.size = sizeof o, .bucket_mb = 0.001, .gradients_json = gpath, .scales = scales, .n_scales = 1};
    int ok = 0;
    for (int k = 0; k < 200 && !ok; k++) {
        budget = k;
        ts_set_allocator(budget_alloc, NULL);
        ts_replay *r = NULL;
        ts_error err = {0};
        int rc = ts_replay_run_graph(g, &o, &r, &err);
        ts_set_allocator(NULL, NULL);
        CHECK(rc == TS_OK || rc == TS_ENOMEM);
        CHECK((rc == TS_OK) == (r != NULL));
        if (rc == TS_ENOMEM && !strstr(err.msg, "memory")) printf("k=%d: \"%s\"\n", k, err.msg);
        if (rc == TS_ENOMEM) CHECK(strstr(err.msg, "memory") != NULL);
        ok = rc == TS_OK;
        ts_replay_destroy(r);
    }
    CHECK(ok);
    ts_graph_destroy(g);
    ts_job_destroy(t);
    remove(gpath);
}

/* A 2-rank gloo DDP step built by hand, both ranks alike (ns):
 *   training thread: ProfilerStep#0 [0, 800); bwd_a [0, 100) readies A (2 MiB),
 *     c10d::allreduce_ [100, 110); bwd_b [110, 300) readies B (1.5 MiB),
 *     c10d [300, 310); bwd_c [310, 500) readies C (1.5 MiB), c10d [500, 510);
 *     opt [670, 770) after the last all-reduce;
 *   gloo worker: all-reduces at 100 ns per MiB: A [120, 320), B [320, 470),
 *     C [510, 660).
 * Recorded with a 1 MiB cap: buckets [A] [B] [C]. At 4 MiB: [A] [B+C], the
 * second launched when C is ready (500 + the measured 10 ns launch delay).
 * Its price is processor sharing (contention.c): the cost model fitted on
 * the old buckets is 100 ns per MiB with no fixed cost; A ran 95% beside
 * the training thread's ops (bwd_b, then a c10d call: sharing g = 1.95), B
 * wholly beside bwd_c (g = 2), C alone (g = 1), so the trace's load factor
 * is (200 + 150 + 150) / (200 x 1.95 + 150 x 2 + 150) = 0.595, and B+C,
 * alone after backward, takes 0.595 x 300 = 179 ns instead of the 300 its
 * bytes took beside compute: it ends at 689, opt runs [699, 799) (10 ns
 * after it, as measured), and the step predicts 829. */
/* Writes text to a new temporary file named from tmpl (a mkstemp template,
 * filled in place); the test removes it. */
static void temp_file(char *tmpl, const char *text)
{
    FILE *f = fdopen(mkstemp(tmpl), "w");
    if (f) { fputs(text, f); fclose(f); }
}

/* A 2-rank gloo DDP trace, both ranks alike: n_steps steps of step_ns, each
 * with the training-thread ops ops[] and the worker's all-reduces ar[]
 * ({start, duration}), times from the step's start. NULL on failure. */
typedef struct op_row { int64_t ts, dur; const char *name; } op_row;

/* The same with all-reduce i on gloo worker thread worker[i] (0 or 1; NULL:
 * all on the first), as gloo's two workers run two at once. */
static ts_job *gloo_ddp_trace_on(const op_row *ops, size_t n_ops, const int64_t (*ar)[2], const uint8_t *worker,
                                 size_t n_ar, int64_t step_ns, int n_steps)
{
    ts_rank *ranks[2];
    for (int k = 0; k < 2; k++) {
        ts_rank *r = ranks[k] = ts__rank_create(k ? "rank1.json" : "rank0.json");
        r->rank = k;
        r->world_size = 2;
        uint32_t th = ts__rank_track(r, TS_TRACK_THREAD, 100 + k, 1);
        uint32_t wks[2] = {ts__rank_track(r, TS_TRACK_THREAD, 100 + k, 2), ts__rank_track(r, TS_TRACK_THREAD, 100 + k, 3)};
        uint32_t cpu = S(r, "cpu_op");
        for (int it = 0; it < n_steps; it++) {
            int64_t t0 = it * step_ns;
            char step[32];
            snprintf(step, sizeof step, "ProfilerStep#%d", it);
            ts__rank_add_slice(r, th, t0, step_ns, S(r, step), S(r, "user_annotation"), TS_KIND_USER_ANNOTATION);
            for (size_t i = 0; i < n_ops; i++)
                ts__rank_add_slice(r, th, t0 + ops[i].ts, ops[i].dur, S(r, ops[i].name), cpu, TS_KIND_CPU_OP);
            for (size_t i = 0; i < n_ar; i++)
                ts__rank_add_slice(r, wks[worker ? worker[i] & 1 : 0], t0 + ar[i][0], ar[i][1], S(r, "gloo:all_reduce"),
                                   cpu, TS_KIND_CPU_OP);
        }
        if (ts__rank_finish(r, NULL) != TS_OK) return NULL;
    }
    ts_job *t = NULL;
    return ts__job_create(ranks, 2, &t, NULL) == TS_OK ? t : NULL;
}

static ts_job *gloo_ddp_trace(const op_row *ops, size_t n_ops, const int64_t (*ar)[2], size_t n_ar,
                                int64_t step_ns, int n_steps)
{
    return gloo_ddp_trace_on(ops, n_ops, ar, NULL, n_ar, step_ns, n_steps);
}

static ts_job *ddp_step_trace(void)
{
    static const op_row ops[] = {
        {0, 100, "bwd_a"}, {100, 10, "c10d::allreduce_"}, {110, 190, "bwd_b"}, {300, 10, "c10d::allreduce_"},
        {310, 190, "bwd_c"}, {500, 10, "c10d::allreduce_"}, {670, 100, "opt"},
    };
    static const int64_t ar[][2] = {{120, 200}, {320, 150}, {510, 150}};
    return gloo_ddp_trace(ops, 7, ar, 3, 800, 1);
}

/* --bandwidth GBPS at 0.025 GB/s with the gradients `grads` (registration
 * order) on trace t (destroyed), recorded with a 1 MiB cap: the measured and
 * predicted iteration (-1: failed) and whether the warnings say what the
 * what-if leaves out. */
typedef struct bw_result { int64_t measured, pred; bool said; } bw_result;

static bw_result bandwidth_gbps_whatif(ts_job *t, const char *grads)
{
    bw_result out = {-1, -1, false};
    char gpath[] = "/tmp/ts_grad_XXXXXX";
    temp_file(gpath, grads);
    ts_replay_options o = {.size = sizeof o, .bandwidth_gbps = 0.025, .gradients_json = gpath, .trace_bucket_mb = 1};
    ts_replay *r = NULL;
    ts_error err = {0};
    if (t && ts_replay_run(t, &o, &r, &err) == TS_OK) {
        out.measured = ts_replay_measured_iteration_ns(r);
        out.pred = ts_replay_predicted_iteration_ns(r);
        for (uint32_t i = 0; i < ts_replay_n_warnings(r); i++) {
            const char *w = ts_replay_warning(r, i);
            out.said |= strstr(w, "collectives priced as their bus bytes at that rate, shared by those in flight in "
                                  "the simulated schedule") && strstr(w, "left out:") && strstr(w, "nominal rate");
        }
    }
    printf("measured %lld ns, predicted %lld ns %s\n", (long long)out.measured, (long long)out.pred, err.msg);
    ts_replay_destroy(r);
    ts_job_destroy(t);
    remove(gpath);
    return out;
}

/* --bandwidth GBPS on a gloo trace whose all-reduces took far more than their
 * bytes (the testbed's cnn at 1 MB buckets over 50 Mbit/s, its measured times
 * kept: 8, 2, 1 and 0.25 MiB in 2330, 1030, 680 and 530 ms, one after
 * another on one worker, so one in flight at a time). A line fitted on those
 * has ~0.45 s at 0 bytes, time queued on the link, not a cost per call;
 * until 26 Nov 23:40 it stayed in every all-reduce's price (and a flat ring line
 * fitted on the largest size alone, 2.3 s, on the real trace: 15.8 s
 * predicted for a 2.4 s step). Expected by hand: at 0.025 GB/s each
 * all-reduce is its bytes (x 2(n-1)/n = 1 for 2 ranks) / 0.025 bytes per ns:
 * 335544320 + 83886080 + 41943040 + 10485760 = 471859200 ns in place of the
 * measured 4570 ms, the rest of the 4700 ms step as measured (the worker
 * picks A up 0.1 ms after its launch, opt starts 1 ms after D): 601859200. */
TEST(bandwidth_gbps_prices_bytes_on_the_wire_without_the_fits_queueing)
{
    static const op_row ops[] = {
        {0, 10000000, "bwd_a"}, {10000000, 100000, "c10d::allreduce_"}, {10100000, 9900000, "bwd_b"},
        {20000000, 100000, "c10d::allreduce_"}, {20100000, 9900000, "bwd_c"}, {30000000, 100000, "c10d::allreduce_"},
        {30100000, 9900000, "bwd_d"}, {40000000, 100000, "c10d::allreduce_"}, {4581200000, 50000000, "opt"},
    };
    static const int64_t ar[][2] = {{10200000, 2330000000}, {2340200000, 1030000000}, {3370200000, 680000000},
                                    {4050200000, 530000000}};
    bw_result b = bandwidth_gbps_whatif(gloo_ddp_trace(ops, 9, ar, 4, 4700000000, 2),
                                        "[262144, 1048576, 2097152, 8388608]");   /* D, C, B, A */
    CHECK_EQ_INT(b.measured, 4700000000);
    CHECK(llabs(b.pred - 601859200) <= 10);
    CHECK(b.said);   /* the what-if says what its model leaves out */
}

/* The same what-if with gloo's two workers: A (8 MiB) on one from 10.2 ms,
 * B (2 MiB) then C (1 MiB) on the other from 20.2 ms, all three ending
 * about together as traced (2390, 1200 and 1179 ms: two in flight
 * throughout). At 0.025 GB/s each is priced bytes x 40 ns x the number in
 * flight over its span on average, in the simulated schedule (the traced
 * sharing of 2 would make A 671 ms though B and C end long before it).
 * By hand: B and C lie within A's span, so each shares with it: 2 x 3 MiB
 * x 40 = 251658240 ns for the chain; A shares for that long: T = a (1 +
 * 251658240 / T), a = 8 MiB x 40 = 335544320, so T^2 = a T + a 251658240
 * = a T + 0.75 a^2, T = 1.5 a = 503316480. A ends at 513516480 instead
 * of 2400200000, and the 2500 ms step ends that much earlier: 613316480. */
TEST(bandwidth_gbps_shares_the_link_as_simulated_not_as_traced)
{
    static const op_row ops[] = {
        {0, 10000000, "bwd_a"}, {10000000, 100000, "c10d::allreduce_"}, {10100000, 9900000, "bwd_b"},
        {20000000, 100000, "c10d::allreduce_"}, {20100000, 9900000, "bwd_c"}, {30000000, 100000, "c10d::allreduce_"},
        {2401200000, 50000000, "opt"},
    };
    static const int64_t ar[][2] = {{10200000, 2390000000}, {20200000, 1200000000}, {1220200000, 1179000000}};
    static const uint8_t worker[] = {0, 1, 1};
    bw_result b = bandwidth_gbps_whatif(gloo_ddp_trace_on(ops, 7, ar, worker, 3, 2500000000, 2),
                                        "[1048576, 2097152, 8388608]");   /* C, B, A */
    CHECK_EQ_INT(b.measured, 2500000000);
    CHECK(llabs(b.pred - 613316480) <= 5000);   /* the rounds stop once no price moves by 1 us */
    CHECK(b.said);
}

TEST(bucket_whatif_merges_buckets_by_the_expected_amount)
{
    ts_job *t = ddp_step_trace();
    CHECK(t != NULL);
    char gpath[] = "/tmp/ts_grad_XXXXXX";
    temp_file(gpath, "[1572864, 1572864, 2097152]");   /* registration order: C, B, A */
    ts_replay_options o = {.size = sizeof o, .bucket_mb = 1, .gradients_json = gpath, .trace_bucket_mb = 1};
    ts_replay *r;
    ts_error err = {0};
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, &err), TS_OK);
    CHECK_EQ_INT(ts_replay_measured_iteration_ns(r), 800);
    CHECK_EQ_INT(ts_replay_predicted_iteration_ns(r), 800);   /* same buckets: as measured */
    ts_replay_destroy(r);
    o.bucket_mb = 4;
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, &err), TS_OK);
    printf("%s\n", ts_replay_warning(r, ts_replay_n_warnings(r) - 1));
    CHECK(strstr(ts_replay_warning(r, ts_replay_n_warnings(r) - 1), "3 gradient all-reduces regrouped into 2"));
    CHECK_EQ_INT(ts_replay_predicted_iteration_ns(r), 777);   /* 829 with the compute weighing 1 in g */
    ts_replay_destroy(r);
    /* The wrong recorded cap is caught, not silently used. */
    o.trace_bucket_mb = 25;
    err = (ts_error){0};
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, &err), TS_EFORMAT);
    CHECK(strstr(err.msg, "3 gradient all-reduces") != NULL);
    ts_job_destroy(t);
    remove(gpath);
}

/* A 2-rank gloo DDP step where backward ops start right after buckets
 * finish (ns, both ranks alike); recorded with a 0.5 MiB cap, buckets
 * [A 1 MiB] [B] [C] [D 0.5 MiB each]:
 *   training thread: bwd_a [0, 100), c10d [100, 110), bwd_b [110, 200),
 *     c10d [200, 210), bwd_c [210, 300), c10d [300, 310), bwd_x [310, 395),
 *     bwd_d [395, 500), c10d [500, 510), opt [700, 790);
 *   gloo worker: A [110, 200), B [210, 290), C [310, 390), D [510, 670).
 * The graph ties each bucket to the first training-thread op that starts
 * after it ends; only opt's is a real wait (DDP waits after the last
 * launch). At a 1 MiB cap B and C merge and run [310, >= 400): bwd_d, which
 * started after C ended, must not wait for the merged bucket. */
static ts_job *early_waiter_trace(void)
{
    static const op_row ops[] = {
        {0, 100, "bwd_a"}, {100, 10, "c10d::allreduce_"}, {110, 90, "bwd_b"}, {200, 10, "c10d::allreduce_"},
        {210, 90, "bwd_c"}, {300, 10, "c10d::allreduce_"}, {310, 85, "bwd_x"}, {395, 105, "bwd_d"},
        {500, 10, "c10d::allreduce_"}, {700, 90, "opt"},
    };
    static const int64_t ar[][2] = {{110, 90}, {210, 80}, {310, 80}, {510, 160}};
    return gloo_ddp_trace(ops, 10, ar, 4, 800, 1);
}

TEST(bucket_whatif_does_not_hold_backward_for_a_merged_bucket)
{
    ts_job *t = early_waiter_trace();
    CHECK(t != NULL);
    char gpath[] = "/tmp/ts_grad_XXXXXX";
    temp_file(gpath, "[524288, 524288, 524288, 1048576]");   /* registration order: D, C, B, A */
    ts_replay_options o = {.size = sizeof o, .bucket_mb = 1, .gradients_json = gpath, .trace_bucket_mb = 0.5,
                           .no_contention = 1};
    ts_replay *r;
    ts_error err = {0};
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, &err), TS_OK);
    printf("%s\n", ts_replay_warning(r, ts_replay_n_warnings(r) - 1));
    CHECK(strstr(ts_replay_warning(r, ts_replay_n_warnings(r) - 1), "4 gradient all-reduces regrouped into 3"));
    /* bwd_d keeps its place, D is launched at 500 as measured and opt waits
     * for it as measured: the step is unchanged. */
    CHECK_EQ_INT(ts_replay_measured_iteration_ns(r), 800);
    CHECK_EQ_INT(ts_replay_predicted_iteration_ns(r), 800);
    ts_replay_destroy(r);
    ts_job_destroy(t);
    remove(gpath);
}

/* A 2-rank gloo DDP step recorded with a 25 MiB cap (ns, both ranks
 * alike): buckets [A 1 MiB] [X1..X4, 0.5 MiB each], one worker lane:
 *   training thread: bwd_a [0, 100), c10d [100, 110), bwd_x [110, 500),
 *     c10d [500, 510), opt [870, 970);
 *   gloo worker: A [120, 200) (picked up 20 ns after its launch),
 *     X [700, 860) (picked up 200 ns late).
 * Cost model from the trace's own buckets: 80 ns per MiB, no fixed cost.
 * At a 0.5 MiB cap X splits into X1..X4 of 40 ns each, ready at 200, 300,
 * 400 and 500 (by bytes between the launches). X's late pick-up happened
 * once: X4, which holds X's last gradient, keeps it (starts at 700), while
 * X1..X3 take the rank's least pick-up, A's 20 ns: [220, 260), [320, 360),
 * [420, 460). X4 ends at 740, opt follows 10 ns later as measured, [750,
 * 850), and the step ends 120 ns early: 880. Until 22 Nov every piece
 * inherited the 200 ns (each started 200 ns after the previous one ended)
 * and the step took 1300. */
/* Predicted iteration of a what-if on t; -1 when the replay fails, -2 when
 * its last warning lacks want (NULL: no check). */
static int64_t whatif_ns(ts_job *t, const ts_replay_options *o, const char *want)
{
    ts_replay *r;
    ts_error err = {0};
    if (ts_replay_run(t, o, &r, &err) != TS_OK) { printf("%s\n", err.msg); return -1; }
    uint32_t n = ts_replay_n_warnings(r);
    const char *last = n ? ts_replay_warning(r, n - 1) : "";
    printf("%s\n", last);
    int64_t ns = want && !strstr(last, want) ? -2 : ts_replay_predicted_iteration_ns(r);
    ts_replay_destroy(r);
    return ns;
}

/* --grad-precision on ddp_step_trace (recorded at a 1 MiB cap: [A] [B] [C]
 * of 200, 150, 150 ns): at 2 bytes an element, with no calibration log (no
 * fixed cost) each transfer halves, plus the hook's 3 passes at 5 ns each
 * (--cast-cost 0,5): A [120, 235), B [320, 410), C [510, 600); opt, 10 ns
 * after the last as measured, runs [610, 710), and the step's 30 ns tail
 * after opt ends it at 740. At 4 bytes with no cast cost: as measured. */
TEST(grad_precision_halves_each_bucket_and_adds_the_hooks_passes)
{
    ts_job *t = ddp_step_trace();
    CHECK(t != NULL);
    char gpath[] = "/tmp/ts_grad_XXXXXX";
    temp_file(gpath, "[1572864, 1572864, 2097152]");
    ts_replay_options o = {.size = sizeof o, .gradients_json = gpath, .trace_bucket_mb = 1, .grad_bytes_per_elem = 4};
    CHECK_EQ_INT(whatif_ns(t, &o, "3 gradient all-reduces at 4 bytes"), 800);
    o.grad_bytes_per_elem = 2;
    o.cast_beta_ns = 5;
    CHECK_EQ_INT(whatif_ns(t, &o, "3 gradient all-reduces at 2 bytes"), 740);
    /* without gradients.json the trace's all-reduces have no size: refused, saying what to give */
    o.gradients_json = NULL;
    ts_replay *r;
    ts_error err = {0};
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, &err), TS_ENODATA);
    CHECK(strstr(err.msg, "give --gradients"));
    ts_job_destroy(t);
    remove(gpath);
}

/* The step of ops[] and ar[] (1000 ns, both ranks alike, gradients.json
 * text grads), recorded with a 25 MiB cap, regrouped at 0.5 MiB without
 * contention: the predicted step; -3 when regrouping at 25 MiB does not
 * reproduce it, -4 when the trace cannot be built. */
static int64_t split_at_half_mib(const op_row *ops, size_t n_ops, const int64_t (*ar)[2], const char *grads,
                                 const char *want)
{
    ts_job *t = gloo_ddp_trace(ops, n_ops, ar, 2, 1000, 1);
    if (!t) return -4;
    char gpath[] = "/tmp/ts_grad_XXXXXX";
    temp_file(gpath, grads);
    ts_replay_options o = {.size = sizeof o, .bucket_mb = 25, .gradients_json = gpath, .trace_bucket_mb = 25,
                           .no_contention = 1};
    int64_t ns = -3;
    if (whatif_ns(t, &o, NULL) == 1000) {   /* same buckets: as measured */
        o.bucket_mb = 0.5;
        ns = whatif_ns(t, &o, want);
    }
    ts_job_destroy(t);
    remove(gpath);
    return ns;
}

TEST(bucket_whatif_split_pieces_do_not_inherit_a_late_pickup)
{
    static const op_row ops[] = {
        {0, 100, "bwd_a"}, {100, 10, "c10d::allreduce_"}, {110, 390, "bwd_x"}, {500, 10, "c10d::allreduce_"},
        {870, 100, "opt"},
    };
    static const int64_t ar[][2] = {{120, 80}, {700, 160}};
    /* registration order: X4..X1, A */
    CHECK_EQ_INT(split_at_half_mib(ops, 5, ar, "[524288, 524288, 524288, 524288, 1048576]",
                                   "2 gradient all-reduces regrouped into 5"), 880);
}

/* A 2-rank gloo DDP step recorded with a 25 MiB cap (ns, both ranks
 * alike): buckets [A 1 MiB] [X1 X2, 0.5 MiB each], one worker lane; after
 * X is done DDP's finalize takes views of it and copies each gradient back:
 *   training thread: bwd_a [0, 100), c10d [100, 110), bwd_x [110, 500),
 *     c10d [500, 510), views [700, 705) [705, 710), copies X1 [710, 760)
 *     and X2 [760, 810), opt [810, 900);
 *   gloo worker: A [120, 200), X [510, 670).
 * At a 0.5 MiB cap X1 (ready at 300 by bytes, picked up after the rank's
 * least 10 ns, half of X's 160 ns) runs [310, 390) and X2 [510, 590); the
 * finalize wakes 30 ns after X2 as after X, takes the views [620, 630), and
 * X1's copy, which DDP makes once X1 is done, while X2 still runs, is no
 * longer left for the end: X2's copy [630, 680), opt [680, 770), the step
 * 870 (920 when both copies ran after X2, as before 22 Nov). */
TEST(bucket_whatif_split_copies_back_the_earlier_pieces_early)
{
    static const op_row ops[] = {
        {0, 100, "bwd_a"}, {100, 10, "c10d::allreduce_"}, {110, 390, "bwd_x"}, {500, 10, "c10d::allreduce_"},
        {700, 5, "aten::as_strided"}, {705, 5, "aten::as_strided"},
        {710, 50, "torch.distributed.ddp.reducer::copy_bucket_to_grad"},
        {760, 50, "torch.distributed.ddp.reducer::copy_bucket_to_grad"}, {810, 90, "opt"},
    };
    static const int64_t ar[][2] = {{120, 80}, {510, 160}};
    /* registration order: X2, X1, A */
    CHECK_EQ_INT(split_at_half_mib(ops, 9, ar, "[524288, 524288, 1048576]",
                                   "2 gradient all-reduces regrouped into 3"), 870);
}

/* bench/gloo_allreduce.py's log: rows priced like nccl-tests', and its
 * sharing test (matmuls at 425/s beside two 1 MiB all-reduces in flight,
 * 741/s alone) gives the compute slowdown per all-reduce in flight, which a
 * gloo bucket what-if then uses instead of fitting one on the trace. A log
 * without that line (real nccl-tests) gives none. */
/* kappa from the log at path after appending line to it (NULL: nothing);
 * -1 when the log does not load. */
static double kappa_after(const char *path, const char *line)
{
    FILE *f = fopen(path, "a");
    if (f && line) fputs(line, f);
    if (f) fclose(f);
    ts_coll_model *m;
    if (ts_coll_model_create(&m)) return -1;
    double k = ts_coll_model_load_nccl_tests(m, path, NULL) ? -1 : ts__coll_model_cpu_kappa(m);
    ts_coll_model_destroy(m);
    return k;
}

/* Regression (issue 21, 26 Nov 2026): on a loaded machine the sweep's
 * sharing test ran the matmuls faster beside the all-reduces (766/s) than
 * alone (366/s); the line was dropped without a word. It gives no slowdown
 * and is reported as disturbed, by its ratio. */
TEST(calibration_log_sharing_test_faster_beside_is_named_disturbed)
{
    char path[] = "/tmp/ts_gloo_XXXXXX";
    temp_file(path, "#  Rank  0 Group  0 Pid      0 on vm device  cpu\n#  Rank  1 Group  0 Pid      0 on vm device  cpu\n"
              "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
              "     1048576        262144     float     sum      -1    100.0   0.011   0.011      0\n"
              "     4194304       1048576     float     sum      -1    400.0   0.011   0.011      0\n"
              "# sharing with compute: 8 x 1 MiB all-reduces queued at once take 12322.2 us with the training "
              "thread idle, 24673.9 us (x2.00) with it running 128x128 matmuls; the matmuls run at 366/s alone and "
              "766/s (x2.09) beside them, 2.00 all-reduces running on average\n");
    ts_coll_model *m;
    CHECK_EQ_INT(ts_coll_model_create(&m), TS_OK);
    CHECK_EQ_INT(ts_coll_model_load_nccl_tests(m, path, NULL), TS_OK);
    CHECK_NEAR(ts__coll_model_cpu_kappa(m), 0.0, 1e-12);
    CHECK_NEAR(ts__coll_model_cpu_disturbed(m), 766.0 / 366.0, 1e-9);
    ts_coll_model_destroy(m);
    remove(path);
}

TEST(calibration_log_sharing_line_sets_the_compute_slowdown)
{
    char path[] = "/tmp/ts_gloo_XXXXXX";
    temp_file(path, "#  Rank  0 Group  0 Pid      0 on vm device  cpu\n#  Rank  1 Group  0 Pid      0 on vm device  cpu\n"
              "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
              "     1048576        262144     float     sum      -1    100.0   0.011   0.011      0\n"
              "     4194304       1048576     float     sum      -1    400.0   0.011   0.011      0\n");
    CHECK_NEAR(kappa_after(path, NULL), 0.0, 1e-12);
    CHECK_NEAR(kappa_after(path, "# sharing with compute: 8 x 1 MiB all-reduces queued at once take 13787.5 us with "
                           "the training thread idle, 18302.5 us (x1.33) with it running 128x128 matmuls; the matmuls "
                           "run at 741/s alone and 425/s (x0.57) beside them\n"),
               (741.0 / 425.0 - 1) / 2, 1e-9);
    /* A newer log says how many ran on average (the last ones run alone). */
    CHECK_NEAR(kappa_after(path, "# sharing with compute: 8 x 1 MiB all-reduces queued at once take 9890.5 us with "
                           "the training thread idle, 18632.6 us (x1.88) with it running 128x128 matmuls; the matmuls "
                           "run at 500/s alone and 250/s (x0.50) beside them, 1.60 all-reduces running on average\n"),
               1 / 1.6, 1e-9);
    ts_job *t = ddp_step_trace();
    CHECK(t != NULL);
    char gpath[] = "/tmp/ts_grad_XXXXXX";
    temp_file(gpath, "[1572864, 1572864, 2097152]");
    ts_replay_options o = {.size = sizeof o, .bucket_mb = 4, .gradients_json = gpath, .trace_bucket_mb = 1,
                           .nccl_tests_log = path};
    ts_replay *r;
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, NULL), TS_OK);
    bool said = false;
    for (uint32_t i = 0; i < ts_replay_n_warnings(r); i++)
        said = said || strstr(ts_replay_warning(r, i), "compute slowed 62% per concurrent gloo all-reduce (from the "
                                                       "calibration log)");
    CHECK(said);
    ts_replay_destroy(r);
    ts_job_destroy(t);
    remove(gpath);
    remove(path);
}

/* Two identical gloo DDP steps (ns, per step from its start; both ranks
 * alike) whose backward runs two ops of one name, a small one alone and a
 * large one beside the first bucket: conv [0, 100), c10d [100, 110),
 * conv [110, 410), c10d [410, 420), opt [700, 800); worker A [120, 400),
 * B [430, 650). Each op takes the same time in both steps whatever its
 * overlap, so the trace shows no contention: kappa must come out 0, not
 * read the second conv's size as a slowdown. */
static ts_job *same_name_layers_trace(void)
{
    static const op_row ops[] = {
        {0, 100, "conv"}, {100, 10, "c10d::allreduce_"}, {110, 300, "conv"}, {410, 10, "c10d::allreduce_"},
        {700, 100, "opt"},
    };
    static const int64_t ar[][2] = {{120, 280}, {430, 220}};
    return gloo_ddp_trace(ops, 5, ar, 2, 1000, 2);
}

TEST(contention_kappa_is_not_fitted_on_layers_that_share_an_op_name)
{
    ts_job *t = same_name_layers_trace();
    CHECK(t != NULL);
    char gpath[] = "/tmp/ts_grad_XXXXXX";
    temp_file(gpath, "[1048576, 1048576]");
    ts_replay_options o = {.size = sizeof o, .bucket_mb = 1, .gradients_json = gpath, .trace_bucket_mb = 1};
    ts_replay *r;
    ts_error err = {0};
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, &err), TS_OK);
    for (uint32_t i = 0; i < ts_replay_n_warnings(r); i++) {
        printf("%s\n", ts_replay_warning(r, i));
        CHECK(!strstr(ts_replay_warning(r, i), "compute slowed"));
    }
    CHECK(strstr(ts_replay_warning(r, ts_replay_n_warnings(r) - 1), "4 gradient all-reduces regrouped into 4"));
    CHECK_EQ_INT(ts_replay_predicted_iteration_ns(r), ts_replay_measured_iteration_ns(r));
    ts_replay_destroy(r);
    ts_job_destroy(t);
    remove(gpath);
}

/* Options grow at the end: a caller that knows only the fields up to
 * nccl_tests_log (an older header) still gets a replay, the newer fields zero. */
TEST(replay_accepts_options_from_an_older_header)
{
    ts_job *t = two_step_trace();
    CHECK(t != NULL);
    ts_replay_options o;
    memset(&o, 0xff, sizeof o);               /* garbage past the old size must be ignored */
    memset(&o, 0, offsetof(ts_replay_options, trace_bucket_mb));
    o.size = offsetof(ts_replay_options, trace_bucket_mb);
    ts_replay *r;
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, NULL), TS_OK);
    CHECK_EQ_INT(ts_replay_predicted_iteration_ns(r), 100);
    ts_replay_destroy(r);
    o.size = 0;
    ts_error err = {0};
    CHECK_EQ_INT(ts_replay_run(t, &o, &r, &err), TS_EINVAL);
    ts_job_destroy(t);
}

/* ---- CPU contention (gloo) ---- */

#include "replay/contention.h"

/* Four 100 ns "mm" ops on one thread; the second and the fourth ran beside an
 * all-reduce and took 200 ns (so kappa = 1 per concurrent all-reduce). In
 * the edited schedule the all-reduces are retired and one new all-reduce runs
 * after the ops: nothing overlaps any more, every op takes 100 ns, and the
 * thread finishes at 400 instead of 600. */
TEST(contention_fits_kappa_and_retimes_ops_for_new_overlap)
{
    ts_sim s;
    ts__sim_init(&s);
    uint32_t op[4], prev = TS_NONE32;
    int64_t t = 0;
    for (int i = 0; i < 4; i++) {
        int64_t d = i % 2 ? 200 : 100;
        op[i] = ts__sim_add_node(&s, 0, K_CPU, t, d, t, t + d);
        if (prev != TS_NONE32) ts__sim_add_edge(&s, prev, op[i], TS_SIM_FROM_END, 0);
        prev = op[i];
        t += d;
    }
    uint32_t m1 = ts__sim_add_node(&s, 0, K_COMM, 100, 0, 100, 300);   /* retired: self 0 */
    uint32_t m2 = ts__sim_add_node(&s, 0, K_COMM, 400, 0, 400, 600);
    uint32_t nw = ts__sim_add_node(&s, 0, K_COMM, 1000, 100, INT64_MIN, INT64_MIN);
    uint32_t ops[4] = {op[0], op[1], op[2], op[3]}, names[4] = {0, 0, 0, 0};
    uint32_t members[3] = {m1, m2, nw};
    uint8_t active[3] = {0, 0, 1};
    ts_contention ct = {.n_ranks = 1, .op = ops, .name_of = names, .n_ops = 4, .n_names = 1,
                        .member = members, .active = active, .n_members = 3};
    double kappa = 0;
    CHECK_EQ_INT(ts__contention_apply(&ct, &s, &kappa, NULL), TS_OK);
    CHECK_NEAR(kappa, 1.0, 1e-6);
    CHECK_EQ_INT(ts__sim_run(&s, NULL), TS_OK);
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(s.self_ns[op[i]], 100);
    CHECK_EQ_INT(s.end_ns[op[3]], 400);
    ts__sim_free(&s);
}

TEST(contention_keeps_measured_times_when_overlap_is_unchanged)
{
    ts_sim s;
    ts__sim_init(&s);
    uint32_t a = ts__sim_add_node(&s, 0, K_CPU, 0, 100, 0, 100);
    uint32_t b = ts__sim_add_node(&s, 0, K_CPU, 100, 200, 100, 300);
    ts__sim_add_edge(&s, a, b, TS_SIM_FROM_END, 0);
    uint32_t m = ts__sim_add_node(&s, 0, K_COMM, 100, 200, 100, 300);
    uint32_t ops[2] = {a, b}, names[2] = {0, 0}, members[1] = {m};
    uint8_t active[1] = {1};
    ts_contention ct = {.n_ranks = 1, .op = ops, .name_of = names, .n_ops = 2, .n_names = 1,
                        .member = members, .active = active, .n_members = 1};
    double kappa = 0;
    CHECK_EQ_INT(ts__contention_apply(&ct, &s, &kappa, NULL), TS_OK);
    CHECK(kappa > 0.5);
    CHECK_EQ_INT(s.self_ns[b], 200);
    CHECK_EQ_INT(ts__sim_run(&s, NULL), TS_OK);
    CHECK_EQ_INT(s.end_ns[b], 300);
    ts__sim_free(&s);
}

/* One rank: a compute op [0, 1000); an old all-reduce measured over [0, 400)
 * beside it (sharing g = 2: itself and the training thread) that took 400 ns
 * where the cost model says 100 alone, so the trace's load factor is 2; a
 * new all-reduce (model: 300 ns) either after the compute (g = 1) or from
 * time 0 beside it. */
static void sharing_case(bool beside_compute, int64_t alpha, double *load, int64_t *transfer)
{
    ts_sim s;
    ts__sim_init(&s);
    uint32_t op = ts__sim_add_node(&s, 0, K_CPU, 0, 1000, 0, 1000);
    uint32_t m0 = ts__sim_add_node(&s, 0, K_COMM, 0, 0, 0, 400);   /* retired: self 0 */
    uint32_t b0 = ts__sim_add_node(&s, UINT16_MAX, K_BARRIER, 0, 0, INT64_MIN, INT64_MIN);
    uint32_t n1 = ts__sim_add_node(&s, 0, K_COMM, 0, 0, INT64_MIN, INT64_MIN);
    uint32_t b1 = ts__sim_add_node(&s, UINT16_MAX, K_BARRIER, 0, 50, INT64_MIN, INT64_MIN);
    if (!beside_compute) ts__sim_add_edge(&s, op, n1, TS_SIM_FROM_END, 0);
    ts__sim_add_edge(&s, n1, b1, 0, 0);
    ts__sim_add_edge(&s, b1, n1, TS_SIM_FROM_END | TS_SIM_TO_END, 0);
    uint32_t ops[1] = {op}, names[1] = {0}, members[2] = {m0, n1}, bars[2] = {b0, b1}, cmem[2] = {m0, n1};
    uint8_t active[2] = {0, 1}, is_new[2] = {0, 1};
    int64_t work[2] = {100, 300}, meas[2] = {400, 0};
    int32_t same[2] = {-1, -1};
    ts_contention ct = {.n_ranks = 1, .op = ops, .name_of = names, .n_ops = 1, .n_names = 1,
                        .member = members, .active = active, .n_members = 2,
                        .n_colls = 2, .coll_bar = bars, .coll_member = cmem, .coll_work_ns = work,
                        .coll_meas_ns = meas, .coll_same = same, .coll_new = is_new, .alpha_ns = alpha};
    double kappa = 0;
    CHECK_EQ_INT(ts__contention_apply(&ct, &s, &kappa, NULL), TS_OK);
    CHECK_EQ_INT(ts__sim_run(&s, NULL), TS_OK);
    *load = ct.load;
    *transfer = s.self_ns[b1];
    ts__sim_free(&s);
}

TEST(contention_prices_new_allreduce_by_load_model_and_sharing)
{
    double load = 0;
    int64_t t = 0;
    sharing_case(false, 0, &load, &t);
    /* The measured one (400 ns, model 100) ran beside the compute all along:
     * g = 1 + 2 x 1 (the compute weighs TS_GLOO_COMPUTE_WEIGHT = 2), load =
     * 400 / (100 x 3). */
    CHECK_NEAR(load, 4.0 / 3.0, 1e-9);
    CHECK_EQ_INT(t, 400);            /* 4/3 x 300 x (1 + 0 + 0): alone after the compute */
    sharing_case(true, 0, &load, &t);
    /* Beside the compute the transfer T shares the core for the first 1000 ns:
     * T = 400 (1 + 2 x 1000 / T), whose root is 1116.5; a few rounds get close. */
    CHECK(t > 1080 && t < 1150);
    /* With a fixed cost of 50 ns, which sharing slows twice: the measured one
     * priced 100 x 3 + 50 x 2 = 400, load 1; the new one alone after the
     * compute costs its 300 (g = 1: no extra). */
    sharing_case(false, 50, &load, &t);
    CHECK_NEAR(load, 1.0, 1e-9);
    CHECK_EQ_INT(t, 300);
}

/* A 2-rank gloo DDP job of 3 steps recorded with a 25 MiB cap (ns, both
 * ranks alike), buckets [A 1 MiB] [X 1 MiB = X1 X2, 0.5 MiB each], where
 * the worker records X's end late, after the next step began (gloo does):
 *   training thread: bwd_a [0, 100), c10d [100, 110), bwd_x [110, 500),
 *     c10d [500, 510), views and copies [640, 660), Optimizer.step [700,
 *     790), then the next step at 1000;
 *   gloo worker: A [120, 200), X [510, 1030) (done by 630 in truth: the
 *     finalize took it at 640).
 * The graph ties X to the next step's first op after 1030, its c10d at
 * 1100. Split at 0.5 MiB (9 buckets for 6), that op is no waiter (DDP
 * waits only in the finalize, which the pieces now leave earlier): the
 * predicted step is 900 ns. Until 24 Nov the next step's c10d waited for X2
 * as if it had been recorded late too, and the step came out 930. */
TEST(bucket_whatif_next_step_does_not_wait_for_a_late_recorded_bucket)
{
    static const op_row ops[] = {
        {0, 100, "bwd_a"}, {100, 10, "c10d::allreduce_"}, {110, 390, "bwd_x"}, {500, 10, "c10d::allreduce_"},
        {640, 10, "aten::as_strided"}, {650, 10, "torch.distributed.ddp.reducer::copy_bucket_to_grad"},
        {700, 90, "Optimizer.step#SGD.step"},
    };
    static const int64_t ar[][2] = {{120, 80}, {510, 520}};
    ts_job *t = gloo_ddp_trace(ops, 7, ar, 2, 1000, 3);
    CHECK(t != NULL);
    char gpath[] = "/tmp/ts_grad_XXXXXX";
    temp_file(gpath, "[524288, 524288, 1048576]");   /* registration order: X2, X1, A */
    ts_replay_options o = {.size = sizeof o, .bucket_mb = 25, .gradients_json = gpath, .trace_bucket_mb = 25,
                           .no_contention = 1};
    CHECK_EQ_INT(whatif_ns(t, &o, NULL), 1000);   /* same buckets: as measured */
    o.bucket_mb = 0.5;
    int64_t ns = whatif_ns(t, &o, "6 gradient all-reduces regrouped into 9");
    CHECK_EQ_INT(ns, 900);
    ts_job_destroy(t);
    remove(gpath);
}

/* --windows in the library: three saved rounds of one job, each replayed
 * alone; the job's figures are the middle of the three (sorted here, apart
 * from the library's median), per rank too, the spread their least and
 * greatest; a window of other ranks is refused by name and not kept. */
static int64_t middle_of_3(int64_t a, int64_t b, int64_t c)
{
    return a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
}

TEST(replay_windows_keep_each_window_and_give_the_medians_over_them)
{
    const char *dir = "examples/workloads/traces/deepmlp_bucket1";
    char paths[3][256];
    const int rounds[3] = {2, 6, 10};
    for (int i = 0; i < 3; i++) snprintf(paths[i], sizeof paths[i], "%s/round%d", dir, rounds[i]);
    if (!ts_test_readable(paths[0])) SKIP("%s absent: run from the repository root", paths[0]);
    ts_replay_windows *w;
    CHECK_EQ_INT(ts_replay_windows_create(&w), TS_OK);
    int64_t m[3], p[3], rank1_p[3];
    ts_error err = {0};
    for (int i = 0; i < 3; i++) {
        const char *one = paths[i];
        ts_job *t;
        ts_replay *r;
        CHECK_EQ_INT(ts_job_load(&one, 1, NULL, &t, &err), TS_OK);
        CHECK_EQ_INT(ts_replay_run(t, NULL, &r, &err), TS_OK);
        m[i] = ts_replay_measured_iteration_ns(r);
        p[i] = ts_replay_predicted_iteration_ns(r);
        ts_replay_rank_info ri;
        ts_replay_rank(r, 1, &ri);
        rank1_p[i] = ri.predicted_iteration_ns;
        CHECK_EQ_INT(ts_replay_windows_add(w, paths[i], t, r, &err), TS_OK);
        ts_replay_destroy(r);
        ts_job_destroy(t);
    }
    CHECK_EQ_INT(ts_replay_windows_n(w), 3);
    CHECK_EQ_INT(ts_replay_windows_measured_ns(w), middle_of_3(m[0], m[1], m[2]));
    CHECK_EQ_INT(ts_replay_windows_predicted_ns(w), middle_of_3(p[0], p[1], p[2]));
    CHECK_EQ_INT(ts_replay_windows_n_ranks(w), 2);
    ts_replay_rank_info ri;
    ts_replay_windows_rank(w, 1, &ri);
    CHECK_EQ_INT(ri.rank, 1);
    CHECK_EQ_INT(ri.predicted_iteration_ns, middle_of_3(rank1_p[0], rank1_p[1], rank1_p[2]));
    ts_replay_window_info x;
    ts_replay_windows_window(w, 1, &x);
    CHECK_EQ_STR(x.path, paths[1]);
    CHECK_EQ_INT(x.measured_iteration_ns, m[1]);
    CHECK_NEAR(x.error_pct, 100.0 * (double)(p[1] - m[1]) / (double)m[1], 1e-9);
    ts_replay_spread sp;
    ts_replay_windows_spread(w, &sp);
    CHECK_EQ_INT(sp.n, 3);
    CHECK_EQ_INT(sp.measured_min_ns, m[0] < m[1] ? (m[0] < m[2] ? m[0] : m[2]) : (m[1] < m[2] ? m[1] : m[2]));
    CHECK_EQ_INT(sp.predicted_max_ns, p[0] > p[1] ? (p[0] > p[2] ? p[0] : p[2]) : (p[1] > p[2] ? p[1] : p[2]));
    /* One rank of another job: refused, naming both windows, and not kept. */
    const char *solo = "examples/ddp_gloo/rank0.json";
    ts_job *t;
    ts_replay *r;
    CHECK_EQ_INT(ts_job_load(&solo, 1, NULL, &t, &err), TS_OK);
    CHECK_EQ_INT(ts_replay_run(t, NULL, &r, &err), TS_OK);
    err = (ts_error){0};
    CHECK_EQ_INT(ts_replay_windows_add(w, solo, t, r, &err), TS_EINVAL);
    CHECK(strstr(err.msg, "window examples/ddp_gloo/rank0.json holds ranks 0 to 0 (1)") != NULL);
    CHECK(strstr(err.msg, paths[0]) != NULL);
    CHECK_EQ_INT(ts_replay_windows_n(w), 3);
    ts_replay_destroy(r);
    ts_job_destroy(t);
    ts_replay_windows_destroy(w);
}

/* Every allocation of keeping three windows fails in turn: TS_ENOMEM with a
 * message, never a crash or a leak (ASan), until the budget suffices. */
TEST(replay_windows_out_of_memory_is_reported_not_crashed)
{
    const char *paths[2] = {"examples/ddp_gloo/rank0.json", "examples/ddp_gloo/rank1.json"};
    if (!ts_test_readable(paths[0])) TS_FAIL_("%s absent: run from the repository root", paths[0]);
    ts_job *t;
    ts_replay *r;
    CHECK_EQ_INT(ts_job_load(paths, 2, NULL, &t, NULL), TS_OK);
    CHECK_EQ_INT(ts_replay_run(t, NULL, &r, NULL), TS_OK);
    int ok = 0;
    for (int k = 0; k < 200 && !ok; k++) {
        budget = k;
        ts_set_allocator(budget_alloc, NULL);
        ts_replay_windows *w = NULL;
        ts_error err = {0};
        int rc = ts_replay_windows_create(&w);
        for (int i = 0; rc == TS_OK && i < 3; i++) rc = ts_replay_windows_add(w, paths[0], t, r, &err);
        ts_set_allocator(NULL, NULL);
        CHECK(rc == TS_OK || rc == TS_ENOMEM);
        if (rc == TS_ENOMEM && w) CHECK(strstr(err.msg, "out of memory") != NULL);
        if (rc == TS_OK) CHECK_EQ_INT(ts_replay_windows_measured_ns(w), ts_replay_measured_iteration_ns(r));
        ok = rc == TS_OK;
        ts_replay_windows_destroy(w);
    }
    CHECK(ok);
    ts_replay_destroy(r);
    ts_job_destroy(t);
}
