/* protobuf.c - the wire-format cursor of protobuf.h. O(bytes), no allocation. */
#include "ingest/protobuf.h"

bool ts__pb_fail(ts_pb *c, const unsigned char *at, const char *what)
{
    if (!c->in->err) { c->in->err = what; c->in->err_at = (size_t)(at - c->in->base); }
    c->p = c->end;
    return false;
}

/* Varints the inline path left: near the input's end, or of 9-10 bytes. */
bool ts__pb_varint_slow(ts_pb *c, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (c->p >= c->end) return ts__pb_fail(c, c->p, "protobuf varint cut short");
        unsigned char b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 63);
        if (!(b & 0x80)) { *out = v; return true; }
    }
    return ts__pb_fail(c, c->p, "protobuf varint longer than 10 bytes");
}

/* Everything but a varint field with a valid key (ts__pb_next's fast path). */
bool ts__pb_value_slow(ts_pb *c, ts_pb_field *f, const unsigned char *at)
{
    if (f->num == 0) return ts__pb_fail(c, at, "protobuf field number 0 or past 2^29");
    switch (f->wire) {
    case 0: return ts__pb_varint(c, &f->u);
    case 1:
    case 5: {
        size_t n = f->wire == 1 ? 8 : 4;
        if (ts__pb_len(c) < n) return ts__pb_fail(c, at, "protobuf fixed-size value cut short");
        f->u = 0;
        for (size_t i = 0; i < n; i++) f->u |= (uint64_t)c->p[i] << (8 * i);
        c->p += n;
        return true;
    }
    case 2: {
        uint64_t n;
        if (!ts__pb_varint(c, &n)) return false;
        if (n > ts__pb_len(c)) return ts__pb_fail(c, at, "protobuf length past the end of its message");
        f->sub = (ts_pb){c->p, c->p + n, c->in};
        c->p += n;
        return true;
    }
    default: return ts__pb_fail(c, at, "protobuf wire type 3, 4, 6 or 7 (groups or not protobuf)");
    }
}

unsigned ts__pb_step(ts_pb_input *in, const unsigned char **pp, const unsigned char *end, const unsigned char **b,
                     uint64_t *u)
{
    ts_pb c = {*pp, end, in};
    ts_pb_field f;
    if (!ts__pb_next(&c, &f)) { *pp = end; return 0; }
    *pp = c.p;
    if (f.wire == 2) *b = f.sub.p;
    else *u = f.u;
    return (f.num > 15 ? 0x80 : f.num << 3) | f.wire;
}
