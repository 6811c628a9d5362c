/* chrome_export.c - Chrome-trace JSON of a trace with its critical path marked.
 *
 * One process per rank ("rank R"), one thread per CPU thread or GPU stream;
 * every slice of the model is written with its aligned time in microseconds
 * (3 decimals, so nanoseconds survive). Critical slices get args.critical = 1
 * (path nodes and the non-node slices nested in them),
 * and consecutive path nodes are joined by s/f flow events (bp "e") so
 * Perfetto draws the path as arrows. Output is built in memory, then written.
 */
#include "report/chrome_export.h"

#include <errno.h>
#include <stdio.h>

static void us(ts_buf *b, int64_t ns)
{
    int64_t a = ns < 0 ? -ns : ns;
    ts__buf_printf(b, "%s%lld.%03lld", ns < 0 ? "-" : "", (long long)(a / 1000), (long long)(a % 1000));
}

static void metadata(ts_buf *b, const ts_graph *g, uint32_t r)
{
    const ts_rank *m = g->trace->ranks[g->rank_model[r]];
    int pid = g->rank_number[r] >= 0 ? g->rank_number[r] : (int)r;
    ts__buf_printf(b, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"rank %d\"}},\n",
                   pid, pid);
    for (uint32_t t = 0; t < m->n_tracks; t++) {
        const ts_track *tr = &m->tracks[t];
        if (tr->kind != TS_TRACK_THREAD && tr->kind != TS_TRACK_GPU_STREAM) continue;
        /* The trace's own thread name when it has one (Kineto: "thread
         * 2919752 (pt_autograd_0)"), as the profiler's viewer showed it. */
        char name[160];
        const char *own = tr->name_id ? ts__rank_str(m, tr->name_id) : "";
        if (tr->kind == TS_TRACK_GPU_STREAM) snprintf(name, sizeof name, "GPU %d stream %lld", tr->device, (long long)tr->stream);
        else if (*own) snprintf(name, sizeof name, "%.150s", own);
        else snprintf(name, sizeof name, "thread %lld", (long long)tr->tid);
        ts__buf_printf(b, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%u,\"args\":{\"name\":", pid, t);
        ts__buf_json_str(b, name, strlen(name));
        ts__buf_puts(b, "}},\n");
    }
}

static void slices(ts_buf *b, const ts_graph *g, uint32_t r, const uint8_t *crit)
{
    const ts_rank *m = g->trace->ranks[g->rank_model[r]];
    int pid = g->rank_number[r] >= 0 ? g->rank_number[r] : (int)r;
    int64_t off = g->align[r].offset_ns;
    for (uint32_t t = 0; t < m->n_tracks; t++) {
        const ts_track *tr = &m->tracks[t];
        if (tr->kind != TS_TRACK_THREAD && tr->kind != TS_TRACK_GPU_STREAM) continue;
        for (uint32_t s = tr->first_slice; s < tr->first_slice + tr->n_slices; s++) {
            const char *name = ts__rank_str(m, m->slices.name[s]);
            const char *cat = m->slices.cat[s] ? ts__rank_str(m, m->slices.cat[s]) : ts__kind_name((ts_kind)m->slices.kind[s]);
            ts__buf_puts(b, "{\"ph\":\"X\",\"name\":");
            ts__buf_json_str(b, name, strlen(name));
            ts__buf_puts(b, ",\"cat\":");
            ts__buf_json_str(b, cat, strlen(cat));
            ts__buf_printf(b, ",\"pid\":%d,\"tid\":%u,\"ts\":", pid, t);
            us(b, m->slices.ts_ns[s] + off);
            ts__buf_puts(b, ",\"dur\":");
            us(b, m->slices.dur_ns[s]);
            if (crit[s]) ts__buf_puts(b, ",\"args\":{\"critical\":1}");
            ts__buf_puts(b, "},\n");
        }
    }
}

typedef struct path_pt { uint32_t node; bool end; int64_t t_ns; } path_pt;

static void arrow_end(ts_buf *b, const ts_graph *g, const path_pt *p, char ph, uint32_t id)
{
    uint16_t r = g->nodes.rank[p->node];
    int pid = g->rank_number[r] >= 0 ? g->rank_number[r] : (int)r;
    /* an end point is drawn 1 ns inside its slice so the viewer binds it there */
    int64_t t = p->end && p->t_ns > ts__graph_start(g, p->node) ? p->t_ns - 1 : p->t_ns;
    ts__buf_printf(b, "{\"ph\":\"%c\",\"cat\":\"critical_path\",\"name\":\"critical_path\",\"id\":%u,"
                   "\"pid\":%d,\"tid\":%u,\"ts\":", ph, id, pid, g->lanes[g->nodes.lane[p->node]].track);
    us(b, t);
    ts__buf_puts(b, ph == 'f' ? ",\"bp\":\"e\"},\n" : "},\n");
}

/* Flow arrows along the path: between consecutive path points (in time
 * order) of different nodes; barrier points are skipped, so a collective
 * shows as one arrow from the straggler's arrival to the member's end. */
static void flows(ts_buf *b, const ts_critical_path *cp)
{
    const ts_graph *g = cp->g;
    path_pt prev = {.node = TS_NONE32};
    uint32_t id = 0;
    for (uint32_t i = 0; i < cp->n_segs; i++) {
        const ts_cp_segment *sg = &cp->segs[i];
        path_pt pts[2] = {
            {sg->edge == TS_NONE32 ? sg->node : g->edges.src[sg->edge],
             sg->edge != TS_NONE32 && (g->edges.flags[sg->edge] & TS_EDGE_FROM_END), sg->start_ns},
            {sg->node, sg->edge == TS_NONE32 || (g->edges.flags[sg->edge] & TS_EDGE_TO_END), sg->start_ns + sg->dur_ns},
        };
        for (int k = 0; k < 2; k++) {
            if (g->nodes.rank[pts[k].node] == TS_GRAPH_NO_RANK) continue;
            if (prev.node != TS_NONE32 && prev.node != pts[k].node) {
                arrow_end(b, g, &prev, 's', id);
                arrow_end(b, g, &pts[k], 'f', id);
                id++;
            }
            prev = pts[k];
        }
    }
}

/* crit[s] = 1 for the slices of critical nodes and for the slices nested in
 * them that are not nodes of their own (a critical top-level op's inner ops
 * run inside its critical time); 2 marks "a node, not critical". One pass:
 * a parent's row precedes its children's. */
static void mark_critical(const ts_critical_path *cp, uint32_t r, const ts_rank *m, uint8_t *crit)
{
    const ts_graph *g = cp->g;
    for (uint32_t n = g->rank_first_node[r]; n < g->rank_first_node[r + 1]; n++)
        if (g->nodes.slice[n] != TS_NONE32) crit[g->nodes.slice[n]] = 2;
    for (uint32_t i = 0; i < cp->n_nodes; i++) {
        uint32_t n = cp->nodes[i];
        if (g->nodes.rank[n] == r && g->nodes.slice[n] != TS_NONE32) crit[g->nodes.slice[n]] = 1;
    }
    for (uint32_t s = 0; s < m->slices.n; s++) {
        uint32_t p = m->slices.parent[s];
        if (crit[s] == 0 && p != TS_NONE32 && crit[p] == 1) crit[s] = 1;
    }
    for (uint32_t s = 0; s < m->slices.n; s++) crit[s] = crit[s] == 1;
}

int ts__chrome_export_critical_path(const ts_critical_path *cp, const char *path, ts_error *err)
{
    const ts_graph *g = cp->g;
    ts_buf b;
    ts__buf_init(&b);
    ts__buf_puts(&b, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    int rc = TS_OK;
    for (uint32_t r = 0; r < g->n_ranks && rc == TS_OK; r++) {
        const ts_rank *m = g->trace->ranks[g->rank_model[r]];
        uint8_t *crit = ts__calloc((size_t)m->slices.n + 1, 1);
        if (!crit) { rc = TS_ENOMEM; break; }
        mark_critical(cp, r, m, crit);
        metadata(&b, g, r);
        slices(&b, g, r, crit);
        ts__free(crit, (size_t)m->slices.n + 1);
    }
    flows(&b, cp);
    ts__buf_puts(&b, "{\"ph\":\"M\",\"name\":\"trainscope\",\"pid\":0,\"tid\":0,\"args\":{\"critical_path_us\":");
    us(&b, cp->end_ns - cp->start_ns);
    ts__buf_puts(&b, "}}\n]}\n");
    if (rc == TS_OK && b.oom) rc = TS_ENOMEM;
    if (rc != TS_OK) {
        ts__buf_free(&b);
        return ts__error(err, rc, "%s: out of memory writing the export", path);
    }
    rc = ts__write_file(path, &b, err);   /* whole or not at all */
    ts__buf_free(&b);
    return rc;
}
