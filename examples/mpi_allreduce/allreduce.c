/* allreduce.c - a data-parallel training step in miniature, for tracing MPI:
 * every rank runs a "forward" and a "backward" pass (a dense matrix-vector
 * product over its own data), then averages its gradient with MPI_Allreduce,
 * then applies it. Iterations are marked "ProfilerStep#N" like PyTorch's
 * profiler does, through trainscope's tracing API when it is loaded (weak
 * symbols: the program runs unchanged without trainscope).
 *
 * Build: mpicc -O2 -o allreduce allreduce.c
 * Run:   mpirun -np 2 --allow-run-as-root --oversubscribe ./allreduce [ITERS] [PARAMS]
 * Prints the time per iteration (median) and a checksum that is the same on
 * every run, traced or not.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#pragma weak ts_trace_push
#pragma weak ts_trace_pop
void ts_trace_push(const char *cat, const char *name);
void ts_trace_pop(void);

static void push(const char *cat, const char *name) { if (ts_trace_push) ts_trace_push(cat, name); }
static void pop(void) { if (ts_trace_pop) ts_trace_pop(); }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* y = W x for an n x n block of W, k rows at a time: the "layer". */
static void matvec(const float *w, const float *x, float *y, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        float s = 0;
        for (int j = 0; j < cols; j++) s += w[(size_t)i * cols + j] * x[j];
        y[i] = s;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 20;
    int n = argc > 2 ? atoi(argv[2]) : 1024;   /* the layer is n x n: n*n parameters */
    if (iters < 1 || n < 8) { fprintf(stderr, "usage: allreduce [ITERS>=1] [N>=8]\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
    float *w = malloc(sizeof(float) * (size_t)n * n), *grad = malloc(sizeof(float) * (size_t)n * n);
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
    for (size_t i = 0; i < (size_t)n * n; i++) w[i] = (float)((i * 7 + 3) % 101) / 101.0f;
    for (int j = 0; j < n; j++) x[j] = (float)((j + rank) % 13) / 13.0f;
    double *step = malloc(sizeof(double) * iters);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = 0; it < iters; it++) {
        char label[32];
        snprintf(label, sizeof label, "ProfilerStep#%d", it);
        double t0 = now_s();
        push("user_annotation", label);
        push("cpu_op", "forward");
        matvec(w, x, y, n, n);
        pop();
        push("cpu_op", "backward");
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) grad[(size_t)i * n + j] = y[i] * x[j] * 1e-3f;
        pop();
        push("cpu_op", "allreduce_gradients");
        MPI_Allreduce(MPI_IN_PLACE, grad, n * n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        pop();
        push("cpu_op", "optimizer_step");
        for (size_t i = 0; i < (size_t)n * n; i++) w[i] -= grad[i] / (float)size;
        pop();
        pop();
        step[it] = now_s() - t0;
    }
    double sum = 0;
    for (size_t i = 0; i < (size_t)n * n; i++) sum += w[i];
    qsort(step, iters, sizeof *step, cmp_double);
    if (rank == 0)
        printf("ranks %d params %d iters %d median_step_ms %.3f checksum %.6e\n", size, n * n, iters,
               1e3 * step[iters / 2], sum);
    free(w); free(grad); free(x); free(y); free(step);
    MPI_Finalize();
    return 0;
}
