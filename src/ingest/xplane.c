/* xplane.c - TensorFlow 2 profiler captures (`*.xplane.pb`, what TensorBoard's
 * profile plugin reads) into the trace model: one file = one rank (one host).
 *
 * Not for: TF1 timelines (Chrome JSON: chrome_json.c reads those) or the
 * derived tool data TensorBoard computes. The schema is tensorflow/tsl's
 * xplane.proto, read field by field with the wire-format cursor of
 * protobuf.h (no generated code, no libprotobuf):
 *
 *   XSpace      1 planes (XPlane)
 *   XPlane      1 id, 2 name, 3 lines (XLine), 4 event_metadata map<int64, XEventMetadata>,
 *               5 stat_metadata map<int64, XStatMetadata>
 *   XLine       1 id, 2 name, 11 display_name, 3 timestamp_ns, 4 events (XEvent)
 *   XEvent      1 metadata_id, 2 offset_ps (from the line's timestamp; absent = 0), 5 num_occurrences
 *               (oneof with offset_ps: an aggregate without time, skipped and counted), 3 duration_ps,
 *               4 stats (XStat)
 *   XEventMetadata 1 id, 2 name, 4 display_name;  XStatMetadata 1 id, 2 name
 *   XStat       1 metadata_id, 2 double, 3 uint64, 4 int64, 5 str, 6 bytes, 7 ref (a stat metadata id)
 *
 * Model: "/host:CPU" lines are threads (pid 0, tid = line id) of cpu_op
 * slices; "/device:GPU:N" lines named "Stream #S(...)" are GPU stream S of
 * device N: kernels, or gpu_memcpy on Memcpy lines; other lines of other
 * planes are threads of pid = plane index + 1. Events' stats become args; a
 * "correlation_id" stat also fills the correlation column, which pairs TF's
 * host launches with their kernels. Times: line timestamp (ns) + offset (ps),
 * duration in ps, both to whole ns (floor).
 */
#include "ingest/ingest.h"
#include "ingest/icache.h"
#include "ingest/protobuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Metadata id -> string id (0 = none): a table for ids below 2^20 (XPlane
 * numbers its metadata from 1), a map above. */
typedef struct idtab { ts_map64 map; uint32_t *dense; uint32_t cap; } idtab;
enum { IDTAB_DENSE = 1 << 20 };

static void idtab_init(idtab *t)
{
    memset(t, 0, sizeof *t);
    ts__map64_init(&t->map);
}

static void idtab_free(idtab *t)
{
    ts__map64_free(&t->map);
    ts__free(t->dense, (size_t)t->cap * sizeof *t->dense);
    idtab_init(t);
}

static bool idtab_put(idtab *t, uint64_t id, uint32_t v)
{
    if (id >= IDTAB_DENSE) return ts__map64_put(&t->map, id, v) == TS_OK;
    if (id >= t->cap) {
        uint32_t nc = t->cap ? t->cap : 256;
        while (nc <= id) nc *= 2;
        uint32_t *nd = ts__realloc(t->dense, (size_t)t->cap * sizeof *nd, (size_t)nc * sizeof *nd);
        if (!nd) return false;
        memset(nd + t->cap, 0, (size_t)(nc - t->cap) * sizeof *nd);
        t->dense = nd;
        t->cap = nc;
    }
    t->dense[id] = v;
    return true;
}

static uint32_t idtab_get(const idtab *t, uint64_t id)
{
    if (id < t->cap) return t->dense[id];
    uint64_t v;
    return id >= IDTAB_DENSE && ts__map64_get(&t->map, id, &v) ? (uint32_t)v : 0;
}

typedef struct xp {
    const char *path;
    ts_rank    *r;
    ts_error   *err;
    idtab       ev_name;    /* plane's event metadata id -> rank string id */
    idtab       stat_name;  /* plane's stat metadata id -> rank string id */
    uint64_t    n_aggregated, n_events;
    uint32_t    k_corr;     /* interned "correlation_id" (stat names share the rank's pool) */
    ts_pb_input in;         /* the input; in.err: the first damaged bytes met */
    ts_icache  *icache;     /* names and string stat values */
} xp;

/* The first wire error met anywhere (x->in.err); the load fails with it. */
static int pb_fail(xp *x)
{
    return ts__error(x->err, TS_EFORMAT, "%s: byte %zu: %s", x->path, x->in.err_at, x->in.err);
}

static uint32_t intern_sub(xp *x, const ts_pb *s) { return ts__icache_intern(x->icache, x->r, (const char *)s->p, ts__pb_len(s)); }

/* A map<int64, XEventMetadata/XStatMetadata> entry: key 1, value 2 (its
 * name 2, display name 4). */
static void metadata_entry(xp *x, ts_pb e, idtab *into, bool event)
{
    ts_pb_field f, g;
    uint64_t key = 0;
    uint32_t name = 0, display = 0;
    while (ts__pb_next(&e, &f)) {
        if (f.num == 1 && f.wire == 0) key = f.u;
        if (f.num != 2 || f.wire != 2) continue;
        ts_pb v = f.sub;
        while (ts__pb_next(&v, &g))
            if (g.wire == 2 && g.num == 2) name = intern_sub(x, &g.sub);
            else if (g.wire == 2 && g.num == 4 && event && ts__pb_len(&g.sub)) display = intern_sub(x, &g.sub);
    }
    if (key == UINT64_MAX) key = 0;
    if (!idtab_put(into, key, display ? display : name)) x->r->oom = true;
}

/* The plane's metadata maps, read before its lines (fields may come in any order). */
static void plane_metadata(xp *x, ts_pb plane)
{
    ts_pb_field f;
    while (ts__pb_next(&plane, &f))
        if (f.wire == 2 && (f.num == 4 || f.num == 5))
            metadata_entry(x, f.sub, f.num == 4 ? &x->ev_name : &x->stat_name, f.num == 4);
}

static uint32_t lookup(const idtab *m, uint64_t id)
{
    return idtab_get(m, id == UINT64_MAX ? 0 : id);
}

/* One XStat as an arg; the correlation id also into the slice's column. */
static void stat_arg(xp *x, ts_pb st, uint32_t slice)
{
    ts_pb_field f;
    uint32_t key = 0;
    ts_arg_type ty = TS_ARG_NULL;
    uint64_t val = 0;
    for (;;) {
        /* the usual keys (one byte: fields 1-7 with their wire types) read
         * here; anything else through the cursor, as before */
        if (st.p >= st.end) break;
        unsigned k = *st.p;
        if (k == 0x08 || k == 0x18 || k == 0x20 || k == 0x38) {
            st.p++;
            if (!ts__pb_varint(&st, &f.u)) break;
            if (k == 0x08) key = lookup(&x->stat_name, f.u);
            else if (k == 0x38) { ty = TS_ARG_STR; val = lookup(&x->stat_name, f.u); }
            else { ty = k == 0x18 ? TS_ARG_UINT : TS_ARG_INT; val = f.u; }
            continue;
        }
        if ((k == 0x2a || k == 0x32) && st.end - st.p >= 2 && st.p[1] < 0x80 && st.p[1] <= st.end - st.p - 2) {
            size_t n = st.p[1];
            ts_pb sub = {st.p + 2, st.p + 2 + n, st.in};
            st.p += 2 + n;
            ty = TS_ARG_STR;
            val = intern_sub(x, &sub);
            continue;
        }
        if (!ts__pb_next(&st, &f)) break;
        switch (f.num) {
        case 1: key = lookup(&x->stat_name, f.u); break;
        case 2: ty = TS_ARG_DOUBLE; val = f.u; break;
        case 3: ty = TS_ARG_UINT; val = f.u; break;
        case 4: ty = TS_ARG_INT; val = f.u; break;
        case 5: case 6: if (f.wire == 2) { ty = TS_ARG_STR; val = intern_sub(x, &f.sub); } break;
        case 7: ty = TS_ARG_STR; val = lookup(&x->stat_name, f.u); break;
        default: break;
        }
    }
    if (!key || ty == TS_ARG_NULL) return;
    ts__rank_push_arg(x->r, key, ty, val);
    if (key == x->k_corr && (ty == TS_ARG_INT || ty == TS_ARG_UINT) && (int64_t)val >= 0)
        x->r->slices.corr[slice] = (int64_t)val;
}

/* ps to ns, floor, saturating well inside int64. */
static int64_t ps_to_ns(uint64_t ps) { return (int64_t)(ps / 1000 > (uint64_t)1 << 62 ? (uint64_t)1 << 62 : ps / 1000); }

static void one_event(xp *x, ts_pb ev, uint32_t track, int64_t line_ns, ts_kind kind, uint32_t cat)
{
    ts_pb_field f;
    uint64_t meta = 0, offset_ps = 0, dur_ps = 0;
    bool timed = true;   /* proto3 omits a zero offset: only num_occurrences marks an aggregate */
    ts_pb stats[32];
    uint32_t n_stats = 0;
    for (;;) {
        /* the usual keys read here, anything else through the cursor */
        if (ev.p >= ev.end) break;
        unsigned k = *ev.p;
        if (k == 0x08 || k == 0x10 || k == 0x18 || k == 0x28) {
            ev.p++;
            uint64_t u;
            if (!ts__pb_varint(&ev, &u)) break;
            if (k == 0x08) meta = u;
            else if (k == 0x10) offset_ps = u;
            else if (k == 0x18) dur_ps = u;
            else if (u) timed = false;
            continue;
        }
        if (k == 0x22 && ev.end - ev.p >= 2 && ev.p[1] < 0x80 && ev.p[1] <= ev.end - ev.p - 2) {
            size_t n = ev.p[1];
            if (n_stats < 32) stats[n_stats++] = (ts_pb){ev.p + 2, ev.p + 2 + n, ev.in};
            ev.p += 2 + n;
            continue;
        }
        if (!ts__pb_next(&ev, &f)) break;
        if (f.num == 1 && f.wire == 0) meta = f.u;
        else if (f.num == 2 && f.wire == 0) offset_ps = f.u;
        else if (f.num == 5 && f.wire == 0 && f.u) timed = false;
        else if (f.num == 3 && f.wire == 0) dur_ps = f.u;
        else if (f.num == 4 && f.wire == 2 && n_stats < 32) stats[n_stats++] = f.sub;
    }
    x->n_events++;
    if (!timed) { x->n_aggregated++; return; }
    int64_t ts = line_ns + ps_to_ns(offset_ps);
    uint32_t s = ts__rank_add_slice(x->r, track, ts, ps_to_ns(dur_ps), lookup(&x->ev_name, meta), cat, kind);
    if (s == TS_NONE32) return;
    uint32_t first = ts__rank_args_mark(x->r);
    for (uint32_t i = 0; i < n_stats; i++) stat_arg(x, stats[i], s);
    ts__rank_slice_set_args(x->r, s, first, ts__rank_args_mark(x->r) - first);
}

/* Device N of a "/device:GPU:N" plane name, -1 otherwise. */
static int64_t gpu_of(const char *name)
{
    const char *p = strstr(name, "/device:GPU:");
    return p ? strtoll(p + 12, NULL, 10) : -1;
}

static void one_line(xp *x, ts_pb line, int64_t plane_idx, int64_t gpu, const char *plane_name)
{
    ts_pb_field f;
    int64_t id = 0, ts_ns = 0;
    uint32_t name = 0, display = 0;
    ts_pb events = line;
    while (ts__pb_next(&line, &f)) {
        if (f.num == 1 && f.wire == 0) id = (int64_t)f.u;
        else if (f.num == 2 && f.wire == 2) name = intern_sub(x, &f.sub);
        else if (f.num == 11 && f.wire == 2 && ts__pb_len(&f.sub)) display = intern_sub(x, &f.sub);
        else if (f.num == 3 && f.wire == 0) ts_ns = (int64_t)(f.u > (uint64_t)1 << 62 ? (uint64_t)1 << 62 : f.u);
    }
    if (x->in.err) return;
    const char *lname = ts__rank_str(x->r, display ? display : name);
    const char *stream = strstr(lname, "Stream #");
    uint32_t track;
    ts_kind kind;
    const char *cat;
    if (gpu >= 0 && stream) {
        bool copy = strstr(lname, "Memcpy") != NULL;
        track = ts__rank_track(x->r, TS_TRACK_GPU_STREAM, gpu, strtoll(stream + 8, NULL, 10));
        kind = copy ? TS_KIND_GPU_MEMCPY : TS_KIND_KERNEL;
        cat = copy ? "gpu_memcpy" : "kernel";
    } else {
        bool host = strstr(plane_name, "/host:CPU") != NULL;
        track = ts__rank_track(x->r, TS_TRACK_THREAD, host ? 0 : plane_idx + 1, id);
        kind = host ? TS_KIND_CPU_OP : TS_KIND_OTHER;
        cat = host ? "tf_op" : "xplane";
    }
    if (track == TS_NONE32) return;
    ts_track *t = &x->r->tracks[track];
    if (!t->name_id) t->name_id = display ? display : name;
    if (!t->process_name_id) t->process_name_id = ts__rank_intern(x->r, plane_name, strlen(plane_name));
    uint32_t cat_id = ts__rank_intern(x->r, cat, strlen(cat));
    while (ts__pb_next(&events, &f))
        if (f.num == 4 && f.wire == 2) one_event(x, f.sub, track, ts_ns, kind, cat_id);
}

static int one_plane(xp *x, ts_pb plane, int64_t idx)
{
    idtab_free(&x->ev_name);
    idtab_free(&x->stat_name);
    plane_metadata(x, plane);
    if (x->in.err) return pb_fail(x);
    ts_pb_field f;
    char name[512] = "";
    for (ts_pb c = plane; ts__pb_next(&c, &f);)
        if (f.num == 2 && f.wire == 2) snprintf(name, sizeof name, "%.*s", (int)ts__pb_len(&f.sub), (const char *)f.sub.p);
    int64_t gpu = gpu_of(name);
    for (ts_pb c = plane; ts__pb_next(&c, &f);)
        if (f.num == 3 && f.wire == 2) one_line(x, f.sub, idx, gpu, name);
    return x->in.err ? pb_fail(x) : TS_OK;
}

/* Events and their bytes, counted by skipping over them (planes' lines'
 * field 4), so the model's slice and arg columns are sized once: an event
 * is a slice; args are estimated at one per 16 bytes of events (the BERT
 * capture has one per 30; more grow the columns as before), at most the
 * 32 stats an event keeps. Damaged bytes end the count early; the parse
 * reports them. */
static void reserve_model(xp *x, const void *data, size_t n)
{
    ts_pb_input in;
    ts_pb space = ts__pb_open(&in, data, n);
    ts_pb_field f, g, h;
    uint64_t events = 0, bytes = 0;
    while (ts__pb_next(&space, &f)) {
        if (f.num != 1 || f.wire != 2) continue;
        for (ts_pb plane = f.sub; ts__pb_next(&plane, &g);) {
            if (g.num != 3 || g.wire != 2) continue;
            for (ts_pb line = g.sub; ts__pb_next(&line, &h);)
                if (h.num == 4 && h.wire == 2) { events++; bytes += ts__pb_len(&h.sub); }
        }
    }
    uint64_t args = bytes / 16 < 32 * events ? bytes / 16 : 32 * events;
    if (events && events < UINT32_MAX / 2 && args < UINT32_MAX / 2)
        ts__rank_reserve(x->r, (uint32_t)events, (uint32_t)args + 8, 0);
}

static void meta_str(ts_rank *r, const char *key, const char *val)
{
    ts__rank_add_arg(r, ts__rank_intern(r, key, strlen(key)), TS_ARG_STR, ts__rank_intern(r, val, strlen(val)));
}

int ts__xplane_ingest_buffer(const char *name, const void *data, size_t n, ts_rank **out, ts_error *err)
{
    *out = NULL;
    xp x = {.path = name, .err = err};
    idtab_init(&x.ev_name);
    idtab_init(&x.stat_name);
    x.r = ts__rank_create(name);
    x.icache = ts__calloc(1, sizeof *x.icache);
    int rc = x.r && x.icache ? TS_OK : ts__error(err, TS_ENOMEM, "%s: out of memory", name);
    if (x.r) x.k_corr = ts__rank_intern(x.r, "correlation_id", 14);
    if (!rc) reserve_model(&x, data, n);
    ts_pb space = ts__pb_open(&x.in, data, n);
    ts_pb_field f;
    int64_t planes = 0;
    while (!rc && ts__pb_next(&space, &f))
        if (f.num == 1 && f.wire == 2) rc = one_plane(&x, f.sub, planes++);
    if (!rc && x.in.err) rc = pb_fail(&x);
    if (!rc && planes == 0)
        rc = ts__error(err, TS_EFORMAT, "%s: byte 0: not a TensorFlow XSpace (no XPlane in field 1)", name);
    if (!rc) {
        x.r->meta_args = ts__rank_args_mark(x.r);
        meta_str(x.r, "format", "tensorflow-xplane");
        x.r->n_meta_args = 1;
        if (x.n_aggregated)
            ts__rank_warn_n(x.r, TS_WARN_OTHER, x.n_aggregated, "%s: %llu aggregated events (num_occurrences, no "
                            "time) skipped", name, (unsigned long long)x.n_aggregated);
        x.r->n_events_read = x.n_events;
        rc = ts__rank_finish(x.r, err);
    }
    idtab_free(&x.ev_name);
    idtab_free(&x.stat_name);
    ts__free(x.icache, sizeof *x.icache);
    if (rc) { ts__rank_destroy(x.r); return rc; }
    *out = x.r;
    return TS_OK;
}

typedef struct xp_call { const char *path; ts_rank **out; ts_error *err; } xp_call;

static int xp_bytes(void *ud, const char *data, size_t n)
{
    xp_call *c = ud;
    return ts__xplane_ingest_buffer(c->path, data, n, c->out, c->err);
}

int ts__xplane_ingest(const char *path, int32_t order, ts_rank **out, ts_error *err)
{
    xp_call c = {path, out, err};
    int rc = ts__with_file_bytes(path, (size_t)16 << 30, xp_bytes, &c, err);
    if (!rc) {
        int32_t from_name = ts__rank_from_filename(path);
        (*out)->rank = from_name >= 0 ? from_name : order;
    }
    return rc;
}

bool ts__xplane_is_name(const char *path)
{
    return strstr(path, ".xplane.pb") != NULL;
}
