/* precision_pass.c - the precision pass of `trainscope optimize` (seed 001,
 * QSync's greedy plan): ts_prec_greedy under the pass's budgets, with the
 * units an AMP-style allow list leaves out pinned at fp32, and the plan
 * written for its users:
 *   plan.json          "passes": ["precision"], the iteration and peak before
 *                      and after, and "precision": the options, the runs, per
 *                      unit its op, scope, indicator, precision and time at
 *                      fp32 and as planned; "unit_ops"/"unit_precisions" are
 *                      what replay --plan reads back;
 *   greedy.plan        the plan file (ts_prec_plan_write) torch users apply
 *                      with python/trainscope_precision.py apply();
 *   amp_priorlist.txt  dPRO's / TF's list of ops forced to 16 bits, one a line,
 *   amp.env            and the environment that points TF's rewrite at it.
 * Not for: the search itself (replay/precision_plan.c), the job graph's
 * passes (optimize.c).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/json.h"
#include "optimize/plan_text.h"
#include "trainscope/optimize.h"

struct ts_optimize_prec {
    const ts_prec_model *m;
    ts_optimize_prec_options opt;
    uint8_t *prec, *allowed;
    double  *ind;
    ts_optimize_prec_summary sum;
};

void ts_optimize_prec_destroy(ts_optimize_prec *p)
{
    if (!p) return;
    uint32_t n = p->sum.n_units + 1;
    ts__free(p->prec, n);
    ts__free(p->allowed, n);
    ts__free(p->ind, n * sizeof *p->ind);
    ts__free(p, sizeof *p);
}

static int search(ts_optimize_prec *p, ts_error *err)
{
    const ts_optimize_prec_options *o = &p->opt;
    int64_t base = ts_prec_model_base_bytes(p->m);
    const char *fp32 = o->runs[TS_PREC_FP32] ? o->runs[TS_PREC_FP32] : "the fp32 run";
    if (o->memory_limit_bytes > 0 && base < 0)
        return ts__error(err, TS_EINVAL, "%s: a memory limit needs [memory] events in the runs", fp32);
    if (o->memory_limit_bytes > 0 && o->memory_limit_bytes < base)
        return ts__error(err, TS_ERANGE, "the memory limit %.4g GiB is below the %.4g GiB that the weights, buffers "
                         "and batch take alone (%s)", (double)o->memory_limit_bytes / 1073741824.0,
                         (double)base / 1073741824.0, fp32);
    double budget = o->accuracy_budget > 0 ? o->accuracy_budget : 1e300;
    int rc = ts_prec_greedy(p->m, p->ind, budget, o->memory_limit_bytes, TS_PREC_FP32, o->low, o->granularity, p->prec,
                            &p->sum.after);
    if (rc == TS_EINVAL)
        return ts__error(err, rc, "optimize: no run at %s to lower to (give --precision-trace %s=RUN)",
                         ts_precision_name(o->low), ts_precision_name(o->low));
    if (rc == TS_ERANGE)
        return ts__error(err, rc, "optimize: no plan within the accuracy budget%s fits %.4g GiB (the closest found "
                         "peaks at %.4g GiB)", o->allow_list ? " and the allow list" : "",
                         (double)o->memory_limit_bytes / 1073741824.0, (double)p->sum.after.peak_bytes / 1073741824.0);
    if (rc == TS_ENOENT)
        return ts__error(err, rc, "optimize: no op of %s is inside a module's record_function range (a scope named "
                         "like fc1 or layer1.0), so no per-module plan can lower any; --granularity op plans op by op",
                         fp32);
    if (rc) return ts__error(err, rc, "optimize: out of memory");
    return TS_OK;
}

/* Units lowered and the indicators used: per op each unit's, per module each
 * module's once (the largest of its lowered units'). */
static void count_lowered(ts_optimize_prec *p)
{
    uint32_t n = p->sum.n_units;
    for (uint32_t u = 0; u < n; u++) {
        if (p->prec[u] == TS_PREC_FP32) continue;
        p->sum.n_lowered++;
        const char *mod = ts_prec_model_unit_module(p->m, u);
        if (p->opt.granularity == TS_PREC_BY_OP || !mod) { p->sum.indicator_used += p->ind[u]; continue; }
        bool first = true;
        double w = 0;
        for (uint32_t v = 0; v < n; v++) {
            const char *mv = ts_prec_model_unit_module(p->m, v);
            if (p->prec[v] == TS_PREC_FP32 || !mv || strcmp(mv, mod)) continue;
            if (v < u) first = false;
            if (p->ind[v] > w) w = p->ind[v];
        }
        if (first) p->sum.indicator_used += w;
    }
}

int ts_optimize_precision(const ts_prec_model *m, const ts_optimize_prec_options *opt, ts_optimize_prec **out,
                          ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    if (!opt || opt->size < sizeof *opt || opt->low <= TS_PREC_FP32 || opt->low >= TS_PREC_COUNT)
        return ts__error(err, TS_EINVAL, "optimize: precision options unset or no precision to lower to");
    uint32_t n = ts_prec_model_n_units(m);
    ts_optimize_prec *p = ts__calloc(1, sizeof *p);
    if (!p) return ts__error(err, TS_ENOMEM, "optimize: out of memory");
    p->m = m;
    p->opt = *opt;
    p->sum.n_units = n;
    p->prec = ts__calloc(n + 1, 1);
    p->allowed = ts__calloc(n + 1, 1);
    p->ind = ts__calloc(n + 1, sizeof *p->ind);
    int rc = p->prec && p->allowed && p->ind ? TS_OK : ts__error(err, TS_ENOMEM, "optimize: out of memory");
    if (!rc) rc = ts_prec_indicators_load(m, opt->indicators, p->ind, err);
    if (!rc && opt->allow_list) rc = ts_prec_allow_list_load(m, opt->allow_list, p->allowed, &p->sum.n_allowed, err);
    else if (!rc) { memset(p->allowed, 1, n); p->sum.n_allowed = n; }
    for (uint32_t u = 0; !rc && u < n; u++)
        if (!p->allowed[u]) p->ind[u] = INFINITY;   /* pinned at fp32 */
    if (!rc) {
        ts_prec_predict(m, p->prec, &p->sum.before);   /* prec[] is all fp32 (calloc) */
        rc = search(p, err);
    }
    if (!rc) count_lowered(p);
    if (rc) { ts_optimize_prec_destroy(p); return rc; }
    *out = p;
    return TS_OK;
}

void ts_optimize_prec_get_summary(const ts_optimize_prec *p, ts_optimize_prec_summary *out) { *out = p->sum; }
const uint8_t *ts_optimize_prec_plan(const ts_optimize_prec *p) { return p->prec; }

/* ---- files ---- */

static void json_prediction(ts_json *j, const char *key, const ts_prec_prediction *pr)
{
    ts__json_key(j, key);
    ts__json_obj_begin(j);
    ts__json_kv_us(j, "iteration_us", pr->iteration_ns);
    ts__json_kv_i64(j, "peak_bytes", pr->peak_bytes);
    ts__json_kv_u64(j, "casts", pr->n_casts);
    ts__json_kv_us(j, "cast_us", pr->cast_ns);
    ts__json_obj_end(j);
}

static void json_units(ts_json *j, const ts_optimize_prec *p)
{
    ts__json_key(j, "unit_ops");
    ts__json_arr_begin(j);
    for (uint32_t u = 0; u < p->sum.n_units; u++) {
        ts_prec_unit_info ui;
        ts_prec_model_unit(p->m, u, &ui);
        ts__json_str(j, ui.op);
    }
    ts__json_arr_end(j);
    ts__json_key(j, "unit_precisions");
    ts__json_arr_begin(j);
    for (uint32_t u = 0; u < p->sum.n_units; u++) ts__json_str(j, ts_precision_name((ts_precision)p->prec[u]));
    ts__json_arr_end(j);
    ts__json_key(j, "units");   /* per unit: times as traced (medians, forward + backward with its entry cast) */
    ts__json_arr_begin(j);
    for (uint32_t u = 0; u < p->sum.n_units; u++) {
        ts_prec_unit_info ui;
        ts_prec_model_unit(p->m, u, &ui);
        ts__json_obj_begin(j);
        ts__json_kv_u64(j, "unit", u);
        ts__json_kv_str(j, "op", ui.op);
        ts__json_kv_str(j, "scope", ui.scope);
        ts__json_kv_str(j, "precision", ts_precision_name((ts_precision)p->prec[u]));
        ts__json_kv_bool(j, "may_change", p->allowed[u] != 0);
        ts__json_kv_double(j, "indicator", p->allowed[u] ? p->ind[u] : NAN, 6);
        ts__json_kv_us(j, "fp32_us", ui.fwd_ns[TS_PREC_FP32] + ui.bwd_ns[TS_PREC_FP32]);
        ts__json_kv_us(j, "planned_us", ui.fwd_ns[p->prec[u]] + ui.bwd_ns[p->prec[u]]);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
}

static void write_json(ts_buf *b, const ts_optimize_prec *p)
{
    const ts_optimize_prec_options *o = &p->opt;
    const ts_optimize_prec_summary *s = &p->sum;
    ts_json j;
    ts__json_init(&j, b);
    ts__json_obj_begin(&j);
    ts__json_kv_u64(&j, "trainscope_plan", 1);
    ts__json_key(&j, "passes");
    ts__json_arr_begin(&j);
    ts__json_str(&j, "precision");
    ts__json_arr_end(&j);
    ts__json_kv_us(&j, "measured_iteration_us", s->before.fp32_iteration_ns);
    ts__json_kv_us(&j, "baseline_iteration_us", s->before.iteration_ns);
    ts__json_kv_us(&j, "predicted_iteration_us", s->after.iteration_ns);
    ts__json_kv_double(&j, "predicted_gain_pct", s->before.iteration_ns ? 100.0 * (double)(s->before.iteration_ns -
                       s->after.iteration_ns) / (double)s->before.iteration_ns : 0, 3);
    ts__json_key(&j, "precision");
    ts__json_obj_begin(&j);
    ts__json_kv_str(&j, "lower", ts_precision_name(o->low));
    ts__json_kv_str(&j, "granularity", o->granularity == TS_PREC_BY_OP ? "op" : "module");
    ts__json_kv_double(&j, "accuracy_budget", o->accuracy_budget > 0 ? o->accuracy_budget : NAN, 6);
    ts__json_kv_i64(&j, "memory_limit_bytes", o->memory_limit_bytes);
    ts__json_kv_str(&j, "indicators", o->indicators);
    ts__json_kv_str(&j, "allow_list", o->allow_list);
    for (int r = 0; r < TS_PREC_COUNT; r++) {
        char key[16];
        snprintf(key, sizeof key, "run_%s", ts_precision_name((ts_precision)r));
        char *abs = o->runs[r] ? realpath(o->runs[r], NULL) : NULL;   /* replay --plan from anywhere */
        if (o->runs[r]) ts__json_kv_str(&j, key, abs ? abs : o->runs[r]);
        free(abs);
    }
    ts__json_kv_double(&j, "profiler_overhead_us", o->profiler_overhead_us, 4);
    json_prediction(&j, "before", &s->before);
    json_prediction(&j, "after", &s->after);
    ts__json_kv_u64(&j, "n_units", s->n_units);
    ts__json_kv_u64(&j, "n_may_change", s->n_allowed);
    ts__json_kv_u64(&j, "n_lowered", s->n_lowered);
    ts__json_kv_double(&j, "indicator_used", s->indicator_used, 6);
    json_units(&j, p);
    ts__json_obj_end(&j);
    ts__json_obj_end(&j);
    ts__buf_puts(b, "\n");
}

/* The distinct ops the plan lowers, one a line; returns how many. */
static uint32_t write_priorlist(ts_buf *b, const ts_optimize_prec *p)
{
    uint32_t n = 0;
    for (uint32_t u = 0; u < p->sum.n_units; u++) {
        if (p->prec[u] == TS_PREC_FP32) continue;
        ts_prec_unit_info ui;
        ts_prec_model_unit(p->m, u, &ui);
        bool seen = false;
        for (uint32_t v = 0; v < u && !seen; v++) {
            ts_prec_unit_info vi;
            ts_prec_model_unit(p->m, v, &vi);
            seen = p->prec[v] != TS_PREC_FP32 && !strcmp(vi.op, ui.op);
        }
        if (!seen) { ts__buf_printf(b, "%s\n", ui.op); n++; }
    }
    return n;
}

static int plan_text(ts_buf *b, const ts_optimize_prec *p, ts_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return ts__error(err, TS_ENOMEM, "optimize: out of memory");
    int rc = ts_prec_plan_write(f, p->m, p->prec);
    if (fclose(f) || rc || !text) rc = ts__error(err, TS_ENOMEM, "optimize: out of memory");
    else ts__buf_puts(b, text);
    free(text);
    return rc;
}

enum { N_PREC_FILES = 4 };
static const char *const PREC_FILES[N_PREC_FILES] = {"plan.json", "greedy.plan", "amp_priorlist.txt", "amp.env"};

int ts_optimize_prec_write_plan(const ts_optimize_prec *p, const char *dir, ts_error *err)
{
    ts__error_clear(err);
    bool made;
    if (ts__out_dir(dir, false, &made, err)) return TS_EIO;
    const char *names[N_PREC_FILES];
    int rc = TS_OK, written = 0;
    uint32_t n_ops = 0;
    for (int i = 0; i < N_PREC_FILES && !rc; i++) {
        if (i >= 2 && !p->sum.n_lowered) continue;
        ts_buf b;
        ts__buf_init(&b);
        if (i == 0) write_json(&b, p);
        else if (i == 1) rc = plan_text(&b, p, err);
        else if (i == 2) n_ops = write_priorlist(&b, p);
        else {
            char *abs = realpath(dir, NULL);
            ts__buf_printf(&b, "# dPRO / TensorFlow auto mixed precision: force the plan's %u op(s) to 16 bits "
                           "(written by trainscope optimize)\n" "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_PRIORLIST_FILE="
                           "%s/amp_priorlist.txt\nTF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_FORCE=1\n", n_ops,
                           abs ? abs : dir);
            free(abs);
        }
        if (!rc) rc = b.oom ? ts__error(err, TS_ENOMEM, "optimize: out of memory") : ts__write_tmp(dir, PREC_FILES[i], &b, err);
        ts__buf_free(&b);
        if (rc == TS_OK) names[written++] = PREC_FILES[i];
    }
    rc = ts__commit_tmp(dir, names, written, rc, err);   /* all written, or none */
    if (rc && made) rmdir(dir);
    for (int i = 2; rc == TS_OK && !p->sum.n_lowered && i < N_PREC_FILES; i++) {   /* stale lists would mislead */
        char stale[4096];
        snprintf(stale, sizeof stale, "%s/%s", dir, PREC_FILES[i]);
        remove(stale);
    }
    return rc;
}

/* ---- plan.json read back ---- */

/* A JSON string at *q (simple escapes) into out; advances *q past it. */
static bool read_str(const char **q, char *out, size_t cap)
{
    const char *s = *q;
    if (*s++ != '"') return false;
    size_t n = 0;
    for (; *s && *s != '"'; s++) {
        if (*s == '\\' && s[1]) s++;
        if (n + 1 < cap) out[n++] = *s;
    }
    if (*s != '"') return false;
    out[n] = 0;
    *q = s + 1;
    return true;
}

/* The start of the "precision" section, or an error. */
static int section(const char *path, const char *buf, const char **sec, ts_error *err)
{
    *sec = ts__plan_member(buf, "precision");
    if (!*sec || **sec != '{')
        return ts__error(err, TS_EFORMAT, "%s: byte 0: no \"precision\" section (not a plan of optimize --passes "
                         "precision?)", path);
    return TS_OK;
}

/* Walk array "key" of strings past sec: fn(i, string) per element. */
static int each_str(const char *path, const char *buf, const char *sec, const char *key, uint32_t n_want,
                    int (*fn)(void *, uint32_t, const char *, size_t, ts_error *), void *ctx, ts_error *err)
{
    const char *q = ts__plan_member(sec, key);
    if (!q || *q != '[') return ts__error(err, TS_EFORMAT, "%s: byte %zu: no \"%s\" array", path, (size_t)(sec - buf), key);
    uint32_t i = 0;
    for (q++;;) {
        q += strspn(q, " \t\r\n,");
        if (*q == ']') break;
        char s[512];
        size_t at = (size_t)(q - buf);
        if (!read_str(&q, s, sizeof s)) return ts__error(err, TS_EPARSE, "%s: byte %zu: expected a string in \"%s\"", path, at, key);
        if (i >= n_want)
            return ts__error(err, TS_EFORMAT, "%s: byte %zu: \"%s\" has more than the %u units of the fp32 run (a plan "
                             "for another model?)", path, at, key, n_want);
        int rc = fn(ctx, i++, s, at, err);
        if (rc) return rc;
    }
    if (i != n_want)
        return ts__error(err, TS_EFORMAT, "%s: byte %zu: \"%s\" has %u units, the fp32 run %u (a plan for another "
                         "model?)", path, (size_t)(q - buf), key, i, n_want);
    return TS_OK;
}

typedef struct load_ctx { const char *path; const ts_prec_model *m; uint8_t *prec; } load_ctx;

static int check_op(void *ctx, uint32_t i, const char *s, size_t at, ts_error *err)
{
    load_ctx *c = ctx;
    ts_prec_unit_info ui;
    ts_prec_model_unit(c->m, i, &ui);
    if (strcmp(ui.op, s))
        return ts__error(err, TS_EFORMAT, "%s: byte %zu: unit %u is %s in the plan, %s in the fp32 run (a plan for "
                         "another model?)", c->path, at, i, s, ui.op);
    return TS_OK;
}

static int take_prec(void *ctx, uint32_t i, const char *s, size_t at, ts_error *err)
{
    load_ctx *c = ctx;
    ts_precision p;
    if (!ts_precision_from_name(s, &p))
        return ts__error(err, TS_EPARSE, "%s: byte %zu: '%s' is not a precision", c->path, at, s);
    if (!(ts_prec_model_precisions(c->m) & (1u << p)))
        return ts__error(err, TS_EINVAL, "%s: byte %zu: unit %u is planned at %s, and no run at %s is given", c->path,
                         at, i, s, s);
    c->prec[i] = (uint8_t)p;
    return TS_OK;
}

int ts_optimize_prec_plan_load(const char *path, const ts_prec_model *m, uint8_t *prec, ts_error *err)
{
    ts__error_clear(err);
    char *buf = NULL;
    size_t buf_n = 0;
    const char *sec = NULL;
    int rc = ts__plan_slurp(path, &buf, &buf_n, err);
    if (!rc) rc = section(path, buf, &sec, err);
    load_ctx c = {path, m, prec};
    uint32_t n = ts_prec_model_n_units(m);
    if (!rc) rc = each_str(path, buf, sec, "unit_ops", n, check_op, &c, err);
    if (!rc) rc = each_str(path, buf, sec, "unit_precisions", n, take_prec, &c, err);
    ts__free(buf, buf_n);
    return rc;
}

bool ts_optimize_plan_is_precision(const char *path)
{
    char *buf = NULL;
    size_t buf_n = 0;
    const char *sec;
    ts_error err = {0};
    bool yes = ts__plan_slurp(path, &buf, &buf_n, &err) == TS_OK && section(path, buf, &sec, &err) == TS_OK;
    ts__free(buf, buf_n);
    return yes;
}

int ts_optimize_prec_plan_runs(const char *path, char *runs[TS_PREC_COUNT], double *overhead_us, ts_error *err)
{
    ts__error_clear(err);
    char *buf = NULL;
    size_t buf_n = 0;
    const char *sec = NULL;
    for (int r = 0; r < TS_PREC_COUNT; r++) runs[r] = NULL;
    *overhead_us = 0;
    int rc = ts__plan_slurp(path, &buf, &buf_n, err);
    if (!rc) rc = section(path, buf, &sec, err);
    for (int r = 0; !rc && r < TS_PREC_COUNT; r++) {
        char key[16], val[4096];
        snprintf(key, sizeof key, "run_%s", ts_precision_name((ts_precision)r));
        const char *q = ts__plan_member(sec, key);
        if (!q) continue;
        size_t at = (size_t)(q - buf);
        if (!read_str(&q, val, sizeof val)) rc = ts__error(err, TS_EPARSE, "%s: byte %zu: \"%s\" is not a string", path, at, key);
        else if (!(runs[r] = strdup(val))) rc = ts__error(err, TS_ENOMEM, "%s: out of memory", path);
    }
    const char *q = rc ? NULL : ts__plan_member(sec, "profiler_overhead_us");
    if (q) {
        char *e;
        *overhead_us = strtod(q, &e);
        if (e == q || !(*overhead_us >= 0))
            rc = ts__error(err, TS_EPARSE, "%s: byte %zu: \"profiler_overhead_us\" is not a number >= 0", path, (size_t)(q - buf));
    }
    if (!rc && !runs[TS_PREC_FP32])
        rc = ts__error(err, TS_EFORMAT, "%s: byte %zu: no \"run_fp32\": give the runs (--precision-trace P=RUN FP32_RUN)",
                       path, (size_t)(sec - buf));
    if (rc)
        for (int r = 0; r < TS_PREC_COUNT; r++) { free(runs[r]); runs[r] = NULL; }
    ts__free(buf, buf_n);
    return rc;
}
