/* fuzz_json.c - libFuzzer target for the Chrome-trace JSON reader.
 *
 * Feeds arbitrary bytes (plain, or gzip/zstd when the magic bytes say so)
 * through the whole parse and ts__rank_finish(). A finding is any sanitizer
 * report or crash; rejected input is the normal outcome. Build: `make fuzz`;
 * run: build/fuzz/fuzz_json -max_total_time=60 CORPUS_DIR.
 */
#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_rank *r = NULL;
    ts_error err;
    if (ts__ingest_json_buffer("fuzz.json", data, size, NULL, &r, &err) == TS_OK) {
        /* touch what analyses read, so bad row ids would show up */
        for (uint32_t i = 0; i < r->slices.n; i++) (void)ts__rank_str(r, r->slices.name[i]);
        ts__rank_destroy(r);
    }
    return 0;
}
