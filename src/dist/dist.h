/* dist.h - the interface between the CLI and libtrainscope_dist.so, the MPI
 * transport of a distributed run (docs/distributed.md).
 *
 * For: the CLI, which dlopen()s the library only when it was started under
 * MPI or given --distributed, so a plain run needs no MPI library; and
 * src/dist/mpi.c, which implements it on MPI_COMM_WORLD.
 * Not for: what is sent (the CLI serializes ranks with trace/serial.c) or
 * any analysis. The library exports one symbol, TS_DIST_SYMBOL, a table of
 * these functions; `abi` must equal TS_DIST_ABI.
 * Every call but abort is collective: all processes make it, in the same order.
 */
#ifndef TS_DIST_DIST_H
#define TS_DIST_DIST_H

#include <stddef.h>
#include <stdint.h>

#define TS_DIST_ABI 2
#define TS_DIST_SYMBOL "ts_dist_ops_v2"
#define TS_DIST_LIBRARY "libtrainscope_dist.so"

typedef struct ts_dist_ops {
    int abi;   /* TS_DIST_ABI */
    /* MPI_Init; this process's number and the number of processes. 0 ok,
     * else -1 with why filled. */
    int (*init)(int *process, int *n_processes, char *why, size_t why_n);
    /* A process other than 0: its bytes to process 0 (which must receive
     * them, or the sender waits). 0 ok. */
    int (*send)(const void *buf, uint64_t n);
    /* Process 0: the bytes of the next process that sent, whichever it is:
     * *from, *buf (malloc'd, free with free()) of *n bytes. 0 ok, -1 with
     * why filled. */
    int (*recv)(int *from, void **buf, uint64_t *n, char *why, size_t why_n);
    void (*barrier)(void);
    double (*wtime)(void);
    /* MPI_Abort(MPI_COMM_WORLD, code): every process of the job ends. */
    void (*abort)(int code);
    void (*finalize)(void);
} ts_dist_ops;

#endif
