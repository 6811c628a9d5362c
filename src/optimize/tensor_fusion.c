/* tensor_fusion.c - the tensor-fusion pass: any grouping of the gradients
 * into all-reduce buckets, in the order they are all-reduced, as bucket
 * boundaries (passes.h), priced by the replay's bucket what-if
 * (replay/rebucket.c, which models how DDP over gloo or NCCL runs buckets),
 * and the DDP setting that reproduces a grouping.
 *
 * Not for: timing buckets (replay/) or writing files (plan.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "optimize/passes.h"

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

int ts__opt_grads_load(const char *path, ts_opt_grads *g, ts_error *err)
{
    memset(g, 0, sizeof *g);
    int rc = ts__gradients_load(path, &g->src, err);
    if (rc) return rc;
    uint32_t n = g->n = g->src.n;
    g->bytes = ts__malloc((size_t)n * sizeof *g->bytes);
    g->name = ts__malloc((size_t)n * sizeof *g->name);
    if (!g->bytes || !g->name) { ts__opt_grads_free(g); return ts__error(err, TS_ENOMEM, "optimize: out of memory"); }
    g->fingerprint = 1469598103934665603ull;
    for (uint32_t i = 0; i < n; i++) {
        const char *name = g->src.names[i] ? g->src.names[i] : "";
        g->fingerprint = fnv(fnv(g->fingerprint, name, strlen(name) + 1), &g->src.bytes[i], sizeof g->src.bytes[i]);
        g->bytes[i] = g->src.bytes[n - 1 - i];   /* DDP reduces in reverse registration order */
        g->name[i] = g->src.names[n - 1 - i] ? g->src.names[n - 1 - i] : "";
    }
    return TS_OK;
}

void ts__opt_grads_free(ts_opt_grads *g)
{
    ts__free(g->bytes, (size_t)g->n * sizeof *g->bytes);
    ts__free(g->name, (size_t)g->n * sizeof *g->name);
    ts__free(g->part_grad, (size_t)g->n * sizeof *g->part_grad + 1);   /* sized for every gradient */
    ts__free(g->part_max, (size_t)g->n + 1);
    ts__gradients_free(&g->src);
    memset(g, 0, sizeof *g);
}

void ts__tf_init(const ts_opt_grads *g, const uint32_t *old_grads, uint32_t n_old, uint8_t *vars)
{
    memset(vars, 0, ts__tf_n_vars(g));
    uint32_t end = 0;
    for (uint32_t j = 0; j + 1 < n_old; j++) {
        end += old_grads[j];
        if (end >= 1 && end - 1 < ts__tf_n_vars(g)) vars[end - 1] = 1;
    }
}

uint32_t ts__tf_groups(const ts_opt_grads *g, const uint8_t *vars, uint32_t *pieces, uint32_t *units)
{
    uint32_t n_groups = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        uint32_t k = pieces[i];
        bool opens = i == 0 || vars[i - 1];
        if (opens) units[n_groups++] = 0;
        units[n_groups - 1]++;                          /* the first piece */
        for (uint32_t p = 1; p < k; p++) units[n_groups++] = 1;   /* each other piece alone */
    }
    return n_groups;
}

double ts__tf_ddp_cap_mb(const ts_opt_grads *g, const uint8_t *vars)
{
    /* DDP closes a bucket once it holds >= cap: a later bucket j (not the
     * last) needs sum(j without its last gradient) < cap <= sum(j); the
     * first bucket is DDP's at 1 MiB whatever the cap. */
    int64_t lo = 0, hi = INT64_MAX, fill = 0, before_last = 0;
    uint32_t bucket = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        before_last = fill;
        fill += g->bytes[i];
        bool closes = i + 1 == g->n || vars[i];
        if (!closes) continue;
        if (bucket == 0) {
            bool ddp_closes = fill >= TS_DDP_FIRST_BUCKET_BYTES, ddp_earlier = before_last >= TS_DDP_FIRST_BUCKET_BYTES;
            if ((!ddp_closes && i + 1 < g->n) || ddp_earlier) return -1;
        } else {
            if (before_last + 1 > lo) lo = before_last + 1;
            if (i + 1 < g->n && fill < hi) hi = fill;
        }
        bucket++;
        fill = 0;
    }
    if (lo > hi) return -1;
    const int64_t dflt = TS_DDP_DEFAULT_CAP_MB * 1048576ll;
    int64_t cap = hi == INT64_MAX ? (lo > dflt ? lo : dflt) : hi;   /* DDP's 25 MB when free */
    int64_t mib = (lo + 1048575) / 1048576 * 1048576;   /* else a whole MiB where one gives it */
    if (cap != dflt && mib >= lo && mib <= hi) cap = mib;
    /* torch takes int(bucket_cap_mb * 1024 * 1024): a cap of whole KiB prints exactly */
    int64_t kib = (cap + 1023) / 1024;
    if (kib * 1024 > hi || kib * 1024 < lo) kib = cap / 1024;
    if (kib * 1024 > hi || kib * 1024 < lo) return -1;
    return ts__tf_is_ddp_cap(g, vars, kib * 1024) ? (double)kib / 1024.0 : -1;
}

bool ts__tf_is_ddp_cap(const ts_opt_grads *g, const uint8_t *vars, int64_t cap)
{
    uint32_t *b = ts__malloc((size_t)g->n * sizeof *b + 1);
    if (!b) return false;
    ts__ddp_buckets(g->bytes, g->n, TS_DDP_FIRST_BUCKET_BYTES, cap, b);
    bool same = true;
    for (uint32_t i = 0; i + 1 < g->n && same; i++) same = (b[i + 1] != b[i]) == (vars[i] != 0);
    ts__free(b, (size_t)g->n * sizeof *b + 1);
    return same;
}

int64_t ts__tf_horovod_threshold(const ts_opt_grads *g, const uint8_t *vars)
{
    /* Horovod (controller.cc FuseResponses) fuses ready tensors in order
     * while the sum stays <= the threshold T: bucket j (sum S_j) needs
     * S_j <= T and, unless last, S_j + the next gradient > T. */
    int64_t lo = 0, hi = INT64_MAX, fill = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        fill += g->bytes[i];
        if (i + 1 < g->n && !vars[i]) continue;
        if (fill > lo) lo = fill;
        if (i + 1 < g->n && fill + g->bytes[i + 1] - 1 < hi) hi = fill + g->bytes[i + 1] - 1;
        fill = 0;
    }
    if (lo > hi || lo <= 0) return -1;
    /* a round value: Horovod rounds T up to a multiple of 512 x local_size bytes */
    static const int64_t grain[] = {64 << 20, 1 << 20, 64 << 10, 4 << 10, 512, 1};
    for (size_t k = 0; k < sizeof grain / sizeof *grain; k++) {
        int64_t t = (lo + grain[k] - 1) / grain[k] * grain[k];
        if (t <= hi) return t;
    }
    return lo;
}

/* The layer of a parameter: its name without the last component
 * ("encoder.layers.0.linear1.weight" -> "encoder.layers.0.linear1"). */
static size_t layer_len(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot ? (size_t)(dot - name) : strlen(name);
}

void ts__tf_layers(const ts_opt_grads *g, uint32_t n_layers, uint8_t *vars)
{
    uint32_t seen = 1;
    for (uint32_t i = 0; i + 1 < g->n; i++) {
        size_t a = layer_len(g->name[i]), b = layer_len(g->name[i + 1]);
        bool new_layer = a != b || memcmp(g->name[i], g->name[i + 1], a) != 0 || !g->name[i][0];
        vars[i] = 0;
        if (!new_layer) continue;
        if (seen == n_layers) { vars[i] = 1; seen = 1; }
        else seen++;
    }
}

/* DDP's grouping at cap (as tensor-fusion vars into vars, buckets into b)
 * and the cap where it next changes: a bucket the cap closed (not the first,
 * whose cap is fixed, nor one ending at the last gradient) holds >= cap
 * bytes, and keeps its end for every cap up to its bytes; one byte past the
 * smallest of them, its end moves. -1 when no bucket but the first and the
 * last ends: the grouping of every larger cap. */
static int64_t grouping_at(const ts_opt_grads *g, int64_t cap, uint32_t *b, uint8_t *vars)
{
    ts__ddp_buckets(g->bytes, g->n, TS_DDP_FIRST_BUCKET_BYTES, cap, b);
    int64_t next = -1, fill = 0;
    for (uint32_t i = 0; i + 1 < g->n; i++) {
        fill += g->bytes[i];
        vars[i] = b[i + 1] != b[i];
        if (!vars[i]) continue;
        if (b[i] > 0 && (next < 0 || fill + 1 < next)) next = fill + 1;
        fill = 0;
    }
    return next;
}

/* Caps are visited from 1 byte up, each step to where the grouping next
 * changes (grouping_at), so every grouping is seen once, in cap order, at
 * O(n) a step; the groupings are at most n(n+1)/2 (they change only where
 * the cap crosses the bytes of a run of gradients) and far fewer in
 * practice (1,000 gradients of log-normal sizes: 6,226). Past
 * TF_EXACT_WORK steps x gradients (a hostile gradients file) each step also
 * grows the cap by at least 1/64, so the rest of the range costs about 45
 * steps per doubling and groupings narrower than that may be missed. */
enum { TF_EXACT_WORK = 1 << 27 };

/* Every grouping a cap gives that ts__tf_ddp_cap_mb names a cap for, in cap
 * order: counted, and when out is set the ones at k * n_all / n_out copied. */
static uint64_t cap_sweep(const ts_opt_grads *g, uint32_t *b, uint8_t *cur, uint8_t *out, uint64_t n_all,
                          uint32_t n_out)
{
    uint32_t nt = ts__tf_n_vars(g), k = 0;
    uint64_t found = 0, exact_steps = TF_EXACT_WORK / g->n;
    int64_t cap = 1;
    for (uint64_t step = 0;; step++) {
        int64_t next = grouping_at(g, cap, b, cur);
        if (ts__tf_ddp_cap_mb(g, cur) >= 0) {   /* only between caps of whole KiB: none to write */
            if (out && k < n_out && (uint64_t)k * n_all / n_out == found) memcpy(out + (size_t)k++ * nt, cur, nt);
            found++;
        }
        if (next < 0) return found;
        if (step >= exact_steps && next - cap < cap / 64) next = cap + cap / 64;
        cap = next;
    }
}

uint32_t ts__tf_cap_groupings(const ts_opt_grads *g, uint8_t *out, uint32_t max)
{
    uint32_t n = g->n, nt = ts__tf_n_vars(g), n_out = 0;
    if (n < 2 || !max) return 0;
    uint32_t *b = ts__malloc((size_t)n * sizeof *b);
    uint8_t *cur = ts__malloc((size_t)nt + 1);
    if (b && cur) {   /* twice: how many there are, then at most max of them taken evenly */
        uint64_t n_all = cap_sweep(g, b, cur, NULL, 0, 0);
        n_out = n_all < max ? (uint32_t)n_all : max;
        if (n_out) cap_sweep(g, b, cur, out, n_all, n_out);
    }
    ts__free(b, (size_t)n * sizeof *b);
    ts__free(cur, (size_t)nt + 1);
    return n_out;
}
