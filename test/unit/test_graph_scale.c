/* test_graph_scale.c - the memory-saving paths of graph building and replay
 * at scale: the simulator borrowing the graph's columns (and copying them
 * before the first append, never writing the graph, adding the ranks' clock
 * offsets into its copies), evaluation in the
 * graph's own topological order against Kahn's order, a replicated job
 * replaying its measured times exactly, and the unmodified replay (transfer
 * times left on the exits) exporting the same schedule as a what-if replay
 * (transfer times moved onto the barriers). Real traces from $TS_DATA. */
#include <unistd.h>

#include "test.h"
#include "graph/build.h"
#include "replay/replay.h"
#include "trainscope/ingest.h"

/* The shared-data trace rel, loaded; NULL (having printed why) when it
 * does not load. Callers check NEED_DATA first, so NULL is a failure. */
static ts_job *load(const char *rel)
{
    const char *path = ts_test_data(rel);
    ts_job *t = NULL;
    ts_error err = {0};
    if (ts_job_load(&path, 1, NULL, &t, &err) == TS_OK) return t;
    fprintf(stderr, "%s\n", err.msg);
    return NULL;
}

/* Points of every node after a run, start then end. */
static int64_t *snapshot(const ts_sim *s)
{
    int64_t *v = malloc(2 * (size_t)s->n_nodes * sizeof *v);
    for (uint32_t n = 0; v && n < s->n_nodes; n++) { v[2 * n] = s->start_ns[n]; v[2 * n + 1] = s->end_ns[n]; }
    return v;
}

/* Nodes among the first n whose points differ from the snapshot. */
static uint32_t differing(const ts_sim *s, const int64_t *v, uint32_t n_nodes)
{
    uint32_t bad = 0;
    for (uint32_t n = 0; n < n_nodes; n++) bad += s->start_ns[n] != v[2 * n] || s->end_ns[n] != v[2 * n + 1];
    return bad;
}

TEST(simulating_in_the_graphs_order_equals_kahns_order_on_real_traces)
{
    const char *files[] = {
        "kineto/nccl_parser_config/nccl_data.json.gz",
        "kineto/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
        "kineto/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        NEED_DATA(ts_test_data(files[i]));
        ts_job *t = load(files[i]);
        CHECK(t);
        ts_graph *g = NULL;
        ts_replay *r = NULL;
        ts_error err = {0};
        CHECK_EQ_INT(ts_graph_create(t, NULL, &g, &err), TS_OK);
        CHECK_EQ_INT(ts_replay_run_graph(g, NULL, &r, &err), TS_OK);
        CHECK(r->sim.base_topo != NULL);                /* the fast path ran */
        int64_t *v = snapshot(&r->sim);
        r->sim.base_topo = NULL;                        /* now Kahn's algorithm */
        CHECK_EQ_INT(ts__sim_run(&r->sim, &err), TS_OK);
        CHECK_EQ_INT(differing(&r->sim, v, r->sim.n_nodes), 0);
        /* unmodified: every point is the measured one */
        uint32_t off = 0;
        for (uint32_t n = 0; n < r->sim.n_nodes; n++)
            off += r->sim.start_ns[n] != ts__sim_meas_start(&r->sim, n) || r->sim.end_ns[n] != ts__sim_meas_end(&r->sim, n);
        CHECK_EQ_INT(off, 0);
        free(v);
        ts_replay_destroy(r);
        ts_graph_destroy(g);
        ts_job_destroy(t);
    }
}

/* Appending to a sim that borrows the graph's columns copies them first:
 * the graph's rows stay as they were, the sim sees the same values, and
 * the run falls back to Kahn's order over the larger graph. */
TEST(appending_to_a_replay_copies_the_borrowed_graph_columns_and_leaves_the_graph_alone)
{
    NEED_DATA(ts_test_data("kineto/nccl_parser_config/nccl_data.json.gz"));
    ts_job *t = load("kineto/nccl_parser_config/nccl_data.json.gz");
    CHECK(t);
    ts_graph *g = NULL;
    ts_replay *r = NULL;
    ts_error err = {0};
    CHECK_EQ_INT(ts_graph_create(t, NULL, &g, &err), TS_OK);
    CHECK_EQ_INT(ts_replay_run_graph(g, NULL, &r, &err), TS_OK);
    ts_sim *s = &r->sim;
    CHECK(s->rank == g->nodes.rank && s->esrc == g->edges.src);   /* borrowed, not copied */
    uint32_t nn = s->n_nodes, ne = s->n_edges, last = nn - 1;
    int64_t *v = snapshot(s);
    uint32_t x = ts__sim_add_node(s, 0, TS_NODE_CPU_OP, s->end_ns[last], 5, INT64_MIN, INT64_MIN);
    uint32_t e = ts__sim_add_edge(s, last, x, TS_SIM_FROM_END, 0);
    CHECK(x == nn && e == ne);
    CHECK(s->rank != g->nodes.rank && s->esrc != g->edges.src);   /* owned copies now */
    CHECK(memcmp(s->rank, g->nodes.rank, nn * sizeof *s->rank) == 0);
    CHECK(memcmp(s->edst, g->edges.dst, ne * sizeof *s->edst) == 0);
    CHECK_EQ_INT(g->nodes.n, nn);
    s->lane[x] = 7;   /* a write to an appended row */
    CHECK_EQ_INT(ts__sim_run(s, &err), TS_OK);
    CHECK_EQ_INT(differing(s, v, nn), 0);   /* old rows: unchanged (the new node is a leaf) */
    CHECK_EQ_INT(s->end_ns[x], s->end_ns[last] + 5);
    free(v);
    ts_replay_destroy(r);
    ts_graph_destroy(g);
    ts_job_destroy(t);
}

/* A two-rank job's sim borrows the graph's starts on each rank's own clock
 * with the ranks' offsets beside them; the first append copies the columns
 * and adds the offsets in, so every measured point reads the same before
 * and after, and the graph's starts are untouched. */
TEST(appending_to_a_two_rank_replay_moves_the_clock_offsets_into_the_copies)
{
    const char *paths[2] = {"examples/ddp_gloo/rank0.json", "examples/ddp_gloo/rank1.json"};
    ts_job *t = NULL;
    ts_graph *g = NULL;
    ts_replay *r = NULL;
    ts_error err = {0};
    CHECK_EQ_INT(ts_job_load(paths, 2, NULL, &t, &err), TS_OK);
    CHECK_EQ_INT(ts_graph_create(t, NULL, &g, &err), TS_OK);
    CHECK_EQ_INT(ts_replay_run_graph(g, NULL, &r, &err), TS_OK);
    ts_sim *s = &r->sim;
    CHECK(g->align[1].offset_ns != 0);                       /* the clocks differ */
    CHECK(s->meas_offset_ns != NULL && s->meas_start_ns == g->nodes.start_ns);
    uint32_t nn = s->n_nodes, moved = 0;
    int64_t *v = malloc(3 * (size_t)nn * sizeof *v), *starts = malloc(nn * sizeof *starts);
    for (uint32_t n = 0; n < nn; n++) {
        v[3 * n] = ts__sim_meas_start(s, n);
        v[3 * n + 1] = ts__sim_meas_end(s, n);
        v[3 * n + 2] = ts__sim_own_start(s, n);
        CHECK_EQ_INT(v[3 * n], ts__graph_start(g, n));
        starts[n] = g->nodes.start_ns[n];
        moved += s->rank[n] == 1 && v[3 * n] != s->meas_start_ns[n];
    }
    CHECK(moved > 0);                                        /* rank 1's rows read through the offset */
    uint32_t x = ts__sim_add_node(s, 1, TS_NODE_CPU_OP, 5, 5, INT64_MIN, INT64_MIN);
    CHECK_EQ_INT(x, nn);
    CHECK(s->meas_offset_ns == NULL && s->meas_start_ns != g->nodes.start_ns);
    uint32_t bad = 0;
    for (uint32_t n = 0; n < nn; n++)
        bad += ts__sim_meas_start(s, n) != v[3 * n] || ts__sim_meas_end(s, n) != v[3 * n + 1] ||
               ts__sim_own_start(s, n) != v[3 * n + 2] || g->nodes.start_ns[n] != starts[n];
    CHECK_EQ_INT(bad, 0);
    CHECK(!ts__sim_measured(s, x));
    CHECK_EQ_INT(ts__sim_own_start(s, x), 5);               /* appended rows are aligned already */
    free(v);
    free(starts);
    ts_replay_destroy(r);
    ts_graph_destroy(g);
    ts_job_destroy(t);
}

/* The bench's synthesized job, small: 16 replicated ranks with jitter
 * replay their own measured (jittered) times exactly, through the borrowed
 * columns and the graph's order (every rank's node; a barrier's end moves by
 * the transfer time replay puts on it). */
TEST(replicated_job_replays_its_own_times_exactly)
{
    NEED_DATA(ts_test_data("kineto/nccl_parser_config/nccl_data.json.gz"));
    ts_job *t = load("kineto/nccl_parser_config/nccl_data.json.gz");
    CHECK(t);
    ts_graph *g = NULL, *big = NULL;
    ts_replay *r = NULL;
    ts_error err = {0};
    CHECK_EQ_INT(ts_graph_create(t, NULL, &g, &err), TS_OK);
    CHECK_EQ_INT(ts__graph_replicate(g, 16, 0.05, 7, &big, &err), TS_OK);
    CHECK_EQ_INT(ts_replay_run_graph(big, NULL, &r, &err), TS_OK);
    CHECK_EQ_INT(big->rank_first_node[16], 16 * g->rank_first_node[1]);
    CHECK_EQ_INT(r->sim.n_nodes, big->nodes.n);
    uint32_t off = 0;
    for (uint32_t n = 0; n < r->sim.n_nodes; n++)   /* barriers carry the moved transfer time */
        off += r->sim.rank[n] != TS_GRAPH_NO_RANK &&
               (r->sim.start_ns[n] != ts__sim_meas_start(&r->sim, n) || r->sim.end_ns[n] != ts__sim_meas_end(&r->sim, n));
    CHECK_EQ_INT(off, 0);
    CHECK_EQ_INT(ts_replay_predicted_iteration_ns(r), ts_replay_measured_iteration_ns(r));
    ts_replay_destroy(r);
    ts_graph_destroy(big);
    ts_graph_destroy(g);
    ts_job_destroy(t);
}

/* An unmodified replay borrows the graph's times and leaves each transfer
 * on the members' exits; a what-if replay moves it onto the barrier. Both
 * must export the same schedule, barriers drawn as long as their transfer
 * (a scale by 1 changes no time but takes the what-if path). */
TEST(unmodified_replay_exports_the_same_schedule_as_a_neutral_what_if)
{
    NEED_DATA(ts_test_data("kineto/nccl_parser_config/nccl_data.json.gz"));
    ts_job *t = load("kineto/nccl_parser_config/nccl_data.json.gz");
    CHECK(t);
    ts_graph *g = NULL, *big = NULL;
    ts_error err = {0};
    CHECK_EQ_INT(ts_graph_create(t, NULL, &g, &err), TS_OK);
    CHECK_EQ_INT(ts__graph_replicate(g, 4, 0.05, 3, &big, &err), TS_OK);
    const char *scales[] = {"*=1"};
    ts_replay_options what_if = {.size = sizeof what_if, .scales = scales, .n_scales = 1};
    char path[2][32] = {"/tmp/ts_export_a_XXXXXX", "/tmp/ts_export_b_XXXXXX"};
    char *text[2] = {NULL, NULL}, cmd[96];
    for (int k = 0; k < 2; k++) {
        ts_replay *r = NULL;
        int fd = mkstemp(path[k]);
        CHECK(fd >= 0);
        close(fd);
        CHECK_EQ_INT(ts_replay_run_graph(big, k ? &what_if : NULL, &r, &err), TS_OK);
        CHECK_EQ_INT(r->transfers_moved, k);
        CHECK_EQ_INT(ts_replay_export_chrome(r, path[k], &err), TS_OK);
        snprintf(cmd, sizeof cmd, "cat %s", path[k]);
        CHECK_EQ_INT(ts_test_run(cmd, &text[k]), 0);
        remove(path[k]);
        ts_replay_destroy(r);
    }
    CHECK(text[0] && text[1] && strlen(text[0]) > 1000);
    CHECK(strcmp(text[0], text[1]) == 0);
    CHECK(strstr(text[0], "\"cat\":\"barrier\"") != NULL);
    free(text[0]);
    free(text[1]);
    ts_graph_destroy(big);
    ts_graph_destroy(g);
    ts_job_destroy(t);
}
