/* fuzz_options.c - libFuzzer target for the parsers of numeric command-line
 * options (ts__parse_i64, ts__parse_f64, ts__parse_range: every numeric
 * option of every command goes through them) and of replay's --scale specs
 * with the range checks behind them (a factor that takes an op or the
 * simulated times past 2^62 ns must be refused, never wrap).
 *
 * Input: the first byte picks the parser and, for numbers, the bounds; the
 * rest is the option's text (cut at a NUL). Accepted values must lie within
 * the bounds and agree with the C library's own reading of the text; a
 * --scale replay of a fixed two-iteration trace must end OK with every
 * predicted time within [0, 2^62) or fail with an error message. Checks
 * abort, so a violation is a crash the fuzzer reports.
 *
 * Build: make fuzz (clang, ASan + UBSan + libFuzzer).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "ingest/ingest.h"
#include "trace/model.h"
#include "trainscope/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) { fprintf(stderr, "violated: %s\n", #c); abort(); } } while (0)

static const int64_t I_BOUNDS[][2] = {
    {0, UINT32_MAX}, {1, 1 << 20}, {0, INT64_MAX}, {INT64_MIN, INT64_MAX}, {1, 3600000000000LL}, {0, INT32_MAX},
};
static const double F_BOUNDS[][2] = {{0, 1048576.0}, {1e-3, 1e6}, {0, 1e9}, {-1e300, 1e300}};

static void check_i64(const char *s, int which)
{
    int64_t lo = I_BOUNDS[which][0], hi = I_BOUNDS[which][1], v = 12345;
    if (!ts__parse_i64(s, lo, hi, &v)) { REQUIRE(v == 12345); return; }   /* refused: untouched */
    REQUIRE(v >= lo && v <= hi);
    char *end;
    errno = 0;
    REQUIRE(strtoll(s, &end, 10) == v && errno == 0 && *end == 0 && end != s);
}

static void check_f64(const char *s, int which)
{
    double lo = F_BOUNDS[which][0], hi = F_BOUNDS[which][1], v = 0.5;
    if (!ts__parse_f64(s, lo, hi, &v)) { REQUIRE(v == 0.5); return; }
    REQUIRE(v >= lo && v <= hi && !isnan(v));
    REQUIRE(strtod(s, NULL) == v);
}

static void check_range(const char *s)
{
    int64_t a = 1, b = 0;
    if (!ts__parse_range(s, &a, &b)) return;
    REQUIRE(a <= b);
    const char *colon = strchr(s, ':');
    REQUIRE(colon || a == b);
    if (colon && colon == s) REQUIRE(a == INT64_MIN);
    if (colon && !colon[1]) REQUIRE(b == INT64_MAX);
}

/* Two ProfilerStep iterations of CPU ops on one rank: the what-if target. */
static ts_job *scale_trace(void)
{
    static const char json[] =
        "[{\"ph\":\"X\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},"
        "{\"ph\":\"X\",\"name\":\"aten::mm\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":50},"
        "{\"ph\":\"X\",\"name\":\"aten::add\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":70,\"dur\":20},"
        "{\"ph\":\"X\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":120},"
        "{\"ph\":\"X\",\"name\":\"aten::mm\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":110,\"dur\":60},"
        "{\"ph\":\"X\",\"name\":\"aten::add\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":180,\"dur\":30}]";
    ts_rank *r = NULL;
    ts_job *t = NULL;
    if (ts__ingest_json_buffer("scale.json", json, sizeof json - 1, NULL, &r, NULL) != TS_OK) abort();
    if (ts__job_create(&r, 1, &t, NULL) != TS_OK) abort();
    return t;
}

static void check_scale(const char *spec)
{
    static ts_job *t;
    if (!t) t = scale_trace();
    const char *scales[1] = {spec};
    ts_replay_options o = {.size = sizeof o, .scales = scales, .n_scales = 1};
    ts_replay *r = NULL;
    ts_error err = {0};
    int rc = ts_replay_run(t, &o, &r, &err);
    if (rc == TS_OK) {
        int64_t p = ts_replay_predicted_iteration_ns(r);
        REQUIRE(p >= 0 && p < ((int64_t)1 << 62));
    } else {
        REQUIRE(err.msg[0] != 0);
    }
    ts_replay_destroy(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 256) return 0;
    char s[256];
    size_t n = size - 1;
    memcpy(s, data + 1, n);
    s[n] = 0;   /* argv strings end at their first NUL */
    unsigned mode = data[0] % 4, which = data[0] / 4;
    if (mode == 0) check_i64(s, (int)(which % (sizeof I_BOUNDS / sizeof I_BOUNDS[0])));
    else if (mode == 1) check_f64(s, (int)(which % (sizeof F_BOUNDS / sizeof F_BOUNDS[0])));
    else if (mode == 2) check_range(s);
    else check_scale(s);
    return 0;
}
