/* protobuf.c - the wire-format cursor of protobuf.h. O(bytes), no allocation. */
#include "ingest/protobuf.h"

static bool fail(ts_pb *c, const unsigned char *at, const char *what)
{
    if (!c->err) { c->err = what; c->err_at = (size_t)(at - c->base); }
    c->p = c->end;
    return false;
}

bool ts__pb_varint_slow(ts_pb *c, uint64_t *out)
{
    uint64_t v = 0;
    if (c->end - c->p >= 8) {   /* up to 8 bytes from one load: no bounds check per byte */
        uint64_t w;
        __builtin_memcpy(&w, c->p, 8);
        uint64_t stops = ~w & 0x8080808080808080ULL;
        if (stops) {
            unsigned n = (unsigned)__builtin_ctzll(stops) / 8 + 1;
            if (n < 8) w &= (1ULL << (8 * n)) - 1;   /* the bytes of this varint only */
            v = (w & 0x7f) | (w & 0x7f00) >> 1 | (w & 0x7f0000) >> 2 | (w & 0x7f000000) >> 3 |
                (w & 0x7f00000000ULL) >> 4 | (w & 0x7f0000000000ULL) >> 5 | (w & 0x7f000000000000ULL) >> 6 |
                (w & 0x7f00000000000000ULL) >> 7;
            c->p += n;
            *out = v;
            return true;
        }
    }
    for (int shift = 0; shift < 70; shift += 7) {
        if (c->p >= c->end) return fail(c, c->p, "protobuf varint cut short");
        unsigned char b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 63);
        if (!(b & 0x80)) { *out = v; return true; }
    }
    return fail(c, c->p, "protobuf varint longer than 10 bytes");
}

/* Everything but a varint field with a valid key (ts__pb_next's fast path). */
bool ts__pb_value_slow(ts_pb *c, ts_pb_field *f, const unsigned char *at)
{
    if (f->num == 0) return fail(c, at, "protobuf field number 0 or past 2^29");
    switch (f->wire) {
    case 0: return ts__pb_varint(c, &f->u);
    case 1:
    case 5: {
        size_t n = f->wire == 1 ? 8 : 4;
        if (ts__pb_len(c) < n) return fail(c, at, "protobuf fixed-size value cut short");
        f->u = 0;
        for (size_t i = 0; i < n; i++) f->u |= (uint64_t)c->p[i] << (8 * i);
        c->p += n;
        return true;
    }
    case 2: {
        uint64_t n;
        if (!ts__pb_varint(c, &n)) return false;
        if (n > ts__pb_len(c)) return fail(c, at, "protobuf length past the end of its message");
        f->sub = (ts_pb){c->p, c->p + n, c->base, NULL, 0};
        c->p += n;
        return true;
    }
    default: return fail(c, at, "protobuf wire type 3, 4, 6 or 7 (groups or not protobuf)");
    }
}
