/* sqlite.c - a job and its analyses as one SQLite database (ts_sqlite_write,
 * `trainscope export --sqlite`): the file (temporary name, one transaction,
 * rename), the writer every table goes through, and the trace tables
 * modelled on Perfetto's trace processor.
 *
 * Not for: the analysis tables (sqlite_analyses.c) or computing anything.
 * Ids are global over the job: rank i's slices are slice.id
 * slice_base[i] + row (then its instants), its tracks track_base[i] + row,
 * its arg rows arg_base[i] + row, so a rank's rows need no lookup table.
 * Cost: O(rows), prepared inserts of 64 rows a statement, no index built afterwards
 * (ids are rowids; args is keyed by (arg_set_id, id) and written in that
 * order); the pragmas (no journal, no sync, exclusive lock) and a
 * connection without mutexes make the file a plain write-once output.
 */
#include "report/sqlite_int.h"
#include "graph/graph.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the writer ---- */

static void sq_fail(ts_sq *w)
{
    if (w->rc != TS_OK) return;
    int code = sqlite3_errcode(w->db);
    int sys = sqlite3_system_errno(w->db);
    w->rc = code == SQLITE_NOMEM ? TS_ENOMEM : TS_EIO;
    if (sys && code != SQLITE_FULL)
        ts__error(w->err, w->rc, "%s: cannot write: %s (%s)", w->path, sqlite3_errmsg(w->db), strerror(sys));
    else
        ts__error(w->err, w->rc, "%s: cannot write: %s", w->path, sqlite3_errmsg(w->db));
}

void ts__sq_exec(ts_sq *w, const char *sql)
{
    if (w->rc != TS_OK) return;
    if (sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK) { sq_fail(w); return; }
    if (!strncmp(sql, "CREATE TABLE", 12)) w->n_tables++;
}

/* Rows are inserted `batch` at a time by one statement
 *   INSERT INTO t(cols) SELECT column2, ... FROM (VALUES (?,...), ...) WHERE column1 IS NOT NULL
 * whose first value per row says the row is there: the statement's fixed
 * cost (cursor, transaction check, halt, reset) is paid once per batch, and
 * the last, partial batch runs the same statement with its unused rows
 * left NULL. On nccl_data (112,347 rows) 22% fewer instructions in all
 * than one row a step (callgrind: 810 M -> 633 M). */
struct ts_sq_ins {
    sqlite3_stmt *st;
    int n_cols;   /* columns of the insert */
    int batch;    /* rows per statement */
    int row;      /* rows bound in the current batch */
};

/* The batched insert's SQL into b (b->oom on failure). */
static void batch_sql(ts_buf *b, const char *table, int n_cols, int batch)
{
    ts__buf_printf(b, "INSERT INTO %s SELECT ", table);
    for (int c = 0; c < n_cols; c++) ts__buf_printf(b, "%scolumn%d", c ? "," : "", c + 2);
    ts__buf_puts(b, " FROM (VALUES");
    for (int r = 0; r < batch; r++) {
        ts__buf_puts(b, r ? ",(?" : "(?");
        for (int c = 0; c < n_cols; c++) ts__buf_puts(b, ",?");
        ts__buf_puts(b, ")");
    }
    ts__buf_puts(b, ") WHERE column1 IS NOT NULL");
}

ts_sq_ins *ts__sq_open(ts_sq *w, const char *table, int n_cols, int batch)
{
    if (w->rc != TS_OK) return NULL;
    ts_sq_ins *ins = ts__calloc(1, sizeof *ins);
    ts_buf sql;
    ts__buf_init(&sql);
    if (ins) batch_sql(&sql, table, n_cols, batch);
    if (!ins || sql.oom) {
        ts__free(ins, sizeof *ins);
        ts__buf_free(&sql);
        w->rc = ts__error(w->err, TS_ENOMEM, "%s: out of memory writing the database", w->path);
        return NULL;
    }
    ins->n_cols = n_cols;
    ins->batch = batch;
    int rc = sqlite3_prepare_v3(w->db, ts__buf_cstr(&sql), -1, SQLITE_PREPARE_PERSISTENT, &ins->st, NULL);
    ts__buf_free(&sql);
    if (rc != SQLITE_OK) { sq_fail(w); ts__sq_close(w, ins); return NULL; }
    return ins;
}

static void flush(ts_sq *w, ts_sq_ins *ins)
{
    if (w->rc == TS_OK && sqlite3_step(ins->st) != SQLITE_DONE) sq_fail(w);
    else w->n_rows += (uint64_t)ins->row;
    sqlite3_reset(ins->st);
    sqlite3_clear_bindings(ins->st);
    ins->row = 0;
}

void ts__sq_step(ts_sq *w, ts_sq_ins *ins)
{
    if (!ins) return;
    sqlite3_bind_int(ins->st, ins->row * (ins->n_cols + 1) + 1, 1);   /* the row is there */
    if (++ins->row == ins->batch) flush(w, ins);
}

void ts__sq_close(ts_sq *w, ts_sq_ins *ins)
{
    if (!ins) return;
    if (ins->row) flush(w, ins);
    sqlite3_finalize(ins->st);
    ts__free(ins, sizeof *ins);
}

/* Parameter of column col (1-based) of the row being bound. */
static int param(const ts_sq_ins *ins, int col) { return ins->row * (ins->n_cols + 1) + 1 + col; }

void ts__sq_i64(ts_sq_ins *ins, int col, int64_t v) { if (ins) sqlite3_bind_int64(ins->st, param(ins, col), v); }
void ts__sq_real(ts_sq_ins *ins, int col, double v) { if (ins) sqlite3_bind_double(ins->st, param(ins, col), v); }

void ts__sq_i64_or_null(ts_sq_ins *ins, int col, int64_t v, int64_t null_value)
{
    if (ins && v != null_value) sqlite3_bind_int64(ins->st, param(ins, col), v);   /* unbound = NULL */
}

void ts__sq_text(ts_sq_ins *ins, int col, const char *s)
{
    if (ins && s && *s) sqlite3_bind_text(ins->st, param(ins, col), s, -1, SQLITE_STATIC);
}

void ts__sq_str(ts_sq_ins *ins, int col, const char *s)
{
    if (ins && s) sqlite3_bind_text(ins->st, param(ins, col), s, -1, SQLITE_STATIC);
}

void ts__sq_text_copy(ts_sq_ins *ins, int col, const char *s)
{
    if (ins && s && *s) sqlite3_bind_text(ins->st, param(ins, col), s, -1, SQLITE_TRANSIENT);
}

/* ---- the schema ---- */

static const char *const SCHEMA[] = {
    "CREATE TABLE metadata(name TEXT PRIMARY KEY, int_value INTEGER, str_value TEXT)",
    "CREATE TABLE rank(id INTEGER PRIMARY KEY, rank INTEGER, path TEXT, format TEXT, world_size INTEGER,"
    " clock_offset INTEGER, n_events_read INTEGER, arg_set_id INTEGER)",
    "CREATE TABLE process(upid INTEGER PRIMARY KEY, pid INTEGER, name TEXT, label TEXT, sort_index INTEGER,"
    " rank_id INTEGER)",
    "CREATE TABLE thread(utid INTEGER PRIMARY KEY, tid INTEGER, name TEXT, upid INTEGER, sort_index INTEGER)",
    "CREATE TABLE track(id INTEGER PRIMARY KEY, name TEXT, type TEXT, upid INTEGER, rank_id INTEGER)",
    "CREATE TABLE thread_track(id INTEGER PRIMARY KEY, name TEXT, utid INTEGER, device INTEGER, stream INTEGER)",
    "CREATE TABLE counter_track(id INTEGER PRIMARY KEY, name TEXT, upid INTEGER)",
    "CREATE TABLE slice(id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, track_id INTEGER, category TEXT,"
    " name TEXT, depth INTEGER, parent_id INTEGER, arg_set_id INTEGER, kind TEXT, correlation INTEGER,"
    " external_id INTEGER)",
    "CREATE TABLE args(id INTEGER NOT NULL, arg_set_id INTEGER NOT NULL, flat_key TEXT GENERATED ALWAYS AS (key)"
    " VIRTUAL, key TEXT, int_value INTEGER, string_value TEXT, real_value REAL, value_type TEXT,"
    " PRIMARY KEY(arg_set_id, id)) WITHOUT ROWID",
    "CREATE TABLE flow(id INTEGER PRIMARY KEY, slice_out INTEGER, slice_in INTEGER, trace_id INTEGER,"
    " category TEXT)",
    "CREATE TABLE counter(id INTEGER PRIMARY KEY, ts INTEGER, track_id INTEGER, value REAL)",
    "CREATE TABLE iteration(id INTEGER PRIMARY KEY, rank_id INTEGER, step INTEGER, ts INTEGER, dur INTEGER,"
    " slice_id INTEGER)",
    "CREATE TABLE warning(id INTEGER PRIMARY KEY, rank_id INTEGER, source TEXT, kind TEXT, count INTEGER,"
    " message TEXT)",
};

/* ---- trace tables ---- */

/* process rows of rank ri: one per distinct pid; upid_of[t] = track t's upid. */
static void write_processes(ts_sq *w, const ts_rank *r, uint32_t ri, int64_t *next_upid, int64_t *upid_of)
{
    ts_sq_ins *st = ts__sq_open(w, "process", 6, 1);
    for (uint32_t t = 0; t < r->n_tracks; t++) {
        const ts_track *tr = &r->tracks[t];
        uint32_t same = 0;
        while (same < t && r->tracks[same].pid != tr->pid) same++;   /* O(tracks^2): tracks are few */
        if (same < t) { upid_of[t] = upid_of[same]; continue; }
        upid_of[t] = (*next_upid)++;
        uint32_t name = 0, label = 0;
        for (uint32_t u = t; u < r->n_tracks && !(name && label); u++)
            if (r->tracks[u].pid == tr->pid) {
                if (!name) name = r->tracks[u].process_name_id;
                if (!label) label = r->tracks[u].process_label_id;
            }
        ts__sq_i64(st, 1, upid_of[t]);
        ts__sq_i64(st, 2, tr->pid);
        ts__sq_text(st, 3, name ? ts__rank_str(r, name) : NULL);
        ts__sq_text(st, 4, label ? ts__rank_str(r, label) : NULL);
        ts__sq_i64_or_null(st, 5, tr->process_sort_index, 0);
        ts__sq_i64(st, 6, ri);
        ts__sq_step(w, st);
    }
    ts__sq_close(w, st);
}

static const char *track_type(uint8_t kind)
{
    switch (kind) {
    case TS_TRACK_THREAD: return "thread";
    case TS_TRACK_GPU_STREAM: return "gpu_stream";
    case TS_TRACK_COUNTER: return "counter";
    default: return "async";
    }
}

typedef struct track_stmts { ts_sq_ins *track, *thread, *thread_track, *counter_track; } track_stmts;

static void write_track(ts_sq *w, const track_stmts *s, const ts_rank *r, uint32_t ri, uint32_t t, int64_t upid,
                        int64_t *next_utid)
{
    const ts_track *tr = &r->tracks[t];
    int64_t id = w->track_base[ri] + t;
    const char *name = tr->name_id ? ts__rank_str(r, tr->name_id) : NULL;
    ts__sq_i64(s->track, 1, id);
    ts__sq_text(s->track, 2, name);
    ts__sq_text(s->track, 3, track_type(tr->kind));
    ts__sq_i64(s->track, 4, upid);
    ts__sq_i64(s->track, 5, ri);
    ts__sq_step(w, s->track);
    if (tr->kind == TS_TRACK_COUNTER) {
        ts__sq_i64(s->counter_track, 1, id);
        ts__sq_text(s->counter_track, 2, name);
        ts__sq_i64(s->counter_track, 3, upid);
        ts__sq_step(w, s->counter_track);
        return;
    }
    if (tr->kind != TS_TRACK_THREAD && tr->kind != TS_TRACK_GPU_STREAM) return;
    int64_t utid = (*next_utid)++;   /* one thread per thread or stream track: (rank, pid, tid) */
    ts__sq_i64(s->thread, 1, utid);
    ts__sq_i64(s->thread, 2, tr->tid);
    ts__sq_text(s->thread, 3, name);
    ts__sq_i64(s->thread, 4, upid);
    ts__sq_i64_or_null(s->thread, 5, tr->sort_index, 0);
    ts__sq_step(w, s->thread);
    ts__sq_i64(s->thread_track, 1, id);
    ts__sq_text(s->thread_track, 2, name);
    ts__sq_i64(s->thread_track, 3, utid);
    ts__sq_i64_or_null(s->thread_track, 4, tr->device, -1);
    ts__sq_i64_or_null(s->thread_track, 5, tr->stream, -1);
    ts__sq_step(w, s->thread_track);
}

static void write_tracks(ts_sq *w, const ts_job *job, int64_t *upid_of)
{
    track_stmts s = {
        ts__sq_open(w, "track", 5, TS_SQ_MANY),
        ts__sq_open(w, "thread", 5, TS_SQ_MANY),
        ts__sq_open(w, "thread_track", 5, TS_SQ_MANY),
        ts__sq_open(w, "counter_track", 3, TS_SQ_MANY),
    };
    int64_t next_upid = 0, next_utid = 0;
    for (uint32_t ri = 0; ri < job->n_ranks && w->rc == TS_OK; ri++) {
        const ts_rank *r = job->ranks[ri];
        write_processes(w, r, ri, &next_upid, upid_of);
        for (uint32_t t = 0; t < r->n_tracks; t++) write_track(w, &s, r, ri, t, upid_of[t], &next_utid);
    }
    ts__sq_close(w, s.track);
    ts__sq_close(w, s.thread);
    ts__sq_close(w, s.thread_track);
    ts__sq_close(w, s.counter_track);
}

static const char *const ARG_TYPE[] = {"null", "bool", "int", "uint", "real", "string", "json"};

static void write_arg(ts_sq *w, ts_sq_ins *st, const ts_rank *r, uint32_t ri, uint32_t a, uint32_t set_first)
{
    uint8_t type = r->args.type[a];
    uint64_t v = r->args.val[a];
    const char *key = ts__rank_str(r, r->args.key[a]);
    ts__sq_i64(st, 1, w->arg_base[ri] + a);
    ts__sq_i64(st, 2, w->arg_base[ri] + set_first);
    ts__sq_text(st, 3, key);
    char num[24];
    switch (type) {
    case TS_ARG_BOOL: case TS_ARG_INT: ts__sq_i64(st, 4, (int64_t)v); break;
    case TS_ARG_UINT:   /* past INT64_MAX ("Comms Id"s) only a string holds it */
        if (v <= INT64_MAX) ts__sq_i64(st, 4, (int64_t)v);
        else { snprintf(num, sizeof num, "%llu", (unsigned long long)v); ts__sq_text_copy(st, 5, num); }
        break;
    case TS_ARG_DOUBLE: ts__sq_real(st, 6, ts__arg_as_double(TS_ARG_DOUBLE, v)); break;
    case TS_ARG_STR: case TS_ARG_JSON:   /* "" stays '' (ts__sq_text would make it NULL) */
        ts__sq_str(st, 5, ts__rank_str(r, (uint32_t)v));
        break;
    default: break;
    }
    ts__sq_text(st, 7, type < sizeof ARG_TYPE / sizeof ARG_TYPE[0] ? ARG_TYPE[type] : "null");
    ts__sq_step(w, st);
    w->n_arg_rows++;
}

/* set_of[a] = the first row of the event's arg range holding row a. A
 * reader appends each event's args as one contiguous range, so ranges are
 * disjoint or equal; the first claim stands. */
static void claim(uint32_t *set_of, uint32_t n_rows, uint32_t first, uint32_t n)
{
    if (first == TS_NONE32) return;
    for (uint32_t a = first; a < first + n && a < n_rows; a++)
        if (set_of[a] == TS_NONE32) set_of[a] = first;
}

/* Rank ri's arg rows that belong to an event (slice, instant, the file's
 * metadata), in row order: arg_set_id never decreases, so the table's key
 * (arg_set_id, id) grows at its end and needs no index built afterwards. */
static int write_args(ts_sq *w, ts_sq_ins *st, const ts_rank *r, uint32_t ri)
{
    uint32_t n = r->args.n;
    uint32_t *set_of = ts__malloc(((size_t)n + 1) * sizeof *set_of);
    if (!set_of) return w->rc = ts__error(w->err, TS_ENOMEM, "%s: out of memory writing the database", w->path);
    memset(set_of, 0xff, ((size_t)n + 1) * sizeof *set_of);
    claim(set_of, n, r->meta_args, r->n_meta_args);
    for (uint32_t i = 0; i < r->slices.n; i++) claim(set_of, n, r->slices.args[i], r->slices.n_args[i]);
    for (uint32_t i = 0; i < r->instants.n; i++) claim(set_of, n, r->instants.args[i], r->instants.n_args[i]);
    for (uint32_t a = 0; a < n && w->rc == TS_OK; a++)
        if (set_of[a] != TS_NONE32) write_arg(w, st, r, ri, a, set_of[a]);
    ts__free(set_of, ((size_t)n + 1) * sizeof *set_of);
    return w->rc;
}

/* The arg_set_id of the range [first, first + n), -1 for none. */
static int64_t arg_set_id(const ts_sq *w, const ts_rank *r, uint32_t ri, uint32_t first, uint32_t n)
{
    return first == TS_NONE32 || n == 0 || first >= r->args.n ? -1 : w->arg_base[ri] + first;
}

static void write_slices(ts_sq *w, ts_sq_ins *st, const ts_rank *r, uint32_t ri)
{
    const ts_slices *sl = &r->slices;
    int64_t base = w->slice_base[ri];
    for (uint32_t i = 0; i < sl->n && w->rc == TS_OK; i++) {
        int64_t set_id = arg_set_id(w, r, ri, sl->args[i], sl->n_args[i]);
        ts__sq_i64(st, 1, base + i);
        ts__sq_i64(st, 2, sl->ts_ns[i]);
        ts__sq_i64(st, 3, sl->dur_ns[i]);
        ts__sq_i64(st, 4, w->track_base[ri] + sl->track[i]);
        ts__sq_text(st, 5, sl->cat[i] ? ts__rank_str(r, sl->cat[i]) : NULL);
        ts__sq_text(st, 6, ts__rank_str(r, sl->name[i]));
        ts__sq_i64(st, 7, sl->depth[i]);
        if (sl->parent[i] != TS_NONE32) ts__sq_i64(st, 8, base + sl->parent[i]);
        ts__sq_i64_or_null(st, 9, set_id, -1);
        ts__sq_text(st, 10, ts__kind_name((ts_kind)sl->kind[i]));
        ts__sq_i64_or_null(st, 11, sl->corr[i], -1);
        ts__sq_i64_or_null(st, 12, sl->ext_id[i], -1);
        ts__sq_step(w, st);
        w->n_slice_rows++;
    }
}

/* Instants are slices of duration 0 at depth 0, as Perfetto imports them. */
static void write_instants(ts_sq *w, ts_sq_ins *st, const ts_rank *r, uint32_t ri)
{
    const ts_instants *in = &r->instants;
    int64_t base = w->slice_base[ri] + r->slices.n;
    for (uint32_t i = 0; i < in->n && w->rc == TS_OK; i++) {
        int64_t set_id = arg_set_id(w, r, ri, in->args[i], in->n_args[i]);
        ts__sq_i64(st, 1, base + i);
        ts__sq_i64(st, 2, in->ts_ns[i]);
        ts__sq_i64(st, 3, 0);
        ts__sq_i64(st, 4, w->track_base[ri] + in->track[i]);
        ts__sq_text(st, 5, in->cat[i] ? ts__rank_str(r, in->cat[i]) : NULL);
        ts__sq_text(st, 6, ts__rank_str(r, in->name[i]));
        ts__sq_i64(st, 7, 0);
        ts__sq_i64_or_null(st, 9, set_id, -1);
        ts__sq_text(st, 10, ts__kind_name((ts_kind)in->kind[i]));
        ts__sq_step(w, st);
        w->n_slice_rows++;
    }
}

static void write_flows_counters(ts_sq *w, ts_sq_ins *flow, ts_sq_ins *counter, const ts_rank *r, uint32_t ri)
{
    int64_t base = w->slice_base[ri];
    for (uint32_t i = 0; i < r->flows.n && w->rc == TS_OK; i++) {
        if (r->flows.from[i] == TS_NONE32 || r->flows.to[i] == TS_NONE32) continue;   /* unbound: warned at load */
        ts__sq_i64(flow, 1, base + r->flows.from[i]);
        ts__sq_i64(flow, 2, base + r->flows.to[i]);
        uint32_t cat = ts__flow_cat(&r->flows, i);
        ts__sq_i64(flow, 3, (int64_t)ts__flow_id(&r->flows, i));
        ts__sq_text(flow, 4, cat ? ts__rank_str(r, cat) : NULL);
        ts__sq_step(w, flow);
    }
    for (uint32_t i = 0; i < r->counters.n && w->rc == TS_OK; i++) {
        ts__sq_i64(counter, 1, r->counters.ts_ns[i]);
        ts__sq_i64(counter, 2, w->track_base[ri] + r->counters.track[i]);
        ts__sq_real(counter, 3, r->counters.value[i]);
        ts__sq_step(w, counter);
    }
}

static void write_iterations(ts_sq *w, ts_sq_ins *st, const ts_rank *r, uint32_t ri)
{
    for (uint32_t i = 0; i < r->n_iterations && w->rc == TS_OK; i++) {
        const ts_iteration *it = &r->iterations[i];
        ts__sq_i64(st, 1, ri);
        ts__sq_i64(st, 2, it->step);
        ts__sq_i64(st, 3, it->start_ns);
        ts__sq_i64(st, 4, it->end_ns - it->start_ns);
        if (it->slice != TS_NONE32) ts__sq_i64(st, 5, w->slice_base[ri] + it->slice);
        ts__sq_step(w, st);
    }
}

static void write_rank_row(ts_sq *w, ts_sq_ins *st, const ts_sqlite_input *in, uint32_t ri, int64_t set_id)
{
    const ts_rank *r = in->job->ranks[ri];
    const char *format = ts_rank_meta_str(r, "format");
    ts__sq_i64(st, 1, ri);
    ts__sq_i64_or_null(st, 2, r->rank, -1);
    ts__sq_text(st, 3, r->path);
    ts__sq_text(st, 4, format ? format : "chrome-json");
    ts__sq_i64_or_null(st, 5, r->world_size, -1);
    for (uint32_t gr = 0; in->graph && gr < in->graph->n_ranks; gr++)
        if (in->graph->rank_model[gr] == ri) ts__sq_i64(st, 6, in->graph->align[gr].offset_ns);
    ts__sq_i64(st, 7, (int64_t)r->n_events_read);
    ts__sq_i64_or_null(st, 8, set_id, -1);
    ts__sq_step(w, st);
}

/* Every rank's slices, instants, args, flows, counters, iterations. */
static void write_rank_tables(ts_sq *w, const ts_sqlite_input *in)
{
    ts_sq_ins *slice = ts__sq_open(w, "slice", 12, TS_SQ_MANY);
    ts_sq_ins *args = ts__sq_open(w, "args(id, arg_set_id, key, int_value, string_value, real_value, value_type)", 7, TS_SQ_MANY);
    ts_sq_ins *flow = ts__sq_open(w, "flow(slice_out, slice_in, trace_id, category)", 4, TS_SQ_MANY);
    ts_sq_ins *counter = ts__sq_open(w, "counter(ts, track_id, value)", 3, TS_SQ_MANY);
    ts_sq_ins *iter = ts__sq_open(w, "iteration(rank_id, step, ts, dur, slice_id)", 5, 1);
    ts_sq_ins *rank = ts__sq_open(w, "rank", 8, 1);
    for (uint32_t ri = 0; ri < in->job->n_ranks && w->rc == TS_OK; ri++) {
        const ts_rank *r = in->job->ranks[ri];
        write_rank_row(w, rank, in, ri, arg_set_id(w, r, ri, r->meta_args, r->n_meta_args));
        write_slices(w, slice, r, ri);
        write_instants(w, slice, r, ri);
        if (write_args(w, args, r, ri) != TS_OK) break;
        write_flows_counters(w, flow, counter, r, ri);
        write_iterations(w, iter, r, ri);
    }
    ts__sq_close(w, slice);
    ts__sq_close(w, args);
    ts__sq_close(w, flow);
    ts__sq_close(w, counter);
    ts__sq_close(w, iter);
    ts__sq_close(w, rank);
}

/* Ingest warnings: one row per (rank, kind) with its count and first message. */
static void write_ingest_warnings(ts_sq *w, const ts_job *job)
{
    for (uint32_t ri = 0; ri < job->n_ranks; ri++) {
        const ts_rank *r = job->ranks[ri];
        for (int k = 0; k < TS_WARN_COUNT; k++)
            if (r->warn_count[k])
                ts__sq_warning(w, ri, "ingest", ts__warn_name((ts_warn_kind)k), r->warn_count[k], r->warn_first[k]);
    }
}

void ts__sq_warning(ts_sq *w, int64_t rank_id, const char *source, const char *kind, uint64_t count,
                    const char *message)
{
    ts_sq_ins *st = ts__sq_open(w, "warning(rank_id, source, kind, count, message)", 5, 1);
    ts__sq_i64_or_null(st, 1, rank_id, -1);
    ts__sq_text(st, 2, source);
    ts__sq_text(st, 3, kind);
    ts__sq_i64(st, 4, (int64_t)count);
    ts__sq_text(st, 5, message);
    ts__sq_step(w, st);
    ts__sq_close(w, st);
    w->n_warnings++;
}

static void write_metadata(ts_sq *w, const ts_job *job)
{
    ts_sq_ins *st = ts__sq_open(w, "metadata", 3, 1);
    static const char *const names[] = {"trainscope_version", "schema", "time_unit"};
    const char *vals[] = {ts_version(), "trainscope-sqlite 1", "ns"};
    for (int i = 0; i < 3; i++) {
        ts__sq_text(st, 1, names[i]);
        ts__sq_text(st, 3, vals[i]);
        ts__sq_step(w, st);
    }
    ts__sq_text(st, 1, "n_ranks");
    ts__sq_i64(st, 2, job->n_ranks);
    ts__sq_step(w, st);
    ts__sq_close(w, st);
}

/* Global id bases (see the top of this file). */
static int make_bases(ts_sq *w, const ts_job *job)
{
    size_t n = (size_t)job->n_ranks + 1;
    w->slice_base = ts__calloc(n, sizeof(int64_t));
    w->track_base = ts__calloc(n, sizeof(int64_t));
    w->arg_base = ts__calloc(n, sizeof(int64_t));
    if (!w->slice_base || !w->track_base || !w->arg_base)
        return ts__error(w->err, TS_ENOMEM, "%s: out of memory writing the database", w->path);
    for (uint32_t i = 0; i < job->n_ranks; i++) {
        const ts_rank *r = job->ranks[i];
        w->slice_base[i + 1] = w->slice_base[i] + r->slices.n + r->instants.n;
        w->track_base[i + 1] = w->track_base[i] + r->n_tracks;
        w->arg_base[i + 1] = w->arg_base[i] + r->args.n;
    }
    return TS_OK;
}

static void free_bases(ts_sq *w, const ts_job *job)
{
    size_t n = (size_t)job->n_ranks + 1;
    ts__free(w->slice_base, n * sizeof(int64_t));
    ts__free(w->track_base, n * sizeof(int64_t));
    ts__free(w->arg_base, n * sizeof(int64_t));
}

static void write_all(ts_sq *w, const ts_sqlite_input *in)
{
    uint32_t max_tracks = 0;
    for (uint32_t i = 0; i < in->job->n_ranks; i++)
        if (in->job->ranks[i]->n_tracks > max_tracks) max_tracks = in->job->ranks[i]->n_tracks;
    int64_t *upid_of = ts__calloc((size_t)max_tracks + 1, sizeof(int64_t));
    if (!upid_of) { w->rc = ts__error(w->err, TS_ENOMEM, "%s: out of memory writing the database", w->path); return; }
    ts__sq_exec(w, "BEGIN");
    for (size_t i = 0; i < sizeof SCHEMA / sizeof SCHEMA[0]; i++) ts__sq_exec(w, SCHEMA[i]);
    write_metadata(w, in->job);
    write_tracks(w, in->job, upid_of);
    write_rank_tables(w, in);
    write_ingest_warnings(w, in->job);
    ts__sq_analyses(w, in);
    ts__sq_exec(w, "COMMIT");
    ts__free(upid_of, ((size_t)max_tracks + 1) * sizeof(int64_t));
}

/* ---- the file ---- */

/* DIR/.NAME.PID.tmp beside path, created empty (an empty file is an empty
 * database), so an unwritable folder is said with its errno here. */
static int make_tmp(const char *path, char *tmp, size_t cap, ts_error *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return ts__error(err, TS_EIO, "%s: not a regular file (the database is written beside it, then renamed)",
                         path);
    const char *base = strrchr(path, '/');
    int dir_len = base ? (int)(base - path) + 1 : 0;
    base = base ? base + 1 : path;
    if (!*base) return ts__error(err, TS_EIO, "%s: names a folder, not a file", path);
    if (snprintf(tmp, cap, "%.*s.%s.%ld.tmp", dir_len, path, base, (long)getpid()) >= (int)cap)
        return ts__error(err, TS_EIO, "%s: %s", path, strerror(ENAMETOOLONG));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return ts__error(err, TS_EIO, "%s: cannot write: %s", path, strerror(errno));
    close(fd);
    return TS_OK;
}

static int64_t thread_cpu_ns(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static const char PRAGMAS[] = "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
                              " PRAGMA temp_store=MEMORY; PRAGMA page_size=16384; PRAGMA cache_size=-65536";

int ts_sqlite_write(const ts_sqlite_input *in, const char *path, ts_sqlite_stats *out, ts_error *err)
{
    ts__error_clear(err);
    if (!in || !in->job || !path) return ts__error(err, TS_EINVAL, "ts_sqlite_write: no job or no path");
    int64_t t0 = ts__now_ns(), c0 = thread_cpu_ns();
    char tmp[4096];
    int rc = ts__sqlite_open(path, err);
    if (rc != TS_OK) return rc;
    rc = make_tmp(path, tmp, sizeof tmp, err);
    if (rc != TS_OK) return rc;
    ts_sq w = {.path = path, .err = err};
    if (sqlite3_open_v2(tmp, &w.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        if (!w.db) w.rc = ts__error(err, TS_ENOMEM, "%s: out of memory opening the database", path);
        else sq_fail(&w);
    }
    if (w.rc == TS_OK) w.rc = make_bases(&w, in->job);
    ts__sq_exec(&w, PRAGMAS);
    write_all(&w, in);
    if (sqlite3_close(w.db) != SQLITE_OK && w.rc == TS_OK)   /* a statement left open: a bug here */
        w.rc = ts__error(err, TS_EIO, "%s: cannot write: the database did not close", path);
    if (w.rc == TS_OK && rename(tmp, path) != 0)
        w.rc = ts__error(err, TS_EIO, "%s: cannot write: %s", path, strerror(errno));
    if (w.rc != TS_OK) unlink(tmp);
    free_bases(&w, in->job);
    if (out && w.rc == TS_OK)
        *out = (ts_sqlite_stats){.n_rows = w.n_rows, .n_tables = w.n_tables, .n_slices = w.n_slice_rows,
                                 .n_args = w.n_arg_rows, .n_warnings = w.n_warnings, .write_ns = ts__now_ns() - t0,
                                 .write_cpu_ns = thread_cpu_ns() - c0};
    return w.rc;
}
