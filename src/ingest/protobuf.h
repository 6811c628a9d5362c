/* protobuf.h - a small reader of the protocol buffers wire format, for the
 * binary readers that have no other dependency to lean on (TensorFlow's
 * XPlane in xplane.c; Chakra execution traces would use it too).
 *
 * Not for: schemas. A cursor walks one message's fields in order; the caller
 * knows what each field number means. Every length is checked against the
 * bytes left, so damaged input ends in an error with its byte offset (never
 * a read past the buffer). Varints longer than 10 bytes, groups (wire types
 * 3 and 4) and unknown wire types are errors.
 */
#ifndef TS_INGEST_PROTOBUF_H
#define TS_INGEST_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ts_pb {
    const unsigned char *p, *end;   /* the message's remaining bytes */
    const unsigned char *base;      /* start of the whole input (for byte offsets) */
    const char *err;                /* first problem, NULL = none */
    size_t      err_at;             /* its byte offset in the whole input */
} ts_pb;

typedef struct ts_pb_field {
    uint32_t num;        /* field number */
    uint8_t  wire;       /* 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
    uint64_t u;          /* varint / fixed value */
    ts_pb    sub;        /* wire 2: a cursor over the bytes (a message, string or packed values) */
} ts_pb_field;

static inline ts_pb ts__pb_open(const void *data, size_t n)
{
    ts_pb c = {(const unsigned char *)data, (const unsigned char *)data + n, (const unsigned char *)data, NULL, 0};
    return c;
}
/* Out-of-line parts of ts__pb_next (protobuf.c): multi-byte varints, errors,
 * fixed-size and length-delimited values. */
bool ts__pb_varint_slow(ts_pb *c, uint64_t *out);
bool ts__pb_value_slow(ts_pb *c, ts_pb_field *f, const unsigned char *at);

static inline bool ts__pb_varint(ts_pb *c, uint64_t *out)
{
    if (c->p < c->end && *c->p < 0x80) { *out = *c->p++; return true; }   /* one byte: most keys and small values */
    if (c->end - c->p >= 2 && c->p[1] < 0x80) {   /* two bytes: ids and sizes below 16384 */
        *out = (uint64_t)(c->p[0] & 0x7f) | (uint64_t)c->p[1] << 7;
        c->p += 2;
        return true;
    }
    if (c->end - c->p >= 3 && c->p[2] < 0x80) {   /* three: ids below 2^21 */
        *out = (uint64_t)(c->p[0] & 0x7f) | (uint64_t)(c->p[1] & 0x7f) << 7 | (uint64_t)c->p[2] << 14;
        c->p += 3;
        return true;
    }
    return ts__pb_varint_slow(c, out);
}

/* The next field; false at the end of the message or on an error (c->err
 * set). Inline: a decoder spends most of its time here. */
static inline bool ts__pb_next(ts_pb *c, ts_pb_field *f)
{
    if (c->err || c->p >= c->end) return false;
    const unsigned char *at = c->p;
    uint64_t key;
    if (!ts__pb_varint(c, &key)) return false;
    f->num = key >> 35 ? 0 : (uint32_t)(key >> 3);   /* past 2^29: 0, the slow path's error */
    f->wire = (uint8_t)(key & 7);
    if (f->wire == 0 && f->num != 0) return ts__pb_varint(c, &f->u);
    /* a submessage or string whose one-byte length fits: no call */
    if (f->wire == 2 && f->num != 0 && c->p < c->end && *c->p < 0x80 && (size_t)*c->p < (size_t)(c->end - c->p)) {
        size_t n = *c->p++;
        f->sub = (ts_pb){c->p, c->p + n, c->base, NULL, 0};
        c->p += n;
        return true;
    }
    return ts__pb_value_slow(c, f, at);
}
static inline size_t ts__pb_len(const ts_pb *c) { return (size_t)(c->end - c->p); }
static inline double ts__pb_double(uint64_t u) { double d; __builtin_memcpy(&d, &u, 8); return d; }

#endif
