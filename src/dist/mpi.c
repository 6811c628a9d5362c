/* mpi.c - libtrainscope_dist.so: the MPI transport of a distributed run
 * (dist.h, docs/distributed.md), on MPI_COMM_WORLD.
 *
 * For: moving each process's bytes (its share of the ranks, serialized by
 * the CLI) to process 0. Not for: what the bytes mean, or analysis. Built
 * apart from libtrainscope and linked to libmpi only, so that nothing but
 * this file needs MPI at run time. MPI's default error handler is kept: a
 * failed MPI call aborts the whole job instead of leaving a process waiting.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"

#define CHUNK ((uint64_t)1 << 30)   /* MPI counts are int: send large buffers in pieces */
#define TAG 27

static int d_init(int *process, int *n_processes, char *why, size_t why_n)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        snprintf(why, why_n, "MPI_Init failed");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, process);
    MPI_Comm_size(MPI_COMM_WORLD, n_processes);
    return 0;
}

static void send_all(const char *p, uint64_t n)
{
    for (uint64_t at = 0; at < n; at += CHUNK) {
        uint64_t k = n - at < CHUNK ? n - at : CHUNK;
        MPI_Send(p + at, (int)k, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
    }
}

static void recv_all(char *p, uint64_t n, int from)
{
    for (uint64_t at = 0; at < n; at += CHUNK) {
        uint64_t k = n - at < CHUNK ? n - at : CHUNK;
        MPI_Recv(p + at, (int)k, MPI_BYTE, from, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static int d_gather(const void *buf, uint64_t n, void ***all, uint64_t **lens, char *why, size_t why_n)
{
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    *all = NULL;
    *lens = NULL;
    uint64_t *l = me == 0 ? calloc((size_t)np, sizeof *l) : NULL;
    void **v = me == 0 ? calloc((size_t)np, sizeof *v) : NULL;
    if (me == 0 && (!l || !v)) {
        /* the others would wait in MPI_Gather for ever: end the job */
        fprintf(stderr, "trainscope: process 0: out of memory gathering the ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Gather(&n, 1, MPI_UINT64_T, l, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (me != 0) {
        send_all(buf, n);
        return 0;
    }
    for (int i = 0; i < np; i++) {
        v[i] = malloc(l[i] ? (size_t)l[i] : 1);
        if (!v[i]) {
            fprintf(stderr, "trainscope: process 0: out of memory for the %llu bytes of process %d\n",
                    (unsigned long long)l[i], i);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (i == 0) memcpy(v[0], buf, (size_t)n);
        else recv_all(v[i], l[i], i);
    }
    *all = v;
    *lens = l;
    (void)why; (void)why_n;
    return 0;
}

static void d_barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }
static double d_wtime(void) { return MPI_Wtime(); }
static void d_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
static void d_finalize(void)
{
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
}

__attribute__((visibility("default"))) const ts_dist_ops ts_dist_ops_v1 = {
    .abi = TS_DIST_ABI, .init = d_init, .gather = d_gather, .barrier = d_barrier,
    .wtime = d_wtime, .abort = d_abort, .finalize = d_finalize,
};
