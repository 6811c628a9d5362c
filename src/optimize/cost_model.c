/* cost_model.c - per-op cost models trained from traces (seed 000's "Train
 * Cost Model"): time = alpha + beta x work per op name, where work is the
 * FLOPs of a matrix product (mm, addmm, bmm, matmul, linear: 2 m k n from
 * "Input Dims") and the elements of the largest input for any other op.
 * The time is what the op's kernels took on the GPU (kernels found through
 * the correlation id of the launch the op encloses), or the op's own time
 * in a CPU-only trace. Fitted by weighted least squares on relative error
 * (weights 1/t^2), alpha and beta kept >= 0. bench/optimize prints its error
 * on a held-out trace against the shape-blind per-name median.
 * Not for: pricing candidates yet (the op-fusion pass uses the trace's own
 * times, and no trace with shapes here has an op-fusion candidate).
 */
#include <math.h>
#include <stdlib.h>

#include "optimize/cost_model.h"
#include "trace/model.h"

/* Dims of input k of an "Input Dims" text ([[a,b],[c],[],...]): count in
 * *n (at most 8 kept); false past the inputs. */
static bool input_dims(const char *s, int k, double *d, int *n)
{
    int depth = 0, idx = -1;
    *n = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '[') {
            depth++;
            if (depth == 2) idx++;
        } else if (*p == ']') {
            if (depth == 2 && idx == k) return true;
            depth--;
        } else if (depth == 2 && idx == k && (*p == '-' || (*p >= '0' && *p <= '9'))) {
            char *e;
            double v = strtod(p, &e);
            if (*n < 8) d[(*n)++] = v;
            p = e - 1;
        }
    }
    return false;
}

static bool is_product(const char *name)
{
    static const char *const mm[] = {"aten::mm", "aten::addmm", "aten::bmm", "aten::matmul", "aten::linear",
                                     "aten::baddbmm"};
    for (size_t i = 0; i < sizeof mm / sizeof *mm; i++)
        if (!strcmp(name, mm[i])) return true;
    return false;
}

double ts__cost_work(const char *name, const char *dims)
{
    double a[8], b[8];
    int na, nb;
    if (is_product(name)) {
        int first = !strcmp(name, "aten::addmm") || !strcmp(name, "aten::baddbmm");   /* bias first */
        if (!input_dims(dims, first, a, &na) || !input_dims(dims, first + 1, b, &nb) || na < 2 || nb < 1) return -1;
        double batch = 1;
        for (int i = 0; i + 2 < na; i++) batch *= a[i];
        double m = a[na - 2], k = a[na - 1];
        /* linear's weight is [n, k]; the others' second operand is [.., k, n] */
        double n = !strcmp(name, "aten::linear") ? b[0] : b[nb - 1];
        return 2.0 * batch * m * k * n;
    }
    double best = -1;
    for (int k = 0; input_dims(dims, k, a, &na); k++) {
        double e = 1;
        for (int i = 0; i < na; i++) e *= a[i];
        if (na && e > best) best = e;
    }
    return best;
}

int ts__cost_push_sample(ts_op_samples *s, const char *name, double work, double t)
{
    if (ts__grow((void **)&s->v, &s->cap, sizeof *s->v, (size_t)s->n + 1)) return TS_ENOMEM;
    char *copy = ts__strdup(name);
    if (!copy) return TS_ENOMEM;
    s->v[s->n++] = (ts_op_sample){copy, work, t};
    return TS_OK;
}

/* Kernel time under each slice of r: kern[op] += kernel durations whose
 * launch the op encloses (the nearest enclosing slice with shapes). */
static int kernel_times(const ts_rank *r, double *kern)
{
    const ts_slices *s = &r->slices;
    ts_map64 launch;
    ts__map64_init(&launch);
    int rc = TS_OK;
    for (uint32_t i = 0; i < s->n && rc == TS_OK; i++)
        if ((s->kind[i] == TS_KIND_CUDA_RUNTIME || s->kind[i] == TS_KIND_CUDA_DRIVER) && s->corr[i] >= 0)
            rc = ts__map64_put(&launch, (uint64_t)s->corr[i], i);
    for (uint32_t i = 0; i < s->n && rc == TS_OK; i++) {
        uint64_t l;
        if (s->kind[i] != TS_KIND_KERNEL || s->corr[i] < 0 || !ts__map64_get(&launch, (uint64_t)s->corr[i], &l)) continue;
        uint32_t op = (uint32_t)l;
        while (op != TS_NONE32 && !ts__slice_arg_str(r, op, "Input Dims")) op = s->parent[op];
        if (op != TS_NONE32) kern[op] += (double)s->dur_ns[i];
    }
    ts__map64_free(&launch);
    return rc;
}

static int rank_samples(const ts_rank *r, ts_op_samples *out)
{
    const ts_slices *s = &r->slices;
    double *kern = ts__calloc((size_t)s->n + 1, sizeof *kern);
    if (!kern) return TS_ENOMEM;
    bool any_kernel = false;
    for (uint32_t i = 0; i < s->n && !any_kernel; i++) any_kernel = s->kind[i] == TS_KIND_KERNEL;
    int rc = any_kernel ? kernel_times(r, kern) : TS_OK;
    for (uint32_t i = 0; i < s->n && rc == TS_OK; i++) {
        const char *dims = ts__slice_arg_str(r, i, "Input Dims");
        if (!dims || s->kind[i] != TS_KIND_CPU_OP) continue;
        const char *name = ts__rank_str(r, s->name[i]);
        double t = any_kernel ? kern[i] : (double)s->dur_ns[i], w = ts__cost_work(name, dims);
        if (t > 0 && w > 0) rc = ts__cost_push_sample(out, name, w, t);
    }
    ts__free(kern, ((size_t)s->n + 1) * sizeof *kern);
    return rc;
}

int ts__cost_samples(const ts_job *t, ts_op_samples *out, ts_error *err)
{
    memset(out, 0, sizeof *out);
    for (uint32_t k = 0; k < ts_job_n_ranks(t); k++)
        if (rank_samples(ts_job_borrow_rank(t, k), out)) {
            ts__cost_samples_free(out);
            return ts__error(err, TS_ENOMEM, "cost model: out of memory");
        }
    return TS_OK;
}

void ts__cost_samples_free(ts_op_samples *s)
{
    for (uint32_t i = 0; i < s->n; i++) ts__free(s->v[i].name, strlen(s->v[i].name) + 1);
    ts__free(s->v, (size_t)s->cap * sizeof *s->v);
    memset(s, 0, sizeof *s);
}

static int cmp_name(const void *a, const void *b)
{
    const ts_op_sample *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

/* Weighted least squares of t = a + b w with weights 1/t^2 over v[0..n). */
static void fit_line(const ts_op_sample *v, uint32_t n, double *a, double *b)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (uint32_t i = 0; i < n; i++) {
        double w = 1.0 / (v[i].time_ns * v[i].time_ns), x = v[i].work, y = v[i].time_ns;
        sw += w; sx += w * x; sy += w * y; sxx += w * x * x; sxy += w * x * y;
    }
    double det = sw * sxx - sx * sx;
    *a = sy / sw;   /* no spread in work: the weighted mean */
    *b = 0;
    if (det > 1e-12 * sw * sxx) {
        *b = (sw * sxy - sx * sy) / det;
        *a = (sy - *b * sx) / sw;
    }
    if (*b < 0) { *b = 0; *a = sy / sw; }
    if (*a < 0) { *a = 0; *b = sxy / sxx; }   /* through the origin */
}

int ts__cost_fit(const ts_op_samples *train, uint32_t min_samples, ts_cost_model *m)
{
    memset(m, 0, sizeof *m);
    ts_op_sample *v = ts__malloc((size_t)train->n * sizeof *v + 1);
    m->fit = ts__calloc((size_t)train->n + 1, sizeof *m->fit);
    m->cap = m->fit ? train->n + 1 : 0;
    if (!v || !m->fit) { ts__free(v, (size_t)train->n * sizeof *v + 1); ts__cost_model_free(m); return TS_ENOMEM; }
    if (train->n) memcpy(v, train->v, (size_t)train->n * sizeof *v);
    qsort(v, train->n, sizeof *v, cmp_name);
    int rc = TS_OK;
    for (uint32_t lo = 0, hi; lo < train->n && rc == TS_OK; lo = hi) {
        for (hi = lo; hi < train->n && !strcmp(v[hi].name, v[lo].name); hi++) {}
        if (hi - lo < min_samples) continue;
        ts_cost_fit *f = &m->fit[m->n];
        if (!(f->name = ts__strdup(v[lo].name))) { rc = TS_ENOMEM; break; }
        fit_line(v + lo, hi - lo, &f->alpha_ns, &f->beta_ns);
        f->median_ns = v[lo + (hi - lo) / 2].time_ns;   /* sorted by time within a name */
        f->n = hi - lo;
        m->n++;
    }
    ts__free(v, (size_t)train->n * sizeof *v + 1);
    if (rc) ts__cost_model_free(m);
    return rc;
}

void ts__cost_model_free(ts_cost_model *m)
{
    for (uint32_t i = 0; m->fit && i < m->n; i++) ts__free(m->fit[i].name, strlen(m->fit[i].name) + 1);
    ts__free(m->fit, (size_t)m->cap * sizeof *m->fit);
    memset(m, 0, sizeof *m);
}

const ts_cost_fit *ts__cost_lookup(const ts_cost_model *m, const char *name)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (!strcmp(m->fit[i].name, name)) return &m->fit[i];
    return NULL;
}
