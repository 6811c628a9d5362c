/* test_chakra.c - Chakra execution traces (src/ingest/chakra.c).
 *
 * Hand-made traces (labelled: encoded here field by field after
 * mlcommons/chakra's et_def.proto, no converter wrote them) with known
 * schedules, bad input, and the real chakra.0.et, whose totals
 * scripts/chakra_totals.py counts with Google's protobuf module.
 */
#include "test.h"
#include "pb_write.h"

#include <unistd.h>

#include "ingest/ingest.h"
#include "trace/model.h"
#include "trainscope/ingest.h"

static void put_attr_int(wb *w, const char *name, uint32_t field, uint64_t v)
{
    wb a = {0};
    put_str(&a, 1, name);
    put_int(&a, field, v);
    put_msg(w, 10, &a);
}

/* A node: id, name, type, data deps (packed), runtime (us), is_cpu_op, tid. */
static void put_node(wb *out, uint64_t id, const char *name, int type, const uint64_t *deps, int n_deps,
                     uint64_t runtime_us, int cpu, int tid)
{
    wb nd = {0}, packed = {0};
    put_int(&nd, 1, id);
    put_str(&nd, 2, name);
    put_int(&nd, 3, (uint64_t)type);
    for (int i = 0; i < n_deps; i++) put_varint(&packed, deps[i]);
    if (n_deps) put_bytes(&nd, 5, packed.b, packed.n);
    if (runtime_us) put_int(&nd, 7, runtime_us);
    put_attr_int(&nd, "is_cpu_op", 27, (uint64_t)cpu);
    put_attr_int(&nd, "tid", 9, (uint64_t)tid);
    if (type == 7) {
        put_attr_int(&nd, "comm_type", 9, 0);
        put_attr_int(&nd, "comm_size", 9, 4096);
    }
    put_varint(out, nd.n);
    memcpy(out->b + out->n, nd.b, nd.n);
    out->n += nd.n;
}

static void put_header(wb *out)
{
    wb gm = {0};
    put_str(&gm, 1, "0.0.4");
    put_varint(out, gm.n);
    memcpy(out->b + out->n, gm.b, gm.n);
    out->n += gm.n;
}

/* CPU thread 1: A (10 us) then B (5 us, no deps); GPU stream 7: K (20 us)
 * after A through the untimed node Z; all_reduce C (3 us, GPU) after K and B.
 * Listed with C first (a dependency on a later node). Replay, ready nodes in
 * file order, one at a time per lane: A 0-10, B 10-15, Z at 15 (after B on
 * thread 1), K 15-35, C 35-38. */
static wb hand_made(void)
{
    wb w = {0};
    put_header(&w);
    uint64_t c_deps[] = {3, 2}, z_deps[] = {1}, k_deps[] = {4};
    put_node(&w, 5, "ncclKernel_AllReduce", 7, c_deps, 2, 3, 0, 7);
    put_node(&w, 1, "A", 4, NULL, 0, 10, 1, 1);
    put_node(&w, 2, "B", 4, NULL, 0, 5, 1, 1);
    put_node(&w, 4, "Z", 4, z_deps, 1, 0, 1, 1);
    put_node(&w, 3, "K", 4, k_deps, 1, 20, 0, 7);
    return w;
}

static uint32_t slice_named(const ts_rank *r, const char *name)
{
    for (uint32_t s = 0; s < r->slices.n; s++)
        if (!strcmp(ts__rank_str(r, r->slices.name[s]), name)) return s;
    return TS_NONE32;
}

TEST(chakra_replays_a_hand_made_graph)
{
    wb w = hand_made();
    ts_rank *r;
    ts_error err = {0};
    if (ts__chakra_ingest_buffer("h.0.et", w.b, w.n, &r, &err)) TS_FAIL_("%s", err.msg);
    CHECK_EQ_INT(r->slices.n, 4);
    CHECK_EQ_INT(r->instants.n, 1);
    const char *names[] = {"A", "B", "K", "ncclKernel_AllReduce"};
    int64_t start[] = {0, 10000, 15000, 35000}, dur[] = {10000, 5000, 20000, 3000};
    for (int i = 0; i < 4; i++) {
        uint32_t s = slice_named(r, names[i]);
        if (s == TS_NONE32) TS_FAIL_("%s missing", names[i]);
        CHECK_EQ_INT(r->slices.ts_ns[s], start[i]);
        CHECK_EQ_INT(r->slices.dur_ns[s], dur[i]);
    }
    uint32_t k = slice_named(r, "K"), a = slice_named(r, "A"), c = slice_named(r, "ncclKernel_AllReduce");
    CHECK_EQ_INT(r->slices.kind[k], TS_KIND_KERNEL);
    CHECK_EQ_INT(r->tracks[r->slices.track[k]].stream, 7);
    CHECK_EQ_INT(r->slices.kind[a], TS_KIND_CPU_OP);
    int64_t bytes = 0;
    CHECK(ts__slice_arg_i64(r, c, "In msg nelems", &bytes) && bytes == 4096);
    CHECK_EQ_STR(ts__slice_arg_str(r, c, "Collective name"), "all_reduce");
    /* flows: A->K (through Z), K->C, B->C; all bound */
    CHECK_EQ_INT(r->flows.n, 3);
    bool a_to_k = false;
    for (uint32_t f = 0; f < r->flows.n; f++) {
        CHECK(r->flows.from[f] != TS_NONE32 && r->flows.to[f] != TS_NONE32);
        CHECK_EQ_INT(ts__flow_kind(&r->flows, f), TS_FLOW_DEP);
        a_to_k |= r->flows.from[f] == a && r->flows.to[f] == k;
    }
    CHECK(a_to_k);
    ts__rank_destroy(r);
}

/* One CPU lane, file order X (after Y, listed later), Y, W: Y starts first;
 * once it is done X is ready and comes before W in file order, so X runs
 * next: Y 0-2 us, X 2-5, W 5-9 (by hand; starting W first would give
 * W 2-6, X 6-9). */
TEST(chakra_replay_starts_a_woken_node_in_file_order)
{
    wb w = {0};
    put_header(&w);
    uint64_t x_deps[] = {2};
    put_node(&w, 1, "X", 4, x_deps, 1, 3, 1, 1);
    put_node(&w, 2, "Y", 4, NULL, 0, 2, 1, 1);
    put_node(&w, 3, "W", 4, NULL, 0, 4, 1, 1);
    ts_rank *r;
    ts_error err = {0};
    if (ts__chakra_ingest_buffer("w.0.et", w.b, w.n, &r, &err)) TS_FAIL_("%s", err.msg);
    const char *names[] = {"Y", "X", "W"};
    int64_t start[] = {0, 2000, 5000};
    for (int i = 0; i < 3; i++) {
        uint32_t s = slice_named(r, names[i]);
        if (s == TS_NONE32) TS_FAIL_("%s missing", names[i]);
        CHECK_EQ_INT(r->slices.ts_ns[s], start[i]);
    }
    ts__rank_destroy(r);
}

/* Nodes with start_time_micros keep their own times (no replay): B at 100 us
 * though it depends on nothing, A at 7 us. */
TEST(chakra_keeps_recorded_start_times)
{
    wb w = {0};
    put_header(&w);
    wb a = {0}, b = {0};
    uint64_t deps[] = {1};
    put_int(&a, 1, 1);
    put_str(&a, 2, "A");
    put_int(&a, 3, 4);
    put_int(&a, 6, 7);
    put_int(&a, 7, 3);
    put_int(&b, 1, 2);
    put_str(&b, 2, "B");
    put_int(&b, 3, 4);
    wb packed = {0};
    put_varint(&packed, deps[0]);
    put_bytes(&b, 5, packed.b, packed.n);
    put_int(&b, 6, 100);
    put_int(&b, 7, 2);
    put_varint(&w, a.n);
    memcpy(w.b + w.n, a.b, a.n);
    w.n += a.n;
    put_varint(&w, b.n);
    memcpy(w.b + w.n, b.b, b.n);
    w.n += b.n;
    ts_rank *r;
    ts_error err = {0};
    if (ts__chakra_ingest_buffer("t.et", w.b, w.n, &r, &err)) TS_FAIL_("%s", err.msg);
    uint32_t sa = slice_named(r, "A"), sb = slice_named(r, "B");
    CHECK(sa != TS_NONE32 && sb != TS_NONE32);
    CHECK_EQ_INT(r->slices.ts_ns[sa], 7000);
    CHECK_EQ_INT(r->slices.ts_ns[sb], 100000);
    CHECK_EQ_INT(r->slices.dur_ns[sb], 2000);
    CHECK_EQ_INT(r->slices.kind[sa], TS_KIND_CPU_OP);   /* no is_cpu_op: a compute node runs on the host */
    CHECK_EQ_INT(r->flows.n, 1);
    CHECK(r->flows.from[0] == sa && r->flows.to[0] == sb);
    CHECK_EQ_STR(ts_rank_meta_str(r, "chakra_times"), "recorded (start_time_micros)");
    ts__rank_destroy(r);
}

TEST(chakra_refuses_what_is_not_chakra)
{
    ts_rank *r = NULL;
    ts_error err = {0};
    const char *json = "{\"traceEvents\": []}";
    CHECK(ts__chakra_ingest_buffer("j.et", json, strlen(json), &r, &err) != TS_OK);
    CHECK(r == NULL);
    CHECK(strstr(err.msg, "j.et: byte 0: ") == err.msg);
    wb w = hand_made();
    err = (ts_error){0};
    CHECK(ts__chakra_ingest_buffer("cut.et", w.b, w.n - 4, &r, &err) != TS_OK);
    CHECK(strstr(err.msg, "cut.et: byte ") == err.msg && strstr(err.msg, "past the end"));
    /* only a GlobalMetadata */
    wb h = {0};
    put_header(&h);
    err = (ts_error){0};
    CHECK(ts__chakra_ingest_buffer("h.et", h.b, h.n, &r, &err) != TS_OK);
    CHECK(strstr(err.msg, "no Node after its GlobalMetadata") != NULL);
    /* a dependency cycle: 1 <- 2 <- 1 */
    wb cy = {0};
    put_header(&cy);
    uint64_t d1[] = {2}, d2[] = {1};
    put_node(&cy, 1, "x", 4, d1, 1, 1, 1, 1);
    put_node(&cy, 2, "y", 4, d2, 1, 1, 1, 1);
    err = (ts_error){0};
    CHECK(ts__chakra_ingest_buffer("cy.et", cy.b, cy.n, &r, &err) != TS_OK);
    CHECK(strstr(err.msg, "cy.et: byte ") == err.msg && strstr(err.msg, "dependency cycle through node 1"));
    /* GlobalMetadata "x", then a node: id 1 (bytes 5-6), name "a" (7-9), an
     * empty packed data_deps field (10-11), then key 0x02 at byte 12: field
     * number 0 (fuzz_chakra found the empty field read through a NULL array) */
    static const char empty_deps[] = "\003\012\001x\012\010\001\022\001a*\000\0028\001";
    err = (ts_error){0};
    CHECK(ts__chakra_ingest_buffer("e.et", empty_deps, sizeof empty_deps - 1, &r, &err) != TS_OK);
    CHECK_EQ_STR(err.msg, "e.et: byte 12: protobuf field number 0 or past 2^29");
}

/* The shared chakra.0.et, loaded whole or as info loads it; NULL (a
 * message printed) when it cannot be. */
static ts_job *load_real(bool info)
{
    const char *path = ts_test_data("chakra/chakra.0.et");
    ts_job *t = NULL;
    ts_error err;
    if ((info ? ts_job_load_info : ts_job_load)(&path, 1, NULL, &t, &err)) fprintf(stderr, "%s\n", err.msg);
    return t;
}

TEST(chakra_reads_the_real_trace)
{
    if (access(ts_test_data("chakra/chakra.0.et"), R_OK)) SKIP("chakra/chakra.0.et missing");
    ts_job *t = load_real(false);
    if (!t) TS_FAIL_("chakra.0.et not loaded");
    const ts_rank *r = t->ranks[0];
    /* scripts/chakra_totals.py (Google's protobuf module): 3,664 nodes, 3,507
     * with a runtime summing 381,795 us, 21 COMM_COLL nodes of 102,441,032
     * bytes, 181,407 data dependencies between timed nodes, 4 lanes, the
     * longest dependency chain 46,140 us, the busiest lane 292,828 us. */
    CHECK_EQ_INT(r->rank, 0);
    CHECK_EQ_INT(r->slices.n, 3507);
    CHECK_EQ_INT(r->instants.n, 157);
    CHECK_EQ_INT(r->n_tracks, 4);
    int64_t total = 0, bytes = 0, lo = INT64_MAX, hi = 0;
    uint32_t comm = 0;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        total += r->slices.dur_ns[s];
        int64_t ty = 0, b = 0;
        if (ts__slice_arg_i64(r, s, "chakra_type", &ty) && ty == 7) {
            comm++;
            if (ts__slice_arg_i64(r, s, "bytes", &b)) bytes += b;
        }
        if (r->slices.ts_ns[s] < lo) lo = r->slices.ts_ns[s];
        if (ts__slice_end(r, s) > hi) hi = ts__slice_end(r, s);
    }
    CHECK_EQ_INT(total, 381795000LL);
    CHECK_EQ_INT(comm, 21);
    CHECK_EQ_INT(bytes, 102441032LL);
    CHECK_EQ_INT(r->flows.n, 181407);
    for (uint32_t f = 0; f < r->flows.n; f++) {   /* every dependency bound and honoured */
        CHECK(r->flows.from[f] != TS_NONE32 && r->flows.to[f] != TS_NONE32);
        CHECK(ts__slice_end(r, r->flows.from[f]) <= r->slices.ts_ns[r->flows.to[f]]);
    }
    /* a schedule spans at least its longest chain and busiest lane, at most the sum */
    CHECK(hi - lo >= 292828000LL && hi - lo >= 46140000LL && hi - lo <= 381795000LL);
    ts_job_destroy(t);
}

/* info's load (ts_job_load_info) counts the dependency flows without
 * storing them: the same 181,407 (scripts/chakra_totals.py), no rows. */
TEST(chakra_info_load_counts_the_flows)
{
    if (access(ts_test_data("chakra/chakra.0.et"), R_OK)) SKIP("chakra/chakra.0.et missing");
    ts_job *t = load_real(true);
    if (!t) TS_FAIL_("chakra.0.et not loaded");
    uint32_t rows[4];
    ts_rank_read_counts(t->ranks[0], rows);
    CHECK_EQ_INT(rows[0], 3507);
    CHECK_EQ_INT(rows[1], 157);
    CHECK_EQ_INT(rows[3], 181407);
    CHECK_EQ_INT(t->ranks[0]->flows.n, 0);
    ts_job_destroy(t);
}
