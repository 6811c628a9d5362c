/* gradients.h - gradient sizes for the bucket what-if, and DDP's bucketing.
 *
 * Not for: timing (rebucket.c decides when each gradient is ready).
 */
#ifndef TS_REPLAY_GRADIENTS_H
#define TS_REPLAY_GRADIENTS_H

#include "core/core.h"

typedef struct ts_gradients {
    int64_t *bytes;     /* gradient byte sizes in registration order */
    char   **names;     /* [cap]: owned parameter names ("name" of the object before its
                           "bytes"), NULL = the file gives none for that one */
    uint32_t n, cap;
} ts_gradients;

/* Read gradients.json (format in gradients.c). On failure *out is empty and
 * err says "FILE: byte N: what". */
TS_NODISCARD int ts__gradients_load(const char *path, ts_gradients *out, ts_error *err);
void ts__gradients_free(ts_gradients *g);

/* DDP's compute_bucket_assignment_by_size for one dtype: walk bytes[] in
 * reduction order, put each tensor in the open bucket, close the bucket once
 * it holds >= its limit (first_cap for the first bucket, cap after), so a
 * bucket may exceed its limit by its last tensor. Fills bucket_of[i] and
 * returns the number of buckets. O(n). */
uint32_t ts__ddp_buckets(const int64_t *bytes, uint32_t n, int64_t first_cap, int64_t cap, uint32_t *bucket_of);

/* DDP's cap of the first bucket (torch.distributed._DEFAULT_FIRST_BUCKET_BYTES). */
#define TS_DDP_FIRST_BUCKET_BYTES (1024 * 1024)

#endif
