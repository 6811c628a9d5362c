/* bench/precision.c - the precision what-if's cast fit on held-out casts and
 * its speed.
 *
 *   build/bench/precision casts FP32_RUN BF16_RUN HELD_OUT_RUN...
 *       fits alpha * bytes + beta on the casts of the fp32 and bf16 runs (as
 *       `replay --precision-plan` does) and prints its error on every cast of
 *       the held-out runs (mixed plans the fit never saw)
 *   build/bench/precision speed [UNITS]
 *       a synthetic chain of UNITS forward ops (default 1,500: a BERT-base
 *       training step's forward top-level ops) with their backward, at fp32
 *       and bf16, 3 iterations with memory events: the time to predict one
 *       plan (target < 10 ms) and to run the greedy search over every op
 *       (target < 1 s), best of 5, in the same run.
 *   build/bench/precision modules FP32_RUN BF16_RUN LIMIT_BYTES [OVERHEAD_US [BUDGET]]
 *       every per-module plan (2^modules, at most 2^16) predicted, the
 *       fastest whose peak is within LIMIT_BYTES and which lowers at most
 *       BUDGET modules, beside the per-module greedy's plan: whether the
 *       greedy found the model's own optimum.
 * Not a test: it asserts nothing; timings depend on the machine's load.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trainscope/ingest.h"
#include "trainscope/precision.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static ts_job *load(const char *path)
{
    ts_job *t = NULL;
    ts_error err;
    if (ts_job_load(&path, 1, NULL, &t, &err)) {
        fprintf(stderr, "precision: %s\n", err.msg);
        exit(2);
    }
    return t;
}

/* The model of the runs at fp32 and bf16 (t[] gets the loaded runs, for the
 * caller to destroy); exits 2 with the reason when it cannot be built. */
static ts_prec_model *model_of(ts_job *t[TS_PREC_COUNT], const char *fp32, const char *bf16)
{
    t[0] = load(fp32), t[1] = load(bf16);
    const char *paths[TS_PREC_COUNT] = {fp32, bf16};
    ts_prec_model *m;
    ts_error err;
    if (ts_prec_model_create((const ts_job *const *)t, paths, &m, &err)) {
        fprintf(stderr, "precision: %s\n", err.msg);
        exit(2);
    }
    return m;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int casts(int argc, char **argv)
{
    if (argc < 5) { fprintf(stderr, "usage: precision casts FP32_RUN BF16_RUN HELD_OUT_RUN...\n"); return 2; }
    ts_job *t[TS_PREC_COUNT];
    ts_prec_model *m = model_of(t, argv[2], argv[3]);
    ts_prec_cast_fit fit;
    ts_prec_model_cast_fit(m, &fit);
    printf("fit on %u casts of %s and %s: %.4g ns/byte + %.0f ns (in-sample median error %.1f%%)\n", fit.n_casts,
           argv[2], argv[3], fit.alpha_ns_per_byte, fit.beta_ns, fit.median_abs_err_pct);
    enum { CAP = 100000 };
    static int64_t el[CAP], du[CAP];
    static double e[CAP];
    uint32_t n = 0;
    for (int i = 4; i < argc; i++) {
        ts_job *h = load(argv[i]);
        uint32_t k = ts_prec_trace_casts(h, el + n, du + n, CAP - n);
        if (k == UINT32_MAX) {
            fprintf(stderr, "precision: out of memory reading the casts of %s\n", argv[i]);
            exit(1);
        }
        n += k < CAP - n ? k : CAP - n;
        ts_job_destroy(h);
    }
    double sum_p = 0, sum_m = 0;
    for (uint32_t i = 0; i < n; i++) {
        double pred = fit.alpha_ns_per_byte * 6.0 * (double)el[i] + fit.beta_ns;
        e[i] = du[i] > 0 ? fabs(pred - (double)du[i]) / (double)du[i] * 100 : 0;
        sum_p += pred;
        sum_m += (double)du[i];
    }
    qsort(e, n, sizeof *e, cmp_d);
    if (n)
        printf("held out: %u casts, median |error| %.1f%%, 90th percentile %.1f%%, summed time %+.1f%% "
               "(%.1f us predicted, %.1f us measured)\n", n, e[n / 2], e[(uint32_t)(0.9 * (n - 1))],
               100 * (sum_p / sum_m - 1), sum_p / 1e3, sum_m / 1e3);
    else printf("held out: no casts\n");
    ts_prec_model_destroy(m);
    ts_job_destroy(t[0]);
    ts_job_destroy(t[1]);
    return 0;
}

/* A synthetic run: n units (a linear-like op with 2 nested children each,
 * inside a range per 12 ops) and their backward, 3 iterations. */
static char *synthetic(uint32_t n, double speed, double mem, const char *dir)
{
    size_t cap = (size_t)n * 3 * 1400 + 4096;
    char *buf = malloc(cap), *p = buf;
    if (!buf) exit(1);
    p += sprintf(p, "{\"traceEvents\":[");
    double t = 0;
    long long total = 100000000;
    for (int k = 0; k < 3; k++) {
        char *step = p;
        double start = t;
        p += sprintf(p, "%s{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\",\"pid\":1,"
                     "\"tid\":1,\"ts\":%.3f,\"dur\":%12.3f}", k ? "," : "", k, t, 0.0);
        t += 5;
        for (uint32_t u = 0; u < n; u++) {
            double d = (u % 3 ? 20 : 80) * speed * (1 + 0.1 * k);
            p += sprintf(p, ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%.3f,"
                         "\"dur\":%.3f,\"args\":{\"Sequence number\":%u,\"Input Dims\":[[8, 128, 768], [768]]}}",
                         u % 3 ? "aten::add" : "aten::linear", t, d, u);
            p += sprintf(p, ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::empty\",\"pid\":1,\"tid\":1,"
                         "\"ts\":%.3f,\"dur\":1,\"args\":{\"Sequence number\":-1}}", t + 1);
            p += sprintf(p, ",{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"[memory]\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,"
                         "\"ts\":%.3f,\"args\":{\"Bytes\":%lld,\"Total Allocated\":%lld}}", t + 1.5,
                         (long long)(3145728 * mem), total += (long long)(3145728 * mem));
            t += d + 3;
        }
        for (uint32_t u = n; u-- > 0;) {
            double d = (u % 3 ? 40 : 160) * speed * (1 + 0.1 * k);
            p += sprintf(p, ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_function: "
                         "XBackward0\",\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"Sequence number\":-1}}"
                         ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"XBackward0\",\"pid\":1,\"tid\":1,\"ts\":%.3f,"
                         "\"dur\":%.3f,\"args\":{\"Sequence number\":%u}}", t, d, t + 0.1, d - 0.2, u);
            p += sprintf(p, ",{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"[memory]\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,"
                         "\"ts\":%.3f,\"args\":{\"Bytes\":%lld,\"Total Allocated\":%lld}}", t + 0.5,
                         -(long long)(3145728 * mem), total -= (long long)(3145728 * mem));
            t += d + 3;
        }
        char dur[16];
        snprintf(dur, sizeof dur, "%12.3f", t - start);
        memcpy(strstr(step, "\"dur\":") + 6, dur, 12);
        t += 100;
    }
    strcpy(p, "]}\n");
    char *path = malloc(strlen(dir) + 32);
    sprintf(path, "%s/ts_bench_prec_XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, buf, strlen(buf)) != (ssize_t)strlen(buf)) exit(1);
    close(fd);
    free(buf);
    return path;
}

static int speed(int argc, char **argv)
{
    uint32_t n = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 1500;
    char *p32 = synthetic(n, 1.0, 1.0, "/tmp"), *p16 = synthetic(n, 0.5, 0.5, "/tmp");
    ts_job *t[TS_PREC_COUNT] = {load(p32), load(p16)};
    const char *paths[TS_PREC_COUNT] = {p32, p16};
    ts_prec_model *m;
    ts_error err;
    double t0 = now_s();
    if (ts_prec_model_create((const ts_job *const *)t, paths, &m, &err)) {
        fprintf(stderr, "precision: %s\n", err.msg);
        return 2;
    }
    double build = now_s() - t0, best_pred = 1e9, best_greedy = 1e9;
    uint8_t *prec = calloc(n, 1);
    ts_prec_prediction p;
    int lowered = 0;
    for (int r = 0; r < 5; r++) {
        for (uint32_t u = 0; u < n; u++) prec[u] = (u / 7) % 2 ? TS_PREC_BF16 : TS_PREC_FP32;
        t0 = now_s();
        ts_prec_predict(m, prec, &p);
        double d = now_s() - t0;
        if (d < best_pred) best_pred = d;
        t0 = now_s();
        if (ts_prec_greedy(m, NULL, n / 2.0, 0, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_OP, prec, &p)) return 1;
        d = now_s() - t0;
        if (d < best_greedy) best_greedy = d;
        lowered = 0;
        for (uint32_t u = 0; u < n; u++) lowered += prec[u] == TS_PREC_BF16;
    }
    /* the memory pass at scale: a bf16 run as slow as fp32 (nothing saves
     * time) with half the memory, and a limit 10% of the activations below
     * the fp32 peak */
    char *q16 = synthetic(n, 1.0, 0.5, "/tmp");
    ts_job *tq[TS_PREC_COUNT] = {t[0], load(q16)};
    const char *qpaths[TS_PREC_COUNT] = {p32, q16};
    ts_prec_model *mq;
    if (ts_prec_model_create((const ts_job *const *)tq, qpaths, &mq, &err)) return 2;
    memset(prec, TS_PREC_FP32, n);
    ts_prec_predict(mq, prec, &p);
    int64_t base = ts_prec_model_base_bytes(mq), limit = p.peak_bytes - (p.peak_bytes - base) / 10;
    t0 = now_s();
    int rc = ts_prec_greedy(mq, NULL, n, limit, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_OP, prec, &p);
    double mem_greedy = now_s() - t0;
    int mem_lowered = 0;
    for (uint32_t u = 0; u < n; u++) mem_lowered += prec[u] == TS_PREC_BF16;
    ts_prec_model_destroy(mq);
    ts_job_destroy(tq[1]);
    unlink(q16);
    free(q16);
    printf("synthetic %u units (BERT-base scale): model built from the two runs in %.1f ms\n", n, build * 1e3);
    printf("predict one plan: %.3f ms (target < 10 ms: %.0fx under)\n", best_pred * 1e3, 0.010 / best_pred);
    printf("greedy over %u ops (budget %u, %d lowered): %.1f ms (target < 1 s: %.0fx under)\n", n, n / 2, lowered,
           best_greedy * 1e3, 1.0 / best_greedy);
    printf("greedy's memory pass over %u ops (%d lowered to fit a limit 10%% below the peak): %.1f ms, %s\n", n,
           mem_lowered, mem_greedy * 1e3, rc ? "no plan fits" : "fits");
    ts_prec_model_destroy(m);
    ts_job_destroy(t[0]);
    ts_job_destroy(t[1]);
    unlink(p32);
    unlink(p16);
    free(p32);
    free(p16);
    free(prec);
    return 0;
}

static void print_modules(const ts_prec_model *m, const uint8_t *prec)
{
    const char *last = NULL;
    for (uint32_t u = 0; u < ts_prec_model_n_units(m); u++) {
        const char *mod = ts_prec_model_unit_module(m, u);
        if (prec[u] != TS_PREC_FP32 && mod && (!last || strcmp(last, mod))) printf(" %s", mod);
        if (prec[u] != TS_PREC_FP32 && mod) last = mod;
    }
}

/* Every per-module plan against the greedy (see the header). */
static int modules(int argc, char **argv)
{
    if (argc < 5) return 2;
    ts_job *t[TS_PREC_COUNT];
    ts_prec_model *m = model_of(t, argv[2], argv[3]);
    int64_t limit = strtoll(argv[4], NULL, 10);
    if (argc > 5) ts_prec_model_set_overhead(m, atof(argv[5]) * 1e3);
    double budget = argc > 6 ? atof(argv[6]) : 1e300;
    uint32_t n = ts_prec_model_n_units(m), nm = 0, *mod_of = calloc(n + 1, sizeof *mod_of);
    const char *names[16];
    for (uint32_t u = 0; u < n; u++) {
        const char *mod = ts_prec_model_unit_module(m, u);
        mod_of[u] = UINT32_MAX;
        for (uint32_t k = 0; mod && k < nm && mod_of[u] == UINT32_MAX; k++)
            if (!strcmp(names[k], mod)) mod_of[u] = k;
        if (mod && mod_of[u] == UINT32_MAX) {
            if (nm == 16) { fprintf(stderr, "precision modules: over 16 modules\n"); return 2; }
            names[nm] = mod;
            mod_of[u] = nm++;
        }
    }
    uint8_t *prec = calloc(n + 1, 1), *best = calloc(n + 1, 1);
    ts_prec_prediction p, bp = {.iteration_ns = INT64_MAX};
    for (uint32_t mask = 0; mask < (1u << nm); mask++) {
        if (__builtin_popcount(mask) > budget + 1e-9) continue;
        for (uint32_t u = 0; u < n; u++)
            prec[u] = mod_of[u] != UINT32_MAX && (mask >> mod_of[u]) & 1 ? TS_PREC_BF16 : TS_PREC_FP32;
        ts_prec_predict(m, prec, &p);
        if (p.peak_bytes <= limit && p.iteration_ns < bp.iteration_ns) { bp = p; memcpy(best, prec, n); }
    }
    printf("%u modules, %u plans: fastest within %lld B:", nm, 1u << nm, (long long)limit);
    if (bp.iteration_ns == INT64_MAX) printf(" none\n");
    else {
        print_modules(m, best);
        printf(" (%.3f ms, peak %lld B)\n", bp.iteration_ns / 1e6, (long long)bp.peak_bytes);
    }
    int rc = ts_prec_greedy(m, NULL, budget, limit, TS_PREC_FP32, TS_PREC_BF16, TS_PREC_BY_MODULE, prec, &p);
    printf("greedy (rc %d):", rc);
    print_modules(m, prec);
    printf(" (%.3f ms, peak %lld B)%s\n", p.iteration_ns / 1e6, (long long)p.peak_bytes,
           bp.iteration_ns != INT64_MAX && p.iteration_ns == bp.iteration_ns ? ": the optimum" : "");
    free(prec);
    free(best);
    free(mod_of);
    ts_prec_model_destroy(m);
    for (int i = 0; i < 2; i++) ts_job_destroy(t[i]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "modules")) return modules(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "casts")) return casts(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "speed")) return speed(argc, argv);
    fprintf(stderr, "usage: precision casts FP32_RUN BF16_RUN HELD_OUT_RUN... | precision speed [UNITS]\n");
    return 2;
}
