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

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* DDP's grouping changes only where the cap crosses the bytes of a run of
 * consecutive gradients (a bucket closes once it holds >= the cap), so the
 * sums of such runs and one byte past them give every grouping a cap makes;
 * a grouping holds over one interval of caps, so neighbours are compared.
 * Kept: those ts__tf_ddp_cap_mb names a cap for (a whole KiB), the plan's
 * setting. */
uint32_t ts__tf_cap_groupings(const ts_opt_grads *g, uint8_t *out, uint32_t max)
{
    uint32_t n = g->n, nt = ts__tf_n_vars(g), n_out = 0;
    size_t n_caps = 0, cap_caps = (size_t)n * (n + 1) + 1;   /* two per run of gradients */
    if (n < 2 || !max) return 0;
    if (cap_caps > 2 * 4096) cap_caps = 2 * 4096;
    int64_t *caps = ts__malloc(cap_caps * sizeof *caps);
    uint32_t *b = ts__malloc((size_t)n * sizeof *b);
    uint8_t *prev = ts__malloc((size_t)nt + 1), *cur = ts__malloc((size_t)nt + 1);
    if (!caps || !b || !prev || !cur) goto done;
    size_t stride = ((size_t)n * (n + 1) + cap_caps - 1) / cap_caps;   /* > 1: runs sampled evenly */
    for (uint32_t i = 0, k = 0; i < n; i++) {
        int64_t sum = 0;
        for (uint32_t j = i; j < n; j++, k++) {
            sum += g->bytes[j];
            if (k % stride == 0 && n_caps + 2 <= cap_caps) { caps[n_caps++] = sum; caps[n_caps++] = sum + 1; }
        }
    }
    qsort(caps, n_caps, sizeof *caps, cmp_i64);
    /* every distinct grouping, then at most max of them taken evenly */
    uint8_t *all = NULL;
    uint32_t cap_all = 0;
    uint32_t n_all = 0;
    for (size_t c = 0; c < n_caps; c++) {
        if (c && caps[c] == caps[c - 1]) continue;
        ts__ddp_buckets(g->bytes, n, TS_DDP_FIRST_BUCKET_BYTES, caps[c], b);
        for (uint32_t i = 0; i < nt; i++) cur[i] = b[i + 1] != b[i];
        if (n_all && !memcmp(cur, prev, nt)) continue;
        memcpy(prev, cur, nt);
        if (ts__tf_ddp_cap_mb(g, cur) < 0) continue;   /* only between caps of whole KiB: none to write */
        if (ts__grow((void **)&all, &cap_all, (size_t)nt, (size_t)n_all + 1)) break;
        memcpy(all + (size_t)n_all * nt, cur, nt);
        n_all++;
    }
    n_out = n_all < max ? n_all : max;
    for (uint32_t k = 0; k < n_out; k++)
        memcpy(out + (size_t)k * nt, all + (size_t)((uint64_t)k * n_all / n_out) * nt, nt);
    ts__free(all, (size_t)cap_all * nt);
done:
    ts__free(caps, cap_caps * sizeof *caps);
    ts__free(b, (size_t)n * sizeof *b);
    ts__free(prev, (size_t)nt + 1);
    ts__free(cur, (size_t)nt + 1);
    return n_out;
}
