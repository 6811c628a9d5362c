/* main.c - the trainscope CLI: dispatch to a subcommand.
 *
 * Subcommands are weak references so that the CLI links while a module is
 * being built; every command listed in the help is linked in a release. */
#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <spawn.h>

#include "cli/cli.h"
#include "trainscope/report.h"
#include "core/core.h"

extern char **environ;
#include "trainscope/ingest.h"
#include "trainscope/graph.h"
#include "trainscope/analyze.h"

#pragma weak ts_cmd_stats
#pragma weak ts_cmd_breakdown
#pragma weak ts_cmd_critical_path
#pragma weak ts_cmd_replay
#pragma weak ts_cmd_memory
#pragma weak ts_cmd_record
#pragma weak ts_cmd_info
#pragma weak ts_cmd_diff
#pragma weak ts_cmd_optimize
#pragma weak ts_cmd_export
#pragma weak ts_cmd_report
#pragma weak ts_cmd_views

typedef int (*cmd_fn)(int, char **);
static const struct { const char *name; cmd_fn fn; const char *help; } commands[] = {
    {"stats", ts_cmd_stats, "per-name statistics of ops, kernels, copies, runtime calls, collectives"},
    {"breakdown", ts_cmd_breakdown, "where each rank's time went: idle, compute, communication, memory"},
    {"critical-path", ts_cmd_critical_path, "the longest dependency path of an iteration across ranks"},
    {"replay", ts_cmd_replay, "simulate the global dependency graph and predict iteration time"},
    {"memory", ts_cmd_memory, "tensor liveness, inactive periods and memory curves"},
    {"record", ts_cmd_record, "run a program under trainscope's tracer"},
    {"info", ts_cmd_info, "what each rank was read from: format, reader notes, row counts"},
    {"diff", ts_cmd_diff, "two traces compared per rank: ops added, removed, more or less often, time"},
    {"optimize", ts_cmd_optimize, "search a faster bucketing of the gradients and write a plan to apply"},
    {"export", ts_cmd_export, "the trace and its analyses as one SQLite database (--sqlite FILE)"},
    {"report", ts_cmd_report, "one self-contained HTML page of the analyses (-o report.html)"},
    {"views", ts_cmd_views, "call stacks, allocator, transfers, stream queues, comm latency (--view NAME)"},
};

void ts_cli_errorf(const char *fmt, ...)
{
    if (ts_cli_dist_quiet()) return;   /* process 0 of a distributed run speaks for all */
    va_list ap;
    va_start(ap, fmt);
    fputs("trainscope: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int ts_cli_exit_for(int status)
{
    if (status == TS_OK) return TS_EXIT_OK;
    if (status == TS_ENODATA) return TS_EXIT_NOTHING;
    return TS_EXIT_BAD;
}

static bool window_all;        /* --window all */
static uint32_t python_depth;   /* --python-depth N, 0 = all */

static double max_rss_gb;       /* --max-rss GB, 0 = the default */
static double fold_tol;         /* --fold-replicas[=TOL], 0 = off */
static bool in_memory;          /* --in-memory */

/* The options of issue 27 (cli.h): the budget for every command, the
 * graph's for replay and critical-path only. */
static int opt_scale(const char *cmd, int code, const char *arg)
{
    if (code == TS_CLI_OPT_MAX_RSS) return ts_cli_opt_real(cmd, "--max-rss", arg, 1e-6, 1e6, &max_rss_gb);
    bool summary_cmd = !strcmp(cmd, "stats") || !strcmp(cmd, "breakdown") || !strcmp(cmd, "info") || !strcmp(cmd, "diff");
    if (code == TS_CLI_OPT_IN_MEMORY && summary_cmd) { in_memory = true; return 0; }
    bool fold_cmd = !strcmp(cmd, "optimize") && code == TS_CLI_OPT_FOLD;   /* optimize: folding alone */
    if (strcmp(cmd, "replay") && strcmp(cmd, "critical-path") && !fold_cmd) {
        ts_cli_errorf("%s: %s applies to %s", cmd, code == TS_CLI_OPT_FOLD ? "--fold-replicas" : "--in-memory",
                      code == TS_CLI_OPT_FOLD ? "replay, critical-path and optimize"
                                              : "stats, breakdown, info, diff, replay and critical-path");
        return -1;
    }
    if (code == TS_CLI_OPT_IN_MEMORY) { in_memory = true; return 0; }
    fold_tol = 0.1;
    return arg ? ts_cli_opt_real(cmd, "--fold-replicas", arg, 1e-9, 1.0, &fold_tol) : 0;
}

double ts_cli_fold_tolerance(void) { return fold_tol; }
bool ts_cli_in_memory(void) { return in_memory; }

static void budget_set(void)
{
    size_t total = ts__mem_total_bytes();
    double gb = max_rss_gb > 0 ? max_rss_gb : 0.8 * (double)total / 1e9;
    ts_set_memory_limit(gb > 0 ? (size_t)(gb * 1e9) : 0);
}

int ts_cli_budget_exit(int ex)
{
    size_t held = 0, asked = 0;
    const char *phase = NULL;
    if (!ts_memory_limit_hit(&held, &asked, &phase)) return ex;
    double gb = max_rss_gb > 0 ? max_rss_gb : 0.8 * (double)ts__mem_total_bytes() / 1e9;
    if (asked)
        ts_cli_errorf("stopped: needs more than --max-rss %.3g GB: %.3f GB held while %s, %.1f MB more asked "
                      "(raise --max-rss%s)", gb, held / 1e9, phase, asked / 1e6,
                      fold_tol > 0 ? "" : ", or try --fold-replicas");
    else
        ts_cli_errorf("stopped: needs more than --max-rss %.3g GB: %.3f GB resident after %s (raise --max-rss%s)",
                      gb, held / 1e9, phase, fold_tol > 0 ? "" : ", or try --fold-replicas");
    return TS_EXIT_BAD;
}

int ts_cli_opt_common(const char *cmd, int code, const char *arg)
{
    if (code == TS_CLI_OPT_MAX_RSS || code == TS_CLI_OPT_FOLD || code == TS_CLI_OPT_IN_MEMORY)
        return opt_scale(cmd, code, arg);
    if (code == TS_CLI_OPT_PYTHON_DEPTH) {
        if (ts_cli_opt_count(cmd, "--python-depth", arg, &python_depth)) return -1;
        if (python_depth == 0) {
            ts_cli_errorf("%s: --python-depth wants 1 or more (1 = the outermost calls), got '%s'", cmd, arg);
            return -1;
        }
        return 0;
    }
    if (strcmp(arg, "all") && strcmp(arg, "iterations")) {
        ts_cli_errorf("%s: --window wants iterations or all, got '%s'", cmd, arg);
        return -1;
    }
    window_all = !strcmp(arg, "all");
    return 0;
}

bool ts_cli_window_all(void) { return window_all; }

typedef int (*load_fn)(const char *const *, uint32_t, const ts_load_opts *, ts_job **, ts_error *);

/* A distributed run loads whole ranks, each process its share, whatever
 * `load` is (docs/scale.md, docs/distributed.md); the budget holds in every
 * process. */
static int load_by(load_fn load, char **paths, int n, const char *iteration_marker, ts_job **out)
{
    ts_load_opts lo = {.size = sizeof lo, .iteration_marker = iteration_marker, .python_depth = python_depth};
    budget_set();
    if (ts_cli_dist_on()) return ts_cli_dist_load(paths, n, &lo, load == ts_stats_load, out);
    ts_error err = {0};
    int rc = load((const char *const *)paths, (uint32_t)n, &lo, out, &err);
    if (rc == TS_OK && ts_memory_limit_hit(NULL, NULL, NULL)) {
        /* An allocation past --max-rss was refused on the way and the
         * loader did without it (a table's reservation): the command stops
         * here, before any output, as ts_cli_budget_exit then says, rather
         * than print its report and exit 2 after it. */
        ts_job_destroy(*out);
        *out = NULL;
        return TS_EXIT_BAD;
    }
    if (rc == TS_OK) return TS_EXIT_OK;
    ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
    return TS_EXIT_BAD;
}

int ts_cli_load(char **paths, int n, const char *iteration_marker, ts_job **out)
{
    return load_by(ts_job_load, paths, n, iteration_marker, out);
}

/* The replica groups of a folded graph, on stderr: "rank R: N ranks (R, ...)". */
static void print_groups(const ts_graph *g)
{
    uint32_t n = ts_graph_n_ranks(g), n_groups = 0;
    for (uint32_t r = 0; r < n; r++) n_groups += ts_graph_replica_of(g, r) == r;
    fprintf(stderr, "trainscope: --fold-replicas: %u ranks in %u group%s (representative: members)\n", n, n_groups,
            n_groups == 1 ? "" : "s");
    for (uint32_t r = 0; r < n; r++) {
        if (ts_graph_replica_of(g, r) != r) continue;
        uint32_t k = 0;
        fprintf(stderr, "  rank %d:", ts_graph_rank_number(g, r));
        for (uint32_t q = 0; q < n; q++)
            if (ts_graph_replica_of(g, q) == r && k++ < 16) fprintf(stderr, " %d", ts_graph_rank_number(g, q));
        fprintf(stderr, "%s (%u)\n", k > 16 ? " ..." : "", k);
    }
}

int ts_cli_load_graph(char **paths, int n, const char *iteration_marker, bool whole, ts_graph_options *go,
                      ts_job **t, ts_graph **g)
{
    ts_load_opts lo = {.size = sizeof lo, .iteration_marker = iteration_marker, .python_depth = python_depth};
    ts_error err = {0};
    *t = NULL;
    *g = NULL;
    go->fold_replicas = fold_tol > 0;
    go->fold_tolerance = fold_tol;
    int rc;
    bool dist = ts_cli_dist_on();   /* a distributed run: process 0 gathers the ranks */
    if ((in_memory || whole || dist) && fold_tol > 0) {
        ts_cli_errorf("--fold-replicas needs the bounded path: not with %s", in_memory ? "--in-memory"
                      : dist ? "a distributed run (mpirun or --distributed)"
                      : "an option that reads every op (replay --scale, critical-path --export)");
        return TS_EXIT_BAD;
    }
    if (dist && !in_memory && !whole) {   /* process 0 builds the graph as the ranks arrive */
        budget_set();
        if (ts_cli_dist_load_graph(paths, n, &lo, go, t, g) != TS_EXIT_OK) return TS_EXIT_BAD;
        rc = TS_OK;
    } else if (in_memory || whole || dist) {
        if (ts_cli_load(paths, n, iteration_marker, t) != TS_EXIT_OK) return TS_EXIT_BAD;
        rc = ts_graph_create(*t, go, g, &err);
        if (rc) { ts_job_destroy(*t); *t = NULL; }
    } else {
        budget_set();
        rc = ts_graph_load((const char *const *)paths, (uint32_t)n, &lo, go, t, g, &err);
    }
    if (rc) {
        ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
        return ts_cli_exit_for(rc);
    }
    if (go->fold_replicas) print_groups(*g);
    return TS_EXIT_OK;
}

int ts_cli_load_representatives(const ts_graph *g, const char *iteration_marker, ts_job **t, ts_graph **rep)
{
    ts_load_opts lo = {.size = sizeof lo, .iteration_marker = iteration_marker, .python_depth = python_depth};
    ts_error err = {0};
    int rc = ts_graph_load_representatives(g, &lo, NULL, t, rep, &err);
    if (rc) ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
    return rc ? ts_cli_exit_for(rc) : TS_EXIT_OK;
}

int ts_cli_load_stats(char **paths, int n, const char *iteration_marker, ts_job **out)
{
    return load_by(in_memory ? ts_job_load : ts_stats_load, paths, n, iteration_marker, out);
}

int ts_cli_load_info(char **paths, int n, ts_job **out)
{
    return load_by(in_memory ? ts_job_load : ts_job_load_info, paths, n, NULL, out);
}

int ts_cli_load_diff(char **paths, int n, const char *iteration_marker, ts_job **out)
{
    return load_by(in_memory ? ts_job_load : ts_diff_load, paths, n, iteration_marker, out);
}

int ts_cli_load_breakdown(char **paths, int n, const char *iteration_marker, ts_job **t, ts_graph **g,
                          ts_error *graph_err, bool *with_graph)
{
    *g = NULL;
    *with_graph = !in_memory && !ts_cli_dist_on();
    if (!*with_graph) return ts_cli_load(paths, n, iteration_marker, t);
    ts_load_opts lo = {.size = sizeof lo, .iteration_marker = iteration_marker, .python_depth = python_depth};
    ts_error err = {0};
    budget_set();
    int rc = ts_breakdown_load((const char *const *)paths, (uint32_t)n, &lo, t, g, graph_err, &err);
    if (rc == TS_OK) return TS_EXIT_OK;
    ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
    return TS_EXIT_BAD;
}

int ts_cli_opt_int(const char *cmd, const char *opt, const char *arg, int64_t lo, int64_t hi, int64_t *out)
{
    if (ts__parse_i64(arg, lo, hi, out)) return 0;
    ts_cli_errorf("%s: %s wants a whole number from %lld to %lld, got '%s'", cmd, opt, (long long)lo,
                  (long long)hi, arg);
    return -1;
}

int ts_cli_opt_real(const char *cmd, const char *opt, const char *arg, double lo, double hi, double *out)
{
    if (ts__parse_f64(arg, lo, hi, out)) return 0;
    ts_cli_errorf("%s: %s wants a number from %g to %g, got '%s'", cmd, opt, lo, hi, arg);
    return -1;
}

int ts_cli_opt_count(const char *cmd, const char *opt, const char *arg, uint32_t *out)
{
    int64_t v;
    if (ts_cli_opt_int(cmd, opt, arg, 0, UINT32_MAX, &v)) return -1;
    *out = (uint32_t)v;
    return 0;
}

bool ts_cli_find_program(const char *name)
{
    const char *path = getenv("PATH");
    if (!path) return false;
    while (*path) {
        size_t n = strcspn(path, ":");
        char full[4096];
        if (n && n + strlen(name) + 2 < sizeof full) {
            snprintf(full, sizeof full, "%.*s/%s", (int)n, path, name);
            if (access(full, X_OK) == 0) return true;
        }
        path += n + (path[n] == ':');
    }
    return false;
}

int ts_cli_run(char *const argv[])
{
    pid_t pid;
    if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0) return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int ts_cli_opt_range(const char *cmd, const char *opt, const char *arg, int64_t *first, int64_t *last)
{
    if (ts_cli_parse_range(arg, first, last)) return 0;
    ts_cli_errorf("%s: %s wants A:B with A <= B, got '%s'", cmd, opt, arg);
    return -1;
}

int ts_cli_opt_width(const char *cmd, const char *arg, int *out)
{
    uint32_t w;
    if (ts_cli_opt_count(cmd, "--width", arg, &w)) return -1;
    if (w > INT32_MAX) { ts_cli_errorf("%s: --width %s is too large", cmd, arg); return -1; }
    *out = (int)w;
    return 0;
}

int ts_cli_opt_unknown(const char *cmd, const char *arg)
{
    ts_cli_errorf("%s: unknown or incomplete option '%s' (see 'trainscope %s --help')", cmd, arg, cmd);
    return -1;
}

int ts_cli_need_trace(const char *cmd, int optind_, int argc)
{
    if (optind_ < argc) return 0;
    ts_cli_errorf("%s: no trace given (see 'trainscope %s --help')", cmd, cmd);
    return -1;
}

int ts_cli_csv_dest(const char *cmd, int format, const char *table, const char *dir)
{
    if ((table || dir) && format != TS_FMT_CSV) {
        ts_cli_errorf("%s: %s goes with --format csv", cmd, table ? "--table" : "-o");
        return -1;
    }
    if (table && dir) {
        ts_cli_errorf("%s: --table prints one table, -o DIR writes them all; give one", cmd);
        return -1;
    }
    return 0;
}

int ts_cli_opt_output(const char *cmd, int code, const char *arg, ts_report_opts *o)
{
    if (code == 'T') o->table = arg;
    else if (code == 'o') o->dir = arg;
    else if (code != 'f') return 0;
    else {
        int f = ts_report_format_parse(arg);
        if (f < 0) {
            ts_cli_errorf("%s: --format wants table, json or csv, got '%s'", cmd, arg);
            return -1;
        }
        o->format = (ts_format)f;
    }
    return 1;
}

bool ts_cli_parse_range(const char *s, int64_t *a, int64_t *b)
{
    return ts__parse_range(s, a, b);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: trainscope COMMAND [OPTIONS] ...\n\n"
               "Tells where every millisecond of a training iteration goes.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (commands[i].fn) fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n'trainscope COMMAND --help' documents each command's options.\n"
               "exit codes: 0 ok, 1 nothing to analyze, 2 bad input or usage\n");
}

/* Inputs are mapped, so a trace file that another process truncates while
 * it is being read faults with SIGBUS on the vanished pages. Say what
 * happened and exit 2 like any bad input, instead of dying on a signal;
 * nothing has been written by then (outputs come after the load). */
static void on_sigbus(int sig)
{
    (void)sig;
    static const char msg[] = "trainscope: an input file shrank while it was being read (bus error on its mapping)\n";
    ssize_t k = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)k;
    _exit(TS_EXIT_BAD);
}

/* Every command's output reaches stdout through this check: a write that
 * failed (a full disk, /dev/full, a closed descriptor) is exit 2 naming
 * standard output, never exit 0 with a short or empty output. */
static int stdout_closed(int ex)
{
    errno = 0;
    bool bad = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !bad) { bad = true; e = errno; }
    if (!bad) return ex;
    if (e) ts_cli_errorf("standard output: write failed: %s", strerror(e));
    else ts_cli_errorf("standard output: write failed");   /* an earlier write's; its errno is gone */
    return TS_EXIT_BAD;
}

int main(int argc, char **argv)
{
    signal(SIGBUS, on_sigbus);
    if (argc < 2) { usage(stderr); return TS_EXIT_BAD; }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return stdout_closed(TS_EXIT_OK);
    }
    if (!strcmp(argv[1], "--version")) { printf("trainscope %s\n", ts_version()); return stdout_closed(TS_EXIT_OK); }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (commands[i].fn && !strcmp(argv[1], commands[i].name)) {
            /* stats, critical-path, replay: distributed under MPI or with --distributed */
            if (!strcmp(argv[1], "stats") || !strcmp(argv[1], "critical-path") || !strcmp(argv[1], "replay")) {
                int sub_argc = argc - 1, ex = ts_cli_dist_begin(argv[1], &sub_argc, argv + 1);
                if (ex) return stdout_closed(ex);
                if (ts_cli_dist_quiet() && !freopen("/dev/null", "w", stdout)) return TS_EXIT_BAD;
                return stdout_closed(ts_cli_budget_exit(ts_cli_dist_end(commands[i].fn(sub_argc, argv + 1))));
            }
            return stdout_closed(ts_cli_budget_exit(commands[i].fn(argc - 1, argv + 1)));
        }
    ts_cli_errorf("unknown command '%s' (see 'trainscope --help')", argv[1]);
    return TS_EXIT_BAD;
}
