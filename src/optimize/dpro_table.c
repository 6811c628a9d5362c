/* dpro_table.c - the reader of dPRO's per-op timing tables and the cost
 * model fitted on them.
 *
 * name.txt: one line per dtype, `fp32:['Adam/mul', 'Adam/mul_1', ...]`
 * (a Python list repr). avg.txt: for each run a header line naming the
 * dtype (`... fp32: --batch_size 8`), then `[0.035, 0.027, ...]`: the
 * average time in ms of each op, in name.txt's order. Values are tied to
 * names by position, as dPRO's loader (cost_model_amp/dataloader.py) does:
 * name i takes value i, values past the names are left over. dPRO's own
 * tables have rows with one value more than the names at most batch sizes
 * (an op that appears past batch 1) and, in some, rows of another count
 * (another dtype's run); so, per dtype, only rows of the most common count
 * (at least the names') are kept, the others counted (n_unnamed). Rows
 * identical to an earlier one of their dtype are a collection that did
 * not rerun (1080ti/ 20200804: every row the same): counted (n_repeated),
 * not used. The model: per op name and dtype, time
 * = alpha + beta x batch, cost_model.c's least squares on relative error;
 * alpha is the op's fixed cost (launch, dispatch), what a fused kernel pays
 * once. Not for: XLA candidate lists (op_fusion_xla.c), traces.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ingest/ingest.h"
#include "optimize/dpro_table.h"

typedef struct lines { const char *p, *end; uint32_t no; } lines;

/* The next line (without '\n', '\r'); false at the end. */
static bool next_line(lines *l, const char **s, size_t *n)
{
    if (l->p >= l->end) return false;
    const char *e = memchr(l->p, '\n', (size_t)(l->end - l->p));
    if (!e) e = l->end;
    *s = l->p;
    *n = (size_t)(e - l->p);
    if (*n && (*s)[*n - 1] == '\r') (*n)--;
    l->p = e + 1;
    l->no++;
    return true;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t') return false;
    return true;
}

int ts__dpt_dtype(const char *s)
{
    return !strcmp(s, "fp32") ? TS_DPT_FP32 : !strcmp(s, "fp16") ? TS_DPT_FP16 : -1;
}

/* The dtype a line names (`fp32:` or `fp16:`), -1 for none. */
static int line_dtype(const char *s, size_t n)
{
    for (size_t i = 0; i + 5 <= n; i++)
        if (!memcmp(s + i, "fp32:", 5) || !memcmp(s + i, "fp16:", 5)) return s[i + 2] == '3' ? TS_DPT_FP32 : TS_DPT_FP16;
    return -1;
}

static int add_name(ts_dpt *t, int d, const char *s, size_t n, size_t *used)
{
    if (*used + n + 1 > t->pool_cap) return TS_ENOMEM;   /* pool sized for every byte of the file */
    char *dst = t->pool + *used;
    memcpy(dst, s, n);
    dst[n] = 0;
    *used += n + 1;
    if (ts__grow((void **)&t->names[d], &t->cap_names[d], sizeof *t->names[d], (size_t)t->n_names[d] + 1))
        return TS_ENOMEM;
    t->names[d][t->n_names[d]++] = dst;
    return TS_OK;
}

/* `fp32:['a', "b", ...]`: the quoted names of one dtype. */
static int names_line(ts_dpt *t, const char *file, const char *s, size_t n, uint32_t no, size_t *used, ts_error *err)
{
    const char *e = s + n, *p = memchr(s, ':', n);
    int d = p ? line_dtype(s, (size_t)(p - s) + 1) : -1;
    if (d < 0) return ts__error(err, TS_EPARSE, "%s: line %u: expected fp32:[...] or fp16:[...]", file, no);
    if (t->n_names[d]) return ts__error(err, TS_EPARSE, "%s: line %u: a second list of %s names", file, no, d ? "fp16" : "fp32");
    for (p++; p < e && *p == ' '; p++) {}
    if (p >= e || *p++ != '[') return ts__error(err, TS_EPARSE, "%s: line %u: expected '[' after the dtype", file, no);
    for (;;) {
        while (p < e && (*p == ' ' || *p == ',')) p++;
        if (p < e && *p == ']') break;
        if (p >= e || (*p != '\'' && *p != '"'))
            return ts__error(err, TS_EPARSE, "%s: line %u: expected a quoted op name or ']'", file, no);
        char q = *p++;
        const char *a = p;
        while (p < e && *p != q) p++;
        if (p >= e) return ts__error(err, TS_EPARSE, "%s: line %u: unterminated op name", file, no);
        if (p == a) return ts__error(err, TS_EPARSE, "%s: line %u: an empty op name", file, no);
        if (add_name(t, d, a, (size_t)(p - a), used)) return ts__error(err, TS_ENOMEM, "%s: out of memory", file);
        p++;
    }
    return TS_OK;
}

static int parse_names(ts_dpt *t, const char *file, const char *data, size_t nn, ts_error *err)
{
    lines l = {data, data + nn, 0};
    const char *s;
    size_t n, used = 0;
    t->pool_cap = nn + 1;
    if (!(t->pool = ts__malloc(t->pool_cap))) return ts__error(err, TS_ENOMEM, "%s: out of memory", file);
    while (next_line(&l, &s, &n)) {
        if (blank(s, n)) continue;
        int rc = names_line(t, file, s, n, l.no, &used, err);
        if (rc) return rc;
    }
    if (!t->n_names[0] && !t->n_names[1]) return ts__error(err, TS_EPARSE, "%s: line %u: no fp32:[...] or fp16:[...] names", file, l.no);
    return TS_OK;
}

/* `[0.1, 2e-3, ...]` into *v (grown); *count values. */
static int values_line(const char *file, const char *s, size_t n, uint32_t no, double **v, uint32_t *cap, uint32_t *count,
                       ts_error *err)
{
    const char *p = s, *e = s + n;
    while (p < e && *p == ' ') p++;
    if (p >= e || *p++ != '[') return ts__error(err, TS_EPARSE, "%s: line %u: expected '[' (the times in ms)", file, no);
    *count = 0;
    for (;;) {
        while (p < e && (*p == ' ' || *p == ',')) p++;
        if (p < e && *p == ']') return TS_OK;
        char num[64];
        size_t k = 0;
        while (p < e && *p != ',' && *p != ']' && *p != ' ' && k < sizeof num - 1) num[k++] = *p++;
        num[k] = 0;
        char *end;
        double x = k ? strtod(num, &end) : NAN;
        bool cut = p < e && *p != ',' && *p != ']' && *p != ' ';   /* longer than num holds */
        if (!k || cut || *end || !isfinite(x) || x < 0)
            return ts__error(err, TS_EPARSE, "%s: line %u: value %u: expected a time in ms >= 0", file, no, *count + 1);
        if (ts__grow((void **)v, cap, sizeof **v, (size_t)*count + 1)) return ts__error(err, TS_ENOMEM, "%s: out of memory", file);
        (*v)[(*count)++] = x;
        if (p >= e) return ts__error(err, TS_EPARSE, "%s: line %u: no closing ']'", file, no);
    }
}

/* `... fp32: --batch_size 8`: the dtype and batch size. */
static int header_line(const char *file, const char *s, size_t n, uint32_t no, int *d, uint32_t *batch, ts_error *err)
{
    static const char key[] = "--batch_size";
    *d = line_dtype(s, n);
    const char *b = NULL;
    for (size_t i = 0; i + sizeof key - 1 <= n && !b; i++)
        if (!memcmp(s + i, key, sizeof key - 1)) b = s + i + sizeof key - 1;
    if (*d < 0 || !b) return ts__error(err, TS_EPARSE, "%s: line %u: expected a header naming fp32: or fp16: and --batch_size N", file, no);
    const char *e = s + n;
    while (b < e && (*b == ' ' || *b == '=')) b++;
    uint64_t x = 0;
    const char *dig = b;
    while (b < e && *b >= '0' && *b <= '9' && x < (1u << 30)) x = x * 10 + (uint64_t)(*b++ - '0');
    if (b == dig || x == 0 || x >= (1u << 30) || (b < e && *b != ' '))
        return ts__error(err, TS_EPARSE, "%s: line %u: --batch_size is not a positive integer", file, no);
    *batch = (uint32_t)x;
    return TS_OK;
}

static int keep_row(ts_dpt *t, int d, uint32_t batch, const double *v, uint32_t count)
{
    uint32_t n = t->n_names[d];
    if (count < n || !n) { t->n_unnamed++; return TS_OK; }
    if (ts__grow((void **)&t->rows, &t->cap_rows, sizeof *t->rows, (size_t)t->n_rows + 1)) return TS_ENOMEM;
    double *ms = ts__malloc((size_t)n * sizeof *ms);
    if (!ms) return TS_ENOMEM;
    memcpy(ms, v, (size_t)n * sizeof *ms);
    t->rows[t->n_rows++] = (ts_dpt_row){.dtype = (uint8_t)d, .batch = batch, .count = count, .ms = ms};
    return TS_OK;
}

/* Free row r's values and mark it dropped (ms NULL), counted in *counter. */
static void drop_row(ts_dpt *t, uint32_t r, uint32_t *counter)
{
    ts__free(t->rows[r].ms, (size_t)t->n_names[t->rows[r].dtype] * sizeof(double));
    t->rows[r].ms = NULL;
    (*counter)++;
}

/* Per dtype: keep the rows of the most common count, then drop each row
 * equal to an earlier kept one; file order is kept. */
static void settle_rows(ts_dpt *t)
{
    for (int d = 0; d < 2; d++) {
        uint32_t mode = 0, best = 0;
        for (uint32_t r = 0; r < t->n_rows; r++) {
            uint32_t c = 0;
            for (uint32_t q = 0; q < t->n_rows; q++) c += t->rows[q].dtype == d && t->rows[q].count == t->rows[r].count;
            if (t->rows[r].dtype == d && (c > best || (c == best && t->rows[r].count < mode))) { best = c; mode = t->rows[r].count; }
        }
        for (uint32_t r = 0; r < t->n_rows; r++)
            if (t->rows[r].dtype == d && t->rows[r].count != mode) drop_row(t, r, &t->n_unnamed);
    }
    for (uint32_t r = 0; r < t->n_rows; r++)
        for (uint32_t q = 0; t->rows[r].ms && q < r; q++)
            if (t->rows[q].ms && t->rows[q].dtype == t->rows[r].dtype &&
                !memcmp(t->rows[q].ms, t->rows[r].ms, (size_t)t->n_names[t->rows[r].dtype] * sizeof(double)))
                drop_row(t, r, &t->n_repeated);
    uint32_t k = 0;
    for (uint32_t r = 0; r < t->n_rows; r++)
        if (t->rows[r].ms) t->rows[k++] = t->rows[r];
    t->n_rows = k;
}

static int parse_avg(ts_dpt *t, const char *file, const char *data, size_t na, ts_error *err)
{
    lines l = {data, data + na, 0};
    const char *s;
    size_t n;
    double *v = NULL;
    uint32_t cap = 0, count, batch = 0, hdr_no = 0;
    int d = -1, rc = TS_OK;
    while (rc == TS_OK && next_line(&l, &s, &n)) {
        if (blank(s, n)) continue;
        if (d < 0) { rc = header_line(file, s, n, l.no, &d, &batch, err); hdr_no = l.no; continue; }
        rc = values_line(file, s, n, l.no, &v, &cap, &count, err);
        if (rc == TS_OK && keep_row(t, d, batch, v, count)) rc = ts__error(err, TS_ENOMEM, "%s: out of memory", file);
        d = -1;
    }
    ts__free(v, (size_t)cap * sizeof *v);
    if (rc == TS_OK) settle_rows(t);
    if (rc == TS_OK && d >= 0) rc = ts__error(err, TS_EPARSE, "%s: line %u: a header with no times after it", file, hdr_no);
    if (rc == TS_OK && !t->n_rows)
        rc = ts__error(err, TS_EPARSE, "%s: line %u: no row with a time for every name", file, l.no);
    return rc;
}

int ts__dpt_parse(ts_dpt *t, const char *name_file, const char *names, size_t nn, const char *avg_file, const char *avg,
                  size_t na, ts_error *err)
{
    memset(t, 0, sizeof *t);
    int rc = parse_names(t, name_file, names, nn, err);
    if (rc == TS_OK) rc = parse_avg(t, avg_file, avg, na, err);
    if (rc) ts__dpt_free(t);
    return rc;
}

typedef struct load_ud { ts_dpt *t; const char *name_file, *avg_file; char *names; size_t nn; ts_error *err; } load_ud;

static int keep_names(void *ud, const char *data, size_t n)
{
    load_ud *u = ud;
    if (!(u->names = ts__malloc(n + 1))) return ts__error(u->err, TS_ENOMEM, "%s: out of memory", u->name_file);
    memcpy(u->names, data, n);
    u->nn = n;
    return TS_OK;
}

static int parse_both(void *ud, const char *data, size_t n)
{
    load_ud *u = ud;
    return ts__dpt_parse(u->t, u->name_file, u->names, u->nn, u->avg_file, data, n, u->err);
}

int ts__dpt_load(ts_dpt *t, const char *dir, ts_error *err)
{
    memset(t, 0, sizeof *t);
    char nf[4096], af[4096];
    if ((size_t)snprintf(nf, sizeof nf, "%s/name.txt", dir) >= sizeof nf ||
        (size_t)snprintf(af, sizeof af, "%s/avg.txt", dir) >= sizeof af)
        return ts__error(err, TS_EINVAL, "%s: path too long", dir);
    load_ud u = {t, nf, af, NULL, 0, err};
    int rc = ts__with_file_bytes(nf, TS__SIDE_FILE_MAX_BYTES, keep_names, &u, err);
    if (rc == TS_OK) rc = ts__with_file_bytes(af, TS__SIDE_FILE_MAX_BYTES, parse_both, &u, err);
    ts__free(u.names, u.nn + 1);
    return rc;
}

void ts__dpt_free(ts_dpt *t)
{
    for (uint32_t i = 0; i < t->n_rows; i++) ts__free(t->rows[i].ms, (size_t)t->n_names[t->rows[i].dtype] * sizeof(double));
    ts__free(t->rows, (size_t)t->cap_rows * sizeof *t->rows);
    for (int d = 0; d < 2; d++) ts__free(t->names[d], (size_t)t->cap_names[d] * sizeof *t->names[d]);
    ts__free(t->pool, t->pool_cap);
    memset(t, 0, sizeof *t);
}

int ts__dpt_fit(const ts_dpt *t, int dtype, uint32_t skip, ts_cost_model *m)
{
    ts_op_samples s = {0};
    int rc = TS_OK;
    for (uint32_t r = 0; r < t->n_rows && rc == TS_OK; r++) {
        const ts_dpt_row *row = &t->rows[r];
        if (row->dtype != dtype || row->batch == skip) continue;
        for (uint32_t i = 0; i < t->n_names[dtype] && rc == TS_OK; i++)
            if (row->ms[i] > 0) rc = ts__cost_push_sample(&s, t->names[dtype][i], row->batch, row->ms[i] * 1e6);
    }
    if (rc == TS_OK) rc = ts__cost_fit(&s, 2, m);
    ts__cost_samples_free(&s);
    return rc;
}

/* The time of op i at the batch size of dtype nearest to B (B excluded). */
static double nearest(const ts_dpt *t, int dtype, uint32_t B, uint32_t i)
{
    double best = -1;
    uint32_t dist = UINT32_MAX;
    for (uint32_t r = 0; r < t->n_rows; r++) {
        const ts_dpt_row *row = &t->rows[r];
        if (row->dtype != dtype || row->batch == B) continue;
        uint32_t d = row->batch > B ? row->batch - B : B - row->batch;
        if (d < dist) { dist = d; best = row->ms[i]; }
    }
    return best;
}

static int push2(double **a, double **b, size_t *n, size_t *cap, double x, double y)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        double *na = ts__realloc(*a, *cap * sizeof **a + 8, nc * sizeof **a + 8);
        if (!na) return TS_ENOMEM;
        *a = na;
        double *nb = ts__realloc(*b, *cap * sizeof **b + 8, nc * sizeof **b + 8);
        if (!nb) return TS_ENOMEM;   /* *a keeps its larger block: freed with nc's size below */
        *b = nb;
        *cap = nc;
    }
    (*a)[*n] = x;
    (*b)[(*n)++] = y;
    return TS_OK;
}

int ts__dpt_holdout(const ts_dpt *t, int dtype, double **model, double **base, size_t *n, size_t *capp)
{
    *model = *base = NULL;
    *n = 0;
    size_t cap = 0;
    int rc = TS_OK;
    for (uint32_t r = 0; r < t->n_rows && rc == TS_OK; r++) {
        const ts_dpt_row *row = &t->rows[r];
        if (row->dtype != dtype) continue;
        ts_cost_model m;
        if ((rc = ts__dpt_fit(t, dtype, row->batch, &m))) break;
        for (uint32_t i = 0; i < t->n_names[dtype] && rc == TS_OK; i++) {
            const ts_cost_fit *f = ts__cost_lookup(&m, t->names[dtype][i]);
            double y = row->ms[i] * 1e6, near = nearest(t, dtype, row->batch, i) * 1e6;
            if (!f || y <= 0 || near < 0) continue;
            double pred = f->alpha_ns + f->beta_ns * row->batch;
            rc = push2(model, base, n, &cap, fabs(pred - y) / y, fabs(near - y) / y);
        }
        ts__cost_model_free(&m);
    }
    if (rc) { ts__free(*model, cap * 8 + 8); ts__free(*base, cap * 8 + 8); *model = *base = NULL; *n = cap = 0; }
    *capp = cap;
    return rc;
}
