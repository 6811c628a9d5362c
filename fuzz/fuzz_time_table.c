/* fuzz_time_table.c - libFuzzer target for kernel-time tables (G10's
 * time_dict.json and the text form), applied to a small fixed fx graph so
 * the matching code runs too. Build: make fuzz. */
#include "fuzz_input.h"
#include "memory/memgraph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char FWD[] =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, primals_1: \"f32[4, 8]\", primals_2: \"f32[2, 4]\"):\n"
    "        mm: \"f32[2, 8]\" = torch.ops.aten.mm.default(primals_2, primals_1)\n"
    "        relu: \"f32[2, 8]\" = torch.ops.aten.relu.default(mm);  mm = None\n"
    "        le: \"b8[2, 8]\" = torch.ops.aten.le.Scalar(relu, 0)\n"
    "        return [relu, primals_1, primals_2, le]\n";
static const char BWD[] =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, primals_1: \"f32[4, 8]\", primals_2: \"f32[2, 4]\", le: \"b8[2, 8]\", "
    "tangents_1: \"f32[2, 8]\"):\n"
    "        where: \"f32[2, 8]\" = torch.ops.aten.where.self(le, 0.0, tangents_1);  le = tangents_1 = None\n"
    "        permute: \"f32[8, 2]\" = torch.ops.aten.permute.default(where, [1, 0])\n"
    "        mm_1: \"f32[8, 4]\" = torch.ops.aten.mm.default(permute, primals_2);  permute = primals_2 = None\n"
    "        return [mm_1, None]\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *names[2] = {"forward.py", "backward.py"};
    const char *texts[2] = {FWD, BWD};
    size_t lens[2] = {sizeof FWD - 1, sizeof BWD - 1};
    ts_mem_options opt = {.size = sizeof opt, .g10_compat = 1};
    ts_memgraph *g = NULL;
    ts_error err;
    if (ts__mem_load_text(names, texts, lens, &opt, &g, &err) != TS_OK) return 0;
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd >= 0) {
        if (ts_memgraph_load_times(g, path, &err) == TS_OK) {
            ts_mem_summary s;
            (void)ts_memgraph_analyze(g, &s);
        }
        close(fd);
    }
    ts_memgraph_destroy(g);
    return 0;
}
