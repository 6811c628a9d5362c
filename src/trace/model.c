/* model.c - building and finishing the columnar trace model (see model.h).
 *
 * Appends are amortized O(1) and allocate nothing per event beyond column
 * growth. ts__rank_finish() is O(n) for traces whose tracks arrive in time
 * order (the common case: profilers write each thread's events in order) and
 * O(n log n) per unsorted track otherwise.
 */
#include "trace/model.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const kind_names[TS_KIND_COUNT] = {
    "other", "cpu_op", "user_annotation", "gpu_user_annotation", "cuda_runtime",
    "cuda_driver", "cuda_sync", "kernel", "gpu_memcpy", "gpu_memset",
    "python_function", "profiler_range",
};

const char *ts__kind_name(ts_kind k) { return (unsigned)k < TS_KIND_COUNT ? kind_names[k] : "other"; }

ts_kind ts__kind_from_cat(const char *cat, size_t n)
{
    /* Kineto's spellings first, then the older PyTorch/Kineto ones. */
    static const struct { const char *cat; ts_kind kind; } map[] = {
        {"cpu_op", TS_KIND_CPU_OP}, {"Operator", TS_KIND_CPU_OP},
        {"user_annotation", TS_KIND_USER_ANNOTATION},
        {"gpu_user_annotation", TS_KIND_GPU_USER_ANNOTATION},
        {"cuda_runtime", TS_KIND_CUDA_RUNTIME}, {"Runtime", TS_KIND_CUDA_RUNTIME},
        {"cuda_driver", TS_KIND_CUDA_DRIVER},
        {"cuda_sync", TS_KIND_CUDA_SYNC},
        {"kernel", TS_KIND_KERNEL}, {"Kernel", TS_KIND_KERNEL},
        {"gpu_memcpy", TS_KIND_GPU_MEMCPY}, {"Memcpy", TS_KIND_GPU_MEMCPY},
        {"gpu_memset", TS_KIND_GPU_MEMSET}, {"Memset", TS_KIND_GPU_MEMSET},
        {"python_function", TS_KIND_PYTHON_FUNCTION},
        {"cuda_profiler_range", TS_KIND_PROFILER_RANGE},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i].cat) == n && memcmp(map[i].cat, cat, n) == 0) return map[i].kind;
    return TS_KIND_OTHER;
}

static const char *const warn_names[TS_WARN_COUNT] = {
    "unknown_phase", "unmatched_begin", "unmatched_end", "negative_duration",
    "invalid_utf8", "unbound_flow", "overlapping_slices", "too_many_args", "recorder_losses", "other",
};
const char *ts__warn_name(ts_warn_kind k) { return (unsigned)k < TS_WARN_COUNT ? warn_names[k] : "other"; }

/* ---- column growth ----
 * All columns of a table share one capacity; grow them together. */
typedef ts_col_ref col;

static bool grow_cols(ts_rank *r, col *cols, int n_cols, uint32_t *cap, uint32_t need)
{
    if (ts__grow_cols(cols, (size_t)n_cols, cap, need, 1024) == TS_OK) return true;
    r->oom = true;
    return false;
}

#define SLICE_COLS(s) { \
    {(void **)&(s)->ts_ns, 8}, {(void **)&(s)->dur_ns, 8}, {(void **)&(s)->track, 4}, \
    {(void **)&(s)->name, 4}, {(void **)&(s)->cat, 4}, {(void **)&(s)->kind, 1},       \
    {(void **)&(s)->depth, 2}, {(void **)&(s)->parent, 4}, {(void **)&(s)->args, 4},   \
    {(void **)&(s)->n_args, 2}, {(void **)&(s)->corr, 8}, {(void **)&(s)->ext_id, 8} }
#define ARG_COLS(a) { {(void **)&(a)->key, 4}, {(void **)&(a)->type, 1}, {(void **)&(a)->val, 8} }
#define INSTANT_COLS(s) { \
    {(void **)&(s)->ts_ns, 8}, {(void **)&(s)->track, 4}, {(void **)&(s)->name, 4}, \
    {(void **)&(s)->cat, 4}, {(void **)&(s)->kind, 1}, {(void **)&(s)->scope, 1},   \
    {(void **)&(s)->args, 4}, {(void **)&(s)->n_args, 2} }
#define COUNTER_COLS(c) { {(void **)&(c)->ts_ns, 8}, {(void **)&(c)->track, 4}, {(void **)&(c)->value, 8} }
#define FLOW_COLS(f) { {(void **)&(f)->id, 8}, {(void **)&(f)->kind, 1}, {(void **)&(f)->cat, 4}, \
    {(void **)&(f)->from, 4}, {(void **)&(f)->to, 4} }

static void free_cols(col *cols, int n, uint32_t cap)
{
    for (int i = 0; i < n; i++) { ts__free(*cols[i].p, (size_t)cap * cols[i].elem); *cols[i].p = NULL; }
}

/* Give an empty table columns of `want` rows at once. Why: doubling a column
 * of a few hundred MB copies it (glibc's realloc copies heap blocks) and
 * faults its pages twice; one block sized from the input size is written
 * once. All or nothing: a failed allocation leaves the table as it was. */
static void reserve_cols(col *cols, int n_cols, uint32_t *cap, uint32_t want)
{
    void *blk[16];
    if (*cap != 0 || want == 0 || n_cols > 16) return;
    for (int i = 0; i < n_cols; i++) {
        blk[i] = ts__malloc((size_t)want * cols[i].elem);
        if (!blk[i]) {
            while (i-- > 0) ts__free(blk[i], (size_t)want * cols[i].elem);
            return;
        }
    }
    for (int i = 0; i < n_cols; i++) *cols[i].p = blk[i];
    *cap = want;
}

void ts__rank_reserve_flows(ts_rank *r, uint32_t n_flows)
{
    col c[] = FLOW_COLS(&r->flows);
    reserve_cols(c, 5, &r->flows.cap, n_flows);
}

static uint8_t flow_kind_of(const ts_rank *r, uint32_t cat)
{
    const char *cs = ts__rank_str(r, cat);
    return strcmp(cs, "ac2g") == 0 ? TS_FLOW_AC2G : strcmp(cs, "fwdbwd") == 0 ? TS_FLOW_FWDBWD
         : strcmp(cs, "chakra_dep") == 0 || strcmp(cs, "data_dep") == 0 ? TS_FLOW_DEP : TS_FLOW_OTHER;
}

void ts__rank_reserve_numbered_flows(ts_rank *r, uint32_t n_flows, uint32_t cat)
{
    ts_flows *f = &r->flows;
    if (f->cap != 0 || n_flows == 0) return;
    col c[] = { {(void **)&f->from, 4}, {(void **)&f->to, 4} };
    reserve_cols(c, 2, &f->cap, n_flows);
    if (!f->cap) return;
    f->numbered = true;
    f->cat_all = cat;
    f->kind_all = flow_kind_of(r, cat);
    r->flow_kind = f->kind_all, r->flow_kind_cat = cat, r->flow_kind_known = true;   /* held while numbered */
}

void ts__rank_reserve(ts_rank *r, uint32_t n_slices, uint32_t n_args, uint32_t n_flow_ends)
{
    { col c[] = SLICE_COLS(&r->slices); reserve_cols(c, 12, &r->slices.cap, n_slices); }
    { col c[] = ARG_COLS(&r->args); reserve_cols(c, 3, &r->args.cap, n_args); }
    if (r->cap_flow_ends == 0 && n_flow_ends) {
        r->flow_ends = ts__malloc((size_t)n_flow_ends * sizeof *r->flow_ends);
        if (r->flow_ends) r->cap_flow_ends = n_flow_ends;
    }
}

ts_rank *ts__rank_create(const char *path)
{
    ts_rank *r = ts__calloc(1, sizeof *r);
    if (!r) return NULL;
    r->rank = -1;
    r->world_size = -1;
    r->meta_args = TS_NONE32;
    ts__arena_init(&r->arena);
    ts__map64_init(&r->track_index);
    if (ts__strpool_init(&r->strings) != TS_OK) { ts__free(r, sizeof *r); return NULL; }
    r->path = ts__strdup(path ? path : "");
    if (!r->path) { ts__rank_destroy(r); return NULL; }
    return r;
}

void ts__rank_destroy(ts_rank *r)
{
    if (!r) return;
    { col c[] = SLICE_COLS(&r->slices); free_cols(c, 12, r->slices.cap); }
    { col c[] = ARG_COLS(&r->args); free_cols(c, 3, r->args.cap); }
    { col c[] = INSTANT_COLS(&r->instants); free_cols(c, 8, r->instants.cap); }
    { col c[] = COUNTER_COLS(&r->counters); free_cols(c, 3, r->counters.cap); }
    { col c[] = FLOW_COLS(&r->flows); free_cols(c, 5, r->flows.cap); }
    ts__free(r->tracks, (size_t)r->cap_tracks * sizeof *r->tracks);
    ts__free(r->iterations, (size_t)r->cap_iterations * sizeof *r->iterations);
    ts__free(r->flow_ends, (size_t)r->cap_flow_ends * sizeof *r->flow_ends);
    for (int k = 0; k < TS_WARN_COUNT; k++) if (r->warn_first[k]) ts__free(r->warn_first[k], strlen(r->warn_first[k]) + 1);
    ts__map64_free(&r->track_index);
    ts__strpool_free(&r->strings);
    ts__arena_free(&r->arena);
    if (r->path) ts__free(r->path, strlen(r->path) + 1);
    ts__free(r, sizeof *r);
}

/* ---- tracks ---- */
static uint64_t track_key(ts_track_kind kind, int64_t pid, int64_t tid)
{
    uint64_t k = ts__hash_u64((uint64_t)pid * 0x9e3779b97f4a7c15ULL ^ (uint64_t)kind) ^ (uint64_t)tid * 0xc2b2ae3d27d4eb4fULL;
    return k == UINT64_MAX ? 0 : k;
}

static uint32_t find_or_add_track(ts_rank *r, ts_track_kind kind, int64_t pid, int64_t tid)
{
    uint64_t key = track_key(kind, pid, tid), v;
    if (ts__map64_get(&r->track_index, key, &v)) {
        ts_track *t = &r->tracks[v];
        if (t->kind == kind && t->pid == pid && t->tid == tid) return (uint32_t)v;
        /* A 64-bit hash collision: fall back to a scan (never seen in practice). */
        for (uint32_t i = 0; i < r->n_tracks; i++)
            if (r->tracks[i].kind == kind && r->tracks[i].pid == pid && r->tracks[i].tid == tid) return i;
    }
    if (r->n_tracks == r->cap_tracks &&
        ts__grow((void **)&r->tracks, &r->cap_tracks, sizeof *r->tracks, (size_t)r->n_tracks + 1)) {
        r->oom = true;
        return TS_NONE32;
    }
    uint32_t row = r->n_tracks++;
    ts_track *t = &r->tracks[row];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    t->kind = (uint8_t)kind;
    t->device = kind == TS_TRACK_GPU_STREAM ? (int32_t)pid : -1;
    t->stream = kind == TS_TRACK_GPU_STREAM ? tid : -1;
    if (!ts__map64_get(&r->track_index, key, NULL) && ts__map64_put(&r->track_index, key, row))
        r->oom = true;
    return row;
}

uint32_t ts__rank_track(ts_rank *r, ts_track_kind kind, int64_t pid, int64_t tid)
{
    return find_or_add_track(r, kind, pid, tid);
}

uint32_t ts__rank_counter_track(ts_rank *r, int64_t pid, uint32_t name_id)
{
    uint32_t t = find_or_add_track(r, TS_TRACK_COUNTER, pid, name_id);
    if (t != TS_NONE32) r->tracks[t].name_id = name_id;
    return t;
}

/* ---- events ---- */
uint32_t ts__rank_add_slice(ts_rank *r, uint32_t track, int64_t ts_ns, int64_t dur_ns,
                            uint32_t name, uint32_t cat, ts_kind kind)
{
    ts_slices *s = &r->slices;
    if (TS_UNLIKELY(s->n == s->cap)) {
        col c[] = SLICE_COLS(s);
        if (!grow_cols(r, c, 12, &s->cap, s->n + 1)) return TS_NONE32;
    }
    int64_t end;
    if (TS_UNLIKELY(dur_ns < 0)) dur_ns = 0;
    else if (TS_UNLIKELY(__builtin_add_overflow(ts_ns, dur_ns, &end))) dur_ns = INT64_MAX - ts_ns;
    uint32_t i = s->n++;
    s->ts_ns[i] = ts_ns;
    s->dur_ns[i] = dur_ns;
    s->track[i] = track;
    s->name[i] = name;
    s->cat[i] = cat;
    s->kind[i] = (uint8_t)kind;
    s->depth[i] = 0;
    s->parent[i] = TS_NONE32;
    s->args[i] = TS_NONE32;
    s->n_args[i] = 0;
    s->corr[i] = -1;
    s->ext_id[i] = -1;
    return i;
}

void ts__rank_add_meta_str(ts_rank *r, const char *key, const char *val)
{
    uint32_t k = ts__rank_intern(r, key, strlen(key)), v = ts__rank_intern(r, val, strlen(val));
    uint32_t n_old = r->meta_args == TS_NONE32 ? 0 : r->n_meta_args;
    for (uint32_t a = 0; a < n_old; a++)
        if (r->args.key[r->meta_args + a] == k) {
            r->args.type[r->meta_args + a] = (uint8_t)TS_ARG_STR;
            r->args.val[r->meta_args + a] = v;
            return;
        }
    if (n_old >= UINT16_MAX) return;
    uint32_t first = ts__rank_args_mark(r);
    for (uint32_t a = 0; a < n_old; a++)
        ts__rank_add_arg(r, r->args.key[r->meta_args + a], (ts_arg_type)r->args.type[r->meta_args + a],
                         r->args.val[r->meta_args + a]);
    ts__rank_add_arg(r, k, TS_ARG_STR, v);
    if (r->oom) return;
    r->meta_args = first;
    r->n_meta_args = (uint16_t)(n_old + 1);
}

void ts__rank_drop_slices(ts_rank *r, const bool *drop_track)
{
    for (uint32_t t = 0; t < r->n_tracks; t++)
        if (drop_track[t]) r->tracks[t].dropped = r->dropped_tracks = true;
}

uint32_t ts__rank_add_arg(ts_rank *r, uint32_t key, ts_arg_type type, uint64_t val)
{
    ts_args *a = &r->args;
    if (TS_UNLIKELY(a->n == a->cap)) {
        col c[] = ARG_COLS(a);
        if (!grow_cols(r, c, 3, &a->cap, a->n + 1)) return TS_NONE32;
    }
    uint32_t i = a->n++;
    a->key[i] = key;
    a->type[i] = (uint8_t)type;
    a->val[i] = val;
    return i;
}

void ts__rank_slice_set_args(ts_rank *r, uint32_t slice, uint32_t first, uint32_t n)
{
    if (slice == TS_NONE32 || n == 0) return;
    if (n > UINT16_MAX) {
        ts__rank_warn(r, TS_WARN_TOO_MANY_ARGS, "an event has %u args; kept the first %u", n, UINT16_MAX);
        n = UINT16_MAX;
    }
    r->slices.args[slice] = first;
    r->slices.n_args[slice] = (uint16_t)n;
}

uint32_t ts__rank_add_instant(ts_rank *r, uint32_t track, int64_t ts_ns, uint32_t name,
                              uint32_t cat, ts_kind kind, char scope, uint32_t first_arg, uint32_t n_args)
{
    ts_instants *s = &r->instants;
    if (TS_UNLIKELY(s->n == s->cap)) {
        col c[] = INSTANT_COLS(s);
        if (!grow_cols(r, c, 8, &s->cap, s->n + 1)) return TS_NONE32;
    }
    uint32_t i = s->n++;
    s->ts_ns[i] = ts_ns;
    s->track[i] = track;
    s->name[i] = name;
    s->cat[i] = cat;
    s->kind[i] = (uint8_t)kind;
    s->scope[i] = scope;
    s->args[i] = n_args ? first_arg : TS_NONE32;
    s->n_args[i] = (uint16_t)(n_args > UINT16_MAX ? UINT16_MAX : n_args);
    return i;
}

uint32_t ts__rank_add_counter(ts_rank *r, uint32_t track, int64_t ts_ns, double value)
{
    ts_counters *c = &r->counters;
    if (TS_UNLIKELY(c->n == c->cap)) {
        col cc[] = COUNTER_COLS(c);
        if (!grow_cols(r, cc, 3, &c->cap, c->n + 1)) return TS_NONE32;
    }
    uint32_t i = c->n++;
    c->ts_ns[i] = ts_ns;
    c->track[i] = track;
    c->value[i] = value;
    return i;
}

void ts__rank_add_flow_end(ts_rank *r, const ts_flow_end *e)
{
    if (r->n_flow_ends == r->cap_flow_ends &&
        ts__grow((void **)&r->flow_ends, &r->cap_flow_ends, sizeof *r->flow_ends, (size_t)r->n_flow_ends + 1)) {
        r->oom = true;
        return;
    }
    r->flow_ends[r->n_flow_ends++] = *e;
}

static void warn_v(ts_rank *r, ts_warn_kind k, uint64_t n, const char *fmt, va_list ap)
{
    if ((unsigned)k >= TS_WARN_COUNT) k = TS_WARN_OTHER;
    if (r->warn_count[k] == 0) {
        char msg[512];
        vsnprintf(msg, sizeof msg, fmt, ap);
        r->warn_first[k] = ts__strdup(msg);
    }
    r->warn_count[k] = n > UINT64_MAX - r->warn_count[k] ? UINT64_MAX : r->warn_count[k] + n;
}

void ts__rank_warn(ts_rank *r, ts_warn_kind k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    warn_v(r, k, 1, fmt, ap);
    va_end(ap);
}

void ts__rank_warn_n(ts_rank *r, ts_warn_kind k, uint64_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    warn_v(r, k, n, fmt, ap);
    va_end(ap);
}

/* ---- finish: sort ---- */
/* Rows sort by a first key ascending, then a second key descending, then
 * row number. Slices: start time, then duration (parents first). Flow
 * endpoints: time and phase folded into one key, given twice. */
typedef struct sort_ctx { const int64_t *ts, *dur; } sort_ctx;

/* True when row x sorts after row y. Inline for the run scans and merges,
 * which compare every row at least once. A total order (ties broken by row,
 * so stable), so the sorted result is unique. */
static inline bool row_after(const sort_ctx *c, uint32_t x, uint32_t y)
{
    if (c->ts[x] != c->ts[y]) return c->ts[x] > c->ts[y];
    if (c->dur[x] != c->dur[y]) return c->dur[x] < c->dur[y];
    return x > y;
}

/* End of the ascending run of rows starting at i (exclusive). */
static uint32_t run_end(const uint32_t *v, uint32_t i, uint32_t m, sort_ctx *ctx)
{
    for (i++; i < m && !row_after(ctx, v[i - 1], v[i]); i++) {}
    return i;
}

/* Sort seg (m rows) by row_after with a natural merge sort: merge
 * neighbouring ascending runs pairwise until one is left. Why: profilers
 * write a track almost in order (a parent after its children, a late
 * kernel), so a track is a handful of runs and this costs O(m log runs)
 * compares, a pass or two, where qsort paid O(m log m). row_after is a total
 * order (ties broken by row), so the result equals qsort's. */
static void sort_runs(uint32_t *seg, uint32_t m, uint32_t *scratch, sort_ctx *ctx)
{
    uint32_t *src = seg, *dst = scratch;
    for (;;) {
        uint32_t n_runs = 0;
        for (uint32_t i = 0; i < m; n_runs++) {
            uint32_t mid = run_end(src, i, m, ctx), end = mid < m ? run_end(src, mid, m, ctx) : m;
            uint32_t x = i, y = mid, k = i;
            while (x < mid && y < end) dst[k++] = !row_after(ctx, src[x], src[y]) ? src[x++] : src[y++];
            while (x < mid) dst[k++] = src[x++];
            while (y < end) dst[k++] = src[y++];
            i = end;
        }
        uint32_t *t = src; src = dst; dst = t;
        if (n_runs <= 1) break;
    }
    if (src != seg) memcpy(seg, src, (size_t)m * sizeof *seg);
}

/* Sort seg (m rows) by row_after when it is nearly in order. One pass
 * keeps the rows that extend an ascending run in place and sets the others
 * (stragglers) aside in scratch; the stragglers are sorted on their own and
 * merged back from the end. Why: a profiler writes each track almost in
 * order (nccl_data: time goes back 25 times in 26,933 slices on 8 tracks),
 * and a natural merge sort pays a pass per doubling of the run count, so
 * this is two or three linear passes where that was up to eight. A row bigger than the one after it but not
 * than the one before (a lone late row) is the one set aside, so one
 * outlier does not send everything after it to the stragglers. A track
 * written as a few long sorted blocks (Kineto: CPU ops, then runtime calls)
 * costs the same: the later blocks are the stragglers, one run each.
 * scratch holds m words. */
static void sort_nearly_sorted(uint32_t *seg, uint32_t m, uint32_t *scratch, sort_ctx *ctx)
{
    uint32_t nk = 0, ns = 0;
    for (uint32_t i = 0; i < m; i++) {
        uint32_t x = seg[i];
        if (nk == 0 || !row_after(ctx, seg[nk - 1], x)) {
            seg[nk++] = x;
        } else if (nk == 1 || !row_after(ctx, seg[nk - 2], x)) {
            scratch[ns++] = seg[nk - 1];   /* the previous row was the outlier */
            seg[nk - 1] = x;
        } else {
            scratch[ns++] = x;
        }
    }
    if (ns == 0) return;
    sort_runs(scratch, ns, seg + nk, ctx);   /* the ns free words after the kept rows are its scratch */
    for (uint32_t i = nk, j = ns, k = m; j > 0;)
        seg[--k] = i > 0 && row_after(ctx, seg[i - 1], scratch[j - 1]) ? seg[--i] : scratch[--j];
}

/* Reorder one column by perm, gathering through `scratch` (cap * 8 bytes,
 * shared by all columns). Why not a fresh block per column: every new page is
 * a zero-filled fault, and on a 500 MB load the 12 fresh columns were ~100 MB
 * of them. An 8-byte column trades blocks with the scratch (same size, so
 * the old column becomes the next scratch); narrower ones are copied back. */
static void permute(void **colp, size_t elem, const uint32_t *perm, uint32_t n, void **scratch)
{
    unsigned char *src = *colp, *dst = *scratch;
    switch (elem) {
    case 8: for (uint32_t i = 0; i < n; i++) ((uint64_t *)dst)[i] = ((uint64_t *)src)[perm[i]]; break;
    case 4: for (uint32_t i = 0; i < n; i++) ((uint32_t *)dst)[i] = ((uint32_t *)src)[perm[i]]; break;
    case 2: for (uint32_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = ((uint16_t *)src)[perm[i]]; break;
    default: for (uint32_t i = 0; i < n; i++) dst[i] = src[perm[i]]; break;
    }
    if (elem == 8) { *colp = dst; *scratch = src; }
    else memcpy(src, dst, (size_t)n * elem);
}

/* Memory one step of finishing has written and no longer needs, handed to
 * the next step instead of freed. Why: the pages of a block the process has
 * touched are already mapped; a fresh block of the same size costs a page
 * fault per 4 KiB, and those faults were about a quarter of the CPU time of
 * a large load. */
typedef struct spare_block {
    void  *p;          /* NULL = none */
    size_t bytes;      /* allocation size (for ts__free) */
} spare_block;

static void spare_free(spare_block *b)
{
    ts__free(b->p, b->bytes);
    b->p = NULL;
    b->bytes = 0;
}

/* Counting sort by track (O(n)), then per track check order and sort only the
 * tracks that need it. The identity permutation is detected and skipped.
 * Depth and parent are not moved: nest_slices writes every kept row's next.
 * counts: the columns no reader of a counts-only rank reads (cat, args,
 * n_args, corr, ext_id; see ts__rank_finish_counts) are freed, not moved. */
static int sort_slices(ts_rank *r, const spare_block *spare, bool counts)
{
    ts_slices *s = &r->slices;
    uint32_t n = s->n, nt = r->n_tracks;
    for (uint32_t t = 0; t < nt; t++) { r->tracks[t].first_slice = 0; r->tracks[t].n_slices = 0; }
    if (n == 0) return TS_OK;   /* nothing to drop either (the marks are read here only) */
    /* perm and the merge scratch (n words each) live in the spare block
     * when it is large enough, else in blocks of their own. */
    bool in_spare = spare->p && spare->bytes >= (size_t)n * 8;
    uint32_t *perm = in_spare ? spare->p : ts__malloc((size_t)n * sizeof *perm);
    uint32_t *start = ts__calloc((size_t)nt + 1, sizeof *start);
    if (!perm || !start) {
        if (!in_spare) ts__free(perm, (size_t)n * 4);
        ts__free(start, ((size_t)nt + 1) * 4);
        return TS_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) start[s->track[i] + 1]++;
    uint32_t kept = n;   /* rows after those of dropped tracks leave */
    for (uint32_t t = 0; t < nt; t++) {
        if (r->tracks[t].dropped) kept -= start[t + 1], start[t + 1] = 0;
        r->tracks[t].first_slice = start[t];
        r->tracks[t].n_slices = start[t + 1];
        start[t + 1] += start[t];
    }
    if (kept == n) {
        for (uint32_t i = 0; i < n; i++) perm[start[s->track[i]]++] = i;
    } else {
        for (uint32_t i = 0; i < n; i++)
            if (!r->tracks[s->track[i]].dropped) perm[start[s->track[i]]++] = i;
    }
    ts__free(start, ((size_t)nt + 1) * 4);

    sort_ctx ctx = {s->ts_ns, s->dur_ns};
    uint32_t *scratch = NULL;
    size_t scratch_n = 0;
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t *seg = perm + r->tracks[t].first_slice, m = r->tracks[t].n_slices;
        uint32_t i = 1;
        while (i < m && !row_after(&ctx, seg[i - 1], seg[i])) i++;
        if (i >= m) continue;
        if (!scratch) {
            scratch_n = in_spare ? 0 : n;   /* 0: borrowed, not freed here */
            scratch = in_spare ? perm + n : ts__malloc((size_t)n * sizeof *scratch);
            if (!scratch) { ts__free(perm, (size_t)n * 4); return TS_ENOMEM; }
        }
        sort_nearly_sorted(seg, m, scratch, &ctx);
    }
    if (scratch_n) ts__free(scratch, scratch_n * sizeof *scratch);
    bool identity = kept == n;
    for (uint32_t i = 0; i < n && identity; i++) identity = perm[i] == i;
    int rc = TS_OK;
    if (counts) {
#define DROP_COL(f) (ts__free(s->f, (size_t)s->cap * sizeof *s->f), s->f = NULL)
        DROP_COL(cat); DROP_COL(args); DROP_COL(n_args); DROP_COL(corr); DROP_COL(ext_id);
#undef DROP_COL
    }
    if (!identity) {
        col c[] = SLICE_COLS(s);
        void *gather = ts__malloc((size_t)s->cap * 8);
        if (!gather) rc = TS_ENOMEM;
        for (int k = 0; k < 12 && gather; k++)
            if (*c[k].p && c[k].p != (void **)&s->depth && c[k].p != (void **)&s->parent)
                permute(c[k].p, c[k].elem, perm, kept, &gather);
        ts__free(gather, (size_t)s->cap * 8);
        if (gather) s->n = kept;
    }
    for (uint32_t t = 0; t < nt; t++) r->tracks[t].dropped = false;
    r->dropped_tracks = false;
    if (!in_spare) ts__free(perm, (size_t)n * 4);
    return rc;
}

/* True when slice `top` ends at or before `ts`, so a slice starting at ts is
 * not inside it. */
static inline bool ts_end_le(const ts_slices *s, uint32_t top, int64_t ts)
{
    return s->ts_ns[top] + s->dur_ns[top] <= ts;
}

/* Depth and parent by one stack walk per track: O(n). */
static int nest_slices(ts_rank *r)
{
    ts_slices *s = &r->slices;
    uint32_t cap = 64, *stack = ts__malloc(cap * sizeof *stack);
    if (!stack) return TS_ENOMEM;
    for (uint32_t t = 0; t < r->n_tracks; t++) {
        uint32_t sp = 0, a = r->tracks[t].first_slice, b = a + r->tracks[t].n_slices;
        for (uint32_t i = a; i < b; i++) {
            int64_t ts = s->ts_ns[i], end = ts + s->dur_ns[i];
            while (sp && ts_end_le(s, stack[sp - 1], ts)) sp--;
            /* Timestamps rounded to whole microseconds (the older PyTorch
             * format) make a child end up to 1 us after its parent. That is
             * rounding, not overlap: nest it (durations stay as recorded). */
            bool rounding = false;
            if (sp) {
                int64_t pend = s->ts_ns[stack[sp - 1]] + s->dur_ns[stack[sp - 1]];
                rounding = end > pend && end - pend <= TS_ROUNDING_NS && ts < pend &&
                           end % TS_ROUNDING_NS == 0 && pend % TS_ROUNDING_NS == 0;
                if (rounding) r->n_rounding_overruns++;
            }
            if (!rounding && sp && end > s->ts_ns[stack[sp - 1]] + s->dur_ns[stack[sp - 1]]) {
                ts__rank_warn(r, TS_WARN_OVERLAP, "\"%s\" at %lld ns overlaps \"%s\" on the same track without nesting",
                              ts__rank_str(r, s->name[i]), (long long)ts, ts__rank_str(r, s->name[stack[sp - 1]]));
                while (sp && end > s->ts_ns[stack[sp - 1]] + s->dur_ns[stack[sp - 1]]) sp--;
            }
            s->parent[i] = sp ? stack[sp - 1] : TS_NONE32;
            s->depth[i] = (uint16_t)(sp < UINT16_MAX ? sp : UINT16_MAX);
            if (sp == cap) {
                uint32_t *ns = ts__realloc(stack, cap * sizeof *stack, 2 * cap * sizeof *stack);
                if (!ns) { ts__free(stack, cap * sizeof *stack); return TS_ENOMEM; }
                stack = ns;
                cap *= 2;
            }
            stack[sp++] = i;
        }
    }
    ts__free(stack, cap * sizeof *stack);
    return TS_OK;
}

/* ---- finish: flows ---- */

/* The slice on `track` that an endpoint at `ts` binds to: the deepest slice
 * containing ts (enclosing), or the first slice starting at or after ts. */
/* First row in [from, hi) with v[row] > ts, searched by galloping from
 * `from`: O(log distance), and the rows it touches are near the last answer,
 * so they are still cached. */
static uint32_t upper_bound_from(const int64_t *v, uint32_t from, uint32_t hi, int64_t ts)
{
    uint32_t a = from, b = from, step = 1;
    while (b < hi && v[b] <= ts) {
        a = b + 1;
        b = hi - b > step ? b + step : hi;
        step *= 2;
    }
    while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (v[m] <= ts) a = m + 1; else b = m;
    }
    return a;
}

/* cursor[track]: the answer of the previous query on that track. Queries
 * come in time order (bind_flows sorts the endpoints), so the first slice
 * starting after ts only moves forward and the search starts there instead
 * of a cold binary search over the whole track. */
static uint32_t bind_endpoint(const ts_rank *r, uint32_t *cursor, uint32_t track, int64_t ts, bool enclosing)
{
    const ts_slices *s = &r->slices;
    if (track >= r->n_tracks) return TS_NONE32;
    uint32_t lo = r->tracks[track].first_slice, hi = lo + r->tracks[track].n_slices;
    uint32_t a = upper_bound_from(s->ts_ns, cursor[track], hi, ts);   /* first slice with ts_ns > ts */
    cursor[track] = a;
    if (!enclosing) {
        /* binding "next slice": the first starting at ts, else after it */
        uint32_t first_at = a;
        while (first_at > lo && s->ts_ns[first_at - 1] == ts) first_at--;
        return first_at < hi ? first_at : TS_NONE32;
    }
    if (a == lo) return TS_NONE32;
    for (uint32_t c = a - 1; c != TS_NONE32; c = s->parent[c]) {
        if (ts < s->ts_ns[c] + s->dur_ns[c] || ts == s->ts_ns[c]) return c;
    }
    return TS_NONE32;
}

/* Rank of a flow phase at one timestamp: a start before a step before a finish. */
static unsigned phase_rank(char phase) { return phase == 't' ? 1 : phase == 'f' ? 2 : 0; }

/* Bytes of the work block order_flow_ends needs for n endpoints. */
static size_t flow_work_bytes(uint32_t n) { return (size_t)n * (sizeof(int64_t) + sizeof(uint32_t)); }

/* order[0..n): the rows of the flow endpoints in (ts, phase, row) order, the
 * order bind_flows pairs them in; the endpoints stay where they are. Why not
 * one sort of the whole array: 's' endpoints (CPU launch times) and 'f'
 * endpoints (GPU run times) interleave in a file, far from sorted, while the
 * endpoints of one track are nearly in order (nccl_data: 6 out of place among
 * 13,600). So: a counting sort of the rows by track, sort_nearly_sorted on
 * each track, then sort_runs merges the tracks (one ascending run each, so
 * log2(tracks) linear passes). work: flow_work_bytes(n), all of it written. */
static int order_flow_ends(const ts_rank *r, uint32_t *order, void *work)
{
    uint32_t n = r->n_flow_ends, nt = r->n_tracks;
    const ts_flow_end *e = r->flow_ends;
    int64_t *key = work, *second = key;
    uint32_t *scratch = (uint32_t *)(key + n);
    int64_t lo = e[0].ts_ns, hi = e[0].ts_ns;
    for (uint32_t i = 1; i < n; i++) {
        if (e[i].ts_ns < lo) lo = e[i].ts_ns;
        if (e[i].ts_ns > hi) hi = e[i].ts_ns;
    }
    /* One key per row when the phase fits in the two low bits beside the
     * time since the first endpoint (a span under 18 years); else the time
     * and the phase as the sort's two keys (sort_ctx's second key sorts
     * descending, hence the minus). */
    if ((uint64_t)hi - (uint64_t)lo < (1ULL << 61)) {
        for (uint32_t i = 0; i < n; i++)
            key[i] = (int64_t)(((uint64_t)e[i].ts_ns - (uint64_t)lo) << 2 | phase_rank(e[i].phase));
    } else {
        second = ts__malloc((size_t)n * sizeof *second);
        if (!second) return TS_ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
            key[i] = e[i].ts_ns;
            second[i] = -(int64_t)phase_rank(e[i].phase);
        }
    }
    /* Endpoints on no known track share the last bucket. */
    uint32_t *start = ts__calloc((size_t)nt + 2, sizeof *start);
    if (!start) {
        if (second != key) ts__free(second, (size_t)n * sizeof *second);
        return TS_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) start[(e[i].track < nt ? e[i].track : nt) + 1]++;
    for (uint32_t t = 0; t <= nt; t++) start[t + 1] += start[t];
    for (uint32_t i = 0; i < n; i++) order[start[e[i].track < nt ? e[i].track : nt]++] = i;
    sort_ctx ctx = {key, second};
    for (uint32_t t = 0, from = 0; t <= nt; from = start[t++])   /* start[t] is now bucket t's end */
        if (start[t] - from > 1) sort_nearly_sorted(order + from, start[t] - from, scratch, &ctx);
    sort_runs(order, n, scratch, &ctx);
    ts__free(start, ((size_t)nt + 2) * sizeof *start);
    if (second != key) ts__free(second, (size_t)n * sizeof *second);
    return TS_OK;
}

/* A numbered table (ts_flows.numbered) given its id, kind and cat columns. */
static bool flows_number_out(ts_flows *f)
{
    col c[] = { {(void **)&f->id, 8}, {(void **)&f->kind, 1}, {(void **)&f->cat, 4} };
    void *blk[3];
    for (int i = 0; i < 3; i++) {
        blk[i] = ts__malloc((size_t)f->cap * c[i].elem);
        if (!blk[i]) {
            while (i-- > 0) ts__free(blk[i], (size_t)f->cap * c[i].elem);
            return false;
        }
    }
    uint64_t *id = blk[0];
    uint8_t *kind = blk[1];
    uint32_t *cat = blk[2];
    for (uint32_t i = 0; i < f->n; i++) { id[i] = i; kind[i] = f->kind_all; cat[i] = f->cat_all; }
    f->id = id; f->kind = kind; f->cat = cat;
    f->numbered = false;
    return true;
}

static uint32_t add_flow(ts_rank *r, uint64_t id, uint32_t cat)
{
    ts_flows *f = &r->flows;
    if (f->numbered && f->n < f->cap && id == f->n && cat == f->cat_all) {
        r->flow_kind = f->kind_all, r->flow_kind_cat = cat, r->flow_kind_known = true;
        uint32_t i = f->n++;
        f->from[i] = f->to[i] = TS_NONE32;
        return i;
    }
    if (f->numbered && !flows_number_out(f)) return TS_NONE32;
    if (f->n == f->cap) {
        col c[] = FLOW_COLS(f);
        if (!grow_cols(r, c, 5, &f->cap, f->n + 1)) return TS_NONE32;
    }
    uint32_t i = f->n++;
    f->id[i] = id;
    f->cat[i] = cat;
    if (cat != r->flow_kind_cat || !r->flow_kind_known) {   /* readers add a million flows of one category */
        r->flow_kind = flow_kind_of(r, cat);
        r->flow_kind_cat = cat;
        r->flow_kind_known = true;
    }
    f->kind[i] = r->flow_kind;
    f->from[i] = f->to[i] = TS_NONE32;
    return i;
}

/* Kineto (1.x on A100, 2.x on H200 alike) writes an ac2g 'f' with no 's' on
 * every CUDA runtime call that launched no GPU work (cudaEventRecord,
 * cudaStreamIsCapturing, ...), at the call itself, with the call's own
 * correlation id: a mark, not a flow. Such an end is counted (the rank's
 * "ac2g_runtime_marks" metadata, shown by info) instead of warned about; an
 * 'f' without a start anywhere else is still an unbound flow. */
static bool runtime_mark(const ts_rank *r, const ts_flow_end *e, uint32_t slice)
{
    if (e->phase != 'f' || slice == TS_NONE32) return false;
    uint8_t k = r->slices.kind[slice];
    if (k != TS_KIND_CUDA_RUNTIME && k != TS_KIND_CUDA_DRIVER) return false;
    return r->tracks[r->slices.track[slice]].kind == TS_TRACK_THREAD && strcmp(ts__rank_str(r, e->cat), "ac2g") == 0;
}

static void note_runtime_marks(ts_rank *r, uint64_t n)
{
    if (n == 0) return;
    char v[96];
    snprintf(v, sizeof v, "%llu (ac2g ends on runtime calls that launched nothing; not flows)", (unsigned long long)n);
    ts__rank_add_meta_str(r, "ac2g_runtime_marks", v);
}

/* Pair endpoints by (category, id) in time order (order[], from
 * order_flow_ends): an 's' opens a flow, 't' moves it along, 'f' closes it.
 * Ids may be reused after a flow closes. */
static int bind_flows(ts_rank *r, const uint32_t *order)
{
    if (r->n_flow_ends == 0) return TS_OK;
    uint32_t *cursor = ts__malloc((size_t)(r->n_tracks ? r->n_tracks : 1) * sizeof *cursor);
    if (!cursor) return TS_ENOMEM;
    for (uint32_t t = 0; t < r->n_tracks; t++) cursor[t] = r->tracks[t].first_slice;
    ts_map64 open;
    ts__map64_init(&open);
    int rc = TS_OK;
    uint64_t marks = 0;
    for (uint32_t i = 0; i < r->n_flow_ends; i++) {
        const ts_flow_end *e = &r->flow_ends[order[i]];
        uint64_t key = ts__hash_u64(e->id ^ ((uint64_t)e->cat << 40)), row;
        if (key == UINT64_MAX) key = 0;
        uint32_t slice = bind_endpoint(r, cursor, e->track, e->ts_ns, e->bind_enclosing);
        bool have = ts__map64_get(&open, key, &row) && row != TS_NONE32;
        if (e->phase == 's') {
            uint32_t f = add_flow(r, e->id, e->cat);
            if (f == TS_NONE32 || ts__map64_put(&open, key, f)) { rc = TS_ENOMEM; break; }
            r->flows.from[f] = slice;
            if (slice == TS_NONE32)
                ts__rank_warn(r, TS_WARN_UNBOUND_FLOW, "flow %llu: start at %lld ns lies on no slice",
                              (unsigned long long)e->id, (long long)e->ts_ns);
        } else if (!have && runtime_mark(r, e, slice)) {
            marks++;
        } else if (!have) {
            ts__rank_warn(r, TS_WARN_UNBOUND_FLOW, "flow %llu: '%c' at %lld ns has no start",
                          (unsigned long long)e->id, e->phase, (long long)e->ts_ns);
        } else {
            r->flows.to[row] = slice;
            if (slice == TS_NONE32)
                ts__rank_warn(r, TS_WARN_UNBOUND_FLOW, "flow %llu: end at %lld ns lies on no slice",
                              (unsigned long long)e->id, (long long)e->ts_ns);
            if (e->phase == 'f' && ts__map64_put(&open, key, TS_NONE32)) { rc = TS_ENOMEM; break; }
        }
    }
    ts__map64_free(&open);
    ts__free(cursor, (size_t)(r->n_tracks ? r->n_tracks : 1) * sizeof *cursor);
    if (rc) return rc;
    note_runtime_marks(r, marks);
    ts__free(r->flow_ends, (size_t)r->cap_flow_ends * sizeof *r->flow_ends);
    r->flow_ends = NULL;
    r->n_flow_ends = r->cap_flow_ends = 0;
    return TS_OK;
}

/* ---- finish: iterations ---- */
static int cmp_iter(const void *a, const void *b)
{
    const ts_iteration *x = a, *y = b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

int ts__rank_find_iterations(ts_rank *r, const char *marker)
{
    const char *prefix = marker && *marker ? marker : "ProfilerStep#";
    size_t plen = strlen(prefix);
    const ts_slices *s = &r->slices;
    r->n_iterations = 0;
    /* Only the first host track that carries markers counts: Kineto repeats
     * ProfilerStep#N on GPU tracks as gpu_user_annotation. */
    uint32_t marker_track = TS_NONE32;
    /* Per string id: 0 = not looked at, 1 = a marker name, 2 = not. Names
     * repeat, so each distinct one is compared with the prefix once. */
    uint32_t n_ids = r->strings.n;
    uint8_t *is_marker = ts__calloc(n_ids ? n_ids : 1, 1);
    if (!is_marker) return TS_ENOMEM;
    for (uint32_t i = 0; i < s->n; i++) {
        if (ts__kind_on_gpu((ts_kind)s->kind[i])) continue;
        uint32_t id = s->name[i];
        if (id >= n_ids) continue;
        if (!is_marker[id]) is_marker[id] = strncmp(ts__rank_str(r, id), prefix, plen) == 0 ? 1 : 2;
        if (is_marker[id] != 1) continue;
        const char *nm = ts__rank_str(r, id);
        if (marker_track == TS_NONE32) marker_track = s->track[i];
        if (s->track[i] != marker_track) continue;
        const char *num = nm + plen;
        char *endp;
        long long step = strtoll(num, &endp, 10);
        if (endp == num) step = r->n_iterations;
        if (ts__grow((void **)&r->iterations, &r->cap_iterations, sizeof *r->iterations, (size_t)r->n_iterations + 1)) {
            ts__free(is_marker, n_ids ? n_ids : 1);
            return TS_ENOMEM;
        }
        ts_iteration *it = &r->iterations[r->n_iterations++];
        it->step = step;
        it->start_ns = s->ts_ns[i];
        it->end_ns = s->ts_ns[i] + s->dur_ns[i];
        it->slice = i;
    }
    ts__free(is_marker, n_ids ? n_ids : 1);
    if (r->n_iterations > 1) qsort(r->iterations, r->n_iterations, sizeof *r->iterations, cmp_iter);
    return TS_OK;
}

static int finish(ts_rank *r, bool counts, ts_error *err)
{
    int rc;
    if (r->oom || ts__strpool_oom(&r->strings)) goto oom;
    /* One work block serves the flow ordering, then the slice sort (see
     * spare_block): sized for the larger of the two. */
    uint32_t nf = r->n_flow_ends;
    size_t work_bytes = flow_work_bytes(nf) > (size_t)r->slices.n * 8 ? flow_work_bytes(nf) : (size_t)r->slices.n * 8;
    spare_block spare = {work_bytes ? ts__malloc(work_bytes) : NULL, work_bytes};
    uint32_t *order = nf ? ts__malloc((size_t)nf * sizeof *order) : NULL;
    rc = (work_bytes && !spare.p) || (nf && !order) ? TS_ENOMEM : TS_OK;
    if (!rc && nf) rc = order_flow_ends(r, order, spare.p);
    if (!rc) rc = sort_slices(r, &spare, counts);
    spare_free(&spare);
    if (!rc) rc = nest_slices(r);
    if (!rc) rc = bind_flows(r, order);
    ts__free(order, (size_t)nf * sizeof *order);
    if (rc || (rc = ts__rank_find_iterations(r, NULL))) goto oom;
    if (r->oom) goto oom;
    r->finished = true;
    return TS_OK;
oom:
    return ts__error(err, TS_ENOMEM, "%s: out of memory while building the trace model", r->path);
}

int ts__rank_finish(ts_rank *r, ts_error *err) { return finish(r, false, err); }
int ts__rank_finish_counts(ts_rank *r, ts_error *err) { return finish(r, true, err); }

int ts__rank_add_bound_flow(ts_rank *r, uint32_t from, uint32_t to, uint64_t id, uint32_t cat)
{
    uint32_t f = add_flow(r, id, cat);
    if (f == TS_NONE32) return TS_ENOMEM;
    r->flows.from[f] = from;
    r->flows.to[f] = to;
    return TS_OK;
}

/* ---- trace ---- */
static int cmp_rank(const void *a, const void *b)
{
    const ts_rank *x = *(ts_rank *const *)a, *y = *(ts_rank *const *)b;
    if (x->rank != y->rank) return (x->rank > y->rank) - (x->rank < y->rank);
    return x->path && y->path ? strcmp(x->path, y->path) : 0;   /* two claiming one rank: named as ingest names them */
}

/* The graph, its alignment, the critical path and replay add and subtract
 * times freely (a point plus a gap, a time plus a rank's offset). That stays
 * within int64 when every time lies within 2^62 ns of the clock's zero and
 * the whole trace within 2^59 ns (18 years): then offsets and gaps are below
 * 2^61 and any such sum below 2^63. Real traces span seconds to hours, on
 * clocks from process start or the epoch (2^60.6 ns now); times this far
 * apart are broken (a baseTimeNanoseconds near INT64_MAX), or traces of
 * unrelated clocks mixed. Checked here so every command takes one rule. */
#define TIME_ABS_LIMIT_NS  ((int64_t)1 << 62)
#define TIME_SPAN_LIMIT_NS ((int64_t)1 << 59)

static bool time_out_of_range(int64_t ts) { return ts <= -TIME_ABS_LIMIT_NS || ts >= TIME_ABS_LIMIT_NS; }

static int check_time_range(const ts_job *t, ts_error *err)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    uint32_t lo_rank = 0, hi_rank = 0;
    for (uint32_t r = 0; r < t->n_ranks; r++) {
        const ts_rank *rk = t->ranks[r];
        const ts_slices *sl = &rk->slices;
        for (uint32_t i = 0; i < sl->n; i++) {
            int64_t a = sl->ts_ns[i], b = a + sl->dur_ns[i];   /* within int64: the model's invariant */
            if (time_out_of_range(a) || time_out_of_range(b))
                return ts__error(err, TS_ERANGE, "%s: a slice at %lld ns (+%lld ns) lies past 2^62 ns (146 years) of "
                                 "its clock's zero: broken timestamps", rk->path, (long long)a,
                                 (long long)sl->dur_ns[i]);
            if (a < lo) { lo = a; lo_rank = r; }
            if (b > hi) { hi = b; hi_rank = r; }
        }
        for (uint32_t i = 0; i < rk->instants.n; i++)
            if (time_out_of_range(rk->instants.ts_ns[i]))
                return ts__error(err, TS_ERANGE, "%s: an instant at %lld ns lies past 2^62 ns (146 years) of its "
                                 "clock's zero: broken timestamps", rk->path, (long long)rk->instants.ts_ns[i]);
        for (uint32_t i = 0; i < rk->counters.n; i++)
            if (time_out_of_range(rk->counters.ts_ns[i]))
                return ts__error(err, TS_ERANGE, "%s: a counter at %lld ns lies past 2^62 ns (146 years) of its "
                                 "clock's zero: broken timestamps", rk->path, (long long)rk->counters.ts_ns[i]);
    }
    if (lo < hi && hi - lo >= TIME_SPAN_LIMIT_NS)
        return ts__error(err, TS_ERANGE, "events from %lld ns (%s) to %lld ns (%s) span %.0f years: broken timestamps, "
                         "or traces on unrelated clocks mixed", (long long)lo, t->ranks[lo_rank]->path, (long long)hi,
                         t->ranks[hi_rank]->path, (double)(hi - lo) / 3.15576e16);
    return TS_OK;
}

int ts__job_create(ts_rank **ranks, uint32_t n, ts_job **out, ts_error *err)
{
    *out = NULL;
    ts_job *t = ts__calloc(1, sizeof *t);
    if (t) t->ranks = ts__malloc((size_t)(n ? n : 1) * sizeof *t->ranks);
    if (!t || !t->ranks) {
        /* The trace owns the ranks whatever happens: free them here too. */
        for (uint32_t i = 0; i < n; i++) ts__rank_destroy(ranks[i]);
        if (t) ts__free(t, sizeof *t);
        return ts__error(err, TS_ENOMEM, "out of memory");
    }
    memcpy(t->ranks, ranks, (size_t)n * sizeof *ranks);
    t->n_ranks = n;
    qsort(t->ranks, n, sizeof *t->ranks, cmp_rank);
    for (uint32_t i = 1; i < n; i++) {
        if (t->ranks[i]->rank == t->ranks[i - 1]->rank) {
            int rc = ts__error(err, TS_EFORMAT, "%s: byte 0: claims rank %d, which %s already claims",
                               t->ranks[i]->path, t->ranks[i]->rank, t->ranks[i - 1]->path);
            ts_job_destroy(t);   /* the trace owns the ranks from here on */
            return rc;
        }
    }
    int rc = check_time_range(t, err);
    if (rc != TS_OK) {
        ts_job_destroy(t);
        return rc;
    }
    *out = t;
    return TS_OK;
}

void ts_job_destroy(ts_job *t)
{
    if (!t) return;
    for (uint32_t i = 0; i < t->n_ranks; i++) ts__rank_destroy(t->ranks[i]);
    ts__free(t->ranks, (size_t)(t->n_ranks ? t->n_ranks : 1) * sizeof *t->ranks);
    ts__free(t, sizeof *t);
}

uint32_t ts_job_n_ranks(const ts_job *t) { return t ? t->n_ranks : 0; }
const ts_rank *ts_job_borrow_rank(const ts_job *t, uint32_t i) { return t && i < t->n_ranks ? t->ranks[i] : NULL; }
int32_t  ts_rank_number(const ts_rank *r) { return r->rank; }
const char *ts_rank_path(const ts_rank *r) { return r->path; }
uint32_t ts_rank_n_tracks(const ts_rank *r) { return r->n_tracks; }
uint32_t ts_rank_n_slices(const ts_rank *r) { return r->slices.n; }
uint32_t ts_rank_n_instants(const ts_rank *r) { return r->instants.n; }
uint32_t ts_rank_n_counters(const ts_rank *r) { return r->counters.n; }
uint32_t ts_rank_n_flows(const ts_rank *r) { return r->flows.n; }
uint32_t ts_rank_n_iterations(const ts_rank *r) { return r->n_iterations; }
void ts_rank_read_counts(const ts_rank *r, uint32_t out[4])
{
    if (r->summary) { memcpy(out, r->read_rows, sizeof r->read_rows); return; }
    out[0] = r->slices.n;
    out[1] = r->instants.n;
    out[2] = r->counters.n;
    out[3] = r->flows.n + r->flows.n_counted;
}
uint64_t ts_rank_n_events_read(const ts_rank *r) { return r->n_events_read; }
uint64_t ts_rank_n_warnings(const ts_rank *r)
{
    uint64_t n = 0;
    for (int k = 0; k < TS_WARN_COUNT; k++) n += r->warn_count[k];
    return n;
}

const char *ts_rank_meta_str(const ts_rank *r, const char *key)
{
    ts_arg_type ty;
    uint64_t v;
    return ts__meta_arg(r, key, &ty, &v) && ty == TS_ARG_STR ? ts__rank_str(r, (uint32_t)v) : NULL;
}

const char *ts_rank_meta_key(const ts_rank *r, uint32_t i)
{
    for (uint32_t k = 0, seen = 0; r->meta_args != TS_NONE32 && k < r->n_meta_args; k++) {
        uint32_t row = r->meta_args + k;
        if (r->args.type[row] != TS_ARG_STR) continue;
        if (seen++ == i) return ts__rank_str(r, r->args.key[row]);
    }
    return NULL;
}

/* ---- read helpers ---- */
static bool find_arg(const ts_rank *r, uint32_t first, uint32_t n, const char *key, ts_arg_type *type, uint64_t *val)
{
    if (first == TS_NONE32) return false;
    uint32_t kid = ts__str_find(&r->strings, key, strlen(key));
    if (!kid) return false;
    for (uint32_t i = first; i < first + n; i++) {
        if (r->args.key[i] == kid) {
            if (type) *type = (ts_arg_type)r->args.type[i];
            if (val) *val = r->args.val[i];
            return true;
        }
    }
    return false;
}

bool ts__slice_arg(const ts_rank *r, uint32_t slice, const char *key, ts_arg_type *type, uint64_t *val)
{
    if (find_arg(r, r->slices.args[slice], r->slices.n_args[slice], key, type, val)) return true;
    /* Readers keep these two only in their columns (see model.h). */
    int64_t id = !r->slices.corr ? -1 : !strcmp(key, "correlation") ? r->slices.corr[slice] :
                 !strcmp(key, "External id") && r->slices.ext_id ? r->slices.ext_id[slice] : -1;
    if (id < 0) return false;
    if (type) *type = TS_ARG_INT;
    if (val) *val = (uint64_t)id;
    return true;
}

bool ts__meta_arg(const ts_rank *r, const char *key, ts_arg_type *type, uint64_t *val)
{
    return find_arg(r, r->meta_args, r->n_meta_args, key, type, val);
}

bool ts__slice_arg_i64(const ts_rank *r, uint32_t slice, const char *key, int64_t *out)
{
    ts_arg_type t;
    uint64_t v;
    return ts__slice_arg(r, slice, key, &t, &v) && ts__arg_as_i64(t, v, out);
}

bool ts__slice_arg_double(const ts_rank *r, uint32_t slice, const char *key, double *out)
{
    ts_arg_type t;
    uint64_t v;
    if (!ts__slice_arg(r, slice, key, &t, &v)) return false;
    if (t == TS_ARG_STR || t == TS_ARG_JSON || t == TS_ARG_NULL) return false;
    *out = ts__arg_as_double(t, v);
    return true;
}

const char *ts__slice_arg_str(const ts_rank *r, uint32_t slice, const char *key)
{
    ts_arg_type t;
    uint64_t v;
    if (!ts__slice_arg(r, slice, key, &t, &v) || (t != TS_ARG_STR && t != TS_ARG_JSON)) return NULL;
    return ts__rank_str(r, (uint32_t)v);
}

bool ts__rank_span(const ts_rank *r, int64_t *start_ns, int64_t *end_ns)
{
    if (r->n_iterations == 0) return false;
    *start_ns = r->iterations[0].start_ns;
    *end_ns = r->iterations[0].end_ns;
    for (uint32_t i = 1; i < r->n_iterations; i++)
        if (r->iterations[i].end_ns > *end_ns) *end_ns = r->iterations[i].end_ns;
    return true;
}

bool ts__horovod_timeline(const ts_rank *r)
{
    static const char *const only_horovod[] = {
        "NEGOTIATE_ALLREDUCE", "NEGOTIATE_ALLGATHER", "NEGOTIATE_BROADCAST", "NEGOTIATE_ALLTOALL",
        "WAIT_FOR_DATA", "WAIT_FOR_OTHER_TENSOR_DATA", "MEMCPY_IN_FUSION_BUFFER", "MEMCPY_OUT_FUSION_BUFFER",
    };
    for (size_t i = 0; i < sizeof only_horovod / sizeof only_horovod[0]; i++)
        if (ts__str_find(&r->strings, only_horovod[i], strlen(only_horovod[i]))) return true;
    return false;
}

bool ts__horovod_comm_name(const char *name)
{
    static const char *const libs[] = {"NCCL_", "MPI_", "GLOO_", "CCL_", "DDL_"};
    static const char *const ops[] = {"ALLREDUCE", "REDUCESCATTER", "REDUCE", "ALLGATHER", "BCAST", "ALLTOALL",
                                      "CROSS_ALLREDUCE", "ADASUM_ALLREDUCE"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        size_t n = strlen(libs[i]);
        if (strncmp(name, libs[i], n)) continue;
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            if (!strcmp(name + n, ops[k])) return true;
    }
    return false;
}

uint64_t ts__rank_python_as_ops(ts_rank *r, uint32_t max_depth)
{
    uint64_t n_py = 0, n = 0;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        if (r->slices.kind[s] == TS_KIND_CPU_OP) return 0;   /* the rank has CPU ops: they are its ops */
        n_py += r->slices.kind[s] == TS_KIND_PYTHON_FUNCTION;
    }
    if (!n_py) return 0;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        if (r->slices.kind[s] != TS_KIND_PYTHON_FUNCTION) continue;
        uint32_t depth = 1;
        for (uint32_t p = r->slices.parent[s]; p != TS_NONE32 && (!max_depth || depth <= max_depth); p = r->slices.parent[p])
            depth += r->slices.kind[p] == TS_KIND_PYTHON_FUNCTION || r->slices.kind[p] == TS_KIND_CPU_OP;
        if (max_depth && depth > max_depth) continue;
        r->slices.kind[s] = TS_KIND_CPU_OP;
        n++;
    }
    ts__rank_warn(r, TS_WARN_OTHER, "%s: no CPU ops: its %llu python_function ranges%s are analysed as CPU ops "
                  "(of %llu; --python-depth N keeps the outermost N calls)", r->path, (unsigned long long)n,
                  max_depth ? " within the depth asked" : "", (unsigned long long)n_py);
    return n;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Keep the steps of v[0..*n) that rank r also has (both sorted). */
static void intersect_steps(int64_t *v, uint32_t *n, int64_t *scratch, const ts_rank *r)
{
    for (uint32_t i = 0; i < r->n_iterations; i++) scratch[i] = r->iterations[i].step;
    qsort(scratch, r->n_iterations, sizeof *scratch, cmp_i64);
    uint32_t k = 0, j = 0;
    for (uint32_t i = 0; i < *n; i++) {
        while (j < r->n_iterations && scratch[j] < v[i]) j++;
        if (j < r->n_iterations && scratch[j] == v[i]) v[k++] = v[i];
    }
    *n = k;
}

/* O(ranks x iterations log iterations). */
int ts__window_sel_init(ts_window_sel *sel, const ts_job *t)
{
    sel->complete = NULL;
    sel->n_complete = 0;
    sel->marked = false;
    uint32_t most = 0, first = TS_NONE32;
    for (uint32_t i = 0; i < t->n_ranks; i++) {
        uint32_t n = t->ranks[i]->n_iterations;
        if (n && first == TS_NONE32) first = i;
        if (n > most) most = n;
    }
    if (first == TS_NONE32) return TS_OK;
    sel->marked = true;
    int64_t *scratch = ts__malloc((size_t)most * sizeof *scratch);
    sel->complete = ts__malloc((size_t)most * sizeof *sel->complete);
    if (!scratch || !sel->complete) {
        ts__free(scratch, (size_t)most * sizeof *scratch);
        ts__free(sel->complete, (size_t)most * sizeof *sel->complete);
        sel->complete = NULL;
        return TS_ENOMEM;
    }
    const ts_rank *r0 = t->ranks[first];
    for (uint32_t i = 0; i < r0->n_iterations; i++) sel->complete[i] = r0->iterations[i].step;
    qsort(sel->complete, r0->n_iterations, sizeof *sel->complete, cmp_i64);
    sel->n_complete = r0->n_iterations;
    for (uint32_t i = first + 1; i < t->n_ranks; i++)
        if (t->ranks[i]->n_iterations) intersect_steps(sel->complete, &sel->n_complete, scratch, t->ranks[i]);
    ts__free(scratch, (size_t)most * sizeof *scratch);
    sel->cap_complete = most;
    return TS_OK;
}

void ts__window_sel_free(ts_window_sel *sel)
{
    ts__free(sel->complete, (size_t)sel->cap_complete * sizeof *sel->complete);
    sel->complete = NULL;
    sel->n_complete = sel->cap_complete = 0;
}

bool ts__window_has_step(const ts_window_sel *sel, int64_t step)
{
    if (sel->steps && (step < sel->first || step > sel->last)) return false;
    return sel->complete && bsearch(&step, sel->complete, sel->n_complete, sizeof step, cmp_i64);
}

/* Integer arg `key` of instant i; false when absent or not a number. */
bool ts__instant_arg_i64(const ts_rank *r, uint32_t i, const char *key, int64_t *out)
{
    uint32_t a = r->instants.args[i];
    if (a == TS_NONE32) return false;
    for (uint32_t k = a; k < a + r->instants.n_args[i]; k++) {
        if (strcmp(ts__rank_str(r, r->args.key[k]), key)) continue;
        ts_arg_type t = (ts_arg_type)r->args.type[k];
        return t != TS_ARG_BOOL && ts__arg_as_i64(t, r->args.val[k], out);
    }
    return false;
}
