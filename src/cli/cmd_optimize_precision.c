/* cmd_optimize_precision.c - `trainscope optimize --passes precision`:
 * QSync's greedy precision plan (include/trainscope/optimize.h's precision
 * pass) from runs of one model at fp32 and at a lower precision, printed and
 * written as plan.json, greedy.plan and dPRO's amp files.
 *
 * Thin: parse options, load the runs, ts_optimize_precision, print, write.
 * Not the job-graph passes (cmd_optimize.c). Exit: 0 ok, 2 bad input or
 * usage (unmappable runs, a budget or limit no plan meets, bad lists).
 */
#include <math.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "trainscope/optimize.h"
#include "trainscope/report_replay.h"

typedef struct oprec_args {
    ts_optimize_prec_options o;
    double limit_gb;
    const char *out_dir, *format;
} oprec_args;

static void usage(FILE *f)
{
    fputs("usage: trainscope optimize --passes precision --precision-trace P=RUN\n"
          "                           [OPTIONS] FP32_RUN\n\n"
          "Search the fastest mixed-precision plan within an accuracy budget and a memory\n"
          "limit (QSync's greedy), from profiled runs of the same model at fp32 and at a\n"
          "lower precision (docs/precision.md), and write it as plan.json, a plan file\n"
          "torch users apply and dPRO's auto mixed precision files.\n\n"
          "options:\n"
          "  --passes precision       this pass (the job-graph passes are separate runs)\n"
          "  --precision-trace P=RUN  the run at precision P (bf16, fp16, int8)\n"
          "  --lower P                the precision to lower to (default: the traced one)\n"
          "  --accuracy-budget X      cap on the summed indicators of lowered ops (default:\n"
          "                           none)\n"
          "  --indicators FILE        '<op|name:prefix|op:N|*> <indicator>' per line\n"
          "                           (trainscope_precision.py writes one; default 1)\n"
          "  --allow-list FILE        ops that may change: a torch autocast op list or\n"
          "                           dPRO's TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_*\n"
          "                           lists; the others stay fp32 (default: all may)\n"
          "  --memory-limit GB        the plan's peak must fit this much memory (GiB)\n"
          "  --granularity module|op  what the greedy changes at a time: a module's ops\n"
          "                           together, as greedy.plan is applied (default), or\n"
          "                           each op on its own\n"
          "  --profiler-overhead-us X the profiler's cost per profiled op\n"
          "  -o, --output DIR         write plan.json, greedy.plan, amp_priorlist.txt and\n"
          "                           amp.env\n"
          "  --format table|json      output (default table)\n"
          "  -h, --help               this help\n\n"
          "Re-predict the plan with `trainscope replay --plan DIR/plan.json`.\n"
          "exit codes: 0 ok, 2 bad input or usage\n", f);
}

static int passes_ok(const char *s)
{
    if (!strcmp(s, "precision")) return 0;
    ts_cli_errorf("optimize: --passes precision runs alone (its input is runs at each precision, not a job's "
                  "trace), got '%s'", s);
    return -1;
}

static int parse(int argc, char **argv, oprec_args *a)
{
    static const struct option LONG[] = {
        {"passes", required_argument, 0, 'p'}, {"precision-trace", required_argument, 0, 't'},
        {"lower", required_argument, 0, 'l'}, {"accuracy-budget", required_argument, 0, 'a'},
        {"indicators", required_argument, 0, 'i'}, {"allow-list", required_argument, 0, 'A'},
        {"memory-limit", required_argument, 0, 'm'}, {"profiler-overhead-us", required_argument, 0, 'O'},
        {"output", required_argument, 0, 'o'}, {"format", required_argument, 0, 'f'},
        {"granularity", required_argument, 0, 'G'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c, bad = 0;
    while (!bad && (c = getopt_long(argc, argv, "ho:", LONG, NULL)) != -1) {
        switch (c) {
        case 'p': bad = passes_ok(optarg); break;
        case 't': bad = ts_cli_prec_trace_opt("optimize", optarg, a->o.runs, &a->o.low); break;
        case 'l':
            if (!ts_precision_from_name(optarg, &a->o.low) || a->o.low == TS_PREC_FP32) {
                ts_cli_errorf("optimize: --lower takes bf16, fp16 or int8, not '%s'", optarg);
                bad = -1;
            }
            break;
        case 'a': bad = ts_cli_opt_real("optimize", "--accuracy-budget", optarg, 1e-12, 1e12, &a->o.accuracy_budget); break;
        case 'i': a->o.indicators = optarg; break;
        case 'A': a->o.allow_list = optarg; break;
        case 'm': bad = ts_cli_opt_real("optimize", "--memory-limit", optarg, 1e-6, 1e6, &a->limit_gb); break;
        case 'O': bad = ts_cli_opt_real("optimize", "--profiler-overhead-us", optarg, 0, 1e6, &a->o.profiler_overhead_us); break;
        case 'o': a->out_dir = optarg; break;
        case 'G': bad = ts_cli_prec_granularity_opt("optimize", optarg, &a->o.granularity); break;
        case 'f': a->format = optarg; break;
        case 'h': usage(stdout); return 1;
        default: return ts_cli_opt_unknown("optimize", argv[optind - 1]);
        }
    }
    if (bad) return -1;
    if (argc - optind != 1 || (strcmp(a->format, "table") && strcmp(a->format, "json"))) {
        ts_cli_errorf("optimize: --passes precision wants one FP32_RUN and --format table or json (see "
                      "'trainscope optimize --passes precision --help')");
        return -1;
    }
    a->o.runs[TS_PREC_FP32] = argv[optind];
    a->o.memory_limit_bytes = llround(a->limit_gb * 1073741824.0);   /* GiB printed to 12 decimals gives its bytes back */
    return 0;
}

int ts_cmd_optimize_precision(int argc, char **argv)
{
    oprec_args a = {.o = {.size = sizeof a.o}, .format = "table"};
    int prc = parse(argc, argv, &a);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_job *t[TS_PREC_COUNT] = {0};
    ts_prec_model *m = NULL;
    ts_optimize_prec *p = NULL;
    ts_error err = {0};
    int rc = ts_cli_prec_model(a.o.runs, a.o.profiler_overhead_us, true, t, &m, &err);
    if (!rc) rc = ts_optimize_precision(m, &a.o, &p, &err);
    if (!rc && a.out_dir) rc = ts_optimize_prec_write_plan(p, a.out_dir, &err);
    if (!rc) {
        int wrc = !strcmp(a.format, "json") ? ts_report_prec_optimize_json(stdout, p)
                                            : ts_report_prec_optimize_table(stdout, m, p);
        (void)wrc;   /* a failed write of stdout: main says so once, naming standard output */
    }
    ts_optimize_prec_destroy(p);
    ts_prec_model_destroy(m);
    for (int i = 0; i < TS_PREC_COUNT; i++) ts_job_destroy(t[i]);
    if (rc) ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
    return rc ? TS_EXIT_BAD : TS_EXIT_OK;
}
