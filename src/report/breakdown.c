/* breakdown.c - the output of a breakdown (ts_breakdown, and ts_stragglers
 * on several ranks): text tables, JSON, and CSV tables.
 *
 * Not for: computing any figure (analyze/breakdown.c, analyze/stragglers.c);
 * this file only formats the values it is given.
 * JSON: {"ranks":[{"rank","span_us","idle_us","compute_us","non_compute_us",...}],
 * "kernel_types":[...], "kernels":[...], "streams":[...], "launches":[...],
 * "memory_bandwidth":[...], "threads":[...], "stragglers":{...}, "warnings":[...]}.
 * CSV: one table per section (times in ns, see breakdown_tables), or without
 * --table/-o the long form section,rank,key,metric,value (times in us).
 */
#include "report/report_int.h"
#include "trainscope/analyze.h"

#include <math.h>
#include <string.h>

static double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * (double)part / (double)whole : 0; }

/* ---- JSON ---- */
/* A rank's temporal breakdown: JSON's "ranks" items and CSV's temporal rows. */
static int temporal_fields(const ts_breakdown_rank *r, ts__fld f[TS__FLD_MAX])
{
    ts_breakdown_temporal tp = ts_breakdown_rank_temporal(r);
    int n = 0;
    f[n++] = (ts__fld){"rank", TS__FLD_INT, .i = r->rank};
    f[n++] = (ts__fld){"basis", TS__FLD_STR, .s = r->has_gpu ? "gpu" : "cpu_thread"};
    f[n++] = (ts__fld){"span", TS__FLD_NS, .i = tp.span_ns};
    f[n++] = (ts__fld){"idle", TS__FLD_NS, .i = tp.idle_ns};
    f[n++] = (ts__fld){"compute", TS__FLD_NS, .i = tp.compute_ns};
    f[n++] = (ts__fld){"non_compute", TS__FLD_NS, .i = tp.non_compute_ns};
    f[n++] = (ts__fld){"communication", TS__FLD_NS, .i = tp.comm_ns};
    f[n++] = (ts__fld){"memory", TS__FLD_NS, .i = tp.memory_ns};
    f[n++] = (ts__fld){"idle_pct", TS__FLD_REAL, .d = pct(tp.idle_ns, tp.span_ns), .prec = 2};
    f[n++] = (ts__fld){"compute_pct", TS__FLD_REAL, .d = pct(tp.compute_ns, tp.span_ns), .prec = 2};
    f[n++] = (ts__fld){"non_compute_pct", TS__FLD_REAL, .d = pct(tp.non_compute_ns, tp.span_ns), .prec = 2};
    f[n++] = (ts__fld){"comm_comp_overlap_pct", TS__FLD_REAL,
                       .d = r->comm_comp_overlap_pct >= 0 ? r->comm_comp_overlap_pct : NAN, .prec = 2};
    f[n++] = (ts__fld){"iterations_filtered", TS__FLD_BOOL, .i = r->iterations_filtered};
    return n;
}

static void json_rank(ts_json *j, const ts_breakdown_rank *r)
{
    ts__fld f[TS__FLD_MAX];
    ts__fld_json(j, f, temporal_fields(r, f));
}

/* HTA's get_gpu_kernel_breakdown sums the kernel-type times over all ranks;
 * with more than one rank a rank -1 row set gives that total. */
static void json_types_of(ts_json *j, int32_t rank, const int64_t type_ns[8])
{
    int64_t all = 0;
    for (int m = 1; m < 8; m++) all += type_ns[m];
    for (int m = 1; m < 8; m++) {
        if (!type_ns[m]) continue;
        ts__json_obj_begin(j);
        ts__json_kv_i64(j, "rank", rank);
        ts__json_kv_str(j, "kernel_type", ts_kernel_type_combo_name((unsigned)m));
        ts__json_kv_us(j, "time_us", type_ns[m]);
        ts__json_kv_double(j, "pct", pct(type_ns[m], all), 2);
        ts__json_obj_end(j);
    }
}

static void json_kernel_types(ts_json *j, const ts_breakdown *b)
{
    ts__json_key(j, "kernel_types");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < b->n_ranks; i++) json_types_of(j, b->ranks[i].rank, b->ranks[i].type_ns);
    if (b->n_ranks > 1) {
        int64_t total[8];
        ts_breakdown_type_totals(b, total);
        json_types_of(j, -1, total);
    }
    ts__json_arr_end(j);
}

static void json_kernels(ts_json *j, const ts_breakdown *b)
{
    ts__json_key(j, "kernels");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_kernels; k++) {
            const ts_kernel_share *s = &b->ranks[i].kernels[k];
            ts__json_obj_begin(j);
            ts__json_kv_i64(j, "rank", b->ranks[i].rank);
            ts__json_kv_str(j, "kernel_type", ts_kernel_type_name(s->type));
            ts__json_kv_str(j, "name", s->name);
            ts__json_kv_u64(j, "count", s->count);
            ts__json_kv_us(j, "total_us", s->total_ns);
            ts__json_kv_double(j, "mean_us", s->mean_ns / 1e3, 3);
            ts__json_kv_us(j, "min_us", s->min_ns);
            ts__json_kv_us(j, "max_us", s->max_ns);
            ts__json_kv_double(j, "stddev_us", s->stddev_ns / 1e3, 3);
            ts__json_kv_double(j, "pct_of_type", s->pct_of_type, 2);
            ts__json_obj_end(j);
        }
    ts__json_arr_end(j);
}

static void json_streams(ts_json *j, const ts_breakdown *b)
{
    ts__json_key(j, "streams");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_streams; k++) {
            const ts_stream_breakdown *s = &b->ranks[i].streams[k];
            ts__json_obj_begin(j);
            ts__json_kv_i64(j, "rank", b->ranks[i].rank);
            ts__json_kv_i64(j, "device", s->device);
            ts__json_kv_i64(j, "stream", s->stream);
            ts__json_kv_u64(j, "ops", s->n_ops);
            ts__json_kv_us(j, "busy_us", s->busy_ns);
            ts__json_kv_us(j, "host_wait_us", s->host_wait_ns);
            ts__json_kv_us(j, "kernel_wait_us", s->kernel_wait_ns);
            ts__json_kv_us(j, "other_wait_us", s->other_wait_ns);
            ts__json_kv_u64(j, "queue_points", s->queue_points);
            ts__json_kv_double(j, "queue_mean", s->queue_mean, 3);
            ts__json_kv_i64(j, "queue_max", s->queue_max);
            ts__json_obj_end(j);
        }
    ts__json_arr_end(j);
}

static void json_launches(ts_json *j, const ts_breakdown *b)
{
    ts__json_key(j, "launches");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < b->n_ranks; i++) {
        const ts_breakdown_rank *r = &b->ranks[i];
        if (!r->has_gpu) continue;
        ts__json_obj_begin(j);
        ts__json_kv_i64(j, "rank", r->rank);
        ts__json_kv_u64(j, "count", r->n_launches);
        ts__json_kv_double(j, "launch_delay_mean_us", r->launch_delay_mean_ns / 1e3, 3);
        ts__json_kv_double(j, "launch_delay_median_us", r->launch_delay_median_ns / 1e3, 3);
        ts__json_kv_us(j, "launch_delay_max_us", r->launch_delay_max_ns);
        ts__json_kv_double(j, "runtime_mean_us", r->runtime_mean_ns / 1e3, 3);
        ts__json_kv_double(j, "gpu_mean_us", r->gpu_mean_ns / 1e3, 3);
        ts__json_kv_u64(j, "gpu_shorter_than_runtime", r->n_gpu_shorter_than_runtime);
        ts__json_kv_u64(j, "runtime_over_50us", r->n_runtime_outliers);
        ts__json_kv_u64(j, "delay_over_100us", r->n_delay_outliers);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
}

static void json_membw_threads(ts_json *j, const ts_breakdown *b)
{
    ts__json_key(j, "memory_bandwidth");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_membw; k++) {
            const ts_membw *m = &b->ranks[i].membw[k];
            ts__json_obj_begin(j);
            ts__json_kv_i64(j, "rank", b->ranks[i].rank);
            ts__json_kv_str(j, "kind", m->kind);
            ts__json_kv_u64(j, "count", m->count);
            ts__json_kv_u64(j, "bytes", m->bytes);
            ts__json_kv_us(j, "time_us", m->dur_ns);
            ts__json_kv_double(j, "gbps", m->gbps, 3);
            ts__json_kv_double(j, "max_gbps", m->max_gbps, 3);
            ts__json_obj_end(j);
        }
    ts__json_arr_end(j);
    ts__json_key(j, "threads");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_threads; k++) {
            const ts_thread_breakdown *t = &b->ranks[i].threads[k];
            ts__json_obj_begin(j);
            ts__json_kv_i64(j, "rank", b->ranks[i].rank);
            ts__json_kv_i64(j, "pid", t->pid);
            ts__json_kv_i64(j, "tid", t->tid);
            ts__json_kv_us(j, "span_us", t->span_ns);
            ts__json_kv_us(j, "compute_us", t->compute_ns);
            ts__json_kv_us(j, "communication_us", t->comm_ns);
            ts__json_kv_us(j, "idle_us", t->idle_ns);
            ts__json_obj_end(j);
        }
    ts__json_arr_end(j);
}

/* "stragglers": per rank, pairs, iterations, and every matched collective's lateness per rank. */
static void json_stragglers(ts_json *j, const ts_stragglers *st)
{
    ts__json_key(j, "stragglers");
    ts__json_obj_begin(j);
    ts__json_kv_us(j, "total_wait_us", st->total_wait_ns);
    ts__json_key(j, "ranks");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < st->n_ranks; i++) {
        const ts_straggler_rank *r = &st->ranks[i];
        ts__json_obj_begin(j);
        ts__json_kv_i64(j, "rank", r->rank);
        ts__json_kv_u64(j, "collectives", r->n_colls);
        ts__json_kv_u64(j, "last", r->n_last);
        ts__json_kv_us(j, "late_us", r->late_ns);
        ts__json_kv_us(j, "max_late_us", r->max_late_ns);
        ts__json_kv_us(j, "waited_us", r->waited_ns);
        ts__json_kv_us(j, "caused_us", r->caused_ns);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
    ts__json_key(j, "waits");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < st->n_pairs; i++) {
        ts__json_obj_begin(j);
        ts__json_kv_i64(j, "waiter", st->pairs[i].waiter);
        ts__json_kv_i64(j, "straggler", st->pairs[i].straggler);
        ts__json_kv_u64(j, "collectives", st->pairs[i].n);
        ts__json_kv_us(j, "wait_us", st->pairs[i].wait_ns);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
    ts__json_key(j, "iterations");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < st->n_iters; i++) {
        ts__json_obj_begin(j);
        ts__json_kv_i64(j, "iteration", st->iters[i].step);
        ts__json_kv_i64(j, "rank", st->iters[i].rank);
        ts__json_kv_u64(j, "collectives", st->iters[i].n_colls);
        ts__json_kv_us(j, "waited_us", st->iters[i].waited_ns);
        ts__json_kv_us(j, "caused_us", st->iters[i].caused_ns);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
    ts__json_key(j, "collectives");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < st->n_colls; i++) {
        const ts_straggler_coll *c = &st->colls[i];
        ts__json_obj_begin(j);
        ts__json_kv_str(j, "name", c->name);
        ts__json_kv_i64(j, "ordinal", c->ordinal);
        ts__json_kv_i64(j, "iteration", c->step);
        ts__json_kv_i64(j, "last_rank", c->last_rank);
        ts__json_kv_us(j, "spread_us", c->spread_ns);
        ts__json_key(j, "late_us");
        ts__json_obj_begin(j);
        for (uint32_t k = c->first_late; k < c->first_late + c->n_late; k++) {
            char key[16];
            snprintf(key, sizeof key, "%d", st->late[k].rank);
            ts__json_kv_us(j, key, st->late[k].late_ns);
        }
        ts__json_obj_end(j);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
    ts__json_obj_end(j);
}

static void print_json(ts_buf *out, const ts_job *t, const ts_graph *g, const char *why, const ts_breakdown *b,
                       const ts_stragglers *st)
{
    ts_json j;
    ts__json_init(&j, out);
    ts__json_obj_begin(&j);
    ts__json_key(&j, "ranks");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < b->n_ranks; i++) json_rank(&j, &b->ranks[i]);
    ts__json_arr_end(&j);
    json_kernel_types(&j, b);
    json_kernels(&j, b);
    json_streams(&j, b);
    json_launches(&j, b);
    json_membw_threads(&j, b);
    if (st) json_stragglers(&j, st);
    ts__report_warnings_json_open(&j, t);
    ts__report_warnings_json_graph(&j, g);   /* the stragglers' graph, NULL with one rank */
    if (why && why[0]) ts__report_warning_json_line(&j, "breakdown", why);
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    ts__buf_add(out, "\n", 1);
}

/* ---- table ---- */
typedef int (*fill_fn)(ts_table *tb, const ts_breakdown *b);

/* Build a table with `cols`, let fill add rows, print it under a title when
 * it has any. */
static int section(FILE *out, const char *title, const ts_col *cols, int n_cols, fill_fn fill, const ts_breakdown *b)
{
    ts_table *tb = ts_table_create(cols, n_cols);
    if (!tb) return TS_ENOMEM;
    int rows = fill(tb, b);
    int rc = rows < 0 ? TS_ENOMEM : TS_OK;
    if (rows > 0) {
        fprintf(out, "\n%s\n", title);
        rc = ts_table_write(tb, out);
    }
    ts_table_destroy(tb);
    return rc;
}

#define ROW(tb, ...) do { const char *cells_[] = {__VA_ARGS__}; if (ts_table_add_row(tb, cells_)) return -1; n++; } while (0)
#define DUR(buf, ns) ts_report_duration((double)(ns), buf, sizeof buf)

static int fill_temporal(ts_table *tb, const ts_breakdown *b)
{
    int n = 0;
    for (uint32_t i = 0; i < b->n_ranks; i++) {
        const ts_breakdown_rank *r = &b->ranks[i];
        ts_breakdown_temporal tp = ts_breakdown_rank_temporal(r);
        char rk[16], sp[16], id[16], cp[16], nc[16], cm[16], me[16], ov[16];
        snprintf(rk, sizeof rk, "%d", r->rank);
        snprintf(id, sizeof id, "%.1f", pct(tp.idle_ns, tp.span_ns));
        snprintf(cp, sizeof cp, "%.1f", pct(tp.compute_ns, tp.span_ns));
        snprintf(nc, sizeof nc, "%.1f", pct(tp.non_compute_ns, tp.span_ns));
        snprintf(ov, sizeof ov, r->comm_comp_overlap_pct >= 0 ? "%.1f" : "-", r->comm_comp_overlap_pct);
        ROW(tb, rk, r->has_gpu ? "gpu" : "cpu", DUR(sp, tp.span_ns), id, cp, nc, DUR(cm, tp.comm_ns), DUR(me, tp.memory_ns), ov);
    }
    return n;
}

static int types_rows(ts_table *tb, const char *rank, const int64_t type_ns[8])
{
    int n = 0;
    int64_t all = 0;
    for (int m = 1; m < 8; m++) all += type_ns[m];
    for (int m = 1; m < 8; m++) {
        if (!type_ns[m]) continue;
        char t[16], p[16];
        snprintf(p, sizeof p, "%.1f", pct(type_ns[m], all));
        ROW(tb, rank, ts_kernel_type_combo_name((unsigned)m), DUR(t, type_ns[m]), p);
    }
    return n;
}

static int fill_types(ts_table *tb, const ts_breakdown *b)
{
    int n = 0, k;
    for (uint32_t i = 0; i < b->n_ranks; i++) {
        char rk[16];
        snprintf(rk, sizeof rk, "%d", b->ranks[i].rank);
        if ((k = types_rows(tb, rk, b->ranks[i].type_ns)) < 0) return -1;
        n += k;
    }
    if (b->n_ranks > 1) {
        int64_t total[8];
        ts_breakdown_type_totals(b, total);
        if ((k = types_rows(tb, "all", total)) < 0) return -1;
        n += k;
    }
    return n;
}

static int fill_kernels(ts_table *tb, const ts_breakdown *b)
{
    static const char *const abbr[TS_KT_COUNT] = {"comp", "comm", "mem"};
    int n = 0;
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_kernels; k++) {
            const ts_kernel_share *s = &b->ranks[i].kernels[k];
            char rk[16], c[24], t[16], m[16], p[16];
            snprintf(rk, sizeof rk, "%d", b->ranks[i].rank);
            snprintf(c, sizeof c, "%llu", (unsigned long long)s->count);
            snprintf(p, sizeof p, "%.1f", s->pct_of_type);
            ROW(tb, rk, abbr[s->type], s->name, c, DUR(t, s->total_ns), DUR(m, s->mean_ns), p);
        }
    return n;
}

static int fill_streams(ts_table *tb, const ts_breakdown *b)
{
    int n = 0;
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_streams; k++) {
            const ts_stream_breakdown *s = &b->ranks[i].streams[k];
            char rk[16], st[24], ops[24], hw[16], kw[16], ow[16], qm[16], qx[24];
            snprintf(rk, sizeof rk, "%d", b->ranks[i].rank);
            snprintf(st, sizeof st, "%d:%lld", s->device, (long long)s->stream);
            snprintf(ops, sizeof ops, "%llu", (unsigned long long)s->n_ops);
            snprintf(qm, sizeof qm, "%.2f", s->queue_mean);
            snprintf(qx, sizeof qx, "%lld", (long long)s->queue_max);
            ROW(tb, rk, st, ops, DUR(hw, s->host_wait_ns), DUR(kw, s->kernel_wait_ns), DUR(ow, s->other_wait_ns), qm, qx);
        }
    return n;
}

static int fill_launches(ts_table *tb, const ts_breakdown *b)
{
    int n = 0;
    for (uint32_t i = 0; i < b->n_ranks; i++) {
        const ts_breakdown_rank *r = &b->ranks[i];
        if (!r->has_gpu) continue;
        char rk[16], c[24], dm[16], dd[16], dx[16], rm[16], gm[16], sh[24];
        snprintf(rk, sizeof rk, "%d", r->rank);
        snprintf(c, sizeof c, "%llu", (unsigned long long)r->n_launches);
        snprintf(sh, sizeof sh, "%llu", (unsigned long long)r->n_gpu_shorter_than_runtime);
        ROW(tb, rk, c, DUR(dm, r->launch_delay_mean_ns), DUR(dd, r->launch_delay_median_ns), DUR(dx, r->launch_delay_max_ns),
            DUR(rm, r->runtime_mean_ns), DUR(gm, r->gpu_mean_ns), sh);
    }
    return n;
}

static int fill_membw(ts_table *tb, const ts_breakdown *b)
{
    int n = 0;
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_membw; k++) {
            const ts_membw *m = &b->ranks[i].membw[k];
            char rk[16], c[24], by[32], g[24], gx[24];
            snprintf(rk, sizeof rk, "%d", b->ranks[i].rank);
            snprintf(c, sizeof c, "%llu", (unsigned long long)m->count);
            snprintf(by, sizeof by, "%llu", (unsigned long long)m->bytes);
            snprintf(g, sizeof g, "%.2f", m->gbps);
            snprintf(gx, sizeof gx, "%.2f", m->max_gbps);
            ROW(tb, rk, m->kind, c, by, g, gx);
        }
    return n;
}

static int fill_threads(ts_table *tb, const ts_breakdown *b)
{
    int n = 0;
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_threads; k++) {
            const ts_thread_breakdown *t = &b->ranks[i].threads[k];
            char rk[16], tid[24], sp[16], cp[16], cm[16], id[16], ip[16];
            snprintf(rk, sizeof rk, "%d", b->ranks[i].rank);
            snprintf(tid, sizeof tid, "%lld", (long long)t->tid);
            snprintf(ip, sizeof ip, "%.1f", pct(t->idle_ns, t->span_ns));
            ROW(tb, rk, tid, DUR(sp, t->span_ns), DUR(cp, t->compute_ns), DUR(cm, t->comm_ns), DUR(id, t->idle_ns), ip);
        }
    return n;
}

/* Name columns get what `width` leaves after the fixed columns (0 = all). */
static int name_width(int width, int fixed) { return width ? (width - fixed > 8 ? width - fixed : 8) : 0; }

static int print_table(FILE *out, const ts_breakdown *b, int width)
{
    static const ts_col temporal_cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"basis", TS_ALIGN_LEFT, 0}, {"span", TS_ALIGN_RIGHT, 0},
        {"idle%", TS_ALIGN_RIGHT, 0}, {"compute%", TS_ALIGN_RIGHT, 0}, {"non-comp%", TS_ALIGN_RIGHT, 0},
        {"comm", TS_ALIGN_RIGHT, 0}, {"memory", TS_ALIGN_RIGHT, 0}, {"overlap%", TS_ALIGN_RIGHT, 0},
    };
    const ts_col type_cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"kernel type", TS_ALIGN_LEFT, name_width(width, 24)}, {"time", TS_ALIGN_RIGHT, 0}, {"%", TS_ALIGN_RIGHT, 0},
    };
    const ts_col kernel_cols[] = {   /* fixed: rank 4, type 4, count 5, two durations, %type, six gaps */
        {"rank", TS_ALIGN_RIGHT, 0}, {"type", TS_ALIGN_LEFT, 0}, {"kernel", TS_ALIGN_LEFT, name_width(width, 44)},
        {"count", TS_ALIGN_RIGHT, 0}, {"total", TS_ALIGN_RIGHT, 0}, {"mean", TS_ALIGN_RIGHT, 0}, {"%type", TS_ALIGN_RIGHT, 0},
    };
    static const ts_col stream_cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"dev:stream", TS_ALIGN_LEFT, 0}, {"ops", TS_ALIGN_RIGHT, 0},
        {"host wait", TS_ALIGN_RIGHT, 0}, {"kernel wait", TS_ALIGN_RIGHT, 0}, {"other", TS_ALIGN_RIGHT, 0},
        {"queue mean", TS_ALIGN_RIGHT, 0}, {"max", TS_ALIGN_RIGHT, 0},
    };
    static const ts_col launch_cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"launches", TS_ALIGN_RIGHT, 0}, {"delay mean", TS_ALIGN_RIGHT, 0},
        {"median", TS_ALIGN_RIGHT, 0}, {"max", TS_ALIGN_RIGHT, 0}, {"call mean", TS_ALIGN_RIGHT, 0},
        {"op mean", TS_ALIGN_RIGHT, 0}, {"op<call", TS_ALIGN_RIGHT, 0},
    };
    static const ts_col membw_cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"kind", TS_ALIGN_LEFT, 0}, {"count", TS_ALIGN_RIGHT, 0},
        {"bytes", TS_ALIGN_RIGHT, 0}, {"GB/s", TS_ALIGN_RIGHT, 0}, {"max GB/s", TS_ALIGN_RIGHT, 0},
    };
    static const ts_col thread_cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"tid", TS_ALIGN_RIGHT, 0}, {"span", TS_ALIGN_RIGHT, 0},
        {"compute", TS_ALIGN_RIGHT, 0}, {"comm", TS_ALIGN_RIGHT, 0}, {"idle", TS_ALIGN_RIGHT, 0}, {"idle%", TS_ALIGN_RIGHT, 0},
    };
#define N(c) (int)(sizeof c / sizeof c[0])
    int rc;
    if ((rc = section(out, "temporal breakdown (GPU span of complete iterations; CPU-only: busiest thread)",
                      temporal_cols, N(temporal_cols), fill_temporal, b)) ||
        (rc = section(out, "kernel types", type_cols, N(type_cols), fill_types, b)) ||
        (rc = section(out, "top kernels per type", kernel_cols, N(kernel_cols), fill_kernels, b)) ||
        (rc = section(out, "idle time and queue length per stream", stream_cols, N(stream_cols), fill_streams, b)) ||
        (rc = section(out, "kernel launches (delay = op start - runtime call start)", launch_cols, N(launch_cols), fill_launches, b)) ||
        (rc = section(out, "memcpy/memset bandwidth", membw_cols, N(membw_cols), fill_membw, b)) ||
        (rc = section(out, "CPU threads", thread_cols, N(thread_cols), fill_threads, b)))
        return rc;
#undef N
    return TS_OK;
}

/* Straggler tables: per rank, who waited for whom (top 10), per iteration. */
static int print_stragglers(FILE *out, const ts_stragglers *st)
{
    char a[6][32];
    fprintf(out, "\nstragglers (collectives matched across ranks, on aligned clocks): %u instances, "
           "ranks waited %s in all\n", st->n_colls, (ts_report_duration((double)st->total_wait_ns, a[0], 32), a[0]));
    fprintf(out, "%5s %7s %6s %10s %10s %10s %10s\n", "rank", "colls", "last", "late", "max late", "waited", "caused");
    for (uint32_t i = 0; i < st->n_ranks; i++) {
        const ts_straggler_rank *r = &st->ranks[i];
        ts_report_duration((double)r->late_ns, a[0], 32);
        ts_report_duration((double)r->max_late_ns, a[1], 32);
        ts_report_duration((double)r->waited_ns, a[2], 32);
        ts_report_duration((double)r->caused_ns, a[3], 32);
        fprintf(out, "%5d %7u %6u %10s %10s %10s %10s\n", r->rank, r->n_colls, r->n_last, a[0], a[1], a[2], a[3]);
    }
    if (st->n_pairs) fprintf(out, "\nwho waited for whom\n%6s %9s %7s %10s\n", "waiter", "straggler", "colls", "waited");
    for (uint32_t i = 0; i < st->n_pairs && i < 10; i++) {
        ts_report_duration((double)st->pairs[i].wait_ns, a[0], 32);
        fprintf(out, "%6d %9d %7u %10s\n", st->pairs[i].waiter, st->pairs[i].straggler, st->pairs[i].n, a[0]);
    }
    if (st->n_pairs > 10) fprintf(out, "... %u more pairs (json has all)\n", st->n_pairs - 10);
    if (st->n_iters) fprintf(out, "\nper iteration\n%9s %5s %7s %10s %10s\n", "iteration", "rank", "colls", "waited", "caused");
    for (uint32_t i = 0; i < st->n_iters; i++) {
        ts_report_duration((double)st->iters[i].waited_ns, a[0], 32);
        ts_report_duration((double)st->iters[i].caused_ns, a[1], 32);
        if (st->iters[i].step >= 0) snprintf(a[2], 32, "%lld", (long long)st->iters[i].step);
        else snprintf(a[2], 32, "-");
        fprintf(out, "%9s %5d %7u %10s %10s\n", a[2], st->iters[i].rank, st->iters[i].n_colls, a[0], a[1]);
    }
    return ferror(out) ? TS_EIO : TS_OK;
}

/* ---- CSV tables (times in ns) ---- */
typedef struct bd_result { const ts_breakdown *b; const ts_stragglers *st; } bd_result;

static void csv_temporal(ts_csv *c, const void *res)
{
    const ts_breakdown *b = ((const bd_result *)res)->b;
    ts__fld f[TS__FLD_MAX];
    ts_breakdown_rank none = {0};
    ts__fld_csv_head(c, f, temporal_fields(&none, f));
    for (uint32_t i = 0; i < b->n_ranks; i++) ts__fld_csv_row(c, f, temporal_fields(&b->ranks[i], f));
}

static void csv_types_of(ts_csv *c, int32_t rank, const int64_t type_ns[8])
{
    int64_t all = 0;
    for (int m = 1; m < 8; m++) all += type_ns[m];
    for (int m = 1; m < 8; m++) {
        if (!type_ns[m]) continue;
        ts_csv_i64(c, rank);
        ts_csv_str(c, ts_kernel_type_combo_name((unsigned)m));
        ts_csv_i64(c, type_ns[m]);
        ts_csv_real(c, pct(type_ns[m], all), 3);
        ts_csv_end_row(c);
    }
}

static void csv_kernel_types(ts_csv *c, const void *res)
{
    const ts_breakdown *b = ((const bd_result *)res)->b;
    TS__CSV_HEAD(c, "rank", "kernel_type", "time_ns", "pct");
    for (uint32_t i = 0; i < b->n_ranks; i++) csv_types_of(c, b->ranks[i].rank, b->ranks[i].type_ns);
    if (b->n_ranks > 1) {   /* rank -1: all ranks, as in JSON */
        int64_t total[8];
        ts_breakdown_type_totals(b, total);
        csv_types_of(c, -1, total);
    }
}

static void csv_kernels(ts_csv *c, const void *res)
{
    const ts_breakdown *b = ((const bd_result *)res)->b;
    TS__CSV_HEAD(c, "rank", "kernel_type", "name", "count", "total_ns", "mean_ns", "min_ns", "max_ns", "stddev_ns", "pct_of_type");
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_kernels; k++) {
            const ts_kernel_share *s = &b->ranks[i].kernels[k];
            ts_csv_i64(c, b->ranks[i].rank);
            ts_csv_str(c, ts_kernel_type_name(s->type));
            ts_csv_str(c, s->name);
            ts_csv_u64(c, s->count);
            ts_csv_i64(c, s->total_ns);
            ts_csv_real(c, s->mean_ns, 3);
            ts_csv_i64(c, s->min_ns);
            ts_csv_i64(c, s->max_ns);
            ts_csv_real(c, s->stddev_ns, 3);
            ts_csv_real(c, s->pct_of_type, 3);
            ts_csv_end_row(c);
        }
}

static void csv_streams(ts_csv *c, const void *res)
{
    const ts_breakdown *b = ((const bd_result *)res)->b;
    TS__CSV_HEAD(c, "rank", "device", "stream", "ops", "busy_ns", "host_wait_ns", "kernel_wait_ns", "other_wait_ns",
         "queue_points", "queue_mean", "queue_max");
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_streams; k++) {
            const ts_stream_breakdown *s = &b->ranks[i].streams[k];
            ts_csv_i64(c, b->ranks[i].rank);
            ts_csv_i64(c, s->device);
            ts_csv_i64(c, s->stream);
            ts_csv_u64(c, s->n_ops);
            ts_csv_i64(c, s->busy_ns);
            ts_csv_i64(c, s->host_wait_ns);
            ts_csv_i64(c, s->kernel_wait_ns);
            ts_csv_i64(c, s->other_wait_ns);
            ts_csv_u64(c, s->queue_points);
            ts_csv_real(c, s->queue_mean, 3);
            ts_csv_i64(c, s->queue_max);
            ts_csv_end_row(c);
        }
}

static void csv_launches(ts_csv *c, const void *res)
{
    const ts_breakdown *b = ((const bd_result *)res)->b;
    TS__CSV_HEAD(c, "rank", "count", "launch_delay_mean_ns", "launch_delay_median_ns", "launch_delay_max_ns", "runtime_mean_ns",
         "gpu_mean_ns", "gpu_shorter_than_runtime", "runtime_over_50us", "delay_over_100us");
    for (uint32_t i = 0; i < b->n_ranks; i++) {
        const ts_breakdown_rank *r = &b->ranks[i];
        if (!r->has_gpu) continue;
        ts_csv_i64(c, r->rank);
        ts_csv_u64(c, r->n_launches);
        ts_csv_real(c, r->launch_delay_mean_ns, 3);
        ts_csv_real(c, r->launch_delay_median_ns, 3);
        ts_csv_i64(c, r->launch_delay_max_ns);
        ts_csv_real(c, r->runtime_mean_ns, 3);
        ts_csv_real(c, r->gpu_mean_ns, 3);
        ts_csv_u64(c, r->n_gpu_shorter_than_runtime);
        ts_csv_u64(c, r->n_runtime_outliers);
        ts_csv_u64(c, r->n_delay_outliers);
        ts_csv_end_row(c);
    }
}

static void csv_membw(ts_csv *c, const void *res)
{
    const ts_breakdown *b = ((const bd_result *)res)->b;
    TS__CSV_HEAD(c, "rank", "kind", "count", "bytes", "time_ns", "gbps", "max_gbps");
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_membw; k++) {
            const ts_membw *m = &b->ranks[i].membw[k];
            ts_csv_i64(c, b->ranks[i].rank);
            ts_csv_str(c, m->kind);
            ts_csv_u64(c, m->count);
            ts_csv_u64(c, m->bytes);
            ts_csv_i64(c, m->dur_ns);
            ts_csv_real(c, m->gbps, 3);
            ts_csv_real(c, m->max_gbps, 3);
            ts_csv_end_row(c);
        }
}

static void csv_threads(ts_csv *c, const void *res)
{
    const ts_breakdown *b = ((const bd_result *)res)->b;
    TS__CSV_HEAD(c, "rank", "pid", "tid", "span_ns", "compute_ns", "communication_ns", "idle_ns");
    for (uint32_t i = 0; i < b->n_ranks; i++)
        for (uint32_t k = 0; k < b->ranks[i].n_threads; k++) {
            const ts_thread_breakdown *t = &b->ranks[i].threads[k];
            int64_t v[] = {b->ranks[i].rank, t->pid, t->tid, t->span_ns, t->compute_ns, t->comm_ns, t->idle_ns};
            for (int x = 0; x < 7; x++) ts_csv_i64(c, v[x]);
            ts_csv_end_row(c);
        }
}

/* The straggler tables: header only on one rank (no collective matched across ranks). */
static void csv_stragglers(ts_csv *c, const void *res)
{
    const ts_stragglers *st = ((const bd_result *)res)->st;
    TS__CSV_HEAD(c, "rank", "collectives", "last", "late_ns", "max_late_ns", "waited_ns", "caused_ns");
    for (uint32_t i = 0; st && i < st->n_ranks; i++) {
        const ts_straggler_rank *r = &st->ranks[i];
        int64_t v[] = {r->rank, r->n_colls, r->n_last, r->late_ns, r->max_late_ns, r->waited_ns, r->caused_ns};
        for (int x = 0; x < 7; x++) ts_csv_i64(c, v[x]);
        ts_csv_end_row(c);
    }
}

static void csv_straggler_pairs(ts_csv *c, const void *res)
{
    const ts_stragglers *st = ((const bd_result *)res)->st;
    TS__CSV_HEAD(c, "waiter", "straggler", "collectives", "wait_ns");
    for (uint32_t i = 0; st && i < st->n_pairs; i++) {
        int64_t v[] = {st->pairs[i].waiter, st->pairs[i].straggler, st->pairs[i].n, st->pairs[i].wait_ns};
        for (int x = 0; x < 4; x++) ts_csv_i64(c, v[x]);
        ts_csv_end_row(c);
    }
}

static void csv_straggler_iterations(ts_csv *c, const void *res)
{
    const ts_stragglers *st = ((const bd_result *)res)->st;
    TS__CSV_HEAD(c, "iteration", "rank", "collectives", "waited_ns", "caused_ns");
    for (uint32_t i = 0; st && i < st->n_iters; i++) {
        const ts_straggler_iter *it = &st->iters[i];
        int64_t v[] = {it->step, it->rank, it->n_colls, it->waited_ns, it->caused_ns};
        for (int x = 0; x < 5; x++) ts_csv_i64(c, v[x]);
        ts_csv_end_row(c);
    }
}

/* One row per (collective instance, member rank): its lateness. */
static void csv_straggler_collectives(ts_csv *c, const void *res)
{
    const ts_stragglers *st = ((const bd_result *)res)->st;
    TS__CSV_HEAD(c, "name", "ordinal", "iteration", "last_rank", "spread_ns", "rank", "late_ns");
    for (uint32_t i = 0; st && i < st->n_colls; i++) {
        const ts_straggler_coll *co = &st->colls[i];
        for (uint32_t k = co->first_late; k < co->first_late + co->n_late; k++) {
            ts_csv_str(c, co->name);
            int64_t v[] = {co->ordinal, co->step, co->last_rank, co->spread_ns, st->late[k].rank, st->late[k].late_ns};
            for (int x = 0; x < 6; x++) ts_csv_i64(c, v[x]);
            ts_csv_end_row(c);
        }
    }
}

static const ts_csv_table breakdown_tables[] = {
    {"temporal", csv_temporal}, {"kernel_types", csv_kernel_types}, {"kernels", csv_kernels},
    {"streams", csv_streams}, {"launches", csv_launches}, {"memory_bandwidth", csv_membw},
    {"threads", csv_threads}, {"stragglers", csv_stragglers}, {"straggler_pairs", csv_straggler_pairs},
    {"straggler_iterations", csv_straggler_iterations}, {"straggler_collectives", csv_straggler_collectives},
};

int ts_report_breakdown(const ts_breakdown *b, const ts_stragglers *st, const ts_job *t, const ts_graph *g,
                        const char *note, const ts_report_opts *o, FILE *out, ts_error *err)
{
    ts__error_clear(err);
    if (o->format == TS_FMT_CSV) {
        bd_result res = {b, st};
        return ts_report_csv("breakdown", breakdown_tables, sizeof breakdown_tables / sizeof breakdown_tables[0], &res,
                             o->table, o->dir, out, err);
    }
    if (o->format == TS_FMT_TABLE) {
        int rc = print_table(out, b, o->width);
        if (!rc && st) rc = print_stragglers(out, st);
        return rc ? ts__error(err, rc, "writing the tables failed") : TS_OK;
    }
    ts_buf buf;
    ts__buf_init(&buf);
    print_json(&buf, t, g, note, b, st);
    int rc = ts__report_flush(&buf, out, err);
    ts__buf_free(&buf);
    return rc;
}
