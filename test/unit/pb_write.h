/* pb_write.h - protobuf wire-format writing for the unit tests that build
 * hand-made protobuf inputs field by field (test_xplane.c, test_chakra.c).
 * Not for: the library (it only reads protobuf, src/ingest/protobuf.h).
 */
#ifndef TS_TEST_PB_WRITE_H
#define TS_TEST_PB_WRITE_H

#include <stdint.h>
#include <string.h>

typedef struct wb { unsigned char b[4096]; size_t n; } wb;

static inline void put_varint(wb *w, uint64_t v)
{
    do { w->b[w->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)); v >>= 7; } while (v);
}
static inline void put_int(wb *w, uint32_t num, uint64_t v) { put_varint(w, (uint64_t)num << 3); put_varint(w, v); }
static inline void put_bytes(wb *w, uint32_t num, const void *p, size_t n)
{
    put_varint(w, (uint64_t)num << 3 | 2);
    put_varint(w, n);
    memcpy(w->b + w->n, p, n);
    w->n += n;
}
static inline void put_msg(wb *w, uint32_t num, const wb *m) { put_bytes(w, num, m->b, m->n); }
static inline void put_str(wb *w, uint32_t num, const char *s) { put_bytes(w, num, s, strlen(s)); }

#endif
