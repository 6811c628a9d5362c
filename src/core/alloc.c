/* alloc.c - the single allocation hook, error text, version, arenas and
 * growable column arrays. Everything the library allocates passes through
 * ts__realloc so a test can inject out-of-memory at any allocation. */
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>

static void *default_alloc(void *ud, void *ptr, size_t old_size, size_t new_size)
{
    (void)ud; (void)old_size;
    if (new_size == 0) { free(ptr); return NULL; }
    return realloc(ptr, new_size);
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

void ts__arena_init(ts_arena *a) { memset(a, 0, sizeof *a); }

void *ts__arena_alloc(ts_arena *a, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (!a->head || a->used + n > a->head->size) {
        size_t size = n > ARENA_BLOCK ? n : ARENA_BLOCK;
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
