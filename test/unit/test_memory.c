/* test_memory.c - the fx dump reader, G10's liveness rules, exact mode,
 * time tables, precision plans and raw memory timelines, on a small
 * hand-written forward/backward pair whose answers are worked out by hand
 * in the comments below. */
#include <stdlib.h>
#include <unistd.h>
#include "test.h"
#include "memory/memgraph.h"
#include "trainscope/ingest.h"
#include "trainscope/memory.h"

/* Forward: 16 tensors, 11 G10 kernels (squeeze_1 and copy_ have none). */
static const char FWD[] =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, primals_1: \"f32[4, 8]\", primals_2: \"f32[2, 4]\", primals_3: \"i64[]\"):\n"
    "        # File: model.py:1, code: x = self.fc(x)\n"
    "        mm: \"f32[2, 8]\" = torch.ops.aten.mm.default(primals_2, primals_1)\n"
    "        relu: \"f32[2, 8]\" = torch.ops.aten.relu.default(mm);  mm = None\n"
    "        add: \"i64[]\" = torch.ops.aten.add.Tensor(primals_3, 1)\n"
    "        var_mean = torch.ops.aten.var_mean.correction(relu, [1], correction = 0, keepdim = True)\n"
    "        getitem: \"f32[2, 1]\" = var_mean[0]\n"
    "        getitem_1: \"f32[2, 1]\" = var_mean[1];  var_mean = None\n"
    "        squeeze: \"f32[2]\" = torch.ops.aten.squeeze.dims(getitem, [1])\n"
    "        squeeze_1: \"f32[2]\" = torch.ops.aten.squeeze.dims(getitem_1, [1])\n"
    "        le: \"b8[2, 8]\" = torch.ops.aten.le.Scalar(relu, 0)\n"
    "        copy_: \"i64[]\" = torch.ops.aten.copy_.default(primals_3, add);  primals_3 = add = None\n"
    "        return [relu, primals_1, primals_2, le, squeeze_1]\n";

static const char BWD[] =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, primals_1: \"f32[4, 8]\", primals_2: \"f32[2, 4]\", le: \"b8[2, 8]\", "
    "squeeze_1: \"f32[2]\", tangents_1: \"f32[2, 8]\"):\n"
    "        where: \"f32[2, 8]\" = torch.ops.aten.where.self(le, 0.0, tangents_1);  le = tangents_1 = None\n"
    "        mul: \"f32[2, 8]\" = torch.ops.aten.mul.Tensor(where, squeeze_1)\n"
    "        permute: \"f32[8, 2]\" = torch.ops.aten.permute.default(mul, [1, 0])\n"
    "        mm_1: \"f32[8, 4]\" = torch.ops.aten.mm.default(permute, primals_2);  permute = primals_2 = None\n"
    "        permute_1: \"f32[4, 8]\" = torch.ops.aten.permute.default(mm_1, [1, 0]);  mm_1 = None\n"
    "        return [permute_1, None, None]\n";

static char *write_tmp(const char *text)
{
    char *path = strdup("/tmp/ts_test_memory_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) abort();
    close(fd);
    return path;
}

/* Load with explicit options (text, not paths); NULL on failure. */
static ts_memgraph *load_opt(const char *fwd, const char *bwd, ts_mem_options opt, ts_error *err)
{
    char *f = write_tmp(fwd), *b = write_tmp(bwd);
    ts_memgraph *g = NULL;
    opt.size = sizeof opt;
    int rc = ts_memgraph_load(f, b, &opt, &g, err);
    unlink(f);
    unlink(b);
    free(f);
    free(b);
    return rc ? NULL : g;
}

/* Load the pair under G10's rules (g10 = 1) or the exact ones. */
static ts_memgraph *load(const char *fwd, const char *bwd, int g10, ts_error *err)
{
    return load_opt(fwd, bwd, (ts_mem_options){.g10_compat = g10}, err);
}

static int32_t row_named(const ts_memgraph *g, const char *name)
{
    for (uint32_t t = 0; t < g->n_tensors; t++)
        if (!strcmp(ts__mem_name(g, g->tensors[t].name_id), name)) return (int32_t)t;
    return -1;
}

TEST(memory_reader_builds_kernels_tensors_and_dtype_sizes)
{
    ts_error err = {0};
    ts_memgraph *g = load(FWD, BWD, 1, &err);
    CHECK(g != NULL);
    if (!g) return;
    CHECK_EQ_INT(g->n_kernels, 11);
    CHECK_EQ_INT(g->n_tensors, 16);
    CHECK_EQ_STR(ts__mem_name(g, g->kernels[0].call_id), "torch.ops.aten.mm.default(primals_2, primals_1)");
    CHECK_EQ_INT(g->kernels[3].n_out, 2);            /* var_mean -> getitem, getitem_1 */
    CHECK_EQ_INT(g->tensors[row_named(g, "le")].bytes, 16);      /* b8: 1 byte */
    CHECK_EQ_INT(g->tensors[row_named(g, "add")].bytes, 8);      /* i64[] */
    CHECK_EQ_INT(g->tensors[row_named(g, "mm_1")].bytes, 128);
    CHECK(g->tensors[row_named(g, "primals_3")].is_global);
    CHECK(!g->tensors[row_named(g, "tangents_1")].is_global);
    CHECK_EQ_INT(row_named(g, "tangents_1"), 10);    /* created when the backward header is read */
    /* mul(where, squeeze_1): squeeze_1 is G10's alias of getitem_1, printed under its own name */
    const ts__mem_ref *in = &g->refs[g->kernels[7].first_ref + 1];
    CHECK_EQ_INT(in->tensor, row_named(g, "getitem_1"));
    CHECK_EQ_STR(ts__mem_name(g, in->name_id), "squeeze_1");
    CHECK_EQ_STR(ts__mem_name(g, in->ann_id), "f32[2]");
    ts_memgraph_destroy(g);
}

TEST(memory_liveness_follows_g10_birth_death_and_period_rules)
{
    ts_error err = {0};
    ts_memgraph *g = load(FWD, BWD, 1, &err);
    CHECK(g != NULL);
    if (!g) return;
    ts_mem_summary s;
    CHECK_EQ_INT(ts_memgraph_analyze(g, &s), TS_OK);
    const ts__mem_tensor *relu = &g->tensors[row_named(g, "relu")];
    /* relu: written by k1, read by k3 and k5 -> birth 1, death 6, idle [2,3] and [4,5] */
    CHECK_EQ_INT(relu->birth, 1);
    CHECK_EQ_INT(relu->death, 6);
    CHECK_EQ_INT(relu->n_periods, 2);
    CHECK_EQ_INT(g->periods[relu->first_period].start, 2);
    CHECK_EQ_INT(g->periods[relu->first_period].end, 3);
    CHECK_EQ_INT(g->periods[relu->first_period + 1].start, 4);
    CHECK_EQ_INT(g->periods[relu->first_period + 1].end, 5);
    /* add is only read by copy_, which G10 drops: never read -> death -1 */
    CHECK_EQ_INT(g->tensors[row_named(g, "add")].death, -1);
    CHECK_EQ_INT(g->tensors[row_named(g, "add")].n_periods, 0);
    /* getitem_1 is read through its alias squeeze_1 by k7 */
    CHECK_EQ_INT(g->tensors[row_named(g, "getitem_1")].death, 8);
    ts_memgraph_destroy(g);
}

TEST(memory_global_periods_wrap_into_the_next_iteration)
{
    ts_error err = {0};
    ts_memgraph *g = load(FWD, BWD, 1, &err);
    CHECK(g != NULL);
    if (!g) return;
    CHECK_EQ_INT(ts_memgraph_analyze(g, NULL), TS_OK);
    const ts__mem_tensor *p1 = &g->tensors[row_named(g, "primals_1")], *p2 = &g->tensors[row_named(g, "primals_2")];
    CHECK_EQ_INT(p1->n_periods, 1);  /* used by k0 only: idle from 1 round to 0 */
    CHECK_EQ_INT(g->periods[p1->first_period].start, 1);
    CHECK_EQ_INT(g->periods[p1->first_period].end, 0);
    CHECK_EQ_INT(p2->n_periods, 2);  /* k0 and k9: [1,9] then [10,0] */
    CHECK_EQ_INT(g->periods[p2->first_period].end, 9);
    CHECK_EQ_INT(g->periods[p2->first_period + 1].start, 10);
    CHECK_EQ_INT(g->periods[p2->first_period + 1].end, 0);
    ts_memgraph_destroy(g);
}

TEST(memory_curve_peak_is_the_most_bytes_alive_at_one_kernel)
{
    ts_error err = {0};
    ts_memgraph *g = load(FWD, BWD, 1, &err);
    CHECK(g != NULL);
    if (!g) return;
    ts_mem_summary s;
    CHECK_EQ_INT(ts_memgraph_analyze(g, &s), TS_OK);
    CHECK_EQ_INT(s.global_bytes, 168);   /* 128 + 32 + 8 */
    CHECK_EQ_INT(g->alive[1], 296);      /* globals + mm + relu */
    CHECK_EQ_INT(g->alive[6], 320);      /* globals + getitem_1 + le + tangents_1 + where */
    CHECK_EQ_INT(s.peak_kernel, 10);     /* mm_1 and permute_1, 128 bytes each */
    CHECK_EQ_INT(s.peak_bytes, 424);
    uint32_t rows[16];
    uint32_t n = ts__mem_alive_at(g, 10, rows, 16);
    CHECK_EQ_INT(n, 5);
    CHECK_EQ_INT(g->tensors[rows[0]].bytes, 128);
    CHECK(g->tensors[rows[n - 1]].bytes <= g->tensors[rows[n - 2]].bytes);
    ts_memgraph_destroy(g);
}

TEST(memory_exact_mode_views_share_storage_and_gradients_live_to_the_end)
{
    ts_error err = {0};
    ts_memgraph *g = load(FWD, BWD, 0, &err);
    CHECK(g != NULL);
    if (!g) return;
    ts_mem_summary s;
    CHECK_EQ_INT(ts_memgraph_analyze(g, &s), TS_OK);
    CHECK_EQ_INT(g->n_kernels, 13);      /* squeeze_1 and copy_ are kernels here */
    const ts__mem_tensor *pm = &g->tensors[row_named(g, "permute_1")];
    CHECK_EQ_INT(pm->bytes, 0);
    CHECK_EQ_INT(pm->base, row_named(g, "mm_1"));
    CHECK_EQ_INT(g->tensors[row_named(g, "mm_1")].death, 13);   /* returned gradient */
    /* add is now read by copy_ */
    CHECK(g->tensors[row_named(g, "add")].death > 0);
    /* peak at mm_1 (k11): globals + mm_1 + mul (read through its view
     * permute) + relu, the forward's user output held to the end */
    CHECK_EQ_INT(s.peak_bytes, 168 + 128 + 64 + 64);
    ts_memgraph_destroy(g);
}

TEST(memory_time_table_matches_kernels_by_output_names)
{
    ts_error err = {0};
    ts_memgraph *g = load(FWD, BWD, 0, &err);   /* exact: 2 kernels the table lacks */
    CHECK(g != NULL);
    if (!g) return;
    char *t = write_tmp("{\"mm_0\": 1.5, \"relu_1\": 0.25, \"add_2\": 0.001, \"getitem, getitem_1_3\": 0.5,\n"
                        "\"squeeze_4\": 0.1, \"le_5\": 0.1, \"where_6\": 0.1, \"mul_7\": 0.1,\n"
                        "\"permute_8\": 0.1, \"mm_1_9\": 2.0, \"permute_1_10\": 0.1}");
    CHECK_EQ_INT(ts_memgraph_load_times(g, t, &err), TS_OK);
    CHECK_EQ_INT(g->kernels[0].time_ns, 1500000);
    CHECK_EQ_INT(g->kernels[5].time_ns, 0);         /* squeeze_1: not in the table */
    CHECK_EQ_INT(g->kernels[7].time_ns, 0);         /* copy_ */
    CHECK_EQ_INT(g->kernels[11].time_ns, 2000000);  /* mm_1 */
    ts_mem_summary s;
    CHECK_EQ_INT(ts_memgraph_analyze(g, &s), TS_OK);
    CHECK_EQ_INT(s.iteration_ns, 1500000 + 250000 + 1000 + 500000 + 6 * 100000 + 2000000);
    unlink(t);
    free(t);
    ts_memgraph_destroy(g);
}

TEST(memory_time_table_of_another_graph_is_rejected)
{
    ts_error err = {0};
    ts_memgraph *g = load(FWD, BWD, 1, &err);
    CHECK(g != NULL);
    if (!g) return;
    char *t = write_tmp("{\"convolution_0\": 1.0}");
    CHECK_EQ_INT(ts_memgraph_load_times(g, t, &err), TS_EFORMAT);
    CHECK(strstr(err.msg, "another graph") != NULL);
    unlink(t);
    free(t);
    ts_memgraph_destroy(g);
}

TEST(memory_reader_rejects_use_before_definition_with_file_and_line)
{
    ts_error err = {0};
    char bad[sizeof FWD + 16];
    snprintf(bad, sizeof bad, "%s", FWD);
    char *p = strstr(bad, "relu.default(mm)");
    memcpy(p, "relu.default(zz)", 16);
    CHECK(load(bad, BWD, 0, &err) == NULL);
    CHECK_EQ_INT(err.status, TS_EFORMAT);
    CHECK(strstr(err.msg, ":5: 'zz' is used before it is defined") != NULL);
}

TEST(memory_reader_rejects_backward_of_another_forward)
{
    ts_error err = {0};
    char bad[sizeof BWD + 16];
    snprintf(bad, sizeof bad, "%s", BWD);
    char *p = strstr(bad, "squeeze_1: ");
    memcpy(p, "squeeze_9", 9);
    CHECK(load(FWD, bad, 0, &err) == NULL);
    CHECK(strstr(err.msg, ":2: backward input 'squeeze_9' is not defined by the forward graph") != NULL);
}

TEST(memory_precision_plan_shrinks_the_activations_it_names)
{
    char *plan = write_tmp("# halve the matrix products\nmm fp16\nname:relu bf16\n");
    ts_error err = {0};
    ts_memgraph *g = load_opt(FWD, BWD, (ts_mem_options){.precision_plan = plan}, &err);
    CHECK(g != NULL);
    if (g) {
        CHECK_EQ_INT(g->tensors[row_named(g, "mm")].bytes, 32);
        CHECK_EQ_INT(g->tensors[row_named(g, "mm_1")].bytes, 64);
        CHECK_EQ_INT(g->tensors[row_named(g, "relu")].bytes, 32);
        CHECK_EQ_INT(g->tensors[row_named(g, "primals_1")].bytes, 128);  /* weights unchanged */
        CHECK_EQ_INT(g->tensors[row_named(g, "where")].bytes, 64);
    }
    ts_memgraph_destroy(g);
    unlink(plan);
    free(plan);
}

TEST(memory_raw_timeline_sums_bytes_per_category)
{
    /* preexisting param 100, create activation 50 at t=10, move 20 of it to
     * gradient at t=20, destroy the activation 30 at t=30 */
    char *t = write_tmp("[[-1, 1, 100, 0], [10, 2, 50, 4], [20, 3, -50, 4], [20, 3, 50, 5],"
                        " [30, 4, -50, 5]]");
    ts_mem_timeline tl;
    ts_error err = {0};
    CHECK_EQ_INT(ts_mem_timeline_load_raw(t, &tl, &err), TS_OK);
    CHECK_EQ_INT(tl.n_events, 5);
    CHECK_EQ_INT(tl.peak_bytes, 150);
    CHECK_EQ_INT(tl.peak_ns, 10);
    CHECK_EQ_INT(tl.at_peak[4], 50);
    CHECK_EQ_INT(tl.max_bytes[5], 50);
    CHECK_EQ_INT(tl.final_bytes, 100);
    unlink(t);
    free(t);
    char *bad = write_tmp("[[1, 2, 3]]");
    CHECK_EQ_INT(ts_mem_timeline_load_raw(bad, &tl, &err), TS_EPARSE);
    CHECK(strstr(err.msg, "byte 9: a row needs 4 numbers") != NULL);
    unlink(bad);
    free(bad);
}

static int fail_after, refused;   /* allocations left; how many were refused */
static void *failing_alloc(void *ud, void *ptr, size_t old_size, size_t new_size)
{
    (void)ud; (void)old_size;
    if (new_size == 0) { free(ptr); return NULL; }
    if (fail_after-- <= 0) { refused++; return NULL; }
    return realloc(ptr, new_size);
}

TEST(memory_load_reports_out_of_memory_and_leaks_nothing)
{
    char *f = write_tmp(FWD), *b = write_tmp(BWD);
    ts_mem_options opt = {.size = sizeof opt};
    /* ENOMEM exactly when an allocation was refused, OK when none was; the
     * budgets run until one suffices, so both outcomes are seen. */
    int n_enomem = 0, n_ok = 0;
    for (int k = 0; k < 4000 && !n_ok; k++) {
        ts_memgraph *g = NULL;
        ts_error err = {0};
        fail_after = k;
        refused = 0;
        ts_set_allocator(failing_alloc, NULL);
        int rc = ts_memgraph_load(f, b, &opt, &g, &err);
        if (rc == TS_OK) rc = ts_memgraph_analyze(g, NULL);
        ts_set_allocator(NULL, NULL);
        CHECK_EQ_INT(rc, refused ? TS_ENOMEM : TS_OK);
        n_enomem += rc == TS_ENOMEM;
        n_ok += rc == TS_OK;
        ts_memgraph_destroy(g);
    }
    CHECK(n_enomem > 0);
    CHECK_EQ_INT(n_ok, 1);
    unlink(f); unlink(b);
    free(f); free(b);
}

TEST(memory_hold_saved_keeps_backward_inputs_until_the_backward_ends)
{
    ts_error err = {0};
    ts_memgraph *g = load_opt(FWD, BWD, (ts_mem_options){.hold_saved = 1}, &err);
    CHECK(g != NULL);
    if (!g) return;
    CHECK_EQ_INT(ts_memgraph_analyze(g, NULL), TS_OK);
    /* le is saved for backward: read by where (k8) but held to the end */
    CHECK_EQ_INT(g->tensors[row_named(g, "le")].death, 13);
    CHECK_EQ_INT(g->tensors[row_named(g, "tangents_1")].death, 13);
    /* relu is a user output of the forward (not saved): the caller holds it */
    CHECK_EQ_INT(g->tensors[row_named(g, "relu")].death, 13);
    /* mm is neither: dies after relu reads it */
    CHECK_EQ_INT(g->tensors[row_named(g, "mm")].death, 2);
    ts_memgraph_destroy(g);
}

/* A convolution and its backward, for the CPU workspace rules. */
static const char CONV_FWD[] =
    "    def forward(self, primals_1: \"f32[32, 24, 3, 3]\", primals_2: \"f32[2, 24, 8, 8]\"):\n"
    "        convolution: \"f32[2, 32, 8, 8]\" = torch.ops.aten.convolution.default(primals_2, primals_1, "
    "None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)\n"
    "        return [convolution, primals_1, primals_2]\n";
static const char CONV_BWD[] =
    "    def forward(self, primals_1: \"f32[32, 24, 3, 3]\", primals_2: \"f32[2, 24, 8, 8]\", "
    "tangents_1: \"f32[2, 32, 8, 8]\"):\n"
    "        convolution_backward = torch.ops.aten.convolution_backward.default(tangents_1, primals_2, "
    "primals_1, [0], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, False])\n"
    "        getitem: \"f32[2, 24, 8, 8]\" = convolution_backward[0]\n"
    "        getitem_1: \"f32[32, 24, 3, 3]\" = convolution_backward[1];  convolution_backward = None\n"
    "        return [getitem_1, getitem]\n";

TEST(memory_cpu_workspace_adds_onednn_scratch_while_a_kernel_runs)
{
    ts_error err = {0};
    ts_memgraph *plain = load_opt(CONV_FWD, CONV_BWD, (ts_mem_options){0}, &err);
    ts_memgraph *cpu = load_opt(CONV_FWD, CONV_BWD, (ts_mem_options){.workspace = TS_MEM_WORKSPACE_CPU}, &err);
    CHECK(plain && cpu);
    if (plain && cpu) {
        CHECK_EQ_INT(ts_memgraph_analyze(plain, NULL), TS_OK);
        CHECK_EQ_INT(ts_memgraph_analyze(cpu, NULL), TS_OK);
        /* forward: blocked input (24 -> 32 channels: 2*32*64*4) + weight (27648)
         * beats the output copy (16384) */
        CHECK_EQ_INT(cpu->alive[0] - plain->alive[0], 16384 + 27648);
        /* backward: grad_out (16384) + blocked input (16384) */
        CHECK_EQ_INT(cpu->alive[1] - plain->alive[1], 16384 + 16384);
    }
    ts_memgraph_destroy(plain);
    ts_memgraph_destroy(cpu);
}

/* Write a Kineto-style trace whose events are `events` (JSON, comma-separated). */
static char *write_trace(const char *events)
{
    char body[4096];
    snprintf(body, sizeof body, "{\"traceEvents\": [%s]}\n", events);
    char *t = write_tmp(body), *path = malloc(strlen(t) + 6);
    sprintf(path, "%s.json", t);
    if (rename(t, path) != 0) abort();
    free(t);
    return path;
}

#define OP(name, ts, dur) "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" name "\", \"pid\": 1, " \
    "\"tid\": 1, \"ts\": " #ts ", \"dur\": " #dur ", \"args\": {}}"

TEST(memory_kineto_trace_peak_per_device_with_enclosing_ops)
{
    char *path = write_trace(
        OP("ProfilerStep#1", 1000, 500) "," OP("aten::conv2d", 1100, 100) "," OP("aten::empty", 1110, 10) ",\n"
        " {\"ph\": \"i\", \"cat\": \"[memory]\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 1115, \"s\": \"t\","
        "  \"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": 4096, \"Total Allocated\": 1052672}},\n"
        " {\"ph\": \"i\", \"cat\": \"[memory]\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 1300, \"s\": \"t\","
        "  \"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": -4096, \"Total Allocated\": 1048576}},\n"
        " {\"ph\": \"i\", \"cat\": \"[memory]\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 1050, \"s\": \"t\","
        "  \"args\": {\"Device Type\": 0, \"Device Id\": -1, \"Bytes\": 512, \"Total Allocated\": 512}}");
    const char *paths[1] = {path};
    ts_job *tr = NULL;
    ts_error err = {0};
    CHECK_EQ_INT(ts_job_load(paths, 1, NULL, &tr, &err), TS_OK);
    ts_mem_trace_peak rows[4];
    uint32_t n = 0;
    if (tr) CHECK_EQ_INT(ts_mem_trace_peaks(tr, rows, 4, &n, &err), TS_OK);
    CHECK_EQ_INT(n, 2);
    if (n == 2) {
        const ts_mem_trace_peak *gpu = rows[0].device_type == 1 ? &rows[0] : &rows[1];
        CHECK_EQ_INT(gpu->peak_bytes, 1052672);
        CHECK_EQ_INT(gpu->n_events, 2);
        CHECK_EQ_INT(gpu->n_ops, 3);
        CHECK_EQ_STR(gpu->ops[0], "aten::empty");
        CHECK_EQ_STR(gpu->ops[1], "aten::conv2d");
    }
    ts_job_destroy(tr);
    unlink(path);
    free(path);
}

TEST(memory_times_from_trace_match_aten_ops_in_order_skipping_nested_and_foreign_ops)
{
    ts_error err = {0};
    ts_memgraph *g = load_opt(CONV_FWD, CONV_BWD, (ts_mem_options){0}, &err);
    char *good = write_trace(OP("aten::convolution", 10, 100) "," OP("aten::convolution", 20, 50) ","
                             OP("aten::sum", 200, 5) "," OP("aten::convolution_backward", 300, 300));
    char *bad = write_trace(OP("aten::convolution", 10, 100));
    const char *p1[1] = {good}, *p2[1] = {bad};
    ts_job *t1 = NULL, *t2 = NULL;
    CHECK(g != NULL);
    CHECK_EQ_INT(ts_job_load(p1, 1, NULL, &t1, &err), TS_OK);
    CHECK_EQ_INT(ts_job_load(p2, 1, NULL, &t2, &err), TS_OK);
    if (g && t1 && t2) {
        CHECK_EQ_INT(ts_memgraph_times_from_trace(g, t1, &err), TS_OK);
        CHECK_EQ_INT(g->kernels[0].time_ns, 100000);   /* the nested convolution is skipped */
        CHECK_EQ_INT(g->kernels[1].time_ns, 300000);   /* aten::sum (the loss) is not in the graph */
        CHECK_EQ_INT(ts_memgraph_times_from_trace(g, t2, &err), TS_EFORMAT);
        CHECK(strstr(err.msg, "kernel 1 (aten::convolution_backward") != NULL);
    }
    ts_job_destroy(t1);
    ts_job_destroy(t2);
    ts_memgraph_destroy(g);
    unlink(good); unlink(bad);
    free(good); free(bad);
}

/* Regression 2026-11-26: `memory /dev/zero BWD.py` grew to 24 GB before the
 * kernel killed it, and --times / --precision-plan read whole files the same
 * way. Every side file is read up to a bound, and the error names it. */
TEST(memory_side_files_are_read_up_to_a_bound_that_the_error_names)
{
    char *f = write_tmp(FWD), *b = write_tmp(BWD);
    ts_mem_options opt = {.size = sizeof opt};
    ts_memgraph *g = NULL;
    ts_error err = {0};
    CHECK_EQ_INT(ts_memgraph_load("/dev/zero", b, &opt, &g, &err), TS_ERANGE);
    CHECK(strstr(err.msg, "/dev/zero: larger than 256 MiB, the most read for an fx dump") != NULL);
    opt.precision_plan = "/dev/zero";
    CHECK_EQ_INT(ts_memgraph_load(f, b, &opt, &g, &err), TS_ERANGE);
    CHECK(strstr(err.msg, "/dev/zero: larger than 64 MiB, the most read for a precision plan") != NULL);
    opt.precision_plan = NULL;
    CHECK_EQ_INT(ts_memgraph_load(f, b, &opt, &g, &err), TS_OK);
    if (g) {
        CHECK_EQ_INT(ts_memgraph_load_times(g, "/dev/zero", &err), TS_ERANGE);
        CHECK(strstr(err.msg, "/dev/zero: larger than 64 MiB, the most read for a kernel-times table") != NULL);
    }
    ts_memgraph_destroy(g);
    unlink(f); unlink(b);
    free(f); free(b);
}

/* Regression 2026-11-26: `memory --trace` kept 256 rows, and rows past the
 * caller's cap were counted once per event, not once per device. 300 ranks'
 * traces give 300 rows, counted right with any cap. */
TEST(memory_trace_peaks_count_every_device_past_the_cap_once)
{
    enum { N = 300 };
    char *paths[N];
    for (int i = 0; i < N; i++) {
        char ev[1024];
        snprintf(ev, sizeof ev,
                 "{\"ph\": \"i\", \"cat\": \"[memory]\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"s\": \"t\","
                 " \"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Total Allocated\": %d}},"
                 "{\"ph\": \"i\", \"cat\": \"[memory]\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 20, \"s\": \"t\","
                 " \"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Total Allocated\": %d}}], "
                 "\"distributedInfo\": {\"rank\": %d, \"world_size\": %d}, \"x\": [", 1000 + i, 10, i, N);
        paths[i] = write_trace(ev);
    }
    ts_job *tr = NULL;
    ts_error err = {0};
    CHECK_EQ_INT(ts_job_load((const char *const *)paths, N, NULL, &tr, &err), TS_OK);
    static ts_mem_trace_peak rows[N];
    uint32_t n = 0;
    if (tr) {
        CHECK_EQ_INT(ts_mem_trace_peaks(tr, rows, 7, &n, &err), TS_OK);
        CHECK_EQ_INT(n, N);
        CHECK_EQ_INT(ts_mem_trace_peaks(tr, rows, N, &n, &err), TS_OK);
        CHECK_EQ_INT(n, N);
        CHECK_EQ_INT(rows[N - 1].peak_bytes, 1000 + N - 1);
        CHECK_EQ_INT(rows[N - 1].n_events, 2);
    }
    ts_job_destroy(tr);
    for (int i = 0; i < N; i++) { unlink(paths[i]); free(paths[i]); }
}

/* Text with the first occurrence of `from` replaced by `to` (malloc'd). */
static char *replaced(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at) abort();
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return s;
}

/* Expect loading (fwd, bwd) to fail with a message holding `want`. */
static void expect_pair_error(const char *fwd, const char *bwd, const char *want)
{
    ts_error err = {0};
    ts_memgraph *g = load(fwd, bwd, 0, &err);
    if (g) { ts_memgraph_destroy(g); TS_FAIL_("loaded; expected '%s'", want); }
    if (!strstr(err.msg, want)) TS_FAIL_("got '%s', expected '%s'", err.msg, want);
}

/* Regression 2026-11-26 (issue 26): the forward given twice reported a
 * 1,966 MiB peak for mobilenetv3small (1,019 MiB with its backward), and
 * a forward cut before its return gave tensors with "Death: -1", both with
 * exit 0. A pair must belong together and each dump be whole. */
TEST(memory_reader_rejects_dumps_that_do_not_belong_together_or_are_incomplete)
{
    expect_pair_error(FWD, FWD, ":2: the backward takes no tangents_N: it is a forward dump");
    expect_pair_error(BWD, BWD, ":2: the forward takes 'tangents_1': this is a backward dump");
    char *no_ret = replaced(FWD, "        return [relu, primals_1, primals_2, le, squeeze_1]\n", "");
    expect_pair_error(no_ret, BWD, ":13: the graph has no 'return': the dump is incomplete");
    char *bwd_no_ret = replaced(BWD, "        return [permute_1, None, None]\n", "");
    expect_pair_error(FWD, bwd_no_ret, ":7: the graph has no 'return': the dump is incomplete");
    char *unsaved = replaced(BWD, "squeeze_1: \"f32[2]\"", "getitem: \"f32[2, 1]\"");
    expect_pair_error(FWD, unsaved, ":2: backward input 'getitem' is a forward tensor that the forward does not return");
    char *saves_more = replaced(FWD, "squeeze_1]", "squeeze_1, getitem]");
    expect_pair_error(saves_more, BWD, ":2: the forward returns 2 tensors, more than its 1 outputs (first: 'relu') "
                                       "that this backward does not take");
    char *two = malloc(2 * sizeof FWD);
    snprintf(two, 2 * sizeof FWD, "%s%s", FWD, FWD + strlen("class GraphModule(torch.nn.Module):\n"));
    expect_pair_error(two, BWD, ":15: more after the graph's return (two dumps in one file?)");
    ts_error err = {0};
    char *takes_it = replaced(BWD, "squeeze_1: \"f32[2]\", tangents_1",
                              "squeeze_1: \"f32[2]\", getitem: \"f32[2, 1]\", tangents_1");
    ts_memgraph *g = load(saves_more, takes_it, 0, &err);
    CHECK(g != NULL);   /* the same pair whole: the backward takes the extra saved tensor */
    ts_memgraph_destroy(g);
    free(no_ret); free(bwd_no_ret); free(unsaved); free(saves_more); free(two); free(takes_it);
}

/* --memory-limit on the exact-mode graph: globals 168 B, peak 424 B at mm_1
 * in the backward (globals + mm_1 128 + mul 64 + relu 64), 13 kernels of
 * 1 ms each (a table of bare times, in kernel order). */
TEST(memory_limit_fit_prices_offload_and_accumulation_and_refuses_a_limit_below_the_weights)
{
    ts_error err = {0};
    ts_memgraph *g = load(FWD, BWD, 0, &err);
    CHECK(g != NULL);
    if (!g) return;
    char *t = write_tmp("1\n1\n1\n1\n1\n1\n1\n1\n1\n1\n1\n1\n1\n");
    CHECK_EQ_INT(ts_memgraph_load_times(g, t, &err), TS_OK);
    unlink(t);
    free(t);
    ts_mem_summary s;
    CHECK_EQ_INT(ts_memgraph_analyze(g, &s), TS_OK);
    ts_mem_fit f;
    CHECK_EQ_INT(ts_memgraph_fit(g, 100, 32, &f, &err), TS_ERANGE);   /* below the 168 B of globals */
    CHECK(strstr(err.msg, "below the") != NULL);
    CHECK_EQ_INT(ts_memgraph_fit(g, 424, 32, &f, &err), TS_OK);
    CHECK(f.fits);
    CHECK_EQ_INT(ts_memgraph_fit(g, 300, 32, &f, &err), TS_OK);
    CHECK(!f.fits);
    /* two micro-batches: 168 + 256 / 2 = 296 B; each kernel pays its fixed
     * 2 us once more: 13 x 2 us */
    const ts_mem_fit_option *acc = &f.option[TS_MEM_FIT_ACCUMULATE];
    CHECK(acc->fits);
    CHECK_EQ_INT(acc->n_choices, 2);
    CHECK_EQ_INT(acc->peak_bytes, 296);
    CHECK_EQ_INT(acc->cost_ns, 26000);
    /* the only saved activation with a gap (le, 16 B) is back in use before
     * the peak kernel: recomputation cannot help there */
    CHECK(!f.option[TS_MEM_FIT_RECOMPUTE].fits);
    CHECK_EQ_INT(f.option[TS_MEM_FIT_RECOMPUTE].n_choices, 0);
    /* offload: primals_1 (f32[4, 8], 128 B) is read only by mm (kernel 0),
     * so it idles from kernel 1 to the next step's kernel 0 (12 ms), far
     * more than its round trip (2 x 128 B at 32 GB/s = 8 ns), and covers the
     * peak kernel: 424 - 128 = 296 B, at no cost, the cheapest */
    const ts_mem_fit_option *off = &f.option[TS_MEM_FIT_OFFLOAD];
    CHECK(off->fits);
    CHECK_EQ_INT(off->n_choices, 1);
    CHECK_EQ_INT(off->peak_bytes, 296);
    CHECK_EQ_INT(off->bytes_moved, 256);
    CHECK_EQ_INT(off->cost_ns, 0);
    CHECK_EQ_INT(f.cheapest, TS_MEM_FIT_OFFLOAD);
    ts_memgraph_destroy(g);
}
