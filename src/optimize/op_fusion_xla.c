/* op_fusion_xla.c - TensorFlow XLA fusion candidate lists, dPRO's
 * --xla_candidate_path input (../shared/data/dpro/TF*): one op name a line,
 * optionally followed by its graph node id; a line `unsafe_resource_deps_`
 * ends the names (the pairs after it are not read). As dPRO does, ops whose
 * name holds one of its IGNORE_OP_TYPES (ShapeN, _Arg, _Send, _Recv,
 * ReadVariableOp, Iterator*, NoOp, Placeholder, ...) or "Assign" are
 * dropped: dPRO never fuses them. Every other listed op must be in the
 * trace (a list for another graph is an error naming the op). Not for:
 * finding fusion pairs (op_fusion.c).
 */
#include <stdio.h>

#include "graph/graph.h"
#include "ingest/ingest.h"
#include "optimize/op_fusion.h"

static const char *const IGNORE[] = {
    "ShapeN", "_Arg", "_Send", "_Recv", "VarIsInitializedOp", "ReadVariableOp", "VarHandleOp",
    "IsVariableInitialized", "ResourceApplyGradientDescent", "IteratorToStringHandle", "IteratorGetNext",
    "MakeIterator", "IteratorV2", "NoOp", "Placeholder", "Assign",
};

uint64_t ts__opf_name_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull;
}

static bool ignored(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof IGNORE / sizeof *IGNORE; i++) {
        size_t k = strlen(IGNORE[i]);
        for (size_t j = 0; j + k <= n; j++)
            if (!memcmp(s + j, IGNORE[i], k)) return true;
    }
    return false;
}

static int add(ts_xla *x, const char *s, size_t n, uint32_t line)
{
    uint64_t h = ts__opf_name_hash(s, n), v;
    if (ts__map64_get(&x->set, h, &v)) return TS_OK;   /* listed twice */
    const ts_col_ref cols[] = {{(void **)&x->name, sizeof *x->name}, {(void **)&x->line, sizeof *x->line}};
    if (ts__grow_cols(cols, 2, &x->cap, (size_t)x->n + 1, 64)) return TS_ENOMEM;
    char *copy = ts__malloc(n + 1);
    if (!copy) return TS_ENOMEM;
    memcpy(copy, s, n);
    copy[n] = 0;
    x->name[x->n] = copy;
    x->line[x->n] = line;
    return ts__map64_put(&x->set, h, x->n++);
}

int ts__xla_parse(ts_xla *x, const char *file, const char *data, size_t n, ts_error *err)
{
    memset(x, 0, sizeof *x);
    ts__map64_init(&x->set);
    if (!(x->file = ts__strdup(file))) return ts__error(err, TS_ENOMEM, "%s: out of memory", file);
    const char *p = data, *end = data + n;
    int rc = TS_OK;
    for (uint32_t line = 1; p < end && rc == TS_OK; line++) {
        const char *e = memchr(p, '\n', (size_t)(end - p)), *s = p;
        if (!e) e = end;
        p = e + 1;
        while (s < e && (*s == ' ' || *s == '\t')) s++;
        const char *w = s;
        while (w < e && *w != ' ' && *w != '\t' && *w != '\r') w++;
        if (w == s) continue;
        if ((size_t)(w - s) >= 21 && !memcmp(s, "unsafe_resource_deps_", 21)) break;
        if (memchr(s, 0, (size_t)(w - s))) { rc = ts__error(err, TS_EPARSE, "%s: line %u: a NUL byte in an op name", file, line); break; }
        if (!ignored(s, (size_t)(w - s)) && add(x, s, (size_t)(w - s), line)) rc = ts__error(err, TS_ENOMEM, "%s: out of memory", file);
    }
    if (rc == TS_OK && !x->n) rc = ts__error(err, TS_EPARSE, "%s: no op name dPRO would fuse", file);
    if (rc) ts__xla_free(x);
    return rc;
}

typedef struct parse_ud { ts_xla *x; const char *path; ts_error *err; } parse_ud;

static int parse_cb(void *ud, const char *data, size_t n)
{
    parse_ud *u = ud;
    return ts__xla_parse(u->x, u->path, data, n, u->err);
}

int ts__xla_load(ts_xla *x, const char *path, ts_error *err)
{
    memset(x, 0, sizeof *x);
    parse_ud u = {x, path, err};
    return ts__with_file_bytes(path, TS__SIDE_FILE_MAX_BYTES, parse_cb, &u, err);
}

void ts__xla_free(ts_xla *x)
{
    for (uint32_t i = 0; i < x->n; i++) ts__free(x->name[i], strlen(x->name[i]) + 1);
    ts__free(x->name, (size_t)x->cap * sizeof *x->name);
    ts__free(x->line, (size_t)x->cap * sizeof *x->line);
    if (x->file) ts__free(x->file, strlen(x->file) + 1);
    ts__map64_free(&x->set);
    memset(x, 0, sizeof *x);
}

bool ts__xla_has(const ts_xla *x, const char *name)
{
    uint64_t v;
    return ts__map64_get(&x->set, ts__opf_name_hash(name, strlen(name)), &v) && !strcmp(x->name[v], name);
}

int ts__xla_check(const ts_xla *x, const ts_graph *g, ts_error *err)
{
    ts_map64 seen;
    ts__map64_init(&seen);
    int rc = TS_OK;
    for (uint32_t n = 0; n < g->nodes.n && rc == TS_OK; n++) {
        if (g->nodes.rank[n] == TS_GRAPH_NO_RANK) continue;
        const char *s = ts__graph_node_name(g, n);
        uint64_t h = ts__opf_name_hash(s, strlen(s)), v;
        if (ts__map64_get(&x->set, h, &v) && !strcmp(x->name[v], s) && ts__map64_put(&seen, v + 1, 1)) rc = TS_ENOMEM;
    }
    for (uint32_t i = 0; i < x->n && rc == TS_OK; i++) {
        uint64_t v;
        if (!ts__map64_get(&seen, (uint64_t)i + 1, &v))
            rc = ts__error(err, TS_EFORMAT, "%s: line %u: op '%s' is not in the trace (a candidate list for another graph?)",
                           x->file, x->line[i], x->name[i]);
    }
    if (rc == TS_ENOMEM) ts__error(err, rc, "optimize: out of memory");
    ts__map64_free(&seen);
    return rc;
}
