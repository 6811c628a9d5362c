/* fuzz_fx.c - libFuzzer target for the torch.fx dump reader and the liveness
 * pass behind it. The input is split at the first "\n=====\n" into a
 * forward and a backward dump (no separator: the same text twice); both rule
 * sets run. Any crash, leak or sanitizer report is a bug; errors are fine.
 * Build: make fuzz; run: build/fuzz/fuzz_fx -max_len=4096 CORPUS_DIR
 */
#include <stdint.h>
#include <string.h>
#include "memory/memgraph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data, *sep = NULL;
    for (size_t i = 0; i + 7 <= size && !sep; i++)
        if (!memcmp(text + i, "\n=====\n", 7)) sep = text + i;
    const char *names[2] = {"forward.py", "backward.py"};
    const char *texts[2] = {text, sep ? sep + 7 : text};
    size_t lens[2] = {sep ? (size_t)(sep - text) : size, sep ? size - (size_t)(sep + 7 - text) : size};
    for (int g10 = 0; g10 < 2; g10++) {
        ts_mem_options opt = {.size = sizeof opt, .g10_compat = g10, .hold_saved = !g10,
                              .workspace = TS_MEM_WORKSPACE_CPU};
        ts_memgraph *g = NULL;
        ts_error err;
        if (ts__mem_load_text(names, texts, lens, &opt, &g, &err) == TS_OK) {
            ts_mem_summary s;
            const ts_mem_device *dev = ts_mem_device_find("a100");
            ts_memgraph_estimate_times(g, dev);
            if (ts_memgraph_analyze(g, &s) == TS_OK) {
                uint32_t n;
                (void)ts_memgraph_offload(g, 32.0, &n);
            }
            ts_memgraph_destroy(g);
        }
    }
    return 0;
}
