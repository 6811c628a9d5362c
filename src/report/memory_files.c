/* memory_files.c - the memory module's output files: G10's kernels.config,
 * tensors.config and liveness_analysis.config (byte-compatible with the G10
 * tool), memory.json for programs, and memory.svg / periods.svg.
 *
 * Every file is built in memory, written as DIR/.NAME.tmp, and renamed only
 * after all files were written, so a failure leaves no partial output.
 * Estimated times are printed as G10 prints them: C++ ostream default
 * (6 significant digits, i.e. %g) of microseconds.
 * Not for: liveness, periods or curves (memory/ computes them; this file
 * reads the graph they filled and writes it out).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "memory/memgraph.h"
#include "core/json.h"
#include "core/svg.h"

static const char SEP77[] = "_____________________________________________________________________________\n";
static const char SEP68[] = "____________________________________________________________________\n";

static void tensor_line(ts_buf *b, const ts_memgraph *g, uint32_t t, uint32_t name_id)
{
    const ts__mem_tensor *tt = &g->tensors[t];
    ts__buf_printf(b, "tensor%u, Name: %s, Is global?: %d: Size in byte: %lld, ", t,
                   ts__mem_name(g, name_id), tt->is_global, (long long)tt->bytes);
}

static void write_kernels(ts_buf *b, const ts_memgraph *g)
{
    for (uint32_t k = 0; k < g->n_kernels; k++) {
        const ts__mem_kernel *kn = &g->kernels[k];
        ts__buf_printf(b, "Kernel ID: %u, Name: %s\nInput Tensors:\n", k, ts__mem_name(g, kn->call_id));
        for (uint32_t i = 0; i < (uint32_t)kn->n_in + kn->n_out; i++) {
            const ts__mem_ref *r = &g->refs[kn->first_ref + i];
            if (i == kn->n_in) ts__buf_puts(b, "Output Tensors:\n");
            tensor_line(b, g, r->tensor, r->name_id);
            ts__buf_printf(b, "Dimensions: %s\n", ts__mem_name(g, r->ann_id));
        }
        if (kn->n_out == 0) ts__buf_puts(b, "Output Tensors:\n");
        ts__buf_puts(b, SEP68);
    }
}

static void write_tensors(ts_buf *b, const ts_memgraph *g)
{
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        tensor_line(b, g, t, g->tensors[t].name_id);
        ts__buf_puts(b, "\n");
    }
}

/* G10's arithmetic for a period's time, in microseconds. */
static double period_us(const ts_memgraph *g, const ts__mem_period *p)
{
    const double *s = g->start_us;
    return p->start <= p->end ? s[p->end] - s[p->start] : (s[g->n_kernels] - s[p->start]) + s[p->end];
}

static void write_liveness(ts_buf *b, const ts_memgraph *g)
{
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        const ts__mem_tensor *tt = &g->tensors[t];
        ts__buf_puts(b, SEP77);
        tensor_line(b, g, t, tt->name_id);
        if (tt->is_global) ts__buf_puts(b, "\nThis tensor is Global!\n");
        else ts__buf_printf(b, "\nLiveness: Birth: %d, Death: %d.\n", tt->birth, tt->death);
        ts__buf_puts(b, "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n");
        tensor_line(b, g, t, tt->name_id);
        ts__buf_puts(b, "\nInactive Periods:\n");
        for (uint32_t i = 0; i < tt->n_periods; i++) {
            const ts__mem_period *p = &g->periods[tt->first_period + i];
            ts__buf_printf(b, "Period %u: %d--------%d\n", i, p->start, p->end);
            if (g->have_times) ts__buf_printf(b, "Estimated Time:%gus\n", period_us(g, p));
        }
        ts__buf_puts(b, SEP77);
    }
}

static void json_tensor(ts_json *j, const ts_memgraph *g, uint32_t t)
{
    const ts__mem_tensor *tt = &g->tensors[t];
    ts__json_obj_begin(j);
    ts__json_kv_u64(j, "id", t);
    ts__json_kv_str(j, "name", ts__mem_name(g, tt->name_id));
    ts__json_kv_str(j, "type", ts__mem_name(g, tt->ann_id));
    ts__json_kv_i64(j, "bytes", tt->bytes);
    ts__json_kv_bool(j, "global", tt->is_global);
    ts__json_kv_u64(j, "base", tt->base);
    ts__json_kv_i64(j, "birth", tt->birth);
    ts__json_kv_i64(j, "death", tt->death);
    ts__json_key(j, "periods");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < tt->n_periods; i++) {
        const ts__mem_period *p = &g->periods[tt->first_period + i];
        ts__json_obj_begin(j);
        ts__json_kv_i64(j, "start", p->start);
        ts__json_kv_i64(j, "end", p->end);
        if (p->est_ns >= 0) ts__json_kv_i64(j, "est_ns", p->est_ns);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
    ts__json_obj_end(j);
}

static void json_kernel(ts_json *j, const ts_memgraph *g, uint32_t k)
{
    const ts__mem_kernel *kn = &g->kernels[k];
    ts__json_obj_begin(j);
    ts__json_kv_u64(j, "id", k);
    ts__json_kv_str(j, "op", ts__mem_name(g, kn->op_id));
    ts__json_kv_str(j, "call", ts__mem_name(g, kn->call_id));
    ts__json_kv_str(j, "graph", kn->in_backward ? "backward" : "forward");
    ts__json_kv_u64(j, "line", kn->line);
    if (kn->time_ns >= 0) ts__json_kv_i64(j, "time_ns", kn->time_ns);
    if (g->have_times) ts__json_kv_i64(j, "start_ns", llround(g->start_us[k] * 1000.0));
    ts__json_kv_i64(j, "alive_bytes", g->alive[k]);
    for (int side = 0; side < 2; side++) {
        ts__json_key(j, side ? "outputs" : "inputs");
        ts__json_arr_begin(j);
        uint32_t a = side ? kn->n_in : 0, e = side ? (uint32_t)kn->n_in + kn->n_out : kn->n_in;
        for (uint32_t i = a; i < e; i++) ts__json_u64(j, g->refs[kn->first_ref + i].tensor);
        ts__json_arr_end(j);
    }
    ts__json_obj_end(j);
}

static void write_json(ts_buf *b, const ts_memgraph *g, const ts_mem_summary *s, double gbps)
{
    ts_json j;
    ts__json_init(&j, b);
    ts__json_obj_begin(&j);
    ts__json_kv_str(&j, "rules", g->opt.g10_compat ? "g10" : "exact");
    ts__json_kv_str(&j, "times", g->have_times ? g->time_source : "none");
    ts__json_key(&j, "summary");
    ts__json_obj_begin(&j);
    ts__json_kv_u64(&j, "kernels", s->n_kernels);
    ts__json_kv_u64(&j, "tensors", s->n_tensors);
    ts__json_kv_i64(&j, "global_bytes", s->global_bytes);
    ts__json_kv_i64(&j, "peak_bytes", s->peak_bytes);
    ts__json_kv_i64(&j, "peak_kernel", s->peak_kernel);
    ts__json_kv_i64(&j, "iteration_ns", s->iteration_ns);
    ts__json_kv_i64(&j, "peak_at_ns", s->peak_at_ns);
    uint32_t n_cand;
    int64_t freed = ts_memgraph_offload(g, gbps, &n_cand);
    ts__json_kv_double(&j, "offload_gbps", gbps, 1);
    ts__json_kv_u64(&j, "offload_candidates", n_cand);
    ts__json_kv_i64(&j, "offload_freed_at_peak_bytes", freed);
    ts__json_obj_end(&j);
    ts__json_key(&j, "alive_at_peak");
    ts__json_arr_begin(&j);
    uint32_t *rows = ts__malloc((size_t)(g->n_tensors + 1) * sizeof *rows);
    uint32_t n = rows ? ts__mem_alive_at(g, s->peak_kernel, rows, g->n_tensors) : 0;
    for (uint32_t i = 0; i < n; i++) ts__json_u64(&j, rows[i]);
    ts__free(rows, (size_t)(g->n_tensors + 1) * sizeof *rows);
    ts__json_arr_end(&j);
    ts__json_key(&j, "kernels");
    ts__json_arr_begin(&j);
    for (uint32_t k = 0; k < g->n_kernels; k++) json_kernel(&j, g, k);
    ts__json_arr_end(&j);
    ts__json_key(&j, "tensors");
    ts__json_arr_begin(&j);
    for (uint32_t t = 0; t < g->n_tensors; t++) json_tensor(&j, g, t);
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    ts__buf_puts(b, "\n");
}

/* x coordinate of kernel k's start: ms when times are known, else index. */
static double x_at(const ts_memgraph *g, uint32_t k)
{
    return g->have_times ? g->start_us[k] / 1000.0 : (double)k;
}

static void write_memory_svg(ts_buf *b, const ts_memgraph *g)
{
    uint32_t n = g->n_kernels;
    double *x = ts__malloc(2 * (size_t)n * sizeof *x), *y = ts__malloc(2 * (size_t)n * sizeof *y);
    if (!x || !y) { b->oom = true; goto done; }
    for (uint32_t k = 0; k < n; k++) { /* a step per kernel */
        x[2 * k] = x_at(g, k);
        x[2 * k + 1] = x_at(g, k + 1);
        y[2 * k] = y[2 * k + 1] = (double)g->alive[k] / (1 << 30);
    }
    char title[160];
    snprintf(title, sizeof title, "Memory over one iteration (peak %.2f GiB at kernel %d)",
             (double)g->summary.peak_bytes / (1 << 30), g->summary.peak_kernel);
    ts_svg_axes ax = {title, g->have_times ? "time (ms)" : "kernel", "memory alive (GiB)", x_at(g, n)};
    ts__svg_line_chart(b, &ax, x, y, 2 * (size_t)n,
                       g->summary.peak_kernel >= 0 ? x_at(g, (uint32_t)g->summary.peak_kernel) : -1);
done:
    ts__free(x, 2 * (size_t)n * sizeof *x);
    ts__free(y, 2 * (size_t)n * sizeof *y);
}


/* Idle periods of the largest intermediate tensors (at most 60 rows). */
static void write_periods_svg(ts_buf *b, const ts_memgraph *g)
{
    enum { MAX_ROWS = 60 };
    uint32_t *rows = ts__malloc(((size_t)g->n_tensors + 1) * sizeof *rows), n = 0;
    if (!rows) { b->oom = true; return; }
    for (uint32_t t = 0; t < g->n_tensors; t++)
        if (!g->tensors[t].is_global && g->tensors[t].n_periods) rows[n++] = t;
    ts__mem_sort_by_bytes(g, rows, n);
    if (n > MAX_ROWS) n = MAX_ROWS;
    size_t n_bars = 0;
    for (uint32_t r = 0; r < n; r++) n_bars += g->tensors[rows[r]].n_periods;
    ts_svg_bar *bars = ts__malloc((n_bars + 1) * sizeof *bars);
    char (*labels)[64] = ts__malloc(((size_t)n + 1) * sizeof *labels);
    const char **lp = ts__malloc(((size_t)n + 1) * sizeof *lp);
    if (bars && labels && lp) {
        size_t i = 0;
        for (uint32_t r = 0; r < n; r++) {
            const ts__mem_tensor *tt = &g->tensors[rows[r]];
            snprintf(labels[r], sizeof labels[r], "%.40s %.0f MB", ts__mem_name(g, tt->name_id),
                     (double)tt->bytes / 1e6);
            lp[r] = labels[r];
            for (uint32_t p = 0; p < tt->n_periods; p++) {
                const ts__mem_period *pp = &g->periods[tt->first_period + p];
                bars[i++] = (ts_svg_bar){r, x_at(g, (uint32_t)pp->start), x_at(g, (uint32_t)pp->end)};
            }
        }
        ts_svg_axes ax = {"Inactive periods of the largest intermediate tensors",
                          g->have_times ? "time (ms)" : "kernel", "tensor", x_at(g, g->n_kernels)};
        ts__svg_interval_chart(b, &ax, lp, n, bars, i);
    } else b->oom = true;
    ts__free(bars, (n_bars + 1) * sizeof *bars);
    ts__free(labels, ((size_t)n + 1) * sizeof *labels);
    ts__free(lp, ((size_t)n + 1) * sizeof *lp);
    ts__free(rows, ((size_t)g->n_tensors + 1) * sizeof *rows);
}

enum { N_OUT = 6 };
static const char *const OUT_NAMES[N_OUT] = {"kernels.config", "tensors.config", "liveness_analysis.config",
                                             "memory.json", "memory.svg", "periods.svg"};

int ts_memgraph_write(const ts_memgraph *g, const char *dir, double gbps, int plots, ts_error *err)
{
    ts__error_clear(err);
    if (!g->analyzed) return ts__error(err, TS_EINVAL, "ts_memgraph_write: call ts_memgraph_analyze first");
    bool made;   /* mkdir -p, as G10 makes output_folder/statistics */
    if (ts__out_dir(dir, true, &made, err)) return TS_EIO;
    int n_files = plots ? N_OUT : N_OUT - 2, rc = TS_OK, written = 0;
    for (int i = 0; i < n_files && !rc; i++, written++) {
        ts_buf b;
        ts__buf_init(&b);
        switch (i) {
        case 0: write_kernels(&b, g); break;
        case 1: write_tensors(&b, g); break;
        case 2: write_liveness(&b, g); break;
        case 3: write_json(&b, g, &g->summary, gbps); break;
        case 4: write_memory_svg(&b, g); break;
        default: write_periods_svg(&b, g); break;
        }
        rc = b.oom ? ts__error(err, TS_ENOMEM, "out of memory") : ts__write_tmp(dir, OUT_NAMES[i], &b, err);
        ts__buf_free(&b);
    }
    rc = ts__commit_tmp(dir, OUT_NAMES, written, rc, err);
    if (rc && made) rmdir(dir);
    for (int i = n_files; i < N_OUT && !rc; i++) {   /* no stale plot of an earlier --plot run beside the new files */
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, OUT_NAMES[i]);
        if (remove(path) != 0 && errno != ENOENT) rc = ts__error(err, TS_EIO, "%s: %s", path, strerror(errno));
    }
    return rc;
}

/* x ascending in ms from the first timed point, y in MiB: a step per event.
 * Points before the first timed event (t -1: tensors alive when recording
 * began) sit at 0. */
static void write_curve_svg(ts_buf *b, const ts_mem_curve *c, const char *title)
{
    int64_t t0 = INT64_MAX, peak = INT64_MIN, peak_ns = -1;
    for (size_t i = 0; i < c->n; i++) {
        if (c->t_ns[i] >= 0 && c->t_ns[i] < t0) t0 = c->t_ns[i];
        if (c->bytes[i] > peak) { peak = c->bytes[i]; peak_ns = c->t_ns[i]; }
    }
    if (t0 == INT64_MAX) t0 = 0;
    double *x = ts__malloc(2 * (c->n + 1) * sizeof *x), *y = ts__malloc(2 * (c->n + 1) * sizeof *y);
    size_t n = 0;
    if (x && y) {
        for (size_t i = 0; i < c->n; i++) {
            double xi = c->t_ns[i] >= 0 ? (double)(c->t_ns[i] - t0) / 1e6 : 0.0;
            if (n) { x[n] = xi; y[n] = y[n - 1]; n++; }   /* hold the level until this event */
            x[n] = xi;
            y[n++] = (double)c->bytes[i] / (1024.0 * 1024.0);
        }
        char full[256];
        snprintf(full, sizeof full, "%s (peak %.1f MiB)", title, (double)peak / (1024.0 * 1024.0));
        ts_svg_axes ax = {full, "time (ms)", "memory alive (MiB)", n ? x[n - 1] : 0};
        ts__svg_line_chart(b, &ax, x, y, n, peak_ns >= 0 ? (double)(peak_ns - t0) / 1e6 : 0.0);
    } else b->oom = true;
    ts__free(x, 2 * (c->n + 1) * sizeof *x);
    ts__free(y, 2 * (c->n + 1) * sizeof *y);
}

/* The curves of an earlier run in DIR that this one did not write
 * (memory.svg, memory_K.svg for K below the CLI's 256), and every PNG copy
 * (re-rendered after this with --png): none stays beside the new files. */
static void remove_stale_curves(const char *dir, const char *const *written, uint32_t n_written)
{
    for (uint32_t k = 0; k <= 256; k++) {
        char name[32], path[4096];
        if (k == 256) snprintf(name, sizeof name, "memory");
        else snprintf(name, sizeof name, "memory_%u", k);
        bool mine = false;
        size_t len = strlen(name);
        for (uint32_t i = 1; i < n_written; i++) mine |= !strncmp(written[i], name, len) && !strcmp(written[i] + len, ".svg");
        snprintf(path, sizeof path, "%s/%s.png", dir, name);
        remove(path);
        snprintf(path, sizeof path, "%s/%s.svg", dir, name);
        if (!mine) remove(path);
    }
}

int ts_mem_curves_write(const char *dir, const char *summary_json, const ts_mem_curve *curves,
                        const char *const *titles, uint32_t n, int plots, ts_error *err)
{
    ts__error_clear(err);
    bool made;
    if (ts__out_dir(dir, false, &made, err)) return TS_EIO;
    uint32_t n_files = 1 + (plots ? n : 0);
    char (*names)[32] = ts__calloc(n_files, sizeof *names);
    const char **np = ts__calloc(n_files, sizeof *np);
    int rc = names && np ? TS_OK : ts__error(err, TS_ENOMEM, "out of memory");
    uint32_t written = 0;
    for (uint32_t i = 0; i < n_files && !rc; i++, written++) {
        ts_buf b;
        ts__buf_init(&b);
        if (i == 0) {
            snprintf(names[i], sizeof names[i], "memory.json");
            ts__buf_add(&b, summary_json, strlen(summary_json));
        } else {
            if (n == 1) snprintf(names[i], sizeof names[i], "memory.svg");
            else snprintf(names[i], sizeof names[i], "memory_%u.svg", i - 1);
            write_curve_svg(&b, &curves[i - 1], titles[i - 1]);
        }
        np[i] = names[i];
        rc = b.oom ? ts__error(err, TS_ENOMEM, "out of memory") : ts__write_tmp(dir, names[i], &b, err);
        ts__buf_free(&b);
    }
    if (np) rc = ts__commit_tmp(dir, np, (int)written, rc, err);
    if (rc && made) rmdir(dir);
    if (!rc) remove_stale_curves(dir, np, written);
    ts__free(names, n_files * sizeof *names);
    ts__free(np, n_files * sizeof *np);
    return rc;
}
