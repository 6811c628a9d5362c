/* icache.h - a small direct-mapped cache in front of the rank's string pool,
 * for binary readers that intern the same few strings over and over (an
 * attribute's key on every node, a stat's value on every event).
 *
 * Not for: strings that outlive the input (the cache keeps pointers into the
 * bytes being read) or a pool other than the rank's. A hit returns the id
 * the pool gave the same bytes before, so ids and their order are exactly
 * those of calling ts__rank_intern each time; a hit costs a few loads and
 * one compare instead of a hash over the whole string and a probe.
 */
#ifndef TS_INGEST_ICACHE_H
#define TS_INGEST_ICACHE_H

#include <string.h>

#include "trace/model.h"

enum { TS_ICACHE_SLOTS = 1024 };

typedef struct ts_icache {
    const char *s[TS_ICACHE_SLOTS];   /* the bytes last interned in the slot (in the input) */
    uint32_t    n[TS_ICACHE_SLOTS];
    uint32_t    id[TS_ICACHE_SLOTS];  /* 0 = empty */
} ts_icache;

/* The slot: from the length and the first and last bytes. */
static inline uint32_t ts__icache_slot(const char *s, size_t n)
{
    uint64_t a = 0, b = 0;
    if (n >= 8) { memcpy(&a, s, 8); memcpy(&b, s + n - 8, 8); }
    else if (n >= 4) { uint32_t x, y; memcpy(&x, s, 4); memcpy(&y, s + n - 4, 4); a = x; b = y; }
    else if (n) a = (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[n / 2] << 8 | (uint64_t)(unsigned char)s[n - 1] << 16;
    uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ULL) ^ n) * 0x9fb21c651e98df25ULL;
    return (uint32_t)(h >> 54);   /* 10 bits: TS_ICACHE_SLOTS */
}

static inline uint32_t ts__icache_intern(ts_icache *c, ts_rank *r, const char *s, size_t n)
{
    uint32_t k = ts__icache_slot(s, n);
    if (c->id[k] && c->n[k] == n && memcmp(c->s[k], s, n) == 0) return c->id[k];
    uint32_t id = ts__rank_intern(r, s, n);
    c->s[k] = s;
    c->n[k] = (uint32_t)n;
    c->id[k] = id;
    return id;
}

#endif
