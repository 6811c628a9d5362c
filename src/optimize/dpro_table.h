/* dpro_table.h - dPRO's per-op timing tables (name.txt + avg.txt: per-op
 * average times in ms by dtype and batch size, ../shared/data/dpro/) and the
 * per-op cost model fitted on them (dpro_table.c). Not for: traces. */
#ifndef TS_OPTIMIZE_DPRO_TABLE_H
#define TS_OPTIMIZE_DPRO_TABLE_H

#include "core/core.h"
#include "optimize/cost_model.h"

enum { TS_DPT_FP32 = 0, TS_DPT_FP16 = 1 };

typedef struct ts_dpt_row {
    uint8_t  dtype;       /* TS_DPT_* */
    uint32_t batch;       /* --batch_size */
    uint32_t count;       /* values the row had (>= the names; past them unused) */
    double  *ms;          /* [n_names[dtype]] owned, in name order */
} ts_dpt_row;

typedef struct ts_dpt {
    char       *pool;            /* every name, NUL-separated (owned) */
    size_t      pool_cap;
    const char **names[2];       /* [n_names[d]] into pool */
    uint32_t    n_names[2], cap_names[2];
    ts_dpt_row *rows;            /* rows whose value count is their dtype's name count */
    uint32_t    n_rows, cap_rows;
    uint32_t    n_unnamed;       /* rows dropped: fewer values than names, or not the dtype's common count */
    uint32_t    n_repeated;      /* rows dropped: the same values as an earlier row of the dtype */
} ts_dpt;

/* Parse name.txt (lines `fp32:['op', ...]`) and avg.txt (a line naming
 * `fp32:` or `fp16:` and `--batch_size N`, then `[ms, ...]`). Errors are
 * `FILE: line N: what`. */
TS_NODISCARD int ts__dpt_parse(ts_dpt *t, const char *name_file, const char *names, size_t nn, const char *avg_file,
                               const char *avg, size_t na, ts_error *err);
/* DIR/name.txt and DIR/avg.txt (plain, gzip or zstd). */
TS_NODISCARD int ts__dpt_load(ts_dpt *t, const char *dir, ts_error *err);
void ts__dpt_free(ts_dpt *t);
/* "fp32" / "fp16" -> TS_DPT_*; -1 for any other. */
int ts__dpt_dtype(const char *s);

/* Per op name of dtype: time(batch) = alpha + beta x batch (cost_model.c's
 * fit), from every row of dtype except batch `skip` (0 = none). */
TS_NODISCARD int ts__dpt_fit(const ts_dpt *t, int dtype, uint32_t skip, ts_cost_model *m);

/* Held-out error: for each batch size B of dtype, fit on the other batch
 * sizes and score every op at B; the relative errors of the model go to
 * model[], those of the shape-blind baseline (the op's time at the nearest
 * other batch size) to base[]; both [*n] of *cap, owned (ts__free(p, *cap * 8 + 8)). */
TS_NODISCARD int ts__dpt_holdout(const ts_dpt *t, int dtype, double **model, double **base, size_t *n, size_t *cap);

#endif
