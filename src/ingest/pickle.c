/* pickle.c - the strict pickle reader of pickle.h: the opcode stream of
 * Python's pickle protocols 2-5 (the binary opcodes of 0 and 1 too) run on
 * a value stack, a mark stack and a memo, as pickle.py's Unpickler runs them,
 * except that nothing names code: every opcode that would look up a global or
 * call one is an error. One pass, O(bytes); every length and index is checked
 * against the bytes left, the stack and the memo before it is used.
 *
 * Cost: the loop keeps its position and stack depth in locals and writes
 * them back only around the calls of the rarer opcodes; values are words
 * (pickle.h), so the memo fetches and small ints that most of a snapshot's
 * opcodes are (an allocator snapshot: 60% memo fetches) are a load and a
 * store. The 10x Transformer snapshot of bench/readers.py (1.07 M opcodes,
 * 4.1 MB) takes 36 M instructions here, dict fills included, and 21 M more
 * to inflate. Memory: the tree (about 1.5x the pickle), a 128 KiB window in it.
 */
#include "ingest/pickle.h"

#include "ingest/ingest.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

enum {
    PK_MAX_STACK = 1 << 26, PK_MAX_MEMO = 1 << 26,
    PK_WINDOW = 128 << 10,   /* a file's uncompressed bytes are read through a window this large */
    PK_AHEAD = 16,           /* bytes the loop keeps in the window ahead of an opcode (the longest fixed one: 9) */
    PK_SHAPES = 4,           /* keys arrays remembered for sharing (records nest: a trace entry holds frames) */
};

/* The tree's memory: blocks of 4 MiB doubling to 64 MiB, their data aligned
 * to 2 MiB and asked for transparent huge pages, because a snapshot's tree
 * is written once, front to back, and faulting it in 4 KiB pages cost more
 * than building it (2,000 faults for a 7 MB tree). Only the 2 MiB pages
 * touched are ever backed, so a small pickle costs one. */
enum { PK_HUGE = 2 << 20, PK_BLOCK_MIN = 4 << 20, PK_BLOCK_MAX = 64 << 20 };
/* Arrays outgrown (a long list's items, the memo: 0.9 MB of the 10x
 * snapshot's tree) are reused: the allocations after one go into it (its
 * pages are in already), the room they leave kept as one of PK_SPARES
 * spares, which alloc_slow takes before a new block. With 24-byte objects
 * (pickle.h) the 10x snapshot's tree fits three huge pages instead of four
 * (7.7 -> 6.1 MB). */
enum { PK_SPARES = 4, PK_SPARE_MIN = 4 << 10 };
struct ts_pickle_block {
    ts_pickle_block *prev;
    size_t bytes;            /* the whole allocation, this header included */
};

typedef struct pk {
    ts_pickle *p;
    const char *name;
    const unsigned char *d;  /* the bytes in hand: all of them, or a file's window */
    size_t n, pos;           /* bytes in d, next byte (pos: written back around calls) */
    uint64_t base;           /* offset in the pickle of d[0] */
    uint64_t op_at;          /* offset in the pickle of the opcode being run (errors) */
    ts_src *src;             /* the file read through win; NULL: d holds the whole pickle */
    unsigned char *win;
    size_t win_cap;
    bool win_in_tree;        /* win is carved from the tree's first block (freed with it), not its own allocation */
    uint64_t limit;          /* most bytes a file may hold (a gzip bomb) */
    bool eof;                /* nothing more to read after d[n - 1] */
    ts_pv *stack;
    uint32_t n_stack, cap_stack;   /* n_stack: written back around calls */
    uint32_t *marks;
    uint32_t n_marks, cap_marks;
    ts_pv *memo;             /* 0 = index never stored */
    uint32_t cap_memo, n_memo_set;
    ts_error *err;
    unsigned char *cur, *end;     /* the free part of the newest block */
    size_t next_block;            /* bytes of the next block */
    struct { unsigned char *cur, *end; } spare[PK_SPARES];   /* free room in the blocks, besides cur..end */
    const ts_pv *shape[PK_SHAPES];   /* keys of the last dicts filled with keys of their own, */
    uint32_t shape_n[PK_SHAPES];     /* shared by later dicts of the same keys; pairs (0 = none) */
    ts_pv shape_key0[PK_SHAPES];     /* shape[i][0], 0 = none: record() picks a shape without a pointer chase */
    uint32_t next_shape;             /* the slot the next new keys take (round robin) */
} pk;

static int fail(pk *k, const char *what)
{
    return ts__error(k->err, TS_EFORMAT, "%s: byte %llu: %s", k->name, (unsigned long long)k->op_at, what);
}

static int oom(pk *k) { return ts__error(k->err, TS_ENOMEM, "%s: out of memory", k->name); }

/* The window refilled from the file: the unread bytes moved to its front,
 * grown when `want` bytes would not fit, then filled. */
static int refill(pk *k, size_t want)
{
    if (k->eof) return TS_OK;
    size_t keep = k->n - k->pos;
    memmove(k->win, k->win + k->pos, keep);
    k->base += k->pos;
    k->pos = 0;
    k->n = keep;
    if (want > k->win_cap) {
        size_t cap = want > 2 * k->win_cap ? want : 2 * k->win_cap;
        unsigned char *w = k->win_in_tree ? ts__malloc(cap) : ts__realloc(k->win, k->win_cap, cap);
        if (!w) return oom(k);
        if (k->win_in_tree) memcpy(w, k->win, keep);   /* out of the tree: its own from now on */
        k->win = w;
        k->win_cap = cap;
        k->win_in_tree = false;
    }
    k->d = k->win;
    while (k->n < k->win_cap && !k->eof) {
        long got = ts__src_read(k->src, (char *)k->win + k->n, k->win_cap - k->n, k->err);
        if (got < 0) return (int)got;
        if (got == 0) k->eof = true;
        k->n += (size_t)got;
    }
    if (k->base + k->n > k->limit)
        return ts__error(k->err, TS_EFORMAT, "%s: byte %llu: larger than %llu MiB uncompressed", k->name,
                         (unsigned long long)k->limit, (unsigned long long)(k->limit >> 20));
    return TS_OK;
}

/* `bytes` after pos in the window, else "cut short". The window grows by
 * doubling as the bytes arrive, never to what a length field claims: a
 * 4 GiB string in a 100-byte file costs no 4 GiB. */
static int ensure(pk *k, size_t bytes)
{
    while (bytes > k->n - k->pos) {
        if (k->eof) return fail(k, "pickle cut short");
        size_t step = 2 * k->win_cap;
        int rc = refill(k, bytes < step ? bytes : step);
        if (rc) return rc;
    }
    return TS_OK;
}

/* bytes at p kept as spare room (the smallest spare makes way for it). */
static void keep_spare(pk *k, unsigned char *p, size_t bytes)
{
    int j = 0;
    for (int i = 1; i < PK_SPARES; i++)
        if (k->spare[i].end - k->spare[i].cur < k->spare[j].end - k->spare[j].cur) j = i;
    if ((size_t)(k->spare[j].end - k->spare[j].cur) >= bytes) return;
    k->spare[j].cur = p;
    k->spare[j].end = p + bytes;
}

/* bytes at p, an array no longer referenced, are where the next
 * allocations go (their pages are in already), the current room kept. */
static void give_back(pk *k, void *p, size_t bytes)
{
    if (bytes < PK_SPARE_MIN) return;
    keep_spare(k, k->cur, (size_t)(k->end - k->cur));
    k->cur = p;
    k->end = (unsigned char *)p + bytes;
}

/* The first spare that holds n bytes becomes the current room (the current
 * room's rest a spare); false = none does. */
static bool take_spare(pk *k, size_t n)
{
    for (int i = 0; i < PK_SPARES; i++) {
        if ((size_t)(k->spare[i].end - k->spare[i].cur) < n) continue;
        unsigned char *cur = k->cur, *end = k->end;
        k->cur = k->spare[i].cur;
        k->end = k->spare[i].end;
        k->spare[i].cur = cur;
        k->spare[i].end = end;
        return true;
    }
    return false;
}

static void *alloc_slow(pk *k, size_t n)
{
    if (take_spare(k, n)) {
        void *r = k->cur;
        k->cur += n;
        return r;
    }
    keep_spare(k, k->cur, (size_t)(k->end - k->cur));   /* the block's rest */
    size_t data = k->next_block > n ? k->next_block : (n + PK_HUGE - 1) & ~(size_t)(PK_HUGE - 1);
    size_t bytes = data + sizeof(ts_pickle_block) + PK_HUGE;   /* room to align data to 2 MiB */
    unsigned char *raw = ts__malloc(bytes);
    if (!raw) return NULL;
    ts_pickle_block *b = (ts_pickle_block *)raw;
    *b = (ts_pickle_block){k->p->blocks, bytes};
    k->p->blocks = b;
    /* only [lo, lo + data) is used: all of it in huge pages (the mapping's
     * unaligned head and tail are never touched, so never backed) */
    uintptr_t lo = ((uintptr_t)(b + 1) + PK_HUGE - 1) & ~(uintptr_t)(PK_HUGE - 1);
#ifdef MADV_HUGEPAGE
    (void)madvise((void *)lo, data, MADV_HUGEPAGE);   /* a hint: without it, 4 KiB pages */
#endif
    k->cur = (unsigned char *)lo;
    k->end = (unsigned char *)lo + data;
    if (k->next_block < PK_BLOCK_MAX) k->next_block *= 2;
    void *r = k->cur;
    k->cur += n;
    return r;
}

/* n bytes of the tree, 8-byte aligned; NULL = out of memory. */
static inline void *pk_alloc(pk *k, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (TS_UNLIKELY((size_t)(k->end - k->cur) < n)) return alloc_slow(k, n);
    void *r = k->cur;
    k->cur += n;
    return r;
}

/* A new object (8-byte aligned: its address is a word with tag 00); NULL = out of memory. */
static inline ts_pv_obj *new_obj(pk *k, ts_pv_kind kind)
{
    ts_pv_obj *o = pk_alloc(k, sizeof *o);
    if (o) *o = (ts_pv_obj){.kind = (uint8_t)kind};
    return o;
}

static inline ts_pv word_of(const ts_pv_obj *o) { return (ts_pv)(uintptr_t)o; }
static inline ts_pv_obj *obj_of(ts_pv v) { return (ts_pv_obj *)(uintptr_t)ts__pv_obj(v); }

/* An int as a value: a word when it fits 62 bits, else an object; 0 = out of memory. */
static inline ts_pv int_pv(pk *k, int64_t i)
{
    if (TS_LIKELY(i >= TS_PV_INT_MIN && i <= TS_PV_INT_MAX)) return (ts_pv)i << 2 | TS_PV_TAG_INT;
    ts_pv_obj *o = new_obj(k, TS_PV_INT);
    if (!o) return 0;
    o->u.i = i;
    return word_of(o);
}

static int grow_stack(pk *k)
{
    if (k->cap_stack >= PK_MAX_STACK) return fail(k, "pickle stack deeper than 2^26 values");
    if (ts__grow((void **)&k->stack, &k->cap_stack, sizeof *k->stack, (size_t)k->n_stack + 1)) return oom(k);
    return TS_OK;
}

/* Room for one more is made at the top of every opcode (none pushes more than one). */
static inline int push(pk *k, ts_pv v)
{
    if (!v) return oom(k);
    k->stack[k->n_stack++] = v;
    return TS_OK;
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

static int pop_mark(pk *k, uint32_t *from)
{
    if (k->n_marks == 0) return fail(k, "pickle opcode needs a MARK and there is none");
    *from = k->marks[--k->n_marks];
    /* values below the mark were popped since it was set (Python: "unpickling
     * stack underflow"); taking it would reach past the stack's top */
    if (*from > k->n_stack) return fail(k, "pickle MARK above the stack's top (values below it were popped)");
    return TS_OK;
}

/* Room for `more` slots in c (its keys too when a dict): doubling, or
 * exactly what is asked when empty (its one SETITEMS or APPENDS usually
 * brings all it will hold); a dict's shared keys become its own copy. */
static int reserve(pk *k, ts_pv_obj *c, uint32_t more)
{
    uint64_t need = (uint64_t)c->n + more;
    if (need > UINT32_MAX) return fail(k, "container too large");
    bool dict = c->kind == TS_PV_DICT;
    uint64_t had = !dict ? c->cap : c->own_keys ? (uint64_t)(c->keys - c->u.v) : c->n;
    if (need <= had) return TS_OK;
    uint64_t cap = had * 2;
    if (cap < need) cap = need;
    if (cap > UINT32_MAX) cap = need;
    ts_pv *v = pk_alloc(k, (size_t)cap * sizeof *v * (dict ? 2 : 1));
    if (!v) return oom(k);
    if (c->n) memcpy(v, c->u.v, c->n * sizeof *v);
    if (dict && c->n) memcpy(v + cap, c->keys, c->n * sizeof *v);
    if (!dict && c->cap) give_back(k, c->u.v, c->cap * sizeof *v);   /* a dict's keys may be shared */
    c->u.v = v;
    if (dict) { c->keys = v + cap; c->own_keys = 1; }
    else c->cap = cap;
    return TS_OK;
}

/* Pairs s[0..2*pairs) into the empty dict c under the keys of the dict
 * filled last, when they are the same words: values only. */
/* Pairs s[0..2*pairs) into the empty dict c under the keys of one of the
 * last dicts filled, when they are the same words: values only (copied as
 * the keys are compared; the copy is given back when they differ). */
static bool fill_shaped(pk *k, ts_pv_obj *c, const ts_pv *restrict s, uint32_t pairs)
{
    if (c->n) return false;
    ts_pv *restrict v = NULL;
    for (int h = 0; h < PK_SHAPES; h++) {
        const ts_pv *restrict keys = k->shape[h];
        if (k->shape_n[h] != pairs || keys[0] != s[0]) continue;
        if (!v && !(v = pk_alloc(k, (size_t)pairs * sizeof *v))) return false;   /* the general path says so */
        uint32_t i = 0;
        for (; i < pairs && s[2 * i] == keys[i]; i++) v[i] = s[2 * i + 1];
        if (i < pairs) continue;
        *c = (ts_pv_obj){.kind = TS_PV_DICT, .n = pairs, .u.v = v, .keys = keys};
        return true;
    }
    if (v) k->cur = (unsigned char *)v;   /* the last allocation: given back */
    return false;
}

/* Items stack[from..] into container c (a dict: key/value pairs), popped. */
static int fill(pk *k, ts_pv_obj *c, uint32_t from)
{
    if (from > k->n_stack) return fail(k, "pickle MARK above the stack's top (values below it were popped)");
    uint32_t m = k->n_stack - from;
    const ts_pv *s = k->stack + from;
    if (c->kind != TS_PV_DICT) {
        int rc = reserve(k, c, m);
        if (rc) return rc;
        if (m) memcpy(c->u.v + c->n, s, (size_t)m * sizeof *s);
        c->n += m;
    } else if (m % 2) {
        return fail(k, "odd number of items for a dict");
    } else if (m && !fill_shaped(k, c, s, m / 2)) {
        bool first = c->n == 0;
        int rc = reserve(k, c, m / 2);
        if (rc) return rc;
        ts_pv *keys = (ts_pv *)(uintptr_t)c->keys;
        for (uint32_t i = 0; i < m / 2; i++) {
            keys[c->n + i] = s[2 * i];
            c->u.v[c->n + i] = s[2 * i + 1];
        }
        c->n += m / 2;
        if (first) {
            k->shape[k->next_shape] = c->keys;
            k->shape_n[k->next_shape] = c->n;
            k->shape_key0[k->next_shape] = c->keys[0];
            k->next_shape = (k->next_shape + 1) % PK_SHAPES;
        }
    }
    k->n_stack = from;
    return TS_OK;
}

static int string_op(pk *k, int len_bytes, ts_pv_kind kind)
{
    int rc = ensure(k, (size_t)len_bytes);
    if (rc) return rc;
    uint64_t len = le(k->d + k->pos, len_bytes);
    k->pos += (size_t)len_bytes;
    if (len > UINT32_MAX) return fail(k, "string longer than 4 GiB");
    if ((rc = ensure(k, (size_t)len))) return rc;
    ts_pv_obj *o = new_obj(k, kind);
    if (!o) return oom(k);
    o->n = (uint32_t)len;
    char *str = pk_alloc(k, (size_t)len + 1);
    if (!str) return oom(k);
    memcpy(str, k->d + k->pos, (size_t)len);
    str[len] = 0;
    o->u.s = str;
    k->pos += (size_t)len;
    return push(k, word_of(o));
}

/* n (1-8) bytes at b, avail of them readable: little-endian two's
 * complement, sign-extended (one load when 8 bytes are there: the shift
 * drops the bytes past n). */
static inline int64_t sext(const unsigned char *b, unsigned n, size_t avail)
{
    uint64_t u;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (avail >= 8) memcpy(&u, b, 8);
    else
#endif
        u = le(b, (int)n);
    (void)avail;
    unsigned sh = 64 - 8 * n;
    return (int64_t)(u << sh) >> sh;
}

/* LONG1/LONG4's n bytes at b: past 64 bits only when the extra bytes are
 * sign extension. */
static int long_bytes(pk *k, const unsigned char *b, uint64_t n, int64_t *out)
{
    if (n >= 1 && n <= 8) {
        *out = sext(b, (unsigned)n, (size_t)(k->d + k->n - b));
        return TS_OK;
    }
    bool neg = n && (b[n - 1] & 0x80);
    for (uint64_t i = 8; i < n; i++)
        if (b[i] != (neg ? 0xff : 0x00)) return fail(k, "integer wider than 64 bits");
    uint64_t u = neg ? ~(uint64_t)0 : 0;
    for (uint64_t i = 0; i < n && i < 8; i++) u = (u & ~((uint64_t)0xff << (8 * i))) | (uint64_t)b[i] << (8 * i);
    if (n > 8 && ((u >> 63) != 0) != neg) return fail(k, "integer wider than 64 bits");
    *out = (int64_t)u;
    return TS_OK;
}

static int long_op(pk *k, int len_bytes)
{
    int rc = ensure(k, (size_t)len_bytes);
    if (rc) return rc;
    uint64_t n = le(k->d + k->pos, len_bytes);
    k->pos += (size_t)len_bytes;
    if (n > SIZE_MAX / 2) return fail(k, "pickle cut short");
    if ((rc = ensure(k, (size_t)n))) return rc;
    int64_t i = 0;
    rc = long_bytes(k, k->d + k->pos, n, &i);
    k->pos += (size_t)n;
    return rc ? rc : push(k, int_pv(k, i));
}

/* The memo grows in the tree, doubling from 16,384 entries: in its huge
 * pages (a 4 KiB page faulted in costs here what 9 KiB of a huge page does),
 * the arrays it outgrew left there (at most as much again), freed with it. */
static int grow_memo(pk *k, uint64_t idx)
{
    uint64_t cap = k->cap_memo ? 2 * (uint64_t)k->cap_memo : 16384;
    if (cap <= idx) cap = idx + 1;
    if (cap > PK_MAX_MEMO) cap = PK_MAX_MEMO;
    ts_pv *m = pk_alloc(k, (size_t)cap * sizeof *m);
    if (!m) return oom(k);
    if (k->cap_memo) memcpy(m, k->memo, (size_t)k->cap_memo * sizeof *m);
    if (k->cap_memo) give_back(k, k->memo, (size_t)k->cap_memo * sizeof *m);
    memset(m + k->cap_memo, 0, (size_t)(cap - k->cap_memo) * sizeof *m);   /* 0 = never stored */
    k->memo = m;
    k->cap_memo = (uint32_t)cap;
    return TS_OK;
}

static int memo_put(pk *k, uint64_t idx, ts_pv top)
{
    if (idx >= PK_MAX_MEMO) return fail(k, "memo index past 2^26");
    int rc;
    if (idx >= k->cap_memo && (rc = grow_memo(k, idx))) return rc;
    if (!k->memo[idx]) k->n_memo_set++;
    k->memo[idx] = top;
    return TS_OK;
}

/* GLOBAL's two newline-terminated lines, module and name, into the
 * window (read on until both are there); *mod = NULL when the pickle ends
 * first. */
static int text_lines(pk *k, const char **mod, size_t *mn, size_t *nn)
{
    *mod = NULL;
    for (;;) {
        const unsigned char *s = k->d + k->pos, *e = k->d + k->n;
        const unsigned char *nl1 = memchr(s, '\n', (size_t)(e - s));
        const unsigned char *nl2 = nl1 ? memchr(nl1 + 1, '\n', (size_t)(e - nl1 - 1)) : NULL;
        if (nl2) {
            *mod = (const char *)s;
            *mn = (size_t)(nl1 - s);
            *nn = (size_t)(nl2 - nl1 - 1);
            k->pos = (size_t)(nl2 + 1 - k->d);
            return TS_OK;
        }
        if (k->eof) return TS_OK;
        int rc = refill(k, k->n - k->pos + 1);   /* grows the window when it is full */
        if (rc) return rc;
    }
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
        const ts_pv_obj *m = ts__pv_obj(k->stack[k->n_stack - 2]), *nm = ts__pv_obj(k->stack[k->n_stack - 1]);
        if (!m || !nm || m->kind != TS_PV_STR || nm->kind != TS_PV_STR) return fail(k, "STACK_GLOBAL of non-strings");
        return refuse_global(k, m->u.s, m->n, nm->u.s, nm->n);
    }
    size_t mn = 0, nn = 0;
    const char *mod;
    int rc = text_lines(k, &mod, &mn, &nn);
    if (rc) return rc;
    if (!mod) return fail(k, "GLOBAL without its module and name lines");
    return refuse_global(k, mod, mn, mod + mn + 1, nn);
}

/* A container of stack[from..] (popped), pushed. */
static int make_from(pk *k, ts_pv_kind kind, uint32_t from)
{
    ts_pv_obj *c = new_obj(k, kind);
    if (!c) return oom(k);
    int rc = fill(k, c, from);
    return rc ? rc : push(k, word_of(c));
}

static int tuple_n(pk *k, uint32_t m)
{
    if (k->n_stack < m) return fail(k, "tuple of more values than the stack holds");
    return make_from(k, TS_PV_TUPLE, k->n_stack - m);
}

/* APPEND/APPENDS/SETITEM/SETITEMS/ADDITEMS: stack[from..] into the container below. */
static int into_below(pk *k, uint32_t from, ts_pv_kind want)
{
    if (from == 0) return fail(k, "no container below the items");
    ts_pv_obj *c = obj_of(k->stack[from - 1]);
    if (!c || c->kind != want) return fail(k, want == TS_PV_DICT ? "SETITEM(S) on something not a dict"
                                                                 : "APPEND(S)/ADDITEMS on something not a list or set");
    return fill(k, c, from);
}

static int from_mark(pk *k, ts_pv_kind kind, bool into)
{
    uint32_t from = 0;
    int rc = pop_mark(k, &from);
    if (rc) return rc;
    return into ? into_below(k, from, kind) : make_from(k, kind, from);
}

static int binfloat(pk *k)   /* big-endian double */
{
    int rc = ensure(k, 8);
    if (rc) return rc;
    uint64_t u = 0;
    for (int i = 0; i < 8; i++) u = u << 8 | k->d[k->pos + i];
    k->pos += 8;
    ts_pv_obj *o = new_obj(k, TS_PV_FLOAT);
    if (o) memcpy(&o->u.d, &u, 8);
    return push(k, word_of(o));
}

static int grow_marks(pk *k)
{
    if (ts__grow((void **)&k->marks, &k->cap_marks, sizeof *k->marks, (size_t)k->n_marks + 1)) return oom(k);
    return TS_OK;
}

static int refuse_op(pk *k, unsigned op)
{
    switch (op) {
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

/* Every opcode but the hot ones run() does itself; k->pos and k->n_stack are current. */
static int one_op(pk *k, unsigned op)
{
    uint32_t from = 0;
    int rc;
    switch (op) {
    case 0x80: /* PROTO */
        if ((rc = ensure(k, 1))) return rc;
        if (k->d[k->pos] > 5) return fail(k, "pickle protocol newer than 5");
        k->pos++;
        return TS_OK;
    case '0': /* POP */ if (!k->n_stack) return fail(k, "POP of an empty stack"); k->n_stack--; return TS_OK;
    case '1': /* POP_MARK */ if ((rc = pop_mark(k, &from))) return rc; k->n_stack = from; return TS_OK;
    case '2': /* DUP */ if (!k->n_stack) return fail(k, "DUP of an empty stack"); return push(k, k->stack[k->n_stack - 1]);
    case 'N': return push(k, TS_PV_NONE_WORD);
    case 0x88: return push(k, TS_PV_TRUE_WORD);
    case 0x89: return push(k, TS_PV_FALSE_WORD);
    case 0x8b: return long_op(k, 4);
    case 'G': return binfloat(k);
    case 'X': return string_op(k, 4, TS_PV_STR);     /* BINUNICODE */
    case 0x8d: return string_op(k, 8, TS_PV_STR);    /* BINUNICODE8 */
    case 'U': return string_op(k, 1, TS_PV_STR);     /* SHORT_BINSTRING (Python 2 str) */
    case 'T': return string_op(k, 4, TS_PV_STR);     /* BINSTRING */
    case 'C': return string_op(k, 1, TS_PV_BYTES);   /* SHORT_BINBYTES */
    case 'B': return string_op(k, 4, TS_PV_BYTES);   /* BINBYTES */
    case 0x8e: case 0x96: return string_op(k, 8, TS_PV_BYTES);   /* BINBYTES8, BYTEARRAY8 */
    case 0x8f: return make_from(k, TS_PV_LIST, k->n_stack);     /* EMPTY_SET */
    case ')': return make_from(k, TS_PV_TUPLE, k->n_stack);
    case 'd': return from_mark(k, TS_PV_DICT, false);
    case 'l': case 0x91: return from_mark(k, TS_PV_LIST, false);   /* LIST, FROZENSET */
    case 't': return from_mark(k, TS_PV_TUPLE, false);
    case 0x85: return tuple_n(k, 1);
    case 0x86: return tuple_n(k, 2);
    case 0x87: return tuple_n(k, 3);
    case 'a': return k->n_stack < 2 ? fail(k, "APPEND with fewer than two values") : into_below(k, k->n_stack - 1, TS_PV_LIST);
    case 's': return k->n_stack < 3 ? fail(k, "SETITEM with fewer than three values") : into_below(k, k->n_stack - 2, TS_PV_DICT);
    case 0x90: return from_mark(k, TS_PV_LIST, true);   /* ADDITEMS */
    case 'q': case 'r': {   /* BINPUT, LONG_BINPUT */
        int w = op == 'q' ? 1 : 4;
        if ((rc = ensure(k, (size_t)w))) return rc;
        if (!k->n_stack) return fail(k, "memo store with an empty stack");
        k->pos += (size_t)w;
        return memo_put(k, le(k->d + k->pos - w, w), k->stack[k->n_stack - 1]);
    }
    default: return refuse_op(k, op);
    }
}

/* ---- records: a dict of keys seen before, read in one go ----
 * A pickled list of records (an allocator snapshot's trace: a million
 * opcodes, nine in ten of them inside such dicts) repeats, for every record,
 * EMPTY_DICT MEMOIZE MARK (key value)... SETITEMS with the same memoized key
 * strings. When a new dict's first key is the first of a remembered keys
 * array (PK_SHAPES), record() reads the whole dict here: each key must be a
 * memo fetch of that array's word (compared, not pushed), each value one of
 * the plain opcodes below, written straight into the dict's values. Anything
 * else (another opcode, a record past the window's end, a memo slot not
 * free, a new block of the tree needed) gives up with nothing changed: the
 * tree's allocations are taken back and the opcode loop reads the same bytes
 * the general way. So the tree, the memo and the errors are those of the
 * general path (fuzz/fuzz_pickle.c compares the two trees); only the
 * dispatch, the stack traffic and fill_shaped's compare are saved. */
enum {
    PK_REC_MEMO = 32, PK_REC_ITEMS = 64,
    PK_REC_ROOM = 16,   /* bytes a key fetch (5) and a plain value (LONG1 of 8: 10) take at most */
};
typedef struct rec {
    pk *k;
    const ts_pv *memo;         /* k's memo, as it stands (record() never grows it) */
    uint32_t cap_memo;
    uint32_t base;             /* k->n_memo_set: the index the record's first MEMOIZE takes */
    uint32_t n_fresh;
    ts_pv fresh[PK_REC_MEMO];  /* words MEMOIZE'd inside the record, memo indices base + i */
} rec;

/* The helpers take the position and return the next (NULL = give up), so
 * that it stays in a register. */

/* n bytes of the current block, or NULL when it would need a new one. */
static inline void *rec_alloc(pk *k, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if ((size_t)(k->end - k->cur) < n) return NULL;
    void *r = k->cur;
    k->cur += n;
    return r;
}

/* MEMOIZE of w when it is the next byte. */
static inline const unsigned char *rec_memoize(rec *r, const unsigned char *p, const unsigned char *end, ts_pv w)
{
    if (p == end || *p != 0x94) return p;
    if (r->n_fresh == PK_REC_MEMO) return NULL;
    r->fresh[r->n_fresh++] = w;
    return p + 1;
}

/* A memo fetch (BINGET/LONG_BINGET) into *w; NULL = not one, or an index never stored. */
static inline const unsigned char *rec_get(const rec *r, const unsigned char *p, const unsigned char *end, ts_pv *w)
{
    uint32_t idx;
    if (p == end) return NULL;
    if (p[0] == 'h' && end - p >= 2) { idx = p[1]; p += 2; }
    else if (p[0] == 'j' && end - p >= 5) { idx = (uint32_t)le(p + 1, 4); p += 5; }
    else return NULL;
    if (TS_LIKELY(idx < r->cap_memo && (*w = r->memo[idx]))) return p;
    if (idx - r->base >= r->n_fresh) return NULL;
    *w = r->fresh[idx - r->base];   /* stored inside this record */
    return p;
}

/* After EMPTY_LIST: the list (its MEMOIZE, then MARK fetches APPENDS or a fetch APPEND, if there). */
static const unsigned char *rec_list(rec *r, const unsigned char *p, const unsigned char *end, ts_pv *w)
{
    ts_pv_obj *o = rec_alloc(r->k, sizeof *o);
    if (!o) return NULL;
    *o = (ts_pv_obj){.kind = TS_PV_LIST};
    *w = word_of(o);
    if (!(p = rec_memoize(r, p, end, *w))) return NULL;
    ts_pv items[PK_REC_ITEMS];
    uint32_t n = 0;
    if (p < end && *p == '(') {
        for (p++; p < end && *p != 'e'; n++)
            if (n == PK_REC_ITEMS || !(p = rec_get(r, p, end, &items[n]))) return NULL;
        if (p == end) return NULL;
        p++;
    } else if (p < end && (*p == 'h' || *p == 'j')) {
        if (!(p = rec_get(r, p, end, &items[n++])) || p == end || *p != 'a') return NULL;
        p++;
    }
    if (n) {   /* as fill() makes it: exactly n slots */
        if (!(o->u.v = rec_alloc(r->k, (size_t)n * sizeof *items))) return NULL;
        memcpy(o->u.v, items, (size_t)n * sizeof *items);
        o->n = o->cap = n;
    }
    return p;
}

/* SHORT_BINUNICODE's string, as string_op makes it. */
static const unsigned char *rec_str(rec *r, const unsigned char *p, const unsigned char *end, ts_pv *w)
{
    size_t len;
    if (end - p < 2 || (size_t)(end - p) - 2 < (len = p[1])) return NULL;
    ts_pv_obj *o = rec_alloc(r->k, sizeof *o);
    char *str = o ? rec_alloc(r->k, len + 1) : NULL;
    if (!str) return NULL;
    memcpy(str, p + 2, len);
    str[len] = 0;
    *o = (ts_pv_obj){.kind = TS_PV_STR, .n = (uint32_t)len, .u.s = str};
    *w = word_of(o);
    return rec_memoize(r, p + 2 + len, end, *w);
}

/* One value into *w; NULL = not one of the opcodes read here. */
static inline const unsigned char *rec_value(rec *r, const unsigned char *p, const unsigned char *end, ts_pv *w)
{
    size_t left = (size_t)(end - p);
    if (!left) return NULL;
    switch (*p) {
    case 'h': case 'j': return rec_get(r, p, end, w);
    case 'K': if (left < 2) return NULL; *w = (ts_pv)p[1] << 2 | TS_PV_TAG_INT; return p + 2;
    case 'M': if (left < 3) return NULL; *w = (ts_pv)(p[1] | p[2] << 8) << 2 | TS_PV_TAG_INT; return p + 3;
    case 'J':
        if (left < 5) return NULL;
        *w = (ts_pv)(int64_t)(int32_t)(uint32_t)le(p + 1, 4) << 2 | TS_PV_TAG_INT;
        return p + 5;
    case 0x8a: {   /* LONG1 of 1-8 bytes whose value fits a word */
        if (left < 2 || !p[1] || p[1] > 8 || left - 2 < p[1]) return NULL;
        int64_t i = sext(p + 2, p[1], left - 2);
        if (i < TS_PV_INT_MIN || i > TS_PV_INT_MAX) return NULL;
        *w = (ts_pv)i << 2 | TS_PV_TAG_INT;
        return p + 2 + p[1];
    }
    case 'N': *w = TS_PV_NONE_WORD; return p + 1;
    case 0x88: *w = TS_PV_TRUE_WORD; return p + 1;
    case 0x89: *w = TS_PV_FALSE_WORD; return p + 1;
    case 0x8c: return rec_str(r, p, end, w);
    case ']': return rec_list(r, p + 1, end, w);
    default: return NULL;
    }
}

/* The remembered keys array whose first word the key at p fetches; NULL = none. */
static inline const ts_pv *rec_shape(const rec *r, const unsigned char *p, const unsigned char *end, uint32_t *pairs)
{
    ts_pv w0;
    if (!rec_get(r, p, end, &w0)) return NULL;
    for (int h = 0; h < PK_SHAPES; h++)
        if (r->k->shape_key0[h] == w0) {
            *pairs = r->k->shape_n[h];
            return r->k->shape[h];
        }
    return NULL;
}

/* The new empty dict c (on the stack) and the bytes after its EMPTY_DICT at
 * p, up to end: the record read whole, the position after its SETITEMS
 * returned; NULL = given up, nothing changed (see above). */
static const unsigned char *record(pk *k, ts_pv_obj *c, const unsigned char *p, const unsigned char *end)
{
    rec r;
    r.k = k;
    r.memo = k->memo;
    r.cap_memo = k->cap_memo;
    r.base = k->n_memo_set;
    r.n_fresh = 0;
    unsigned char *mark = k->cur;
    uint32_t pairs = 0;
    const ts_pv *keys;
    ts_pv *v;
    if (!(p = rec_memoize(&r, p, end, word_of(c))) || p == end || *p++ != '(' ||
        !(keys = rec_shape(&r, p, end, &pairs)) || !(v = rec_alloc(k, (size_t)pairs * sizeof *v)))
        goto give_up;
    const ts_pv *memo = r.memo;
    uint32_t cap_memo = r.cap_memo, idx;
    for (uint32_t i = 0; i < pairs; i++) {
        if (TS_UNLIKELY(end - p < PK_REC_ROOM)) {   /* near the window's end: every length checked */
            ts_pv key;
            if (!(p = rec_get(&r, p, end, &key)) || key != keys[i] || !(p = rec_value(&r, p, end, &v[i])))
                goto give_up;
            continue;
        }
        /* a key fetch and a plain value fit in the bytes left: read unchecked */
        if (p[0] == 'h') { idx = p[1]; p += 2; }
        else if (p[0] == 'j') { idx = (uint32_t)le(p + 1, 4); p += 5; }
        else goto give_up;
        if (idx >= cap_memo || memo[idx] != keys[i]) goto give_up;   /* (a fresh index: commit gives up) */
        /* tests in the order of a trace entry's values (half are fetches),
         * not a switch: each is one predictable branch, a switch's table
         * jump was 12 instructions a value */
        unsigned op = *p;
        if (op == 'h' || op == 'j') {
            if (op == 'h') { idx = p[1]; p += 2; }
            else { idx = (uint32_t)le(p + 1, 4); p += 5; }
            if (TS_LIKELY(idx < cap_memo && (v[i] = memo[idx]))) continue;
            if (idx - r.base >= r.n_fresh) goto give_up;
            v[i] = r.fresh[idx - r.base];
        } else if (op == 0x8a) {
            if (!p[1] || p[1] > 8) goto give_up;
            int64_t n = sext(p + 2, p[1], 8);
            if (n < TS_PV_INT_MIN || n > TS_PV_INT_MAX) goto give_up;
            v[i] = (ts_pv)n << 2 | TS_PV_TAG_INT;
            p += 2 + p[1];
        } else if (op == 'K') {
            v[i] = (ts_pv)p[1] << 2 | TS_PV_TAG_INT;
            p += 2;
        } else if (op == 'J') {
            v[i] = (ts_pv)(int64_t)(int32_t)(uint32_t)le(p + 1, 4) << 2 | TS_PV_TAG_INT;
            p += 5;
        } else if (!(p = rec_value(&r, p, end, &v[i]))) {   /* BININT2, strings, lists, None, bools: checked */
            goto give_up;
        }
    }
    if (p == end || *p++ != 'u' || (uint64_t)r.base + r.n_fresh > r.cap_memo) goto give_up;
    for (uint32_t i = 0; i < r.n_fresh; i++)
        if (k->memo[r.base + i]) goto give_up;   /* a BINPUT got there first: the general path */
    for (uint32_t i = 0; i < r.n_fresh; i++) k->memo[r.base + i] = r.fresh[i];   /* one or two: no memcpy call */
    k->n_memo_set += r.n_fresh;
    *c = (ts_pv_obj){.kind = TS_PV_DICT, .n = pairs, .u.v = v, .keys = keys};
    return p;
give_up:
    k->cur = mark;
    return NULL;
}

/* Write back the loop's locals, run `call`, reload them. */
#define CALL(call)                                                     \
    do {                                                               \
        k->op_at = k->base + (uint64_t)(at - d);                       \
        k->pos = (size_t)(p - d);                                      \
        k->n_stack = sp;                                               \
        int rc_ = (call);                                              \
        if (rc_) return rc_;                                           \
        d = k->d;                                                      \
        p = d + k->pos;                                                \
        end = d + k->n;                                                \
        sp = k->n_stack;                                               \
        st = k->stack;                                                 \
        cap = k->cap_stack;                                            \
        memo = k->memo;                                                \
        cap_memo = k->cap_memo;                                        \
        lim = limit(k, p, sp);                                         \
    } while (0)
#define FAIL(what) return (k->op_at = k->base + (uint64_t)(at - d), fail(k, what))
#define NEED(bytes) do { if (TS_UNLIKELY((size_t)(end - p) < (bytes))) FAIL("pickle cut short"); } while (0)
/* To the next opcode's handler; the window's end and a full stack go by `slow`. */
#define NEXT()                                                         \
    do {                                                               \
        at = p;                                                        \
        if (TS_UNLIKELY(p >= lim)) goto slow;                          \
        goto *handler[*p++];                                           \
    } while (0)

/* Where the loop must stop and go by `slow`: PK_AHEAD before the window's
 * end (its end once the file is all read), and no further than the stack
 * has room for: an opcode reads at least one byte and pushes at most one
 * value, so until then every push fits, unchecked. */
static inline const unsigned char *limit(const pk *k, const unsigned char *p, uint32_t sp)
{
    const unsigned char *end = k->d + k->n;
    const unsigned char *lim = k->eof ? end : k->n > PK_AHEAD ? end - PK_AHEAD : k->d;
    size_t room = k->cap_stack - sp;
    if (lim > p && (size_t)(lim - p) > room) lim = p + room;
    return lim;
}

/* The opcode loop: the hot opcodes here, the others through one_op. Each
 * handler jumps to the next one's itself (GNU C's labels as values: one
 * indirect jump an opcode, each predicted on its own); the position, stack
 * and depth live in locals (k's copies are current only inside CALL). This
 * is most of the reader's speed: a snapshot is a million opcodes, 60% of
 * them memo fetches. */
static int run(pk *k)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"   /* the range's default, then the opcodes handled here */
    static const void *const handler[256] = {
        [0 ... 255] = &&other, ['h'] = &&binget, ['j'] = &&long_binget, [0x94] = &&memoize, ['K'] = &&binint1,
        ['M'] = &&binint2, ['J'] = &&binint, [0x8a] = &&long1, ['('] = &&mark, ['}'] = &&empty_dict,
        [']'] = &&empty_list, ['u'] = &&setitems, ['e'] = &&appends, [0x8c] = &&short_binunicode,
        [0x95] = &&frame, ['.'] = &&stop,
    };
#pragma GCC diagnostic pop
    const unsigned char *d = k->d, *p = d, *end = d + k->n, *at = p, *lim = d;
    ts_pv *st = k->stack, *memo = k->memo;
    const unsigned char *rp;
    uint32_t sp = 0, cap = k->cap_stack, cap_memo = k->cap_memo, idx;
    ts_pv_obj *c;
    NEXT();
slow:   /* p == at: refill the window, grow the stack, or the pickle ended */
    if ((size_t)(end - p) < PK_AHEAD && !k->eof) CALL(refill(k, PK_AHEAD));
    if (sp == cap) CALL(grow_stack(k));
    lim = limit(k, p, sp);
    at = p;   /* the refill moved the window */
    if (p == end) FAIL("pickle ends without STOP");
    goto *handler[*p++];
binget:
    NEED(1);
    idx = *p++;
    goto get;
long_binget:
    NEED(4);
    idx = (uint32_t)le(p, 4);
    p += 4;
get:
    if (TS_UNLIKELY(idx >= cap_memo || !memo[idx])) FAIL("memo fetch of an index never stored");
    st[sp++] = memo[idx];
    NEXT();
memoize: /* the next index, len(memo) */
    if (TS_UNLIKELY(!sp)) FAIL("memo store with an empty stack");
    if (TS_LIKELY(k->n_memo_set < cap_memo && !memo[k->n_memo_set]))
        memo[k->n_memo_set++] = st[sp - 1];
    else
        CALL(memo_put(k, k->n_memo_set, st[sp - 1]));
    NEXT();
binint1:
    NEED(1);
    st[sp++] = (ts_pv)*p++ << 2 | TS_PV_TAG_INT;
    NEXT();
binint2:
    NEED(2);
    st[sp++] = (ts_pv)(p[0] | p[1] << 8) << 2 | TS_PV_TAG_INT;
    p += 2;
    NEXT();
binint: /* signed 32 bits */
    NEED(4);
    st[sp++] = (ts_pv)(int64_t)(int32_t)(uint32_t)le(p, 4) << 2 | TS_PV_TAG_INT;
    p += 4;
    NEXT();
long1:
    if (TS_UNLIKELY(p == end || p[0] >= (size_t)(end - p) || !p[0] || p[0] > 8)) {
        CALL(long_op(k, 1));
        NEXT();
    }
    if (TS_UNLIKELY(!(st[sp] = int_pv(k, sext(p + 1, p[0], (size_t)(end - p) - 1))))) return oom(k);
    sp++;
    p += 1 + p[0];
    NEXT();
mark:
    if (TS_UNLIKELY(k->n_marks == k->cap_marks)) CALL(grow_marks(k));
    k->marks[k->n_marks++] = sp;
    NEXT();
empty_dict:
    if (TS_UNLIKELY(!(c = new_obj(k, TS_PV_DICT)))) return oom(k);
    st[sp++] = word_of(c);
    if (k->shape_n[0] && (rp = record(k, c, p, end))) p = rp;
    NEXT();
empty_list:
    if (TS_UNLIKELY(!(c = new_obj(k, TS_PV_LIST)))) return oom(k);
    st[sp++] = word_of(c);
    NEXT();
setitems:   /* a record's one SETITEMS into its empty dict, under keys seen before: here */
    if (k->n_marks && (idx = k->marks[k->n_marks - 1]) > 0 && idx < sp && !((sp - idx) & 1) &&
        (c = obj_of(st[idx - 1])) && c->kind == TS_PV_DICT && fill_shaped(k, c, st + idx, (sp - idx) / 2)) {
        k->n_marks--;
        sp = idx;
        NEXT();
    }
    CALL(from_mark(k, TS_PV_DICT, true));
    NEXT();
appends:
    CALL(from_mark(k, TS_PV_LIST, true));
    NEXT();
short_binunicode:
    CALL(string_op(k, 1, TS_PV_STR));
    NEXT();
frame:
    NEED(8);
    p += 8;
    NEXT();
other:
    CALL(one_op(k, p[-1]));
    NEXT();
stop:
    k->n_stack = sp;
    k->op_at = k->base + (uint64_t)(at - d);
    return TS_OK;
}
#undef CALL
#undef FAIL
#undef NEED
#undef NEXT

/* Run k's pickle into p (freed on failure). */
static int load(pk *k, ts_pickle *p)
{
    int rc = run(k);
    if (rc == TS_OK && k->n_stack != 1) rc = fail(k, "pickle STOP with other than one value on the stack");
    if (rc == TS_OK) p->root = k->stack[0];
    ts__free(k->stack, (size_t)k->cap_stack * sizeof *k->stack);
    ts__free(k->marks, (size_t)k->cap_marks * sizeof *k->marks);
    if (rc) ts__pickle_free(p);
    return rc;
}

int ts__pickle_load(ts_pickle *p, const char *name, const unsigned char *data, size_t n, ts_error *err)
{
    memset(p, 0, sizeof *p);
    pk k = {.p = p, .name = name, .d = data, .n = n, .eof = true, .err = err, .next_block = PK_BLOCK_MIN};
    return load(&k, p);
}

int ts__pickle_load_src(ts_pickle *p, ts_src *src, size_t window, uint64_t limit, ts__pickle_head_fn head, void *ud,
                        ts_error *err)
{
    memset(p, 0, sizeof *p);
    pk k = {.p = p, .name = src->name, .src = src, .limit = limit, .err = err, .next_block = PK_BLOCK_MIN};
    int rc = TS_OK;
    if (src->kind == TS_SRC_MAP) {   /* a plain file: read in place */
        char *owned;   /* NULL: a mapped file is handed out in place */
        const char *data;
        rc = ts__src_slurp(src, &data, &k.n, &owned, &k.win_cap, (size_t)limit, err);
        k.d = (const unsigned char *)data;
        k.win = (unsigned char *)owned;
        k.eof = true;
    } else {
        /* The window is the tree's first allocation: in the huge page the
         * tree faults in anyway, where a window of its own was 64 fresh 4 KiB
         * pages. 128 KiB: a file's compressed bytes are mapped whole
         * (ts__src_open_inplace), so each isal_inflate call fills the
         * window; a smaller one costs more, as ISA-L copies 32 KiB of
         * history at the end of every call. */
        k.win_cap = window > PK_AHEAD ? window : PK_AHEAD;
        k.win_in_tree = true;
        if (!(k.win = pk_alloc(&k, k.win_cap))) rc = oom(&k);
        if (!rc) rc = refill(&k, 2);
    }
    if (!rc && head) rc = head(ud, k.d, k.n);
    if (!rc) rc = load(&k, p);
    else ts__pickle_free(p);   /* the window's block, if any */
    if (!k.win_in_tree) ts__free(k.win, k.win_cap);
    return rc;
}

int ts__pickle_load_file(ts_pickle *p, const char *path, uint64_t limit, ts__pickle_head_fn head, void *ud,
                         ts_error *err)
{
    ts_src src;
    memset(p, 0, sizeof *p);
    int rc = ts__src_open_inplace(&src, path, err);
    if (rc) return rc;
    rc = ts__pickle_load_src(p, &src, PK_WINDOW, limit, head, ud, err);
    ts__src_close(&src);
    return rc;
}

void ts__pickle_free(ts_pickle *p)
{
    for (ts_pickle_block *b = p->blocks, *prev; b; b = prev) {
        prev = b->prev;
        ts__free(b, b->bytes);
    }
    p->blocks = NULL;
    p->root = 0;
}

/* From the end: a key set twice (SETITEM(S) of a key already there, which
 * no pickler writes but a hand-made pickle may) keeps both pairs, and
 * Python's dict keeps the value set last. */
int32_t ts__pv_key_index(const ts_pv *keys, uint32_t n, const char *key, size_t kn)
{
    for (uint32_t i = n; i-- > 0;) {
        const ts_pv_obj *o = ts__pv_obj(keys[i]);
        if (o && o->kind == TS_PV_STR && o->n == kn && o->u.s[0] == key[0] && !memcmp(o->u.s, key, kn))
            return (int32_t)i;
    }
    return -1;
}

ts_pv ts__pv_getn(ts_pv d, const char *key, size_t kn)
{
    uint32_t n;
    const ts_pv *keys = ts__pv_dict_keys(d, &n);
    int32_t i = keys ? ts__pv_key_index(keys, n, key, kn) : -1;
    return i < 0 ? 0 : ts__pv_obj(d)->u.v[i];
}
