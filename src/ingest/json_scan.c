/* json_scan.c - JSON token scanning for the Chrome-trace reader (see
 * json_scan.h for the window/sentinel contract).
 *
 * Speed matters here: every byte of a trace passes through js_string or the
 * number scanners. Strings are scanned 16 bytes at a time with SSE2 (8 with
 * portable SWAR elsewhere): a block with no quote, backslash, control byte or
 * high byte is skipped whole; only blocks holding one drop to the byte loop.
 */
#include "ingest/json_scan.h"

#include <math.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void js_fail(js *j, const char *at, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    j->status = ts__error(j->err, TS_EPARSE, "%s: byte %llu: %s", j->name,
                          (unsigned long long)js_off(j, at), msg);
    longjmp(j->jb, JS_FAILED);
}

void js_at_end(js *j)
{
    if (!j->eof) longjmp(j->jb, JS_NEED_MORE);
    js_fail(j, j->end, "unexpected end of input (truncated JSON)");
}

#define ONES  0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
#ifndef __SSE2__
static inline uint64_t has_zero(uint64_t v) { return (v - ONES) & ~v & HIGHS; }
/* Nonzero when some byte of w is '"', '\\', < 0x20 or >= 0x80. May flag a byte
 * above a true hit (borrow), which only costs a trip through the byte loop. */
static inline uint64_t special_bytes(uint64_t w)
{
    return has_zero(w ^ (ONES * '"')) | has_zero(w ^ (ONES * '\\')) |
           ((w - ONES * 0x20) & ~w & HIGHS) | (w & HIGHS);
}
#endif

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80), 0 = invalid.
 * Needs bytes to stay inside the window: a sequence cut by `end` asks for more. */
static size_t utf8_len(js *j, const unsigned char *p)
{
    unsigned c = p[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if (p[i] == 0 && (const char *)p + i >= j->end) js_at_end(j);
        unsigned b = p[i];
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) return 0;
    }
    return n;
}

js_str js_string_slow(js *j, size_t skip)
{
    js_str s = {j->p + 1, 0, true};
    const unsigned char *q = (const unsigned char *)s.s + skip;
    for (;;) {
#ifdef __SSE2__
        /* 16 bytes at a time: one signed compare catches both control bytes
         * (< 0x20) and high bytes (>= 0x80, negative as int8). */
        __m128i v = _mm_loadu_si128((const __m128i *)q);
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                                   _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
        unsigned mask = (unsigned)_mm_movemask_epi8(hit);
        if (!mask) { q += 16; continue; }
        q += __builtin_ctz(mask);
#else
        uint64_t w;
        memcpy(&w, q, 8);
        if (!special_bytes(w)) { q += 8; continue; }
#endif
        unsigned c = *q;
        if (c == '"') break;
        if (c == '\\') {
            s.clean = false;
            if (q[1] == 0 && (const char *)q + 1 >= j->end) js_at_end(j);
            q += 2;
        } else if (c >= 0x80) {
            size_t n = utf8_len(j, q);
            if (n == 0) { s.clean = false; n = 1; }
            q += n;
        } else if (c < 0x20) {
            if (c == 0 && (const char *)q >= j->end) js_at_end(j);
            if (c == 0) js_fail(j, (const char *)q, "NUL byte inside a string");
            q++;   /* raw control bytes are tolerated (some writers emit tabs) */
        } else {
            q++;
        }
    }
    s.n = (size_t)((const char *)q - s.s);
    j->p = (const char *)q + 1;
    return s;
}

static void scratch_reserve(js *j, size_t need)
{
    if (need <= j->scratch_cap) return;
    size_t cap = j->scratch_cap ? j->scratch_cap : 256;
    while (cap < need) cap *= 2;
    char *np = ts__realloc(j->scratch, j->scratch_cap, cap);
    if (!np) {
        j->status = ts__error(j->err, TS_ENOMEM, "%s: out of memory", j->name);
        longjmp(j->jb, JS_FAILED);
    }
    j->scratch = np;
    j->scratch_cap = cap;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | cp >> 6); o[1] = (char)(0x80 | (cp & 63)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12); o[1] = (char)(0x80 | (cp >> 6 & 63)); o[2] = (char)(0x80 | (cp & 63));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18); o[1] = (char)(0x80 | (cp >> 12 & 63));
    o[2] = (char)(0x80 | (cp >> 6 & 63)); o[3] = (char)(0x80 | (cp & 63));
    return 4;
}

static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
                c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Count a replaced character at `at` once: *n, the first one's offset, and
 * the offset below which they were counted before a window refill. */
static void note_at(js *j, const char *at, uint64_t *n, uint64_t *first_off, uint64_t *seen_upto)
{
    uint64_t off = js_off(j, at);
    if (off < *seen_upto) return;
    if ((*n)++ == 0) *first_off = off;
    *seen_upto = off + 1;
}

static void note_bad_utf8(js *j, const char *at)
{
    note_at(j, at, &j->n_bad_utf8, &j->bad_utf8_off, &j->bad_utf8_seen_upto);
}

/* Escapes decode to their characters, \uXXXX pairs to one code point; a lone
 * surrogate or an invalid UTF-8 byte becomes U+FFFD (3 bytes), so the output
 * is at most 3x the input. */
const char *js_decode(js *j, js_str s, size_t *n)
{
    scratch_reserve(j, s.n * 3 + 4);
    char *o = j->scratch;
    const unsigned char *p = (const unsigned char *)s.s, *e = p + s.n;
    while (p < e) {
        unsigned c = *p;
        if (c == '\\') {
            char x = (char)p[1];
            p += 2;
            switch (x) {
            case 'n': *o++ = '\n'; break;
            case 't': *o++ = '\t'; break;
            case 'r': *o++ = '\r'; break;
            case 'b': *o++ = '\b'; break;
            case 'f': *o++ = '\f'; break;
            case '"': case '\\': case '/': *o++ = x; break;
            case 'u': {
                int v = p + 4 <= e ? hex4((const char *)p) : -1;
                if (v < 0) js_fail(j, (const char *)p - 2, "invalid \\u escape");
                p += 4;
                uint32_t cp = (uint32_t)v;
                if (cp >= 0xD800 && cp <= 0xDBFF && p + 6 <= e && p[0] == '\\' && p[1] == 'u') {
                    int lo = hex4((const char *)p + 2);
                    if (lo >= 0xDC00 && lo <= 0xDFFF) { cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00); p += 6; }
                }
                if (cp >= 0xD800 && cp <= 0xDFFF) { note_bad_utf8(j, (const char *)p - 6); cp = 0xFFFD; }
                if (cp == 0) {   /* interned strings are NUL-terminated */
                    note_at(j, (const char *)p - 6, &j->n_nul, &j->nul_off, &j->nul_seen_upto);
                    cp = 0xFFFD;
                }
                o += put_utf8(o, cp);
                break;
            }
            default: js_fail(j, (const char *)p - 2, "invalid escape '\\%c' in a string", x);
            }
        } else if (c >= 0x80) {
            size_t k = utf8_len(j, p);
            if (k == 0 || p + k > e) { note_bad_utf8(j, (const char *)p); o += put_utf8(o, 0xFFFD); p++; }
            else { memcpy(o, p, k); o += k; p += k; }
        } else {
            *o++ = (char)c;
            p++;
        }
    }
    *n = (size_t)(o - j->scratch);
    return j->scratch;
}

static inline bool is_digit(char c) { return (unsigned)(c - '0') < 10; }

/* After a number: a NUL at the window end means the number may continue. */
static inline void number_end(js *j, const char *q)
{
    if (*q == 0 && q >= j->end) js_at_end(j);
}

/* Exact powers of ten as doubles (10^22 is the last one a double holds). */
static const double pow10_exact[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

js_num js_number(js *j)
{
    const char *q = j->p, *start = q;
    js_num n = {true, false, false, 0, 0};
    if (*q == '-') { n.neg = true; q++; }
    if (!is_digit(*q)) {
        number_end(j, q);
        js_fail(j, start, "invalid number");
    }
    /* 19 digits always fit in 64 bits, so only a 20th needs the check. */
    int nd = 0;
    for (; nd < 19 && is_digit(q[nd]); nd++) n.mag = n.mag * 10 + (uint64_t)(q[nd] - '0');
    for (; is_digit(q[nd]); nd++) {
        unsigned d = (unsigned)(q[nd] - '0');
        if (n.mag > (UINT64_MAX - d) / 10) n.overflow = true;
        else n.mag = n.mag * 10 + d;
    }
    q += nd;
    int n_frac = 0;
    uint64_t mant = n.mag;
    if (*q == '.' || *q == 'e' || *q == 'E') {
        n.is_int = false;
        if (*q == '.') {
            q++;
            if (!is_digit(*q)) { number_end(j, q); js_fail(j, q, "invalid number"); }
            const char *f = q;
            while (is_digit(*q)) q++;
            n_frac = (int)(q - f);
            if (nd + n_frac <= 19)   /* the mantissa fits: keep it for the fast path */
                for (; f < q; f++) mant = mant * 10 + (uint64_t)(*f - '0');
        }
        if (*q == 'e' || *q == 'E') {
            q++;
            if (*q == '+' || *q == '-') q++;
            if (!is_digit(*q)) { number_end(j, q); js_fail(j, q, "invalid number"); }
            while (is_digit(*q)) q++;
            n_frac = -1;   /* an exponent: leave it to strtod */
        }
    }
    number_end(j, q);
    if (n.overflow) n.is_int = false;
    if (!n.is_int) {
        /* Clinger's fast path: a mantissa below 2^53 divided by an exact
         * power of ten rounds once, so it equals strtod's correctly rounded
         * result; everything else (exponents, long mantissas) goes to strtod. */
        if (!n.overflow && n_frac >= 0 && n_frac <= 22 && nd + n_frac <= 19 && mant < (1ULL << 53))
            n.d = (double)mant / pow10_exact[n_frac] * (n.neg ? -1.0 : 1.0);
        else
            n.d = strtod(start, NULL);
    }
    j->p = q;
    return n;
}

static const uint64_t pow10_u64[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

/* Timestamps are the longest numbers in a trace ("4458676522884.154"), two
 * per event: read the integer part as up to two 8-digit SWAR blocks and the
 * first fraction digits from one more, instead of a loop per digit. */
bool js_time_ns(js *j, int64_t *out)
{
    const char *q = j->p, *start = q;
    bool neg = *q == '-';
    q += neg;
    uint64_t w;
    unsigned n_int = js_lead_digits(q, &w);
    if (n_int == 0) { number_end(j, q); return false; }
    uint64_t us = js_digits_value(w, n_int);
    if (n_int == 8) {
        unsigned m = js_lead_digits(q + 8, &w);
        if (m) us = us * pow10_u64[m] + js_digits_value(w, m);
        n_int += m;
        while (is_digit(q[n_int])) n_int++;   /* > 16 digits: the double path below */
    }
    q += n_int;
    uint64_t frac = 0;   /* first three fraction digits: nanoseconds */
    bool round_up = false;
    if (*q == '.') {
        q++;
        unsigned f = js_lead_digits(q, &w);
        if (f == 0) { number_end(j, q); js_fail(j, q, "invalid number"); }
        frac = f >= 3 ? js_digits_value(w, 3) : js_digits_value(w, f) * (f == 1 ? 100 : 10);
        round_up = f >= 4 && q[3] >= '5';   /* half away from zero beyond ns */
        q += f;
        while (is_digit(*q)) q++;
    }
    if (*q == 'e' || *q == 'E' || n_int > 16 || us > (uint64_t)INT64_MAX / 1000 - 1) {
        /* exponent, or past what int64 ns can hold: go through double, then
         * check the range. Epoch microseconds (16 digits) stay exact. */
        js_num n = js_number(j);
        double ns = (n.is_int ? (double)n.mag * (n.neg ? -1 : 1) : n.d) * 1000.0;
        if (!(ns > -9.2e18 && ns < 9.2e18)) js_fail(j, start, "time value out of range");
        *out = (int64_t)llround(ns);
        return true;
    }
    number_end(j, q);
    int64_t ns = (int64_t)(us * 1000 + frac + (round_up ? 1 : 0));
    *out = neg ? -ns : ns;
    j->p = q;
    return true;
}

int js_literal(js *j)
{
    static const struct { const char *s; size_t n; int v; } lit[] = {
        {"true", 4, 1}, {"false", 5, 0}, {"null", 4, -1},
    };
    for (size_t i = 0; i < 3; i++) {
        if (*j->p != lit[i].s[0]) continue;
        for (size_t k = 1; k < lit[i].n; k++) {
            if (j->p[k] == 0 && j->p + k >= j->end) js_at_end(j);
            if (j->p[k] != lit[i].s[k]) js_fail(j, j->p, "invalid literal");
        }
        j->p += lit[i].n;
        return lit[i].v;
    }
    js_fail(j, j->p, "expected a value");
}

void js_skip(js *j, int depth)
{
    char c = js_peek(j);
    if (c == '"') { (void)js_string(j); return; }
    if (c == '-' || is_digit(c)) { (void)js_number(j); return; }
    if (c != '{' && c != '[') { (void)js_literal(j); return; }
    if (depth >= JS_MAX_DEPTH) js_fail(j, j->p, "nesting deeper than %d levels", JS_MAX_DEPTH);
    char close = c == '{' ? '}' : ']';
    j->p++;
    if (js_peek(j) == close) { j->p++; return; }
    for (;;) {
        if (close == '}') {
            if (js_peek(j) != '"') js_fail(j, j->p, "expected a key in an object");
            (void)js_string(j);
            js_expect(j, ':', "':' after a key");
        }
        js_skip(j, depth + 1);
        c = js_peek(j);
        j->p++;
        if (c == close) return;
        if (c != ',') js_fail(j, j->p - 1, "expected ',' or '%c'", close);
    }
}
