/* test_precision.c - the precision what-if (include/trainscope/precision.h)
 * on small runs written here as Chrome traces, whose answers are worked out
 * by hand below: unit mapping, medians, the cast fit, plan rules, predicted
 * time and memory, bad input, and the greedy search against an exhaustive
 * search of every plan.
 *
 * The runs: a chain of units u (op OPS[u] inside range "m<u>", "Input Dims"
 * [[2000]], Sequence number 10+u), then the backward of each in reverse
 * (evaluate_function with a child of the same sequence number), then one
 * AccumulateGrad (no sequence number: an "other" op); 10 us gaps. Memory:
 * each unit's forward allocates MEM[u] bytes, its backward frees them. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test.h"
#include "trainscope/ingest.h"
#include "trainscope/optimize.h"
#include "trainscope/precision.h"

enum { NU = 4, NIT = 3 };
static const char *const OPS[NU] = {"aten::linear", "aten::relu", "aten::linear", "aten::mse_loss"};
static const int64_t MEM[NU] = {8000, 4000, 8000, 4};

typedef struct run_spec {
    double fwd_us[NU], bwd_us[NU];   /* iteration k takes (k + 1) x these: medians are iteration 1's */
    double cast_us[NU];              /* entry cast before unit u (0 = none), "Input Dims" [[CAST_ELEMS[u]]] */
    int    mem_div;                  /* bytes are MEM[u] x mem_mul / mem_div */
    int    mem_mul;                  /* 0 = 1 */
    const char *rename;              /* unit 2's op name instead of OPS[2] (NULL = same) */
    const char *const *scopes;       /* each unit's range name (NULL = "m<u>") */
} run_spec;
static const int64_t CAST_ELEMS[NU] = {1000, 0, 0, 3000};

static void ev(char **p, const char *name, double ts, double dur, int64_t seq, const char *dims)
{
    *p += sprintf(*p, "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%.3f,"
                  "\"dur\":%.3f,\"args\":{\"Sequence number\":%lld%s%s}}", (*p)[-1] == '[' ? "" : ",", name, ts,
                  dur, (long long)seq, dims ? ",\"Input Dims\":" : "", dims ? dims : "");
}

static void mem(char **p, double ts, int64_t bytes, int64_t *total)
{
    *total += bytes;
    *p += sprintf(*p, ",{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"[memory]\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,"
                  "\"ts\":%.3f,\"args\":{\"Device Type\":0,\"Device Id\":-1,\"Bytes\":%lld,\"Total Allocated\":%lld}}",
                  ts, (long long)bytes, (long long)*total);
}

/* One iteration starting at t; returns its end. */
static double iteration(char **p, const run_spec *s, int k, double t, int64_t *total)
{
    double f = k + 1, start = t;
    char *step = *p;
    ev(p, "ProfilerStep#0", t, 0, -1, NULL);   /* duration patched below */
    t += 10;
    for (int u = 0; u < NU; u++) {
        char scope[16], dims[32];
        snprintf(scope, sizeof scope, "%s", s->scopes ? s->scopes[u] : "m");
        if (!s->scopes) snprintf(scope, sizeof scope, "m%d", u);
        double c = s->cast_us[u] * f, d = s->fwd_us[u] * f;
        ev(p, scope, t, c + d + 12, -1, NULL);
        t += 1;
        if (c > 0) {
            snprintf(dims, sizeof dims, "[[%lld]]", (long long)CAST_ELEMS[u]);
            ev(p, "aten::to", t, c, 100 + u, dims);
            t += c + 10;
        }
        ev(p, u == 2 && s->rename ? s->rename : OPS[u], t, d, 10 + u, "[[2000], [7]]");
        mem(p, t + d / 2, MEM[u] * (s->mem_mul ? s->mem_mul : 1) / s->mem_div, total);
        t += d + 10;
    }
    for (int u = NU - 1; u >= 0; u--) {
        double d = s->bwd_us[u] * f;
        ev(p, "autograd::engine::evaluate_function: XBackward0", t, d, -1, NULL);
        ev(p, "XBackward0", t + 0.5, d - 1, 10 + u, NULL);
        mem(p, t + d / 2, -MEM[u] * (s->mem_mul ? s->mem_mul : 1) / s->mem_div, total);
        t += d + 10;
    }
    ev(p, "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", t, 5 * f, -1, NULL);
    t += 5 * f + 10;
    char num[64];
    int n = snprintf(num, sizeof num, "%.3f", t - start);
    char *dur = strstr(step, "\"dur\":0.000");   /* "0.000" -> the real duration: make room, then write */
    memmove(dur + 6 + n, dur + 11, strlen(dur + 11) + 1);
    memcpy(dur + 6, num, (size_t)n);
    *p = step + strlen(step);
    (void)k;
    return t + 100;
}

static char *write_run(const run_spec *s)
{
    static char buf[1 << 16];
    char *p = buf + sprintf(buf, "{\"traceEvents\":[");
    int64_t total = 1000000;   /* bytes alive before the run */
    double t = 0;
    for (int k = 0; k < NIT; k++) t = iteration(&p, s, k, t, &total);
    strcpy(p, "]}\n");
    char *path = strdup("/tmp/ts_test_precision_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, buf, strlen(buf)) != (ssize_t)strlen(buf)) abort();
    close(fd);
    return path;
}

static char *write_text(const char *text)
{
    char *path = strdup("/tmp/ts_test_precision_plan_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) abort();
    close(fd);
    return path;
}

static const run_spec FP32 = {.fwd_us = {100, 20, 300, 6}, .bwd_us = {200, 20, 600, 8}, .mem_div = 1};
/* bf16: the linears 4x faster, relu 2x; entry casts before unit 0 (the
 * batch: 1000 elements, 1.5 us) and before the fp32 loss (3000, 2.5 us):
 * the cast line is 0.5 ns/element + 1000 ns. */
static const run_spec BF16 = {.fwd_us = {25, 10, 75, 6}, .bwd_us = {50, 10, 150, 8},
                              .cast_us = {1.5, 0, 0, 2.5}, .mem_div = 2};

/* Model from an fp32 and a bf16 run; NULL on failure (err filled). */
static ts_prec_model *model_of(const run_spec *f, const run_spec *b, ts_error *err, char **bf16_path)
{
    char *paths[2] = {write_run(f), b ? write_run(b) : NULL};
    ts_job *t[TS_PREC_COUNT] = {0};
    const char *names[TS_PREC_COUNT] = {paths[0], paths[1]};
    ts_prec_model *m = NULL;
    int rc = ts_job_load((const char *const *)&paths[0], 1, NULL, &t[0], err);
    if (!rc && b) rc = ts_job_load((const char *const *)&paths[1], 1, NULL, &t[1], err);
    if (!rc) rc = ts_prec_model_create((const ts_job *const *)t, names, &m, err);
    for (int i = 0; i < 2; i++) ts_job_destroy(t[i]);
    unlink(paths[0]);
    free(paths[0]);
    if (paths[1]) unlink(paths[1]);
    if (bf16_path) *bf16_path = paths[1] ? strdup(paths[1]) : NULL;
    free(paths[1]);
    return rc ? NULL : m;
}

TEST(precision_units_map_across_runs_with_median_times)
{
    ts_error err;
    ts_prec_model *m = model_of(&FP32, &BF16, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    CHECK_EQ_INT(ts_prec_model_n_units(m), NU);
    ts_prec_unit_info u;
    ts_prec_model_unit(m, 2, &u);
    CHECK_EQ_STR(u.op, "aten::linear");
    CHECK_EQ_STR(u.scope, "m2");
    CHECK_EQ_INT(u.input_elems, 2000);
    /* iterations take 1x, 2x, 3x: the median is the 2x one */
    CHECK_EQ_INT(u.fwd_ns[TS_PREC_FP32], 600000);
    CHECK_EQ_INT(u.bwd_ns[TS_PREC_FP32], 1200000);
    CHECK_EQ_INT(u.fwd_ns[TS_PREC_BF16], 150000);
    ts_prec_model_unit(m, 0, &u);   /* with its entry cast: 2 x (25 + 1.5) us */
    CHECK_EQ_INT(u.fwd_ns[TS_PREC_BF16], 53000);
    CHECK_EQ_INT(u.fwd_ns[TS_PREC_FP16], -1);
    ts_prec_model_destroy(m);
}

TEST(precision_cast_fit_is_the_line_through_the_runs_casts)
{
    ts_error err;
    ts_prec_model *m = model_of(&FP32, &BF16, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    ts_prec_cast_fit fit;
    ts_prec_model_cast_fit(m, &fit);
    /* casts (1000, 1.5 us), (3000, 2.5), (1000, 3), (3000, 5), (1000, 4.5), (3000, 7.5): by
     * iteration 1x..3x; the 9 slopes between a 1000 and a 3000 cast are
     * -2, -0.5, 0.5, 1, 2, 3, 3.5, 4.5, 6 us per 2000 elements: median 1 ns
     * per element (6 bytes); intercepts y - x: 0.5, 2, 3.5, -0.5, 2, 4.5 us:
     * median 2 us */
    CHECK_EQ_INT(fit.n_casts, 6);
    CHECK_NEAR(fit.alpha_ns_per_byte * 6, 1.0, 1e-6);
    CHECK_NEAR(fit.beta_ns, 2000, 1e-3);
    ts_prec_model_destroy(m);
}

/* Step of iteration 1 (2x): gaps and units add up to the ProfilerStep span. */
static int64_t measured_step_ns(void)
{
    double t = 10;
    for (int u = 0; u < NU; u++) t += 1 + FP32.fwd_us[u] * 2 + 10;
    for (int u = 0; u < NU; u++) t += FP32.bwd_us[u] * 2 + 10;
    return (int64_t)((t + 10 + 10) * 1000);
}

TEST(precision_fp32_plan_gives_back_the_measured_step)
{
    ts_error err;
    ts_prec_model *m = model_of(&FP32, &BF16, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    uint8_t prec[NU] = {0};
    ts_prec_prediction p;
    ts_prec_predict(m, prec, &p);
    CHECK_EQ_INT(p.fp32_iteration_ns, measured_step_ns());
    CHECK_EQ_INT(p.iteration_ns, p.fp32_iteration_ns);
    CHECK_EQ_INT(p.n_casts, 0);
    /* fp32 memory: 1,000,000 alive, then the forward allocates 8000 + 4000 + 8000 + 4 */
    CHECK_EQ_INT(p.peak_bytes, 1000000 + 20004);
    CHECK_EQ_INT(p.fp32_peak_bytes, 1000000 + 20004);
    ts_prec_model_destroy(m);
}

TEST(precision_plan_takes_unit_times_and_prices_casts_between_units)
{
    ts_error err;
    ts_prec_model *m = model_of(&FP32, &BF16, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    char *plan = write_text("# unit 2 (m2) in bf16\nname:m2 bf16\n");
    uint8_t prec[NU];
    CHECK_EQ_INT(ts_prec_plan_load(m, plan, prec, &err), TS_OK);
    CHECK(prec[0] == TS_PREC_FP32 && prec[1] == TS_PREC_FP32 && prec[2] == TS_PREC_BF16 && prec[3] == TS_PREC_FP32);
    ts_prec_prediction p;
    ts_prec_predict(m, prec, &p);
    /* unit 2: 600 -> 150 us forward, 1200 -> 300 backward; casts: into unit 2
     * (forward and its gradient) and into unit 3, each 1 ns x 2000 + 2 us = 4 us */
    int64_t want = measured_step_ns() - 450000 - 900000 + 4 * 4000;
    CHECK_EQ_INT(p.n_casts, 4);
    CHECK_EQ_INT(p.cast_ns, 16000);
    CHECK_EQ_INT(p.iteration_ns, want);
    /* memory: 8000 + 4000 (1,012,000); unit 2's cast output (2000 x 2 bytes)
     * beside its input, which relu (unit 1) keeps for its backward, and its
     * bf16 block (1,020,000); unit 3's cast output (2000 x 4) peaks at
     * 1,028,000 and replaces its bf16 input, which the linear does not keep
     * (-4000 net), its own 4 bytes (1,024,004); in the backward unit 3's
     * frees its 4 and the cast of its gradient to bf16 allocates 4000 before
     * the fp32 gradient (8000) goes (1,028,000 again): the peak is 1,028,000 */
    CHECK_EQ_INT(p.peak_bytes, 1000000 + 8000 + 4000 + 4000 + 4000 + 8000);
    unlink(plan);
    free(plan);
    ts_prec_model_destroy(m);
}

TEST(precision_all_bf16_plan_uses_the_bf16_runs_entry_casts_only_where_they_fit)
{
    ts_error err;
    ts_prec_model *m = model_of(&FP32, &BF16, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    char *plan = write_text("* bf16\naten::mse_loss fp32\n");
    uint8_t prec[NU];
    CHECK_EQ_INT(ts_prec_plan_load(m, plan, prec, &err), TS_OK);
    ts_prec_prediction p;
    ts_prec_predict(m, prec, &p);
    /* units 0-2 bf16 (times 2 x bf16), unit 3 fp32; unit 0 follows the fp32
     * batch: a modelled cast (forward only, 4 us) replaces the run's entry
     * cast; unit 3 after bf16: forward + gradient casts, 4 us each */
    int64_t saved = 0;
    for (int u = 0; u < 3; u++) saved += (int64_t)((FP32.fwd_us[u] - BF16.fwd_us[u] + FP32.bwd_us[u] - BF16.bwd_us[u]) * 2000);
    CHECK_EQ_INT(p.n_casts, 3);
    CHECK_EQ_INT(p.iteration_ns, measured_step_ns() - saved + 12000);
    unlink(plan);
    free(plan);
    ts_prec_model_destroy(m);
}

TEST(precision_plan_naming_an_absent_op_or_run_is_refused_with_its_line)
{
    ts_error err;
    ts_prec_model *m = model_of(&FP32, &BF16, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    uint8_t prec[NU];
    char *plan = write_text("aten::linear bf16\naten::conv2d bf16\n");
    CHECK_EQ_INT(ts_prec_plan_load(m, plan, prec, &err), TS_ENOENT);
    CHECK(strstr(err.msg, plan) && strstr(err.msg, ":2: 'aten::conv2d' matches no op"));
    unlink(plan);
    free(plan);
    plan = write_text("relu fp16\n");
    CHECK_EQ_INT(ts_prec_plan_load(m, plan, prec, &err), TS_EINVAL);
    CHECK(strstr(err.msg, ":1: no fp16 run"));
    unlink(plan);
    free(plan);
    plan = write_text("relu bf16 extra\n");
    CHECK_EQ_INT(ts_prec_plan_load(m, plan, prec, &err), TS_EPARSE);
    unlink(plan);
    free(plan);
    ts_prec_model_destroy(m);
}

TEST(precision_runs_of_another_model_cannot_be_mapped)
{
    run_spec other = BF16;
    other.rename = "aten::conv2d";
    ts_error err;
    char *path = NULL;
    ts_prec_model *m = model_of(&FP32, &other, &err, &path);
    CHECK(m == NULL);
    CHECK_EQ_INT(err.status, TS_EFORMAT);
    CHECK(path && strstr(err.msg, path) && strstr(err.msg, "'aten::conv2d'") && strstr(err.msg, "cannot be mapped"));
    free(path);
    ts_prec_model_destroy(m);
}

/* Every plan of n units by brute force: the fastest whose lowered units are
 * all allowed (allowed NULL = every one) and whose indicators sum to at most
 * budget. */
static int64_t exhaustive_best_of(const ts_prec_model *m, const double *ind, double budget, const uint8_t *allowed)
{
    int64_t best = INT64_MAX;
    uint8_t prec[NU];
    for (unsigned mask = 0; mask < (1u << NU); mask++) {
        double used = 0;
        bool ok = true;
        for (int u = 0; u < NU; u++) {
            prec[u] = (mask >> u) & 1 ? TS_PREC_BF16 : TS_PREC_FP32;
            used += (mask >> u) & 1 ? ind[u] : 0;
            ok = ok && (!((mask >> u) & 1) || !allowed || allowed[u]);
        }
        if (!ok || used > budget + 1e-9) continue;
        ts_prec_prediction p;
        ts_prec_predict(m, prec, &p);
        if (p.iteration_ns < best) best = p.iteration_ns;
    }
    return best;
}

static int64_t exhaustive_best(const ts_prec_model *m, const double *ind, double budget)
{
    return exhaustive_best_of(m, ind, budget, NULL);
}

TEST(precision_greedy_matches_the_exhaustive_search_on_equal_indicators_without_casts)
{
    /* no casts in either run: the fit is 0, so savings add up; with equal
     * indicators and a budget of k units the greedy's top-k is optimal */
    run_spec b = BF16;
    memset(b.cast_us, 0, sizeof b.cast_us);
    ts_error err;
    ts_prec_model *m = model_of(&FP32, &b, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    double ind[NU] = {1, 1, 1, 1};
    for (int k = 0; k <= NU; k++) {
        uint8_t prec[NU];
        ts_prec_prediction p;
        CHECK_EQ_INT(ts_prec_greedy(m, ind, k, 0, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_OP, prec, &p), TS_OK);
        CHECK_EQ_INT(p.iteration_ns, exhaustive_best(m, ind, k));
    }
    ts_prec_model_destroy(m);
}

TEST(precision_greedy_keeps_its_budgets_and_is_never_better_than_exhaustive)
{
    ts_error err;
    ts_prec_model *m = model_of(&FP32, &BF16, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    const double inds[3][NU] = {{0.5, 2, 1, 3}, {3, 0.1, 0.2, 1}, {1, 1, 4, 0}};
    for (int i = 0; i < 3; i++)
        for (double budget = 0.5; budget <= 6; budget += 0.5) {
            uint8_t prec[NU];
            ts_prec_prediction p;
            CHECK_EQ_INT(ts_prec_greedy(m, inds[i], budget, 0, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_OP, prec, &p), TS_OK);
            double used = 0;
            for (int u = 0; u < NU; u++) used += prec[u] == TS_PREC_BF16 ? (inds[i][u] > 1e-12 ? inds[i][u] : 1e-12) : 0;
            CHECK(used <= budget + 1e-9);
            CHECK(p.iteration_ns >= exhaustive_best(m, inds[i], budget));
            CHECK(p.iteration_ns <= measured_step_ns());
        }
    /* a memory limit below every plan's peak: refused */
    uint8_t prec[NU];
    ts_prec_prediction p;
    CHECK_EQ_INT(ts_prec_greedy(m, NULL, 100, 1000, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_OP, prec, &p), TS_ERANGE);
    /* a limit the all-fp32 plan misses by 4 KB: the greedy lowers until it fits */
    CHECK_EQ_INT(ts_prec_greedy(m, NULL, 100, 1000000 + 16004, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_OP, prec, &p), TS_OK);
    CHECK(p.peak_bytes <= 1000000 + 16004);
    ts_prec_model_destroy(m);
}

TEST(precision_greedy_under_a_limit_passes_over_lowerings_that_add_memory)
{
    /* a bf16 run whose blocks are 3x the fp32 run's (CPU autocast keeps a
     * 16-bit copy of each weight): the all-bf16 plan is the fastest but does
     * not fit a limit the all-fp32 plan meets; the greedy's plan must fit and
     * be no slower than the fastest plan that fits (brute force) allows */
    run_spec b = BF16;
    b.mem_div = 1;
    b.mem_mul = 3;
    ts_error err;
    ts_prec_model *m = model_of(&FP32, &b, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    uint8_t prec[NU];
    ts_prec_prediction p;
    memset(prec, TS_PREC_BF16, NU);
    ts_prec_predict(m, prec, &p);
    const int64_t limit = (p.peak_bytes + p.fp32_peak_bytes) / 2;   /* halfway from all-fp32 to all-bf16 */
    CHECK(p.peak_bytes > p.fp32_peak_bytes);
    int64_t best = INT64_MAX, best_any = INT64_MAX;
    for (unsigned mask = 0; mask < (1u << NU); mask++) {
        for (int u = 0; u < NU; u++) prec[u] = (mask >> u) & 1 ? TS_PREC_BF16 : TS_PREC_FP32;
        ts_prec_predict(m, prec, &p);
        if (p.iteration_ns < best_any) best_any = p.iteration_ns;
        if (p.peak_bytes <= limit && p.iteration_ns < best) best = p.iteration_ns;
    }
    CHECK(best > best_any);   /* the limit binds */
    CHECK(best < measured_step_ns());   /* and some lowering still fits */
    CHECK_EQ_INT(ts_prec_greedy(m, NULL, 100, limit, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_OP, prec, &p), TS_OK);
    CHECK(p.peak_bytes <= limit);
    CHECK(p.iteration_ns >= best);
    CHECK(p.iteration_ns < measured_step_ns());
    ts_prec_model_destroy(m);
}

/* ---- per module: a module's units change together ---- */

/* units 0 and 1 in module blk, unit 2 in module head, unit 3 (the loss) in
 * a range that is no module (torch's own ranges have a '#') */
static const char *const MODS[NU] = {"blk", "blk", "head", "Loss#1"};

TEST(precision_units_know_their_module)
{
    run_spec f = FP32, b = BF16;
    f.scopes = b.scopes = MODS;
    ts_error err;
    ts_prec_model *m = model_of(&f, &b, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    CHECK_EQ_STR(ts_prec_model_unit_module(m, 0), "blk");
    CHECK_EQ_STR(ts_prec_model_unit_module(m, 1), "blk");
    CHECK_EQ_STR(ts_prec_model_unit_module(m, 2), "head");
    CHECK(ts_prec_model_unit_module(m, 3) == NULL);
    ts_prec_model_destroy(m);
}

TEST(precision_greedy_by_module_lowers_whole_modules_by_hand)
{
    /* no casts (the fit is 0: casts cost no time), the loss 2x faster in
     * bf16. Medians (iteration 1, 2x): fp32 unit costs 600, 80, 1800, 28 us;
     * bf16 150, 40, 450, 22 us: savings 450, 40, 1350, 6 us. Indicators 1,
     * 5, 2, 1. */
    run_spec f = FP32, b = BF16;
    f.scopes = b.scopes = MODS;
    memset(b.cast_us, 0, sizeof b.cast_us);
    b.fwd_us[3] = 3;
    ts_error err;
    ts_prec_model *m = model_of(&f, &b, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    const double ind[NU] = {1, 5, 2, 1};
    uint8_t prec[NU];
    ts_prec_prediction p;
    const int64_t step = measured_step_ns();
    /* per op, budget 4: ratios 450, 8, 675, 6 per unit of indicator: head's
     * linear (2), blk's linear (3), the loss (4); the relu (5) is over */
    CHECK_EQ_INT(ts_prec_greedy(m, ind, 4, 0, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_OP, prec, &p), TS_OK);
    CHECK(prec[0] == TS_PREC_BF16 && prec[1] == TS_PREC_FP32 && prec[2] == TS_PREC_BF16 && prec[3] == TS_PREC_BF16);
    CHECK_EQ_INT(p.iteration_ns, step - (450 + 1350 + 6) * 1000);
    /* per module, budget 4: blk counts 5 (its units' largest), head 2: head
     * alone; blk cannot be split, the loss is in no module */
    CHECK_EQ_INT(ts_prec_greedy(m, ind, 4, 0, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_MODULE, prec, &p), TS_OK);
    CHECK(prec[0] == TS_PREC_FP32 && prec[1] == TS_PREC_FP32 && prec[2] == TS_PREC_BF16 && prec[3] == TS_PREC_FP32);
    CHECK_EQ_INT(p.iteration_ns, step - 1350 * 1000);
    /* budget 7: head (675 per unit), then blk (490 / 5): both, the loss still fp32 */
    CHECK_EQ_INT(ts_prec_greedy(m, ind, 7, 0, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_MODULE, prec, &p), TS_OK);
    CHECK(prec[0] == TS_PREC_BF16 && prec[1] == TS_PREC_BF16 && prec[2] == TS_PREC_BF16 && prec[3] == TS_PREC_FP32);
    CHECK_EQ_INT(p.iteration_ns, step - (450 + 40 + 1350) * 1000);
    /* a run whose ops are in no module: nothing a per-module plan can lower */
    ts_prec_model_destroy(m);
    static const char *const NONE[NU] = {"Loss#1", "Loss#1", "Loss#1", "Loss#1"};
    f.scopes = b.scopes = NONE;
    m = model_of(&f, &b, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    CHECK_EQ_INT(ts_prec_greedy(m, ind, 7, 0, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_MODULE, prec, &p), TS_ENOENT);
    ts_prec_model_destroy(m);
}

/* The fastest per-module plan (blk, head; the loss fp32) within the limit,
 * by brute force; INT64_MAX when none fits. */
static int64_t module_plans_best(const ts_prec_model *m, int64_t limit)
{
    int64_t best = INT64_MAX;
    for (unsigned mask = 0; mask < 4; mask++) {
        uint8_t prec[NU] = {mask & 1 ? TS_PREC_BF16 : TS_PREC_FP32, mask & 1 ? TS_PREC_BF16 : TS_PREC_FP32,
                            mask & 2 ? TS_PREC_BF16 : TS_PREC_FP32, TS_PREC_FP32};
        ts_prec_prediction p;
        ts_prec_predict(m, prec, &p);
        if (p.peak_bytes <= limit && p.iteration_ns < best) best = p.iteration_ns;
    }
    return best;
}

TEST(precision_greedy_by_module_under_a_limit_matches_exhaustive)
{
    /* bf16 blocks 3x (lowering adds memory, as CPU autocast's weight copies
     * do) and 1/2 (it saves memory); every limit between the lowest and the
     * highest module plan's peak: the greedy's plan fits, lowers modules
     * whole, and is the fastest module plan that fits */
    const int muls[2][2] = {{1, 3}, {2, 1}};   /* mem_div, mem_mul */
    for (int k = 0; k < 2; k++) {
        run_spec f = FP32, b = BF16;
        f.scopes = b.scopes = MODS;
        b.mem_div = muls[k][0];
        b.mem_mul = muls[k][1];
        ts_error err;
        ts_prec_model *m = model_of(&f, &b, &err, NULL);
        if (!m) TS_FAIL_("%s", err.msg);
        int64_t lo = INT64_MAX, hi = 0;
        for (unsigned mask = 0; mask < 4; mask++) {
            uint8_t prec[NU] = {mask & 1 ? TS_PREC_BF16 : 0, mask & 1 ? TS_PREC_BF16 : 0, mask & 2 ? TS_PREC_BF16 : 0, 0};
            ts_prec_prediction p;
            ts_prec_predict(m, prec, &p);
            if (p.peak_bytes < lo) lo = p.peak_bytes;
            if (p.peak_bytes > hi) hi = p.peak_bytes;
        }
        CHECK(hi > lo);
        for (int64_t limit = lo; limit <= hi; limit += (hi - lo) / 8 + 1) {
            uint8_t prec[NU];
            ts_prec_prediction p;
            CHECK_EQ_INT(ts_prec_greedy(m, NULL, 100, limit, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_MODULE, prec, &p),
                         TS_OK);
            CHECK(p.peak_bytes <= limit);
            CHECK(prec[0] == prec[1] && prec[3] == TS_PREC_FP32);
            CHECK_EQ_INT(p.iteration_ns, module_plans_best(m, limit));
        }
        ts_prec_model_destroy(m);
    }
}

TEST(precision_greedy_memory_pass_loses_the_least_time_per_byte)
{
    /* bf16 slower than fp32 for every unit (nothing saves time) and half
     * the memory; a limit the fp32 plan misses: the lowering that fits
     * must be the cheapest in time that fits, which brute force over every
     * plan finds (one unit per module: per op and per module agree) */
    run_spec b = BF16;
    const double fwd[NU] = {150, 30, 310, 6}, bwd[NU] = {250, 30, 620, 8};
    memcpy(b.fwd_us, fwd, sizeof fwd);
    memcpy(b.bwd_us, bwd, sizeof bwd);
    memset(b.cast_us, 0, sizeof b.cast_us);
    ts_error err;
    ts_prec_model *m = model_of(&FP32, &b, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    uint8_t prec[NU] = {0};
    ts_prec_prediction p;
    ts_prec_predict(m, prec, &p);
    for (int64_t cut = 1000; cut <= 9000; cut += 2000) {
        int64_t limit = p.fp32_peak_bytes - cut, best = INT64_MAX;
        for (unsigned mask = 0; mask < (1u << NU); mask++) {
            uint8_t q[NU];
            ts_prec_prediction e;
            for (int u = 0; u < NU; u++) q[u] = (mask >> u) & 1 ? TS_PREC_BF16 : TS_PREC_FP32;
            ts_prec_predict(m, q, &e);
            if (e.peak_bytes <= limit && e.iteration_ns < best) best = e.iteration_ns;
        }
        for (int by = 0; by < 2; by++) {
            ts_prec_prediction g;
            int rc = ts_prec_greedy(m, NULL, 100, limit, TS_PREC_FP32, TS_PREC_BF16, (ts_prec_granularity)by, prec, &g);
            if (best == INT64_MAX) { CHECK_EQ_INT(rc, TS_ERANGE); continue; }
            CHECK_EQ_INT(rc, TS_OK);
            CHECK(g.peak_bytes <= limit);
            CHECK_EQ_INT(g.iteration_ns, best);
        }
    }
    ts_prec_model_destroy(m);
}

/* ---- the optimize pass: allow lists, plan files ---- */

TEST(precision_allow_lists_torch_and_tf_say_which_units_may_change)
{
    ts_error err;
    ts_prec_model *m = model_of(&FP32, &BF16, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    uint8_t allowed[NU];
    uint32_t n;
    /* a torch autocast list: names with and without aten::, blanks and commas; OPS = linear relu linear mse_loss */
    char *list = write_text("# autocast to lower precision\nlinear, addmm  conv2d\n");
    CHECK_EQ_INT(ts_prec_allow_list_load(m, list, allowed, &n, &err), TS_OK);
    CHECK_EQ_INT(n, 2);
    CHECK(allowed[0] && !allowed[1] && allowed[2] && !allowed[3]);
    unlink(list);
    free(list);
    /* dPRO's TF settings: allow Relu and MSE_Loss (case-insensitive), then deny mse_loss */
    list = write_text("export TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_ALLOWLIST_ADD=Relu,MSE_Loss\n"
                      "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_ADD=\"mse_loss\"\n"
                      "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_FORCE=1\n");
    CHECK_EQ_INT(ts_prec_allow_list_load(m, list, allowed, &n, &err), TS_OK);
    CHECK_EQ_INT(n, 1);
    CHECK(!allowed[0] && allowed[1] && !allowed[2] && !allowed[3]);
    unlink(list);
    free(list);
    /* none of the list's ops in the run; an unknown key; a line that is not a list */
    list = write_text("Conv2D\nBatchMatMul\n");
    CHECK_EQ_INT(ts_prec_allow_list_load(m, list, allowed, &n, &err), TS_ENOENT);
    CHECK(strstr(err.msg, list) && strstr(err.msg, "none of its 2 op names"));
    unlink(list);
    free(list);
    list = write_text("linear\nTF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_WHATEVER=1\n");
    CHECK_EQ_INT(ts_prec_allow_list_load(m, list, allowed, &n, &err), TS_EPARSE);
    CHECK(strstr(err.msg, ":2: unknown setting"));
    unlink(list);
    free(list);
    list = write_text("FOO=linear\n");
    CHECK_EQ_INT(ts_prec_allow_list_load(m, list, allowed, &n, &err), TS_EPARSE);
    CHECK(strstr(err.msg, ":1: 'FOO='"));
    unlink(list);
    free(list);
    ts_prec_model_destroy(m);
}

TEST(precision_optimize_pass_lowers_only_allowed_units_and_matches_exhaustive)
{
    ts_error err;
    ts_prec_model *m = model_of(&FP32, &BF16, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    const char *lists[] = {"linear\n", "relu\n", "linear relu\n", "mse_loss\n"};
    const double one[NU] = {1, 1, 1, 1};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
        char *list = write_text(lists[i]);
        uint8_t allowed[NU];
        uint32_t n;
        CHECK_EQ_INT(ts_prec_allow_list_load(m, list, allowed, &n, &err), TS_OK);
        ts_optimize_prec_options o = {.size = sizeof o, .low = TS_PREC_BF16, .allow_list = list};
        ts_optimize_prec *p = NULL;
        CHECK_EQ_INT(ts_optimize_precision(m, &o, &p, &err), TS_OK);
        ts_optimize_prec_summary s;
        ts_optimize_prec_get_summary(p, &s);
        const uint8_t *plan = ts_optimize_prec_plan(p);
        for (int u = 0; u < NU; u++) CHECK(allowed[u] || plan[u] == TS_PREC_FP32);
        /* one allowed unit: two plans, the greedy takes the better; more: never better than brute force */
        int64_t best = exhaustive_best_of(m, one, 1e300, allowed);
        if (n == 1) CHECK_EQ_INT(s.after.iteration_ns, best);
        else CHECK(s.after.iteration_ns >= best);
        CHECK(s.after.iteration_ns <= s.before.iteration_ns);
        CHECK_EQ_INT(s.before.iteration_ns, measured_step_ns());
        ts_optimize_prec_destroy(p);
        unlink(list);
        free(list);
    }
    ts_prec_model_destroy(m);
}

static char *slurp_file(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strdup(buf);
}

TEST(precision_optimize_plan_files_read_back_to_the_same_plan)
{
    ts_error err;
    ts_prec_model *m = model_of(&FP32, &BF16, &err, NULL);
    if (!m) TS_FAIL_("%s", err.msg);
    ts_optimize_prec_options o = {.size = sizeof o, .low = TS_PREC_BF16, .accuracy_budget = 2};
    ts_optimize_prec *p = NULL;
    CHECK_EQ_INT(ts_optimize_precision(m, &o, &p, &err), TS_OK);
    const uint8_t *plan = ts_optimize_prec_plan(p);
    /* budget 2 of equal indicators: the two linears save most (75% of 300+600 and 100+200 us) */
    CHECK(plan[0] == TS_PREC_BF16 && plan[2] == TS_PREC_BF16 && plan[1] == TS_PREC_FP32 && plan[3] == TS_PREC_FP32);
    char dir[] = "/tmp/ts_test_precopt_XXXXXX";
    if (!mkdtemp(dir)) TS_FAIL_("mkdtemp");
    CHECK_EQ_INT(ts_optimize_prec_write_plan(p, dir, &err), TS_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/plan.json", dir);
    CHECK(ts_optimize_plan_is_precision(path));
    uint8_t back[NU] = {9, 9, 9, 9}, fromplan[NU];
    CHECK_EQ_INT(ts_optimize_prec_plan_load(path, m, back, &err), TS_OK);
    CHECK(!memcmp(back, plan, NU));
    snprintf(path, sizeof path, "%s/greedy.plan", dir);   /* the plan file torch users apply */
    CHECK_EQ_INT(ts_prec_plan_load(m, path, fromplan, &err), TS_OK);
    CHECK(!memcmp(fromplan, plan, NU));
    char *text = slurp_file(dir, "greedy.plan");
    CHECK(text && strstr(text, "op:0 bf16  # aten::linear in m0\n") && strstr(text, "op:2 bf16  # aten::linear in m2\n"));
    free(text);
    text = slurp_file(dir, "amp_priorlist.txt");   /* the distinct ops lowered */
    CHECK(text && !strcmp(text, "aten::linear\n"));
    free(text);
    text = slurp_file(dir, "amp.env");
    CHECK(text && strstr(text, "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_PRIORLIST_FILE=/") &&
          strstr(text, "/amp_priorlist.txt\nTF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_FORCE=1\n"));
    free(text);
    /* the plan on another model (unit 2 a conv2d): refused naming the unit */
    run_spec f2 = FP32, b2 = BF16;
    f2.rename = b2.rename = "aten::conv2d";
    ts_prec_model *other = model_of(&f2, &b2, &err, NULL);
    if (!other) TS_FAIL_("%s", err.msg);
    snprintf(path, sizeof path, "%s/plan.json", dir);
    CHECK_EQ_INT(ts_optimize_prec_plan_load(path, other, back, &err), TS_EFORMAT);
    CHECK(strstr(err.msg, "unit 2 is aten::linear in the plan, aten::conv2d in the fp32 run"));
    const char *names[] = {"plan.json", "greedy.plan", "amp_priorlist.txt", "amp.env"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    ts_prec_model_destroy(other);
    ts_optimize_prec_destroy(p);
    ts_prec_model_destroy(m);
}
