/* breakdown.c - where each rank's time went, with Holistic Trace Analysis'
 * definitions (HTA, facebookresearch/HolisticTraceAnalysis, hta/ as of 0.6.1;
 * its analyses are as in v0.2, its parser rounds times since):
 *
 *   GPU op       an event with a "stream" arg: kernel, gpu_memcpy, gpu_memset,
 *                and cuda_sync events on a stream (gpu_user_annotation has
 *                none, so it never counts).
 *   times        common/trace_parser.py (HTA 0.6.1; after
 *                PyTorch PR 122425): when a Chrome-JSON trace's "ts" is finer than
 *                a microsecond (float "ts"), every event's start is rounded up
 *                and its end (ts + dur) down to whole microseconds of the
 *                file's own clock, dur = end - start (an op under 1 us that
 *                crosses no microsecond boundary gets -1 us, which HTA keeps).
 *                Every section below works on those times; traces on a
 *                whole-microsecond grid are unchanged. (HTA v0.2 used the
 *                exact times: nccl_data's idle was 336,420 us there, 338,781
 *                in 0.6.1.)
 *   filter       common/trace.py _filter_irrelevant_gpu_kernels: when the trace
 *                has two or more ProfilerStep annotations, keep only GPU ops
 *                whose launching CPU event (same correlation id) starts before
 *                the start of the last ProfilerStep, so the span covers
 *                complete iterations. (A GPU op without a correlation id is
 *                kept: HTA's merge pairs its -1 with every uncorrelated CPU
 *                event.)
 *   temporal     analyzers/breakdown_analysis.py get_temporal_breakdown:
 *                span = end of the last merged GPU interval - start of the
 *                first; idle = span - union of all GPU ops; compute = union of
 *                COMPUTATION kernels; non-compute = span - compute - idle.
 *   kernel type  utils.py get_kernel_type by name (classify.c); the time each
 *                combination of types runs is _get_gpu_kernel_type_time's sweep.
 *   overlap      communication_analysis.py get_comm_comp_overlap: |comm union
 *                intersected with comp union| / |comm union|.
 *   idle/stream  breakdown_analysis.py _analyze_idle_time_for_stream: the gap
 *                before each op (its start - previous op's end on the stream)
 *                is host wait when its launching runtime call started after the
 *                previous op ended, else kernel wait when shorter than
 *                consecutive_kernel_delay, else other.
 *   queue        after trace_counters.py _get_queue_length_time_series_for_rank,
 *                summarised over the time-series points as pandas describe():
 *                +1 when a runtime call launches an op on the stream, -1 when
 *                that op finishes, so the length is the ops launched and not
 *                yet finished. (HTA counts only cudaLaunchKernel/MemcpyAsync/
 *                MemsetAsync launches but decrements at every op's start, so
 *                its series drifts below zero on traces with
 *                cudaLaunchKernelExC or NCCL launches.)
 *   launch       cuda_kernel_analysis.py cuda_kernel_launch_stats pairs runtime
 *                call and GPU op by correlation; here launch delay = op start -
 *                call start (HTA v0.2 writes ts_gpu - ts_cpu + dur_cpu), over
 *                every correlated runtime/driver call, not only three names.
 * CPU-only ranks get the same per thread over the iteration window: busy =
 * union of slices, communication = union of collective slices, idle = rest.
 * Cost: O(n log n) per rank in the number of GPU ops; O(n) scans of slices.
 */
#include "analyze/analyze_int.h"

#include <math.h>
#include <stdlib.h>

/* A rank's GPU ops after HTA's filter, with their launching CPU events. */
typedef struct gpu_view {
    uint32_t *ops;        /* kept GPU op slice rows, in slice (track, time) order */
    uint32_t  n_ops, cap_ops;
    ts_map64  launcher;   /* correlation id -> CPU slice row of the launching call */
    bool      filtered;   /* HTA's iteration filter applied */
    bool      us_grid;    /* HTA's whole-microsecond times apply (see "times" above): the rank was
                             read from Chrome JSON with fractional "ts" (HTA reads only that) */
    int64_t   base_ns;    /* the rank's baseTimeNanoseconds: the grid is the file's own microseconds */
    ts_names  names;      /* kernel type of each name, computed once */
} gpu_view;

/* Floor and ceiling of t on the microsecond grid that starts at base; t
 * itself where the grid point would lie outside int64 (fuzz_analyze, 26 Nov:
 * a slice ending at INT64_MAX - 807 overflowed the ceiling). */
static int64_t us_floor(int64_t t, int64_t base)
{
    int64_t x, r;
    if (__builtin_sub_overflow(t, base, &x)) return t;
    int64_t q = x / 1000 - (x % 1000 < 0);
    return __builtin_add_overflow(base, q * 1000, &r) ? t : r;
}
static int64_t us_ceil(int64_t t, int64_t base)
{
    int64_t f = us_floor(t, base), r;
    return f == t || __builtin_add_overflow(f, 1000, &r) ? t : r;
}

/* Start, end and duration of slice s as HTA 0.6.1 sees them. */
static int64_t hta_ts(const ts_rank *r, const gpu_view *g, uint32_t s)
{
    return g->us_grid ? us_ceil(r->slices.ts_ns[s], g->base_ns) : r->slices.ts_ns[s];
}
static int64_t hta_end(const ts_rank *r, const gpu_view *g, uint32_t s)
{
    return g->us_grid ? us_floor(ts__slice_end(r, s), g->base_ns) : ts__slice_end(r, s);
}
static int64_t hta_dur(const ts_rank *r, const gpu_view *g, uint32_t s) { return hta_end(r, g, s) - hta_ts(r, g, s); }


static ts_kernel_type kernel_type(const ts_rank *r, gpu_view *g, uint32_t s)
{
    return ts__names_kernel_type(&g->names, r, r->slices.name[s]);
}

/* Element counts the per-rank arrays were allocated with (n_* may be fewer). */
typedef struct rank_caps { uint32_t streams, kernels, membw, threads; } rank_caps;

typedef struct bd_impl {
    ts_breakdown pub;     /* first: a ts_breakdown* is a bd_impl* */
    uint32_t     cap_ranks;
    rank_caps   *caps;    /* cap_ranks entries */
} bd_impl;

static uint32_t launcher_of(const ts_rank *r, const gpu_view *g, uint32_t op)
{
    uint64_t v;
    if (r->slices.corr[op] < 0 || !ts__map64_get(&g->launcher, (uint64_t)r->slices.corr[op], &v)) return TS_NONE32;
    return (uint32_t)v;
}

/* Start of the last ProfilerStep when there are two or more, else INT64_MAX.
 * HTA looks at every non-GPU event named *ProfilerStep*, the GPU-timeline
 * copies (gpu_user_annotation) included. */
static int64_t filter_cutoff(const ts_rank *r, const gpu_view *g)
{
    if (r->n_iterations < 2) return INT64_MAX;
    int64_t last = INT64_MIN;
    for (uint32_t s = 0; s < r->slices.n; s++)
        if (!ts__is_gpu_op(r, s) && hta_ts(r, g, s) > last &&
            strstr(ts__rank_str(r, r->slices.name[s]), "ProfilerStep"))
            last = hta_ts(r, g, s);
    return last;
}

/* win: keep only ops launched in [win[0], win[1]) (an asked iteration
 * range), NULL = HTA's filter. */
static int gpu_view_build(const ts_rank *r, const int64_t *win, gpu_view *g)
{
    memset(g, 0, sizeof *g);
    ts__map64_init(&g->launcher);
    g->us_grid = r->us_fractions;
    g->base_ns = r->base_time_ns;
    if (ts__names_init(&g->names, r)) return TS_ENOMEM;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        if (r->slices.corr[s] < 0 || ts__kind_on_gpu((ts_kind)r->slices.kind[s]) || ts__is_gpu_op(r, s)) continue;
        if (!ts__map64_get(&g->launcher, (uint64_t)r->slices.corr[s], NULL) &&
            ts__map64_put(&g->launcher, (uint64_t)r->slices.corr[s], s))
            return TS_ENOMEM;
    }
    int64_t cutoff = win ? INT64_MAX : filter_cutoff(r, g);
    g->filtered = win || cutoff != INT64_MAX;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        if (!ts__is_gpu_op(r, s)) continue;
        uint32_t l = launcher_of(r, g, s);
        if (win && (l == TS_NONE32 || r->slices.ts_ns[l] < win[0] || r->slices.ts_ns[l] >= win[1])) continue;
        if (!win && g->filtered && r->slices.corr[s] >= 0 && (l == TS_NONE32 || hta_ts(r, g, l) >= cutoff)) continue;
        if (g->n_ops == g->cap_ops && ts__grow((void **)&g->ops, &g->cap_ops, sizeof *g->ops, (size_t)g->n_ops + 1))
            return TS_ENOMEM;
        g->ops[g->n_ops++] = s;
    }
    return TS_OK;
}

static void gpu_view_free(gpu_view *g)
{
    ts__free(g->ops, (size_t)g->cap_ops * sizeof *g->ops);
    ts__map64_free(&g->launcher);
    ts__names_free(&g->names);
}

/* ---- temporal and kernel-type breakdown ---- */
static int temporal(const ts_rank *r, gpu_view *g, ts_breakdown_rank *out)
{
    ts_ival *v[TS_KT_COUNT + 1] = {0};
    uint32_t n[TS_KT_COUNT + 1] = {0}, cap[TS_KT_COUNT + 1] = {0};
    int rc = TS_ENOMEM;
    for (uint32_t i = 0; i < g->n_ops; i++) {
        uint32_t s = g->ops[i];
        ts_kernel_type kt = kernel_type(r, g, s);
        int64_t a = hta_ts(r, g, s), b = hta_end(r, g, s);
        out->type_total_ns[kt] += b - a;
        if (!ts__ival_push(&v[kt], &n[kt], &cap[kt], a, b) || !ts__ival_push(&v[TS_KT_COUNT], &n[TS_KT_COUNT], &cap[TS_KT_COUNT], a, b))
            goto done;
    }
    for (int k = 0; k <= TS_KT_COUNT; k++) n[k] = ts__ival_merge(v[k], n[k]);
    const ts_ival *all = v[TS_KT_COUNT];
    uint32_t n_all = n[TS_KT_COUNT];
    out->span_ns = n_all ? all[n_all - 1].end_ns - all[0].start_ns : 0;
    int64_t busy = ts__ival_total(all, n_all);
    out->idle_ns = out->span_ns - busy;
    out->compute_ns = ts__ival_total(v[TS_KT_COMPUTATION], n[TS_KT_COMPUTATION]);
    out->non_compute_ns = out->span_ns - out->compute_ns - out->idle_ns;
    /* bit 0 = COMPUTATION, bit 1 = COMMUNICATION, bit 2 = MEMORY: the enum order */
    const ts_ival *lists[TS_KT_COUNT] = {v[0], v[1], v[2]};
    if ((rc = ts__ival_sweep(lists, n, TS_KT_COUNT, out->type_ns))) goto done;
    out->type_ns[0] = 0;
    out->comm_ns = out->type_ns[2] + out->type_ns[6];
    out->memory_ns = out->type_ns[4];
    int64_t comm = ts__ival_total(v[TS_KT_COMMUNICATION], n[TS_KT_COMMUNICATION]);
    out->comm_comp_overlap_pct = comm > 0
        ? 100.0 * (double)ts__ival_overlap(v[TS_KT_COMMUNICATION], n[TS_KT_COMMUNICATION],
                                           v[TS_KT_COMPUTATION], n[TS_KT_COMPUTATION]) / (double)comm
        : -1;
    rc = TS_OK;
done:
    for (int k = 0; k <= TS_KT_COUNT; k++) ts__ival_free(v[k], cap[k]);
    return rc;
}

/* ---- per-kernel-name shares ---- */
static int cmp_share(const void *a, const void *b)
{
    const ts_kernel_share *x = a, *y = b;
    if (x->type != y->type) return x->type < y->type ? -1 : 1;
    if (x->total_ns != y->total_ns) return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* One kernel name's share from its sorted durations. */
static ts_kernel_share make_share(const ts_rank *r, const ts_breakdown_rank *br, uint32_t name, ts_kernel_type type,
                                  const int64_t *durs, uint32_t n)
{
    ts_kernel_share k = {.name = ts__rank_str(r, name), .type = type, .count = n};
    ts_sample smp = ts__sample_sorted(durs, n);
    k.total_ns = smp.total;
    k.min_ns = smp.min;
    k.max_ns = smp.max;
    k.mean_ns = smp.mean;
    k.stddev_ns = smp.stddev;
    int64_t type_total = br->type_total_ns[k.type];
    k.pct_of_type = type_total > 0 ? 100.0 * (double)k.total_ns / (double)type_total : 0;
    return k;
}

/* Fold share b into the "others" share a: counts and totals add; the
 * stddev pools the groups' sums of squared deviations (Chan et al.). */
static void fold_share(ts_kernel_share *a, const ts_kernel_share *b)
{
    double n1 = (double)a->count, n2 = (double)b->count, n = n1 + n2;
    double mean = ((double)a->total_ns + (double)b->total_ns) / n;
    double m2 = a->stddev_ns * a->stddev_ns * (n1 > 1 ? n1 - 1 : 0) + b->stddev_ns * b->stddev_ns * (n2 > 1 ? n2 - 1 : 0) +
                n1 * (a->mean_ns - mean) * (a->mean_ns - mean) + n2 * (b->mean_ns - mean) * (b->mean_ns - mean);
    a->count += b->count;
    a->total_ns += b->total_ns;
    if (b->min_ns < a->min_ns) a->min_ns = b->min_ns;
    if (b->max_ns > a->max_ns) a->max_ns = b->max_ns;
    a->mean_ns = mean;
    a->stddev_ns = n > 1 ? sqrt(m2 / (n - 1)) : 0;
    a->pct_of_type += b->pct_of_type;
}

/* Keep the `top` largest names of each type and fold the rest into one
 * "others" row per type (after HTA's _aggr_gpu_kernel_time, which names its
 * remainder "others" too), so each type's shares still add up to 100 %. */
static void keep_top(ts_breakdown_rank *out, uint32_t top)
{
    uint32_t kept = 0, in_type = 0;
    for (uint32_t i = 0; i < out->n_kernels; i++) {
        in_type = i > 0 && out->kernels[i].type == out->kernels[i - 1].type ? in_type + 1 : 0;
        if (in_type < top) {
            out->kernels[kept++] = out->kernels[i];
        } else if (in_type == top) {
            out->kernels[kept] = out->kernels[i];
            out->kernels[kept++].name = "others";
        } else {
            fold_share(&out->kernels[kept - 1], &out->kernels[i]);
        }
    }
    out->n_kernels = kept;
}

/* Kernels grouped by (type, name) with ts__group_durations, one share each. */
static int kernel_shares(const ts_rank *r, gpu_view *g, uint32_t top, ts_breakdown_rank *out, rank_caps *caps)
{
    uint32_t n = g->n_ops, width = r->strings.n ? r->strings.n : 1;
    caps->kernels = n ? n : 1;
    uint32_t *key = ts__malloc((size_t)(n ? n : 1) * sizeof *key);
    int64_t *dur = ts__malloc((size_t)(n ? n : 1) * 2 * sizeof *dur);   /* durations, then grouped */
    ts_dgroups dg = {0};
    out->kernels = ts__calloc(n ? n : 1, sizeof *out->kernels);
    int rc = TS_ENOMEM;
    if (!key || !dur || !out->kernels) goto done;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = g->ops[i];
        key[i] = (uint32_t)kernel_type(r, g, s) * width + r->slices.name[s];
        dur[i] = hta_dur(r, g, s);
    }
    int64_t *grouped = dur + (n ? n : 1);
    if ((rc = ts__group_durations(key, dur, n, TS_KT_COUNT * width, grouped, &dg))) goto done;
    for (uint32_t k = 0; k < dg.n; k++)
        out->kernels[out->n_kernels++] = make_share(r, out, dg.v[k].key % width, (ts_kernel_type)(dg.v[k].key / width),
                                                    grouped + dg.v[k].first, dg.v[k].n);
    qsort(out->kernels, out->n_kernels, sizeof *out->kernels, cmp_share);
    if (top) keep_top(out, top);
done:
    ts__free(dg.v, (size_t)dg.cap * sizeof *dg.v);
    ts__free(key, (size_t)(n ? n : 1) * sizeof *key);
    ts__free(dur, (size_t)(n ? n : 1) * 2 * sizeof *dur);
    return rc;
}

/* ---- per stream: idle categories and queue length ---- */
typedef struct qev { int64_t ts_ns; int delta; } qev;

/* Queue-length summary of one stream's ops [ops, ops + n). */
static int queue_length(const ts_rank *r, const gpu_view *g, const uint32_t *ops, uint32_t n, ts_stream_breakdown *sb)
{
    _Static_assert(sizeof(qev) == 16, "ts__sort_rec16 records");
    size_t cap = 4 * (size_t)n + 1;   /* enqueues, dequeues, and the sort's scratch */
    qev *e = ts__malloc(cap * sizeof *e);
    if (!e) return TS_ENOMEM;
    /* Enqueues first, then dequeues (gathered at e + 2n meanwhile): the
     * stable sort by time then puts an enqueue before a dequeue at the same
     * time. */
    uint32_t n_enq = 0;
    qev *deq = e + 2 * (size_t)n;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t l = launcher_of(r, g, ops[i]);
        if (l == TS_NONE32) continue;   /* never enqueued as far as the trace shows */
        deq[n_enq] = (qev){hta_end(r, g, ops[i]), -1};
        e[n_enq++] = (qev){hta_ts(r, g, l), +1};
    }
    memcpy(e + n_enq, deq, (size_t)n_enq * sizeof *e);
    uint32_t m = 2 * n_enq;
    ts__sort_rec16(e, m, 0, e + m);
    int64_t q = 0, sum = 0;
    sb->queue_max = m ? INT64_MIN : 0;
    for (uint32_t i = 0; i < m; i++) {
        q += e[i].delta;
        sum += q;
        if (q > sb->queue_max) sb->queue_max = q;
    }
    sb->queue_points = m;
    sb->queue_mean = m ? (double)sum / (double)m : 0;
    ts__free(e, cap * sizeof *e);
    return TS_OK;
}

static void idle_categories(const ts_rank *r, const gpu_view *g, const uint32_t *ops, uint32_t n,
                            int64_t delay_ns, ts_stream_breakdown *sb)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = ops[i];
        sb->busy_ns += hta_dur(r, g, s);
        if (i == 0) continue;   /* HTA: the first op's gap is NaN and drops out of the sums */
        int64_t prev_end = hta_end(r, g, ops[i - 1]);
        int64_t gap = hta_ts(r, g, s) - prev_end;
        uint32_t l = launcher_of(r, g, s);
        if (l != TS_NONE32 && hta_ts(r, g, l) > prev_end) sb->host_wait_ns += gap;
        else if (gap < delay_ns) sb->kernel_wait_ns += gap;
        else sb->other_wait_ns += gap;
    }
}

/* Kept ops are in slice order, i.e. grouped by track and sorted by time, so
 * each stream is one contiguous run of g->ops. */
static int per_stream(const ts_rank *r, const gpu_view *g, int64_t delay_ns, ts_breakdown_rank *out, rank_caps *caps)
{
    uint32_t n_streams = 0;
    for (uint32_t i = 0; i < g->n_ops; i++)
        if (i == 0 || r->slices.track[g->ops[i]] != r->slices.track[g->ops[i - 1]]) n_streams++;
    caps->streams = n_streams ? n_streams : 1;
    out->streams = ts__calloc(caps->streams, sizeof *out->streams);
    if (!out->streams) return TS_ENOMEM;
    for (uint32_t i = 0, j; i < g->n_ops; i = j) {
        uint32_t track = r->slices.track[g->ops[i]];
        for (j = i + 1; j < g->n_ops && r->slices.track[g->ops[j]] == track; j++) {}
        ts_stream_breakdown *sb = &out->streams[out->n_streams++];
        sb->device = r->tracks[track].device;
        sb->stream = r->tracks[track].stream;
        if (r->tracks[track].kind != TS_TRACK_GPU_STREAM) {   /* e.g. Context Sync on tid -1 */
            int64_t v;
            if (ts__slice_arg_i64(r, g->ops[i], "stream", &v)) sb->stream = v;
            if (ts__slice_arg_i64(r, g->ops[i], "device", &v)) sb->device = (int32_t)v;
        }
        sb->n_ops = j - i;
        idle_categories(r, g, &g->ops[i], j - i, delay_ns, sb);
        if (queue_length(r, g, &g->ops[i], j - i, sb)) return TS_ENOMEM;
    }
    return TS_OK;
}

/* ---- launch statistics ---- */
/* HTA cuda_kernel_launch_stats' default outlier cutoffs (50 us, 100 us). */
#define RUNTIME_CUTOFF_NS      50000
#define LAUNCH_DELAY_CUTOFF_NS 100000

static int launch_stats(const ts_rank *r, const gpu_view *g, ts_breakdown_rank *out)
{
    int64_t *delay = ts__malloc((size_t)(g->n_ops ? g->n_ops : 1) * 2 * sizeof *delay);   /* + sort scratch */
    if (!delay) return TS_ENOMEM;
    uint64_t n = 0;
    double cpu_sum = 0, gpu_sum = 0;
    for (uint32_t i = 0; i < g->n_ops; i++) {
        uint32_t s = g->ops[i], l = launcher_of(r, g, s);
        if (l == TS_NONE32) continue;
        int64_t cpu_dur = hta_dur(r, g, l), gpu_dur = hta_dur(r, g, s);
        delay[n++] = hta_ts(r, g, s) - hta_ts(r, g, l);
        cpu_sum += (double)cpu_dur;
        gpu_sum += (double)gpu_dur;
        if (gpu_dur < cpu_dur) out->n_gpu_shorter_than_runtime++;
        if (cpu_dur > RUNTIME_CUTOFF_NS) out->n_runtime_outliers++;
        if (delay[n - 1] > LAUNCH_DELAY_CUTOFF_NS) out->n_delay_outliers++;
    }
    ts__sort_i64(delay, n, delay + (g->n_ops ? g->n_ops : 1));
    ts_sample smp = ts__sample_sorted(delay, n);
    out->n_launches = n;
    out->launch_delay_mean_ns = smp.mean;
    out->launch_delay_median_ns = smp.median;
    out->launch_delay_max_ns = n ? delay[n - 1] : 0;
    out->runtime_mean_ns = n ? cpu_sum / (double)n : 0;
    out->gpu_mean_ns = n ? gpu_sum / (double)n : 0;
    ts__free(delay, (size_t)(g->n_ops ? g->n_ops : 1) * 2 * sizeof *delay);
    return TS_OK;
}

/* ---- memcpy/memset bandwidth ---- */
static void memory_kind(const char *name, char kind[16])
{
    /* HTA get_memory_kernel_type: "Memset", else the 11-char "Memcpy XtoY" prefix */
    if (!strncmp(name, "Memset", 6)) { strcpy(kind, "Memset"); return; }
    if (strncmp(name, "Memcpy", 6)) { strcpy(kind, "Memcpy Unknown"); return; }
    size_t n = strlen(name) < 11 ? strlen(name) : 11;
    memcpy(kind, name, n);
    kind[n] = 0;
}

static int membw(const ts_rank *r, gpu_view *g, ts_breakdown_rank *out, rank_caps *caps)
{
    enum { MAX_KINDS = 16 };   /* HtoD, DtoH, DtoD, HtoH, PtoP, Memset, Unknown: far fewer */
    caps->membw = MAX_KINDS;
    out->membw = ts__calloc(MAX_KINDS, sizeof *out->membw);
    if (!out->membw) return TS_ENOMEM;
    for (uint32_t i = 0; i < g->n_ops; i++) {
        uint32_t s = g->ops[i];
        if (kernel_type(r, g, s) != TS_KT_MEMORY) continue;
        const char *name = ts__rank_str(r, r->slices.name[s]);
        char kind[16];
        memory_kind(name, kind);
        uint32_t k = 0;
        while (k < out->n_membw && strcmp(out->membw[k].kind, kind)) k++;
        if (k == out->n_membw) {
            if (k == MAX_KINDS) continue;
            memcpy(out->membw[out->n_membw++].kind, kind, sizeof kind);
        }
        ts_membw *m = &out->membw[k];
        m->count++;
        int64_t bytes;
        int64_t dur = hta_dur(r, g, s);
        if (!ts__slice_arg_i64(r, s, "bytes", &bytes) || bytes < 0 || dur <= 0) continue;
        m->bytes += (uint64_t)bytes;
        m->dur_ns += dur;
        double gbps = (double)bytes / (double)dur;
        if (gbps > m->max_gbps) m->max_gbps = gbps;
    }
    for (uint32_t k = 0; k < out->n_membw; k++)
        out->membw[k].gbps = out->membw[k].dur_ns ? (double)out->membw[k].bytes / (double)out->membw[k].dur_ns : 0;
    return TS_OK;
}

/* ---- CPU-only ranks ---- */

/* `markers` holds the slice rows of the iteration annotations, which cover
 * the whole window and so are not work. */
static int thread_breakdown(const ts_rank *r, const ts_track *t, const ts_map64 *markers, ts_names *names,
                            int64_t wa, int64_t wb, ts_thread_breakdown *tb)
{
    ts_ival *busy = NULL, *comm = NULL;
    uint32_t nb = 0, cb = 0, nc = 0, cc = 0;
    int rc = TS_ENOMEM;
    for (uint32_t s = t->first_slice; s < t->first_slice + t->n_slices; s++) {
        if (ts__is_profiler_bookkeeping(r, s) || ts__map64_get(markers, s, NULL)) continue;
        int64_t a = r->slices.ts_ns[s] > wa ? r->slices.ts_ns[s] : wa;
        int64_t b = ts__slice_end(r, s) < wb ? ts__slice_end(r, s) : wb;
        if (b <= a) continue;
        if (!ts__ival_push(&busy, &nb, &cb, a, b)) goto done;
        if (ts__names_collective(names, r, r->slices.name[s]) && !ts__ival_push(&comm, &nc, &cc, a, b)) goto done;
    }
    int64_t busy_ns = ts__ival_total(busy, ts__ival_merge(busy, nb));
    tb->pid = t->pid;
    tb->tid = t->tid;
    tb->span_ns = wb - wa;
    tb->comm_ns = ts__ival_total(comm, ts__ival_merge(comm, nc));
    tb->compute_ns = busy_ns - tb->comm_ns;
    tb->idle_ns = tb->span_ns - busy_ns;
    rc = TS_OK;
done:
    ts__ival_free(busy, cb);
    ts__ival_free(comm, cc);
    return rc;
}

/* Threads over the window [win[0], win[1]) (ts__rank_window). */
static int cpu_threads(const ts_rank *r, const int64_t *win, ts_breakdown_rank *out, rank_caps *caps)
{
    int64_t wa = win[0], wb = win[1];
    out->span_ns = wb - wa;
    caps->threads = r->n_tracks ? r->n_tracks : 1;
    out->threads = ts__calloc(caps->threads, sizeof *out->threads);
    ts_map64 markers;
    ts__map64_init(&markers);
    ts_names names = {0};
    int rc = out->threads ? ts__names_init(&names, r) : TS_ENOMEM;
    for (uint32_t i = 0; i < r->n_iterations && !rc; i++)
        if (r->iterations[i].slice != TS_NONE32) rc = ts__map64_put(&markers, r->iterations[i].slice, 1);
    for (uint32_t i = 0; i < r->n_tracks && !rc; i++) {
        const ts_track *t = &r->tracks[i];
        if (t->kind != TS_TRACK_THREAD || t->n_slices == 0) continue;
        ts_thread_breakdown tb;
        if ((rc = thread_breakdown(r, t, &markers, &names, wa, wb, &tb))) break;
        if (tb.span_ns > 0 && tb.idle_ns < tb.span_ns) out->threads[out->n_threads++] = tb;
    }
    ts__map64_free(&markers);
    ts__names_free(&names);
    return rc;
}

/* ---- driver ---- */
static int breakdown_rank(const ts_rank *r, const ts_breakdown_opts *o, const ts_window_sel *sel,
                          ts_breakdown_rank *out, rank_caps *caps)
{
    out->rank = r->rank;
    out->comm_comp_overlap_pct = -1;
    bool any_gpu = false;
    for (uint32_t s = 0; s < r->slices.n && !any_gpu; s++) any_gpu = ts__is_gpu_op(r, s);
    int64_t win[2];
    uint32_t n_iter;
    if (!ts__rank_window(r, sel, &win[0], &win[1], &n_iter))
        return TS_OK;   /* none of the window's iterations: an empty entry */
    out->has_gpu = any_gpu;
    out->iterations_filtered = o->has_iterations || r->n_iterations >= 2;
    if (!any_gpu) return cpu_threads(r, win, out, caps);
    gpu_view g;
    int rc = gpu_view_build(r, o->has_iterations ? win : NULL, &g);
    int64_t delay = o->consecutive_kernel_delay_ns > 0 ? o->consecutive_kernel_delay_ns : 30;
    if (!rc) rc = temporal(r, &g, out);
    if (!rc) rc = kernel_shares(r, &g, o->top_kernels, out, caps);
    if (!rc) rc = per_stream(r, &g, delay, out, caps);
    if (!rc) rc = launch_stats(r, &g, out);
    if (!rc) rc = membw(r, &g, out, caps);
    gpu_view_free(&g);
    return rc;
}

int ts_breakdown_compute(const ts_job *t, const ts_breakdown_opts *opts, ts_breakdown **out, ts_error *err)
{
    ts_breakdown_opts o = opts ? *opts : (ts_breakdown_opts){0};
    ts__error_clear(err);
    *out = NULL;
    bd_impl *impl = ts__calloc(1, sizeof *impl);
    if (!impl) return ts__error(err, TS_ENOMEM, "out of memory while computing the breakdown");
    impl->cap_ranks = t->n_ranks ? t->n_ranks : 1;
    impl->pub.ranks = ts__calloc(impl->cap_ranks, sizeof *impl->pub.ranks);
    impl->caps = ts__calloc(impl->cap_ranks, sizeof *impl->caps);
    if (!impl->pub.ranks || !impl->caps) {
        ts_breakdown_destroy(&impl->pub);
        return ts__error(err, TS_ENOMEM, "out of memory while computing the breakdown");
    }
    uint32_t matched = 0, n_iter;
    ts_window_sel sel = {.whole = o.window_all, .steps = o.has_iterations, .first = o.iter_first, .last = o.iter_last};
    if (ts__window_sel_init(&sel, t)) {
        ts_breakdown_destroy(&impl->pub);
        return ts__error(err, TS_ENOMEM, "out of memory while computing the breakdown");
    }
    for (uint32_t i = 0; i < t->n_ranks; i++) {
        int64_t a, b;
        impl->pub.n_ranks++;
        if (breakdown_rank(t->ranks[i], &o, &sel, &impl->pub.ranks[i], &impl->caps[i])) {
            ts__window_sel_free(&sel);
            ts_breakdown_destroy(&impl->pub);
            return ts__error(err, TS_ENOMEM, "%s: out of memory while computing the breakdown", t->ranks[i]->path);
        }
        matched += ts__rank_window(t->ranks[i], &sel, &a, &b, &n_iter);
    }
    int rc = matched == 0 ? ts__window_empty_error(t, &sel, err) : TS_OK;
    ts__window_sel_free(&sel);
    if (rc) {
        ts_breakdown_destroy(&impl->pub);
        return rc;
    }
    *out = &impl->pub;
    return TS_OK;
}

static void free_rank(ts_breakdown_rank *b, const rank_caps *c)
{
    ts__free(b->streams, (size_t)c->streams * sizeof *b->streams);
    ts__free(b->kernels, (size_t)c->kernels * sizeof *b->kernels);
    ts__free(b->membw, (size_t)c->membw * sizeof *b->membw);
    ts__free(b->threads, (size_t)c->threads * sizeof *b->threads);
}

void ts_breakdown_destroy(ts_breakdown *b)
{
    if (!b) return;
    bd_impl *impl = (bd_impl *)b;
    for (uint32_t i = 0; b->ranks && impl->caps && i < b->n_ranks; i++) free_rank(&b->ranks[i], &impl->caps[i]);
    ts__free(b->ranks, (size_t)impl->cap_ranks * sizeof *b->ranks);
    ts__free(impl->caps, (size_t)impl->cap_ranks * sizeof *impl->caps);
    ts__free(impl, sizeof *impl);
}
