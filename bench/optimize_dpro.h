/* optimize_dpro.h - bench/optimize's figures for dPRO's per-op timing tables
 * (src/optimize/dpro_table.c): for each table and dtype, the rows the reader
 * keeps and drops, and the held-out error of the per-op model time = alpha +
 * beta x batch: each batch size scored by a model fitted on the others
 * (leave one batch size out), against the shape-blind baseline (the op's
 * time at the nearest other batch size). Included by bench/optimize.c only. */
#ifndef BENCH_OPTIMIZE_DPRO_H
#define BENCH_OPTIMIZE_DPRO_H

#include "optimize/dpro_table.h"

static int cmp_err(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void dpro_table_figures(void)
{
    static const char *const dirs[] = {
        "../shared/data/dpro/data_20200804_resnet50/v100",   "../shared/data/dpro/data_20200804_resnet50/v100/1",
        "../shared/data/dpro/data_20200804_resnet50/v100/2", "../shared/data/dpro/data_20200804_resnet50/1080ti",
        "../shared/data/dpro/data_20200731_resnet50/v100",   "../shared/data/dpro/data_20200731_resnet50/1080ti",
    };
    for (size_t k = 0; k < sizeof dirs / sizeof *dirs; k++) {
        ts_dpt t;
        ts_error err = {0};
        if (ts__dpt_load(&t, dirs[k], &err)) { printf("dpro table: %s\n", err.msg); continue; }
        for (int d = 0; d < 2; d++) {
            uint32_t rows = 0;
            for (uint32_t r = 0; r < t.n_rows; r++) rows += t.rows[r].dtype == d;
            double *em, *eb;
            size_t n, cap;
            if (ts__dpt_holdout(&t, d, &em, &eb, &n, &cap)) { printf("dpro table: out of memory\n"); break; }
            printf("dpro table %s %s: %u ops, %u batch sizes kept", dirs[k] + 20, d ? "fp16" : "fp32", t.n_names[d], rows);
            if (n) {
                qsort(em, n, sizeof *em, cmp_err);
                qsort(eb, n, sizeof *eb, cmp_err);
                printf("; held-out (leave one batch size out, %zu op x batch points): model median %.1f%% p90 %.1f%%, "
                       "nearest batch size median %.1f%% p90 %.1f%%\n", n, 100 * em[n / 2], 100 * em[n * 9 / 10],
                       100 * eb[n / 2], 100 * eb[n * 9 / 10]);
            } else {
                printf("; no held-out score (needs 3 batch sizes)\n");
            }
            ts__free(em, cap * 8 + 8);
            ts__free(eb, cap * 8 + 8);
        }
        printf("dpro table %s: rows dropped: %u of another count, %u repeating an earlier row\n", dirs[k] + 20,
               t.n_unnamed, t.n_repeated);
        ts__dpt_free(&t);
    }
}

#endif
