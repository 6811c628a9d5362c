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
    ts_replay *r1 = NULL, *r2 = NULL;
    CHECK_EQ_INT(ts_replay_run_graph(g1, NULL, &r1, &err), TS_OK);
    CHECK_EQ_INT(ts_replay_run_graph(g2, NULL, &r2, &err), TS_OK);
    CHECK_EQ_INT(ts_replay_predicted_iteration_ns(r1), ts_replay_predicted_iteration_ns(r2));
    ts_critical_path *c1 = NULL, *c2 = NULL;
    CHECK_EQ_INT(ts_critical_path_create(g1, -1, &c1, &err), TS_OK);
    CHECK_EQ_INT(ts_critical_path_create(g2, -1, &c2, &err), TS_OK);
    CHECK_EQ_INT(ts_critical_path_length_ns(c1), ts_critical_path_length_ns(c2));
    for (int k = 0; k < TS_CP_COUNT; k++)
        CHECK_EQ_INT(ts_critical_path_category_ns(c1, (ts_cp_category)k), ts_critical_path_category_ns(c2, (ts_cp_category)k));
    ts_critical_path_destroy(c1);
    ts_critical_path_destroy(c2);
    ts_replay_destroy(r1);
    ts_replay_destroy(r2);
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
