/* cmd_views.c - `trainscope views PATH... --view NAME`: the views of Trace
 * Compass's analyses (call stacks, allocator, transfers, stream queues,
 * communication latency) as tables, JSON or CSV.
 *
 * Thin: parse options, load, one ts_view_<name>_create, its writer.
 * Exit: 0 ok, 1 nothing of that kind in the trace, 2 bad input or usage.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "trainscope/ingest.h"
#include "trainscope/views.h"

static const struct { const char *name, *what; } views[] = {
    {"callstack", "per CPU thread, ops nested in time; the flame graph (stack path -> total/self time)"},
    {"allocator", "bytes in use and allocations over time per allocator, sizes by bin, segments, blocks, fragmentation"},
    {"transfers", "memory copies per direction (H2D/D2H/D2D/P2P): size and throughput, totals and over time"},
    {"queues", "GPU ops launched but not finished, per stream, over time"},
    {"comm", "communication latency per collective kind and peer, MPI send/recv pairs: distribution, over time"},
};
#define N_VIEWS (sizeof views / sizeof views[0])

typedef struct views_args {
    const char     *view;
    ts_views_opts   opts;
    ts_views_out    out;
} views_args;

static void usage(FILE *f)
{
    fputs("usage: trainscope views --view NAME [OPTIONS] PATH...\n\n"
          "The views of Trace Compass's analyses over a whole trace (every rank, every\n"
          "event; no iteration window). PATH is a trace file or a directory of per-rank\n"
          "traces; for --view allocator also a PyTorch allocator snapshot (.pickle).\n\n"
          "options:\n"
          "  --view NAME              callstack, allocator, transfers, queues, comm;\n"
          "                           list: the views and what each shows\n"
          "  --format FORMAT          table (default), json (every table), csv (one: the\n"
          "                           first, or --table), html (a page with its charts);\n"
          "                           times in json and csv are us\n"
          "  --table NAME             only this table of the view (names: docs/views.md)\n"
          "  --bins N                 time bins of over-time tables (default 20)\n"
          "  --rank N                 only the rank with this number\n"
          "  --top N                  callstack: the N heaviest stack paths (flame graph)\n"
          "  --thread TID             callstack: only the thread(s) with this tid\n"
          "  -v, --verbose            every warning line\n"
          "  -h, --help               this help\n\n"
          "exit codes: 0 ok, 1 nothing for the view in the trace, 2 bad input or usage\n", f);
}

static int list_views(void)
{
    for (size_t i = 0; i < N_VIEWS; i++) printf("%-10s %s\n", views[i].name, views[i].what);
    return ferror(stdout) || fflush(stdout) ? TS_EXIT_BAD : TS_EXIT_OK;
}

static int parse_args(int argc, char **argv, views_args *a)
{
    static const struct option longopts[] = {
        {"view", required_argument, 0, 'V'}, {"format", required_argument, 0, 'f'},
        {"table", required_argument, 0, 't'}, {"bins", required_argument, 0, 'b'},
        {"rank", required_argument, 0, 'r'}, {"top", required_argument, 0, 'n'}, {"thread", required_argument, 0, 'T'},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->opts = (ts_views_opts){.size = sizeof a->opts};
    a->out = (ts_views_out){.size = sizeof a->out};
    optind = 1;
    opterr = 0;
    int c;
    int64_t x;
    while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
        switch (c) {
        case 'V': a->view = optarg; break;
        case 'f':
            if (!strcmp(optarg, "table")) a->out.format = TS_VIEWS_TABLE;
            else if (!strcmp(optarg, "json")) a->out.format = TS_VIEWS_JSON;
            else if (!strcmp(optarg, "csv")) a->out.format = TS_VIEWS_CSV;
            else if (!strcmp(optarg, "html")) a->out.format = TS_VIEWS_HTML;
            else { ts_cli_errorf("views: --format wants table, json, csv or html, got '%s'", optarg); return -1; }
            break;
        case 't': a->out.table = optarg; break;
        case 'b':
            if (ts_cli_opt_int("views", "--bins", optarg, 1, 100000, &x)) return -1;
            a->opts.n_bins = (uint32_t)x;
            break;
        case 'r':
            if (ts_cli_opt_int("views", "--rank", optarg, 0, INT32_MAX, &x)) return -1;
            a->opts.rank = (int32_t)x;
            a->opts.one_rank = true;
            break;
        case 'n':
            if (ts_cli_opt_count("views", "--top", optarg, &a->out.top)) return -1;
            break;
        case 'T':
            if (ts_cli_opt_int("views", "--thread", optarg, INT64_MIN, INT64_MAX, &a->opts.tid)) return -1;
            a->opts.one_thread = true;
            break;
        case 'v': a->out.verbose = true; break;
        case 'h': usage(stdout); return 1;
        default: return ts_cli_opt_unknown("views", argv[optind - 1]);
        }
    }
    if (!a->view) { ts_cli_errorf("views: --view NAME is required (--view list names them)"); return -1; }
    if (!strcmp(a->view, "list")) return 2;
    size_t i = 0;
    while (i < N_VIEWS && strcmp(views[i].name, a->view)) i++;
    if (i == N_VIEWS) {
        ts_cli_errorf("views: no view '%s' (callstack, allocator, transfers, queues, comm; --view list)", a->view);
        return -1;
    }
    return ts_cli_need_trace("views", optind, argc);
}

/* One view of a loaded trace, written to stdout. */
static int run_view(const views_args *a, const ts_job *t, ts_error *err)
{
    ts_views_out o = a->out;
    o.trace = t;
    int rc;
#define RUN(NAME)                                                              \
    if (!strcmp(a->view, #NAME)) {                                             \
        ts_view_##NAME *v;                                                     \
        rc = ts_view_##NAME##_create(t, &a->opts, &v, err);                    \
        if (rc) return rc;                                                     \
        rc = ts_views_write_##NAME(stdout, v, &o, err);                        \
        ts_view_##NAME##_destroy(v);                                           \
        return rc;                                                             \
    }
    RUN(callstack)
    RUN(allocator)
    RUN(transfers)
    RUN(queues)
    RUN(comm)
#undef RUN
    return TS_EINVAL;
}

static int snapshot_view(const views_args *a, char **paths, int n, ts_error *err)
{
    if (strcmp(a->view, "allocator"))
        return ts_cli_errorf("views: %s is an allocator snapshot: only --view allocator reads it", paths[0]), TS_EINVAL;
    if (n != 1) return ts_cli_errorf("views: an allocator snapshot is read alone, got %d paths", n), TS_EINVAL;
    ts_view_allocator *v;
    int rc = ts_view_allocator_from_snapshot(paths[0], &a->opts, &v, err);
    if (rc) return rc;
    rc = ts_views_write_allocator(stdout, v, &a->out, err);
    ts_view_allocator_destroy(v);
    return rc;
}

int ts_cmd_views(int argc, char **argv)
{
    views_args a;
    int p = parse_args(argc, argv, &a);
    if (p == 1) return TS_EXIT_OK;
    if (p == 2) return list_views();
    if (p < 0) return TS_EXIT_BAD;
    char **paths = argv + optind;
    int n = argc - optind;
    ts_error err = {0};
    int rc;
    if (ts_views_path_is_snapshot(paths[0])) {
        rc = snapshot_view(&a, paths, n, &err);
        if (rc == TS_EINVAL && !err.msg[0]) return TS_EXIT_BAD;
    } else {
        ts_job *t;
        int e = ts_cli_load(paths, n, NULL, &t);
        if (e) return e;
        rc = run_view(&a, t, &err);
        ts_job_destroy(t);
    }
    if (rc) ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
    return ts_cli_exit_for(rc);
}
