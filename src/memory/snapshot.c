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
 * time_us, frames [name, filename, line]; an "oom" entry has device_free
 * where the others have addr); an older bare list of segments is read as
 * segments without a trace. Entries are told apart by their action, as
 * PyTorch's memory_viz does; an address is only a key (any 64-bit value, -1
 * too). Cost: two passes over each device's
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

/* The keys snapshot.c reads from segments, blocks and frames (slots cached per keys array). */
typedef struct snap_keys {
    ts_pv_key device, total_size, allocated_size, requested_size, blocks;   /* segment */
    ts_pv_key address, size, state, frames;                                 /* block */
    ts_pv_key name, filename, line;                                         /* frame */
} snap_keys;

/* A frame dict's "name file:line" (in the snapshot's arena) and whether its
 * file is inside torch; a trace's entries share a few hundred frame dicts. */
typedef struct frame_memo {
    ts_pv       f;          /* the frame's word, 0 = free slot */
    const char *text;       /* NULL: the frame has no filename */
    bool        internal;
} frame_memo;
enum { FRAME_MEMO = 512 };  /* slots; past half full, frames are formatted each time */

typedef struct snap_ctx {
    const char   *path;
    snap_keys    *keys;       /* &key_store (read through const snap_ctx pointers) */
    snap_keys     key_store;
    frame_memo   *fm;         /* &fm_store[0], FRAME_MEMO slots (likewise) */
    uint32_t     *n_fm;       /* &n_fm_store: slots taken */
    uint32_t      n_fm_store;
    frame_memo    fm_store[FRAME_MEMO];
    ts_pv         segments;   /* list, 0 = none */
    ts_pv         traces;     /* list of lists, 0 = none */
    snap_impl    *s;          /* NULL when only walking the timeline */
    ts_mem_snap_entry_fn entry;   /* each timeline entry goes here when set */
    void         *ud;
    ts_error     *err;
} snap_ctx;

enum { ACT_OTHER = 0, ACT_ALLOC, ACT_FREE_REQ, ACT_FREE, ACT_SEGMENT, ACT_OOM };

static int action_code(const char *a)
{
    if (!a) return ACT_OTHER;
    if (!strcmp(a, "alloc")) return ACT_ALLOC;
    if (!strcmp(a, "free_completed")) return ACT_FREE;
    if (!strcmp(a, "free_requested")) return ACT_FREE_REQ;
    if (!strncmp(a, "segment_", 8)) return ACT_SEGMENT;
    if (!strcmp(a, "oom")) return ACT_OOM;
    return ACT_OTHER;
}

/* One trace entry's fields. */
typedef struct snap_ent {
    uint64_t addr;
    int64_t  size, t;
    ts_pv    frames;
    const char  *action;   /* NULL: none */
    int      act;
} snap_ent;

enum { F_ACTION, F_ADDR, F_SIZE, F_TIME, F_FRAMES, N_FIELDS };
static const char *const field_key[N_FIELDS] = {"action", "addr", "size", "time_us", "frames"};

/* Where the five fields are in the entries' values: found once per keys
 * array (the pickle reader gives dicts of the same keys one array), and the
 * action strings seen (the memo makes each one value) with their codes. */
typedef struct ent_reader {
    const ts_pv *keys;          /* the keys array the slots are for; NULL: none or not a dict */
    uint32_t n_keys;
    int32_t  at[N_FIELDS];      /* value slot of each field; -1 = absent */
    bool     all;               /* action, addr, size and time_us are all there */
    ts_pv    acts[4];
    int      act_code[4];
} ent_reader;

static inline ts_pv field(const ts_pv *v, int32_t at) { return at < 0 ? 0 : v[at]; }

/* Entry e's values (NULL when not a dict), its keys' slots looked up when
 * they are another keys array than the last entry's. */
static inline const ts_pv *entry_values(ent_reader *r, ts_pv e)
{
    uint32_t n = 0;
    const ts_pv *keys = ts__pv_dict_keys(e, &n);
    if (TS_UNLIKELY(keys != r->keys || n != r->n_keys)) {
        for (int k = 0; k < N_FIELDS; k++)
            r->at[k] = keys ? ts__pv_key_index(keys, n, field_key[k], strlen(field_key[k])) : -1;
        r->keys = keys;
        r->n_keys = n;
        r->all = r->at[F_ACTION] >= 0 && r->at[F_ADDR] >= 0 && r->at[F_SIZE] >= 0 && r->at[F_TIME] >= 0;
    }
    return keys ? ts__pv_obj(e)->u.v : NULL;
}

static int action_of(ent_reader *r, ts_pv a, const char *s)
{
    if (!s) return ACT_OTHER;
    int k = 0;
    while (k < 4 && r->acts[k] && r->acts[k] != a) k++;
    if (k < 4 && r->acts[k] == a) return r->act_code[k];
    int code = action_code(s);
    if (k < 4) { r->acts[k] = a; r->act_code[k] = code; }
    return code;
}

/* Entry e's fields but its frames: the usual entry (all four fields, ints
 * in words, an action seen before) in a few loads, any other the long way. */
static inline __attribute__((always_inline)) void read_entry(ent_reader *r, ts_pv e, snap_ent *out)
{
    const ts_pv *v = entry_values(r, e);
    out->action = NULL;
    out->frames = 0;
    if (TS_LIKELY(v && r->all)) {
        ts_pv a = v[r->at[F_ACTION]], addr = v[r->at[F_ADDR]], size = v[r->at[F_SIZE]], t = v[r->at[F_TIME]];
        int k = a == r->acts[0] ? 0 : a == r->acts[1] ? 1 : a == r->acts[2] ? 2 : 3;   /* a trace has three */
        if (TS_LIKELY((addr & size & t & 1) && !((addr | size | t) & 2) && k < 3 && a)) {
            out->act = r->act_code[k];
            out->addr = (uint64_t)((int64_t)addr >> 2);
            out->size = (int64_t)size >> 2;
            out->t = (int64_t)t >> 2;
            return;
        }
    }
    ts_pv a = v ? field(v, r->at[F_ACTION]) : 0;
    out->act = action_of(r, a, ts__pv_str(a));
    out->addr = (uint64_t)ts__pv_int(v ? field(v, r->at[F_ADDR]) : 0, 0);
    out->size = ts__pv_int(v ? field(v, r->at[F_SIZE]) : 0, 0);
    out->t = ts__pv_int(v ? field(v, r->at[F_TIME]) : 0, -1);
}

/* All of entry e, with its action string and frames. */
static void read_entry_all(ent_reader *r, ts_pv e, snap_ent *out)
{
    read_entry(r, e, out);
    const ts_pv *v = entry_values(r, e);
    out->action = v ? ts__pv_str(field(v, r->at[F_ACTION])) : NULL;
    out->frames = v ? field(v, r->at[F_FRAMES]) : 0;
}

static bool internal_file(const char *f)
{
    return strstr(f, "site-packages") || strstr(f, "/torch/") || strstr(f, "\\torch\\") || strstr(f, "dist-packages");
}

/* line in decimal into num (at least 21 bytes), as "%lld" prints it. */
static void put_int(int64_t line, char *num)
{
    char tmp[24];
    uint64_t u = line < 0 ? 0 - (uint64_t)line : (uint64_t)line;
    int n = 0;
    do tmp[n++] = (char)('0' + u % 10); while (u /= 10);
    if (line < 0) tmp[n++] = '-';
    for (int i = 0; i < n; i++) num[i] = tmp[n - 1 - i];
    num[n] = 0;
}

/* "name file:line" into out (snprintf's truncation to cap - 1). */
static void put_frame(const char *name, const char *file, int64_t line, char *out, size_t cap)
{
    char num[24];
    put_int(line, num);   /* snprintf was a fifth of the walk's instructions on the sample */
    const char *parts[5] = {name ? name : "?", " ", file, ":", num};
    size_t at = 0;
    for (int i = 0; i < 5 && at + 1 < cap; i++) {
        size_t len = strlen(parts[i]);
        if (len > cap - 1 - at) len = cap - 1 - at;
        memcpy(out + at, parts[i], len);
        at += len;
    }
    out[at] = 0;
}

/* "name file:line" of the innermost frame (fr) and of the first outside
 * torch (uf), "" when none. */
static void frame_strs(snap_keys *ky, ts_pv frames, char *fr, char *uf, size_t cap)
{
    fr[0] = uf[0] = 0;
    for (uint32_t i = 0; i < ts__pv_len(frames) && !uf[0]; i++) {
        ts_pv f = ts__pv_at(frames, i);
        const char *file = ts__pv_str(ts__pv_get_key(f, &ky->filename));
        if (!file) continue;
        const char *name = ts__pv_str(ts__pv_get_key(f, &ky->name));
        int64_t line = ts__pv_int(ts__pv_get_key(f, &ky->line), 0);
        if (!fr[0]) put_frame(name, file, line, fr, cap);
        if (!internal_file(file)) put_frame(name, file, line, uf, cap);
    }
}

static const char *keep_str(snap_impl *s, const char *str)
{
    const char *k = ts__arena_strndup(&s->arena, str, strlen(str));
    return k ? k : "";
}

/* Frame f formatted as frame_strs formats it, remembered by its word (into
 * *scratch when the memo is half full). */
static const frame_memo *frame_of(const snap_ctx *c, ts_pv f, frame_memo *scratch)
{
    uint32_t at = (uint32_t)ts__hash_u64(f) & (FRAME_MEMO - 1);
    while (c->fm[at].f && c->fm[at].f != f) at = (at + 1) & (FRAME_MEMO - 1);
    if (c->fm[at].f == f) return &c->fm[at];
    frame_memo *m = *c->n_fm < FRAME_MEMO / 2 ? &c->fm[at] : scratch;
    const char *file = ts__pv_str(ts__pv_get_key(f, &c->keys->filename));
    *m = (frame_memo){f, NULL, false};
    if (file) {
        char text[512];
        put_frame(ts__pv_str(ts__pv_get_key(f, &c->keys->name)), file,
                  ts__pv_int(ts__pv_get_key(f, &c->keys->line), 0), text, sizeof text);
        m->text = keep_str(c->s, text);
        m->internal = internal_file(file);
    }
    if (m != scratch) (*c->n_fm)++;
    return m;
}

/* frame_strs' two strings, in the snapshot's arena: the innermost frame's
 * and the first outside torch's ("" when none), frames formatted once. */
static void frame_texts(const snap_ctx *c, ts_pv frames, const char **fr, const char **uf)
{
    *fr = *uf = "";
    for (uint32_t i = 0; i < ts__pv_len(frames); i++) {
        frame_memo scratch;
        const frame_memo *m = frame_of(c, ts__pv_at(frames, i), &scratch);
        if (!m->text) continue;
        if (!**fr) *fr = m->text;
        if (!m->internal) { *uf = m->text; return; }
    }
}

/* ---- segments at the snapshot ---- */
static void segment_stats(const snap_ctx *c, int32_t dev, ts_mem_snap_device *d)
{
    for (uint32_t i = 0; i < ts__pv_len(c->segments); i++) {
        ts_pv sg = ts__pv_at(c->segments, i);
        snap_keys *ky = c->keys;
        if (ts__pv_int(ts__pv_get_key(sg, &ky->device), 0) != dev) continue;
        d->n_segments++;
        d->reserved_bytes += ts__pv_int(ts__pv_get_key(sg, &ky->total_size), 0);
        d->allocated_bytes += ts__pv_int(ts__pv_get_key(sg, &ky->allocated_size), 0);
        d->requested_bytes += ts__pv_int(ts__pv_get_key(sg, &ky->requested_size), 0);
        ts_pv blocks = ts__pv_get_key(sg, &ky->blocks);
        for (uint32_t b = 0; b < ts__pv_len(blocks); b++) {
            ts_pv bl = ts__pv_at(blocks, b);
            d->n_blocks++;
            const char *state = ts__pv_str(ts__pv_get_key(bl, &ky->state));
            int64_t size = ts__pv_int(ts__pv_get_key(bl, &ky->size), 0);
            if (state && !strcmp(state, "inactive") && size > d->largest_free_bytes) d->largest_free_bytes = size;
        }
    }
    d->fragmentation_bytes = d->reserved_bytes - d->allocated_bytes;
}

/* Calls fn on every block of device dev allocated at the snapshot. */
static int each_allocated_block(const snap_ctx *c, int32_t dev, int (*fn)(void *, ts_pv), void *ud)
{
    for (uint32_t i = 0; i < ts__pv_len(c->segments); i++) {
        ts_pv sg = ts__pv_at(c->segments, i);
        snap_keys *ky = c->keys;
        if (ts__pv_int(ts__pv_get_key(sg, &ky->device), 0) != dev) continue;
        ts_pv blocks = ts__pv_get_key(sg, &ky->blocks);
        for (uint32_t b = 0; b < ts__pv_len(blocks); b++) {
            ts_pv bl = ts__pv_at(blocks, b);
            const char *state = ts__pv_str(ts__pv_get_key(bl, &ky->state));
            int rc;
            if (state && !strcmp(state, "active_allocated") && (rc = fn(ud, bl))) return rc;
        }
    }
    return TS_OK;
}

/* ---- the trace ---- */
typedef struct pre_free { uint32_t i; uint64_t addr; } pre_free;

/* A ts_map64 by address, with the one key it cannot hold (UINT64_MAX, an
 * addr of -1 in the pickle) in a slot of its own: a hand-made trace may
 * use any value, and PyTorch writes addresses as int64. */
typedef struct addr_map {
    ts_map64 m;
    bool     has_top;   /* top holds the value of address UINT64_MAX */
    uint64_t top;
} addr_map;

static uint64_t *addr_slot(addr_map *a, uint64_t addr, bool *added)
{
    if (addr != UINT64_MAX) return ts__map64_slot(&a->m, addr, added);
    *added = !a->has_top;
    if (*added) a->top = 0;
    a->has_top = true;
    return &a->top;
}

static uint64_t *addr_find(addr_map *a, uint64_t addr)
{
    if (addr != UINT64_MAX) return ts__map64_find(&a->m, addr);
    return a->has_top ? &a->top : NULL;
}

typedef struct walk {
    const snap_ctx *c;
    int32_t   dev;
    ts_pv     tr;             /* this device's entries */
    uint32_t  n;
    ent_reader rd;            /* their fields */
    addr_map  live;           /* addr -> index + 1 of the alloc alive there, 0 once freed: its keys are
                               * the addresses allocated in the trace */
    addr_map  pre;            /* addr -> entry index of the last free of a block allocated before the trace */
    pre_free *pre_list;       /* those frees in trace order (an address's earlier ones too) */
    uint32_t  n_pre, cap_pre;
    uint32_t *next;           /* alloc entry -> index of the next alloc or free at its address
                               * (UINT32_MAX: none); 0 for other entries; NULL when not wanted */
    int64_t   throughout;     /* bytes of blocks allocated at the snapshot and never in the trace */
    uint32_t  peak;           /* entry index of the peak, UINT32_MAX = the start */
    ts_mem_snap_device *d;
} walk;

static int add_throughout(void *ud, ts_pv bl)
{
    walk *w = ud;
    snap_keys *ky = w->c->keys;
    if (!addr_find(&w->live, (uint64_t)ts__pv_int(ts__pv_get_key(bl, &ky->address), 0)))
        w->throughout += ts__pv_int(ts__pv_get_key(bl, &ky->size), 0);
    return TS_OK;
}

static int oom(const snap_ctx *c) { return ts__error(c->err, TS_ENOMEM, "%s: out of memory", c->path); }

/* The alloc entry alive at addr (if any) ends at entry i. */
static void end_alloc(walk *w, uint64_t alive, uint32_t i)
{
    if (alive && w->next) w->next[alive - 1] = i;
}

static int on_free(walk *w, const snap_ent *e, uint32_t i)
{
    uint64_t *v = addr_find(&w->live, e->addr);
    if (v && *v) {
        end_alloc(w, *v, i);
        *v = 0;
        return TS_OK;
    }
    w->d->start_bytes += e->size;   /* allocated before the trace */
    if (w->n_pre == w->cap_pre &&
        ts__grow((void **)&w->pre_list, &w->cap_pre, sizeof *w->pre_list, (size_t)w->n_pre + 1))
        return TS_ENOMEM;
    w->pre_list[w->n_pre++] = (pre_free){i, e->addr};
    bool added;
    uint64_t *last = addr_slot(&w->pre, e->addr, &added);
    if (!last) return TS_ENOMEM;
    *last = i;
    return TS_OK;
}

/* The one pass over the entries: counts and span, what was allocated before
 * the trace, the running total relative to the start and its peak (the
 * start adds the same to every point, so the peak is at the same entry),
 * and each alloc's end for the blocks alive at the peak. */
static int scan(walk *w)
{
    ts_mem_snap_device *d = w->d;
    int64_t run = 0, peak = 0;
    w->peak = UINT32_MAX;
    d->peak_us = -1;
    const ts_pv_obj *tr = ts__pv_obj(w->tr);
    int rc = TS_OK;
    for (uint32_t i = 0; i < w->n && !rc; i++) {
        snap_ent e;
        read_entry(&w->rd, tr->u.v[i], &e);
        if (e.t >= 0 && (d->first_us < 0 || e.t < d->first_us)) d->first_us = e.t;
        if (e.t > d->last_us) d->last_us = e.t;
        if (w->next) w->next[i] = 0;
        if (e.act == ACT_ALLOC) {
            bool added;
            d->n_alloc++;
            run += e.size;
            uint64_t *v = addr_slot(&w->live, e.addr, &added);
            if (!v) { rc = TS_ENOMEM; break; }
            end_alloc(w, *v, i);   /* an alloc alive there (no free between) ends here */
            *v = (uint64_t)i + 1;
            if (w->next) w->next[i] = UINT32_MAX;
        } else if (e.act == ACT_FREE) {
            d->n_free++;
            run -= e.size;
            rc = on_free(w, &e, i);
        } else if (e.act == ACT_SEGMENT) {
            d->n_segment_events++;
        } else if (e.act == ACT_OOM) {
            d->n_oom++;
        }
        if (run > peak) { peak = run; d->peak_us = e.t; w->peak = i; }
    }
    d->n_trace = w->n;
    if (rc) return oom(w->c);
    if ((rc = each_allocated_block(w->c, w->dev, add_throughout, w))) return rc;
    d->start_bytes += w->throughout;
    d->peak_bytes = d->start_bytes + peak;
    d->end_bytes = d->start_bytes + run;
    return TS_OK;
}

/* Each entry to c->entry with the running total after it (a second pass:
 * the total starts from what the first found). */
static void emit_entries(walk *w)
{
    int64_t run = w->d->start_bytes;
    for (uint32_t i = 0; i < w->n; i++) {
        snap_ent e;
        read_entry_all(&w->rd, ts__pv_at(w->tr, i), &e);
        if (e.act == ACT_ALLOC) run += e.size;
        else if (e.act == ACT_FREE) run -= e.size;
        char fr[512], uf[512];
        frame_strs(w->c->keys, e.frames, fr, uf, sizeof fr);
        ts_mem_snap_entry x = {w->dev, i, e.t, e.action ? e.action : "", e.addr, e.size, run, fr, uf};
        w->c->entry(w->c->ud, &x);
    }
}

static int add_alive(const snap_ctx *c, uint64_t addr, int64_t bytes, int64_t t, ts_pv frames)
{
    snap_impl *s = c->s;
    if (s->pub.n_alive == s->cap_alive &&
        ts__grow((void **)&s->pub.alive, &s->cap_alive, sizeof *s->pub.alive, (size_t)s->pub.n_alive + 1))
        return TS_ENOMEM;
    const char *fr, *uf;
    frame_texts(c, frames, &fr, &uf);
    s->pub.alive[s->pub.n_alive++] = (ts_mem_snap_block){addr, bytes, t, fr, uf};
    return TS_OK;
}

/* Blocks allocated at the snapshot, never in the trace: alive at any peak. */
static int alive_throughout(void *ud, ts_pv bl)
{
    walk *w = ud;
    snap_keys *ky = w->c->keys;
    uint64_t addr = (uint64_t)ts__pv_int(ts__pv_get_key(bl, &ky->address), 0);
    if (addr_find(&w->live, addr)) return TS_OK;
    return add_alive(w->c, addr, ts__pv_int(ts__pv_get_key(bl, &ky->size), 0), -1, ts__pv_get_key(bl, &ky->frames));
}

static int cmp_alive(const void *a, const void *b)
{
    const ts_mem_snap_block *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

/* The blocks alive at the peak entry: allocs up to it not ended by it (in
 * trace order), blocks allocated before the trace whose last free is after
 * it, and those allocated throughout; largest first. */
static int alive_at_peak(walk *w)
{
    snap_impl *s = w->c->s;
    w->d->first_alive = s->pub.n_alive;
    uint32_t n = w->peak == UINT32_MAX ? 0 : w->peak + 1;
    int rc = TS_OK;
    for (uint32_t i = 0; i < n && !rc; i++) {
        if (w->next[i] <= w->peak) continue;   /* not an alloc (0), or ended by the peak */
        snap_ent e;
        read_entry_all(&w->rd, ts__pv_at(w->tr, i), &e);
        rc = add_alive(w->c, e.addr, e.size, e.t, e.frames);
    }
    for (uint32_t k = 0; k < w->n_pre && !rc; k++) {
        const pre_free *f = &w->pre_list[k];
        const uint64_t *v = addr_find(&w->pre, f->addr);
        if (f->i < n || !v || *v != f->i) continue;
        snap_ent e;
        read_entry_all(&w->rd, ts__pv_at(w->tr, f->i), &e);
        rc = add_alive(w->c, e.addr, e.size, -1, e.frames);
    }
    if (!rc) rc = each_allocated_block(w->c, w->dev, alive_throughout, w);
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
    w.tr = ts__pv_at(c->traces, (uint32_t)dev);
    w.n = ts__pv_len(w.tr);
    w.rd = (ent_reader){NULL, 0, {-1, -1, -1, -1, -1}, false, {0}, {0}};
    ts__map64_init(&w.live.m);
    ts__map64_init(&w.pre.m);
    int rc = TS_OK;
    if (c->s && w.n && !(w.next = ts__malloc((size_t)w.n * sizeof *w.next))) rc = oom(c);
    if (!rc) rc = scan(&w);
    if (!rc && c->entry) emit_entries(&w);
    if (!rc && c->s) rc = alive_at_peak(&w);
    ts__free(w.next, w.next ? (size_t)w.n * sizeof *w.next : 0);
    ts__free(w.pre_list, (size_t)w.cap_pre * sizeof *w.pre_list);
    ts__map64_free(&w.live.m);
    ts__map64_free(&w.pre.m);
    return rc;
}

static void start_ctx(snap_ctx *c, const char *path, ts_error *err)
{
    c->path = path;
    c->err = err;
    c->keys = &c->key_store;
    c->fm = c->fm_store;
    c->n_fm = &c->n_fm_store;
    c->key_store = (snap_keys){
        TS_PV_KEY("device"), TS_PV_KEY("total_size"), TS_PV_KEY("allocated_size"), TS_PV_KEY("requested_size"),
        TS_PV_KEY("blocks"), TS_PV_KEY("address"), TS_PV_KEY("size"), TS_PV_KEY("state"), TS_PV_KEY("frames"),
        TS_PV_KEY("name"), TS_PV_KEY("filename"), TS_PV_KEY("line"),
    };
}

/* A snapshot is dumped with protocol 2 or later: it starts with PROTO. */
static int check_head(void *ud, const unsigned char *head, size_t n)
{
    const snap_ctx *c = ud;
    if (n < 2 || head[0] != 0x80)
        return ts__error(c->err, TS_EFORMAT, "%s: byte 0: not a pickle of protocol 2 or later "
                         "(torch.cuda.memory._snapshot() dumped with pickle.dump)", c->path);
    return TS_OK;
}

/* c's segments and traces from the decoded pickle (freed when it is not a snapshot). */
static int find_lists(ts_pickle *pk, snap_ctx *c)
{
    ts_pv root = pk->root;
    if (ts__pv_kind(root) == TS_PV_LIST) {
        c->segments = root;   /* torch.cuda.memory_snapshot(): segments only */
    } else {
        c->segments = ts__pv_get(root, "segments");
        c->traces = ts__pv_get(root, "device_traces");
    }
    if (ts__pv_kind(c->segments) != TS_PV_LIST && ts__pv_kind(c->traces) != TS_PV_LIST) {
        ts__pickle_free(pk);
        return ts__error(c->err, TS_EFORMAT, "%s: byte 0: a pickle, but not a PyTorch allocator snapshot "
                         "(no \"segments\" or \"device_traces\" list)", c->path);
    }
    return TS_OK;
}

/* Decode the pickle in data[0..n); fill c's segments and traces. */
static int open_bytes(const char *path, const char *data, size_t n, ts_pickle *pk, snap_ctx *c, ts_error *err)
{
    start_ctx(c, path, err);
    int rc = check_head(c, (const unsigned char *)data, n);
    if (!rc) rc = ts__pickle_load(pk, path, (const unsigned char *)data, n, err);
    return rc ? rc : find_lists(pk, c);
}

/* The file (plain, gzip or zstd), decoded as it is read; then as open_bytes. */
static int open_snapshot(const char *path, ts_pickle *pk, snap_ctx *c, ts_error *err)
{
    start_ctx(c, path, err);
    int rc = ts__pickle_load_file(pk, path, (uint64_t)16 << 30, check_head, c, err);
    return rc ? rc : find_lists(pk, c);
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
