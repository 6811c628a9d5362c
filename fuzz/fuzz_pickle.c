/* fuzz_pickle.c - libFuzzer target for the strict pickle reader and the
 * allocator snapshot analysis on top of it (memory --trace on a
 * torch.cuda.memory._snapshot() pickle).
 *
 * Arbitrary bytes go through ts__mem_snapshot_from_buffer: the opcode
 * machine (stack, marks, memo), then segments, the alloc/free walk and the
 * blocks alive at the peak. A finding is any sanitizer report or crash; a
 * refused pickle is the normal outcome. Seeds (fuzz/corpus/fuzz_pickle/): an
 * excerpt of the real Transformer LM snapshot (2 segments, 40 trace
 * entries), Python's pickle of plain values, and an os.system pickle.
 */
#include "memory/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_mem_snapshot *s = NULL;
    ts_error err;
    if (ts__mem_snapshot_from_buffer("fuzz.pickle", data, size, &s, &err) == TS_OK) {
        for (uint32_t i = 0; i < s->n_alive; i++) (void)strlen(s->alive[i].frame);
        ts_mem_snapshot_destroy(s);
    }
    return 0;
}
