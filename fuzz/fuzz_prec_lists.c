/* fuzz_prec_lists.c - libFuzzer target for the precision pass's readers: the
 * input is read as an AMP-style allow list (ts_prec_allow_list_load: torch
 * autocast op lists, TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_* settings) and
 * as a precision plan.json (ts_optimize_prec_plan_load, _plan_runs,
 * ts_optimize_plan_is_precision), against a fixed two-op model (MINI below,
 * a linear and a relu with their backward ops). Build: make fuzz. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fuzz_input.h"
#include "trainscope/ingest.h"
#include "trainscope/optimize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char MINI[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#0\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":200},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":30,"
    "\"args\":{\"Sequence number\":1,\"Input Dims\":[[8,4],[2,4]]}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":50,\"dur\":10,"
    "\"args\":{\"Sequence number\":2,\"Input Dims\":[[8,2]]}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_function: ReluBackward0\",\"pid\":1,"
    "\"tid\":1,\"ts\":70,\"dur\":10,\"args\":{\"Sequence number\":-1}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ReluBackward0\",\"pid\":1,\"tid\":1,\"ts\":71,\"dur\":8,"
    "\"args\":{\"Sequence number\":2}}]}";

static ts_prec_model *model(void)
{
    static ts_prec_model *m;
    static ts_job *t;
    if (m) return m;
    char path[64];
    int fd = fuzz_memfile((const uint8_t *)MINI, sizeof MINI - 1, path, sizeof path);
    if (fd < 0) return NULL;
    const char *p = path;
    ts_error err;
    if (ts_job_load(&p, 1, NULL, &t, &err) == TS_OK) {
        const ts_job *runs[TS_PREC_COUNT] = {t, t};
        const char *names[TS_PREC_COUNT] = {"fp32", "bf16"};
        if (ts_prec_model_create(runs, names, &m, &err) != TS_OK) m = NULL;
    }
    close(fd);
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_prec_model *m = model();
    if (!m) return 0;
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0) return 0;
    ts_error err;
    uint8_t allowed[4], prec[4];
    uint32_t n;
    (void)ts_prec_allow_list_load(m, path, allowed, &n, &err);
    (void)ts_optimize_prec_plan_load(path, m, prec, &err);
    (void)ts_optimize_plan_is_precision(path);
    char *runs[TS_PREC_COUNT];
    double ov;
    if (ts_optimize_prec_plan_runs(path, runs, &ov, &err) == TS_OK)
        for (int r = 0; r < TS_PREC_COUNT; r++) free(runs[r]);
    close(fd);
    return 0;
}
