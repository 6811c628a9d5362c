/* sqlite_analyses.c - the analysis tables of the SQLite export: breakdown
 * (per rank, kernel-type combinations, kernels, streams, copy bandwidth,
 * CPU-only threads), critical_path (the path's segments in time order, each
 * tied to the slice whose time it is) and replay (per iteration and rank),
 * and the analyses' own warning lines.
 *
 * Not for: the trace tables or the file (sqlite.c), or computing results:
 * every figure here is a field of a result the caller computed. An absent
 * result leaves its tables empty (created all the same, so queries run).
 */
#include "report/sqlite_int.h"
#include "graph/critical_path.h"

#include <string.h>

static const char *const SCHEMA[] = {
    "CREATE TABLE breakdown(rank_id INTEGER, rank INTEGER, basis TEXT, iterations_filtered INTEGER,"
    " span_ns INTEGER, idle_ns INTEGER, compute_ns INTEGER, non_compute_ns INTEGER, comm_ns INTEGER,"
    " memory_ns INTEGER, computation_kernels_ns INTEGER, communication_kernels_ns INTEGER,"
    " memory_kernels_ns INTEGER, comm_comp_overlap_pct REAL, n_launches INTEGER, launch_delay_mean_ns REAL,"
    " launch_delay_median_ns REAL, launch_delay_max_ns INTEGER)",
    "CREATE TABLE breakdown_kernel_type(rank_id INTEGER, types TEXT, dur_ns INTEGER)",
    "CREATE TABLE breakdown_kernel(rank_id INTEGER, name TEXT, type TEXT, count INTEGER, total_ns INTEGER,"
    " min_ns INTEGER, max_ns INTEGER, mean_ns REAL, stddev_ns REAL, pct_of_type REAL)",
    "CREATE TABLE breakdown_stream(rank_id INTEGER, device INTEGER, stream INTEGER, n_ops INTEGER,"
    " busy_ns INTEGER, host_wait_ns INTEGER, kernel_wait_ns INTEGER, other_wait_ns INTEGER, queue_mean REAL,"
    " queue_max INTEGER)",
    "CREATE TABLE breakdown_memory_bandwidth(rank_id INTEGER, kind TEXT, count INTEGER, bytes INTEGER,"
    " dur_ns INTEGER, gbps REAL, max_gbps REAL)",
    "CREATE TABLE breakdown_thread(rank_id INTEGER, pid INTEGER, tid INTEGER, span_ns INTEGER,"
    " compute_ns INTEGER, comm_ns INTEGER, idle_ns INTEGER)",
    "CREATE TABLE critical_path(id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, category TEXT,"
    " slice_id INTEGER, rank_id INTEGER, node_kind TEXT, name TEXT, via TEXT)",
    "CREATE TABLE critical_path_category(category TEXT, dur_ns INTEGER)",
    "CREATE TABLE replay(id INTEGER PRIMARY KEY, step INTEGER, measured_ns INTEGER, predicted_ns INTEGER,"
    " error_pct REAL)",
    "CREATE TABLE replay_rank(rank INTEGER, measured_ns INTEGER, predicted_ns INTEGER, clock_offset_ns INTEGER)",
};

/* ---- breakdown ---- */

static void breakdown_rank(ts_sq *w, ts_sq_ins *st, int64_t rank_id, const ts_breakdown_rank *b)
{
    int64_t v[] = {b->span_ns, b->idle_ns, b->compute_ns, b->non_compute_ns, b->comm_ns, b->memory_ns,
                   b->type_total_ns[TS_KT_COMPUTATION], b->type_total_ns[TS_KT_COMMUNICATION],
                   b->type_total_ns[TS_KT_MEMORY]};
    ts__sq_i64(st, 1, rank_id);
    ts__sq_i64_or_null(st, 2, b->rank, -1);
    ts__sq_text(st, 3, b->has_gpu ? "gpu" : b->n_threads ? "cpu" : "none");
    ts__sq_i64(st, 4, b->iterations_filtered);
    for (int i = 0; i < 9; i++) ts__sq_i64(st, 5 + i, v[i]);
    if (b->comm_comp_overlap_pct >= 0) ts__sq_real(st, 14, b->comm_comp_overlap_pct);
    ts__sq_i64(st, 15, (int64_t)b->n_launches);
    if (b->n_launches) {
        ts__sq_real(st, 16, b->launch_delay_mean_ns);
        ts__sq_real(st, 17, b->launch_delay_median_ns);
        ts__sq_i64(st, 18, b->launch_delay_max_ns);
    }
    ts__sq_step(w, st);
}

/* "COMPUTATION overlapping COMMUNICATION": the kernel types of bit mask m. */
static void types_name(unsigned m, char *out, size_t cap)
{
    out[0] = 0;
    for (int k = 0; k < TS_KT_COUNT; k++) {
        if (!(m & (1u << k))) continue;
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s", n ? " overlapping " : "", ts_kernel_type_name((ts_kernel_type)k));
    }
}

static void breakdown_kernels(ts_sq *w, ts_sq_ins *ty, ts_sq_ins *st, int64_t rank_id,
                              const ts_breakdown_rank *b)
{
    for (unsigned m = 1; m < 8; m++) {
        if (!b->type_ns[m]) continue;
        char name[96];
        types_name(m, name, sizeof name);
        ts__sq_i64(ty, 1, rank_id);
        ts__sq_text_copy(ty, 2, name);
        ts__sq_i64(ty, 3, b->type_ns[m]);
        ts__sq_step(w, ty);
    }
    for (uint32_t i = 0; i < b->n_kernels; i++) {
        const ts_kernel_share *k = &b->kernels[i];
        ts__sq_i64(st, 1, rank_id);
        ts__sq_text(st, 2, k->name);
        ts__sq_text(st, 3, ts_kernel_type_name(k->type));
        ts__sq_i64(st, 4, (int64_t)k->count);
        ts__sq_i64(st, 5, k->total_ns);
        ts__sq_i64(st, 6, k->min_ns);
        ts__sq_i64(st, 7, k->max_ns);
        ts__sq_real(st, 8, k->mean_ns);
        ts__sq_real(st, 9, k->stddev_ns);
        ts__sq_real(st, 10, k->pct_of_type);
        ts__sq_step(w, st);
    }
}

static void breakdown_streams(ts_sq *w, ts_sq_ins *st, int64_t rank_id, const ts_breakdown_rank *b)
{
    for (uint32_t i = 0; i < b->n_streams; i++) {
        const ts_stream_breakdown *s = &b->streams[i];
        int64_t v[] = {rank_id, s->device, s->stream, (int64_t)s->n_ops, s->busy_ns, s->host_wait_ns,
                       s->kernel_wait_ns, s->other_wait_ns};
        for (int c = 0; c < 8; c++) ts__sq_i64(st, 1 + c, v[c]);
        ts__sq_real(st, 9, s->queue_mean);
        ts__sq_i64(st, 10, s->queue_max);
        ts__sq_step(w, st);
    }
}

static void breakdown_bw_threads(ts_sq *w, ts_sq_ins *bw, ts_sq_ins *th, int64_t rank_id,
                                 const ts_breakdown_rank *b)
{
    for (uint32_t i = 0; i < b->n_membw; i++) {
        const ts_membw *m = &b->membw[i];
        ts__sq_i64(bw, 1, rank_id);
        ts__sq_text(bw, 2, m->kind);
        ts__sq_i64(bw, 3, (int64_t)m->count);
        ts__sq_i64(bw, 4, (int64_t)m->bytes);
        ts__sq_i64(bw, 5, m->dur_ns);
        ts__sq_real(bw, 6, m->gbps);
        ts__sq_real(bw, 7, m->max_gbps);
        ts__sq_step(w, bw);
    }
    for (uint32_t i = 0; i < b->n_threads; i++) {
        const ts_thread_breakdown *t = &b->threads[i];
        int64_t v[] = {rank_id, t->pid, t->tid, t->span_ns, t->compute_ns, t->comm_ns, t->idle_ns};
        for (int c = 0; c < 7; c++) ts__sq_i64(th, 1 + c, v[c]);
        ts__sq_step(w, th);
    }
}

/* rank_id: the job rank of the breakdown's rank i (the breakdown keeps the
 * job's rank order, one entry per rank). */
static void write_breakdown(ts_sq *w, const ts_breakdown *bd)
{
    ts_sq_ins *st[] = {
        ts__sq_open(w, "breakdown", 18, 1),
        ts__sq_open(w, "breakdown_kernel_type", 3, 1),
        ts__sq_open(w, "breakdown_kernel", 10, TS_SQ_MANY),
        ts__sq_open(w, "breakdown_stream", 10, 1),
        ts__sq_open(w, "breakdown_memory_bandwidth", 7, 1),
        ts__sq_open(w, "breakdown_thread", 7, 1),
    };
    for (uint32_t i = 0; i < bd->n_ranks && w->rc == TS_OK; i++) {
        breakdown_rank(w, st[0], i, &bd->ranks[i]);
        breakdown_kernels(w, st[1], st[2], i, &bd->ranks[i]);
        breakdown_streams(w, st[3], i, &bd->ranks[i]);
        breakdown_bw_threads(w, st[4], st[5], i, &bd->ranks[i]);
    }
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) ts__sq_close(w, st[i]);
}

/* ---- critical path ---- */

static void meta_i64(ts_sq *w, const char *name, int64_t v)
{
    ts_sq_ins *st = ts__sq_open(w, "metadata(name, int_value)", 2, 1);
    ts__sq_text(st, 1, name);
    ts__sq_i64(st, 2, v);
    ts__sq_step(w, st);
    ts__sq_close(w, st);
}

static void cp_segment(ts_sq *w, ts_sq_ins *st, const ts_graph *g, const ts_cp_segment *sg)
{
    ts__sq_i64(st, 1, sg->start_ns);
    ts__sq_i64(st, 2, sg->dur_ns);
    ts__sq_text(st, 3, ts_cp_category_name((ts_cp_category)sg->category));
    uint32_t o = sg->owner;
    if (o != TS_NONE32) {
        uint16_t gr = g->nodes.rank[o];
        if (gr != TS_GRAPH_NO_RANK) {
            uint32_t mi = g->rank_model[gr];
            if (g->nodes.slice[o] != TS_NONE32) ts__sq_i64(st, 4, w->slice_base[mi] + g->nodes.slice[o]);
            ts__sq_i64(st, 5, mi);
        }
        ts__sq_text(st, 6, ts__node_kind_name((ts_node_kind)g->nodes.kind[o]));
        ts__sq_text(st, 7, ts__graph_node_name(g, o));
    }
    if (sg->edge != TS_NONE32) ts__sq_text(st, 8, ts__edge_kind_name((ts_edge_kind)g->edges.kind[sg->edge]));
    ts__sq_step(w, st);
}

static void write_critical_path(ts_sq *w, const ts_critical_path *cp)
{
    ts_sq_ins *st = ts__sq_open(w, "critical_path(ts, dur, category, slice_id, rank_id, node_kind, name, via)", 8, TS_SQ_MANY);
    for (uint32_t i = 0; i < cp->n_segs && w->rc == TS_OK; i++) cp_segment(w, st, cp->g, &cp->segs[i]);
    ts__sq_close(w, st);
    st = ts__sq_open(w, "critical_path_category", 2, 1);
    for (int c = 0; c < TS_CP_COUNT; c++) {
        ts__sq_text(st, 1, ts_cp_category_name((ts_cp_category)c));
        ts__sq_i64(st, 2, cp->cat_ns[c]);
        ts__sq_step(w, st);
    }
    ts__sq_close(w, st);
    meta_i64(w, "critical_path_step", cp->step);
    meta_i64(w, "critical_path_length_ns", cp->end_ns - cp->start_ns);
    meta_i64(w, "critical_path_iteration_ns", cp->window_ns);
    for (uint32_t i = 0; i < cp->n_warnings; i++) ts__sq_warning(w, -1, "critical_path", "note", 1, cp->warnings[i]);
}

/* ---- replay ---- */

static void write_replay(ts_sq *w, const ts_replay *rp, const ts_graph *g)
{
    ts_sq_ins *st = ts__sq_open(w, "replay(step, measured_ns, predicted_ns, error_pct)", 4, 1);
    for (uint32_t k = 0; k < ts_replay_n_iterations(rp) && w->rc == TS_OK; k++) {
        ts_replay_iteration_info it;
        ts_replay_iteration(rp, k, &it);
        ts__sq_i64_or_null(st, 1, it.step, -1);
        ts__sq_i64(st, 2, it.measured_iteration_ns);
        ts__sq_i64(st, 3, it.predicted_iteration_ns);
        if (it.measured_iteration_ns > 0)
            ts__sq_real(st, 4, 100.0 * (double)(it.predicted_iteration_ns - it.measured_iteration_ns) /
                                   (double)it.measured_iteration_ns);
        ts__sq_step(w, st);
    }
    ts__sq_close(w, st);
    st = ts__sq_open(w, "replay_rank", 4, 1);
    for (uint32_t i = 0; i < ts_replay_n_ranks(rp) && w->rc == TS_OK; i++) {
        ts_replay_rank_info ri;
        ts_replay_rank(rp, i, &ri);
        ts__sq_i64_or_null(st, 1, ri.rank, -1);
        ts__sq_i64(st, 2, ri.measured_iteration_ns);
        ts__sq_i64(st, 3, ri.predicted_iteration_ns);
        ts__sq_i64(st, 4, ri.clock_offset_ns);
        ts__sq_step(w, st);
    }
    ts__sq_close(w, st);
    meta_i64(w, "replay_measured_iteration_ns", ts_replay_measured_iteration_ns(rp));
    meta_i64(w, "replay_predicted_iteration_ns", ts_replay_predicted_iteration_ns(rp));
    for (uint32_t i = 0; i < ts_replay_n_warnings(rp); i++) {
        const char *line = ts_replay_warning(rp, i);
        bool graphs = false;   /* the graph's own lines are written once, from the graph */
        for (uint32_t k = 0; g && k < g->n_warnings && !graphs; k++) graphs = !strcmp(line, g->warnings[k]);
        if (!graphs) ts__sq_warning(w, -1, "replay", "note", 1, line);
    }
}

void ts__sq_analyses(ts_sq *w, const ts_sqlite_input *in)
{
    for (size_t i = 0; i < sizeof SCHEMA / sizeof SCHEMA[0]; i++) ts__sq_exec(w, SCHEMA[i]);
    if (in->breakdown) write_breakdown(w, in->breakdown);
    for (uint32_t i = 0; in->graph && i < in->graph->n_warnings; i++)
        ts__sq_warning(w, -1, "graph", "note", 1, in->graph->warnings[i]);
    if (in->critical_path) write_critical_path(w, in->critical_path);
    if (in->replay) write_replay(w, in->replay, in->graph);
    const char *why[3] = {in->breakdown_why, in->critical_path_why, in->replay_why};
    static const char *const source[3] = {"breakdown", "critical_path", "replay"};
    for (int i = 0; i < 3; i++)
        if (why[i]) ts__sq_warning(w, -1, source[i], "not_computed", 1, why[i]);
}
