/* fuzz_nsys.c - libFuzzer target for the Nsight Systems SQLite reader.
 *
 * Feeds arbitrary bytes through ts__nsys_ingest_buffer: SQLite opens them
 * read-only in place (sqlite3_deserialize), the reader walks every table it
 * knows and ts__rank_finish() runs. A finding is any sanitizer report or
 * crash; a refused database is the normal outcome. Seeds (fuzz/corpus/
 * fuzz_nsys/): the real CloverLeaf export cut to a few rows per table, and a
 * hand-made export in nsys 2022's layout with NVTX and memset rows.
 */
#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_rank *r = NULL;
    ts_error err;
    if (ts__nsys_ingest_buffer("fuzz.sqlite", data, size, NULL, &r, &err) == TS_OK) {
        for (uint32_t i = 0; i < r->slices.n; i++) (void)ts__rank_str(r, r->slices.name[i]);
        ts__rank_destroy(r);
    }
    return 0;
}
