/* views_allocator.c - the allocator views (Trace Compass's bfc_allocations,
 * bfc_bins_stats and bfc_chunks_stats, for PyTorch): per allocator (a rank's
 * device in Kineto [memory] events, or a device of an allocator snapshot)
 * the bytes in use over time with their peak, allocations by power-of-two
 * size bin, and for snapshots the segments and blocks of the caching
 * allocator (TensorFlow's BFC had chunks in bins) with each segment set's
 * fragmentation.
 *
 * Not for: decoding pickles (ingest/pickle.c) or the figures `memory --trace`
 * prints (memory/snapshot.c, whose start bytes the snapshot series starts
 * from, so both agree on the peak). Fragmentation of a segment set (the
 * segments of one device and pool) is 1 - largest free block / free bytes:
 * 0 when all free memory is one block, near 1 when it is in crumbs that no
 * large request fits. Cost: O(events log events) per series (the time sort).
 */
#include <stdlib.h>

#include "analyze/views_int.h"
#include "ingest/ingest.h"
#include "ingest/pickle.h"
#include "trainscope/memory.h"

typedef struct al_impl {
    ts_view_allocator pub;
    uint32_t cap_series, cap_segments, cap_blocks, cap_sets;
    uint64_t cap_points, cap_bins;
    ts_arena arena;          /* strings of snapshot segments and blocks */
} al_impl;

/* One event of a series before the time sort. */
typedef struct al_ev { int64_t t, idx, delta, total, reserved; } al_ev;

static int by_time_idx(const void *a, const void *b)
{
    const al_ev *x = a, *y = b;
    if (x->t != y->t) return (x->t > y->t) - (x->t < y->t);
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static al_impl *al_new(const char *source)
{
    al_impl *v = ts__calloc(1, sizeof *v);
    if (!v) return NULL;
    ts__arena_init(&v->arena);
    v->pub.source = source;
    return v;
}

/* The bins of s (range set), counting event e of the sorted events. */
static void bin_event(ts_alloc_bin *b, const ts_alloc_series *s, uint32_t nb, const al_ev *e, int64_t run)
{
    ts_alloc_bin *k = &b[ts__views_bin_of(s->bin_start_ns, s->bin_ns, nb, e->t)];
    if (e->delta > 0) { k->n_allocs++; k->alloc_bytes += e->delta; }
    else if (e->delta < 0) k->n_frees++;
    if (run > k->max_bytes) k->max_bytes = run;
    k->end_bytes = run;
}

/* A bin without events holds what the one before it ended with; every bin
 * starts at the level the one before ended at. */
static void carry_bins(ts_alloc_bin *b, uint32_t nb, int64_t start_bytes, const uint8_t *has)
{
    int64_t level = start_bytes;
    for (uint32_t k = 0; k < nb; k++) {
        if (!has[k]) b[k].end_bytes = b[k].max_bytes = level;
        else if (level > b[k].max_bytes) b[k].max_bytes = level;
        level = b[k].end_bytes;
    }
}

/* Series s from events ev[0..n) (sorted here): points, peak, size bins,
 * time bins. total < 0 = not given: the running sum of deltas from the
 * start bytes is the bytes in use. */
static int fill_series(al_impl *v, ts_alloc_series *s, al_ev *ev, uint64_t n, uint32_t nb)
{
    qsort(ev, n, sizeof *ev, by_time_idx);
    s->first_point = v->pub.n_points;
    s->first_bin = (uint32_t)(s - v->pub.series) * nb;
    uint8_t *has = ts__calloc(nb, 1);
    if (!has || ts__views_grow((void **)&v->pub.points, &v->cap_points, sizeof *v->pub.points, v->pub.n_points + n) ||
        ts__views_grow((void **)&v->pub.bins, &v->cap_bins, sizeof *v->pub.bins, (uint64_t)s->first_bin + nb)) {
        ts__free(has, nb);
        return TS_ENOMEM;
    }
    if (s->start_bytes < 0) s->start_bytes = ev[0].total >= 0 ? ev[0].total - ev[0].delta : 0;
    int64_t run = s->start_bytes;
    s->peak_bytes = run;
    s->peak_ns = -1;
    s->peak_reserved_bytes = -1;
    ts__views_bins(ev[0].t, ev[n - 1].t, nb, &s->bin_start_ns, &s->bin_ns);
    ts_alloc_bin *b = v->pub.bins + s->first_bin;
    memset(b, 0, nb * sizeof *b);
    for (uint64_t i = 0; i < n; i++) {
        run = ev[i].total >= 0 ? ev[i].total : run + ev[i].delta;
        if (ev[i].delta > 0) {
            uint32_t k = ts__views_size_bin(ev[i].delta);
            s->n_allocs++;
            s->size_count[k]++;
            s->size_bytes[k] += ev[i].delta;
        } else if (ev[i].delta < 0) {
            s->n_frees++;
        }
        if (run > s->peak_bytes) { s->peak_bytes = run; s->peak_ns = ev[i].t; }
        if (ev[i].reserved > s->peak_reserved_bytes) s->peak_reserved_bytes = ev[i].reserved;
        v->pub.points[v->pub.n_points++] = (ts_alloc_point){ev[i].t, run, ev[i].reserved};
        has[ts__views_bin_of(s->bin_start_ns, s->bin_ns, nb, ev[i].t)] = 1;
        bin_event(b, s, nb, &ev[i], run);
    }
    carry_bins(b, nb, s->start_bytes, has);
    ts__free(has, nb);
    s->n_points = n;
    s->end_bytes = run;
    return TS_OK;
}

static ts_alloc_series *new_series(al_impl *v)
{
    if (v->pub.n_series == v->cap_series &&
        ts__grow((void **)&v->pub.series, &v->cap_series, sizeof *v->pub.series, (size_t)v->pub.n_series + 1))
        return NULL;
    ts_alloc_series *s = &v->pub.series[v->pub.n_series++];
    memset(s, 0, sizeof *s);
    s->start_bytes = -1;
    return s;
}

/* ---- Kineto [memory] events ---- */
static bool mem_event(const ts_rank *r, uint32_t i, uint32_t mem)
{
    return r->instants.cat[i] == mem || r->instants.name[i] == mem;
}

/* The series of one (type, id) of rank r: its events, sorted and summed. */
static int one_device(al_impl *v, const ts_rank *r, uint32_t mem, int64_t type, int64_t id, uint32_t nb,
                      al_ev **ev, uint64_t *cap)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < r->instants.n; i++) {
        int64_t ty = 0, d = -1, bytes = 0, total = -1, res = -1;
        if (!mem_event(r, i, mem)) continue;
        ts__instant_arg_i64(r, i, "Device Type", &ty);
        ts__instant_arg_i64(r, i, "Device Id", &d);
        if (ty != type || d != id || !ts__instant_arg_i64(r, i, "Bytes", &bytes)) continue;
        if (!ts__instant_arg_i64(r, i, "Total Allocated", &total) || total < 0) total = -1;
        if (!ts__instant_arg_i64(r, i, "Total Reserved", &res) || res < 0) res = -1;
        if (ts__views_grow((void **)ev, cap, sizeof **ev, n + 1)) return TS_ENOMEM;
        (*ev)[n] = (al_ev){r->instants.ts_ns[i], (int64_t)n, bytes, total, res};
        n++;
    }
    if (!n) return TS_OK;
    ts_alloc_series *s = new_series(v);
    if (!s) return TS_ENOMEM;
    s->rank = r->rank;
    s->device_type = (int32_t)type;
    s->device_id = (int32_t)id;
    return fill_series(v, s, *ev, n, nb);
}

static int trace_rank(al_impl *v, const ts_rank *r, uint32_t nb, al_ev **ev, uint64_t *cap)
{
    uint32_t mem = ts__str_find(&r->strings, "[memory]", 8);
    if (!mem) return TS_OK;
    ts_map64 seen;   /* (type, id) of devices already made into series */
    ts__map64_init(&seen);
    int rc = TS_OK;
    for (uint32_t i = 0; i < r->instants.n && !rc; i++) {
        int64_t type = 0, id = -1, bytes;
        if (!mem_event(r, i, mem) || !ts__instant_arg_i64(r, i, "Bytes", &bytes)) continue;
        ts__instant_arg_i64(r, i, "Device Type", &type);
        ts__instant_arg_i64(r, i, "Device Id", &id);
        uint64_t key = ((uint64_t)(uint32_t)type << 32 | (uint32_t)id) ^ (1ull << 63);
        if (ts__map64_get(&seen, key, NULL)) continue;
        rc = ts__map64_put(&seen, key, 1);
        if (!rc) rc = one_device(v, r, mem, type, id, nb, ev, cap);
    }
    ts__map64_free(&seen);
    return rc;
}

int ts_view_allocator_create(const ts_job *t, const ts_views_opts *opt, ts_view_allocator **out, ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    ts__views_cfg cfg;
    ts__views_cfg_from(opt, &cfg);
    al_impl *v = al_new("trace");
    if (!v) return ts__error(err, TS_ENOMEM, "out of memory");
    v->pub.n_bins = cfg.n_bins;
    al_ev *ev = NULL;
    uint64_t cap = 0;
    int rc = TS_OK;
    for (uint32_t ri = 0; ri < t->n_ranks && !rc; ri++)
        if (ts__views_rank_ok(&cfg, t->ranks[ri])) rc = trace_rank(v, t->ranks[ri], cfg.n_bins, &ev, &cap);
    ts__free(ev, cap * sizeof *ev);
    if (rc) ts__error(err, rc, "out of memory");
    else if (!v->pub.n_series)
        rc = ts__error(err, TS_ENODATA, "no [memory] events with \"Bytes\" (torch.profiler with profile_memory=True, "
                       "or record --torch --memory)%s", cfg.rank >= 0 ? " for that rank" : "");
    if (rc) { ts_view_allocator_destroy(&v->pub); return rc; }
    *out = &v->pub;
    return TS_OK;
}

/* ---- PyTorch allocator snapshots ---- */
typedef struct snap_ctx {
    al_impl               *v;
    const char            *path;
    uint32_t               nb;
    const ts_mem_snapshot *ms;   /* memory/snapshot.c's reading: start bytes per device */
    ts_error              *err;
} snap_ctx;

static const char *keep(al_impl *v, const char *s)
{
    const char *k = s ? ts__arena_strndup(&v->arena, s, strlen(s)) : NULL;
    return k ? k : "";
}

/* The set of (device, pool), made when new. */
static ts_alloc_set *set_for(al_impl *v, int32_t dev, const char *pool)
{
    for (uint32_t i = 0; i < v->pub.n_sets; i++)
        if (v->pub.sets[i].device == dev && !strcmp(v->pub.sets[i].pool, pool)) return &v->pub.sets[i];
    if (v->pub.n_sets == v->cap_sets &&
        ts__grow((void **)&v->pub.sets, &v->cap_sets, sizeof *v->pub.sets, (size_t)v->pub.n_sets + 1))
        return NULL;
    ts_alloc_set *s = &v->pub.sets[v->pub.n_sets++];
    *s = (ts_alloc_set){.device = dev, .pool = pool};
    return s;
}

static int one_segment(al_impl *v, ts_pv sg)
{
    if (v->pub.n_segments == v->cap_segments &&
        ts__grow((void **)&v->pub.segments, &v->cap_segments, sizeof *v->pub.segments, (size_t)v->pub.n_segments + 1))
        return TS_ENOMEM;
    ts_alloc_segment *g = &v->pub.segments[v->pub.n_segments++];
    *g = (ts_alloc_segment){.device = (int32_t)ts__pv_int(ts__pv_get(sg, "device"), 0),
                            .pool = keep(v, ts__pv_str(ts__pv_get(sg, "segment_type"))),
                            .addr = (uint64_t)ts__pv_int(ts__pv_get(sg, "address"), 0),
                            .total_bytes = ts__pv_int(ts__pv_get(sg, "total_size"), 0),
                            .allocated_bytes = ts__pv_int(ts__pv_get(sg, "allocated_size"), 0),
                            .requested_bytes = ts__pv_int(ts__pv_get(sg, "requested_size"), 0),
                            .stream = ts__pv_int(ts__pv_get(sg, "stream"), -1), .first_block = v->pub.n_blocks};
    ts_alloc_set *set = set_for(v, g->device, g->pool);
    if (!set) return TS_ENOMEM;
    set->n_segments++;
    set->reserved_bytes += g->total_bytes;
    set->allocated_bytes += g->allocated_bytes;
    ts_pv blocks = ts__pv_get(sg, "blocks");
    for (uint32_t b = 0; b < ts__pv_len(blocks); b++) {
        ts_pv bl = ts__pv_at(blocks, b);
        if (v->pub.n_blocks == v->cap_blocks &&
            ts__grow((void **)&v->pub.blocks, &v->cap_blocks, sizeof *v->pub.blocks, (size_t)v->pub.n_blocks + 1))
            return TS_ENOMEM;
        ts_alloc_block *k = &v->pub.blocks[v->pub.n_blocks++];
        *k = (ts_alloc_block){(uint64_t)ts__pv_int(ts__pv_get(bl, "address"), 0), ts__pv_int(ts__pv_get(bl, "size"), 0),
                              ts__pv_int(ts__pv_get(bl, "requested_size"), 0),
                              keep(v, ts__pv_str(ts__pv_get(bl, "state")))};
        g->n_blocks++;
        set->n_blocks++;
        if (strcmp(k->state, "inactive")) continue;
        set->n_free_blocks++;
        set->free_bytes += k->bytes;
        if (k->bytes > g->largest_free_bytes) g->largest_free_bytes = k->bytes;
        if (k->bytes > set->largest_free_bytes) set->largest_free_bytes = k->bytes;
    }
    return TS_OK;
}

/* Device d's trace: alloc adds its size, free_completed removes it. */
static int snap_device(snap_ctx *c, ts_pv tr, int32_t d, al_ev **ev, uint64_t *cap)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < ts__pv_len(tr); i++) {
        ts_pv e = ts__pv_at(tr, i);
        const char *a = ts__pv_str(ts__pv_get(e, "action"));
        int64_t size = ts__pv_int(ts__pv_get(e, "size"), 0), us = ts__pv_int(ts__pv_get(e, "time_us"), 0);
        bool alloc = a && !strcmp(a, "alloc"), freed = a && !strcmp(a, "free_completed");
        if (!alloc && !freed) continue;
        if (us < 0 || us > INT64_MAX / 1000)
            return ts__error(c->err, TS_ERANGE, "%s: device %d trace entry %u: time_us %lld is out of range", c->path,
                             d, i, (long long)us);
        if (ts__views_grow((void **)ev, cap, sizeof **ev, n + 1)) return TS_ENOMEM;
        (*ev)[n] = (al_ev){us * 1000, (int64_t)n, alloc ? size : -size, -1, -1};
        n++;
    }
    if (!n) return TS_OK;
    ts_alloc_series *s = new_series(c->v);
    if (!s) return TS_ENOMEM;
    s->rank = -1;
    s->device_type = 1;
    s->device_id = d;
    s->start_bytes = (uint32_t)d < c->ms->n_devices ? c->ms->devices[d].start_bytes : 0;
    return fill_series(c->v, s, *ev, n, c->nb);
}

static int snap_file(snap_ctx *c)
{
    ts_pickle pk;
    int rc = ts__pickle_load_file(&pk, c->path, (uint64_t)16 << 30, NULL, NULL, c->err);
    if (rc) return rc;
    ts_pv root = pk.root, segs = ts__pv_kind(root) == TS_PV_LIST ? root : ts__pv_get(root, "segments");
    ts_pv traces = ts__pv_kind(root) == TS_PV_LIST ? 0 : ts__pv_get(root, "device_traces");
    for (uint32_t i = 0; i < ts__pv_len(segs) && !rc; i++) rc = one_segment(c->v, ts__pv_at(segs, i));
    al_ev *ev = NULL;
    uint64_t cap = 0;
    for (uint32_t d = 0; d < ts__pv_len(traces) && !rc; d++) rc = snap_device(c, ts__pv_at(traces, d), (int32_t)d, &ev, &cap);
    ts__free(ev, cap * sizeof *ev);
    ts__pickle_free(&pk);
    for (uint32_t i = 0; i < c->v->pub.n_sets; i++) {
        ts_alloc_set *s = &c->v->pub.sets[i];
        s->fragmentation = s->free_bytes > 0 ? 1.0 - (double)s->largest_free_bytes / (double)s->free_bytes : 0;
    }
    if (rc == TS_ENOMEM) ts__error(c->err, rc, "%s: out of memory", c->path);
    return rc;
}

int ts_view_allocator_from_snapshot(const char *path, const ts_views_opts *opt, ts_view_allocator **out, ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    ts__views_cfg cfg;
    ts__views_cfg_from(opt, &cfg);
    ts_mem_snapshot *ms;
    int rc = ts_mem_snapshot_load(path, &ms, err);   /* checks the file, names its byte when bad */
    if (rc) return rc;
    al_impl *v = al_new("snapshot");
    if (!v) { ts_mem_snapshot_destroy(ms); return ts__error(err, TS_ENOMEM, "out of memory"); }
    v->pub.n_bins = cfg.n_bins;
    snap_ctx c = {v, path, cfg.n_bins, ms, err};
    rc = snap_file(&c);
    ts_mem_snapshot_destroy(ms);
    if (!rc && !v->pub.n_series && !v->pub.n_segments)
        rc = ts__error(err, TS_ENODATA, "%s: the snapshot has no segments and no alloc/free trace", path);
    if (rc) { ts_view_allocator_destroy(&v->pub); return rc; }
    *out = &v->pub;
    return TS_OK;
}

bool ts_views_path_is_snapshot(const char *path)
{
    unsigned char head[2];
    size_t n = 0;
    return ts__sniff_file(path, head, sizeof head, &n, NULL) == TS_OK && n >= 2 && head[0] == 0x80;
}

void ts_view_allocator_destroy(ts_view_allocator *pub)
{
    if (!pub) return;
    al_impl *v = (al_impl *)pub;
    ts__free(v->pub.series, (size_t)v->cap_series * sizeof *v->pub.series);
    ts__free(v->pub.points, v->cap_points * sizeof *v->pub.points);
    ts__free(v->pub.bins, v->cap_bins * sizeof *v->pub.bins);
    ts__free(v->pub.segments, (size_t)v->cap_segments * sizeof *v->pub.segments);
    ts__free(v->pub.blocks, (size_t)v->cap_blocks * sizeof *v->pub.blocks);
    ts__free(v->pub.sets, (size_t)v->cap_sets * sizeof *v->pub.sets);
    ts__arena_free(&v->arena);
    ts__free(v, sizeof *v);
}
