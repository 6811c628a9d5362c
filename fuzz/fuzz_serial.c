/* fuzz_serial.c - libFuzzer target for the reader of serialized ranks
 * (trace/serial.c), the bytes a distributed run's processes send to
 * process 0 (docs/distributed.md). Any bytes either come back as a rank or
 * as an error naming the byte; never a crash, an out-of-bounds read or a
 * leak. A rank that reads back writes the very bytes it was read from (the
 * format has one spelling per rank), which the target checks.
 *
 * Seed corpus (fuzz/corpus/fuzz_serial/): the ranks of real Kineto
 * excerpts (fuzz/corpus/fuzz_json/kineto_excerpt.json, legacy_list.json),
 * serialized. Build: make fuzz (clang, ASan + UBSan + libFuzzer).
 */
#include <stdlib.h>
#include <string.h>

#include "trace/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_rank *r = NULL;
    ts_error err = {0};
    if (ts__rank_deserialize(data, size, "fuzz", &r, &err) != TS_OK) {
        if (r || strncmp(err.msg, "fuzz: ", 6)) abort();   /* an error names the bytes, and leaves no rank */
        return 0;
    }
    ts_buf b;
    ts__buf_init(&b);
    if (ts__rank_serialize(r, &b) == TS_OK && (b.len != size || memcmp(b.s, data, size))) abort();
    ts__buf_free(&b);
    ts__rank_destroy(r);
    return 0;
}
