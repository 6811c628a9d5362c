/* liveness.c - birth, death and inactive periods of every tensor, the memory
 * curve (bytes alive per kernel), the peak and the offload candidates.
 *
 * G10's rules, verified byte for byte against its ResNet50 and ViT outputs:
 *   uses(t)  = kernels that read or write t, ascending, without repeats;
 *   birth    = first use; death = last kernel *reading* t + 1, or -1 if none;
 *   periods  = for consecutive uses u < v with v > u + 1: [u + 1, v]
 *              (idle from kernel u+1 until v needs it again); an
 *              intermediate only inside [birth, death); a global also wraps
 *              from its last use to its first use of the next iteration;
 *   time     = start_us[v] - start_us[u + 1], doubles in microseconds summed
 *              kernel by kernel (G10's own arithmetic; wrap: total - start[a]
 *              + start[b]).
 * Exact mode applies the same rules to storages (a view's uses count for its
 * base) and keeps the backward graph's outputs (gradients) alive to the end.
 * Curve: alive[k] also holds kernel k's scratch memory when a workspace
 * model is chosen (TS_MEM_WORKSPACE_CPU).
 * Cost: O(kernels + refs + tensors), two passes to build per-tensor use lists.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "memory/memgraph.h"

/* Row whose liveness a tensor follows. */
static uint32_t storage_of(const ts_memgraph *g, uint32_t t)
{
    return g->opt.g10_compat ? t : g->tensors[t].base;
}

static int add_period(ts_memgraph *g, int32_t a, int32_t b)
{
    if (ts__grow((void **)&g->periods, &g->cap_periods, sizeof *g->periods, g->n_periods + 1))
        return TS_ENOMEM;
    g->periods[g->n_periods++] = (ts__mem_period){a, b, -1};
    return TS_OK;
}

/* Periods of one storage row from its sorted use list. */
static int periods_of(ts_memgraph *g, ts__mem_tensor *t, const int32_t *u, uint32_t n)
{
    t->first_period = g->n_periods;
    if (!t->is_global && t->death == -1) return TS_OK;
    for (uint32_t i = 0; i + 1 < n; i++) {
        if (!t->is_global && u[i + 1] >= t->death) break;
        if (u[i + 1] > u[i] + 1 && add_period(g, u[i] + 1, u[i + 1])) return TS_ENOMEM;
    }
    if (t->is_global && n) {
        int32_t a = u[n - 1] + 1, b = u[0];
        bool adjacent = a == (int32_t)g->n_kernels && b == 0;
        if ((n == 1 || !adjacent) && add_period(g, a, b)) return TS_ENOMEM;
    }
    t->n_periods = g->n_periods - t->first_period;
    return TS_OK;
}

/* Exact mode: who holds a storage past its last use. Gradients go to the
 * optimizer; the forward's user outputs (not saved for backward) are held by
 * the caller; with hold_saved, autograd keeps saved tensors and tangents
 * until the whole backward graph returns (torch < 2.1). */
static bool lives_to_end(const ts_memgraph *g, const ts__mem_tensor *t)
{
    if (t->is_global) return false;
    return t->is_returned || (t->is_fwd_output && !t->is_bwd_input) ||
           (g->opt.hold_saved && t->is_bwd_input);
}

/* Build per-storage use lists (CSR) and derive birth, death and periods. */
int ts__mem_liveness(ts_memgraph *g)
{
    uint32_t nt = g->n_tensors, nk = g->n_kernels;
    uint32_t *off = ts__calloc((size_t)nt + 1, sizeof *off);
    int32_t *last = ts__malloc((size_t)nt * sizeof *last);
    int32_t *uses = ts__malloc(((size_t)g->n_refs + 1) * sizeof *uses);
    int rc = TS_ENOMEM;
    if (!off || !last || !uses) goto done;
    g->n_periods = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t t = 0; t < nt; t++) last[t] = -1;
        for (uint32_t k = 0; k < nk; k++) {
            const ts__mem_kernel *kn = &g->kernels[k];
            for (uint32_t i = 0; i < (uint32_t)kn->n_in + kn->n_out; i++) {
                uint32_t s = storage_of(g, g->refs[kn->first_ref + i].tensor);
                if (i < kn->n_in) g->tensors[s].death = (int32_t)k + 1;
                if (last[s] == (int32_t)k) continue;
                last[s] = (int32_t)k;
                if (pass == 0) off[s + 1]++;
                else uses[off[s]++] = (int32_t)k;
            }
        }
        if (pass == 0) {
            for (uint32_t t = 0; t < nt; t++) off[t + 1] += off[t];
            for (uint32_t t = 0; t < nt; t++) g->tensors[t].death = -1;
        } else { /* off[t] now points at the end of t's list: shift back */
            memmove(off + 1, off, (size_t)nt * sizeof *off);
            off[0] = 0;
        }
    }
    rc = TS_OK;
    for (uint32_t t = 0; t < nt && !rc; t++) {
        ts__mem_tensor *tt = &g->tensors[t];
        uint32_t n = off[t + 1] - off[t];
        if (storage_of(g, t) != t) continue;
        tt->birth = n ? uses[off[t]] : -1;
        if (!g->opt.g10_compat && n && lives_to_end(g, tt)) tt->death = (int32_t)nk;
        rc = periods_of(g, tt, uses + off[t], n);
    }
    /* views follow their base in exact mode */
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t s = storage_of(g, t);
        if (s == t) continue;
        g->tensors[t].birth = g->tensors[s].birth;
        g->tensors[t].death = g->tensors[s].death;
        g->tensors[t].first_period = g->tensors[t].n_periods = 0;
    }
done:
    ts__free(off, ((size_t)nt + 1) * sizeof *off);
    ts__free(last, (size_t)nt * sizeof *last);
    ts__free(uses, ((size_t)g->n_refs + 1) * sizeof *uses);
    return rc;
}

/* Kernel k's time in microseconds as start_us sums it. G10 mode follows
 * G10's loadKernelTimes: milliseconds to integer cycles at GPU_frequency_GHz
 * (a long, truncated, in double arithmetic), then cycles / (GHz * 1000);
 * exact mode sums the integer nanoseconds. */
static double kernel_us(const ts_memgraph *g, const ts__mem_kernel *kn)
{
    if (!g->opt.g10_compat) return (double)kn->time_ns / 1000.0;
    double ghz = g->opt.gpu_ghz > 0 ? g->opt.gpu_ghz : 1.0;
    double ms = kn->ms >= 0 ? kn->ms : (double)kn->time_ns / 1e6;
    long cycles = (long)(ms * (ghz * 1e9) / 1000.0);
    return (double)cycles / (double)(ghz * 1000);
}

/* Times as G10 sums them, then each period's estimate. */
static void period_times(ts_memgraph *g)
{
    uint32_t nk = g->n_kernels;
    g->start_us[0] = 0;
    for (uint32_t k = 0; k < nk; k++)
        g->start_us[k + 1] = g->start_us[k] + (g->have_times ? kernel_us(g, &g->kernels[k]) : 0);
    for (uint32_t i = 0; i < g->n_periods; i++) {
        ts__mem_period *p = &g->periods[i];
        if (!g->have_times) { p->est_ns = -1; continue; }
        double us = p->start <= p->end ? g->start_us[p->end] - g->start_us[p->start]
                                       : (g->start_us[nk] - g->start_us[p->start]) + g->start_us[p->end];
        p->est_ns = llround(us * 1000.0);
    }
}

/* Bytes of ref r with its channel dimension (dim 1) rounded up to a multiple
 * of 16, as oneDNN's blocked layouts store it; 0 for fewer than 8 channels,
 * which oneDNN keeps in plain layout (no reorder). */
static int64_t blocked_bytes(const ts_memgraph *g, const ts__mem_ref *r)
{
    const char *ann = ts__mem_name(g, r->ann_id), *p = strchr(ann, '[');
    const ts__mem_tensor *t = &g->tensors[r->tensor];
    long long n = 0, c = 0;
    if (!p || sscanf(p, "[%lld, %lld", &n, &c) != 2 || c < 8) return 0;
    return t->elems / c * ((c + 15) / 16 * 16) * t->elem_bytes;
}

/* Scratch bytes kernel k holds while it runs (TS_MEM_WORKSPACE_CPU), read
 * off torch 1.13's CPU allocation records (examples/memory/):
 *   convolution: reorders of input and weight, then one more copy of the
 *     output: max(blocked(input) + weight, output);
 *   convolution_backward: grad_out reordered, plus the input in blocked
 *     layout: grad_out + blocked(input);
 *   native_batch_norm_backward: one temporary the size of grad_out. */
static int64_t workspace_bytes(const ts_memgraph *g, uint32_t k)
{
    const ts__mem_kernel *kn = &g->kernels[k];
    if (g->opt.workspace != TS_MEM_WORKSPACE_CPU || g->opt.g10_compat) return 0;
    const char *op = ts__mem_name(g, kn->op_id);
    const ts__mem_ref *r = g->refs ? &g->refs[kn->first_ref] : NULL;   /* no refs in the graph: none read below */
    if (!strcmp(op, "convolution") && kn->n_in >= 2 && kn->n_out) {
        int64_t in = blocked_bytes(g, &r[0]) + g->tensors[r[1].tensor].bytes;
        int64_t out = g->tensors[r[kn->n_in].tensor].bytes;
        return in > out ? in : out;
    }
    if (!strcmp(op, "convolution_backward") && kn->n_in >= 2)
        return g->tensors[g->tensors[r[0].tensor].base].bytes + blocked_bytes(g, &r[1]);
    if (!strcmp(op, "native_batch_norm_backward") && kn->n_in)
        return g->tensors[g->tensors[r[0].tensor].base].bytes;
    return 0;
}

/* alive[k] = global bytes + storages alive while kernel k runs. A storage
 * never read lives only at its birth kernel (G10's is_alive). O(n) with a
 * difference array. */
int ts__mem_curve(ts_memgraph *g)
{
    uint32_t nk = g->n_kernels;
    memset(g->alive, 0, ((size_t)nk + 1) * sizeof *g->alive);
    g->global_bytes = 0;
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        const ts__mem_tensor *tt = &g->tensors[t];
        if (tt->base != t && !g->opt.g10_compat) continue;
        if (tt->is_global) { g->global_bytes += tt->bytes; continue; }
        if (tt->birth < 0) continue;
        int32_t end = tt->death >= 0 ? tt->death : tt->birth + 1;
        g->alive[tt->birth] += tt->bytes;
        g->alive[end] -= tt->bytes;
    }
    int64_t run = g->global_bytes;
    for (uint32_t k = 0; k < nk; k++) {
        run += g->alive[k];
        g->alive[k] = run + workspace_bytes(g, k);
    }
    return TS_OK;
}

int ts_memgraph_analyze(ts_memgraph *g, ts_mem_summary *out)
{
    if (ts__mem_liveness(g)) return TS_ENOMEM;
    period_times(g);
    /* Kernel times (a table, a roofline of a slow device) that add up past
     * 2^62 ns would wrap when summed into int64 nanoseconds. */
    if (g->have_times && !(g->start_us[g->n_kernels] * 1000.0 < 0x1p62)) return TS_ERANGE;
    ts__mem_curve(g);
    ts_mem_summary s = {.n_kernels = g->n_kernels, .n_tensors = g->n_tensors,
                        .global_bytes = g->global_bytes, .peak_kernel = -1,
                        .iteration_ns = -1, .peak_at_ns = -1};
    for (uint32_t k = 0; k < g->n_kernels; k++)
        if (s.peak_kernel < 0 || g->alive[k] > s.peak_bytes) {
            s.peak_bytes = g->alive[k];
            s.peak_kernel = (int32_t)k;
        }
    if (g->have_times) {
        s.iteration_ns = llround(g->start_us[g->n_kernels] * 1000.0);
        if (s.peak_kernel >= 0) s.peak_at_ns = llround(g->start_us[s.peak_kernel] * 1000.0);
    }
    g->summary = s;
    g->analyzed = true;
    if (out) *out = s;
    return TS_OK;
}

/* Is kernel k inside the idle stretch of period p (kernels start..end-1)? */
static bool period_covers(const ts__mem_period *p, int32_t k)
{
    return p->start <= p->end ? (k >= p->start && k < p->end) : (k >= p->start || k < p->end);
}

bool ts__mem_offloadable(const ts_memgraph *g, const ts__mem_tensor *t, const ts__mem_period *p,
                         double gbps)
{
    if (p->est_ns < 0 || t->bytes <= 0) return false;
    double round_trip_ns = 2.0 * (double)t->bytes / gbps; /* bytes / (GB/s) = ns */
    return (double)p->est_ns >= round_trip_ns;
}

int64_t ts_memgraph_offload(const ts_memgraph *g, double gbps, uint32_t *n_candidates)
{
    int32_t peak = -1;
    for (uint32_t k = 0; k < g->n_kernels; k++)
        if (peak < 0 || g->alive[k] > g->alive[peak]) peak = (int32_t)k;
    int64_t freed = 0;
    uint32_t n = 0;
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        const ts__mem_tensor *tt = &g->tensors[t];
        bool at_peak = false;
        for (uint32_t i = 0; i < tt->n_periods; i++) {
            const ts__mem_period *p = &g->periods[tt->first_period + i];
            if (!ts__mem_offloadable(g, tt, p, gbps)) continue;
            n++;
            at_peak |= period_covers(p, peak);
        }
        if (at_peak) freed += tt->bytes;
    }
    if (n_candidates) *n_candidates = n;
    return freed;
}

static int cmp_bytes_desc(const void *a, const void *b, void *ctx)
{
    const ts_memgraph *g = ctx;
    int64_t x = g->tensors[*(const uint32_t *)a].bytes, y = g->tensors[*(const uint32_t *)b].bytes;
    return x < y ? 1 : x > y ? -1 : (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

void ts__mem_sort_by_bytes(const ts_memgraph *g, uint32_t *rows, uint32_t n)
{
    qsort_r(rows, n, sizeof *rows, cmp_bytes_desc, (void *)g);
}

uint32_t ts__mem_alive_at(const ts_memgraph *g, int32_t k, uint32_t *rows, uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t t = 0; t < g->n_tensors && n < cap; t++) {
        const ts__mem_tensor *tt = &g->tensors[t];
        if ((tt->base != t && !g->opt.g10_compat) || tt->bytes <= 0) continue;
        int32_t end = tt->death >= 0 ? tt->death : tt->birth + 1;
        if (tt->is_global || (tt->birth >= 0 && tt->birth <= k && k < end)) rows[n++] = t;
    }
    ts__mem_sort_by_bytes(g, rows, n);
    return n;
}
