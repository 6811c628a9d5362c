/* rt_buffer.c - per-thread ring buffers of capture records, their registry,
 * and draining them into the raw stream.
 *
 * Not for: record layout (rawfmt.h) or the API (rt_api.c).
 *
 * Each thread owns one ring (single producer, no lock on the fast path). A
 * record never straddles the end of the ring: the producer pads to the end
 * and starts over at 0. The owner drains its own ring when it is more than
 * half full, so a thread writing 1M events/s needs a write() every few
 * milliseconds and loses nothing; others (exit, signal, fork, flush) drain
 * any ring by taking its `draining` flag with a CAS. A ring left by an exited
 * thread is drained and reused by the next new thread.
 */
#include "capture/runtime/rt.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

__thread ts__ring *ts__t_ring;   /* dynamic TLS model: the library may be dlopen'ed (ctypes) */
_Atomic(ts__ring *) ts__rt_rings;
int ts__rt_fd = -1;
int ts__rt_tsc;
dev_t ts__rt_dev;
ino_t ts__rt_ino;

/* fstat is async-signal-safe and cheap next to the write it guards. */
int ts__rt_fd_is_ours(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == ts__rt_dev && st.st_ino == ts__rt_ino;
}
uint32_t ts__rt_buf_bytes = TS__RT_DEFAULT_BUF_BYTES;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER; /* registry append only */
static uint32_t n_rings;                                    /* under reg_lock */
static pthread_key_t ring_key;
static pthread_once_t ring_key_once = PTHREAD_ONCE_INIT;

void *ts__ring_reserve(ts__ring *r, uint32_t size)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    uint32_t off = (uint32_t)(h & (r->cap - 1));
    uint32_t pad = off + size > r->cap ? r->cap - off : 0;
    if (h + pad + size - t > r->cap) {
        /* Full: try to make room ourselves once, then give up and count. */
        ts__ring_drain(r, ts__rt_fd);
        t = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h + pad + size - t > r->cap) {
            atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
            return NULL;
        }
    }
    if (pad) {
        /* A pad may be as short as 8 bytes: write only size and type. */
        uint8_t word[8] = {(uint8_t)pad, (uint8_t)(pad >> 8), TS__REC_PAD};
        memcpy(r->data + off, word, sizeof word);
        h += pad;
        atomic_store_explicit(&r->head, h, memory_order_release);
    }
    return r->data + (h & (r->cap - 1));
}

void ts__ring_commit(ts__ring *r, uint32_t size)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed) + size;
    atomic_store_explicit(&r->head, h, memory_order_release);
    if (h - atomic_load_explicit(&r->tail, memory_order_relaxed) > r->cap / 2)
        ts__ring_drain(r, ts__rt_fd);
}

/* writev that finishes partial writes; plain syscalls only (signal-safe).
 * Returns the bytes written: fewer than asked when the disk is full or the
 * descriptor went bad, and the rest is never retried. */
static size_t write_all(int fd, struct iovec *iov, int n)
{
    size_t done = 0;
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return done;
        }
        done += (size_t)w;
        while (n > 0 && (size_t)w >= iov->iov_len) { w -= (ssize_t)iov->iov_len; iov++; n--; }
        if (n > 0) { iov->iov_base = (char *)iov->iov_base + w; iov->iov_len -= (size_t)w; }
    }
    return done;
}

_Atomic int ts__rt_stream_cut;

/* Events in ring bytes [t, h): every record but the pads. */
static uint64_t count_events(const ts__ring *r, uint64_t t, uint64_t h)
{
    uint64_t n = 0;
    while (t < h) {
        const uint8_t *p = (const uint8_t *)r->data + (t & (r->cap - 1));
        uint16_t size = (uint16_t)(p[0] | p[1] << 8);
        if (size < 8) break;   /* cannot happen: reserve writes whole records */
        n += p[2] != TS__REC_PAD;
        t += size;
    }
    return n;
}

size_t ts__ring_drain(ts__ring *r, int fd)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(&r->draining, &expect, 1)) return 0;
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    size_t n = (size_t)(h - t);
    /* Events that do not reach the stream while tracing is on (the file
     * could not be reopened, the disk is full, the stream was cut) are
     * counted as dropped like those of a full ring, so the next chunk that
     * does get written, or the converter, says so. */
    bool lost = false;
    if (n > 0 && fd >= 0 && !ts__rt_fd_is_ours(fd)) {
        fd = ts__rt_reopen(fd);
        lost = fd < 0;
    }
    if (n > 0 && fd >= 0) {
        if (atomic_load_explicit(&ts__rt_stream_cut, memory_order_relaxed)) {
            lost = true;
        } else {
            ts__raw_chunk ck = {TS__RAW_CHUNK_MAGIC, r->id, r->tid, 0,
                                atomic_load_explicit(&r->dropped, memory_order_relaxed), n,
                                ts__rt_mono_ns(), ts__rt_tsc_now()};
            uint32_t off = (uint32_t)(t & (r->cap - 1));
            size_t first = n < (size_t)(r->cap - off) ? n : (size_t)(r->cap - off);
            struct iovec iov[3] = {{&ck, sizeof ck}, {r->data + off, first}, {r->data, n - first}};
            size_t got = write_all(fd, iov, n > first ? 3 : 2);
            if (got < sizeof ck + n) {
                lost = true;
                /* A chunk written in part misaligns whatever follows it, so
                 * the stream ends there: the converter keeps the whole
                 * chunks before it. */
                if (got > 0) atomic_store_explicit(&ts__rt_stream_cut, 1, memory_order_relaxed);
            }
        }
    }
    if (lost) {
        int err = errno;
        uint64_t k = count_events(r, t, h);
        atomic_fetch_add_explicit(&r->dropped, k, memory_order_relaxed);
        ts__rt_note_lost(k, err);
    }
    atomic_store_explicit(&r->tail, h, memory_order_release);
    atomic_store_explicit(&r->draining, 0, memory_order_release);
    return n;
}

void ts__rt_drain_all(int fd)
{
    for (ts__ring *r = atomic_load(&ts__rt_rings); r; r = r->next) ts__ring_drain(r, fd);
}

/* Thread exit: write out what the thread left and free the ring for reuse. */
static void ring_release(void *p)
{
    ts__ring *r = p;
    ts__ring_drain(r, ts__rt_fd);
    atomic_store(&r->owned, 0);
    ts__t_ring = NULL;
}

static void make_key(void) { pthread_key_create(&ring_key, ring_release); }

static ts__ring *ring_new(void)
{
    ts__ring *r = calloc(1, sizeof *r);
    char *data = malloc(ts__rt_buf_bytes);
    if (!r || !data) { free(r); free(data); return NULL; }
    r->pairs = calloc(TS__PAIR_SLOTS, sizeof *r->pairs);   /* NULL only costs the cache */
    r->cap = ts__rt_buf_bytes;
    r->data = data;
    r->id = n_rings++;
    r->next = atomic_load(&ts__rt_rings);
    atomic_store(&ts__rt_rings, r);
    return r;
}

ts__ring *ts__rt_ring_slow(void)
{
    if (ts__rt_fd < 0) return NULL;
    pthread_once(&ring_key_once, make_key);
    pthread_mutex_lock(&reg_lock);
    ts__ring *r = atomic_load(&ts__rt_rings);
    for (; r; r = r->next) {
        int free_ring = 0;
        if (atomic_compare_exchange_strong(&r->owned, &free_ring, 1)) break;
    }
    if (r) ts__ring_drain(r, ts__rt_fd);   /* a reused ring starts empty: its chunks carry our tid */
    else if ((r = ring_new())) atomic_store(&r->owned, 1);
    pthread_mutex_unlock(&reg_lock);
    if (!r) return NULL;
    r->tid = (uint32_t)syscall(SYS_gettid);
    ts__t_ring = r;
    pthread_setspecific(ring_key, r);
    return r;
}

void ts__rt_rings_after_fork(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    reg_lock = fresh;   /* the parent's holder does not exist here */
    for (ts__ring *r = atomic_load(&ts__rt_rings); r; r = r->next) {
        atomic_store(&r->tail, atomic_load(&r->head));
        atomic_store(&r->dropped, 0);
        atomic_store(&r->draining, 0);
        atomic_store(&r->owned, r == ts__t_ring);
    }
    if (ts__t_ring) ts__t_ring->tid = (uint32_t)syscall(SYS_gettid);
    ts__rt_forget_pairs();
}

void ts__rt_forget_pairs(void)
{
    for (ts__ring *r = atomic_load(&ts__rt_rings); r; r = r->next) {
        if (r->pairs) memset(r->pairs, 0, TS__PAIR_SLOTS * sizeof *r->pairs);
        r->n_str_ids = 0;
    }
}

uint64_t ts__rt_dropped(void)
{
    uint64_t n = 0;
    for (ts__ring *r = atomic_load(&ts__rt_rings); r; r = r->next) n += atomic_load(&r->dropped);
    return n;
}
