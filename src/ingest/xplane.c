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
 * duration in ps, both to whole ns (floor). info's counts-only loads read
 * every stat's bytes as a whole load does (the same errors) and keep none
 * of them: no arg rows, their keys and values not interned.
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
    bool        counts;     /* info's counts-only load: stats checked as a whole load reads them, nothing of
                               them kept (no arg rows, their keys and values not interned) */
} xp;

/* The first wire error met anywhere (x->in.err); the load fails with it. */
static int pb_fail(xp *x)
{
    return ts__error(x->err, TS_EFORMAT, "%s: byte %zu: %s", x->path, x->in.err_at, x->in.err);
}

/* Every field of the message [p, e) of x's input, in order: key (num << 3 |
 * wire, ts__pb_key), a length-delimited value's bytes [b, p) or a number in
 * u; p moves along. Damaged bytes end the loop with x->in.err set. */
#define XP_FIELDS(x, p, e, key, b, u) for (unsigned key; (key = ts__pb_key(&(x)->in, &(p), (e), &(b), &(u)));)

static uint32_t intern_bytes(xp *x, const unsigned char *b, const unsigned char *e)
{
    return ts__icache_intern(x->icache, x->r, (const char *)b, (size_t)(e - b));
}

/* A map<int64, XEventMetadata/XStatMetadata> entry: key 1, value 2 (its
 * name 2, display name 4). */
static void metadata_entry(xp *x, const unsigned char *p, const unsigned char *end, idtab *into, bool event)
{
    const unsigned char *b = NULL, *v;
    uint64_t u = 0, key = 0;
    uint32_t name = 0, display = 0;
    XP_FIELDS(x, p, end, k, b, u) {
        if (k == 0x08) key = u;
        if (k != 0x12) continue;
        v = b;
        const unsigned char *ve = p, *c;
        XP_FIELDS(x, v, ve, g, c, u)
            if (g == 0x12 && (event || !x->counts)) name = intern_bytes(x, c, v);
            else if (g == 0x22 && event && v > c) display = intern_bytes(x, c, v);
    }
    if (key == UINT64_MAX) key = 0;
    if ((event || !x->counts) && !idtab_put(into, key, display ? display : name)) x->r->oom = true;
}

/* The plane's name (field 2, into name[cap]) and metadata maps (4, 5), read
 * before its lines (fields may come in any order). */
static void plane_head(xp *x, const unsigned char *p, const unsigned char *end, char *name, size_t cap)
{
    const unsigned char *b = NULL;
    uint64_t u = 0;
    XP_FIELDS(x, p, end, k, b, u) {
        if (k == 0x22 || k == 0x2a) metadata_entry(x, b, p, k == 0x22 ? &x->ev_name : &x->stat_name, k == 0x22);
        else if (k == 0x12) snprintf(name, cap, "%.*s", (int)(p - b), (const char *)b);
    }
}

static uint32_t lookup(const idtab *m, uint64_t id)
{
    return idtab_get(m, id == UINT64_MAX ? 0 : id);
}

/* The arg of a stat: pushed, and a correlation id also into *corr. */
static inline void push_stat(xp *x, uint32_t key, ts_arg_type ty, uint64_t val, int64_t *corr)
{
    ts__rank_push_arg(x->r, key, ty, val);
    if (key == x->k_corr && (ty == TS_ARG_INT || ty == TS_ARG_UINT) && (int64_t)val >= 0) *corr = (int64_t)val;
}

/* One XStat [p, end) as an arg, field by field (any encoding). */
static void stat_arg(xp *x, const unsigned char *p, const unsigned char *end, int64_t *corr)
{
    const unsigned char *b = NULL;
    uint64_t u = 0, val = 0;
    uint32_t key = 0;
    ts_arg_type ty = TS_ARG_NULL;
    if (x->counts) {   /* the bytes checked, field by field, as below */
        XP_FIELDS(x, p, end, k, b, u) (void)k;
        return;
    }
    XP_FIELDS(x, p, end, k, b, u) {
        switch (k >> 3) {
        case 1: if (k != 0x0a) key = lookup(&x->stat_name, u); break;
        case 2: if (k != 0x12) { ty = TS_ARG_DOUBLE; val = u; } break;
        case 3: if (k != 0x1a) { ty = TS_ARG_UINT; val = u; } break;
        case 4: if (k != 0x22) { ty = TS_ARG_INT; val = u; } break;
        case 5: case 6: if ((k & 7) == 2) { ty = TS_ARG_STR; val = intern_bytes(x, b, p); } break;
        case 7: if (k != 0x3a) { ty = TS_ARG_STR; val = lookup(&x->stat_name, u); } break;
        default: break;
        }
    }
    if (key && ty != TS_ARG_NULL) push_stat(x, key, ty, val, corr);
}

/* One XStat as TensorFlow writes it (metadata id, then at most one value,
 * that value last): what stat_arg would do, in fewer steps. False, with
 * nothing done, for any other shape; stat_arg reads those. */
static bool stat_quick(xp *x, const unsigned char *p, const unsigned char *end, int64_t *corr)
{
    const unsigned char *str = NULL;
    uint64_t id = 0, val = 0, n;
    if (p < end && *p == 0x08) {
        p++;
        if (!ts__pb_quick_varint(&p, end, x->in.lim, &id)) return false;
    }
    if (p == end) return true;   /* no value (proto3 omits zeros): no arg */
    unsigned k = *p++;
    ts_arg_type ty = k == 0x18 ? TS_ARG_UINT : k == 0x20 ? TS_ARG_INT : k == 0x11 ? TS_ARG_DOUBLE : TS_ARG_STR;
    if (k == 0x18 || k == 0x20 || k == 0x38) {
        if (!ts__pb_quick_varint(&p, end, x->in.lim, &val) || p != end) return false;
    } else if (k == 0x11) {
        if (end - p != 8) return false;
        for (int i = 0; i < 8; i++) val |= (uint64_t)p[i] << (8 * i);
    } else if (k == 0x2a || k == 0x32) {
        if (!ts__pb_quick_varint(&p, end, x->in.lim, &n) || n != (uint64_t)(end - p)) return false;
        str = p;
    } else {
        return false;
    }
    if (x->counts) return true;   /* checked: info keeps no args */
    if (str) val = intern_bytes(x, str, end);
    else if (k == 0x38) val = lookup(&x->stat_name, val);
    uint32_t key = lookup(&x->stat_name, id);
    if (key) push_stat(x, key, ty, val, corr);
    return true;
}

/* ps to ns, floor, saturating well inside int64. */
static int64_t ps_to_ns(uint64_t ps) { return (int64_t)(ps / 1000 > (uint64_t)1 << 62 ? (uint64_t)1 << 62 : ps / 1000); }

enum { MAX_STATS = 32 };   /* stats kept per event; more are ignored */

/* One XEvent [p, end): its fields first (an aggregate, known only from
 * field 5, must intern nothing), then its stats as args and the slice.
 * Stats of fewer than 128 bytes (one length byte) and the varint fields
 * are read here; anything else through the cursor. */
static void one_event(xp *x, const unsigned char *p, const unsigned char *end, uint32_t track, int64_t line_ns,
                      ts_kind kind, uint32_t cat)
{
    const unsigned char *b = NULL, *stat[MAX_STATS], *stat_end[MAX_STATS];
    uint64_t u = 0, v[6] = {0};   /* by field: 1 metadata id, 2 offset_ps, 3 duration_ps, 5 num_occurrences */
    uint32_t n_stats = 0;
    while (p < end) {
        unsigned k = *p;
        if (k == 0x22 && end - p >= 2 && p[1] < 0x80 && p[1] <= end - p - 2) {
            if (n_stats < MAX_STATS) { stat[n_stats] = p + 2; stat_end[n_stats++] = p + 2 + p[1]; }
            p += 2 + p[1];
            continue;
        }
        const unsigned char *q = p + 1;
        if ((k == 0x08 || k == 0x10 || k == 0x18 || k == 0x28) && ts__pb_quick_varint(&q, end, x->in.lim, &u)) {
            v[k >> 3] = k == 0x28 ? v[5] | u : u;
            p = q;
            continue;
        }
        if (!(k = ts__pb_key(&x->in, &p, end, &b, &u))) break;
        if (k == 0x22 && n_stats < MAX_STATS) { stat[n_stats] = b; stat_end[n_stats++] = p; }
        else if (k == 0x08 || k == 0x10 || k == 0x18 || k == 0x28) v[k >> 3] = k == 0x28 ? v[5] | u : u;
    }
    x->n_events++;
    if (v[5]) { x->n_aggregated++; return; }   /* proto3 omits a zero offset: only num_occurrences marks an aggregate */
    uint32_t first = ts__rank_args_mark(x->r);
    int64_t corr = -1;
    for (uint32_t i = 0; i < n_stats; i++)
        if (!stat_quick(x, stat[i], stat_end[i], &corr)) stat_arg(x, stat[i], stat_end[i], &corr);
    ts__rank_push_slice(x->r, track, line_ns + ps_to_ns(v[2]), ps_to_ns(v[3]), lookup(&x->ev_name, v[1]), cat, kind,
                        first, ts__rank_args_mark(x->r) - first, corr, -1);
}

/* Device N of a "/device:GPU:N" plane name, -1 otherwise. */
static int64_t gpu_of(const char *name)
{
    const char *p = strstr(name, "/device:GPU:");
    return p ? strtoll(p + 12, NULL, 10) : -1;
}

/* The line's track for its name (and its plane's); TS_NONE32 when out of memory. */
static uint32_t line_track(xp *x, uint32_t name, int64_t id, int64_t plane_idx, int64_t gpu, const char *plane_name,
                           ts_kind *kind, uint32_t *cat_id)
{
    const char *lname = ts__rank_str(x->r, name);
    const char *stream = strstr(lname, "Stream #");
    uint32_t track;
    const char *cat;
    if (gpu >= 0 && stream) {
        bool copy = strstr(lname, "Memcpy") != NULL;
        track = ts__rank_track(x->r, TS_TRACK_GPU_STREAM, gpu, strtoll(stream + 8, NULL, 10));
        *kind = copy ? TS_KIND_GPU_MEMCPY : TS_KIND_KERNEL;
        cat = copy ? "gpu_memcpy" : "kernel";
    } else {
        bool host = strstr(plane_name, "/host:CPU") != NULL;
        track = ts__rank_track(x->r, TS_TRACK_THREAD, host ? 0 : plane_idx + 1, id);
        *kind = host ? TS_KIND_CPU_OP : TS_KIND_OTHER;
        cat = host ? "tf_op" : "xplane";
    }
    if (track == TS_NONE32) return track;
    ts_track *t = &x->r->tracks[track];
    if (!t->name_id) t->name_id = name;
    if (!t->process_name_id) t->process_name_id = ts__rank_intern(x->r, plane_name, strlen(plane_name));
    *cat_id = ts__rank_intern(x->r, cat, strlen(cat));
    return track;
}

static void one_line(xp *x, const unsigned char *p, const unsigned char *end, int64_t plane_idx, int64_t gpu,
                     const char *plane_name)
{
    const unsigned char *b = NULL, *events = p;
    uint64_t u = 0;
    int64_t id = 0, ts_ns = 0;
    uint32_t name = 0, display = 0, cat = 0;
    XP_FIELDS(x, p, end, k, b, u) {
        if (k == 0x08) id = (int64_t)u;
        else if (k == 0x12) name = intern_bytes(x, b, p);
        else if (k == 0x5a && p > b) display = intern_bytes(x, b, p);
        else if (k == 0x18) ts_ns = (int64_t)(u > (uint64_t)1 << 62 ? (uint64_t)1 << 62 : u);
    }
    if (x->in.err) return;
    ts_kind kind;
    uint32_t track = line_track(x, display ? display : name, id, plane_idx, gpu, plane_name, &kind, &cat);
    if (track == TS_NONE32) return;
    XP_FIELDS(x, events, end, k, b, u)
        if (k == 0x22) one_event(x, b, events, track, ts_ns, kind, cat);
}

static int one_plane(xp *x, const unsigned char *p, const unsigned char *end, int64_t idx)
{
    idtab_free(&x->ev_name);
    idtab_free(&x->stat_name);
    char name[512] = "";
    plane_head(x, p, end, name, sizeof name);
    if (x->in.err) return pb_fail(x);
    int64_t gpu = gpu_of(name);
    const unsigned char *b = NULL;
    uint64_t u = 0;
    XP_FIELDS(x, p, end, k, b, u)
        if (k == 0x1a) one_line(x, b, p, idx, gpu, name);
    return x->in.err ? pb_fail(x) : TS_OK;
}

/* Events and their bytes, counted by skipping over them (planes' lines'
 * field 4), so the model's slice and arg columns are sized once: an event
 * is a slice; args are estimated at one per 16 bytes of events (the BERT
 * capture has one per 30; more grow the columns as before), at most the
 * 32 stats an event keeps. Damaged bytes end the count early; the parse
 * reports them (this count's input is its own, its error dropped). */
static void reserve_model(xp *x, const void *data, size_t n)
{
    ts_pb_input in;
    ts_pb all = ts__pb_open(&in, data, n);
    const unsigned char *p = all.p, *end = all.end, *b = NULL, *pl, *ln;
    uint64_t u = 0, events = 0, bytes = 0;
    for (unsigned k; (k = ts__pb_key(&in, &p, end, &b, &u));) {
        if (k != 0x0a) continue;
        pl = b;
        for (unsigned g; (g = ts__pb_key(&in, &pl, p, &b, &u));) {
            if (g != 0x1a) continue;
            ln = b;
            for (unsigned h; (h = ts__pb_key(&in, &ln, pl, &b, &u));)
                if (h == 0x22) { events++; bytes += (uint64_t)(ln - b); }
        }
    }
    uint64_t args = x->counts ? 0 : bytes / 16 < MAX_STATS * events ? bytes / 16 : MAX_STATS * events;
    if (events && events < UINT32_MAX / 2 && args < UINT32_MAX / 2)
        ts__rank_reserve(x->r, (uint32_t)events, (uint32_t)args + 8, 0);
}

static void meta_str(ts_rank *r, const char *key, const char *val)
{
    ts__rank_add_arg(r, ts__rank_intern(r, key, strlen(key)), TS_ARG_STR, ts__rank_intern(r, val, strlen(val)));
}

int ts__xplane_ingest_buffer(const char *name, const void *data, size_t n, bool counts_only, ts_rank **out,
                             ts_error *err)
{
    *out = NULL;
    xp x = {.path = name, .err = err, .counts = counts_only};
    idtab_init(&x.ev_name);
    idtab_init(&x.stat_name);
    x.r = ts__rank_create(name);
    x.icache = ts__calloc(1, sizeof *x.icache);
    int rc = x.r && x.icache ? TS_OK : ts__error(err, TS_ENOMEM, "%s: out of memory", name);
    if (x.r) x.k_corr = ts__rank_intern(x.r, "correlation_id", 14);
    if (!rc) reserve_model(&x, data, n);
    ts_pb space = ts__pb_open(&x.in, data, n);
    const unsigned char *p = space.p, *b = NULL;
    uint64_t u = 0;
    int64_t planes = 0;
    for (unsigned k; !rc && (k = ts__pb_key(&x.in, &p, space.end, &b, &u));)
        if (k == 0x0a) rc = one_plane(&x, b, p, planes++);
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

typedef struct xp_call { const char *path; bool counts_only; ts_rank **out; ts_error *err; } xp_call;

static int xp_bytes(void *ud, const char *data, size_t n)
{
    xp_call *c = ud;
    return ts__xplane_ingest_buffer(c->path, data, n, c->counts_only, c->out, c->err);
}

int ts__xplane_ingest(const char *path, int32_t order, bool counts_only, ts_rank **out, ts_error *err)
{
    xp_call c = {path, counts_only, out, err};
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
