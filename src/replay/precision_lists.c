/* precision_lists.c - AMP-style op lists read as "what a precision plan may
 * change" (ts_prec_allow_list_load): a torch autocast op list, or dPRO's /
 * TensorFlow's TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_* settings.
 *
 * Not for: plans (precision_plan.c) or the search (ts_prec_greedy): the
 * result is a mask the caller turns into pinned units.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "replay/precision.h"

#define TF_PREFIX "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_"

typedef struct list_ctx {
    const ts_prec_model *m;
    const char *path;       /* the list file (messages, PRIORLIST_FILE's folder) */
    uint8_t    *allow, *deny;
    uint32_t    n_names, n_hits;
    int         depth;      /* PRIORLIST_FILE nesting */
} list_ctx;

/* Mark the units whose op is `name` (case-insensitive, "aten::" optional). */
static void mark(list_ctx *c, const char *name, uint8_t *set)
{
    if (!*name) return;
    c->n_names++;
    const char *bare = !strncasecmp(name, "aten::", 6) ? name + 6 : name;
    bool hit = false;
    for (uint32_t u = 0; u < c->m->n_units; u++) {
        const char *op = ts__str(&c->m->names, c->m->units[u].op);
        if (!strncmp(op, "aten::", 6)) op += 6;
        if (!strcasecmp(op, bare)) { set[u] = 1; hit = true; }
    }
    c->n_hits += hit;
}

/* Every name of text (blanks, commas, quotes and brackets separate them). */
static void mark_names(list_ctx *c, char *text, uint8_t *set)
{
    for (char *save = NULL, *t = strtok_r(text, " \t\r,;'\"[](){}", &save); t; t = strtok_r(NULL, " \t\r,;'\"[](){}", &save))
        mark(c, t, set);
}

static int list_line(void *ctx, unsigned ln, char *line, ts_error *err);

static int priorlist_file(list_ctx *c, unsigned ln, const char *val, ts_error *err)
{
    char full[4096];
    const char *slash = strrchr(c->path, '/');
    if (*val == '/' || !slash) snprintf(full, sizeof full, "%s", val);
    else snprintf(full, sizeof full, "%.*s/%s", (int)(slash - c->path), c->path, val);
    if (c->depth > 0) return ts__error(err, TS_EPARSE, "%s:%u: a PRIORLIST_FILE inside a PRIORLIST_FILE", c->path, ln);
    list_ctx sub = *c;
    sub.path = full;
    sub.depth++;
    int rc = ts__for_lines(full, "a PRIORLIST_FILE", true, list_line, &sub, err);
    c->n_names = sub.n_names;
    c->n_hits = sub.n_hits;
    if (rc == TS_EIO) return ts__error(err, TS_EIO, "%s:%u: cannot read %s: %s", c->path, ln, full, err->msg);
    return rc;
}

/* TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_<key>=<val>. */
static int tf_setting(list_ctx *c, unsigned ln, const char *key, char *val, ts_error *err)
{
    static const char *const ALLOW[] = {"ALLOWLIST_ADD", "WHITELIST_ADD", "PRIORLIST_ADD", "INFERLIST_ADD",
                                        "GRAYLIST_ADD", "CLEARLIST_ADD"};
    static const char *const DENY[] = {"DENYLIST_ADD", "BLACKLIST_ADD"};
    size_t kl = strlen(key);
    for (size_t i = 0; i < sizeof ALLOW / sizeof *ALLOW; i++)
        if (!strcmp(key, ALLOW[i])) { mark_names(c, val, c->allow); return TS_OK; }
    for (size_t i = 0; i < sizeof DENY / sizeof *DENY; i++)
        if (!strcmp(key, DENY[i])) { mark_names(c, val, c->deny); return TS_OK; }
    if (kl > 7 && !strcmp(key + kl - 7, "_REMOVE")) { mark_names(c, val, c->deny); return TS_OK; }
    if (!strcmp(key, "PRIORLIST_FILE")) return priorlist_file(c, ln, val, err);
    if (!strcmp(key, "FORCE") || !strcmp(key, "LEVEL") || !strcmp(key, "LOG_PATH")) return TS_OK;
    return ts__error(err, TS_EPARSE, "%s:%u: unknown setting " TF_PREFIX "%s (lists: ALLOWLIST_ADD, PRIORLIST_ADD, "
                     "DENYLIST_ADD, ..._REMOVE, PRIORLIST_FILE)", c->path, ln, key);
}

static int list_line(void *ctx, unsigned ln, char *line, ts_error *err)
{
    list_ctx *c = ctx;
    while (isspace((unsigned char)*line)) line++;
    if (!strncmp(line, "export ", 7)) line += 7;
    char *eq = strchr(line, '=');
    if (!eq) { mark_names(c, line, c->allow); return TS_OK; }
    *eq = 0;
    char *val = eq + 1, *end = eq;
    while (end > line && isspace((unsigned char)end[-1])) *--end = 0;
    size_t vl = strlen(val);
    while (vl && isspace((unsigned char)val[vl - 1])) val[--vl] = 0;
    if (vl >= 2 && (*val == '"' || *val == '\'') && val[vl - 1] == *val) { val[vl - 1] = 0; val++; }
    if (!strncmp(line, TF_PREFIX, strlen(TF_PREFIX))) return tf_setting(c, ln, line + strlen(TF_PREFIX), val, err);
    return ts__error(err, TS_EPARSE, "%s:%u: '%s=' is not an op list line (op names, or " TF_PREFIX
                     "<LIST>_ADD=Op1,Op2)", c->path, ln, line);
}

int ts_prec_allow_list_load(const ts_prec_model *m, const char *path, uint8_t *allowed, uint32_t *n_allowed,
                            ts_error *err)
{
    ts__error_clear(err);
    *n_allowed = 0;
    uint8_t *deny = ts__calloc(m->n_units + 1, 1);
    if (!deny) return ts__error(err, TS_ENOMEM, "%s: out of memory", path);
    memset(allowed, 0, m->n_units);
    list_ctx c = {.m = m, .path = path, .allow = allowed, .deny = deny};
    int rc = ts__for_lines(path, "an op list", true, list_line, &c, err);
    if (rc == TS_OK && c.n_names == 0) rc = ts__error(err, TS_EPARSE, "%s: names no op", path);
    else if (rc == TS_OK && c.n_hits == 0)
        rc = ts__error(err, TS_ENOENT, "%s: none of its %u op names is an op of the fp32 run (its ops are named "
                       "like %s)", path, c.n_names, m->n_units ? ts__str(&m->names, m->units[0].op) : "nothing");
    for (uint32_t u = 0; rc == TS_OK && u < m->n_units; u++) {
        if (deny[u]) allowed[u] = 0;
        *n_allowed += allowed[u];
    }
    ts__free(deny, m->n_units + 1);
    return rc;
}
