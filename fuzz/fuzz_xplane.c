/* fuzz_xplane.c - libFuzzer target for the TensorFlow XPlane reader and the
 * protobuf wire cursor under it: arbitrary bytes through
 * ts__xplane_ingest_buffer and ts__rank_finish(), whole and counts-only
 * (info's load), which must agree on the verdict and the counts. A finding
 * is any sanitizer report, crash or disagreement; refused bytes are the
 * normal outcome. Seeds
 * (fuzz/corpus/fuzz_xplane/): an excerpt of the real 8-GPU BERT capture (the
 * GPU plane with one stream, the host plane cut to 40 events per line, their
 * metadata).
 */
#include "ingest/ingest.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* info's counts-only load must agree with the whole load: the same verdict
 * (error text included) and the same rows, tracks, warnings and
 * iterations; only the args differ (none). */
static void same_counts(const uint8_t *data, size_t size, int rc, const ts_rank *r, const ts_error *err)
{
    ts_rank *c = NULL;
    ts_error cerr = {0};
    int crc = ts__xplane_ingest_buffer("fuzz.xplane.pb", data, size, true, &c, &cerr);
    if ((crc == TS_OK) != (rc == TS_OK)) __builtin_trap();
    if (rc != TS_OK) {
        if (strcmp(cerr.msg, err->msg) != 0) __builtin_trap();
        return;
    }
    if (c->slices.n != r->slices.n || c->n_tracks != r->n_tracks || c->n_iterations != r->n_iterations ||
        c->flows.n != r->flows.n || c->args.n != c->n_meta_args || c->n_meta_args != r->n_meta_args ||
        c->n_events_read != r->n_events_read)
        __builtin_trap();
    for (int k = 0; k < TS_WARN_COUNT; k++)
        if (c->warn_count[k] != r->warn_count[k]) __builtin_trap();
    ts__rank_destroy(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_rank *r = NULL;
    ts_error err = {0};   /* ts__error keeps the first cause: status must start TS_OK */
    int rc = ts__xplane_ingest_buffer("fuzz.xplane.pb", data, size, false, &r, &err);
    same_counts(data, size, rc, r, &err);
    if (rc == TS_OK) {
        for (uint32_t i = 0; i < r->slices.n; i++) (void)ts__rank_str(r, r->slices.name[i]);
        ts__rank_destroy(r);
    }
    return 0;
}
