/* cmd_replay.c - `trainscope replay PATH...`: simulate the job's global
 * dependency graph, optionally with what-if edits, and compare the predicted
 * iteration time with the measured one.
 *
 * Thin: parse options, load, ts_replay_run, print, export. Exit: 0 ok,
 * 1 nothing to replay (no iteration on every rank), 2 bad input or usage.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "report/report_int.h"
#include "trainscope/ingest.h"
#include "trainscope/replay.h"
#include "trainscope/report.h"

enum { MAX_SCALES = 32 };

typedef struct replay_args {
    ts_replay_options opts;
    const char  *scales[MAX_SCALES];
    int          format;        /* TS_FMT_TABLE or TS_FMT_JSON */
    const char  *export_path;   /* --export, NULL = none */
    const char  *marker;        /* --iteration-marker, NULL = ProfilerStep# */
} replay_args;

static void usage(FILE *f)
{
    fputs("usage: trainscope replay [OPTIONS] PATH...\n\n"
          "Replay the job's global dependency graph in a discrete-event simulation (GPU\n"
          "streams run one op at a time, compute and communication streams overlap, CPU\n"
          "threads are serial, a rank's collectives share one channel) and compare the\n"
          "predicted iteration time with the measured one. An unmodified replay\n"
          "reproduces the trace; the what-if options predict a changed job.\n\n"
          "options:\n"
          "  --iterations N           compare only the first N iterations (default all)\n"
          "  --format table|json      output format (default table); json times are us\n"
          "  --export FILE            write the replayed schedule as a Chrome trace\n"
          "  --scale [KIND:]GLOB=F    multiply the time of matching ops by F (repeatable);\n"
          "                           KIND: cpu, launch, runtime, sync, kernel, compute,\n"
          "                           memcpy, memset, memory, comm, collective\n"
          "  --bucket-mb X            regroup the gradient all-reduces into X MiB buckets\n"
          "  --gradients FILE         gradients.json: parameter names and bytes in\n"
          "                           registration order (for --bucket-mb)\n"
          "  --trace-bucket-mb X      the bucket cap the trace was recorded with\n"
          "                           (default: inferred from its bucket count)\n"
          "  --no-contention          with --bucket-mb on a gloo (CPU) job: keep compute\n"
          "                           times as measured instead of re-timing them for\n"
          "                           their new overlap with the reductions\n"
          "  --world N                price collectives for N ranks\n"
          "  --bandwidth GBPS         price collectives at this bus bandwidth (GB/s)\n"
          "  --latency-us US          with --bandwidth: fixed cost per collective\n"
          "  --nccl-tests LOG         calibrate the cost model from an nccl-tests log\n"
          "  --iteration-marker NAME  slice-name prefix of iterations (ProfilerStep#)\n"
          "  -h, --help               this help\n\n"
          "exit codes: 0 ok, 1 nothing to replay, 2 bad input or usage\n", f);
}

static bool parse_double(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return end != s && !*end && *out >= 0;
}

static int parse_option(int c, replay_args *a)
{
    char *end;
    switch (c) {
    case 'i':
        a->opts.max_iterations = (uint32_t)strtoul(optarg, &end, 10);
        if (*end || end == optarg) { ts_cli_errorf("replay: --iterations wants a number, got '%s'", optarg); return -1; }
        return 0;
    case 'f':
        a->format = ts__report_format(optarg);
        if (a->format != TS_FMT_TABLE && a->format != TS_FMT_JSON) {
            ts_cli_errorf("replay: --format wants table or json, got '%s'", optarg);
            return -1;
        }
        return 0;
    case 'e': a->export_path = optarg; return 0;
    case 's':
        if (a->opts.n_scales == MAX_SCALES) { ts_cli_errorf("replay: at most %d --scale options", MAX_SCALES); return -1; }
        a->scales[a->opts.n_scales++] = optarg;
        return 0;
    case 'b':
        if (!parse_double(optarg, &a->opts.bucket_mb) || a->opts.bucket_mb <= 0) {
            ts_cli_errorf("replay: --bucket-mb wants a size in MiB > 0, got '%s'", optarg);
            return -1;
        }
        return 0;
    case 'g': a->opts.gradients_json = optarg; return 0;
    case 'C': a->opts.no_contention = 1; return 0;
    case 'T':
        if (!parse_double(optarg, &a->opts.trace_bucket_mb) || a->opts.trace_bucket_mb <= 0) {
            ts_cli_errorf("replay: --trace-bucket-mb wants a size in MiB > 0, got '%s'", optarg);
            return -1;
        }
        return 0;
    case 'w':
        a->opts.world = (uint32_t)strtoul(optarg, &end, 10);
        if (*end || end == optarg || a->opts.world == 0) { ts_cli_errorf("replay: --world wants a rank count, got '%s'", optarg); return -1; }
        return 0;
    case 'B':
        if (!parse_double(optarg, &a->opts.bandwidth_gbps) || a->opts.bandwidth_gbps <= 0) {
            ts_cli_errorf("replay: --bandwidth wants GB/s > 0, got '%s'", optarg);
            return -1;
        }
        return 0;
    case 'l':
        if (!parse_double(optarg, &a->opts.latency_us)) { ts_cli_errorf("replay: --latency-us wants a number, got '%s'", optarg); return -1; }
        return 0;
    case 'n': a->opts.nccl_tests_log = optarg; return 0;
    case 'm': a->marker = optarg; return 0;
    case 'h': usage(stdout); return 1;
    default: return -1;
    }
}

static int parse_args(int argc, char **argv, replay_args *a)
{
    static const struct option longopts[] = {
        {"iterations", required_argument, 0, 'i'}, {"format", required_argument, 0, 'f'},
        {"export", required_argument, 0, 'e'},     {"scale", required_argument, 0, 's'},
        {"bucket-mb", required_argument, 0, 'b'},  {"gradients", required_argument, 0, 'g'},
        {"trace-bucket-mb", required_argument, 0, 'T'}, {"no-contention", no_argument, 0, 'C'},
        {"world", required_argument, 0, 'w'},      {"bandwidth", required_argument, 0, 'B'},
        {"latency-us", required_argument, 0, 'l'}, {"nccl-tests", required_argument, 0, 'n'},
        {"iteration-marker", required_argument, 0, 'm'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->opts.size = sizeof a->opts;
    a->opts.scales = a->scales;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int rc = parse_option(c, a);
        if (rc > 0) return 1;
        if (rc < 0) {
            if (c == '?' || c == ':')
                ts_cli_errorf("replay: unknown or incomplete option '%s' (see 'trainscope replay --help')", argv[optind - 1]);
            return -1;
        }
    }
    if (ts_cli_need_trace("replay", optind, argc)) return -1;
    return 0;
}

static void print_json(const ts_replay *r)
{
    ts_buf b;
    ts__buf_init(&b);
    ts_json j;
    ts__json_init(&j, &b);
    ts__json_obj_begin(&j);
    ts__json_kv_us(&j, "measured_iteration_us", ts_replay_measured_iteration_ns(r));
    ts__json_kv_us(&j, "predicted_iteration_us", ts_replay_predicted_iteration_ns(r));
    ts__json_kv_double(&j, "error_pct", ts_replay_error_pct(r), 3);
    ts__json_kv_bool(&j, "what_if", ts_replay_is_what_if(r));   /* true: error_pct is the edit's change */
    ts__json_kv_u64(&j, "iterations", ts_replay_n_iterations(r));
    ts__json_key(&j, "per_iteration");
    ts__json_arr_begin(&j);
    for (uint32_t k = 0; k < ts_replay_n_iterations(r); k++) {
        ts_replay_iteration_info it;
        ts_replay_iteration(r, k, &it);
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "step", it.step);
        ts__json_kv_us(&j, "measured_us", it.measured_iteration_ns);
        ts__json_kv_us(&j, "predicted_us", it.predicted_iteration_ns);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__json_key(&j, "ranks");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < ts_replay_n_ranks(r); i++) {
        ts_replay_rank_info ri;
        ts_replay_rank(r, i, &ri);
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", ri.rank);
        ts__json_kv_us(&j, "measured_iteration_us", ri.measured_iteration_ns);
        ts__json_kv_us(&j, "predicted_iteration_us", ri.predicted_iteration_ns);
        ts__json_kv_us(&j, "clock_offset_us", ri.clock_offset_ns);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts_replay_stats st;
    ts_replay_get_stats(r, &st);
    ts__json_kv_u64(&j, "nodes", st.n_nodes);
    ts__json_kv_u64(&j, "edges", st.n_edges);
    ts__json_kv_u64(&j, "collectives", st.n_collectives);
    ts__json_key(&j, "warnings");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < ts_replay_n_warnings(r); i++) ts__json_str(&j, ts_replay_warning(r, i));
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    ts__buf_add(&b, "\n", 1);
    fwrite(b.s, 1, b.len, stdout);
    ts__buf_free(&b);
}

/* The least and greatest iteration beside the medians: steps of one run
 * differ by 5-20% on a shared machine, and a what-if's change smaller than
 * that spread is worth measuring before it is believed. With a what-if, its
 * change iteration by iteration too: when the least and greatest straddle
 * zero, the edit's sign rests on which iterations were traced. */
static void print_spread(const ts_replay *r, bool what_if)
{
    uint32_t n = ts_replay_n_iterations(r);
    if (n < 2) return;
    int64_t m_lo = INT64_MAX, m_hi = INT64_MIN, p_lo = INT64_MAX, p_hi = INT64_MIN;
    double ch_lo = INFINITY, ch_hi = -INFINITY;
    for (uint32_t k = 0; k < n; k++) {
        ts_replay_iteration_info it;
        ts_replay_iteration(r, k, &it);
        int64_t m = it.measured_iteration_ns, p = it.predicted_iteration_ns;
        if (m < m_lo) m_lo = m;
        if (m > m_hi) m_hi = m;
        if (p < p_lo) p_lo = p;
        if (p > p_hi) p_hi = p;
        if (m <= 0) continue;
        double ch = 100.0 * (double)(p - m) / (double)m;
        if (ch < ch_lo) ch_lo = ch;
        if (ch > ch_hi) ch_hi = ch;
    }
    char a[32], b[32], c[32], d[32];
    ts_report_duration((double)m_lo, a, sizeof a);
    ts_report_duration((double)m_hi, b, sizeof b);
    ts_report_duration((double)p_lo, c, sizeof c);
    ts_report_duration((double)p_hi, d, sizeof d);
    printf("per iteration, least to greatest of %u: measured %s to %s, %s %s to %s\n", n, a, b,
           what_if ? "with the what-if" : "predicted", c, d);
    if (what_if && ch_lo <= ch_hi) printf("change per iteration, least to greatest: %+.2f%% to %+.2f%%\n", ch_lo, ch_hi);
}

/* With a what-if, predicted minus measured is the change the edit makes,
 * not an error of the replay, and the table says so. */
static int print_table(const ts_replay *r)
{
    bool what_if = ts_replay_is_what_if(r);
    const ts_col cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"measured", TS_ALIGN_RIGHT, 0},
        {what_if ? "what-if" : "predicted", TS_ALIGN_RIGHT, 0},
        {what_if ? "change %" : "error %", TS_ALIGN_RIGHT, 0}, {"clock offset", TS_ALIGN_RIGHT, 0},
    };
    ts_table *tb = ts_table_create(cols, 5);
    if (!tb) return TS_ENOMEM;
    int rc = TS_OK;
    for (uint32_t i = 0; rc == TS_OK && i < ts_replay_n_ranks(r); i++) {
        ts_replay_rank_info ri;
        ts_replay_rank(r, i, &ri);
        char c[5][32];
        snprintf(c[0], sizeof c[0], "%d", ri.rank);
        ts_report_duration((double)ri.measured_iteration_ns, c[1], sizeof c[1]);
        ts_report_duration((double)ri.predicted_iteration_ns, c[2], sizeof c[2]);
        double e = ri.measured_iteration_ns ? 100.0 * (double)(ri.predicted_iteration_ns - ri.measured_iteration_ns) /
                                                  (double)ri.measured_iteration_ns : 0;
        snprintf(c[3], sizeof c[3], "%+.2f", e);
        ts_report_duration((double)ri.clock_offset_ns, c[4], sizeof c[4]);
        const char *cells[5] = {c[0], c[1], c[2], c[3], c[4]};
        rc = ts_table_add_row(tb, cells);
    }
    if (rc == TS_OK) rc = ts_table_write(tb, stdout);
    ts_table_destroy(tb);
    char m[32], p[32];
    ts_report_duration((double)ts_replay_measured_iteration_ns(r), m, sizeof m);
    ts_report_duration((double)ts_replay_predicted_iteration_ns(r), p, sizeof p);
    if (what_if)
        printf("\niteration (median of %u, slowest rank): measured %s as traced, %s with the what-if, change %+.2f%%\n",
               ts_replay_n_iterations(r), m, p, ts_replay_error_pct(r));
    else
        printf("\niteration (median of %u, slowest rank): measured %s, predicted %s, error %+.2f%%\n",
               ts_replay_n_iterations(r), m, p, ts_replay_error_pct(r));
    print_spread(r, what_if);
    fflush(stdout);   /* the table before its warnings, also when both go down one pipe */
    for (uint32_t i = 0; i < ts_replay_n_warnings(r); i++)
        fprintf(stderr, "trainscope: warning: %s\n", ts_replay_warning(r, i));
    return rc;
}

int ts_cmd_replay(int argc, char **argv)
{
    replay_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_trace *t = NULL;
    if (ts_cli_load(argv + optind, argc - optind, a.marker, &t) != TS_EXIT_OK) return TS_EXIT_BAD;
    ts_error err = {0};
    ts_replay *r = NULL;
    int rc = ts_replay_run(t, &a.opts, &r, &err);
    if (rc) {
        ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
        ts_trace_destroy(t);
        return ts_cli_exit_for(rc);
    }
    if (a.format == TS_FMT_JSON) print_json(r);
    else rc = print_table(r);
    if (rc == TS_OK && a.export_path) {
        rc = ts_replay_export_chrome(r, a.export_path, &err);
        if (rc) ts_cli_errorf("%s", err.msg);
    } else if (rc) {
        ts_cli_errorf("writing the table failed: %s", ts_strerror(rc));
    }
    ts_replay_destroy(r);
    ts_trace_destroy(t);
    return rc ? TS_EXIT_BAD : TS_EXIT_OK;
}
