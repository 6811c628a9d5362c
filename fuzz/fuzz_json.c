/* fuzz_json.c - libFuzzer target for the Chrome-trace JSON reader.
 *
 * Feeds arbitrary bytes (plain, or gzip/zstd when the magic bytes say so)
 * through the whole parse and ts__rank_finish(), and again as info reads it
 * (counts only), which must end with the same status and message or the
 * same counts and warnings. A finding is any sanitizer report, crash or
 * such difference; rejected input is the normal outcome. Build: `make fuzz`;
 * run: build/fuzz/fuzz_json -max_total_time=60 CORPUS_DIR.
 */
#include "ingest/ingest.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The counts-only read (info's) must end as the whole read does: the same
 * status and message, or the same rows, warnings, flows and iterations. */
static void same_counts(const uint8_t *data, size_t size, int rc, const ts_rank *r, const ts_error *err)
{
    ts_rank *c = NULL;
    ts_error cerr;
    int crc = ts__ingest_json_buffer_counts("fuzz.json", data, size, &c, &cerr);
    if (crc != rc || (rc != TS_OK && rc != TS_ENOMEM && strcmp(cerr.msg, err->msg) != 0)) abort();
    if (crc != TS_OK) return;
    if (c->slices.n != r->slices.n || c->instants.n != r->instants.n || c->counters.n != r->counters.n ||
        c->flows.n != r->flows.n || c->n_iterations != r->n_iterations || c->n_tracks != r->n_tracks ||
        c->n_meta_args != r->n_meta_args || memcmp(c->warn_count, r->warn_count, sizeof c->warn_count) != 0)
        abort();
    for (int k = 0; k < TS_WARN_COUNT; k++)
        if ((c->warn_first[k] == NULL) != (r->warn_first[k] == NULL) ||
            (c->warn_first[k] && strcmp(c->warn_first[k], r->warn_first[k]) != 0))
            abort();
    ts__rank_destroy(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_rank *r = NULL;
    ts_error err;
    int rc = ts__ingest_json_buffer("fuzz.json", data, size, NULL, &r, &err);
    same_counts(data, size, rc, r, &err);
    if (rc == TS_OK) {
        /* touch what analyses read, so bad row ids would show up */
        for (uint32_t i = 0; i < r->slices.n; i++) (void)ts__rank_str(r, r->slices.name[i]);
        ts__rank_destroy(r);
    }
    return 0;
}
