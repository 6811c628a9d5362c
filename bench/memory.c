/* memory.c - benchmark of `trainscope memory`: predicted vs measured peak
 * memory on the ground-truth pairs in examples/memory/, the time to read and
 * analyze the ResNet50, BERT and MobileNetV3 dumps (median of repeats), and
 * a synthetic graph about 100 times larger to show near-linear scaling.
 *
 * Usage: build/bench/memory [REPO_ROOT] (default "."); data from $TS_DATA
 * (default ../shared/data). Times are wall clock on a shared machine: noisy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/core.h"
#include "trainscope/memory.h"

static int cmp_i64(const void *a, const void *b) { return ts__cmp_i64(a, b); }

/* CPU time of this thread: on a shared, overloaded machine it says more
 * about the code than wall time does. */
static int64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* measured_peak_bytes from a measured.json (a flat object we wrote). */
static long long measured_peak(const char *path)
{
    FILE *f = fopen(path, "r");
    char buf[4096];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    const char *p = strstr(buf, "\"measured_peak_bytes\":");
    return p ? atoll(p + strlen("\"measured_peak_bytes\":")) : -1;
}

/* Read + analyze once; returns the peak or -1, *ns the wall time taken and
 * *cpu (when not NULL) the CPU time. */
static long long run_once(const char *fwd, const char *bwd, const ts_mem_options *opt, int64_t *ns,
                          int64_t *cpu)
{
    ts_error err = {0};
    ts_memgraph *g = NULL;
    ts_mem_summary s = {0};
    int64_t t0 = ts__now_ns(), c0 = cpu_ns();
    int rc = ts_memgraph_load(fwd, bwd, opt, &g, &err);
    if (!rc) rc = ts_memgraph_analyze(g, &s);
    *ns = ts__now_ns() - t0;
    if (cpu) *cpu = cpu_ns() - c0;
    if (rc) fprintf(stderr, "bench memory: %s\n", err.msg);
    ts_memgraph_destroy(g);
    return rc ? -1 : s.peak_bytes;
}

/* Median wall and CPU milliseconds of reps runs. */
static void median_ms(const char *fwd, const char *bwd, int reps, const ts_mem_options *opt,
                      double *wall_ms, double *cpu_ms)
{
    int64_t t[64], c[64];
    *wall_ms = *cpu_ms = -1;
    for (int i = 0; i < reps; i++)
        if (run_once(fwd, bwd, opt, &t[i], &c[i]) < 0) return;
    qsort(t, (size_t)reps, sizeof t[0], cmp_i64);
    qsort(c, (size_t)reps, sizeof c[0], cmp_i64);
    *wall_ms = (double)t[reps / 2] / 1e6;
    *cpu_ms = (double)c[reps / 2] / 1e6;
}

/* A forward chain of n ops where each reads the previous result and one from
 * 50 steps back (long lifetimes), and a backward that walks it in reverse. */
static void synth(const char *fwd, const char *bwd, int n)
{
    FILE *f = fopen(fwd, "w"), *b = fopen(bwd, "w");
    if (!f || !b) exit(1);
    fprintf(f, "class GraphModule(torch.nn.Module):\n    def forward(self, primals_1: \"f32[64, 256]\"):\n");
    fprintf(f, "        x0: \"f32[64, 256]\" = torch.ops.aten.relu.default(primals_1)\n");
    for (int i = 1; i < n; i++)
        fprintf(f, "        x%d: \"f32[64, 256]\" = torch.ops.aten.add.Tensor(x%d, x%d)\n", i, i - 1, i > 50 ? i - 50 : 0);
    fprintf(f, "        return [x%d]\n", n - 1);
    fprintf(b, "class GraphModule(torch.nn.Module):\n    def forward(self, x%d: \"f32[64, 256]\", tangents_1: \"f32[64, 256]\"):\n", n - 1);
    fprintf(b, "        g0: \"f32[64, 256]\" = torch.ops.aten.mul.Tensor(tangents_1, x%d)\n", n - 1);
    for (int i = 1; i < n; i++)
        fprintf(b, "        g%d: \"f32[64, 256]\" = torch.ops.aten.mul.Tensor(g%d, 0.5)\n", i, i - 1);
    fprintf(b, "        return [g%d]\n", n - 1);
    fclose(f);
    fclose(b);
}

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : ".", *data = getenv("TS_DATA") ? getenv("TS_DATA") : "../shared/data";
    char fwd[1024], bwd[1024];
    ts_mem_options calib = {.size = sizeof calib, .hold_saved = 1, .workspace = TS_MEM_WORKSPACE_CPU};
    printf("predicted vs measured peak (torch 1.13 CPU; --hold-saved --workspace cpu)\n");
    printf("%-12s %14s %14s %8s\n", "model", "predicted B", "measured B", "error");
    static const char *const PAIRS[] = {"cnn", "mlp", "cnn_heldout", "cnn_fresh"};
    for (size_t i = 0; i < sizeof PAIRS / sizeof PAIRS[0]; i++) {
        char mj[1024];
        int64_t ns;
        snprintf(fwd, sizeof fwd, "%s/examples/memory/%s/fx_graph_transformed_forward.py", root, PAIRS[i]);
        snprintf(bwd, sizeof bwd, "%s/examples/memory/%s/fx_graph_transformed_backward.py", root, PAIRS[i]);
        snprintf(mj, sizeof mj, "%s/examples/memory/%s/measured.json", root, PAIRS[i]);
        long long p = run_once(fwd, bwd, &calib, &ns, NULL), m = measured_peak(mj);
        if (p < 0 || m <= 0) { printf("%-12s missing\n", PAIRS[i]); continue; }
        printf("%-12s %14lld %14lld %+7.2f%%\n", PAIRS[i], p, m, 100.0 * (double)(p - m) / (double)m);
    }

    ts_mem_options exact = {.size = sizeof exact};
    printf("\nread + analyze, median of 15 runs (exact rules)\n");
    static const char *const MODELS[] = {"resnet50", "bert", "mobilenetv3small"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(fwd, sizeof fwd, "%s/fx/%s/fx_graph_transformed_forward.py", data, MODELS[i]);
        snprintf(bwd, sizeof bwd, "%s/fx/%s/fx_graph_transformed_backward.py", data, MODELS[i]);
        double wall, cpu;
        median_ms(fwd, bwd, 15, &exact, &wall, &cpu);
        printf("%-18s %8.2f ms wall %8.2f ms cpu\n", MODELS[i], wall, cpu);
    }

    printf("\nsynthetic chains (near-linear means ms/kernel stays flat)\n");
    for (int n = 15000; n <= 150000; n *= 10) {
        snprintf(fwd, sizeof fwd, "/tmp/ts_bench_mem_%d_fwd.py", (int)getpid());
        snprintf(bwd, sizeof bwd, "/tmp/ts_bench_mem_%d_bwd.py", (int)getpid());
        synth(fwd, bwd, n);
        double ms, cpu;
        median_ms(fwd, bwd, 3, &exact, &ms, &cpu);
        printf("%7d + %7d kernels %10.1f ms wall %10.1f ms cpu  %.2f us cpu/kernel\n", n, n, ms, cpu,
               cpu * 1000.0 / (2.0 * n));
        unlink(fwd);
        unlink(bwd);
    }
    return 0;
}
