/* alloc.c - the single allocation hook, error text, version, arenas and
 * growable column arrays. Everything the library allocates passes through
 * ts__realloc so a test can inject out-of-memory at any allocation. */
#include "core/core.h"

#include <stdio.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Memory budget (--max-rss): the default allocator counts the bytes it
 * holds (malloc_usable_size, so the callers' size hints need not be exact)
 * and refuses an allocation that would take the count past the limit, as if
 * the machine were out of memory; every caller already turns a NULL into
 * TS_ENOMEM and stops cleanly. The first refusal is remembered (how much was
 * held, how much more was asked, in which phase) for the message the CLI
 * prints. Relaxed atomics: the loader's threads allocate at once, and the
 * count may pass the limit by one allocation per thread. */
static _Atomic size_t mem_held, mem_limit;
static _Atomic size_t over_held, over_asked;
static _Atomic(const char *) mem_phase = "starting";
static _Atomic(const char *) over_phase;

static bool over_budget(size_t old_usable, size_t new_size)
{
    size_t lim = atomic_load_explicit(&mem_limit, memory_order_relaxed);
    if (!lim || new_size <= old_usable) return false;
    size_t held = atomic_load_explicit(&mem_held, memory_order_relaxed);
    if (held - old_usable + new_size <= lim) return false;
    const char *none = NULL;
    if (atomic_compare_exchange_strong(&over_phase, &none, atomic_load(&mem_phase))) {
        atomic_store(&over_held, held);
        atomic_store(&over_asked, new_size - old_usable);
    }
    return true;
}

static void *default_alloc(void *ud, void *ptr, size_t old_size, size_t new_size)
{
    (void)ud; (void)old_size;
    size_t old_usable = ptr ? malloc_usable_size(ptr) : 0;
    if (new_size == 0) {
        free(ptr);
        atomic_fetch_sub_explicit(&mem_held, old_usable, memory_order_relaxed);
        return NULL;
    }
    if (over_budget(old_usable, new_size)) return NULL;
    void *p = realloc(ptr, new_size);
    if (!p) return NULL;
    atomic_fetch_add_explicit(&mem_held, malloc_usable_size(p), memory_order_relaxed);
    atomic_fetch_sub_explicit(&mem_held, old_usable, memory_order_relaxed);
    return p;
}

void ts_set_memory_limit(size_t bytes)
{
    atomic_store(&mem_limit, bytes);
    atomic_store(&over_phase, NULL);   /* a new budget: no refusal yet */
}
size_t ts_memory_held(void) { return atomic_load(&mem_held); }
void ts__mem_phase(const char *phase) { atomic_store(&mem_phase, phase); }

bool ts_memory_limit_hit(size_t *held, size_t *asked, const char **phase)
{
    const char *ph = atomic_load(&over_phase);
    if (!ph) return false;
    if (held) *held = atomic_load(&over_held);
    if (asked) *asked = atomic_load(&over_asked);
    if (phase) *phase = ph;
    return true;
}

/* A phase boundary: the process's resident memory (allocations outside the
 * hook too: libraries, decompressor windows) against the limit. */
int ts__mem_check(const char *next_phase)
{
    size_t lim = atomic_load(&mem_limit), rss = ts__rss_bytes();
    if (lim && rss > lim) {
        const char *none = NULL;
        if (atomic_compare_exchange_strong(&over_phase, &none, atomic_load(&mem_phase))) {
            atomic_store(&over_held, rss);
            atomic_store(&over_asked, 0);
        }
        return TS_ENOMEM;
    }
    ts__mem_phase(next_phase);
    return TS_OK;
}

static ts_alloc_fn alloc_fn = default_alloc;
static void *alloc_ud;

void ts_set_allocator(ts_alloc_fn fn, void *ud)
{
    alloc_fn = fn ? fn : default_alloc;
    alloc_ud = fn ? ud : NULL;
}

void *ts__realloc(void *p, size_t old_n, size_t new_n) { return alloc_fn(alloc_ud, p, old_n, new_n); }
void *ts__malloc(size_t n) { return alloc_fn(alloc_ud, NULL, 0, n ? n : 1); }
void  ts__free(void *p, size_t n) { if (p) alloc_fn(alloc_ud, p, n, 0); }

void *ts__calloc(size_t n, size_t elem)
{
    if (elem && n > SIZE_MAX / elem) return NULL;
    void *p = ts__malloc(n * elem);
    if (p) memset(p, 0, n * elem);
    return p;
}

char *ts__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ts__malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

int ts__grow(void **p, uint32_t *cap, size_t elem, size_t need)
{
    if (need <= *cap) return TS_OK;
    if (need > UINT32_MAX) return TS_ENOMEM;   /* row ids are 32-bit */
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) ncap *= 2;
    if (ncap > UINT32_MAX) ncap = UINT32_MAX;
    void *np = ts__realloc(*p, (size_t)*cap * elem, ncap * elem);
    if (!np) return TS_ENOMEM;
    *p = np;
    *cap = (uint32_t)ncap;
    return TS_OK;
}

int ts__grow_cols(const ts_col_ref *cols, size_t n, uint32_t *cap, size_t need, uint32_t first_cap)
{
    if (need <= *cap) return TS_OK;
    if (need > UINT32_MAX) return TS_ENOMEM;   /* row ids are 32-bit */
    size_t ncap = *cap ? (size_t)*cap * 2 : first_cap;
    if (ncap < need) ncap = need;
    if (ncap > UINT32_MAX) ncap = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        void *np = ts__realloc(*cols[i].p, (size_t)*cap * cols[i].elem, ncap * cols[i].elem);
        if (!np) return TS_ENOMEM;
        *cols[i].p = np;
    }
    *cap = (uint32_t)ncap;
    return TS_OK;
}

const char *ts_strerror(int status)
{
    switch (status) {
#define TS_X_(name, code, text) case code: return text;
    TS_STATUS_MAP(TS_X_)
#undef TS_X_
    }
    return "unknown error";
}

const char *ts_version(void) { return "0.1.0"; }

int ts__error(ts_error *err, int status, const char *fmt, ...)
{
    if (err && err->status == TS_OK) {   /* keep the first, most specific cause */
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->status = status;
    }
    return status;
}

/* ---- arena ---- */
struct ts_arena_block {
    ts_arena_block *prev;
    size_t size;            /* usable bytes after the header */
    _Alignas(16) unsigned char data[];
};

#define ARENA_BLOCK (1u << 20)
#define ARENA_BLOCK_MAX (8u << 20)

void ts__arena_init(ts_arena *a) { memset(a, 0, sizeof *a); }

void *ts__arena_alloc(ts_arena *a, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (!a->head || a->used + n > a->head->size) {
        /* blocks grow with the arena (1, 1, 2, 4, 8, 8... MiB): a big
         * arena takes fewer blocks, a small one stays small */
        size_t size = a->total < ARENA_BLOCK ? ARENA_BLOCK : a->total < ARENA_BLOCK_MAX ? a->total : ARENA_BLOCK_MAX;
        if (size < n) size = n;
        ts_arena_block *b = ts__malloc(sizeof *b + size);
        if (!b) return NULL;
        b->prev = a->head;
        b->size = size;
        a->head = b;
        a->used = 0;
        a->total += size;
    }
    void *p = a->head->data + a->used;
    a->used += n;
    return p;
}

char *ts__arena_strndup(ts_arena *a, const char *s, size_t n)
{
    char *d = ts__arena_alloc(a, n + 1);
    if (d) { memcpy(d, s, n); d[n] = 0; }
    return d;
}

void ts__arena_free(ts_arena *a)
{
    ts_arena_block *b = a->head;
    while (b) {
        ts_arena_block *prev = b->prev;
        ts__free(b, sizeof *b + b->size);
        b = prev;
    }
    memset(a, 0, sizeof *a);
}
