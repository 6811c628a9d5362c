/* fuzz_xla_candidates.c - libFuzzer target for the reader of XLA fusion
 * candidate lists (dPRO's --xla_candidate_path, src/optimize/op_fusion_xla.c).
 * Build: make fuzz. */
#include "optimize/op_fusion.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_xla x;
    ts_error err;
    if (ts__xla_parse(&x, "candidates.txt", (const char *)data, size, &err) == TS_OK) {
        if (x.n) (void)ts__xla_has(&x, x.name[0]);
        ts__xla_free(&x);
    }
    return 0;
}
