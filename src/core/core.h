/* core.h - internal building blocks shared by every module: allocation through
 * the one hook, error filling, arenas, growable column arrays, the string
 * interning pool, an open-addressing u64 hash map, a string builder, clocks.
 *
 * Not for: anything format- or analysis-specific. Nothing here is exported;
 * names are ts__* (cross-file internals).
 */
#ifndef TS_CORE_H
#define TS_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trainscope/common.h"

#ifdef NDEBUG
#define TS_ASSERT(c) ((void)0)
#else
#include <assert.h>
#define TS_ASSERT(c) assert(c)
#endif

#define TS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TS_LIKELY(x)   __builtin_expect(!!(x), 1)
#define TS_NONE32 UINT32_MAX   /* sentinel for "no row" in uint32 relations */

/* ---- allocation (all go through the hook set by ts_set_allocator) ---- */
void *ts__malloc(size_t n);
void *ts__calloc(size_t n, size_t elem);
void *ts__realloc(void *p, size_t old_n, size_t new_n);
void  ts__free(void *p, size_t n);
char *ts__strdup(const char *s);

/* Map the pages of [p, p + bytes) now, by madvise, instead of one page
 * fault per 4 KiB as they are first written: a third less kernel time on
 * this VM (0.44 vs 0.65-0.75 s per GB); from 64 MiB, by up to 4 threads at
 * once (util.c). Only for memory the caller is about to fill; no-op under
 * 1 MiB or without MADV_POPULATE_WRITE (Linux < 5.14). */
void ts__prefault(void *p, size_t bytes);

/* Grow a column array so that it holds at least `need` elements of `elem`
 * bytes; capacity doubles so appends are amortized O(1). Returns TS_ENOMEM
 * and leaves *p and *cap untouched on failure. */
TS_NODISCARD int ts__grow(void **p, uint32_t *cap, size_t elem, size_t need);

/* One column of a table whose columns share one capacity: where the
 * column's pointer lives and its element size. */
typedef struct ts_col_ref { void **p; size_t elem; } ts_col_ref;

/* ts__grow for a table's n columns together: to at least `need` rows, from
 * first_cap rows, then doubling. On failure *cap is untouched and the
 * columns already grown keep their larger blocks (ts__free takes sizes only
 * as a hint for the allocation hook). */
TS_NODISCARD int ts__grow_cols(const ts_col_ref *cols, size_t n, uint32_t *cap, size_t need, uint32_t first_cap);

/* ---- errors ---- */
/* Fill err (if not NULL) with status and a formatted one-line message. Returns
 * status so callers can `return ts__error(err, TS_EPARSE, ...)`. */
int ts__error(ts_error *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Public entry points clear err first, so the first-cause-wins rule of
 * ts__error never keeps a stale message from an earlier call or stack garbage. */
static inline void ts__error_clear(ts_error *err) { if (err) { err->status = TS_OK; err->msg[0] = 0; } }

/* ---- bounded whole-file reads (side files: fx dumps, logs, tables) ----
 * Defined in ingest/text.c: they read through the byte source (ts_src), so a
 * gzip or zstd copy of any side file reads as the file itself. */
/* Limits on the side files read whole into memory. Real ones are far below
 * (fx dumps 0.1-0.3 MB, nccl-tests logs and time tables under 0.1 MB); the
 * bound turns a wrong file (/dev/zero, a trace for a log) into an error
 * instead of an unbounded allocation. */
#define TS__FX_DUMP_MAX_BYTES   ((size_t)256 << 20)
#define TS__SIDE_FILE_MAX_BYTES ((size_t)64 << 20)
/* All of path (file, pipe or device) in a ts__malloc'd buffer of *cap bytes,
 * NUL-terminated after *len. More than max_bytes is an error "PATH: larger
 * than N MiB, the most read for WHAT"; NULL with err set on any failure. */
char *ts__read_bounded(const char *path, const char *what, size_t max_bytes, size_t *len, size_t *cap,
                       ts_error *err);

/* Call fn on each line of a text file read whole (at most
 * TS__SIDE_FILE_MAX_BYTES; `what` names it in the error), NUL-terminated,
 * without its newline, from '#' on cut when cut_hash; 1-based numbers. Stops
 * at the first non-zero return, which it returns. */
typedef int (*ts__line_fn)(void *ctx, unsigned line, char *text, ts_error *err);
int ts__for_lines(const char *path, const char *what, bool cut_hash, ts__line_fn fn, void *ctx, ts_error *err);

/* ---- strict number parsing (command-line options, text fields) ---- */
/* The whole of s as a number within [lo, hi]: false on empty input, trailing
 * text, overflow, NaN or a value out of range (nothing is saturated). */
bool ts__parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
bool ts__parse_f64(const char *s, double lo, double hi, double *out);
/* "A:B", "A:" (open end), ":B" or "A" (= A:A) into [*a, *b] (INT64_MIN /
 * INT64_MAX for open ends); false unless both parse and A <= B. */
bool ts__parse_range(const char *s, int64_t *a, int64_t *b);

/* ---- arena: bump allocation in blocks of 1 MiB growing to 8 MiB, freed all at once ---- */
typedef struct ts_arena_block ts_arena_block;
typedef struct ts_arena {
    ts_arena_block *head;   /* newest block, NULL when empty */
    size_t used;            /* bytes used in head */
    size_t total;           /* bytes in all blocks, for memory reports */
} ts_arena;
void  ts__arena_init(ts_arena *a);
void *ts__arena_alloc(ts_arena *a, size_t n);     /* 8-byte aligned; NULL on OOM */
char *ts__arena_strndup(ts_arena *a, const char *s, size_t n);
void  ts__arena_free(ts_arena *a);

/* ---- string pool: interned strings with 32-bit ids, 0 = none ----
 * Bytes live in one growing buffer, NUL-terminated; the id is the index into
 * `off`. Lookup is one hash probe sequence, so interning a name seen before
 * costs a hash and a memcmp, never an allocation. */
typedef struct ts_strpool {
    char     *bytes;     /* all strings back to back, each NUL-terminated */
    size_t    n_bytes, cap_bytes;
    uint32_t *off;       /* off[id] = byte offset of string id; off[0] = "" */
    uint32_t *len;       /* len[id] = length in bytes */
    uint32_t  n, cap;    /* number of ids including 0 */
    uint32_t *slots;     /* open-addressing table of ids, 0 = empty */
    uint32_t *hashes;    /* hash of each id, so resizing never rehashes bytes */
    uint32_t  n_slots;   /* power of two */
} ts_strpool;
int         ts__strpool_init(ts_strpool *p);
void        ts__strpool_free(ts_strpool *p);
/* Returns the id (>0), or 0 with TS_ENOMEM impossible to distinguish from the
 * empty string: callers check ts__strpool_oom() after bulk interning. */
uint32_t    ts__str_intern(ts_strpool *p, const char *s, size_t n);
uint32_t    ts__str_find(const ts_strpool *p, const char *s, size_t n); /* 0 = absent */
static inline const char *ts__str(const ts_strpool *p, uint32_t id) { return p->bytes + p->off[id]; }
static inline uint32_t ts__str_len(const ts_strpool *p, uint32_t id) { return p->len[id]; }
bool        ts__strpool_oom(const ts_strpool *p);

/* ---- hashing ---- */
uint64_t ts__hash_bytes(const void *data, size_t n);
static inline uint64_t ts__hash_u64(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33; return x;
}

/* ---- map64: uint64 key -> uint64 value, open addressing, linear probing.
 * Key UINT64_MAX is reserved as the empty marker. */
typedef struct ts_map64 {
    uint64_t *keys;
    uint64_t *vals;
    uint32_t  n, n_slots;   /* n_slots is 0 or a power of two */
} ts_map64;
void ts__map64_init(ts_map64 *m);
void ts__map64_free(ts_map64 *m);
TS_NODISCARD int ts__map64_put(ts_map64 *m, uint64_t key, uint64_t val);
/* Returns true and sets *val when present. */
bool ts__map64_get(const ts_map64 *m, uint64_t key, uint64_t *val);
/* key's value, to read or write in place; NULL when absent. Valid until the next insertion. */
uint64_t *ts__map64_find(const ts_map64 *m, uint64_t key);
/* key's value, inserted as 0 when absent (*added: whether it was); NULL when
 * out of memory or key is UINT64_MAX. One probe where get + put take two.
 * Valid until the next insertion. */
uint64_t *ts__map64_slot(ts_map64 *m, uint64_t key, bool *added);

/* ---- string builder for reports ---- */
typedef struct ts_buf {
    char  *s;        /* NUL-terminated when len > 0 or after ts__buf_cstr */
    size_t len, cap;
    bool   oom;      /* set once an append failed; further appends are no-ops */
} ts_buf;
void ts__buf_init(ts_buf *b);
void ts__buf_free(ts_buf *b);
void ts__buf_add(ts_buf *b, const char *s, size_t n);
void ts__buf_puts(ts_buf *b, const char *s);
void ts__buf_printf(ts_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ts__buf_json_str(ts_buf *b, const char *s, size_t n); /* quoted, escaped */
const char *ts__buf_cstr(ts_buf *b);

/* ---- clocks ---- */
int64_t ts__now_ns(void);        /* CLOCK_MONOTONIC */
size_t  ts__peak_rss_bytes(void); /* getrusage maxrss */
size_t  ts__rss_bytes(void);      /* resident now (/proc/self/statm), 0 = unknown */
size_t  ts__mem_total_bytes(void); /* MemTotal of /proc/meminfo, 0 = unknown */
/* The memory budget (ts_set_memory_limit): name the phase that follows, so a
 * refusal says where it came from (a static string); ts__mem_check is a phase
 * boundary: TS_ENOMEM when the resident memory is already past the limit. */
void    ts__mem_phase(const char *phase);
TS_NODISCARD int ts__mem_check(const char *next_phase);

/* ---- small math ---- */
int ts__cmp_i64(const void *a, const void *b);
int ts__cmp_double(const void *a, const void *b);
/* Median of v[0..n), the mean of the middle two (rounded down) when n is
 * even, 0 when n is 0. Sorts v. */
int64_t ts__median_i64(int64_t *v, uint32_t n);

/* ---- sorts ----
 * LSD radix sorts over 11-bit digits of key - min, as many passes as the
 * keys' range needs; insertion sort below a few dozen elements. Why not
 * qsort: an indirect call per compare made sorting a tenth of `stats` and
 * `breakdown` on large traces; these are O(n) a pass. */
/* v[0, n) ascending; tmp holds n. */
void ts__sort_i64(int64_t *v, size_t n, int64_t *tmp);
/* n records of 16 bytes, stably, by the int64 at byte offset key_off (0 or
 * 8); tmp holds n records. */
void ts__sort_rec16(void *v, size_t n, size_t key_off, void *tmp);

/* ---- files written whole or not at all ----
 * One implementation (util.c): every file goes to a temporary beside it
 * and is renamed only when every write was good. */
/* Write b to DIR/.NAME.tmp, the temporary of DIR/NAME in a set, and keep it
 * for ts__commit_tmp (checked: a short write or failed close removes it). */
TS_NODISCARD int ts__write_tmp(const char *dir, const char *name, const ts_buf *b, ts_error *err);
/* The first n_written of names[] were written as temporaries: with rc ==
 * TS_OK rename each to DIR/NAME, else remove them. Returns rc, or the
 * failing rename's TS_EIO. */
TS_NODISCARD int ts__commit_tmp(const char *dir, const char *const *names, int n_written, int rc, ts_error *err);
/* One file at PATH written whole or not at all: ts__file_open opens a
 * temporary beside it (DIR/.NAME.PID.tmp; PATH itself when it exists and is
 * not a regular file, such as /dev/stdout or a fifo), ts__file_close flushes
 * and closes it and, with ok and every write good, renames it to PATH; else
 * it removes the temporary and says which write failed. */
typedef struct { FILE *f; const char *path; char tmp[4096]; bool direct; int e; } ts__file;   /* e: a failed write's errno */
TS_NODISCARD int ts__file_open(ts__file *o, const char *path, ts_error *err);
TS_NODISCARD int ts__file_close(ts__file *o, bool ok, ts_error *err);
/* The output folder DIR made (with parents: mkdir -p) unless it exists;
 * *made says whether this call made it, so a failed write can take it back
 * (rmdir) rather than leave an empty folder. */
TS_NODISCARD int ts__out_dir(const char *dir, bool parents, bool *made, ts_error *err);
/* ts__file_open + fwrite of b + ts__file_close. */
TS_NODISCARD int ts__write_file(const char *path, const ts_buf *b, ts_error *err);

#endif
