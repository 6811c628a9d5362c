/* memory.c - `trainscope memory`'s output (report_memory.h): a dump pair's
 * summary and memory-limit fit as table lines or JSON, allocator snapshots,
 * and what --trace finds in measured memory, kept as JSON lines for
 * memory.json beside the charts of its curves.
 *
 * Not for: any figure (memory/ computes them; the offload answer comes in
 * ts_report_mem_args) or the G10 files (memory_files.c).
 */
#include <stdlib.h>
#include <string.h>

#include "report/report_int.h"
#include "trainscope/report_memory.h"

static const double MiB = 1024.0 * 1024.0;

static int status_of(FILE *out) { return ferror(out) ? TS_EIO : TS_OK; }

int ts_report_memgraph_table(FILE *out, const ts_memgraph *g, const ts_mem_summary *s, const ts_report_mem_args *a)
{
    fprintf(out, "rules: %s, times: %s%s", a->g10_compat ? "G10-compatible" : "exact", ts_memgraph_time_source(g),
            a->batch ? "" : "\n");
    if (a->batch) fprintf(out, ", batch %u\n", a->batch);
    fprintf(out, "kernels %u, tensors %u, global (weights, buffers, inputs) %.1f MiB\n", s->n_kernels,
            s->n_tensors, (double)s->global_bytes / MiB);
    ts_mem_kernel_info pk;
    ts_memgraph_kernel(g, s->peak_kernel, &pk);
    bool has_peak = s->peak_kernel >= 0;
    fprintf(out, "peak %.1f MiB while kernel %d runs (%s, %s line %u)", (double)s->peak_bytes / MiB,
            s->peak_kernel, has_peak ? pk.op : "-", has_peak && pk.in_backward ? "backward" : "forward",
            has_peak ? pk.line : 0);
    if (s->iteration_ns >= 0)
        fprintf(out, " at %.3f ms of a %.3f ms iteration", (double)s->peak_at_ns / 1e6, (double)s->iteration_ns / 1e6);
    fprintf(out, "\n\ntensors alive at the peak, largest first:\n%8s  %-28s %-26s %12s\n", "tensor", "name", "type", "MiB");
    uint32_t *rows = malloc(((size_t)s->n_tensors + 1) * sizeof *rows);
    uint32_t n = rows ? ts_memgraph_alive_at(g, s->peak_kernel, rows, s->n_tensors) : 0;
    for (uint32_t i = 0; i < n && i < a->top; i++) {
        ts_mem_tensor_info t;
        ts_memgraph_tensor(g, rows[i], &t);
        fprintf(out, "%8u  %-28.28s %-26.26s %12.2f%s\n", rows[i], t.name, t.type, (double)t.bytes / MiB,
                t.is_global ? "  global" : "");
    }
    if (n > a->top) fprintf(out, "  ... %u more\n", n - a->top);
    free(rows);
    fprintf(out, "\noffload at %.1f GB/s: %u idle periods long enough to move out and back; "
            "%.1f MiB freed at the peak (%.1f%%)\n", a->offload_gbps, a->offload_candidates,
            (double)a->offload_freed_bytes / MiB,
            s->peak_bytes ? 100.0 * (double)a->offload_freed_bytes / (double)s->peak_bytes : 0.0);
    return status_of(out);
}

int ts_report_mem_fit_table(FILE *out, const ts_mem_fit *f, double gbps)
{
    const double GiB = 1073741824.0;
    fprintf(out, "\nmemory limit %.3f GiB: the step %s (peak %.3f GiB)\n", (double)f->limit_bytes / GiB,
            f->fits ? "fits" : "does not fit", (double)f->peak_bytes / GiB);
    if (f->fits) return status_of(out);
    fprintf(out, "%-18s %5s %10s %8s %12s\n", "to fit", "fits", "peak GiB", "choices", "added ms");
    for (int i = 0; i < TS_MEM_FIT_COUNT; i++) {
        const ts_mem_fit_option *o = &f->option[i];
        fprintf(out, "%-18s %5s %10.3f %8u %12.3f\n", ts_mem_fit_name(i), o->fits ? "yes" : "no",
                (double)o->peak_bytes / GiB, o->n_choices, (double)o->cost_ns / 1e6);
    }
    if (f->cheapest >= 0)
        fprintf(out, "cheapest: %s (+%.3f ms; offload moves %.1f MiB each way over the %.1f GB/s link, hidden "
                "behind compute)\n", ts_mem_fit_name(f->cheapest), (double)f->option[f->cheapest].cost_ns / 1e6,
                (double)f->option[f->cheapest].bytes_moved / 2 / 1048576.0, gbps);
    else fprintf(out, "cheapest: none of these fits\n");
    return status_of(out);
}

int ts_report_memgraph_json(FILE *out, const ts_memgraph *g, const ts_mem_summary *s, const ts_report_mem_args *a,
                            const ts_mem_fit *f)
{
    if (f) {
        fprintf(out, "{\"memory_limit_bytes\":%lld,\"fits\":%s,\"cheapest\":\"%s\",\"options\":{",
                (long long)f->limit_bytes, f->fits ? "true" : "false", f->fits ? "as is" : ts_mem_fit_name(f->cheapest));
        for (int i = 0; i < TS_MEM_FIT_COUNT; i++)
            fprintf(out, "%s\"%s\":{\"fits\":%s,\"peak_bytes\":%lld,\"choices\":%u,\"added_ns\":%lld,\"bytes_moved\":%lld}",
                    i ? "," : "", ts_mem_fit_name(i), f->option[i].fits ? "true" : "false",
                    (long long)f->option[i].peak_bytes, f->option[i].n_choices, (long long)f->option[i].cost_ns,
                    (long long)f->option[i].bytes_moved);
        fprintf(out, "},\"step\":");
    }
    fprintf(out, "{\"rules\":\"%s\",\"times\":\"%s\",\"kernels\":%u,\"tensors\":%u,\"global_bytes\":%lld,"
            "\"peak_bytes\":%lld,\"peak_kernel\":%d,\"iteration_ns\":%lld,\"peak_at_ns\":%lld,"
            "\"offload_gbps\":%.1f,\"offload_candidates\":%u,\"offload_freed_at_peak_bytes\":%lld}\n",
            a->g10_compat ? "g10" : "exact", ts_memgraph_time_source(g), s->n_kernels, s->n_tensors,
            (long long)s->global_bytes, (long long)s->peak_bytes, s->peak_kernel, (long long)s->iteration_ns,
            (long long)s->peak_at_ns, a->offload_gbps, a->offload_candidates, (long long)a->offload_freed_bytes);
    if (f) fprintf(out, "}\n");
    return status_of(out);
}

/* ---- CSV: tables through ts_report_csv (the one CSV writer, report.h) ---- */
typedef struct mem_csv { const ts_memgraph *g; const ts_mem_summary *s; const ts_mem_fit *fit; } mem_csv;

/* The tensors alive at the peak kernel. */
static void csv_tensors(ts_csv *c, const void *res)
{
    const mem_csv *m = res;
    TS__CSV_HEAD(c, "tensor", "name", "type", "bytes", "global");
    uint32_t *rows = malloc(((size_t)m->s->n_tensors + 1) * sizeof *rows);
    if (!rows) { c->out->oom = true; return; }
    uint32_t n = ts_memgraph_alive_at(m->g, m->s->peak_kernel, rows, m->s->n_tensors);
    for (uint32_t i = 0; i < n; i++) {
        ts_mem_tensor_info t;
        ts_memgraph_tensor(m->g, rows[i], &t);
        ts_csv_i64(c, rows[i]);
        ts_csv_str(c, t.name);
        ts_csv_str(c, t.type);
        ts_csv_i64(c, t.bytes);
        ts_csv_i64(c, t.is_global);
        ts_csv_end_row(c);
    }
    free(rows);
}

static void csv_fit(ts_csv *c, const void *res)
{
    const ts_mem_fit *f = ((const mem_csv *)res)->fit;
    TS__CSV_HEAD(c, "option", "fits", "peak_bytes", "choices", "added_ns", "bytes_moved");
    for (int i = 0; i < TS_MEM_FIT_COUNT; i++) {
        const ts_mem_fit_option *o = &f->option[i];
        ts_csv_str(c, ts_mem_fit_name(i));
        ts_csv_i64(c, o->fits);
        ts_csv_i64(c, o->peak_bytes);
        ts_csv_i64(c, o->n_choices);
        ts_csv_i64(c, o->cost_ns);
        ts_csv_i64(c, o->bytes_moved);
        ts_csv_end_row(c);
    }
}

static const ts_csv_table memgraph_tables[] = {{"tensors", csv_tensors}, {"fit", csv_fit}};

int ts_report_memgraph_csv(FILE *out, const ts_memgraph *g, const ts_mem_summary *s, const ts_mem_fit *fit,
                           const char *table, ts_error *err)
{
    if (table && !strcmp(table, "fit") && !fit)
        return ts__error(err, TS_EINVAL, "memory: --table fit needs --memory-limit GB");
    mem_csv m = {g, s, fit};
    return ts_report_csv("memory", memgraph_tables, 2, &m, table, NULL, out, err);
}

/* s as a JSON string (quoted, escaped); valid until the next call. */
static const char *json_quoted(const char *s)
{
    static ts_buf b;
    b.len = 0;
    ts__buf_json_str(&b, s, strlen(s));
    return b.oom ? "\"\"" : ts__buf_cstr(&b);
}

static void snapshot_device_json(FILE *out, const char *path, const ts_mem_snap_device *d, const ts_mem_frame_group *g,
                                 uint32_t ng, uint32_t top, bool first)
{
    fprintf(out, "%s{\"file\":%s,\"device\":%d,\"segments\":%u,\"blocks\":%u,\"reserved_bytes\":%lld,"
            "\"allocated_bytes\":%lld,\"requested_bytes\":%lld,\"fragmentation_bytes\":%lld,"
            "\"largest_free_bytes\":%lld,\"trace_entries\":%llu,\"allocs\":%llu,\"frees\":%llu,"
            "\"first_us\":%lld,\"last_us\":%lld,\"start_bytes\":%lld,\"peak_bytes\":%lld,\"peak_us\":%lld,"
            "\"end_bytes\":%lld,\"ooms\":%llu,\"alive_at_peak\":%u,\"alive_by_frame\":[",
            first ? "" : "\n", json_quoted(path), d->device, d->n_segments, d->n_blocks,
            (long long)d->reserved_bytes, (long long)d->allocated_bytes, (long long)d->requested_bytes,
            (long long)d->fragmentation_bytes, (long long)d->largest_free_bytes, (unsigned long long)d->n_trace,
            (unsigned long long)d->n_alloc, (unsigned long long)d->n_free, (long long)d->first_us,
            (long long)d->last_us, (long long)d->start_bytes, (long long)d->peak_bytes, (long long)d->peak_us,
            (long long)d->end_bytes, (unsigned long long)d->n_oom, d->n_alive);
    for (uint32_t k = 0; k < ng && k < top; k++)
        fprintf(out, "%s{\"frame\":%s,\"bytes\":%lld,\"blocks\":%u}", k ? "," : "", json_quoted(g[k].frame),
                (long long)g[k].bytes, g[k].blocks);
    fprintf(out, "]}");
}

static void snapshot_device_table(FILE *out, const char *path, const ts_mem_snap_device *d,
                                  const ts_mem_frame_group *g, uint32_t ng, uint32_t top)
{
    fprintf(out, "%s: device %d: %u segments, %u blocks; reserved %.1f MiB, allocated %.1f MiB, fragmentation "
            "%.1f MiB (reserved - allocated); largest free block %.1f MiB\n", path, d->device, d->n_segments,
            d->n_blocks, d->reserved_bytes / MiB, d->allocated_bytes / MiB, d->fragmentation_bytes / MiB,
            d->largest_free_bytes / MiB);
    fprintf(out, "  trace: %llu entries (%llu allocs, %llu frees) over %.3f ms; %.1f MiB allocated at its start, "
            "peak %.1f MiB at +%.3f ms, %.1f MiB at its end\n", (unsigned long long)d->n_trace,
            (unsigned long long)d->n_alloc, (unsigned long long)d->n_free,
            d->first_us >= 0 ? (double)(d->last_us - d->first_us) / 1e3 : 0.0, d->start_bytes / MiB,
            d->peak_bytes / MiB, d->peak_us >= 0 ? (double)(d->peak_us - d->first_us) / 1e3 : 0.0,
            d->end_bytes / MiB);
    if (d->n_oom) fprintf(out, "  %llu out-of-memory entries (action \"oom\": requests the allocator failed)\n",
                          (unsigned long long)d->n_oom);
    fprintf(out, "  alive at the peak: %u blocks; by allocating frame (the first outside torch), largest first:\n"
            "  %10s %7s  %s\n", d->n_alive, "MiB", "blocks", "frame");
    for (uint32_t k = 0; k < ng && k < top; k++)
        fprintf(out, "  %10.1f %7u  %s\n", g[k].bytes / MiB, g[k].blocks, g[k].frame);
    if (ng > top) fprintf(out, "  ... %u more frames\n", ng - top);
}

int ts_report_mem_snapshot(FILE *out, const char *path, const ts_mem_snapshot *s, uint32_t top, bool json)
{
    for (uint32_t i = 0; i < s->n_devices; i++) {
        const ts_mem_snap_device *d = &s->devices[i];
        ts_mem_frame_group *g = malloc(((size_t)d->n_alive + 1) * sizeof *g);
        uint32_t ng = g ? ts_mem_snapshot_frames(s, d, g) : 0;
        if (json) snapshot_device_json(out, path, d, g, ng, top, i == 0);
        else snapshot_device_table(out, path, d, g, ng, top);
        free(g);
    }
    if (json && s->n_devices) fprintf(out, "\n");
    return status_of(out);
}

/* ---- memory --trace ---- */

enum { TITLE_MAX = 128 };

enum { CSV_TIMELINES = 0, CSV_PEAKS, CSV_FRAMES, N_CSV };
static const char *const CSV_TABLES[N_CSV] = {"timelines", "peaks", "frames"};

struct ts_report_mem_trace {
    FILE         *out;
    bool          json;
    bool          csv;
    const char   *csv_table;     /* --table NAME, NULL = the first the inputs fill */
    ts_buf        rows_buf[N_CSV];   /* each table's records, in memory until the end */
    ts_csv        rows[N_CSV];
    uint32_t      n_rows[N_CSV];
    ts_buf        lines;         /* one JSON object per line: memory.json's items */
    ts_mem_curve *curves;        /* taken over, freed at destroy */
    char        (*titles)[TITLE_MAX];
    uint32_t      n_curves, cap_curves;
};

int ts_report_mem_trace_create(FILE *out, bool json, ts_report_mem_trace **rep)
{
    *rep = calloc(1, sizeof **rep);
    if (!*rep) return TS_ENOMEM;
    (*rep)->out = out;
    (*rep)->json = json;
    ts__buf_init(&(*rep)->lines);
    return TS_OK;
}

int ts_report_mem_trace_create_csv(FILE *out, const char *table, ts_report_mem_trace **rep, ts_error *err)
{
    int k = -1;
    for (int i = 0; table && i < N_CSV; i++)
        if (!strcmp(CSV_TABLES[i], table)) k = i;
    if (table && k < 0)
        return ts__error(err, TS_EINVAL, "memory --trace: --table wants one of timelines, peaks, frames, got '%s'",
                         table);
    int rc = ts_report_mem_trace_create(out, false, rep);
    if (rc) return rc;
    (*rep)->csv = true;
    (*rep)->csv_table = table;
    for (int i = 0; i < N_CSV; i++) {
        ts__buf_init(&(*rep)->rows_buf[i]);
        ts__csv_init(&(*rep)->rows[i], &(*rep)->rows_buf[i]);
    }
    return TS_OK;
}

void ts_report_mem_trace_destroy(ts_report_mem_trace *rep)
{
    if (!rep) return;
    for (int i = 0; i < N_CSV; i++) ts__buf_free(&rep->rows_buf[i]);
    for (uint32_t i = 0; i < rep->n_curves; i++) ts_mem_curve_free(&rep->curves[i]);
    free(rep->curves);
    free(rep->titles);
    ts__buf_free(&rep->lines);
    free(rep);
}

int ts_report_mem_trace_timeline(ts_report_mem_trace *rep, const char *path, const ts_mem_timeline *t)
{
    ts_buf *b = &rep->lines;
    ts__buf_printf(b, "{\"file\":%s,\"events\":%llu,\"peak_bytes\":%lld,\"peak_ns\":%lld,\"final_bytes\":%lld,"
                   "\"at_peak\":{", json_quoted(path), (unsigned long long)t->n_events, (long long)t->peak_bytes,
                   (long long)t->peak_ns, (long long)t->final_bytes);
    for (int c = 0; c < TS_MEM_N_CATEGORIES; c++)
        ts__buf_printf(b, "%s\"%s\":%lld", c ? "," : "", ts_mem_category_name(c), (long long)t->at_peak[c]);
    ts__buf_puts(b, "}}\n");
    if (rep->csv) {
        ts_csv *c = &rep->rows[CSV_TIMELINES];
        for (int k = 0; k < TS_MEM_N_CATEGORIES; k++, rep->n_rows[CSV_TIMELINES]++) {
            ts_csv_str(c, path);
            ts_csv_i64(c, (int64_t)t->n_events);
            ts_csv_i64(c, t->peak_bytes);
            ts_csv_i64(c, t->peak_ns);
            ts_csv_i64(c, t->final_bytes);
            ts_csv_str(c, ts_mem_category_name(k));
            ts_csv_i64(c, t->at_peak[k]);
            ts_csv_i64(c, t->max_bytes[k]);
            ts_csv_end_row(c);
        }
    }
    if (rep->json || rep->csv) return b->oom ? TS_ENOMEM : TS_OK;
    FILE *out = rep->out;
    fprintf(out, "%s: %llu events over %.3f ms; peak %.1f MiB at +%.3f ms; %.1f MiB at the end\n"
            "%-18s %12s %12s\n", path, (unsigned long long)t->n_events,
            (double)(t->last_ns - t->first_ns) / 1e6, (double)t->peak_bytes / MiB,
            t->peak_ns >= 0 ? (double)(t->peak_ns - t->first_ns) / 1e6 : 0.0,
            (double)t->final_bytes / MiB, "category", "at peak MiB", "max MiB");
    for (int c = 0; c < TS_MEM_N_CATEGORIES; c++)
        fprintf(out, "%-18s %12.1f %12.1f\n", ts_mem_category_name(c), (double)t->at_peak[c] / MiB,
                (double)t->max_bytes[c] / MiB);
    return b->oom ? TS_ENOMEM : status_of(out);
}

int ts_report_mem_trace_peaks_head(ts_report_mem_trace *rep)
{
    if (rep->json || rep->csv) return TS_OK;
    fprintf(rep->out, "%5s %-8s %8s %12s %12s  %s\n", "rank", "device", "events", "peak MiB", "at ms",
            "ops around the peak (innermost first)");
    return status_of(rep->out);
}

static const char *device_kind(int32_t device_type)
{
    return device_type == 0 ? "cpu" : device_type == 1 ? "cuda" : "dev";
}

int ts_report_mem_trace_peak(ts_report_mem_trace *rep, const ts_mem_trace_peak *p)
{
    ts_buf *b = &rep->lines;
    ts__buf_printf(b, "{\"rank\":%u,\"device_type\":%d,\"device_id\":%d,\"events\":%llu,\"peak_bytes\":%lld,"
                   "\"peak_ns\":%lld,\"ops\":[", p->rank, p->device_type, p->device_id,
                   (unsigned long long)p->n_events, (long long)p->peak_bytes, (long long)p->peak_ns);
    for (uint32_t k = 0; k < p->n_ops; k++) ts__buf_printf(b, "%s%s", k ? "," : "", json_quoted(p->ops[k]));
    ts__buf_puts(b, "]}\n");
    if (rep->csv) {
        ts_csv *c = &rep->rows[CSV_PEAKS];
        ts_csv_i64(c, p->rank);
        ts_csv_i64(c, p->device_type);
        ts_csv_i64(c, p->device_id);
        ts_csv_i64(c, (int64_t)p->n_events);
        ts_csv_i64(c, p->peak_bytes);
        ts_csv_i64(c, p->peak_ns);
        ts_csv_i64(c, p->first_ns);
        ts_csv_i64(c, p->last_ns);
        char ops[4 * 100] = "";
        for (uint32_t k = 0; k < p->n_ops && k < 4; k++) {
            size_t used = strlen(ops);
            snprintf(ops + used, sizeof ops - used, "%s%s", k ? " < " : "", p->ops[k]);
        }
        ts_csv_str(c, ops);
        ts_csv_end_row(c);
        rep->n_rows[CSV_PEAKS]++;
    }
    if (rep->json || rep->csv) return b->oom ? TS_ENOMEM : TS_OK;
    FILE *out = rep->out;
    char dev[24];
    snprintf(dev, sizeof dev, "%s:%d", device_kind(p->device_type), p->device_id);
    fprintf(out, "%5u %-8s %8llu %12.1f %12.3f  ", p->rank, dev, (unsigned long long)p->n_events,
            (double)p->peak_bytes / MiB, (double)(p->peak_ns - p->first_ns) / 1e6);
    for (uint32_t k = 0; k < p->n_ops; k++) fprintf(out, "%s%s", k ? " < " : "", p->ops[k]);
    fprintf(out, "%s\n", p->n_ops ? "" : "-");
    return b->oom ? TS_ENOMEM : status_of(out);
}

int ts_report_mem_trace_warnings(ts_report_mem_trace *rep, FILE *warn, const ts_job *t)
{
    if (!rep->json) {   /* beside a table or CSV: on warn */
        ts_report_warnings(warn, t, NULL, 0, ts_report_warn_all(false));
        return TS_OK;
    }
    ts_json j;
    ts__json_init(&j, &rep->lines);
    ts__json_obj_begin(&j);
    ts__report_warnings_json(&j, t);
    ts__json_obj_end(&j);
    ts__buf_puts(&rep->lines, "\n");
    return rep->lines.oom ? TS_ENOMEM : TS_OK;
}

static int keep_curve(ts_report_mem_trace *rep, ts_mem_curve *c, const char *title)
{
    if (rep->n_curves == rep->cap_curves) {
        uint32_t cap = rep->cap_curves ? 2 * rep->cap_curves : 8;
        ts_mem_curve *cv = realloc(rep->curves, cap * sizeof *cv);
        if (cv) rep->curves = cv;
        char (*tv)[TITLE_MAX] = cv ? realloc(rep->titles, cap * sizeof *tv) : NULL;
        if (tv) rep->titles = tv;
        if (!cv || !tv) return TS_ENOMEM;
        rep->cap_curves = cap;
    }
    rep->curves[rep->n_curves] = *c;
    *c = (ts_mem_curve){0};
    snprintf(rep->titles[rep->n_curves++], TITLE_MAX, "%s", title);
    return TS_OK;
}

int ts_report_mem_trace_timeline_curve(ts_report_mem_trace *rep, const char *path, ts_mem_curve *c)
{
    const char *base = strrchr(path, '/');
    char title[TITLE_MAX];
    snprintf(title, sizeof title, "Memory alive: %.90s", base ? base + 1 : path);
    return keep_curve(rep, c, title);
}

int ts_report_mem_trace_peak_curve(ts_report_mem_trace *rep, const ts_mem_trace_peak *p, ts_mem_curve *c)
{
    char title[TITLE_MAX];
    snprintf(title, sizeof title, "Total Allocated: rank %u, %s:%d", p->rank, device_kind(p->device_type),
             p->device_id);
    return keep_curve(rep, c, title);
}

uint32_t ts_report_mem_trace_n_curves(const ts_report_mem_trace *rep) { return rep->n_curves; }

void ts_report_mem_trace_chart_name(const ts_report_mem_trace *rep, uint32_t i, char *out, size_t size)
{
    if (rep->n_curves == 1) snprintf(out, size, "memory");
    else snprintf(out, size, "memory_%u", i);
}

int ts_report_mem_trace_snapshot(ts_report_mem_trace *rep, const char *path, const ts_mem_snapshot *s)
{
    if (!rep->csv) return TS_OK;
    ts_csv *c = &rep->rows[CSV_FRAMES];
    for (uint32_t i = 0; i < s->n_devices; i++) {
        const ts_mem_snap_device *d = &s->devices[i];
        ts_mem_frame_group *g = malloc(((size_t)d->n_alive + 1) * sizeof *g);
        if (!g) return TS_ENOMEM;
        uint32_t ng = ts_mem_snapshot_frames(s, d, g);
        for (uint32_t k = 0; k < ng; k++, rep->n_rows[CSV_FRAMES]++) {
            ts_csv_str(c, path);
            ts_csv_i64(c, d->device);
            ts_csv_i64(c, d->reserved_bytes);
            ts_csv_i64(c, d->allocated_bytes);
            ts_csv_i64(c, d->peak_bytes);
            ts_csv_str(c, g[k].frame);
            ts_csv_i64(c, g[k].bytes);
            ts_csv_i64(c, g[k].blocks);
            ts_csv_end_row(c);
        }
        free(g);
    }
    return TS_OK;
}

/* A --trace table: its header, then the records kept. */
#define MEM_TRACE_TABLE(fn, k, ...) static void fn(ts_csv *c, const void *res) { \
    const ts_buf *rows = &((const ts_report_mem_trace *)res)->rows_buf[k]; \
    TS__CSV_HEAD(c, __VA_ARGS__); \
    if (rows->len) ts__buf_add(c->out, rows->s, rows->len); \
    if (rows->oom) c->out->oom = true; \
}
MEM_TRACE_TABLE(csv_timelines, CSV_TIMELINES, "file", "events", "peak_bytes", "peak_ns", "final_bytes", "category",
                "at_peak_bytes", "max_bytes")
MEM_TRACE_TABLE(csv_peaks, CSV_PEAKS, "rank", "device_type", "device_id", "events", "peak_bytes", "peak_ns",
                "first_ns", "last_ns", "ops")
MEM_TRACE_TABLE(csv_frames, CSV_FRAMES, "file", "device", "reserved_bytes", "allocated_bytes", "peak_bytes", "frame",
                "bytes", "blocks")
static const ts_csv_table mem_trace_tables[N_CSV] = {
    {"timelines", csv_timelines}, {"peaks", csv_peaks}, {"frames", csv_frames}};

/* The table asked for, else the first one the inputs filled (docs/export.md). */
static int csv_end(ts_report_mem_trace *rep, ts_error *err)
{
    const char *table = rep->csv_table;
    for (int i = N_CSV - 1; !rep->csv_table && i >= 0; i--)
        if (rep->n_rows[i]) table = CSV_TABLES[i];
    return ts_report_csv("memory --trace", mem_trace_tables, N_CSV, rep, table, NULL, rep->out, err);
}

int ts_report_mem_trace_end(ts_report_mem_trace *rep, ts_error *err)
{
    if (rep->csv) return csv_end(rep, err);
    if (!rep->json || !rep->lines.len) return TS_OK;
    if (rep->lines.oom) return TS_ENOMEM;
    return fputs(ts__buf_cstr(&rep->lines), rep->out) < 0 ? TS_EIO : TS_OK;
}

int ts_report_mem_trace_write_dir(const ts_report_mem_trace *rep, const char *dir, bool plots, ts_error *err)
{
    ts_buf arr;
    ts__buf_init(&arr);
    ts__buf_puts(&arr, "[");
    const char *s = rep->lines.len ? ts__buf_cstr((ts_buf *)&rep->lines) : "";
    for (const char *line = s; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (arr.len > 1) ts__buf_puts(&arr, ",\n ");
        ts__buf_add(&arr, line, len);
        line += len + (nl ? 1 : 0);
    }
    ts__buf_puts(&arr, "]\n");
    const char **titles = calloc((size_t)rep->n_curves + 1, sizeof *titles);
    for (uint32_t i = 0; titles && i < rep->n_curves; i++) titles[i] = rep->titles[i];
    int rc = arr.oom || rep->lines.oom || !titles
           ? ts__error(err, TS_ENOMEM, "out of memory")
           : ts_mem_curves_write(dir, ts__buf_cstr(&arr), rep->curves, titles, rep->n_curves, plots, err);
    free(titles);
    ts__buf_free(&arr);
    return rc;
}
