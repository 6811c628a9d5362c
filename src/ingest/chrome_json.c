/* chrome_json.c - the Chrome-trace / Kineto JSON reader: one file -> one rank.
 *
 * Not for: finding files, threads, or analysis (load.c, analyze/). It reads
 * the object form ({"traceEvents": [...], other keys = rank metadata}) and the
 * bare-list form ([...]) in windows of WINDOW bytes, never the whole file; an
 * uncompressed file is mapped and read in place as one window whose pages
 * are given back behind the parser (RELEASE_STEP), so its resident share
 * stays bounded the same way.
 *
 * How the window works: parsing proceeds in "units" (the opening bracket, one
 * top-level member, one trace event). A unit touches the model only after all
 * its bytes were scanned, except for arg rows (rolled back) and interned
 * strings (harmless). When the scanner runs out of bytes mid-unit it longjmps
 * here; the unit's bytes move to the window start, more are read (the window
 * doubles if one unit is larger than it), and the unit is parsed again.
 *
 * Event phases: X, B/E (paired per track), i/I/R, C, M, s/t/f flows, b/e/n
 * async; other phases are skipped and counted as warnings. Times: float
 * microseconds converted exactly to int64 ns, plus baseTimeNanoseconds.
 */
#include "ingest/json_scan.h"

#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>

/* Window bytes. Small on purpose: a window that fits in L2 is parsed while
 * the bytes read(2) just copied are still cached (about 8% less CPU than
 * 8 MiB on the 500 MB benchmark); it doubles for a larger unit.
 * A mapped file (TS_SRC_MAP) is one window holding the whole file; the pages
 * behind the parser go back every RELEASE_STEP bytes, which bounds the
 * file's share of the peak RSS to about that much. */
enum { WINDOW = 256 << 10, RELEASE_STEP = 8 << 20 };

typedef enum { ST_BEGIN, ST_OBJ, ST_EVENTS, ST_END, ST_DONE } parse_state;

/* A B (or async b) waiting for its E. */
typedef struct open_slice {
    int64_t  ts_ns;                     /* begin time */
    uint32_t name, cat;                 /* string ids, 0 = none */
    uint32_t args, n_args;              /* arg rows [args, args + n_args) */
    int64_t  corr, ext_id;              /* -1 = none */
    uint8_t  kind;                      /* ts_kind */
} open_slice;
typedef struct slice_stack {
    open_slice *v;                      /* innermost open slice last */
    uint32_t    n, cap;
} slice_stack;

/* Where a flow endpoint was written, (pid, tid): endpoints go straight into
 * the rank's flow_ends with this table's row in `track`; the row becomes a
 * track after the whole file is read (the endpoint may precede the first
 * slice that shows its pid/tid is a GPU stream). Why a table, not pid and
 * tid per endpoint: a trace has a few threads and streams but hundreds of
 * thousands of endpoints, and a second array of them was 20% of the page
 * faults of a Kineto load. */
typedef struct flow_place {
    int64_t pid, tid;
} flow_place;

/* A top-level member, kept apart so the rank's metadata args stay contiguous. */
typedef struct meta_arg {
    uint32_t key;                       /* string id */
    uint8_t  type;                      /* ts_arg_type */
    uint64_t val;                       /* as ts_args.val */
} meta_arg;

/* One trace event's fields as read, before it is committed to the model. */
typedef struct ev {
    const char *start;         /* first byte of the event, for messages */
    char     ph;               /* phase, 0 = absent */
    char     scope;            /* instant scope 't' 'p' 'g', 0 = absent */
    bool     has_ts, has_dur, has_cat, has_id, bind_enclosing;
    int64_t  ts_ns, dur_ns;    /* dur_ns valid when has_dur */
    int64_t  pid, tid;         /* 0 when absent */
    uint32_t pid_str, tid_str; /* string pid/tid names, 0 = numeric */
    uint64_t id;               /* flow/async id */
    uint32_t name, cat;        /* string ids, 0 = none */
    uint32_t args, n_args;     /* arg rows [args, args + n_args) */
    int64_t  corr, ext_id;     /* -1 = none */
} ev;

enum { ICACHE_BITS = 12, ICACHE_SLOTS = 1 << ICACHE_BITS };
typedef struct icache_ent {
    uint64_t head, tail;                /* first and last 8 bytes (zero-padded below 8) */
    uint32_t n, id;                     /* length (0 = empty slot), string id */
} icache_ent;
/* The arg key that followed `prev` last time, with its bytes (and the
 * closing quote) kept inline so a prediction is checked with word compares;
 * when they fit, the bytes run from the end of the previous value (or the
 * args' '{') through the separator, so a hit skips that too. */
enum { KPRED_BITS = 8, KPRED_BYTES = 32 };
#define KPRED_FIRST UINT32_MAX          /* `prev` of the first key (no key id) */
typedef struct key_pred {
    uint32_t prev, next;                /* key ids; next 0 = empty slot */
    uint32_t n;                         /* bytes matched ([separator,] key, quote, colon[, blank]), <= KPRED_BYTES */
    bool     with_sep;                  /* the bytes start at the separator ('{' or ',' and blanks), not after the opening quote */
    uint32_t words;                     /* 8-byte words holding those bytes */
    uint64_t last_mask;                 /* bytes of the last word that belong to them */
    uint64_t w[KPRED_BYTES / 8];        /* those bytes, zero padding */
} key_pred;
/* The last numeric pid or tid as written: its bytes up to and including the
 * byte after the number, so equal words mean the same number. */
enum { NUM_MEMO_SLOTS = 8 };
typedef struct num_memo {
    uint64_t word, mask;                /* masked bytes; mask 0 = empty */
    unsigned len;                       /* digits */
    int64_t  val;
} num_memo;
typedef struct track_memo {
    int64_t  pid, tid;
    uint32_t track;                     /* track row, TS_NONE32 = empty */
    bool     gpu;                       /* looked up as a GPU stream */
    bool     named;                     /* looked up with a string pid or tid (its names remembered) */
} track_memo;
/* Slots of track_for's memo: TF1 timelines and Kineto traces alternate
 * between a few (pid, tid) pairs event by event (an op's launch, its
 * kernel on a stream, the stream:all copy), which one slot missed every
 * time; 16 hold a trace's busy pairs. */
/* The last counter series' track: a counter event names the same series
 * as the one before it most of the time, and building "event.series" to
 * intern it cost a formatted print per event. */
typedef struct series_memo {
    int64_t  pid;
    uint32_t name, key;                 /* event name and arg key ids */
    uint32_t track;                     /* counter track row, TS_NONE32 = empty */
} series_memo;
enum { TRACK_MEMO_BITS = 4, TRACK_MEMO_SLOTS = 1 << TRACK_MEMO_BITS };

/* The bytes that came between a member's value and the next key last time
 * (the comma, blanks, the key with its quotes and colon, the blank after
 * it: `, "cat": `), per phase and previous key. Why: a trace writes its
 * events' members in the same order with the same spacing, and one masked
 * two-word compare replaces the separator's peek, the key's peek and
 * fast_key's dispatch (about thirty instructions a member). */
enum { MPRED_PHASES = 32, MPRED_KEYS = 14, MPRED_BYTES = 16 };
typedef struct member_pred {
    uint64_t w[2];                      /* those bytes, zero beyond len */
    uint64_t mask[2];                   /* the bytes of w that count */
    uint8_t  len;                       /* 1..MPRED_BYTES, 0 = empty slot */
    uint8_t  key;                       /* the event_key those bytes name */
} member_pred;

typedef struct parser {
    js        s;                 /* scanner state (window, position) */
    ts_src   *src;
    ts_rank  *r;
    size_t    cap;               /* window capacity, bytes (excluding JS_PAD) */
    bool      mapped;            /* the window is the source's mapping (borrowed, read-only) */
    size_t    released;          /* mapped: bytes before this offset were given back */
    const char *unit;            /* start of the unit being parsed */
    uint32_t  unit_args;         /* args.n at the unit start (rollback point) */
    parse_state st;
    bool      first;             /* no member/event yet in the current container */
    bool      bare_list;
    bool      saw_events;        /* the object form had a "traceEvents" member */
    uint8_t   et_keys;           /* bit 0: a top-level "schema", bit 1: "nodes" (an execution trace's) */
    uint64_t  n_events;          /* events in traceEvents so far */
    uint32_t  slices_ready, args_ready, flows_ready; /* rows up to which the tables are prefaulted */
    uint32_t  slices_step, args_step, flows_step;    /* rows prefaulted at a time, 0 = no prefaulting */
    uint32_t  k_name, k_sort_index, k_labels, k_corr, k_ext_id;   /* pre-interned keys */
    ts_map64  pid_name;          /* pid -> process name id */
    ts_map64  tid_name;          /* hash(pid, tid) -> thread name id */
    ts_map64  tid_sort;          /* hash(pid, tid) -> thread_sort_index */
    ts_map64  pid_label;         /* pid -> process_labels string id */
    uint64_t  n_object_events;   /* phases N/O/D (object snapshots), skipped */
    int64_t   pid_base;          /* added to every pid: files read into one rank keep their processes apart */
    bool      counts_only;       /* slices' arg rows are not kept (ts__ingest_json_path) */
    uint32_t  first_slice, first_instant, first_counter, first_flow_end, first_track; /* rows this file began at */
    ts_map64  pid_sort;          /* pid -> process_sort_index */
    ts_map64  gpu_track;         /* hash(pid, tid) -> GPU stream track row */
    ts_map64  cat_kind;          /* category id -> ts_kind */
    slice_stack *stacks;         /* per track row: open B (or b) slices */
    uint32_t  n_stacks;
    flow_place *places;          /* distinct (pid, tid) of flow endpoints */
    uint32_t  n_places, cap_places;
    ts_map64  place_index;       /* pair_key(pid, tid) -> row of places */
    uint32_t  last_place;        /* memo: row of the last endpoint's place, TS_NONE32 = none */
    meta_arg *meta;
    uint32_t  n_meta, cap_meta;
    int64_t   base_time_ns;      /* baseTimeNanoseconds, 0 = none */
    int32_t   dist_rank, world_size;   /* from distributedInfo, -1 = none */
    uint32_t  last_cat;          /* memo of kind_of: category id, 0 = none */
    ts_kind   last_kind;
    track_memo last_track[TRACK_MEMO_SLOTS];   /* memo of track_for, by (pid, tid, gpu) */
    num_memo  last_num[2][NUM_MEMO_SLOTS];   /* [0] pid, [1] tid: by first byte */
    series_memo last_series;     /* memo of series_track */
    /* The caches last (from icache on): they hold string ids of the rank,
     * so the files of one rank share them (parser_init's keep_caches). */
    icache_ent icache[ICACHE_SLOTS];   /* recent strings -> id; n 0 = empty */
    key_pred  kpred[1 << KPRED_BITS];  /* arg key -> the key that followed it */
    member_pred mpred[MPRED_PHASES][MPRED_KEYS];   /* (phase & 31, previous key) -> the next key's bytes */
} parser;

static _Noreturn void oom(parser *P)
{
    P->s.status = ts__error(P->s.err, TS_ENOMEM, "%s: out of memory", P->s.name);
    longjmp(P->s.jb, JS_FAILED);
}

/* Map key of a (pid, tid) pair: a 64-bit mix, so two pairs share a key with
 * odds of 2^-64 per pair of pairs; UINT64_MAX is the maps' empty marker. */
static uint64_t pair_key(int64_t pid, int64_t tid)
{
    uint64_t k = ts__hash_u64((uint64_t)pid * 0x9e3779b97f4a7c15ULL ^ ts__hash_u64((uint64_t)tid));
    return k == UINT64_MAX ? 0 : k;
}

/* Time arithmetic on hostile input: saturate instead of overflowing (which
 * C leaves undefined), so every slice keeps ts + dur within int64. */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* A number as an int64 id: integers wrap modulo 2^64 (ids are bit
 * patterns), fractions truncate, and out-of-range or NaN doubles saturate. */
static int64_t num_as_i64(js_num n)
{
    if (n.is_int) return (int64_t)(n.neg ? (uint64_t)0 - n.mag : n.mag);
    if (!(n.d > -9.2e18)) return INT64_MIN;   /* also NaN */
    if (!(n.d < 9.2e18)) return INT64_MAX;
    return (int64_t)n.d;
}

static void map_put(parser *P, ts_map64 *m, uint64_t key, uint64_t val)
{
    if (key == UINT64_MAX) key = 0;
    if (ts__map64_put(m, key, val)) oom(P);
}

/* ---- strings ----
 * Most strings repeat (names, categories, arg keys), so a direct-mapped cache
 * keyed by length and the first and last 8 bytes answers most lookups with
 * one compare, skipping the pool's full hash. Reading 8 bytes around a short
 * string is safe: it lies inside the window, which has JS_PAD bytes after it. */
/* Bytes [8, n - 8) of a and b equal, for n > 16 (head and tail words are
 * compared already). Inline 8-byte words: names are 20-60 bytes, where a
 * memcmp call cost more than the compare. Reads stay inside [0, n). */
static inline bool same_middle(const char *a, const char *b, size_t n)
{
    for (size_t i = 8; i + 8 < n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y) return false;
    }
    return true;
}

/* A string the cache did not hold: interned, and it takes slot c. */
static __attribute__((noinline)) uint32_t intern_miss(parser *P, icache_ent *c, const char *s, size_t n, uint64_t head,
                                                      uint64_t tail)
{
    uint32_t id = ts__rank_intern(P->r, s, n);
    *c = (icache_ent){head, tail, (uint32_t)n, id};
    return id;
}

/* Inlined: the hit, a few loads and compares, was cheaper than the call
 * and register saves around it. */
static inline __attribute__((always_inline)) uint32_t intern_raw(parser *P, const char *s, size_t n)
{
    if (TS_UNLIKELY(n == 0 || n > 1024)) return ts__rank_intern(P->r, s, n);   /* long kernel names too: comparing beats hashing */
    uint64_t head, tail;
    memcpy(&head, s, 8);
    memcpy(&tail, s + (n >= 8 ? n - 8 : 0), 8);
    if (n < 8) { head &= (1ULL << (8 * n)) - 1; tail = head; }
    /* Two independent multiplies and the top bits of their xor: enough mixing
     * for a cache (a collision costs one pool lookup), at a third of the
     * latency of a full 64-bit finalizer on this hot path. */
    uint64_t h = ((head ^ n) * 0x9e3779b97f4a7c15ULL) ^ (tail * 0xc2b2ae3d27d4eb4fULL);
    icache_ent *c = &P->icache[h >> (64 - ICACHE_BITS)];
    if (c->n == n && c->head == head && c->tail == tail && (n <= 16 || same_middle(ts__rank_str(P->r, c->id), s, n)))
        return c->id;
    return intern_miss(P, c, s, n, head, tail);
}

static __attribute__((noinline)) uint32_t intern_decoded(parser *P, js_str s)
{
    size_t n;
    const char *d = js_decode(&P->s, s, &n);
    return ts__rank_intern(P->r, d, n);
}

static inline __attribute__((always_inline)) uint32_t intern_str(parser *P, js_str s)
{
    return s.clean ? intern_raw(P, s.s, s.n) : intern_decoded(P, s);
}

/* p at a string value; interned. Inlined, as intern_raw. */
static inline __attribute__((always_inline)) uint32_t read_str(parser *P)
{
    return intern_str(P, js_string(&P->s));
}

/* A string pid/tid ("CPU functions", TF "/job:worker/..."): a stable synthetic
 * id from the string's hash, tagged with bit 62 so it never equals a real
 * OS id; the string itself becomes the process/thread name. */
static int64_t synthetic_id(const ts_rank *r, uint32_t sid)
{
    const char *s = ts__rank_str(r, sid);
    return (int64_t)((1ULL << 62) | (ts__hash_bytes(s, ts__str_len(&r->strings, sid)) & 0xffffffffULL));
}

/* ---- values ---- */
/* p at '[': skip an array of small non-negative integers ("grid": [80,
 * 1, 1], "Input Dims" rows) element by element without js_skip's recursion,
 * checking the same syntax. Returns false with p unchanged for anything
 * else (nested arrays, strings, negative or long numbers), which js_skip
 * then reads. */
static inline bool skip_int_array(js *j)
{
    const char *start = j->p;
    j->p++;
    if (js_peek(j) == ']') { j->p++; return true; }
    for (;;) {
        uint64_t u;
        js_peek(j);
        if (!js_small_uint(j, &u)) break;
        char c = js_peek(j);
        j->p++;
        if (c == ']') return true;
        if (c != ',') break;
    }
    j->p = start;
    return false;
}

static inline __attribute__((always_inline)) void parse_value(parser *P, ts_arg_type *type, uint64_t *val)
{
    js *j = &P->s;
    char c = js_peek(j);
    if (c == '"') { *type = TS_ARG_STR; *val = read_str(P); return; }
    if (c == '-' || (c >= '0' && c <= '9')) {
        if (js_small_uint(j, val)) { *type = TS_ARG_INT; return; }
        js_num n = js_number(j);
        if (n.is_int && !n.neg && n.mag <= INT64_MAX) { *type = TS_ARG_INT; *val = n.mag; }
        else if (n.is_int && !n.neg) { *type = TS_ARG_UINT; *val = n.mag; }
        else if (n.is_int && n.mag <= (uint64_t)INT64_MAX + 1) { *type = TS_ARG_INT; *val = (uint64_t)0 - n.mag; }
        else {
            double d = n.is_int ? -(double)n.mag : n.d;
            *type = TS_ARG_DOUBLE;
            memcpy(val, &d, 8);
        }
        return;
    }
    if (c == '{' || c == '[') {
        const char *start = j->p;
        if (c != '[' || !skip_int_array(j)) js_skip(j, 1);
        *type = TS_ARG_JSON;
        *val = intern_raw(P, start, (size_t)(j->p - start));   /* "grid": [80, 1, 1] repeats too */
        return;
    }
    int lit = js_literal(j);
    *type = lit < 0 ? TS_ARG_NULL : TS_ARG_BOOL;
    *val = lit < 0 ? 0 : (uint64_t)lit;
}

/* "correlation" and "External id" with a non-negative integer value go to
 * the event's corr / ext_id only, not to an arg row: a slice keeps them in
 * its columns (ts__slice_arg answers them from there), and commit_event
 * writes them back as rows for the phases that have no such columns. Why:
 * they were a third of a Kineto trace's arg rows, memory the kernel had to
 * fault in for nothing. */
static inline __attribute__((always_inline)) void add_arg(parser *P, ev *e, uint32_t key)
{
    ts_arg_type type;
    uint64_t val;
    parse_value(P, &type, &val);
    if ((key == P->k_corr || key == P->k_ext_id) && type == TS_ARG_INT) {
        if (key == P->k_corr) e->corr = (int64_t)val;
        else e->ext_id = (int64_t)val;
        if ((int64_t)val >= 0) return;
    }
    if (ts__rank_push_arg(P->r, key, type, val) == TS_NONE32) oom(P);
    e->n_args++;
}

/* What was expected at p in an event or its "args": a separator (',' or
 * '}') or a key. */
static _Noreturn __attribute__((noinline, cold)) void member_fail(parser *P, const char *at, bool key, bool in_args)
{
    if (in_args) js_fail(&P->s, at, key ? "expected a key in \"args\"" : "expected ',' or '}' in \"args\"");
    js_fail(&P->s, at, key ? "expected a key in event %llu" : "expected ',' or '}' in event %llu",
            (unsigned long long)P->n_events);
}

/* p at an object's '{' (first) or just after a member's value: moves to
 * the next key's opening quote, or past the object's '}' and returns false. */
static inline bool to_next_key(parser *P, bool first, bool in_args)
{
    js *j = &P->s;
    if (first) {
        j->p++;   /* past the '{' */
        if (js_peek(j) == '}') { j->p++; return false; }
    } else {
        char c = js_peek(j);
        j->p++;
        if (c == '}') return false;
        if (c != ',') member_fail(P, j->p - 1, false, in_args);
    }
    if (js_peek(j) != '"') member_fail(P, j->p, true, in_args);
    return true;
}

/* Whether the bytes at q are slot k's (for key prev, of the given form):
 * then p moves past them and the key id is returned, else 0. */
static inline uint32_t key_match(js *j, const key_pred *k, uint32_t prev, bool with_sep, const char *q)
{
    if (k->prev != prev || k->next == 0 || k->with_sep != with_sep) return 0;
    uint32_t last = k->words - 1;
    for (uint32_t i = 0; i < last; i++) {
        uint64_t x;
        memcpy(&x, q + 8 * i, 8);
        if (x != k->w[i]) return 0;
    }
    uint64_t x;
    memcpy(&x, q + 8 * last, 8);
    if ((x & k->last_mask) != k->w[last]) return 0;
    j->p = q + k->n;
    return k->next;
}

static inline key_pred *kpred_slot(parser *P, uint32_t prev)
{
    return &P->kpred[(prev * 0x9e3779b1u) >> (32 - KPRED_BITS)];
}

/* If the key is the one that followed `prev` last time, move p past its
 * colon (and the blank after it when it was there last time) and return
 * its id, else 0. with_sep: p is just after the previous value (or at the
 * '{'), and the separator's bytes must match too; else p is at the key's
 * opening quote.
 * Why: an event's arg keys come in the same order every time its kind
 * recurs ("External id", "Record function id", "Sequence number", ...), and
 * checking the guess costs a few word compares where scanning and interning
 * the key cost about ninety instructions. The window's zero padding makes
 * the KPRED_BYTES read safe; the bytes learnt hold no NUL, so a match never
 * runs into it. */
static inline uint32_t predicted_key(parser *P, uint32_t prev, bool with_sep)
{
    return key_match(&P->s, kpred_slot(P, prev), prev, with_sep, with_sep ? P->s.p : P->s.p + 1);
}

/* k was just read from `from` on (the separator's first byte) and p is
 * past the colon after it: remember the bytes from the separator on when
 * they fit, else the key with its closing quote, the colon and a blank
 * after it when the bytes run so (then a hit skips the colon and the
 * value's peek as well). */
static void learn_key(parser *P, uint32_t prev, uint32_t next, js_str k, const char *from)
{
    const char *after = k.s + k.n + 1;   /* the byte after the closing quote */
    if (!k.clean || P->s.p != after + 1 || *after != ':') return;
    const char *end = after + 1 + (after[1] == ' ');   /* key, quote, colon[, blank] */
    bool with_sep = end - from <= KPRED_BYTES;
    const char *start = with_sep ? from : k.s;
    size_t m = (size_t)(end - start);
    if (m > KPRED_BYTES) return;
    key_pred *e = kpred_slot(P, prev);
    memset(e, 0, sizeof *e);
    e->prev = prev;
    e->next = next;
    e->with_sep = with_sep;
    e->n = (uint32_t)m;
    e->words = (uint32_t)((m + 7) / 8);
    e->last_mask = m % 8 ? (1ULL << (8 * (m % 8))) - 1 : UINT64_MAX;
    memcpy(e->w, start, m);
}

/* p just after a value in "args" (or at its '{' when prev is KPRED_FIRST):
 * moves past the next key and its colon and sets *key to its id (0 for
 * the empty key), or moves past the '}' and returns false. */
static inline __attribute__((always_inline)) bool next_arg_key(parser *P, uint32_t prev, uint32_t *key)
{
    js *j = &P->s;
    if ((*key = predicted_key(P, prev, true)) != 0) return true;   /* a hit moves p past the colon */
    const char *from = j->p;
    if (!to_next_key(P, prev == KPRED_FIRST, true)) return false;
    if ((*key = predicted_key(P, prev, false)) != 0) return true;
    js_str k = js_string(j);
    *key = intern_str(P, k);
    js_expect(j, ':', "':' after a key");
    learn_key(P, prev, *key, k, from);
    return true;
}

/* A value whose row would be given back at once (see skim_args): read and
 * checked as parse_value reads it (the same messages, and an escaped
 * string decoded, so its invalid UTF-8 or \u0000 is counted), not interned. */
static inline __attribute__((always_inline)) void skip_value(parser *P)
{
    js *j = &P->s;
    char c = js_peek(j);
    if (c == '"') {
        js_str s = js_string(j);
        size_t n;
        if (!s.clean) (void)js_decode(j, s, &n);
        return;
    }
    uint64_t u;
    if (c == '-' || (c >= '0' && c <= '9')) {
        if (!js_small_uint(j, &u)) (void)js_number(j);
        return;
    }
    if (c == '{' || c == '[') {
        if (c != '[' || !skip_int_array(j)) js_skip(j, 1);
        return;
    }
    (void)js_literal(j);
}

/* p at '{' of "args": every member becomes an arg row. */
static void parse_args(parser *P, ev *e)
{
    js *j = &P->s;
    if (js_peek(j) != '{') { add_arg(P, e, ts__rank_intern(P->r, "args", 4)); return; }
    uint32_t prev = KPRED_FIRST;   /* the previous key's id */
    for (uint32_t key; next_arg_key(P, prev, &key); prev = key) add_arg(P, e, key);
}

/* The "args" of an X event in a counts-only load (info's), p at its '{':
 * the slice's arg rows would be given back at its commit (drop_arg_rows),
 * so only what outlives them is kept: "correlation" and "External id"
 * (slice columns, add_arg as in parse_args). Every other value is read and
 * checked (skip_value), not interned nor written. Past UINT16_MAX members
 * (rows that a slice keeps, with a warning) the object is read again by
 * parse_args. Why: a TF1 timeline's ops carry their node name and op type
 * as args, a fifth of info's instructions on the dPRO sample. */
static void skim_args(parser *P, ev *e)
{
    js *j = &P->s;
    if (js_peek(j) != '{') { parse_args(P, e); return; }
    const char *start = j->p;
    uint32_t prev = KPRED_FIRST, n = 0;
    for (uint32_t key; next_arg_key(P, prev, &key); prev = key) {
        if (TS_UNLIKELY(++n > UINT16_MAX)) {
            P->r->args.n = e->args;
            e->n_args = 0;
            j->p = start;
            parse_args(P, e);
            return;
        }
        if (key == P->k_corr || key == P->k_ext_id) add_arg(P, e, key);
        else skip_value(P);
    }
}

/* pid/tid: a number (possibly fractional in some writers) or a string.
 * `memos` remember short integers read here, one per slot of their first
 * digit: a trace repeats the same few pids and tids (a TF1 timeline
 * alternates among its launch, stream and stream:all pids), so one masked
 * compare usually answers. */
static inline __attribute__((always_inline)) void parse_pid(parser *P, num_memo *memos, int64_t *id, uint32_t *sid)
{
    js *j = &P->s;
    if (js_peek(j) == '"') {
        *sid = read_str(P);
        *id = synthetic_id(P->r, *sid);
        return;
    }
    uint64_t w;
    memcpy(&w, j->p, 8);
    num_memo *memo = &memos[w % NUM_MEMO_SLOTS];
    if (memo->mask && (w & memo->mask) == memo->word) { *id = memo->val; j->p += memo->len; return; }
    if (*j->p != '-' && (*j->p < '0' || *j->p > '9')) js_fail(j, j->p, "event %llu: \"pid\"/\"tid\" is not a number or string", (unsigned long long)P->n_events);
    uint64_t u;
    const char *at = j->p;
    if (js_small_uint(j, &u)) {
        /* js_small_uint read at most 7 digits, so the digits and the byte
         * after them (a non-digit, not a NUL at the window end) fit in 8. */
        unsigned len = (unsigned)(j->p - at);
        memo->mask = len == 7 ? UINT64_MAX : (1ULL << (8 * (len + 1))) - 1;
        memo->word = w & memo->mask;
        memo->len = len;
        memo->val = (int64_t)u;
        *id = (int64_t)u;
        return;
    }
    js_num n = js_number(j);
    /* Saturated or wrapped, an id past int64 would name another process or
     * thread in silence (and merge with any other such id). */
    bool fits = n.is_int ? n.mag <= (uint64_t)INT64_MAX + n.neg : (n.d > -9.2e18 && n.d < 9.2e18);
    if (!fits) js_fail(j, at, "event %llu: \"pid\"/\"tid\" is past the int64 range", (unsigned long long)P->n_events);
    *id = num_as_i64(n);
}

/* Flow/async ids: numbers, or strings ("0x1f" hex, otherwise hashed). */
static uint64_t parse_id(parser *P)
{
    js *j = &P->s;
    char c = js_peek(j);
    if (c == '"') {
        js_str s = js_string(j);
        char *endp;
        if (s.clean && s.n > 2 && s.s[0] == '0' && (s.s[1] == 'x' || s.s[1] == 'X')) {
            uint64_t v = strtoull(s.s, &endp, 16);
            if (endp == s.s + s.n) return v;
        }
        return ts__hash_bytes(s.s, s.n);
    }
    if (c == '{') {   /* id2: {"local": ...} or {"global": ...} */
        j->p++;
        uint64_t v = 0;
        if (js_peek(j) == '}') { j->p++; return 0; }
        for (;;) {
            if (js_peek(j) != '"') js_fail(j, j->p, "expected a key in \"id2\"");
            (void)js_string(j);
            js_expect(j, ':', "':' after a key");
            v = v * 31 + parse_id(P);
            c = js_peek(j);
            j->p++;
            if (c == '}') return v;
            if (c != ',') js_fail(j, j->p - 1, "expected ',' or '}' in \"id2\"");
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        uint64_t u;
        if (js_small_uint(j, &u)) return u;   /* correlation ids mostly */
        js_num n = js_number(j);
        return (uint64_t)num_as_i64(n);
    }
    js_fail(j, j->p, "event %llu: \"id\" is not a number or string", (unsigned long long)P->n_events);
}

static inline __attribute__((always_inline)) void parse_time_field(parser *P, int64_t *out, const char *field)
{
    js *j = &P->s;
    js_peek(j);
    if (!js_time_ns_fast(j, out))
        js_fail(j, j->p, "event %llu: \"%s\" is not a number", (unsigned long long)P->n_events, field);
}

/* "ph", "s", "bp": the first character of a string. The usual value, one
 * plain ASCII character ("X"), is read without the string scanner (the
 * byte after it is in the window or its zero padding). */
static char parse_char_field(parser *P)
{
    js *j = &P->s;
    if (js_peek(j) != '"') { js_skip(j, 1); return 0; }
    const char *q = j->p;
    unsigned char c = (unsigned char)q[1];
    if (q[2] == '"' && c >= 0x20 && c < 0x80 && c != '\\' && c != '"') { j->p = q + 3; return (char)c; }
    js_str s = js_string(j);
    return s.n ? s.s[0] : 0;
}

/* The event keys the model has columns for. */
typedef enum {
    K_OTHER, K_PH, K_TS, K_ID, K_BP, K_S, K_PID, K_TID, K_DUR, K_CAT, K_ID2, K_NAME, K_ARGS,
    K_START,   /* no member yet: the event's '{' (a member_pred row only) */
} event_key;

static event_key key_of(const char *k, size_t n)
{
    switch (n) {
    case 1: return k[0] == 's' ? K_S : K_OTHER;
    case 2:
        if (!memcmp(k, "ph", 2)) return K_PH;
        if (!memcmp(k, "ts", 2)) return K_TS;
        if (!memcmp(k, "id", 2)) return K_ID;
        if (!memcmp(k, "bp", 2)) return K_BP;
        return K_OTHER;
    case 3:
        if (!memcmp(k, "pid", 3)) return K_PID;
        if (!memcmp(k, "tid", 3)) return K_TID;
        if (!memcmp(k, "dur", 3)) return K_DUR;
        if (!memcmp(k, "cat", 3)) return K_CAT;
        if (!memcmp(k, "id2", 3)) return K_ID2;
        return K_OTHER;
    case 4:
        if (!memcmp(k, "name", 4)) return K_NAME;
        if (!memcmp(k, "args", 4)) return K_ARGS;
        return K_OTHER;
    }
    return K_OTHER;
}

/* Recognize a common key with its colon in one 8-byte load: p at the
 * opening quote of a key. Returns the key and moves p past the colon,
 * or K_OTHER with p unchanged (an unusual key, escapes, or blanks before the
 * colon: the general path reads those). Why: scanning a key as a string,
 * then the colon, then dispatching on its bytes was about a third of the
 * per-event work; traces spell these ten keys the same way every time. The
 * window's zero padding makes the 8-byte read safe. */
static inline event_key fast_key(js *j)
{
    uint64_t w;
    memcpy(&w, j->p, 8);
#define KEY5(a, b) ((uint64_t)'"' | (uint64_t)(a) << 8 | (uint64_t)(b) << 16 | (uint64_t)'"' << 24 | (uint64_t)':' << 32)
#define KEY6(a, b, c) ((uint64_t)'"' | (uint64_t)(a) << 8 | (uint64_t)(b) << 16 | (uint64_t)(c) << 24 | \
                       (uint64_t)'"' << 32 | (uint64_t)':' << 40)
#define KEY7(a, b, c, d) ((uint64_t)'"' | (uint64_t)(a) << 8 | (uint64_t)(b) << 16 | (uint64_t)(c) << 24 | \
                          (uint64_t)(d) << 32 | (uint64_t)'"' << 40 | (uint64_t)':' << 48)
    const uint64_t m5 = 0xFFFFFFFFFFULL, m6 = 0xFFFFFFFFFFFFULL, m7 = 0xFFFFFFFFFFFFFFULL;
    event_key k = K_OTHER;
    unsigned len = 0;
    switch ((char)(w >> 8)) {
    case 'p':
        if ((w & m5) == KEY5('p', 'h')) { k = K_PH; len = 5; }
        else if ((w & m6) == KEY6('p', 'i', 'd')) { k = K_PID; len = 6; }
        break;
    case 't':
        if ((w & m5) == KEY5('t', 's')) { k = K_TS; len = 5; }
        else if ((w & m6) == KEY6('t', 'i', 'd')) { k = K_TID; len = 6; }
        break;
    case 'c': if ((w & m6) == KEY6('c', 'a', 't')) { k = K_CAT; len = 6; } break;
    case 'd': if ((w & m6) == KEY6('d', 'u', 'r')) { k = K_DUR; len = 6; } break;
    case 'n': if ((w & m7) == KEY7('n', 'a', 'm', 'e')) { k = K_NAME; len = 7; } break;
    case 'a': if ((w & m7) == KEY7('a', 'r', 'g', 's')) { k = K_ARGS; len = 7; } break;
    case 'i': if ((w & m5) == KEY5('i', 'd')) { k = K_ID; len = 5; } break;
    case 'b': if ((w & m5) == KEY5('b', 'p')) { k = K_BP; len = 5; } break;
    }
#undef KEY5
#undef KEY6
#undef KEY7
    /* and the blank that usually follows the colon, so the value's peek
     * lands on its first byte */
    j->p += len + (len && ((const char *)&w)[len] == ' ' && len < 8);
    return k;
}

/* A member the model has no column for (or a known key with a value of
 * another type): kept reachable as an arg. Out of line: it is rare, and
 * inlined it made every member pay for its registers. */
static __attribute__((noinline, cold)) void add_unmodelled(parser *P, ev *e, event_key key, const char *k, size_t n)
{
    static const char *const spelled[] = {
        [K_PH] = "ph", [K_TS] = "ts", [K_ID] = "id", [K_BP] = "bp", [K_S] = "s", [K_PID] = "pid",
        [K_TID] = "tid", [K_DUR] = "dur", [K_CAT] = "cat", [K_ID2] = "id2", [K_NAME] = "name", [K_ARGS] = "args",
    };
    if (key != K_OTHER) { k = spelled[key]; add_arg(P, e, ts__rank_intern(P->r, k, strlen(k))); return; }
    add_arg(P, e, intern_raw(P, k, n));   /* k is in the window (or a short copy of it): 8-byte reads are safe */
}

/* One member of an event object, p at its value; `k`, `n` are the key's
 * bytes (used only for K_OTHER). Inlined into parse_event's loop: a call
 * per member cost a prologue and epilogue as long as the common cases. */
static inline __attribute__((always_inline)) void parse_member(parser *P, ev *e, event_key key, const char *k, size_t n)
{
    switch (key) {
    case K_S: e->scope = parse_char_field(P); return;
    case K_PH: e->ph = parse_char_field(P); return;
    case K_TS: parse_time_field(P, &e->ts_ns, "ts"); e->has_ts = true; return;
    case K_ID: case K_ID2: e->id = parse_id(P); e->has_id = true; return;
    case K_BP: e->bind_enclosing = parse_char_field(P) == 'e'; return;
    case K_PID: parse_pid(P, P->last_num[0], &e->pid, &e->pid_str); return;
    case K_TID: parse_pid(P, P->last_num[1], &e->tid, &e->tid_str); return;
    case K_DUR: parse_time_field(P, &e->dur_ns, "dur"); e->has_dur = true; return;
    case K_CAT:
        if (js_peek(&P->s) != '"') break;   /* a null or numeric category is kept as an arg */
        e->cat = read_str(P);
        e->has_cat = true;
        return;
    case K_NAME:
        if (js_peek(&P->s) != '"') break;   /* a non-string name is kept as an arg */
        e->name = read_str(P);
        return;
    case K_ARGS:
        if (P->counts_only && e->ph == 'X') skim_args(P, e);
        else parse_args(P, e);
        return;
    case K_OTHER: case K_START: break;
    }
    add_unmodelled(P, e, key, k, n);
}

/* A member whose key the fast path did not recognize: p at its quote. */
static __attribute__((noinline)) void parse_member_slow(parser *P, ev *e)
{
    js *j = &P->s;
    js_str k = js_string(j);
    const char *ks = k.s;
    size_t kn = k.n;
    char kb[16];
    js_expect(j, ':', "':' after a key");
    if (!k.clean) {
        /* Escaped keys are rare. Known keys are short: copy those out of
         * the scratch buffer, which parsing the value may reuse. */
        ks = js_decode(j, k, &kn);
        if (kn >= sizeof kb) { add_arg(P, e, ts__rank_intern(P->r, ks, kn)); return; }
        ks = memcpy(kb, ks, kn);
    }
    event_key key = key_of(ks, kn);
    if (key == K_OTHER) add_unmodelled(P, e, K_OTHER, ks, kn);
    else parse_member(P, e, key, ks, kn);
}

/* The member after `prev` when the bytes at q are the ones that led to
 * it last time (see member_pred): p moves past its key, colon and blank;
 * else K_OTHER. The window's zero padding makes the 16-byte read safe,
 * and never matches (the bytes learnt hold no NUL). */
static inline event_key predicted_member(parser *P, const member_pred *row, unsigned prev)
{
    const member_pred *m = &row[prev];
    uint64_t a, b;
    memcpy(&a, P->s.p, 8);
    memcpy(&b, P->s.p + 8, 8);
    if (m->len == 0 || ((a & m->mask[0]) ^ m->w[0]) | ((b & m->mask[1]) ^ m->w[1])) return K_OTHER;
    P->s.p += m->len;
    return (event_key)m->key;
}

/* The bytes [from, p) led from member `prev` to key `key`: remember them. */
static inline void learn_member(parser *P, member_pred *row, unsigned prev, const char *from, event_key key)
{
    size_t n = (size_t)(P->s.p - from);
    if (key == K_OTHER || n > MPRED_BYTES) return;
    member_pred *m = &row[prev];
    uint64_t w[2];
    memcpy(w, from, 16);
    m->mask[0] = n >= 8 ? UINT64_MAX : (1ULL << (8 * n)) - 1;
    m->mask[1] = n >= 16 ? UINT64_MAX : n <= 8 ? 0 : (1ULL << (8 * (n - 8))) - 1;
    m->w[0] = w[0] & m->mask[0];
    m->w[1] = w[1] & m->mask[1];
    m->len = (uint8_t)n;
    m->key = (uint8_t)key;
}

/* e blank (zeros, ids -1) by six 16-byte stores. Why not memset: GCC made it
 * `rep stos`, whose start-up was 8% of parse_event's samples (perf
 * cpu-clock, dPRO sample `info`), and it does the same to a struct copy. */
static inline void blank_event(ev *e)
{
    _Static_assert(sizeof(ev) == 96, "ev is stored in six 16-byte blocks");
    __m128i z = _mm_setzero_si128(), *v = (__m128i *)(void *)e;
    _mm_storeu_si128(v, z); _mm_storeu_si128(v + 1, z); _mm_storeu_si128(v + 2, z);
    _mm_storeu_si128(v + 3, z); _mm_storeu_si128(v + 4, z);
    _mm_storeu_si128(v + 5, _mm_set1_epi64x(-1));   /* corr, ext_id */
    _Static_assert(offsetof(ev, corr) == 80 && offsetof(ev, ext_id) == 88, "the ids are the last block");
}

/* p at the event's '{'. */
static void parse_event(parser *P, ev *e)
{
    js *j = &P->s;
    blank_event(e);
    e->args = P->r->args.n;
    e->start = j->p;
    if (js_peek(j) != '{') js_fail(j, j->p, "event %llu is not an object", (unsigned long long)P->n_events);
    unsigned prev = K_START;
    /* The predictions' row for the event's phase, looked up again only
     * when "ph" is read (per member, the phase's load, the multiply and
     * the row's load were one dependency chain before every compare). */
    member_pred *row = P->mpred[0];
    for (;;) {
        /* p at the '{' or just after a member's value */
        event_key key = predicted_member(P, row, prev);
        if (key == K_OTHER) {
            const char *from = j->p;
            if (!to_next_key(P, prev == K_START, false)) return;
            key = fast_key(j);
            learn_member(P, row, prev, from, key);
        }
        if (TS_LIKELY(key != K_OTHER)) parse_member(P, e, key, NULL, 0);
        else parse_member_slow(P, e);
        if (key == K_PH || key == K_OTHER) row = P->mpred[(unsigned char)e->ph % MPRED_PHASES];   /* K_OTHER: an unusual "ph" key too */
        prev = key;
    }
}

/* ---- committing events to the model ---- */
static inline __attribute__((always_inline)) ts_kind kind_of(parser *P, const ev *e)
{
    if (!e->has_cat) {
        /* Legacy PyTorch traces have no "cat": ProfilerStep#N marks steps,
         * everything else on the CPU is an operator. */
        const char *nm = ts__rank_str(P->r, e->name);
        return strncmp(nm, "ProfilerStep#", 13) == 0 ? TS_KIND_USER_ANNOTATION : TS_KIND_CPU_OP;
    }
    uint64_t k;
    if (e->cat == P->last_cat) return P->last_kind;
    if (ts__map64_get(&P->cat_kind, e->cat, &k)) {
        P->last_cat = e->cat;
        P->last_kind = (ts_kind)k;
        return (ts_kind)k;
    }
    ts_kind kind = ts__kind_from_cat(ts__rank_str(P->r, e->cat), ts__str_len(&P->r->strings, e->cat));
    map_put(P, &P->cat_kind, e->cat, (uint64_t)kind);
    return kind;
}

static void remember_names(parser *P, const ev *e)
{
    uint64_t v;
    if (e->pid_str && !ts__map64_get(&P->pid_name, (uint64_t)e->pid, &v)) map_put(P, &P->pid_name, (uint64_t)e->pid, e->pid_str);
    if (e->tid_str && !ts__map64_get(&P->tid_name, pair_key(e->pid, e->tid), &v)) map_put(P, &P->tid_name, pair_key(e->pid, e->tid), e->tid_str);
}

static void forget_tracks(parser *P)
{
    for (uint32_t i = 0; i < TRACK_MEMO_SLOTS; i++) P->last_track[i].track = TS_NONE32;
}

/* GPU kinds go on a stream track (pid = device, tid = stream); anything else
 * on a (pid, tid) already known as a stream joins it; the rest are threads. */
static uint32_t track_lookup(parser *P, const ev *e, bool gpu)
{
    uint64_t key = pair_key(e->pid, e->tid), v;
    uint32_t t;
    if (e->pid_str || e->tid_str) remember_names(P, e);
    if (gpu) {
        t = ts__rank_track(P->r, TS_TRACK_GPU_STREAM, e->pid, e->tid);
        if (t == TS_NONE32) oom(P);
        if (!ts__map64_get(&P->gpu_track, key, &v)) {
            map_put(P, &P->gpu_track, key, t);
            forget_tracks(P);   /* a thread slot of the memo may name this (pid, tid) */
        }
        return t;
    }
    if (P->gpu_track.n && ts__map64_get(&P->gpu_track, key, &v)) return (uint32_t)v;
    t = ts__rank_track(P->r, TS_TRACK_THREAD, e->pid, e->tid);
    if (t == TS_NONE32) oom(P);
    return t;
}

static inline __attribute__((always_inline)) uint32_t track_for(parser *P, const ev *e, ts_kind kind)
{
    bool gpu = ts__kind_on_gpu(kind);
    uint64_t h = ((uint64_t)e->pid * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)e->tid * 0xc2b2ae3d27d4eb4fULL) ^ gpu;
    track_memo *m = &P->last_track[(h * 0xff51afd7ed558ccdULL) >> (64 - TRACK_MEMO_BITS)];
    bool named = e->pid_str || e->tid_str;
    if (m->track != TS_NONE32 && m->pid == e->pid && m->tid == e->tid && m->gpu == gpu && m->named >= named)
        return m->track;
    uint32_t t = track_lookup(P, e, gpu);
    /* The memo's thread slots stay right while GPU streams appear:
     * track_lookup empties the memo whenever a (pid, tid) becomes a stream,
     * and a lookup for a known stream returns the stream, which a slot may
     * then hold. Why it matters: Kineto traces always have streams, and
     * without the memo every CPU event paid two hash lookups. */
    *m = (track_memo){e->pid, e->tid, t, gpu, named};
    return t;
}

static slice_stack *stack_of(parser *P, uint32_t track)
{
    if (track >= P->n_stacks) {
        uint32_t n = P->n_stacks ? P->n_stacks : 16;
        while (n <= track) n *= 2;
        slice_stack *ns = ts__realloc(P->stacks, P->n_stacks * sizeof *ns, n * sizeof *ns);
        if (!ns) oom(P);
        memset(ns + P->n_stacks, 0, (n - P->n_stacks) * sizeof *ns);
        P->stacks = ns;
        P->n_stacks = n;
    }
    return &P->stacks[track];
}

static void rollback_args(parser *P, const ev *e) { P->r->args.n = e->args; }

/* A counts-only load keeps no slice's args: rows [first, first + n), the
 * last of the table, are given back (the next event writes over them).
 * Not when they are not the last rows, nor past what a slice can hold
 * (that warning is counted as in a whole load). */
static bool drop_arg_rows(parser *P, uint32_t first, uint32_t n)
{
    if (!P->counts_only || n == 0 || n > UINT16_MAX || first + n != P->r->args.n) return false;
    P->r->args.n = first;
    return true;
}

static inline __attribute__((always_inline)) uint32_t add_slice(parser *P, uint32_t track, int64_t ts, int64_t dur, const open_slice *o)
{
    ts_rank *r = P->r;
    if (dur < 0) {
        ts__rank_warn(r, TS_WARN_NEGATIVE_DURATION, "%s: \"%s\" at %lld ns has negative duration %lld ns; clamped to 0",
                      r->path, ts__rank_str(r, o->name), (long long)ts, (long long)dur);
        dur = 0;
    }
    if (sat_add(ts, dur) == INT64_MAX) dur = INT64_MAX - ts;   /* keeps ts + dur representable */
    uint32_t n_args = o->n_args;
    if (drop_arg_rows(P, o->args, n_args)) n_args = 0;
    uint32_t s = ts__rank_push_slice(r, track, ts, dur, o->name, o->cat, (ts_kind)o->kind, o->args, n_args,
                                     o->corr, o->ext_id);
    if (s == TS_NONE32) oom(P);
    return s;
}

static inline __attribute__((always_inline)) open_slice open_of(parser *P, const ev *e)
{
    open_slice o = {e->ts_ns, e->name, e->cat, e->args, e->n_args, e->corr, e->ext_id, (uint8_t)kind_of(P, e)};
    return o;
}

static void push_open(parser *P, uint32_t track, const open_slice *o)
{
    slice_stack *st = stack_of(P, track);
    if (st->n == st->cap) {
        uint32_t cap = st->cap ? st->cap * 2 : 8;
        open_slice *nv = ts__realloc(st->v, st->cap * sizeof *nv, cap * sizeof *nv);
        if (!nv) oom(P);
        st->v = nv;
        st->cap = cap;
    }
    st->v[st->n++] = *o;
}

/* An E closes the innermost open B on its track. Its args join the B's, as
 * the Chrome trace format says (results computed at the end of a range are
 * often written on the E): the E's rows, just written, are followed by
 * copies of the B's, so the slice's range is contiguous, and on a key
 * written twice the E's value is found first. The B's own rows stay
 * behind, unreferenced. */
static void end_open(parser *P, uint32_t track, const ev *e)
{
    slice_stack *st = stack_of(P, track);
    if (st->n == 0) {
        rollback_args(P, e);
        ts__rank_warn(P->r, TS_WARN_UNMATCHED_END, "%s: event %llu: end of \"%s\" at %lld ns has no begin",
                      P->r->path, (unsigned long long)P->n_events, ts__rank_str(P->r, e->name), (long long)e->ts_ns);
        return;
    }
    open_slice o = st->v[--st->n];
    /* The E's ids fill the slice's empty id columns; one that differs from
     * the B's becomes a row (add_arg kept it out of the rows). */
    uint32_t n_e = e->n_args;
    if (o.corr < 0) o.corr = e->corr;
    else if (e->corr >= 0 && e->corr != o.corr) {
        if (ts__rank_push_arg(P->r, P->k_corr, TS_ARG_INT, (uint64_t)e->corr) == TS_NONE32) oom(P);
        n_e++;
    }
    if (o.ext_id < 0) o.ext_id = e->ext_id;
    else if (e->ext_id >= 0 && e->ext_id != o.ext_id) {
        if (ts__rank_push_arg(P->r, P->k_ext_id, TS_ARG_INT, (uint64_t)e->ext_id) == TS_NONE32) oom(P);
        n_e++;
    }
    if (n_e) {
        ts_args *a = &P->r->args;
        for (uint32_t i = 0; i < o.n_args; i++) {
            uint32_t from = o.args + i;
            if (ts__rank_push_arg(P->r, a->key[from], (ts_arg_type)a->type[from], a->val[from]) == TS_NONE32) oom(P);
        }
        o.args = e->args;
        o.n_args += n_e;
    }
    add_slice(P, track, o.ts_ns, sat_add(e->ts_ns, o.ts_ns == INT64_MIN ? INT64_MAX : -o.ts_ns), &o);
}

/* The counter track of series "event.series" of e's process. */
static uint32_t series_track(parser *P, const ev *e, uint32_t key)
{
    ts_rank *r = P->r;
    series_memo *m = &P->last_series;
    if (m->track != TS_NONE32 && m->name == e->name && m->key == key && m->pid == e->pid) return m->track;
    char buf[512];
    int k = snprintf(buf, sizeof buf, "%.*s.%s", (int)ts__str_len(&r->strings, e->name), ts__rank_str(r, e->name),
                     ts__rank_str(r, key));
    if (k < 0 || (size_t)k >= sizeof buf) k = (int)sizeof buf - 1;
    uint32_t track = ts__rank_counter_track(r, e->pid, ts__rank_intern(r, buf, (size_t)k));
    *m = (series_memo){e->pid, e->name, key, track};
    return track;
}

static void commit_counter(parser *P, const ev *e)
{
    ts_rank *r = P->r;
    for (uint32_t a = e->args; a < e->args + e->n_args; a++) {
        ts_arg_type t = (ts_arg_type)r->args.type[a];
        if (t != TS_ARG_INT && t != TS_ARG_UINT && t != TS_ARG_DOUBLE && t != TS_ARG_BOOL) continue;
        uint32_t track = series_track(P, e, r->args.key[a]);
        if (track == TS_NONE32 || ts__rank_add_counter(r, track, e->ts_ns, ts__arg_as_double(t, r->args.val[a])) == TS_NONE32)
            oom(P);
    }
    rollback_args(P, e);
}

static bool event_arg(parser *P, const ev *e, uint32_t key, ts_arg_type *type, uint64_t *val)
{
    for (uint32_t a = e->args; a < e->args + e->n_args; a++) {
        if (P->r->args.key[a] != key) continue;
        *type = (ts_arg_type)P->r->args.type[a];
        *val = P->r->args.val[a];
        return true;
    }
    return false;
}

static void commit_metadata(parser *P, const ev *e)
{
    const char *nm = ts__rank_str(P->r, e->name);
    ts_arg_type t;
    uint64_t v;
    if (!strcmp(nm, "process_name") && event_arg(P, e, P->k_name, &t, &v) && t == TS_ARG_STR)
        map_put(P, &P->pid_name, (uint64_t)e->pid, v);
    else if (!strcmp(nm, "thread_name") && event_arg(P, e, P->k_name, &t, &v) && t == TS_ARG_STR)
        map_put(P, &P->tid_name, pair_key(e->pid, e->tid), v);
    else if (!strcmp(nm, "thread_sort_index") && event_arg(P, e, P->k_sort_index, &t, &v) && t == TS_ARG_INT)
        map_put(P, &P->tid_sort, pair_key(e->pid, e->tid), v);
    else if (!strcmp(nm, "process_labels") && event_arg(P, e, P->k_labels, &t, &v) && t == TS_ARG_STR)
        map_put(P, &P->pid_label, (uint64_t)e->pid, v);
    else if (!strcmp(nm, "process_sort_index") && event_arg(P, e, P->k_sort_index, &t, &v) && t == TS_ARG_INT)
        map_put(P, &P->pid_sort, (uint64_t)e->pid, v);
    if (e->pid_str || e->tid_str) remember_names(P, e);
    rollback_args(P, e);   /* what they say is in the maps above, then on the tracks */
}

/* Row of (pid, tid) in P->places, added when new. */
static uint32_t flow_place_of(parser *P, int64_t pid, int64_t tid)
{
    uint32_t m = P->last_place;
    if (m != TS_NONE32 && P->places[m].pid == pid && P->places[m].tid == tid) return m;
    uint64_t key = pair_key(pid, tid), v;
    if (ts__map64_get(&P->place_index, key, &v)) return P->last_place = (uint32_t)v;
    if (P->n_places == P->cap_places &&
        ts__grow((void **)&P->places, &P->cap_places, sizeof *P->places, (size_t)P->n_places + 1))
        oom(P);
    P->places[P->n_places] = (flow_place){pid, tid};
    map_put(P, &P->place_index, key, P->n_places);
    return P->last_place = P->n_places++;
}

static void commit_flow(parser *P, const ev *e)
{
    rollback_args(P, e);
    if (!e->has_id) {
        ts__rank_warn(P->r, TS_WARN_UNBOUND_FLOW, "%s: event %llu: flow event without \"id\"", P->r->path,
                      (unsigned long long)P->n_events);
        return;
    }
    ts_flow_end f = {
        .id = e->id, .ts_ns = e->ts_ns, .track = flow_place_of(P, e->pid, e->tid), .cat = e->cat,
        .name = e->name, .phase = e->ph, .bind_enclosing = e->ph != 'f' || e->bind_enclosing,
    };
    ts__rank_add_flow_end(P->r, &f);
    if (P->r->oom) oom(P);
}

/* Async b/e/n: one track per (pid, cat, id). */
static uint32_t async_track(parser *P, const ev *e)
{
    int64_t key = (int64_t)(ts__hash_u64(e->id ^ ((uint64_t)e->cat << 32)) >> 1);
    uint32_t t = ts__rank_track(P->r, TS_TRACK_ASYNC, e->pid, key);
    if (t == TS_NONE32) oom(P);
    if (P->r->tracks[t].name_id == 0) P->r->tracks[t].name_id = e->name;
    return t;
}

static void commit_instant(parser *P, const ev *e, uint32_t track)
{
    ts_kind kind = e->has_cat ? kind_of(P, e) : TS_KIND_OTHER;
    char scope = e->scope == 'g' || e->scope == 'p' ? e->scope : 't';
    if (ts__rank_add_instant(P->r, track, e->ts_ns, e->name, e->cat, kind, scope, e->args, e->n_args) == TS_NONE32)
        oom(P);
}

/* An event without id columns (instants, counters) gets its ids back as
 * arg rows (see add_arg); its rows are the last of the table. */
static void restore_id_rows(parser *P, ev *e)
{
    if (e->corr >= 0) {
        if (ts__rank_push_arg(P->r, P->k_corr, TS_ARG_INT, (uint64_t)e->corr) == TS_NONE32) oom(P);
        e->n_args++;
    }
    if (e->ext_id >= 0) {
        if (ts__rank_push_arg(P->r, P->k_ext_id, TS_ARG_INT, (uint64_t)e->ext_id) == TS_NONE32) oom(P);
        e->n_args++;
    }
}

static void commit_event(parser *P, ev *e)
{
    ts_rank *r = P->r;
    e->pid += P->pid_base;
    if (TS_UNLIKELY(e->corr >= 0 || e->ext_id >= 0) && e->ph != 'X' && e->ph != 'B' && e->ph != 'E' &&
        (e->ph == 'i' || e->ph == 'I' || e->ph == 'R' || e->ph == 'n' || e->ph == 'C'))
        restore_id_rows(P, e);
    if (!e->has_ts && e->ph != 'M' && e->ph != 0 && strchr("XBEiIRCstfben", e->ph))
        js_fail(&P->s, e->start, "event %llu: missing \"ts\"", (unsigned long long)P->n_events);
    switch (e->ph) {
    case 'X': {
        open_slice o = open_of(P, e);
        add_slice(P, track_for(P, e, (ts_kind)o.kind), e->ts_ns, e->has_dur ? e->dur_ns : 0, &o);
        break;
    }
    case 'B': {
        open_slice o = open_of(P, e);
        if (drop_arg_rows(P, o.args, o.n_args)) o.n_args = 0;
        push_open(P, track_for(P, e, (ts_kind)o.kind), &o);
        break;
    }
    case 'E': end_open(P, track_for(P, e, kind_of(P, e)), e); break;
    case 'i': case 'I': case 'R': commit_instant(P, e, track_for(P, e, TS_KIND_OTHER)); break;
    case 'n': commit_instant(P, e, async_track(P, e)); break;
    case 'b': {
        open_slice o = open_of(P, e);
        if (drop_arg_rows(P, o.args, o.n_args)) o.n_args = 0;
        push_open(P, async_track(P, e), &o);
        break;
    }
    case 'e': end_open(P, async_track(P, e), e); break;
    case 'C': commit_counter(P, e); break;
    case 'M': commit_metadata(P, e); break;
    case 's': case 't': case 'f': commit_flow(P, e); break;
    case 'N': case 'O': case 'D': rollback_args(P, e); P->n_object_events++; break;
    default:
        rollback_args(P, e);
        ts__rank_warn(r, TS_WARN_UNKNOWN_PHASE, "%s: event %llu: phase '%c' is not supported; skipped",
                      r->path, (unsigned long long)P->n_events, e->ph ? e->ph : '?');
    }
}

/* ---- top-level members (rank metadata) ---- */
static void add_meta(parser *P, uint32_t key, ts_arg_type type, uint64_t val)
{
    if (P->n_meta == P->cap_meta &&
        ts__grow((void **)&P->meta, &P->cap_meta, sizeof *P->meta, (size_t)P->n_meta + 1))
        oom(P);
    P->meta[P->n_meta++] = (meta_arg){key, (uint8_t)type, val};
}

/* The non-negative integer members named in keys of the object value that
 * starts at `start` (already scanned whole): out[i] gets keys[i]'s value and
 * is left as it was when that member is absent or not such an integer.
 * Other members are skipped; the scanner is put back where it was. Returns
 * where the first named member that is not such an integer up to max starts
 * (NULL = none), with its key's index in *bad_key. */
static const char *read_uint_members(parser *P, const char *start, const char *const *keys, int n_keys,
                                     uint64_t max, uint64_t *out, int *bad_key)
{
    const char *bad = NULL;
    js *j = &P->s;
    const char *after = j->p;
    j->p = start;
    if (js_peek(j) == '{') {
        j->p++;
        while (js_peek(j) != '}') {
            js_str k = js_string(j);
            js_expect(j, ':', "':' after a key");
            int which = -1;
            for (int i = 0; i < n_keys; i++)
                if (k.n == strlen(keys[i]) && !memcmp(k.s, keys[i], k.n)) which = i;
            char c = js_peek(j);
            const char *at = j->p;
            bool ok = false;
            if (which >= 0 && ((c >= '0' && c <= '9') || c == '-')) {
                js_num v = js_number(j);
                if ((ok = v.is_int && !v.neg && !v.overflow && v.mag <= max)) out[which] = v.mag;
            } else {
                js_skip(j, 1);
            }
            if (which >= 0 && !ok && !bad) { bad = at; *bad_key = which; }
            if (js_peek(j) != ',') break;
            j->p++;
            js_peek(j);
        }
    }
    j->p = after;
    return bad;
}

/* distributedInfo: rank and world_size. A value that is not a whole number
 * from 0 to 2^31-1 ("1", -3, 99999999999) is an error: taken as absent, the
 * rank fell back to 0 and the job was analysed with its ranks mixed up. */
static void read_distributed_info(parser *P, const char *start)
{
    static const char *const keys[2] = {"rank", "world_size"};
    uint64_t v[2] = {UINT64_MAX, UINT64_MAX};
    int which = 0;
    const char *bad = read_uint_members(P, start, keys, 2, INT32_MAX, v, &which);
    if (bad) js_fail(&P->s, bad, "distributedInfo.%s is not a whole number from 0 to %d", keys[which], INT32_MAX);
    if (v[0] <= INT32_MAX) P->dist_rank = (int32_t)v[0];
    if (v[1] <= INT32_MAX) P->world_size = (int32_t)v[1];
}

/* The "trainscope" block that `trainscope record` writes (docs/capture.md):
 * what the recorder lost becomes one warning, so every command says that the
 * trace is short of events instead of analyzing it as if it were whole. */
static void read_recorder_counts(parser *P, const char *start)
{
    enum { N_KEYS = 5 };
    static const char *const keys[N_KEYS] = {"dropped_events", "bad_records", "unfinished_ranges", "unmatched_ends",
                                             "cut_at_byte"};
    static const char *const what[N_KEYS] = {
        "the recorder dropped %llu events (its per-thread buffers were full: record --buffer-kb)",
        "%llu damaged records were skipped", "%llu ranges were still open at the end (closed there, args.unfinished)",
        "%llu ends had no begin",
        ("the recorded stream was cut short at byte %llu (a process killed mid-write, or the disk full): what came "
         "after is lost")};
    uint64_t n[N_KEYS] = {0, 0, 0, 0, 0};
    int bad_key;
    (void)read_uint_members(P, start, keys, N_KEYS, UINT64_MAX, n, &bad_key);   /* a damaged count is no loss to report */
    char msg[480];
    size_t len = 0;
    uint64_t total = 0;
    for (int i = 0; i < N_KEYS; i++) {
        if (!n[i]) continue;
        uint64_t count = i == N_KEYS - 1 ? 1 : n[i];   /* a cut is one loss, whatever its byte */
        total = count > UINT64_MAX - total ? UINT64_MAX : total + count;
        if (len && len + 2 < sizeof msg) len += (size_t)snprintf(msg + len, sizeof msg - len, "; ");
        if (len < sizeof msg) len += (size_t)snprintf(msg + len, sizeof msg - len, what[i], (unsigned long long)n[i]);
    }
    if (total) ts__rank_warn_n(P->r, TS_WARN_RECORDER_LOSSES, total, "%s: %s", P->r->path, msg);
}

static void parse_top_member(parser *P, js_str k)
{
    js *j = &P->s;
    uint32_t key = intern_str(P, k);
    const char *start = j->p;
    ts_arg_type type;
    uint64_t val;
    parse_value(P, &type, &val);   /* may grow the pool: compare ids, not strings */
    if (key == ts__rank_intern(P->r, "distributedInfo", 15) && type == TS_ARG_JSON)
        read_distributed_info(P, start);
    else if (key == ts__rank_intern(P->r, "baseTimeNanoseconds", 19) && type == TS_ARG_INT)
        P->base_time_ns = (int64_t)val;
    else if (key == ts__rank_intern(P->r, "trainscope", 10) && type == TS_ARG_JSON)
        read_recorder_counts(P, start);
    add_meta(P, key, type, val);
}

/* ---- the unit state machine ---- */
static void step_object(parser *P)
{
    js *j = &P->s;
    char c = js_peek(j);
    if (c == '}') { j->p++; P->st = ST_END; return; }
    if (!P->first) {
        if (c != ',') js_fail(j, j->p, "expected ',' or '}' after a top-level member");
        j->p++;
        c = js_peek(j);
    }
    if (c != '"') js_fail(j, j->p, "expected a key in the top-level object");
    js_str k = js_string(j);
    js_expect(j, ':', "':' after a key");
    if (k.n == 11 && !memcmp(k.s, "traceEvents", 11)) {
        if (P->saw_events) js_fail(j, k.s - 1, "a second \"traceEvents\" member (two traces in one file?)");
        if (js_peek(j) != '[') js_fail(j, j->p, "\"traceEvents\" is not an array");
        j->p++;
        P->st = ST_EVENTS;
        P->first = true;
        P->saw_events = true;
        return;
    }
    if (k.n == 6 && !memcmp(k.s, "schema", 6)) P->et_keys |= 1;
    if (k.n == 5 && !memcmp(k.s, "nodes", 5)) P->et_keys |= 2;
    parse_top_member(P, k);
    P->first = false;
}

/* A bare event array ending without its ']' (after the last event, or
 * after its trailing comma) where the file is a Horovod timeline, which
 * Horovod never closes: true, with a warning saying so. Any other
 * unclosed or truncated input stays an error (the caller's peek fails). */
static bool horovod_unclosed_end(parser *P)
{
    js *j = &P->s;
    const char *p = j->p;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    if (!P->first && *p == ',') p++;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    if (p < j->end) return false;
    if (!j->eof) longjmp(j->jb, JS_NEED_MORE);
    if (P->first || !ts__horovod_timeline(P->r)) return false;
    ts__rank_warn(P->r, TS_WARN_OTHER, "%s: a Horovod timeline, unclosed as Horovod writes it (no ']' after its "
                  "last event at byte %llu): read to its end", j->name, (unsigned long long)js_off(j, j->p));
    j->p = p;
    return true;
}

static void step_events(parser *P)
{
    js *j = &P->s;
    if (P->bare_list && horovod_unclosed_end(P)) {
        P->st = ST_DONE;
        return;
    }
    char c = js_peek(j);
    if (c == ']') {
        j->p++;
        P->st = P->bare_list ? ST_END : ST_OBJ;
        P->first = false;
        return;
    }
    if (!P->first) {
        if (c != ',') js_fail(j, j->p, "expected ',' or ']' after event %llu", (unsigned long long)P->n_events - 1);
        j->p++;
    }
    ev e;
    parse_event(P, &e);
    commit_event(P, &e);
    P->n_events++;
    P->r->n_events_read++;
    P->first = false;
}

static void step(parser *P)
{
    js *j = &P->s;
    switch (P->st) {
    case ST_BEGIN: {
        const char *p = j->p;
        if (j->base_off == 0 && p == j->buf && !memcmp(p, "\xEF\xBB\xBF", 3)) j->p = p += 3;   /* UTF-8 BOM */
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
        if (p >= j->end && j->eof) js_fail(j, p, "empty file (no JSON value)");
        char c = js_peek(j);
        if (c == '{') { P->st = ST_OBJ; }
        else if (c == '[') { P->st = ST_EVENTS; P->bare_list = true; }
        else js_fail(j, j->p, "expected '{' or '[' at the start of a Chrome trace");
        j->p++;
        P->first = true;
        break;
    }
    case ST_OBJ: step_object(P); break;
    case ST_EVENTS: step_events(P); break;
    case ST_END: {
        const char *p = j->p;
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
        j->p = p;
        if (p < j->end) js_fail(j, p, "unexpected data after the end of the trace");
        if (!j->eof) longjmp(j->jb, JS_NEED_MORE);
        P->st = ST_DONE;
        break;
    }
    case ST_DONE: break;
    }
}

/* Size the slice, arg and flow-endpoint tables for the whole input up front
 * (see ts__rank_reserve). Kineto traces run about 360 bytes of JSON per
 * slice, 80 per arg and 700 per flow endpoint; the estimate takes about half
 * of each so it rarely falls short, and pages it over-reserves are never
 * touched. TF1 timelines run 130-180 bytes per slice (timeline.py's compact
 * and spaced output), so slices get one per 128 bytes: a table that falls
 * short is copied to grow. The prefault steps keep the Kineto estimate.
 * Small inputs (tests) skip it. */
static void reserve_tables(parser *P, uint64_t json_bytes)
{
    if (json_bytes < (1u << 20)) return;
    uint64_t n_slices = json_bytes / 128, n_args = json_bytes / 40, n_flows = json_bytes / 256;
    if (n_args > UINT32_MAX / 2) n_args = UINT32_MAX / 2;
    if (n_slices > UINT32_MAX / 2) n_slices = UINT32_MAX / 2;
    if (n_flows > UINT32_MAX / 2) n_flows = UINT32_MAX / 2;
    ts__rank_reserve(P->r, (uint32_t)n_slices, (uint32_t)n_args, (uint32_t)n_flows);
    n_slices = json_bytes / 180;
    P->slices_step = (uint32_t)(n_slices / 32 > 4096 ? n_slices / 32 : 4096);
    P->args_step = (uint32_t)(n_args / 32 > 4096 ? n_args / 32 : 4096);
    P->flows_step = (uint32_t)(n_flows / 32 > 4096 ? n_flows / 32 : 4096);
}

/* Prefault rows [from, from + n) of a column: one madvise maps them all
 * instead of one page fault per 4 KiB as the rows are written. */
static void prefault(void *col, size_t elem, uint32_t from, uint32_t n)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)col + (uintptr_t)from * elem) & ~(pg - 1);
    uintptr_t e = (uintptr_t)col + ((uintptr_t)from + n) * elem;
    if (col && e > a) (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
    (void)col; (void)elem; (void)from; (void)n;
#endif
}

/* Keep the next step of slice, arg and flow-endpoint rows prefaulted ahead of the writer.
 * Why: the kernel's per-fault work on fresh column pages was about 9% of a
 * 500 MB load; populating a step at a time keeps the zeroing but drops the
 * per-page exception. Rows past the reservation are left to fault. */
static void prefault_ahead(parser *P)
{
    ts_slices *s = &P->r->slices;
    ts_args *a = &P->r->args;
    if (s->n >= P->slices_ready && P->slices_ready < s->cap) {
        uint32_t n = s->cap - P->slices_ready < P->slices_step ? s->cap - P->slices_ready : P->slices_step;
        uint32_t f = P->slices_ready;
        prefault(s->ts_ns, 8, f, n); prefault(s->dur_ns, 8, f, n); prefault(s->track, 4, f, n);
        prefault(s->name, 4, f, n); prefault(s->cat, 4, f, n); prefault(s->kind, 1, f, n);
        prefault(s->depth, 2, f, n); prefault(s->parent, 4, f, n); prefault(s->args, 4, f, n);
        prefault(s->n_args, 2, f, n); prefault(s->corr, 8, f, n); prefault(s->ext_id, 8, f, n);
        P->slices_ready = f + n;
    }
    ts_rank *r = P->r;
    if (r->n_flow_ends >= P->flows_ready && P->flows_ready < r->cap_flow_ends) {
        uint32_t n = r->cap_flow_ends - P->flows_ready < P->flows_step ? r->cap_flow_ends - P->flows_ready : P->flows_step;
        prefault(r->flow_ends, sizeof *r->flow_ends, P->flows_ready, n);
        P->flows_ready += n;
    }
    if (a->n >= P->args_ready && P->args_ready < a->cap) {
        uint32_t n = a->cap - P->args_ready < P->args_step ? a->cap - P->args_ready : P->args_step;
        uint32_t f = P->args_ready;
        prefault(a->key, 4, f, n); prefault(a->type, 1, f, n); prefault(a->val, 8, f, n);
        P->args_ready = f + n;
    }
}

/* Move the current unit to the window start and read more bytes after it;
 * the window doubles when one unit fills it. */
static int refill(parser *P)
{
    js *j = &P->s;
    size_t keep = (size_t)(j->end - P->unit);
    if (P->unit == j->buf && keep == P->cap) {
        size_t ncap = P->cap * 2;
        char *nb = ts__realloc(j->buf, P->cap + JS_PAD, ncap + JS_PAD);
        if (!nb) return ts__error(j->err, TS_ENOMEM, "%s: out of memory (one event larger than %zu bytes)", j->name, P->cap);
        P->unit = nb;
        j->buf = nb;
        P->cap = ncap;
    } else {
        memmove(j->buf, P->unit, keep);
        j->base_off += (uint64_t)(P->unit - j->buf);
    }
    long n = ts__src_read(P->src, j->buf + keep, P->cap - keep, j->err);
    if (n < 0) return (int)n;
    if (n == 0 || P->src->done) j->eof = true;
    j->end = j->buf + keep + n;
    memset((char *)j->end, 0, JS_PAD);
    j->p = P->unit = j->buf;
    return TS_OK;
}

static int run(parser *P)
{
    js *j = &P->s;
    switch (setjmp(j->jb)) {
    case 0: break;
    case JS_FAILED: return j->status;
    case JS_NEED_MORE: {
        P->r->args.n = P->unit_args;
        int rc = refill(P);
        if (rc) return rc;
        break;
    }
    }
    while (P->st != ST_DONE) {
        step(P);
        P->unit = j->p;
        P->unit_args = P->r->args.n;
        if (P->slices_step && (P->r->slices.n >= P->slices_ready || P->r->args.n >= P->args_ready ||
                               P->r->n_flow_ends >= P->flows_ready))
            prefault_ahead(P);
        if (P->mapped && (size_t)(P->unit - j->buf) - P->released >= RELEASE_STEP) {
            /* Nothing before the unit start is read again (a unit restarts
             * from its start at most), so those pages can go. */
            P->released = (size_t)(P->unit - j->buf);
            ts__src_release(P->src, P->released);
        }
    }
    return TS_OK;
}

/* ---- after the last byte ---- */
static void name_tracks(parser *P)
{
    ts_rank *r = P->r;
    for (uint32_t i = 0; i < r->n_tracks; i++) {
        ts_track *t = &r->tracks[i];
        uint64_t v;
        if (ts__map64_get(&P->pid_name, (uint64_t)t->pid, &v)) t->process_name_id = (uint32_t)v;
        if (ts__map64_get(&P->pid_label, (uint64_t)t->pid, &v)) t->process_label_id = (uint32_t)v;
        if (ts__map64_get(&P->pid_sort, (uint64_t)t->pid, &v)) t->process_sort_index = (int64_t)v;
        if (t->kind == TS_TRACK_COUNTER || t->kind == TS_TRACK_ASYNC) continue;
        uint64_t key = pair_key(t->pid, t->tid);
        if (ts__map64_get(&P->tid_name, key == UINT64_MAX ? 0 : key, &v)) t->name_id = (uint32_t)v;
        if (ts__map64_get(&P->tid_sort, key == UINT64_MAX ? 0 : key, &v)) t->sort_index = (int32_t)v;
    }
}

static void warn_unclosed(parser *P)
{
    for (uint32_t t = 0; t < P->n_stacks; t++)
        for (uint32_t i = 0; i < P->stacks[t].n; i++)
            ts__rank_warn(P->r, TS_WARN_UNMATCHED_BEGIN, "%s: begin of \"%s\" at %lld ns has no end; dropped",
                          P->r->path, ts__rank_str(P->r, P->stacks[t].v[i].name), (long long)P->stacks[t].v[i].ts_ns);
}

/* baseTimeNanoseconds may come after traceEvents, so it is applied here. */
static void shift_times(parser *P)
{
    ts_rank *r = P->r;
    int64_t b = P->base_time_ns;
    r->base_time_ns = b;
    for (uint32_t i = P->first_slice; i < r->slices.n && !r->us_fractions; i++)   /* rows to be dropped do not count */
        r->us_fractions = r->slices.ts_ns[i] % 1000 != 0 && !(r->dropped_tracks && r->tracks[r->slices.track[i]].dropped);
    if (b == 0) return;
    for (uint32_t i = P->first_slice; i < r->slices.n; i++) {
        int64_t ts = r->slices.ts_ns[i] = sat_add(r->slices.ts_ns[i], b);
        if (sat_add(ts, r->slices.dur_ns[i]) == INT64_MAX) r->slices.dur_ns[i] = INT64_MAX - ts;
    }
    for (uint32_t i = P->first_instant; i < r->instants.n; i++) r->instants.ts_ns[i] = sat_add(r->instants.ts_ns[i], b);
    for (uint32_t i = P->first_counter; i < r->counters.n; i++) r->counters.ts_ns[i] = sat_add(r->counters.ts_ns[i], b);
    for (uint32_t i = P->first_flow_end; i < r->n_flow_ends; i++) r->flow_ends[i].ts_ns = sat_add(r->flow_ends[i].ts_ns, b);
}

/* Turn each endpoint's place row into its track: the GPU stream when the
 * (pid, tid) turned out to be one, else the thread. */
static void resolve_flows(parser *P)
{
    ts_rank *r = P->r;
    if (P->n_places == 0) return;
    uint32_t *track = ts__malloc((size_t)P->n_places * sizeof *track);
    if (!track) { r->oom = true; return; }
    for (uint32_t i = 0; i < P->n_places; i++) {
        const flow_place *pl = &P->places[i];
        uint64_t v;
        if (ts__map64_get(&P->gpu_track, pair_key(pl->pid, pl->tid), &v)) track[i] = (uint32_t)v;
        else track[i] = ts__rank_track(r, TS_TRACK_THREAD, pl->pid, pl->tid);
        if (track[i] == TS_NONE32) r->oom = true;
    }
    for (uint32_t i = P->first_flow_end; i < r->n_flow_ends; i++) r->flow_ends[i].track = track[r->flow_ends[i].track];
    ts__free(track, (size_t)P->n_places * sizeof *track);
}

static void store_meta(parser *P)
{
    ts_rank *r = P->r;
    if (P->n_meta == 0) return;
    r->meta_args = r->args.n;
    for (uint32_t i = 0; i < P->n_meta; i++)
        ts__rank_add_arg(r, P->meta[i].key, (ts_arg_type)P->meta[i].type, P->meta[i].val);
    r->n_meta_args = (uint16_t)(P->n_meta > UINT16_MAX ? UINT16_MAX : P->n_meta);
}

/* A TensorFlow 1 timeline's devices and streams (tf_timeline.c), and the
 * object events (phases N, O, D) its Tensors processes hold. */
static void tf1_timeline(parser *P)
{
    ts_rank *r = P->r;
    char note[256];
    if (ts__tf1_timeline_map(r, P->first_track, note, sizeof note)) {
        add_meta(P, ts__rank_intern(r, "format", 6), TS_ARG_STR, ts__rank_intern(r, "tensorflow-timeline", 19));
        add_meta(P, ts__rank_intern(r, "tf_timeline", 11), TS_ARG_STR, ts__rank_intern(r, note, strlen(note)));
    }
    if (P->n_object_events)
        ts__rank_warn_n(r, TS_WARN_UNKNOWN_PHASE, P->n_object_events, "%s: %llu object events (phases N, O, D: "
                        "object snapshots, as TensorFlow's tensors) skipped", r->path,
                        (unsigned long long)P->n_object_events);
}

/* What each file read into a rank leaves: names, times, flows, metadata,
 * its warnings; fails when it held no trace events. */
static int finish_file(parser *P, ts_error *err)
{
    ts_rank *r = P->r;
    warn_unclosed(P);
    name_tracks(P);
    tf1_timeline(P);
    shift_times(P);
    resolve_flows(P);
    store_meta(P);
    if (P->s.n_bad_utf8)
        for (uint64_t i = 0; i < P->s.n_bad_utf8; i++)
            ts__rank_warn(r, TS_WARN_INVALID_UTF8, "%s: byte %llu: invalid UTF-8 in a string; replaced by U+FFFD",
                          r->path, (unsigned long long)P->s.bad_utf8_off);
    if (P->s.n_nul)
        ts__rank_warn_n(r, TS_WARN_OTHER, P->s.n_nul, "%s: byte %llu: \\u0000 in a string; replaced by U+FFFD, "
                        "since names cannot hold a NUL", r->path, (unsigned long long)P->s.nul_off);
    /* PyTorch's execution trace (Chakra ET) is the file users most often
     * give by mistake: it lists ops and tensors but no times. */
    if (!P->bare_list && !P->saw_events)
        return ts__error(err, TS_EFORMAT, "%s: byte %llu: not a Chrome trace (the top-level object has no \"traceEvents\")%s",
                         P->s.name, (unsigned long long)js_off(&P->s, P->s.end),
                         P->et_keys == 3 ? "; its \"schema\" and \"nodes\" make it a PyTorch execution trace (Chakra ET), "
                                           "which has no op times: give the profiler's trace of the same run" : "");
    return TS_OK;
}

/* The rank done: its number, then sorted, nested and bound. */
static int finish_rank(ts_rank *r, int32_t dist_rank, int32_t world_size, int32_t order, const ts_load_opts *opts,
                       bool counts_only, ts_error *err)
{
    int32_t from_name = ts__rank_from_filename(r->path);
    r->rank = dist_rank >= 0 ? dist_rank : from_name >= 0 ? from_name : order;
    r->world_size = world_size;
    int rc = counts_only ? ts__rank_finish_counts(r, err) : ts__rank_finish(r, err);
    if (rc == TS_OK && opts && opts->size >= offsetof(ts_load_opts, iteration_marker) + sizeof(char *) &&
        opts->iteration_marker && ts__rank_find_iterations(r, opts->iteration_marker) != TS_OK)
        rc = ts__error(err, TS_ENOMEM, "%s: out of memory", r->path);
    return rc;
}

static void parser_free(parser *P)
{
    if (!P->mapped) ts__free(P->s.buf, P->cap + JS_PAD);
    ts__free(P->s.scratch, P->s.scratch_cap);
    ts__map64_free(&P->pid_name);
    ts__map64_free(&P->tid_name);
    ts__map64_free(&P->tid_sort);
    ts__map64_free(&P->pid_label);
    ts__map64_free(&P->pid_sort);
    ts__map64_free(&P->gpu_track);
    ts__map64_free(&P->cat_kind);
    for (uint32_t i = 0; i < P->n_stacks; i++) ts__free(P->stacks[i].v, P->stacks[i].cap * sizeof(open_slice));
    ts__free(P->stacks, P->n_stacks * sizeof *P->stacks);
    ts__free(P->places, P->cap_places * sizeof *P->places);
    ts__map64_free(&P->place_index);
    ts__free(P->meta, P->cap_meta * sizeof *P->meta);
}

/* more_bytes: the JSON of the rank's later files (the tables are sized for
 * them too, by the first file). keep_caches: P read an earlier file of the
 * same rank, whose string caches stay (130 KB not cleared per file). */
static int parser_init(parser *P, ts_src *src, ts_rank *r, uint64_t more_bytes, bool counts_only, bool keep_caches,
                       ts_error *err)
{
    memset(P, 0, keep_caches ? offsetof(parser, icache) : sizeof *P);
    P->src = src;
    P->r = r;
    P->s.name = r->path;
    P->s.err = err;
    /* Small in-memory inputs (tests, fuzzing) get a small window; the window
     * still grows if a unit needs it. */
    if (src->kind == TS_SRC_MAP) {
        /* The whole file is the window, already followed by zero bytes; the
         * scanner only reads it, so the read-only mapping is safe. */
        _Static_assert((int)TS_SRC_MAP_PAD >= (int)JS_PAD, "mapping pad below the scanner's sentinel pad");
        P->mapped = true;
        P->cap = src->map_n;
        P->s.buf = src->map;
        P->s.end = src->map + src->map_n;
        P->s.eof = true;
        P->s.p = P->unit = P->s.buf;
    } else {
        P->cap = src->kind == TS_SRC_MEM && src->mem_n < WINDOW ? (src->mem_n | 4095) + 1 : WINDOW;
        P->s.buf = ts__malloc(P->cap + JS_PAD);
        if (!P->s.buf) return ts__error(err, TS_ENOMEM, "%s: out of memory", r->path);
        memset(P->s.buf, 0, JS_PAD);
        P->s.p = P->s.end = P->unit = P->s.buf;
    }
    P->dist_rank = P->world_size = -1;
    P->counts_only = counts_only;
    P->first_slice = r->slices.n;
    P->first_track = r->n_tracks;
    P->first_instant = r->instants.n;
    P->first_counter = r->counters.n;
    P->first_flow_end = r->n_flow_ends;
    forget_tracks(P);
    P->last_series.track = TS_NONE32;
    ts__map64_init(&P->pid_name);
    ts__map64_init(&P->tid_name);
    ts__map64_init(&P->tid_sort);
    ts__map64_init(&P->pid_label);
    ts__map64_init(&P->pid_sort);
    ts__map64_init(&P->gpu_track);
    ts__map64_init(&P->cat_kind);
    ts__map64_init(&P->place_index);
    P->last_place = TS_NONE32;
    reserve_tables(P, ts__src_size_hint(src) + more_bytes);
    P->k_name = ts__rank_intern(r, "name", 4);
    P->k_sort_index = ts__rank_intern(r, "sort_index", 10);
    P->k_labels = ts__rank_intern(r, "labels", 6);
    P->k_corr = ts__rank_intern(r, "correlation", 11);
    P->k_ext_id = ts__rank_intern(r, "External id", 11);
    return TS_OK;
}

static int ingest_src(ts_src *src, const char *path, int32_t order, const ts_load_opts *opts, bool counts_only,
                      ts_rank **out, ts_error *err)
{
    *out = NULL;
    ts_rank *r = ts__rank_create(path);
    if (!r) return ts__error(err, TS_ENOMEM, "%s: out of memory", path);
    parser P;
    int rc = parser_init(&P, src, r, 0, counts_only, false, err);
    if (rc == TS_OK) rc = run(&P);
    if (rc == TS_OK) rc = finish_file(&P, err);
    if (rc == TS_OK) rc = finish_rank(r, P.dist_rank, P.world_size, order, opts, counts_only, err);
    parser_free(&P);
    if (rc != TS_OK) { ts__rank_destroy(r); return rc; }
    *out = r;
    return TS_OK;
}

int ts__ingest_json(ts_src *src, const char *path, int32_t order, const ts_load_opts *opts,
                    ts_rank **out, ts_error *err)
{
    return ingest_src(src, path, order, opts, false, out, err);
}

/* One file of a multi-file rank, read with its pids moved by pid_base;
 * more_bytes as parser_init's. */
static int ingest_part(parser *P, ts_rank *r, const char *path, int64_t pid_base, uint64_t more_bytes,
                       bool counts_only, bool keep_caches, int32_t *dist_rank, int32_t *world_size, ts_error *err)
{
    ts_src src;
    int rc = ts__src_open_file(&src, path, false, err);
    if (rc) return rc;
    rc = parser_init(P, &src, r, more_bytes, counts_only, keep_caches, err);
    P->s.name = path;
    P->pid_base = pid_base;
    if (rc == TS_OK) rc = run(P);
    if (rc == TS_OK) rc = finish_file(P, err);
    if (P->dist_rank >= 0 && *dist_rank < 0) *dist_rank = P->dist_rank, *world_size = P->world_size;
    parser_free(P);
    ts__src_close(&src);
    return rc;
}

int ts__ingest_json_parts(const char *name, const char *const *paths, uint32_t n, int32_t order,
                          const ts_load_opts *opts, bool counts_only, ts_rank **out, ts_error *err)
{
    *out = NULL;
    ts_rank *r = ts__rank_create(name);
    if (!r) return ts__error(err, TS_ENOMEM, "%s: out of memory", name);
    int32_t dist_rank = -1, world_size = -1;
    int rc = TS_OK;
    parser P;                  /* one for all the files: their string caches carry over */
    uint64_t more_bytes = 0;   /* the later files' bytes, for the first file's table sizes */
    for (uint32_t i = 1; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) more_bytes += (uint64_t)st.st_size;
    }
    for (uint32_t i = 0; i < n && rc == TS_OK; i++)
        rc = ingest_part(&P, r, paths[i], (int64_t)i << 40, i == 0 ? more_bytes : 0, counts_only, i > 0, &dist_rank,
                         &world_size, err);
    if (rc == TS_OK) rc = finish_rank(r, dist_rank, world_size, order, opts, counts_only, err);
    if (rc != TS_OK) { ts__rank_destroy(r); return rc; }
    *out = r;
    return TS_OK;
}

int ts__ingest_json_file(const char *path, int32_t order, const ts_load_opts *opts, ts_rank **out, ts_error *err)
{
    return ts__ingest_json_path(path, order, opts, true, false, out, err);
}

int ts__ingest_json_path(const char *path, int32_t order, const ts_load_opts *opts, bool spare_core,
                         bool counts_only, ts_rank **out, ts_error *err)
{
    if (err) { err->status = TS_OK; err->msg[0] = 0; }
    ts_src src;
    *out = NULL;
    int rc = ts__src_open_file(&src, path, spare_core, err);
    if (rc) return rc;
    rc = ingest_src(&src, path, order, opts, counts_only, out, err);
    ts__src_close(&src);
    return rc;
}

static int ingest_buffer(const char *name, const void *data, size_t n, const ts_load_opts *opts, bool counts_only,
                         ts_rank **out, ts_error *err)
{
    if (err) { err->status = TS_OK; err->msg[0] = 0; }
    ts_src src;
    *out = NULL;
    int rc = ts__src_open_mem(&src, name, data, n, err);
    if (rc) return rc;
    rc = ingest_src(&src, name, 0, opts, counts_only, out, err);
    ts__src_close(&src);
    return rc;
}

int ts__ingest_json_buffer(const char *name, const void *data, size_t n, const ts_load_opts *opts,
                           ts_rank **out, ts_error *err)
{
    return ingest_buffer(name, data, n, opts, false, out, err);
}

int ts__ingest_json_buffer_counts(const char *name, const void *data, size_t n, ts_rank **out, ts_error *err)
{
    return ingest_buffer(name, data, n, NULL, true, out, err);
}
