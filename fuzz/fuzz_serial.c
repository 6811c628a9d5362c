/* fuzz_serial.c - libFuzzer target for the readers of the bytes a
 * distributed run's processes send to process 0 (docs/distributed.md):
 * serialized ranks (trace/serial.c) and condensed ranks, a rank's local
 * graph with its compact rank (graph/part.c, bytes starting "TSPART"). Any
 * bytes either come back as a rank or part or as an error naming the byte;
 * never a crash, an out-of-bounds read or a leak. What reads back writes the
 * very bytes it was read from (each format has one spelling), which the
 * target checks; a part is then added to a graph stream of one rank and the
 * graph finished (matching, alignment, indexing), as process 0 does.
 *
 * Seed corpus (fuzz/corpus/fuzz_serial/): the ranks of real Kineto
 * excerpts (fuzz/corpus/fuzz_json/kineto_excerpt.json, legacy_list.json),
 * serialized whole (.rank) and condensed (.part), and rank 1 of the 2-rank
 * nonblocking MPI job test/e2e/critical_path_mpi_nonblocking.sh records,
 * condensed (mpi_nonblocking.part: collective members, completions). Build:
 * make fuzz (clang, ASan + UBSan + libFuzzer).
 */
#include <stdlib.h>
#include <string.h>

#include "graph/stream.h"
#include "trace/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_bytes(const ts_buf *b, const uint8_t *data, size_t size)
{
    if (b->len != size || memcmp(b->s, data, size)) abort();
}

static void one_rank(const uint8_t *data, size_t size)
{
    ts_rank *r = NULL;
    ts_error err = {0};
    if (ts__rank_deserialize(data, size, "fuzz", &r, &err) != TS_OK) {
        if (r || strncmp(err.msg, "fuzz: ", 6)) abort();   /* an error names the bytes, and leaves no rank */
        return;
    }
    ts_buf b;
    ts__buf_init(&b);
    if (ts__rank_serialize(r, &b) == TS_OK) same_bytes(&b, data, size);
    ts__buf_free(&b);
    ts__rank_destroy(r);
}

static void one_part(const uint8_t *data, size_t size)
{
    ts_graph_part *p = NULL;
    ts_error err = {0};
    if (ts__graph_part_deserialize(data, size, "fuzz", &p, &err) != TS_OK) {
        if (p || strncmp(err.msg, "fuzz", 4) || !strstr(err.msg, "byte ")) abort();
        return;
    }
    ts_buf b;
    ts__buf_init(&b);
    if (ts__graph_part_serialize(p, &b) == TS_OK) same_bytes(&b, data, size);
    ts__buf_free(&b);
    ts_graph_options go = {.size = sizeof go};
    ts_graph_stream *s = NULL;
    ts_job *t = NULL;
    ts_graph *g = NULL;
    if (ts__graph_stream_begin(1, &go, &s, &err) != TS_OK) { ts__graph_part_free(p); return; }
    if (ts__graph_stream_add_part_at(s, p, 0, &err) != TS_OK) { ts__graph_stream_abort(s); return; }
    if (ts__graph_stream_finish(s, &t, &g, &err) == TS_OK) ts_graph_destroy(g);
    ts_job_destroy(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 6 && !memcmp(data, "TSPART", 6)) one_part(data, size);
    else one_rank(data, size);
    return 0;
}
