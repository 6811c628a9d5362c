/* pickle.h - a strict reader of Python pickles (protocols 0-5) into a tree
 * of plain values, for PyTorch's allocator snapshots (memory/snapshot.c,
 * analyze/views_allocator.c).
 *
 * Not for: objects. It executes nothing: GLOBAL, STACK_GLOBAL, REDUCE, BUILD,
 * NEWOBJ, INST, OBJ, persistent ids and extension codes are refused with the
 * byte offset and the global's name ("pickle global 'os.system' is not one
 * this reader knows"). What a plain pickle of dicts, lists, tuples, sets,
 * strings, bytes, ints (up to 64 bits), floats, bools and None holds is
 * read; sets become lists. Values live in blocks freed with the tree.
 *
 * A value (ts_pv) is one 64-bit word, low two bits its tag:
 *   00  pointer to a ts_pv_obj in the tree (0: no value, what lookups
 *       return when a key is absent)
 *   01  int of 62 bits, value = word >> 2 (arithmetic); wider ints are objects
 *   10  None (2), False (6), True (10)
 * so an int, None or bool costs no allocation. Dicts are two arrays, keys and
 * values; dicts filled with the same keys (the same memoized key strings in
 * the same order, as the pickler writes a list of records) share one keys
 * array, so a reader of many such dicts finds a field's slot once per keys
 * array (ts__pv_dict_keys) instead of once per dict. A key set twice
 * (SETITEM(S) of a key already there) keeps both pairs; lookups take the
 * later, as Python's dict keeps the value set last.
 */
#ifndef TS_INGEST_PICKLE_H
#define TS_INGEST_PICKLE_H

#include "core/core.h"

typedef enum ts_pv_kind {
    TS_PV_ABSENT = -1, TS_PV_NONE = 0, TS_PV_BOOL, TS_PV_INT, TS_PV_FLOAT, TS_PV_STR, TS_PV_BYTES,
    TS_PV_LIST, TS_PV_TUPLE, TS_PV_DICT,
} ts_pv_kind;

typedef uint64_t ts_pv;   /* a value word (tags above); 0 = absent */

enum { TS_PV_TAG_OBJ = 0, TS_PV_TAG_INT = 1, TS_PV_TAG_SPECIAL = 2 };
#define TS_PV_NONE_WORD  ((ts_pv)2)
#define TS_PV_FALSE_WORD ((ts_pv)6)
#define TS_PV_TRUE_WORD  ((ts_pv)10)
#define TS_PV_INT_MIN    (-((int64_t)1 << 61))   /* the range an int word holds */
#define TS_PV_INT_MAX    (((int64_t)1 << 61) - 1)

/* What a tagged pointer points to. */
typedef struct ts_pv_obj {
    uint8_t      kind;       /* ts_pv_kind: INT (wide), FLOAT, STR, BYTES, LIST, TUPLE, DICT */
    uint8_t      own_keys;   /* DICT: keys is this dict's own (may grow); else shared, read-only */
    uint32_t     n;          /* STR/BYTES: bytes; LIST/TUPLE: items; DICT: key/value pairs */
    union {
        int64_t  i;          /* INT beyond 62 bits */
        double   d;          /* FLOAT */
        const char *s;       /* STR (UTF-8, NUL-terminated) / BYTES */
        ts_pv   *v;          /* LIST/TUPLE: items; DICT: values */
    } u;
    union {                  /* 24 bytes an object (a snapshot's tree holds 60,000 and more) */
        const ts_pv *keys;   /* DICT: keys[i] goes with u.v[i]; NULL when empty. Its slots: n when
                              * shared, keys - u.v when its own (allocated together, keys after v) */
        uint64_t cap;        /* LIST/TUPLE: slots allocated in v */
    };
} ts_pv_obj;

typedef struct ts_pickle_block ts_pickle_block;
typedef struct ts_pickle {
    ts_pickle_block *blocks;   /* every ts_pv_obj, its arrays and strings (newest first) */
    ts_pv    root;
} ts_pickle;

/* Decode data[0..n); name is used in errors ("NAME: byte N: ..."). */
TS_NODISCARD int ts__pickle_load(ts_pickle *p, const char *name, const unsigned char *data, size_t n, ts_error *err);
/* The pickle in file path (plain, gzip or zstd; at most limit bytes
 * uncompressed). A compressed file is read through a window of 256 KiB, never
 * whole: the tree is all that is kept. head, when not NULL, sees the first
 * bytes (at least 2 unless the file is shorter) before any is run, and may
 * refuse the file (its status is returned). */
typedef int (*ts__pickle_head_fn)(void *ud, const unsigned char *head, size_t n);
TS_NODISCARD int ts__pickle_load_file(ts_pickle *p, const char *path, uint64_t limit, ts__pickle_head_fn head,
                                      void *ud, ts_error *err);
/* As ts__pickle_load_file on an open source, read through a window of
 * `window` bytes (fuzzing makes it small, so that opcodes straddle refills). */
typedef struct ts_src ts_src;
TS_NODISCARD int ts__pickle_load_src(ts_pickle *p, ts_src *src, size_t window, uint64_t limit,
                                     ts__pickle_head_fn head, void *ud, ts_error *err);
void ts__pickle_free(ts_pickle *p);

static inline const ts_pv_obj *ts__pv_obj(ts_pv v)
{
    return v && (v & 3) == TS_PV_TAG_OBJ ? (const ts_pv_obj *)(uintptr_t)v : NULL;
}
static inline ts_pv_kind ts__pv_kind(ts_pv v)
{
    if (!v) return TS_PV_ABSENT;
    if ((v & 3) == TS_PV_TAG_INT) return TS_PV_INT;
    if ((v & 3) == TS_PV_TAG_SPECIAL) return v == TS_PV_NONE_WORD ? TS_PV_NONE : TS_PV_BOOL;
    return (ts_pv_kind)ts__pv_obj(v)->kind;
}
/* Lookups on the tree; 0 / the default when absent or of another kind. */
static inline int64_t ts__pv_int(ts_pv v, int64_t dflt)
{
    if ((v & 3) == TS_PV_TAG_INT) return (int64_t)v >> 2;
    if (v == TS_PV_TRUE_WORD || v == TS_PV_FALSE_WORD) return v == TS_PV_TRUE_WORD;
    const ts_pv_obj *o = ts__pv_obj(v);
    return o && o->kind == TS_PV_INT ? o->u.i : dflt;
}
static inline double ts__pv_float(ts_pv v, double dflt)
{
    const ts_pv_obj *o = ts__pv_obj(v);
    return o && o->kind == TS_PV_FLOAT ? o->u.d : dflt;
}
static inline const char *ts__pv_str(ts_pv v)   /* STR only */
{
    const ts_pv_obj *o = ts__pv_obj(v);
    return o && o->kind == TS_PV_STR ? o->u.s : NULL;
}
static inline uint32_t ts__pv_len(ts_pv v)      /* LIST/TUPLE items, else 0 */
{
    const ts_pv_obj *o = ts__pv_obj(v);
    return o && (o->kind == TS_PV_LIST || o->kind == TS_PV_TUPLE) ? o->n : 0;
}
static inline ts_pv ts__pv_at(ts_pv v, uint32_t i) { return i < ts__pv_len(v) ? ts__pv_obj(v)->u.v[i] : 0; }
ts_pv ts__pv_getn(ts_pv dict, const char *key, size_t n);
/* Inline so that a literal key's length is known when compiling. */
static inline ts_pv ts__pv_get(ts_pv dict, const char *key) { return ts__pv_getn(dict, key, strlen(key)); }
/* A dict's keys array (shared by dicts of the same keys) and its pairs; NULL when not a dict. */
static inline const ts_pv *ts__pv_dict_keys(ts_pv d, uint32_t *n)
{
    const ts_pv_obj *o = ts__pv_obj(d);
    if (!o || o->kind != TS_PV_DICT) return NULL;
    *n = o->n;
    return o->keys;
}
/* Index of key in keys[0..n) (the last match, as ts__pv_getn), -1 = absent. */
int32_t ts__pv_key_index(const ts_pv *keys, uint32_t n, const char *key, size_t kn);
/* A key looked up in many dicts of one pickle: its slot is found once per
 * keys array. Valid for one tree (a freed tree's arrays may come back at the
 * same addresses): start from TS_PV_KEY for each. */
typedef struct ts_pv_key {
    const char  *key;
    uint32_t     len;
    uint32_t     n;          /* pairs of `keys` */
    const ts_pv *keys;       /* the keys array `at` is for; NULL = none yet */
    int32_t      at;         /* slot of key in it, -1 = absent */
} ts_pv_key;
#define TS_PV_KEY(lit) ((ts_pv_key){lit, sizeof lit - 1, 0, NULL, -1})
static inline ts_pv ts__pv_get_key(ts_pv dict, ts_pv_key *k)
{
    uint32_t n = 0;
    const ts_pv *keys = ts__pv_dict_keys(dict, &n);
    if (!keys) return 0;
    if (TS_UNLIKELY(keys != k->keys || n != k->n)) {
        k->at = ts__pv_key_index(keys, n, k->key, k->len);
        k->keys = keys;
        k->n = n;
    }
    return k->at < 0 ? 0 : ts__pv_obj(dict)->u.v[k->at];
}

#endif
