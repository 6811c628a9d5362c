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

bool ts__pb_quick_varint_long(const unsigned char **pp, const unsigned char *end, const unsigned char *lim,
                              uint64_t *out)
{
    const unsigned char *p = *pp;
    if (lim - p >= 8) {   /* up to 8 bytes from one load (past end is fine: n is checked) */
        uint64_t w;
        __builtin_memcpy(&w, p, 8);
        uint64_t stops = ~w & 0x8080808080808080ULL;
        unsigned n = stops ? (unsigned)__builtin_ctzll(stops) / 8 + 1 : 9;
        if (n <= 8) {
            if (n > (size_t)(end - p)) return false;
            if (n < 8) w &= (1ULL << (8 * n)) - 1;
            w = (w & 0x007f007f007f007fULL) | (w & 0x7f007f007f007f00ULL) >> 1;
            w = (w & 0x00003fff00003fffULL) | (w & 0x3fff00003fff0000ULL) >> 2;
            *out = (w & 0x000000000fffffffULL) | (w & 0x0fffffff00000000ULL) >> 4;
            *pp = p + n;
            return true;
        }
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70 && p < end; shift += 7) {
        unsigned byte = *p++;
        v |= (uint64_t)(byte & 0x7f) << (shift < 64 ? shift : 63);
        if (byte < 0x80) { *out = v; *pp = p; return true; }
    }
    return false;
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
