/* cmd_memory.c - `trainscope memory FORWARD.py BACKWARD.py [...]`: tensor
 * liveness, inactive periods, the memory curve and its peak, and offload
 * candidates of one training iteration from a torch.fx / AOTAutograd dump
 * pair; `trainscope memory --trace PATH...` does the same curve from memory
 * events a profiler recorded.
 *
 * Thin: parse options, load, analyze, print a summary, write DIR if asked.
 * Exit: 0 ok, 2 bad input or usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "report/report_int.h"
#include "memory/memgraph.h"
#include "trainscope/ingest.h"
#include "trainscope/memory.h"

/* PCIe 4.0 x16: 16 GT/s x 16 lanes x 128/130 = 31.5 GB/s each way nominal;
 * rounded to 32 like most papers (G10 included) quote it. */
#define DEFAULT_OFFLOAD_GBPS 32.0

typedef struct mem_args {
    ts_mem_options opt;
    const char *out_dir, *times, *times_trace, *device, *format;
    double peak_tflops, bandwidth_gbps, offload_gbps, limit_gb;
    int plots, png, trace;
    uint32_t top, batch;
} mem_args;

static void usage(FILE *f)
{
    fputs("usage: trainscope memory [OPTIONS] FORWARD.py BACKWARD.py\n"
          "       trainscope memory [OPTIONS] G10.config\n"
          "       trainscope memory --trace PATH...\n\n"
          "G10.config: the G10 tool's own config (nn_model_input_forward/_backward,\n"
          "orig_kernel_time_file, GPU_frequency_GHz, GPU_memory_size_GB, output_folder);\n"
          "implies --g10-compat and writes output_folder/statistics unless -o is given.\n\n"
          "--trace: PyTorch export_memory_timeline_raw files (*.raw[.gz], *memory_timeline*),\n"
          "allocator snapshots (torch.cuda.memory._snapshot() pickles: *.pickle, *.pkl, gzipped\n"
          "or not; -o DIR also writes DIR/snapshot_timeline.csv), or Kineto traces recorded\n"
          "with profile_memory=True ([memory] events); -o DIR\n"
          "writes memory.json there (the --format json objects as one array), --plot\n"
          "memory.svg (memory_K.svg, one per file or rank and device, when several).\n\n"
          "Tensor liveness, inactive periods, memory curve, peak and offload candidates of\n"
          "one training iteration, from AOTAutograd's fx_graph_transformed_{forward,backward}.py.\n\n"
          "options:\n"
          "  -o, --output DIR         write kernels.config, tensors.config,\n"
          "                           liveness_analysis.config (G10's formats) and memory.json\n"
          "  --times FILE             kernel times: G10 time_dict.json or a text table (ms)\n"
          "  --times-trace TRACE      kernel times from a profiled run of the same step\n"
          "                           (CPU aten:: op durations, matched in order)\n"
          "  --device NAME            roofline times for a100, v100, h100 or cpu (default a100\n"
          "                           when no --times)\n"
          "  --peak-tflops X --bandwidth-gbps Y   roofline times for your own device\n"
          "  --bandwidth GBPS         host link for offload candidates (default 32, PCIe 4.0 x16)\n"
          "  --precision-plan FILE    '<op|name:prefix|*> <fp32|fp16|bf16|int8>' per line\n"
          "  --g10-compat             G10's own rules (reproduces its .config files)\n"
          "  --gpu-ghz X              G10's GPU_frequency_GHz for its cycle arithmetic (default 1)\n"
          "  --memory-limit GB        device memory (GiB): does the step fit, and the cheapest of\n"
          "                           offload (--bandwidth), recomputation and gradient\n"
          "                           accumulation that makes it fit (a G10 config's\n"
          "                           GPU_memory_size_GB is the default)\n"
          "  --hold-saved             saved activations live until the backward ends, as in\n"
          "                           torch < 2.1 (default: they die at their last use)\n"
          "  --workspace none|cpu     kernel scratch memory: none (default) or the rules\n"
          "                           measured on torch 1.13's CPU kernels\n"
          "  --batch N                batch size the dumps were traced at (shown in reports)\n"
          "  --plot                   also write memory.svg and periods.svg into DIR\n"
          "  --png                    --plot, and PNG copies of both (needs rsvg-convert,\n"
          "                           Debian's librsvg2-bin)\n"
          "  --top N                  tensors listed at the peak (default 10)\n"
          "  --format table|json      summary format on stdout (default table)\n"
          "  -h, --help               this help\n\n"
          "exit codes: 0 ok, 2 bad input or usage\n", f);
}

static int parse_args(int argc, char **argv, mem_args *a)
{
    static const struct option LONG[] = {
        {"output", required_argument, 0, 'o'}, {"times", required_argument, 0, 't'},
        {"device", required_argument, 0, 'd'}, {"peak-tflops", required_argument, 0, 'P'},
        {"bandwidth-gbps", required_argument, 0, 'B'}, {"bandwidth", required_argument, 0, 'b'},
        {"precision-plan", required_argument, 0, 'p'}, {"g10-compat", no_argument, 0, 'g'},
        {"batch", required_argument, 0, 'n'}, {"plot", no_argument, 0, 'L'}, {"png", no_argument, 0, 'G'},
        {"top", required_argument, 0, 'T'}, {"format", required_argument, 0, 'f'},
        {"trace", no_argument, 0, 'r'}, {"hold-saved", no_argument, 0, 'H'},
        {"workspace", required_argument, 0, 'W'}, {"times-trace", required_argument, 0, 'X'},
        {"gpu-ghz", required_argument, 0, 'F'}, {"memory-limit", required_argument, 0, 'M'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", LONG, NULL)) != -1) {
        switch (c) {
        case 'o': a->out_dir = optarg; break;
        case 't': a->times = optarg; break;
        case 'X': a->times_trace = optarg; break;
        case 'd': a->device = optarg; break;
        case 'P': if (ts_cli_opt_real("memory", "--peak-tflops", optarg, 1e-3, 1e6, &a->peak_tflops)) return TS_EXIT_BAD; break;
        case 'B': if (ts_cli_opt_real("memory", "--bandwidth-gbps", optarg, 1e-3, 1e6, &a->bandwidth_gbps)) return TS_EXIT_BAD; break;
        case 'b': if (ts_cli_opt_real("memory", "--bandwidth", optarg, 1e-3, 1e6, &a->offload_gbps)) return TS_EXIT_BAD; break;
        case 'p': a->opt.precision_plan = optarg; break;
        case 'g': a->opt.g10_compat = 1; break;
        case 'F': if (ts_cli_opt_real("memory", "--gpu-ghz", optarg, 0.001, 1000, &a->opt.gpu_ghz)) return TS_EXIT_BAD; break;
        case 'M': if (ts_cli_opt_real("memory", "--memory-limit", optarg, 1e-6, 1e6, &a->limit_gb)) return TS_EXIT_BAD; break;
        case 'n': if (ts_cli_opt_count("memory", "--batch", optarg, &a->batch)) return TS_EXIT_BAD; break;
        case 'L': a->plots = 1; break;
        case 'G': a->plots = a->png = 1; break;
        case 'T': if (ts_cli_opt_count("memory", "--top", optarg, &a->top)) return TS_EXIT_BAD; break;
        case 'f': a->format = optarg; break;
        case 'r': a->trace = 1; break;
        case 'H': a->opt.hold_saved = 1; break;
        case 'W':
            if (strcmp(optarg, "cpu") && strcmp(optarg, "none")) {
                ts_cli_errorf("memory: --workspace takes none or cpu, not '%s'", optarg);
                return TS_EXIT_BAD;
            }
            a->opt.workspace = strcmp(optarg, "cpu") ? TS_MEM_WORKSPACE_NONE : TS_MEM_WORKSPACE_CPU;
            break;
        case 'h': usage(stdout); return -1;
        default: ts_cli_opt_unknown("memory", argv[optind - 1]); return TS_EXIT_BAD;
        }
    }
    if ((a->peak_tflops > 0) != (a->bandwidth_gbps > 0) ||
        (strcmp(a->format, "table") && strcmp(a->format, "json"))) {
        ts_cli_errorf("memory: bad option value (see 'trainscope memory --help')");
        return TS_EXIT_BAD;
    }
    if (a->plots && !a->out_dir) {
        ts_cli_errorf("memory: --plot writes into the -o DIR; give one");
        return TS_EXIT_BAD;
    }
    if (a->png && !ts_cli_find_program("rsvg-convert")) {
        ts_cli_errorf("memory: --png needs rsvg-convert (Debian package librsvg2-bin) on PATH");
        return TS_EXIT_BAD;
    }
    if (!a->trace && argc - optind != 2 && argc - optind != 1) {
        ts_cli_errorf("memory: expected FORWARD.py BACKWARD.py or G10.config (see 'trainscope memory --help')");
        return TS_EXIT_BAD;
    }
    return TS_EXIT_OK;
}

/* Kernel times: a table when given, else the roofline of a device. */
static int set_times(ts_memgraph *g, const mem_args *a, ts_error *err)
{
    if (a->times) return ts_memgraph_load_times(g, a->times, err);
    if (a->times_trace) {
        ts_job *t = NULL;
        int rc = ts_job_load(&a->times_trace, 1, NULL, &t, err);
        if (!rc) rc = ts_memgraph_times_from_trace(g, t, err);
        ts_job_destroy(t);
        return rc;
    }
    ts_mem_device own = {"custom", a->peak_tflops, a->bandwidth_gbps, 2.0};
    const ts_mem_device *dev = a->peak_tflops > 0 ? &own : ts_mem_device_find(a->device ? a->device : "a100");
    if (!dev) return ts__error(err, TS_EINVAL, "unknown device '%s' (a100, v100, h100, cpu)", a->device);
    ts_memgraph_estimate_times(g, dev);
    return TS_OK;
}

static void print_table(const ts_memgraph *g, const ts_mem_summary *s, const mem_args *a)
{
    const double MiB = 1024.0 * 1024.0;
    printf("rules: %s, times: %s%s", a->opt.g10_compat ? "G10-compatible" : "exact", g->time_source,
           a->batch ? "" : "\n");
    if (a->batch) printf(", batch %u\n", a->batch);
    printf("kernels %u, tensors %u, global (weights, buffers, inputs) %.1f MiB\n", s->n_kernels,
           s->n_tensors, (double)s->global_bytes / MiB);
    const ts__mem_kernel *pk = s->peak_kernel >= 0 ? &g->kernels[s->peak_kernel] : NULL;
    printf("peak %.1f MiB while kernel %d runs (%s, %s line %u)", (double)s->peak_bytes / MiB,
           s->peak_kernel, pk ? ts__mem_name(g, pk->op_id) : "-", pk && pk->in_backward ? "backward" : "forward",
           pk ? pk->line : 0);
    if (s->iteration_ns >= 0)
        printf(" at %.3f ms of a %.3f ms iteration", (double)s->peak_at_ns / 1e6, (double)s->iteration_ns / 1e6);
    printf("\n\ntensors alive at the peak, largest first:\n%8s  %-28s %-26s %12s\n", "tensor", "name", "type", "MiB");
    uint32_t *rows = ts__malloc(((size_t)g->n_tensors + 1) * sizeof *rows);
    uint32_t n = rows ? ts__mem_alive_at(g, s->peak_kernel, rows, g->n_tensors) : 0;
    for (uint32_t i = 0; i < n && i < (uint32_t)a->top; i++) {
        const ts__mem_tensor *t = &g->tensors[rows[i]];
        printf("%8u  %-28.28s %-26.26s %12.2f%s\n", rows[i], ts__mem_name(g, t->name_id),
               ts__mem_name(g, t->ann_id), (double)t->bytes / MiB, t->is_global ? "  global" : "");
    }
    if (n > (uint32_t)a->top) printf("  ... %u more\n", n - (uint32_t)a->top);
    ts__free(rows, ((size_t)g->n_tensors + 1) * sizeof *rows);
    uint32_t n_cand;
    int64_t freed = ts_memgraph_offload(g, a->offload_gbps, &n_cand);
    printf("\noffload at %.1f GB/s: %u idle periods long enough to move out and back; "
           "%.1f MiB freed at the peak (%.1f%%)\n", a->offload_gbps, n_cand, (double)freed / MiB,
           s->peak_bytes ? 100.0 * (double)freed / (double)s->peak_bytes : 0.0);
}

/* Does the step fit --memory-limit, and at what cost each way. */
static void print_fit(const ts_mem_fit *f, double gbps)
{
    const double GiB = 1073741824.0;
    printf("\nmemory limit %.3f GiB: the step %s (peak %.3f GiB)\n", (double)f->limit_bytes / GiB,
           f->fits ? "fits" : "does not fit", (double)f->peak_bytes / GiB);
    if (f->fits) return;
    printf("%-18s %5s %10s %8s %12s\n", "to fit", "fits", "peak GiB", "choices", "added ms");
    for (int i = 0; i < TS_MEM_FIT_COUNT; i++) {
        const ts_mem_fit_option *o = &f->option[i];
        printf("%-18s %5s %10.3f %8u %12.3f\n", ts_mem_fit_name(i), o->fits ? "yes" : "no",
               (double)o->peak_bytes / GiB, o->n_choices, (double)o->cost_ns / 1e6);
    }
    if (f->cheapest >= 0) printf("cheapest: %s (+%.3f ms; offload moves %.1f MiB each way over the %.1f GB/s link, hidden "
                                 "behind compute)\n", ts_mem_fit_name(f->cheapest),
                                 (double)f->option[f->cheapest].cost_ns / 1e6,
                                 (double)f->option[f->cheapest].bytes_moved / 2 / 1048576.0, gbps);
    else printf("cheapest: none of these fits\n");
}

static void print_json(const ts_memgraph *g, const ts_mem_summary *s, const mem_args *a, const ts_mem_fit *f)
{
    uint32_t n_cand;
    int64_t freed = ts_memgraph_offload(g, a->offload_gbps, &n_cand);
    if (f) {
        printf("{\"memory_limit_bytes\":%lld,\"fits\":%s,\"cheapest\":\"%s\",\"options\":{", (long long)f->limit_bytes,
               f->fits ? "true" : "false", f->fits ? "as is" : ts_mem_fit_name(f->cheapest));
        for (int i = 0; i < TS_MEM_FIT_COUNT; i++)
            printf("%s\"%s\":{\"fits\":%s,\"peak_bytes\":%lld,\"choices\":%u,\"added_ns\":%lld,\"bytes_moved\":%lld}",
                   i ? "," : "", ts_mem_fit_name(i), f->option[i].fits ? "true" : "false",
                   (long long)f->option[i].peak_bytes, f->option[i].n_choices, (long long)f->option[i].cost_ns,
                   (long long)f->option[i].bytes_moved);
        printf("},\"step\":");
    }
    printf("{\"rules\":\"%s\",\"times\":\"%s\",\"kernels\":%u,\"tensors\":%u,\"global_bytes\":%lld,"
           "\"peak_bytes\":%lld,\"peak_kernel\":%d,\"iteration_ns\":%lld,\"peak_at_ns\":%lld,"
           "\"offload_gbps\":%.1f,\"offload_candidates\":%u,\"offload_freed_at_peak_bytes\":%lld}\n",
           a->opt.g10_compat ? "g10" : "exact", g->time_source, s->n_kernels, s->n_tensors,
           (long long)s->global_bytes, (long long)s->peak_bytes, s->peak_kernel,
           (long long)s->iteration_ns, (long long)s->peak_at_ns, a->offload_gbps, n_cand, (long long)freed);
    if (f) printf("}\n");
}

/* s as a JSON string (quoted, escaped); valid until the next call. */
static const char *json_quoted(const char *s)
{
    static ts_buf b;
    b.len = 0;
    ts__buf_json_str(&b, s, strlen(s));
    return b.oom ? "\"\"" : ts__buf_cstr(&b);
}

/* export_memory_timeline_raw output, by name: *.raw, *.raw.gz, *memory_timeline*. */
static bool is_raw_timeline(const char *path)
{
    size_t n = strlen(path);
    return strstr(path, "memory_timeline") || (n > 4 && !strcmp(path + n - 4, ".raw")) ||
           (n > 7 && !strcmp(path + n - 7, ".raw.gz"));
}

/* What --trace found: one JSON object per line (what --format json prints,
 * and memory.json's array under -o), and with --plot each curve and its title. */
enum { TRACE_CAP = 256 };
typedef struct trace_out {
    ts_buf       json;
    ts_mem_curve curves[TRACE_CAP];
    char         titles[TRACE_CAP][128];
    uint32_t     n_curves;
    bool         plots;
} trace_out;

static int add_curve(trace_out *o, int rc, const char *title, ts_error *err)
{
    if (rc == TS_OK) snprintf(o->titles[o->n_curves++], sizeof o->titles[0], "%s", title);
    else ts_cli_errorf("%s", err->msg[0] ? err->msg : ts_strerror(rc));
    return rc ? TS_EXIT_BAD : TS_EXIT_OK;
}

static int raw_timeline(const char *path, bool json, trace_out *o)
{
    const double MiB = 1024.0 * 1024.0;
    ts_mem_timeline t;
    ts_error err = {0};
    if (ts_mem_timeline_load_raw(path, &t, &err)) {
        ts_cli_errorf("%s", err.msg);
        return TS_EXIT_BAD;
    }
    ts_buf *b = &o->json;
    ts__buf_printf(b, "{\"file\":%s,\"events\":%llu,\"peak_bytes\":%lld,\"peak_ns\":%lld,\"final_bytes\":%lld,"
                   "\"at_peak\":{", json_quoted(path), (unsigned long long)t.n_events, (long long)t.peak_bytes,
                   (long long)t.peak_ns, (long long)t.final_bytes);
    for (int c = 0; c < TS_MEM_N_CATEGORIES; c++)
        ts__buf_printf(b, "%s\"%s\":%lld", c ? "," : "", ts_mem_category_name(c), (long long)t.at_peak[c]);
    ts__buf_puts(b, "}}\n");
    if (!json) {
        printf("%s: %llu events over %.3f ms; peak %.1f MiB at +%.3f ms; %.1f MiB at the end\n"
               "%-18s %12s %12s\n", path, (unsigned long long)t.n_events,
               (double)(t.last_ns - t.first_ns) / 1e6, (double)t.peak_bytes / MiB,
               t.peak_ns >= 0 ? (double)(t.peak_ns - t.first_ns) / 1e6 : 0.0,
               (double)t.final_bytes / MiB, "category", "at peak MiB", "max MiB");
        for (int c = 0; c < TS_MEM_N_CATEGORIES; c++)
            printf("%-18s %12.1f %12.1f\n", ts_mem_category_name(c), (double)t.at_peak[c] / MiB,
                   (double)t.max_bytes[c] / MiB);
    }
    if (!o->plots) return TS_EXIT_OK;
    if (o->n_curves >= TRACE_CAP) {
        ts_cli_errorf("memory --plot: at most %d curves; give fewer files", TRACE_CAP);
        return TS_EXIT_BAD;
    }
    int rc = ts_mem_timeline_curve(path, &o->curves[o->n_curves], &err);
    const char *base = strrchr(path, '/');
    char title[128];
    snprintf(title, sizeof title, "Memory alive: %.90s", base ? base + 1 : path);
    return add_curve(o, rc, title, &err);
}

static void kineto_row(const ts_mem_trace_peak *p, bool json, ts_buf *b)
{
    ts__buf_printf(b, "{\"rank\":%u,\"device_type\":%d,\"device_id\":%d,\"events\":%llu,\"peak_bytes\":%lld,"
                   "\"peak_ns\":%lld,\"ops\":[", p->rank, p->device_type, p->device_id,
                   (unsigned long long)p->n_events, (long long)p->peak_bytes, (long long)p->peak_ns);
    for (uint32_t k = 0; k < p->n_ops; k++) ts__buf_printf(b, "%s%s", k ? "," : "", json_quoted(p->ops[k]));
    ts__buf_puts(b, "]}\n");
    if (json) return;
    char dev[24];
    snprintf(dev, sizeof dev, "%s:%d", p->device_type == 0 ? "cpu" : p->device_type == 1 ? "cuda" : "dev", p->device_id);
    printf("%5u %-8s %8llu %12.1f %12.3f  ", p->rank, dev, (unsigned long long)p->n_events,
           (double)p->peak_bytes / (1024.0 * 1024.0), (double)(p->peak_ns - p->first_ns) / 1e6);
    for (uint32_t k = 0; k < p->n_ops; k++) printf("%s%s", k ? " < " : "", p->ops[k]);
    printf("%s\n", p->n_ops ? "" : "-");
}

/* The traces' ingest warnings: a last JSON line {"warnings":[...]} (the
 * shape every command's "warnings" has), or on stderr beside a table. */
static void trace_warnings(const ts_job *t, bool json, ts_buf *b)
{
    if (!json) {
        ts__report_warnings_emit(stderr, t, NULL, 0, ts__report_warn_all(false));
        return;
    }
    ts_json j;
    ts__json_init(&j, b);
    ts__json_obj_begin(&j);
    ts__report_warnings_json(&j, t);
    ts__json_obj_end(&j);
    ts__buf_puts(b, "\n");
}

/* Kineto traces: one row per (rank, device) with memory events. */
static int kineto_memory(const char *const *paths, uint32_t n_paths, bool json, trace_out *o)
{
    ts_job *t = NULL;
    ts_error err = {0};
    ts_mem_trace_peak *rows = NULL;
    uint32_t n = 0, cap = 0;
    int rc = ts_job_load(paths, n_paths, NULL, &t, &err);
    if (!rc) rc = ts_mem_trace_peaks(t, NULL, 0, &n, &err);   /* count the rows, then fill them */
    if (!rc && !(rows = calloc(cap = n, sizeof *rows))) rc = ts__error(&err, TS_ENOMEM, "out of memory");
    if (!rc) rc = ts_mem_trace_peaks(t, rows, cap, &n, &err);
    if (rc) {
        free(rows);
        ts_job_destroy(t);
        ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
        return TS_EXIT_BAD;
    }
    if (!json) printf("%5s %-8s %8s %12s %12s  %s\n", "rank", "device", "events", "peak MiB", "at ms", "ops around the peak (innermost first)");
    int ex = TS_EXIT_OK;
    for (uint32_t i = 0; i < n && i < cap && ex == TS_EXIT_OK; i++) {
        kineto_row(&rows[i], json, &o->json);
        if (!o->plots) continue;
        if (o->n_curves >= TRACE_CAP) {
            ts_cli_errorf("memory --plot: at most %d curves; give fewer traces", TRACE_CAP);
            ex = TS_EXIT_BAD;
            break;
        }
        char title[128];
        snprintf(title, sizeof title, "Total Allocated: rank %u, %s:%d", rows[i].rank,
                 rows[i].device_type == 0 ? "cpu" : rows[i].device_type == 1 ? "cuda" : "dev", rows[i].device_id);
        ex = add_curve(o, ts_mem_trace_curve(t, &rows[i], &o->curves[o->n_curves], &err), title, &err);
    }
    free(rows);
    if (ex == TS_EXIT_OK) trace_warnings(t, json, &o->json);
    ts_job_destroy(t);
    return ex;
}

static int svgs_to_png(const char *dir, const char *const *names, uint32_t n, ts_error *err);

/* memory.json (the JSON lines as one array) and the curves into -o DIR
 * (PNG copies too with --png). */
static int write_trace_dir(const char *dir, trace_out *o, bool png)
{
    ts_buf arr;
    ts__buf_init(&arr);
    ts__buf_puts(&arr, "[");
    const char *s = o->json.len ? ts__buf_cstr(&o->json) : "";
    for (const char *line = s; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (arr.len > 1) ts__buf_puts(&arr, ",\n ");
        ts__buf_add(&arr, line, len);
        line += len + (nl ? 1 : 0);
    }
    ts__buf_puts(&arr, "]\n");
    const char *titles[TRACE_CAP];
    for (uint32_t i = 0; i < o->n_curves; i++) titles[i] = o->titles[i];
    ts_error err = {0};
    int rc = arr.oom || o->json.oom ? ts__error(&err, TS_ENOMEM, "out of memory")
                                   : ts_mem_curves_write(dir, ts__buf_cstr(&arr), o->curves, titles, o->n_curves,
                                                         o->plots, &err);
    ts__buf_free(&arr);
    char names[TRACE_CAP][24];
    const char *np[TRACE_CAP];
    for (uint32_t i = 0; i < o->n_curves; i++) {
        if (o->n_curves == 1) snprintf(names[i], sizeof names[i], "memory");
        else snprintf(names[i], sizeof names[i], "memory_%u", i);
        np[i] = names[i];
    }
    if (!rc && png) rc = svgs_to_png(dir, np, o->n_curves, &err);
    if (rc) ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
    return rc ? TS_EXIT_BAD : TS_EXIT_OK;
}

/* --trace: raw timelines one by one, Kineto traces together (one per rank);
 * with -o DIR, memory.json and (--plot) the curves there. */
/* torch.cuda.memory._snapshot() pickles, by name: *.pickle, *.pkl (.gz, .zst). */
static bool is_snapshot(const char *path)
{
    return strstr(path, ".pickle") || strstr(path, ".pkl");
}

/* Blocks alive at the peak grouped by allocating frame (the first outside
 * torch, else the innermost): the top `top` groups, largest first. */
typedef struct frame_group { const char *frame; int64_t bytes; uint32_t blocks; } frame_group;

static int cmp_group(const void *a, const void *b)
{
    const frame_group *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->frame, y->frame);
}

static uint32_t group_alive(const ts_mem_snapshot *s, const ts_mem_snap_device *d, frame_group *g)
{
    uint32_t n = 0;
    for (uint32_t i = d->first_alive; i < d->first_alive + d->n_alive; i++) {
        const ts_mem_snap_block *b = &s->alive[i];
        const char *f = b->user_frame[0] ? b->user_frame : b->frame[0] ? b->frame
                        : b->alloc_us < 0 ? "(allocated before the trace)" : "(no frames recorded)";
        uint32_t k = 0;
        while (k < n && strcmp(g[k].frame, f)) k++;
        if (k == n) g[n++] = (frame_group){f, 0, 0};
        g[k].bytes += b->bytes;
        g[k].blocks++;
    }
    qsort(g, n, sizeof *g, cmp_group);
    return n;
}

static void snapshot_device(const char *path, const ts_mem_snapshot *s, const ts_mem_snap_device *d, bool json,
                            uint32_t top, bool first)
{
    const double MiB = 1024.0 * 1024.0;
    frame_group *g = ts__malloc(((size_t)d->n_alive + 1) * sizeof *g);
    uint32_t ng = g ? group_alive(s, d, g) : 0;
    if (json) {
        printf("%s{\"file\":%s,\"device\":%d,\"segments\":%u,\"blocks\":%u,\"reserved_bytes\":%lld,"
               "\"allocated_bytes\":%lld,\"requested_bytes\":%lld,\"fragmentation_bytes\":%lld,"
               "\"largest_free_bytes\":%lld,\"trace_entries\":%llu,\"allocs\":%llu,\"frees\":%llu,"
               "\"first_us\":%lld,\"last_us\":%lld,\"start_bytes\":%lld,\"peak_bytes\":%lld,\"peak_us\":%lld,"
               "\"end_bytes\":%lld,\"alive_at_peak\":%u,\"alive_by_frame\":[",
               first ? "" : "\n", json_quoted(path), d->device, d->n_segments, d->n_blocks,
               (long long)d->reserved_bytes, (long long)d->allocated_bytes, (long long)d->requested_bytes,
               (long long)d->fragmentation_bytes, (long long)d->largest_free_bytes, (unsigned long long)d->n_trace,
               (unsigned long long)d->n_alloc, (unsigned long long)d->n_free, (long long)d->first_us,
               (long long)d->last_us, (long long)d->start_bytes, (long long)d->peak_bytes, (long long)d->peak_us,
               (long long)d->end_bytes, d->n_alive);
        for (uint32_t k = 0; k < ng && k < top; k++)
            printf("%s{\"frame\":%s,\"bytes\":%lld,\"blocks\":%u}", k ? "," : "", json_quoted(g[k].frame),
                   (long long)g[k].bytes, g[k].blocks);
        printf("]}");
    } else {
        printf("%s: device %d: %u segments, %u blocks; reserved %.1f MiB, allocated %.1f MiB, fragmentation "
               "%.1f MiB (reserved - allocated); largest free block %.1f MiB\n", path, d->device, d->n_segments,
               d->n_blocks, d->reserved_bytes / MiB, d->allocated_bytes / MiB, d->fragmentation_bytes / MiB,
               d->largest_free_bytes / MiB);
        printf("  trace: %llu entries (%llu allocs, %llu frees) over %.3f ms; %.1f MiB allocated at its start, "
               "peak %.1f MiB at +%.3f ms, %.1f MiB at its end\n", (unsigned long long)d->n_trace,
               (unsigned long long)d->n_alloc, (unsigned long long)d->n_free,
               d->first_us >= 0 ? (double)(d->last_us - d->first_us) / 1e3 : 0.0, d->start_bytes / MiB,
               d->peak_bytes / MiB, d->peak_us >= 0 ? (double)(d->peak_us - d->first_us) / 1e3 : 0.0,
               d->end_bytes / MiB);
        printf("  alive at the peak: %u blocks; by allocating frame (the first outside torch), largest first:\n"
               "  %10s %7s  %s\n", d->n_alive, "MiB", "blocks", "frame");
        for (uint32_t k = 0; k < ng && k < top; k++)
            printf("  %10.1f %7u  %s\n", g[k].bytes / MiB, g[k].blocks, g[k].frame);
        if (ng > top) printf("  ... %u more frames\n", ng - top);
    }
    ts__free(g, ((size_t)d->n_alive + 1) * sizeof *g);
}

static int snapshot(const char *path, const mem_args *a, bool json)
{
    ts_mem_snapshot *s;
    ts_error err = {0};
    if (ts_mem_snapshot_load(path, &s, &err)) {
        ts_cli_errorf("%s", err.msg);
        return TS_EXIT_BAD;
    }
    if (a->out_dir) {
        char csv[4096];
        snprintf(csv, sizeof csv, "%s/snapshot_timeline.csv", a->out_dir);
        if (ts_mem_snapshot_write_timeline(path, csv, &err)) {
            ts_cli_errorf("%s", err.msg);
            ts_mem_snapshot_destroy(s);
            return TS_EXIT_BAD;
        }
    }
    for (uint32_t i = 0; i < s->n_devices; i++) snapshot_device(path, s, &s->devices[i], json, a->top, i == 0);
    if (json && s->n_devices) printf("\n");
    ts_mem_snapshot_destroy(s);
    return TS_EXIT_OK;
}

/* --trace: raw timelines one by one, Kineto traces together (one per rank). */
static int memory_trace(int argc, char **argv, int first, const mem_args *a)
{
    if (first >= argc) {
        ts_cli_errorf("memory --trace: expected PATH... (see 'trainscope memory --help')");
        return TS_EXIT_BAD;
    }
    bool json = !strcmp(a->format, "json");
    const char **traces = calloc((size_t)(argc - first), sizeof *traces);
    if (!traces) { ts_cli_errorf("memory --trace: out of memory"); return TS_EXIT_BAD; }
    uint32_t n_traces = 0;
    trace_out *o = calloc(1, sizeof *o);
    if (!o) { free(traces); ts_cli_errorf("memory: out of memory"); return TS_EXIT_BAD; }
    ts__buf_init(&o->json);
    o->plots = a->plots;
    int ex = TS_EXIT_OK;
    for (int i = first; i < argc && ex == TS_EXIT_OK; i++) {
        if (is_snapshot(argv[i])) {
            ex = snapshot(argv[i], a, json);
            continue;
        }
        if (!is_raw_timeline(argv[i])) {
            traces[n_traces++] = argv[i];
            continue;
        }
        ex = raw_timeline(argv[i], json, o);
    }
    if (ex == TS_EXIT_OK && n_traces) ex = kineto_memory(traces, n_traces, json, o);
    if (ex == TS_EXIT_OK && json && o->json.len) fputs(ts__buf_cstr(&o->json), stdout);
    if (ex == TS_EXIT_OK && a->out_dir) ex = write_trace_dir(a->out_dir, o, a->png);
    for (uint32_t i = 0; i < o->n_curves; i++) ts_mem_curve_free(&o->curves[i]);
    ts__buf_free(&o->json);
    free(o);
    free(traces);
    return ex;
}

/* PNG copies of the plots (DIR/NAME.svg), rendered by librsvg's
 * rsvg-convert (a real SVG renderer, rather than a second plotting path of
 * our own). */
static int svgs_to_png(const char *dir, const char *const *names, uint32_t n, ts_error *err)
{
    for (uint32_t i = 0; i < n; i++) {
        char svg[4096], png[4096], tmp[4096];
        snprintf(svg, sizeof svg, "%s/%s.svg", dir, names[i]);
        snprintf(png, sizeof png, "%s/%s.png", dir, names[i]);
        snprintf(tmp, sizeof tmp, "%s/.%s.png.tmp", dir, names[i]);   /* renamed once whole */
        char *cmd[] = {"rsvg-convert", "-o", tmp, svg, NULL};
        if (ts_cli_run(cmd) != 0 || rename(tmp, png) != 0) {
            remove(tmp);
            snprintf(err->msg, sizeof err->msg, "%.900s: rsvg-convert could not render it", svg);
            return err->status = TS_EIO;
        }
    }
    return TS_OK;
}

int ts_cmd_memory(int argc, char **argv)
{
    mem_args a = {.opt = {.size = sizeof(ts_mem_options)}, .format = "table",
                  .offload_gbps = DEFAULT_OFFLOAD_GBPS, .top = 10};
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? TS_EXIT_OK : rc;
    if (a.trace) return memory_trace(argc, argv, optind, &a);
    ts_error err = {0};
    ts_memgraph *g = NULL;
    ts_mem_summary s;
    static ts_mem_g10_config cfg;
    static char stats_dir[4200];
    const char *fwd = argv[optind], *bwd = argv[optind + 1];
    if (argc - optind == 1) { /* G10's config: its rules, inputs, times and output folder */
        if (ts_mem_g10_config_load(argv[optind], &cfg, &err)) {
            ts_cli_errorf("%s", err.msg);
            return TS_EXIT_BAD;
        }
        fwd = cfg.forward;
        bwd = cfg.backward;
        a.opt.g10_compat = 1;
        if (!a.opt.gpu_ghz) a.opt.gpu_ghz = cfg.gpu_ghz;
        if (!a.limit_gb) a.limit_gb = cfg.gpu_memory_gb;
        if (!a.times && !a.times_trace && cfg.times[0]) a.times = cfg.times;
        if (!a.out_dir && cfg.output_folder[0]) {
            snprintf(stats_dir, sizeof stats_dir, "%s/statistics", cfg.output_folder);
            a.out_dir = stats_dir;
        }
    }
    rc = ts_memgraph_load(fwd, bwd, &a.opt, &g, &err);
    if (!rc) rc = set_times(g, &a, &err);
    if (!rc && (rc = ts_memgraph_analyze(g, &s)) == TS_ERANGE)
        ts__error(&err, rc, "memory: the kernel times add up past 2^62 ns (146 years): check --times or the device");
    ts_mem_fit fit = {0};
    if (!rc && a.limit_gb > 0) rc = ts_memgraph_fit(g, (int64_t)(a.limit_gb * 1073741824.0), a.offload_gbps, &fit, &err);
    if (!rc && a.out_dir) rc = ts_memgraph_write(g, a.out_dir, a.offload_gbps, a.plots, &err);
    static const char *const plots[] = {"memory", "periods"};
    if (!rc && a.png) rc = svgs_to_png(a.out_dir, plots, 2, &err);
    for (int i = 0; i < 2 && !rc && a.out_dir && !a.png; i++) {   /* no stale copy of an earlier --png run */
        char png[4096];
        snprintf(png, sizeof png, "%s/%s.png", a.out_dir, plots[i]);
        remove(png);
    }
    if (rc) {
        ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
        ts_memgraph_destroy(g);
        return TS_EXIT_BAD;
    }
    if (!strcmp(a.format, "json")) print_json(g, &s, &a, a.limit_gb > 0 ? &fit : NULL);
    else {
        print_table(g, &s, &a);
        if (a.limit_gb > 0) print_fit(&fit, a.offload_gbps);
    }
    ts_memgraph_destroy(g);
    return TS_EXIT_OK;
}
