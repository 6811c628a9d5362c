/* test_views.c - the views (include/trainscope/views.h) on small hand-built
 * models whose answers are worked out by hand in each test's comment. The
 * views on real traces are checked against the files in test/e2e/views*.sh. */
#include "test.h"
#include "analyze/views_int.h"
#include "report/views_html.h"

static uint32_t S(ts_rank *r, const char *s) { return ts__rank_intern(r, s, strlen(s)); }

static uint32_t add(ts_rank *r, uint32_t track, int64_t ts, int64_t dur, const char *name, ts_kind kind)
{
    return ts__rank_add_slice(r, track, ts, dur, S(r, name), 0, kind);
}

static ts_job *wrap(ts_rank *r)
{
    ts_job *t = NULL;
    if (ts__rank_finish(r, NULL) != TS_OK || ts__job_create(&r, 1, &t, NULL) != TS_OK) return NULL;
    return t;
}

/* Thread 1: step [0,100) holding fwd [10,40) (holding mm [15,25)) and bwd
 * [50,90); thread 2: step [0,50) holding fwd [0,20). Merged paths: step 150
 * (self 100 - 30 - 40 = 30, plus 50 - 20 = 30: 60), step;fwd 50 (self 20 + 20
 * = 40), step;fwd;mm 10, step;bwd 40. Order: step, fwd (50) before bwd (40). */
TEST(callstack_merges_paths_over_threads_with_self_times)
{
    ts_rank *r = ts__rank_create("r.json");
    uint32_t a = ts__rank_track(r, TS_TRACK_THREAD, 1, 1), b = ts__rank_track(r, TS_TRACK_THREAD, 1, 2);
    add(r, a, 0, 100, "step", TS_KIND_USER_ANNOTATION);
    add(r, a, 10, 30, "fwd", TS_KIND_CPU_OP);
    add(r, a, 15, 10, "mm", TS_KIND_CPU_OP);
    add(r, a, 50, 40, "bwd", TS_KIND_CPU_OP);
    add(r, b, 0, 50, "step", TS_KIND_USER_ANNOTATION);
    add(r, b, 0, 20, "fwd", TS_KIND_CPU_OP);
    ts_job *t = wrap(r);
    CHECK(t != NULL);
    ts_view_callstack *v;
    CHECK_EQ_INT(ts_view_callstack_create(t, NULL, &v, NULL), TS_OK);
    CHECK_EQ_INT(v->n_threads, 2);
    CHECK_EQ_INT(v->n_frames, 6);
    CHECK_EQ_INT(v->n_nodes, 4);
    CHECK_EQ_STR(v->nodes[0].name, "step");
    CHECK_EQ_INT(v->nodes[0].total_ns, 150);
    CHECK_EQ_INT(v->nodes[0].self_ns, 60);
    CHECK_EQ_INT(v->nodes[0].calls, 2);
    CHECK_EQ_INT(v->nodes[0].subtree_end, 4);
    CHECK_EQ_STR(v->nodes[1].name, "fwd");
    CHECK_EQ_INT(v->nodes[1].total_ns, 50);
    CHECK_EQ_INT(v->nodes[1].self_ns, 40);
    CHECK_EQ_STR(v->nodes[2].name, "mm");
    CHECK_EQ_INT(v->nodes[2].depth, 2);
    CHECK_EQ_INT(v->nodes[2].parent, 1);
    CHECK_EQ_STR(v->nodes[3].name, "bwd");
    CHECK_EQ_INT(v->nodes[3].parent, 0);
    CHECK_EQ_INT(v->total_ns, 150);
    CHECK_EQ_INT(v->threads[0].busy_ns, 100);
    ts_buf hb;
    ts__buf_init(&hb);
    CHECK_EQ_INT(ts_report_html_view_callstack(&hb, v), TS_OK);
    CHECK(strstr(ts__buf_cstr(&hb), "<title>step | total 150ns, self 60ns, 2 calls</title>") != NULL);
    ts__buf_free(&hb);
    ts_view_callstack_destroy(v);
    ts_job_destroy(t);
}

/* Stream 7: k1 launched at 0 runs [10,30), k2 launched at 5 runs [30,40), k3
 * launched at 40 (when k2 ends: k2 leaves first) runs [45,50), k4 with no
 * launch in the trace runs [60,70). Queue: 1 from 0, 2 from 5 to 30, 1 to 40,
 * 1 (k3) to 50, 0, 1 during [60,70): max 2 at 5; mean over [0,70) =
 * (5*1 + 25*2 + 10*1 + 10*1 + 10*1) / 70 = 85 / 70. Launch to start: (10 +
 * 25 + 5) / 3. */
TEST(queues_count_ops_from_launch_to_end)
{
    ts_rank *r = ts__rank_create("r.json");
    uint32_t cpu = ts__rank_track(r, TS_TRACK_THREAD, 1, 1), gpu = ts__rank_track(r, TS_TRACK_GPU_STREAM, 0, 7);
    int64_t launch[3] = {0, 5, 40}, start[4] = {10, 30, 45, 60}, dur[4] = {20, 10, 5, 10};
    for (int i = 0; i < 4; i++) {
        uint32_t k = add(r, gpu, start[i], dur[i], "k", TS_KIND_KERNEL);
        r->slices.corr[k] = 100 + i;
        if (i < 3) r->slices.corr[add(r, cpu, launch[i], 3, "cudaLaunchKernel", TS_KIND_CUDA_RUNTIME)] = 100 + i;
    }
    ts_job *t = wrap(r);
    CHECK(t != NULL);
    ts_views_opts o = {.size = sizeof o, .n_bins = 7};
    ts_view_queues *v;
    CHECK_EQ_INT(ts_view_queues_create(t, &o, &v, NULL), TS_OK);
    CHECK_EQ_INT(v->n_streams, 1);
    const ts_queue_stream *s = &v->streams[0];
    CHECK_EQ_INT(s->n_ops, 4);
    CHECK_EQ_INT(s->n_unlinked, 1);
    CHECK_EQ_INT(s->max_len, 2);
    CHECK_EQ_INT(s->max_at_ns, 5);
    CHECK_NEAR(s->mean_len, 85.0 / 70.0, 1e-9);
    CHECK_EQ_INT(s->launch_to_start_ns, 40 / 3);
    /* bins of 71/7 -> 11 ns: [0,11) max 2 (from 5), [55,66) max 1 */
    CHECK_EQ_INT(s->bin_ns, 11);
    CHECK_EQ_INT(v->bins[s->first_bin].max_len, 2);
    CHECK_NEAR(v->bins[s->first_bin].mean_len, (5 * 1 + 6 * 2) / 11.0, 1e-9);
    CHECK_EQ_INT(v->bins[s->first_bin + 5].max_len, 1);
    ts_view_queues_destroy(v);
    ts_job_destroy(t);
}

/* Two H2D copies [0,100) 1000 B and [50,150) 3000 B, one D2H [200,210)
 * without bytes. H2D: busy 150 (the union), 4000 B, 26.67 GB/s; single
 * copies 10 and 30 GB/s. With 2 bins of 75 ns over [0,150]: bin 0 gets 750
 * + 750 B, bin 1 250 + 2250 B. */
TEST(transfers_sum_bytes_per_direction_over_busy_time)
{
    ts_rank *r = ts__rank_create("r.json");
    uint32_t g = ts__rank_track(r, TS_TRACK_GPU_STREAM, 0, 7), key = S(r, "bytes");
    int64_t at[3] = {0, 50, 200}, d[3] = {100, 100, 10}, bytes[2] = {1000, 3000};
    const char *names[3] = {"Memcpy HtoD (Pinned -> Device)", "Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pinned)"};
    for (int i = 0; i < 3; i++) {
        uint32_t first = ts__rank_args_mark(r);
        if (i < 2) ts__rank_add_arg(r, key, TS_ARG_INT, (uint64_t)bytes[i]);
        uint32_t s = add(r, g, at[i], d[i], names[i], TS_KIND_GPU_MEMCPY);
        if (i < 2) ts__rank_slice_set_args(r, s, first, 1);
    }
    ts_job *t = wrap(r);
    CHECK(t != NULL);
    ts_views_opts o = {.size = sizeof o, .n_bins = 2};
    ts_view_transfers *v;
    CHECK_EQ_INT(ts_view_transfers_create(t, &o, &v, NULL), TS_OK);
    CHECK_EQ_INT(v->n_rows, 2);
    const ts_xfer_row *h = &v->rows[0], *dh = &v->rows[1];
    CHECK_EQ_INT(h->dir, TS_XFER_H2D);
    CHECK_EQ_INT(h->n, 2);
    CHECK_EQ_INT(h->bytes, 4000);
    CHECK_EQ_INT(h->busy_ns, 150);
    CHECK_EQ_INT(h->dur_ns, 200);
    CHECK_NEAR(h->min_gbps, 10, 1e-9);
    CHECK_NEAR(h->max_gbps, 30, 1e-9);
    CHECK_EQ_INT(h->bin_ns, 76);   /* ceil(151 / 2) */
    CHECK_NEAR(v->bins[h->first_bin].bytes, 760 + 780, 1e-6);
    CHECK_NEAR(v->bins[h->first_bin + 1].bytes, 240 + 2220, 1e-6);
    CHECK_EQ_INT(v->bins[h->first_bin].busy_ns + v->bins[h->first_bin + 1].busy_ns, 150);
    CHECK_EQ_INT(dh->dir, TS_XFER_D2H);
    CHECK_EQ_INT(dh->n_no_bytes, 1);
    ts_view_transfers_destroy(v);
    /* the report's adapters: a fragment for this trace, TS_ENODATA where there is nothing to show */
    ts_buf hb;
    ts__buf_init(&hb);
    ts_error err;
    CHECK_EQ_INT(ts__html_view_transfers_of(&hb, t, &err), TS_OK);
    CHECK(strstr(ts__buf_cstr(&hb), "Rank -1 H2D: 2 copies, 3.91 KiB") != NULL);
    CHECK_EQ_INT(ts__html_view_allocator_of(&hb, t, &err), TS_ENODATA);
    CHECK(strstr(err.msg, "no [memory] events") != NULL);
    ts__buf_free(&hb);
    ts_job_destroy(t);
}

/* Nearest-rank percentiles of 1..10: p50 = 5, p90 = 9, p99 = 10; size bins. */
TEST(views_percentiles_and_size_bins)
{
    int64_t v[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    CHECK_EQ_INT(ts__views_pct(v, 10, 50), 5);
    CHECK_EQ_INT(ts__views_pct(v, 10, 90), 9);
    CHECK_EQ_INT(ts__views_pct(v, 10, 99), 10);
    CHECK_EQ_INT(ts__views_pct(v, 1, 50), 1);
    CHECK_EQ_INT(ts__views_size_bin(0), 0);
    CHECK_EQ_INT(ts__views_size_bin(1), 0);
    CHECK_EQ_INT(ts__views_size_bin(4095), 11);
    CHECK_EQ_INT(ts__views_size_bin(4096), 12);
    CHECK_EQ_INT(ts__views_bin_of(100, 10, 5, 99), 0);
    CHECK_EQ_INT(ts__views_bin_of(100, 10, 5, 149), 4);
    CHECK_EQ_INT(ts__views_bin_of(100, 10, 5, 1000), 4);
}

/* [memory] events: +100 (total 100), +300 (400), -100 (300), then a CPU
 * device event: two series; cuda:0 peak 400, start 0, end 300, sizes in bins
 * 6 (64..127) and 8 (256..511). */
TEST(allocator_series_from_memory_events)
{
    ts_rank *r = ts__rank_create("r.json");
    uint32_t th = ts__rank_track(r, TS_TRACK_THREAD, 1, 1), mem = S(r, "[memory]");
    int64_t bytes[4] = {100, 300, -100, 64}, total[4] = {100, 400, 300, 64}, type[4] = {1, 1, 1, 0};
    for (int i = 0; i < 4; i++) {
        uint32_t first = ts__rank_args_mark(r);
        ts__rank_add_arg(r, S(r, "Device Type"), TS_ARG_INT, (uint64_t)type[i]);
        ts__rank_add_arg(r, S(r, "Device Id"), TS_ARG_INT, (uint64_t)(type[i] ? 0 : -1));
        ts__rank_add_arg(r, S(r, "Bytes"), TS_ARG_INT, (uint64_t)bytes[i]);
        ts__rank_add_arg(r, S(r, "Total Allocated"), TS_ARG_INT, (uint64_t)total[i]);
        ts__rank_add_instant(r, th, 10 * (i + 1), mem, mem, TS_KIND_OTHER, 't', first, 4);
    }
    ts_job *t = wrap(r);
    CHECK(t != NULL);
    ts_view_allocator *v;
    CHECK_EQ_INT(ts_view_allocator_create(t, NULL, &v, NULL), TS_OK);
    CHECK_EQ_INT(v->n_series, 2);
    const ts_alloc_series *s = v->series[0].device_type == 1 ? &v->series[0] : &v->series[1];
    CHECK_EQ_INT(s->start_bytes, 0);
    CHECK_EQ_INT(s->peak_bytes, 400);
    CHECK_EQ_INT(s->peak_ns, 20);
    CHECK_EQ_INT(s->end_bytes, 300);
    CHECK_EQ_INT(s->n_allocs, 2);
    CHECK_EQ_INT(s->n_frees, 1);
    CHECK_EQ_INT(s->size_count[6], 1);
    CHECK_EQ_INT(s->size_count[8], 1);
    CHECK_EQ_INT(s->n_points, 3);
    ts_view_allocator_destroy(v);
    ts_job_destroy(t);
}

/* One MPI call with its args on rank r's thread. */
static uint32_t mpi_call(ts_rank *r, uint32_t th, int64_t ts, int64_t dur, const char *name, const char *kind,
                         int64_t self, const char *peer_key, int64_t peer, int64_t req, const char *reqs)
{
    uint32_t first = ts__rank_args_mark(r), n = 0;
    if (kind) {
        ts__rank_add_arg(r, S(r, "Collective name"), TS_ARG_STR, S(r, kind));
        ts__rank_add_arg(r, S(r, "Process Group Name"), TS_ARG_STR, S(r, "mpi_comm_0"));
        ts__rank_add_arg(r, S(r, "Rank"), TS_ARG_INT, (uint64_t)self);
        ts__rank_add_arg(r, S(r, peer_key), TS_ARG_INT, (uint64_t)peer);
        ts__rank_add_arg(r, S(r, "tag"), TS_ARG_INT, 3);
        ts__rank_add_arg(r, S(r, "In msg nelems"), TS_ARG_INT, 64);
        ts__rank_add_arg(r, S(r, "dtype"), TS_ARG_STR, S(r, "Byte"));
        n = 7;
    }
    if (req >= 0) { ts__rank_add_arg(r, S(r, "request"), TS_ARG_INT, (uint64_t)req); n++; }
    if (reqs) { ts__rank_add_arg(r, S(r, "requests"), TS_ARG_STR, S(r, reqs)); n++; }
    uint32_t s = add(r, th, ts, dur, name, TS_KIND_CPU_OP);
    ts__rank_slice_set_args(r, s, first, n);
    return s;
}

/* Rank 0 sends at 100 (MPI_Send [100,110)) and at 200; rank 1 posts
 * MPI_Irecv (request 5) at 50 and completes it in an MPI_Waitall [300,400)
 * whose requests text is "[-, 5]" (a lone '-' is skipped, not looped on),
 * then a blocking MPI_Recv [150,260)... in start order: Irecv (50) pairs with
 * the send at 100 -> 400 - 100 = 300; Recv (150) with the send at 200 -> 260
 * - 200 = 60. Nothing unpaired; 64 bytes each. */
TEST(comm_pairs_sends_with_receives_in_order_through_waitall)
{
    ts_rank *r0 = ts__rank_create("rank-0.json"), *r1 = ts__rank_create("rank-1.json");
    r0->rank = 0, r1->rank = 1;
    uint32_t t0 = ts__rank_track(r0, TS_TRACK_THREAD, 1, 1), t1 = ts__rank_track(r1, TS_TRACK_THREAD, 2, 2);
    mpi_call(r0, t0, 100, 10, "MPI_Send", "send", 0, "Dst Rank", 1, -1, NULL);
    mpi_call(r0, t0, 200, 10, "MPI_Send", "send", 0, "Dst Rank", 1, -1, NULL);
    mpi_call(r1, t1, 50, 5, "MPI_Irecv", "irecv", 1, "Src Rank", 0, 5, NULL);
    mpi_call(r1, t1, 150, 110, "MPI_Recv", "recv", 1, "Src Rank", 0, -1, NULL);
    mpi_call(r1, t1, 300, 100, "MPI_Waitall", NULL, 1, NULL, 0, -1, "[-, 5]");
    ts_rank *ranks[2] = {r0, r1};
    ts_job *t = NULL;
    CHECK(ts__rank_finish(r0, NULL) == TS_OK && ts__rank_finish(r1, NULL) == TS_OK);
    CHECK_EQ_INT(ts__job_create(ranks, 2, &t, NULL), TS_OK);
    ts_view_comm *v;
    CHECK_EQ_INT(ts_view_comm_create(t, NULL, &v, NULL), TS_OK);
    const ts_comm_row *pair = NULL;
    for (uint32_t i = 0; i < v->n_rows; i++) if (v->rows[i].what == TS_COMM_PAIR) pair = &v->rows[i];
    CHECK(pair != NULL);
    CHECK_EQ_INT(pair->src, 0);
    CHECK_EQ_INT(pair->dst, 1);
    CHECK_EQ_INT(pair->n, 2);
    CHECK_EQ_INT(pair->min_ns, 60);
    CHECK_EQ_INT(pair->max_ns, 300);
    CHECK_EQ_INT(pair->bytes, 128);
    CHECK_EQ_INT(v->n_unpaired, 0);
    ts_view_comm_destroy(v);
    ts_job_destroy(t);
}
