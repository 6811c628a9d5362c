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
#include "core/core.h"
#include "report/report_int.h"
#include "trainscope/ingest.h"
#include "trainscope/optimize.h"
#include "trainscope/replay.h"
#include "trainscope/report.h"

enum { MAX_SCALES = 32 };

typedef struct replay_args {
    ts_replay_options opts;
    const char  *scales[MAX_SCALES];
    int          format;        /* TS_FMT_TABLE or TS_FMT_JSON */
    const char  *export_path;   /* --export, NULL = none */
    const char  *marker;        /* --iteration-marker, NULL = ProfilerStep# */
    bool         windows;       /* --windows: each PATH is one window of the job */
    bool         verbose;       /* --verbose: every warning line, also on a terminal */
    const char  *plan_path;     /* --plan plan.json, NULL = none */
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
          "                           registration order (for --bucket-mb, and the\n"
          "                           sizes of gradient all-reduces a trace lacks)\n"
          "  --trace-bucket-mb X      the bucket cap the trace was recorded with\n"
          "                           (default: inferred from its bucket count)\n"
"  --plan FILE              re-predict a plan of `trainscope optimize` (plan.json;\n"
          "                           with --gradients, and any other what-if)\n"
          "  --no-contention          with --bucket-mb on a gloo (CPU) job: keep compute\n"
          "                           times as measured instead of re-timing them for\n"
          "                           their new overlap with the reductions\n"
          "  --world N                price collectives for N ranks\n"
          "  --bandwidth GBPS         price collectives at this bus bandwidth (GB/s);\n"
          "                           xF: F times what the trace's collectives achieved\n"
          "  --latency-us US          with --bandwidth: fixed cost per collective;\n"
          "                           xF: F times the fixed cost of the trace's\n"
          "                           collectives (calibrated by --nccl-tests, else\n"
          "                           fitted on the trace)\n"
          "  --nccl-tests LOG         calibrate the cost model from an nccl-tests log\n"
          "  --profiler-overhead-us US  the profiler's cost per recorded CPU op, taken\n"
          "                           off the trace: predicts the unprofiled run\n"
          "  --iteration-marker NAME  slice-name prefix of iterations (ProfilerStep#)\n"
          "  --windows                each PATH is one profiling window of the job (a\n"
          "                           directory of its rank files, or one file): each\n"
          "                           is replayed alone and the figures are the medians\n"
          "                           over the windows\n"
          TS_CLI_COMMON_HELP TS_CLI_GRAPH_HELP
          "  -v, --verbose            every warning line (on a terminal they fold into\n"
          "                           one line per kind, summed over ranks)\n"
          "  -h, --help               this help\n\n"
          "exit codes: 0 ok, 1 nothing to replay, 2 bad input or usage\n", f);
}

/* Ranges of the numeric options: wide enough for any real job, narrow
 * enough that every time derived from them stays within int64 ns (a bucket
 * of 1 TiB at 1 MB/s is 1.1e15 ns). */
#define MIB_MAX   1048576.0   /* --bucket-mb, --trace-bucket-mb: 1 TiB */
#define GBPS_MIN  1e-3        /* --bandwidth: 1 MB/s */
#define GBPS_MAX  1e6
#define US_MAX    1e9         /* --latency-us: 1000 s */
#define WORLD_MAX (1 << 20)   /* --world: ranks */
enum { OPT_PLAN = 0x2001 };   /* --plan: long only */
#define FACTOR_MIN 1e-6       /* --bandwidth xF, --latency-us xF */
#define FACTOR_MAX 1e6

static int parse_option(int c, replay_args *a)
{
    int64_t v;
    switch (c) {
    case 'i': return ts_cli_opt_count("replay", "--iterations", optarg, &a->opts.max_iterations);
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
        if (ts_cli_opt_real("replay", "--bucket-mb", optarg, 0, MIB_MAX, &a->opts.bucket_mb)) return -1;
        if (a->opts.bucket_mb > 0) return 0;
        ts_cli_errorf("replay: --bucket-mb wants a size in MiB > 0, got '%s'", optarg);
        return -1;
    case 'g': a->opts.gradients_json = optarg; return 0;
    case 'C': a->opts.no_contention = 1; return 0;
    case 'T':
        if (ts_cli_opt_real("replay", "--trace-bucket-mb", optarg, 0, MIB_MAX, &a->opts.trace_bucket_mb)) return -1;
        if (a->opts.trace_bucket_mb > 0) return 0;
        ts_cli_errorf("replay: --trace-bucket-mb wants a size in MiB > 0, got '%s'", optarg);
        return -1;
    case 'w':
        if (ts_cli_opt_int("replay", "--world", optarg, 1, WORLD_MAX, &v)) return -1;
        a->opts.world = (uint32_t)v;
        return 0;
    case 'B':
        if (optarg[0] == 'x')
            return ts_cli_opt_real("replay", "--bandwidth xF", optarg + 1, FACTOR_MIN, FACTOR_MAX, &a->opts.bandwidth_factor);
        return ts_cli_opt_real("replay", "--bandwidth", optarg, GBPS_MIN, GBPS_MAX, &a->opts.bandwidth_gbps);
    case 'l':
        if (optarg[0] == 'x') {
            if (ts_cli_opt_real("replay", "--latency-us xF", optarg + 1, 0, FACTOR_MAX, &a->opts.latency_factor)) return -1;
            if (a->opts.latency_factor == 0) a->opts.latency_factor = 1e-9;   /* x0: no fixed cost (0 = not asked) */
            return 0;
        }
        return ts_cli_opt_real("replay", "--latency-us", optarg, 0, US_MAX, &a->opts.latency_us);
    case 'n': a->opts.nccl_tests_log = optarg; return 0;
    case 'P': return ts_cli_opt_real("replay", "--profiler-overhead-us", optarg, 0, US_MAX, &a->opts.profiler_overhead_us);
    case 'm': a->marker = optarg; return 0;
    case 'W': a->windows = true; return 0;
    case 'v': a->verbose = true; return 0;
    TS_CLI_COMMON_CASES: return ts_cli_opt_common("replay", c, optarg);
    case OPT_PLAN: a->plan_path = optarg; return 0;
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
        {"iteration-marker", required_argument, 0, 'm'}, {"windows", no_argument, 0, 'W'},
        {"profiler-overhead-us", required_argument, 0, 'P'}, {"plan", required_argument, 0, OPT_PLAN},
        {"verbose", no_argument, 0, 'v'}, TS_CLI_COMMON_LONGOPTS, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->opts.size = sizeof a->opts;
    a->opts.scales = a->scales;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
        int rc = parse_option(c, a);
        if (rc > 0) return 1;
        if (rc < 0) {
            if (c == '?' || c == ':')
                ts_cli_errorf("replay: unknown or incomplete option '%s' (see 'trainscope replay --help')", argv[optind - 1]);
            return -1;
        }
    }
    if (ts_cli_need_trace("replay", optind, argc)) return -1;
    a->opts.window_all = ts_cli_window_all();
    if (a->plan_path && a->opts.bucket_mb > 0) {
        ts_cli_errorf("replay: --plan sets the buckets; drop --bucket-mb");
        return -1;
    }
    if (a->windows && a->export_path) {
        ts_cli_errorf("replay: --export draws one schedule; give it one window, not --windows");
        return -1;
    }
    return 0;
}

static void print_json(const ts_trace *t, const ts_replay *r)
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
    ts__report_warnings_json_open(&j, t);   /* the trace's ingest warnings, then the replay's */
    for (uint32_t i = 0; i < ts_replay_n_warnings(r); i++) ts__report_warning_json_line(&j, "replay", ts_replay_warning(r, i));
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    ts__buf_add(&b, "\n", 1);
    fwrite(b.s, 1, b.len, stdout);
    ts__buf_free(&b);
}

/* Predicted against measured, in percent (0 when nothing was measured). */
static double pct_change(int64_t predicted, int64_t measured)
{
    return measured > 0 ? 100.0 * (double)(predicted - measured) / (double)measured : 0;
}

/* The least and greatest of a run's iterations or windows, measured and
 * predicted, and each one's change. */
typedef struct spread {
    int64_t m_lo, m_hi, p_lo, p_hi;
    double  ch_lo, ch_hi;
} spread;

static void spread_init(spread *sp)
{
    *sp = (spread){INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, INFINITY, -INFINITY};
}

static void spread_add(spread *sp, int64_t m, int64_t p)
{
    if (m < sp->m_lo) sp->m_lo = m;
    if (m > sp->m_hi) sp->m_hi = m;
    if (p < sp->p_lo) sp->p_lo = p;
    if (p > sp->p_hi) sp->p_hi = p;
    if (m <= 0) return;
    double ch = pct_change(p, m);
    if (ch < sp->ch_lo) sp->ch_lo = ch;
    if (ch > sp->ch_hi) sp->ch_hi = ch;
}

/* "per iteration, least to greatest of 5: ..." (what: "iteration" or "window"). */
static void spread_print(const spread *sp, const char *what, uint32_t n, bool what_if)
{
    char a[32], b[32], c[32], d[32];
    ts_report_duration((double)sp->m_lo, a, sizeof a);
    ts_report_duration((double)sp->m_hi, b, sizeof b);
    ts_report_duration((double)sp->p_lo, c, sizeof c);
    ts_report_duration((double)sp->p_hi, d, sizeof d);
    printf("per %s, least to greatest of %u: measured %s to %s, %s %s to %s\n", what, n, a, b,
           what_if ? "with the what-if" : "predicted", c, d);
    if (what_if && sp->ch_lo <= sp->ch_hi)
        printf("change per %s, least to greatest: %+.2f%% to %+.2f%%\n", what, sp->ch_lo, sp->ch_hi);
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
    spread sp;
    spread_init(&sp);
    for (uint32_t k = 0; k < n; k++) {
        ts_replay_iteration_info it;
        ts_replay_iteration(r, k, &it);
        spread_add(&sp, it.measured_iteration_ns, it.predicted_iteration_ns);
    }
    spread_print(&sp, "iteration", n, what_if);
}

/* With a what-if, predicted minus measured is the change the edit makes,
 * not an error of the replay, and the table says so. */
/* The trace's and the replay's warnings on stderr, folded per kind on a terminal. */
static void print_warnings(const ts_trace *t, const ts_replay *r, bool verbose)
{
    uint32_t n = ts_replay_n_warnings(r);
    const char **lines = malloc(((size_t)n + 1) * sizeof *lines);
    for (uint32_t i = 0; lines && i < n; i++) lines[i] = ts_replay_warning(r, i);
    if (lines) ts__report_warnings_emit(stderr, t, lines, n, ts__report_warn_all(verbose));
    else {   /* no memory to fold them: every line, as recorded */
        ts__report_warnings_print(stderr, t);
        for (uint32_t i = 0; i < n; i++) fprintf(stderr, "trainscope: warning: %s\n", ts_replay_warning(r, i));
    }
    free(lines);
}

static int print_table(const ts_trace *t, const ts_replay *r, bool verbose)
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
        snprintf(c[3], sizeof c[3], "%+.2f", pct_change(ri.predicted_iteration_ns, ri.measured_iteration_ns));
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
    print_warnings(t, r, verbose);
    return rc;
}

/* --windows: one job traced in several profiling windows (torch.profiler's
 * schedule with repeat > 1 writes one set of rank files per window). Each
 * window is replayed alone, with the same options, and the job's figures are
 * the medians over the windows. Why: the steps of one window scatter by
 * 5-20% on a shared machine and a what-if starts from that window's luck;
 * on the gloo ground truths, predicting from half of the saved windows
 * instead of all of them raised the median error from 4.2% to 5.1-5.4%
 * (docs/accuracy.md, bench/accuracy.sh). Windows are run one after another
 * and only their figures kept, so memory is one window's. */
typedef struct window_result {
    const char *path;
    uint32_t    n_iterations;
    int64_t     measured_ns, predicted_ns;
    uint32_t    n_ranks;
    ts_replay_rank_info *ranks;     /* [n_ranks], as ts_replay_rank gives them */
} window_result;

/* One (rank, kind) of a window's ingest warnings, kept after its trace is gone. */
typedef struct ingest_warning {
    int32_t  rank;
    int      kind;                  /* ts_warn_kind */
    uint64_t count;
    char    *file, *first;          /* owned */
} ingest_warning;

typedef struct windows_run {
    window_result *w;
    uint32_t       n;
    bool           what_if;
    char         **warnings;        /* distinct warnings of every window, in first-seen order */
    uint32_t       n_warnings;
    bool           verbose;         /* --verbose: every warning line, also on a terminal */
    ingest_warning *ingest;         /* every window's ingest warnings, window by window */
    uint32_t       n_ingest;
} windows_run;

static void windows_free(windows_run *wr)
{
    for (uint32_t i = 0; i < wr->n; i++) free(wr->w[i].ranks);
    free(wr->w);
    for (uint32_t i = 0; i < wr->n_warnings; i++) free(wr->warnings[i]);
    free(wr->warnings);
    for (uint32_t i = 0; i < wr->n_ingest; i++) { free(wr->ingest[i].file); free(wr->ingest[i].first); }
    free(wr->ingest);
}

/* A copy of t's ingest warnings (for --format json: the table said them on stderr). */
static int keep_ingest(windows_run *wr, const ts_trace *t)
{
    for (uint32_t i = 0; i < t->n_ranks; i++) {
        const ts_rank *r = t->ranks[i];
        for (int k = 0; k < TS_WARN_COUNT; k++) {
            if (!r->warn_count[k]) continue;
            ingest_warning *grown = realloc(wr->ingest, (wr->n_ingest + 1) * sizeof *grown);
            if (!grown) return TS_ENOMEM;
            wr->ingest = grown;
            ingest_warning *w = &wr->ingest[wr->n_ingest];
            *w = (ingest_warning){r->rank, k, r->warn_count[k], strdup(r->path), strdup(r->warn_first[k] ? r->warn_first[k] : "")};
            wr->n_ingest++;
            if (!w->file || !w->first) return TS_ENOMEM;
        }
    }
    return TS_OK;
}

static int keep_warning(windows_run *wr, const char *msg)
{
    for (uint32_t i = 0; i < wr->n_warnings; i++)
        if (!strcmp(wr->warnings[i], msg)) return TS_OK;
    char **grown = realloc(wr->warnings, (wr->n_warnings + 1) * sizeof *grown);
    if (!grown) return TS_ENOMEM;
    wr->warnings = grown;
    if (!(wr->warnings[wr->n_warnings] = strdup(msg))) return TS_ENOMEM;
    wr->n_warnings++;
    return TS_OK;
}

/* Replays every window; on failure prints why, naming the window, and
 * returns the exit status (nothing else is printed: no partial output). */
static int windows_replay(char **paths, uint32_t n, replay_args *a, windows_run *wr)
{
    memset(wr, 0, sizeof *wr);
    if (!(wr->w = calloc(n, sizeof *wr->w))) { ts_cli_errorf("replay: out of memory"); return TS_EXIT_BAD; }
    wr->verbose = a->verbose;
    for (uint32_t i = 0; i < n; i++) {
        window_result *w = &wr->w[i];
        w->path = paths[i];
        ts_trace *t = NULL;
        if (ts_cli_load(&paths[i], 1, a->marker, &t) != TS_EXIT_OK) return TS_EXIT_BAD;
        ts_error err = {0};
        ts_replay *r = NULL;
        int rc = ts_replay_run(t, &a->opts, &r, &err);
        if (rc) {
            const char *why = err.msg[0] ? err.msg : ts_strerror(rc);
            if (!strncmp(why, "replay: ", 8)) why += 8;   /* said once, before the window */
            ts_cli_errorf("replay: window %s: %s", paths[i], why);
            ts_trace_destroy(t);
            return ts_cli_exit_for(rc);
        }
        w->n_iterations = ts_replay_n_iterations(r);
        w->measured_ns = ts_replay_measured_iteration_ns(r);
        w->predicted_ns = ts_replay_predicted_iteration_ns(r);
        w->n_ranks = ts_replay_n_ranks(r);
        wr->what_if = ts_replay_is_what_if(r);
        w->ranks = calloc(w->n_ranks + 1, sizeof *w->ranks);
        wr->n = i + 1;
        rc = w->ranks ? TS_OK : TS_ENOMEM;
        for (uint32_t k = 0; rc == TS_OK && k < w->n_ranks; k++) ts_replay_rank(r, k, &w->ranks[k]);
        for (uint32_t k = 0; rc == TS_OK && k < ts_replay_n_warnings(r); k++) rc = keep_warning(wr, ts_replay_warning(r, k));
        if (rc == TS_OK && a->format == TS_FMT_JSON) rc = keep_ingest(wr, t);
        else if (rc == TS_OK) ts__report_warnings_emit(stderr, t, NULL, 0, ts__report_warn_all(a->verbose));
        ts_replay_destroy(r);
        ts_trace_destroy(t);
        if (rc) { ts_cli_errorf("replay: out of memory"); return TS_EXIT_BAD; }
        /* The medians per rank need the same ranks in every window. */
        const window_result *w0 = &wr->w[0];
        bool same = w->n_ranks == w0->n_ranks;
        for (uint32_t k = 0; same && k < w->n_ranks; k++) same = w->ranks[k].rank == w0->ranks[k].rank;
        if (!same) {
            /* A replayed window has at least one rank; the guards keep the message safe regardless. */
            ts_cli_errorf("replay: window %s holds ranks %d to %d (%u), window %s ranks %d to %d (%u): --windows wants "
                          "windows of one job", w->path, w->n_ranks ? w->ranks[0].rank : -1,
                          w->n_ranks ? w->ranks[w->n_ranks - 1].rank : -1, w->n_ranks, w0->path,
                          w0->n_ranks ? w0->ranks[0].rank : -1, w0->n_ranks ? w0->ranks[w0->n_ranks - 1].rank : -1,
                          w0->n_ranks);
            return TS_EXIT_BAD;
        }
    }
    return TS_EXIT_OK;
}

/* Median over the windows of field f (0 measured, 1 predicted) of rank slot k,
 * or of the job's figure when k < 0. scratch holds wr->n values. */
static int64_t windows_median(const windows_run *wr, int f, int64_t k, int64_t *scratch)
{
    for (uint32_t i = 0; i < wr->n; i++) {
        const window_result *w = &wr->w[i];
        scratch[i] = k < 0 ? (f ? w->predicted_ns : w->measured_ns)
                           : (f ? w->ranks[k].predicted_iteration_ns : w->ranks[k].measured_iteration_ns);
    }
    return ts__median_i64(scratch, wr->n);
}

static int print_windows_json(const windows_run *wr, int64_t *scratch)
{
    ts_buf b;
    ts__buf_init(&b);
    ts_json j;
    ts__json_init(&j, &b);
    int64_t m = windows_median(wr, 0, -1, scratch), p = windows_median(wr, 1, -1, scratch);
    ts__json_obj_begin(&j);
    ts__json_kv_us(&j, "measured_iteration_us", m);     /* medians over the windows */
    ts__json_kv_us(&j, "predicted_iteration_us", p);
    ts__json_kv_double(&j, "error_pct", pct_change(p, m), 3);
    ts__json_kv_bool(&j, "what_if", wr->what_if);
    ts__json_key(&j, "windows");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < wr->n; i++) {
        const window_result *w = &wr->w[i];
        ts__json_obj_begin(&j);
        ts__json_kv_str(&j, "path", w->path);
        ts__json_kv_u64(&j, "iterations", w->n_iterations);
        ts__json_kv_us(&j, "measured_iteration_us", w->measured_ns);
        ts__json_kv_us(&j, "predicted_iteration_us", w->predicted_ns);
        ts__json_kv_double(&j, "error_pct", pct_change(w->predicted_ns, w->measured_ns), 3);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__json_key(&j, "ranks");
    ts__json_arr_begin(&j);
    for (uint32_t k = 0; k < wr->w[0].n_ranks; k++) {
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", wr->w[0].ranks[k].rank);
        ts__json_kv_us(&j, "measured_iteration_us", windows_median(wr, 0, k, scratch));
        ts__json_kv_us(&j, "predicted_iteration_us", windows_median(wr, 1, k, scratch));
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__report_warnings_json_open(&j, NULL);   /* every window's ingest warnings, then the replays' */
    for (uint32_t i = 0; i < wr->n_ingest; i++) {
        const ingest_warning *w = &wr->ingest[i];
        ts__report_warning_json_item(&j, w->rank, w->file, ts__warn_name((ts_warn_kind)w->kind), w->count, w->first);
    }
    for (uint32_t i = 0; i < wr->n_warnings; i++) ts__report_warning_json_line(&j, "replay", wr->warnings[i]);
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    ts__buf_add(&b, "\n", 1);
    int rc = fwrite(b.s, 1, b.len, stdout) == b.len ? TS_OK : TS_EIO;
    ts__buf_free(&b);
    return rc;
}

/* As print_spread does for iterations: a what-if's change window by window
 * that straddles zero says its sign rests on which windows were traced. */
static void print_windows_spread(const windows_run *wr)
{
    if (wr->n < 2) return;
    spread sp;
    spread_init(&sp);
    for (uint32_t i = 0; i < wr->n; i++) spread_add(&sp, wr->w[i].measured_ns, wr->w[i].predicted_ns);
    spread_print(&sp, "window", wr->n, wr->what_if);
}

static int print_windows_table(const windows_run *wr, int64_t *scratch)
{
    const ts_col cols[] = {
        {"window", TS_ALIGN_LEFT, 0}, {"iterations", TS_ALIGN_RIGHT, 0}, {"measured", TS_ALIGN_RIGHT, 0},
        {wr->what_if ? "what-if" : "predicted", TS_ALIGN_RIGHT, 0},
        {wr->what_if ? "change %" : "error %", TS_ALIGN_RIGHT, 0},
    };
    ts_table *tb = ts_table_create(cols, 5);
    if (!tb) return TS_ENOMEM;
    int rc = TS_OK;
    for (uint32_t i = 0; rc == TS_OK && i < wr->n; i++) {
        const window_result *w = &wr->w[i];
        char c[4][32];
        snprintf(c[0], sizeof c[0], "%u", w->n_iterations);
        ts_report_duration((double)w->measured_ns, c[1], sizeof c[1]);
        ts_report_duration((double)w->predicted_ns, c[2], sizeof c[2]);
        snprintf(c[3], sizeof c[3], "%+.2f", pct_change(w->predicted_ns, w->measured_ns));
        const char *cells[5] = {w->path, c[0], c[1], c[2], c[3]};
        rc = ts_table_add_row(tb, cells);
    }
    if (rc == TS_OK) rc = ts_table_write(tb, stdout);
    ts_table_destroy(tb);
    if (rc) return rc;
    int64_t m = windows_median(wr, 0, -1, scratch), p = windows_median(wr, 1, -1, scratch);
    char ms[32], ps[32];
    ts_report_duration((double)m, ms, sizeof ms);
    ts_report_duration((double)p, ps, sizeof ps);
    printf("\niteration (median of %u windows, each the median of its iterations, slowest rank): measured %s%s, "
           "%s %s, %s %+.2f%%\n", wr->n, ms, wr->what_if ? " as traced" : "", wr->what_if ? "with the what-if" : "predicted",
           ps, wr->what_if ? "change" : "error", pct_change(p, m));
    print_windows_spread(wr);
    fflush(stdout);
    ts__report_warnings_emit(stderr, NULL, (const char *const *)wr->warnings, wr->n_warnings, ts__report_warn_all(wr->verbose));
    return TS_OK;
}

static int cmd_replay_windows(char **paths, uint32_t n, replay_args *a)
{
    windows_run wr;
    int ex = windows_replay(paths, n, a, &wr);
    int64_t *scratch = ex == TS_EXIT_OK ? malloc(n * sizeof *scratch) : NULL;
    if (ex == TS_EXIT_OK && !scratch) { ts_cli_errorf("replay: out of memory"); ex = TS_EXIT_BAD; }
    if (ex == TS_EXIT_OK) {
        int rc = a->format == TS_FMT_JSON ? print_windows_json(&wr, scratch) : print_windows_table(&wr, scratch);
        if (rc) { ts_cli_errorf("writing the result failed: %s", ts_strerror(rc)); ex = TS_EXIT_BAD; }
    }
    free(scratch);
    windows_free(&wr);
    return ex;
}

static int cmd_replay_one(int argc, char **argv, replay_args *ap);

int ts_cmd_replay(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)   /* the precision what-if has options of its own */
        if (!strncmp(argv[i], "--precision-", 12)) return ts__cli_replay_precision(argc, argv);
    replay_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_optimize_plan *plan = NULL;
    if (a.plan_path) {
        ts_error perr = {0};
        int prc2 = ts_optimize_plan_load(a.plan_path, &a.opts, &a.opts, &plan, &perr);
        if (prc2) { ts_cli_errorf("%s", perr.msg); return TS_EXIT_BAD; }
    }
    int ex = cmd_replay_one(argc, argv, &a);
    ts_optimize_plan_free(plan);
    return ex;
}

static int cmd_replay_one(int argc, char **argv, replay_args *ap)
{
    replay_args a = *ap;
    if (a.windows) return cmd_replay_windows(argv + optind, (uint32_t)(argc - optind), &a);
    ts_trace *t = NULL;
    ts_graph *g = NULL;
    ts_graph_options go = {.size = sizeof go};
    int ex = ts_cli_load_graph(argv + optind, argc - optind, a.marker, a.opts.n_scales > 0, &go, &t, &g);
    if (ex != TS_EXIT_OK) return ex;
    ts_error err = {0};
    ts_replay *r = NULL;
    int rc = ts_replay_run_graph(g, &a.opts, &r, &err);
    if (rc) {
        ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
        ts_graph_destroy(g);
        ts_trace_destroy(t);
        return ts_cli_exit_for(rc);
    }
    if (a.format == TS_FMT_JSON) print_json(t, r);
    else rc = print_table(t, r, a.verbose);
    if (rc == TS_OK && a.export_path) {
        rc = ts_replay_export_chrome(r, a.export_path, &err);
        if (rc) ts_cli_errorf("%s", err.msg);
    } else if (rc) {
        ts_cli_errorf("writing the table failed: %s", ts_strerror(rc));
    }
    ts_replay_destroy(r);
    ts_graph_destroy(g);
    ts_trace_destroy(t);
    return rc ? TS_EXIT_BAD : TS_EXIT_OK;
}
