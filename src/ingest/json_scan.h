/* json_scan.h - the low-level JSON scanner under the Chrome-trace parser:
 * whitespace, strings (with UTF-8 checking and escape decoding), numbers,
 * exact microsecond-to-nanosecond conversion, literals and value skipping.
 *
 * Not for: knowing what a trace event means (chrome_json.c does that).
 * Invariants: the window [buf, end) is followed by JS_PAD zero bytes, so the
 * scanner reads 8 bytes at a time without bounds checks and stops at a NUL;
 * a NUL at `end` means "out of bytes": the scanner then longjmps back to the
 * parser's unit start (js_need_more) to refill the window, or, at end of
 * input, reports truncated JSON. Nothing here allocates except the decode
 * scratch buffer.
 */
#ifndef TS_INGEST_JSON_SCAN_H
#define TS_INGEST_JSON_SCAN_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "ingest/ingest.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

enum {
    JS_PAD = 64,          /* zero bytes kept after the window's data */
    JS_MAX_DEPTH = 256,   /* deepest nesting accepted; deeper input is rejected */
};

typedef struct js {
    const char *name;     /* file name for messages (borrowed) */
    char       *buf;      /* window start (owned by the parser) */
    const char *p;        /* scan position, buf <= p <= end */
    const char *end;      /* end of valid bytes; *end == 0 */
    uint64_t    base_off; /* stream offset of buf[0] */
    bool        eof;      /* no bytes follow `end` */
    jmp_buf     jb;       /* back to the parser's unit loop */
    int         status;   /* TS_E* when longjmp'd with JS_FAILED */
    ts_error   *err;
    char       *scratch;  /* decoded-string buffer (owned) */
    size_t      scratch_cap;
    uint64_t    n_bad_utf8;     /* invalid sequences replaced by U+FFFD */
    uint64_t    bad_utf8_off;   /* stream offset of the first one (for the warning) */
    uint64_t    bad_utf8_seen_upto; /* offsets below this were already counted (retries) */
    uint64_t    n_nul;          /* \u0000 escapes replaced by U+FFFD (strings are NUL-terminated) */
    uint64_t    nul_off;        /* stream offset of the first one */
    uint64_t    nul_seen_upto;  /* as bad_utf8_seen_upto */
} js;

enum { JS_NEED_MORE = 1, JS_FAILED = 2 };   /* longjmp codes */

/* A string as found in the window: raw bytes between the quotes. `clean`
 * means no escapes and valid UTF-8, so the raw bytes are the value. */
typedef struct js_str { const char *s; size_t n; bool clean; } js_str;

/* A number: integer magnitude when `is_int` (and !overflow), else `d`. */
typedef struct js_num { bool is_int, neg, overflow; uint64_t mag; double d; } js_num;

_Noreturn void js_fail(js *j, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
_Noreturn void js_at_end(js *j);

static inline uint64_t js_off(const js *j, const char *at) { return j->base_off + (uint64_t)(at - j->buf); }

/* Skip whitespace; return the next byte (out-of-bytes handled). */
static inline char js_peek(js *j)
{
    const char *p = j->p;
    if (TS_LIKELY((unsigned char)*p > ' ')) return *p;   /* most peeks land on a token */
    if (*p == ' ' && (unsigned char)p[1] > ' ') { j->p = p + 1; return p[1]; }   /* ", " and ": " */
    if (*p == '\n') {
        /* A line break and its indentation ("\n    "): the first byte after
         * it that is not a blank, in one 8-byte word, when the indentation
         * is shorter than 8 and a token follows. */
        uint64_t w;
        memcpy(&w, p + 1, 8);
        uint64_t x = w ^ 0x2020202020202020ULL;   /* zero bytes are blanks */
        if (x) {
            unsigned k = (unsigned)__builtin_ctzll(x) / 8;
            if ((unsigned char)p[1 + k] > ' ') { j->p = p + 1 + k; return p[1 + k]; }
        }
    }
#ifdef __SSE2__
    /* Indented traces put runs of blanks between tokens ("\n    "): find
     * the first non-whitespace byte 16 at a time, no branch per byte. The
     * NUL sentinel is not whitespace, so the scan stops at the window end. */
    for (;;) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                               _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
                                               _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
        unsigned other = ~(unsigned)_mm_movemask_epi8(ws) & 0xffff;
        if (other) { p += __builtin_ctz(other); break; }
        p += 16;
    }
#else
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
#endif
    j->p = p;
    if (TS_UNLIKELY(*p == 0) && p >= j->end) js_at_end(j);
    return *p;
}

static inline void js_expect(js *j, char c, const char *what)
{
    if (js_peek(j) != c) js_fail(j, j->p, "expected %s", what);
    j->p++;
}

/* p at the opening quote; leaves p after the closing quote. */
/* The general scanner; `skip` leading bytes of the string are known plain. */
js_str js_string_slow(js *j, size_t skip);
static inline js_str js_string(js *j)
{
#ifdef __SSE2__
    /* Most strings in a trace (keys, categories, short names) close within
     * 16 bytes and hold nothing special: answer those inline, without the
     * call and loop of the general scanner. One signed compare flags both
     * control bytes (< 0x20) and high bytes (>= 0x80, negative as int8). */
    const char *q = j->p + 1;
    __m128i v = _mm_loadu_si128((const __m128i *)q);
    unsigned quote = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
    unsigned other = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')),
                                                              _mm_cmplt_epi8(v, _mm_set1_epi8(0x20))));
    if (TS_LIKELY(quote != 0) && (other & ((quote & -quote) - 1)) == 0) {   /* nothing special before the quote */
        size_t n = (size_t)__builtin_ctz(quote);
        j->p = q + n + 1;
        return (js_str){q, n, true};
    }
    if ((quote | other) == 0) {
        /* A second block inline: op and node names of 16-31 bytes are
         * common (TF1 timelines), and the call, besides its own cost,
         * returned the string through memory, re-read before its stores
         * had landed (a store-forwarding stall, 4% of parse_event's
         * samples on the dPRO sample). */
        v = _mm_loadu_si128((const __m128i *)(q + 16));
        quote = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
        other = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')),
                                                         _mm_cmplt_epi8(v, _mm_set1_epi8(0x20))));
        if (TS_LIKELY(quote != 0) && (other & ((quote & -quote) - 1)) == 0) {
            size_t n = 16 + (size_t)__builtin_ctz(quote);
            j->p = q + n + 1;
            return (js_str){q, n, true};
        }
        return js_string_slow(j, (quote | other) == 0 ? 32 : 16);   /* a longer plain string: go on after the blocks */
    }
#endif
    return js_string_slow(j, 0);
}
/* Decode a non-clean string into the scratch buffer; returns its bytes. */
const char *js_decode(js *j, js_str s, size_t *n);
/* p at a number's first byte. */
js_num js_number(js *j);
/* SWAR digit helpers. js_lead_digits: how many of the 8 bytes at q are
 * leading ASCII digits (0..8), and the bytes as one little-endian word. A
 * byte is not a digit when adding 0x46 carries into its top bit (> '9'),
 * subtracting '0' borrows (< '0'), or it is >= 0x80; carries and borrows
 * only spill past a non-digit byte, and only the first non-digit matters.
 * The window's zero padding makes the 8-byte read safe. */
static inline unsigned js_lead_digits(const char *q, uint64_t *w)
{
    memcpy(w, q, 8);
    uint64_t nondigit = ((*w + 0x4646464646464646ULL) | (*w - 0x3030303030303030ULL) | *w) & 0x8080808080808080ULL;
    return nondigit ? (unsigned)__builtin_ctzll(nondigit) / 8 : 8;
}
/* Value of the first n (1..8) digits of word w: right-align them (the
 * vacated low bytes read as leading zeros), then combine pairs, quads and
 * the eight with three multiplies instead of n dependent multiply-adds. */
static inline uint64_t js_digits_value(uint64_t w, unsigned n)
{
    uint64_t d = (w - 0x3030303030303030ULL) << (8 * (8 - n));
    d = (d * 10 + (d >> 8)) & 0x00FF00FF00FF00FFULL;
    d = (d * 100 + (d >> 16)) & 0x0000FFFF0000FFFFULL;
    return (d * 10000 + (d >> 32)) & 0xFFFFFFFFULL;
}

/* p at a number's first byte: a non-negative integer of at most 7 digits
 * read inline into *out (most ids, pids and arg values are), else false
 * with p unchanged, for js_number to read it. */
static inline bool js_small_uint(js *j, uint64_t *out)
{
    /* Up to 7 digits (pids, tids, ids, most arg values) in one load. */
    const char *q = j->p;
    uint64_t w;
    unsigned n = js_lead_digits(q, &w);
    char c = q[n];
    if (n == 0 || n == 8 || c == '.' || c == 'e' || c == 'E' || (c == 0 && q + n >= j->end)) return false;
    *out = js_digits_value(w, n);
    j->p = q + n;
    return true;
}
/* p at a number in microseconds: exact conversion to int64 nanoseconds
 * (decimal digits, no binary floating point; rounded half away from zero
 * beyond three fraction digits). Returns false when the value is not a
 * number (p unchanged). */
bool js_time_ns(js *j, int64_t *out);
/* (Always inlined: the call and its register saves were a third of it.)
 * js_time_ns for the shape nearly every trace timestamp has: up to 15
 * integer digits, then '.' and one to three fraction digits (or none), not
 * at the window end. Anything else (a sign, an exponent, more fraction
 * digits to round, very long numbers) goes to js_time_ns. Same results. */
static inline __attribute__((always_inline)) bool js_time_ns_fast(js *j, int64_t *out)
{
    static const uint64_t frac_scale[4] = {0, 100, 10, 1};
    const char *q = j->p;
    uint64_t w, us;
    unsigned n = js_lead_digits(q, &w);
    if (n == 0) return js_time_ns(j, out);
    us = js_digits_value(w, n);
    if (n == 8) {
        unsigned m = js_lead_digits(q + 8, &w);
        if (m == 8) return js_time_ns(j, out);
        static const uint64_t p10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
        if (m) us = us * p10[m] + js_digits_value(w, m);
        n += m;
    }
    uint64_t frac = 0;
    if (q[n] == '.') {
        unsigned f = js_lead_digits(q + n + 1, &w);
        if (f == 0 || f > 3) return js_time_ns(j, out);
        frac = js_digits_value(w, f) * frac_scale[f];
        n += 1 + f;
    }
    char c = q[n];
    if (c == 'e' || c == 'E' || (c == 0 && q + n >= j->end)) return js_time_ns(j, out);
    *out = (int64_t)(us * 1000 + frac);   /* < 10^15 us: fits */
    j->p = q + n;
    return true;
}
/* p at a value; skips it whole (depth-capped). */
void js_skip(js *j, int depth);
/* p at t/f/n; returns 1 true, 0 false, -1 null. */
int js_literal(js *j);

#endif
