/* rt.h - the tracing runtime's internals shared by rt_buffer.c (per-thread
 * rings, registry, draining) and rt_api.c (the public API, start/stop,
 * signals, fork). Part of libtrainscope-trace.so only.
 *
 * Invariants: a ring has one producer, the thread that owns it; anyone may
 * drain it, but only while holding its `draining` flag (taken by CAS, never
 * waited for, so a signal handler can never deadlock on it). head and tail
 * count bytes since the ring was created; head - tail <= cap always.
 */
#ifndef TS_CAPTURE_RT_H
#define TS_CAPTURE_RT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "capture/common/rawfmt.h"
#include "trainscope/trace.h"

#define TS__RT_DEFAULT_BUF_BYTES (1u << 20)  /* per thread (PyTorch pools have a thread per core); TRAINSCOPE_BUFFER_KB overrides */

/* One entry of a ring's (cat, name) cache: pushes of a pair seen before are
 * written as a 16-byte reference. The copy in text is compared too, because a
 * caller may reuse the same addresses for other strings (Python does). */
#define TS__PAIR_SLOTS 64
typedef struct ts__pair {
    const char *cat, *name;                   /* the caller's pointers; NULL = empty */
    uint16_t    id;                           /* str_id written in SDEF/BREF records */
    char        text[2 * (TS_TRACE_MAX_STR + 1)]; /* "cat\0name\0" as defined */
} ts__pair;

typedef struct ts__ring {
    _Atomic uint64_t head;      /* bytes committed; written only by the owner */
    _Atomic uint64_t tail;      /* bytes drained; written only under `draining` */
    _Atomic uint64_t dropped;   /* events lost because the ring was full */
    atomic_int       draining;  /* 1 while someone drains; taken by CAS */
    atomic_int       owned;     /* 1 while a live thread writes into it */
    uint32_t         id;        /* dense buffer number, written in chunk headers */
    uint32_t         tid;       /* OS thread id of the owner */
    uint32_t         cap;       /* bytes, power of two */
    char            *data;      /* cap bytes */
    ts__pair        *pairs;     /* TS__PAIR_SLOTS entries, owner only; NULL = no cache */
    uint32_t         n_str_ids; /* ids given so far in the current stream; cache off past 65535 */
    struct ts__ring *next;      /* registry list; rings are never freed while tracing */
} ts__ring;

/* 1 when fast-path records carry TSC ticks (invariant TSC found at start). */
extern int ts__rt_tsc;

static inline int64_t ts__rt_mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The fast-path timestamp: TSC ticks or ns (see rawfmt.h). */
static inline int64_t ts__rt_stamp(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_expect(ts__rt_tsc, 1)) return (int64_t)__builtin_ia32_rdtsc();
#endif
    return ts__rt_mono_ns();
}

static inline uint64_t ts__rt_tsc_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (ts__rt_tsc) return __builtin_ia32_rdtsc();
#endif
    return 0;
}

/* Reserve size bytes (multiple of 8) in r for one record; NULL and the drop
 * counted when full. The owner fills it and calls ts__ring_commit. */
void *ts__ring_reserve(ts__ring *r, uint32_t size);
void  ts__ring_commit(ts__ring *r, uint32_t size);

/* Write r's committed bytes to fd as one chunk and free them. Skips (returns
 * 0) when someone else is draining. Async-signal-safe. Returns bytes written. */
size_t ts__ring_drain(ts__ring *r, int fd);
/* Drain every registered ring. Async-signal-safe. */
void ts__rt_drain_all(int fd);

/* The calling thread's ring, taking a free one or creating it on first use.
 * NULL when tracing is off or memory ran out. */
ts__ring *ts__rt_ring_slow(void);
extern __thread ts__ring *ts__t_ring;

/* Registry head (lock-free traversal; appended under the runtime lock). */
extern _Atomic(ts__ring *) ts__rt_rings;
extern int ts__rt_fd;               /* raw stream, -1 while not tracing */
extern dev_t ts__rt_dev;            /* identity of the raw stream's file ... */
extern ino_t ts__rt_ino;            /* ... so a descriptor the program reused is never written */
int ts__rt_fd_is_ours(int fd);
/* The program closed (and maybe reused) descriptor `lost`: open the raw
 * stream again at a new number. Returns it, or -1 (the chunk is then lost).
 * Async-signal-safe; concurrent callers never wait, one of them reopens. */
int ts__rt_reopen(int lost);
/* Set when a chunk reached the raw stream only in part (disk full): nothing
 * more is written to that stream, later events count as dropped. Cleared
 * when a new stream opens. */
extern _Atomic int ts__rt_stream_cut;
extern uint32_t ts__rt_buf_bytes;   /* capacity of new rings */

/* After fork in the child: forget the parent's undrained events, keep only
 * the calling thread's ring. */
void ts__rt_rings_after_fork(void);
/* A new stream begins (start, fork child): ids of the old one mean nothing there. */
void ts__rt_forget_pairs(void);
/* Keep the flush handler in front of the program's own (preload.c's sigaction
 * calls it; exported from libtrainscope-trace.so for that). */
struct sigaction;
TS_API int ts__rt_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* n events never reached the stream (a failed write, errno err): counted on
 * record's status board (rawfmt.h) when there is one. Async-signal-safe. */
void ts__rt_note_lost(uint64_t n, int err);
/* Sum of dropped counters. */
uint64_t ts__rt_dropped(void);

#endif
