/* pickle.c - the strict pickle reader of pickle.h: the opcode stream of
 * Python's pickle protocols 2-5 (the binary opcodes of 0 and 1 too) run on
 * a value stack, a mark stack and a memo, as pickle.py's Unpickler runs them,
 * except that nothing names code: every opcode that would look up a global or
 * call one is an error. One pass, O(bytes); every length and index is checked
 * against the bytes left, the stack and the memo before it is used.
 */
#include "ingest/pickle.h"

#include <stdio.h>
#include <string.h>

enum { PK_MAX_STACK = 1 << 26, PK_MAX_MEMO = 1 << 26 };

typedef struct pk {
    ts_pickle *p;
    const char *name;
    const unsigned char *d;
    size_t n, pos;          /* bytes, next byte */
    size_t op_at;           /* offset of the opcode being run (errors) */
    ts_pv **stack;
    uint32_t n_stack, cap_stack;
    uint32_t *marks;
    uint32_t n_marks, cap_marks;
    ts_pv **memo;
    uint32_t cap_memo, n_memo_set;
    ts_error *err;
    ts_pv *slab, *slab_end;  /* values are cut from arena blocks of PK_SLAB */
    ts_pv *none, *bools[2];  /* immutable values made once per pickle */
    ts_pv *small[256];       /* ints 0-255 (BININT1's range), made once each */
    ts_pv **ints;            /* PK_INTS: the int value last made in each slot (sizes and
                              * addresses repeat: an allocation's, its free's) */
} pk;

enum { PK_SLAB = 1024, PK_INTS = 2048 };

static int fail(pk *k, const char *what)
{
    return ts__error(k->err, TS_EFORMAT, "%s: byte %zu: %s", k->name, k->op_at, what);
}

static ts_pv *new_pv_slow(pk *k, ts_pv_kind kind)
{
    ts_pv *b = ts__arena_alloc(&k->p->arena, PK_SLAB * sizeof *b);
    if (!b) return NULL;
    k->slab = b + 1;
    k->slab_end = b + PK_SLAB;
    *b = (ts_pv){.kind = (uint8_t)kind};
    return b;
}

static inline ts_pv *new_pv(pk *k, ts_pv_kind kind)
{
    if (TS_UNLIKELY(k->slab == k->slab_end)) return new_pv_slow(k, kind);
    ts_pv *v = k->slab++;
    *v = (ts_pv){.kind = (uint8_t)kind};
    return v;
}

static int push_slow(pk *k, ts_pv *v)
{
    if (!v) return ts__error(k->err, TS_ENOMEM, "%s: out of memory", k->name);
    if (k->cap_stack >= PK_MAX_STACK) return fail(k, "pickle stack deeper than 2^26 values");
    if (ts__grow((void **)&k->stack, &k->cap_stack, sizeof *k->stack, (size_t)k->n_stack + 1))
        return ts__error(k->err, TS_ENOMEM, "%s: out of memory", k->name);
    k->stack[k->n_stack++] = v;
    return TS_OK;
}

static inline int push(pk *k, ts_pv *v)
{
    if (TS_UNLIKELY(!v || k->n_stack == k->cap_stack)) return push_slow(k, v);
    k->stack[k->n_stack++] = v;
    return TS_OK;
}

/* An int value: 0-255 shared (they are immutable, as Python's small ints). */
static inline ts_pv *int_pv(pk *k, int64_t i)
{
    if ((uint64_t)i < 256) {
        ts_pv *v = k->small[i];
        if (TS_LIKELY(v != NULL)) return v;
        if ((v = new_pv(k, TS_PV_INT))) { v->u.i = i; k->small[i] = v; }
        return v;
    }
    ts_pv **slot = k->ints ? &k->ints[(uint64_t)i * 0x9e3779b97f4a7c15ULL >> 53] : NULL;
    if (slot && *slot && (*slot)->u.i == i) return *slot;
    ts_pv *v = new_pv(k, TS_PV_INT);
    if (v) {
        v->u.i = i;
        if (slot) *slot = v;
    }
    return v;
}

static inline int need(pk *k, size_t bytes)
{
    return bytes <= k->n - k->pos ? TS_OK : fail(k, "pickle cut short");
}

static uint64_t le(const unsigned char *b, int n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n == 4) { uint32_t w; memcpy(&w, b, 4); return w; }
    if (n == 8) { uint64_t w; memcpy(&w, b, 8); return w; }
#endif
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | b[i];
    return v;
}

/* Append to a container being built, growing its arena array by doubling. */
static int add_item(pk *k, ts_pv *c, ts_pv *item)
{
    uint32_t slots = c->slots;
    if (slots == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 8;
        if (cap < c->cap) return fail(k, "container too large");
        ts_pv **v = ts__arena_alloc(&k->p->arena, (size_t)cap * sizeof *v);
        if (!v) return ts__error(k->err, TS_ENOMEM, "%s: out of memory", k->name);
        if (slots) memcpy(v, c->u.v, slots * sizeof *v);
        c->u.v = v;
        c->cap = cap;
    }
    c->u.v[slots] = item;
    c->slots = slots + 1;
    c->n = c->kind == TS_PV_DICT ? c->slots / 2 : c->slots;
    return TS_OK;
}

static int pop_mark(pk *k, uint32_t *from)
{
    if (k->n_marks == 0) return fail(k, "pickle opcode needs a MARK and there is none");
    *from = k->marks[--k->n_marks];
    /* values below the mark were popped since it was set (Python: "unpickling
     * stack underflow"); taking it would reach past the stack's top */
    if (*from > k->n_stack) return fail(k, "pickle MARK above the stack's top (values below it were popped)");
    return TS_OK;
}

/* Items stack[from..] into container c (dict: key/value pairs), popped:
 * room for all of them at once (an empty container gets exactly that, as
 * its one SETITEMS or APPENDS usually brings all it will hold). */
static int fill(pk *k, ts_pv *c, uint32_t from)
{
    if (from > k->n_stack) return fail(k, "pickle MARK above the stack's top (values below it were popped)");
    uint32_t m = k->n_stack - from;
    if (c->kind == TS_PV_DICT && m % 2) return fail(k, "odd number of items for a dict");
    if (m == 1) {
        int rc = add_item(k, c, k->stack[from]);
        if (!rc) k->n_stack = from;
        return rc;
    }
    if (m == 0) return TS_OK;
    uint64_t need = (uint64_t)c->slots + m;
    if (need > UINT32_MAX) return fail(k, "container too large");
    if (need > c->cap) {
        uint64_t cap = c->cap ? (uint64_t)c->cap * 2 : 0;
        if (cap < need) cap = need;
        if (cap > UINT32_MAX) cap = need;
        ts_pv **v = ts__arena_alloc(&k->p->arena, (size_t)cap * sizeof *v);
        if (!v) return ts__error(k->err, TS_ENOMEM, "%s: out of memory", k->name);
        if (c->slots) memcpy(v, c->u.v, c->slots * sizeof *v);
        c->u.v = v;
        c->cap = (uint32_t)cap;
    }
    memcpy(c->u.v + c->slots, k->stack + from, (size_t)m * sizeof *c->u.v);
    c->slots += m;
    c->n = c->kind == TS_PV_DICT ? c->slots / 2 : c->slots;
    k->n_stack = from;
    return TS_OK;
}

static int string_op(pk *k, int len_bytes, ts_pv_kind kind)
{
    int rc = need(k, (size_t)len_bytes);
    if (rc) return rc;
    uint64_t len = le(k->d + k->pos, len_bytes);
    k->pos += (size_t)len_bytes;
    if ((rc = need(k, len)) != TS_OK) return rc;
    if (len > UINT32_MAX) return fail(k, "string longer than 4 GiB");
    ts_pv *v = new_pv(k, kind);
    if (v) {
        v->n = (uint32_t)len;
        v->u.s = ts__arena_strndup(&k->p->arena, (const char *)k->d + k->pos, (size_t)len);
        if (!v->u.s) v = NULL;
    }
    k->pos += (size_t)len;
    return push(k, v);
}

static inline int int_op(pk *k, int bytes, bool is_signed)
{
    int rc = need(k, (size_t)bytes);
    if (rc) return rc;
    uint64_t u = le(k->d + k->pos, bytes);
    k->pos += (size_t)bytes;
    return push(k, int_pv(k, is_signed && bytes == 4 ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u));
}

/* LONG1/LONG4: little-endian two's complement of n bytes; past 64 bits only
 * when the extra bytes are sign extension. */
static inline int long_op(pk *k, int len_bytes)
{
    int rc = need(k, (size_t)len_bytes);
    if (rc) return rc;
    uint64_t n = le(k->d + k->pos, len_bytes);
    k->pos += (size_t)len_bytes;
    if ((rc = need(k, n)) != TS_OK) return rc;
    const unsigned char *b = k->d + k->pos;
    k->pos += (size_t)n;
    if (n >= 1 && n <= 8) {   /* the usual case: sign-extend n bytes */
        uint64_t u;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if ((size_t)(k->d + k->n - b) >= 8) {   /* one load when 8 bytes are there */
            memcpy(&u, b, 8);
            if (n < 8) u &= ((uint64_t)1 << (8 * n)) - 1;
        } else
#endif
            u = le(b, (int)n);
        unsigned sh = (unsigned)(64 - 8 * n);
        return push(k, int_pv(k, sh ? (int64_t)(u << sh) >> sh : (int64_t)u));
    }
    bool neg = n && (b[n - 1] & 0x80);
    for (uint64_t i = 8; i < n; i++)
        if (b[i] != (neg ? 0xff : 0x00)) return fail(k, "integer wider than 64 bits");
    uint64_t u = neg ? ~(uint64_t)0 : 0;
    for (uint64_t i = 0; i < n && i < 8; i++) u = (u & ~((uint64_t)0xff << (8 * i))) | (uint64_t)b[i] << (8 * i);
    if (n > 8 && ((u >> 63) != 0) != neg) return fail(k, "integer wider than 64 bits");
    return push(k, int_pv(k, (int64_t)u));
}

static int memo_put(pk *k, uint64_t idx)
{
    if (k->n_stack == 0) return fail(k, "memo store with an empty stack");
    if (idx >= PK_MAX_MEMO) return fail(k, "memo index past 2^26");
    if (idx >= k->cap_memo) {
        uint32_t old = k->cap_memo;
        if (ts__grow((void **)&k->memo, &k->cap_memo, sizeof *k->memo, (size_t)idx + 1))
            return ts__error(k->err, TS_ENOMEM, "%s: out of memory", k->name);
        memset(k->memo + old, 0, (k->cap_memo - old) * sizeof *k->memo);
    }
    if (!k->memo[idx]) k->n_memo_set++;
    k->memo[idx] = k->stack[k->n_stack - 1];
    return TS_OK;
}

static int memo_get(pk *k, uint64_t idx)
{
    if (idx >= k->cap_memo || !k->memo[idx]) return fail(k, "memo fetch of an index never stored");
    return push(k, k->memo[idx]);
}

/* Read a newline-terminated text argument (GLOBAL's module and name). */
static const char *text_line(pk *k, size_t *len)
{
    const unsigned char *nl = memchr(k->d + k->pos, '\n', k->n - k->pos);
    if (!nl) return NULL;
    const char *s = (const char *)k->d + k->pos;
    *len = (size_t)(nl - (k->d + k->pos));
    k->pos += *len + 1;
    return s;
}

static int refuse_global(pk *k, const char *mod, size_t mn, const char *name, size_t nn)
{
    char msg[256];
    snprintf(msg, sizeof msg, "pickle global '%.*s.%.*s' is not one this reader knows; it runs no code",
             (int)(mn > 80 ? 80 : mn), mod, (int)(nn > 80 ? 80 : nn), name);
    return fail(k, msg);
}

static int op_global(pk *k, bool stacked)
{
    if (stacked) {
        if (k->n_stack < 2) return fail(k, "STACK_GLOBAL with fewer than two values");
        const ts_pv *m = k->stack[k->n_stack - 2], *nm = k->stack[k->n_stack - 1];
        if (m->kind != TS_PV_STR || nm->kind != TS_PV_STR) return fail(k, "STACK_GLOBAL of non-strings");
        return refuse_global(k, m->u.s, m->n, nm->u.s, nm->n);
    }
    size_t mn, nn;
    const char *mod = text_line(k, &mn), *name = mod ? text_line(k, &nn) : NULL;
    if (!name) return fail(k, "GLOBAL without its module and name lines");
    return refuse_global(k, mod, mn, name, nn);
}

static int make_tuple(pk *k, uint32_t from)
{
    ts_pv *t = new_pv(k, TS_PV_TUPLE);
    if (!t) return push(k, NULL);
    int rc = fill(k, t, from);
    return rc ? rc : push(k, t);
}

static int tuple_n(pk *k, uint32_t m)
{
    if (k->n_stack < m) return fail(k, "tuple of more values than the stack holds");
    return make_tuple(k, k->n_stack - m);
}

/* APPEND/APPENDS/SETITEM/SETITEMS/ADDITEMS: stack[from..] into the container below. */
static int into_below(pk *k, uint32_t from, ts_pv_kind want)
{
    if (from == 0) return fail(k, "no container below the items");
    ts_pv *c = k->stack[from - 1];
    if (c->kind != want) return fail(k, want == TS_PV_DICT ? "SETITEM(S) on something not a dict"
                                                           : "APPEND(S)/ADDITEMS on something not a list or set");
    return fill(k, c, from);
}

static int one_op(pk *k, unsigned op, bool *stop)
{
    uint32_t from = 0;
    int rc;
    switch (op) {
    case 0x80: /* PROTO */ if ((rc = need(k, 1))) return rc;
        if (k->d[k->pos] > 5) return fail(k, "pickle protocol newer than 5");
        k->pos++; return TS_OK;
    case 0x95: /* FRAME */ if ((rc = need(k, 8))) return rc; k->pos += 8; return TS_OK;
    case '.': *stop = true; return TS_OK;
    case '(': /* MARK */
        if (k->n_marks == k->cap_marks && ts__grow((void **)&k->marks, &k->cap_marks, sizeof *k->marks, (size_t)k->n_marks + 1))
            return ts__error(k->err, TS_ENOMEM, "%s: out of memory", k->name);
        k->marks[k->n_marks++] = k->n_stack;
        return TS_OK;
    case '0': /* POP */ if (!k->n_stack) return fail(k, "POP of an empty stack"); k->n_stack--; return TS_OK;
    case '1': /* POP_MARK */ if ((rc = pop_mark(k, &from))) return rc; k->n_stack = from; return TS_OK;
    case '2': /* DUP */ if (!k->n_stack) return fail(k, "DUP of an empty stack"); return push(k, k->stack[k->n_stack - 1]);
    case 'N': if (!k->none) k->none = new_pv(k, TS_PV_NONE);
        return push(k, k->none);
    case 0x88: case 0x89: {
        ts_pv **b = &k->bools[op == 0x88];
        if (!*b && (*b = new_pv(k, TS_PV_BOOL))) (*b)->u.i = op == 0x88;
        return push(k, *b);
    }
    case 'J': return int_op(k, 4, true);
    case 'K': return int_op(k, 1, false);
    case 'M': return int_op(k, 2, false);
    case 0x8a: return long_op(k, 1);
    case 0x8b: return long_op(k, 4);
    case 'G': { /* BINFLOAT: big-endian double */
        if ((rc = need(k, 8))) return rc;
        uint64_t u = 0;
        for (int i = 0; i < 8; i++) u = u << 8 | k->d[k->pos + i];
        k->pos += 8;
        ts_pv *v = new_pv(k, TS_PV_FLOAT);
        if (v) memcpy(&v->u.d, &u, 8);
        return push(k, v);
    }
    case 0x8c: return string_op(k, 1, TS_PV_STR);    /* SHORT_BINUNICODE */
    case 'X': return string_op(k, 4, TS_PV_STR);     /* BINUNICODE */
    case 0x8d: return string_op(k, 8, TS_PV_STR);    /* BINUNICODE8 */
    case 'U': return string_op(k, 1, TS_PV_STR);     /* SHORT_BINSTRING (Python 2 str) */
    case 'T': return string_op(k, 4, TS_PV_STR);     /* BINSTRING */
    case 'C': return string_op(k, 1, TS_PV_BYTES);   /* SHORT_BINBYTES */
    case 'B': return string_op(k, 4, TS_PV_BYTES);   /* BINBYTES */
    case 0x8e: case 0x96: return string_op(k, 8, TS_PV_BYTES);   /* BINBYTES8, BYTEARRAY8 */
    case '}': return push(k, new_pv(k, TS_PV_DICT));
    case ']': case 0x8f: return push(k, new_pv(k, TS_PV_LIST));   /* EMPTY_LIST, EMPTY_SET */
    case ')': return push(k, new_pv(k, TS_PV_TUPLE));
    case 'd': case 'l': case 0x91: { /* DICT, LIST, FROZENSET: from the mark */
        if ((rc = pop_mark(k, &from))) return rc;
        ts_pv *c = new_pv(k, op == 'd' ? TS_PV_DICT : TS_PV_LIST);
        if (!c) return push(k, NULL);
        return (rc = fill(k, c, from)) ? rc : push(k, c);
    }
    case 't': return (rc = pop_mark(k, &from)) ? rc : make_tuple(k, from);
    case 0x85: return tuple_n(k, 1);
    case 0x86: return tuple_n(k, 2);
    case 0x87: return tuple_n(k, 3);
    case 'a': return k->n_stack < 2 ? fail(k, "APPEND with fewer than two values") : into_below(k, k->n_stack - 1, TS_PV_LIST);
    case 's': return k->n_stack < 3 ? fail(k, "SETITEM with fewer than three values") : into_below(k, k->n_stack - 2, TS_PV_DICT);
    case 'e': case 0x90: return (rc = pop_mark(k, &from)) ? rc : into_below(k, from, TS_PV_LIST);   /* APPENDS, ADDITEMS */
    case 'u': return (rc = pop_mark(k, &from)) ? rc : into_below(k, from, TS_PV_DICT);
    case 'q': if ((rc = need(k, 1))) return rc; k->pos += 1; return memo_put(k, k->d[k->pos - 1]);
    case 'r': if ((rc = need(k, 4))) return rc; k->pos += 4; return memo_put(k, le(k->d + k->pos - 4, 4));
    case 0x94: return memo_put(k, k->n_memo_set);   /* MEMOIZE: the next index, len(memo) */
    case 'h': if ((rc = need(k, 1))) return rc; k->pos += 1; return memo_get(k, k->d[k->pos - 1]);
    case 'j': if ((rc = need(k, 4))) return rc; k->pos += 4; return memo_get(k, le(k->d + k->pos - 4, 4));
    case 'c': return op_global(k, false);
    case 0x93: return op_global(k, true);
    case 'R': case 'b': case 0x81: case 0x92: case 'i': case 'o':
        return fail(k, "pickle opcode that builds an object (REDUCE, BUILD, NEWOBJ, INST, OBJ): refused, "
                       "this reader runs no code");
    case 'P': case 'Q': return fail(k, "pickle persistent id: refused");
    case 0x82: case 0x83: case 0x84: return fail(k, "pickle extension code: refused");
    default: {
        char msg[96];
        snprintf(msg, sizeof msg, "pickle opcode 0x%02x is not one this reader knows", op);
        return fail(k, msg);
    }
    }
}

int ts__pickle_load(ts_pickle *p, const char *name, const unsigned char *data, size_t n, ts_error *err)
{
    memset(p, 0, sizeof *p);
    ts__arena_init(&p->arena);
    pk k = {.p = p, .name = name, .d = data, .n = n, .err = err};
    k.ints = ts__calloc(PK_INTS, sizeof *k.ints);   /* without it, no sharing beyond 0-255 */
    bool stop = false;
    int rc = TS_OK;
    while (rc == TS_OK && !stop) {
        k.op_at = k.pos;
        if (k.pos >= k.n) { rc = fail(&k, "pickle ends without STOP"); break; }
        unsigned op = k.d[k.pos++];
        /* the memo fetches most pickles are made of (an allocator snapshot:
         * 60% of its opcodes), here without a call */
        if (op == 'h' && k.pos < k.n) {
            uint32_t idx = k.d[k.pos];
            if (idx < k.cap_memo && k.memo[idx] && k.n_stack < k.cap_stack) {
                k.pos++;
                k.stack[k.n_stack++] = k.memo[idx];
                continue;
            }
        } else if (op == 'j' && k.n - k.pos >= 4) {
            uint32_t idx = (uint32_t)le(k.d + k.pos, 4);
            if (idx < k.cap_memo && k.memo[idx] && k.n_stack < k.cap_stack) {
                k.pos += 4;
                k.stack[k.n_stack++] = k.memo[idx];
                continue;
            }
        }
        rc = one_op(&k, op, &stop);
    }
    if (rc == TS_OK && k.n_stack != 1) rc = fail(&k, "pickle STOP with other than one value on the stack");
    if (rc == TS_OK) p->root = k.stack[0];
    ts__free(k.stack, (size_t)k.cap_stack * sizeof *k.stack);
    ts__free(k.marks, (size_t)k.cap_marks * sizeof *k.marks);
    ts__free(k.memo, (size_t)k.cap_memo * sizeof *k.memo);
    ts__free(k.ints, PK_INTS * sizeof *k.ints);
    if (rc) ts__pickle_free(p);
    return rc;
}

void ts__pickle_free(ts_pickle *p)
{
    ts__arena_free(&p->arena);
    p->root = NULL;
}

const ts_pv *ts__pv_getn(const ts_pv *d, const char *key, size_t kn)
{
    if (!d || d->kind != TS_PV_DICT) return NULL;
    for (uint32_t i = 0; i < d->n; i++) {
        const ts_pv *k = d->u.v[2 * i];
        if (k->kind == TS_PV_STR && k->n == kn && k->u.s[0] == key[0] && !memcmp(k->u.s, key, kn))
            return d->u.v[2 * i + 1];
    }
    return NULL;
}
