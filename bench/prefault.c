/* prefault.c - how fast fresh memory can be mapped: ts__prefault (up to 4
 * threads from 64 MiB) against one MADV_POPULATE_WRITE by one thread (what
 * ts__prefault did until 24 Nov), on blocks of --mb MiB never touched by
 * this process, alternating which goes first in each of --rounds rounds.
 *
 * Why it matters: a big replay's kernel time is mostly the VM's host backing
 * pages it never backed before (docs/replay.md), about 2.6 s per GB on one
 * thread here. Pages an earlier process already used come back warm and
 * map at ~5 GB/s either way, so a round where both are fast says nothing:
 * look at the rounds where one thread took over 1 s per GB. Every block is
 * kept until the end, so no round reuses another's pages. Usage:
 *   build/bench/prefault [--mb 1024] [--rounds 4]
 * Not a test: nothing here asserts a speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/core.h"

static char *fresh_block(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Seconds per GiB to map a fresh block with f. */
static double per_gib(size_t bytes, void (*f)(void *, size_t))
{
    char *p = fresh_block(bytes);
    if (!p) { fprintf(stderr, "prefault: mmap of %zu bytes failed\n", bytes); exit(1); }
    int64_t t0 = ts__now_ns();
    f(p, bytes);
    return (double)(ts__now_ns() - t0) / 1e9 / ((double)bytes / (1 << 30));
}

static void one_madvise(void *p, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    (void)madvise(p, bytes, MADV_POPULATE_WRITE);
#else
    memset(p, 0, bytes);
#endif
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t mb = 1024;
    int rounds = 4;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mb") && i + 1 < argc) mb = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else { fprintf(stderr, "usage: %s [--mb N] [--rounds R]\n", argv[0]); return 2; }
    }
    if (mb < 64 || rounds < 1 || rounds > 64) { fprintf(stderr, "prefault: --mb >= 64, --rounds 1..64\n"); return 2; }
    size_t bytes = mb << 20;
    double one[64], ours[64];
    printf("mapping %zu MiB fresh blocks, s per GiB (one thread, one madvise | ts__prefault)\n", mb);
    for (int r = 0; r < rounds; r++) {
        if (r % 2) { ours[r] = per_gib(bytes, ts__prefault); one[r] = per_gib(bytes, one_madvise); }
        else { one[r] = per_gib(bytes, one_madvise); ours[r] = per_gib(bytes, ts__prefault); }
        printf("  round %d: %6.3f | %6.3f   ratio %.2fx\n", r, one[r], ours[r], one[r] / ours[r]);
    }
    qsort(one, (size_t)rounds, sizeof *one, cmp_d);
    qsort(ours, (size_t)rounds, sizeof *ours, cmp_d);
    printf("median s per GiB: one thread %.3f, ts__prefault %.3f: %.2fx faster (%ld online CPUs)\n",
           one[rounds / 2], ours[rounds / 2], one[rounds / 2] / ours[rounds / 2], sysconf(_SC_NPROCESSORS_ONLN));
    return 0;
}
