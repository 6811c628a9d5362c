/* fuzz_mem_timeline.c - libFuzzer target for the export_memory_timeline_raw
 * reader (plain or gzip: the reader sniffs). Build: make fuzz. */
#include "fuzz_input.h"
#include "trainscope/memory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0) return 0;
    ts_mem_timeline tl;
    ts_error err;
    (void)ts_mem_timeline_load_raw(path, &tl, &err);
    close(fd);
    return 0;
}
