/* fuzz_chakra.c - libFuzzer target for the Chakra execution-trace reader
 * (src/ingest/chakra.c) and the protobuf wire cursor under it: arbitrary
 * bytes through ts__chakra_ingest_buffer, its replay, ts__rank_finish(), the
 * numbered flow table (ends on slices) and its serialized form read back.
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
        for (uint32_t i = 0; i < r->flows.n; i++)   /* the numbered flow table: ends on slices, ids in order */
            if (r->flows.from[i] >= r->slices.n || r->flows.to[i] >= r->slices.n || ts__flow_id(&r->flows, i) != i ||
                ts__flow_kind(&r->flows, i) != TS_FLOW_DEP)
                __builtin_trap();
        ts_buf b;   /* and it reads back whole from its serialized form */
        ts__buf_init(&b);
        ts_rank *back = NULL;
        if (ts__rank_serialize(r, &b) == TS_OK && ts__rank_deserialize(b.s, b.len, "fuzz", &back, &err) == TS_OK) {
            if (back->flows.n != r->flows.n) __builtin_trap();
            for (uint32_t i = 0; i < r->flows.n; i++)
                if (back->flows.id[i] != i || back->flows.from[i] != r->flows.from[i] || back->flows.to[i] != r->flows.to[i])
                    __builtin_trap();
        }
        ts__rank_destroy(back);
        ts__buf_free(&b);
        ts__rank_destroy(r);
    }
    return 0;
}
