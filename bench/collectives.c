/* collectives.c - how well `replay --world N` prices collectives at a group
 * size it has not seen: the collective cost model fitted on one nccl-tests
 * sweep, asked for another, against that sweep's measured times.
 *
 * Data: ../shared/data/nccl-tests/nccl_N.log, real all_reduce_perf sweeps
 * on Azure ND A100 v4 (8 GPUs a server on NVLink, 200 Gb/s InfiniBand per
 * GPU between servers), N = 1..128 GPUs, 1 KiB to 16 GiB. Each prediction
 * is scored against the row's out-of-place time; the table gives, per
 * (fitted on, asked for) pair, the median, 90th percentile and worst
 * |error| over the sizes, for all sizes and for those of 1 MiB and more
 * (the gradient-bucket range). The first rows are the in-sample fit (the
 * same log both sides): the floor of what the alpha-beta lines can do.
 *
 * Usage: build/bench/collectives [--data DIR]
 * Not a test: nothing here asserts an accuracy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainscope/replay.h"

enum { MAX_ROWS = 64 };

typedef struct sweep {
    int      gpus;
    int      n;
    uint64_t bytes[MAX_ROWS];
    double   us[MAX_ROWS];   /* out-of-place time */
} sweep;

/* The rows of an nccl-tests log (the "[1,0]<stdout>:" prefix allowed). */
static int read_sweep(const char *path, int gpus, sweep *s)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    s->gpus = gpus;
    s->n = 0;
    char line[1024];
    while (fgets(line, sizeof line, f) && s->n < MAX_ROWS) {
        char *p = line[0] == '[' && strstr(line, ">:") ? strstr(line, ">:") + 2 : line;
        unsigned long long bytes, count;
        char type[16], op[16];
        double us;
        if (sscanf(p, "%llu %llu %15s %15s %lf", &bytes, &count, type, op, &us) != 5) continue;
        s->bytes[s->n] = bytes;
        s->us[s->n++] = us;
    }
    fclose(f);
    return s->n > 0 ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* q-quantile (0..1) of v[0..n), nearest rank; v is sorted in place. */
static double quantile(double *v, int n, double q)
{
    if (n == 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int i = (int)ceil(q * n) - 1;
    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* Fit on the logs in `from` (n_from of them), predict `to`, print a row.
 * Returns the median |error| over all sizes, or NAN. */
static double score(const char *dir, const int *from, int n_from, const sweep *to)
{
    ts_coll_model *m;
    ts_error err = {0};
    if (ts_coll_model_create(&m)) return NAN;
    char label[64] = "";
    for (int i = 0; i < n_from; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/nccl-tests/nccl_%d.log", dir, from[i]);
        if (ts_coll_model_load_nccl_tests(m, path, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            ts_coll_model_destroy(m);
            return NAN;
        }
        snprintf(label + strlen(label), sizeof label - strlen(label), "%s%d", i ? "+" : "", from[i]);
    }
    if (ts_coll_model_fit(m, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        ts_coll_model_destroy(m);
        return NAN;
    }
    double all[MAX_ROWS], big[MAX_ROWS];
    int n_all = 0, n_big = 0;
    for (int i = 0; i < to->n; i++) {
        int64_t ns = ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, to->bytes[i], (uint32_t)to->gpus);
        if (ns < 0) continue;
        double e = fabs((double)ns / 1e3 - to->us[i]) / to->us[i] * 100;
        all[n_all++] = e;
        if (to->bytes[i] >= (1u << 20)) big[n_big++] = e;
    }
    ts_coll_model_destroy(m);
    double med = quantile(all, n_all, 0.5);
    printf("  %-14s %6d   %6.1f%% %6.1f%% %7.1f%%    %6.1f%% %6.1f%% %7.1f%%\n", label, to->gpus, med,
           quantile(all, n_all, 0.9), quantile(all, n_all, 1.0), quantile(big, n_big, 0.5), quantile(big, n_big, 0.9),
           quantile(big, n_big, 1.0));
    return med;
}

int main(int argc, char **argv)
{
    const char *data = getenv("TS_DATA") ? getenv("TS_DATA") : "../shared/data";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--data DIR]\n", argv[0]);
            return 2;
        }
    }
    static const int gpus[] = {1, 2, 4, 8, 16, 32, 64, 128};
    enum { N_LOGS = sizeof gpus / sizeof gpus[0] };
    sweep sw[N_LOGS];
    for (int g = 0; g < N_LOGS; g++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/nccl-tests/nccl_%d.log", data, gpus[g]);
        if (read_sweep(path, gpus[g], &sw[g])) { fprintf(stderr, "cannot read %s\n", path); return 1; }
    }
    printf("collective cost model (all-reduce) on real A100 nccl-tests sweeps: |error| of predicted vs\n"
           "measured out-of-place time, over all sizes (1 KiB - 16 GiB) and over sizes >= 1 MiB\n\n");
    printf("  %-14s %6s   %-24s    %-24s\n", "fitted on", "asked", "all sizes", ">= 1 MiB");
    printf("  %-14s %6s   %7s %7s %8s    %7s %7s %8s\n", "(GPUs)", "(GPUs)", "median", "p90", "worst", "median", "p90", "worst");
    printf("in sample (the same sweep):\n");
    for (int g = 1; g < N_LOGS; g++) score(data, &gpus[g], 1, &sw[g]);
    printf("the next larger group (--world 2x):\n");
    for (int g = 1; g + 1 < N_LOGS; g++) score(data, &gpus[g], 1, &sw[g + 1]);
    printf("from two servers (16 GPUs) to more (--world 32..128):\n");
    for (int g = 5; g < N_LOGS; g++) score(data, &gpus[4], 1, &sw[g]);
    printf("from one server (8 GPUs) to several (crosses from NVLink to InfiniBand):\n");
    for (int g = 4; g < N_LOGS; g++) score(data, &gpus[3], 1, &sw[g]);
    printf("between two fitted sizes (log2 interpolation):\n");
    static const int pairs[][2] = {{16, 64}, {32, 128}, {8, 32}, {2, 8}};
    static const int asked[] = {32, 64, 16, 4};
    for (int k = 0; k < 4; k++)
        for (int g = 0; g < N_LOGS; g++)
            if (gpus[g] == asked[k]) score(data, pairs[k], 2, &sw[g]);
    printf("the next smaller group (--world n/2):\n");
    for (int g = 2; g < N_LOGS; g++) score(data, &gpus[g], 1, &sw[g - 1]);
    return 0;
}
