/* replay_export.c - the replayed schedule as a Chrome trace (Perfetto UI opens it).
 *
 * One process per rank (pid = rank number, or rank index when unknown), one
 * thread per graph lane (tid = lane row, named after the CPU thread or GPU
 * stream it replays), every node an "X" event at its simulated time, with its
 * measured start and duration in args. Barrier nodes go to a "collectives"
 * process. Each rank's iterations (ProfilerStep#N) are drawn on an
 * "iterations" row where the replay puts them. Nodes a what-if replaced (old
 * gloo buckets regrouped by --bucket-mb, left in the graph at zero time)
 * are not drawn: their new buckets ("what_if" in args) stand in for them.
 * Timestamps are microseconds with ns precision ("displayTimeUnit" "ns"),
 * relative to the earliest simulated or measured start. O(V), streamed in
 * 1 MiB chunks so a million-node schedule never sits in memory twice.
 */
#include <errno.h>
#include <stdio.h>

#include "replay/replay.h"
#include "core/json.h"

enum { BARRIER_PID = -1 };

static int64_t export_pid(const ts_replay *r, uint16_t rank)
{
    if (rank == TS_GRAPH_NO_RANK) return BARRIER_PID;
    int32_t num = r->g->rank_number[rank];
    return num >= 0 ? num : rank;
}

/* A thread_name metadata event: Perfetto labels the row (pid, tid) name. */
static void thread_name(ts_json *j, int64_t pid, int64_t tid, const char *name)
{
    ts__json_obj_begin(j);
    ts__json_kv_str(j, "ph", "M");
    ts__json_kv_str(j, "name", "thread_name");
    ts__json_kv_i64(j, "pid", pid);
    ts__json_kv_i64(j, "tid", tid);
    ts__json_key(j, "args");
    ts__json_obj_begin(j);
    ts__json_kv_str(j, "name", name);
    ts__json_obj_end(j);
    ts__json_obj_end(j);
}

static void lane_names(const ts_replay *r, ts_json *j)
{
    const ts_graph *g = r->g;
    for (uint32_t l = 0; l < g->n_lanes; l++) {
        const ts_lane *ln = &g->lanes[l];
        char name[160];
        if (ln->rank == TS_GRAPH_NO_RANK || ln->track == TS_NONE32) {
            snprintf(name, sizeof name, "collectives");
        } else {
            const ts_rank *m = g->trace->ranks[g->rank_model[ln->rank]];
            const ts_track *tr = &m->tracks[ln->track];
            /* a CPU thread keeps the name the trace gave it ("thread 2919752 (pt_autograd_0)") */
            if (!ln->on_gpu && tr->name_id) snprintf(name, sizeof name, "%.150s", ts__rank_str(m, tr->name_id));
            else snprintf(name, sizeof name, ln->on_gpu ? "stream %lld" : "thread %lld", (long long)tr->tid);
        }
        thread_name(j, export_pid(r, ln->rank), l, name);
    }
}

/* Simulated length of node n as drawn: a barrier of a replay that left the
 * transfer times on the members' exits is drawn as long as its transfer, as
 * when the transfer is moved onto it (the members' times are the same). */
static int64_t drawn_dur(const ts_replay *r, uint32_t n)
{
    const ts_sim *s = &r->sim;
    int64_t d = s->end_ns[n] - s->start_ns[n];
    if (!r->transfers_moved && n < s->n_base_nodes && s->kind[n] == TS_NODE_BARRIER &&
        r->g->nodes.coll[n] != TS_NONE32 && r->g->nodes.coll[n] < r->n_colls)
        d += r->colls[r->g->nodes.coll[n]].transfer_ns;
    return d;
}

static void node_event(const ts_replay *r, ts_json *j, uint32_t n, int64_t t0)
{
    const ts_sim *s = &r->sim;
    ts__json_obj_begin(j);
    ts__json_kv_str(j, "ph", "X");
    ts__json_kv_str(j, "name", ts__replay_node_name(r, n));
    ts__json_kv_str(j, "cat", ts__node_kind_name((ts_node_kind)s->kind[n]));
    ts__json_kv_i64(j, "pid", export_pid(r, s->rank[n]));
    ts__json_kv_i64(j, "tid", s->lane[n] == TS_NONE32 ? (int64_t)r->g->n_lanes : (int64_t)s->lane[n]);
    ts__json_kv_us(j, "ts", s->start_ns[n] - t0);
    ts__json_kv_us(j, "dur", drawn_dur(r, n));
    ts__json_key(j, "args");
    ts__json_obj_begin(j);
    if (ts__sim_measured(s, n)) {
        ts__json_kv_us(j, "measured_ts", ts__sim_meas_start(s, n) - t0);
        ts__json_kv_us(j, "measured_dur", s->meas_dur_ns[n]);
    } else {
        ts__json_kv_bool(j, "what_if", true);   /* made by a what-if edit */
    }
    ts__json_obj_end(j);
    ts__json_obj_end(j);
}

/* Each rank's iterations on a row of their own ("iterations", tid one past
 * the lanes), where the replay puts them: the spans its per-iteration
 * figures are measured on, so Perfetto shows the predicted steps next to
 * the ops. */
static void iteration_events(const ts_replay *r, ts_json *j, int64_t t0)
{
    int64_t tid = (int64_t)r->g->n_lanes + 1;
    for (uint32_t ri = 0; ri < r->n_ranks && r->n_iter_slots; ri++) {
        thread_name(j, export_pid(r, (uint16_t)ri), tid, "iterations");
        for (uint32_t k = 0; k < r->n_iter_slots; k++) {
            const ts_replay_iter *x = &r->iters[(size_t)ri * r->n_iter_slots + k];
            if (x->meas_dur_ns < 0) continue;
            char name[48];
            if (x->step >= 0) snprintf(name, sizeof name, "ProfilerStep#%lld", (long long)x->step);
            else snprintf(name, sizeof name, "whole trace");
            ts__json_obj_begin(j);
            ts__json_kv_str(j, "ph", "X");
            ts__json_kv_str(j, "name", name);
            ts__json_kv_str(j, "cat", "iteration");
            ts__json_kv_i64(j, "pid", export_pid(r, (uint16_t)ri));
            ts__json_kv_i64(j, "tid", tid);
            ts__json_kv_us(j, "ts", x->pred_start_ns - t0);
            ts__json_kv_us(j, "dur", x->pred_dur_ns);
            ts__json_key(j, "args");
            ts__json_obj_begin(j);
            ts__json_kv_us(j, "measured_ts", x->meas_start_ns - t0);
            ts__json_kv_us(j, "measured_dur", x->meas_dur_ns);
            ts__json_obj_end(j);
            ts__json_obj_end(j);
        }
    }
}

static bool flush(ts_buf *b, ts__file *out, size_t keep_below)
{
    if (b->len < keep_below) return true;
    bool ok = fwrite(b->s, 1, b->len, out->f) == b->len;
    if (!ok) out->e = errno;
    b->len = 0;
    return ok;
}

int ts_replay_export_chrome(const ts_replay *r, const char *path, ts_error *err)
{
    ts__file out;   /* a temporary renamed to path once whole */
    int rc = ts__file_open(&out, path, err);
    if (rc) return rc;
    const ts_sim *s = &r->sim;
    int64_t t0 = INT64_MAX;
    for (uint32_t n = 0; n < s->n_nodes; n++) if (s->start_ns[n] < t0) t0 = s->start_ns[n];
    for (size_t i = 0; i < (size_t)r->n_ranks * r->n_iter_slots; i++)   /* a step starts before its first op */
        if (r->iters[i].meas_dur_ns >= 0) {
            if (r->iters[i].pred_start_ns < t0) t0 = r->iters[i].pred_start_ns;
            if (r->iters[i].meas_start_ns < t0) t0 = r->iters[i].meas_start_ns;
        }
    if (t0 == INT64_MAX) t0 = 0;
    ts_buf b;
    ts__buf_init(&b);
    ts_json j;
    ts__json_init(&j, &b);
    ts__json_obj_begin(&j);
    ts__json_kv_str(&j, "displayTimeUnit", "ns");
    ts__json_key(&j, "traceEvents");
    ts__json_arr_begin(&j);
    lane_names(r, &j);
    iteration_events(r, &j, t0);
    bool ok = true;
    for (uint32_t n = 0; ok && n < s->n_nodes; n++) {
        if (r->removed && n < s->n_base_nodes && r->removed[n]) continue;   /* replaced by a what-if */
        node_event(r, &j, n, t0);
        ok = flush(&b, &out, 1u << 20);
    }
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    ts__buf_add(&b, "\n", 1);
    ok = ok && !b.oom && flush(&b, &out, 0);
    bool oom = b.oom;
    ts__buf_free(&b);
    rc = ts__file_close(&out, ok, err);
    return oom && rc ? ts__error(err, TS_ENOMEM, "%s: out of memory writing the export", path) : rc;
}
