/* fuzz_pickle.c - libFuzzer target for the strict pickle reader and the
 * allocator snapshot analysis on top of it (memory --trace on a
 * torch.cuda.memory._snapshot() pickle).
 *
 * Arbitrary bytes go through ts__mem_snapshot_from_buffer: the opcode
 * machine (stack, marks, memo), then segments, the alloc/free walk and the
 * blocks alive at the peak. The same bytes are then read again the way a
 * compressed file is, through a window of 16-79 bytes (the first byte picks
 * it), so that opcodes and strings straddle its refills; both reads must
 * agree on the outcome and the error message. A finding is any sanitizer
 * report, crash or disagreement; a refused pickle is the normal outcome.
 * Seeds (fuzz/corpus/fuzz_pickle/): an excerpt of the real Transformer LM
 * snapshot (2 segments, 40 trace entries), Python's pickle of plain values,
 * and an os.system pickle.
 */
#include <stdlib.h>

#include "ingest/ingest.h"
#include "ingest/pickle.h"
#include "memory/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The buffer read and the windowed read of the same bytes agree. */
static void windowed(const uint8_t *data, size_t size)
{
    ts_pickle whole, part;
    ts_error e1 = {0}, e2 = {0};
    ts_src src;
    int r1 = ts__pickle_load(&whole, "fuzz.pickle", data, size, &e1);
    if (ts__src_open_mem(&src, "fuzz.pickle", data, size, &e2)) abort();
    int r2 = ts__pickle_load_src(&part, &src, 16 + (size ? data[0] % 64 : 0), (uint64_t)1 << 30, NULL, NULL, &e2);
    ts__src_close(&src);
    /* a gzip or zstd magic makes the source decode: then only no crash is asked */
    bool plain = !(size >= 2 && data[0] == 0x1f && data[1] == 0x8b) &&
                 !(size >= 4 && data[0] == 0x28 && data[1] == 0xb5 && data[2] == 0x2f && data[3] == 0xfd);
    if (plain && (r1 != r2 || (r1 && strcmp(e1.msg, e2.msg)))) abort();
    if (!r1) ts__pickle_free(&whole);
    if (!r2) ts__pickle_free(&part);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_mem_snapshot *s = NULL;
    ts_error err;
    if (ts__mem_snapshot_from_buffer("fuzz.pickle", data, size, &s, &err) == TS_OK) {
        for (uint32_t i = 0; i < s->n_alive; i++) (void)strlen(s->alive[i].frame);
        ts_mem_snapshot_destroy(s);
    }
    windowed(data, size);
    return 0;
}
