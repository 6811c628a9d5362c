/* cmd_replay_precision.c - `trainscope replay --precision-plan FILE` and
 * `--precision-greedy`: the precision what-if of include/trainscope/
 * precision.h from a fp32 run and runs at lower precisions.
 *
 * Thin: parse options, load the runs, build the model, print the plan's
 * predicted iteration time and peak memory (or the greedy plan as a plan
 * file). Not the graph replay (cmd_replay.c): a precision run is one CPU
 * thread, replayed as the sum of its ops and gaps.
 * Exit: 0 ok, 2 bad input or usage (unmappable ops, a plan naming ops the
 * run lacks, a budget no plan meets).
 */
#include <math.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "trainscope/ingest.h"
#include "trainscope/optimize.h"
#include "trainscope/precision.h"
#include "trainscope/report_replay.h"

typedef struct prec_args {
    const char *runs[TS_PREC_COUNT];   /* paths; runs[FP32] is the PATH operand */
    const char *plan, *indicators, *format;
    const char *plan_json;             /* --plan plan.json of optimize --passes precision */
    char       *plan_runs[TS_PREC_COUNT];  /* the runs plan.json records (owned), when none are given */
    bool        greedy;
    ts_prec_granularity by;
    double      budget, limit_gb, overhead_us;
    ts_precision low;
    const ts_job *const *traces;     /* the runs loaded, [TS_PREC_COUNT], NULL where none */
} prec_args;

static void usage(FILE *f)
{
    fputs("usage: trainscope replay --precision-plan PLAN [--precision-trace P=RUN]... FP32_RUN\n"
          "       trainscope replay --plan DIR/plan.json [--precision-trace P=RUN... FP32_RUN]\n"
          "       trainscope replay --precision-greedy [--accuracy-budget X] [--indicators FILE]\n"
          "                         [--memory-limit GB] [--granularity module|op]\n"
          "                         --precision-trace P=RUN... FP32_RUN\n\n"
          "Predict the iteration time and peak memory of a mixed-precision plan from\n"
          "profiled runs of the same model at fp32 and at lower precisions (each a trace\n"
          "with ProfilerStep#N ranges, ops with \"Input Dims\" and \"Sequence number\",\n"
          "[memory] events for memory), or search a plan with QSync's greedy method.\n\n"
          "options:\n"
          "  --precision-trace P=RUN  the run at precision P (bf16, fp16, int8)\n"
          "  --precision-plan PLAN    '<op|name:prefix|*> <fp32|bf16|fp16|int8>' per line\n"
          "  --precision-greedy       print the greedy plan (a plan file) and its prediction\n"
          "  --plan FILE              re-predict plan.json of `optimize --passes precision`\n"
          "                           (runs: those it records unless given)\n"
          "  --lower P                with --precision-greedy: the precision to lower to\n"
          "                           (default: the one --precision-trace gave)\n"
          "  --accuracy-budget X      cap on the summed indicators of lowered ops (default:\n"
          "                           no cap)\n"
          "  --indicators FILE        '<op|name:prefix|*> <indicator>' per line, later lines\n"
          "                           win (default 1 per op)\n"
          "  --memory-limit GB        the plan must fit this much memory (GiB)\n"
          "  --granularity module|op  what the greedy changes at a time: a module's ops\n"
          "                           together, as a per-module autocast plan applies them\n"
          "                           (default), or each op on its own\n"
          "  --profiler-overhead-us X the profiler's cost per profiled op, measured apart:\n"
          "                           taken off every op and gap so the prediction is for\n"
          "                           the step unprofiled (default 0: the runs' times)\n"
          "  --format table|json      output (default table)\n"
          "  -h, --help               this help\n\n"
          "exit codes: 0 ok, 2 bad input or usage\n", f);
}

/* --plan plan.json given no runs: the runs (and profiler cost) it records. */
static int runs_of_plan(prec_args *a)
{
    ts_error err = {0};
    double ov;
    if (ts_optimize_prec_plan_runs(a->plan_json, a->plan_runs, &ov, &err)) {
        ts_cli_errorf("%s", err.msg);
        return TS_EXIT_BAD;
    }
    for (int p = 0; p < TS_PREC_COUNT; p++) {
        a->runs[p] = a->plan_runs[p];
        if (p && a->runs[p] && !a->low) a->low = (ts_precision)p;
    }
    if (!(a->overhead_us > 0)) a->overhead_us = ov;
    return TS_EXIT_OK;
}

static int parse(int argc, char **argv, prec_args *a)
{
    static const struct option LONG[] = {
        {"precision-plan", required_argument, 0, 'p'}, {"precision-trace", required_argument, 0, 't'},
        {"precision-greedy", no_argument, 0, 'g'}, {"accuracy-budget", required_argument, 0, 'a'},
        {"indicators", required_argument, 0, 'i'}, {"memory-limit", required_argument, 0, 'm'},
        {"lower", required_argument, 0, 'l'}, {"format", required_argument, 0, 'f'},
        {"profiler-overhead-us", required_argument, 0, 'o'}, {"plan", required_argument, 0, 'P'},
        {"granularity", required_argument, 0, 'G'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
        switch (c) {
        case 'p': a->plan = optarg; break;
        case 'g': a->greedy = true; break;
        case 'i': a->indicators = optarg; break;
        case 'f': a->format = optarg; break;
        case 'a': if (ts_cli_opt_real("replay", "--accuracy-budget", optarg, 1e-12, 1e12, &a->budget)) return TS_EXIT_BAD; break;
        case 'm': if (ts_cli_opt_real("replay", "--memory-limit", optarg, 1e-6, 1e6, &a->limit_gb)) return TS_EXIT_BAD; break;
        case 'o': if (ts_cli_opt_real("replay", "--profiler-overhead-us", optarg, 1e-6, 1e6, &a->overhead_us)) return TS_EXIT_BAD; break;
        case 'l':
            if (!ts_precision_from_name(optarg, &a->low) || a->low == TS_PREC_FP32) {
                ts_cli_errorf("replay: --lower takes bf16, fp16 or int8, not '%s'", optarg);
                return TS_EXIT_BAD;
            }
            break;
        case 't': if (ts_cli_prec_trace_opt("replay", optarg, a->runs, &a->low)) return TS_EXIT_BAD; break;
        case 'P': a->plan_json = optarg; break;
        case 'G': if (ts_cli_prec_granularity_opt("replay", optarg, &a->by)) return TS_EXIT_BAD; break;
        case 'h': usage(stdout); return -1;
        default: return ts_cli_opt_unknown("replay", argv[optind - 1]) ? TS_EXIT_BAD : TS_EXIT_BAD;
        }
    }
    int modes = !!a->plan + !!a->greedy + !!a->plan_json;
    if ((argc - optind != 1 && !(a->plan_json && argc == optind)) || modes != 1 ||
        (strcmp(a->format, "table") && strcmp(a->format, "json"))) {
        ts_cli_errorf("replay: expected one of --precision-plan PLAN, --precision-greedy or --plan plan.json, and "
                      "one FP32_RUN (see 'trainscope replay --precision-plan --help')");
        return TS_EXIT_BAD;
    }
    if (argc > optind) a->runs[TS_PREC_FP32] = argv[optind];
    return a->plan_json && argc == optind ? runs_of_plan(a) : TS_EXIT_OK;
}

/* A failure's message into err (the CLI's wording: it names the options). */
static int fail(ts_error *err, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(ts_error *err, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return err->status = status;
}

/* --precision-greedy: the plan within the budget (and --memory-limit), then
 * its prediction, every line a plan file's. */
static int greedy(const prec_args *a, const ts_prec_model *m, uint8_t *prec, double *ind, ts_error *err)
{
    int rc = ts_prec_indicators_load(m, a->indicators, ind, err);
    if (rc) return rc;
    ts_prec_prediction p;
    int64_t limit = llround(a->limit_gb * 1073741824.0), base = ts_prec_model_base_bytes(m);
    if (limit > 0 && base < 0)
        rc = fail(err, TS_EINVAL, "%s: --memory-limit needs [memory] events in the runs", a->runs[0]);
    else if (limit > 0 && limit < base)
        rc = fail(err, TS_ERANGE, "--memory-limit %.4g GiB is below the %.4g GiB that the weights, buffers "
                  "and batch take alone (%s)", a->limit_gb, (double)base / 1073741824.0, a->runs[0]);
    else {
        p.peak_bytes = -1;
        rc = ts_prec_greedy(m, ind, a->budget > 0 ? a->budget : 1e300, limit, TS_PREC_FP32, a->low, a->by, prec, &p);
        if (rc) ts_cli_prec_greedy_error(rc, a->limit_gb, p.peak_bytes, err);
    }
    if (!rc) rc = ts_report_prec_plan(stdout, m, prec);
    if (!rc) rc = ts_report_prec_table(stdout, m, &p, "# ");
    return rc;
}

static int run(const prec_args *a, ts_prec_model *m, ts_error *err)
{
    uint32_t n = ts_prec_model_n_units(m);
    uint8_t *prec = calloc(n + 1, 1);
    double *ind = calloc(n + 1, sizeof *ind);
    int rc = prec && ind ? TS_OK : fail(err, TS_ENOMEM, "out of memory");
    ts_prec_prediction p;
    if (!rc && a->plan) rc = ts_prec_plan_load(m, a->plan, prec, err);
    if (!rc && a->plan_json) rc = ts_optimize_prec_plan_load(a->plan_json, m, prec, err);
    if (!rc && (a->plan || a->plan_json)) {
        ts_prec_predict(m, prec, &p);
        int wrc = !strcmp(a->format, "json") ? ts_report_prec_json(stdout, m, &p, a->traces)
                                             : ts_report_prec_table(stdout, m, &p, "");
        (void)wrc;   /* a failed write of stdout: main says so once, naming standard output */
    }
    if (!rc && a->greedy) {
        rc = greedy(a, m, prec, ind, err);
        if (rc == TS_EIO) rc = TS_OK;   /* the same */
    }
    free(prec);
    free(ind);
    return rc;
}

int ts_cli_prec_granularity_opt(const char *cmd, const char *arg, ts_prec_granularity *out)
{
    if (!strcmp(arg, "module")) *out = TS_PREC_BY_MODULE;
    else if (!strcmp(arg, "op")) *out = TS_PREC_BY_OP;
    else {
        ts_cli_errorf("%s: --granularity takes module or op, not '%s'", cmd, arg);
        return -1;
    }
    return 0;
}

int ts_cli_prec_greedy_error(int rc, double limit_gb, int64_t closest_peak, ts_error *err)
{
    if (rc == TS_ERANGE)
        return fail(err, rc, "no plan within the accuracy budget fits %.4g GiB (the closest plan peaks at %.4g GiB)",
                    limit_gb, (double)closest_peak / 1073741824.0);
    if (rc == TS_EINVAL) return fail(err, rc, "the greedy needs a --precision-trace run to lower to");
    if (rc == TS_ENOENT)
        return fail(err, rc, "no op of the fp32 run is inside a module's record_function range (a scope named "
                    "like fc1 or layer1.0), so no per-module plan can lower any; --granularity op plans op by op");
    return fail(err, rc, "out of memory");
}

int ts_cli_prec_trace_opt(const char *cmd, const char *arg, const char *runs[TS_PREC_COUNT], ts_precision *low)
{
    const char *eq = strchr(arg, '=');
    char name[16];
    ts_precision p;
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg < 15 ? eq - arg : 15) : 0, arg);
    if (!eq || !eq[1] || !ts_precision_from_name(name, &p) || p == TS_PREC_FP32) {
        ts_cli_errorf("%s: --precision-trace wants P=RUN with P bf16, fp16 or int8, not '%s'", cmd, arg);
        return -1;
    }
    runs[p] = eq + 1;
    if (!*low) *low = p;
    return 0;
}

int ts_cli_prec_model(const char *const runs[TS_PREC_COUNT], double overhead_us, bool warnings,
                      ts_job *t[TS_PREC_COUNT], ts_prec_model **m, ts_error *err)
{
    int rc = TS_OK;
    for (int p = 0; p < TS_PREC_COUNT && !rc; p++)
        if (runs[p]) rc = ts_job_load(&runs[p], 1, NULL, &t[p], err);
    for (int p = 0; p < TS_PREC_COUNT && !rc && warnings; p++)
        if (t[p]) ts_report_warnings(stderr, t[p], NULL, 0, ts_report_warn_all(false));
    if (!rc) rc = ts_prec_model_create((const ts_job *const *)t, runs, m, err);
    if (!rc) ts_prec_model_set_overhead(*m, overhead_us * 1e3);
    return rc;
}

int ts_cmd_replay_precision(int argc, char **argv)
{
    prec_args a = {.format = "table"};
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? TS_EXIT_OK : rc;
    ts_job *t[TS_PREC_COUNT] = {0};
    ts_error err = {0};
    a.traces = (const ts_job *const *)t;
    bool json = (a.plan || a.plan_json) && !strcmp(a.format, "json");   /* then the JSON carries the runs' warnings */
    ts_prec_model *m = NULL;
    rc = ts_cli_prec_model(a.runs, a.overhead_us, !json, t, &m, &err);
    if (!rc) rc = run(&a, m, &err);
    ts_prec_model_destroy(m);
    for (int p = 0; p < TS_PREC_COUNT; p++) ts_job_destroy(t[p]);
    for (int p = 0; p < TS_PREC_COUNT; p++) free(a.plan_runs[p]);
    if (rc) ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
    return rc ? TS_EXIT_BAD : TS_EXIT_OK;
}
