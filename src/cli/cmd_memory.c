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
#include "trainscope/ingest.h"
#include "trainscope/memory.h"
#include "trainscope/report_memory.h"

/* PCIe 4.0 x16: 16 GT/s x 16 lanes x 128/130 = 31.5 GB/s each way nominal;
 * rounded to 32 like most papers (G10 included) quote it. */
#define DEFAULT_OFFLOAD_GBPS 32.0

typedef struct mem_args {
    ts_mem_options opt;
    const char *out_dir, *times, *times_trace, *device, *format;
    const char *table;          /* --table NAME (csv), NULL = tensors */
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
          "  --format table|json|csv  summary format on stdout (default table); csv: one\n"
          "                           table (bytes and ns as integers)\n"
          "  --table NAME             csv: tensors (alive at the peak, the default) or fit\n"
          "                           (with --memory-limit); --trace: timelines, peaks or\n"
          "                           frames (the default: the first the inputs fill)\n"
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
        {"table", required_argument, 0, 'K'},
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
        case 'K': a->table = optarg; break;
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
        (strcmp(a->format, "table") && strcmp(a->format, "json") && strcmp(a->format, "csv"))) {
        ts_cli_errorf("memory: bad option value (see 'trainscope memory --help')");
        return TS_EXIT_BAD;
    }
    if (a->table && strcmp(a->format, "csv")) {
        ts_cli_errorf("memory: --table goes with --format csv");
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
    if (!dev) {
        snprintf(err->msg, sizeof err->msg, "unknown device '%s' (a100, v100, h100, cpu)", a->device);
        return err->status = TS_EINVAL;
    }
    ts_memgraph_estimate_times(g, dev);
    return TS_OK;
}

/* What the summary shows beside the graph: the options and the offload answer. */
static ts_report_mem_args report_args(const ts_memgraph *g, const mem_args *a)
{
    ts_report_mem_args r = {a->opt.g10_compat, a->batch, a->top, a->offload_gbps, 0, 0};
    r.offload_freed_bytes = ts_memgraph_offload(g, a->offload_gbps, &r.offload_candidates);
    return r;
}

/* export_memory_timeline_raw output, by name: *.raw, *.raw.gz, *memory_timeline*. */
static bool is_raw_timeline(const char *path)
{
    size_t n = strlen(path);
    return strstr(path, "memory_timeline") || (n > 4 && !strcmp(path + n - 4, ".raw")) ||
           (n > 7 && !strcmp(path + n - 7, ".raw.gz"));
}

/* At most this many curves for --plot (a chart each). */
enum { TRACE_CAP = 256 };

static int lib_error(int rc, const ts_error *err)
{
    if (rc) ts_cli_errorf("%s", err->msg[0] ? err->msg : ts_strerror(rc));
    return rc ? TS_EXIT_BAD : TS_EXIT_OK;
}

static int raw_timeline(const char *path, bool plots, ts_report_mem_trace *rep)
{
    ts_mem_timeline t;
    ts_error err = {0};
    if (ts_mem_timeline_load_raw(path, &t, &err)) {
        ts_cli_errorf("%s", err.msg);
        return TS_EXIT_BAD;
    }
    int rc = ts_report_mem_trace_timeline(rep, path, &t);
    if (rc || !plots) return lib_error(rc, &err);
    if (ts_report_mem_trace_n_curves(rep) >= TRACE_CAP) {
        ts_cli_errorf("memory --plot: at most %d curves; give fewer files", TRACE_CAP);
        return TS_EXIT_BAD;
    }
    ts_mem_curve c = {0};
    rc = ts_mem_timeline_curve(path, &c, &err);
    if (!rc) rc = ts_report_mem_trace_timeline_curve(rep, path, &c);
    ts_mem_curve_free(&c);
    return lib_error(rc, &err);
}

/* Kineto traces: one row per (rank, device) with memory events. */
static int kineto_rows(const ts_job *t, const ts_mem_trace_peak *rows, uint32_t n, bool plots,
                       ts_report_mem_trace *rep)
{
    ts_error err = {0};
    int rc = ts_report_mem_trace_peaks_head(rep);
    for (uint32_t i = 0; i < n && !rc; i++) {
        rc = ts_report_mem_trace_peak(rep, &rows[i]);
        if (rc || !plots) continue;
        if (ts_report_mem_trace_n_curves(rep) >= TRACE_CAP) {
            ts_cli_errorf("memory --plot: at most %d curves; give fewer traces", TRACE_CAP);
            return TS_EXIT_BAD;
        }
        ts_mem_curve c = {0};
        rc = ts_mem_trace_curve(t, &rows[i], &c, &err);
        if (!rc) rc = ts_report_mem_trace_peak_curve(rep, &rows[i], &c);
        ts_mem_curve_free(&c);
    }
    if (!rc) rc = ts_report_mem_trace_warnings(rep, stderr, t);
    return lib_error(rc, &err);
}

static int kineto_memory(const char *const *paths, uint32_t n_paths, bool plots, ts_report_mem_trace *rep)
{
    ts_job *t = NULL;
    ts_error err = {0};
    ts_mem_trace_peak *rows = NULL;
    uint32_t n = 0, cap = 0;
    int rc = ts_job_load(paths, n_paths, NULL, &t, &err);
    if (!rc) rc = ts_mem_trace_peaks(t, NULL, 0, &n, &err);   /* count the rows, then fill them */
    if (!rc && !(rows = calloc(cap = n, sizeof *rows))) {
        snprintf(err.msg, sizeof err.msg, "out of memory");
        rc = TS_ENOMEM;
    }
    if (!rc) rc = ts_mem_trace_peaks(t, rows, cap, &n, &err);
    int ex = rc ? lib_error(rc, &err) : kineto_rows(t, rows, n < cap ? n : cap, plots, rep);
    free(rows);
    ts_job_destroy(t);
    return ex;
}

static int svgs_to_png(const char *dir, const char *const *names, uint32_t n, ts_error *err);

/* memory.json and the charts into -o DIR (PNG copies too with --png). */
static int write_trace_dir(const char *dir, const ts_report_mem_trace *rep, bool plots, bool png)
{
    ts_error err = {0};
    int rc = ts_report_mem_trace_write_dir(rep, dir, plots, &err);
    uint32_t n = ts_report_mem_trace_n_curves(rep);
    char names[TRACE_CAP][24];
    const char *np[TRACE_CAP];
    for (uint32_t i = 0; i < n && i < TRACE_CAP; i++) {
        ts_report_mem_trace_chart_name(rep, i, names[i], sizeof names[i]);
        np[i] = names[i];
    }
    if (!rc && png) rc = svgs_to_png(dir, np, n, &err);
    return lib_error(rc, &err);
}

/* --trace: raw timelines one by one, Kineto traces together (one per rank);
 * with -o DIR, memory.json and (--plot) the curves there. */
/* torch.cuda.memory._snapshot() pickles, by name: *.pickle, *.pkl (.gz, .zst). */
static bool is_snapshot(const char *path)
{
    return strstr(path, ".pickle") || strstr(path, ".pkl");
}

static int snapshot(const char *path, const mem_args *a, bool json, ts_report_mem_trace *rep)
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
    int wrc = !strcmp(a->format, "csv") ? ts_report_mem_trace_snapshot(rep, path, s)
                                        : ts_report_mem_snapshot(stdout, path, s, a->top, json);
    ts_mem_snapshot_destroy(s);
    if (wrc == TS_ENOMEM) ts_cli_errorf("memory: out of memory");
    return wrc == TS_ENOMEM ? TS_EXIT_BAD : TS_EXIT_OK;   /* a failed write of stdout: main says so */
}

/* --trace: raw timelines one by one, Kineto traces together (one per rank). */
static int memory_trace(int argc, char **argv, int first, const mem_args *a)
{
    if (first >= argc) {
        ts_cli_errorf("memory --trace: expected PATH... (see 'trainscope memory --help')");
        return TS_EXIT_BAD;
    }
    bool json = !strcmp(a->format, "json"), csv = !strcmp(a->format, "csv");
    ts_report_mem_trace *rep = NULL;
    ts_error err = {0};
    int rc = csv ? ts_report_mem_trace_create_csv(stdout, a->table, &rep, &err)
                 : ts_report_mem_trace_create(stdout, json, &rep);
    if (rc) { ts_cli_errorf("%s", err.msg[0] ? err.msg : "memory: out of memory"); return TS_EXIT_BAD; }
    const char **traces = calloc((size_t)(argc - first), sizeof *traces);
    if (!traces) { ts_report_mem_trace_destroy(rep); ts_cli_errorf("memory --trace: out of memory"); return TS_EXIT_BAD; }
    uint32_t n_traces = 0;
    int ex = TS_EXIT_OK;
    for (int i = first; i < argc && ex == TS_EXIT_OK; i++) {
        if (is_snapshot(argv[i])) {
            ex = snapshot(argv[i], a, json, rep);
            continue;
        }
        if (!is_raw_timeline(argv[i])) {
            traces[n_traces++] = argv[i];
            continue;
        }
        ex = raw_timeline(argv[i], a->plots, rep);
    }
    if (ex == TS_EXIT_OK && n_traces) ex = kineto_memory(traces, n_traces, a->plots, rep);
    if (ex == TS_EXIT_OK) {
        rc = ts_report_mem_trace_end(rep, &err);
        if (rc && rc != TS_EIO) ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
        if (rc && rc != TS_EIO) ex = TS_EXIT_BAD;   /* a failed write of stdout: main says so */
    }
    if (ex == TS_EXIT_OK && a->out_dir) ex = write_trace_dir(a->out_dir, rep, a->plots, a->png);
    ts_report_mem_trace_destroy(rep);
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
        snprintf(err.msg, sizeof err.msg, "memory: the kernel times add up past 2^62 ns (146 years): check --times or the device");
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
    if (!strcmp(a.format, "csv")) {
        rc = ts_report_memgraph_csv(stdout, g, &s, a.limit_gb > 0 ? &fit : NULL, a.table, &err);
        if (rc && rc != TS_EIO) ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));   /* no such --table */
        ts_memgraph_destroy(g);
        return rc && rc != TS_EIO ? TS_EXIT_BAD : TS_EXIT_OK;   /* a failed write of stdout: main says so */
    }
    ts_report_mem_args ra = report_args(g, &a);
    int wrc = !strcmp(a.format, "json") ? ts_report_memgraph_json(stdout, g, &s, &ra, a.limit_gb > 0 ? &fit : NULL)
                                        : ts_report_memgraph_table(stdout, g, &s, &ra);
    if (!wrc && strcmp(a.format, "json") && a.limit_gb > 0) wrc = ts_report_mem_fit_table(stdout, &fit, a.offload_gbps);
    (void)wrc;   /* a failed write of stdout: main says so once, naming standard output */
    ts_memgraph_destroy(g);
    return TS_EXIT_OK;
}
