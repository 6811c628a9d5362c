/* test.h - the unit-test harness.
 *
 * Each test/unit/test_<module>.c is one binary holding many tests. TEST(name)
 * registers a test through a constructor, so there is no central list to edit.
 * A binary run with no arguments lists its tests; with a name it runs that one.
 * test/run.sh runs every test in its own process with a timeout (libuv style)
 * and prints the closing line "N passed, N failed, N skipped".
 *
 * A test that cannot run here (its real data or a real dependency is absent)
 * calls SKIP("why"): the binary exits 77, which run.sh counts as a skip, not
 * a pass. CI sets TS_REQUIRE_ALL=1, under which any skip fails the run.
 */
#ifndef TS_TEST_H
#define TS_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <inttypes.h>

typedef void (*ts_test_fn)(void);
void ts_test_register(const char *name, ts_test_fn fn);
extern int ts_test_failures;
extern int ts_test_skipped;

#define TEST(name)                                                          \
    static void test_##name(void);                                          \
    __attribute__((constructor)) static void reg_##name(void) {            \
        ts_test_register(#name, test_##name);                               \
    }                                                                       \
    static void test_##name(void)

#define TS_FAIL_(...) do {                                                  \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                     \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr);                  \
        ts_test_failures++; return; } while (0)

/* Skip the current test (exit status 77): for absent data or dependencies
 * only, never for a condition the test should check. */
#define SKIP(...) do {                                                      \
        fprintf(stderr, "skip: "); fprintf(stderr, __VA_ARGS__);            \
        fputc('\n', stderr); ts_test_skipped = 1; return; } while (0)

#define CHECK(cond) do { if (!(cond)) TS_FAIL_("CHECK(%s) failed", #cond); } while (0)
#define CHECK_EQ_INT(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
        if (a_ != b_) TS_FAIL_("%s == %lld, expected %s == %lld", #a, a_, #b, b_); } while (0)
#define CHECK_EQ_STR(a, b) do { const char *a_ = (a), *b_ = (b);             \
        if (!a_ || !b_ || strcmp(a_, b_)) TS_FAIL_("%s == \"%s\", expected \"%s\"", #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } while (0)
#define CHECK_NEAR(a, b, tol) do { double a_ = (a), b_ = (b);               \
        if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol))) TS_FAIL_("%s == %.9g, expected %.9g +- %g", #a, a_, b_, (double)(tol)); } while (0)

/* Path of the shared real-data folder (../shared/data relative to the repo),
 * overridable with TS_DATA. Tests that need it skip when it is absent. */
const char *ts_test_data(const char *rel);
/* True when path names a file this process can read. */
int ts_test_readable(const char *path);
/* SKIP the calling test when the shared-data file at path is absent. */
#define NEED_DATA(path) do { if (!ts_test_readable(path))                  \
        SKIP("%s absent (shared data, TS_DATA)", path); } while (0)
/* Path to the CLI binary under test ($TS_BIN, set by run.sh). */
const char *ts_test_cli(void);
/* Run a shell command, capture stdout into a malloc'd string; returns exit code. */
int ts_test_run(const char *cmd, char **out);
/* An allocation hook (ts_set_allocator) that fails once ts_test_oom_budget
 * allocations have been served: out-of-memory at every point of a call. */
extern long ts_test_oom_budget;
void *ts_test_oom_alloc(void *ud, void *p, size_t old, size_t n);

#endif
