/* fuzz_ranks.c - libFuzzer target for the multi-rank half of the graph and
 * replay: two ranks' Chrome traces go through collective matching, clock
 * alignment, the critical path across ranks, an unmodified replay and the
 * what-ifs that only multi-rank jobs reach (--bucket-mb regrouping with
 * gradients.json, with and without the gloo calibration log and its
 * contention model; --world and --bandwidth repricing). fuzz_analyze covers
 * one rank; this is the code that matches, regroups and re-times across
 * ranks, where a mutated trace can hold a collective on one rank only, a
 * bucket without its worker op, or clocks that cannot be aligned. None of
 * that may crash, read out of bounds or loop; errors are fine.
 *
 * Input: rank 0's trace, a NUL byte, rank 1's trace (JSON holds no raw NUL);
 * without a NUL both ranks get the same bytes. The last byte picks the
 * what-if's bucket size and whether the trace's own cap is given. The seed
 * corpus (fuzz/corpus/fuzz_ranks/) is one step of a real 2-rank gloo DDP
 * ground-truth trace (examples/workloads, mlp, 1 MB buckets) with the
 * shortest ops left out.
 *
 * Build: make fuzz (clang, ASan + UBSan + libFuzzer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "ingest/ingest.h"
#include "trace/model.h"
#include "trainscope/graph.h"
#include "trainscope/replay.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* mlp's gradients (examples/workloads/results/mlp_gradients.json): 8 layers
 * of 512 x 512 fp32 and the 512 x 10 head, weights then biases. */
static char grads_path[64], calib_path[64];

static void write_gradients(void)
{
    FILE *f = fdopen(memfd_create("grads", 0), "w+");
    if (!f) return;
    fputs("{\"world_size\": 2, \"parameters\": [", f);
    for (int l = 0; l < 9; l++) {
        int out = l == 8 ? 10 : 512;
        fprintf(f, "%s{\"name\": \"%d.weight\", \"bytes\": %d}, {\"name\": \"%d.bias\", \"bytes\": %d}",
                l ? ", " : "", 2 * l, out * 512 * 4, 2 * l, out * 4);
    }
    fputs("]}\n", f);
    fflush(f);
    snprintf(grads_path, sizeof grads_path, "/proc/self/fd/%d", fileno(f));   /* kept open for the run */
}

/* A gloo calibration in all_reduce_perf's columns, as bench/gloo_allreduce.py
 * writes it (rows of the committed log of 24 Nov 05:43, and its pair and
 * sharing lines, which give the contention model its kappa). */
static void write_calibration(void)
{
    static const char *const rows[][2] = {
        {"4096", "388.1"}, {"65536", "453.4"}, {"262144", "580.8"}, {"524288", "830.3"},
        {"1048576", "1250.1"}, {"4194304", "4390.6"}, {"16777216", "15899.8"},
    };
    FILE *f = fdopen(memfd_create("calib", 0), "w+");
    if (!f) return;
    fputs("# torch gloo over 127.0.0.1, 2 processes\n#  Rank  0 Group  0 Pid      0 on vm device  cpu\n"
          "#  Rank  1 Group  0 Pid      0 on vm device  cpu\n", f);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(f, "%12s %12ld     float     sum      -1 %8s   0.1   0.1      0      N/A     N/A     N/A    N/A\n",
                rows[i][0], atol(rows[i][0]) / 4, rows[i][1]);
    fputs("#      1048576 pair    2233.6 single    1250.1 ratio  1.79\n"
          "# sharing with compute: 8 x 1 MiB all-reduces queued at once take 14460.9 us with the training "
          "thread idle, 25315.5 us (x1.75) with it running 128x128 matmuls; the matmuls run at 1462/s alone "
          "and 859/s (x0.59) beside them, 2.00 all-reduces running on average\n", f);
    fflush(f);
    snprintf(calib_path, sizeof calib_path, "/proc/self/fd/%d", fileno(f));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    write_gradients();
    write_calibration();
    return 0;
}

static void replay(const ts_graph *g, const ts_replay_options *o)
{
    ts_replay *r = NULL;
    if (ts_replay_run_graph(g, o, &r, NULL) != TS_OK) return;
    /* Every iteration the result reports, and one past them, must read back. */
    for (uint32_t k = 0; k <= ts_replay_n_iterations(r); k++) {
        ts_replay_iteration_info it;
        ts_replay_iteration(r, k, &it);
        if (k < ts_replay_n_iterations(r) && it.measured_iteration_ns < 0) abort();
    }
    ts_replay_destroy(r);
}

static void analyses(const ts_job *t, uint8_t pick)
{
    static const double caps[] = {0.25, 1, 4, 25};
    ts_graph *g = NULL;
    if (ts_graph_create(t, NULL, &g, NULL) != TS_OK) return;
    ts_critical_path *cp = NULL;
    if (ts_critical_path_create(g, -1, &cp, NULL) == TS_OK) ts_critical_path_destroy(cp);
    replay(g, NULL);
    ts_replay_options o = {.size = sizeof o, .bucket_mb = caps[pick & 3], .trace_bucket_mb = (pick & 4) ? 1 : 0,
                           .gradients_json = grads_path[0] ? grads_path : NULL};
    replay(g, &o);                                   /* priced from the trace's own all-reduces */
    o.nccl_tests_log = calib_path[0] ? calib_path : NULL;
    replay(g, &o);                                   /* calibrated: processor sharing, kappa */
    o.gradients_json = NULL;                         /* the old buckets as units */
    replay(g, &o);
    ts_replay_options w = {.size = sizeof w, .world = 8, .bandwidth_gbps = (pick & 8) ? 10 : 0};
    replay(g, &w);
    ts_graph_destroy(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    uint8_t pick = data[size - 1];
    size--;
    const uint8_t *nul = memchr(data, 0, size);
    const uint8_t *b = nul ? nul + 1 : data;
    size_t na = nul ? (size_t)(nul - data) : size, nb = nul ? size - na - 1 : size;
    ts_rank *ranks[2] = {NULL, NULL};
    ts_error err;
    /* the names carry the rank numbers, as the CLI's file names do */
    if (ts__ingest_json_buffer("rank0.json", data, na, NULL, &ranks[0], &err) != TS_OK) return 0;
    if (ts__ingest_json_buffer("rank1.json", b, nb, NULL, &ranks[1], &err) != TS_OK) {
        ts__rank_destroy(ranks[0]);
        return 0;
    }
    ts_job *t = NULL;
    if (ts__job_create(ranks, 2, &t, &err) != TS_OK) return 0;   /* the trace owns the ranks either way */
    analyses(t, pick);
    ts_job_destroy(t);
    return 0;
}
