/* fuzz_dpro_table.c - libFuzzer target for the reader of dPRO's per-op
 * timing tables (name.txt + avg.txt, src/optimize/dpro_table.c). The input
 * is name.txt, a NUL byte, then avg.txt. Build: make fuzz. */
#include <string.h>

#include "optimize/dpro_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data, *nul = memchr(s, 0, size);
    size_t nn = nul ? (size_t)(nul - s) : size;
    const char *avg = nul ? nul + 1 : s;
    size_t na = nul ? size - nn - 1 : size;
    ts_dpt t;
    ts_error err;
    if (ts__dpt_parse(&t, "name.txt", s, nn, "avg.txt", avg, na, &err) == TS_OK) {
        ts_cost_model m;
        if (ts__dpt_fit(&t, TS_DPT_FP32, 0, &m) == TS_OK) ts__cost_model_free(&m);
        ts__dpt_free(&t);
    }
    return 0;
}
