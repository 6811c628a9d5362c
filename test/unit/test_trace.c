/* test_trace.c - the columnar model: sorting, nesting, flow binding,
 * iterations, duplicate ranks, out-of-memory during building. */
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "trace/model.h"
#include "ingest/ingest.h"

static uint32_t S(ts_rank *r, const char *s) { return ts__rank_intern(r, s, strlen(s)); }

TEST(finish_sorts_each_track_by_time_with_parents_first)
{
    ts_rank *r = ts__rank_create("t.json");
    uint32_t t = ts__rank_track(r, TS_TRACK_THREAD, 1, 7);
    ts__rank_add_slice(r, t, 500, 10, S(r, "late"), 0, TS_KIND_CPU_OP);
    ts__rank_add_slice(r, t, 100, 5, S(r, "child"), 0, TS_KIND_CPU_OP);
    ts__rank_add_slice(r, t, 100, 50, S(r, "parent"), 0, TS_KIND_CPU_OP);
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    CHECK_EQ_STR(ts__rank_str(r, r->slices.name[0]), "parent");
    CHECK_EQ_STR(ts__rank_str(r, r->slices.name[1]), "child");
    CHECK_EQ_STR(ts__rank_str(r, r->slices.name[2]), "late");
    CHECK_EQ_INT(r->slices.depth[1], 1);
    CHECK_EQ_INT(r->slices.parent[1], 0);
    CHECK_EQ_INT(r->slices.parent[2], TS_NONE32);
    CHECK_EQ_INT(r->tracks[t].n_slices, 3);
    ts__rank_destroy(r);
}

/* The builder keeps the model's invariant whatever a reader hands it (CTF
 * fields of a damaged trace, say): no negative duration, and ts + dur within
 * int64, so every analysis may add them (UBSan in `make test` would stop on an
 * overflow in finish). */
TEST(added_slices_keep_duration_non_negative_and_end_within_int64)
{
    ts_rank *r = ts__rank_create("t.json");
    uint32_t t = ts__rank_track(r, TS_TRACK_THREAD, 1, 7);
    ts__rank_add_slice(r, t, 100, -5, S(r, "negative"), 0, TS_KIND_CPU_OP);
    ts__rank_add_slice(r, t, INT64_MAX - 10, INT64_MAX, S(r, "past the end"), 0, TS_KIND_CPU_OP);
    ts__rank_add_slice(r, t, INT64_MIN, INT64_MAX, S(r, "whole range"), 0, TS_KIND_CPU_OP);
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    for (uint32_t i = 0; i < r->slices.n; i++) {
        const char *name = ts__rank_str(r, r->slices.name[i]);
        int64_t end;
        CHECK(r->slices.dur_ns[i] >= 0);
        CHECK(!__builtin_add_overflow(r->slices.ts_ns[i], r->slices.dur_ns[i], &end));
        if (!strcmp(name, "negative")) CHECK_EQ_INT(r->slices.dur_ns[i], 0);
        if (!strcmp(name, "past the end")) CHECK_EQ_INT(r->slices.dur_ns[i], 10);
        if (!strcmp(name, "whole range")) CHECK_EQ_INT(r->slices.dur_ns[i], INT64_MAX);
    }
    ts__rank_destroy(r);
}

/* Tracks laid out as profilers write them (sorted blocks: CPU ops, then
 * runtime calls), with lone late rows, and in random order: after finish
 * every track is in (start, longer first) order and holds the same rows.
 * Durations are chosen so that nothing overlaps (no warnings): each row is
 * a point in time with its own duration key. */
TEST(finish_sorts_blocked_outlying_and_random_tracks)
{
    enum { N = 4000 };
    ts_rank *r = ts__rank_create("t.json");
    uint32_t tk[3] = {ts__rank_track(r, TS_TRACK_THREAD, 1, 1), ts__rank_track(r, TS_TRACK_THREAD, 1, 2),
                      ts__rank_track(r, TS_TRACK_THREAD, 1, 3)};
    uint64_t seed = 12345;
    int64_t sum_ts[3] = {0, 0, 0};
    for (int i = 0; i < N; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        int64_t ts0 = (int64_t)i * 1000, ts1, ts2 = (int64_t)(seed >> 40) % (N * 1000);
        /* track 1: three blocks of increasing times, each restarting at 0,
         * and a late row every 97 */
        ts1 = (int64_t)(i % (N / 3)) * 1000 + (i % 97 == 0 ? (int64_t)N * 500 : 0);
        ts__rank_add_slice(r, tk[0], ts0, 0, 0, 0, TS_KIND_CPU_OP);
        ts__rank_add_slice(r, tk[1], ts1 + i % 3, 0, 0, 0, TS_KIND_CPU_OP);
        ts__rank_add_slice(r, tk[2], ts2, 0, 0, 0, TS_KIND_CPU_OP);
        sum_ts[0] += ts0;
        sum_ts[1] += ts1 + i % 3;
        sum_ts[2] += ts2;
    }
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    for (int k = 0; k < 3; k++) {
        uint32_t a = r->tracks[tk[k]].first_slice, n = r->tracks[tk[k]].n_slices;
        CHECK_EQ_INT(n, N);
        int64_t sum = 0;
        for (uint32_t i = a; i < a + n; i++) {
            sum += r->slices.ts_ns[i];
            if (i > a) CHECK(r->slices.ts_ns[i - 1] <= r->slices.ts_ns[i]);
        }
        CHECK(sum == sum_ts[k]);
    }
    ts__rank_destroy(r);
}

/* Many flows from one thread to two streams, the endpoints added as a
 * Kineto file orders them (per track in time order, tracks one after the
 * other) with ids that repeat: each pairs with its own finish. */
TEST(flows_from_blocked_tracks_pair_by_time)
{
    enum { N = 2000 };
    ts_rank *r = ts__rank_create("t.json");
    uint32_t cpu = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
    uint32_t gpu[2] = {ts__rank_track(r, TS_TRACK_GPU_STREAM, 0, 7), ts__rank_track(r, TS_TRACK_GPU_STREAM, 0, 8)};
    uint32_t cat = S(r, "ac2g");
    for (int i = 0; i < N; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "%d", i);
        ts__rank_add_slice(r, cpu, (int64_t)i * 100, 10, S(r, nm), 0, TS_KIND_CUDA_RUNTIME);
        ts__rank_add_slice(r, gpu[i % 2], (int64_t)i * 100 + 5000, 50, S(r, nm), 0, TS_KIND_KERNEL);
    }
    for (int i = 0; i < N; i++) {   /* the starts, in time order */
        ts_flow_end s = {.id = (uint64_t)(i % 60), .ts_ns = (int64_t)i * 100, .track = cpu, .cat = cat, .phase = 's', .bind_enclosing = true};
        ts__rank_add_flow_end(r, &s);
    }
    for (int g = 0; g < 2; g++)     /* then each stream's finishes */
        for (int i = g; i < N; i += 2) {
            ts_flow_end f = {.id = (uint64_t)(i % 60), .ts_ns = (int64_t)i * 100 + 5000, .track = gpu[g], .cat = cat, .phase = 'f', .bind_enclosing = true};
            ts__rank_add_flow_end(r, &f);
        }
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    CHECK_EQ_INT(r->flows.n, N);
    CHECK_EQ_INT(r->warn_count[TS_WARN_UNBOUND_FLOW], 0);
    for (uint32_t k = 0; k < r->flows.n; k++)
        CHECK_EQ_STR(ts__rank_str(r, r->slices.name[r->flows.from[k]]), ts__rank_str(r, r->slices.name[r->flows.to[k]]));
    ts__rank_destroy(r);
}

TEST(overlapping_siblings_are_warned_not_nested)
{
    ts_rank *r = ts__rank_create("t.json");
    uint32_t t = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
    ts__rank_add_slice(r, t, 0, 100, S(r, "a"), 0, TS_KIND_CPU_OP);
    ts__rank_add_slice(r, t, 50, 100, S(r, "b"), 0, TS_KIND_CPU_OP);
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    CHECK_EQ_INT(r->slices.parent[1], TS_NONE32);
    CHECK_EQ_INT(r->warn_count[TS_WARN_OVERLAP], 1);
    ts__rank_destroy(r);
}

TEST(ac2g_flow_binds_runtime_call_to_kernel)
{
    ts_rank *r = ts__rank_create("t.json");
    uint32_t cpu = ts__rank_track(r, TS_TRACK_THREAD, 10, 10);
    uint32_t gpu = ts__rank_track(r, TS_TRACK_GPU_STREAM, 0, 7);
    uint32_t op = ts__rank_add_slice(r, cpu, 1000, 900, S(r, "aten::mm"), S(r, "cpu_op"), TS_KIND_CPU_OP);
    (void)op;
    ts__rank_add_slice(r, cpu, 1100, 20, S(r, "cudaLaunchKernel"), S(r, "cuda_runtime"), TS_KIND_CUDA_RUNTIME);
    ts__rank_add_slice(r, gpu, 3000, 400, S(r, "gemm"), S(r, "kernel"), TS_KIND_KERNEL);
    ts_flow_end s = {.id = 42, .ts_ns = 1100, .track = cpu, .cat = S(r, "ac2g"), .phase = 's', .bind_enclosing = true};
    ts_flow_end f = {.id = 42, .ts_ns = 3000, .track = gpu, .cat = S(r, "ac2g"), .phase = 'f', .bind_enclosing = true};
    ts__rank_add_flow_end(r, &f);
    ts__rank_add_flow_end(r, &s);
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    CHECK_EQ_INT(r->flows.n, 1);
    CHECK_EQ_INT(r->flows.kind[0], TS_FLOW_AC2G);
    CHECK_EQ_STR(ts__rank_str(r, r->slices.name[r->flows.from[0]]), "cudaLaunchKernel");
    CHECK_EQ_STR(ts__rank_str(r, r->slices.name[r->flows.to[0]]), "gemm");
    CHECK_EQ_INT(r->tracks[gpu].device, 0);
    CHECK_EQ_INT(r->tracks[gpu].stream, 7);
    ts__rank_destroy(r);
}

/* A flow id reused many times over a wide span of time (negative to past
 * 2^40 ns), endpoints added out of order: each reuse pairs its own start
 * and finish only when the endpoints are put in exact time order. */
TEST(reused_flow_ids_pair_in_time_order_across_a_wide_span)
{
    enum { N = 300 };
    ts_rank *r = ts__rank_create("t.json");
    uint32_t t = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
    int64_t base = -((int64_t)1 << 33), step = ((int64_t)1 << 32) + 3000017;   /* low digits wrap often */
    for (int i = 0; i < N; i++) {
        int64_t at = base + i * step;
        char nm[16];
        snprintf(nm, sizeof nm, "s%d", i);
        ts__rank_add_slice(r, t, at, 10, S(r, nm), 0, TS_KIND_CPU_OP);
        snprintf(nm, sizeof nm, "f%d", i);
        ts__rank_add_slice(r, t, at + step / 2, 10, S(r, nm), 0, TS_KIND_CPU_OP);
    }
    /* add in a scrambled order: i * 7 mod N visits every i once */
    for (int k = 0; k < N; k++) {
        int i = (k * 7) % N;
        int64_t at = base + i * step;
        ts_flow_end f = {.id = 9, .ts_ns = at + step / 2, .track = t, .cat = S(r, "x"), .phase = 'f', .bind_enclosing = true};
        ts_flow_end s = {.id = 9, .ts_ns = at, .track = t, .cat = S(r, "x"), .phase = 's', .bind_enclosing = true};
        ts__rank_add_flow_end(r, &f);
        ts__rank_add_flow_end(r, &s);
    }
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    CHECK_EQ_INT(r->flows.n, N);
    CHECK_EQ_INT(r->warn_count[TS_WARN_UNBOUND_FLOW], 0);
    for (uint32_t k = 0; k < r->flows.n; k++) {
        const char *from = ts__rank_str(r, r->slices.name[r->flows.from[k]]);
        const char *to = ts__rank_str(r, r->slices.name[r->flows.to[k]]);
        CHECK(from[0] == 's' && to[0] == 'f');
        CHECK_EQ_STR(from + 1, to + 1);
    }
    ts__rank_destroy(r);
}

/* Endpoints more than 2^62 ns apart (the sort then keys on time alone and
 * orders phases in a pass of its own): a start and a step at one instant
 * still come start first. */
TEST(flow_endpoints_spanning_the_whole_time_range_pair_in_order)
{
    ts_rank *r = ts__rank_create("t.json");
    uint32_t t = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
    int64_t far = (int64_t)4 << 60;   /* 4.6e18 */
    ts__rank_add_slice(r, t, -far, 10, S(r, "a"), 0, TS_KIND_CPU_OP);
    ts__rank_add_slice(r, t, 0, 10, S(r, "b"), 0, TS_KIND_CPU_OP);
    ts__rank_add_slice(r, t, far, 10, S(r, "c"), 0, TS_KIND_CPU_OP);
    ts_flow_end e[] = {
        {.id = 1, .ts_ns = far, .track = t, .cat = S(r, "x"), .phase = 'f', .bind_enclosing = true},
        {.id = 1, .ts_ns = 0, .track = t, .cat = S(r, "x"), .phase = 't', .bind_enclosing = true},
        {.id = 1, .ts_ns = 0, .track = t, .cat = S(r, "x"), .phase = 's', .bind_enclosing = true},
        {.id = 2, .ts_ns = far, .track = t, .cat = S(r, "x"), .phase = 'f', .bind_enclosing = true},
        {.id = 2, .ts_ns = -far, .track = t, .cat = S(r, "x"), .phase = 's', .bind_enclosing = true},
    };
    for (size_t i = 0; i < sizeof e / sizeof e[0]; i++) ts__rank_add_flow_end(r, &e[i]);
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    CHECK_EQ_INT(r->flows.n, 2);
    CHECK_EQ_INT(r->warn_count[TS_WARN_UNBOUND_FLOW], 0);
    for (uint32_t k = 0; k < r->flows.n; k++) {
        const char *from = ts__rank_str(r, r->slices.name[r->flows.from[k]]);
        CHECK_EQ_STR(from, ts__flow_id(&r->flows, k) == 1 ? "b" : "a");
        CHECK_EQ_STR(ts__rank_str(r, r->slices.name[r->flows.to[k]]), "c");
    }
    ts__rank_destroy(r);
}

TEST(flow_end_without_start_is_warned)
{
    ts_rank *r = ts__rank_create("t.json");
    uint32_t t = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
    ts__rank_add_slice(r, t, 0, 10, S(r, "a"), 0, TS_KIND_CPU_OP);
    ts_flow_end f = {.id = 1, .ts_ns = 5, .track = t, .phase = 'f', .bind_enclosing = true};
    ts__rank_add_flow_end(r, &f);
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    CHECK_EQ_INT(r->warn_count[TS_WARN_UNBOUND_FLOW], 1);
    CHECK(r->warn_first[TS_WARN_UNBOUND_FLOW] != NULL);
    ts__rank_destroy(r);
}

TEST(iterations_come_from_host_profiler_steps_only)
{
    ts_rank *r = ts__rank_create("t.json");
    uint32_t cpu = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
    uint32_t gpu = ts__rank_track(r, TS_TRACK_GPU_STREAM, 0, 7);
    ts__rank_add_slice(r, cpu, 2000, 1000, S(r, "ProfilerStep#6"), 0, TS_KIND_USER_ANNOTATION);
    ts__rank_add_slice(r, cpu, 1000, 1000, S(r, "ProfilerStep#5"), 0, TS_KIND_USER_ANNOTATION);
    ts__rank_add_slice(r, gpu, 1500, 1000, S(r, "ProfilerStep#5"), 0, TS_KIND_GPU_USER_ANNOTATION);
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    CHECK_EQ_INT(r->n_iterations, 2);
    CHECK_EQ_INT(r->iterations[0].step, 5);
    CHECK_EQ_INT(r->iterations[1].start_ns, 2000);
    int64_t a, b;
    CHECK(ts__rank_span(r, &a, &b));
    CHECK_EQ_INT(a, 1000);
    CHECK_EQ_INT(b, 3000);
    ts__rank_destroy(r);
}

TEST(typed_args_are_found_by_key)
{
    ts_rank *r = ts__rank_create("t.json");
    uint32_t t = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
    uint32_t s = ts__rank_add_slice(r, t, 0, 10, S(r, "nccl"), 0, TS_KIND_KERNEL);
    uint32_t first = ts__rank_args_mark(r);
    ts__rank_add_arg(r, S(r, "Comms Id"), TS_ARG_UINT, UINT64_MAX - 5);
    ts__rank_add_arg(r, S(r, "Collective name"), TS_ARG_STR, S(r, "allreduce"));
    ts__rank_slice_set_args(r, s, first, ts__rank_args_mark(r) - first);
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    ts_arg_type ty;
    uint64_t v;
    CHECK(ts__slice_arg(r, 0, "Comms Id", &ty, &v));
    CHECK_EQ_INT(ty, TS_ARG_UINT);
    CHECK(v == UINT64_MAX - 5);
    CHECK_EQ_STR(ts__slice_arg_str(r, 0, "Collective name"), "allreduce");
    CHECK(!ts__slice_arg(r, 0, "missing", NULL, NULL));
    ts__rank_destroy(r);
}

TEST(integer_args_from_doubles_only_within_int64)
{
    ts_rank *r = ts__rank_create("t.json");
    uint32_t t = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
    uint32_t s = ts__rank_add_slice(r, t, 0, 10, S(r, "record_param_comms"), 0, TS_KIND_CPU_OP);
    double big = 1.1e81, nan = 0.0 / 0.0, ok = 4096.75, edge = 9223372036854775808.0;   /* 2^63 */
    uint64_t bits[4];
    memcpy(&bits[0], &big, 8), memcpy(&bits[1], &nan, 8), memcpy(&bits[2], &ok, 8), memcpy(&bits[3], &edge, 8);
    uint32_t first = ts__rank_args_mark(r);
    ts__rank_add_arg(r, S(r, "big"), TS_ARG_DOUBLE, bits[0]);
    ts__rank_add_arg(r, S(r, "nan"), TS_ARG_DOUBLE, bits[1]);
    ts__rank_add_arg(r, S(r, "ok"), TS_ARG_DOUBLE, bits[2]);
    ts__rank_add_arg(r, S(r, "edge"), TS_ARG_DOUBLE, bits[3]);
    ts__rank_add_arg(r, S(r, "min"), TS_ARG_INT, (uint64_t)INT64_MIN);
    ts__rank_slice_set_args(r, s, first, ts__rank_args_mark(r) - first);
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    int64_t v = 1;
    CHECK(!ts__slice_arg_i64(r, 0, "big", &v));   /* no int64 value: absent, not undefined */
    CHECK(!ts__slice_arg_i64(r, 0, "nan", &v));
    CHECK(!ts__slice_arg_i64(r, 0, "edge", &v));
    CHECK(v == 1);
    CHECK(ts__slice_arg_i64(r, 0, "ok", &v) && v == 4096);
    CHECK(ts__slice_arg_i64(r, 0, "min", &v) && v == INT64_MIN);
    ts__rank_destroy(r);
}

TEST(two_files_claiming_one_rank_is_an_error)
{
    ts_rank *a = ts__rank_create("a.json"), *b = ts__rank_create("b.json");
    a->rank = b->rank = 3;
    CHECK_EQ_INT(ts__rank_finish(a, NULL), TS_OK);
    CHECK_EQ_INT(ts__rank_finish(b, NULL), TS_OK);
    ts_rank *ranks[2] = {a, b};
    ts_job *t = NULL;
    ts_error err = {0};
    CHECK_EQ_INT(ts__job_create(ranks, 2, &t, &err), TS_EFORMAT);
    CHECK(t == NULL);
    CHECK(strstr(err.msg, "claims rank 3") != NULL);
}

static int budget, refused;   /* allocations left; how many were refused */
static void *budget_alloc(void *ud, void *ptr, size_t old_size, size_t new_size)
{
    (void)ud; (void)old_size;
    if (new_size == 0) { free(ptr); return NULL; }
    if (budget-- <= 0) { refused++; return NULL; }
    return realloc(ptr, new_size);
}

TEST(out_of_memory_while_building_is_reported_by_finish)
{
    /* Every allocation point in turn fails; finish must say ENOMEM exactly
     * when an allocation was refused (OK when none was), never crash. The
     * budgets run until one suffices, so both outcomes are seen. */
    int n_enomem = 0, n_ok = 0;
    for (int k = 0; k < 4000 && !n_ok; k++) {
        budget = k;
        refused = 0;
        ts_set_allocator(budget_alloc, NULL);
        ts_rank *r = ts__rank_create("oom.json");
        int rc = TS_ENOMEM;
        if (r) {
            uint32_t t = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
            for (int i = 0; i < 3000; i++)
                ts__rank_add_slice(r, t, 3000 - i, 1, S(r, i & 1 ? "x" : "y"), 0, TS_KIND_CPU_OP);
            rc = ts__rank_finish(r, NULL);
            ts__rank_destroy(r);
        }
        ts_set_allocator(NULL, NULL);
        CHECK_EQ_INT(rc, refused ? TS_ENOMEM : TS_OK);
        n_enomem += rc == TS_ENOMEM;
        n_ok += rc == TS_OK;
    }
    CHECK(n_enomem > 0);
    CHECK_EQ_INT(n_ok, 1);
}

TEST(child_overrunning_parent_by_rounding_is_nested)
{
    /* Real case: examples/ddp_gloo rank 0, aten::cross_entropy_loss ts 80908 dur 51
     * and its child aten::nll_loss_nd ts 80944 dur 16 (microseconds). */
    ts_rank *r = ts__rank_create("t.json");
    uint32_t t = ts__rank_track(r, TS_TRACK_THREAD, 1, 1);
    ts__rank_add_slice(r, t, 80908000, 51000, S(r, "aten::cross_entropy_loss"), 0, TS_KIND_CPU_OP);
    ts__rank_add_slice(r, t, 80944000, 16000, S(r, "aten::nll_loss_nd"), 0, TS_KIND_CPU_OP);
    ts__rank_add_slice(r, t, 80950000, 20000, S(r, "real_overlap"), 0, TS_KIND_CPU_OP);
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    CHECK_EQ_INT(r->slices.parent[1], 0);
    CHECK_EQ_INT(r->slices.dur_ns[1], 16000);           /* kept as recorded */
    CHECK_EQ_INT(r->n_rounding_overruns, 1);
    CHECK_EQ_INT(r->warn_count[TS_WARN_OVERLAP], 1);   /* 10 us past its parent is real */
    ts__rank_destroy(r);
}

/* ---- a finished rank as bytes (trace/serial.c), for distributed runs ---- */

static ts_job *load_real(const char *rel)
{
    ts_job *t = NULL;
    ts_error err = {0};
    const char *p = ts_test_data(rel);
    if (ts_job_load(&p, 1, NULL, &t, &err)) fprintf(stderr, "load %s: %s\n", p, err.msg);
    return t;
}

#define SAME_COL(col, n) CHECK((n) == 0 || memcmp(a->col, b->col, (size_t)(n) * sizeof *a->col) == 0)

/* Every column, string and scalar of b equals a's (the rank it was read from). */
static void check_same_rank(const ts_rank *a, const ts_rank *b)
{
    CHECK_EQ_INT(b->rank, a->rank);
    CHECK_EQ_INT(b->world_size, a->world_size);
    CHECK_EQ_STR(b->path, a->path);
    CHECK_EQ_INT(b->base_time_ns, a->base_time_ns);
    CHECK_EQ_INT(b->us_fractions, a->us_fractions);
    CHECK_EQ_INT(b->meta_args, a->meta_args);
    CHECK_EQ_INT(b->n_events_read, a->n_events_read);
    for (int k = 0; k < TS_WARN_COUNT; k++) {
        CHECK_EQ_INT(b->warn_count[k], a->warn_count[k]);
        CHECK((a->warn_first[k] == NULL) == (b->warn_first[k] == NULL));
        if (a->warn_first[k] && b->warn_first[k]) CHECK_EQ_STR(b->warn_first[k], a->warn_first[k]);
    }
    CHECK_EQ_INT(b->strings.n, a->strings.n);
    for (uint32_t id = 0; id < a->strings.n && id < b->strings.n; id++)
        if (strcmp(ts__rank_str(a, id), ts__rank_str(b, id))) TS_FAIL_("string %u differs", id);
    CHECK_EQ_INT(b->n_tracks, a->n_tracks);
    for (uint32_t i = 0; i < a->n_tracks && i < b->n_tracks; i++) {
        const ts_track *x = &a->tracks[i], *y = &b->tracks[i];
        CHECK(x->pid == y->pid && x->tid == y->tid && x->name_id == y->name_id && x->device == y->device &&
              x->stream == y->stream && x->kind == y->kind && x->first_slice == y->first_slice &&
              x->n_slices == y->n_slices && x->process_name_id == y->process_name_id &&
              x->sort_index == y->sort_index && x->process_label_id == y->process_label_id &&
              x->process_sort_index == y->process_sort_index);
    }
    CHECK_EQ_INT(b->slices.n, a->slices.n);
    if (b->slices.n != a->slices.n) return;
    uint32_t n = a->slices.n;
    SAME_COL(slices.ts_ns, n); SAME_COL(slices.dur_ns, n); SAME_COL(slices.track, n); SAME_COL(slices.name, n);
    SAME_COL(slices.cat, n); SAME_COL(slices.kind, n); SAME_COL(slices.depth, n); SAME_COL(slices.parent, n);
    SAME_COL(slices.args, n); SAME_COL(slices.n_args, n); SAME_COL(slices.corr, n); SAME_COL(slices.ext_id, n);
    CHECK_EQ_INT(b->args.n, a->args.n);
    SAME_COL(args.key, a->args.n); SAME_COL(args.type, a->args.n); SAME_COL(args.val, a->args.n);
    CHECK_EQ_INT(b->instants.n, a->instants.n);
    SAME_COL(instants.ts_ns, a->instants.n); SAME_COL(instants.name, a->instants.n);
    CHECK_EQ_INT(b->counters.n, a->counters.n);
    SAME_COL(counters.value, a->counters.n);
    CHECK_EQ_INT(b->flows.n, a->flows.n);
    SAME_COL(flows.from, a->flows.n); SAME_COL(flows.to, a->flows.n);
    for (uint32_t i = 0; i < a->flows.n && b->flows.n == a->flows.n; i++)
        if (ts__flow_id(&a->flows, i) != ts__flow_id(&b->flows, i) || ts__flow_cat(&a->flows, i) != ts__flow_cat(&b->flows, i) ||
            ts__flow_kind(&a->flows, i) != ts__flow_kind(&b->flows, i)) { TS_FAIL_("flow %u differs", i); break; }
    CHECK_EQ_INT(b->n_iterations, a->n_iterations);
    for (uint32_t i = 0; i < a->n_iterations && i < b->n_iterations; i++)   /* fields: the struct has padding */
        CHECK(a->iterations[i].step == b->iterations[i].step && a->iterations[i].start_ns == b->iterations[i].start_ns &&
              a->iterations[i].end_ns == b->iterations[i].end_ns && a->iterations[i].slice == b->iterations[i].slice);
    CHECK(b->finished);
}

/* a serialized into b1 (initialized here) and read back (NULL on failure). */
static ts_rank *round_trip(const ts_rank *a, ts_buf *b1)
{
    ts__buf_init(b1);
    ts_rank *b = NULL;
    ts_error err = {0};
    if (ts__rank_serialize(a, b1) != TS_OK || ts__rank_deserialize(b1->s, b1->len, "test", &b, &err) != TS_OK) {
        fprintf(stderr, "round trip failed: %s\n", err.msg);
        ts_test_failures++;
    }
    return b;
}

TEST(serialized_rank_reads_back_row_for_row)
{
    const char *rel[] = {"kineto/nccl_parser_config/nccl_data.json.gz", "kineto/trace_filter/sampled_rank-1.json.gz"};
    for (int f = 0; f < 2; f++) {
        NEED_DATA(ts_test_data(rel[f]));
        ts_job *t = load_real(rel[f]);
        CHECK(t != NULL);
        if (!t) return;
        const ts_rank *a = t->ranks[0];
        CHECK(a->slices.n > 1000 && a->args.n > 0 && a->n_iterations > 0);
        ts_buf b1, b2;
        ts__buf_init(&b2);
        ts_rank *b = round_trip(a, &b1);
        if (b) {
            check_same_rank(a, b);
            CHECK_EQ_INT(ts__rank_serialize(b, &b2), TS_OK);   /* and writes the same bytes again */
            CHECK(b2.len == b1.len && memcmp(b1.s, b2.s, b1.len) == 0);
        }
        ts__rank_destroy(b);
        ts__buf_free(&b1);
        ts__buf_free(&b2);
        ts_job_destroy(t);
    }
}

/* Dropping a track's slices moves the others up with every column: six
 * slices alternating over tracks a and b, b dropped: the rows leave when
 * finish sorts the slices (until then they are counted), and a's three
 * remain in order with their times, names, args and ids. */
TEST(dropped_track_slices_leave_the_others_whole)
{
    ts_error err = {0};
    ts_rank *r = ts__rank_create("d.json");
    uint32_t ta = ts__rank_track(r, TS_TRACK_THREAD, 1, 1), tb = ts__rank_track(r, TS_TRACK_THREAD, 1, 2);
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof name, "s%d", i);
        uint32_t sl = ts__rank_add_slice(r, i % 2 ? tb : ta, 100 * i, 10 + i, S(r, name), S(r, "cpu_op"), TS_KIND_CPU_OP);
        ts__rank_slice_set_args(r, sl, ts__rank_add_arg(r, S(r, "k"), TS_ARG_INT, (uint64_t)i), 1);
        r->slices.corr[sl] = 1000 + i;
    }
    bool drop[2] = {false, true};
    ts__rank_drop_slices(r, drop);
    CHECK_EQ_INT(r->slices.n, 6);
    CHECK_EQ_INT(ts__rank_finish(r, &err), TS_OK);
    CHECK_EQ_INT(r->slices.n, 3);
    CHECK_EQ_INT(r->tracks[tb].n_slices, 0);
    for (uint32_t k = 0; k < 3 && r->slices.n == 3; k++) {
        char name[16];
        snprintf(name, sizeof name, "s%u", 2 * k);
        CHECK_EQ_STR(ts__rank_str(r, r->slices.name[k]), name);
        CHECK_EQ_INT(r->slices.track[k], ta);
        CHECK_EQ_INT(r->slices.ts_ns[k], 200 * k);
        CHECK_EQ_INT(r->slices.dur_ns[k], 10 + 2 * k);
        CHECK_EQ_INT(r->slices.corr[k], 1000 + 2 * k);
        CHECK_EQ_INT(r->slices.n_args[k], 1);
        CHECK_EQ_INT(r->args.val[r->slices.args[k]], 2 * k);
    }
    ts__rank_destroy(r);
}

/* Flows numbered 0, 1, 2 in one category keep only their ends; they read
 * back through the accessors, serialize as the full table would, and a
 * flow that breaks the numbering gives the table its columns. */
TEST(numbered_flows_store_their_ends_and_read_back_whole)
{
    ts_rank *r = ts__rank_create("n.et");
    uint32_t cpu = ts__rank_track(r, TS_TRACK_THREAD, 0, 1);
    for (int k = 0; k < 3; k++) ts__rank_add_slice(r, cpu, 1000 * k, 500, S(r, "op"), S(r, "cpu_op"), TS_KIND_CPU_OP);
    CHECK_EQ_INT(ts__rank_finish(r, NULL), TS_OK);
    uint32_t dep = S(r, "chakra_dep");
    ts__rank_reserve_numbered_flows(r, 4, dep);
    CHECK_EQ_INT(ts__rank_push_bound_flow(r, 0, 1, 0, dep), TS_OK);
    CHECK_EQ_INT(ts__rank_push_bound_flow(r, 1, 2, 1, dep), TS_OK);
    CHECK_EQ_INT(ts__rank_push_bound_flow(r, 0, 2, 2, dep), TS_OK);
    CHECK(r->flows.numbered && r->flows.id == NULL && r->flows.cat == NULL && r->flows.kind == NULL);
    for (uint32_t i = 0; i < 3; i++) {
        CHECK_EQ_INT(ts__flow_id(&r->flows, i), i);
        CHECK_EQ_INT(ts__flow_cat(&r->flows, i), dep);
        CHECK_EQ_INT(ts__flow_kind(&r->flows, i), TS_FLOW_DEP);
    }
    ts_buf b1;
    ts_rank *b = round_trip(r, &b1);
    if (b) {
        CHECK(!b->flows.numbered && b->flows.n == 3);
        check_same_rank(r, b);
    }
    ts__rank_destroy(b);
    ts__buf_free(&b1);
    CHECK_EQ_INT(ts__rank_push_bound_flow(r, 2, 0, 7, dep), TS_OK);   /* id 7, not 3: numbered no more */
    CHECK(!r->flows.numbered && r->flows.n == 4);
    uint64_t want[] = {0, 1, 2, 7};
    for (uint32_t i = 0; i < 4; i++) {
        CHECK_EQ_INT(r->flows.id[i], want[i]);
        CHECK_EQ_INT(r->flows.cat[i], dep);
        CHECK_EQ_INT(r->flows.kind[i], TS_FLOW_DEP);
    }
    CHECK(r->flows.from[3] == 2 && r->flows.to[3] == 0 && r->flows.from[1] == 1 && r->flows.to[1] == 2);
    ts__rank_destroy(r);
}

/* A compact rank (what a distributed run's processes send inside a
 * condensed rank) reads back as compact: its dropped id columns absent
 * (NULL), not filled with -1; its rows as read kept. Every third slice kept,
 * the first with its args. */
TEST(serialized_compact_rank_keeps_its_absent_columns_and_read_counts)
{
    const char *rel = "kineto/trace_filter/sampled_rank-1.json.gz";
    NEED_DATA(ts_test_data(rel));
    ts_job *t = load_real(rel);
    CHECK(t != NULL);
    if (!t) return;
    const ts_rank *full = t->ranks[0];
    uint32_t n = full->slices.n, *map = malloc(((size_t)n + 1) * sizeof *map);
    uint8_t *keep = calloc((size_t)n + 1, 1);
    for (uint32_t s = 0; s < n; s += 3) keep[s] = s == 0 ? 2 : 1;
    ts_rank *a = NULL, *b = NULL;
    ts_error err = {0};
    CHECK_EQ_INT(ts__rank_compact(full, keep, map, false, &a, &err), TS_OK);
    ts_buf b1, b2;
    ts__buf_init(&b1);
    ts__buf_init(&b2);
    if (a) {
        CHECK(a->summary && a->slices.corr == NULL && a->slices.ext_id == NULL);
        CHECK_EQ_INT(a->slices.n, (n + 2) / 3);
        CHECK_EQ_INT(ts__rank_serialize(a, &b1), TS_OK);
        CHECK_EQ_INT(ts__rank_deserialize(b1.s, b1.len, "test", &b, &err), TS_OK);
    }
    if (b) {
        CHECK(b->summary && b->slices.corr == NULL && b->slices.ext_id == NULL);
        uint32_t rows[4];
        ts_rank_read_counts(b, rows);
        CHECK(rows[0] == n && rows[1] == full->instants.n && rows[2] == full->counters.n && rows[3] == full->flows.n);
        CHECK_EQ_INT(b->slices.n, a->slices.n);
        CHECK_EQ_INT(ts__rank_serialize(b, &b2), TS_OK);
        CHECK(b2.len == b1.len && memcmp(b1.s, b2.s, b1.len) == 0);
    }
    ts__buf_free(&b1);
    ts__buf_free(&b2);
    ts__rank_destroy(a);
    ts__rank_destroy(b);
    free(map);
    free(keep);
    ts_job_destroy(t);
}

/* Bytes cut anywhere, or an id pointing past its table, are an error naming
 * the bytes and the offset; never a rank, never a read out of bounds (ASan). */
TEST(damaged_serialized_rank_is_refused)
{
    const char *rel = "kineto/trace_filter/sampled_rank-0.json.gz";
    NEED_DATA(ts_test_data(rel));
    ts_job *t = load_real(rel);
    CHECK(t != NULL);
    if (!t) return;
    ts_buf b;
    ts__buf_init(&b);
    CHECK_EQ_INT(ts__rank_serialize(t->ranks[0], &b), TS_OK);
    ts_rank *r = NULL;
    ts_error err = {0};
    for (size_t cut = 0; cut < b.len; cut += cut < 4096 ? 1 : 997) {
        CHECK(ts__rank_deserialize(b.s, cut, "cut", &r, &err) == TS_EFORMAT);
        CHECK(r == NULL && strncmp(err.msg, "cut: byte ", 10) == 0);
        ts__rank_destroy(r);
    }
    /* the first slice's track: the slices table follows the tracks */
    const ts_rank *a = t->ranks[0];
    size_t tracks_end = 0;
    for (size_t i = 0; i + 8 <= b.len; i++) {   /* the slice table's first ts_ns column starts with slice 0's ts */
        uint32_t n;
        memcpy(&n, b.s + i, 4);
        if (n == a->slices.n && memcmp(b.s + i + 4, &a->slices.ts_ns[0], 8) == 0) { tracks_end = i; break; }
    }
    CHECK(tracks_end > 0);
    size_t track_col = tracks_end + 4 + (size_t)a->slices.n * 16;
    uint32_t bad = a->n_tracks;
    memcpy(b.s + track_col, &bad, 4);
    CHECK(ts__rank_deserialize(b.s, b.len, "flipped", &r, &err) == TS_EFORMAT);
    if (!strstr(err.msg, "a slice on a track that does not exist")) TS_FAIL_("said: %s", err.msg);
    ts__rank_destroy(r);
    ts__buf_free(&b);
    ts_job_destroy(t);
}

/* Two shares of the pair's directory: each loads every 2nd file, numbered
 * as a whole load numbers them, and together they are the whole. */
TEST(load_shares_split_the_files_without_overlap)
{
    const char *dir = ts_test_data("kineto/trace_filter");
    NEED_DATA(ts_test_data("kineto/trace_filter/sampled_rank-1.json.gz"));
    ts_load_share s[3];
    ts_error err = {0};
    for (uint32_t p = 0; p < 3; p++) CHECK_EQ_INT(ts__load_share(&dir, 1, NULL, p, 3, &s[p], &err), TS_OK);
    CHECK_EQ_INT(s[0].n, 1);
    CHECK_EQ_INT(s[1].n, 1);
    CHECK_EQ_INT(s[2].n, 0);   /* a process with no file: it sends nothing */
    CHECK_EQ_INT(s[0].n_files, 2);
    CHECK(s[0].list_hash == s[1].list_hash && s[1].list_hash == s[2].list_hash);
    if (s[0].n == 1 && s[1].n == 1) {
        CHECK_EQ_INT(s[0].file[0], 0);
        CHECK_EQ_INT(s[1].file[0], 1);
        CHECK(strstr(s[0].ranks[0]->path, "sampled_rank-0") != NULL);
        CHECK_EQ_INT(s[1].ranks[0]->rank, 1);
    }
    for (uint32_t p = 0; p < 3; p++) ts__load_share_free(&s[p]);
    const char *missing = "/nonexistent/trace_dir";
    CHECK(ts__load_share(&missing, 1, NULL, 0, 2, &s[0], &err) == TS_ENOENT);
    CHECK(strstr(err.msg, "/nonexistent/trace_dir: byte 0:") != NULL);
    ts__load_share_free(&s[0]);
}
