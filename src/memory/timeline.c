/* timeline.c - measured memory from PyTorch's export_memory_timeline_raw
 * output: a JSON list of [t_ns, action, bytes, category] rows (plain, gzip
 * or zstd, through ingest's byte source), summed into the bytes alive over time, per category.
 *
 * Not a JSON parser: the file is a flat list of 4-number lists, read with a
 * tiny state machine in 64 KiB chunks (bounded memory whatever the size).
 * Anything else is rejected with "FILE: byte N: what".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ingest/ingest.h"
#include "memory/memgraph.h"

const char *ts_mem_category_name(int c)
{
    static const char *const N[TS_MEM_N_CATEGORIES] = {
        "parameter", "optimizer_state", "input", "temporary",
        "activation", "gradient", "autograd_detail", "unknown"};
    return c >= 0 && c < TS_MEM_N_CATEGORIES ? N[c] : "?";
}

typedef struct row_state {
    int64_t v[4];      /* the row being read */
    int     n;         /* numbers read in this row */
    int     depth;     /* bracket depth: 1 = outer list, 2 = in a row */
    bool    in_num, neg;
    int64_t cur[TS_MEM_N_CATEGORIES], total;
    ts_mem_curve *curve; /* NULL = summary only */
} row_state;

/* Append (ns, bytes) to c, doubling its arrays (memgraph.h). */
int ts__mem_curve_push(ts_mem_curve *c, int64_t ns, int64_t bytes)
{
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 1024;
        int64_t *t = ts__malloc(nc * sizeof *t), *b = ts__malloc(nc * sizeof *b);
        if (!t || !b) {
            ts__free(t, nc * sizeof *t);
            ts__free(b, nc * sizeof *b);
            return TS_ENOMEM;
        }
        if (c->n) {
            memcpy(t, c->t_ns, c->n * sizeof *t);
            memcpy(b, c->bytes, c->n * sizeof *b);
        }
        ts__free(c->t_ns, c->cap * sizeof *t);
        ts__free(c->bytes, c->cap * sizeof *b);
        c->t_ns = t;
        c->bytes = b;
        c->cap = nc;
    }
    c->t_ns[c->n] = ns;
    c->bytes[c->n++] = bytes;
    return TS_OK;
}

void ts_mem_curve_free(ts_mem_curve *c)
{
    if (!c) return;
    ts__free(c->t_ns, c->cap * sizeof *c->t_ns);
    ts__free(c->bytes, c->cap * sizeof *c->bytes);
    memset(c, 0, sizeof *c);
}

static int end_row(row_state *s, ts_mem_timeline *t, const char *path, uint64_t at, ts_error *err)
{
    if (s->n != 4) return ts__error(err, TS_EPARSE, "%s: byte %llu: a row needs 4 numbers", path, (unsigned long long)at);
    int64_t ts = s->v[0], bytes = s->v[2], cat = s->v[3];
    if (cat < 0 || cat >= TS_MEM_N_CATEGORIES || s->v[1] < 1 || s->v[1] > 4)
        return ts__error(err, TS_EFORMAT, "%s: byte %llu: unknown action or category", path, (unsigned long long)at);
    if (__builtin_add_overflow(s->cur[cat], bytes, &s->cur[cat]) || __builtin_add_overflow(s->total, bytes, &s->total))
        return ts__error(err, TS_ERANGE, "%s: byte %llu: the bytes alive run past 64 bits", path, (unsigned long long)at);
    if (s->cur[cat] > t->max_bytes[cat]) t->max_bytes[cat] = s->cur[cat];
    if (ts >= 0) {
        if (!t->first_ns || ts < t->first_ns) t->first_ns = ts;
        if (ts > t->last_ns) t->last_ns = ts;
    }
    if (s->total > t->peak_bytes) {
        t->peak_bytes = s->total;
        t->peak_ns = ts;
        memcpy(t->at_peak, s->cur, sizeof s->cur);
    }
    t->n_events++;
    s->n = 0;
    if (s->curve && ts__mem_curve_push(s->curve, ts, s->total))
        return ts__error(err, TS_ENOMEM, "%s: out of memory", path);
    return TS_OK;
}

static int feed(row_state *s, ts_mem_timeline *t, const char *buf, size_t n, uint64_t base,
                const char *path, ts_error *err)
{
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (c >= '0' && c <= '9' && s->depth == 2) {
            if (!s->in_num) {
                if (s->n >= 4) return ts__error(err, TS_EPARSE, "%s: byte %llu: too many numbers in a row", path, (unsigned long long)(base + i));
                s->in_num = true;
                s->v[s->n] = 0;
            }
            if (s->v[s->n] > (INT64_MAX - 9) / 10) return ts__error(err, TS_ERANGE, "%s: byte %llu: number too large", path, (unsigned long long)(base + i));
            s->v[s->n] = s->v[s->n] * 10 + (c - '0');
            continue;
        }
        if (s->in_num) {
            if (s->neg) s->v[s->n] = -s->v[s->n];
            s->n++;
            s->in_num = s->neg = false;
        }
        if (c == '-' && s->depth == 2) s->neg = true;
        else if (c == '[') {
            if (++s->depth > 2) return ts__error(err, TS_EPARSE, "%s: byte %llu: nested too deep", path, (unsigned long long)(base + i));
        } else if (c == ']') {
            if (s->depth == 2) { int rc = end_row(s, t, path, base + i, err); if (rc) return rc; }
            if (--s->depth < 0) return ts__error(err, TS_EPARSE, "%s: byte %llu: unbalanced ']'", path, (unsigned long long)(base + i));
        } else if (c != ',' && c != ' ' && c != '\n' && c != '\r' && c != '\t')
            return ts__error(err, TS_EPARSE, "%s: byte %llu: unexpected '%c'", path, (unsigned long long)(base + i), c);
    }
    return TS_OK;
}

static int load_raw(const char *path, ts_mem_timeline *out, ts_mem_curve *curve, ts_error *err)
{
    ts__error_clear(err);
    memset(out, 0, sizeof *out);
    out->peak_ns = -1;
    ts_src src;
    int rc = ts__src_open_file(&src, path, false, err);
    if (rc) return err ? (err->status = TS_EIO) : TS_EIO;   /* cannot open: TS_EIO, missing or not */
    row_state s = {.curve = curve};
    char buf[1 << 16];
    uint64_t base = 0;
    long got = 0;
    while (!rc && (got = ts__src_read(&src, buf, sizeof buf, err)) > 0) {
        rc = feed(&s, out, buf, (size_t)got, base, path, err);
        base += (uint64_t)got;
    }
    if (!rc && got < 0) rc = (int)got;
    ts__src_close(&src);
    if (!rc && s.depth != 0) rc = ts__error(err, TS_EPARSE, "%s: byte %llu: truncated list", path, (unsigned long long)base);
    if (!rc && out->n_events == 0) rc = ts__error(err, TS_ENODATA, "%s: no memory events", path);
    out->final_bytes = s.total;
    return rc;
}

int ts_mem_timeline_load_raw(const char *path, ts_mem_timeline *out, ts_error *err)
{
    return load_raw(path, out, NULL, err);
}

int ts_mem_timeline_curve(const char *path, ts_mem_curve *out, ts_error *err)
{
    ts_mem_timeline t;
    memset(out, 0, sizeof *out);
    int rc = load_raw(path, &t, out, err);
    if (rc) ts_mem_curve_free(out);
    return rc;
}
