/* nsys.c - Nsight Systems SQLite exports (`nsys export --type sqlite`) into
 * the trace model, one file = one rank, through libsqlite3.
 *
 * Not for: .nsys-rep reports (only nsys itself reads those: export them), or
 * Chrome JSON (chrome_json.c). The bytes come from the one byte source
 * (source.c: plain, gzip or zstd); SQLite reads them in place through
 * sqlite3_deserialize, read-only, so a mapped export is never copied.
 *
 * Tables read, each when present, every column by name (nsys versions add,
 * drop and reorder columns; a table without a column this file needs is an
 * "unknown layout" error naming both):
 *
 *   table                              becomes
 *   StringIds (id, value)              the names behind every *Id / name column
 *   CUPTI_ACTIVITY_KIND_KERNEL         kernel slices on (deviceId, streamId), demangled name, launch args
 *   CUPTI_ACTIVITY_KIND_MEMCPY         gpu_memcpy slices named as Kineto names them ("Memcpy HtoD (Pinned -> Device)")
 *   CUPTI_ACTIVITY_KIND_MEMSET         gpu_memset slices ("Memset (Device)")
 *   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION cuda_sync slices ("Event Sync", ...) on the stream, as Kineto writes
 *                                      them (event and context syncs on stream -1)
 *   CUPTI_ACTIVITY_KIND_RUNTIME/DRIVER cuda_runtime / cuda_driver slices on the calling thread; the
 *                                      "_v7000" version suffix is dropped (cudaLaunchKernel, as Kineto names it)
 *   NVTX_EVENTS                        push/pop ranges: user_annotation slices on the thread; start/end ranges:
 *                                      one async track per range; marks: instants
 *   OSRT_API                           os_runtime slices on the calling thread
 *   ThreadNames, PROCESSES             thread and process names; TARGET_INFO_GPU: "GPU N: <name>"
 *   TARGET_INFO_SESSION_START_TIME     utcEpochNs, added to every time (as Kineto's baseTimeNanoseconds)
 *   META_DATA_EXPORT / EXPORT_META_DATA the nsys version and export schema, kept as rank metadata with the
 *                                      layout found ("nsys_layout"), which `trainscope info` prints
 *
 * globalTid / globalPid are nsys' serialized ids: pid = (id >> 24) & 0xFFFFFF,
 * tid = id & 0xFFFFFF (the formula in nsys' own documentation). Times are ns.
 * Correlation ids go to the corr column, so launches pair with their ops as in
 * Kineto traces and every analysis works unchanged.
 */
#include "ingest/ingest.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sqlite_api.h"

enum { NSYS_MAX_STRING_ID = 1 << 28 };   /* StringIds are dense from 0; past this the file is not sane */
enum { NSYS_MEM_KINDS = 16 };
enum { NSYS_CONST_SLOTS = 64 };   /* a power of two, above the number of constant keys and categories */

typedef struct nsys {
    const char *path;
    sqlite3    *db;
    ts_rank    *r;
    ts_error   *err;
    uint32_t   *str;       /* StringIds id -> rank string id, 0 = no such id */
    uint32_t    n_str;     /* entries in str */
    uint32_t   *stripped;  /* StringIds id -> name without "_vNNNN", 0 = not computed yet */
    int64_t     base_ns;   /* session start, ns since the epoch; 0 = unknown */
    ts_map64    thread_name;  /* globalTid -> rank string id */
    ts_map64    proc_name;    /* pid -> rank string id */
    ts_map64    gpu_name;     /* device id -> rank string id ("GPU 0: NVIDIA A100...") */
    uint32_t    mem_kind_label[NSYS_MEM_KINDS]; /* ENUM_CUDA_MEM_KIND labels by id, 0 = none */
    uint64_t    n_bad;        /* rows without a start or end time, skipped */
    uint64_t    n_negative;   /* rows ending before they start (clamped to 0) */
    uint32_t    n_tables;     /* activity tables found */
    /* Constant strings (categories, arg keys: literals and the static key
     * tables) -> their rank string ids, by address: interning them again for
     * every row was a fifth of the reader's instructions. */
    struct { const char *s; uint32_t id; } const_ids[NSYS_CONST_SLOTS];
} nsys;

static int sql_error(nsys *ns, const char *what)
{
    return ts__error(ns->err, TS_EFORMAT, "%s: byte 0: SQLite: %s: %s", ns->path, what, sqlite3_errmsg(ns->db));
}

static bool has_table(nsys *ns, const char *name)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(ns->db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?1", -1,
                           &st, NULL) != SQLITE_OK)
        return false;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    bool yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

/* Prepare `SELECT c0, c1, ... FROM table`, each c either the first present
 * of its '|'-separated alternatives or NULL when absent. A name starting with
 * '!' is required: its absence is the unknown-layout error. */
static int select_cols(nsys *ns, const char *table, const char *const *cols, int n, sqlite3_stmt **out)
{
    char q[1024];
    snprintf(q, sizeof q, "SELECT * FROM \"%s\" LIMIT 0", table);
    sqlite3_stmt *probe;
    if (sqlite3_prepare_v2(ns->db, q, -1, &probe, NULL) != SQLITE_OK) return sql_error(ns, table);
    int have = sqlite3_column_count(probe);
    size_t len = (size_t)snprintf(q, sizeof q, "SELECT ");
    for (int i = 0; i < n; i++) {
        const char *spec = cols[i][0] == '!' ? cols[i] + 1 : cols[i];
        const char *found = NULL;
        size_t found_n = 0;
        for (const char *a = spec; *a && !found;) {
            size_t k = strcspn(a, "|");
            for (int c = 0; c < have && !found; c++) {
                const char *name = sqlite3_column_name(probe, c);
                if (name && strlen(name) == k && !strncmp(name, a, k)) { found = a; found_n = k; }
            }
            a += k + (a[k] == '|');
        }
        if (!found && cols[i][0] == '!') {
            sqlite3_finalize(probe);
            return ts__error(ns->err, TS_EFORMAT,
                             "%s: byte 0: unknown nsys export layout: table %s has no column %s", ns->path, table, spec);
        }
        if (found) len += (size_t)snprintf(q + len, sizeof q - len, "%s\"%.*s\"", i ? ", " : "", (int)found_n, found);
        else len += (size_t)snprintf(q + len, sizeof q - len, "%sNULL", i ? ", " : "");
        if (len >= sizeof q) { sqlite3_finalize(probe); return ts__error(ns->err, TS_EINVAL, "%s: query too long", table); }
    }
    sqlite3_finalize(probe);
    snprintf(q + len, sizeof q - len, " FROM \"%s\"", table);
    if (sqlite3_prepare_v2(ns->db, q, -1, out, NULL) != SQLITE_OK) return sql_error(ns, table);
    return TS_OK;
}

static bool is_null(sqlite3_stmt *st, int c) { return sqlite3_column_type(st, c) == SQLITE_NULL; }
/* The integer, or dflt for NULL. The type is asked only when the value reads
 * 0 (NULL's value; reading an integer converts nothing, so the type is still
 * the stored one): one call instead of two for most cells. */
static int64_t col_i64(sqlite3_stmt *st, int c, int64_t dflt)
{
    int64_t v = sqlite3_column_int64(st, c);
    return v == 0 && is_null(st, c) ? dflt : v;
}

/* A StringIds reference (integer) or a string (TEXT columns such as NVTX's
 * `text`) as a rank string id; 0 = none. */
static uint32_t col_str(nsys *ns, sqlite3_stmt *st, int c)
{
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER: {
        int64_t id = sqlite3_column_int64(st, c);
        return id >= 0 && (uint64_t)id < ns->n_str ? ns->str[id] : 0;
    }
    case SQLITE_TEXT: {
        const unsigned char *s = sqlite3_column_text(st, c);
        return s ? ts__rank_intern(ns->r, (const char *)s, (size_t)sqlite3_column_bytes(st, c)) : 0;
    }
    default: return 0;
    }
}

static uint32_t intern(nsys *ns, const char *s) { return ts__rank_intern(ns->r, s, strlen(s)); }

/* intern() of a string that lives as long as the reader and never changes
 * (a literal or a static table's entry; never a buffer), cached by address. */
static uint32_t const_id(nsys *ns, const char *s)
{
    size_t i = (size_t)(((uintptr_t)s >> 3) * 0x9E3779B97F4A7C15u >> 58) & (NSYS_CONST_SLOTS - 1);
    for (size_t k = 0; k < NSYS_CONST_SLOTS; k++, i = (i + 1) & (NSYS_CONST_SLOTS - 1)) {
        if (ns->const_ids[i].s == s) return ns->const_ids[i].id;
        if (!ns->const_ids[i].s) {
            uint32_t id = intern(ns, s);
            if (id) ns->const_ids[i].s = s, ns->const_ids[i].id = id;   /* 0: out of memory, not cached */
            return id;
        }
    }
    return intern(ns, s);   /* full: not reached with the tables of this file */
}

/* Step st to its end, calling row() for each row. */
static int each_row(nsys *ns, const char *table, sqlite3_stmt *st, void (*row)(nsys *, sqlite3_stmt *))
{
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(ns, st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return sql_error(ns, table);
    return ns->r->oom ? ts__error(ns->err, TS_ENOMEM, "%s: out of memory", ns->path) : TS_OK;
}

/* Read one table when it exists: columns as for select_cols. */
static int read_table(nsys *ns, const char *table, const char *const *cols, int n,
                      void (*row)(nsys *, sqlite3_stmt *))
{
    if (!has_table(ns, table)) return TS_OK;
    sqlite3_stmt *st;
    int rc = select_cols(ns, table, cols, n, &st);
    if (rc) return rc;
    return each_row(ns, table, st, row);
}

/* ---- strings, threads, processes ---- */
static void string_row(nsys *ns, sqlite3_stmt *st)
{
    int64_t id = col_i64(st, 0, -1);
    if (id < 0 || id >= NSYS_MAX_STRING_ID || sqlite3_column_type(st, 1) != SQLITE_TEXT) return;
    if ((uint64_t)id >= ns->n_str) {
        uint32_t cap = ns->n_str;
        if (ts__grow((void **)&ns->str, &cap, sizeof *ns->str, (size_t)id + 1)) { ns->r->oom = true; return; }
        memset(ns->str + ns->n_str, 0, (cap - ns->n_str) * sizeof *ns->str);
        ns->n_str = cap;
    }
    ns->str[id] = ts__rank_intern(ns->r, (const char *)sqlite3_column_text(st, 1), (size_t)sqlite3_column_bytes(st, 1));
}

static void thread_name_row(nsys *ns, sqlite3_stmt *st)
{
    uint32_t name = col_str(ns, st, 0);
    if (name && !is_null(st, 1) && ts__map64_put(&ns->thread_name, (uint64_t)sqlite3_column_int64(st, 1), name))
        ns->r->oom = true;
}

static void process_row(nsys *ns, sqlite3_stmt *st)
{
    uint32_t name = col_str(ns, st, 1);
    if (name && !is_null(st, 0) && ts__map64_put(&ns->proc_name, (uint64_t)sqlite3_column_int64(st, 0), name))
        ns->r->oom = true;
}

static void gpu_row(nsys *ns, sqlite3_stmt *st)
{
    char buf[300];
    const unsigned char *name = sqlite3_column_text(st, 1);
    int64_t id = col_i64(st, 0, -1);
    if (id < 0 || id > INT32_MAX) return;
    snprintf(buf, sizeof buf, "GPU %lld: %s", (long long)id, name ? (const char *)name : "");
    if (ts__map64_put(&ns->gpu_name, (uint64_t)id, intern(ns, buf))) ns->r->oom = true;
}

/* The thread track of a globalTid, named on first use. */
static uint32_t thread_track(nsys *ns, int64_t gtid)
{
    int64_t pid = (gtid >> 24) & 0xFFFFFF, tid = gtid & 0xFFFFFF;
    uint32_t t = ts__rank_track(ns->r, TS_TRACK_THREAD, pid, tid);
    if (t == TS_NONE32) return t;
    ts_track *tr = &ns->r->tracks[t];
    uint64_t v;
    if (!tr->name_id && ts__map64_get(&ns->thread_name, (uint64_t)gtid, &v)) tr->name_id = (uint32_t)v;
    if (!tr->process_name_id && ts__map64_get(&ns->proc_name, (uint64_t)pid, &v)) tr->process_name_id = (uint32_t)v;
    return t;
}

static uint32_t stream_track(nsys *ns, int64_t device, int64_t stream)
{
    uint32_t t = ts__rank_track(ns->r, TS_TRACK_GPU_STREAM, device, stream);
    if (t == TS_NONE32) return t;
    ts_track *tr = &ns->r->tracks[t];
    if (!tr->name_id) {
        char buf[48];
        snprintf(buf, sizeof buf, "stream %lld", (long long)stream);
        tr->name_id = intern(ns, buf);
        uint64_t v;
        if (ts__map64_get(&ns->gpu_name, (uint64_t)device, &v)) tr->process_name_id = (uint32_t)v;
    }
    return t;
}

/* A slice from columns start (0) and end (1); TS_NONE32 when a time is missing. */
static uint32_t add_timed(nsys *ns, sqlite3_stmt *st, uint32_t track, uint32_t name, const char *cat, ts_kind kind)
{
    int64_t a = sqlite3_column_int64(st, 0), b = sqlite3_column_int64(st, 1), ts, dur;   /* as col_i64 */
    if ((a == 0 && is_null(st, 0)) || (b == 0 && is_null(st, 1)) || track == TS_NONE32) { ns->n_bad++; return TS_NONE32; }
    if (__builtin_add_overflow(a, ns->base_ns, &ts) || __builtin_sub_overflow(b, a, &dur)) { ns->n_bad++; return TS_NONE32; }
    if (dur < 0) ns->n_negative++;
    return ts__rank_add_slice(ns->r, track, ts, dur, name, const_id(ns, cat), kind);
}

static void arg_int(nsys *ns, const char *key, int64_t v) { ts__rank_add_arg(ns->r, const_id(ns, key), TS_ARG_INT, (uint64_t)v); }

/* Args device, stream and the optional integer columns [from, to) under their names. */
static void device_args(nsys *ns, uint32_t s, sqlite3_stmt *st, int64_t device, int64_t stream,
                        const char *const *keys, int from, int to)
{
    if (s == TS_NONE32) return;
    uint32_t first = ts__rank_args_mark(ns->r);
    arg_int(ns, "device", device);
    arg_int(ns, "stream", stream);
    for (int c = from; c < to; c++) {
        int64_t v = sqlite3_column_int64(st, c);   /* NULL as in col_i64 */
        if (v != 0 || !is_null(st, c)) arg_int(ns, keys[c], v);
    }
    ts__rank_slice_set_args(ns->r, s, first, ts__rank_args_mark(ns->r) - first);
}

/* ---- GPU activity ---- */
static const char *const kernel_cols[] = {
    "!start", "!end", "!deviceId", "!streamId", "correlationId", "!demangledName|shortName",
    "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "registersPerThread",
    "staticSharedMemory", "dynamicSharedMemory",
};
static const char *const kernel_keys[] = {
    "", "", "", "", "", "", "grid x", "grid y", "grid z", "block x", "block y", "block z", "registers per thread",
    "shared memory", "dynamic shared memory",
};

static void kernel_row(nsys *ns, sqlite3_stmt *st)
{
    int64_t dev = col_i64(st, 2, 0), stream = col_i64(st, 3, 0);
    uint32_t s = add_timed(ns, st, stream_track(ns, dev, stream), col_str(ns, st, 5), "kernel", TS_KIND_KERNEL);
    if (s == TS_NONE32) return;
    ns->r->slices.corr[s] = col_i64(st, 4, -1);
    device_args(ns, s, st, dev, stream, kernel_keys, 6, 15);
}

/* Copy kinds (CUPTI's CUpti_ActivityMemcpyKind order, which nsys keeps in
 * ENUM_CUDA_MEMCPY_OPER; 11-13 are nsys 2024's unified-memory kinds) as
 * Kineto spells them in its names. Memory kinds in nsys' own order
 * (ENUM_CUDA_MEM_KIND: 0 = pageable, not CUPTI's 0 = unknown); where the
 * export has that table, its labels are used instead (mem_kind_label). */
static const char *const copy_kinds[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD",
                                         "DtoA", "DtoD", "HtoH", "PtoP", "HtoD", "DtoH", "DtoD"};
static const char *const mem_kinds[] = {"Pageable", "Pinned", "Device", "Array", "Managed",
                                        "Device Static", "Managed Static", "Unknown"};
static const char *kind_str(const char *const *v, size_t n, int64_t k) { return k >= 0 && (uint64_t)k < n ? v[k] : "Unknown"; }
#define KIND_STR(v, k) kind_str(v, sizeof v / sizeof *v, k)

static const char *mem_kind(nsys *ns, int64_t k)
{
    if (k >= 0 && k < NSYS_MEM_KINDS && ns->mem_kind_label[k]) return ts__rank_str(ns->r, ns->mem_kind_label[k]);
    return KIND_STR(mem_kinds, k);
}

static void mem_kind_row(nsys *ns, sqlite3_stmt *st)
{
    int64_t id = col_i64(st, 0, -1);
    if (id >= 0 && id < NSYS_MEM_KINDS) ns->mem_kind_label[id] = col_str(ns, st, 1);
}

static const char *const memcpy_cols[] = {"!start", "!end", "!deviceId", "!streamId", "correlationId",
                                          "!copyKind", "srcKind", "dstKind", "bytes"};
static const char *const memcpy_keys[] = {"", "", "", "", "", "", "", "", "bytes"};

static void memcpy_row(nsys *ns, sqlite3_stmt *st)
{
    char name[96];
    int64_t kind = col_i64(st, 5, 0);
    snprintf(name, sizeof name, "Memcpy %s (%s -> %s)%s", KIND_STR(copy_kinds, kind),
             mem_kind(ns, col_i64(st, 6, 7)), mem_kind(ns, col_i64(st, 7, 7)),
             kind >= 11 && kind <= 13 ? " (Unified)" : "");
    int64_t dev = col_i64(st, 2, 0), stream = col_i64(st, 3, 0);
    uint32_t s = add_timed(ns, st, stream_track(ns, dev, stream), intern(ns, name), "gpu_memcpy", TS_KIND_GPU_MEMCPY);
    if (s == TS_NONE32) return;
    ns->r->slices.corr[s] = col_i64(st, 4, -1);
    device_args(ns, s, st, dev, stream, memcpy_keys, 8, 9);
}

static const char *const memset_cols[] = {"!start", "!end", "!deviceId", "!streamId", "correlationId",
                                          "memKind", "bytes", "value"};
static const char *const memset_keys[] = {"", "", "", "", "", "", "bytes", "value"};

static void memset_row(nsys *ns, sqlite3_stmt *st)
{
    char name[64];
    snprintf(name, sizeof name, "Memset (%s)", is_null(st, 5) ? "Device" : mem_kind(ns, col_i64(st, 5, 7)));
    int64_t dev = col_i64(st, 2, 0), stream = col_i64(st, 3, 0);
    uint32_t s = add_timed(ns, st, stream_track(ns, dev, stream), intern(ns, name), "gpu_memset", TS_KIND_GPU_MEMSET);
    if (s == TS_NONE32) return;
    ns->r->slices.corr[s] = col_i64(st, 4, -1);
    device_args(ns, s, st, dev, stream, memset_keys, 6, 8);
}

/* CUpti_ActivitySynchronizationType, in Kineto's words. */
static const char *const sync_kinds[] = {"Unknown Sync", "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync"};
static const char *const sync_cols[] = {"!start", "!end", "!deviceId", "!streamId", "correlationId", "!syncType"};

static void sync_row(nsys *ns, sqlite3_stmt *st)
{
    /* CUPTI's "no stream" (0xFFFFFFFF: event and context syncs) is Kineto's
     * stream -1: a wait of the host, not work on a stream, so the breakdown
     * does not count it as a GPU op. */
    int64_t dev = col_i64(st, 2, 0), stream = col_i64(st, 3, 0);
    if (stream == 0xFFFFFFFF) stream = -1;
    uint32_t name = const_id(ns, KIND_STR(sync_kinds, col_i64(st, 5, 0)));
    uint32_t s = add_timed(ns, st, stream_track(ns, dev, stream), name, "cuda_sync", TS_KIND_CUDA_SYNC);
    if (s == TS_NONE32) return;
    ns->r->slices.corr[s] = col_i64(st, 4, -1);
    device_args(ns, s, st, dev, stream, NULL, 0, 0);
}

/* ---- host calls ---- */
/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": Kineto's name for the call. */
static uint32_t call_name(nsys *ns, sqlite3_stmt *st, int c)
{
    if (sqlite3_column_type(st, c) != SQLITE_INTEGER) return col_str(ns, st, c);
    int64_t id = sqlite3_column_int64(st, c);
    if (id < 0 || (uint64_t)id >= ns->n_str || !ns->str[id]) return 0;
    if (!ns->stripped) {
        ns->stripped = ts__calloc(ns->n_str, sizeof *ns->stripped);
        if (!ns->stripped) { ns->r->oom = true; return ns->str[id]; }
    }
    if (!ns->stripped[id]) {
        const char *s = ts__rank_str(ns->r, ns->str[id]);
        size_t n = strlen(s), k = n;
        while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
        ns->stripped[id] = k >= 3 && k < n && s[k - 1] == 'v' && s[k - 2] == '_' ? ts__rank_intern(ns->r, s, k - 2)
                                                                                : ns->str[id];
    }
    return ns->stripped[id];
}

static const char *const call_cols[] = {"!start", "!end", "!globalTid", "correlationId", "!nameId"};

static void call_row(nsys *ns, sqlite3_stmt *st, const char *cat, ts_kind kind)
{
    uint32_t track = is_null(st, 2) ? TS_NONE32 : thread_track(ns, sqlite3_column_int64(st, 2));
    uint32_t s = add_timed(ns, st, track, call_name(ns, st, 4), cat, kind);
    if (s != TS_NONE32) ns->r->slices.corr[s] = col_i64(st, 3, -1);
}
static void runtime_row(nsys *ns, sqlite3_stmt *st) { call_row(ns, st, "cuda_runtime", TS_KIND_CUDA_RUNTIME); }
static void driver_row(nsys *ns, sqlite3_stmt *st) { call_row(ns, st, "cuda_driver", TS_KIND_CUDA_DRIVER); }
static void osrt_row(nsys *ns, sqlite3_stmt *st)
{
    uint32_t track = is_null(st, 2) ? TS_NONE32 : thread_track(ns, sqlite3_column_int64(st, 2));
    add_timed(ns, st, track, col_str(ns, st, 4), "os_runtime", TS_KIND_OTHER);
}

/* NVTX event types (nsys' ENUM_NSYS_EVENT_TYPE). */
enum { NVTX_MARK = 34, NVTX_PUSH_POP = 59, NVTX_START_END = 60 };
static const char *const nvtx_cols[] = {"!start", "end", "!eventType", "text", "textId", "!globalTid", "rangeId"};

static void nvtx_row(nsys *ns, sqlite3_stmt *st)
{
    int64_t type = col_i64(st, 2, 0);
    if (type != NVTX_MARK && type != NVTX_PUSH_POP && type != NVTX_START_END) return;
    uint32_t name = col_str(ns, st, 3);
    if (!name) name = col_str(ns, st, 4);
    if (is_null(st, 5)) { ns->n_bad++; return; }
    int64_t gtid = sqlite3_column_int64(st, 5);
    if (type == NVTX_MARK) {
        int64_t ts;
        uint32_t track = thread_track(ns, gtid);
        if (__builtin_add_overflow(sqlite3_column_int64(st, 0), ns->base_ns, &ts) || track == TS_NONE32) { ns->n_bad++; return; }
        ts__rank_add_instant(ns->r, track, ts, name, const_id(ns, "nvtx"), TS_KIND_USER_ANNOTATION, 't', TS_NONE32, 0);
        return;
    }
    /* A start/end range may end on another thread: one async track per range,
     * as the JSON reader gives each b/e id its own track. */
    uint32_t track = type == NVTX_PUSH_POP
        ? thread_track(ns, gtid)
        : ts__rank_track(ns->r, TS_TRACK_ASYNC, (gtid >> 24) & 0xFFFFFF, col_i64(st, 6, 0));
    add_timed(ns, st, track, name, "nvtx", TS_KIND_USER_ANNOTATION);
}

/* ---- metadata: which nsys wrote it, and the layout found ---- */
static void meta_str(nsys *ns, const char *key, const char *val)
{
    ts__rank_add_arg(ns->r, intern(ns, key), TS_ARG_STR, intern(ns, val));
}

static void read_meta(nsys *ns, char *version, size_t vn, char *schema, size_t sn, const char **table)
{
    snprintf(version, vn, "unknown");
    snprintf(schema, sn, "unknown");
    *table = has_table(ns, "META_DATA_EXPORT") ? "META_DATA_EXPORT"
           : has_table(ns, "EXPORT_META_DATA") ? "EXPORT_META_DATA" : NULL;
    if (!*table) return;
    char q[96];
    snprintf(q, sizeof q, "SELECT name, value FROM %s", *table);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(ns->db, q, -1, &st, NULL) != SQLITE_OK) return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0), *v = (const char *)sqlite3_column_text(st, 1);
        if (!k || !v) continue;
        if (!strcmp(k, "EXPORT_PRODUCT_VERSION")) snprintf(version, vn, "%s", v);
        else if (!strcmp(k, "EXPORT_SCHEMA_VERSION")) snprintf(schema, sn, "%s", v);
    }
    sqlite3_finalize(st);
}

static void store_meta(nsys *ns)
{
    char version[64], schema[64], layout[256];
    const char *table;
    read_meta(ns, version, sizeof version, schema, sizeof schema, &table);
    bool enums = has_table(ns, "ENUM_NSYS_EVENT_TYPE");
    snprintf(layout, sizeof layout, "%s%s, %s",
             table ? table : "no export metadata table",
             table && !strcmp(table, "META_DATA_EXPORT") ? " (nsys 2023.x and later)"
             : table ? " (nsys 2021.x-2022.x)" : " (nsys 2020.x or older)",
             enums ? "ENUM_* tables" : "no ENUM_* tables");
    ts_rank *r = ns->r;
    r->meta_args = ts__rank_args_mark(r);
    meta_str(ns, "format", "nsys-sqlite");
    meta_str(ns, "nsys_version", version);
    meta_str(ns, "nsys_export_schema", schema);
    meta_str(ns, "nsys_layout", layout);
    r->n_meta_args = (uint16_t)(ts__rank_args_mark(r) - r->meta_args);
}

/* ---- driver ---- */
#define READ(table, cols, fn) read_table(ns, table, cols, (int)(sizeof cols / sizeof *cols), fn)

static const char *const activity_tables[] = {
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER",
    "NVTX_EVENTS", "OSRT_API",
};

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* A database cut short would otherwise read as one without tables: compare
 * the size its header records (page size x page count, valid when the
 * "version-valid-for" number equals the change counter) with the bytes. */
static int check_size(const char *name, const unsigned char *h, size_t n, ts_error *err)
{
    if (n < 100) return ts__error(err, TS_EFORMAT, "%s: byte %zu: SQLite database cut short (no whole header)", name, n);
    uint32_t page = (uint32_t)h[16] << 8 | h[17];
    if (page == 1) page = 65536;
    uint64_t pages = be32(h + 28), want = (uint64_t)page * pages;
    if (be32(h + 92) == be32(h + 24) && pages && want > n)
        return ts__error(err, TS_EFORMAT, "%s: byte %zu: SQLite database cut short: its header says %llu bytes",
                         name, n, (unsigned long long)want);
    return TS_OK;
}

static int read_all(nsys *ns)
{
    sqlite3_stmt *probe;
    int rc0 = sqlite3_prepare_v2(ns->db, "SELECT count(*) FROM sqlite_master", -1, &probe, NULL);
    if (rc0 == SQLITE_OK) rc0 = sqlite3_step(probe) == SQLITE_ROW ? SQLITE_OK : SQLITE_CORRUPT;
    sqlite3_finalize(probe);
    if (rc0 != SQLITE_OK) return sql_error(ns, "reading the schema");
    if (!has_table(ns, "StringIds"))
        return ts__error(ns->err, TS_EFORMAT, "%s: byte 0: an SQLite database, but not an Nsight Systems export "
                         "(no StringIds table)", ns->path);
    for (size_t i = 0; i < sizeof activity_tables / sizeof *activity_tables; i++) ns->n_tables += has_table(ns, activity_tables[i]);
    if (ns->n_tables == 0)
        return ts__error(ns->err, TS_EFORMAT, "%s: byte 0: an Nsight Systems export without any table of GPU "
                         "activity, CUDA calls, NVTX or OS runtime calls (exported with --tables?)", ns->path);
    static const char *const str_cols[] = {"!id", "!value"}, *const tn_cols[] = {"!nameId", "!globalTid"},
                             *const proc_cols[] = {"!pid", "!name"}, *const gpu_cols[] = {"!id", "name"},
                             *const enum_cols[] = {"!id", "!label"};
    sqlite3_stmt *st;
    if (has_table(ns, "TARGET_INFO_SESSION_START_TIME") &&
        sqlite3_prepare_v2(ns->db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) ns->base_ns = col_i64(st, 0, 0);
        if (ns->base_ns < 0 || ns->base_ns > ((int64_t)1 << 61)) ns->base_ns = 0;   /* not a time: ignore */
        sqlite3_finalize(st);
    }
    ns->r->base_time_ns = ns->base_ns;
    int rc;
    if ((rc = READ("StringIds", str_cols, string_row)) || (rc = READ("ThreadNames", tn_cols, thread_name_row)) ||
        (rc = READ("PROCESSES", proc_cols, process_row)) || (rc = READ("TARGET_INFO_GPU", gpu_cols, gpu_row)) ||
        (rc = READ("ENUM_CUDA_MEM_KIND", enum_cols, mem_kind_row)) ||
        (rc = READ("CUPTI_ACTIVITY_KIND_KERNEL", kernel_cols, kernel_row)) ||
        (rc = READ("CUPTI_ACTIVITY_KIND_MEMCPY", memcpy_cols, memcpy_row)) ||
        (rc = READ("CUPTI_ACTIVITY_KIND_MEMSET", memset_cols, memset_row)) ||
        (rc = READ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", sync_cols, sync_row)) ||
        (rc = READ("CUPTI_ACTIVITY_KIND_RUNTIME", call_cols, runtime_row)) ||
        (rc = READ("CUPTI_ACTIVITY_KIND_DRIVER", call_cols, driver_row)) ||
        (rc = READ("NVTX_EVENTS", nvtx_cols, nvtx_row)) || (rc = READ("OSRT_API", call_cols, osrt_row)))
        return rc;
    store_meta(ns);
    if (ns->n_bad)
        ts__rank_warn_n(ns->r, TS_WARN_OTHER, ns->n_bad, "%s: %llu rows without a start, end or thread; skipped",
                        ns->path, (unsigned long long)ns->n_bad);
    if (ns->n_negative)
        ts__rank_warn_n(ns->r, TS_WARN_NEGATIVE_DURATION, ns->n_negative, "%s: %llu rows end before they start; "
                        "duration clamped to 0", ns->path, (unsigned long long)ns->n_negative);
    return ns->r->oom ? ts__error(ns->err, TS_ENOMEM, "%s: out of memory", ns->path) : TS_OK;
}

bool ts__nsys_is_sqlite(const unsigned char *head, size_t n)
{
    return n >= 16 && !memcmp(head, "SQLite format 3", 16);
}

int ts__nsys_ingest_buffer(const char *name, const void *data, size_t n, const ts_load_opts *opts, ts_rank **out,
                           ts_error *err)
{
    *out = NULL;
    if (!ts__nsys_is_sqlite(data, n))
        return ts__error(err, TS_EFORMAT, "%s: byte 0: not an SQLite database", name);
    int rc = check_size(name, data, n, err);
    if (rc == TS_OK) rc = ts__sqlite_open(name, err);
    if (rc) return rc;
    nsys ns = {.path = name, .err = err};
    ts__map64_init(&ns.thread_name);
    ts__map64_init(&ns.proc_name);
    ts__map64_init(&ns.gpu_name);
    ns.r = ts__rank_create(name);
    /* NOMUTEX: the connection is this call's alone, on one thread; with its
     * mutex every sqlite3_column_* call locked and unlocked it (a quarter of
     * the 10x export's instructions). */
    if (!ns.r || sqlite3_open_v2(":memory:", &ns.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_PRIVATECACHE | SQLITE_OPEN_NOMUTEX,
                                 NULL) != SQLITE_OK)
        rc = ts__error(err, TS_ENOMEM, "%s: byte 0: out of memory", name);
    /* Read-only, no copy: SQLite pages straight out of the buffer. */
    else if (sqlite3_deserialize(ns.db, "main", (unsigned char *)(uintptr_t)data, (sqlite3_int64)n, (sqlite3_int64)n,
                                 SQLITE_DESERIALIZE_READONLY) != SQLITE_OK)
        rc = sql_error(&ns, "open");
    if (rc == TS_OK) rc = read_all(&ns);
    if (rc == TS_OK) {
        int32_t from_name = ts__rank_from_filename(name);
        ns.r->rank = from_name >= 0 ? from_name : 0;
        rc = ts__rank_finish(ns.r, err);
    }
    if (rc == TS_OK && opts && opts->size >= offsetof(ts_load_opts, iteration_marker) + sizeof(char *) &&
        opts->iteration_marker && ts__rank_find_iterations(ns.r, opts->iteration_marker))
        rc = ts__error(err, TS_ENOMEM, "%s: out of memory", name);
    sqlite3_close(ns.db);
    ts__free(ns.str, (size_t)ns.n_str * sizeof *ns.str);
    ts__free(ns.stripped, (size_t)ns.n_str * sizeof *ns.stripped);
    ts__map64_free(&ns.thread_name);
    ts__map64_free(&ns.proc_name);
    ts__map64_free(&ns.gpu_name);
    if (rc != TS_OK) { ts__rank_destroy(ns.r); return rc; }
    *out = ns.r;
    return TS_OK;
}

typedef struct ingest_call { const char *path; const ts_load_opts *opts; ts_rank **out; ts_error *err; } ingest_call;

static int ingest_bytes(void *ud, const char *data, size_t n)
{
    ingest_call *c = ud;
    return ts__nsys_ingest_buffer(c->path, data, n, c->opts, c->out, c->err);
}

int ts__nsys_ingest(const char *path, int32_t order, const ts_load_opts *opts, ts_rank **out, ts_error *err)
{
    ingest_call c = {path, opts, out, err};
    int rc = ts__with_file_bytes(path, (size_t)64 << 30, ingest_bytes, &c, err);
    if (rc == TS_OK && ts__rank_from_filename(path) < 0) (*out)->rank = order;
    return rc;
}
