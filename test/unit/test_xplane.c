/* test_xplane.c - TensorFlow XPlane captures (src/ingest/xplane.c) and the
 * protobuf wire cursor under it (src/ingest/protobuf.c).
 *
 * A hand-made XSpace (labelled: encoded here field by field after
 * tensorflow/tsl's xplane.proto, no profiler wrote it) with known times, and
 * the real 8-GPU BERT capture, whose counts the protobuf Python module gives
 * (test/e2e/xplane_capture.sh checks them live).
 */
#include "test.h"
#include "pb_write.h"

#include <unistd.h>

#include "ingest/ingest.h"
#include "ingest/protobuf.h"
#include "trace/model.h"
#include "trainscope/ingest.h"

/* map entry {1: key, 2: {2: name}} */
static void put_meta(wb *w, uint32_t num, uint64_t id, const char *name)
{
    wb v = {0}, e = {0};
    put_int(&v, 1, id);
    put_str(&v, 2, name);
    put_int(&e, 1, id);
    put_msg(&e, 2, &v);
    put_msg(w, num, &e);
}

/* GPU 0 plane, line "Stream #7(Compute)" at 1,000 ns: "gemm" at offset 0
 * (absent, as proto3 writes it) for 2,500 ps with correlation_id 5, and an
 * aggregate (num_occurrences 3, no time). Host plane, line "python3" at
 * 500 ns: "MatMul" at 200,000 ps for 1,999,999 ps (-> 1,999 ns). */
static size_t hand_made(unsigned char *out)
{
    wb ev1 = {0}, st = {0}, ev2 = {0}, line = {0}, plane = {0}, hev = {0}, hline = {0}, host = {0}, space = {0};
    put_int(&st, 1, 9);
    put_int(&st, 4, 5);
    put_int(&ev1, 1, 1);
    put_int(&ev1, 3, 2500);
    put_msg(&ev1, 4, &st);
    put_int(&ev2, 1, 1);
    put_int(&ev2, 5, 3);
    put_int(&line, 1, 7);
    put_str(&line, 2, "Stream #7(Compute)");
    put_int(&line, 3, 1000);
    put_msg(&line, 4, &ev1);
    put_msg(&line, 4, &ev2);
    put_str(&plane, 2, "/device:GPU:0");
    put_msg(&plane, 3, &line);   /* lines before the metadata: order is free */
    put_meta(&plane, 4, 1, "gemm");
    put_meta(&plane, 5, 9, "correlation_id");
    put_int(&hev, 1, 2);
    put_int(&hev, 2, 200000);
    put_int(&hev, 3, 1999999);
    put_int(&hline, 1, 42);
    put_str(&hline, 2, "python3");
    put_int(&hline, 3, 500);
    put_msg(&hline, 4, &hev);
    put_str(&host, 2, "/host:CPU");
    put_meta(&host, 4, 2, "MatMul");
    put_msg(&host, 3, &hline);
    put_msg(&space, 1, &plane);
    put_msg(&space, 1, &host);
    memcpy(out, space.b, space.n);
    return space.n;
}

/* The hand-made space read whole or counts-only; NULL (and the test
 * failed) when it is refused. */
static ts_rank *load_hand_made(bool counts_only)
{
    unsigned char b[4096];
    size_t n = hand_made(b);
    ts_rank *r = NULL;
    ts_error err = {0};
    if (ts__xplane_ingest_buffer("h.xplane.pb", b, n, counts_only, &r, &err)) {
        fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, err.msg);
        ts_test_failures++;
    }
    return r;
}

TEST(xplane_reads_a_hand_made_space)
{
    ts_rank *r = load_hand_made(false);
    if (!r) return;
    CHECK_EQ_INT(r->slices.n, 2);
    bool gemm = false, matmul = false;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        const char *name = ts__rank_str(r, r->slices.name[s]);
        const ts_track *t = &r->tracks[r->slices.track[s]];
        if (!strcmp(name, "gemm")) {
            gemm = true;
            CHECK_EQ_INT(r->slices.ts_ns[s], 1000);
            CHECK_EQ_INT(r->slices.dur_ns[s], 2);
            CHECK_EQ_INT(r->slices.kind[s], TS_KIND_KERNEL);
            CHECK_EQ_INT(r->slices.corr[s], 5);
            CHECK_EQ_INT(t->kind, TS_TRACK_GPU_STREAM);
            CHECK_EQ_INT(t->device, 0);
            CHECK_EQ_INT(t->stream, 7);
        }
        if (!strcmp(name, "MatMul")) {
            matmul = true;
            CHECK_EQ_INT(r->slices.ts_ns[s], 700);
            CHECK_EQ_INT(r->slices.dur_ns[s], 1999);
            CHECK_EQ_INT(r->slices.kind[s], TS_KIND_CPU_OP);
            CHECK_EQ_STR(ts__rank_str(r, t->name_id), "python3");
        }
    }
    CHECK(gemm && matmul);
    CHECK_EQ_INT(r->warn_count[TS_WARN_OTHER], 1);   /* the aggregate */
    ts__rank_destroy(r);
}

TEST(xplane_refuses_damaged_bytes_with_their_offset)
{
    unsigned char b[4096];
    size_t n = hand_made(b);
    ts_rank *r;
    ts_error err = {0};
    CHECK(ts__xplane_ingest_buffer("cut.xplane.pb", b, n - 3, false, &r, &err) != TS_OK);
    CHECK(r == NULL);
    CHECK(strstr(err.msg, "cut.xplane.pb: byte ") == err.msg && strstr(err.msg, "past the end"));
    err = (ts_error){0};
    CHECK(ts__xplane_ingest_buffer("x.xplane.pb", "\x0b\x00", 2, false, &r, &err) != TS_OK);
    CHECK_EQ_STR(err.msg, "x.xplane.pb: byte 0: protobuf wire type 3, 4, 6 or 7 (groups or not protobuf)");
    err = (ts_error){0};
    CHECK(ts__xplane_ingest_buffer("e.xplane.pb", "\x10\x01", 2, false, &r, &err) != TS_OK);
    CHECK_EQ_STR(err.msg, "e.xplane.pb: byte 0: not a TensorFlow XSpace (no XPlane in field 1)");
    /* an 11-byte varint */
    ts_pb_input in;
    ts_pb c = ts__pb_open(&in, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
    ts_pb_field f;
    CHECK(!ts__pb_next(&c, &f));
    CHECK_EQ_STR(in.err, "protobuf varint longer than 10 bytes");
}

/* info's counts-only load: the hand-made space's rows and warning as a
 * whole load has them, its stat (correlation_id 5) as no arg; a stat whose
 * metadata id is cut short inside it refused by both loads alike. */
TEST(xplane_counts_only_load_checks_stats_but_keeps_none)
{
    ts_rank *r = load_hand_made(true);
    if (!r) return;
    CHECK_EQ_INT(r->slices.n, 2);
    CHECK_EQ_INT(r->n_tracks, 2);
    CHECK_EQ_INT(r->warn_count[TS_WARN_OTHER], 1);
    for (uint32_t s = 0; s < r->slices.n; s++) CHECK_EQ_INT(r->slices.n_args[s], 0);
    CHECK_EQ_INT(r->args.n, r->n_meta_args);
    ts__rank_destroy(r);
    /* event {metadata 1, stats {08 ff}}: the stat's varint (byte 24) runs to its end (25, by hand) */
    wb ev = {0}, line = {0}, plane = {0}, space = {0};
    put_int(&ev, 1, 1);
    put_bytes(&ev, 4, "\x08\xff", 2);
    put_int(&line, 1, 7);
    put_msg(&line, 4, &ev);
    put_str(&plane, 2, "/host:CPU");
    put_msg(&plane, 3, &line);
    put_msg(&space, 1, &plane);
    ts_error whole = {0}, counts = {0};
    CHECK(ts__xplane_ingest_buffer("s.xplane.pb", space.b, space.n, false, &r, &whole) != TS_OK);
    CHECK(ts__xplane_ingest_buffer("s.xplane.pb", space.b, space.n, true, &r, &counts) != TS_OK);
    CHECK_EQ_STR(whole.msg, "s.xplane.pb: byte 25: protobuf varint cut short");
    CHECK_EQ_STR(counts.msg, whole.msg);
}

TEST(xplane_reads_the_real_bert_capture)
{
    const char *path = ts_test_data("tensorflow/bert-squad-8gpu.xplane.pb.gz");
    if (access(path, R_OK)) SKIP("%s missing", path);
    ts_job *t = NULL;
    ts_error err;
    if (ts_job_load(&path, 1, NULL, &t, &err)) TS_FAIL_("%s", err.msg);
    const ts_rank *r = t->ranks[0];
    /* the protobuf Python module: 23,128 timed events, 1,330 kernels and 226
     * copies on GPU streams, 15,354 host events */
    CHECK_EQ_INT(r->slices.n, 23128);
    uint32_t k = 0, c = 0, h = 0, with_corr = 0;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        k += r->slices.kind[s] == TS_KIND_KERNEL;
        c += r->slices.kind[s] == TS_KIND_GPU_MEMCPY;
        h += r->slices.kind[s] == TS_KIND_CPU_OP;
        with_corr += r->slices.kind[s] == TS_KIND_KERNEL && r->slices.corr[s] >= 0;
    }
    CHECK_EQ_INT(k, 1330);
    CHECK_EQ_INT(c, 226);
    CHECK_EQ_INT(h, 15354);
    CHECK(with_corr > 0);
    ts_job_destroy(t);
}
