/* test_main.c - registry and main() shared by every unit-test binary. */
#include "test.h"
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TESTS 1024
static struct { const char *name; ts_test_fn fn; } tests[MAX_TESTS];
static int n_tests;
int ts_test_failures;
int ts_test_skipped;

void ts_test_register(const char *name, ts_test_fn fn)
{
    if (n_tests < MAX_TESTS) { tests[n_tests].name = name; tests[n_tests].fn = fn; n_tests++; }
}

const char *ts_test_data(const char *rel)
{
    static char buf[4][4096];
    static int k;
    const char *root = getenv("TS_DATA");
    char *b = buf[k++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", root ? root : "../shared/data", rel);
    return b;
}

int ts_test_readable(const char *path)
{
    return path && access(path, R_OK) == 0;
}

const char *ts_test_cli(void)
{
    const char *bin = getenv("TS_BIN");
    return bin ? bin : "build/trainscope";
}

int ts_test_run(const char *cmd, char **out)
{
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    size_t got;
    while ((got = fread(s + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 2) { cap *= 2; s = realloc(s, cap); }
    }
    s[len] = 0;
    int st = pclose(p);
    if (out) *out = s; else free(s);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

long ts_test_oom_budget;
void *ts_test_oom_alloc(void *ud, void *p, size_t old, size_t n)
{
    (void)ud; (void)old;
    if (n == 0) { free(p); return NULL; }
    if (ts_test_oom_budget-- <= 0) return NULL;
    return realloc(p, n);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        for (int i = 0; i < n_tests; i++) puts(tests[i].name);
        return 0;
    }
    for (int i = 0; i < n_tests; i++) {
        if (strcmp(tests[i].name, argv[1]) == 0) {
            tests[i].fn();
            if (ts_test_failures) return 1;
            return ts_test_skipped ? 77 : 0;
        }
    }
    fprintf(stderr, "no test named %s\n", argv[1]);
    return 2;
}
