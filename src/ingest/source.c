/* source.c - the byte source under the JSON parser: plain files (mapped),
 * gzip (ISA-L's igzip, streaming, multi-member) and zstd (streaming), or bytes
 * in memory. Why ISA-L and not zlib: it inflates the same streams about 3x
 * faster (2.9 vs 0.93 GB/s on nccl_data.json.gz here), and unlike libdeflate
 * it streams, so the whole JSON never has to sit in memory.
 *
 * Not for: parsing. Invariant: a source never holds more than one compressed
 * input window (IN_WINDOW bytes) plus the decoder state, whatever the file
 * size, so peak memory does not grow with the compressed file. An
 * uncompressed regular file is mapped whole instead (TS_SRC_MAP) and the
 * parser reads it in place; the pages behind the parser are given back with
 * ts__src_release, so what stays resident is bounded by the release step,
 * not the file size. A gzip/zstd file of PIPE_MIN compressed bytes or more
 * is decoded on a thread of its own into PIPE_SLOTS chunks that the parser
 * drains, so decompression and parsing overlap and a load's wall time is
 * bounded by the slower of the two rather than their sum.
 * Errors name the compressed byte offset where the stream went wrong.
 */
#include "ingest/ingest.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>
#include <isa-l/igzip_lib.h>
#include <zstd.h>

enum {
    IN_WINDOW = 256 << 10,   /* compressed bytes read per read(2) */
    PIPE_MIN = 256 << 10,    /* compressed files this large get a decoding thread */
    PIPE_SLOTS = 4,          /* decoded chunks in flight */
    PIPE_CHUNK = 128 << 10,  /* bytes per decoded chunk (small: they add to the peak RSS) */
};

/* ---- the decoding thread ----
 * The thread owns `inner` (the file, its compressed window and the decoder)
 * and fills chunks in ring order; the parser's thread owns the outer source
 * and drains them. Ring indices count up forever: slot = index % PIPE_SLOTS,
 * filled = tail - head. Everything shared is under `mu`. */
typedef struct ts_src_pipe {
    ts_src          inner;                /* the decoding state (thread-owned once started) */
    pthread_t       thread;
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    char           *buf[PIPE_SLOTS];      /* PIPE_CHUNK bytes each (owned) */
    size_t          len[PIPE_SLOTS];      /* decoded bytes in each filled slot */
    unsigned        head, tail;           /* next slot to drain / to fill */
    size_t          off;                  /* bytes of slot `head` already drained */
    bool            eof;                  /* the thread is done (end of stream or error) */
    bool            stop;                 /* the parser closed the source early */
    int             status;               /* TS_OK, or the decoding error (err says more) */
    ts_error        err;
} ts_src_pipe;

static void pipe_start(ts_src *s);

static ts_src_kind sniff(const unsigned char *b, size_t n)
{
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b) return TS_SRC_GZIP;
    if (n >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) return TS_SRC_ZSTD;
    return TS_SRC_PLAIN;
}

static int start_decoder(ts_src *s, ts_error *err)
{
    if (s->kind == TS_SRC_GZIP) {
        struct inflate_state *z = ts__malloc(sizeof *z);
        if (!z) return ts__error(err, TS_ENOMEM, "%s: byte 0: out of memory", s->name);
        isal_inflate_init(z);
        z->crc_flag = ISAL_GZIP;   /* gzip header and trailer, CRC checked */
        s->dec = z;
    } else if (s->kind == TS_SRC_ZSTD) {
        ZSTD_DStream *z = ZSTD_createDStream();
        if (!z) return ts__error(err, TS_ENOMEM, "%s: byte 0: cannot start zstd decoder", s->name);
        ZSTD_initDStream(z);
        s->dec = z;
    }
    return TS_OK;
}

/* Refill the compressed window; keeps unconsumed bytes. */
static int fill_in(ts_src *s, ts_error *err)
{
    if (s->kind == TS_SRC_MEM) { s->in_eof = true; return TS_OK; }
    if (s->in_off > 0) {
        memmove(s->in, s->in + s->in_off, s->in_n - s->in_off);
        s->in_n -= s->in_off;
        s->in_off = 0;
    }
    while (s->in_n < s->in_cap && !s->in_eof) {
        ssize_t k = read(s->fd, s->in + s->in_n, s->in_cap - s->in_n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return ts__error(err, TS_EIO, "%s: byte %llu: read failed: %s", s->name,
                                    (unsigned long long)s->in_total, strerror(errno));
        if (k == 0) s->in_eof = true;
        s->in_n += (size_t)k;
        s->in_total += (uint64_t)k;
        if (k > 0) break;   /* one read per refill keeps latency low */
    }
    return TS_OK;
}

/* Map an uncompressed regular file whole, followed by zero pages, so the
 * parser scans the page cache in place. Why: read(2) copied every byte once
 * more (about 8% of the load's CPU on the 500 MB benchmark, in the kernel),
 * and a file-backed read fault maps 16 cached pages at once (fault-around),
 * which is cheaper than the copy. The zero bytes after the file are the
 * scanner's sentinel: the tail of the last file page reads as zeros, and one
 * anonymous page more guarantees TS_SRC_MAP_PAD of them even when the file
 * ends on a page boundary. Returns false (nothing mapped) when the file is
 * not a non-empty regular file, the mapping fails, or the bytes are
 * compressed; the caller then reads it the ordinary way.
 * Caveat of every mapped reader: a file truncated by another process while
 * it is being parsed raises SIGBUS. */
static bool try_map(ts_src *s, bool compressed)
{
    struct stat st;
    if (fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return false;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = (size_t)st.st_size;
    if ((uint64_t)st.st_size > SIZE_MAX / 2) return false;
    size_t len = (n + pg - 1) / pg * pg + (TS_SRC_MAP_PAD + pg - 1) / pg * pg;
    char *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return false;
    if (mmap(m, n, PROT_READ, MAP_PRIVATE | MAP_FIXED, s->fd, 0) == MAP_FAILED) { munmap(m, len); return false; }
    ts_src_kind kind = sniff((const unsigned char *)m, n);
    if (kind != TS_SRC_PLAIN && !compressed) { munmap(m, len); return false; }
    (void)madvise(m, n, MADV_SEQUENTIAL);   /* read once, front to back: aggressive readahead */
    s->map = m;
    s->map_n = n;
    s->map_len = len;
    s->kind = TS_SRC_MAP;
    if (kind != TS_SRC_PLAIN) {   /* the whole mapping is the compressed input (borrowed, as ts__src_open_mem's) */
        s->kind = kind;
        s->in = (unsigned char *)m;
        s->in_n = s->in_total = n;
        s->in_eof = true;
        s->mem = m;
    }
    return true;
}

uint64_t ts__src_size_hint(const ts_src *s)
{
    struct stat st;
    switch (s->kind) {
    case TS_SRC_MEM: return s->mem_n;
    case TS_SRC_MAP: return s->map_n;
    default:
        if (s->pipe) return ts__src_size_hint(&s->pipe->inner);   /* its fd never changes */
        if (s->fd < 0) return s->in_n * 16;   /* compressed bytes in memory */
        if (fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) return 0;
        return (uint64_t)st.st_size * (s->kind == TS_SRC_PLAIN ? 1 : 16);
    }
}

void ts__src_release(ts_src *s, size_t upto)
{
    if (s->kind != TS_SRC_MAP) return;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    upto = (upto > s->map_n ? s->map_n : upto) / pg * pg;
    if (upto <= s->map_released) return;
    /* Clean private file pages: dropping them costs no I/O, and a later
     * touch (an error message quoting an old offset) faults them back in. */
    (void)madvise(s->map + s->map_released, upto - s->map_released, MADV_DONTNEED);
    s->map_released = upto;
}

int ts__src_open(ts_src *s, const char *path, ts_error *err)
{
    return ts__src_open_file(s, path, true, err);
}

int ts__src_open_file(ts_src *s, const char *path, bool spare_core, ts_error *err)
{
    memset(s, 0, sizeof *s);
    s->name = path;
    s->kind = TS_SRC_PLAIN;   /* until the magic bytes say otherwise */
    s->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0) return ts__error(err, TS_ENOENT, "%s: byte 0: cannot open: %s", path, strerror(errno));
    if (try_map(s, false)) return TS_OK;
    /* Traces are read once, front to back: ask for aggressive readahead. */
    (void)posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    s->in_cap = IN_WINDOW;
    s->in = ts__malloc(s->in_cap);
    if (!s->in) { ts__src_close(s); return ts__error(err, TS_ENOMEM, "%s: byte 0: out of memory", path); }
    int rc = fill_in(s, err);
    if (rc == TS_OK) {
        s->kind = sniff(s->in, s->in_n);
        rc = start_decoder(s, err);
    }
    if (rc != TS_OK) ts__src_close(s);
    else if (spare_core && (s->kind == TS_SRC_GZIP || s->kind == TS_SRC_ZSTD)) pipe_start(s);
    return rc;
}

int ts__src_open_inplace(ts_src *s, const char *path, ts_error *err)
{
    memset(s, 0, sizeof *s);
    s->name = path;
    s->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0) return ts__error(err, TS_ENOENT, "%s: byte 0: cannot open: %s", path, strerror(errno));
    if (!try_map(s, true)) {
        close(s->fd);
        return ts__src_open_file(s, path, false, err);
    }
    int rc = s->kind == TS_SRC_MAP ? TS_OK : start_decoder(s, err);
    if (rc != TS_OK) ts__src_close(s);
    return rc;
}

int ts__src_open_mem(ts_src *s, const char *name, const void *data, size_t n, ts_error *err)
{
    memset(s, 0, sizeof *s);
    s->name = name;
    s->fd = -1;
    s->kind = sniff(data, n);
    if (s->kind == TS_SRC_PLAIN) {
        s->kind = TS_SRC_MEM;
        s->mem = data;
        s->mem_n = n;
        return TS_OK;
    }
    /* compressed bytes in memory: the window borrows the caller's buffer */
    s->in = (unsigned char *)data;
    s->in_n = n;
    s->in_total = n;
    s->in_eof = true;
    s->mem = data;   /* marks `in` as borrowed */
    int rc = start_decoder(s, err);
    if (rc != TS_OK) ts__src_close(s);
    return rc;
}

static const char *isal_error(int rc)
{
    switch (rc) {
    case ISAL_INVALID_BLOCK: return "invalid deflate block";
    case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK: return "invalid back-reference distance";
    case ISAL_INVALID_WRAPPER: return "invalid gzip header or trailer";
    case ISAL_UNSUPPORTED_METHOD: return "unsupported compression method";
    case ISAL_INCORRECT_CHECKSUM: return "CRC mismatch";
    default: return "inflate failed";
    }
}

static long read_gzip(ts_src *s, char *dst, size_t cap, ts_error *err)
{
    struct inflate_state *z = s->dec;
    size_t got = 0;
    while (got < cap && !s->done) {
        if (s->in_off == s->in_n) {
            if (s->in_eof) {
                return ts__error(err, TS_EPARSE, "%s: byte %llu: gzip stream cut short", s->name,
                                 (unsigned long long)s->in_total);
            }
            int rc = fill_in(s, err);
            if (rc) return rc;
            continue;
        }
        z->next_in = (uint8_t *)s->in + s->in_off;
        z->avail_in = (uint32_t)(s->in_n - s->in_off > UINT32_MAX ? UINT32_MAX : s->in_n - s->in_off);
        z->next_out = (uint8_t *)dst + got;
        z->avail_out = (uint32_t)(cap - got > UINT32_MAX ? UINT32_MAX : cap - got);
        uint32_t avail_in = z->avail_in;
        int zr = isal_inflate(z);
        s->in_off += avail_in - z->avail_in;
        got = (size_t)((char *)z->next_out - dst);
        if (zr < 0) {
            uint64_t at = s->in_total - (s->in_n - s->in_off);
            return ts__error(err, TS_EPARSE, "%s: byte %llu: corrupt gzip data (%s)", s->name,
                             (unsigned long long)at, isal_error(zr));
        }
        if (z->block_state == ISAL_BLOCK_FINISH) {
            /* Another gzip member may follow (concatenated .gz files). */
            if (s->in_off == s->in_n && !s->in_eof) { int rc = fill_in(s, err); if (rc) return rc; }
            if (s->in_off == s->in_n && s->in_eof) s->done = true;
            else { isal_inflate_reset(z); z->crc_flag = ISAL_GZIP; }
        }
    }
    return (long)got;
}

static long read_zstd(ts_src *s, char *dst, size_t cap, ts_error *err)
{
    size_t got = 0;
    while (got < cap && !s->done) {
        if (s->in_off == s->in_n) {
            if (s->in_eof) {
                if (s->frame_end) { s->done = true; break; }
                return ts__error(err, TS_EPARSE, "%s: byte %llu: zstd stream cut short", s->name,
                                 (unsigned long long)s->in_total);
            }
            int rc = fill_in(s, err);
            if (rc) return rc;
            continue;
        }
        ZSTD_inBuffer in = {s->in, s->in_n, s->in_off};
        ZSTD_outBuffer out = {dst, cap, got};
        size_t zr = ZSTD_decompressStream(s->dec, &out, &in);
        s->in_off = in.pos;
        got = out.pos;
        if (ZSTD_isError(zr)) {
            uint64_t at = s->in_total - (s->in_n - s->in_off);
            return ts__error(err, TS_EPARSE, "%s: byte %llu: corrupt zstd data (%s)", s->name,
                             (unsigned long long)at, ZSTD_getErrorName(zr));
        }
        /* zr == 0: a frame ended; the stream may end here or hold another frame. */
        s->frame_end = zr == 0;
        if (zr == 0 && s->in_off == s->in_n && s->in_eof) s->done = true;
    }
    return (long)got;
}

static long decode(ts_src *s, char *dst, size_t cap, ts_error *err)
{
    return s->kind == TS_SRC_GZIP ? read_gzip(s, dst, cap, err) : read_zstd(s, dst, cap, err);
}

static void *pipe_main(void *arg)
{
    ts_src_pipe *pp = arg;
    for (;;) {
        pthread_mutex_lock(&pp->mu);
        while (pp->tail - pp->head == PIPE_SLOTS && !pp->stop) pthread_cond_wait(&pp->cv, &pp->mu);
        unsigned slot = pp->tail % PIPE_SLOTS;
        bool stop = pp->stop;
        pthread_mutex_unlock(&pp->mu);
        if (stop) break;
        /* The slot is free and only this thread writes free slots. */
        long k = pp->inner.done ? 0 : decode(&pp->inner, pp->buf[slot], PIPE_CHUNK, &pp->err);
        pthread_mutex_lock(&pp->mu);
        if (k < 0) pp->status = (int)k;
        else if (k > 0) { pp->len[slot] = (size_t)k; pp->tail++; }
        pp->eof = k <= 0 || pp->inner.done;
        pthread_cond_broadcast(&pp->cv);
        bool done = pp->eof;
        pthread_mutex_unlock(&pp->mu);
        if (done) break;
    }
    return NULL;
}

/* Move the decoding state of s into a pipe and start its thread. On any
 * failure s is left as it was and decodes on the caller's thread. */
static void pipe_start(ts_src *s)
{
    struct stat st;
    if (fstat(s->fd, &st) != 0 || st.st_size < PIPE_MIN) return;
    ts_src_pipe *pp = ts__calloc(1, sizeof *pp);
    if (!pp) return;
    for (int i = 0; i < PIPE_SLOTS; i++)
        if (!(pp->buf[i] = ts__malloc(PIPE_CHUNK))) goto fail;
    ts__error_clear(&pp->err);
    pp->inner = *s;
    if (pthread_mutex_init(&pp->mu, NULL)) goto fail;
    if (pthread_cond_init(&pp->cv, NULL)) { pthread_mutex_destroy(&pp->mu); goto fail; }
    if (pthread_create(&pp->thread, NULL, pipe_main, pp)) {
        pthread_cond_destroy(&pp->cv);
        pthread_mutex_destroy(&pp->mu);
        goto fail;
    }
    /* The outer source keeps its name and kind; the file and decoder moved. */
    s->fd = -1;
    s->in = NULL;
    s->dec = NULL;
    s->pipe = pp;
    return;
fail:
    for (int i = 0; i < PIPE_SLOTS; i++) ts__free(pp->buf[i], PIPE_CHUNK);
    ts__free(pp, sizeof *pp);
}

/* Drain decoded chunks into dst; blocks until a chunk is ready. A decoding
 * error is reported once the bytes decoded before it are drained. */
static long pipe_read(ts_src *s, char *dst, size_t cap, ts_error *err)
{
    ts_src_pipe *pp = s->pipe;
    size_t got = 0;
    pthread_mutex_lock(&pp->mu);
    while (got < cap) {
        while (pp->head == pp->tail && !pp->eof) pthread_cond_wait(&pp->cv, &pp->mu);
        if (pp->head == pp->tail) {   /* drained and the thread is done */
            if (got == 0 && pp->status != TS_OK) {
                if (err && err->status == TS_OK) *err = pp->err;
                got = (size_t)-1;
                break;
            }
            if (pp->status == TS_OK) s->done = true;
            break;
        }
        unsigned slot = pp->head % PIPE_SLOTS;
        pthread_mutex_unlock(&pp->mu);   /* the slot is ours until head moves */
        size_t k = pp->len[slot] - pp->off < cap - got ? pp->len[slot] - pp->off : cap - got;
        memcpy(dst + got, pp->buf[slot] + pp->off, k);
        got += k;
        pp->off += k;
        pthread_mutex_lock(&pp->mu);
        if (pp->off == pp->len[slot]) {
            pp->off = 0;
            pp->head++;
            pthread_cond_broadcast(&pp->cv);
        }
    }
    pthread_mutex_unlock(&pp->mu);
    return got == (size_t)-1 ? pp->status : (long)got;
}

static void pipe_close(ts_src *s)
{
    ts_src_pipe *pp = s->pipe;
    pthread_mutex_lock(&pp->mu);
    pp->stop = true;
    pthread_cond_broadcast(&pp->cv);
    pthread_mutex_unlock(&pp->mu);
    pthread_join(pp->thread, NULL);
    pthread_cond_destroy(&pp->cv);
    pthread_mutex_destroy(&pp->mu);
    pp->inner.pipe = NULL;
    ts__src_close(&pp->inner);
    for (int i = 0; i < PIPE_SLOTS; i++) ts__free(pp->buf[i], PIPE_CHUNK);
    ts__free(pp, sizeof *pp);
    s->pipe = NULL;
}

long ts__src_read(ts_src *s, char *dst, size_t cap, ts_error *err)
{
    if (s->done || cap == 0) return 0;
    if (s->pipe) return pipe_read(s, dst, cap, err);
    switch (s->kind) {
    case TS_SRC_MAP: {   /* the parser reads the mapping in place; this serves other readers */
        size_t k = s->map_n - s->mem_off < cap ? s->map_n - s->mem_off : cap;
        memcpy(dst, s->map + s->mem_off, k);
        s->mem_off += k;
        if (s->mem_off == s->map_n) s->done = true;
        return (long)k;
    }
    case TS_SRC_MEM: {
        size_t k = s->mem_n - s->mem_off < cap ? s->mem_n - s->mem_off : cap;
        memcpy(dst, s->mem + s->mem_off, k);
        s->mem_off += k;
        if (s->mem_off == s->mem_n) s->done = true;
        return (long)k;
    }
    case TS_SRC_PLAIN: {
        size_t got = 0;
        if (s->in_off < s->in_n) {   /* bytes read while sniffing */
            size_t k = s->in_n - s->in_off < cap ? s->in_n - s->in_off : cap;
            memcpy(dst, s->in + s->in_off, k);
            s->in_off += k;
            got = k;
        }
        while (got < cap) {
            ssize_t k = read(s->fd, dst + got, cap - got);
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) return ts__error(err, TS_EIO, "%s: byte %llu: read failed: %s", s->name,
                                        (unsigned long long)s->in_total, strerror(errno));
            if (k == 0) { s->done = true; break; }
            got += (size_t)k;
            s->in_total += (uint64_t)k;
        }
        return (long)got;
    }
    case TS_SRC_GZIP: return read_gzip(s, dst, cap, err);
    case TS_SRC_ZSTD: return read_zstd(s, dst, cap, err);
    }
    return 0;
}

void ts__src_close(ts_src *s)
{
    if (s->pipe) pipe_close(s);
    if (s->dec && s->kind == TS_SRC_GZIP) {
        ts__free(s->dec, sizeof(struct inflate_state));
    } else if (s->dec && s->kind == TS_SRC_ZSTD) {
        ZSTD_freeDStream(s->dec);
    }
    s->dec = NULL;
    if (s->map) munmap(s->map, s->map_len);
    s->map = NULL;
    if (s->in && (const void *)s->in != (const void *)s->mem) ts__free(s->in, s->in_cap);
    s->in = NULL;
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
}

/* The whole uncompressed content. A mapped file is handed out in place
 * (owned by the source); anything else is read into a buffer the caller
 * frees with ts__free(*owned, *owned_cap). Binary formats (SQLite, pickle,
 * protobuf) need random access, so they cannot stream like the JSON reader;
 * memory is then the uncompressed size. `limit` bounds it (a gzip bomb). */
/* A gzip file's uncompressed size as its last member's trailer states it
 * (ISIZE, modulo 2^32): the whole size for the usual one-member file, a
 * first guess otherwise; 0 when unknown. Only sizes the buffer: growth
 * still follows the bytes, so a wrong trailer costs time, never data. */
static uint64_t gzip_isize(const ts_src *s)
{
    struct stat st;
    unsigned char t[4];
    if (s->kind != TS_SRC_GZIP || s->fd < 0 || s->pipe || fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size < 18 || pread(s->fd, t, 4, st.st_size - 4) != 4)
        return 0;
    return (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 | (uint64_t)t[3] << 24;
}

int ts__src_slurp(ts_src *s, const char **data, size_t *n, char **owned, size_t *owned_cap, size_t limit,
                  ts_error *err)
{
    *owned = NULL;
    *owned_cap = 0;
    if (s->kind == TS_SRC_MAP && !s->pipe) {
        *data = s->map;
        *n = s->map_n;
        return TS_OK;
    }
    size_t cap = 1 << 20, len = 0;
    uint64_t isize = gzip_isize(s);
    if (isize && isize < limit) cap = (size_t)isize + 1;   /* room for all: one read past it sees the end */
    char *buf = ts__malloc(cap);
    if (buf && isize) ts__prefault(buf, cap);   /* all of it will be written: map it in one call */
    if (!buf) return ts__error(err, TS_ENOMEM, "%s: byte 0: out of memory", s->name);
    for (;;) {
        if (len == cap) {
            if (cap >= limit) {
                ts__free(buf, cap);
                return ts__error(err, TS_EFORMAT, "%s: byte %zu: larger than %zu MiB uncompressed", s->name, len,
                                 limit >> 20);
            }
            char *nb = ts__realloc(buf, cap, cap * 2);
            if (!nb) { ts__free(buf, cap); return ts__error(err, TS_ENOMEM, "%s: byte %zu: out of memory", s->name, len); }
            buf = nb;
            cap *= 2;
        }
        long k = ts__src_read(s, buf + len, cap - len, err);
        if (k < 0) { ts__free(buf, cap); return (int)k; }
        if (k == 0) break;
        len += (size_t)k;
    }
    *data = buf;
    *n = len;
    *owned = buf;
    *owned_cap = cap;
    return TS_OK;
}

/* ---- a whole gzip file in one call ----
 * ts__with_file_bytes' readers (protobuf, SQLite: random access) want the
 * whole uncompressed file anyway, so a regular one-member gzip file,
 * mapped by ts__src_open_inplace, is inflated by one isal_inflate call into a buffer of its
 * trailer's size, instead of through the 256 KiB read(2) window: no copy
 * of the compressed bytes, no window to fault in. A buffer of 1 MiB or more
 * is placed on a 2 MiB boundary and asked for transparent huge pages (as
 * pickle.c's tree): it is written once, front to back, and freed whole,
 * where 4 KiB pages cost a fault and a charge each (742 of them for the
 * 3 MB XPlane sample). Anything unusual (not a regular file, not gzip, a
 * trailer size that is not the output's, several members, damaged bytes)
 * returns false with nothing kept, and the source's streaming decoder
 * reads the same mapping, reporting errors with their byte. */
enum { HUGE_PAGE = 2 << 20, HUGE_MIN = 1 << 20 };

typedef struct whole_buf { char *raw; size_t raw_bytes; char *data; size_t n; } whole_buf;

/* Room for n bytes: raw (ts__free(raw, raw_bytes)) and data in it. */
static bool whole_alloc(whole_buf *w, size_t n)
{
    size_t round = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    w->raw_bytes = n < HUGE_MIN ? n : round + HUGE_PAGE;
    w->raw = ts__malloc(w->raw_bytes);
    if (!w->raw) return false;
    w->data = w->raw;
    if (n >= HUGE_MIN) {
        w->data = (char *)(((uintptr_t)w->raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
#ifdef MADV_HUGEPAGE
        (void)madvise(w->data, round, MADV_HUGEPAGE);   /* a hint: without it, 4 KiB pages */
#endif
    }
    ts__prefault(w->data, n);   /* all of it will be written: map it in one call */
    return true;
}

static bool inflate_whole(const unsigned char *in, size_t in_n, whole_buf *w)
{
    struct inflate_state *z = ts__malloc(sizeof *z);
    if (!z) return false;
    isal_inflate_init(z);
    z->crc_flag = ISAL_GZIP;   /* header and trailer, CRC checked */
    z->next_in = (uint8_t *)in;
    z->avail_in = (uint32_t)in_n;
    z->next_out = (uint8_t *)w->data;
    z->avail_out = (uint32_t)w->n;
    bool ok = isal_inflate(z) == ISAL_DECOMP_OK && z->block_state == ISAL_BLOCK_FINISH && z->avail_in == 0 &&
              z->avail_out == 0;
    ts__free(z, sizeof *z);
    return ok;
}

/* The whole of a mapped gzip file (in, in_n) inflated into w; false, with
 * nothing kept, where it cannot be done in one call. */
static bool gzip_whole(const unsigned char *in, size_t in_n, size_t limit, whole_buf *w)
{
    if (in_n < 18 || in_n >= UINT32_MAX) return false;
    const unsigned char *t = in + in_n - 4;
    w->n = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
    if (w->n == 0 || w->n >= limit || !whole_alloc(w, w->n)) return false;
    if (inflate_whole(in, in_n, w)) return true;
    ts__free(w->raw, w->raw_bytes);
    return false;
}

/* The file is opened in place (ts__src_open_inplace: a regular compressed
 * file is mapped whole); a mapped gzip file is tried in one call first,
 * anything else, or a failure of that try, is slurped through the source,
 * whose decoder then reads the same mapping and reports errors with their
 * byte. */
int ts__with_file_bytes(const char *path, size_t limit, int (*fn)(void *ud, const char *data, size_t n), void *ud,
                        ts_error *err)
{
    ts_src src;
    int rc = ts__src_open_inplace(&src, path, err);
    if (rc) return rc;
    whole_buf w;
    if (src.kind == TS_SRC_GZIP && src.map && gzip_whole(src.in, src.in_n, limit, &w)) {
        rc = fn(ud, w.data, w.n);
        ts__free(w.raw, w.raw_bytes);
    } else {
        const char *data;
        size_t n, cap;
        char *owned;
        rc = ts__src_slurp(&src, &data, &n, &owned, &cap, limit, err);
        if (!rc) rc = fn(ud, data, n);
        ts__free(owned, cap);
    }
    ts__src_close(&src);
    return rc;
}

int ts__sniff_file(const char *path, unsigned char *head, size_t cap, size_t *n, ts_error *err)
{
    ts_src s;
    int rc = ts__src_open_file(&s, path, false, err);
    if (rc) return rc;
    long k = ts__src_read(&s, (char *)head, cap, err);
    ts__src_close(&s);
    if (k < 0) return (int)k;
    *n = (size_t)k;
    return TS_OK;
}
