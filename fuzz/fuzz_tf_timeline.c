/* fuzz_tf_timeline.c - libFuzzer target for the TensorFlow 1 timeline
 * mapping (src/ingest/tf_timeline.c) after the JSON reader: the bytes are
 * the events of a traceEvents list that starts with timeline.py's process
 * names (a GPU's device, stream:all, stream:7 and memcpy lines, a CPU), so
 * every input runs the device/stream mapping, the stream:all drop and the
 * dataflow rewrite, then ts__rank_finish(). A finding is any sanitizer
 * report, crash or hang. Seed (fuzz/corpus/fuzz_tf_timeline/): the events
 * of test/e2e/tf1_timeline.sh's hand-made timeline.
 */
#include "ingest/ingest.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char HEAD[] =
    "{\"traceEvents\":["
    "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"/job:localhost/replica:0/task:0/device:GPU:0 Compute\"}},"
    "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":3,\"args\":{\"name\":\"/device:GPU:0/stream:all Compute\"}},"
    "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":5,\"args\":{\"name\":\"/device:GPU:0/stream:7 Compute\"}},"
    "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":9,\"args\":{\"name\":\"/device:GPU:0/memcpy Compute\"}},"
    "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":11,\"args\":{\"name\":\"/job:localhost/replica:0/task:0/device:CPU:0 Compute\"}},";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t nh = sizeof HEAD - 1, n = nh + size + 2;
    char *buf = malloc(n);
    if (!buf) return 0;
    memcpy(buf, HEAD, nh);
    if (size) memcpy(buf + nh, data, size);
    memcpy(buf + nh + size, "]}", 2);
    ts_rank *r = NULL;
    ts_error err;
    if (ts__ingest_json_buffer("fuzz_timeline.json", buf, n, NULL, &r, &err) == TS_OK) {
        for (uint32_t i = 0; i < r->slices.n; i++)
            if (r->slices.track[i] >= r->n_tracks) __builtin_trap();
        ts__rank_destroy(r);
    }
    free(buf);
    return 0;
}
