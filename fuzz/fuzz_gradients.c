/* fuzz_gradients.c - libFuzzer target for the gradients.json reader used by
 * the bucket-size what-if. Build: make fuzz. */
#include "fuzz_input.h"
#include "replay/gradients.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0) return 0;
    ts_gradients g;
    ts_error err;
    if (ts__gradients_load(path, &g, &err) == TS_OK) ts__gradients_free(&g);
    close(fd);
    return 0;
}
