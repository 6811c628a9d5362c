/* fuzz_precision.c - libFuzzer target for the precision model builder: the
 * input is a trace (whatever the JSON reader accepts) taken as both the fp32
 * and the bf16 run; the model is built, an all-bf16 plan predicted and the
 * greedy search run. Build: make fuzz. */
#include <stdlib.h>
#include "fuzz_input.h"
#include "trainscope/ingest.h"
#include "trainscope/precision.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0) return 0;
    const char *p = path;
    ts_job *t = NULL;
    ts_error err;
    if (ts_job_load(&p, 1, NULL, &t, &err) == TS_OK) {
        const ts_job *runs[TS_PREC_COUNT] = {t, t};
        const char *names[TS_PREC_COUNT] = {"fp32", "bf16"};
        ts_prec_model *m = NULL;
        if (ts_prec_model_create(runs, names, &m, &err) == TS_OK) {
            uint32_t n = ts_prec_model_n_units(m);
            uint8_t *prec = malloc(n ? n : 1);
            ts_prec_prediction pr;
            for (uint32_t u = 0; u < n; u++) prec[u] = u % 2 ? TS_PREC_BF16 : TS_PREC_FP32;
            ts_prec_predict(m, prec, &pr);
            (void)ts_prec_greedy(m, NULL, 3, 1 << 20, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_OP, prec, &pr);
            (void)ts_prec_greedy(m, NULL, 3, 1 << 20, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_MODULE, prec, &pr);
            free(prec);
        }
        ts_prec_model_destroy(m);
    }
    ts_job_destroy(t);
    close(fd);
    return 0;
}
