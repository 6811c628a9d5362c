/* pickle.h - a strict reader of Python pickles (protocols 0-5) into a tree
 * of plain values, for PyTorch's allocator snapshots (memory/snapshot.c).
 *
 * Not for: objects. It executes nothing: GLOBAL, STACK_GLOBAL, REDUCE, BUILD,
 * NEWOBJ, INST, OBJ, persistent ids and extension codes are refused with the
 * byte offset and the global's name ("pickle global 'os.system' is not one
 * this reader knows"). What a plain pickle of dicts, lists, tuples, sets,
 * strings, bytes, ints (up to 64 bits), floats, bools and None holds is
 * read; sets become lists. Values live in one arena freed with the tree.
 */
#ifndef TS_INGEST_PICKLE_H
#define TS_INGEST_PICKLE_H

#include "core/core.h"

typedef enum ts_pv_kind {
    TS_PV_NONE = 0, TS_PV_BOOL, TS_PV_INT, TS_PV_FLOAT, TS_PV_STR, TS_PV_BYTES,
    TS_PV_LIST, TS_PV_TUPLE, TS_PV_DICT,
} ts_pv_kind;

typedef struct ts_pv ts_pv;
struct ts_pv {
    uint8_t   kind;     /* ts_pv_kind */
    uint32_t  n;        /* STR/BYTES: bytes; LIST/TUPLE: items; DICT: key/value pairs */
    uint32_t  slots;    /* containers: slots of v in use (DICT: 2n) */
    uint32_t  cap;      /* containers: slots allocated in v */
    union {
        int64_t      i;     /* BOOL (0/1), INT */
        double       d;     /* FLOAT */
        const char  *s;     /* STR (UTF-8, NUL-terminated) / BYTES */
        ts_pv      **v;     /* LIST/TUPLE: n items; DICT: 2n (key, value, key, value, ...) */
    } u;
};

typedef struct ts_pickle {
    ts_arena arena;     /* every ts_pv and its arrays */
    ts_pv   *root;
} ts_pickle;

/* Decode data[0..n); name is used in errors ("NAME: byte N: ..."). */
TS_NODISCARD int ts__pickle_load(ts_pickle *p, const char *name, const unsigned char *data, size_t n, ts_error *err);
void ts__pickle_free(ts_pickle *p);

/* Lookups on the tree; NULL / the default when absent or of another kind. */
const ts_pv *ts__pv_getn(const ts_pv *dict, const char *key, size_t n);
/* Inline so that a literal key's length is known when compiling. */
static inline const ts_pv *ts__pv_get(const ts_pv *dict, const char *key) { return ts__pv_getn(dict, key, strlen(key)); }
static inline int64_t ts__pv_int(const ts_pv *v, int64_t dflt)
{
    return v && (v->kind == TS_PV_INT || v->kind == TS_PV_BOOL) ? v->u.i : dflt;
}
static inline const char *ts__pv_str(const ts_pv *v) { return v && v->kind == TS_PV_STR ? v->u.s : NULL; }   /* STR only */
static inline uint32_t ts__pv_len(const ts_pv *v)
{
    return v && (v->kind == TS_PV_LIST || v->kind == TS_PV_TUPLE) ? v->n : 0;
}
static inline const ts_pv *ts__pv_at(const ts_pv *v, uint32_t i) { return i < ts__pv_len(v) ? v->u.v[i] : NULL; }

#endif
