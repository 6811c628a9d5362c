/* fuzz_pytorch_et.c - libFuzzer target for the PyTorch host execution-trace
 * join (src/ingest/pytorch_et.c): arbitrary bytes as the ET of a small,
 * fixed Kineto trace of process 563677 (three cpu_ops with External ids
 * 3, 4, 5, named as the seeds' ET nodes), through ts__et_join_buffer. A
 * finding is any sanitizer report, crash or hang; refused bytes are the
 * normal outcome. Seeds (fuzz/corpus/fuzz_pytorch_et/): 9 nodes of HTA's
 * simple_add ET (schema 1.0.1), and the first 8 nodes of chakra's
 * 1.0.2-chakra.0.0.4 host ET with its pid set to 563677.
 */
#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char KINETO[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::rand\",\"pid\":563677,\"tid\":1,\"ts\":10,\"dur\":50,"
    "\"args\":{\"External id\":2}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::empty\",\"pid\":563677,\"tid\":1,\"ts\":11,\"dur\":5,"
    "\"args\":{\"External id\":3}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::uniform_\",\"pid\":563677,\"tid\":1,\"ts\":20,\"dur\":9,"
    "\"args\":{\"External id\":4}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::detach_\",\"pid\":563677,\"tid\":1,\"ts\":70,\"dur\":9,"
    "\"args\":{\"External id\":5}}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_rank *r = NULL;
    ts_error err;
    if (ts__ingest_json_buffer("kineto.json", KINETO, sizeof KINETO - 1, NULL, &r, &err) != TS_OK) __builtin_trap();
    if (ts__et_join_buffer("fuzz_et.json", data, size, &r, 1, &err) == TS_OK)
        for (uint32_t i = 0; i < r->flows.n; i++)
            if (r->flows.from[i] >= r->slices.n || r->flows.to[i] >= r->slices.n) __builtin_trap();
    ts__rank_destroy(r);
    return 0;
}
