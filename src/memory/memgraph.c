/* memgraph.c - life cycle of a memgraph and its kernel times: loading the fx
 * pair, time tables (G10's time_dict.json / .txt) and the roofline estimate.
 *
 * Not here: liveness and curves (liveness.c), output files (writer.c).
 * Invariant after a successful load: n_kernels >= 1 and every kernel's
 * time_ns is -1 until times are set, then >= 0 for every kernel.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "memory/memgraph.h"

void ts_memgraph_destroy(ts_memgraph *g)
{
    if (!g) return;
    ts__strpool_free(&g->names);
    ts__map64_free(&g->byname);
    ts__free(g->tensors, (size_t)g->cap_tensors * sizeof *g->tensors);
    ts__free(g->kernels, (size_t)g->cap_kernels * sizeof *g->kernels);
    ts__free(g->refs, (size_t)g->cap_refs * sizeof *g->refs);
    ts__free(g->fwd_ret, (size_t)g->cap_fwd_ret * sizeof *g->fwd_ret);
    ts__free(g->periods, (size_t)g->cap_periods * sizeof *g->periods);
    ts__free(g->start_us, ((size_t)g->n_kernels + 1) * sizeof *g->start_us);
    ts__free(g->alive, ((size_t)g->n_kernels + 1) * sizeof *g->alive);
    ts__free(g, sizeof *g);
}


int ts__mem_load_text(const char *const names[2], const char *const texts[2], const size_t lens[2],
                      const ts_mem_options *opt, ts_memgraph **out, ts_error *err)
{
    *out = NULL;
    ts_memgraph *g = ts__calloc(1, sizeof *g);
    if (!g) return ts__error(err, TS_ENOMEM, "out of memory");
    int rc = ts__strpool_init(&g->names) ? ts__error(err, TS_ENOMEM, "out of memory") : TS_OK;
    if (opt) memcpy(&g->opt, opt, opt->size < sizeof g->opt ? opt->size : sizeof g->opt);
    g->opt.size = sizeof g->opt;
    ts__map64_init(&g->byname);
    for (int which = 0; which < 2 && !rc; which++) {
        snprintf(g->files[which], sizeof g->files[which], "%s", names[which]);
        rc = ts__mem_read_fx(g, which, texts[which], lens[which], err);
    }
    if (!rc && g->opt.precision_plan) rc = ts__mem_precision_plan(g, g->opt.precision_plan, err);
    if (!rc) {
        g->start_us = ts__calloc((size_t)g->n_kernels + 1, sizeof *g->start_us);
        g->alive = ts__calloc((size_t)g->n_kernels + 1, sizeof *g->alive);
        if (!g->start_us || !g->alive) rc = ts__error(err, TS_ENOMEM, "out of memory");
    }
    if (rc) {
        ts_memgraph_destroy(g);
        return rc;
    }
    *out = g;
    return TS_OK;
}

int ts_memgraph_load(const char *fwd, const char *bwd, const ts_mem_options *opt,
                     ts_memgraph **out, ts_error *err)
{
    ts__error_clear(err);
    const char *names[2] = {fwd, bwd};
    char *texts[2] = {NULL, NULL};
    size_t lens[2] = {0, 0}, caps[2] = {0, 0};
    int rc = TS_OK;
    *out = NULL;
    for (int i = 0; i < 2 && !rc; i++)
        if (!(texts[i] = ts__read_bounded(names[i], "an fx dump", TS__FX_DUMP_MAX_BYTES, &lens[i], &caps[i], err))) rc = err ? err->status : TS_EIO;
    if (!rc) rc = ts__mem_load_text(names, (const char *const *)texts, lens, opt, out, err);
    for (int i = 0; i < 2; i++) ts__free(texts[i], caps[i]);
    return rc;
}

/* ---- time tables ---- */

/* Output names of kernel k joined with ", " (G10's key without "_<id>"). */
static void out_names(const ts_memgraph *g, uint32_t k, char *buf, size_t cap)
{
    const ts__mem_kernel *kn = &g->kernels[k];
    size_t n = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < kn->n_out && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "",
                              ts__mem_name(g, g->refs[kn->first_ref + kn->n_in + i].name_id));
}

/* One time-table entry: key (may be empty) and milliseconds; indexed: a
 * G10 time_dict.txt line "<kernel id> <ms> ms", whose key is the id. */
typedef struct entry { const char *key; size_t key_n; double ms; bool indexed; } entry;

/* The last whitespace-separated token of [p, le): its start. */
static const char *last_token(const char *p, const char *le)
{
    while (le > p && isspace((unsigned char)le[-1])) le--;
    while (le > p && !isspace((unsigned char)le[-1])) le--;
    return le;
}

/* Next entry of a JSON object {"key": ms, ...} or of a text table whose lines
 * are "key ms", "ms" or "<id> <ms> ms". Returns 1, 0 at the end, or TS_EPARSE. */
static int next_entry(const char **pp, const char *end, bool json, entry *e)
{
    const char *p = *pp;
    if (json) {
        while (p < end && *p != '"' && *p != '}') p++;
        if (p >= end || *p == '}') return 0;
        const char *ke = memchr(p + 1, '"', (size_t)(end - p - 1));
        if (!ke) return TS_EPARSE;
        e->key = p + 1;
        e->key_n = (size_t)(ke - p - 1);
        p = ke + 1;
        while (p < end && (isspace((unsigned char)*p) || *p == ':')) p++;
    } else {
        while (p < end && isspace((unsigned char)*p)) p++;
        if (p >= end) return 0;
        const char *le = memchr(p, '\n', (size_t)(end - p));
        if (!le) le = end;
        const char *num = last_token(p, le);
        e->indexed = le - num >= 2 && !memcmp(num, "ms", 2) && (le - num == 2 || isspace((unsigned char)num[2]));
        const char *unit = num;
        if (e->indexed) num = last_token(p, num);
        e->key = p;
        e->key_n = (size_t)(num - p);
        while (e->key_n && isspace((unsigned char)p[e->key_n - 1])) e->key_n--;
        char *ne;
        e->ms = strtod(num, &ne);
        while (ne < unit && isspace((unsigned char)*ne)) ne++;
        if (ne == num || (e->indexed && ne != unit) || !(e->ms >= 0) || e->ms > 1e9) return TS_EPARSE;
        *pp = e->indexed ? le : ne;
        return 1;
    }
    char *ne;
    e->ms = strtod(p, &ne);
    if (ne == p || !(e->ms >= 0) || e->ms > 1e9) return TS_EPARSE;
    *pp = ne;
    return 1;
}

/* Does key "names_<id>" name kernel k's outputs? (An empty key matches.) */
static bool key_matches(const ts_memgraph *g, uint32_t k, const entry *e)
{
    if (!e->key_n) return true;
    size_t n = e->key_n;
    while (n && isdigit((unsigned char)e->key[n - 1])) n--;
    if (n == e->key_n || !n || e->key[n - 1] != '_') n = e->key_n + 1; /* no _<id> suffix */
    char names[512];
    out_names(g, k, names, sizeof names);
    return strlen(names) == n - 1 && !memcmp(names, e->key, n - 1);
}

/* Is e the line of kernel k ("k <ms> ms")? G10 asserts kernel_num == i. */
static bool index_is(const entry *e, uint32_t k)
{
    char id[16];
    int n = snprintf(id, sizeof id, "%u", k);
    return e->key_n == (size_t)n && !memcmp(e->key, id, (size_t)n);
}

static int bad_index(const ts_memgraph *g, const char *path, uint32_t n, const entry *e, bool indexed,
                     ts_error *err)
{
    if (e->indexed != indexed)
        return ts__error(err, TS_EPARSE, "%s: entry %u: \"<id> <ms> ms\" lines mixed with other lines", path, n);
    if (n > g->n_kernels)
        return ts__error(err, TS_EFORMAT, "%s: entry %u: more times than the graph's %u kernels", path, n,
                         g->n_kernels);
    return ts__error(err, TS_EFORMAT, "%s: entry %u: kernel id \"%.*s\" where %u was expected (G10 reads "
                     "the lines in kernel order)", path, n, (int)(e->key_n < 40 ? e->key_n : 40), e->key, n - 1);
}

/* A kernel's table time: G10 keeps integer nanoseconds, truncated (matches
 * its outputs); the milliseconds stay for its cycle arithmetic. */
static void set_ms(ts__mem_kernel *kn, double ms)
{
    kn->ms = ms;
    kn->time_ns = (int64_t)(ms * 1e6);
}

int ts_memgraph_load_times(ts_memgraph *g, const char *path, ts_error *err)
{
    ts__error_clear(err);
    size_t len, cap;
    char *text = ts__read_bounded(path, "a kernel-times table", TS__SIDE_FILE_MAX_BYTES, &len, &cap, err);
    if (!text) return err ? err->status : TS_EIO;
    const char *p = text, *end = text + len;
    while (p < end && isspace((unsigned char)*p)) p++;
    bool json = p < end && *p == '{';
    if (json) p++;
    /* Walk kernels and entries together: kernels the table does not list
     * (exact mode adds copy_ and G10's aliased squeezes) get 0 ns. */
    uint32_t k = 0, n_entries = 0;
    entry e = {0};
    int rc;
    bool indexed = false;
    while ((rc = next_entry(&p, end, json, &e)) == 1) {
        n_entries++;
        if (n_entries == 1) indexed = e.indexed;
        if (e.indexed != indexed || (indexed && !index_is(&e, k))) {
            rc = bad_index(g, path, n_entries, &e, indexed, err);
            break;
        }
        while (k < g->n_kernels && !indexed && !key_matches(g, k, &e)) set_ms(&g->kernels[k++], 0);
        if (k == g->n_kernels) {
            rc = ts__error(err, TS_EFORMAT, "%s: entry %u (\"%.*s\") matches no remaining kernel: "
                           "the table belongs to another graph", path, n_entries,
                           (int)(e.key_n < 80 ? e.key_n : 80), e.key);
            break;
        }
        set_ms(&g->kernels[k++], e.ms);
    }
    if (!rc && indexed && k != g->n_kernels)
        rc = ts__error(err, TS_EFORMAT, "%s: %u times for %u kernels: G10 reads one line per kernel%s", path,
                       n_entries, g->n_kernels, g->opt.g10_compat ? "" : " (its ids count kernels under --g10-compat)");
    if (rc == TS_EPARSE) rc = ts__error(err, TS_EPARSE, "%s: entry %u: expected a time in ms", path, n_entries + 1);
    ts__free(text, cap);
    if (rc < 0) return rc;
    if (n_entries == 0) return ts__error(err, TS_ENODATA, "%s: no times", path);
    while (k < g->n_kernels) set_ms(&g->kernels[k++], 0);
    g->have_times = true;
    snprintf(g->time_source, sizeof g->time_source, "time table");
    return TS_OK;
}

/* ---- roofline ---- */

static const ts_mem_device DEVICES[] = {
    /* FP32 without tensor cores; HBM bandwidth; ~2 us per launch */
    {"a100", 19.5, 1555.0, 2.0},
    {"v100", 15.7, 900.0, 2.0},
    {"h100", 67.0, 3350.0, 2.0},
    {"cpu", 1.0, 50.0, 1.0},
};

const ts_mem_device *ts_mem_device_find(const char *name)
{
    for (size_t i = 0; i < sizeof DEVICES / sizeof DEVICES[0]; i++)
        if (!strcmp(DEVICES[i].name, name)) return &DEVICES[i];
    return NULL;
}

/* Dimensions of an annotation "f32[a, b, c]"; returns their count. */
static int dims_of(const char *ann, int64_t *d, int max)
{
    const char *p = strchr(ann, '[');
    int n = 0;
    while (p && *p && *p != ']' && n < max) {
        p++;
        while (*p == ' ') p++;
        if (!isdigit((unsigned char)*p)) break;
        char *end;
        d[n++] = strtoll(p, &end, 10);
        p = end;
    }
    return n;
}

static int64_t ref_elems(const ts_memgraph *g, const ts__mem_ref *r)
{
    int64_t d[TS__MEM_MAX_DIMS], e = 1;
    int n = dims_of(ts__mem_name(g, r->ann_id), d, TS__MEM_MAX_DIMS);
    for (int i = 0; i < n; i++) e *= d[i];
    return e;
}

/* FLOPs of kernel k from its op and shapes. Matrix products, convolutions
 * and attention have closed forms; everything else is one op per element. */
static double kernel_flops(const ts_memgraph *g, uint32_t k)
{
    const ts__mem_kernel *kn = &g->kernels[k];
    const char *op = ts__mem_name(g, kn->op_id);
    /* a graph with no refs at all has no array to point into: pointer arithmetic on NULL is undefined */
    const ts__mem_ref *in = g->refs ? &g->refs[kn->first_ref] : NULL, *out = in ? in + kn->n_in : NULL;
    int64_t d[TS__MEM_MAX_DIMS];
    double out_e = kn->n_out ? (double)ref_elems(g, out) : 0, in_e = kn->n_in ? (double)ref_elems(g, in) : 0;
    if (kn->is_view) return 0;
    if ((!strcmp(op, "mm") || !strcmp(op, "bmm")) && kn->n_in >= 1) {
        int n = dims_of(ts__mem_name(g, in[0].ann_id), d, TS__MEM_MAX_DIMS);
        return n ? 2.0 * out_e * (double)d[n - 1] : out_e;
    }
    if ((!strcmp(op, "addmm") || !strcmp(op, "baddbmm")) && kn->n_in >= 2) {
        int n = dims_of(ts__mem_name(g, in[1].ann_id), d, TS__MEM_MAX_DIMS);
        return n ? 2.0 * out_e * (double)d[n - 1] : out_e;
    }
    if (!strcmp(op, "convolution") && kn->n_in >= 2) {
        int n = dims_of(ts__mem_name(g, in[1].ann_id), d, TS__MEM_MAX_DIMS);
        return n && d[0] ? 2.0 * out_e * (double)ref_elems(g, &in[1]) / (double)d[0] : out_e;
    }
    if (!strcmp(op, "convolution_backward") && kn->n_in >= 3) {
        int n = dims_of(ts__mem_name(g, in[2].ann_id), d, TS__MEM_MAX_DIMS);
        return n && d[0] ? 4.0 * in_e * (double)ref_elems(g, &in[2]) / (double)d[0] : in_e;
    }
    if (strstr(op, "scaled_dot_product") && kn->n_in >= 2) {
        int64_t q[TS__MEM_MAX_DIMS], kk[TS__MEM_MAX_DIMS];
        int nq = dims_of(ts__mem_name(g, in[0].ann_id), q, TS__MEM_MAX_DIMS);
        int nk = dims_of(ts__mem_name(g, in[1].ann_id), kk, TS__MEM_MAX_DIMS);
        if (nq == 4 && nk == 4) {
            double f = 4.0 * (double)q[0] * (double)q[1] * (double)q[2] * (double)kk[2] * (double)q[3];
            return strstr(op, "backward") ? 2.5 * f : f;
        }
    }
    return out_e > in_e ? out_e : in_e;
}

void ts_memgraph_estimate_times(ts_memgraph *g, const ts_mem_device *dev)
{
    for (uint32_t k = 0; k < g->n_kernels; k++) {
        ts__mem_kernel *kn = &g->kernels[k];
        kn->flops = kernel_flops(g, k);
        double bytes = 0;
        for (uint32_t i = 0; i < (uint32_t)kn->n_in + kn->n_out; i++) {
            const ts__mem_ref *r = &g->refs[kn->first_ref + i];
            bytes += (double)ref_elems(g, r) * g->tensors[r->tensor].elem_bytes;
        }
        double t_compute = kn->flops / (dev->peak_tflops * 1e12);
        double t_memory = bytes / (dev->bandwidth_gbps * 1e9);
        double s = kn->is_view ? 0 : (t_compute > t_memory ? t_compute : t_memory) + dev->launch_us * 1e-6;
        /* Saturated past 2^62 ns: ts_memgraph_analyze then refuses the sum. */
        kn->time_ns = s * 1e9 < 0x1p62 ? (int64_t)(s * 1e9) : (int64_t)1 << 62;
    }
    g->have_times = true;
    snprintf(g->time_source, sizeof g->time_source, "roofline %s", dev->name ? dev->name : "custom");
}

const char *ts_memgraph_time_source(const ts_memgraph *g) { return g->time_source; }

void ts_memgraph_kernel(const ts_memgraph *g, int32_t k, ts_mem_kernel_info *out)
{
    if (k < 0 || (uint32_t)k >= g->n_kernels) { *out = (ts_mem_kernel_info){"", false, 0}; return; }
    const ts__mem_kernel *kn = &g->kernels[k];
    *out = (ts_mem_kernel_info){ts__mem_name(g, kn->op_id), kn->in_backward != 0, kn->line};
}

void ts_memgraph_tensor(const ts_memgraph *g, uint32_t t, ts_mem_tensor_info *out)
{
    if (t >= g->n_tensors) { *out = (ts_mem_tensor_info){"", "", 0, false}; return; }
    const ts__mem_tensor *tt = &g->tensors[t];
    *out = (ts_mem_tensor_info){ts__mem_name(g, tt->name_id), ts__mem_name(g, tt->ann_id), tt->bytes, tt->is_global};
}

uint32_t ts_memgraph_alive_at(const ts_memgraph *g, int32_t k, uint32_t *rows, uint32_t cap)
{
    return ts__mem_alive_at(g, k, rows, cap);
}
