/* gradients.c - read gradients.json and compute DDP's bucket assignment.
 *
 * gradients.json lists the parameters in registration order, each with its
 * gradient's byte size; what docs/replay.md's five-line snippet writes:
 *     {"parameters": [{"name": "0.weight", "bytes": 1048576}, ...]}
 * A bare list of such objects, or of plain byte counts, is accepted too
 * (dPRO's gradient_name_list.json carries names only and is not enough).
 * The reader is a small tolerant scanner, not a JSON validator: it takes, in
 * order, every "bytes" member of the parameter objects (or every number of a
 * bare list) and reports the byte offset of anything it cannot read.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "replay/gradients.h"

static int push(ts_gradients *g, int64_t x, char *name)
{
    const ts_col_ref cols[] = {{(void **)&g->bytes, sizeof *g->bytes}, {(void **)&g->names, sizeof *g->names}};
    if (ts__grow_cols(cols, 2, &g->cap, (size_t)g->n + 1, 16)) return TS_ENOMEM;
    g->names[g->n] = name;
    g->bytes[g->n++] = x;
    return TS_OK;
}

/* The "name" string of the parameter object whose "bytes" key is at key:
 * the last "name" member between from and key. NULL when there is none (or
 * out of memory, which only costs the name). */
static char *name_before(const char *from, const char *key)
{
    const char *hit = NULL;
    for (const char *q = from; (q = strstr(q, "\"name\"")) && q < key; q += 6) hit = q;
    if (!hit) return NULL;
    hit += 6;
    hit += strspn(hit, " \t\r\n");
    if (*hit++ != ':') return NULL;
    hit += strspn(hit, " \t\r\n");
    if (*hit++ != '"') return NULL;
    size_t len = 0;
    while (hit + len < key && hit[len] != '"' && hit[len] != '\\') len++;
    if (hit + len >= key || hit[len] != '"') return NULL;
    char *s = ts__malloc(len + 1);
    if (s) { memcpy(s, hit, len); s[len] = 0; }
    return s;
}

/* At most this many bytes of gradients in all (1 PiB): sums of sizes stay
 * far from int64's end wherever buckets, caps and partitions add them up. */
#define TS__GRADIENT_BYTES_MAX ((int64_t)1 << 50)

/* Parse a non-negative integer at p (JSON number without fraction). */
static bool parse_bytes(const char *p, int64_t *out, const char **end)
{
    char *e;
    errno = 0;
    long long v = strtoll(p, &e, 10);
    if (e == p || v < 0 || errno == ERANGE || *e == '.' || *e == 'e' || *e == 'E') return false;
    *out = v;
    *end = e;
    return true;
}

int ts__gradients_load(const char *path, ts_gradients *out, ts_error *err)
{
    memset(out, 0, sizeof *out);
    char *buf = NULL;
    size_t buf_n = 0, len;
    buf = ts__read_bounded(path, "a gradients file", TS__SIDE_FILE_MAX_BYTES, &len, &buf_n, err);
    if (!buf) return err ? err->status : TS_EIO;
    int rc = TS_OK;
    const char *p = buf;
    while (isspace((unsigned char)*p)) p++;
    const char *params = strstr(buf, "\"parameters\"");
    if (*p == '[' && (!params || params > p)) params = p;
    if (!params) rc = ts__error(err, TS_EFORMAT, "%s: byte 0: no \"parameters\" list", path);
    bool bare_numbers = params == p && (p[1 + strspn(p + 1, " \t\r\n")] != '{');
    int64_t total = 0;
    for (const char *q = params; rc == TS_OK && q && *q;) {
        int64_t v = 0;
        char *name = NULL;
        const char *e = q;
        if (bare_numbers) {
            q += strcspn(q, "0123456789]");
            if (*q == ']' || !*q) break;
            if (!parse_bytes(q, &v, &e)) {
                rc = ts__error(err, TS_EPARSE, "%s: byte %zu: expected a byte count", path, (size_t)(q - buf));
                break;
            }
        } else {
            const char *from = q;
            q = strstr(q, "\"bytes\"");
            if (!q) break;
            const char *key = q;
            q += 7;
            q += strspn(q, " \t\r\n");
            if (*q++ != ':') { rc = ts__error(err, TS_EPARSE, "%s: byte %zu: expected ':'", path, (size_t)(q - 1 - buf)); break; }
            q += strspn(q, " \t\r\n");
            if (!parse_bytes(q, &v, &e)) {
                rc = ts__error(err, TS_EPARSE, "%s: byte %zu: \"bytes\" is not a byte count", path, (size_t)(q - buf));
                break;
            }
            name = name_before(from, key);   /* only once nothing can fail before the push */
        }
        if (v > TS__GRADIENT_BYTES_MAX - total) {
            ts__free(name, name ? strlen(name) + 1 : 0);
            rc = ts__error(err, TS_ERANGE, "%s: byte %zu: the gradients add up to more than 2^50 bytes (1 PiB)", path,
                           (size_t)(q - buf));
            break;
        }
        total += v;
        if (push(out, v, name)) {
            ts__free(name, name ? strlen(name) + 1 : 0);
            rc = ts__error(err, TS_ENOMEM, "%s: out of memory", path);
        }
        q = e;
    }
    ts__free(buf, buf_n);
    if (rc == TS_OK && out->n == 0) rc = ts__error(err, TS_EFORMAT, "%s: no parameter byte sizes", path);
    if (rc) ts__gradients_free(out);
    return rc;
}

void ts__gradients_free(ts_gradients *g)
{
    for (uint32_t i = 0; g->names && i < g->n; i++) ts__free(g->names[i], g->names[i] ? strlen(g->names[i]) + 1 : 0);
    ts__free(g->names, (size_t)g->cap * sizeof *g->names);
    ts__free(g->bytes, (size_t)g->cap * sizeof *g->bytes);
    memset(g, 0, sizeof *g);
}

uint32_t ts__ddp_buckets(const int64_t *bytes, uint32_t n, int64_t first_cap, int64_t cap, uint32_t *bucket_of)
{
    uint32_t b = 0;
    int64_t fill = 0, limit = first_cap;
    for (uint32_t i = 0; i < n; i++) {
        bucket_of[i] = b;
        fill += bytes[i];
        if (fill >= limit) {       /* DDP closes a bucket once it reaches the limit */
            b++;
            fill = 0;
            limit = cap;
        }
    }
    return fill > 0 ? b + 1 : b;
}
