/* cmd_breakdown.c - `trainscope breakdown PATH...`: per rank, what Holistic
 * Trace Analysis computes (definitions in src/analyze/breakdown.c): temporal
 * breakdown, kernel types, top kernels, idle time and queue length per
 * stream, launch statistics, memcpy/memset bandwidth; per thread for CPU-only
 * ranks.
 *
 * Thin: parse options, load, ts_breakdown_compute, print one of three formats.
 * JSON: {"ranks":[{"rank","span_us","idle_us","compute_us","non_compute_us",...}],
 * "kernel_types":[...], "kernels":[...], "streams":[...], "launches":[...],
 * "memory_bandwidth":[...], "threads":[...], "warnings":[...]}.
 * CSV is long form: section,rank,key,metric,value.
 * Exit: 0 ok, 1 no GPU op and no CPU slice to analyze, 2 bad input or usage.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "report/report_int.h"
#include "trainscope/analyze.h"
#include "trainscope/graph.h"
#include "trainscope/ingest.h"
#include "trainscope/report.h"

typedef struct bd_args {
    ts_breakdown_opts opts;
    int               format;
    const char       *marker;
    int               width;   /* --width: table columns, 0 = never cut names */
    int               verbose; /* --verbose: every warning line, also on a terminal */
} bd_args;

/* Names of the kernel-type combinations, indexed by the bit mask of
 * ts_breakdown_rank.type_ns (HTA's "X overlapping Y" labels). */
static const char *const combo_names[8] = {
    "", "COMPUTATION", "COMMUNICATION", "COMPUTATION overlapping COMMUNICATION", "MEMORY",
    "COMPUTATION overlapping MEMORY", "COMMUNICATION overlapping MEMORY",
    "COMPUTATION overlapping COMMUNICATION overlapping MEMORY",
};

static void usage(FILE *f)
{
    fputs("usage: trainscope breakdown [OPTIONS] PATH...\n\n"
          "Where each rank's time went, with Holistic Trace Analysis' definitions:\n"
          "temporal breakdown over the GPU span of complete iterations (idle, compute,\n"
          "non-compute = communication + memory), kernel types and top kernels, idle time\n"
          "per stream (host wait, kernel wait, other), communication/computation overlap,\n"
          "kernel launch statistics, queue length per stream, memcpy/memset bandwidth.\n"
          "CPU-only ranks: compute, communication and idle time per thread. Several ranks:\n"
          "stragglers: lateness of each rank at each collective matched across ranks (on\n"
          "aligned clocks), who waited for whom and how long, summed per iteration.\n\n"
          "options:\n"
          "  --top N                   kernels listed per kernel type (default 5, 0 = all)\n"
          "  --kernel-delay NS         HTA consecutive_kernel_delay for idle time (default 30)\n"
          "  --iterations A:B          only GPU ops launched in ProfilerStep#A..#B (CPU-only:\n"
          "                            their time) instead of HTA's drop-the-last-step rule\n"
          "  --iteration-marker NAME   slice-name prefix of iterations (ProfilerStep#)\n"
          "  --format table|json|csv   output format (default table); json/csv times are us\n"
          "  --width N                 table width in columns (default 80); 0 = never cut names\n"
          TS_CLI_COMMON_HELP
          "  -v, --verbose            every warning line (on a terminal: one per kind,\n"
          "                           summed over files)\n"          "                           (--window: the CPU-only threads' window; GPU ops\n"
          "                           follow HTA's filter or --iterations)\n"
          "  -h, --help                this help\n\n"
          "exit codes: 0 ok, 1 nothing to analyze (or no iteration in the range),\n"
          "2 bad input or usage\n", f);
}

static int parse_args(int argc, char **argv, bd_args *a)
{
    static const struct option longopts[] = {
        {"top", required_argument, 0, 't'}, {"kernel-delay", required_argument, 0, 'd'},
        {"iterations", required_argument, 0, 'i'},
        {"iteration-marker", required_argument, 0, 'm'}, {"format", required_argument, 0, 'f'},
        {"width", required_argument, 0, 'w'}, TS_CLI_COMMON_LONGOPTS, {"verbose", no_argument, 0, 'v'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->opts.top_kernels = 5;
    a->width = 80;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (ts_cli_opt_count("breakdown", "--top", optarg, &a->opts.top_kernels)) return -1;
            break;
        case 'd':
            if (ts_cli_opt_int("breakdown", "--kernel-delay", optarg, 1, 3600000000000LL,   /* 1 ns to 1 h */
                               &a->opts.consecutive_kernel_delay_ns)) return -1;
            break;
        case 'm': a->marker = optarg; break;
        case 'i':
            if (ts_cli_opt_range("breakdown", "--iterations", optarg, &a->opts.iter_first, &a->opts.iter_last)) return -1;
            a->opts.has_iterations = true;
            break;
        case 'w':
            if (ts_cli_opt_width("breakdown", optarg, &a->width)) return -1;
            break;
        case 'f':
            if ((a->format = ts__report_format(optarg)) < 0) {
                ts_cli_errorf("breakdown: --format wants table, json or csv, got '%s'", optarg);
                return -1;
            }
            break;
        TS_CLI_COMMON_CASES:
            if (ts_cli_opt_common("breakdown", c, optarg)) return -1;
            break;
        case 'v': a->verbose = 1; break;
        case 'h': usage(stdout); return 1;
        default:
            return ts_cli_opt_unknown("breakdown", argv[optind - 1]);
        }
    }
    if (ts_cli_need_trace("breakdown", optind, argc)) return -1;
    a->opts.window_all = ts_cli_window_all();
    return 0;
}

static double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * (double)part / (double)whole : 0; }

/* For a CPU-only rank the rank-level figures are those of its busiest thread
 * (the training loop's); every thread is listed under "threads". */
static const ts_thread_breakdown *busiest_thread(const ts_breakdown_rank *r)
{
    const ts_thread_breakdown *best = NULL;
    for (uint32_t i = 0; i < r->n_threads; i++)
        if (!best || r->threads[i].idle_ns < best->idle_ns) best = &r->threads[i];
    return best;
}

/* The temporal figures of a rank, GPU or CPU-only, in one shape. */
typedef struct temporal { int64_t span, idle, compute, non_compute, comm, memory; } temporal;

static temporal rank_temporal(const ts_breakdown_rank *r)
{
    if (r->has_gpu)
        return (temporal){r->span_ns, r->idle_ns, r->compute_ns, r->non_compute_ns, r->comm_ns, r->memory_ns};
    const ts_thread_breakdown *t = busiest_thread(r);
    if (!t) return (temporal){r->span_ns, r->span_ns, 0, 0, 0, 0};
    return (temporal){t->span_ns, t->idle_ns, t->compute_ns, t->comm_ns, t->comm_ns, 0};
}

/* ---- JSON ---- */
static void json_rank(ts_json *j, const ts_breakdown_rank *r)
{
    temporal tp = rank_temporal(r);
    ts__json_obj_begin(j);
    ts__json_kv_i64(j, "rank", r->rank);
    ts__json_kv_str(j, "basis", r->has_gpu ? "gpu" : "cpu_thread");
    ts__json_kv_us(j, "span_us", tp.span);
    ts__json_kv_us(j, "idle_us", tp.idle);
    ts__json_kv_us(j, "compute_us", tp.compute);
    ts__json_kv_us(j, "non_compute_us", tp.non_compute);
    ts__json_kv_us(j, "communication_us", tp.comm);
    ts__json_kv_us(j, "memory_us", tp.memory);
    ts__json_kv_double(j, "idle_pct", pct(tp.idle, tp.span), 2);
    ts__json_kv_double(j, "compute_pct", pct(tp.compute, tp.span), 2);
    ts__json_kv_double(j, "non_compute_pct", pct(tp.non_compute, tp.span), 2);
    ts__json_key(j, "comm_comp_overlap_pct");
    if (r->comm_comp_overlap_pct >= 0) ts__json_double(j, r->comm_comp_overlap_pct, 2); else ts__json_null(j);
    ts__json_kv_bool(j, "iterations_filtered", r->iterations_filtered);
    ts__json_obj_end(j);
}

/* HTA's get_gpu_kernel_breakdown sums the kernel-type times over all ranks;
 * with more than one rank a rank -1 row set gives that total. */
static void all_ranks_types(const ts_breakdown *b, int64_t out[8])
{
    memset(out, 0, 8 * sizeof *out);
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (int m = 1; m < 8; m++) out[m] += b->ranks[i].type_ns[m];
}

static void json_types_of(ts_json *j, int32_t rank, const int64_t type_ns[8])
{
    int64_t all = 0;
    for (int m = 1; m < 8; m++) all += type_ns[m];
    for (int m = 1; m < 8; m++) {
        if (!type_ns[m]) continue;
        ts__json_obj_begin(j);
        ts__json_kv_i64(j, "rank", rank);
        ts__json_kv_str(j, "kernel_type", combo_names[m]);
        ts__json_kv_us(j, "time_us", type_ns[m]);
        ts__json_kv_double(j, "pct", pct(type_ns[m], all), 2);
        ts__json_obj_end(j);
    }
}

static void json_kernel_types(ts_json *j, const ts_breakdown *b)
{
    ts__json_key(j, "kernel_types");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < b->n_ranks; i++) json_types_of(j, b->ranks[i].rank, b->ranks[i].type_ns);
    if (b->n_ranks > 1) {
        int64_t total[8];
        all_ranks_types(b, total);
        json_types_of(j, -1, total);
    }
    ts__json_arr_end(j);
}

static void json_kernels(ts_json *j, const ts_breakdown *b)
{
    ts__json_key(j, "kernels");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_kernels; k++) {
            const ts_kernel_share *s = &b->ranks[i].kernels[k];
            ts__json_obj_begin(j);
            ts__json_kv_i64(j, "rank", b->ranks[i].rank);
            ts__json_kv_str(j, "kernel_type", ts_kernel_type_name(s->type));
            ts__json_kv_str(j, "name", s->name);
            ts__json_kv_u64(j, "count", s->count);
            ts__json_kv_us(j, "total_us", s->total_ns);
            ts__json_kv_double(j, "mean_us", s->mean_ns / 1e3, 3);
            ts__json_kv_us(j, "min_us", s->min_ns);
            ts__json_kv_us(j, "max_us", s->max_ns);
            ts__json_kv_double(j, "stddev_us", s->stddev_ns / 1e3, 3);
            ts__json_kv_double(j, "pct_of_type", s->pct_of_type, 2);
            ts__json_obj_end(j);
        }
    ts__json_arr_end(j);
}

static void json_streams(ts_json *j, const ts_breakdown *b)
{
    ts__json_key(j, "streams");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_streams; k++) {
            const ts_stream_breakdown *s = &b->ranks[i].streams[k];
            ts__json_obj_begin(j);
            ts__json_kv_i64(j, "rank", b->ranks[i].rank);
            ts__json_kv_i64(j, "device", s->device);
            ts__json_kv_i64(j, "stream", s->stream);
            ts__json_kv_u64(j, "ops", s->n_ops);
            ts__json_kv_us(j, "busy_us", s->busy_ns);
            ts__json_kv_us(j, "host_wait_us", s->host_wait_ns);
            ts__json_kv_us(j, "kernel_wait_us", s->kernel_wait_ns);
            ts__json_kv_us(j, "other_wait_us", s->other_wait_ns);
            ts__json_kv_u64(j, "queue_points", s->queue_points);
            ts__json_kv_double(j, "queue_mean", s->queue_mean, 3);
            ts__json_kv_i64(j, "queue_max", s->queue_max);
            ts__json_obj_end(j);
        }
    ts__json_arr_end(j);
}

static void json_launches(ts_json *j, const ts_breakdown *b)
{
    ts__json_key(j, "launches");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < b->n_ranks; i++) {
        const ts_breakdown_rank *r = &b->ranks[i];
        if (!r->has_gpu) continue;
        ts__json_obj_begin(j);
        ts__json_kv_i64(j, "rank", r->rank);
        ts__json_kv_u64(j, "count", r->n_launches);
        ts__json_kv_double(j, "launch_delay_mean_us", r->launch_delay_mean_ns / 1e3, 3);
        ts__json_kv_double(j, "launch_delay_median_us", r->launch_delay_median_ns / 1e3, 3);
        ts__json_kv_us(j, "launch_delay_max_us", r->launch_delay_max_ns);
        ts__json_kv_double(j, "runtime_mean_us", r->runtime_mean_ns / 1e3, 3);
        ts__json_kv_double(j, "gpu_mean_us", r->gpu_mean_ns / 1e3, 3);
        ts__json_kv_u64(j, "gpu_shorter_than_runtime", r->n_gpu_shorter_than_runtime);
        ts__json_kv_u64(j, "runtime_over_50us", r->n_runtime_outliers);
        ts__json_kv_u64(j, "delay_over_100us", r->n_delay_outliers);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
}

static void json_membw_threads(ts_json *j, const ts_breakdown *b)
{
    ts__json_key(j, "memory_bandwidth");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_membw; k++) {
            const ts_membw *m = &b->ranks[i].membw[k];
            ts__json_obj_begin(j);
            ts__json_kv_i64(j, "rank", b->ranks[i].rank);
            ts__json_kv_str(j, "kind", m->kind);
            ts__json_kv_u64(j, "count", m->count);
            ts__json_kv_u64(j, "bytes", m->bytes);
            ts__json_kv_us(j, "time_us", m->dur_ns);
            ts__json_kv_double(j, "gbps", m->gbps, 3);
            ts__json_kv_double(j, "max_gbps", m->max_gbps, 3);
            ts__json_obj_end(j);
        }
    ts__json_arr_end(j);
    ts__json_key(j, "threads");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_threads; k++) {
            const ts_thread_breakdown *t = &b->ranks[i].threads[k];
            ts__json_obj_begin(j);
            ts__json_kv_i64(j, "rank", b->ranks[i].rank);
            ts__json_kv_i64(j, "pid", t->pid);
            ts__json_kv_i64(j, "tid", t->tid);
            ts__json_kv_us(j, "span_us", t->span_ns);
            ts__json_kv_us(j, "compute_us", t->compute_ns);
            ts__json_kv_us(j, "communication_us", t->comm_ns);
            ts__json_kv_us(j, "idle_us", t->idle_ns);
            ts__json_obj_end(j);
        }
    ts__json_arr_end(j);
}

/* "stragglers": per rank, pairs, iterations, and every matched collective's lateness per rank. */
static void json_stragglers(ts_json *j, const ts_stragglers *st)
{
    ts__json_key(j, "stragglers");
    ts__json_obj_begin(j);
    ts__json_kv_us(j, "total_wait_us", st->total_wait_ns);
    ts__json_key(j, "ranks");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < st->n_ranks; i++) {
        const ts_straggler_rank *r = &st->ranks[i];
        ts__json_obj_begin(j);
        ts__json_kv_i64(j, "rank", r->rank);
        ts__json_kv_u64(j, "collectives", r->n_colls);
        ts__json_kv_u64(j, "last", r->n_last);
        ts__json_kv_us(j, "late_us", r->late_ns);
        ts__json_kv_us(j, "max_late_us", r->max_late_ns);
        ts__json_kv_us(j, "waited_us", r->waited_ns);
        ts__json_kv_us(j, "caused_us", r->caused_ns);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
    ts__json_key(j, "waits");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < st->n_pairs; i++) {
        ts__json_obj_begin(j);
        ts__json_kv_i64(j, "waiter", st->pairs[i].waiter);
        ts__json_kv_i64(j, "straggler", st->pairs[i].straggler);
        ts__json_kv_u64(j, "collectives", st->pairs[i].n);
        ts__json_kv_us(j, "wait_us", st->pairs[i].wait_ns);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
    ts__json_key(j, "iterations");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < st->n_iters; i++) {
        ts__json_obj_begin(j);
        ts__json_kv_i64(j, "iteration", st->iters[i].step);
        ts__json_kv_i64(j, "rank", st->iters[i].rank);
        ts__json_kv_u64(j, "collectives", st->iters[i].n_colls);
        ts__json_kv_us(j, "waited_us", st->iters[i].waited_ns);
        ts__json_kv_us(j, "caused_us", st->iters[i].caused_ns);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
    ts__json_key(j, "collectives");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < st->n_colls; i++) {
        const ts_straggler_coll *c = &st->colls[i];
        ts__json_obj_begin(j);
        ts__json_kv_str(j, "name", c->name);
        ts__json_kv_i64(j, "ordinal", c->ordinal);
        ts__json_kv_i64(j, "iteration", c->step);
        ts__json_kv_i64(j, "last_rank", c->last_rank);
        ts__json_kv_us(j, "spread_us", c->spread_ns);
        ts__json_key(j, "late_us");
        ts__json_obj_begin(j);
        for (uint32_t k = c->first_late; k < c->first_late + c->n_late; k++) {
            char key[16];
            snprintf(key, sizeof key, "%d", st->late[k].rank);
            ts__json_kv_us(j, key, st->late[k].late_ns);
        }
        ts__json_obj_end(j);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
    ts__json_obj_end(j);
}

static void print_json(const ts_trace *t, const ts_graph *g, const char *why, const ts_breakdown *b,
                       const ts_stragglers *st)
{
    ts_buf buf;
    ts__buf_init(&buf);
    ts_json j;
    ts__json_init(&j, &buf);
    ts__json_obj_begin(&j);
    ts__json_key(&j, "ranks");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < b->n_ranks; i++) json_rank(&j, &b->ranks[i]);
    ts__json_arr_end(&j);
    json_kernel_types(&j, b);
    json_kernels(&j, b);
    json_streams(&j, b);
    json_launches(&j, b);
    json_membw_threads(&j, b);
    if (st) json_stragglers(&j, st);
    ts__report_warnings_json_open(&j, t);
    ts__report_warnings_json_graph(&j, g);   /* the stragglers' graph, NULL with one rank */
    if (why[0]) ts__report_warning_json_line(&j, "breakdown", why);
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    ts__buf_add(&buf, "\n", 1);
    fwrite(buf.s, 1, buf.len, stdout);
    ts__buf_free(&buf);
}

/* ---- CSV (long form) ---- */
static void csv_row(const char *section, int32_t rank, const char *key, const char *metric, double value)
{
    printf("%s,%d,", section, rank);
    ts_csv_field(stdout, key);
    printf(",%s,%.3f\n", metric, value);
}

static void print_csv(const ts_breakdown *b)
{
    puts("section,rank,key,metric,value");
    for (uint32_t i = 0; i < b->n_ranks; i++) {
        const ts_breakdown_rank *r = &b->ranks[i];
        temporal tp = rank_temporal(r);
        const char *key = r->has_gpu ? "gpu" : "cpu_thread";
        csv_row("temporal", r->rank, key, "span_us", tp.span / 1e3);
        csv_row("temporal", r->rank, key, "idle_us", tp.idle / 1e3);
        csv_row("temporal", r->rank, key, "compute_us", tp.compute / 1e3);
        csv_row("temporal", r->rank, key, "non_compute_us", tp.non_compute / 1e3);
        csv_row("temporal", r->rank, key, "communication_us", tp.comm / 1e3);
        csv_row("temporal", r->rank, key, "memory_us", tp.memory / 1e3);
        if (r->comm_comp_overlap_pct >= 0) csv_row("temporal", r->rank, key, "comm_comp_overlap_pct", r->comm_comp_overlap_pct);
        for (int m = 1; m < 8; m++)
            if (r->type_ns[m]) csv_row("kernel_type", r->rank, combo_names[m], "time_us", r->type_ns[m] / 1e3);
        for (uint32_t k = 0; k < r->n_kernels; k++) {
            csv_row("kernel", r->rank, r->kernels[k].name, "total_us", r->kernels[k].total_ns / 1e3);
            csv_row("kernel", r->rank, r->kernels[k].name, "pct_of_type", r->kernels[k].pct_of_type);
        }
        for (uint32_t k = 0; k < r->n_streams; k++) {
            char s[32];
            snprintf(s, sizeof s, "%lld", (long long)r->streams[k].stream);
            csv_row("stream", r->rank, s, "host_wait_us", r->streams[k].host_wait_ns / 1e3);
            csv_row("stream", r->rank, s, "kernel_wait_us", r->streams[k].kernel_wait_ns / 1e3);
            csv_row("stream", r->rank, s, "other_wait_us", r->streams[k].other_wait_ns / 1e3);
            csv_row("stream", r->rank, s, "queue_mean", r->streams[k].queue_mean);
            csv_row("stream", r->rank, s, "queue_max", (double)r->streams[k].queue_max);
        }
        if (r->has_gpu) {
            csv_row("launch", r->rank, "all", "count", (double)r->n_launches);
            csv_row("launch", r->rank, "all", "launch_delay_mean_us", r->launch_delay_mean_ns / 1e3);
            csv_row("launch", r->rank, "all", "launch_delay_median_us", r->launch_delay_median_ns / 1e3);
        }
        for (uint32_t k = 0; k < r->n_membw; k++) csv_row("memory_bandwidth", r->rank, r->membw[k].kind, "gbps", r->membw[k].gbps);
        for (uint32_t k = 0; k < r->n_threads; k++) {
            char s[32];
            snprintf(s, sizeof s, "%lld", (long long)r->threads[k].tid);
            csv_row("thread", r->rank, s, "compute_us", r->threads[k].compute_ns / 1e3);
            csv_row("thread", r->rank, s, "communication_us", r->threads[k].comm_ns / 1e3);
            csv_row("thread", r->rank, s, "idle_us", r->threads[k].idle_ns / 1e3);
        }
    }
}

/* ---- table ---- */
typedef int (*fill_fn)(ts_table *tb, const ts_breakdown *b);

/* Build a table with `cols`, let fill add rows, print it under a title when
 * it has any. */
static int section(const char *title, const ts_col *cols, int n_cols, fill_fn fill, const ts_breakdown *b)
{
    ts_table *tb = ts_table_create(cols, n_cols);
    if (!tb) return TS_ENOMEM;
    int rows = fill(tb, b);
    int rc = rows < 0 ? TS_ENOMEM : TS_OK;
    if (rows > 0) {
        printf("\n%s\n", title);
        rc = ts_table_write(tb, stdout);
    }
    ts_table_destroy(tb);
    return rc;
}

#define ROW(tb, ...) do { const char *cells_[] = {__VA_ARGS__}; if (ts_table_add_row(tb, cells_)) return -1; n++; } while (0)
#define DUR(buf, ns) ts_report_duration((double)(ns), buf, sizeof buf)

static int fill_temporal(ts_table *tb, const ts_breakdown *b)
{
    int n = 0;
    for (uint32_t i = 0; i < b->n_ranks; i++) {
        const ts_breakdown_rank *r = &b->ranks[i];
        temporal tp = rank_temporal(r);
        char rk[16], sp[16], id[16], cp[16], nc[16], cm[16], me[16], ov[16];
        snprintf(rk, sizeof rk, "%d", r->rank);
        snprintf(id, sizeof id, "%.1f", pct(tp.idle, tp.span));
        snprintf(cp, sizeof cp, "%.1f", pct(tp.compute, tp.span));
        snprintf(nc, sizeof nc, "%.1f", pct(tp.non_compute, tp.span));
        snprintf(ov, sizeof ov, r->comm_comp_overlap_pct >= 0 ? "%.1f" : "-", r->comm_comp_overlap_pct);
        ROW(tb, rk, r->has_gpu ? "gpu" : "cpu", DUR(sp, tp.span), id, cp, nc, DUR(cm, tp.comm), DUR(me, tp.memory), ov);
    }
    return n;
}

static int types_rows(ts_table *tb, const char *rank, const int64_t type_ns[8])
{
    int n = 0;
    int64_t all = 0;
    for (int m = 1; m < 8; m++) all += type_ns[m];
    for (int m = 1; m < 8; m++) {
        if (!type_ns[m]) continue;
        char t[16], p[16];
        snprintf(p, sizeof p, "%.1f", pct(type_ns[m], all));
        ROW(tb, rank, combo_names[m], DUR(t, type_ns[m]), p);
    }
    return n;
}

static int fill_types(ts_table *tb, const ts_breakdown *b)
{
    int n = 0, k;
    for (uint32_t i = 0; i < b->n_ranks; i++) {
        char rk[16];
        snprintf(rk, sizeof rk, "%d", b->ranks[i].rank);
        if ((k = types_rows(tb, rk, b->ranks[i].type_ns)) < 0) return -1;
        n += k;
    }
    if (b->n_ranks > 1) {
        int64_t total[8];
        all_ranks_types(b, total);
        if ((k = types_rows(tb, "all", total)) < 0) return -1;
        n += k;
    }
    return n;
}

static int fill_kernels(ts_table *tb, const ts_breakdown *b)
{
    static const char *const abbr[TS_KT_COUNT] = {"comp", "comm", "mem"};
    int n = 0;
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_kernels; k++) {
            const ts_kernel_share *s = &b->ranks[i].kernels[k];
            char rk[16], c[24], t[16], m[16], p[16];
            snprintf(rk, sizeof rk, "%d", b->ranks[i].rank);
            snprintf(c, sizeof c, "%llu", (unsigned long long)s->count);
            snprintf(p, sizeof p, "%.1f", s->pct_of_type);
            ROW(tb, rk, abbr[s->type], s->name, c, DUR(t, s->total_ns), DUR(m, s->mean_ns), p);
        }
    return n;
}

static int fill_streams(ts_table *tb, const ts_breakdown *b)
{
    int n = 0;
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_streams; k++) {
            const ts_stream_breakdown *s = &b->ranks[i].streams[k];
            char rk[16], st[24], ops[24], hw[16], kw[16], ow[16], qm[16], qx[24];
            snprintf(rk, sizeof rk, "%d", b->ranks[i].rank);
            snprintf(st, sizeof st, "%d:%lld", s->device, (long long)s->stream);
            snprintf(ops, sizeof ops, "%llu", (unsigned long long)s->n_ops);
            snprintf(qm, sizeof qm, "%.2f", s->queue_mean);
            snprintf(qx, sizeof qx, "%lld", (long long)s->queue_max);
            ROW(tb, rk, st, ops, DUR(hw, s->host_wait_ns), DUR(kw, s->kernel_wait_ns), DUR(ow, s->other_wait_ns), qm, qx);
        }
    return n;
}

static int fill_launches(ts_table *tb, const ts_breakdown *b)
{
    int n = 0;
    for (uint32_t i = 0; i < b->n_ranks; i++) {
        const ts_breakdown_rank *r = &b->ranks[i];
        if (!r->has_gpu) continue;
        char rk[16], c[24], dm[16], dd[16], dx[16], rm[16], gm[16], sh[24];
        snprintf(rk, sizeof rk, "%d", r->rank);
        snprintf(c, sizeof c, "%llu", (unsigned long long)r->n_launches);
        snprintf(sh, sizeof sh, "%llu", (unsigned long long)r->n_gpu_shorter_than_runtime);
        ROW(tb, rk, c, DUR(dm, r->launch_delay_mean_ns), DUR(dd, r->launch_delay_median_ns), DUR(dx, r->launch_delay_max_ns),
            DUR(rm, r->runtime_mean_ns), DUR(gm, r->gpu_mean_ns), sh);
    }
    return n;
}

static int fill_membw(ts_table *tb, const ts_breakdown *b)
{
    int n = 0;
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_membw; k++) {
            const ts_membw *m = &b->ranks[i].membw[k];
            char rk[16], c[24], by[32], g[24], gx[24];
            snprintf(rk, sizeof rk, "%d", b->ranks[i].rank);
            snprintf(c, sizeof c, "%llu", (unsigned long long)m->count);
            snprintf(by, sizeof by, "%llu", (unsigned long long)m->bytes);
            snprintf(g, sizeof g, "%.2f", m->gbps);
            snprintf(gx, sizeof gx, "%.2f", m->max_gbps);
            ROW(tb, rk, m->kind, c, by, g, gx);
        }
    return n;
}

static int fill_threads(ts_table *tb, const ts_breakdown *b)
{
    int n = 0;
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_threads; k++) {
            const ts_thread_breakdown *t = &b->ranks[i].threads[k];
            char rk[16], tid[24], sp[16], cp[16], cm[16], id[16], ip[16];
            snprintf(rk, sizeof rk, "%d", b->ranks[i].rank);
            snprintf(tid, sizeof tid, "%lld", (long long)t->tid);
            snprintf(ip, sizeof ip, "%.1f", pct(t->idle_ns, t->span_ns));
            ROW(tb, rk, tid, DUR(sp, t->span_ns), DUR(cp, t->compute_ns), DUR(cm, t->comm_ns), DUR(id, t->idle_ns), ip);
        }
    return n;
}

/* Name columns get what `width` leaves after the fixed columns (0 = all). */
static int name_width(int width, int fixed) { return width ? (width - fixed > 8 ? width - fixed : 8) : 0; }

static int print_table(const ts_breakdown *b, int width)
{
    static const ts_col temporal_cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"basis", TS_ALIGN_LEFT, 0}, {"span", TS_ALIGN_RIGHT, 0},
        {"idle%", TS_ALIGN_RIGHT, 0}, {"compute%", TS_ALIGN_RIGHT, 0}, {"non-comp%", TS_ALIGN_RIGHT, 0},
        {"comm", TS_ALIGN_RIGHT, 0}, {"memory", TS_ALIGN_RIGHT, 0}, {"overlap%", TS_ALIGN_RIGHT, 0},
    };
    const ts_col type_cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"kernel type", TS_ALIGN_LEFT, name_width(width, 24)}, {"time", TS_ALIGN_RIGHT, 0}, {"%", TS_ALIGN_RIGHT, 0},
    };
    const ts_col kernel_cols[] = {   /* fixed: rank 4, type 4, count 5, two durations, %type, six gaps */
        {"rank", TS_ALIGN_RIGHT, 0}, {"type", TS_ALIGN_LEFT, 0}, {"kernel", TS_ALIGN_LEFT, name_width(width, 44)},
        {"count", TS_ALIGN_RIGHT, 0}, {"total", TS_ALIGN_RIGHT, 0}, {"mean", TS_ALIGN_RIGHT, 0}, {"%type", TS_ALIGN_RIGHT, 0},
    };
    static const ts_col stream_cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"dev:stream", TS_ALIGN_LEFT, 0}, {"ops", TS_ALIGN_RIGHT, 0},
        {"host wait", TS_ALIGN_RIGHT, 0}, {"kernel wait", TS_ALIGN_RIGHT, 0}, {"other", TS_ALIGN_RIGHT, 0},
        {"queue mean", TS_ALIGN_RIGHT, 0}, {"max", TS_ALIGN_RIGHT, 0},
    };
    static const ts_col launch_cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"launches", TS_ALIGN_RIGHT, 0}, {"delay mean", TS_ALIGN_RIGHT, 0},
        {"median", TS_ALIGN_RIGHT, 0}, {"max", TS_ALIGN_RIGHT, 0}, {"call mean", TS_ALIGN_RIGHT, 0},
        {"op mean", TS_ALIGN_RIGHT, 0}, {"op<call", TS_ALIGN_RIGHT, 0},
    };
    static const ts_col membw_cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"kind", TS_ALIGN_LEFT, 0}, {"count", TS_ALIGN_RIGHT, 0},
        {"bytes", TS_ALIGN_RIGHT, 0}, {"GB/s", TS_ALIGN_RIGHT, 0}, {"max GB/s", TS_ALIGN_RIGHT, 0},
    };
    static const ts_col thread_cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"tid", TS_ALIGN_RIGHT, 0}, {"span", TS_ALIGN_RIGHT, 0},
        {"compute", TS_ALIGN_RIGHT, 0}, {"comm", TS_ALIGN_RIGHT, 0}, {"idle", TS_ALIGN_RIGHT, 0}, {"idle%", TS_ALIGN_RIGHT, 0},
    };
#define N(c) (int)(sizeof c / sizeof c[0])
    int rc;
    if ((rc = section("temporal breakdown (GPU span of complete iterations; CPU-only: busiest thread)",
                      temporal_cols, N(temporal_cols), fill_temporal, b)) ||
        (rc = section("kernel types", type_cols, N(type_cols), fill_types, b)) ||
        (rc = section("top kernels per type", kernel_cols, N(kernel_cols), fill_kernels, b)) ||
        (rc = section("idle time and queue length per stream", stream_cols, N(stream_cols), fill_streams, b)) ||
        (rc = section("kernel launches (delay = op start - runtime call start)", launch_cols, N(launch_cols), fill_launches, b)) ||
        (rc = section("memcpy/memset bandwidth", membw_cols, N(membw_cols), fill_membw, b)) ||
        (rc = section("CPU threads", thread_cols, N(thread_cols), fill_threads, b)))
        return rc;
#undef N
    return TS_OK;
}

/* Straggler tables: per rank, who waited for whom (top 10), per iteration. */
static int print_stragglers(const ts_stragglers *st)
{
    char a[6][32];
    printf("\nstragglers (collectives matched across ranks, on aligned clocks): %u instances, "
           "ranks waited %s in all\n", st->n_colls, (ts_report_duration((double)st->total_wait_ns, a[0], 32), a[0]));
    printf("%5s %7s %6s %10s %10s %10s %10s\n", "rank", "colls", "last", "late", "max late", "waited", "caused");
    for (uint32_t i = 0; i < st->n_ranks; i++) {
        const ts_straggler_rank *r = &st->ranks[i];
        ts_report_duration((double)r->late_ns, a[0], 32);
        ts_report_duration((double)r->max_late_ns, a[1], 32);
        ts_report_duration((double)r->waited_ns, a[2], 32);
        ts_report_duration((double)r->caused_ns, a[3], 32);
        printf("%5d %7u %6u %10s %10s %10s %10s\n", r->rank, r->n_colls, r->n_last, a[0], a[1], a[2], a[3]);
    }
    if (st->n_pairs) printf("\nwho waited for whom\n%6s %9s %7s %10s\n", "waiter", "straggler", "colls", "waited");
    for (uint32_t i = 0; i < st->n_pairs && i < 10; i++) {
        ts_report_duration((double)st->pairs[i].wait_ns, a[0], 32);
        printf("%6d %9d %7u %10s\n", st->pairs[i].waiter, st->pairs[i].straggler, st->pairs[i].n, a[0]);
    }
    if (st->n_pairs > 10) printf("... %u more pairs (json has all)\n", st->n_pairs - 10);
    if (st->n_iters) printf("\nper iteration\n%9s %5s %7s %10s %10s\n", "iteration", "rank", "colls", "waited", "caused");
    for (uint32_t i = 0; i < st->n_iters; i++) {
        ts_report_duration((double)st->iters[i].waited_ns, a[0], 32);
        ts_report_duration((double)st->iters[i].caused_ns, a[1], 32);
        if (st->iters[i].step >= 0) snprintf(a[2], 32, "%lld", (long long)st->iters[i].step);
        else snprintf(a[2], 32, "-");
        printf("%9s %5d %7u %10s %10s\n", a[2], st->iters[i].rank, st->iters[i].n_colls, a[0], a[1]);
    }
    return ferror(stdout) ? TS_EIO : TS_OK;
}

/* Stragglers of a multi-rank trace, through the global graph (matched
 * collectives, aligned clocks). NULL with one rank, or when the graph cannot
 * be built (then *why says so, a warning; the rest of the breakdown stands). */
static ts_stragglers *stragglers_of(const ts_trace *t, ts_graph **g, char *why, size_t why_size)
{
    *g = NULL;
    if (ts_trace_n_ranks(t) < 2) return NULL;
    ts_stragglers *st = NULL;
    ts_error err = {0};
    if (ts_graph_create(t, NULL, g, &err) || ts_stragglers_compute(*g, &st, &err))
        snprintf(why, why_size, "no straggler report: %s", err.msg);
    if (st && st->n_colls == 0) { ts_stragglers_destroy(st); st = NULL; }
    return st;
}

/* Nothing to analyze: no rank has a GPU op or a CPU thread with work. */
static bool empty(const ts_breakdown *b)
{
    for (uint32_t i = 0; i < b->n_ranks; i++)
        if (b->ranks[i].has_gpu || b->ranks[i].n_threads) return false;
    return true;
}

int ts_cmd_breakdown(int argc, char **argv)
{
    bd_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_trace *t = NULL;
    if (ts_cli_load(argv + optind, argc - optind, a.marker, &t)) return TS_EXIT_BAD;
    ts_error err = {0};
    int rc;
    ts_breakdown *b = NULL;
    if ((rc = ts_breakdown_compute(t, &a.opts, &b, &err))) {
        ts_cli_errorf("%s", err.msg);
        ts_trace_destroy(t);
        return ts_cli_exit_for(rc);
    }
    int exit_code = TS_EXIT_OK;
    ts_graph *g = NULL;   /* lives as long as st, which borrows its names */
    char why[sizeof err.msg + 32] = "";   /* the stragglers' warning, "" when none */
    ts_stragglers *st = empty(b) ? NULL : stragglers_of(t, &g, why, sizeof why);
    if (why[0] && a.format != TS_FMT_JSON) fprintf(stderr, "trainscope: warning: %s\n", why);   /* json carries it inside */
    if (empty(b)) {
        ts_cli_errorf("breakdown: no GPU operation and no CPU slice to analyze");
        exit_code = TS_EXIT_NOTHING;
    } else if (a.format == TS_FMT_JSON) {
        print_json(t, g, why, b, st);
    } else if (a.format == TS_FMT_CSV) {
        ts__report_warnings_emit_graph(stderr, t, g, ts__report_warn_all(a.verbose));
        print_csv(b);
        for (uint32_t i = 0; st && i < st->n_ranks; i++) {
            csv_row("stragglers", st->ranks[i].rank, "", "waited_us", st->ranks[i].waited_ns / 1e3);
            csv_row("stragglers", st->ranks[i].rank, "", "caused_us", st->ranks[i].caused_ns / 1e3);
            csv_row("stragglers", st->ranks[i].rank, "", "late_us", st->ranks[i].late_ns / 1e3);
            csv_row("stragglers", st->ranks[i].rank, "", "last", st->ranks[i].n_last);
        }
    } else {
        ts__report_warnings_emit_graph(stderr, t, g, ts__report_warn_all(a.verbose));
        if (print_table(b, a.width) || (st && print_stragglers(st))) {
            ts_cli_errorf("writing the tables failed");
            exit_code = TS_EXIT_BAD;
        }
    }
    ts_stragglers_destroy(st);
    ts_graph_destroy(g);
    ts_breakdown_destroy(b);
    ts_trace_destroy(t);
    return exit_code;
}
