/* views.c - the tables of each view (include/trainscope/views.h): which
 * columns, in what units, and which print on a terminal. views_out.c does
 * the writing.
 *
 * Not for: computing anything a view does not already hold (analyze/views_*.c)
 * or HTML (views_html.c).
 */
#include <math.h>
#include <stdlib.h>

#include "report/views_html.h"
#include "report/views_out.h"

#define N_COLS(a) ((int)(sizeof(a) / sizeof((a)[0])))
/* --format html: a page around the view's report section */
#define HTML_PAGE(NAME, TITLE)                                                      \
    do {                                                                       \
        ts_buf b_;                                                             \
        ts__buf_init(&b_);                                                     \
        ts__views_html_begin(&b_, #NAME, TITLE);                               \
        int rc_ = ts_report_html_view_##NAME(&b_, v);                          \
        return ts__views_html_end(f, &b_, rc_, err);                           \
    } while (0)

static void device_str(int32_t type, int32_t id, char *out, size_t cap)
{
    if (type == 0) snprintf(out, cap, "cpu");
    else if (type == 1) snprintf(out, cap, "cuda:%d", id);
    else snprintf(out, cap, "type%d:%d", type, id);
}

/* ---- callstack ---- */
typedef struct cs_arg { const uint32_t *rows; uint64_t n_flame; } cs_arg;   /* flame rows kept by --top */

static const vo_col flame_cols[] = {
    {"depth", "depth", VO_INT, true}, {"name", "stack (flame graph)", VO_INDENT, false},
    {"path", "path", VO_STR, true}, {"total", "total", VO_DUR, false}, {"self", "self", VO_DUR, false},
    {"calls", "calls", VO_INT, false}, {"percent", "%", VO_REAL, false},
};
static uint64_t flame_n(const void *view, const void *arg) { (void)view; return ((const cs_arg *)arg)->n_flame; }
static void flame_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_view_callstack *v = view;
    const cs_arg *a = arg;
    uint32_t n = a->rows ? a->rows[i] : (uint32_t)i;
    const ts_cs_node *d = &v->nodes[n];
    /* path: root;...;name, built from the parent chain */
    uint32_t chain[256], depth = 0;
    for (uint32_t p = n; p != UINT32_MAX && depth < 256; p = v->nodes[p].parent) chain[depth++] = p;
    size_t len = 0;
    buf[0] = 0;
    for (uint32_t k = depth; k-- > 0 && len < 500;)
        len += (size_t)snprintf(buf + len, 512 - len, "%s%s", k + 1 < depth ? ";" : "", v->nodes[chain[k]].name);
    c[0].i = d->depth;
    c[1].s = d->name, c[1].i = d->depth;
    c[2].s = buf;
    c[3].i = d->total_ns;
    c[4].i = d->self_ns;
    c[5].i = (int64_t)d->calls;
    c[6].d = v->total_ns > 0 ? 100.0 * (double)d->total_ns / (double)v->total_ns : 0;
}

static const vo_col thread_cols[] = {
    {"rank", "rank", VO_INT, false}, {"pid", "pid", VO_INT, false}, {"tid", "tid", VO_INT, false},
    {"name", "thread", VO_STR, false}, {"frames", "ops", VO_INT, false}, {"max_depth", "depth", VO_INT, false},
    {"busy", "busy", VO_DUR, false},
};
static uint64_t thread_n(const void *view, const void *arg) { (void)arg; return ((const ts_view_callstack *)view)->n_threads; }
static void thread_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_cs_thread *t = &((const ts_view_callstack *)view)->threads[i];
    c[0].i = t->rank, c[1].i = t->pid, c[2].i = t->tid, c[3].s = t->name, c[4].i = (int64_t)t->n_frames;
    c[5].i = t->max_depth, c[6].i = t->busy_ns;
}

static const vo_col frame_cols[] = {
    {"rank", "rank", VO_INT, false}, {"tid", "tid", VO_INT, false}, {"depth", "depth", VO_INT, false},
    {"name", "op", VO_INDENT, false}, {"start", "start", VO_TIME, false}, {"dur", "dur", VO_DUR, false},
    {"self", "self", VO_DUR, false},
};
static uint64_t frame_n(const void *view, const void *arg) { (void)arg; return ((const ts_view_callstack *)view)->n_frames; }
static void frame_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_view_callstack *v = view;
    const ts_cs_frame *f = &v->frames[i];
    const ts_cs_thread *t = &v->threads[f->thread];
    c[0].i = t->rank, c[1].i = t->tid, c[2].i = f->depth, c[3].s = f->name, c[3].i = f->depth;
    c[4].i = f->start_ns, c[5].i = f->dur_ns, c[6].i = f->self_ns;
}

/* The nodes at or above the --top threshold, in depth-first order; a node's
 * ancestors weigh at least as much, so the kept set is a tree. NULL = all. */
static uint32_t *top_rows(const ts_view_callstack *v, uint32_t top, uint64_t *n)
{
    *n = v->n_nodes;
    if (!top || top >= v->n_nodes) return NULL;
    int64_t *t = ts__malloc(2 * (size_t)v->n_nodes * sizeof *t);
    uint32_t *rows = ts__malloc((size_t)v->n_nodes * sizeof *rows);
    if (t && rows) {
        for (uint32_t i = 0; i < v->n_nodes; i++) t[i] = -v->nodes[i].total_ns;
        ts__sort_i64(t, v->n_nodes, t + v->n_nodes);
        int64_t th = -t[top - 1];
        *n = 0;
        for (uint32_t i = 0; i < v->n_nodes; i++) if (v->nodes[i].total_ns >= th) rows[(*n)++] = i;
    }
    ts__free(t, 2 * (size_t)v->n_nodes * sizeof *t);
    return rows;
}

int ts_views_write_callstack(FILE *f, const ts_view_callstack *v, const ts_views_out *o, ts_error *err)
{
    ts__error_clear(err);
    if (o->format == TS_VIEWS_HTML) HTML_PAGE(callstack, "Call stacks (flame graph)");
    static const vo_table tables[] = {
        {"flame", "Flame graph: ops merged by stack path, heaviest first (total includes children)", flame_cols,
         N_COLS(flame_cols), true, flame_n, flame_row},
        {"threads", "Threads", thread_cols, N_COLS(thread_cols), true, thread_n, thread_row},
        {"frames", "Ops per thread, nested in time", frame_cols, N_COLS(frame_cols), false, frame_n, frame_row},
    };
    cs_arg a;
    uint32_t *rows = top_rows(v, o->top, &a.n_flame);
    a.rows = rows;
    if (!rows && o->top && o->top < v->n_nodes) return ts__error(err, TS_ENOMEM, "out of memory");
    int rc = ts__views_out(f, "callstack", tables, N_COLS(tables), v, &a, o, NULL, err);
    ts__free(rows, (size_t)v->n_nodes * sizeof *rows);
    return rc;
}

/* ---- allocator ---- */
static const vo_col series_cols[] = {
    {"rank", "rank", VO_ID, false}, {"device", "device", VO_STR, false}, {"allocs", "allocs", VO_INT, false},
    {"frees", "frees", VO_INT, false}, {"start_bytes", "start", VO_BYTES, false},
    {"peak_bytes", "peak", VO_BYTES, false}, {"peak_at", "peak at", VO_TIME, true},
    {"peak_reserved_bytes", "reserved", VO_BYTES, false}, {"end_bytes", "end", VO_BYTES, false},
};
static uint64_t series_n(const void *view, const void *arg) { (void)arg; return ((const ts_view_allocator *)view)->n_series; }
static void series_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_alloc_series *s = &((const ts_view_allocator *)view)->series[i];
    device_str(s->device_type, s->device_id, buf, 64);
    c[0].i = s->rank, c[1].s = buf, c[2].i = (int64_t)s->n_allocs, c[3].i = (int64_t)s->n_frees;
    c[4].i = s->start_bytes, c[5].i = s->peak_bytes, c[6].i = s->peak_ns, c[7].i = s->peak_reserved_bytes;
    c[8].i = s->end_bytes;
}

/* sizes: the non-empty (series, size bin) pairs, in order */
static const vo_col size_cols[] = {
    {"rank", "rank", VO_INT, false}, {"device", "device", VO_STR, false}, {"from_bytes", "from", VO_BYTES, false},
    {"below_bytes", "below", VO_BYTES, false}, {"allocs", "allocs", VO_INT, false}, {"bytes", "bytes", VO_BYTES, false},
};
static bool size_at(const ts_view_allocator *v, uint64_t i, uint32_t *si, uint32_t *k)
{
    for (uint32_t s = 0; s < v->n_series; s++)
        for (uint32_t b = 0; b < TS_ALLOC_SIZE_BINS; b++)
            if (v->series[s].size_count[b] && i-- == 0) { *si = s; *k = b; return true; }
    return false;
}
static uint64_t size_n(const void *view, const void *arg)
{
    const ts_view_allocator *v = view;
    uint64_t n = 0;
    for (uint32_t s = 0; s < v->n_series; s++)
        for (uint32_t b = 0; b < TS_ALLOC_SIZE_BINS; b++) n += v->series[s].size_count[b] != 0;
    return n;
}
static void size_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_view_allocator *v = view;
    uint32_t si = 0, k = 0;
    size_at(v, i, &si, &k);
    const ts_alloc_series *s = &v->series[si];
    device_str(s->device_type, s->device_id, buf, 64);
    c[0].i = s->rank, c[1].s = buf, c[2].i = k ? (int64_t)1 << k : 0;
    c[3].i = k < 62 ? (int64_t)1 << (k + 1) : INT64_MAX;
    c[4].i = (int64_t)s->size_count[k], c[5].i = s->size_bytes[k];
}

static const vo_col abin_cols[] = {
    {"rank", "rank", VO_INT, false}, {"device", "device", VO_STR, false}, {"bin", "bin", VO_INT, false},
    {"start", "start", VO_TIME, true}, {"offset", "from", VO_DUR, false}, {"max_bytes", "max in use", VO_BYTES, false},
    {"end_bytes", "at end", VO_BYTES, false}, {"allocs", "allocs", VO_INT, false}, {"frees", "frees", VO_INT, false},
    {"alloc_bytes", "allocated", VO_BYTES, false},
};
static uint64_t abin_n(const void *view, const void *arg)
{
    const ts_view_allocator *v = view;
    return (uint64_t)v->n_series * v->n_bins;
}
static void abin_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_view_allocator *v = view;
    const ts_alloc_series *s = &v->series[i / v->n_bins];
    uint32_t k = (uint32_t)(i % v->n_bins);
    const ts_alloc_bin *b = &v->bins[s->first_bin + k];
    device_str(s->device_type, s->device_id, buf, 64);
    c[0].i = s->rank, c[1].s = buf, c[2].i = k, c[3].i = s->bin_start_ns + (int64_t)k * s->bin_ns;
    c[4].i = (int64_t)k * s->bin_ns, c[5].i = b->max_bytes, c[6].i = b->end_bytes, c[7].i = (int64_t)b->n_allocs;
    c[8].i = (int64_t)b->n_frees, c[9].i = b->alloc_bytes;
}

static const vo_col set_cols[] = {
    {"device", "device", VO_INT, false}, {"pool", "pool", VO_STR, false}, {"segments", "segments", VO_INT, false},
    {"blocks", "blocks", VO_INT, false}, {"free_blocks", "free blocks", VO_INT, false},
    {"reserved_bytes", "reserved", VO_BYTES, false}, {"allocated_bytes", "allocated", VO_BYTES, false},
    {"free_bytes", "free", VO_BYTES, false}, {"largest_free_bytes", "largest free", VO_BYTES, false},
    {"fragmentation", "fragmentation", VO_REAL, false},
};
static uint64_t set_n(const void *view, const void *arg) { (void)arg; return ((const ts_view_allocator *)view)->n_sets; }
static void set_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_alloc_set *s = &((const ts_view_allocator *)view)->sets[i];
    c[0].i = s->device, c[1].s = s->pool, c[2].i = s->n_segments, c[3].i = s->n_blocks, c[4].i = s->n_free_blocks;
    c[5].i = s->reserved_bytes, c[6].i = s->allocated_bytes, c[7].i = s->free_bytes, c[8].i = s->largest_free_bytes;
    c[9].d = s->fragmentation;
}

static const vo_col seg_cols[] = {
    {"device", "device", VO_INT, false}, {"pool", "pool", VO_STR, false}, {"address", "address", VO_STR, false},
    {"stream", "stream", VO_INT, false}, {"total_bytes", "size", VO_BYTES, false},
    {"allocated_bytes", "allocated", VO_BYTES, false}, {"requested_bytes", "requested", VO_BYTES, false},
    {"blocks", "blocks", VO_INT, false}, {"largest_free_bytes", "largest free", VO_BYTES, false},
};
static uint64_t seg_n(const void *view, const void *arg) { (void)arg; return ((const ts_view_allocator *)view)->n_segments; }
static void seg_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_alloc_segment *s = &((const ts_view_allocator *)view)->segments[i];
    snprintf(buf, 64, "0x%llx", (unsigned long long)s->addr);
    c[0].i = s->device, c[1].s = s->pool, c[2].s = buf, c[3].i = s->stream, c[4].i = s->total_bytes;
    c[5].i = s->allocated_bytes, c[6].i = s->requested_bytes, c[7].i = s->n_blocks, c[8].i = s->largest_free_bytes;
}

static const vo_col block_cols[] = {
    {"segment", "segment", VO_INT, false}, {"address", "address", VO_STR, false}, {"bytes", "size", VO_BYTES, false},
    {"requested_bytes", "requested", VO_BYTES, false}, {"state", "state", VO_STR, false},
};
static uint64_t block_n(const void *view, const void *arg) { (void)arg; return ((const ts_view_allocator *)view)->n_blocks; }
static void block_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_view_allocator *v = view;
    uint32_t lo = 0, hi = v->n_segments;   /* the last segment whose first block is <= i: O(log segments) */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v->segments[mid].first_block <= i) lo = mid;
        else hi = mid;
    }
    uint32_t s = lo;
    const ts_alloc_block *b = &v->blocks[i];
    snprintf(buf, 64, "0x%llx", (unsigned long long)b->addr);
    c[0].i = s, c[1].s = buf, c[2].i = b->bytes, c[3].i = b->requested_bytes, c[4].s = b->state;
}

static const vo_col point_cols[] = {
    {"rank", "rank", VO_INT, false}, {"device", "device", VO_STR, false}, {"t", "time", VO_TIME, false},
    {"bytes", "in use", VO_BYTES, false}, {"reserved_bytes", "reserved", VO_BYTES, false},
};
static uint64_t point_n(const void *view, const void *arg) { (void)arg; return ((const ts_view_allocator *)view)->n_points; }
static void point_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_view_allocator *v = view;
    uint32_t s = 0;
    while (s + 1 < v->n_series && v->series[s].first_point + v->series[s].n_points <= i) s++;
    device_str(v->series[s].device_type, v->series[s].device_id, buf, 64);
    c[0].i = v->series[s].rank, c[1].s = buf, c[2].i = v->points[i].t_ns, c[3].i = v->points[i].bytes;
    c[4].i = v->points[i].reserved_bytes;
}

int ts_views_write_allocator(FILE *f, const ts_view_allocator *v, const ts_views_out *o, ts_error *err)
{
    ts__error_clear(err);
    if (o->format == TS_VIEWS_HTML) HTML_PAGE(allocator, "Allocator");
    static const vo_table tables[] = {
        {"series", "Allocators: bytes in use (peak, at start and end)", series_cols, N_COLS(series_cols), true,
         series_n, series_row},
        {"sizes", "Allocations by size (power-of-two bins)", size_cols, N_COLS(size_cols), true, size_n, size_row},
        {"bins", "Over time", abin_cols, N_COLS(abin_cols), true, abin_n, abin_row},
        {"sets", "Segment sets (device, pool): fragmentation = 1 - largest free block / free bytes", set_cols,
         N_COLS(set_cols), true, set_n, set_row},
        {"segments", "Segments", seg_cols, N_COLS(seg_cols), false, seg_n, seg_row},
        {"blocks", "Blocks", block_cols, N_COLS(block_cols), false, block_n, block_row},
        {"points", "Bytes in use after each event", point_cols, N_COLS(point_cols), false, point_n, point_row},
    };
    return ts__views_out(f, "allocator", tables, N_COLS(tables), v, NULL, o,
                         !strcmp(v->source, "trace") ? "source: [memory] events (no segments in a trace: a snapshot has them)"
                                                     : "source: allocator snapshot", err);
}

/* ---- transfers ---- */
static double gbps(double bytes, double ns) { return ns > 0 ? bytes / ns : NAN; }

static const vo_col xfer_cols[] = {
    {"rank", "rank", VO_INT, false}, {"direction", "dir", VO_STR, false}, {"copies", "copies", VO_INT, false},
    {"bytes", "bytes", VO_BYTES, false}, {"time", "time", VO_DUR, false}, {"busy", "busy", VO_DUR, false},
    {"gbps", "GB/s", VO_REAL, false}, {"min_gbps", "min GB/s", VO_REAL, false}, {"max_gbps", "max GB/s", VO_REAL, false},
    {"no_bytes", "no bytes", VO_INT, true},
};
static uint64_t xfer_n(const void *view, const void *arg) { (void)arg; return ((const ts_view_transfers *)view)->n_rows; }
static void xfer_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_xfer_row *r = &((const ts_view_transfers *)view)->rows[i];
    c[0].i = r->rank, c[1].s = ts_xfer_dir_name(r->dir), c[2].i = (int64_t)r->n, c[3].i = r->bytes;
    c[4].i = r->dur_ns, c[5].i = r->busy_ns, c[6].d = gbps((double)r->bytes, (double)r->busy_ns);
    c[7].d = r->min_gbps > 0 ? r->min_gbps : NAN, c[8].d = r->max_gbps > 0 ? r->max_gbps : NAN;
    c[9].i = (int64_t)r->n_no_bytes;
}
static const vo_col xbin_cols[] = {
    {"rank", "rank", VO_INT, false}, {"direction", "dir", VO_STR, false}, {"bin", "bin", VO_INT, false},
    {"start", "start", VO_TIME, true}, {"offset", "from", VO_DUR, false}, {"copies", "copies", VO_INT, false},
    {"bytes", "bytes", VO_BYTES, false}, {"busy", "busy", VO_DUR, false}, {"gbps", "GB/s (bin)", VO_REAL, false},
};
static uint64_t xbin_n(const void *view, const void *arg)
{
    const ts_view_transfers *v = view;
    return (uint64_t)v->n_rows * v->n_bins;
}
static void xbin_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_view_transfers *v = view;
    const ts_xfer_row *r = &v->rows[i / v->n_bins];
    uint32_t k = (uint32_t)(i % v->n_bins);
    const ts_xfer_bin *b = &v->bins[r->first_bin + k];
    c[0].i = r->rank, c[1].s = ts_xfer_dir_name(r->dir), c[2].i = k, c[3].i = r->bin_start_ns + (int64_t)k * r->bin_ns;
    c[4].i = (int64_t)k * r->bin_ns, c[5].i = (int64_t)b->n, c[6].i = (int64_t)llround(b->bytes), c[7].i = b->busy_ns;
    c[8].d = gbps(b->bytes, (double)r->bin_ns);
}

int ts_views_write_transfers(FILE *f, const ts_view_transfers *v, const ts_views_out *o, ts_error *err)
{
    ts__error_clear(err);
    if (o->format == TS_VIEWS_HTML) HTML_PAGE(transfers, "Memory transfers");
    static const vo_table tables[] = {
        {"totals", "Memory copies per direction (GB/s = bytes / busy time)", xfer_cols, N_COLS(xfer_cols), true,
         xfer_n, xfer_row},
        {"bins", "Over time (bytes spread over each copy's duration; GB/s over the bin)", xbin_cols, N_COLS(xbin_cols),
         true, xbin_n, xbin_row},
    };
    return ts__views_out(f, "transfers", tables, N_COLS(tables), v, NULL, o, NULL, err);
}

/* ---- queues ---- */
static const vo_col qs_cols[] = {
    {"rank", "rank", VO_INT, false}, {"device", "device", VO_INT, false}, {"stream", "stream", VO_INT, false},
    {"ops", "ops", VO_INT, false}, {"unlinked", "no launch", VO_INT, false}, {"max_len", "max queued", VO_INT, false},
    {"max_at", "max at", VO_TIME, true}, {"mean_len", "mean queued", VO_REAL, false},
    {"launch_to_start", "launch->start", VO_DUR, false},
};
static uint64_t qs_n(const void *view, const void *arg) { (void)arg; return ((const ts_view_queues *)view)->n_streams; }
static void qs_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_queue_stream *s = &((const ts_view_queues *)view)->streams[i];
    c[0].i = s->rank, c[1].i = s->device, c[2].i = s->stream, c[3].i = (int64_t)s->n_ops;
    c[4].i = (int64_t)s->n_unlinked, c[5].i = s->max_len, c[6].i = s->max_at_ns, c[7].d = s->mean_len;
    c[8].i = s->launch_to_start_ns;
}
static const vo_col qb_cols[] = {
    {"rank", "rank", VO_INT, false}, {"stream", "stream", VO_INT, false}, {"bin", "bin", VO_INT, false},
    {"start", "start", VO_TIME, true}, {"offset", "from", VO_DUR, false}, {"max_len", "max queued", VO_INT, false},
    {"mean_len", "mean queued", VO_REAL, false},
};
static uint64_t qb_n(const void *view, const void *arg)
{
    const ts_view_queues *v = view;
    return (uint64_t)v->n_streams * v->n_bins;
}
static void qb_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_view_queues *v = view;
    const ts_queue_stream *s = &v->streams[i / v->n_bins];
    uint32_t k = (uint32_t)(i % v->n_bins);
    const ts_queue_bin *b = &v->bins[s->first_bin + k];
    c[0].i = s->rank, c[1].i = s->stream, c[2].i = k, c[3].i = s->bin_start_ns + (int64_t)k * s->bin_ns;
    c[4].i = (int64_t)k * s->bin_ns, c[5].i = b->max_len, c[6].d = b->mean_len;
}
static const vo_col qp_cols[] = {
    {"rank", "rank", VO_INT, false}, {"stream", "stream", VO_INT, false}, {"t", "time", VO_TIME, false},
    {"len", "queued", VO_INT, false},
};
static uint64_t qp_n(const void *view, const void *arg) { (void)arg; return ((const ts_view_queues *)view)->n_points; }
static void qp_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_view_queues *v = view;
    uint32_t s = 0;
    while (s + 1 < v->n_streams && v->streams[s].first_point + v->streams[s].n_points <= i) s++;
    c[0].i = v->streams[s].rank, c[1].i = v->streams[s].stream, c[2].i = v->points[i].t_ns, c[3].i = v->points[i].len;
}

int ts_views_write_queues(FILE *f, const ts_view_queues *v, const ts_views_out *o, ts_error *err)
{
    ts__error_clear(err);
    if (o->format == TS_VIEWS_HTML) HTML_PAGE(queues, "GPU stream queues");
    static const vo_table tables[] = {
        {"streams", "GPU ops queued per stream (launched, not finished)", qs_cols, N_COLS(qs_cols), true, qs_n, qs_row},
        {"bins", "Over time", qb_cols, N_COLS(qb_cols), true, qb_n, qb_row},
        {"points", "Queue length from each time on", qp_cols, N_COLS(qp_cols), false, qp_n, qp_row},
    };
    return ts__views_out(f, "queues", tables, N_COLS(tables), v, NULL, o, NULL, err);
}

/* ---- comm ---- */
static const vo_col cl_cols[] = {
    {"what", "what", VO_STR, false}, {"kind", "kind", VO_STR, false}, {"src", "src", VO_ID, false},
    {"peer", "peer", VO_ID, false}, {"count", "count", VO_INT, false}, {"bytes", "bytes", VO_BYTES, false},
    {"total", "total", VO_DUR, false}, {"min", "min", VO_DUR, false}, {"p50", "p50", VO_DUR, false},
    {"p90", "p90", VO_DUR, false}, {"p99", "p99", VO_DUR, false}, {"max", "max", VO_DUR, false},
    {"negative", "negative", VO_INT, true},
};
static uint64_t cl_n(const void *view, const void *arg) { (void)arg; return ((const ts_view_comm *)view)->n_rows; }
static void cl_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_comm_row *r = &((const ts_view_comm *)view)->rows[i];
    c[0].s = r->what == TS_COMM_PAIR ? "pair" : "call", c[1].s = r->kind, c[2].i = r->src, c[3].i = r->dst;
    c[4].i = (int64_t)r->n, c[5].i = r->bytes, c[6].i = r->total_ns, c[7].i = r->min_ns, c[8].i = r->p50_ns;
    c[9].i = r->p90_ns, c[10].i = r->p99_ns, c[11].i = r->max_ns, c[12].i = (int64_t)r->n_negative;
}
static const vo_col cb_cols[] = {
    {"what", "what", VO_STR, false}, {"kind", "kind", VO_STR, false}, {"src", "src", VO_ID, false},
    {"peer", "peer", VO_ID, false}, {"bin", "bin", VO_INT, false}, {"start", "start", VO_TIME, true},
    {"offset", "from", VO_DUR, false}, {"count", "count", VO_INT, false}, {"mean", "mean", VO_DUR, false},
    {"max", "max", VO_DUR, false},
};
static uint64_t cb_n(const void *view, const void *arg)
{
    const ts_view_comm *v = view;
    return (uint64_t)v->n_rows * v->n_bins;
}
static void cb_row(const void *view, const void *arg, uint64_t i, vo_cell *c, char *buf)
{
    const ts_view_comm *v = view;
    const ts_comm_row *r = &v->rows[i / v->n_bins];
    uint32_t k = (uint32_t)(i % v->n_bins);
    const ts_comm_bin *b = &v->bins[r->first_bin + k];
    c[0].s = r->what == TS_COMM_PAIR ? "pair" : "call", c[1].s = r->kind, c[2].i = r->src, c[3].i = r->dst;
    c[4].i = k, c[5].i = r->bin_start_ns + (int64_t)k * r->bin_ns, c[6].i = (int64_t)k * r->bin_ns;
    c[7].i = (int64_t)b->n, c[8].i = b->mean_ns, c[9].i = b->max_ns;
}

int ts_views_write_comm(FILE *f, const ts_view_comm *v, const ts_views_out *o, ts_error *err)
{
    ts__error_clear(err);
    if (o->format == TS_VIEWS_HTML) HTML_PAGE(comm, "Communication latency");
    static const vo_table tables[] = {
        {"latency", "Communication latency (calls: duration; pairs: receive end - send start)", cl_cols,
         N_COLS(cl_cols), true, cl_n, cl_row},
        {"bins", "Over time (by start)", cb_cols, N_COLS(cb_cols), true, cb_n, cb_row},
    };
    char note[128];
    snprintf(note, sizeof note, "MPI sends and receives left unpaired: %llu", (unsigned long long)v->n_unpaired);
    return ts__views_out(f, "comm", tables, N_COLS(tables), v, NULL, o, note, err);
}
