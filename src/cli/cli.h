/* cli.h - what the subcommands of the trainscope CLI share.
 *
 * Each subcommand lives in src/cli/cmd_<name>.c as `int ts_cmd_<name>(int argc,
 * char **argv)` (argv[0] is the subcommand name) and returns the process exit
 * code: 0 ok, 1 the analysis found nothing to do, 2 bad input or usage.
 */
#ifndef TS_CLI_H
#define TS_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include "trainscope/common.h"

enum { TS_EXIT_OK = 0, TS_EXIT_NOTHING = 1, TS_EXIT_BAD = 2 };

int ts_cmd_stats(int argc, char **argv);
int ts_cmd_breakdown(int argc, char **argv);
int ts_cmd_critical_path(int argc, char **argv);
int ts_cmd_replay(int argc, char **argv);
int ts_cmd_replay_precision(int argc, char **argv);   /* replay --precision-plan / --precision-greedy */
int ts_cmd_optimize_precision(int argc, char **argv); /* optimize --passes precision */
int ts_cmd_memory(int argc, char **argv);
int ts_cmd_record(int argc, char **argv);
int ts_cmd_info(int argc, char **argv);
int ts_cmd_diff(int argc, char **argv);
int ts_cmd_optimize(int argc, char **argv);
int ts_cmd_export(int argc, char **argv);
int ts_cmd_report(int argc, char **argv);
int ts_cmd_views(int argc, char **argv);

/* Print "trainscope: <msg>" to stderr. */
void ts_cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Map a library status to an exit code (parse/format errors are bad input). */
int ts_cli_exit_for(int status);

/* Load the traces named by paths[0..n) (iteration marker NULL = default).
 * On failure prints "trainscope: <why>" and returns TS_EXIT_BAD with *out
 * NULL; else TS_EXIT_OK. */
typedef struct ts_job ts_job;
int ts_cli_load(char **paths, int n, const char *iteration_marker, ts_job **out);
/* ts_cli_load for stats alone: ts_stats_load (bounded: each rank kept as the
 * slices statistics count), or ts_job_load with --in-memory (a distributed
 * run: whole ranks, as ts_cli_load). */
int ts_cli_load_stats(char **paths, int n, const char *iteration_marker, ts_job **out);
/* The same for info (ts_job_load_info) and diff (ts_diff_load). */
int ts_cli_load_info(char **paths, int n, ts_job **out);
int ts_cli_load_diff(char **paths, int n, const char *iteration_marker, ts_job **out);
/* breakdown: ts_breakdown_load, the trace and the stragglers' graph (*g NULL
 * and graph_err why when it cannot be built), *with_graph true; with
 * --in-memory ts_cli_load, *g NULL and *with_graph false (the caller builds
 * the graph). */
typedef struct ts_graph ts_graph;
int ts_cli_load_breakdown(char **paths, int n, const char *iteration_marker, ts_job **t, ts_graph **g,
                          ts_error *graph_err, bool *with_graph);

/* A distributed run (src/cli/dist.c, docs/distributed.md): begin takes
 * --distributed out of argv and, when given or started under MPI, loads the
 * MPI transport (exit code, 0 = go on); ts_cli_load then loads this process's
 * share and, on process 0, the whole trace (the others end there), or with
 * stats_summary each rank as stats' summary (ts_stats_load's);
 * ts_cli_dist_load_graph the trace's summaries and its graph, built on
 * process 0 as the ranks arrive (ts_graph_load's); end finalizes. quiet:
 * this process is not process 0 and prints nothing. */
struct ts_load_opts;
struct ts_graph_options;
int  ts_cli_dist_begin(const char *cmd, int *argc, char **argv);
int  ts_cli_dist_load(char **paths, int n, const struct ts_load_opts *lo, bool stats_summary, ts_job **out);
int  ts_cli_dist_load_graph(char **paths, int n, const struct ts_load_opts *lo, const struct ts_graph_options *go,
                            ts_job **out, struct ts_graph **graph);
int  ts_cli_dist_end(int exit_code);
bool ts_cli_dist_on(void);
bool ts_cli_dist_quiet(void);

/* The precision commands (replay --precision-*, optimize --passes precision):
 * "--precision-trace P=RUN" into runs[P] (and *low when unset), -1 on bad
 * input; and the runs loaded and their model built (status; err says why). */
#include "trainscope/precision.h"
int ts_cli_prec_trace_opt(const char *cmd, const char *arg, const char *runs[TS_PREC_COUNT], ts_precision *low);
/* "--granularity module|op" into *out, -1 on bad input (message printed). */
int ts_cli_prec_granularity_opt(const char *cmd, const char *arg, ts_prec_granularity *out);
/* The greedy's failure as the CLI words it (err filled, status returned). */
int ts_cli_prec_greedy_error(int rc, double limit_gb, int64_t closest_peak, ts_error *err);
int ts_cli_prec_model(const char *const runs[TS_PREC_COUNT], double overhead_us, bool warnings,
                      ts_job *t[TS_PREC_COUNT], ts_prec_model **m, ts_error *err);

/* Parse an iteration range "A:B", "A:" (open end), ":B" or "A" (= A:A) into
 * [*a, *b] (INT64_MIN / INT64_MAX for open ends); false unless A <= B. */
#include <stdbool.h>
bool ts_cli_parse_range(const char *s, int64_t *a, int64_t *b);

/* Option helpers shared by the subcommands; each prints one line
 * "trainscope: CMD: ..." and returns -1 on bad input, 0 otherwise. */
int ts_cli_opt_count(const char *cmd, const char *opt, const char *arg, uint32_t *out); /* 0..UINT32_MAX */
int ts_cli_opt_unknown(const char *cmd, const char *arg);   /* always -1 */
int ts_cli_opt_range(const char *cmd, const char *opt, const char *arg, int64_t *first, int64_t *last); /* "A:B" */
int ts_cli_opt_width(const char *cmd, const char *arg, int *out); /* --width: 0..INT32_MAX columns */
int ts_cli_need_trace(const char *cmd, int optind_, int argc); /* -1 when no PATH follows */
/* A number option within [lo, hi] (the one parser of every numeric option:
 * a value out of range, overflowing or with trailing text is refused). */
int ts_cli_opt_int(const char *cmd, const char *opt, const char *arg, int64_t lo, int64_t hi, int64_t *out);
int ts_cli_opt_real(const char *cmd, const char *opt, const char *arg, double lo, double hi, double *out);
/* Options every analysis command takes (long only, in each getopt table via
 * TS_CLI_COMMON_LONGOPTS, in each --help via TS_CLI_COMMON_HELP):
 * --window iterations|all (the analysis window: the complete iterations, the
 * default, or the whole trace) and --python-depth N (ranks without CPU ops:
 * python_function ranges at most N calls deep are the ops; ts_cli_load
 * applies it). ts_cli_opt_common parses one; -1 on bad input. */
enum { TS_CLI_OPT_WINDOW = 0x1001, TS_CLI_OPT_PYTHON_DEPTH = 0x1002 };
/* Also common (issue 27): --max-rss GB (the memory budget, default 80% of
 * MemTotal), --fold-replicas[=TOL] (replay and critical-path: fold replica
 * ranks) and --in-memory (stats too: read every rank whole, the path before
 * the bounded one). */
enum { TS_CLI_OPT_MAX_RSS = 0x1003, TS_CLI_OPT_FOLD = 0x1004, TS_CLI_OPT_IN_MEMORY = 0x1005 };
#define TS_CLI_COMMON_LONGOPTS \
    {"window", required_argument, 0, TS_CLI_OPT_WINDOW}, {"python-depth", required_argument, 0, TS_CLI_OPT_PYTHON_DEPTH}, \
    {"max-rss", required_argument, 0, TS_CLI_OPT_MAX_RSS}, {"fold-replicas", optional_argument, 0, TS_CLI_OPT_FOLD}, \
    {"in-memory", no_argument, 0, TS_CLI_OPT_IN_MEMORY}
#define TS_CLI_COMMON_CASES \
    case TS_CLI_OPT_WINDOW: case TS_CLI_OPT_PYTHON_DEPTH: case TS_CLI_OPT_MAX_RSS: case TS_CLI_OPT_FOLD: \
    case TS_CLI_OPT_IN_MEMORY
#define TS_CLI_COMMON_HELP \
    "  --window iterations|all  the iterations every rank has (default), or the\n" \
    "                           whole trace\n" \
    "  --python-depth N         a trace without CPU ops: its python_function ranges\n" \
    "                           at most N calls deep are the ops (default: all)\n" \
    TS_CLI_MAX_RSS_HELP
#define TS_CLI_MAX_RSS_HELP \
    "  --max-rss GB             stop cleanly (exit 2, saying what needed more) rather\n" \
    "                           than hold more than GB (default: 80% of the RAM)\n"
#define TS_CLI_IN_MEMORY_HELP \
    "  --in-memory              read every rank whole first (more memory; the\n" \
    "                           default keeps a summary of each rank as it is read)\n"
#define TS_CLI_GRAPH_HELP \
    "  --fold-replicas[=TOL]    ranks that replicate another (same ops, edges and\n" \
    "                           collectives, span and busy time within TOL, default\n" \
    "                           0.1) keep only their collectives; groups on stderr\n" \
    TS_CLI_IN_MEMORY_HELP
/* stats, critical-path, replay: --distributed (main.c takes it out of argv, ts_cli_dist_begin) */
#define TS_CLI_DIST_HELP \
    "  --distributed            share the rank files out over MPI's processes; process\n" \
    "                           0 prints the answer (implied when started by mpirun)\n"
/* What the graph commands were asked: --fold-replicas (tolerance, 0 = off) and --in-memory. */
double ts_cli_fold_tolerance(void);
bool   ts_cli_in_memory(void);
/* replay and critical-path: load paths into a trace and its graph, by the
 * bounded path (ts_graph_load) unless --in-memory or `whole` (the command
 * reads slices the graph does not name: replay --scale, critical-path
 * --export) or a distributed run (process 0 gathers whole ranks);
 * *go gets the fold options (refused with any of these).
 * Prints the error and returns TS_EXIT_BAD on failure; with --fold-replicas
 * prints the replica groups to stderr. */
typedef struct ts_graph ts_graph;
typedef struct ts_graph_options ts_graph_options;
int ts_cli_load_graph(char **paths, int n, const char *iteration_marker, bool whole, ts_graph_options *go,
                      ts_job **t, ts_graph **g);
/* optimize --fold-replicas: the folded graph's representatives alone, read
 * again with the load options of ts_cli_load_graph (prints the error). */
int ts_cli_load_representatives(const ts_graph *g, const char *iteration_marker, ts_job **t, ts_graph **rep);
/* After the command: a run stopped by the memory budget says so (one line:
 * the limit, what was held, in which phase) and exits 2. */
int ts_cli_budget_exit(int ex);
int ts_cli_opt_common(const char *cmd, int code, const char *arg);
bool ts_cli_window_all(void);   /* --window all was given */
/* --table NAME and -o DIR (CSV tables): -1 with a message unless the format
 * is csv (TS_FMT_CSV, trainscope/report.h) and at most one is given. */
int ts_cli_csv_dest(const char *cmd, int format, const char *table, const char *dir);
/* --format ('f'), --table ('T') and -o DIR ('o') into o: 1 when option code
 * was one of them, -1 after a --format other than table/json/csv (said), 0
 * for any other code. */
struct ts_report_opts;
int ts_cli_opt_output(const char *cmd, int code, const char *arg, struct ts_report_opts *o);
#define TS_CLI_CSV_HELP(TABLES) \
    "  --table NAME             csv: print the one table NAME of\n" \
    "                           " TABLES "\n" \
    "  -o DIR                   csv: write every table to DIR/NAME.csv (all or none)\n"
/* True when an executable of this name is on PATH. */
bool ts_cli_find_program(const char *name);
/* Run argv (searching PATH), wait; the exit status, or -1 when it could not run. */
int ts_cli_run(char *const argv[]);

#endif
