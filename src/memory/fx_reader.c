/* fx_reader.c - reads the Python subset that torch.fx / AOTAutograd writes as
 * fx_graph_transformed_{forward,backward}.py into the memgraph tables.
 *
 * Not a Python parser: it knows exactly these line shapes and rejects the rest
 * with "FILE:LINE: what" (exit 2 in the CLI):
 *   class GraphModule(torch.nn.Module):              ignored
 *   def forward(self, a: "f32[2, 3]", b: "i64[]"):   parameters, one line
 *   # ...                                            comment
 *   x: "f32[2, 3]" = torch.ops.aten.op.ovl(args)[;  a = b = None]
 *   t = torch.ops.aten.op.ovl(args)                  tuple result, followed by
 *   x: "f32[..]" = t[0]                              its extracted outputs
 *   return [x, y, None]                              graph outputs
 * Invariants: a parameter is defined once (an op result may reuse a name, as
 * Python reassignment does); an argument is an existing name or a literal;
 * getitem lines follow their tuple's op with no kernel in between.
 * Cost: one pass over the bytes, one hash lookup per identifier.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "memory/memgraph.h"

typedef struct rd {
    ts_memgraph *g;
    const char  *file;
    uint32_t     line;
    int          which;   /* 0 forward, 1 backward */
    ts_error    *err;
    uint32_t     def_line, return_line;   /* where the dump's def and return are; 0 = none yet */
} rd;

/* dtype name -> bytes per element, exact and as G10 counts it. G10's sizes
 * for f32, i64 and b8 are checked against its outputs; i32 is taken as 4 and
 * every other dtype as 4 bytes like f32 (inferred: no G10 output shows one). */
static const struct { const char *name; uint8_t bytes, g10_bytes; } DTYPES[] = {
    {"f64", 8, 4}, {"f32", 4, 4}, {"f16", 2, 4}, {"bf16", 2, 4},
    {"i64", 8, 8}, {"i32", 4, 4}, {"i16", 2, 4}, {"i8", 1, 4},
    {"u8", 1, 4},  {"b8", 1, 1},  {"c64", 8, 4}, {"c128", 16, 4},
};

/* Report "FILE:LINE: <fmt with up to two string arguments>". */
static int fail(rd *r, int status, const char *fmt, const char *a, const char *b)
{
    char what[512];
    snprintf(what, sizeof what, fmt, a ? a : "", b ? b : "");
    return ts__error(r->err, status, "%s:%u: %s", r->file, r->line, what);
}

/* Parse "f32[64, 3, 7, 7]" into elements and bytes per element. */
static int parse_type(rd *r, const char *s, size_t n, int64_t *elems, uint8_t *elem_bytes)
{
    const char *br = memchr(s, '[', n);
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%.*s", (int)(n < 150 ? n : 150), s);
    if (!br || s[n - 1] != ']')
        return fail(r, TS_EPARSE, "cannot read the tensor type \"%s\"", tmp, NULL);
    size_t dn = (size_t)(br - s);
    int d = -1;
    for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; i++)
        if (strlen(DTYPES[i].name) == dn && !memcmp(DTYPES[i].name, s, dn)) d = (int)i;
    if (d < 0) {
        char dt[32];
        snprintf(dt, sizeof dt, "%.*s", (int)(dn < 30 ? dn : 30), s);
        return fail(r, TS_EFORMAT, "unknown dtype '%s' in \"%s\"", dt, tmp);
    }
    *elem_bytes = r->g->opt.g10_compat ? DTYPES[d].g10_bytes : DTYPES[d].bytes;
    int64_t e = 1;
    for (const char *p = br + 1; p < s + n - 1;) {
        while (p < s + n - 1 && (*p == ' ' || *p == ',')) p++;
        if (p >= s + n - 1) break;
        if (!isdigit((unsigned char)*p))
            return fail(r, TS_EFORMAT, "symbolic or bad dimension in \"%s\"", tmp, NULL);
        int64_t v = 0;
        while (isdigit((unsigned char)*p) && v < ((int64_t)1 << 40)) v = v * 10 + (*p++ - '0');
        if (isdigit((unsigned char)*p) || e > ((int64_t)1 << 50) / (v ? v : 1))
            return fail(r, TS_ERANGE, "tensor too large: \"%s\"", tmp, NULL);
        e *= v;
    }
    *elems = e;
    return TS_OK;
}

static uint32_t intern(rd *r, const char *s, size_t n) { return ts__str_intern(&r->g->names, s, n); }

/* Name lookup: row and the annotation the name was defined with. */
static bool lookup(const ts_memgraph *g, uint32_t name_id, uint32_t *row, uint32_t *ann_id)
{
    uint64_t v;
    if (!name_id || !ts__map64_get(&g->byname, name_id, &v)) return false;
    *row = (uint32_t)v;
    *ann_id = (uint32_t)(v >> 32);
    return true;
}

/* Bind a name. A parameter may not repeat; an op result may reuse a name,
 * as Python reassignment does (the backward recomputes forward values such
 * as ViT's view_13 under the same name: that is a new tensor, as in G10). */
static int bind(rd *r, uint32_t name_id, uint32_t row, uint32_t ann_id, bool is_param)
{
    uint32_t old_row, old_ann;
    if (is_param && lookup(r->g, name_id, &old_row, &old_ann))
        return fail(r, TS_EFORMAT, "parameter '%s' is defined twice", ts__mem_name(r->g, name_id), NULL);
    if (ts__map64_put(&r->g->byname, name_id, row | ((uint64_t)ann_id << 32)))
        return ts__error(r->err, TS_ENOMEM, "out of memory");
    return TS_OK;
}

/* Add a tensor named name_id of type "ann" (s, n); *row_out = its row. */
static int new_tensor(rd *r, uint32_t name_id, const char *ann, size_t ann_n, bool global,
                      bool is_param, uint32_t *row_out)
{
    ts_memgraph *g = r->g;
    int64_t elems;
    uint8_t eb;
    int rc = parse_type(r, ann, ann_n, &elems, &eb);
    if (rc) return rc;
    if (ts__grow((void **)&g->tensors, &g->cap_tensors, sizeof *g->tensors, g->n_tensors + 1))
        return ts__error(r->err, TS_ENOMEM, "out of memory");
    uint32_t row = g->n_tensors;
    uint32_t ann_id = intern(r, ann, ann_n);
    g->tensors[row] = (ts__mem_tensor){
        .name_id = name_id, .ann_id = ann_id, .elems = elems, .bytes = elems * eb,
        .base = row, .elem_bytes = eb, .is_global = global, .birth = -1, .death = -1};
    if ((rc = bind(r, name_id, row, ann_id, is_param))) return rc;
    g->n_tensors++;
    *row_out = row;
    return TS_OK;
}

static int add_ref(rd *r, uint32_t row, uint32_t name_id, uint32_t ann_id)
{
    ts_memgraph *g = r->g;
    if (ts__grow((void **)&g->refs, &g->cap_refs, sizeof *g->refs, g->n_refs + 1))
        return ts__error(r->err, TS_ENOMEM, "out of memory");
    g->refs[g->n_refs++] = (ts__mem_ref){row, name_id, ann_id};
    return TS_OK;
}

static bool is_ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    return p;
}

/* Python literals and names that may appear as arguments without being
 * tensors. Anything else unknown is a use before definition. */
static bool is_literal_name(const char *s, size_t n)
{
    static const char *const OK[] = {"None", "True", "False", "inf", "nan", "self"};
    for (size_t i = 0; i < sizeof OK / sizeof OK[0]; i++)
        if (strlen(OK[i]) == n && !memcmp(OK[i], s, n)) return true;
    return false;
}

enum { SCAN_INPUTS, SCAN_RETURN };
/* g->pending while the getitem lines of a producer-less tuple (G10 mode) follow */
enum { PENDING_NO_KERNEL = -2 };

/* Walk the identifiers of an argument list. SCAN_INPUTS appends each tensor
 * name as an input ref (in order, repeats kept: G10 lists mul(x, x) twice);
 * SCAN_RETURN marks backward outputs. Literals, keyword names, attribute
 * chains (torch.float32) and callee names (device(...)) are skipped. */
static int scan_args(rd *r, const char *p, const char *end, int mode, uint32_t *n_found)
{
    char prev = 0;
    *n_found = 0;
    while (p < end) {
        char c = *p;
        if (c == '\'' || c == '"') {
            const char *q = memchr(p + 1, c, (size_t)(end - p - 1));
            if (!q) return fail(r, TS_EPARSE, "unterminated string", NULL, NULL);
            p = q + 1;
            prev = c;
            continue;
        }
        if (isdigit((unsigned char)c)) {
            while (p < end && (is_ident(*p) || *p == '.' ||
                               ((*p == '-' || *p == '+') && (p[-1] == 'e' || p[-1] == 'E'))))
                p++;
            prev = '0';
            continue;
        }
        if (!is_ident_start(c)) {
            if (c != ' ') prev = c;
            p++;
            continue;
        }
        const char *s = p;
        while (p < end && is_ident(*p)) p++;
        const char *q = skip_ws(p, end);
        bool keyword = q < end && *q == '=' && !(q + 1 < end && q[1] == '=');
        bool callee = q < end && (*q == '(' || *q == '.');
        bool attribute = prev == '.';
        prev = 'a';
        if (keyword || callee || attribute) continue;
        uint32_t name_id = ts__str_find(&r->g->names, s, (size_t)(p - s)), row, ann;
        if (!lookup(r->g, name_id, &row, &ann)) {
            if (is_literal_name(s, (size_t)(p - s))) continue;
            char nm[128];
            snprintf(nm, sizeof nm, "%.*s", (int)((p - s) < 120 ? (p - s) : 120), s);
            return fail(r, TS_EFORMAT, "'%s' is used before it is defined", nm, NULL);
        }
        int rc = TS_OK;
        if (mode == SCAN_INPUTS) rc = add_ref(r, row, name_id, ann);
        else if (r->which == 1) /* a returned view keeps its base alive */
            r->g->tensors[row].is_returned = r->g->tensors[r->g->tensors[row].base].is_returned = true;
        else {
            r->g->tensors[row].is_fwd_output = r->g->tensors[r->g->tensors[row].base].is_fwd_output = true;
            ts_memgraph *g = r->g;
            if (ts__grow((void **)&g->fwd_ret, &g->cap_fwd_ret, sizeof *g->fwd_ret, (size_t)g->n_fwd_ret + 1))
                return ts__error(r->err, TS_ENOMEM, "out of memory");
            g->fwd_ret[g->n_fwd_ret++] = row;
        }
        if (rc) return rc;
        (*n_found)++;
    }
    return TS_OK;
}

/* One parameter of a def line (see read_params). */
static int param(rd *r, const char *s, size_t n, const char *ann, size_t ann_n, const char *nm)
{
    uint32_t name_id = intern(r, s, n), row, old_ann;
    bool tangent = n > 9 && !memcmp(s, "tangents_", 9);
    if (r->which == 0 && tangent)
        return fail(r, TS_EFORMAT, "the forward takes '%s': this is a backward dump (give FORWARD.py BACKWARD.py)", nm, NULL);
    if (r->which == 0) return new_tensor(r, name_id, ann, ann_n, true, true, &row);
    if (lookup(r->g, name_id, &row, &old_ann)) {
        const char *fa = ts__mem_name(r->g, old_ann);
        if (!r->g->tensors[row].is_fwd_output)
            return fail(r, TS_EFORMAT, "backward input '%s' is a forward tensor that the forward does not return "
                        "(save): the two dumps do not belong together", nm, NULL);
        if (strlen(fa) == ann_n && !memcmp(fa, ann, ann_n)) {
            ts__mem_tensor *t = &r->g->tensors[row];
            t->is_bwd_input = r->g->tensors[t->base].is_bwd_input = true;
            return TS_OK;
        }
        char types[300];
        snprintf(types, sizeof types, "%.*s, but the forward graph made it %.140s",
                 (int)(ann_n < 140 ? ann_n : 140), ann, fa);
        return fail(r, TS_EFORMAT, "backward input '%s' has type %s: the two dumps do not "
                    "belong together", nm, types);
    }
    if (tangent) {
        int rc = new_tensor(r, name_id, ann, ann_n, false, true, &row);
        if (!rc) r->g->tensors[row].is_bwd_input = true;
        r->g->n_tangents++;
        return rc;
    }
    return fail(r, TS_EFORMAT, "backward input '%s' is not defined by the forward graph: "
                "the two dumps do not belong together", nm, NULL);
}

/* "def forward(self, a: "f32[2]", b: "i64[]"):" - forward parameters are
 * G10's globals; a backward parameter must be a forward name (with the same
 * type) or a new tangents_N. */
static int read_params(rd *r, const char *p, const char *end)
{
    const char *open = memchr(p, '(', (size_t)(end - p));
    if (!open) return fail(r, TS_EPARSE, "cannot read the def line", NULL, NULL);
    if (r->which == 1 && !memmem(open, (size_t)(end - open), "tangents_", 9))
        return fail(r, TS_EFORMAT, "the backward takes no tangents_N: it is a forward dump (FORWARD.py given twice?)",
                    NULL, NULL);
    for (p = open + 1; p < end;) {
        p = skip_ws(p, end);
        if (p < end && (*p == ',' || *p == ')' || *p == ':')) { p++; continue; }
        if (p >= end) break;
        const char *s = p;
        while (p < end && is_ident(*p)) p++;
        if (p == s) return fail(r, TS_EPARSE, "cannot read the parameter list", NULL, NULL);
        size_t n = (size_t)(p - s);
        if (n == 4 && !memcmp(s, "self", 4)) continue;
        const char *q = skip_ws(p, end);
        char nm[128];
        snprintf(nm, sizeof nm, "%.*s", (int)(n < 120 ? n : 120), s);
        if (q + 1 >= end || *q != ':' || (q = skip_ws(q + 1, end))[0] != '"')
            return fail(r, TS_EPARSE, "parameter '%s' has no tensor type", nm, NULL);
        const char *ae = memchr(q + 1, '"', (size_t)(end - q - 1));
        if (!ae) return fail(r, TS_EPARSE, "unterminated type of '%s'", nm, NULL);
        int rc = param(r, s, n, q + 1, (size_t)(ae - q - 1), nm);
        if (rc) return rc;
        p = ae + 1;
    }
    return TS_OK;
}

/* Ops that only re-describe their input's storage (exact mode aliases them).
 * reshape/flatten copy only non-contiguous inputs; AOTAutograd puts a clone
 * before those, as the dumps show, so they are counted as views. */
static bool is_view_op(const char *op)
{
    static const char *const VIEWS[] = {
        "view", "_unsafe_view", "reshape", "_reshape_alias", "permute", "expand", "expand_as",
        "squeeze", "unsqueeze", "select", "slice", "alias", "t", "transpose", "as_strided",
        "detach", "diagonal", "unfold", "split", "split_with_sizes", "unbind", "view_as",
        "chunk", "narrow", "movedim", "unflatten", "flatten", "view_as_real", "view_as_complex"};
    for (size_t i = 0; i < sizeof VIEWS / sizeof VIEWS[0]; i++)
        if (!strcmp(VIEWS[i], op)) return true;
    return false;
}

/* G10 gives no kernel to squeeze_N / unsqueeze_N (N >= 1): the name becomes
 * an alias of the input tensor. The first squeeze/unsqueeze (no suffix) is a
 * kernel. Checked against both published G10 outputs. */
static bool g10_squeeze_alias(const char *s, size_t n)
{
    size_t k = n >= 10 && !memcmp(s, "unsqueeze_", 10) ? 10 : n >= 8 && !memcmp(s, "squeeze_", 8) ? 8 : 0;
    if (!k || k == n) return false;
    for (size_t i = k; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return false;
    return true;
}

/* Closing parenthesis matching p[0] == '(' (quotes respected); NULL if none. */
static const char *match_paren(const char *p, const char *end)
{
    int depth = 0;
    for (; p < end; p++) {
        if (*p == '\'' || *p == '"') {
            const char *q = memchr(p + 1, *p, (size_t)(end - p - 1));
            if (!q) return NULL;
            p = q;
        } else if (*p == '(') depth++;
        else if (*p == ')' && --depth == 0) return p;
    }
    return NULL;
}

static int add_kernel(rd *r, const char *call, size_t call_n, const char *op, size_t op_n,
                      uint32_t first_ref, uint32_t n_in, bool is_view)
{
    ts_memgraph *g = r->g;
    if (n_in > 65535) return fail(r, TS_ERANGE, "too many arguments", NULL, NULL);
    if (ts__grow((void **)&g->kernels, &g->cap_kernels, sizeof *g->kernels, g->n_kernels + 1))
        return ts__error(r->err, TS_ENOMEM, "out of memory");
    g->kernels[g->n_kernels++] = (ts__mem_kernel){
        .call_id = intern(r, call, call_n), .op_id = intern(r, op, op_n), .first_ref = first_ref,
        .n_in = (uint16_t)n_in, .line = r->line, .in_backward = (uint8_t)r->which,
        .is_view = is_view, .time_ns = -1, .ms = -1};
    return TS_OK;
}

/* The output of kernel k named name_id: a new tensor (a view shares the
 * storage of the kernel's first input in exact mode). */
static int add_output(rd *r, uint32_t k, uint32_t name_id, const char *ann, size_t ann_n)
{
    ts_memgraph *g = r->g;
    ts__mem_kernel *kn = &g->kernels[k];
    if (kn->first_ref + kn->n_in + kn->n_out != g->n_refs)
        return fail(r, TS_EPARSE, "output of an op that is not the latest one", NULL, NULL);
    uint32_t row;
    int rc = new_tensor(r, name_id, ann, ann_n, false, false, &row);
    if (rc) return rc;
    if (kn->is_view && kn->n_in > 0) {
        g->tensors[row].base = g->tensors[g->refs[kn->first_ref].tensor].base;
        g->tensors[row].bytes = 0;
    }
    if ((rc = add_ref(r, row, name_id, g->tensors[row].ann_id))) return rc;
    g->kernels[k].n_out++;
    return TS_OK;
}

/* "x = t[0]": one extracted output of the pending tuple-valued op. */
static int read_getitem(rd *r, uint32_t lhs_id, const char *ann, size_t ann_n,
                        const char *q, const char *end)
{
    const char *s = q;
    while (q < end && is_ident(*q)) q++;
    uint32_t tuple_id = ts__str_find(&r->g->names, s, (size_t)(q - s));
    if (r->g->pending == PENDING_NO_KERNEL && tuple_id == r->g->pending_name && ann) {
        uint32_t row;
        return new_tensor(r, lhs_id, ann, ann_n, false, false, &row);
    }
    if (r->g->pending < 0 || tuple_id != r->g->pending_name) {
        char nm[128];
        snprintf(nm, sizeof nm, "%.*s", (int)((q - s) < 120 ? (q - s) : 120), s);
        return fail(r, TS_EFORMAT, "'%s' is used before it is defined (or not right after its op)", nm, NULL);
    }
    if (!ann) return fail(r, TS_EPARSE, "extracted output has no tensor type", NULL, NULL);
    return add_output(r, (uint32_t)r->g->pending, lhs_id, ann, ann_n);
}

/* G10 mode, a call outside torch.ops.aten (prims such as inductor_random,
 * convert_element_type): no kernel; its result is a tensor with no producer,
 * created here (tensor ids follow program order) and first used by whatever
 * kernel reads it. A tuple result's getitem lines make such tensors too. */
static int producerless(rd *r, uint32_t lhs_id, const char *ann, size_t ann_n)
{
    uint32_t row;
    if (ann) return new_tensor(r, lhs_id, ann, ann_n, false, false, &row);
    r->g->pending = PENDING_NO_KERNEL;
    r->g->pending_name = lhs_id;
    return TS_OK;
}

/* "x: "T" = torch.ops.NS.OP.OVERLOAD(args)[;  a = None]". */
static int read_call(rd *r, uint32_t lhs_id, const char *lhs, size_t lhs_n, const char *ann,
                     size_t ann_n, const char *q, const char *end)
{
    ts_memgraph *g = r->g;
    const char *open = memchr(q, '(', (size_t)(end - q)), *close = open ? match_paren(open, end) : NULL;
    if (!close) return fail(r, TS_EPARSE, "unbalanced parentheses", NULL, NULL);
    const char *rest = skip_ws(close + 1, end);
    if (rest < end && *rest != ';') return fail(r, TS_EPARSE, "unexpected text after the call", NULL, NULL);
    /* op name: the segment after "torch.ops.<ns>." up to the next '.' */
    const char *op = q + 10;
    while (op < open && *op != '.') op++;
    bool aten = op - (q + 10) == 4 && !memcmp(q + 10, "aten", 4);
    const char *op_end = ++op;
    while (op_end < open && *op_end != '.') op_end++;
    char opname[96];
    snprintf(opname, sizeof opname, "%.*s", (int)((op_end - op) < 90 ? (op_end - op) : 90), op);
    uint32_t first = g->n_refs, n_in;
    int rc = scan_args(r, open + 1, close, SCAN_INPUTS, &n_in);
    if (rc) return rc;
    bool is_copy = !strcmp(opname, "copy_");
    g->pending = -1;
    if (g->opt.g10_compat && !aten) { /* G10: only torch.ops.aten.* calls are kernels */
        g->n_refs = first;
        return producerless(r, lhs_id, ann, ann_n);
    }
    if (g->opt.g10_compat && (is_copy || g10_squeeze_alias(lhs, lhs_n))) {
        /* no kernel: the name aliases the first input (copy_'s destination) */
        if (n_in == 0) return fail(r, TS_EFORMAT, "'%s' has no tensor input", opname, NULL);
        uint32_t row = g->refs[first].tensor;
        g->n_refs = first;
        return bind(r, lhs_id, row, ann ? intern(r, ann, ann_n) : g->tensors[row].ann_id, false);
    }
    bool view = !g->opt.g10_compat && n_in > 0 && is_view_op(opname);
    if ((rc = add_kernel(r, q, (size_t)(close + 1 - q), op, (size_t)(op_end - op), first, n_in, view)))
        return rc;
    if (is_copy && !g->opt.g10_compat) /* in-place: the result is the destination */
        return n_in ? bind(r, lhs_id, g->refs[first].tensor, g->tensors[g->refs[first].tensor].ann_id, false)
                    : fail(r, TS_EFORMAT, "copy_ without a destination", NULL, NULL);
    if (!ann) { /* tuple result: outputs come from the getitem lines that follow */
        g->pending = (int32_t)(g->n_kernels - 1);
        g->pending_name = lhs_id;
        return TS_OK;
    }
    return add_output(r, g->n_kernels - 1, lhs_id, ann, ann_n);
}

static int read_stmt(rd *r, const char *p, const char *end)
{
    const char *s = p;
    while (p < end && is_ident(*p)) p++;
    size_t lhs_n = (size_t)(p - s);
    const char *q = skip_ws(p, end), *ann = NULL;
    size_t ann_n = 0;
    if (lhs_n && q < end && *q == ':') {
        q = skip_ws(q + 1, end);
        const char *ae = q < end && *q == '"' ? memchr(q + 1, '"', (size_t)(end - q - 1)) : NULL;
        if (!ae) return fail(r, TS_EPARSE, "cannot read the type annotation", NULL, NULL);
        ann = q + 1;
        ann_n = (size_t)(ae - ann);
        q = skip_ws(ae + 1, end);
    }
    if (!lhs_n || q >= end || *q != '=' || (q + 1 < end && q[1] == '=')) {
        char line[100];
        snprintf(line, sizeof line, "%.*s", (int)((end - s) < 80 ? (end - s) : 80), s);
        return fail(r, TS_EPARSE, "unknown syntax: %s", line, NULL);
    }
    q = skip_ws(q + 1, end);
    uint32_t lhs_id = intern(r, s, lhs_n);
    const char *t = q;
    while (t < end && is_ident(*t)) t++;
    if (t > q && t < end && *t == '[' && t + 1 < end && isdigit((unsigned char)t[1]))
        return read_getitem(r, lhs_id, ann, ann_n, q, end);
    if ((size_t)(end - q) > 10 && !memcmp(q, "torch.ops.", 10))
        return read_call(r, lhs_id, s, lhs_n, ann, ann_n, q, end);
    char line[100];
    snprintf(line, sizeof line, "%.*s", (int)((end - q) < 80 ? (end - q) : 80), q);
    return fail(r, TS_EPARSE, "unknown syntax (not a torch.ops call): %s", line, NULL);
}

static int read_line(rd *r, const char *p, const char *end)
{
    p = skip_ws(p, end);
    while (end > p && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t')) end--;
    size_t n = (size_t)(end - p);
    if (!n || *p == '#') return TS_OK;
    if (n >= 6 && !memcmp(p, "class ", 6)) return TS_OK;
    if (r->return_line)   /* a dump holds one graph, and its return ends it */
        return fail(r, TS_EFORMAT, "more after the graph's return (two dumps in one file?)", NULL, NULL);
    if (n >= 12 && !memcmp(p, "def forward(", 12)) {
        if (r->def_line) return fail(r, TS_EFORMAT, "a second 'def forward(' (two dumps in one file?)", NULL, NULL);
        r->def_line = r->line;
        return read_params(r, p, end);
    }
    if (!r->def_line) return fail(r, TS_EFORMAT, "a statement before 'def forward(': not an fx dump", NULL, NULL);
    if (n >= 6 && !memcmp(p, "return", 6) && (n == 6 || !is_ident(p[6]))) {
        uint32_t found;
        r->return_line = r->line;
        return scan_args(r, p + 6, end, SCAN_RETURN, &found);
    }
    return read_stmt(r, p, end);
}

/* The backward of this forward takes a tangent per differentiable output
 * and every tensor the forward saves: what the forward returns beyond its
 * outputs. A backward without tangents is a forward (FORWARD.py given
 * twice: the peak came out twice as high); a forward that returns more
 * tensors the backward does not take than the backward has tangents saved
 * them for another backward. Checked on the real pairs: the returned but
 * untaken tensors are exactly the outputs (bert 1 of 2 tangents, resnet50
 * and vit 1 of 1, mobilenetv3small 103 of 103). */
static int check_pair(rd *r)
{
    const ts_memgraph *g = r->g;
    r->line = r->def_line;
    uint32_t untaken = 0, first = TS_NONE32;
    for (uint32_t i = 0; i < g->n_fwd_ret; i++)
        if (!g->tensors[g->fwd_ret[i]].is_bwd_input && untaken++ == 0) first = g->fwd_ret[i];
    if (untaken <= g->n_tangents) return TS_OK;
    char counts[160];
    snprintf(counts, sizeof counts, "%u tensors, more than its %u outputs (first: '%s')", untaken, g->n_tangents,
             ts__mem_name(g, g->tensors[first].name_id));
    return fail(r, TS_EFORMAT, "the forward returns %s that this backward does not take: the two dumps do not "
                "belong together", counts, NULL);
}

int ts__mem_read_fx(ts_memgraph *g, int which, const char *text, size_t len, ts_error *err)
{
    rd r = {.g = g, .file = g->files[which], .which = which, .err = err};
    const char *p = text, *end = text + len;
    g->pending = -1;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        r.line++;
        if (memchr(p, '\0', (size_t)(le - p)))
            return fail(&r, TS_EPARSE, "NUL byte in a text dump", NULL, NULL);
        int rc = read_line(&r, p, le);
        if (rc) return rc;
        if (ts__strpool_oom(&g->names)) return ts__error(err, TS_ENOMEM, "out of memory");
        p = nl ? nl + 1 : end;
    }
    if (!r.def_line) return ts__error(err, TS_EFORMAT, "%s: no 'def forward(' line: not an fx dump", r.file);
    if (!r.return_line)
        return ts__error(err, TS_EFORMAT, "%s:%u: the graph has no 'return': the dump is incomplete (cut short?)",
                         r.file, r.line);
    if (which == 1) {
        int rc = check_pair(&r);
        if (rc) return rc;
    }
    if (g->n_kernels == 0 && which == 1)
        return ts__error(err, TS_ENODATA, "%s: no kernels in either dump", r.file);
    return TS_OK;
}
