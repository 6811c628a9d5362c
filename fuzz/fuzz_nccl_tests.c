/* fuzz_nccl_tests.c - libFuzzer target for the nccl-tests log parser and the
 * cost-model fit on whatever samples it accepted. Errors are fine; crashes,
 * leaks and sanitizer reports are bugs. Build: make fuzz. */
#include "fuzz_input.h"
#include "trainscope/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0) return 0;
    ts_coll_model *m = NULL;
    if (ts_coll_model_create(&m) == TS_OK) {
        ts_error err;
        if (ts_coll_model_load_nccl_tests(m, path, &err) == TS_OK && ts_coll_model_fit(m, &err) == TS_OK)
            (void)ts_coll_model_predict_ns(m, TS_COLL_ALL_REDUCE, 1 << 20, 8);
        ts_coll_model_destroy(m);
    }
    close(fd);
    return 0;
}
