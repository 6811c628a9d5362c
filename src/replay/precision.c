/* precision.c - builds the precision model (include/trainscope/precision.h)
 * from profiled runs of one model at several precisions: units and their
 * mapping across runs, per-unit times (trimmed means over iterations) and memory
 * blocks, the fp32 run's memory timeline, and the casting-cost fit.
 *
 * Not here: plans, prediction and the greedy search (precision_plan.c).
 * Input: each run's rank 0, the CPU thread that holds its ProfilerStep#N
 * ranges, plus the backward ops of its other threads (CUDA's autograd
 * threads); "[memory]" instants ("Bytes") give memory (only the device's,
 * "Device Type" 1, on GPU runs). Mapping rule (docs/precision.md): the k-th
 * non-cast forward op of an iteration is unit k in every run, and its name
 * must be the same; backward ops join the unit whose op (or anything nested
 * in it) has their "Sequence number". GPU runs (ops whose runtime calls
 * share a correlation id with kernels, memcpys or memsets): every op also
 * gets the GPU time of what it launched.
 * Cost: O(slices + instants) per run and iteration, plus sorts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/precision.h"
#include "trace/model.h"

enum { CLS_UNIT, CLS_CAST, CLS_BWD, CLS_OTHER };

typedef struct top_op {
    uint32_t slice;
    uint8_t  cls;      /* CLS_* */
    uint32_t unit;     /* CLS_UNIT / CLS_BWD: its unit; CLS_CAST: the unit it enters; TS_NONE32 = none */
    bool     entry;    /* CLS_BWD: backward of the unit's entry cast */
    int64_t  gpu_ns;   /* GPU runs: time of the GPU ops it launched */
    ts__blk  mem;
} top_op;

typedef struct run_iter {     /* one iteration of one run, parsed */
    top_op  *ops;   uint32_t n_ops, cap_ops;
    uint32_t n_units;         /* forward ops; op.unit holds their ordinal until map_units */
    uint32_t *match;          /* per ordinal: the reference ordinal, then the unit (map_units) */
    int64_t  dur_ns;
} run_iter;

const char *ts_precision_name(ts_precision p)
{
    static const char *const N[TS_PREC_COUNT] = {"fp32", "bf16", "fp16", "int8"};
    return (unsigned)p < TS_PREC_COUNT ? N[p] : "?";
}

int ts_precision_bytes(ts_precision p)
{
    static const int B[TS_PREC_COUNT] = {4, 2, 2, 1};
    return (unsigned)p < TS_PREC_COUNT ? B[p] : 4;
}

bool ts_precision_from_name(const char *s, ts_precision *out)
{
    static const struct { const char *name; ts_precision p; } T[] = {
        {"fp32", TS_PREC_FP32}, {"f32", TS_PREC_FP32}, {"float32", TS_PREC_FP32},
        {"bf16", TS_PREC_BF16}, {"bfloat16", TS_PREC_BF16}, {"fp16", TS_PREC_FP16}, {"f16", TS_PREC_FP16},
        {"half", TS_PREC_FP16}, {"int8", TS_PREC_INT8}, {"i8", TS_PREC_INT8}};
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
        if (!strcmp(T[i].name, s)) { *out = T[i].p; return true; }
    return false;
}

static const char *sname(const ts_rank *r, uint32_t s) { return ts__rank_str(r, r->slices.name[s]); }
static bool is_op(const char *n) { return strstr(n, "::") != NULL; }
static bool is_cast(const char *n) { return !strcmp(n, "aten::to") || !strcmp(n, "aten::_to_copy"); }
static bool is_bwd(const char *n) { return !strncmp(n, "autograd::engine::evaluate_function", 35); }

static bool top_level_op(const ts_rank *r, uint32_t s)
{
    if (!is_op(sname(r, s))) return false;
    for (uint32_t p = r->slices.parent[s]; p != TS_NONE32; p = r->slices.parent[p])
        if (is_op(sname(r, p))) return false;
    return true;
}

/* Innermost enclosing range that is neither an op nor an iteration marker. */
static const char *scope_of(const ts_rank *r, uint32_t s)
{
    for (uint32_t p = r->slices.parent[s]; p != TS_NONE32; p = r->slices.parent[p]) {
        const char *n = sname(r, p);
        if (!is_op(n) && strncmp(n, "ProfilerStep#", 13)) return n;
    }
    return "";
}

/* Elements of the first tensor of "Input Dims" ([[64, 512], [512]] -> 32768);
 * TS__IN_NONE when the first argument is no tensor, TS__IN_UNKNOWN without shapes. */
static int64_t first_input_elems(const ts_rank *r, uint32_t s)
{
    const char *d = ts__slice_arg_str(r, s, "Input Dims");
    if (!d) return TS__IN_UNKNOWN;
    if (strncmp(d, "[[", 2)) return -1;
    int64_t e = 1;
    const char *p = d + 2;
    if (*p == ']') return -1;   /* a scalar or a non-tensor first argument */
    while (*p && *p != ']') {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || v > (1LL << 40) || e > (INT64_MAX >> 41)) return -1;
        e *= v;
        p = end;
        while (*p == ',' || *p == ' ') p++;
    }
    return e;
}

/* Last slice row of s's subtree (slices of a track are sorted, parents first). */
static uint32_t subtree_end(const ts_rank *r, const ts_track *tr, uint32_t s)
{
    uint32_t e = s + 1, end = tr->first_slice + tr->n_slices;
    while (e < end && r->slices.depth[e] > r->slices.depth[s]) e++;
    return e;
}

static const ts_track *track_of(const ts_rank *r, uint32_t s) { return &r->tracks[r->slices.track[s]]; }

/* Sequence number of s or, failing that, of the first slice under it that has one. */
static int64_t seq_of(const ts_rank *r, uint32_t s)
{
    int64_t v;
    for (uint32_t c = s, e = subtree_end(r, track_of(r, s), s); c < e; c++)
        if (ts__slice_arg_i64(r, c, "Sequence number", &v) && v >= 0) return v;
    return -1;
}

/* Map every sequence number inside s's subtree to (unit << 1 | entry). */
static int index_seqs(const ts_rank *r, uint32_t s, uint32_t unit, bool entry, ts_map64 *seqs)
{
    int64_t v;
    for (uint32_t c = s, e = subtree_end(r, track_of(r, s), s); c < e; c++)
        if (ts__slice_arg_i64(r, c, "Sequence number", &v) && v >= 0 &&
            ts__map64_put(seqs, (uint64_t)v, ((uint64_t)unit << 1) | entry))
            return TS_ENOMEM;
    return TS_OK;
}

/* The thread that holds the iterations (their marker slices), else the busiest. */
static uint32_t train_track(const ts_rank *r)
{
    for (uint32_t i = 0; i < r->n_iterations; i++)
        if (r->iterations[i].slice != TS_NONE32) return r->slices.track[r->iterations[i].slice];
    uint32_t best = TS_NONE32;
    for (uint32_t t = 0; t < r->n_tracks; t++)
        if (r->tracks[t].kind != TS_TRACK_COUNTER && (best == TS_NONE32 || r->tracks[t].n_slices > r->tracks[best].n_slices))
            best = t;
    return best;
}

/* GPU runs: the kernels, memcpys and memsets of each correlation id (a
 * launch's): rows sorted by id, by_corr: id -> first << 32 | count. */
typedef struct gpu_index { ts_map64 by_corr; uint32_t *rows; uint32_t n; } gpu_index;
typedef struct corr_row { int64_t corr; uint32_t row; } corr_row;

static bool on_gpu_kind(ts_kind k) { return k == TS_KIND_KERNEL || k == TS_KIND_GPU_MEMCPY || k == TS_KIND_GPU_MEMSET; }

static int cmp_corr_row(const void *a, const void *b)
{
    const corr_row *x = a, *y = b;
    return x->corr != y->corr ? (x->corr > y->corr) - (x->corr < y->corr) : (x->row > y->row) - (x->row < y->row);
}

static void gpu_index_free(gpu_index *g)
{
    ts__map64_free(&g->by_corr);
    ts__free(g->rows, (size_t)g->n * sizeof *g->rows);
    g->rows = NULL;
    g->n = 0;
}

/* *any = the rank has a GPU op bound to a launch. */
static int gpu_index_build(const ts_rank *r, gpu_index *g, bool *any)
{
    *any = false;
    if (!r->slices.corr) return TS_OK;
    uint32_t n = 0;
    for (uint32_t s = 0; s < r->slices.n; s++) n += on_gpu_kind((ts_kind)r->slices.kind[s]) && r->slices.corr[s] >= 0;
    if (!n) return TS_OK;
    corr_row *v = ts__malloc((size_t)n * sizeof *v);
    g->rows = ts__malloc((size_t)n * sizeof *g->rows);
    if (!v || !g->rows) {
        ts__free(v, v ? (size_t)n * sizeof *v : 0);
        ts__free(g->rows, g->rows ? (size_t)n * sizeof *g->rows : 0);
        g->rows = NULL;
        return TS_ENOMEM;
    }
    g->n = n;
    for (uint32_t s = 0, k = 0; s < r->slices.n; s++)
        if (on_gpu_kind((ts_kind)r->slices.kind[s]) && r->slices.corr[s] >= 0) v[k++] = (corr_row){r->slices.corr[s], s};
    if (n > 1) qsort(v, n, sizeof *v, cmp_corr_row);
    int rc = TS_OK;
    for (uint32_t i = 0, j; i < n && !rc; i = j) {
        for (j = i; j < n && v[j].corr == v[i].corr; j++) g->rows[j] = v[j].row;
        rc = ts__map64_put(&g->by_corr, (uint64_t)v[i].corr, ((uint64_t)i << 32) | (j - i));
    }
    ts__free(v, (size_t)n * sizeof *v);
    *any = !rc;
    return rc;
}

static int cmp_span(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Length of the union of [start, end) spans (pairs, sorted here). */
static int64_t union_ns(int64_t *v, uint32_t n)
{
    if (n > 1) qsort(v, n, 2 * sizeof *v, cmp_span);
    int64_t t = 0, cur = INT64_MIN;
    for (uint32_t i = 0; i < n; i++) {
        int64_t a = v[2 * i] > cur ? v[2 * i] : cur, e = v[2 * i + 1];
        if (e > a) { t += e - a; cur = e; }
    }
    return t;
}

/* GPU time of what the runtime calls in s's subtree launched: the union of
 * their GPU ops' spans (cuDNN runs some kernels of one call side by side on
 * its own streams); -1 when memory for the spans runs out. */
static int64_t gpu_ns_of(const ts_rank *r, uint32_t s, const gpu_index *g)
{
    uint32_t n = 0, end = subtree_end(r, track_of(r, s), s);
    int64_t sum = 0;
    uint64_t v;
    for (int pass = 0; pass < 2; pass++) {
        if (pass && n < 2) return sum;   /* one GPU op: its duration */
        int64_t *sp = pass ? ts__malloc((size_t)n * 2 * sizeof *sp) : NULL;
        if (pass && !sp) return -1;
        uint32_t k = 0;
        for (uint32_t c = s; c < end; c++) {
            ts_kind kd = (ts_kind)r->slices.kind[c];
            if ((kd != TS_KIND_CUDA_RUNTIME && kd != TS_KIND_CUDA_DRIVER) || r->slices.corr[c] < 0 ||
                !ts__map64_get(&g->by_corr, (uint64_t)r->slices.corr[c], &v))
                continue;
            for (uint32_t i = (uint32_t)(v >> 32); i < (uint32_t)(v >> 32) + (uint32_t)v; i++) {
                uint32_t row = g->rows[i];
                if (!pass) { n++; sum += r->slices.dur_ns[row]; continue; }
                sp[2 * k] = r->slices.ts_ns[row];
                sp[2 * k++ + 1] = r->slices.ts_ns[row] + r->slices.dur_ns[row];
            }
        }
        if (pass) {
            int64_t t = union_ns(sp, k);
            ts__free(sp, (size_t)n * 2 * sizeof *sp);
            return t;
        }
    }
    return sum;
}

typedef struct cand { int64_t ts; uint32_t s; } cand;

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    return x->ts != y->ts ? (x->ts > y->ts) - (x->ts < y->ts) : (x->s > y->s) - (x->s < y->s);
}

/* Top-level ops starting in [start, end): all of the training thread's and
 * the backward ops of the other threads, in time order. */
static int iter_ops(const ts_rank *r, uint32_t track, int64_t start, int64_t end, cand **v, uint32_t *n, uint32_t *cap)
{
    *n = 0;
    for (uint32_t t = 0; t < r->n_tracks; t++) {
        const ts_track *tr = &r->tracks[t];
        if (tr->kind != TS_TRACK_THREAD) continue;
        uint32_t lo = tr->first_slice, hi = tr->first_slice + tr->n_slices;
        while (lo < hi) {   /* the track's slices are in time order: the first at or after start */
            uint32_t mid = lo + (hi - lo) / 2;
            if (r->slices.ts_ns[mid] < start) lo = mid + 1;
            else hi = mid;
        }
        for (uint32_t s = lo; s < tr->first_slice + tr->n_slices && r->slices.ts_ns[s] < end; s++) {
            if (!top_level_op(r, s)) continue;
            if (t != track && !is_bwd(sname(r, s))) continue;
            if (ts__grow((void **)v, cap, sizeof **v, *n + 1)) return TS_ENOMEM;
            (*v)[(*n)++] = (cand){r->slices.ts_ns[s], s};
        }
    }
    if (*n > 1)   /* no ops: *v may still be NULL, which qsort must not get (fuzz_precision, 26 Nov) */
        qsort(*v, *n, sizeof **v, cmp_cand);
    return TS_OK;
}

static int push_op(run_iter *it, top_op op)
{
    if (ts__grow((void **)&it->ops, &it->cap_ops, sizeof *it->ops, it->n_ops + 1)) return TS_ENOMEM;
    it->ops[it->n_ops++] = op;
    return TS_OK;
}

/* Classify the top-level ops of [start, end] (iter_ops); gpu: the run's
 * GPU time by correlation id, NULL on CPU runs. */
static int parse_iter(const ts_rank *r, uint32_t track, int64_t start, int64_t end, const gpu_index *gpu, run_iter *it)
{
    ts_map64 seqs;
    ts__map64_init(&seqs);
    uint32_t pending = TS_NONE32;   /* index in it->ops of a cast awaiting its unit */
    it->n_ops = it->n_units = 0;
    it->dur_ns = end - start;
    cand *cv = NULL;
    uint32_t nc = 0, cap = 0;
    int rc = iter_ops(r, track, start, end, &cv, &nc, &cap);
    for (uint32_t i = 0; i < nc && !rc; i++) {
        uint32_t s = cv[i].s;
        const char *n = sname(r, s);
        top_op op = {.slice = s, .cls = CLS_OTHER, .unit = TS_NONE32, .gpu_ns = gpu ? gpu_ns_of(r, s, gpu) : 0};
        if (op.gpu_ns < 0) { rc = TS_ENOMEM; break; }
        if (is_bwd(n)) {
            uint64_t v;
            int64_t q = seq_of(r, s);
            if (q >= 0 && ts__map64_get(&seqs, (uint64_t)q, &v)) {
                op.cls = CLS_BWD;
                op.unit = (uint32_t)(v >> 1);
                op.entry = v & 1;
            }
        } else if (is_cast(n)) {
            op.cls = CLS_CAST;
            if (pending != TS_NONE32) it->ops[pending].cls = CLS_OTHER;   /* two casts in a row: the first enters nothing */
            pending = it->n_ops;
        } else {
            op.cls = CLS_UNIT;
            op.unit = it->n_units++;
            if (pending != TS_NONE32) {
                it->ops[pending].unit = op.unit;
                rc = index_seqs(r, it->ops[pending].slice, op.unit, true, &seqs);
                pending = TS_NONE32;
            }
            if (!rc) rc = index_seqs(r, s, op.unit, false, &seqs);
        }
        if (!rc) rc = push_op(it, op);
    }
    if (pending != TS_NONE32) it->ops[pending].cls = CLS_OTHER;
    ts__map64_free(&seqs);
    ts__free(cv, (size_t)cap * sizeof *cv);
    return rc;
}

/* Memory instants of the rank ("[memory]", "Bytes") in [start, end), in time order. */
typedef struct mem_ev { int64_t ts, bytes, total; } mem_ev;

static int cmp_mem(const void *a, const void *b)
{
    const mem_ev *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static bool instant_i64(const ts_rank *r, uint32_t i, const char *key, int64_t *out)
{
    uint32_t a = r->instants.args[i];
    if (a == TS_NONE32) return false;
    for (uint32_t k = a; k < a + r->instants.n_args[i]; k++)
        if (!strcmp(ts__rank_str(r, r->args.key[k]), key))
            return ts__arg_as_i64((ts_arg_type)r->args.type[k], r->args.val[k], out);
    return false;
}

/* dev: only the instants whose "Device Type" is dev (1: CUDA), -1: all. */
/* A "[memory]" instant: its category (Kineto before 2.x, the CPU ground
 * truth's writer) or its name (newer Kineto: cat "cpu_instant_event"). */
static bool is_mem(const ts_rank *r, uint32_t i, uint32_t id)
{
    return r->instants.cat[i] == id || r->instants.name[i] == id;
}

static mem_ev *mem_events(const ts_rank *r, int64_t start, int64_t end, int dev, uint32_t *n, uint32_t *cap)
{
    uint32_t id = ts__str_find(&r->strings, "[memory]", 8), k = 0;
    *n = *cap = 0;
    if (!id) return NULL;
    for (uint32_t i = 0; i < r->instants.n; i++)
        if (is_mem(r, i, id) && r->instants.ts_ns[i] >= start && r->instants.ts_ns[i] < end) k++;
    mem_ev *ev = k ? ts__malloc(k * sizeof *ev) : NULL;
    if (!ev) return NULL;
    *cap = k;
    for (uint32_t i = 0; i < r->instants.n; i++) {
        int64_t b, tot = -1, d = -1;
        if (!is_mem(r, i, id) || r->instants.ts_ns[i] < start || r->instants.ts_ns[i] >= end ||
            !instant_i64(r, i, "Bytes", &b) || (dev >= 0 && (!instant_i64(r, i, "Device Type", &d) || d != dev)))
            continue;
        instant_i64(r, i, "Total Allocated", &tot);
        ev[(*n)++] = (mem_ev){r->instants.ts_ns[i], b, tot};
    }
    if (*n > 1) qsort(ev, *n, sizeof *ev, cmp_mem);
    return ev;
}

static void blk_add(ts__blk *b, int64_t bytes)
{
    b->net += bytes;
    if (b->net > b->peak) b->peak = b->net;
}

static int add_item(ts_prec_model *m, ts__prec_item it)
{
    if (ts__grow((void **)&m->items, &m->cap_items, sizeof *m->items, m->n_items + 1)) return TS_ENOMEM;
    m->items[m->n_items++] = it;
    return TS_OK;
}

/* Give each top-level op of `it` the memory events from its start to the
 * next op's start: what Python frees right after an op (its inputs, once
 * the last reference goes) is sized by that op's precision. Events before
 * the first op become a FIXED item of the fp32 timeline (when `timeline`). */
static int assign_memory(ts_prec_model *m, const ts_rank *r, run_iter *it, const mem_ev *ev, uint32_t n_ev, bool timeline)
{
    uint32_t e = 0;
    ts__blk head = {0, 0};
    uint8_t *placed = timeline ? ts__calloc(m->n_units ? m->n_units : 1, 1) : NULL;   /* bit 1: forward, 2: backward */
    if (timeline && !placed) return TS_ENOMEM;
    int rc = TS_OK;
    for (; e < n_ev && it->n_ops && ev[e].ts < r->slices.ts_ns[it->ops[0].slice]; e++) blk_add(&head, ev[e].bytes);
    if (timeline && (head.net || head.peak)) rc = add_item(m, (ts__prec_item){TS__ITEM_FIXED, 0, head});
    for (uint32_t i = 0; i < it->n_ops && !rc; i++) {
        top_op *op = &it->ops[i];
        int64_t next = i + 1 < it->n_ops ? r->slices.ts_ns[it->ops[i + 1].slice] : INT64_MAX;
        for (; e < n_ev && ev[e].ts < next; e++) blk_add(&op->mem, ev[e].bytes);
        if (!timeline) continue;
        ts__prec_item item = {TS__ITEM_FIXED, 0, op->mem};
        if (op->cls == CLS_UNIT) item = (ts__prec_item){TS__ITEM_FWD, op->unit, {0, 0}};
        else if (op->cls == CLS_BWD && !op->entry) item = (ts__prec_item){TS__ITEM_BWD, op->unit, {0, 0}};
        else if (op->cls != CLS_OTHER) continue;   /* entry casts and their backward: inside their unit */
        uint8_t bit = item.kind == TS__ITEM_FWD ? 1 : item.kind == TS__ITEM_BWD ? 2 : 0;
        if (bit && (placed[item.unit] & bit)) continue;   /* a unit's forward (backward) is one block, at its first op */
        if (bit) placed[item.unit] |= bit;
        rc = add_item(m, item);
        if (item.kind == TS__ITEM_BWD) m->units[item.unit].has_bwd = true;
    }
    ts__free(placed, placed ? (m->n_units ? m->n_units : 1) : 0);
    ts__blk tail = {0, 0};   /* no ops at all */
    for (; e < n_ev; e++) blk_add(&tail, ev[e].bytes);
    if (!rc && timeline && (tail.net || tail.peak)) rc = add_item(m, (ts__prec_item){TS__ITEM_FIXED, 0, tail});
    return rc;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The 20% trimmed mean of v[0..n) (sorted in place): the mean of what is
 * left after the lowest and the highest n/5 values are dropped. A step is a
 * sum of many op times, each skewed to the right (preemption, cache misses),
 * and the median of a sum sits above the sum of the medians (attention's
 * fp32 run: 6.2 ms against 2.4 ms of gaps); means add up, and trimming keeps
 * the one op that a busy moment slowed out of them. */
static int64_t trimmed_mean_i64(int64_t *v, uint32_t n)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_i64);
    uint32_t cut = n / 5;
    double sum = 0;
    for (uint32_t i = cut; i < n - cut; i++) sum += (double)v[i];
    return (int64_t)llround(sum / (double)(n - 2 * cut));
}

static int note(ts_prec_model *m, const char *fmt, const char *a, const char *b, uint32_t x, uint32_t y)
{
    char line[512];
    int n = snprintf(line, sizeof line, fmt, a, b, x, y);
    char *c = n >= 0 ? ts__malloc((size_t)n + 1) : NULL;
    if (!c || ts__grow((void **)&m->notes, &m->cap_notes, sizeof *m->notes, m->n_notes + 1)) {
        ts__free(c, c ? (size_t)n + 1 : 0);
        return TS_ENOMEM;
    }
    memcpy(c, line, (size_t)n + 1);
    m->notes[m->n_notes++] = c;
    return TS_OK;
}

typedef struct build {   /* one run while it is read */
    ts_prec_model *m;
    const ts_rank *r;
    const char    *path;
    ts_precision   p;
    run_iter      *its;
    uint32_t       n_its;
    ts_error      *err;
    gpu_index      gpu;     /* GPU ops by correlation id */
    bool           on_gpu;  /* the run launches GPU ops */
} build;

/* Keys (name and scope) and slices of an iteration's forward ops, by ordinal. */
static int iter_keys(const ts_rank *r, const run_iter *it, uint64_t **keys, uint32_t **slices)
{
    *keys = ts__malloc((size_t)(it->n_units ? it->n_units : 1) * sizeof **keys);
    *slices = ts__malloc((size_t)(it->n_units ? it->n_units : 1) * sizeof **slices);
    if (!*keys || !*slices) return TS_ENOMEM;
    for (uint32_t i = 0, k = 0; i < it->n_ops; i++)
        if (it->ops[i].cls == CLS_UNIT) {
            (*slices)[k] = it->ops[i].slice;
            (*keys)[k++] = ts__prec_key(sname(r, it->ops[i].slice), scope_of(r, it->ops[i].slice));
        }
    return TS_OK;
}

typedef struct align {   /* the reference (the fp32 run's first iteration) while runs are aligned */
    uint64_t *keys;   uint32_t *slices;   uint32_t n;
    uint8_t  *anchored;   /* matched in every iteration of every run */
    uint32_t *unit;       /* ref ordinal -> unit */
} align;

/* Pair every iteration's forward ops with the reference's (match[ordinal] =
 * reference ordinal or TS_NONE32) and clear the reference ops some iteration
 * lacks. */
static int align_all(build *bs, align *al)
{
    for (int p = 0; p < TS_PREC_COUNT; p++)
        for (uint32_t k = 0; k < bs[p].n_its; k++) {
            run_iter *it = &bs[p].its[k];
            uint64_t *keys;
            uint32_t *sl;
            int rc = iter_keys(bs[p].r, it, &keys, &sl);
            it->match = rc ? NULL : ts__malloc((size_t)(it->n_units ? it->n_units : 1) * sizeof *it->match);
            if (!rc && !it->match) rc = TS_ENOMEM;
            if (!rc) rc = ts__prec_align(al->keys, al->n, keys, it->n_units, it->match);
            ts__free(keys, (size_t)(it->n_units ? it->n_units : 1) * sizeof *keys);
            ts__free(sl, (size_t)(it->n_units ? it->n_units : 1) * sizeof *sl);
            if (rc == TS_ERANGE)
                return ts__error(bs[p].err, TS_ERANGE, "%s: iteration %u: %u forward ops against %u in %s differ too "
                                 "much to align", bs[p].path, k, it->n_units, al->n, bs[0].path);
            if (rc) return rc;
            uint8_t *seen = ts__calloc(al->n, 1);
            if (!seen) return TS_ENOMEM;
            for (uint32_t j = 0; j < it->n_units; j++)
                if (it->match[j] != TS_NONE32) seen[it->match[j]] = 1;
            for (uint32_t i = 0; i < al->n; i++) al->anchored[i] &= seen[i];
            ts__free(seen, al->n);
        }
    return TS_OK;
}

/* An iteration whose forward ops are under 90% anchored is of another model. */
static int check_cover(const build *b, const build *ref, const align *al)
{
    for (uint32_t k = 0; k < b->n_its; k++) {
        const run_iter *it = &b->its[k];
        uint32_t covered = 0, first = TS_NONE32, o = 0;
        for (uint32_t j = 0; j < it->n_units; j++) {
            bool a = it->match[j] != TS_NONE32 && al->anchored[it->match[j]];
            covered += a;
            if (!a && first == TS_NONE32) first = j;
        }
        if ((uint64_t)covered * 10 >= (uint64_t)it->n_units * 9 && it->n_units) continue;
        uint32_t s = TS_NONE32;
        for (uint32_t i = 0; i < it->n_ops && s == TS_NONE32; i++)
            if (it->ops[i].cls == CLS_UNIT && o++ == first) s = it->ops[i].slice;
        const char *sc = s != TS_NONE32 ? scope_of(b->r, s) : "";
        return ts__error(b->err, TS_EFORMAT, "%s: iteration %u: forward op %u '%s'%s%s has no counterpart in %s%s, "
                         "and only %u of its %u forward ops have one: not the same model, so its ops cannot be mapped",
                         b->path, k, first, s != TS_NONE32 ? sname(b->r, s) : "?", *sc ? " in " : "", sc,
                         b == ref ? "every other run" : ref->path, b == ref ? "" : " (or another run)", covered,
                         it->n_units);
    }
    return TS_OK;
}

/* Ops whose backward keeps their output (the formulas in torch's
 * tools/autograd/derivatives.yaml that use `result`: relu's
 * threshold_backward(grad, result, 0), sigmoid, tanh, exp, sqrt, rsqrt,
 * softmax and log_softmax): the output outlives its consumer until the op's
 * own backward, whatever the consumer does with it. */
static bool keeps_output(const char *op)
{
    static const char *const ops[] = {"relu", "relu_", "sigmoid", "sigmoid_", "tanh", "tanh_", "exp", "exp_",
                                      "sqrt", "sqrt_", "rsqrt", "rsqrt_", "softmax", "_softmax", "log_softmax",
                                      "_log_softmax"};
    if (!strncmp(op, "aten::", 6)) op += 6;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(op, ops[i])) return true;
    return false;
}

/* Each unit's nearest neighbours that take a tensor (ts__prec_prev), and
 * whether its output outlives its consumer. */
static void link_inputs(ts_prec_model *m)
{
    for (uint32_t u = 0; u < m->n_units; u++) m->units[u].keeps_out = keeps_output(ts__str(&m->names, m->units[u].op));
    uint32_t last = TS_NONE32;
    for (uint32_t u = 0; u < m->n_units; u++) {
        m->units[u].prev_in = last;
        if (m->units[u].in_elems != TS__IN_NONE) last = u;
    }
    last = TS_NONE32;
    for (uint32_t u = m->n_units; u-- > 0;) {
        m->units[u].next_in = last;
        if (m->units[u].in_elems != TS__IN_NONE) last = u;
    }
}

/* Units from the anchored reference ops; every op's ordinal (op.unit) becomes
 * its unit: an anchored op's own, any other op's the unit before it (before
 * the first anchor: the first). A note per run on the ops not anchored. */
static int make_units(build *bs, align *al)
{
    ts_prec_model *m = bs[0].m;
    for (uint32_t i = 0; i < al->n; i++) {
        al->unit[i] = m->n_units ? m->n_units - 1 : 0;
        if (!al->anchored[i]) continue;
        uint32_t s = al->slices[i];
        const char *n = sname(bs[0].r, s), *sc = scope_of(bs[0].r, s);
        if (ts__grow((void **)&m->units, &m->cap_units, sizeof *m->units, m->n_units + 1)) return TS_ENOMEM;
        al->unit[i] = m->n_units;
        m->units[m->n_units++] = (ts__prec_unit){
            .op = ts__str_intern(&m->names, n, strlen(n)),
            .scope = *sc ? ts__str_intern(&m->names, sc, strlen(sc)) : 0,
            .in_elems = first_input_elems(bs[0].r, s)};
        if (ts__strpool_oom(&m->names)) return TS_ENOMEM;
    }
    for (int p = 0; p < TS_PREC_COUNT; p++)
        for (uint32_t k = 0; k < bs[p].n_its; k++) {
            run_iter *it = &bs[p].its[k];
            uint32_t cur = 0, loose = 0, first = TS_NONE32;
            for (uint32_t j = 0; j < it->n_units; j++) {   /* ordinal -> unit, in place */
                bool a = it->match[j] != TS_NONE32 && al->anchored[it->match[j]];
                if (a) cur = al->unit[it->match[j]];
                else if (!loose++) first = j;
                it->match[j] = cur;
            }
            for (uint32_t i = 0; i < it->n_ops; i++)
                if (it->ops[i].unit != TS_NONE32) it->ops[i].unit = it->match[it->ops[i].unit];
            if (k || !loose) continue;
            for (uint32_t i = 0, o = 0; i < it->n_ops; i++)
                if (it->ops[i].cls == CLS_UNIT && o++ == first) {
                    int rc = note(m, "%s: '%s' and %u other forward ops have no counterpart in every run: each is "
                                  "timed with the unit before it", bs[p].path, sname(bs[p].r, it->ops[i].slice),
                                  loose - 1, 0);
                    if (rc) return rc;
                    break;
                }
        }
    return TS_OK;
}

/* The units: the reference's forward ops matched in every iteration of every run. */
static int map_units(build *bs)
{
    align al = {0};
    al.n = bs[0].its[0].n_units;
    if (!al.n)
        return ts__error(bs[0].err, TS_ENODATA, "%s: no forward ops (slices named like aten::op) in its iterations",
                         bs[0].path);
    int rc = iter_keys(bs[0].r, &bs[0].its[0], &al.keys, &al.slices);
    al.anchored = rc ? NULL : ts__malloc(al.n);
    al.unit = al.anchored ? ts__malloc((size_t)al.n * sizeof *al.unit) : NULL;
    if (!rc && !al.unit) rc = TS_ENOMEM;
    if (!rc) {
        memset(al.anchored, 1, al.n);
        rc = align_all(bs, &al);
    }
    for (int p = TS_PREC_COUNT - 1; p >= 0 && !rc; p--) rc = check_cover(&bs[p], &bs[0], &al);   /* the lower runs first */
    if (!rc) rc = make_units(bs, &al);
    if (!rc) link_inputs(bs[0].m);
    ts__free(al.keys, (size_t)al.n * sizeof *al.keys);
    ts__free(al.slices, (size_t)al.n * sizeof *al.slices);
    ts__free(al.anchored, al.anchored ? al.n : 0);
    ts__free(al.unit, al.unit ? (size_t)al.n * sizeof *al.unit : 0);
    return rc;
}

/* Profiled slices of s's subtree; on GPU runs the runtime calls are left
 * out (the profiler's cost per op, measured on ops that launch a kernel,
 * covers its launch). */
static uint32_t slices_in(const build *b, uint32_t s)
{
    uint32_t e = subtree_end(b->r, track_of(b->r, s), s), n = 0;
    if (!b->on_gpu) return e - s;
    for (uint32_t c = s; c < e; c++) {
        ts_kind k = (ts_kind)b->r->slices.kind[c];
        n += k != TS_KIND_CUDA_RUNTIME && k != TS_KIND_CUDA_DRIVER;
    }
    return n;
}

/* Profiled slices per unit (its op, entry cast and backward, subtrees
 * included) in the first iteration; for fp32 also those outside units. */
static void unit_events(build *b)
{
    ts_prec_model *m = b->m;
    const run_iter *it = &b->its[0];
    const ts_track *tr = &b->r->tracks[b->r->slices.track[b->r->iterations[0].slice != TS_NONE32 ?
                                                           b->r->iterations[0].slice : it->ops[0].slice]];
    uint32_t in_units = 0, total = 0;
    for (uint32_t u = 0; u < m->n_units; u++) m->units[u].ev_fwd[b->p] = m->units[u].ev_bwd[b->p] = 0;
    for (uint32_t s = tr->first_slice; s < tr->first_slice + tr->n_slices; s++) {
        ts_kind k = (ts_kind)b->r->slices.kind[s];
        total += b->r->slices.ts_ns[s] >= b->r->iterations[0].start_ns && b->r->slices.ts_ns[s] < b->r->iterations[0].end_ns &&
                 (!b->on_gpu || (k != TS_KIND_CUDA_RUNTIME && k != TS_KIND_CUDA_DRIVER));
    }
    for (uint32_t i = 0; i < it->n_ops; i++) {
        const top_op *op = &it->ops[i];
        const ts_track *own = track_of(b->r, op->slice);
        uint32_t n = slices_in(b, op->slice);
        if (own != tr) total += n;   /* a backward thread's op */
        if (op->unit == TS_NONE32 || op->unit >= m->n_units || op->cls == CLS_OTHER) continue;
        if (op->cls == CLS_BWD) m->units[op->unit].ev_bwd[b->p] += n;
        else m->units[op->unit].ev_fwd[b->p] += n;
        in_units += n;
    }
    if (b->p == TS_PREC_FP32) m->fixed_ev = total - in_units;
}

/* The trimmed mean over iterations of what is left of each step once its
 * units' CPU times are taken out: the gaps between ops and the
 * precision-free ops (v: unit_times' table, rows unsorted). */
static int64_t residual_ns(const int64_t *v, const int64_t *steps, uint32_t nu, uint32_t ni, int64_t *tmp)
{
    for (uint32_t k = 0; k < ni; k++) {
        tmp[k] = steps[k];
        for (uint32_t u = 0; u < nu; u++)
            for (int f = 0; f < 4; f++) tmp[k] -= v[((size_t)u * 8 + f) * ni + k];
    }
    return trimmed_mean_i64(tmp, ni);
}

/* CPU runs: the units' CPU times scaled by one factor so that they add up
 * to the run's step less its residual (trimmed means of sums are not sums
 * of trimmed means: the fp32 linears on the reference BLAS vary by 30% and
 * their trimmed means add up to 1.4-2.7 ms less than the step's, which
 * would otherwise land in the precision-free part every plan keeps). */
static void scale_to_step(build *b, int64_t step_ns, int64_t resid_ns)
{
    ts_prec_model *m = b->m;
    int p = b->p;
    double sum = 0;
    for (uint32_t u = 0; u < m->n_units; u++) {
        const ts__prec_unit *un = &m->units[u];
        sum += (double)(un->fwd[p] + un->bwd[p] + un->entry_fwd[p] + un->entry_bwd[p]);
    }
    double want = (double)(step_ns - resid_ns);
    if (sum <= 0 || want <= 0) return;
    double f = want / sum;
    for (uint32_t u = 0; u < m->n_units; u++) {
        ts__prec_unit *un = &m->units[u];
        int64_t *const t[4] = {&un->fwd[p], &un->bwd[p], &un->entry_fwd[p], &un->entry_bwd[p]};
        for (int i = 0; i < 4; i++) *t[i] = (int64_t)llround((double)*t[i] * f);
    }
}

/* Each unit's four times at precision b->p (its op, backward, entry cast,
 * the cast's backward), as CPU and as GPU time: trimmed means over the
 * run's iterations (on CPU runs scaled to the run's step: scale_to_step),
 * and the fp32 run's step likewise. */
static int unit_times(build *b)
{
    ts_prec_model *m = b->m;
    uint32_t nu = m->n_units, ni = b->n_its;
    size_t nv = (size_t)nu * 8 * ni + 2 * (size_t)ni;
    int64_t *v = ts__calloc(nv, sizeof *v), *steps = v ? v + (size_t)nu * 8 * ni : NULL;
    if (!v) return TS_ENOMEM;
    for (uint32_t k = 0; k < ni; k++) {
        const run_iter *it = &b->its[k];
        steps[k] = it->dur_ns;
        for (uint32_t i = 0; i < it->n_ops; i++) {
            const top_op *op = &it->ops[i];
            if (op->unit == TS_NONE32 || op->unit >= nu || op->cls == CLS_OTHER) continue;
            uint32_t f = op->cls == CLS_UNIT ? 0 : op->cls == CLS_CAST ? 2 : op->entry ? 3 : 1;
            v[((size_t)op->unit * 8 + f) * ni + k] += b->r->slices.dur_ns[op->slice];
            v[((size_t)op->unit * 8 + 4 + f) * ni + k] += op->gpu_ns;
        }
    }
    int64_t resid = b->on_gpu ? 0 : residual_ns(v, steps, nu, ni, steps + ni);   /* for scale_to_step */
    for (uint32_t u = 0; u < nu; u++) {
        ts__prec_unit *un = &m->units[u];
        int64_t *row = v + (size_t)u * 8 * ni;
        int64_t *const dst[8] = {&un->fwd[b->p], &un->bwd[b->p], &un->entry_fwd[b->p], &un->entry_bwd[b->p],
                                 &un->gfwd[b->p], &un->gbwd[b->p], &un->gentry_fwd[b->p], &un->gentry_bwd[b->p]};
        for (int f = 0; f < 8; f++) *dst[f] = trimmed_mean_i64(row + (size_t)f * ni, ni);
    }
    int64_t step = trimmed_mean_i64(steps, ni);
    if (!b->on_gpu) scale_to_step(b, step, resid);
    if (b->p == TS_PREC_FP32) {   /* fixed = the rest of the step, so the fp32 plan gives it back */
        m->iter_ns = m->fixed_ns = step;
        for (uint32_t u = 0; u < nu; u++)   /* the overhead is 0 while the model is built */
            m->fixed_ns -= m->gpu ? ts__prec_body_ns(m, &m->units[u], 0) + ts__prec_entry_ns(&m->units[u], 0)
                                  : m->units[u].fwd[0] + m->units[u].bwd[0] + m->units[u].entry_fwd[0] + m->units[u].entry_bwd[0];
    }
    ts__free(v, nv * sizeof *v);
    return TS_OK;
}

/* Memory blocks of every unit from the run's first iteration (and, for
 * fp32, the timeline and the bytes alive when the iteration starts). */
static int unit_memory(build *b)
{
    ts_prec_model *m = b->m;
    const ts_iteration *i0 = &b->r->iterations[0];
    uint32_t n_ev, cap;
    mem_ev *ev = mem_events(b->r, i0->start_ns, i0->end_ns, b->on_gpu ? 1 : -1, &n_ev, &cap);
    if (!n_ev) {   /* a run without memory events: no memory prediction */
        m->have_memory = false;
        ts__free(ev, cap * sizeof *ev);
        return TS_OK;
    }
    if (b->p == TS_PREC_FP32) {
        m->have_memory = ev[0].total >= 0;
        m->base_bytes = ev[0].total - ev[0].bytes;
    }
    int rc = assign_memory(m, b->r, &b->its[0], ev, n_ev, b->p == TS_PREC_FP32);
    ts__free(ev, cap * sizeof *ev);
    for (uint32_t i = 0; i < b->its[0].n_ops && !rc; i++) {
        const top_op *op = &b->its[0].ops[i];
        if (op->unit == TS_NONE32 || op->unit >= m->n_units || op->cls == CLS_OTHER) continue;
        ts__prec_unit *u = &m->units[op->unit];
        ts__blk *blk = op->cls == CLS_UNIT ? &u->m_fwd[b->p] : op->cls == CLS_CAST ? &u->m_entry_fwd[b->p]
                     : op->entry ? &u->m_entry_bwd[b->p] : &u->m_bwd[b->p];
        *blk = ts__blk_cat(*blk, op->mem);
    }
    return rc;
}

/* Notes for ops outside units that one run has and the fp32 run has not (or
 * not as often): they are not mapped, and cost what the fp32 run says. */
static int other_notes(build *b, const build *ref)
{
    const run_iter *it = &b->its[0], *rit = &ref->its[0];
    int rc = TS_OK;
    for (uint32_t i = 0; i < it->n_ops && !rc; i++) {
        if (it->ops[i].cls != CLS_OTHER) continue;
        const char *n = sname(b->r, it->ops[i].slice);
        uint32_t mine = 0, theirs = 0;
        bool first = true;
        for (uint32_t j = 0; j < it->n_ops; j++)
            if (it->ops[j].cls == CLS_OTHER && !strcmp(sname(b->r, it->ops[j].slice), n)) {
                if (j < i) first = false;
                mine++;
            }
        for (uint32_t j = 0; j < rit->n_ops; j++)
            theirs += rit->ops[j].cls == CLS_OTHER && !strcmp(sname(ref->r, rit->ops[j].slice), n);
        if (first && mine != theirs)
            rc = note(b->m, "%s: '%s' runs %u times an iteration, %u in the fp32 run: not mapped (precision-free "
                      "ops are timed from the fp32 run)", b->path, n, mine, theirs);
    }
    return rc;
}

/* The share of the run's steps in which some GPU op runs (any stream), noted:
 * near 100% the step is GPU-bound (the replay gives units their kernels'
 * time); far below, the GPU waits for launches (their CPU time). */
static int gpu_busy_note(build *b)
{
    const ts_rank *r = b->r;
    uint32_t n = 0;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        ts_kind k = (ts_kind)r->slices.kind[s];
        n += k == TS_KIND_KERNEL || k == TS_KIND_GPU_MEMCPY || k == TS_KIND_GPU_MEMSET;
    }
    int64_t *v = ts__malloc((size_t)(n ? n : 1) * 2 * sizeof *v);
    if (!v) return TS_ENOMEM;
    uint32_t k = 0;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        ts_kind kd = (ts_kind)r->slices.kind[s];
        if (kd != TS_KIND_KERNEL && kd != TS_KIND_GPU_MEMCPY && kd != TS_KIND_GPU_MEMSET) continue;
        v[2 * k] = r->slices.ts_ns[s];
        v[2 * k++ + 1] = r->slices.ts_ns[s] + r->slices.dur_ns[s];
    }
    if (n > 1) qsort(v, n, 2 * sizeof *v, cmp_span);
    int64_t busy = 0, total = 0;
    for (uint32_t i = 0; i < r->n_iterations; i++) {
        int64_t st = r->iterations[i].start_ns, en = r->iterations[i].end_ns, cur = st;
        total += en - st;
        for (uint32_t j = 0; j < n && v[2 * j] < en; j++) {   /* the union of [start, end) clipped to the step */
            int64_t a = v[2 * j] > cur ? v[2 * j] : cur, e = v[2 * j + 1] < en ? v[2 * j + 1] : en;
            if (e > a) { busy += e - a; cur = e; }
        }
    }
    ts__free(v, (size_t)(n ? n : 1) * 2 * sizeof *v);
    b->m->gpu_busy_pct = total > 0 ? 100.0 * (double)busy / (double)total : 0;
    uint32_t pct = (uint32_t)(b->m->gpu_busy_pct + 0.5);
    return note(b->m, "%s (%s): GPU ops run in %u%% of its steps; a plan's step is replayed from each op's CPU "
                "time and its GPU ops' time", b->path,
                pct >= 80 ? "GPU-bound" : pct >= 50 ? "partly launch-bound" : "launch-bound", pct, 0);
}

static void free_build(build *b)
{
    for (uint32_t k = 0; k < b->n_its; k++) {
        ts__free(b->its[k].ops, (size_t)b->its[k].cap_ops * sizeof(top_op));
        ts__free(b->its[k].match, b->its[k].match ? (size_t)(b->its[k].n_units ? b->its[k].n_units : 1) * sizeof(uint32_t) : 0);
    }
    ts__free(b->its, (size_t)b->n_its * sizeof *b->its);
    b->its = NULL;
    b->n_its = 0;
    gpu_index_free(&b->gpu);
}

/* Parse the run's iterations (forward ops by ordinal, not yet units). */
static int read_run(build *b, const ts_job *t, const build *ref)
{
    if (t->n_ranks != 1)
        return ts__error(b->err, TS_EFORMAT, "%s: %u ranks: a precision run is one process's trace", b->path, t->n_ranks);
    b->r = t->ranks[0];
    uint32_t track = train_track(b->r);
    if (!b->r->n_iterations || track == TS_NONE32)
        return ts__error(b->err, TS_ENODATA, "%s: no iterations (ProfilerStep#N ranges) to take op times from", b->path);
    b->its = ts__calloc(b->r->n_iterations, sizeof *b->its);
    if (!b->its) return TS_ENOMEM;
    b->n_its = b->r->n_iterations;
    if (gpu_index_build(b->r, &b->gpu, &b->on_gpu)) return TS_ENOMEM;
    if (!ref) b->m->gpu = b->on_gpu;
    else if (b->on_gpu != ref->on_gpu)
        return ts__error(b->err, TS_EFORMAT, "%s: %s GPU ops where %s has %s: runs of one model on one device are "
                         "needed", b->path, b->on_gpu ? "launches" : "launches no", ref->path,
                         ref->on_gpu ? "them" : "none");
    int rc = TS_OK;
    for (uint32_t k = 0; k < b->n_its && !rc; k++)
        rc = parse_iter(b->r, track, b->r->iterations[k].start_ns, b->r->iterations[k].end_ns,
                        b->on_gpu ? &b->gpu : NULL, &b->its[k]);
    return rc;
}

/* After map_units: the run's times, slices, memory and notes. */
/* Start times, sorted, of the profiled slices of [start, end) that lie in
 * no op (ranges such as module scopes and ProfilerStep#N; runtime calls
 * left out): the profiler's cost in the gaps between ops. */
static int64_t *outside_slices(const ts_rank *r, int64_t start, int64_t end, uint32_t *n)
{
    *n = 0;
    int64_t *v = NULL;
    uint32_t cap = 0;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        ts_kind k = (ts_kind)r->slices.kind[s];
        if (r->tracks[r->slices.track[s]].kind != TS_TRACK_THREAD || k == TS_KIND_CUDA_RUNTIME ||
            k == TS_KIND_CUDA_DRIVER || r->slices.ts_ns[s] < start || r->slices.ts_ns[s] >= end)
            continue;
        bool in_op = false;
        for (uint32_t p = s; p != TS_NONE32 && !in_op; p = r->slices.parent[p]) in_op = is_op(sname(r, p));
        if (in_op) continue;
        if (ts__grow((void **)&v, &cap, sizeof *v, *n + 1)) {
            ts__free(v, (size_t)cap * sizeof *v);
            *n = UINT32_MAX;
            return NULL;
        }
        v[(*n)++] = r->slices.ts_ns[s];
    }
    if (*n) qsort(v, *n, sizeof *v, cmp_i64);
    return v;
}

/* GPU runs: the fp32 run's first iteration as the simulation's items
 * (precision_sim.c): a precision-free op is an item with its times; a
 * unit's forward (its entry cast, op and any ops joined to it) is one item at
 * its first op, its backward likewise; CPU time between ops is the next
 * item's gap, with the profiled slices that start in it. */
static int time_items(build *b)
{
    ts_prec_model *m = b->m;
    const run_iter *it = &b->its[0];
    const ts_rank *r = b->r;
    uint32_t n_out, o = 0, gap_ev = 0;
    int64_t *out = outside_slices(r, r->iterations[0].start_ns, r->iterations[0].end_ns, &n_out);
    uint8_t *placed = ts__calloc(m->n_units ? m->n_units : 1, 1);   /* bit 1: forward, 2: backward */
    if (!placed || n_out == UINT32_MAX) {
        ts__free(placed, placed ? (m->n_units ? m->n_units : 1) : 0);
        ts__free(out, out ? (size_t)n_out * sizeof *out : 0);
        return TS_ENOMEM;
    }
    int64_t prev_end = r->iterations[0].start_ns, gap = 0;
    int rc = TS_OK;
    for (uint32_t i = 0; i < it->n_ops && !rc; i++) {
        const top_op *op = &it->ops[i];
        int64_t ts = r->slices.ts_ns[op->slice], end = ts + r->slices.dur_ns[op->slice];
        gap += ts > prev_end ? ts - prev_end : 0;
        for (; o < n_out && out[o] < ts; o++) gap_ev++;
        if (end > prev_end) prev_end = end;
        ts__prec_titem ti = {TS__ITEM_FIXED, 0, gap, gap_ev, r->slices.dur_ns[op->slice], op->gpu_ns,
                             slices_in(b, op->slice)};
        if (op->cls != CLS_OTHER && op->unit < m->n_units) {
            uint8_t bit = op->cls == CLS_BWD ? 2 : 1;
            if (placed[op->unit] & bit) continue;   /* inside the part already placed */
            placed[op->unit] |= bit;
            ti = (ts__prec_titem){bit == 2 ? TS__ITEM_BWD : TS__ITEM_FWD, op->unit, gap, gap_ev, 0, 0, 0};
        }
        gap = 0;
        gap_ev = 0;
        if (ts__grow((void **)&m->titems, &m->cap_titems, sizeof *m->titems, m->n_titems + 1)) rc = TS_ENOMEM;
        else m->titems[m->n_titems++] = ti;
    }
    ts__free(placed, m->n_units ? m->n_units : 1);
    ts__free(out, out ? (size_t)n_out * sizeof *out : 0);
    return rc;
}

static int finish_run(build *b, const build *ref)
{
    int rc = unit_times(b);
    if (!rc && b->its[0].n_ops) unit_events(b);
    if (!rc && !ref && b->on_gpu) rc = time_items(b);
    if (!rc) rc = unit_memory(b);
    if (!rc && ref) rc = other_notes(b, ref);
    if (!rc && !ref && b->on_gpu) rc = gpu_busy_note(b);
    return rc;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Theil-Sen line y = a x + b: a = the median of the slopes between pairs of
 * points, b = the median of y - a x; robust to the casts a busy machine
 * slowed (least squares let one 0.4 ms cast set the slope). At most 600
 * points are used (evenly spaced), so at most 180k pairs. A negative slope
 * or intercept is taken as 0. TS_ENOMEM on failure. */
static int fit_line(const int64_t *x, const int64_t *y, uint32_t n, double *a, double *b)
{
    *a = *b = 0;
    uint32_t step = n > 600 ? (n + 599) / 600 : 1, m = (n + step - 1) / step;
    size_t cap = (size_t)m * (m - 1) / 2 + m + 1, k = 0;
    double *v = ts__malloc(cap * sizeof *v);
    if (!v) return n ? TS_ENOMEM : TS_OK;
    for (uint32_t i = 0; i < n; i += step)
        for (uint32_t j = i + step; j < n; j += step)
            if (x[j] != x[i]) v[k++] = (double)(y[j] - y[i]) / (double)(x[j] - x[i]);
    if (k) {
        qsort(v, k, sizeof *v, cmp_d);
        *a = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
    }
    if (*a < 0) *a = 0;
    k = 0;
    for (uint32_t i = 0; i < n; i += step) v[k++] = (double)y[i] - *a * (double)x[i];
    if (k) {
        qsort(v, k, sizeof *v, cmp_d);
        *b = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
    }
    if (*b < 0) *b = 0;
    ts__free(v, cap * sizeof *v);
    return TS_OK;
}

uint32_t ts_prec_trace_casts(const ts_job *t, int64_t *elems, int64_t *dur_ns, uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t ri = 0; ri < t->n_ranks; ri++) {
        const ts_rank *r = t->ranks[ri];
        gpu_index gpu = {0};
        bool on_gpu = false;
        if (gpu_index_build(r, &gpu, &on_gpu)) {
            gpu_index_free(&gpu);
            return UINT32_MAX;
        }
        for (uint32_t s = 0; s < r->slices.n; s++) {
            int64_t e, g = 0;
            if (!is_cast(sname(r, s)) || !top_level_op(r, s) || (e = first_input_elems(r, s)) < 0) continue;
            if (on_gpu && (g = gpu_ns_of(r, s, &gpu)) < 0) {
                gpu_index_free(&gpu);
                return UINT32_MAX;
            }
            if (on_gpu && !g) continue;   /* to the type it has: no kernel */
            if (n < cap) {   /* GPU runs: its kernels' time (an inserted cast's launch hides behind them) */
                elems[n] = e;
                dur_ns[n] = on_gpu ? g : r->slices.dur_ns[s];
            }
            n++;
        }
        gpu_index_free(&gpu);
    }
    return n;
}

static int fit_casts(ts_prec_model *m, const ts_job *const traces[TS_PREC_COUNT])
{
    uint32_t n = 0, c = 0;
    for (int p = 0; p < TS_PREC_COUNT; p++) {
        if (!traces[p]) continue;
        if ((c = ts_prec_trace_casts(traces[p], NULL, NULL, 0)) == UINT32_MAX) return TS_ENOMEM;
        n += c;
    }
    int64_t *x = n ? ts__malloc((size_t)n * 2 * sizeof *x) : NULL, *y = x ? x + n : NULL;
    if (n && !x) return TS_ENOMEM;
    uint32_t k = 0;
    for (int p = 0; p < TS_PREC_COUNT && x; p++) {   /* x NULL: no casts (no arithmetic on NULL) */
        if (!traces[p]) continue;
        if ((c = ts_prec_trace_casts(traces[p], x + k, y + k, n - k)) == UINT32_MAX) {
            ts__free(x, (size_t)n * 2 * sizeof *x);
            return TS_ENOMEM;
        }
        k += c;
    }
    if (fit_line(x, y, n, &m->alpha_ns_per_elem, &m->beta_ns)) {
        ts__free(x, (size_t)n * 2 * sizeof *x);
        return TS_ENOMEM;
    }
    m->n_fit = n;
    double *e = n ? ts__malloc(n * sizeof *e) : NULL;
    for (uint32_t i = 0; e && i < n; i++) {
        double pred = m->alpha_ns_per_elem * (double)x[i] + m->beta_ns;
        e[i] = y[i] > 0 ? fabs(pred - (double)y[i]) / (double)y[i] * 100.0 : 0;
    }
    if (e) {
        qsort(e, n, sizeof *e, cmp_d);
        m->fit_err_pct = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
    }
    ts__free(e, n * sizeof *e);
    ts__free(x, (size_t)n * 2 * sizeof *x);
    return TS_OK;
}

int ts_prec_cast_fit_trace(const ts_job *t, ts_prec_cast_fit *out)
{
    *out = (ts_prec_cast_fit){0};
    uint32_t n = ts_prec_trace_casts(t, NULL, NULL, 0);
    if (n == UINT32_MAX) return TS_ENOMEM;
    int64_t *x = n ? ts__malloc((size_t)n * 2 * sizeof *x) : NULL, *y = x ? x + n : NULL;
    if (n && !x) return TS_ENOMEM;
    if (x && ts_prec_trace_casts(t, x, y, n) == UINT32_MAX) {
        ts__free(x, (size_t)n * 2 * sizeof *x);
        return TS_ENOMEM;
    }
    bool two = false;
    for (uint32_t i = 1; i < n; i++) two |= x[i] != x[0];
    double a = 0, b = 0;
    int rc = two ? fit_line(x, y, n, &a, &b) : TS_ENODATA;
    if (rc == TS_OK) {
        double e[601];
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i += n > 600 ? (n + 599) / 600 : 1)
            e[k++] = y[i] > 0 ? fabs(a * (double)x[i] + b - (double)y[i]) / (double)y[i] * 100.0 : 0;
        qsort(e, k, sizeof *e, cmp_d);
        *out = (ts_prec_cast_fit){a / 6.0, b, n, k % 2 ? e[k / 2] : (e[k / 2 - 1] + e[k / 2]) / 2};
    }
    ts__free(x, (size_t)n * 2 * sizeof *x);
    return rc;
}

void ts_prec_model_destroy(ts_prec_model *m)
{
    if (!m) return;
    ts__strpool_free(&m->names);
    ts__free(m->units, (size_t)m->cap_units * sizeof *m->units);
    ts__free(m->items, (size_t)m->cap_items * sizeof *m->items);
    ts__free(m->titems, (size_t)m->cap_titems * sizeof *m->titems);
    for (uint32_t i = 0; i < m->n_notes; i++) ts__free(m->notes[i], strlen(m->notes[i]) + 1);
    ts__free(m->notes, (size_t)m->cap_notes * sizeof *m->notes);
    ts__free(m, sizeof *m);
}

int ts_prec_model_create(const ts_job *const traces[TS_PREC_COUNT], const char *const paths[TS_PREC_COUNT],
                         ts_prec_model **out, ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    if (!traces[TS_PREC_FP32]) return ts__error(err, TS_EINVAL, "precision: an fp32 run is required");
    ts_prec_model *m = ts__calloc(1, sizeof *m);
    if (!m || ts__strpool_init(&m->names)) {
        ts__free(m, m ? sizeof *m : 0);
        return ts__error(err, TS_ENOMEM, "out of memory");
    }
    m->base_bytes = -1;
    build bs[TS_PREC_COUNT] = {{0}};
    int rc = TS_OK;
    for (int p = 0; p < TS_PREC_COUNT && !rc; p++) {
        if (!traces[p]) continue;
        bs[p] = (build){.m = m, .path = paths[p], .p = (ts_precision)p, .err = err};
        rc = read_run(&bs[p], traces[p], p ? &bs[0] : NULL);
        m->have |= 1u << p;
    }
    if (!rc) rc = map_units(bs);
    for (int p = 0; p < TS_PREC_COUNT && !rc; p++)
        if (traces[p]) rc = finish_run(&bs[p], p ? &bs[0] : NULL);
    for (int p = 0; p < TS_PREC_COUNT; p++) free_build(&bs[p]);
    if (!rc && m->gpu) {   /* the all-fp32 plan simulated (no overhead yet): the offset to the measured step */
        uint8_t *all = ts__calloc(m->n_units ? m->n_units : 1, 1);
        if (!all) rc = TS_ENOMEM;
        else m->sim0_ns = ts__prec_sim_ns(m, all);
        ts__free(all, m->n_units ? m->n_units : 1);
    }
    if (!rc) rc = fit_casts(m, traces);
    if (rc == TS_ENOMEM && (!err || !err->msg[0])) ts__error(err, rc, "out of memory");
    if (rc) { ts_prec_model_destroy(m); return rc; }
    for (uint32_t u = 0; u < m->n_units; u++)   /* precisions without a run */
        for (int p = 1; p < TS_PREC_COUNT; p++)
            if (!(m->have & (1u << p))) m->units[u].fwd[p] = m->units[u].bwd[p] = -1;
    *out = m;
    return TS_OK;
}

void ts_prec_model_cast_fit(const ts_prec_model *m, ts_prec_cast_fit *out)
{
    out->alpha_ns_per_byte = m->alpha_ns_per_elem / 6.0;
    out->beta_ns = m->beta_ns;
    out->n_casts = m->n_fit;
    out->median_abs_err_pct = m->fit_err_pct;
}

uint32_t ts_prec_model_n_units(const ts_prec_model *m) { return m->n_units; }
uint32_t ts_prec_model_precisions(const ts_prec_model *m) { return m->have; }
uint32_t ts_prec_model_n_notes(const ts_prec_model *m) { return m->n_notes; }
int64_t ts_prec_model_base_bytes(const ts_prec_model *m) { return m->have_memory ? m->base_bytes : -1; }
const char *ts_prec_model_note(const ts_prec_model *m, uint32_t i) { return i < m->n_notes ? m->notes[i] : NULL; }

void ts_prec_model_unit(const ts_prec_model *m, uint32_t i, ts_prec_unit_info *out)
{
    const ts__prec_unit *u = &m->units[i];
    out->op = ts__str(&m->names, u->op);
    out->scope = u->scope ? ts__str(&m->names, u->scope) : "";
    out->input_elems = u->in_elems < 0 ? -1 : u->in_elems;
    for (int p = 0; p < TS_PREC_COUNT; p++) {
        bool have = m->have & (1u << p);
        const bool g = m->gpu;   /* GPU runs: each part the larger of its CPU and its kernels' time */
        out->fwd_ns[p] = !have ? -1 : g ? ts__prec_max(u->fwd[p], u->gfwd[p]) + ts__prec_max(u->entry_fwd[p], u->gentry_fwd[p])
                                        : u->fwd[p] + u->entry_fwd[p];
        out->bwd_ns[p] = !have ? -1 : g ? ts__prec_max(u->bwd[p], u->gbwd[p]) + ts__prec_max(u->entry_bwd[p], u->gentry_bwd[p])
                                        : u->bwd[p] + u->entry_bwd[p];
    }
}
