/* strpool.c - string interning with 32-bit ids (Perfetto's StringPool idea).
 *
 * Invariants: id 0 is the empty string; ids are dense and never change; the
 * table load stays under 1/2 so probe sequences stay short. Interning is the
 * hot path of ingest (every name, category and arg key goes through it), so
 * the hash is computed once and kept per id for resizing. */
#include "core/core.h"

int ts__strpool_init(ts_strpool *p)
{
    memset(p, 0, sizeof *p);
    p->cap_bytes = 4096;
    p->bytes = ts__malloc(p->cap_bytes);
    p->cap = 256;
    p->off = ts__malloc(p->cap * sizeof *p->off);
    p->len = ts__malloc(p->cap * sizeof *p->len);
    p->hashes = ts__malloc(p->cap * sizeof *p->hashes);
    p->n_slots = 512;
    p->slots = ts__calloc(p->n_slots, sizeof *p->slots);
    if (!p->bytes || !p->off || !p->len || !p->hashes || !p->slots) {
        ts__strpool_free(p);
        return TS_ENOMEM;
    }
    p->bytes[0] = 0;
    p->n_bytes = 1;
    p->off[0] = 0; p->len[0] = 0; p->hashes[0] = 0;
    p->n = 1;
    return TS_OK;
}

void ts__strpool_free(ts_strpool *p)
{
    ts__free(p->bytes, p->cap_bytes);
    ts__free(p->off, p->cap * sizeof *p->off);
    ts__free(p->len, p->cap * sizeof *p->len);
    ts__free(p->hashes, p->cap * sizeof *p->hashes);
    ts__free(p->slots, p->n_slots * sizeof *p->slots);
    memset(p, 0, sizeof *p);
}

bool ts__strpool_oom(const ts_strpool *p) { return p->bytes == NULL || p->slots == NULL; }

static int resize_slots(ts_strpool *p)
{
    uint32_t n = p->n_slots * 2;
    uint32_t *s = ts__calloc(n, sizeof *s);
    if (!s) return TS_ENOMEM;
    for (uint32_t id = 1; id < p->n; id++) {
        uint32_t i = p->hashes[id] & (n - 1);
        while (s[i]) i = (i + 1) & (n - 1);
        s[i] = id;
    }
    ts__free(p->slots, p->n_slots * sizeof *p->slots);
    p->slots = s;
    p->n_slots = n;
    return TS_OK;
}

/* The pool's own hash (slots only: never stored outside the pool, never
 * printed). Strings of 16 bytes or more, the long kernel names, HLO text and
 * stat values the binary readers intern, take 16 bytes a step through one
 * 64x64->128-bit multiply (as wyhash does) instead of ts__hash_bytes'
 * finalizer per 8 bytes; shorter ones go to ts__hash_bytes. */
static inline uint64_t mum(uint64_t a, uint64_t b)
{
    unsigned __int128 r = (unsigned __int128)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static uint32_t pool_hash(const char *s, size_t n)
{
    if (n < 16) return (uint32_t)ts__hash_bytes(s, n);
    const uint64_t k0 = 0xa0761d6478bd642fULL, k1 = 0xe7037ed1a0b428dbULL, k2 = 0x8ebc6af09c88c6e3ULL;
    uint64_t seed = (uint64_t)n * k0, a, b;
    const char *p = s, *end = s + n;
    while (end - p > 16) {
        memcpy(&a, p, 8);
        memcpy(&b, p + 8, 8);
        seed = mum(a ^ k1, b ^ seed);
        p += 16;
    }
    memcpy(&a, end - 16, 8);   /* the last 16 bytes (they may overlap the ones before) */
    memcpy(&b, end - 8, 8);
    uint64_t h = mum(mum(a ^ k1, b ^ seed) ^ k2, (uint64_t)n ^ k0);
    return (uint32_t)(h ^ (h >> 32));
}

uint32_t ts__str_find(const ts_strpool *p, const char *s, size_t n)
{
    if (n == 0) return 0;
    uint32_t h = pool_hash(s, n);
    for (uint32_t i = h & (p->n_slots - 1);; i = (i + 1) & (p->n_slots - 1)) {
        uint32_t id = p->slots[i];
        if (!id) return 0;
        if (p->hashes[id] == h && p->len[id] == n && memcmp(p->bytes + p->off[id], s, n) == 0)
            return id;
    }
}

uint32_t ts__str_intern(ts_strpool *p, const char *s, size_t n)
{
    if (n == 0 || !p->slots) return 0;
    uint32_t h = pool_hash(s, n);
    uint32_t i = h & (p->n_slots - 1);
    for (;; i = (i + 1) & (p->n_slots - 1)) {
        uint32_t id = p->slots[i];
        if (!id) break;
        if (p->hashes[id] == h && p->len[id] == n && memcmp(p->bytes + p->off[id], s, n) == 0)
            return id;
    }
    if (n >= UINT32_MAX - p->n_bytes) return 0;
    if (p->n_bytes + n + 1 > p->cap_bytes) {
        size_t nc = p->cap_bytes * 2;
        while (nc < p->n_bytes + n + 1) nc *= 2;
        char *nb = ts__realloc(p->bytes, p->cap_bytes, nc);
        if (!nb) return 0;
        p->bytes = nb;
        p->cap_bytes = nc;
    }
    if (p->n == p->cap) {
        uint32_t c1 = p->cap, c2 = p->cap, c3 = p->cap;
        if (ts__grow((void **)&p->off, &c1, sizeof *p->off, p->n + 1) ||
            ts__grow((void **)&p->len, &c2, sizeof *p->len, p->n + 1) ||
            ts__grow((void **)&p->hashes, &c3, sizeof *p->hashes, p->n + 1))
            return 0;   /* a partial grow leaves larger arrays, which is harmless */
        p->cap = c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3);
    }
    uint32_t id = p->n++;
    memcpy(p->bytes + p->n_bytes, s, n);
    p->bytes[p->n_bytes + n] = 0;
    p->off[id] = (uint32_t)p->n_bytes;
    p->len[id] = (uint32_t)n;
    p->hashes[id] = h;
    p->n_bytes += n + 1;
    p->slots[i] = id;
    if (p->n * 2 > p->n_slots && resize_slots(p) != TS_OK) return 0;
    return id;
}
