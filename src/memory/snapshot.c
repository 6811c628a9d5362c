/* snapshot.c - PyTorch allocator snapshots for `memory --trace`: segments,
 * the alloc/free timeline with its Python frames, its peak and the blocks
 * alive at it, fragmentation (include/trainscope/memory.h says what each
 * figure means).
 *
 * Not for: decoding the pickle (ingest/pickle.c, which runs no code) or
 * Kineto's [memory] events (trace_mem.c). The snapshot is the dict
 * `torch.cuda.memory._snapshot()` returns: "segments" (each: device, address,
 * total_size, allocated_size, requested_size, blocks [address, size, state,
 * frames]) and "device_traces" (per device, entries: action, addr, size,
 * time_us, frames [name, filename, line]); an older bare list of segments is
 * read as segments without a trace. Cost: two passes over each device's
 * trace, one more up to the peak, with hash maps by address; O(entries).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "ingest/pickle.h"
#include "memory/snapshot.h"

typedef struct snap_impl {
    ts_mem_snapshot pub;   /* first: a ts_mem_snapshot* is a snap_impl* */
    ts_arena        arena; /* frame strings */
    uint32_t        cap_alive;
    uint32_t        cap_devices; /* entries allocated in pub.devices */
} snap_impl;

typedef struct snap_ctx {
    const char   *path;
    const ts_pv  *segments;   /* list, may be NULL */
    const ts_pv  *traces;     /* list of lists, may be NULL */
    snap_impl    *s;          /* NULL when only walking the timeline */
    ts_mem_snap_entry_fn entry;   /* each timeline entry goes here when set */
    void         *ud;
    ts_error     *err;
} snap_ctx;

enum { ACT_OTHER = 0, ACT_ALLOC, ACT_FREE_REQ, ACT_FREE, ACT_SEGMENT };

static int action_code(const char *a)
{
    if (!a) return ACT_OTHER;
    if (!strcmp(a, "alloc")) return ACT_ALLOC;
    if (!strcmp(a, "free_completed")) return ACT_FREE;
    if (!strcmp(a, "free_requested")) return ACT_FREE_REQ;
    if (!strncmp(a, "segment_", 8)) return ACT_SEGMENT;
    return ACT_OTHER;
}

/* A key looked up in many dicts of one shape (the trace's entries): the
 * key's value as the last dict held it, compared by pointer first (the
 * pickle's memo makes every entry's "addr" one value), else by bytes. The
 * first matching key wins, as in ts__pv_getn. */
typedef struct dict_key { const char *s; uint32_t n; const ts_pv *seen; } dict_key;

static int32_t key_slot(const ts_pv *d, dict_key *k)   /* the value's slot in d->u.v, -1 = absent */
{
    if (!d || d->kind != TS_PV_DICT) return -1;
    for (uint32_t i = 0; i < d->n; i++) {
        const ts_pv *kk = d->u.v[2 * i];
        if (kk == k->seen) return (int32_t)(2 * i + 1);
        if (kk->kind == TS_PV_STR && kk->n == k->n && kk->u.s[0] == k->s[0] && !memcmp(kk->u.s, k->s, k->n)) {
            k->seen = kk;
            return (int32_t)(2 * i + 1);
        }
    }
    return -1;
}

/* One trace entry's fields. */
typedef struct snap_ent {
    uint64_t addr;
    int64_t  size, t;
    const ts_pv *frames;
    const char  *action;   /* NULL: none */
    int      act;
} snap_ent;

enum { SHAPE_MAX = 16 };

/* The keys of the entry last read (the same memoized key values in the same
 * order make the same first matches) and where its five fields were. */
typedef struct ent_reader {
    dict_key action, addr, size, time_us, frames;
    const ts_pv *acts[4];       /* action strings seen (the memo makes each one value), and their codes */
    int act_code[4];
    const ts_pv *shape[SHAPE_MAX];
    uint32_t n_shape;           /* 0: none yet */
    int32_t  at[5];             /* value slot of action, addr, size, time_us, frames; -1 = absent */
} ent_reader;

static bool same_shape(const ent_reader *r, const ts_pv *e)
{
    if (!r->n_shape || !e || e->kind != TS_PV_DICT || e->n != r->n_shape) return false;
    for (uint32_t i = 0; i < e->n; i++)
        if (e->u.v[2 * i] != r->shape[i]) return false;
    return true;
}

/* The five fields of entry e: from the slots of the last entry when e has
 * its shape, else by lookup (and e's shape is kept for the next). */
static void entry_fields(ent_reader *r, const ts_pv *e, const ts_pv **f)
{
    if (!same_shape(r, e)) {
        dict_key *keys[5] = {&r->action, &r->addr, &r->size, &r->time_us, &r->frames};
        for (int k = 0; k < 5; k++) r->at[k] = key_slot(e, keys[k]);
        r->n_shape = 0;
        if (e && e->kind == TS_PV_DICT && e->n <= SHAPE_MAX) {
            for (uint32_t i = 0; i < e->n; i++) r->shape[i] = e->u.v[2 * i];
            r->n_shape = e->n;
        }
    }
    for (int k = 0; k < 5; k++) f[k] = r->at[k] < 0 ? NULL : e->u.v[r->at[k]];
}

static void read_entry(ent_reader *r, const ts_pv *e, snap_ent *out)
{
    const ts_pv *f[5];
    entry_fields(r, e, f);
    const ts_pv *a = f[0];
    out->action = ts__pv_str(a);
    out->act = ACT_OTHER;
    if (out->action) {
        int k = 0;
        while (k < 4 && r->acts[k] && r->acts[k] != a) k++;
        if (k < 4 && r->acts[k] == a) out->act = r->act_code[k];
        else {
            out->act = action_code(out->action);
            if (k < 4) { r->acts[k] = a; r->act_code[k] = out->act; }
        }
    }
    out->addr = (uint64_t)ts__pv_int(f[1], 0);
    out->size = ts__pv_int(f[2], 0);
    out->t = ts__pv_int(f[3], -1);
    out->frames = f[4];
}

#define DICT_KEY(lit) {lit, sizeof lit - 1, NULL}

static bool internal_file(const char *f)
{
    return strstr(f, "site-packages") || strstr(f, "/torch/") || strstr(f, "\\torch\\") || strstr(f, "dist-packages");
}

/* "name file:line" of the innermost frame (user: the first outside torch). */
static void frame_str(const ts_pv *frames, bool user, char *out, size_t cap)
{
    out[0] = 0;
    for (uint32_t i = 0; i < ts__pv_len(frames); i++) {
        const ts_pv *f = ts__pv_at(frames, i);
        const char *file = ts__pv_str(ts__pv_get(f, "filename")), *name = ts__pv_str(ts__pv_get(f, "name"));
        if (!file || (user && internal_file(file))) continue;
        snprintf(out, cap, "%s %s:%lld", name ? name : "?", file, (long long)ts__pv_int(ts__pv_get(f, "line"), 0));
        return;
    }
}

static const char *keep_str(snap_impl *s, const char *str)
{
    const char *k = ts__arena_strndup(&s->arena, str, strlen(str));
    return k ? k : "";
}

/* ---- segments at the snapshot ---- */
static void segment_stats(const snap_ctx *c, int32_t dev, ts_mem_snap_device *d)
{
    for (uint32_t i = 0; i < ts__pv_len(c->segments); i++) {
        const ts_pv *sg = ts__pv_at(c->segments, i);
        if (ts__pv_int(ts__pv_get(sg, "device"), 0) != dev) continue;
        d->n_segments++;
        d->reserved_bytes += ts__pv_int(ts__pv_get(sg, "total_size"), 0);
        d->allocated_bytes += ts__pv_int(ts__pv_get(sg, "allocated_size"), 0);
        d->requested_bytes += ts__pv_int(ts__pv_get(sg, "requested_size"), 0);
        const ts_pv *blocks = ts__pv_get(sg, "blocks");
        for (uint32_t b = 0; b < ts__pv_len(blocks); b++) {
            const ts_pv *bl = ts__pv_at(blocks, b);
            d->n_blocks++;
            const char *state = ts__pv_str(ts__pv_get(bl, "state"));
            int64_t size = ts__pv_int(ts__pv_get(bl, "size"), 0);
            if (state && !strcmp(state, "inactive") && size > d->largest_free_bytes) d->largest_free_bytes = size;
        }
    }
    d->fragmentation_bytes = d->reserved_bytes - d->allocated_bytes;
}

/* Calls fn on every block of device dev allocated at the snapshot. */
static int each_allocated_block(const snap_ctx *c, int32_t dev, int (*fn)(void *, const ts_pv *), void *ud)
{
    for (uint32_t i = 0; i < ts__pv_len(c->segments); i++) {
        const ts_pv *sg = ts__pv_at(c->segments, i);
        if (ts__pv_int(ts__pv_get(sg, "device"), 0) != dev) continue;
        const ts_pv *blocks = ts__pv_get(sg, "blocks");
        for (uint32_t b = 0; b < ts__pv_len(blocks); b++) {
            const ts_pv *bl = ts__pv_at(blocks, b);
            const char *state = ts__pv_str(ts__pv_get(bl, "state"));
            int rc;
            if (state && !strcmp(state, "active_allocated") && (rc = fn(ud, bl))) return rc;
        }
    }
    return TS_OK;
}

/* ---- the trace ---- */
typedef struct walk {
    const snap_ctx *c;
    int32_t   dev;
    const ts_pv *tr;          /* this device's entries */
    uint32_t  n;
    ent_reader rd;            /* their fields (each pass reads them again: cheaper than keeping them) */
    ts_map64  live;           /* addr -> 1 while alive, 0 once freed: its keys are the addresses allocated in the trace */
    ts_map64  pre;            /* addr -> entry index of the free of a block allocated before the trace */
    int64_t   throughout;     /* bytes of blocks allocated at the snapshot and never in the trace */
    ts_mem_snap_device *d;
} walk;

static int add_throughout(void *ud, const ts_pv *bl)
{
    walk *w = ud;
    if (!ts__map64_get(&w->live, (uint64_t)ts__pv_int(ts__pv_get(bl, "address"), 0), NULL))
        w->throughout += ts__pv_int(ts__pv_get(bl, "size"), 0);
    return TS_OK;
}

static int oom(const snap_ctx *c) { return ts__error(c->err, TS_ENOMEM, "%s: out of memory", c->path); }

/* Pass 1: what was allocated before the trace began. */
static int find_start(walk *w)
{
    ts_mem_snap_device *d = w->d;
    for (uint32_t i = 0; i < w->n; i++) {
        snap_ent es;
        read_entry(&w->rd, ts__pv_at(w->tr, i), &es);
        const snap_ent *e = &es;
        uint64_t addr = e->addr;
        int act = e->act;
        int64_t t = e->t;
        d->n_trace++;
        if (t >= 0 && (d->first_us < 0 || t < d->first_us)) d->first_us = t;
        if (t > d->last_us) d->last_us = t;
        if (act == ACT_SEGMENT) d->n_segment_events++;
        if (act == ACT_ALLOC) {
            d->n_alloc++;
            if (ts__map64_put(&w->live, addr, 1)) return oom(w->c);
        } else if (act == ACT_FREE) {
            d->n_free++;
            uint64_t v;
            if (ts__map64_get(&w->live, addr, &v) && v) {
                if (ts__map64_put(&w->live, addr, 0)) return oom(w->c);
            } else {
                d->start_bytes += e->size;
                if (ts__map64_put(&w->pre, addr, i)) return oom(w->c);
            }
        }
    }
    int rc = each_allocated_block(w->c, w->dev, add_throughout, w);
    d->start_bytes += w->throughout;
    return rc;
}

/* Pass 2: the running total, its peak, and each entry to c->entry. */
static void run_totals(walk *w, uint32_t *peak_index)
{
    ts_mem_snap_device *d = w->d;
    int64_t run = d->start_bytes;
    d->peak_bytes = run;
    d->peak_us = -1;
    *peak_index = UINT32_MAX;
    for (uint32_t i = 0; i < w->n; i++) {
        snap_ent es;
        read_entry(&w->rd, ts__pv_at(w->tr, i), &es);
        const snap_ent *e = &es;
        int64_t size = e->size;
        if (e->act == ACT_ALLOC) run += size;
        else if (e->act == ACT_FREE) run -= size;
        if (run > d->peak_bytes) {
            d->peak_bytes = run;
            d->peak_us = e->t;
            *peak_index = i;
        }
        if (w->c->entry) {
            char fr[512], uf[512];
            frame_str(e->frames, false, fr, sizeof fr);
            frame_str(e->frames, true, uf, sizeof uf);
            ts_mem_snap_entry x = {w->dev, i, e->t, e->action ? e->action : "", e->addr, size, run, fr, uf};
            w->c->entry(w->c->ud, &x);
        }
    }
    d->end_bytes = run;
}

static int add_alive(snap_impl *s, uint64_t addr, int64_t bytes, int64_t t, const ts_pv *frames)
{
    if (s->pub.n_alive == s->cap_alive &&
        ts__grow((void **)&s->pub.alive, &s->cap_alive, sizeof *s->pub.alive, (size_t)s->pub.n_alive + 1))
        return TS_ENOMEM;
    char fr[512], uf[512];
    frame_str(frames, false, fr, sizeof fr);
    frame_str(frames, true, uf, sizeof uf);
    s->pub.alive[s->pub.n_alive++] = (ts_mem_snap_block){addr, bytes, t, keep_str(s, fr), keep_str(s, uf)};
    return TS_OK;
}

typedef struct alive_ctx { walk *w; uint32_t peak; } alive_ctx;

/* Blocks allocated at the snapshot, never in the trace: alive at any peak. */
static int alive_throughout(void *ud, const ts_pv *bl)
{
    alive_ctx *a = ud;
    uint64_t addr = (uint64_t)ts__pv_int(ts__pv_get(bl, "address"), 0);
    if (ts__map64_get(&a->w->live, addr, NULL)) return TS_OK;
    return add_alive(a->w->c->s, addr, ts__pv_int(ts__pv_get(bl, "size"), 0), -1, ts__pv_get(bl, "frames"));
}

static int cmp_alive(const void *a, const void *b)
{
    const ts_mem_snap_block *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

/* Pass 3: the blocks alive at the peak entry. */
static int alive_at_peak(walk *w, uint32_t peak)
{
    snap_impl *s = w->c->s;
    w->d->first_alive = s->pub.n_alive;
    ts_map64 at;   /* addr -> alloc entry index + 1 */
    ts__map64_init(&at);
    uint32_t n = peak == UINT32_MAX ? 0 : peak + 1;
    int rc = TS_OK;
    for (uint32_t i = 0; i < n && !rc; i++) {
        snap_ent es;
        read_entry(&w->rd, ts__pv_at(w->tr, i), &es);
        const snap_ent *e = &es;
        if (e->act == ACT_ALLOC) rc = ts__map64_put(&at, e->addr, (uint64_t)i + 1);
        else if (e->act == ACT_FREE) rc = ts__map64_put(&at, e->addr, 0);
    }
    /* allocs alive at the peak, in trace order (the map has no iteration) */
    for (uint32_t i = 0; i < n && !rc; i++) {
        snap_ent es;
        read_entry(&w->rd, ts__pv_at(w->tr, i), &es);
        const snap_ent *e = &es;
        uint64_t v;
        if (e->act == ACT_ALLOC && ts__map64_get(&at, e->addr, &v) && v == (uint64_t)i + 1)
            rc = add_alive(s, e->addr, e->size, e->t, e->frames);
    }
    /* allocated before the trace and freed after the peak */
    for (uint32_t i = n; i < w->n && !rc; i++) {
        snap_ent es;
        read_entry(&w->rd, ts__pv_at(w->tr, i), &es);
        const snap_ent *e = &es;
        uint64_t v;
        if (e->act == ACT_FREE && ts__map64_get(&w->pre, e->addr, &v) && v == i)
            rc = add_alive(s, e->addr, e->size, -1, e->frames);
    }
    alive_ctx ac = {w, peak};
    if (!rc) rc = each_allocated_block(w->c, w->dev, alive_throughout, &ac);
    ts__map64_free(&at);
    if (rc) return oom(w->c);
    w->d->n_alive = s->pub.n_alive - w->d->first_alive;
    if (w->d->n_alive) qsort(s->pub.alive + w->d->first_alive, w->d->n_alive, sizeof *s->pub.alive, cmp_alive);
    return TS_OK;
}

static int one_device(const snap_ctx *c, int32_t dev, ts_mem_snap_device *d)
{
    memset(d, 0, sizeof *d);
    d->device = dev;
    d->first_us = d->last_us = -1;
    segment_stats(c, dev, d);
    walk w = {.c = c, .dev = dev, .d = d};
    const ts_pv *tr = ts__pv_at(c->traces, (uint32_t)dev);
    w.tr = tr;
    w.n = ts__pv_len(tr);
    w.rd = (ent_reader){DICT_KEY("action"), DICT_KEY("addr"), DICT_KEY("size"), DICT_KEY("time_us"), DICT_KEY("frames"),
                        {NULL}, {0}, {NULL}, 0, {-1, -1, -1, -1, -1}};
    ts__map64_init(&w.live);
    ts__map64_init(&w.pre);
    uint32_t peak;
    int rc = find_start(&w);
    if (!rc) run_totals(&w, &peak);
    if (!rc && c->s) rc = alive_at_peak(&w, peak);
    ts__map64_free(&w.live);
    ts__map64_free(&w.pre);
    return rc;
}

/* Decode the pickle in data[0..n); fill c's segments and traces. */
static int open_bytes(const char *path, const char *data, size_t n, ts_pickle *pk, snap_ctx *c, ts_error *err)
{
    if (n < 2 || (unsigned char)data[0] != 0x80)
        return ts__error(err, TS_EFORMAT, "%s: byte 0: not a pickle of protocol 2 or later "
                         "(torch.cuda.memory._snapshot() dumped with pickle.dump)", path);
    int rc = ts__pickle_load(pk, path, (const unsigned char *)data, n, err);
    if (rc) return rc;
    const ts_pv *root = pk->root;
    c->path = path;
    c->err = err;
    if (root->kind == TS_PV_LIST) {
        c->segments = root;   /* torch.cuda.memory_snapshot(): segments only */
    } else {
        c->segments = ts__pv_get(root, "segments");
        c->traces = ts__pv_get(root, "device_traces");
    }
    if ((!c->segments || c->segments->kind != TS_PV_LIST) && (!c->traces || c->traces->kind != TS_PV_LIST)) {
        ts__pickle_free(pk);
        return ts__error(err, TS_EFORMAT, "%s: byte 0: a pickle, but not a PyTorch allocator snapshot "
                         "(no \"segments\" or \"device_traces\" list)", path);
    }
    return TS_OK;
}

typedef struct open_call { const char *path; ts_pickle *pk; snap_ctx *c; ts_error *err; } open_call;

static int open_call_bytes(void *ud, const char *data, size_t n)
{
    open_call *o = ud;
    return open_bytes(o->path, data, n, o->pk, o->c, o->err);
}

/* The file (plain, gzip or zstd) through the byte source, then open_bytes. */
static int open_snapshot(const char *path, ts_pickle *pk, snap_ctx *c, ts_error *err)
{
    open_call o = {path, pk, c, err};
    return ts__with_file_bytes(path, (size_t)16 << 30, open_call_bytes, &o, err);
}

static uint32_t n_devices(const snap_ctx *c)
{
    int64_t n = ts__pv_len(c->traces);
    for (uint32_t i = 0; i < ts__pv_len(c->segments); i++) {
        int64_t d = ts__pv_int(ts__pv_get(ts__pv_at(c->segments, i), "device"), 0);
        if (d >= n && d < 4096) n = d + 1;
    }
    return (uint32_t)n;
}

static int analyze(ts_pickle *pk, snap_ctx *c, ts_mem_snapshot **out);

int ts_mem_snapshot_load(const char *path, ts_mem_snapshot **out, ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    ts_pickle pk;
    snap_ctx c = {0};
    int rc = open_snapshot(path, &pk, &c, err);
    return rc ? rc : analyze(&pk, &c, out);
}

int ts__mem_snapshot_from_buffer(const char *name, const void *data, size_t n, ts_mem_snapshot **out, ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    ts_pickle pk;
    snap_ctx c = {0};
    int rc = open_bytes(name, data, n, &pk, &c, err);
    return rc ? rc : analyze(&pk, &c, out);
}

/* Every device of a decoded snapshot; frees the pickle. */
static int analyze(ts_pickle *pk, snap_ctx *c, ts_mem_snapshot **out)
{
    int rc = TS_OK;
    snap_impl *s = ts__calloc(1, sizeof *s);
    uint32_t nd = n_devices(c);
    if (s) {
        ts__arena_init(&s->arena);
        s->cap_devices = nd ? nd : 1;
        s->pub.devices = ts__calloc(s->cap_devices, sizeof *s->pub.devices);
    }
    if (!s || !s->pub.devices) rc = oom(c);
    c->s = s;
    for (uint32_t d = 0; d < nd && !rc; d++, s->pub.n_devices++) rc = one_device(c, (int32_t)d, &s->pub.devices[d]);
    ts__pickle_free(pk);
    if (rc) { ts_mem_snapshot_destroy(s ? &s->pub : NULL); return rc; }
    *out = &s->pub;
    return TS_OK;
}

int ts_mem_snapshot_each_entry(const char *snapshot_path, ts_mem_snap_entry_fn fn, void *ud, ts_error *err)
{
    ts__error_clear(err);
    ts_pickle pk;
    snap_ctx c = {0};
    int rc = open_snapshot(snapshot_path, &pk, &c, err);
    if (rc) return rc;
    c.entry = fn;
    c.ud = ud;
    uint32_t nd = n_devices(&c);
    for (uint32_t d = 0; d < nd && !rc; d++) {
        ts_mem_snap_device dev;
        rc = one_device(&c, (int32_t)d, &dev);
    }
    ts__pickle_free(&pk);
    return rc;
}

void ts_mem_snapshot_destroy(ts_mem_snapshot *pub)
{
    if (!pub) return;
    snap_impl *s = (snap_impl *)pub;
    ts__free(s->pub.devices, (size_t)s->cap_devices * sizeof *s->pub.devices);
    ts__free(s->pub.alive, (size_t)s->cap_alive * sizeof *s->pub.alive);
    ts__arena_free(&s->arena);
    ts__free(s, sizeof *s);
}

static int cmp_group(const void *a, const void *b)
{
    const ts_mem_frame_group *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->frame, y->frame);
}

uint32_t ts_mem_snapshot_frames(const ts_mem_snapshot *s, const ts_mem_snap_device *d, ts_mem_frame_group *g)
{
    uint32_t n = 0;
    for (uint32_t i = d->first_alive; i < d->first_alive + d->n_alive; i++) {
        const ts_mem_snap_block *b = &s->alive[i];
        const char *f = b->user_frame[0] ? b->user_frame : b->frame[0] ? b->frame
                        : b->alloc_us < 0 ? "(allocated before the trace)" : "(no frames recorded)";
        uint32_t k = 0;
        while (k < n && strcmp(g[k].frame, f)) k++;
        if (k == n) g[n++] = (ts_mem_frame_group){f, 0, 0};
        g[k].bytes += b->bytes;
        g[k].blocks++;
    }
    qsort(g, n, sizeof *g, cmp_group);
    return n;
}
