/* precision.c - mixed bit-width prediction: a precision plan changes the
 * element size of the tensors that chosen ops produce.
 *
 * Plan file, one rule per line, '#' starts a comment:
 *     <op or name-prefix>  <fp32|fp16|bf16|int8>
 *   "convolution fp16"   every tensor a convolution kernel outputs is FP16;
 *   "name:relu bf16"     every tensor whose name starts with "relu";
 *   "* fp16"             everything the graph computes.
 * Later rules win. Only computed tensors (activations, gradients) change:
 * weights and the input batch (globals) keep their type, as FP32 master
 * weights do under AMP. Views keep sharing their base (0 bytes of their own).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "memory/memgraph.h"

static int elem_bytes_of(const char *dt)
{
    static const struct { const char *name; int bytes; } T[] = {
        {"fp32", 4}, {"f32", 4}, {"float32", 4}, {"fp16", 2}, {"f16", 2}, {"half", 2},
        {"bf16", 2}, {"bfloat16", 2}, {"int8", 1}, {"i8", 1}, {"fp8", 1}};
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
        if (!strcmp(T[i].name, dt)) return T[i].bytes;
    return 0;
}

static bool rule_matches(const ts_memgraph *g, const char *pat, uint32_t k, uint32_t row)
{
    if (!strcmp(pat, "*")) return true;
    if (!strncmp(pat, "name:", 5)) {
        const char *nm = ts__mem_name(g, g->tensors[row].name_id);
        return !strncmp(nm, pat + 5, strlen(pat + 5));
    }
    return !strcmp(ts__mem_name(g, g->kernels[k].op_id), pat);
}

static void apply_rule(ts_memgraph *g, const char *pat, int eb)
{
    for (uint32_t k = 0; k < g->n_kernels; k++) {
        const ts__mem_kernel *kn = &g->kernels[k];
        for (uint32_t i = kn->n_in; i < (uint32_t)kn->n_in + kn->n_out; i++) {
            ts__mem_tensor *t = &g->tensors[g->refs[kn->first_ref + i].tensor];
            if (t->is_global || t->bytes == 0 || !rule_matches(g, pat, k, g->refs[kn->first_ref + i].tensor))
                continue;
            t->elem_bytes = (uint8_t)eb;
            t->bytes = t->elems * eb;
        }
    }
}

typedef struct plan_ctx { ts_memgraph *g; const char *path; } plan_ctx;

static int plan_line(void *ctx, unsigned line, char *p, ts_error *err)
{
    plan_ctx *c = ctx;
    char pat[256], dt[32], extra[8];
    int n = sscanf(p, "%255s %31s %7s", pat, dt, extra);
    if (n == 2 && elem_bytes_of(dt)) apply_rule(c->g, pat, elem_bytes_of(dt));
    else if (n > 0)
        return ts__error(err, TS_EPARSE, "%s:%u: expected \"<op or name:prefix> <fp32|fp16|bf16|int8>\"",
                         c->path, line);
    return TS_OK;
}

int ts__mem_precision_plan(ts_memgraph *g, const char *path, ts_error *err)
{
    plan_ctx c = {g, path};
    return ts__for_lines(path, "a precision plan", true, plan_line, &c, err);
}
