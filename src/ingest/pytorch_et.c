/* pytorch_et.c - PyTorch host execution traces (ExecutionTraceObserver's
 * JSON, schemas 1.0.1 and 1.0.2-chakra.*) joined onto the Kineto trace of
 * the same run.
 *
 * Not for: traces on their own. A host ET has no times, so it is never a
 * rank: load.c hands each one, with the ranks already read, to ts__et_join,
 * which finds the Kineto rank of the ET's process ("pid" equal to a CPU
 * thread track's pid) and adds what Kineto lacks: the ET's data dependencies.
 *
 * The join is Chakra trace_link's: an ET node's rf_id equals the Kineto
 * cpu_op's "Record function id" (Kineto without that arg, as the HTA test
 * pair: its "External id", which then numbers the same record functions).
 * A node joins only when the names agree too. Nodes per schema:
 *   1.0.1        {"id", "name", "rf_id", "parent", "tid", "inputs": [values], "outputs": [values], ...}
 *   1.0.2-chakra {"id", "name", "ctrl_deps" (the parent), "inputs": {"values": [...]}, "outputs": {...},
 *                 "attrs": [{"name": "rf_id", "value": N}, ...]}
 * A tensor value is [tensor id, storage id, offset, numel, itemsize, device].
 * Dependencies: nodes are in the order they ended (children before their
 * parent), so the last node listing tensor T among its outputs is T's
 * producer when a later node reads T; the edge producer -> reader is kept
 * when neither encloses the other and both joined a Kineto op, as a
 * "chakra_dep" flow (the graph's "dep" edge). An edge the Kineto times
 * contradict (the producer ends after the reader starts) is counted, not
 * added. The rank's metadata says what was joined ("execution_trace").
 */
#include "ingest/ingest.h"
#include "ingest/json_scan.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct et_node {
    uint64_t id, parent, rf_id;
    uint32_t name;          /* interned in the target rank's pool */
    uint32_t in0, n_in;     /* tensor keys in et.tensors */
    uint32_t out0, n_out;
    uint32_t row;           /* Kineto slice row joined, TS_NONE32 = none */
} et_node;

typedef struct et {
    js        j;
    ts_rank  *r;            /* the Kineto rank whose pool names are interned in (NULL while reading the head) */
    et_node  *nodes;
    uint32_t  n, cap;
    uint64_t *tensors;      /* tensor keys of every node's inputs then outputs */
    uint32_t  n_t, cap_t;
    int64_t   pid;
    bool      has_pid;
    ts_rank **ranks;        /* the ranks read, one of which is the partner */
    uint32_t  n_ranks;
    char      schema[64];
} et;

#define ET_MAX_BYTES ((size_t)8 << 30)

static bool key_is(js_str k, const char *s) { return k.n == strlen(s) && !memcmp(k.s, s, k.n); }

/* The next member of an object whose '{' was read: past the ',' (unless the
 * first), its key and ':'; false at the closing '}' (consumed). */
static bool next_member(js *j, bool *first, js_str *k)
{
    if (js_peek(j) == '}') { j->p++; return false; }
    if (!*first) js_expect(j, ',', "',' or '}'");
    *first = false;
    if (js_peek(j) != '"') js_fail(j, j->p, "expected a key");
    *k = js_string(j);
    js_expect(j, ':', "':'");
    return true;
}

static uint64_t read_uint(js *j)
{
    if (js_peek(j) == '-') { js_num v = js_number(j); return v.is_int && !v.overflow ? (uint64_t)-(int64_t)v.mag : 0; }
    js_num v = js_number(j);
    if (!v.is_int || v.overflow) js_fail(j, j->p, "expected an integer id");
    return v.mag;
}

static void push_tensor(et *e, uint64_t key)
{
    if (e->n_t == e->cap_t && ts__grow((void **)&e->tensors, &e->cap_t, sizeof *e->tensors, (size_t)e->n_t + 1))
        js_fail(&e->j, e->j.p, "out of memory");
    e->tensors[e->n_t++] = key;
}

/* One value of an inputs/outputs list: a tensor [id, storage, offset, numel,
 * itemsize, "device"] pushes its key; anything else is skipped. */
static void read_value(et *e)
{
    js *j = &e->j;
    if (js_peek(j) != '[') { js_skip(j, 0); return; }
    j->p++;
    uint64_t v[5];
    int n = 0;
    bool tensor = true;
    while (js_peek(j) != ']') {
        if (n) js_expect(j, ',', "',' or ']'");
        char c = js_peek(j);
        if (n < 5 && c >= '0' && c <= '9') {
            js_num x = js_number(j);
            if (x.is_int && !x.overflow) v[n] = x.mag; else tensor = false;
        } else if (n == 5 && c == '"') js_string(j);
        else { tensor = false; js_skip(j, 1); }
        n++;
    }
    j->p++;
    if (tensor && n == 6) push_tensor(e, ts__hash_u64(v[0]) ^ (v[1] * 0x9e3779b97f4a7c15ULL));
}

static void read_values(et *e)
{
    js *j = &e->j;
    js_expect(j, '[', "a list of values");
    for (bool first = true; js_peek(j) != ']'; first = false) {
        if (!first) js_expect(j, ',', "',' or ']'");
        read_value(e);
    }
    j->p++;
}

/* "inputs"/"outputs": a list of values (1.0.1) or {"values": [...], ...}. */
static void read_io(et *e)
{
    js *j = &e->j;
    if (js_peek(j) == '[') { read_values(e); return; }
    js_expect(j, '{', "a list or object of values");
    js_str k;
    for (bool first = true; next_member(j, &first, &k);)
        if (key_is(k, "values")) read_values(e);
        else js_skip(j, 2);
}

/* "attrs": [{"name": "rf_id", "type": ..., "value": N}, ...] (1.0.2). */
static void read_attrs(et *e, et_node *nd)
{
    js *j = &e->j;
    js_expect(j, '[', "a list of attributes");
    for (bool first = true; js_peek(j) != ']'; first = false) {
        if (!first) js_expect(j, ',', "',' or ']'");
        js_expect(j, '{', "an attribute");
        int which = 0;   /* 1 rf_id */
        uint64_t val = 0;
        bool has_val = false;
        js_str k;
        for (bool f2 = true; next_member(j, &f2, &k);) {
            if (key_is(k, "name") && js_peek(j) == '"') { js_str v = js_string(j); which = key_is(v, "rf_id"); }
            else if (key_is(k, "value") && js_peek(j) >= '0' && js_peek(j) <= '9') { val = read_uint(j); has_val = true; }
            else js_skip(j, 3);
        }
        if (which == 1 && has_val) nd->rf_id = val;
    }
    j->p++;
}

static void read_node(et *e)
{
    js *j = &e->j;
    if (e->n == e->cap && ts__grow((void **)&e->nodes, &e->cap, sizeof *e->nodes, (size_t)e->n + 1))
        js_fail(j, j->p, "out of memory");
    et_node *nd = &e->nodes[e->n];
    memset(nd, 0, sizeof *nd);
    nd->rf_id = UINT64_MAX;
    nd->row = TS_NONE32;
    bool has_id = false;
    const char *at = j->p;
    js_expect(j, '{', "a node object");
    js_str k;
    for (bool first = true; next_member(j, &first, &k);) {
        if (key_is(k, "id")) { nd->id = read_uint(j); has_id = true; }
        else if (key_is(k, "name") && js_peek(j) == '"') {
            js_str s = js_string(j);
            size_t n = s.n;
            const char *b = s.clean ? s.s : js_decode(j, s, &n);
            nd->name = ts__rank_intern(e->r, b, n);
        } else if (key_is(k, "rf_id")) nd->rf_id = read_uint(j);
        else if (key_is(k, "parent") || key_is(k, "ctrl_deps")) nd->parent = read_uint(j);
        else if (key_is(k, "inputs")) { nd->in0 = e->n_t; read_io(e); nd->n_in = e->n_t - nd->in0; }
        else if (key_is(k, "outputs")) { nd->out0 = e->n_t; read_io(e); nd->n_out = e->n_t - nd->out0; }
        else if (key_is(k, "attrs")) read_attrs(e, nd);
        else js_skip(j, 1);
    }
    if (!has_id) js_fail(j, at, "an execution-trace node without an \"id\"");
    e->n++;
}

/* The Kineto rank of the ET's process: one whose CPU thread has its pid. */
static ts_rank *partner(ts_rank **ranks, uint32_t n_ranks, int64_t pid, uint32_t *n_found)
{
    ts_rank *found = NULL;
    *n_found = 0;
    for (uint32_t i = 0; i < n_ranks; i++) {
        const ts_rank *r = ranks[i];
        for (uint32_t t = 0; t < r->n_tracks; t++)
            if (r->tracks[t].kind == TS_TRACK_THREAD && r->tracks[t].pid == pid) {
                found = ranks[i];
                (*n_found)++;
                break;
            }
    }
    return found;
}

/* The top-level object: schema, pid, then the nodes (joined to the partner found by pid). */
static void read_top(et *e)
{
    js *j = &e->j;
    js_expect(j, '{', "'{' (a PyTorch execution trace is a JSON object)");
    bool nodes = false;
    js_str k;
    for (bool first = true; next_member(j, &first, &k);) {
        if (key_is(k, "schema") && js_peek(j) == '"') {
            js_str s = js_string(j);
            snprintf(e->schema, sizeof e->schema, "%.*s", (int)(s.n < 60 ? s.n : 60), s.s);
        } else if (key_is(k, "pid")) { e->pid = (int64_t)read_uint(j); e->has_pid = true; }
        else if (key_is(k, "nodes")) {
            nodes = true;
            if (!e->has_pid) js_fail(j, j->p, "no \"pid\" before \"nodes\": the Kineto trace of its process cannot be found");
            uint32_t n_found;
            e->r = partner(e->ranks, e->n_ranks, e->pid, &n_found);
            if (n_found != 1)
                js_fail(j, j->p, n_found ? "a PyTorch host execution trace of process %lld, which %u of the Kineto "
                        "traces given ran: give only the one of its run" : "a PyTorch host execution trace carries no "
                        "times, and no Kineto trace given is of its process (pid %lld): give the Kineto trace of the "
                        "same run beside it", (long long)e->pid, n_found);
            js_expect(j, '[', "a list of nodes");
            for (bool f2 = true; js_peek(j) != ']'; f2 = false) {
                if (!f2) js_expect(j, ',', "',' or ']'");
                read_node(e);
            }
            j->p++;
        } else js_skip(j, 1);
    }
    if (!nodes) js_fail(j, j->p, "no \"nodes\" list: not a PyTorch execution trace");
}

bool ts__et_is_host_et(const unsigned char *head, size_t n)
{
    size_t i = 0;
    while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) i++;
    if (i == n || head[i++] != '{') return false;
    while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) i++;
    return n - i >= 9 && !memcmp(head + i, "\"schema\"", 8) && (head[i + 8] == ':' || head[i + 8] == ' ');
}

/* The whole file, followed by JS_PAD zero bytes, in a buffer of *cap bytes. */
static char *read_padded(const char *path, size_t *len, size_t *cap, ts_error *err)
{
    ts_src src;
    if (ts__src_open_file(&src, path, false, err)) return NULL;
    size_t n = 0, c = (size_t)1 << 20;
    char *buf = ts__malloc(c);
    int rc = buf ? TS_OK : ts__error(err, TS_ENOMEM, "%s: out of memory", path);
    while (!rc) {
        if (c - n < JS_PAD + 1) {
            char *nb = c >= ET_MAX_BYTES ? NULL : ts__realloc(buf, c, c * 2);
            if (!nb) { rc = ts__error(err, TS_ENOMEM, "%s: out of memory (or over %zu GiB)", path, ET_MAX_BYTES >> 30); break; }
            buf = nb;
            c *= 2;
        }
        long k = ts__src_read(&src, buf + n, c - n - JS_PAD - 1, err);
        if (k < 0) rc = (int)k;
        else if (k == 0) break;
        else n += (size_t)k;
    }
    ts__src_close(&src);
    if (rc) { ts__free(buf, c); return NULL; }
    memset(buf + n, 0, c - n);
    *len = n;
    *cap = c;
    return buf;
}

/* Kineto cpu_op / user_annotation rows by record-function id. */
static int rf_index(const ts_rank *r, ts_map64 *m, bool *by_record_fn)
{
    const ts_slices *sl = &r->slices;
    *by_record_fn = false;
    for (uint32_t s = 0; s < sl->n && !*by_record_fn; s++) {
        int64_t v;
        if ((sl->kind[s] == TS_KIND_CPU_OP || sl->kind[s] == TS_KIND_USER_ANNOTATION) &&
            ts__slice_arg_i64(r, s, "Record function id", &v)) *by_record_fn = true;
    }
    for (uint32_t s = 0; s < sl->n; s++) {
        if (sl->kind[s] != TS_KIND_CPU_OP && sl->kind[s] != TS_KIND_USER_ANNOTATION) continue;
        int64_t v = -1;
        if (*by_record_fn) { if (!ts__slice_arg_i64(r, s, "Record function id", &v)) continue; }
        else v = sl->ext_id[s];
        uint64_t old;
        if (v < 0 || ts__map64_get(m, (uint64_t)v, &old)) continue;
        if (ts__map64_put(m, (uint64_t)v, s)) return TS_ENOMEM;
    }
    return TS_OK;
}

/* Does node a enclose node b (a is b's ancestor)? */
static bool encloses(const et *e, const ts_map64 *by_id, uint32_t a, uint32_t b)
{
    uint64_t cur = e->nodes[b].parent, row;
    for (int depth = 0; depth < 4096 && cur && ts__map64_get(by_id, cur, &row); depth++) {
        if (row == a) return true;
        if (e->nodes[row].parent == cur) break;   /* a self-parented node */
        cur = e->nodes[row].parent;
    }
    return false;
}

typedef struct et_counts { uint64_t joined, named_apart, ops, deps, contradicted; } et_counts;

static int join_nodes(et *e, const ts_map64 *by_rf, et_counts *k)
{
    const ts_slices *sl = &e->r->slices;
    for (uint32_t i = 0; i < e->n; i++) {
        et_node *nd = &e->nodes[i];
        const char *name = ts__rank_str(e->r, nd->name);
        if (!strncmp(name, "[pytorch|profiler|execution_trace|", 34)) continue;   /* process/thread roots */
        k->ops++;
        uint64_t row;
        if (nd->rf_id == UINT64_MAX || !ts__map64_get(by_rf, nd->rf_id, &row)) continue;
        if (sl->name[row] != nd->name) { k->named_apart++; continue; }
        nd->row = (uint32_t)row;
        k->joined++;
    }
    return TS_OK;
}

static int add_deps(et *e, uint32_t cat, et_counts *k)
{
    ts_map64 by_id, producer;
    ts__map64_init(&by_id);
    ts__map64_init(&producer);
    int rc = TS_OK;
    for (uint32_t i = 0; i < e->n && !rc; i++) rc = ts__map64_put(&by_id, e->nodes[i].id, i);
    const ts_slices *sl = &e->r->slices;
    uint64_t flow_id = (uint64_t)1 << 62;
    for (uint32_t i = 0; i < e->n && !rc; i++) {
        const et_node *nd = &e->nodes[i];
        for (uint32_t t = nd->in0; t < nd->in0 + nd->n_in && !rc && nd->row != TS_NONE32; t++) {
            uint64_t p;
            if (!ts__map64_get(&producer, e->tensors[t], &p) || p == i) continue;
            const et_node *pn = &e->nodes[p];
            if (pn->row == TS_NONE32 || pn->row == nd->row || encloses(e, &by_id, (uint32_t)p, i) ||
                encloses(e, &by_id, i, (uint32_t)p)) continue;
            if (ts__slice_end(e->r, pn->row) > sl->ts_ns[nd->row]) { k->contradicted++; continue; }
            rc = ts__rank_add_bound_flow(e->r, pn->row, nd->row, flow_id++, cat);
            k->deps++;
        }
        for (uint32_t t = nd->out0; t < nd->out0 + nd->n_out && !rc; t++) rc = ts__map64_put(&producer, e->tensors[t], i);
    }
    ts__map64_free(&by_id);
    ts__map64_free(&producer);
    return rc;
}

static int join(et *e, const char *path, ts_error *err)
{
    ts_map64 by_rf;
    ts__map64_init(&by_rf);
    bool by_record_fn;
    et_counts k = {0};
    int rc = rf_index(e->r, &by_rf, &by_record_fn);
    if (!rc) rc = join_nodes(e, &by_rf, &k);
    if (!rc) rc = add_deps(e, ts__rank_intern(e->r, "chakra_dep", 10), &k);
    ts__map64_free(&by_rf);
    if (rc) return ts__error(err, TS_ENOMEM, "%s: out of memory", path);
    if (k.joined == 0)
        return ts__error(err, TS_EFORMAT, "%s: byte 0: none of its %llu ops has a Kineto op of the same "
                         "record-function id and name in %s (not the same run?)", path,
                         (unsigned long long)k.ops, e->r->path);
    char text[512];
    snprintf(text, sizeof text, "%s (schema %s): %llu of %llu ops joined by %s, %llu data dependencies added",
             path, e->schema, (unsigned long long)k.joined, (unsigned long long)k.ops,
             by_record_fn ? "Record function id" : "External id", (unsigned long long)k.deps);
    ts__rank_add_meta_str(e->r, "execution_trace", text);
    if (k.joined < k.ops)
        ts__rank_warn_n(e->r, TS_WARN_OTHER, k.ops - k.joined, "%s: %llu of its %llu ops found no Kineto op "
                        "(%llu with an id whose Kineto op has another name)", path,
                        (unsigned long long)(k.ops - k.joined), (unsigned long long)k.ops,
                        (unsigned long long)k.named_apart);
    if (k.contradicted)
        ts__rank_warn_n(e->r, TS_WARN_OTHER, k.contradicted, "%s: %llu data dependencies not added: the "
                        "producer ends after the reader starts in the Kineto times", path,
                        (unsigned long long)k.contradicted);
    return e->r->oom ? ts__error(err, TS_ENOMEM, "%s: out of memory", path) : TS_OK;
}

/* Parse and join; the only frame that setjmp returns to. */
static int run(et *e, const char *path, ts_error *err)
{
    if (setjmp(e->j.jb) != 0) return e->j.status ? e->j.status : TS_EPARSE;
    read_top(e);
    return join(e, path, err);
}

/* Join the padded buffer (len bytes, then JS_PAD zeros) of ET `path`. */
static int join_padded(const char *path, char *buf, size_t len, ts_rank **ranks, uint32_t n_ranks, ts_error *err)
{
    et *e = ts__calloc(1, sizeof *e);
    if (!e) return ts__error(err, TS_ENOMEM, "%s: out of memory", path);
    e->ranks = ranks;
    e->n_ranks = n_ranks;
    js *j = &e->j;
    j->name = path;
    j->buf = buf;
    j->p = buf;
    j->end = buf + len;
    j->eof = true;
    j->err = err;
    int rc = run(e, path, err);
    ts__free(j->scratch, j->scratch_cap);
    ts__free(e->nodes, (size_t)e->cap * sizeof *e->nodes);
    ts__free(e->tensors, (size_t)e->cap_t * sizeof *e->tensors);
    ts__free(e, sizeof *e);
    return rc;
}

int ts__et_join(const char *path, ts_rank **ranks, uint32_t n_ranks, ts_error *err)
{
    size_t len, cap;
    char *buf = read_padded(path, &len, &cap, err);
    if (!buf) return err ? err->status : TS_EIO;
    int rc = join_padded(path, buf, len, ranks, n_ranks, err);
    ts__free(buf, cap);
    return rc;
}

int ts__et_join_buffer(const char *name, const void *data, size_t n, ts_rank **ranks, uint32_t n_ranks,
                       ts_error *err)
{
    char *buf = ts__malloc(n + JS_PAD + 1);
    if (!buf) return ts__error(err, TS_ENOMEM, "%s: out of memory", name);
    if (n) memcpy(buf, data, n);
    memset(buf + n, 0, JS_PAD + 1);
    int rc = join_padded(name, buf, n, ranks, n_ranks, err);
    ts__free(buf, n + JS_PAD + 1);
    return rc;
}
