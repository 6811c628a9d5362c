/* fuzz_plan.c - libFuzzer target for the plan.json reader of
 * `trainscope replay --plan` (optimize/plan_read.c), against a fixed
 * gradients.json (the mlp of examples/workloads, whose fingerprint the seed
 * plans carry, so mutations reach the bucket lists). Build: make fuzz. */
#include <string.h>

#include "fuzz_input.h"
#include "trainscope/optimize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char GRADIENTS[] =
    "{\"parameters\": [{\"name\": \"0.weight\", \"bytes\": 1048576}, {\"name\": \"0.bias\", \"bytes\": 2048},"
    " {\"name\": \"2.weight\", \"bytes\": 1048576}, {\"name\": \"2.bias\", \"bytes\": 2048},"
    " {\"name\": \"4.weight\", \"bytes\": 20480}, {\"name\": \"4.bias\", \"bytes\": 40}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char gpath[64];
    static int gfd = -1;
    if (gfd < 0) gfd = fuzz_memfile((const uint8_t *)GRADIENTS, sizeof GRADIENTS - 1, gpath, sizeof gpath);
    if (gfd < 0) return 0;
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0) return 0;
    ts_replay_options base = {.size = sizeof base, .gradients_json = gpath}, out;
    ts_optimize_plan *plan = NULL;
    ts_error err;
    if (ts_optimize_plan_load(path, &base, &out, &plan, &err) == TS_OK) {
        uint64_t units = 0;
        for (uint32_t j = 0; j < out.n_bucket_groups; j++) units += out.bucket_group_units[j];
        if (units == 0) __builtin_trap();   /* a plan read back always names buckets */
        ts_optimize_plan_free(plan);
    }
    close(fd);
    return 0;
}
