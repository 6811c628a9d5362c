/* util.c - hashing, the u64 hash map, the string builder, clocks,
 * strict number parsing, files written whole or not at all. */
#include "core/core.h"

#include <errno.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <unistd.h>
#include <time.h>

/* A short multiply-xorshift hash over 8-byte words: names and keys are short,
 * so per-call setup matters more than bulk throughput. */
uint64_t ts__hash_bytes(const void *data, size_t n)
{
    const unsigned char *p = data;
    size_t total = n;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (n * 0xff51afd7ed558ccdULL);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ ts__hash_u64(w)) * 0x9fb21c651e98df25ULL;
        p += 8; n -= 8;
    }
    /* the last n < 8 bytes as a little-endian word, as memcpy into a zeroed
     * word would give, without a call: from the 8 bytes ending here when the
     * input has them, else from 4-, 2- and 1-byte loads */
    uint64_t w = 0;
    if (n && total >= 8) {
        memcpy(&w, p + n - 8, 8);
        w >>= 8 * (8 - n);
    } else if (n) {
        uint32_t lo = 0;
        size_t k = 0;
        if (n >= 4) { memcpy(&lo, p, 4); w = lo; k = 4; }
        if (n - k >= 2) { uint16_t m; memcpy(&m, p + k, 2); w |= (uint64_t)m << (8 * k); k += 2; }
        if (n - k) w |= (uint64_t)p[k] << (8 * k);
    }
    h = (h ^ ts__hash_u64(w ^ n)) * 0x9fb21c651e98df25ULL;
    return h ^ (h >> 29);
}

/* ---- map64 ---- */
#define MAP_EMPTY UINT64_MAX

void ts__map64_init(ts_map64 *m) { memset(m, 0, sizeof *m); }

void ts__map64_free(ts_map64 *m)
{
    ts__free(m->keys, (size_t)m->n_slots * 8);
    ts__free(m->vals, (size_t)m->n_slots * 8);
    memset(m, 0, sizeof *m);
}

static int map64_resize(ts_map64 *m, uint32_t n_slots)
{
    uint64_t *k = ts__malloc((size_t)n_slots * 8), *v = ts__malloc((size_t)n_slots * 8);
    if (!k || !v) { ts__free(k, (size_t)n_slots * 8); ts__free(v, (size_t)n_slots * 8); return TS_ENOMEM; }
    memset(k, 0xff, (size_t)n_slots * 8);
    for (uint32_t i = 0; i < m->n_slots; i++) {
        if (m->keys[i] == MAP_EMPTY) continue;
        uint32_t j = (uint32_t)ts__hash_u64(m->keys[i]) & (n_slots - 1);
        while (k[j] != MAP_EMPTY) j = (j + 1) & (n_slots - 1);
        k[j] = m->keys[i];
        v[j] = m->vals[i];
    }
    ts__free(m->keys, (size_t)m->n_slots * 8);
    ts__free(m->vals, (size_t)m->n_slots * 8);
    m->keys = k; m->vals = v; m->n_slots = n_slots;
    return TS_OK;
}

uint64_t *ts__map64_slot(ts_map64 *m, uint64_t key, bool *added)
{
    if (key == MAP_EMPTY) return NULL;
    if ((m->n + 1) * 2 > m->n_slots && map64_resize(m, m->n_slots ? m->n_slots * 2 : 64)) return NULL;
    uint32_t j = (uint32_t)ts__hash_u64(key) & (m->n_slots - 1);
    while (m->keys[j] != MAP_EMPTY && m->keys[j] != key) j = (j + 1) & (m->n_slots - 1);
    *added = m->keys[j] == MAP_EMPTY;
    if (*added) {
        m->n++;
        m->keys[j] = key;
        m->vals[j] = 0;
    }
    return &m->vals[j];
}

int ts__map64_put(ts_map64 *m, uint64_t key, uint64_t val)
{
    if (key == MAP_EMPTY) return TS_EINVAL;
    bool added;
    uint64_t *v = ts__map64_slot(m, key, &added);
    if (!v) return TS_ENOMEM;
    *v = val;
    return TS_OK;
}

uint64_t *ts__map64_find(const ts_map64 *m, uint64_t key)
{
    if (!m->n_slots || key == MAP_EMPTY) return NULL;
    uint32_t j = (uint32_t)ts__hash_u64(key) & (m->n_slots - 1);
    while (m->keys[j] != MAP_EMPTY) {
        if (m->keys[j] == key) return &m->vals[j];
        j = (j + 1) & (m->n_slots - 1);
    }
    return NULL;
}

bool ts__map64_get(const ts_map64 *m, uint64_t key, uint64_t *val)
{
    const uint64_t *v = ts__map64_find(m, key);
    if (v && val) *val = *v;
    return v != NULL;
}

/* ---- string builder ---- */
void ts__buf_init(ts_buf *b) { memset(b, 0, sizeof *b); }
void ts__buf_free(ts_buf *b) { ts__free(b->s, b->cap); memset(b, 0, sizeof *b); }

static bool buf_reserve(ts_buf *b, size_t extra)
{
    if (b->oom) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->len + extra + 1) nc *= 2;
    char *ns = ts__realloc(b->s, b->cap, nc);
    if (!ns) { b->oom = true; return false; }
    b->s = ns;
    b->cap = nc;
    return true;
}

void ts__buf_add(ts_buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n)) return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void ts__buf_puts(ts_buf *b, const char *s) { ts__buf_add(b, s, strlen(s)); }

void ts__buf_printf(ts_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) { ts__buf_add(b, tmp, (size_t)n); return; }
    if (!buf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void ts__buf_json_str(ts_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    ts__buf_add(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        ts__buf_add(b, s + run, i - run);
        run = i + 1;
        char e[6] = {'\\', 0};
        switch (c) {
        case '"': e[1] = '"'; ts__buf_add(b, e, 2); break;
        case '\\': e[1] = '\\'; ts__buf_add(b, e, 2); break;
        case '\n': e[1] = 'n'; ts__buf_add(b, e, 2); break;
        case '\t': e[1] = 't'; ts__buf_add(b, e, 2); break;
        case '\r': e[1] = 'r'; ts__buf_add(b, e, 2); break;
        default:
            e[1] = 'u'; e[2] = '0'; e[3] = '0'; e[4] = hex[c >> 4]; e[5] = hex[c & 15];
            ts__buf_add(b, e, 6);
        }
    }
    ts__buf_add(b, s + run, n - run);
    ts__buf_add(b, "\"", 1);
}

const char *ts__buf_cstr(ts_buf *b)
{
    if (!b->s) ts__buf_add(b, "", 0);
    return b->s ? b->s : "";
}

/* ---- clocks ---- */
int64_t ts__now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

size_t ts__rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, res = 0;
    int n = f ? fscanf(f, "%llu %llu", &size, &res) : 0;
    if (f) fclose(f);
    return n == 2 ? (size_t)res * (size_t)sysconf(_SC_PAGESIZE) : 0;
}

size_t ts__mem_total_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) break;
    if (f) fclose(f);
    return (size_t)kb * 1024;
}

size_t ts__peak_rss_bytes(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (size_t)ru.ru_maxrss * 1024;
}

#ifdef MADV_POPULATE_WRITE
typedef struct prefault_part { uintptr_t a, e; } prefault_part;

static void *prefault_part_run(void *arg)
{
    prefault_part *q = arg;
    (void)madvise((void *)q->a, q->e - q->a, MADV_POPULATE_WRITE);
    return NULL;
}
#endif

/* Blocks of 64 MiB or more are mapped by up to 4 threads at once, one
 * page-aligned part each: on a VM whose host has not backed the memory yet,
 * each page costs the host a fault of its own, and two threads on this
 * 2-vCPU machine map fresh memory in about half the time of one (1.34-1.47
 * against 2.57-2.87 s per GiB, `build/bench/prefault`, 24 Nov; 4 threads no
 * faster than 2). A helper that cannot be started leaves its part to the
 * caller. */
void ts__prefault(void *p, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    enum { MAX_PARTS = 4 };
    if (!p || bytes < ((size_t)1 << 20)) return;
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)p & ~(pg - 1), e = (uintptr_t)p + bytes;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t parts = bytes >= ((size_t)64 << 20) && cpus > 1 ? (size_t)(cpus < MAX_PARTS ? cpus : MAX_PARTS) : 1;
    prefault_part part[MAX_PARTS];
    pthread_t tid[MAX_PARTS];
    bool started[MAX_PARTS] = {false};
    uintptr_t step = ((e - a) / parts + pg - 1) & ~(pg - 1);
    for (size_t i = 0; i < parts; i++) {
        part[i].a = a + i * step < e ? a + i * step : e;
        part[i].e = i + 1 == parts || a + (i + 1) * step > e ? e : a + (i + 1) * step;
    }
    for (size_t i = 1; i < parts; i++) started[i] = pthread_create(&tid[i], NULL, prefault_part_run, &part[i]) == 0;
    prefault_part_run(&part[0]);
    for (size_t i = 1; i < parts; i++) {
        if (started[i]) pthread_join(tid[i], NULL);
        else prefault_part_run(&part[i]);
    }
#else
    (void)p; (void)bytes;
#endif
}

int ts__cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t ts__median_i64(int64_t *v, uint32_t n)
{
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, ts__cmp_i64);
    return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

/* A 16-byte record as two words, for ts__sort_rec16. */
typedef struct rec16 { uint64_t w[2]; } rec16;

void ts__sort_i64(int64_t *v, size_t n, int64_t *tmp)
{
    if (n < 48) {
        for (size_t i = 1; i < n; i++) {
            int64_t x = v[i];
            size_t j = i;
            for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    int64_t lo = v[0], hi = v[0];
    for (size_t i = 1; i < n; i++) {
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
    }
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    int64_t *src = v, *dst = tmp;
    for (unsigned shift = 0; shift < 64 && (range >> shift) != 0; shift += 11) {
        size_t count[2048] = {0};
        for (size_t i = 0; i < n; i++) count[(((uint64_t)src[i] - (uint64_t)lo) >> shift) & 2047]++;
        for (size_t k = 0, sum = 0; k < 2048; k++) { size_t c = count[k]; count[k] = sum; sum += c; }
        for (size_t i = 0; i < n; i++) dst[count[(((uint64_t)src[i] - (uint64_t)lo) >> shift) & 2047]++] = src[i];
        int64_t *t = src; src = dst; dst = t;
    }
    if (src != v) memcpy(v, src, n * sizeof *v);
}

void ts__sort_rec16(void *v, size_t n, size_t key_off, void *tmp)
{
    rec16 *a = v;
    unsigned k = key_off / 8;
    if (n < 48) {   /* insertion sort: stable */
        for (size_t i = 1; i < n; i++) {
            rec16 x = a[i];
            size_t j = i;
            for (; j > 0 && (int64_t)a[j - 1].w[k] > (int64_t)x.w[k]; j--) a[j] = a[j - 1];
            a[j] = x;
        }
        return;
    }
    int64_t lo = (int64_t)a[0].w[k], hi = lo;
    for (size_t i = 1; i < n; i++) {
        int64_t x = (int64_t)a[i].w[k];
        if (x < lo) lo = x;
        if (x > hi) hi = x;
    }
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    rec16 *src = a, *dst = tmp;
    for (unsigned shift = 0; shift < 64 && (range >> shift) != 0; shift += 11) {
        size_t count[2048] = {0};
        for (size_t i = 0; i < n; i++) count[((src[i].w[k] - (uint64_t)lo) >> shift) & 2047]++;
        for (size_t d = 0, sum = 0; d < 2048; d++) { size_t c = count[d]; count[d] = sum; sum += c; }
        for (size_t i = 0; i < n; i++) dst[count[((src[i].w[k] - (uint64_t)lo) >> shift) & 2047]++] = src[i];
        rec16 *t = src; src = dst; dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
}

int ts__cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bool ts__parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool ts__parse_f64(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v >= lo && v <= hi)) return false;
    *out = v;
    return true;
}

bool ts__parse_range(const char *s, int64_t *a, int64_t *b)
{
    const char *colon = strchr(s, ':');
    int64_t x = INT64_MIN, y = INT64_MAX;
    char first[32];
    if (colon != s) {
        size_t n = colon ? (size_t)(colon - s) : strlen(s);
        if (n >= sizeof first) return false;   /* longer than any int64 */
        memcpy(first, s, n);
        first[n] = 0;
        if (!ts__parse_i64(first, INT64_MIN, INT64_MAX, &x)) return false;
        if (!colon) y = x;
    }
    if (colon && colon[1] && !ts__parse_i64(colon + 1, INT64_MIN, INT64_MAX, &y)) return false;
    if (x > y) return false;
    *a = x;
    *b = y;
    return true;
}

/* The temporary of PATH beside it: DIR/.NAME.PID.tmp for one file,
 * DIR/.NAME.tmp for a set (ts__write_tmp: its folder is the command's own). */
static bool tmp_name(const char *path, bool set, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    int dir_len = base ? (int)(base - path) + 1 : 0;
    base = base ? base + 1 : path;
    if (set) return snprintf(out, cap, "%.*s.%s.tmp", dir_len, path, base) < (int)cap;
    return snprintf(out, cap, "%.*s.%s.%ld.tmp", dir_len, path, base, (long)getpid()) < (int)cap;
}

/* set: a file of a set (see tmp_name); else a PATH that exists and is not a
 * regular file (a device, a fifo) is written in place. */
static int file_open(ts__file *o, const char *path, bool set, ts_error *err)
{
    struct stat st;
    o->path = path;
    o->e = 0;
    o->direct = !set && stat(path, &st) == 0 && !S_ISREG(st.st_mode);
    if (o->direct) snprintf(o->tmp, sizeof o->tmp, "%s", path);
    else if (!tmp_name(path, set, o->tmp, sizeof o->tmp)) return ts__error(err, TS_EIO, "%s: %s", path, strerror(ENAMETOOLONG));
    o->f = fopen(o->tmp, "wb");
    if (!o->f) return ts__error(err, TS_EIO, "%s: cannot write: %s", path, strerror(errno));
    return TS_OK;
}

/* Flush and close; with ok and every write good, rename the temporary to
 * PATH (or, keep: leave it for ts__commit_tmp); else remove it. */
static int file_finish(ts__file *o, bool ok, bool keep, ts_error *err)
{
    errno = 0;
    bool good = fflush(o->f) == 0 && !ferror(o->f);
    int e = errno ? errno : o->e;
    if (fclose(o->f) != 0 && good) { good = false; e = errno; }
    o->f = NULL;
    if (good && ok && (keep || o->direct || rename(o->tmp, o->path) == 0)) return TS_OK;
    if (good && ok) e = errno;   /* the rename failed */
    if (!o->direct) remove(o->tmp);
    if (!ok && good) return TS_EIO;   /* the caller's own failure, already reported */
    return ts__error(err, TS_EIO, "%s: cannot write: %s", o->path, e ? strerror(e) : "write error");
}

int ts__file_open(ts__file *o, const char *path, ts_error *err) { return file_open(o, path, false, err); }
int ts__file_close(ts__file *o, bool ok, ts_error *err) { return file_finish(o, ok, false, err); }

/* set: keep the temporary for ts__commit_tmp. */
static int write_buf(const char *path, const ts_buf *b, bool set, ts_error *err)
{
    ts__file o;
    int rc = file_open(&o, path, set, err);
    if (rc) return rc;
    if (b->len && fwrite(b->s, 1, b->len, o.f) != b->len) o.e = errno;   /* file_finish reports it */
    return file_finish(&o, true, set, err);
}

int ts__write_file(const char *path, const ts_buf *b, ts_error *err) { return write_buf(path, b, false, err); }

int ts__write_tmp(const char *dir, const char *name, const ts_buf *b, ts_error *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return ts__error(err, TS_EIO, "%s/%s: %s", dir, name, strerror(ENAMETOOLONG));
    return write_buf(path, b, true, err);
}

int ts__commit_tmp(const char *dir, const char *const *names, int n_written, int rc, ts_error *err)
{
    char tmp[4096], final[4096];
    for (int i = 0; i < n_written; i++) {
        snprintf(final, sizeof final, "%s/%s", dir, names[i]);
        if (!tmp_name(final, true, tmp, sizeof tmp)) continue;   /* ts__write_tmp wrote none */
        if (rc) remove(tmp);
        else if (rename(tmp, final) != 0) rc = ts__error(err, TS_EIO, "%s: %s", final, strerror(errno));
    }
    return rc;
}

int ts__out_dir(const char *dir, bool parents, bool *made, ts_error *err)
{
    char tmp[4096];
    struct stat st;
    *made = false;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return TS_OK;
    if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp)
        return ts__error(err, TS_EIO, "%s: %s", dir, strerror(ENAMETOOLONG));
    for (char *p = tmp + 1; parents && *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST) return ts__error(err, TS_EIO, "%s: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0) return ts__error(err, TS_EIO, "%s: %s", dir, strerror(errno));
    *made = true;
    return TS_OK;
}
