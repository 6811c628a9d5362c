/* fuzz_xplane.c - libFuzzer target for the TensorFlow XPlane reader and the
 * protobuf wire cursor under it: arbitrary bytes through
 * ts__xplane_ingest_buffer and ts__rank_finish(). A finding is any sanitizer
 * report or crash; refused bytes are the normal outcome. Seeds
 * (fuzz/corpus/fuzz_xplane/): an excerpt of the real 8-GPU BERT capture (the
 * GPU plane with one stream, the host plane cut to 40 events per line, their
 * metadata).
 */
#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_rank *r = NULL;
    ts_error err;
    if (ts__xplane_ingest_buffer("fuzz.xplane.pb", data, size, &r, &err) == TS_OK) {
        for (uint32_t i = 0; i < r->slices.n; i++) (void)ts__rank_str(r, r->slices.name[i]);
        ts__rank_destroy(r);
    }
    return 0;
}
