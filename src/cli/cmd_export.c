/* cmd_export.c - `trainscope export PATH... --sqlite out.db`: the trace and
 * its analyses (breakdown, critical path, replay) as one SQLite database.
 *
 * Not for: the database itself (src/report/sqlite.c, ts_sqlite_write) or
 * any analysis; this file parses options, runs the public analyses and
 * hands their results over. An analysis that cannot run on this trace (no
 * GPU ops, a graph that cannot be built) leaves its tables empty and says
 * why, on stderr and in the database's warning table; the export goes on.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "trainscope/trainscope.h"
#include "trainscope/export.h"

typedef struct ex_args {
    const char *sqlite;   /* --sqlite FILE */
    const char *marker;   /* --iteration-marker */
} ex_args;

static void usage(FILE *f)
{
    fputs("usage: trainscope export PATH... --sqlite FILE [options]\n\n"
          "Write the trace(s) and their analyses to one SQLite database: tables modelled\n"
          "on Perfetto's trace processor (slice, thread_track, process, thread, flow,\n"
          "args, counter, counter_track, ...) plus breakdown*, critical_path* and replay*\n"
          "(docs/export.md: every table and example queries). FILE is replaced only\n"
          "when the whole database is written.\n\n"
          "options:\n"
          "  --sqlite FILE            the database to write\n"
          "  --iteration-marker NAME  slice-name prefix of iterations (ProfilerStep#)\n"
          TS_CLI_COMMON_HELP
          "  -h, --help               this help\n\n"
          "--window sets the analyses' window; the trace tables hold every event.\n"
          "exit codes: 0 ok, 2 bad input or usage, or the database could not be written\n", f);
}

static int parse_args(int argc, char **argv, ex_args *a)
{
    static const struct option longopts[] = {
        {"sqlite", required_argument, 0, 's'}, {"iteration-marker", required_argument, 0, 'm'},
        TS_CLI_COMMON_LONGOPTS, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 's': a->sqlite = optarg; break;
        case 'm': a->marker = optarg; break;
        case TS_CLI_OPT_WINDOW: case TS_CLI_OPT_PYTHON_DEPTH:
            if (ts_cli_opt_common("export", c, optarg)) return -1;
            break;
        case 'h': usage(stdout); return 1;
        default: return ts_cli_opt_unknown("export", argv[optind - 1]);
        }
    }
    if (ts_cli_need_trace("export", optind, argc)) return -1;
    if (!a->sqlite || !*a->sqlite) {
        ts_cli_errorf("export: say where to write: --sqlite FILE (see 'trainscope export --help')");
        return -1;
    }
    return 0;
}

/* The results handed to the writer, and why any is missing. */
typedef struct ex_results {
    ts_breakdown *bd;
    ts_graph *g;
    ts_critical_path *cp;
    ts_replay *rp;
    ts_error why[3];   /* breakdown, critical path, replay */
} ex_results;

/* Run every analysis; TS_ENOMEM stops the export, any other failure is a
 * reason kept in why[]. */
static int run_analyses(const ts_job *job, ex_results *r)
{
    bool all = ts_cli_window_all();
    ts_breakdown_opts bo = {.size = sizeof bo, .window_all = all};
    int rc = ts_breakdown_compute(job, &bo, &r->bd, &r->why[0]);
    if (rc == TS_ENOMEM) return rc;
    ts_graph_options go = {.size = sizeof go};
    ts_error gerr = {0};
    rc = ts_graph_create(job, &go, &r->g, &gerr);
    if (rc == TS_ENOMEM) return rc;
    if (rc != TS_OK) { r->why[1] = gerr; r->why[2] = gerr; return TS_OK; }
    rc = ts_critical_path_create(r->g, all ? TS_CP_WHOLE_TRACE : -1, &r->cp, &r->why[1]);
    if (rc == TS_ENOMEM) return rc;
    ts_replay_options ro = {.size = sizeof ro, .window_all = all};
    rc = ts_replay_run_graph(r->g, &ro, &r->rp, &r->why[2]);
    return rc == TS_ENOMEM ? rc : TS_OK;
}

static void free_results(ex_results *r)
{
    ts_replay_destroy(r->rp);
    ts_critical_path_destroy(r->cp);
    ts_graph_destroy(r->g);
    ts_breakdown_destroy(r->bd);
}

static const char *why_of(const void *result, const ts_error *e, const char *fallback)
{
    if (result) return NULL;
    return e->msg[0] ? e->msg : fallback;
}

static int write_db(const ts_job *job, const ex_args *a, ex_results *r)
{
    ts_sqlite_input in = {
        .size = sizeof in, .job = job, .breakdown = r->bd, .graph = r->g, .critical_path = r->cp, .replay = r->rp,
        .breakdown_why = why_of(r->bd, &r->why[0], "not computed"),
        .critical_path_why = why_of(r->cp, &r->why[1], "not computed"),
        .replay_why = why_of(r->rp, &r->why[2], "not computed"),
    };
    const char *whys[3] = {in.breakdown_why, in.critical_path_why, in.replay_why};
    static const char *const names[3] = {"breakdown", "critical path", "replay"};
    for (int i = 0; i < 3; i++)
        if (whys[i]) ts_cli_errorf("warning: export: no %s tables: %s", names[i], whys[i]);
    ts_sqlite_stats st;
    ts_error err = {0};
    int rc = ts_sqlite_write(&in, a->sqlite, &st, &err);
    if (rc != TS_OK) {
        ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
        return TS_EXIT_BAD;
    }
    for (uint32_t i = 0; i < ts_job_n_ranks(job); i++) {   /* kinds, counts, first messages: in the table */
        const ts_rank *rk = ts_job_borrow_rank(job, i);
        if (ts_rank_n_warnings(rk))
            ts_cli_errorf("warning: %s: %llu input warnings, each kind in table warning of %s", ts_rank_path(rk),
                          (unsigned long long)ts_rank_n_warnings(rk), a->sqlite);
    }
    double s = (double)st.write_ns / 1e9, cpu = (double)st.write_cpu_ns / 1e9;
    printf("%s: %llu rows in %u tables (%llu slices, %llu args, %llu warnings), written in %.3f s"
           " (%.0f rows/s; CPU %.3f s, %.0f rows/s)\n", a->sqlite, (unsigned long long)st.n_rows, st.n_tables,
           (unsigned long long)st.n_slices, (unsigned long long)st.n_args, (unsigned long long)st.n_warnings, s,
           s > 0 ? (double)st.n_rows / s : 0.0, cpu, cpu > 0 ? (double)st.n_rows / cpu : 0.0);
    return TS_EXIT_OK;
}

int ts_cmd_export(int argc, char **argv)
{
    ex_args a;
    int p = parse_args(argc, argv, &a);
    if (p) return p > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_job *job = NULL;
    int ex = ts_cli_load(argv + optind, argc - optind, a.marker, &job);
    if (ex != TS_EXIT_OK) return ex;
    ex_results r = {0};
    if (run_analyses(job, &r) != TS_OK) {
        ts_cli_errorf("export: out of memory running the analyses");
        ex = TS_EXIT_BAD;
    } else {
        ex = write_db(job, &a, &r);
    }
    free_results(&r);
    ts_job_destroy(job);
    return ex;
}
