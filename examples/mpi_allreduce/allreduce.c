/* allreduce.c - data-parallel training in miniature, over MPI (see README.md).
 *
 * Each iteration runs "backward" compute over a float buffer chunk by chunk,
 * from the last chunk to the first, and all-reduces each chunk (a bucket, as
 * DDP does) with MPI_Allreduce, or with MPI_Iallreduce + MPI_Waitall under
 * -o so communication overlaps the remaining compute. Rank 0 prints the
 * median, p10 and p90 of the per-iteration time (the slowest rank's) and a
 * checksum of the final buffer, which depends only on -c -b -n -w and the
 * number of ranks. Iterations are marked "ProfilerStep#N" (as PyTorch's
 * profiler does) through trainscope's tracing API when it is loaded: weak
 * symbols, so the program runs unchanged without trainscope.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#pragma weak ts_trace_push
#pragma weak ts_trace_pop
void ts_trace_push(const char *cat, const char *name);
void ts_trace_pop(void);

static void push(const char *cat, const char *name) { if (ts_trace_push) ts_trace_push(cat, name); }
static void pop(void) { if (ts_trace_pop) ts_trace_pop(); }

typedef struct opts {
    int iters, warmup;   /* timed iterations, untimed ones before them */
    long floats;         /* buffer floats per rank */
    int buckets;         /* all-reduces per iteration */
    int work;            /* compute passes per chunk */
    int overlap;         /* 1: MPI_Iallreduce + MPI_Waitall */
} opts;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){50, 5, 1048576, 4, 10, 0};
    int c;
    opterr = 0;   /* our own message below */
    while ((c = getopt(argc, argv, "n:w:c:b:k:o")) != -1) {
        switch (c) {
        case 'n': o->iters = atoi(optarg); break;
        case 'w': o->warmup = atoi(optarg); break;
        case 'c': o->floats = atol(optarg); break;
        case 'b': o->buckets = atoi(optarg); break;
        case 'k': o->work = atoi(optarg); break;
        case 'o': o->overlap = 1; break;
        default: fprintf(stderr, "allreduce: bad option '-%c'\n", optopt); return -1;
        }
    }
    if (optind != argc || o->iters < 1 || o->warmup < 0 || o->buckets < 1 || o->work < 0 ||
        o->floats < o->buckets || o->floats > (1L << 28))
        return -1;
    return 0;
}

static volatile float sink;   /* keeps the work passes from being optimized away */

/* The "gradient" of one chunk: WORK passes of reading it (the cost), then one
 * deterministic update (the value), so the checksum does not depend on -k. */
static void compute(float *x, long n, long first, int work, int rank)
{
    float acc = 0;
    for (int k = 0; k < work; k++)
        for (long i = 0; i < n; i++) acc += x[i] * (float)(k + 1);
    sink = acc;
    float bias = 0.001f * (float)((first + rank) % 7);
    for (long i = 0; i < n; i++) x[i] = x[i] * 0.999f + bias;
}

/* One training step: backward chunk by chunk from the last, each chunk reduced. */
static void step(float *buf, const opts *o, int rank, int size, MPI_Request *reqs)
{
    long chunk = o->floats / o->buckets;
    push("cpu_op", "backward");
    for (int b = o->buckets - 1; b >= 0; b--) {
        long first = b * chunk, n = b == o->buckets - 1 ? o->floats - first : chunk;
        compute(buf + first, n, first, o->work, rank);
        if (o->overlap)
            MPI_Iallreduce(MPI_IN_PLACE, buf + first, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &reqs[b]);
        else
            MPI_Allreduce(MPI_IN_PLACE, buf + first, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    if (o->overlap) MPI_Waitall(o->buckets, reqs, MPI_STATUSES_IGNORE);
    pop();
    push("cpu_op", "optimizer_step");
    for (long i = 0; i < o->floats; i++) buf[i] /= (float)size;
    pop();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    opts o;
    if (parse(argc, argv, &o)) {
        if (rank == 0)
            fprintf(stderr, "usage: allreduce [-n ITER] [-w WARMUP] [-c FLOATS] [-b BUCKETS] [-k WORK] [-o]\n"
                            "  -n ITER     timed iterations (default 50)\n"
                            "  -w WARMUP   untimed iterations first (default 5)\n"
                            "  -c FLOATS   gradient floats per rank (default 1048576 = 4 MiB)\n"
                            "  -b BUCKETS  all-reduces per iteration (default 4)\n"
                            "  -k WORK     compute passes per chunk per iteration (default 10)\n"
                            "  -o          overlap: non-blocking all-reduce per bucket, wait at the end\n");
        MPI_Finalize();
        return 2;
    }
    float *buf = malloc(sizeof(float) * (size_t)o.floats);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)o.buckets);
    double *t = malloc(sizeof(double) * (size_t)o.iters), *slowest = malloc(sizeof(double) * (size_t)o.iters);
    for (long i = 0; i < o.floats; i++) buf[i] = (float)((i * 7 + 3) % 101) / 101.0f;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = 0; it < o.warmup + o.iters; it++) {
        char label[32];
        snprintf(label, sizeof label, "ProfilerStep#%d", it);
        double t0 = now_s();
        push("user_annotation", label);
        step(buf, &o, rank, size, reqs);
        pop();
        if (it >= o.warmup) t[it - o.warmup] = now_s() - t0;
    }
    MPI_Reduce(t, slowest, o.iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double sum = 0;
    for (long i = 0; i < o.floats; i++) sum += buf[i];
    if (rank == 0) {
        qsort(slowest, (size_t)o.iters, sizeof *slowest, cmp_double);
        printf("ranks %d  floats %ld  buckets %d  work %d  overlap %d  iterations %d\n", size, o.floats,
               o.buckets, o.work, o.overlap, o.iters);
        printf("iteration_ms median %.3f  p10 %.3f  p90 %.3f\n", 1e3 * slowest[o.iters / 2],
               1e3 * slowest[o.iters / 10], 1e3 * slowest[(o.iters * 9) / 10]);
        printf("checksum %.6e\n", sum);
    }
    free(buf); free(reqs); free(t); free(slowest);
    MPI_Finalize();
    return 0;
}
