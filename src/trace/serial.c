/* serial.c - one finished rank of the trace model as bytes, and back.
 *
 * For: moving ranks between processes of one distributed run (src/dist/,
 * docs/distributed.md): a process ingests its share of the rank files and
 * sends each finished rank to the process that analyses the job. The bytes
 * are the model's own columns, so the rank read back is the rank that was
 * written, row for row and string id for string id, and every analysis of it
 * answers what it answers on the original.
 * Not for: files on disk or other machines' builds (the columns are written in
 * this machine's byte order and layout; the header names the format version
 * and the reader refuses another), nor ranks that are not finished.
 * The reader checks every row id and range against the tables it has read, so
 * damaged bytes are an error naming the byte, never an out-of-bounds read.
 */
#include "trace/model.h"

#define SERIAL_MAGIC "TSRANK03"

/* ---- writer ---- */
static void put(ts_buf *b, const void *p, size_t n) { if (n) ts__buf_add(b, (const char *)p, n); }
static void put_u8(ts_buf *b, uint8_t v) { put(b, &v, 1); }
static void put_u16(ts_buf *b, uint16_t v) { put(b, &v, 2); }
static void put_u32(ts_buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(ts_buf *b, uint64_t v) { put(b, &v, 8); }
static void put_i32(ts_buf *b, int32_t v) { put(b, &v, 4); }
static void put_i64(ts_buf *b, int64_t v) { put(b, &v, 8); }
static void put_str(ts_buf *b, const char *s, size_t n) { put_u32(b, (uint32_t)n); put(b, s, n); }

/* One table's columns: a pointer to each column pointer, its element size,
 * and whether it may be absent (a compact rank's corr and ext_id: NULL). */
typedef struct scol { void **p; size_t elem; bool opt; } scol;

#define COL(c, elem) {(void **)&(c), elem, false}
#define OPT_COL(c, elem) {(void **)&(c), elem, true}
#define S_SLICE_COLS(s) { COL((s)->ts_ns, 8), COL((s)->dur_ns, 8), COL((s)->track, 4), COL((s)->name, 4),     \
    COL((s)->cat, 4), COL((s)->kind, 1), COL((s)->depth, 2), COL((s)->parent, 4), COL((s)->args, 4),            \
    COL((s)->n_args, 2), OPT_COL((s)->corr, 8), OPT_COL((s)->ext_id, 8) }
#define S_ARG_COLS(a) { COL((a)->key, 4), COL((a)->type, 1), COL((a)->val, 8) }
#define S_INSTANT_COLS(s) { COL((s)->ts_ns, 8), COL((s)->track, 4), COL((s)->name, 4), COL((s)->cat, 4),      \
    COL((s)->kind, 1), COL((s)->scope, 1), COL((s)->args, 4), COL((s)->n_args, 2) }
#define S_COUNTER_COLS(c) { COL((c)->ts_ns, 8), COL((c)->track, 4), COL((c)->value, 8) }
#define S_FLOW_COLS(f) { COL((f)->id, 8), COL((f)->kind, 1), COL((f)->cat, 4), COL((f)->from, 4), COL((f)->to, 4) }

/* Row count, then each column whole; a column that may be absent is
 * preceded by a byte, 1 = present, 0 = absent (a compact rank's dropped ids:
 * read back as NULL, as it was). An absent column that may not be (an
 * unfinished table) is sent as all bytes 0xff. */
static void put_table(ts_buf *b, uint32_t n, const scol *c, int n_cols)
{
    uint8_t none[256];
    memset(none, 0xff, sizeof none);
    put_u32(b, n);
    for (int i = 0; i < n_cols; i++) {
        size_t bytes = (size_t)n * c[i].elem;
        if (c[i].opt && n) put_u8(b, *c[i].p != NULL);
        if (*c[i].p) { put(b, *c[i].p, bytes); continue; }
        if (c[i].opt) continue;
        for (size_t k = 0; k < bytes; k += sizeof none) put(b, none, bytes - k < sizeof none ? bytes - k : sizeof none);
    }
}

/* A numbered flow table (model.h) written as put_table writes the full one. */
static void put_numbered_flows(ts_buf *b, const ts_flows *f)
{
    uint64_t v[256];
    put_u32(b, f->n);
    for (int col = 0; col < 3; col++)
        for (uint32_t i = 0; i < f->n; i += 256) {
            uint32_t k = f->n - i < 256 ? f->n - i : 256;
            for (uint32_t j = 0; j < k; j++)
                v[j] = col == 0 ? (uint64_t)(i + j) : col == 1 ? f->kind_all : f->cat_all;
            if (col == 0) { put(b, v, (size_t)k * 8); continue; }
            unsigned char out[256 * 4];
            for (uint32_t j = 0; j < k; j++) {
                if (col == 1) out[j] = (uint8_t)v[j];
                else { uint32_t c32 = (uint32_t)v[j]; memcpy(out + 4 * j, &c32, 4); }
            }
            put(b, out, (size_t)k * (col == 1 ? 1 : 4));
        }
    put(b, f->from, (size_t)f->n * 4);
    put(b, f->to, (size_t)f->n * 4);
}

static void put_track(ts_buf *b, const ts_track *t)
{
    put_i64(b, t->pid); put_i64(b, t->tid); put_u32(b, t->name_id); put_u32(b, t->process_name_id);
    put_i32(b, t->device); put_i64(b, t->stream); put_i32(b, t->sort_index); put_u32(b, t->process_label_id);
    put_i64(b, t->process_sort_index); put_u8(b, t->kind); put_u32(b, t->first_slice); put_u32(b, t->n_slices);
}

int ts__rank_serialize(const ts_rank *r, ts_buf *b)
{
    if (!r->finished) return TS_EINVAL;
    ts_rank *m = (ts_rank *)r;   /* the column tables below only read through it */
    put(b, SERIAL_MAGIC, 8);
    put_i32(b, r->rank); put_i32(b, r->world_size); put_str(b, r->path, strlen(r->path));
    put_i64(b, r->base_time_ns); put_u8(b, r->us_fractions); put_u32(b, r->meta_args); put_u16(b, r->n_meta_args);
    put_u64(b, r->n_events_read); put_u64(b, r->n_rounding_overruns);
    put_u8(b, r->summary);
    for (int k = 0; k < 4; k++) put_u32(b, r->summary ? r->read_rows[k] : 0);
    put_u32(b, TS_WARN_COUNT);
    for (int k = 0; k < TS_WARN_COUNT; k++) {
        put_u64(b, r->warn_count[k]);
        put_u8(b, r->warn_first[k] != NULL);
        if (r->warn_first[k]) put_str(b, r->warn_first[k], strlen(r->warn_first[k]));
    }
    put_u32(b, r->strings.n);
    for (uint32_t id = 1; id < r->strings.n; id++) put_str(b, ts__rank_str(r, id), ts__str_len(&r->strings, id));
    put_u32(b, r->n_tracks);
    for (uint32_t i = 0; i < r->n_tracks; i++) put_track(b, &r->tracks[i]);
    { scol c[] = S_SLICE_COLS(&m->slices); put_table(b, r->slices.n, c, 12); }
    { scol c[] = S_ARG_COLS(&m->args); put_table(b, r->args.n, c, 3); }
    { scol c[] = S_INSTANT_COLS(&m->instants); put_table(b, r->instants.n, c, 8); }
    { scol c[] = S_COUNTER_COLS(&m->counters); put_table(b, r->counters.n, c, 3); }
    if (r->flows.numbered) put_numbered_flows(b, &r->flows);
    else { scol c[] = S_FLOW_COLS(&m->flows); put_table(b, r->flows.n, c, 5); }
    put_u32(b, r->n_iterations);
    for (uint32_t i = 0; i < r->n_iterations; i++) {
        const ts_iteration *it = &r->iterations[i];
        put_i64(b, it->step); put_i64(b, it->start_ns); put_i64(b, it->end_ns); put_u32(b, it->slice);
    }
    return b->oom ? TS_ENOMEM : TS_OK;
}

/* ---- reader ---- */
typedef struct rd {
    const uint8_t *p;
    size_t         n, at;
    const char    *what;   /* names the bytes in errors */
    ts_error      *err;
    int            rc;     /* first failure; later reads are no-ops */
} rd;

static int rd_fail(rd *d, int status, const char *why)
{
    if (d->rc == TS_OK) d->rc = ts__error(d->err, status, "%s: byte %zu: %s", d->what, d->at, why);
    return d->rc;
}

static bool get(rd *d, void *out, size_t n)
{
    if (d->rc) return false;
    if (n > d->n - d->at) { rd_fail(d, TS_EFORMAT, "the rank's data ends early"); return false; }
    memcpy(out, d->p + d->at, n);
    d->at += n;
    return true;
}
static uint8_t get_u8(rd *d) { uint8_t v = 0; get(d, &v, 1); return v; }
static uint16_t get_u16(rd *d) { uint16_t v = 0; get(d, &v, 2); return v; }
static uint32_t get_u32(rd *d) { uint32_t v = 0; get(d, &v, 4); return v; }
static uint64_t get_u64(rd *d) { uint64_t v = 0; get(d, &v, 8); return v; }
static int32_t get_i32(rd *d) { int32_t v = 0; get(d, &v, 4); return v; }
static int64_t get_i64(rd *d) { int64_t v = 0; get(d, &v, 8); return v; }

/* A length-prefixed string, NUL-terminated in a new allocation of len + 1. */
static char *get_str(rd *d, uint32_t *len_out)
{
    uint32_t len = get_u32(d);
    if (d->rc) return NULL;
    if (len > d->n - d->at) { rd_fail(d, TS_EFORMAT, "a string runs past the end of the rank's data"); return NULL; }
    char *s = ts__malloc((size_t)len + 1);
    if (!s) { rd_fail(d, TS_ENOMEM, "out of memory"); return NULL; }
    memcpy(s, d->p + d->at, len);
    s[len] = 0;
    d->at += len;
    if (len_out) *len_out = len;
    return s;
}

static void free_str(char *s) { if (s) ts__free(s, strlen(s) + 1); }

/* A C string (path, warning line): no NUL inside, or it would not read back whole. */
static char *get_cstr(rd *d)
{
    size_t at = d->at;
    uint32_t len = 0;
    char *s = get_str(d, &len);
    if (s && strlen(s) != len) {
        ts__free(s, (size_t)len + 1);
        d->at = at;
        rd_fail(d, TS_EFORMAT, "a path or message with a NUL byte inside");
        return NULL;
    }
    return s;
}

/* A flag written as 0 or 1. */
static bool get_flag(rd *d)
{
    uint8_t v = get_u8(d);
    if (v > 1) { d->at--; rd_fail(d, TS_EFORMAT, "a flag that is neither 0 nor 1"); }
    return v == 1;
}

/* Columns of n rows, each its own allocation of exactly n rows (cap = n);
 * an absent optional column stays NULL. Nothing is allocated for bytes
 * that are not there. */
static uint32_t get_table(rd *d, const scol *c, int n_cols, uint32_t *cap)
{
    uint32_t n = get_u32(d);
    if (d->rc || n == 0) return 0;
    size_t row = 0;
    for (int i = 0; i < n_cols; i++) row += c[i].opt ? 0 : c[i].elem;
    if ((uint64_t)n * row > d->n - d->at) { rd_fail(d, TS_EFORMAT, "a table runs past the end of the rank's data"); return 0; }
    *cap = n;   /* the rank frees n rows of every column from here on (NULL ones too) */
    for (int i = 0; i < n_cols && !d->rc; i++) {
        if (c[i].opt && !get_flag(d)) continue;
        size_t bytes = (size_t)n * c[i].elem;
        if (bytes > d->n - d->at) { rd_fail(d, TS_EFORMAT, "a table runs past the end of the rank's data"); break; }
        if (!(*c[i].p = ts__malloc(bytes))) { rd_fail(d, TS_ENOMEM, "out of memory"); break; }
        get(d, *c[i].p, bytes);
    }
    return d->rc ? 0 : n;
}

static void read_header(rd *d, ts_rank *r)
{
    r->rank = get_i32(d);
    r->world_size = get_i32(d);
    char *path = get_cstr(d);
    if (path) { free_str(r->path); r->path = path; }
    r->base_time_ns = get_i64(d);
    r->us_fractions = get_flag(d);
    r->meta_args = get_u32(d);
    r->n_meta_args = get_u16(d);
    r->n_events_read = get_u64(d);
    r->n_rounding_overruns = get_u64(d);
    r->summary = get_flag(d);
    for (int k = 0; k < 4; k++) r->read_rows[k] = get_u32(d);
    if (!r->summary && (r->read_rows[0] | r->read_rows[1] | r->read_rows[2] | r->read_rows[3]) && !d->rc) {
        rd_fail(d, TS_EFORMAT, "row counts as read for a rank that is not a summary");
        return;
    }
    if (get_u32(d) != TS_WARN_COUNT && !d->rc) { rd_fail(d, TS_EFORMAT, "another build's warning kinds"); return; }
    for (int k = 0; k < TS_WARN_COUNT && !d->rc; k++) {
        r->warn_count[k] = get_u64(d);
        if (get_flag(d)) r->warn_first[k] = get_cstr(d);
    }
}

static void read_strings(rd *d, ts_rank *r)
{
    uint32_t n = get_u32(d);
    if (n == 0 && !d->rc) { d->at -= 4; rd_fail(d, TS_EFORMAT, "a string table without its empty string"); }
    for (uint32_t id = 1; id < n && !d->rc; id++) {
        size_t at = d->at;
        uint32_t len;
        char *s = get_str(d, &len);
        if (!s) return;
        uint32_t got = ts__rank_intern(r, s, len);
        ts__free(s, (size_t)len + 1);
        if (ts__strpool_oom(&r->strings)) { rd_fail(d, TS_ENOMEM, "out of memory"); return; }
        if (got != id) { d->at = at; rd_fail(d, TS_EFORMAT, "a string that is empty or given twice"); return; }
    }
}

static void read_tracks(rd *d, ts_rank *r)
{
    uint32_t n = get_u32(d);
    for (uint32_t i = 0; i < n && !d->rc; i++) {
        size_t at = d->at;
        ts_track t;
        memset(&t, 0, sizeof t);
        t.pid = get_i64(d); t.tid = get_i64(d); t.name_id = get_u32(d); t.process_name_id = get_u32(d);
        t.device = get_i32(d); t.stream = get_i64(d); t.sort_index = get_i32(d); t.process_label_id = get_u32(d);
        t.process_sort_index = get_i64(d); t.kind = get_u8(d); t.first_slice = get_u32(d); t.n_slices = get_u32(d);
        if (d->rc) return;
        size_t end = d->at;
        d->at = at;   /* errors below name the track's first byte */
        if (t.kind > TS_TRACK_ASYNC) { rd_fail(d, TS_EFORMAT, "a track of no known kind"); return; }
        uint32_t row = ts__rank_track(r, (ts_track_kind)t.kind, t.pid, t.tid);
        if (r->oom) { rd_fail(d, TS_ENOMEM, "out of memory"); return; }
        if (row != i) { rd_fail(d, TS_EFORMAT, "a track given twice"); return; }
        r->tracks[row] = t;
        d->at = end;
    }
}

static void read_rest(rd *d, ts_rank *r)
{
    { scol c[] = S_SLICE_COLS(&r->slices); r->slices.n = get_table(d, c, 12, &r->slices.cap); }
    { scol c[] = S_ARG_COLS(&r->args); r->args.n = get_table(d, c, 3, &r->args.cap); }
    { scol c[] = S_INSTANT_COLS(&r->instants); r->instants.n = get_table(d, c, 8, &r->instants.cap); }
    { scol c[] = S_COUNTER_COLS(&r->counters); r->counters.n = get_table(d, c, 3, &r->counters.cap); }
    { scol c[] = S_FLOW_COLS(&r->flows); r->flows.n = get_table(d, c, 5, &r->flows.cap); }
    uint32_t n = get_u32(d);
    if (d->rc || n == 0) return;
    if ((uint64_t)n * 28 > d->n - d->at) { rd_fail(d, TS_EFORMAT, "the iterations run past the end of the rank's data"); return; }
    r->iterations = ts__malloc((size_t)n * sizeof *r->iterations);
    if (!r->iterations) { rd_fail(d, TS_ENOMEM, "out of memory"); return; }
    r->cap_iterations = r->n_iterations = n;
    for (uint32_t i = 0; i < n; i++) {
        ts_iteration *it = &r->iterations[i];
        it->step = get_i64(d); it->start_ns = get_i64(d); it->end_ns = get_i64(d); it->slice = get_u32(d);
    }
}

/* ---- checks: every id points into its table ---- */
static bool in(uint64_t first, uint64_t count, uint64_t n) { return first <= n && count <= n - first; }
static bool row_or_none(uint32_t v, uint32_t n) { return v == TS_NONE32 || v < n; }

static const char *check_slices(const ts_rank *r)
{
    const ts_slices *s = &r->slices;
    uint32_t ns = r->strings.n;
    for (uint32_t i = 0; i < s->n; i++) {
        int64_t end;
        if (s->track[i] >= r->n_tracks) return "a slice on a track that does not exist";
        if (s->name[i] >= ns || s->cat[i] >= ns) return "a slice naming a string that does not exist";
        if (s->kind[i] >= TS_KIND_COUNT) return "a slice of no known kind";
        if (!row_or_none(s->parent[i], s->n)) return "a slice whose parent does not exist";
        if (s->args[i] == TS_NONE32 ? s->n_args[i] != 0 : !in(s->args[i], s->n_args[i], r->args.n))
            return "a slice whose args do not exist";
        if (s->dur_ns[i] < 0 || __builtin_add_overflow(s->ts_ns[i], s->dur_ns[i], &end)) return "a slice with a bad duration";
    }
    return NULL;
}

static const char *check_others(const ts_rank *r)
{
    uint32_t ns = r->strings.n;
    for (uint32_t i = 0; i < r->n_tracks; i++) {
        const ts_track *t = &r->tracks[i];
        if (!in(t->first_slice, t->n_slices, r->slices.n)) return "a track whose slices do not exist";
        if (t->name_id >= ns || t->process_name_id >= ns || t->process_label_id >= ns)
            return "a track naming a string that does not exist";
    }
    for (uint32_t i = 0; i < r->args.n; i++) {
        if (r->args.key[i] >= ns || r->args.type[i] > TS_ARG_JSON) return "an arg of no known key or type";
        if ((r->args.type[i] == TS_ARG_STR || r->args.type[i] == TS_ARG_JSON) && r->args.val[i] >= ns)
            return "an arg naming a string that does not exist";
    }
    if (r->meta_args == TS_NONE32 ? r->n_meta_args != 0 : !in(r->meta_args, r->n_meta_args, r->args.n))
        return "metadata args that do not exist";
    const ts_instants *it = &r->instants;
    for (uint32_t i = 0; i < it->n; i++)
        if (it->track[i] >= r->n_tracks || it->name[i] >= ns || it->cat[i] >= ns || it->kind[i] >= TS_KIND_COUNT ||
            (it->args[i] == TS_NONE32 ? it->n_args[i] != 0 : !in(it->args[i], it->n_args[i], r->args.n)))
            return "an instant whose track, name or args do not exist";
    for (uint32_t i = 0; i < r->counters.n; i++)
        if (r->counters.track[i] >= r->n_tracks) return "a counter on a track that does not exist";
    const ts_flows *f = &r->flows;
    for (uint32_t i = 0; i < f->n; i++)
        if (ts__flow_kind(f, i) > TS_FLOW_DEP || ts__flow_cat(f, i) >= ns || !row_or_none(f->from[i], r->slices.n) ||
            !row_or_none(f->to[i], r->slices.n))
            return "a flow whose ends do not exist";
    for (uint32_t i = 0; i < r->n_iterations; i++)
        if (!row_or_none(r->iterations[i].slice, r->slices.n)) return "an iteration whose slice does not exist";
    return NULL;
}

int ts__rank_deserialize(const void *bytes, size_t n, const char *what, ts_rank **out, ts_error *err)
{
    *out = NULL;
    if (err) { err->status = TS_OK; err->msg[0] = 0; }
    rd d = {.p = bytes, .n = n, .what = what, .err = err};
    char magic[8];
    if (!get(&d, magic, 8) || memcmp(magic, SERIAL_MAGIC, 8)) {
        d.at = 0;
        return rd_fail(&d, TS_EFORMAT, "not a rank written by this build of trainscope");
    }
    ts_rank *r = ts__rank_create("");
    if (!r) return ts__error(err, TS_ENOMEM, "%s: out of memory", what);
    read_header(&d, r);
    read_strings(&d, r);
    read_tracks(&d, r);
    read_rest(&d, r);
    if (!d.rc && d.at != d.n) rd_fail(&d, TS_EFORMAT, "bytes after the rank's data");
    const char *bad = d.rc ? NULL : check_slices(r);
    if (!bad && !d.rc) bad = check_others(r);
    if (bad) { d.at = 0; rd_fail(&d, TS_EFORMAT, bad); }
    if (d.rc) { ts__rank_destroy(r); return d.rc; }
    r->finished = true;
    *out = r;
    return TS_OK;
}
