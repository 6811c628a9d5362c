/* fuzz_g10_config.c - libFuzzer target for the G10 tool's config file reader
 * (`trainscope memory g10.config`): key/value lines, numbers and path
 * resolution. Build: make fuzz. */
#include "fuzz_input.h"
#include "trainscope/memory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ts_mem_g10_config cfg;
    char path[64];
    ts_error err;
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0) return 0;
    (void)ts_mem_g10_config_load(path, &cfg, &err);
    close(fd);
    return 0;
}
