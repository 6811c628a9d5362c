/* fuzz_pickle.c - libFuzzer target for the strict pickle reader and the
 * allocator snapshot analysis on top of it (memory --trace on a
 * torch.cuda.memory._snapshot() pickle).
 *
 * Arbitrary bytes go through ts__mem_snapshot_from_buffer: the opcode
 * machine (stack, marks, memo), then segments, the alloc/free walk and the
 * blocks alive at the peak. The same bytes are then read again the way a
 * compressed file is, through a window of 16-79 bytes (the first byte picks
 * it), so that opcodes and strings straddle its refills; both reads must
 * agree on the outcome and the error message, and on the tree: the whole
 * read takes pickle.c's record path for dicts of keys seen before, the
 * windowed one mostly the general path (records straddle its refills), so
 * this checks one against the other. A finding is any sanitizer report,
 * crash or disagreement; a refused pickle is the normal outcome.
 * Seeds (fuzz/corpus/fuzz_pickle/): an excerpt of the real Transformer LM
 * snapshot (2 segments, 40 trace entries), Python's pickle of plain values,
 * and an os.system pickle.
 */
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "ingest/pickle.h"
#include "memory/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Two trees hold the same values (the same kinds, numbers, bytes and
 * items, keys in the same order). A pickle may reference a container from
 * inside itself, and shared subtrees can repeat exponentially, so the walk
 * stops at depth 64 and after *budget nodes (what it has not seen counts as
 * equal). */
static bool same(ts_pv a, ts_pv b, int depth, long *budget)
{
    if (depth > 64 || --*budget < 0) return true;
    ts_pv_kind ka = ts__pv_kind(a);
    if (ka != ts__pv_kind(b)) return false;
    const ts_pv_obj *x = ts__pv_obj(a), *y = ts__pv_obj(b);
    if (!x || !y) return a == b;   /* words: ints, None, bools */
    switch (ka) {
    case TS_PV_INT: return x->u.i == y->u.i;
    case TS_PV_FLOAT: return !memcmp(&x->u.d, &y->u.d, sizeof x->u.d);
    case TS_PV_STR: case TS_PV_BYTES: return x->n == y->n && !memcmp(x->u.s, y->u.s, x->n + 1);
    case TS_PV_LIST: case TS_PV_TUPLE: case TS_PV_DICT:
        if (x->n != y->n) return false;
        for (uint32_t i = 0; i < x->n; i++) {
            if (ka == TS_PV_DICT && !same(x->keys[i], y->keys[i], depth + 1, budget)) return false;
            if (!same(x->u.v[i], y->u.v[i], depth + 1, budget)) return false;
        }
        return true;
    default: return false;
    }
}

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
    long budget = 1 << 20;
    if (plain && !r1 && !same(whole.root, part.root, 0, &budget)) abort();
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
