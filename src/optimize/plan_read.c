/* plan_read.c - read plan.json back (trainscope replay --plan): the
 * buckets and partition it prescribes, checked against the gradients the
 * replay is given, so a plan is never priced on another model.
 *
 * A small tolerant scanner, not a JSON validator: it takes the members
 * "gradients_fingerprint" (a string), "bucket_units" and "gradient_pieces"
 * (arrays of positive integers) wherever they are, and reports the byte of
 * anything it cannot read. Not for: writing plans (plan.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "optimize/passes.h"
#include "optimize/plan_text.h"

struct ts_optimize_plan {
    uint32_t *units, n_units, cap_units;     /* bucket_units */
    uint32_t *pieces, n_pieces, cap_pieces;  /* gradient_pieces */
};

/* The whole plan (plain, gzip or zstd), NUL-terminated; *n = bytes to free. */
int ts__plan_slurp(const char *path, char **out, size_t *n, ts_error *err)
{
    size_t len;
    *out = ts__read_bounded(path, "a plan", TS__SIDE_FILE_MAX_BYTES, &len, n, err);
    return *out ? TS_OK : (err ? err->status : TS_EIO);
}

const char *ts__plan_member(const char *buf, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    for (const char *q = strstr(buf, pat); q; q = strstr(q, pat)) {   /* a string value equal to the key is skipped */
        q += strlen(pat);
        q += strspn(q, " \t\r\n");
        if (*q == ':') return q + 1 + strspn(q + 1, " \t\r\n");
    }
    return NULL;
}

static int read_uints(const char *path, const char *buf, const char *key, uint32_t **out, uint32_t *n, uint32_t *cap,
                      ts_error *err)
{
    const char *p = ts__plan_member(buf, key);
    if (!p) return ts__error(err, TS_EFORMAT, "%s: byte 0: no \"%s\" (not a trainscope plan?)", path, key);
    if (*p != '[') return ts__error(err, TS_EPARSE, "%s: byte %zu: \"%s\" is not an array", path, (size_t)(p - buf), key);
    *n = 0;
    for (p++;;) {
        p += strspn(p, " \t\r\n,");
        if (*p == ']') return TS_OK;
        char *e;
        errno = 0;
        unsigned long v = strtoul(p, &e, 10);
        if (e == p || !isdigit((unsigned char)*p) || errno || v == 0 || v > UINT32_MAX / 4 ||
            (*e && !strchr(" \t\r\n,]", *e)))
            return ts__error(err, TS_EPARSE, "%s: byte %zu: expected a positive count in \"%s\"", path, (size_t)(p - buf), key);
        if (ts__grow((void **)out, cap, sizeof **out, (size_t)*n + 1)) return ts__error(err, TS_ENOMEM, "%s: out of memory", path);
        (*out)[(*n)++] = (uint32_t)v;
        p = e;
    }
}

void ts_optimize_plan_free(ts_optimize_plan *plan)
{
    if (!plan) return;
    ts__free(plan->units, (size_t)plan->cap_units * sizeof *plan->units);
    ts__free(plan->pieces, (size_t)plan->cap_pieces * sizeof *plan->pieces);
    ts__free(plan, sizeof *plan);
}

static int check_fingerprint(const char *path, const char *buf, const ts_opt_grads *g, const char *gpath, ts_error *err)
{
    const char *p = ts__plan_member(buf, "gradients_fingerprint");
    if (!p) return ts__error(err, TS_EFORMAT, "%s: byte 0: no \"gradients_fingerprint\" (not a trainscope plan?)", path);
    char want[32];
    snprintf(want, sizeof want, "\"%016llx\"", (unsigned long long)g->fingerprint);
    if (strncmp(p, want, strlen(want)) != 0)
        return ts__error(err, TS_EFORMAT, "%s: byte %zu: the plan is for other gradients than %s's (%u gradients; "
                         "a plan for another model?)", path, (size_t)(p - buf), gpath, g->n);
    return TS_OK;
}

int ts_optimize_plan_load(const char *path, const ts_replay_options *base, ts_replay_options *out,
                          ts_optimize_plan **plan, ts_error *err)
{
    ts__error_clear(err);
    *plan = NULL;
    if (!base->gradients_json) return ts__error(err, TS_EINVAL, "%s: --plan needs --gradients gradients.json", path);
    ts_opt_grads g;
    int rc = ts__opt_grads_load(base->gradients_json, &g, err);
    if (rc) return rc;
    char *buf = NULL;
    size_t buf_n = 0;
    ts_optimize_plan *pl = ts__calloc(1, sizeof *pl);
    rc = pl ? ts__plan_slurp(path, &buf, &buf_n, err) : ts__error(err, TS_ENOMEM, "optimize: out of memory");
    const char *opf = rc == TS_OK ? ts__plan_member(buf, "op_fusion_pairs") : NULL;
    if (opf && *opf != '0')
        rc = ts__error(err, TS_EFORMAT, "%s: byte %zu: the plan fuses operators, which replay --plan cannot "
                       "re-predict yet (only its buckets)", path, (size_t)(opf - buf));
    if (rc == TS_OK) rc = check_fingerprint(path, buf, &g, base->gradients_json, err);
    if (rc == TS_OK) rc = read_uints(path, buf, "bucket_units", &pl->units, &pl->n_units, &pl->cap_units, err);
    if (rc == TS_OK) rc = read_uints(path, buf, "gradient_pieces", &pl->pieces, &pl->n_pieces, &pl->cap_pieces, err);
    if (rc == TS_OK && pl->n_pieces != g.n)
        rc = ts__error(err, TS_EFORMAT, "%s: \"gradient_pieces\" has %u entries for %u gradients", path, pl->n_pieces, g.n);
    if (rc == TS_OK && pl->n_units == 0) rc = ts__error(err, TS_EFORMAT, "%s: \"bucket_units\" is empty", path);
    ts__free(buf, buf_n);
    ts__opt_grads_free(&g);
    if (rc) { ts_optimize_plan_free(pl); return rc; }
    *out = *base;
    out->size = sizeof *out;
    out->bucket_mb = 0;
    out->bucket_group_units = pl->units;
    out->n_bucket_groups = pl->n_units;
    bool cut = false;
    for (uint32_t i = 0; i < pl->n_pieces; i++) cut = cut || pl->pieces[i] > 1;
    out->grad_pieces = cut ? pl->pieces : NULL;
    *plan = pl;
    return TS_OK;
}
