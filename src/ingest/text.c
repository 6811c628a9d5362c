/* text.c - side files read whole through the byte source: fx dumps, kernel
 * time tables, gradients lists, nccl-tests logs, precision plans, G10
 * configs (the functions are declared in core/core.h, where their callers
 * look for them). Plain, gzip and zstd files read alike, since ts_src
 * tells them apart by their magic bytes.
 *
 * Not for: traces (they stream through ts_src without being held whole) or
 * parsing; the bound applies to the uncompressed bytes, so a small
 * compressed file that inflates past it is refused as the plain one is.
 */
#include "ingest/ingest.h"

#include <stdio.h>

/* Reads at most max_bytes + 1 uncompressed bytes, so an endless source
 * (/dev/zero, a pipe that never closes its end, a zip bomb) costs max_bytes
 * of memory and then an error. */
char *ts__read_bounded(const char *path, const char *what, size_t max_bytes, size_t *len, size_t *cap,
                       ts_error *err)
{
    ts_src src;
    int rc = ts__src_open_file(&src, path, false, err);
    if (rc) {
        if (err) err->status = TS_EIO;   /* a side file that cannot be opened, missing or not, as before */
        return NULL;
    }
    size_t n = 0, c = 1 << 16;
    char *buf = ts__malloc(c);
    rc = buf ? TS_OK : ts__error(err, TS_ENOMEM, "%s: out of memory", path);
    while (!rc) {
        long k = ts__src_read(&src, buf + n, c - n - 1, err);
        if (k < 0) { rc = (int)k; break; }
        n += (size_t)k;
        if (n > max_bytes) rc = ts__error(err, TS_ERANGE, "%s: larger than %zu MiB, the most read for %s (is it the right file?)",
                                          path, max_bytes >> 20, what);
        else if (k == 0) break;
        else if (n + 1 == c) {
            size_t nc = c * 2 > max_bytes + 2 ? max_bytes + 2 : c * 2;
            char *nb = ts__realloc(buf, c, nc);
            if (!nb) rc = ts__error(err, TS_ENOMEM, "%s: out of memory", path);
            else buf = nb, c = nc;
        }
    }
    ts__src_close(&src);
    if (rc) {
        ts__free(buf, c);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    *cap = c;
    return buf;
}

int ts__for_lines(const char *path, const char *what, bool cut_hash, ts__line_fn fn, void *ctx, ts_error *err)
{
    size_t len, cap;
    char *text = ts__read_bounded(path, what, TS__SIDE_FILE_MAX_BYTES, &len, &cap, err);
    if (!text) return err ? err->status : TS_EIO;
    int rc = memchr(text, '\0', len) ? ts__error(err, TS_EPARSE, "%s: NUL byte in a text file", path) : TS_OK;
    unsigned line = 0;
    for (char *p = text; *p && !rc;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0;
        line++;
        char *hash = cut_hash ? strchr(p, '#') : NULL;
        if (hash) *hash = 0;
        rc = fn(ctx, line, p, err);
        p = nl ? nl + 1 : p + strlen(p);
    }
    ts__free(text, cap);
    return rc;
}
