/* views_transfers.c - the memory-transfers view (Trace Compass's
 * memory_transfers analysis): per rank and direction (H2D, D2H, D2D, P2P),
 * the copies' count, bytes, time and throughput, and the same over time.
 *
 * Not for: memsets (they move nothing between memories) or collectives.
 * Direction comes from the copy's name as Kineto, the CUPTI collector and
 * the nsys reader write it ("Memcpy HtoD (Pinned -> Device)"), bytes from its
 * "bytes" arg. A copy's bytes are spread evenly over its duration when they
 * are cut into time bins. Cost: O(copies log copies) per rank (the sort that
 * finds the time some copy was running).
 */
#include <stdlib.h>

#include "analyze/views_int.h"

typedef struct xfer_impl {
    ts_view_transfers pub;
    uint32_t cap_rows;
    uint64_t cap_bins;
} xfer_impl;

const char *ts_xfer_dir_name(int dir)
{
    static const char *const names[] = {"H2D", "D2H", "D2D", "P2P", "other"};
    return dir >= 0 && dir < TS_XFER_N_DIRS ? names[dir] : "?";
}

/* "Memcpy HtoD (...)", "Memcpy DtoD", "Memcpy PtoP (...)", "[CUDA memcpy Host-to-Device]" */
static int dir_of(const char *name)
{
    static const struct { const char *tok; int dir; } toks[] = {
        {"HtoD", TS_XFER_H2D}, {"DtoH", TS_XFER_D2H}, {"DtoD", TS_XFER_D2D}, {"PtoP", TS_XFER_P2P},
        {"Host-to-Device", TS_XFER_H2D}, {"Device-to-Host", TS_XFER_D2H}, {"Device-to-Device", TS_XFER_D2D},
        {"Peer-to-Peer", TS_XFER_P2P}, {"H2D", TS_XFER_H2D}, {"D2H", TS_XFER_D2H}, {"D2D", TS_XFER_D2D},
        {"P2P", TS_XFER_P2P},
    };
    for (size_t i = 0; i < sizeof toks / sizeof toks[0]; i++)
        if (strstr(name, toks[i].tok)) return toks[i].dir;
    return TS_XFER_OTHER;
}

typedef struct copy { int64_t start, end, bytes; } copy;

static int by_start(const void *a, const void *b)
{
    const copy *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Add [a, b) of time and `bytes` spread over it to the row's bins. */
static void spread(ts_xfer_bin *bins, uint32_t nb, const ts_xfer_row *row, int64_t a, int64_t b, double bytes,
                   bool busy)
{
    if (b <= a) {   /* an instant copy: all in its bin */
        if (!busy) bins[ts__views_bin_of(row->bin_start_ns, row->bin_ns, nb, a)].bytes += bytes;
        return;
    }
    for (uint32_t k = ts__views_bin_of(row->bin_start_ns, row->bin_ns, nb, a); k < nb; k++) {
        int64_t lo = row->bin_start_ns + (int64_t)k * row->bin_ns, hi = k + 1 == nb ? INT64_MAX : lo + row->bin_ns;
        int64_t x = a > lo ? a : lo, y = b < hi ? b : hi;
        if (y > x) {
            if (busy) bins[k].busy_ns += y - x;
            else bins[k].bytes += bytes * (double)(y - x) / (double)(b - a);
        }
        if (b <= hi) break;
    }
}

/* One row from its copies (sorted here): totals, busy time, bins. */
static void fill_row(ts_xfer_row *row, ts_xfer_bin *bins, uint32_t nb, copy *c, uint64_t n)
{
    qsort(c, n, sizeof *c, by_start);
    int64_t lo = c[0].start, hi = c[0].end;
    for (uint64_t i = 0; i < n; i++) if (c[i].end > hi) hi = c[i].end;
    ts__views_bins(lo, hi, nb, &row->bin_start_ns, &row->bin_ns);
    int64_t run_a = c[0].start, run_b = c[0].end;
    for (uint64_t i = 0; i < n; i++) {
        bins[ts__views_bin_of(row->bin_start_ns, row->bin_ns, nb, c[i].start)].n++;
        spread(bins, nb, row, c[i].start, c[i].end, (double)c[i].bytes, false);
        if (c[i].start > run_b) {   /* the union of intervals, for busy time */
            row->busy_ns += run_b - run_a;
            spread(bins, nb, row, run_a, run_b, 0, true);
            run_a = c[i].start;
        }
        if (c[i].end > run_b) run_b = c[i].end;
    }
    row->busy_ns += run_b - run_a;
    spread(bins, nb, row, run_a, run_b, 0, true);
}

static int add_rank(xfer_impl *v, const ts_rank *r, uint32_t nb, copy **scratch, uint64_t *cap)
{
    for (int dir = 0; dir < TS_XFER_N_DIRS; dir++) {
        ts_xfer_row row = {.rank = r->rank, .dir = dir};
        uint64_t n = 0;
        for (uint32_t s = 0; s < r->slices.n; s++) {
            if (r->slices.kind[s] != TS_KIND_GPU_MEMCPY || dir_of(ts__rank_str(r, r->slices.name[s])) != dir) continue;
            int64_t bytes = 0, dur = r->slices.dur_ns[s];
            if (!ts__slice_arg_i64(r, s, "bytes", &bytes) || bytes < 0) { bytes = 0; row.n_no_bytes++; }
            if (ts__views_grow((void **)scratch, cap, sizeof **scratch, n + 1)) return TS_ENOMEM;
            (*scratch)[n++] = (copy){r->slices.ts_ns[s], r->slices.ts_ns[s] + dur, bytes};
            row.n++;
            row.bytes += bytes;
            row.dur_ns += dur;
            if (bytes > 0 && dur > 0) {
                double g = (double)bytes / (double)dur;
                if (row.min_gbps == 0 || g < row.min_gbps) row.min_gbps = g;
                if (g > row.max_gbps) row.max_gbps = g;
            }
        }
        if (!n) continue;
        uint64_t nbins = (uint64_t)(v->pub.n_rows + 1) * nb;
        if ((v->pub.n_rows == v->cap_rows &&
             ts__grow((void **)&v->pub.rows, &v->cap_rows, sizeof row, (size_t)v->pub.n_rows + 1)) ||
            ts__views_grow((void **)&v->pub.bins, &v->cap_bins, sizeof *v->pub.bins, nbins))
            return TS_ENOMEM;
        row.first_bin = v->pub.n_rows * nb;
        ts_xfer_bin *bins = v->pub.bins + row.first_bin;
        memset(bins, 0, nb * sizeof *bins);
        fill_row(&row, bins, nb, *scratch, n);
        v->pub.rows[v->pub.n_rows++] = row;
    }
    return TS_OK;
}

int ts_view_transfers_create(const ts_job *t, const ts_views_opts *opt, ts_view_transfers **out, ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    ts__views_cfg cfg;
    ts__views_cfg_from(opt, &cfg);
    xfer_impl *v = ts__calloc(1, sizeof *v);
    if (!v) return ts__error(err, TS_ENOMEM, "out of memory");
    v->pub.n_bins = cfg.n_bins;
    copy *scratch = NULL;
    uint64_t cap = 0;
    int rc = TS_OK;
    for (uint32_t ri = 0; ri < t->n_ranks && !rc; ri++)
        if (ts__views_rank_ok(&cfg, t->ranks[ri])) rc = add_rank(v, t->ranks[ri], cfg.n_bins, &scratch, &cap);
    ts__free(scratch, cap * sizeof *scratch);
    if (rc) ts__error(err, rc, "out of memory");
    else if (!v->pub.n_rows) rc = ts__error(err, TS_ENODATA, "no memory copies (gpu_memcpy) in the trace%s",
                                            cfg.rank >= 0 ? " for that rank" : "");
    if (rc) { ts_view_transfers_destroy(&v->pub); return rc; }
    *out = &v->pub;
    return TS_OK;
}

void ts_view_transfers_destroy(ts_view_transfers *pub)
{
    if (!pub) return;
    xfer_impl *v = (xfer_impl *)pub;
    ts__free(v->pub.rows, (size_t)v->cap_rows * sizeof *v->pub.rows);
    ts__free(v->pub.bins, v->cap_bins * sizeof *v->pub.bins);
    ts__free(v, sizeof *v);
}
