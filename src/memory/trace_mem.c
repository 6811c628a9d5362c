/* trace_mem.c - measured memory from Kineto "[memory]" instant events
 * (torch.profiler with profile_memory=True): per rank and device, the peak of
 * "Total Allocated" and the CPU ops around that allocation.
 *
 * Reads the finished trace model only. Cost: one pass over each rank's
 * instants, then one scan of one thread's slices per reported peak.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "memory/memgraph.h"
#include "trace/model.h"

/* Slices of `track` that contain time ns, innermost first. */
static void ops_around(const ts_rank *r, uint32_t track, int64_t ns, ts_mem_trace_peak *p)
{
    const ts_track *tr = &r->tracks[track];
    uint32_t best = TS_NONE32;
    for (uint32_t s = tr->first_slice; s < tr->first_slice + tr->n_slices; s++) {
        if (r->slices.ts_ns[s] > ns) break; /* slices of a track are sorted by start */
        if (r->slices.ts_ns[s] + r->slices.dur_ns[s] >= ns &&
            (best == TS_NONE32 || r->slices.depth[s] > r->slices.depth[best]))
            best = s;
    }
    p->n_ops = 0;
    for (uint32_t s = best; s != TS_NONE32 && p->n_ops < 4; s = r->slices.parent[s])
        snprintf(p->ops[p->n_ops++], sizeof p->ops[0], "%s", ts__rank_str(r, r->slices.name[s]));
}

/* Row for (rank, type, id) among out[0..*n), appended when new. */
/* The row of (type, id) among this rank's, made when new; *n counts rows
 * past cap too (seen holds every device's row index, so none is counted
 * twice). NULL for a row past cap, or on out of memory (*oom set). The key
 * flips bit 63 so that only (INT32_MAX, -1), no real device, hits the map's
 * reserved key. */
static ts_mem_trace_peak *row_for(ts_mem_trace_peak *out, uint32_t cap, uint32_t *n, ts_map64 *seen,
                                  uint32_t rank, int32_t type, int32_t id, bool *oom)
{
    uint64_t key = ((uint64_t)(uint32_t)type << 32 | (uint32_t)id) ^ (1ull << 63), i;
    if (!ts__map64_get(seen, key, &i)) {
        i = (*n)++;
        if (ts__map64_put(seen, key, i)) { *oom = true; return NULL; }
        if (i < cap) out[i] = (ts_mem_trace_peak){.rank = rank, .device_type = type, .device_id = id, .peak_bytes = -1};
    }
    return i < cap ? &out[i] : NULL;
}

int ts_mem_trace_peaks(const ts_job *t, ts_mem_trace_peak *out, uint32_t cap, uint32_t *n, ts_error *err)
{
    ts__error_clear(err);
    *n = 0;
    for (uint32_t ri = 0; ri < t->n_ranks; ri++) {
        const ts_rank *r = t->ranks[ri];
        uint32_t mem_cat = ts__str_find(&r->strings, "[memory]", 8), first = *n;
        if (!mem_cat) continue;
        uint32_t tracks[64];
        ts_map64 seen;
        ts__map64_init(&seen);
        bool oom = false;
        for (uint32_t i = 0; i < r->instants.n && !oom; i++) {
            int64_t total, type = 0, id = -1;
            /* Kineto names them "[memory]" (cat cpu_instant_event); the memory timeline's rows carry it as cat */
            if ((r->instants.cat[i] != mem_cat && r->instants.name[i] != mem_cat) ||
                !ts__instant_arg_i64(r, i, "Total Allocated", &total))
                continue;
            ts__instant_arg_i64(r, i, "Device Type", &type);
            ts__instant_arg_i64(r, i, "Device Id", &id);
            ts_mem_trace_peak *p = row_for(out, cap, n, &seen, (uint32_t)r->rank, (int32_t)type, (int32_t)id, &oom);
            if (!p) continue;
            int64_t ns = r->instants.ts_ns[i];
            if (!p->n_events++) p->first_ns = ns;
            if (ns < p->first_ns) p->first_ns = ns;
            if (ns > p->last_ns) p->last_ns = ns;
            if (total > p->peak_bytes) {
                p->peak_bytes = total;
                p->peak_ns = ns;
                if (p - out - first < 64) tracks[p - out - first] = r->instants.track[i];
            }
        }
        ts__map64_free(&seen);
        if (oom) return ts__error(err, TS_ENOMEM, "out of memory");
        for (uint32_t i = first; i < *n && i < cap && i - first < 64; i++)
            ops_around(r, tracks[i - first], out[i].peak_ns, &out[i]);
    }
    if (*n == 0) return ts__error(err, TS_ENODATA, "no [memory] events with \"Total Allocated\" (profile_memory=True)");
    return TS_OK;
}

static int by_time_then_index(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Time order (instants of several threads interleave); insertion order among
 * equal times, which the pairs' index keeps. O(n log n). */
static void sort_curve(ts_mem_curve *c)
{
    bool sorted = true;
    for (size_t i = 1; i < c->n && sorted; i++) sorted = c->t_ns[i - 1] <= c->t_ns[i];
    int64_t *v = sorted ? NULL : ts__malloc(3 * c->n * sizeof *v);
    if (!v) return;   /* sorted already, or no memory to sort: drawn as recorded */
    for (size_t i = 0; i < c->n; i++) { v[3 * i] = c->t_ns[i]; v[3 * i + 1] = (int64_t)i; v[3 * i + 2] = c->bytes[i]; }
    qsort(v, c->n, 3 * sizeof *v, by_time_then_index);
    for (size_t i = 0; i < c->n; i++) { c->t_ns[i] = v[3 * i]; c->bytes[i] = v[3 * i + 2]; }
    ts__free(v, 3 * c->n * sizeof *v);
}

int ts_mem_trace_curve(const ts_job *t, const ts_mem_trace_peak *row, ts_mem_curve *out, ts_error *err)
{
    ts__error_clear(err);
    memset(out, 0, sizeof *out);
    for (uint32_t ri = 0; ri < t->n_ranks; ri++) {
        const ts_rank *r = t->ranks[ri];
        uint32_t mem_cat = ts__str_find(&r->strings, "[memory]", 8);
        if ((uint32_t)r->rank != row->rank || !mem_cat) continue;
        for (uint32_t i = 0; i < r->instants.n; i++) {
            int64_t total, type = 0, id = -1;
            /* the same events ts_mem_trace_peaks counts: "[memory]" as cat or as name */
            if ((r->instants.cat[i] != mem_cat && r->instants.name[i] != mem_cat) ||
                !ts__instant_arg_i64(r, i, "Total Allocated", &total))
                continue;
            ts__instant_arg_i64(r, i, "Device Type", &type);
            ts__instant_arg_i64(r, i, "Device Id", &id);
            if (type != row->device_type || id != row->device_id) continue;
            if (ts__mem_curve_push(out, r->instants.ts_ns[i], total)) {
                ts_mem_curve_free(out);
                return ts__error(err, TS_ENOMEM, "out of memory");
            }
        }
    }
    if (out->n == 0)
        return ts__error(err, TS_ENODATA, "rank %u device %d:%d: no [memory] events", row->rank, row->device_type,
                         row->device_id);
    sort_curve(out);
    return TS_OK;
}

/* Order of CPU slices by start time (a parent before its children). */
static int by_start(const void *a, const void *b, void *ctx)
{
    const ts_rank *r = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (r->slices.ts_ns[x] != r->slices.ts_ns[y]) return r->slices.ts_ns[x] < r->slices.ts_ns[y] ? -1 : 1;
    return (r->slices.depth[x] > r->slices.depth[y]) - (r->slices.depth[x] < r->slices.depth[y]);
}

/* Kernel times from a profiled run of the same step: graph kernel k takes the
 * duration of the next "aten::<op>" CPU slice (in start order, every thread)
 * after the previous match; slices nested in a match are skipped, and so are
 * ops outside the graph (the loss, autograd's bookkeeping). */
int ts_memgraph_times_from_trace(ts_memgraph *g, const ts_job *t, ts_error *err)
{
    ts__error_clear(err);
    if (!t->n_ranks) return ts__error(err, TS_ENODATA, "the trace has no rank");
    const ts_rank *r = t->ranks[0];
    uint32_t n = 0, *order = ts__malloc(((size_t)r->slices.n + 1) * sizeof *order);
    if (!order) return ts__error(err, TS_ENOMEM, "out of memory");
    for (uint32_t s = 0; s < r->slices.n; s++)
        if (r->tracks[r->slices.track[s]].kind == TS_TRACK_THREAD &&
            !strncmp(ts__rank_str(r, r->slices.name[s]), "aten::", 6))
            order[n++] = s;
    qsort_r(order, n, sizeof *order, by_start, (void *)r);
    int rc = TS_OK;
    uint32_t j = 0;
    for (uint32_t k = 0; k < g->n_kernels && !rc; k++) {
        const char *op = ts__mem_name(g, g->kernels[k].op_id);
        while (j < n && strcmp(ts__rank_str(r, r->slices.name[order[j]]) + 6, op)) j++;
        if (j == n) {
            rc = ts__error(err, TS_EFORMAT, "kernel %u (aten::%s, %s line %u) has no match left in the trace: "
                           "not a run of the same graph", k, op, g->files[g->kernels[k].in_backward],
                           g->kernels[k].line);
            break;
        }
        int64_t start = r->slices.ts_ns[order[j]], end = start + r->slices.dur_ns[order[j]];
        g->kernels[k].time_ns = end - start;
        for (j++; j < n && r->slices.ts_ns[order[j]] < end; j++) {}
    }
    ts__free(order, ((size_t)r->slices.n + 1) * sizeof *order);
    if (rc) return rc;
    g->have_times = true;
    snprintf(g->time_source, sizeof g->time_source, "trace (CPU op durations)");
    return TS_OK;
}
