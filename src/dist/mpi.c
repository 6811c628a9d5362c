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

#define TAG_LEN 27
#define TAG_DATA 28

static int d_send(const void *buf, uint64_t n)
{
    const char *p = buf;
    MPI_Send(&n, 1, MPI_UINT64_T, 0, TAG_LEN, MPI_COMM_WORLD);
    for (uint64_t at = 0; at < n; at += CHUNK) {
        uint64_t k = n - at < CHUNK ? n - at : CHUNK;
        MPI_Send(p + at, (int)k, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD);
    }
    return 0;
}

/* Whichever process is ready first: its length, then its bytes. */
static int d_recv(int *from, void **buf, uint64_t *n, char *why, size_t why_n)
{
    MPI_Status st;
    *buf = NULL;
    MPI_Recv(n, 1, MPI_UINT64_T, MPI_ANY_SOURCE, TAG_LEN, MPI_COMM_WORLD, &st);
    *from = st.MPI_SOURCE;
    char *p = malloc(*n ? (size_t)*n : 1);
    if (!p) {
        snprintf(why, why_n, "out of memory for the %llu bytes of process %d", (unsigned long long)*n, *from);
        return -1;
    }
    for (uint64_t at = 0; at < *n; at += CHUNK) {
        uint64_t k = *n - at < CHUNK ? *n - at : CHUNK;
        MPI_Recv(p + at, (int)k, MPI_BYTE, *from, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    *buf = p;
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

__attribute__((visibility("default"))) const ts_dist_ops ts_dist_ops_v2 = {
    .abi = TS_DIST_ABI, .init = d_init, .send = d_send, .recv = d_recv, .barrier = d_barrier,
    .wtime = d_wtime, .abort = d_abort, .finalize = d_finalize,
};
