/* budget.c - does one training step fit a memory limit, and what is the
 * cheapest way to make it fit (`memory --memory-limit GB`): offload in G10's
 * inactive periods, recomputation of saved activations, gradient
 * accumulation, and offload then recomputation.
 *
 * Not here: the curve itself (liveness.c). Works on a copy of the analysed
 * curve (alive[k] = bytes alive while kernel k runs); every technique is a
 * greedy that, while the highest kernel is over the limit, takes the choice
 * that frees the most there per unit of cost. Rules (docs/memory.md):
 *   offload:    a tensor leaves during an idle period whose estimated time
 *               covers the round trip at the link bandwidth (G10's test), so
 *               the transfer hides behind compute: no time cost; it frees
 *               its bytes over the period's kernels; the link is shared: the
 *               bytes sent each way in a step must take no longer than the
 *               step at that bandwidth (a tensor that would overrun it is
 *               not offloaded);
 *   recompute:  an activation saved for the backward is dropped after its
 *               last forward use and recomputed by its producing kernel
 *               before its first backward use: frees its bytes in between,
 *               costs that kernel's time once more (its inputs are assumed
 *               still alive: only single-kernel recomputation is priced);
 *   accumulate: m micro-batches: every non-global byte / m (activations
 *               scale with the batch), each kernel's time t becomes
 *               m x (f + (t - f) / m) with f = min(t, 2 us) its fixed cost.
 * Cost: O(kernels x choices) per technique.
 */
#include <stdio.h>
#include <string.h>
#include "memory/memgraph.h"

#define FIXED_NS 2000   /* per-kernel cost that does not shrink with the batch (a launch) */

static int32_t argmax(const int64_t *a, uint32_t n)
{
    int32_t k = 0;
    for (uint32_t i = 1; i < n; i++)
        if (a[i] > a[k]) k = (int32_t)i;
    return k;
}

/* Subtract bytes from a[] over kernels [s, e) (wrapping when s > e). */
static void free_over(int64_t *a, uint32_t nk, int32_t s, int32_t e, int64_t bytes)
{
    if (s <= e) { for (int32_t k = s; k < e; k++) a[k] -= bytes; return; }
    for (uint32_t k = (uint32_t)s; k < nk; k++) a[k] -= bytes;
    for (int32_t k = 0; k < e; k++) a[k] -= bytes;
}

static bool covers(int32_t s, int32_t e, int32_t k) { return s <= e ? k >= s && k < e : k >= s || k < e; }

/* Offload: periods long enough at gbps, largest tensor covering the peak first. */
static void offload(const ts_memgraph *g, int64_t *a, int64_t limit, double gbps, uint8_t *used_p,
                    ts_mem_fit_option *o)
{
    uint32_t nk = g->n_kernels;
    double link_bytes = g->summary.iteration_ns > 0 ? (double)g->summary.iteration_ns * gbps : 0; /* ns x B/ns */
    for (;;) {
        int32_t k = argmax(a, nk);
        if (a[k] <= limit) break;
        uint32_t best = UINT32_MAX, best_t = 0;
        for (uint32_t t = 0; t < g->n_tensors; t++) {
            const ts__mem_tensor *tt = &g->tensors[t];
            for (uint32_t i = 0; i < tt->n_periods; i++) {
                uint32_t pi = tt->first_period + i;
                const ts__mem_period *p = &g->periods[pi];
                if (used_p[pi] || !covers(p->start, p->end, k) || !ts__mem_offloadable(g, tt, p, gbps) ||
                    (double)(o->bytes_moved / 2 + tt->bytes) > link_bytes)
                    continue;
                if (best == UINT32_MAX || tt->bytes > g->tensors[best_t].bytes) { best = pi; best_t = t; }
            }
        }
        if (best == UINT32_MAX) break;
        used_p[best] = 1;
        free_over(a, nk, g->periods[best].start, g->periods[best].end, g->tensors[best_t].bytes);
        o->n_choices++;
        o->bytes_moved += 2 * g->tensors[best_t].bytes;
    }
}

/* Recompute: (first backward use, last forward use) of each saved tensor. */
static void recompute(const ts_memgraph *g, int64_t *a, int64_t limit, const int32_t *last_fwd,
                      const int32_t *first_bwd, uint8_t *used_t, ts_mem_fit_option *o)
{
    uint32_t nk = g->n_kernels;
    for (;;) {
        int32_t k = argmax(a, nk);
        if (a[k] <= limit) break;
        uint32_t best = UINT32_MAX;
        double best_ratio = 0;
        for (uint32_t t = 0; t < g->n_tensors; t++) {
            const ts__mem_tensor *tt = &g->tensors[t];
            if (used_t[t] || last_fwd[t] < 0 || first_bwd[t] < 0 || !covers(last_fwd[t] + 1, first_bwd[t], k)) continue;
            double cost = (double)(g->kernels[tt->birth].time_ns > 0 ? g->kernels[tt->birth].time_ns : 1);
            if ((double)tt->bytes / cost > best_ratio) { best_ratio = (double)tt->bytes / cost; best = t; }
        }
        if (best == UINT32_MAX) break;
        used_t[best] = 1;
        free_over(a, nk, last_fwd[best] + 1, first_bwd[best], g->tensors[best].bytes);
        o->n_choices++;
        o->cost_ns += g->kernels[g->tensors[best].birth].time_ns > 0 ? g->kernels[g->tensors[best].birth].time_ns : 0;
    }
}

/* Saved activations: produced in the forward, read again in the backward. */
static void saved_uses(const ts_memgraph *g, int32_t *last_fwd, int32_t *first_bwd)
{
    for (uint32_t t = 0; t < g->n_tensors; t++) last_fwd[t] = first_bwd[t] = -1;
    for (uint32_t k = 0; k < g->n_kernels; k++) {
        const ts__mem_kernel *kn = &g->kernels[k];
        for (uint32_t i = 0; i < (uint32_t)kn->n_in + kn->n_out; i++) {
            uint32_t t = g->refs[kn->first_ref + i].tensor;
            if (!g->opt.g10_compat) t = g->tensors[t].base;
            if (!kn->in_backward) last_fwd[t] = (int32_t)k;
            else if (first_bwd[t] < 0) first_bwd[t] = (int32_t)k;
        }
    }
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        const ts__mem_tensor *tt = &g->tensors[t];
        bool ok = !tt->is_global && tt->bytes > 0 && tt->birth >= 0 && !g->kernels[tt->birth].in_backward &&
                  first_bwd[t] > last_fwd[t] + 1;
        if (!ok) last_fwd[t] = first_bwd[t] = -1;
    }
}

static int64_t peak_of(const int64_t *a, uint32_t n) { return a[argmax(a, n)]; }

/* Gradient accumulation: the fewest micro-batches (up to 1024) that fit. */
static void accumulate(const ts_memgraph *g, int64_t limit, ts_mem_fit_option *o)
{
    int64_t act = g->summary.peak_bytes - g->global_bytes;
    for (uint32_t m = 2; m <= 1024; m *= 2) {
        int64_t peak = g->global_bytes + (act + m - 1) / m;
        if (peak > limit) continue;
        int64_t t = 0;
        for (uint32_t k = 0; k < g->n_kernels; k++) {
            int64_t tk = g->kernels[k].time_ns > 0 ? g->kernels[k].time_ns : 0, f = tk < FIXED_NS ? tk : FIXED_NS;
            t += m * f + (tk - f);
        }
        o->fits = true;
        o->peak_bytes = peak;
        o->n_choices = m;
        o->cost_ns = t - (g->summary.iteration_ns > 0 ? g->summary.iteration_ns : 0);
        return;
    }
    o->peak_bytes = g->global_bytes + (act + 1023) / 1024;
}

int ts_memgraph_fit(const ts_memgraph *g, int64_t limit, double gbps, ts_mem_fit *out, ts_error *err)
{
    ts__error_clear(err);
    memset(out, 0, sizeof *out);
    if (!g->analyzed) return ts__error(err, TS_EINVAL, "ts_memgraph_fit: analyze the graph first");
    if (limit < g->global_bytes)
        return ts__error(err, TS_ERANGE, "%s: a %.3f GiB limit is below the %.3f GiB the weights, buffers and "
                         "inputs take alone", g->files[0], (double)limit / 1073741824.0,
                         (double)g->global_bytes / 1073741824.0);
    uint32_t nk = g->n_kernels, nt = g->n_tensors;
    out->limit_bytes = limit;
    out->peak_bytes = g->summary.peak_bytes;
    out->fits = out->peak_bytes <= limit;
    int64_t *a = ts__malloc(((size_t)nk + 1) * sizeof *a);
    int32_t *lf = ts__malloc(((size_t)nt + 1) * sizeof *lf), *fb = ts__malloc(((size_t)nt + 1) * sizeof *fb);
    uint8_t *up = ts__calloc((size_t)g->n_periods + 1, 1), *ut = ts__calloc((size_t)nt + 1, 1);
    int rc = a && lf && fb && up && ut ? TS_OK : ts__error(err, TS_ENOMEM, "out of memory");
    if (!rc) {
        saved_uses(g, lf, fb);
        ts_mem_fit_option *o = &out->option[TS_MEM_FIT_OFFLOAD];
        memcpy(a, g->alive, nk * sizeof *a);
        offload(g, a, limit, gbps, up, o);
        o->peak_bytes = peak_of(a, nk);
        o->fits = o->peak_bytes <= limit;
        ts_mem_fit_option *both = &out->option[TS_MEM_FIT_OFFLOAD_RECOMPUTE];
        *both = *o;   /* then recompute on what offload left */
        both->n_choices = 0;
        recompute(g, a, limit, lf, fb, ut, both);
        both->n_choices += o->n_choices;
        both->peak_bytes = peak_of(a, nk);
        both->fits = both->peak_bytes <= limit;
        o = &out->option[TS_MEM_FIT_RECOMPUTE];
        memcpy(a, g->alive, nk * sizeof *a);
        memset(ut, 0, nt);
        recompute(g, a, limit, lf, fb, ut, o);
        o->peak_bytes = peak_of(a, nk);
        o->fits = o->peak_bytes <= limit;
        accumulate(g, limit, &out->option[TS_MEM_FIT_ACCUMULATE]);
        out->cheapest = -1;
        for (int i = 0; i < TS_MEM_FIT_COUNT; i++)
            if (out->option[i].fits && (out->cheapest < 0 || out->option[i].cost_ns < out->option[out->cheapest].cost_ns))
                out->cheapest = i;
    }
    ts__free(a, ((size_t)nk + 1) * sizeof *a);
    ts__free(lf, ((size_t)nt + 1) * sizeof *lf);
    ts__free(fb, ((size_t)nt + 1) * sizeof *fb);
    ts__free(up, (size_t)g->n_periods + 1);
    ts__free(ut, (size_t)nt + 1);
    return rc;
}

const char *ts_mem_fit_name(int option)
{
    static const char *const N[TS_MEM_FIT_COUNT] = {"offload", "recompute", "accumulate", "offload+recompute"};
    return option >= 0 && option < TS_MEM_FIT_COUNT ? N[option] : "none";
}
