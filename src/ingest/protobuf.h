/* protobuf.h - a small reader of the protocol buffers wire format, for the
 * binary readers that have no other dependency to lean on (TensorFlow's
 * XPlane in xplane.c, Chakra execution traces in chakra.c).
 *
 * Not for: schemas. A cursor walks one message's fields in order; the caller
 * knows what each field number means. Every length is checked against the
 * bytes left, so damaged input ends in an error with its byte offset (never
 * a read past the buffer). Varints longer than 10 bytes, groups (wire types
 * 3 and 4) and unknown wire types are errors.
 *
 * A cursor is two pointers and the input it belongs to (ts_pb_input: the
 * whole buffer, and the first error met by any of its cursors), so a
 * submessage's cursor costs three words and errors need no gathering: a
 * failing cursor jumps to its end and the input keeps the first problem.
 */
#ifndef TS_INGEST_PROTOBUF_H
#define TS_INGEST_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ts_pb_input {
    const unsigned char *base, *lim;   /* the whole input */
    const char *err;                   /* first problem, NULL = none */
    size_t      err_at;                /* its byte offset in the whole input */
} ts_pb_input;

typedef struct ts_pb {
    const unsigned char *p, *end;   /* the message's remaining bytes */
    ts_pb_input *in;
} ts_pb;

typedef struct ts_pb_field {
    uint32_t num;        /* field number */
    uint8_t  wire;       /* 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
    uint64_t u;          /* varint / fixed value */
    ts_pb    sub;        /* wire 2: a cursor over the bytes (a message, string or packed values) */
} ts_pb_field;

/* A cursor over data[0..n); in records the whole input and its first error. */
static inline ts_pb ts__pb_open(ts_pb_input *in, const void *data, size_t n)
{
    in->base = (const unsigned char *)data;
    in->lim = in->base + n;
    in->err = NULL;
    in->err_at = 0;
    ts_pb c = {in->base, in->lim, in};
    return c;
}
/* Out-of-line parts of ts__pb_next (protobuf.c): multi-byte varints, errors,
 * fixed-size and length-delimited values. */
bool ts__pb_varint_slow(ts_pb *c, uint64_t *out);
bool ts__pb_value_slow(ts_pb *c, ts_pb_field *f, const unsigned char *at);
bool ts__pb_fail(ts_pb *c, const unsigned char *at, const char *what);

/* Up to 8 bytes of a varint from one load, when 8 bytes of the input are
 * there (past the message's end is fine: the length is checked after). */
static inline bool ts__pb_varint(ts_pb *c, uint64_t *out)
{
    const unsigned char *p = c->p;
    if (__builtin_expect(p < c->end && *p < 0x80, 1)) { *out = *p; c->p = p + 1; return true; }
    if (c->end - p >= 2 && p[1] < 0x80) {   /* two bytes: ids and sizes below 16384 */
        *out = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        c->p = p + 2;
        return true;
    }
    if (c->in->lim - p >= 8 && p < c->end) {
        uint64_t w;
        __builtin_memcpy(&w, p, 8);
        uint64_t stops = ~w & 0x8080808080808080ULL;
        if (stops) {
            unsigned n = (unsigned)__builtin_ctzll(stops) / 8 + 1;
            if (n > (size_t)(c->end - p)) return ts__pb_fail(c, c->end, "protobuf varint cut short");
            if (n < 8) w &= (1ULL << (8 * n)) - 1;   /* this varint's bytes only */
            w = (w & 0x007f007f007f007fULL) | (w & 0x7f007f007f007f00ULL) >> 1;   /* 14-bit groups */
            w = (w & 0x00003fff00003fffULL) | (w & 0x3fff00003fff0000ULL) >> 2;   /* 28-bit groups */
            *out = (w & 0x000000000fffffffULL) | (w & 0x0fffffff00000000ULL) >> 4;
            c->p = p + n;
            return true;
        }
    }
    return ts__pb_varint_slow(c, out);
}

/* The next field; false at the end of the message or on an error (the
 * input's err set). Inline: a decoder spends most of its time here. */
static inline bool ts__pb_next(ts_pb *c, ts_pb_field *f)
{
    const unsigned char *at = c->p;
    if (at >= c->end) return false;
    unsigned key = *at;
    if (__builtin_expect(key >= 8 && key < 0x80, 1)) {   /* fields 1-15: a one-byte key */
        c->p = at + 1;
        f->num = key >> 3;
        f->wire = (uint8_t)(key & 7);
        if (f->wire == 0) return ts__pb_varint(c, &f->u);
        /* a submessage or string whose one-byte length fits: no call */
        const unsigned char *p = at + 1;
        if (f->wire == 2 && p < c->end && *p < 0x80 && (ptrdiff_t)*p < c->end - p) {
            size_t n = *p++;
            f->sub = (ts_pb){p, p + n, c->in};
            c->p = p + n;
            return true;
        }
        return ts__pb_value_slow(c, f, at);
    }
    uint64_t k;
    if (!ts__pb_varint(c, &k)) return false;
    f->num = k >> 35 ? 0 : (uint32_t)(k >> 3);   /* past 2^29: 0, the slow path's error */
    f->wire = (uint8_t)(k & 7);
    if (f->wire == 0 && f->num != 0) return ts__pb_varint(c, &f->u);
    return ts__pb_value_slow(c, f, at);
}
static inline size_t ts__pb_len(const ts_pb *c) { return (size_t)(c->end - c->p); }

/* ---- the same read for a decoder's hot loop, with nothing in memory ----
 * ts__pb_key reads the field at *pp of a message ending at `end` and returns
 * its key (num << 3 | wire; fields past 15 read as 0x80 | wire, which no
 * one-byte key equals), moving *pp past it: a length-delimited value's bytes
 * are [*b, *pp), a varint's or fixed-size value's in *u. It returns 0 at
 * the message's end or on damaged bytes (in->err and its offset set, as
 * ts__pb_next sets them). Why beside ts__pb_next: the key comes back in a
 * register and the loop's two pointers stay in registers, where
 * ts_pb_field's num and wire go through memory and are read back as one
 * word (no faster by itself on the XPlane sample; what its loops build on).
 * The usual encoding (a one-byte key, varints of at most 10 bytes, lengths
 * inside the message) is read inline; anything else goes to the cursor. */
#define TS_PB_INLINE static inline __attribute__((always_inline))

/* ts__pb_quick_varint past two bytes (protobuf.c). */
bool ts__pb_quick_varint_long(const unsigned char **pp, const unsigned char *end, const unsigned char *lim,
                              uint64_t *out);

/* A varint inside [*pp, end), as ts__pb_varint_slow reads it (up to 10
 * bytes); false (nothing moved) when it runs past end or is longer. One and
 * two bytes (ids, lengths and sizes below 16384) inline; lim is the end of
 * the whole input, which longer ones may load up to. */
TS_PB_INLINE bool ts__pb_quick_varint(const unsigned char **pp, const unsigned char *end, const unsigned char *lim,
                                      uint64_t *out)
{
    const unsigned char *p = *pp;
    if (__builtin_expect(p < end && *p < 0x80, 1)) { *out = *p; *pp = p + 1; return true; }
    if (end - p >= 2 && p[1] < 0x80) {
        *out = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        *pp = p + 2;
        return true;
    }
    return ts__pb_quick_varint_long(pp, end, lim, out);
}

/* The usual encoding only: 0 (nothing moved) for anything else. */
TS_PB_INLINE unsigned ts__pb_quick(const unsigned char **pp, const unsigned char *end, const unsigned char *lim,
                                   const unsigned char **b, uint64_t *u)
{
    const unsigned char *p = *pp;
    unsigned key = *p++;
    uint64_t n;
    if (key < 8 || key >= 0x80) return 0;
    switch (key & 7) {
    case 0:
        if (!ts__pb_quick_varint(&p, end, lim, u)) return 0;
        break;
    case 2:
        if (!ts__pb_quick_varint(&p, end, lim, &n) || n > (uint64_t)(end - p)) return 0;
        *b = p;
        p += n;
        break;
    case 1:
    case 5:
        n = (key & 7) == 1 ? 8 : 4;
        if ((uint64_t)(end - p) < n) return 0;
        *u = 0;
        for (unsigned i = 0; i < n; i++) *u |= (uint64_t)p[i] << (8 * i);
        p += n;
        break;
    default: return 0;
    }
    *pp = p;
    return key;
}

/* ts__pb_key's way for what ts__pb_quick leaves: the cursor (protobuf.c). */
unsigned ts__pb_step(ts_pb_input *in, const unsigned char **pp, const unsigned char *end, const unsigned char **b,
                     uint64_t *u);

TS_PB_INLINE unsigned ts__pb_key(ts_pb_input *in, const unsigned char **pp, const unsigned char *end,
                                  const unsigned char **b, uint64_t *u)
{
    if (*pp >= end) return 0;
    unsigned key = ts__pb_quick(pp, end, in->lim, b, u);
    return key ? key : ts__pb_step(in, pp, end, b, u);
}
static inline size_t ts__pb_offset(const ts_pb *c, const unsigned char *at) { return (size_t)(at - c->in->base); }
static inline double ts__pb_double(uint64_t u) { double d; __builtin_memcpy(&d, &u, 8); return d; }

#endif
