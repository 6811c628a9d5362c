/* report.c - HTML report benchmark (issue 24, "Speed"): each figure printed
 * with its target and the ratio measured / target, in the same run.
 *
 *   nccl_data      `trainscope report` end to end on rank 0 of the real
 *                  2-rank NCCL job (load, breakdown, stats, graph, critical
 *                  path, replay, drawing, writing): target < 0.5 s;
 *   1,024 ranks    a job synthesized from nccl_data as bench/replay.c does
 *                  (ts__graph_replicate, 5% jitter: 16M graph nodes), its
 *                  critical path and replay computed on that graph, the
 *                  breakdown and statistics of the real rank given
 *                  to each of the 1,024 ranks; then ts_report_html_write of
 *                  all of it: the time the report adds to those analyses
 *                  (target < 2 s) and the file's size (target < 5 MB).
 * Times are the median of --repeat runs (wall clock; the machine is shared,
 * so they move with its load: the ratios are the figures to read).
 * Usage: build/bench/report [--data DIR] [--ranks N] [--repeat R] [--out DIR]
 * Not a test: nothing asserts a speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/core.h"
#include "graph/graph.h"
#include "trainscope/html.h"
#include "trainscope/ingest.h"

typedef struct bench_args { const char *data, *out; uint32_t ranks; int repeat; } bench_args;

static double secs(int64_t ns) { return (double)ns / 1e9; }

/* CPU time of this thread: the report is drawn on one thread, so this is
 * its cost without the waits a loaded machine adds to the wall clock. */
static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, ts__cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what, const ts_error *e)
{
    fprintf(stderr, "report bench: %s: %s\n", what, e->msg);
    exit(2);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void figure(const char *what, double v, const char *unit, double target)
{
    printf("  %-44s %9.3f %-3s target < %g %s   ratio %.3f (%s)\n", what, v, unit, target, unit, v / target,
           v < target ? "met" : "NOT met");
}

/* `trainscope report nccl_data.json.gz -o FILE`, as the CLI runs it. */
static void nccl_end_to_end(const char *trace, const char *out, int repeat)
{
    double *wall = calloc((size_t)repeat, sizeof *wall), *load = calloc((size_t)repeat, sizeof *load);
    for (int i = 0; i < repeat; i++) {
        ts_job *t = NULL;
        ts_error e = {0};
        int64_t t0 = ts__now_ns();
        if (ts_job_load(&trace, 1, NULL, &t, &e)) die("load", &e);
        int64_t t1 = ts__now_ns();
        if (ts_report_html_trace(t, NULL, out, &e)) die("report", &e);
        int64_t t2 = ts__now_ns();
        ts_job_destroy(t);
        wall[i] = secs(t2 - t0);
        load[i] = secs(t1 - t0);
    }
    printf("nccl_data (%s), median of %d:\n", trace, repeat);
    printf("  %-44s %9.3f s\n", "load", median(load, repeat));
    figure("load + analyses + report written", median(wall, repeat), "s", 0.5);
    printf("  %-44s %9.3f MB (%s)\n", "file", file_size(out) / 1e6, out);
    free(wall);
    free(load);
}

/* Every rank of the synthesized job gets rank 0's results (borrowed arrays). */
static ts_breakdown *copy_breakdown(const ts_breakdown *bd, uint32_t n, const ts_graph *g)
{
    ts_breakdown *c = calloc(1, sizeof *c);
    c->ranks = calloc(n, sizeof *c->ranks);
    c->n_ranks = n;
    for (uint32_t i = 0; i < n; i++) { c->ranks[i] = bd->ranks[0]; c->ranks[i].rank = g->rank_number[i]; }
    return c;
}

static ts_stats *copy_stats(const ts_stats *s, uint32_t n)
{
    ts_stats *c = calloc(1, sizeof *c);
    c->rows = calloc((size_t)s->n_rows * n, sizeof *c->rows);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < s->n_rows; k++) {
            c->rows[c->n_rows] = s->rows[k];
            c->rows[c->n_rows++].rank = (int32_t)i;
        }
    return c;
}

static void big_job(const char *trace, uint32_t ranks, const char *out, int repeat)
{
    ts_job *t = NULL;
    ts_graph *g = NULL, *big = NULL;
    ts_critical_path *cp = NULL;
    ts_replay *rp = NULL;
    ts_breakdown *bd = NULL;
    ts_stats *by_name = NULL, *by_cat = NULL;
    ts_error e = {0};
    if (ts_job_load(&trace, 1, NULL, &t, &e)) die("load", &e);
    ts_breakdown_opts bo = {.size = sizeof bo, .top_kernels = 5};
    ts_stats_opts so = {.size = sizeof so, .by = TS_STATS_BY_NAME};
    int64_t t0 = ts__now_ns();
    if (ts_breakdown_compute(t, &bo, &bd, &e) || ts_stats_compute(t, &so, &by_name, &e)) die("breakdown/stats", &e);
    so.by = TS_STATS_BY_CATEGORY;
    if (ts_stats_compute(t, &so, &by_cat, &e) || ts_graph_create(t, NULL, &g, &e)) die("stats/graph", &e);
    if (ts__graph_replicate(g, ranks, 0.05, 7, &big, &e)) die("replicate", &e);
    if (ts_critical_path_create(big, -1, &cp, &e)) die("critical path", &e);
    if (ts_replay_run_graph(big, NULL, &rp, &e)) die("replay", &e);
    int64_t t1 = ts__now_ns();
    ts_breakdown *bdn = copy_breakdown(bd, ranks, big);
    ts_stats *sn = copy_stats(by_name, ranks), *sc = copy_stats(by_cat, ranks);
    ts_report_html_input in = {.size = sizeof in, .trace = t, .breakdown = bdn, .stats_by_name = sn,
                               .stats_by_category = sc, .graph = big, .critical_path = cp, .replay = rp};
    double *wall = calloc((size_t)repeat, sizeof *wall), *cpu = calloc((size_t)repeat, sizeof *cpu);
    for (int i = 0; i < repeat; i++) {
        int64_t a = ts__now_ns();
        double c = thread_cpu_s();
        if (ts_report_html_write(&in, NULL, out, &e)) die("report", &e);
        wall[i] = secs(ts__now_ns() - a);
        cpu[i] = thread_cpu_s() - c;
    }
    printf("%u-rank job (nccl_data's rank replicated, 5%% jitter): %u graph nodes, %u collectives, "
           "%u name rows\n", ranks, ts_graph_n_nodes(big), ts_graph_n_collectives(big), sn->n_rows);
    printf("  %-44s %9.3f s (breakdown, stats, graph, replicate, critical path, replay)\n", "analyses",
           secs(t1 - t0));
    figure("report added (drawn and written), wall", median(wall, repeat), "s", 2.0);
    figure("report added, CPU of its thread", median(cpu, repeat), "s", 2.0);
    figure("file", file_size(out) / 1e6, "MB", 5.0);
    printf("  (%s)\n", out);
    free(wall);
    free(cpu);
    free(sn->rows); free(sn);
    free(sc->rows); free(sc);
    free(bdn->ranks); free(bdn);
    ts_replay_destroy(rp);
    ts_critical_path_destroy(cp);
    ts_graph_destroy(big);
    ts_graph_destroy(g);
    ts_stats_destroy(by_cat);
    ts_stats_destroy(by_name);
    ts_breakdown_destroy(bd);
    ts_job_destroy(t);
}

int main(int argc, char **argv)
{
    bench_args a = {.data = getenv("TS_DATA") ? getenv("TS_DATA") : "../shared/data", .out = "build/bench",
                    .ranks = 1024, .repeat = 5};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--data") && v) a.data = argv[++i];
        else if (!strcmp(argv[i], "--out") && v) a.out = argv[++i];
        else if (!strcmp(argv[i], "--ranks") && v) a.ranks = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--repeat") && v) a.repeat = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--data DIR] [--ranks N] [--repeat R] [--out DIR]\n", argv[0]);
            return 2;
        }
    }
    if (a.repeat < 1) a.repeat = 1;
    if (a.ranks < 2) a.ranks = 2;
    char trace[1024], out1[1024], out2[1024];
    snprintf(trace, sizeof trace, "%s/kineto/nccl_parser_config/nccl_data.json.gz", a.data);
    snprintf(out1, sizeof out1, "%s/report-nccl_data.html", a.out);
    snprintf(out2, sizeof out2, "%s/report-%u-ranks.html", a.out, a.ranks);
    nccl_end_to_end(trace, out1, a.repeat);
    big_job(trace, a.ranks, out2, a.repeat);
    return 0;
}
