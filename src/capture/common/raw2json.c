/* raw2json.c - post-processing of a capture: one raw stream (rawfmt.h) in,
 * one Chrome-trace JSON file shaped like Kineto's out.
 *
 * Not for: reading JSON (ingest does). Runs in two places: inside the traced
 * process at exit (so it uses the C library's malloc and stdio, never the
 * analysis library) and in `trainscope record` for streams a process left
 * behind (killed by a signal, _exit, crash).
 *
 * What it does, in order: validates every chunk and record against the file
 * size (a truncated stream converts up to its last whole chunk); pairs
 * push/pop per thread buffer and begin/end per id into complete events
 * (ranges still open at the end are closed at the stream's last timestamp
 * and counted); sorts everything by (ts, longer first, input order), so the
 * thread streams are merged in time order; writes process and thread names
 * as metadata and the dropped counts under "trainscope". O(n log n) time,
 * memory about 48 bytes per event plus the raw file.
 */
#include "capture/common/rawfmt.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trainscope/common.h"
#include "trainscope/record.h"

#define MAX_BUF_ID (1u << 20)   /* more thread buffers than this is a corrupt stream */

/* One output event; strings and args are read from rec when written. */
typedef struct cev {
    int64_t        ts_ns, dur_ns;
    int64_t        pid, tid;
    const ts__rec *rec;      /* source record */
    const ts__rec *strs;     /* record holding cat and name: rec, or the SDEF a BREF names */
    uint32_t       seq;      /* input order, breaks ties */
    char           ph;       /* 'X', 'i', 'C', 's', 't', 'f' */
    uint8_t        open;     /* 1 while a push/begin waits for its end */
} cev;

typedef struct idx_stack { uint32_t *v; uint32_t n, cap; } idx_stack;

typedef struct aend { uint64_t id; int64_t ts_ns; uint32_t seq; } aend;

typedef struct pair_table { const ts__rec **v; uint32_t n, cap; } pair_table; /* str_id -> SDEF */

typedef struct conv {
    const char   *path;
    const ts__raw_header *hdr;
    cev          *ev;        uint32_t n_ev, cap_ev;
    idx_stack    *stacks;    uint32_t n_stacks;     /* by buf_id: open pushes */
    pair_table   *pairs;     uint32_t n_pairs;      /* by buf_id: string pairs defined */
    uint32_t     *begins;    uint32_t n_begins, cap_begins; /* ev rows of AB */
    aend         *ends;      uint32_t n_ends, cap_ends;
    struct { uint32_t tid; const char *name; } *tnames; uint32_t n_tnames, cap_tnames;
    struct { uint32_t tid; uint64_t dropped; } *drops; uint32_t n_drops;  /* by buf_id */
    int32_t       rank, world;
    int64_t       last_ts;
    int           tsc;                 /* stream's fast-path stamps are TSC ticks */
    struct clock_sample { uint64_t tsc; int64_t ns; } *samples;  /* (TSC, monotonic) pairs, by tsc */
    uint32_t      n_samples, cap_samples;
    uint64_t      unmatched_ends, unfinished, bad_records;
    uint64_t      cut_at;              /* byte where the last chunk is incomplete, 0 = none */
    char         *err; size_t err_n;
} conv;

static int fail(conv *c, int status, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(c->err, c->err_n, "%s: ", c->path);
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < c->err_n) vsnprintf(c->err + n, c->err_n - (size_t)n, fmt, ap);
    va_end(ap);
    return status;
}

/* Grow *p to hold need elements; 0 or -1 on out of memory. */
static int grow(void *pp, uint32_t *cap, size_t elem, uint32_t need)
{
    void **p = pp;
    if (need <= *cap) return 0;
    uint32_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q) return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* A record's time in ns: TSC ticks go through the line between samples. */
static int64_t rec_v(const ts__rec *r)
{
    int64_t v = 0;
    if (ts__rec_v_bytes(r)) memcpy(&v, r + 1, 8);
    return v;
}

/* Times the converter accepts, in ns on either side of 0 (about 146 years):
 * the difference or sum of any two such times (an end minus a start, a start
 * plus a duration) fits in int64. A stream damaged on disk can hold any bits;
 * a record whose time lies outside is counted as bad, not converted. */
#define TIME_LIMIT_NS ((int64_t)1 << 62)

static int time_ok(double ns)
{
    return ns > (double)-TIME_LIMIT_NS && ns < (double)TIME_LIMIT_NS;
}

/* The record's time in ns, through the clock samples for TSC ticks; 0 when
 * it lies outside TIME_LIMIT_NS. */
static int rec_ns(const conv *c, const ts__rec *r, int64_t *ns)
{
    if (!c->tsc || (r->flags & TS__RECF_NS)) {
        *ns = r->ts_ns;
        return time_ok((double)r->ts_ns);
    }
    uint64_t t = (uint64_t)r->ts_ns;
    if (c->n_samples < 2) {   /* cannot scale */
        *ns = c->n_samples ? c->samples[0].ns : 0;
        return 1;
    }
    /* The segment between the samples around t (the first or last segment
     * outside them): piecewise, so a rate change of CLOCK_MONOTONIC (NTP
     * slewing) during a long run bends the mapping with it. In doubles:
     * samples lie within TIME_LIMIT_NS, ticks may be anything. */
    uint32_t lo = 0, hi = c->n_samples - 1;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->samples[mid].tsc <= t) lo = mid; else hi = mid;
    }
    const struct clock_sample *a = &c->samples[lo], *b = &c->samples[hi];
    double ticks = t >= a->tsc ? (double)(t - a->tsc) : -(double)(a->tsc - t);
    double x = (double)a->ns + ticks * ((double)b->ns - (double)a->ns) / (double)(b->tsc - a->tsc);
    if (!time_ok(x)) return 0;
    *ns = (int64_t)x;
    return 1;
}

static cev *add_ev(conv *c, char ph, const ts__rec *r, int64_t ts, int64_t pid, int64_t tid)
{
    if (grow(&c->ev, &c->cap_ev, sizeof *c->ev, c->n_ev + 1)) return NULL;
    cev *e = &c->ev[c->n_ev];
    *e = (cev){ts, 0, pid, tid, r, r, c->n_ev, ph, 0};
    c->n_ev++;
    return e;
}

/* Strings of a record: the NUL-terminated run after header (and track/flow
 * fields). Returns the first string or NULL when it overruns the record. */
static const char *rec_body(const ts__rec *r)
{
    const char *p = (const char *)(r + 1) + ts__rec_v_bytes(r);
    if (r->flags & TS__RECF_TRACK) p += 16;
    if (r->flags & TS__RECF_FLOW) p += 8;
    return p;
}

static const char *next_str(const char *s, const char *end)
{
    const char *z = s < end ? memchr(s, 0, (size_t)(end - s)) : NULL;
    return z ? z + 1 : NULL;
}

/* Checks that the strings and args the record claims lie inside it. */
static int rec_valid(const ts__rec *r)
{
    const char *end = (const char *)r + r->size, *p = rec_body(r);
    if (p > end) return 0;
    int n_str = r->type == TS__REC_B || r->type == TS__REC_X || r->type == TS__REC_I ||
                r->type == TS__REC_AB || r->type == TS__REC_SDEF ? 2 : r->type == TS__REC_C || r->type == TS__REC_FLOW ||
                r->type == TS__REC_TNAME ? 1 : 0;
    if ((r->flags & TS__RECF_FLOW) && r->type == TS__REC_X) n_str++;
    for (int i = 0; i < n_str && p; i++) p = next_str(p, end);
    for (int i = 0; i < r->n_args && p; i++) {
        p = next_str(p, end);
        if (!p || p >= end) return 0;
        if (*p == 'i') p = p + 9 <= end ? p + 9 : NULL;
        else if (*p == 's' || *p == 'j') p = next_str(p + 1, end);
        else return 0;
    }
    return p != NULL;
}

static idx_stack *stack_for(conv *c, uint32_t buf_id)
{
    if (buf_id >= c->n_stacks) {
        uint32_t n = buf_id + 1;
        idx_stack *s = realloc(c->stacks, (size_t)n * sizeof *s);
        if (!s) return NULL;
        memset(s + c->n_stacks, 0, (size_t)(n - c->n_stacks) * sizeof *s);
        c->stacks = s;
        c->n_stacks = n;
    }
    return &c->stacks[buf_id];
}

static int note_drops(conv *c, const ts__raw_chunk *ck)
{
    if (ck->buf_id >= c->n_drops) {
        uint32_t n = ck->buf_id + 1;
        void *d = realloc(c->drops, (size_t)n * sizeof *c->drops);
        if (!d) return -1;
        c->drops = d;
        memset(c->drops + c->n_drops, 0, (size_t)(n - c->n_drops) * sizeof *c->drops);
        c->n_drops = n;
    }
    c->drops[ck->buf_id].tid = ck->tid;
    if (ck->dropped > c->drops[ck->buf_id].dropped) c->drops[ck->buf_id].dropped = ck->dropped;
    return 0;
}

static pair_table *pairs_for(conv *c, uint32_t buf_id)
{
    if (buf_id >= c->n_pairs) {
        pair_table *t = realloc(c->pairs, (size_t)(buf_id + 1) * sizeof *t);
        if (!t) return NULL;
        memset(t + c->n_pairs, 0, (size_t)(buf_id + 1 - c->n_pairs) * sizeof *t);
        c->pairs = t;
        c->n_pairs = buf_id + 1;
    }
    return &c->pairs[buf_id];
}

static int define_pair(conv *c, uint32_t buf_id, const ts__rec *r)
{
    pair_table *t = pairs_for(c, buf_id);
    if (!t) return -1;
    if (r->str_id >= t->n) {
        if (grow(&t->v, &t->cap, sizeof *t->v, (uint32_t)r->str_id + 1)) return -1;
        memset(t->v + t->n, 0, (size_t)(r->str_id + 1 - t->n) * sizeof *t->v);
        t->n = (uint32_t)r->str_id + 1;
    }
    t->v[r->str_id] = r;
    return 0;
}

static const ts__rec *find_pair(conv *c, uint32_t buf_id, uint16_t id)
{
    return buf_id < c->n_pairs && id < c->pairs[buf_id].n ? c->pairs[buf_id].v[id] : NULL;
}

/* One sound record whose time is ts (ns); -1 on out of memory. */
static int on_record(conv *c, const ts__raw_chunk *ck, const ts__rec *r, int64_t ts)
{
    int64_t pid = c->hdr->pid, tid = ck->tid;
    if (r->flags & TS__RECF_TRACK) {
        int64_t tr[2];
        memcpy(tr, (const char *)(r + 1) + 8, 16);
        if (tr[0] >= 0) pid = tr[0];
        if (tr[1] >= 0) tid = tr[1];
    }
    int64_t v = rec_v(r);
    if (r->type != TS__REC_TNAME && r->type != TS__REC_RANK && ts > c->last_ts) c->last_ts = ts;
    if (r->type == TS__REC_X && v > 0 && ts + v > c->last_ts) c->last_ts = ts + v;
    cev *e;
    switch (r->type) {
    case TS__REC_SDEF: return define_pair(c, ck->buf_id, r);
    case TS__REC_B:
    case TS__REC_BREF: {
        const ts__rec *strs = r->type == TS__REC_B ? r : find_pair(c, ck->buf_id, r->str_id);
        if (!strs) { c->bad_records++; return 0; }
        idx_stack *s = stack_for(c, ck->buf_id);
        if (!s || !(e = add_ev(c, 'X', r, ts, pid, tid))) return -1;
        e->strs = strs;
        e->open = 1;
        if (grow(&s->v, &s->cap, sizeof *s->v, s->n + 1)) return -1;
        s->v[s->n++] = c->n_ev - 1;
        return 0;
    }
    case TS__REC_E: {
        idx_stack *s = stack_for(c, ck->buf_id);
        if (!s) return -1;
        if (!s->n) { c->unmatched_ends++; return 0; }
        cev *b = &c->ev[s->v[--s->n]];
        b->dur_ns = ts >= b->ts_ns ? ts - b->ts_ns : 0;
        b->open = 0;
        return 0;
    }
    case TS__REC_X:
        if (!(e = add_ev(c, 'X', r, ts, pid, tid))) return -1;
        e->dur_ns = v > 0 ? v : 0;
        if (r->flags & TS__RECF_FLOW) return add_ev(c, r->flow_phase == 's' ? 's' : 'f', r, ts, pid, tid) ? 0 : -1;
        return 0;
    case TS__REC_I: return add_ev(c, 'i', r, ts, pid, tid) ? 0 : -1;
    case TS__REC_C: return add_ev(c, 'C', r, ts, pid, tid) ? 0 : -1;
    case TS__REC_FLOW:
        if (r->flow_phase != 's' && r->flow_phase != 't' && r->flow_phase != 'f') { c->bad_records++; return 0; }
        return add_ev(c, (char)r->flow_phase, r, ts, pid, tid) ? 0 : -1;
    case TS__REC_AB:
        if (!(e = add_ev(c, 'X', r, ts, pid, tid))) return -1;
        e->open = 1;
        if (grow(&c->begins, &c->cap_begins, sizeof *c->begins, c->n_begins + 1)) return -1;
        c->begins[c->n_begins++] = c->n_ev - 1;
        return 0;
    case TS__REC_AE:
        if (grow(&c->ends, &c->cap_ends, sizeof *c->ends, c->n_ends + 1)) return -1;
        c->ends[c->n_ends] = (aend){(uint64_t)v, ts, c->n_ends};
        c->n_ends++;
        return 0;
    case TS__REC_TNAME:
        if (grow(&c->tnames, &c->cap_tnames, sizeof *c->tnames, c->n_tnames + 1)) return -1;
        c->tnames[c->n_tnames].tid = ck->tid;
        c->tnames[c->n_tnames++].name = rec_body(r);
        return 0;
    case TS__REC_RANK:
        c->rank = (int32_t)((uint64_t)v >> 32);
        c->world = (int32_t)(uint32_t)v;
        return 0;
    default:
        return 0;
    }
}

static int add_sample(conv *c, uint64_t tsc, int64_t ns)
{
    if (!time_ok((double)ns)) return 0;   /* a damaged sample: the others scale */
    if (grow(&c->samples, &c->cap_samples, sizeof *c->samples, c->n_samples + 1)) return -1;
    c->samples[c->n_samples++] = (struct clock_sample){tsc, ns};
    return 0;
}

static int cmp_sample(const void *a, const void *b)
{
    const struct clock_sample *x = a, *y = b;
    return x->tsc < y->tsc ? -1 : x->tsc > y->tsc;
}

/* Sort by TSC and keep only samples where both clocks moved forward, so
 * every segment has a positive slope (damaged or coarse samples drop out). */
static void sort_samples(conv *c)
{
    if (c->n_samples > 1) qsort(c->samples, c->n_samples, sizeof *c->samples, cmp_sample);
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n_samples; i++)
        if (n == 0 || (c->samples[i].tsc > c->samples[n - 1].tsc && c->samples[i].ns > c->samples[n - 1].ns))
            c->samples[n++] = c->samples[i];
    c->n_samples = n;
}

/* Pass 0 only reads chunk headers (the latest clock sample); pass 1 the records. */
static int parse_chunks(conv *c, const char *data, size_t size, int pass)
{
    size_t off = sizeof(ts__raw_header);
    while (off + sizeof(ts__raw_chunk) <= size) {
        ts__raw_chunk ck;
        memcpy(&ck, data + off, sizeof ck);
        if (ck.magic != TS__RAW_CHUNK_MAGIC || ck.buf_id >= MAX_BUF_ID || ck.n_bytes % 8)
            return fail(c, TS_EPARSE, "byte %zu: bad chunk header", off);
        off += sizeof ck;
        if (ck.n_bytes > size - off) { off -= sizeof ck; break; }   /* cut short: keep what came before */
        if (pass == 0) {
            if (c->tsc && add_sample(c, ck.sample_tsc, ck.sample_ns)) return fail(c, TS_ENOMEM, "out of memory");
            off += ck.n_bytes;
            continue;
        }
        if (note_drops(c, &ck)) return fail(c, TS_ENOMEM, "out of memory");
        for (size_t p = off; p < off + ck.n_bytes;) {
            const ts__rec *r = (const ts__rec *)(data + p);
            uint32_t min = r->type == TS__REC_PAD ? 8 : sizeof *r + ts__rec_v_bytes(r);
            if (r->size < min || r->size % 8 || r->size > off + ck.n_bytes - p)
                return fail(c, TS_EPARSE, "byte %zu: bad record size %u", p, r->size);
            if (r->type == TS__REC_PAD) { p += r->size; continue; }
            int64_t ts = 0;
            if (r->type >= TS__REC_NTYPES || !rec_valid(r) || !rec_ns(c, r, &ts) ||
                (r->type == TS__REC_X && rec_v(r) >= TIME_LIMIT_NS))
                c->bad_records++;
            else if (on_record(c, &ck, r, ts)) return fail(c, TS_ENOMEM, "out of memory");
            p += r->size;
        }
        off += ck.n_bytes;
    }
    /* A killed process or a full disk leaves its last chunk incomplete. */
    if (off < size) c->cut_at = off;
    return TS_OK;
}

static int cmp_aend(const void *a, const void *b)
{
    const aend *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const cev *sort_evs;   /* qsort has no context argument in C11 */
static int cmp_begin(const void *a, const void *b)
{
    const cev *x = &sort_evs[*(const uint32_t *)a], *y = &sort_evs[*(const uint32_t *)b];
    uint64_t ix = (uint64_t)rec_v(x->rec), iy = (uint64_t)rec_v(y->rec);
    if (ix != iy) return ix < iy ? -1 : 1;
    if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
    return x->seq < y->seq ? -1 : 1;
}

/* Pair the k-th begin of an id with its k-th end at or after it. */
static void match_async(conv *c)
{
    if (c->n_ends) qsort(c->ends, c->n_ends, sizeof *c->ends, cmp_aend);
    sort_evs = c->ev;
    if (c->n_begins) qsort(c->begins, c->n_begins, sizeof *c->begins, cmp_begin);
    uint32_t j = 0;
    for (uint32_t i = 0; i < c->n_begins; i++) {
        cev *b = &c->ev[c->begins[i]];
        uint64_t id = (uint64_t)rec_v(b->rec);
        while (j < c->n_ends && (c->ends[j].id < id || (c->ends[j].id == id && c->ends[j].ts_ns < b->ts_ns))) {
            c->unmatched_ends++;
            j++;
        }
        if (j < c->n_ends && c->ends[j].id == id) {
            b->dur_ns = c->ends[j].ts_ns - b->ts_ns;
            b->open = 0;
            j++;
        }
    }
    c->unmatched_ends += c->n_ends - j;
}

static int cmp_ev(const void *a, const void *b)
{
    const cev *x = a, *y = b;
    if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
    if (x->dur_ns != y->dur_ns) return x->dur_ns > y->dur_ns ? -1 : 1;
    return x->seq < y->seq ? -1 : 1;
}

/* ---- JSON output ---- */

/* Length of the valid UTF-8 sequence at p (1-4), or 0 when it is not one
 * (a name cut at TS_TRACE_MAX_STR may end in half a character). */
static int utf8_len(const unsigned char *p)
{
    int n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : (*p & 0xf8) == 0xf0 ? 4 : 0;
    for (int i = 1; i < n; i++)   /* stops at the NUL: it is no continuation byte */
        if ((p[i] & 0xc0) != 0x80) return 0;
    if ((n == 2 && p[0] < 0xc2) || (n == 3 && p[0] == 0xe0 && p[1] < 0xa0) ||
        (n == 4 && p[0] == 0xf0 && p[1] < 0x90))
        return 0;   /* overlong */
    if ((n == 3 && p[0] == 0xed && p[1] >= 0xa0) || (n == 4 && (p[0] > 0xf4 || (p[0] == 0xf4 && p[1] >= 0x90))))
        return 0;   /* a surrogate, or beyond U+10FFFF */
    return n;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD so the file stays valid. */
static void put_json_str(FILE *f, const char *s)
{
    putc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_len(p);
        if (n == 0) { fputs("\\ufffd", f); p++; continue; }
        if (n > 1) { fwrite(p, 1, (size_t)n, f); p += n; continue; }
        if (*p == '"' || *p == '\\') { putc('\\', f); putc(*p, f); }
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p == '\r') fputs("\\r", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else putc(*p, f);
        p++;
    }
    putc('"', f);
}

/* Microseconds with the nanoseconds kept exactly: 1234567 ns -> 1234.567 */
static void put_us(FILE *f, int64_t ns)
{
    const char *sign = ns < 0 ? "-" : "";
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(f, "%s%" PRIu64 ".%03u", sign, a / 1000, (unsigned)(a % 1000));
}

/* JSON text checked before it is written unquoted from a 'j' arg, so the
 * output stays valid whatever a caller passes (a value cut at the arg limit
 * is not valid and is written as a string). Returns the end of the value at
 * s, or NULL. Depth is bounded so a hostile arg cannot exhaust the stack. */
static const char *json_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return s;
}

static const char *json_str_end(const char *s)
{
    for (s++; *s != '"'; ) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x20) return NULL;
        if (ch == '\\') {
            s++;
            if (*s == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i]) return NULL;
                if (!strncmp(s + 1, "0000", 4)) return NULL;   /* a NUL no reader of C strings keeps */
                s += 5;
            } else if (*s && strchr("\"\\/bfnrt", *s)) s++;
            else return NULL;
            continue;
        }
        int n = utf8_len((const unsigned char *)s);
        if (!n) return NULL;
        s += n;
    }
    return s + 1;
}

static const char *json_num_end(const char *s)
{
    const char *p = s + (*s == '-');
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
    else return NULL;
    if (*p == '.') {
        if (*++p < '0' || *p > '9') return NULL;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (*p < '0' || *p > '9') return NULL;
        while (*p >= '0' && *p <= '9') p++;
    }
    return p;
}

static const char *json_value_end(const char *s, int depth)
{
    s = json_ws(s);
    if (*s == '"') return json_str_end(s);
    if (*s == '-' || (*s >= '0' && *s <= '9')) return json_num_end(s);
    if (!strncmp(s, "true", 4) || !strncmp(s, "null", 4)) return s + 4;
    if (!strncmp(s, "false", 5)) return s + 5;
    if ((*s != '[' && *s != '{') || depth >= 16) return NULL;
    char close = *s == '[' ? ']' : '}';
    s = json_ws(s + 1);
    if (*s == close) return s + 1;
    for (;;) {
        if (close == '}') {
            if (*s != '"' || !(s = json_str_end(s))) return NULL;
            s = json_ws(s);
            if (*s++ != ':') return NULL;
        }
        if (!(s = json_value_end(s, depth + 1))) return NULL;
        s = json_ws(s);
        if (*s == close) return s + 1;
        if (*s++ != ',') return NULL;
        s = json_ws(s);
    }
}

static int is_json(const char *s)
{
    const char *end = json_value_end(s, 0);
    return end && *json_ws(end) == '\0';
}

static void put_args(FILE *f, const char *p, unsigned n_args, int first)
{
    for (unsigned i = 0; i < n_args; i++) {
        if (!first) putc(',', f);
        first = 0;
        put_json_str(f, p);
        putc(':', f);
        p += strlen(p) + 1;
        if (*p++ == 'i') {
            int64_t v;
            memcpy(&v, p, 8);
            fprintf(f, "%" PRId64, v);
            p += 8;
        } else {
            if (p[-1] == 'j' && is_json(p)) fputs(p, f);
            else put_json_str(f, p);
            p += strlen(p) + 1;
        }
    }
}

static void put_event(FILE *f, const conv *c, const cev *e)
{
    const ts__rec *r = e->rec;
    const char *s1 = rec_body(e->strs), *s2 = s1 + strlen(s1) + 1;
    fprintf(f, ",\n{\"ph\":\"%c\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", e->ph, e->pid, e->tid);
    put_us(f, e->ts_ns);
    if (e->ph == 'C') {
        double v;
        int64_t bits = rec_v(r);
        memcpy(&v, &bits, 8);
        fputs(",\"name\":", f); put_json_str(f, s1);
        fputs(",\"args\":{", f); put_json_str(f, s1);
        fprintf(f, ":%.17g}}", isfinite(v) ? v : 0.0);
        return;
    }
    if (e->ph == 's' || e->ph == 't' || e->ph == 'f') {
        uint64_t id = (uint64_t)rec_v(r);
        const char *cat = s1;
        if (r->type == TS__REC_X) {   /* a flow riding on a complete event */
            memcpy(&id, (const char *)(r + 1) + 8 + 16, 8);
            cat = s2 + strlen(s2) + 1;
        }
        fprintf(f, ",\"id\":%" PRIu64 ",\"cat\":", id);
        put_json_str(f, cat);
        fputs(",\"name\":", f); put_json_str(f, cat);
        fputs(e->ph == 'f' ? ",\"bp\":\"e\"}" : "}", f);
        return;
    }
    fputs(",\"cat\":", f); put_json_str(f, s1);
    fputs(",\"name\":", f); put_json_str(f, s2);
    if (e->ph == 'X') { fputs(",\"dur\":", f); put_us(f, e->dur_ns); }
    else fputs(",\"s\":\"t\"", f);
    const char *args = s2 + strlen(s2) + 1;
    if (r->type == TS__REC_X && (r->flags & TS__RECF_FLOW)) args += strlen(args) + 1;
    if (r->n_args || e->open) {
        fputs(",\"args\":{", f);
        if (e->open) fputs("\"unfinished\":1", f);
        put_args(f, args, r->n_args, !e->open);
        putc('}', f);
    }
    putc('}', f);
}

static uint64_t dropped_total(const conv *c)
{
    uint64_t dropped = 0;
    for (uint32_t i = 0; i < c->n_drops; i++) dropped += c->drops[i].dropped;
    return dropped;
}

/* An instant of cat "trainscope_meta" named "distributedInfo" (the torch
 * collector emits it: the backend, the process group's own rank) is no event:
 * its args go into the file's distributedInfo. */
static int is_dist_meta(const cev *e)
{
    if (e->ph != 'i') return 0;
    const char *cat = rec_body(e->strs);
    return !strcmp(cat, "trainscope_meta") && !strcmp(cat + strlen(cat) + 1, "distributedInfo");
}

static void put_dist_info(FILE *f, const conv *c)
{
    const cev *meta = NULL;
    for (uint32_t i = 0; i < c->n_ev; i++)
        if (is_dist_meta(&c->ev[i])) meta = &c->ev[i];
    if (c->rank < 0 && !meta) return;
    fputs("\"distributedInfo\":{", f);
    int first = 1;
    if (c->rank >= 0) {
        fprintf(f, "\"rank\":%d", c->rank);
        if (c->world > 0) fprintf(f, ",\"world_size\":%d", c->world);
        first = 0;
    }
    if (meta) {
        const char *name = rec_body(meta->strs);
        name += strlen(name) + 1;
        put_args(f, name + strlen(name) + 1, meta->rec->n_args, first);
    }
    fputs("},\n", f);
}

static void put_header(FILE *f, const conv *c)
{
    uint64_t dropped = dropped_total(c);
    fputs("{\"schemaVersion\":1,\n", f);
    put_dist_info(f, c);
    fprintf(f, "\"trainscope\":{\"writer\":\"trainscope record\",\"pid\":%u,\"ppid\":%u,"
               "\"clock\":\"CLOCK_MONOTONIC\",\"realtime_offset_ns\":%" PRId64 ","
               "\"dropped_events\":%" PRIu64 ",\"unmatched_ends\":%" PRIu64 ","
               "\"unfinished_ranges\":%" PRIu64 ",\"bad_records\":%" PRIu64 ",",
            c->hdr->pid, c->hdr->ppid, c->hdr->realtime_offset_ns, dropped, c->unmatched_ends,
            c->unfinished, c->bad_records);
    /* Beside the other counts, where analyses read it (it was once written
     * inside dropped_by_thread, with a trailing comma: invalid JSON). */
    if (c->cut_at) fprintf(f, "\"cut_at_byte\":%" PRIu64 ",", c->cut_at);
    fputs("\"dropped_by_thread\":{", f);
    int first = 1;
    for (uint32_t i = 0; i < c->n_drops; i++) {
        if (!c->drops[i].dropped) continue;
        fprintf(f, "%s\"%u\":%" PRIu64, first ? "" : ",", c->drops[i].tid, c->drops[i].dropped);
        first = 0;
    }
    fputs("}},\n\"traceEvents\":[\n", f);
    char comm[sizeof c->hdr->comm + 1];
    memcpy(comm, c->hdr->comm, sizeof c->hdr->comm);
    comm[sizeof c->hdr->comm] = 0;
    fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":0,\"args\":{\"name\":", c->hdr->pid);
    put_json_str(f, comm);
    fputs("}}", f);
    for (uint32_t i = 0; i < c->n_tnames; i++) {
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
                c->hdr->pid, c->tnames[i].tid);
        put_json_str(f, c->tnames[i].name);
        fputs("}}", f);
    }
}

/* Tracks of other processes' ids are GPU work (collectors put it on pid =
 * device, tid = stream, as Kineto does): name them like Kineto, once each.
 * Bounded to 4096 tracks so a stream of odd ids cannot make this quadratic. */
static void put_device_tracks(FILE *f, const conv *c)
{
    enum { MAX_TRACKS = 4096 };
    int64_t (*seen)[2] = malloc(MAX_TRACKS * sizeof *seen);
    uint32_t n = 0;
    for (uint32_t i = 0; seen && i < c->n_ev && n < MAX_TRACKS; i++) {
        const cev *e = &c->ev[i];
        if (e->pid == (int64_t)c->hdr->pid) continue;
        uint32_t k = 0, pid_seen = 0;
        for (; k < n && !(seen[k][0] == e->pid && seen[k][1] == e->tid); k++) pid_seen |= seen[k][0] == e->pid;
        if (k < n) continue;
        seen[n][0] = e->pid;
        seen[n][1] = e->tid;
        n++;
        if (!pid_seen)
            fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRId64 ",\"tid\":0,"
                       "\"args\":{\"name\":\"GPU %" PRId64 "\"}}", e->pid, e->pid);
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ","
                   "\"args\":{\"name\":\"stream %" PRId64 "\"}}", e->pid, e->tid, e->tid);
    }
    free(seen);
}

/* Pick DIR/rank-R.pid.json, or .N.json after it when a stream of an earlier
 * image of the same pid (before exec) already took it. */
static void out_name(const conv *c, const char *dir, char *path, size_t n)
{
    for (int k = 0; k < 1000; k++) {
        char sfx[16] = "";
        if (k) snprintf(sfx, sizeof sfx, ".%d", k);
        if (c->rank >= 0) snprintf(path, n, "%s/rank-%d.%u%s.json", dir, c->rank, c->hdr->pid, sfx);
        else snprintf(path, n, "%s/pid-%u%s.json", dir, c->hdr->pid, sfx);
        if (access(path, F_OK) != 0) return;
    }
}

static int write_json(conv *c, const char *dir, char *out_path, size_t out_n)
{
    char path[4096], tmp[4200];
    out_name(c, dir, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return fail(c, TS_EIO, "cannot write %s: %s", tmp, strerror(errno));
    put_header(f, c);
    put_device_tracks(f, c);
    for (uint32_t i = 0; i < c->n_ev; i++)
        if (!is_dist_meta(&c->ev[i])) put_event(f, c, &c->ev[i]);
    fputs("\n]}\n", f);
    int bad = ferror(f), e = errno;   /* a failed write's errno (stdio keeps it) */
    if (fclose(f) != 0 && !bad) { bad = 1; e = errno; }
    if (bad) { unlink(tmp); return fail(c, TS_EIO, "cannot write %s: %s", tmp, e ? strerror(e) : "write error"); }
    if (rename(tmp, path) != 0) { unlink(tmp); return fail(c, TS_EIO, "cannot rename %s", tmp); }
    if (out_path && out_n) snprintf(out_path, out_n, "%s", path);
    return TS_OK;
}

static int read_file(conv *c, char **data, size_t *size)
{
    int fd = open(c->path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0) close(fd);
        return fail(c, TS_EIO, "cannot open: %s", strerror(errno));
    }
    *size = (size_t)st.st_size;
    *data = malloc(*size ? *size : 1);
    size_t got = 0;
    while (*data && got < *size) {
        ssize_t r = read(fd, *data + got, *size - got);
        if (r <= 0) { if (r < 0 && errno == EINTR) continue; break; }
        got += (size_t)r;
    }
    close(fd);
    if (!*data) return fail(c, TS_ENOMEM, "out of memory");
    *size = got;
    if (got < sizeof(ts__raw_header) || memcmp(*data, TS__RAW_MAGIC, 8))
        return fail(c, TS_EFORMAT, "byte 0: not a trainscope raw capture");
    return TS_OK;
}

static void conv_free(conv *c)
{
    free(c->ev);
    for (uint32_t i = 0; i < c->n_stacks; i++) free(c->stacks[i].v);
    for (uint32_t i = 0; i < c->n_pairs; i++) free(c->pairs[i].v);
    free(c->pairs);
    free(c->samples);
    free(c->stacks);
    free(c->begins);
    free(c->ends);
    free(c->tnames);
    free(c->drops);
}

int ts__raw_convert(const char *raw_path, const char *dir, char *out_path, size_t out_n,
                    char *err, size_t err_n, ts__raw_losses *losses)
{
    conv c;
    memset(&c, 0, sizeof c);
    c.path = raw_path;
    c.err = err;
    c.err_n = err_n;
    char *data = NULL;
    size_t size = 0;
    int rc = read_file(&c, &data, &size);
    if (rc) goto done;
    c.hdr = (const ts__raw_header *)data;
    if (!time_ok((double)c.hdr->start_ns)) {
        rc = fail(&c, TS_EPARSE, "byte %zu: start time %" PRId64 " ns out of range", offsetof(ts__raw_header, start_ns),
                  c.hdr->start_ns);
        goto done;
    }
    c.rank = c.hdr->rank;
    c.world = c.hdr->world_size;
    c.last_ts = c.hdr->start_ns;
    c.tsc = c.hdr->clock_kind == TS__CLOCK_TSC;
    if (c.tsc && add_sample(&c, c.hdr->start_tsc, c.hdr->start_ns)) { rc = fail(&c, TS_ENOMEM, "out of memory"); goto done; }
    if ((rc = parse_chunks(&c, data, size, 0))) goto done;
    sort_samples(&c);
    if ((rc = parse_chunks(&c, data, size, 1))) goto done;
    match_async(&c);
    for (uint32_t i = 0; i < c.n_ev; i++) {
        if (!c.ev[i].open) continue;
        c.ev[i].dur_ns = c.last_ts > c.ev[i].ts_ns ? c.last_ts - c.ev[i].ts_ns : 0;
        c.unfinished++;
    }
    /* A process image that recorded nothing (mpirun, a shell, the half of a
     * fork+exec before exec) gets no file: it would only be noise. */
    if (!c.n_ev) { rc = fail(&c, TS_ENODATA, "no events"); goto done; }
    qsort(c.ev, c.n_ev, sizeof *c.ev, cmp_ev);
    rc = write_json(&c, dir, out_path, out_n);
    if (rc == TS_OK && losses) {
        *losses = (ts__raw_losses){dropped_total(&c), c.bad_records, c.unfinished, c.unmatched_ends, c.cut_at, 0};
        for (uint32_t i = 0; i < c.n_ev; i++) losses->n_events += !is_dist_meta(&c.ev[i]);
    }
done:
    conv_free(&c);
    free(data);
    return rc;
}

/* ---- what `trainscope record` reads of a job (include/trainscope/record.h) ---- */

int ts_record_convert(const char *raw_path, const char *dir, char *err, size_t err_n, ts_record_losses *losses)
{
    ts__raw_losses l = {0};
    int rc = ts__raw_convert(raw_path, dir, NULL, 0, err, err_n, &l);
    if (losses)
        *losses = (ts_record_losses){l.dropped_events, l.bad_records, l.unfinished_ranges, l.unmatched_ends,
                                     l.cut_at_byte, l.n_events};
    return rc;
}

void ts_record_stream_comm(const char *raw_path, char *comm, size_t n)
{
    ts__raw_header h;
    int fd = open(raw_path, O_RDONLY | O_CLOEXEC);
    comm[0] = 0;
    if (fd < 0) return;
    if (read(fd, &h, sizeof h) == (ssize_t)sizeof h && !memcmp(h.magic, TS__RAW_MAGIC, 8))
        snprintf(comm, n, "%.*s", (int)sizeof h.comm, h.comm);
    close(fd);
}

int ts_record_status_create(const char *abs_dir, char *path, size_t path_n, ts_error *err)
{
    snprintf(path, path_n, "%s/.raw", abs_dir);
    mkdir(path, 0777);
    snprintf(path, path_n, "%s/.raw/%s", abs_dir, TS__STATUS_NAME);
    ts__status_slot head;
    memset(&head, 0, sizeof head);
    memcpy(head.magic, TS__STATUS_MAGIC, 8);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    int e = fd < 0 ? errno : posix_fallocate(fd, 0, (off_t)TS__STATUS_BYTES);
    if (!e && pwrite(fd, &head, sizeof head, 0) != (ssize_t)sizeof head) e = errno ? errno : EIO;
    if (fd >= 0 && close(fd) != 0 && !e) e = errno;
    if (!e) return TS_OK;
    snprintf(err->msg, sizeof err->msg, "cannot reserve %s (%zu bytes): %s", path, (size_t)TS__STATUS_BYTES,
             strerror(e));
    unlink(path);
    return err->status = TS_EIO;
}

int ts_record_status_read(const char *raw_dir, uint32_t *n_claimed, ts_record_slot *slots, uint32_t cap)
{
    char path[4096 + 32];
    snprintf(path, sizeof path, "%s/%s", raw_dir, TS__STATUS_NAME);
    ts__status_slot *s = malloc(TS__STATUS_BYTES);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    bool ok = s && fd >= 0 && read(fd, s, TS__STATUS_BYTES) == (ssize_t)TS__STATUS_BYTES &&
              !memcmp(s[0].magic, TS__STATUS_MAGIC, 8);
    if (fd >= 0) close(fd);
    *n_claimed = ok ? s[0].pid : 0;
    int n = 0;
    for (uint32_t i = 1; ok && i < TS__STATUS_SLOTS && i <= *n_claimed && (uint32_t)n < cap; i++) {
        const ts__status_slot *sl = &s[i];
        ts_record_slot *o = &slots[n++];
        *o = (ts_record_slot){sl->pid, sl->state == TS__STATUS_TRACING, sl->lost, sl->err, "", ""};
        memcpy(o->stream, sl->stream, sizeof sl->stream);
        memcpy(o->comm, sl->comm, sizeof sl->comm);
    }
    free(s);
    return ok ? n : -1;
}
