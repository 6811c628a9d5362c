/* fuzz_chakra.c - libFuzzer target for the Chakra execution-trace reader
 * (src/ingest/chakra.c) and the protobuf wire cursor under it: arbitrary
 * bytes through ts__chakra_ingest_buffer, its replay and ts__rank_finish().
 * A finding is any sanitizer report, crash or hang; refused bytes are the
 * normal outcome. Seeds (fuzz/corpus/fuzz_chakra/): the GlobalMetadata and
 * first 12 nodes of the real chakra.0.et (two COMM_COLL among them), and a
 * hand-made two-node dependency cycle.
 */
#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_rank *r = NULL;
    ts_error err;
    if (ts__chakra_ingest_buffer("fuzz.0.et", data, size, &r, &err) == TS_OK) {
        for (uint32_t i = 0; i < r->slices.n; i++) (void)ts__rank_str(r, r->slices.name[i]);
        ts__rank_destroy(r);
    }
    return 0;
}
