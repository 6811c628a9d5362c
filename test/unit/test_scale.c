/* test_scale.c - the bounded path from rank files (ts_graph_load, issue 27):
 * the graph it builds is the in-memory path's, row for row, on the real
 * trace_filter pair (also when the file names do not follow the ranks, so
 * the ranks are moved into order); the memory budget stops a load with the
 * phase named and nothing handed back; --fold-replicas on ranks that are
 * not replicas folds nothing. Groups of real replicas and the CLI are tested
 * in test/e2e/scale_bounded_path.sh. */
#include "test.h"

#include <sys/stat.h>
#include <unistd.h>

#include "graph/build.h"
#include "graph/graph.h"
#include "graph/stream.h"
#include "trainscope/graph.h"
#include "trainscope/ingest.h"
#include "trainscope/replay.h"

/* The pair copied under names whose order is not the ranks' (rank 1 first). */
static int copy_pair(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/ts_test_scale.XXXXXX");
    if (!mkdtemp(dir)) return -1;
    const char *from[2] = {"kineto/trace_filter/sampled_rank-0.json.gz", "kineto/trace_filter/sampled_rank-1.json.gz"};
    const char *to[2] = {"b.json.gz", "a.json.gz"};
    for (int i = 0; i < 2; i++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "cp '%s' '%s/%s'", ts_test_data(from[i]), dir, to[i]);
        if (system(cmd) != 0) return -1;
    }
    return 0;
}

static void remove_pair(const char *dir)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* Every node and edge column, the collectives and the offsets. */
static int same_graph(const ts_graph *a, const ts_graph *b)
{
    if (a->nodes.n != b->nodes.n || a->edges.n != b->edges.n || a->n_colls != b->n_colls || a->n_ranks != b->n_ranks ||
        a->n_lanes != b->n_lanes)
        return 0;
    for (uint32_t n = 0; n < a->nodes.n; n++)
        if (a->nodes.rank[n] != b->nodes.rank[n] || a->nodes.kind[n] != b->nodes.kind[n] ||
            a->nodes.lane[n] != b->nodes.lane[n] || a->nodes.start_ns[n] != b->nodes.start_ns[n] ||
            a->nodes.dur_ns[n] != b->nodes.dur_ns[n] || a->nodes.waits[n] != b->nodes.waits[n] ||
            a->nodes.coll[n] != b->nodes.coll[n] || a->nodes.iteration[n] != b->nodes.iteration[n] ||
            strcmp(ts__graph_node_name(a, n), ts__graph_node_name(b, n)) ||
            ts__graph_parent_node(a, n) != ts__graph_parent_node(b, n))
            return 0;
    for (uint32_t e = 0; e < a->edges.n; e++)
        if (a->edges.src[e] != b->edges.src[e] || a->edges.dst[e] != b->edges.dst[e] ||
            a->edges.kind[e] != b->edges.kind[e] || a->edges.flags[e] != b->edges.flags[e] ||
            a->edges.gap_ns[e] != b->edges.gap_ns[e])
            return 0;
    for (uint32_t r = 0; r < a->n_ranks; r++)
        if (a->align[r].offset_ns != b->align[r].offset_ns || a->rank_number[r] != b->rank_number[r]) return 0;
    for (uint32_t c = 0; c < a->n_colls; c++)
        if (a->colls[c].bytes != b->colls[c].bytes || a->colls[c].n_members != b->colls[c].n_members ||
            strcmp(ts__str(&a->strings, a->colls[c].name), ts__str(&b->strings, b->colls[c].name)))
            return 0;
    return 1;
}

/* The same replay prediction and critical path (length and every category). */
static int same_answers(const ts_graph *g1, const ts_graph *g2)
{
    ts_error err = {0};
    ts_replay *r1 = NULL, *r2 = NULL;
    ts_critical_path *c1 = NULL, *c2 = NULL;
    int same = ts_replay_run_graph(g1, NULL, &r1, &err) == TS_OK && ts_replay_run_graph(g2, NULL, &r2, &err) == TS_OK &&
               ts_replay_predicted_iteration_ns(r1) == ts_replay_predicted_iteration_ns(r2) &&
               ts_critical_path_create(g1, -1, &c1, &err) == TS_OK && ts_critical_path_create(g2, -1, &c2, &err) == TS_OK &&
               ts_critical_path_length_ns(c1) == ts_critical_path_length_ns(c2);
    for (int k = 0; same && k < TS_CP_COUNT; k++)
        same = ts_critical_path_category_ns(c1, (ts_cp_category)k) == ts_critical_path_category_ns(c2, (ts_cp_category)k);
    ts_critical_path_destroy(c1);
    ts_critical_path_destroy(c2);
    ts_replay_destroy(r1);
    ts_replay_destroy(r2);
    return same;
}

TEST(bounded_graph_is_the_in_memory_graph_on_the_real_pair_named_out_of_rank_order)
{
    NEED_DATA(ts_test_data("kineto/trace_filter/sampled_rank-0.json.gz"));
    char dir[64];
    if (copy_pair(dir, sizeof dir)) TS_FAIL_("cannot copy the pair to /tmp");
    const char *paths[1] = {dir};
    ts_job *t1 = NULL, *t2 = NULL;
    ts_graph *g1 = NULL, *g2 = NULL;
    ts_error err = {0};
    int rc1 = ts_job_load(paths, 1, NULL, &t1, &err);
    if (rc1 == TS_OK) rc1 = ts_graph_create(t1, NULL, &g1, &err);
    ts_graph_options go = {.size = sizeof go};
    int rc2 = ts_graph_load(paths, 1, NULL, &go, &t2, &g2, &err);
    remove_pair(dir);
    CHECK_EQ_INT(rc1, TS_OK);
    CHECK_EQ_INT(rc2, TS_OK);
    CHECK_EQ_INT(g2->rank_number[0], 0);   /* a.json.gz (rank 1) was read first */
    CHECK(same_graph(g1, g2));
    CHECK(same_answers(g1, g2));
    ts_graph_destroy(g1);
    ts_graph_destroy(g2);
    ts_job_destroy(t1);
    ts_job_destroy(t2);
}

TEST(memory_budget_stops_the_load_naming_the_phase_and_hands_back_nothing)
{
    const char *p = ts_test_data("kineto/nccl_parser_config/nccl_data.json.gz");
    NEED_DATA(p);
    ts_job *t = NULL;
    ts_graph *g = NULL;
    ts_error err = {0};
    ts_graph_options go = {.size = sizeof go};
    ts_set_memory_limit(ts_memory_held() + (1u << 20));   /* 1 MB more than held: the 9.8 MB trace cannot fit */
    int rc = ts_graph_load(&p, 1, NULL, &go, &t, &g, &err);
    size_t held = 0, asked = 0;
    const char *phase = NULL;
    bool hit = ts_memory_limit_hit(&held, &asked, &phase);
    ts_set_memory_limit(0);
    CHECK_EQ_INT(rc, TS_ENOMEM);
    CHECK(t == NULL && g == NULL);
    CHECK(hit);
    CHECK_EQ_STR(phase, "loading rank files");
    CHECK(asked > 0);
    CHECK(!ts_memory_limit_hit(NULL, NULL, NULL));   /* a new budget clears the record */
    CHECK_EQ_INT(ts_graph_load(&p, 1, NULL, &go, &t, &g, &err), TS_OK);   /* and the same load then succeeds */
    ts_graph_destroy(g);
    ts_job_destroy(t);
}

TEST(fold_replicas_folds_nothing_when_no_rank_replicates_another)
{
    const char *p = ts_test_data("kineto/trace_filter");
    NEED_DATA(ts_test_data("kineto/trace_filter/sampled_rank-0.json.gz"));
    ts_job *t1 = NULL, *t2 = NULL;
    ts_graph *g1 = NULL, *g2 = NULL;
    ts_error err = {0};
    ts_graph_options plain = {.size = sizeof plain}, fold = {.size = sizeof fold, .fold_replicas = 1};
    CHECK_EQ_INT(ts_graph_load(&p, 1, NULL, &plain, &t1, &g1, &err), TS_OK);
    CHECK_EQ_INT(ts_graph_load(&p, 1, NULL, &fold, &t2, &g2, &err), TS_OK);
    CHECK_EQ_INT(ts_graph_replica_of(g2, 0), 0);
    CHECK_EQ_INT(ts_graph_replica_of(g2, 1), 1);
    CHECK_EQ_INT(g2->n_folded, 0);
    CHECK(same_graph(g1, g2));
    ts_graph_destroy(g1);
    ts_graph_destroy(g2);
    ts_job_destroy(t1);
    ts_job_destroy(t2);
}

TEST(bounded_load_names_the_file_a_set_cannot_use)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/ts_test_scale_bad.XXXXXX");
    if (!mkdtemp(dir)) TS_FAIL_("mkdtemp");
    char link[128], cmd[256];
    snprintf(link, sizeof link, "%s/rank-3.json", dir);
    if (symlink("/nonexistent/rank-3.json", link)) TS_FAIL_("symlink");
    const char *paths[1] = {dir};
    ts_job *t = NULL;
    ts_graph *g = NULL;
    ts_error err = {0};
    ts_graph_options go = {.size = sizeof go};
    int rc = ts_graph_load(paths, 1, NULL, &go, &t, &g, &err);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    CHECK(rc != TS_OK);
    CHECK(t == NULL && g == NULL);
    CHECK(strstr(err.msg, "rank-3.json") != NULL);
}

/* Where ts_graph_load adds each file (the order a distributed run's process 0
 * gives the local graphs' warnings in, whatever order the ranks arrive):
 * files all named rank-N go by N (rank-10 after rank-2, as counted by hand),
 * any other list keeps its name order. */
TEST(file_order_is_the_rank_order_of_rank_named_files_else_the_names_order)
{
    char *named[4] = {"/d/rank-0.json", "/d/rank-10.json", "/d/rank-11.json", "/d/rank-2.json"};
    uint32_t pos[4];
    CHECK_EQ_INT(ts__graph_file_order(named, 4, pos), TS_OK);
    CHECK_EQ_INT(pos[0], 0);
    CHECK_EQ_INT(pos[1], 2);
    CHECK_EQ_INT(pos[2], 3);
    CHECK_EQ_INT(pos[3], 1);
    char *mixed[3] = {"/d/a.json", "/d/rank-1.json", "/d/rank-0.json"};
    CHECK_EQ_INT(ts__graph_file_order(mixed, 3, pos), TS_OK);
    for (uint32_t i = 0; i < 3; i++) CHECK_EQ_INT(pos[i], i);
}

/* ---- ranks condensed elsewhere (a distributed run's other processes) ---- */

/* Every rank of paths condensed alone (ts__graph_part_build), written as
 * bytes, read back (writing the same bytes again) and added to a stream in
 * reverse order, each at its file's place, as process 0 adds what arrives. */
static int graph_from_parts(const char *const *paths, ts_job **t, ts_graph **g)
{
    ts_load_share sh;
    ts_error err = {0};
    char **files = NULL;
    uint32_t nf = 0, pos[16];
    ts_graph_options go = {.size = sizeof go};
    ts_graph_stream *s = NULL;
    if (ts__load_share(paths, 1, NULL, 0, 1, &sh, &err) || sh.n > 16 ||
        ts__trace_files(paths, 1, &files, &nf, NULL, 0, &err) || ts__graph_file_order(files, nf, pos) ||
        ts__graph_stream_begin(sh.n, &go, &s, &err)) {
        fprintf(stderr, "graph_from_parts: %s\n", err.msg);
        return TS_EINVAL;
    }
    ts__trace_files_free(files, nf);
    int rc = TS_OK;
    for (uint32_t i = sh.n; i-- > 0 && rc == TS_OK;) {
        ts_graph_part *p = NULL, *q = NULL;
        ts_buf b1, b2;
        ts__buf_init(&b1);
        ts__buf_init(&b2);
        rc = ts__graph_part_build(sh.ranks[i], &go, &p, &err);
        sh.ranks[i] = NULL;
        if (rc == TS_OK) rc = ts__graph_part_serialize(p, &b1);
        if (rc == TS_OK) rc = ts__graph_part_deserialize(b1.s, b1.len, "test", &q, &err);
        if (rc == TS_OK) rc = ts__graph_part_serialize(q, &b2);
        if (rc == TS_OK && (b1.len != b2.len || memcmp(b1.s, b2.s, b1.len))) rc = TS_EFORMAT;   /* one spelling */
        ts__graph_part_free(p);
        if (rc == TS_OK) rc = ts__graph_stream_add_part_at(s, q, pos[sh.file[i]], &err);
        else ts__graph_part_free(q);
        ts__buf_free(&b1);
        ts__buf_free(&b2);
    }
    ts__load_share_free(&sh);
    if (rc == TS_OK) return ts__graph_stream_finish(s, t, g, &err);
    ts__graph_stream_abort(s);
    fprintf(stderr, "graph_from_parts: %s (%d)\n", err.msg, rc);
    return rc;
}

/* The same compact ranks, byte for byte as serialized. */
static int same_ranks(const ts_job *a, const ts_job *b)
{
    if (a->n_ranks != b->n_ranks) return 0;
    int same = 1;
    for (uint32_t r = 0; r < a->n_ranks && same; r++) {
        ts_buf x, y;
        ts__buf_init(&x);
        ts__buf_init(&y);
        same = ts__rank_serialize(a->ranks[r], &x) == TS_OK && ts__rank_serialize(b->ranks[r], &y) == TS_OK &&
               x.len == y.len && memcmp(x.s, y.s, x.len) == 0 && a->ranks[r]->slices.corr == NULL &&
               b->ranks[r]->slices.corr == NULL && b->ranks[r]->summary;
        ts__buf_free(&x);
        ts__buf_free(&y);
    }
    return same;
}

/* On the real pair (named out of rank order) and on nccl_data (whose local
 * graph warns: no cuda_sync events; 3 iterations), the stream fed
 * condensed ranks that went through bytes holds what ts_graph_load's holds:
 * every graph column, the warnings in order, the compact ranks byte for byte,
 * the same replay and critical path. */
TEST(condensed_ranks_through_bytes_give_the_bounded_path_graph)
{
    NEED_DATA(ts_test_data("kineto/trace_filter/sampled_rank-0.json.gz"));
    NEED_DATA(ts_test_data("kineto/nccl_parser_config/nccl_data.json.gz"));
    char dir[64];
    if (copy_pair(dir, sizeof dir)) TS_FAIL_("cannot copy the pair to /tmp");
    const char *sets[2] = {dir, ts_test_data("kineto/nccl_parser_config/nccl_data.json.gz")};
    for (int k = 0; k < 2; k++) {
        const char *paths[1] = {sets[k]};
        ts_job *t1 = NULL, *t2 = NULL;
        ts_graph *g1 = NULL, *g2 = NULL;
        ts_error err = {0};
        ts_graph_options go = {.size = sizeof go};
        CHECK_EQ_INT(ts_graph_load(paths, 1, NULL, &go, &t1, &g1, &err), TS_OK);
        CHECK_EQ_INT(graph_from_parts(paths, &t2, &g2), TS_OK);
        if (!g1 || !g2) break;
        CHECK(same_graph(g1, g2));
        CHECK(same_ranks(t1, t2));
        CHECK_EQ_INT(g1->n_warnings, g2->n_warnings);
        int no_sync = 0;   /* nccl_data has no cuda_sync events (a count of its JSON): its local graph says so */
        for (uint32_t i = 0; i < g2->n_warnings; i++) no_sync += strstr(g2->warnings[i], "no cuda_sync events") != NULL;
        CHECK_EQ_INT(no_sync, k == 1);
        for (uint32_t i = 0; i < g1->n_warnings && i < g2->n_warnings; i++) CHECK_EQ_STR(g1->warnings[i], g2->warnings[i]);
        CHECK(g1->n_stream_waits == g2->n_stream_waits && g1->n_stream_waits_followed == g2->n_stream_waits_followed &&
              g1->n_stream_waits_idle == g2->n_stream_waits_idle);
        CHECK(k == 0 || t2->ranks[0]->n_iterations == 3);   /* its 3 ProfilerStep# events */
        CHECK(same_answers(g1, g2));
        ts_graph_destroy(g1);
        ts_graph_destroy(g2);
        ts_job_destroy(t1);
        ts_job_destroy(t2);
    }
    remove_pair(dir);
}

/* A condensed rank cut anywhere, or with a node naming a slice past the
 * compact rank's, is an error naming the bytes and the offset; never a
 * part, never a read out of bounds (ASan). */
TEST(damaged_condensed_rank_is_refused)
{
    const char *path = ts_test_data("kineto/trace_filter/sampled_rank-0.json.gz");
    NEED_DATA(path);
    ts_load_share sh;
    ts_error err = {0};
    const char *paths[1] = {path};
    ts_graph_options go = {.size = sizeof go};
    ts_graph_part *p = NULL, *q = NULL;
    CHECK_EQ_INT(ts__load_share(paths, 1, NULL, 0, 1, &sh, &err), TS_OK);
    CHECK_EQ_INT(sh.n, 1);
    if (sh.n != 1) return;
    CHECK_EQ_INT(ts__graph_part_build(sh.ranks[0], &go, &p, &err), TS_OK);
    sh.ranks[0] = NULL;
    ts__load_share_free(&sh);
    ts_buf b;
    ts__buf_init(&b);
    CHECK_EQ_INT(ts__graph_part_serialize(p, &b), TS_OK);
    for (size_t cut = 0; cut < b.len; cut += cut < 4096 || b.len - cut < 4096 ? 1 : 499) {
        CHECK(ts__graph_part_deserialize(b.s, cut, "cut", &q, &err) == TS_EFORMAT);
        CHECK(q == NULL && strncmp(err.msg, "cut", 3) == 0 && strstr(err.msg, "byte ") != NULL);
    }
    /* the node table: u32 count, then kinds, then slices; after the rank and the lanes */
    uint64_t rank_len;
    memcpy(&rank_len, b.s + 8, 8);
    size_t nodes = 16 + rank_len + 4 + (size_t)p->g->n_lanes * 9;
    uint32_t n, bad = p->rank->slices.n;
    memcpy(&n, b.s + nodes, 4);
    CHECK_EQ_INT(n, p->g->nodes.n);
    memcpy(b.s + nodes + 4 + n, &bad, 4);   /* node 0's slice */
    CHECK(ts__graph_part_deserialize(b.s, b.len, "flipped", &q, &err) == TS_EFORMAT);
    if (!strstr(err.msg, "a node of no known kind, slice, lane or iteration")) TS_FAIL_("said: %s", err.msg);
    char at[64];
    snprintf(at, sizeof at, "flipped: byte %zu:", nodes + 4);   /* names node 0's first byte */
    CHECK(strncmp(err.msg, at, strlen(at)) == 0);
    ts__buf_free(&b);
    ts__graph_part_free(p);
}
