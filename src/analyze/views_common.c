/* views_common.c - helpers every view shares (views_int.h): options with
 * their defaults, time bins, percentiles, size bins, array growth.
 */
#include "analyze/views_int.h"

void ts__views_cfg_from(const ts_views_opts *opt, ts__views_cfg *c)
{
    c->n_bins = TS_VIEWS_DEFAULT_BINS;
    c->rank = -1;
    c->one_thread = false;
    c->tid = 0;
    if (!opt || opt->size < sizeof *opt) return;
    if (opt->n_bins) c->n_bins = opt->n_bins;
    if (opt->one_rank) c->rank = opt->rank < 0 ? INT32_MAX : opt->rank;   /* a negative number matches none */
    c->one_thread = opt->one_thread;
    c->tid = opt->tid;
}

void ts__views_bins(int64_t lo, int64_t hi, uint32_t n, int64_t *start_ns, int64_t *bin_ns)
{
    if (hi < lo) hi = lo;
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;   /* hi - lo < 2^63: the trace's time rule */
    uint64_t w = (span + n - 1) / n;
    *start_ns = lo;
    *bin_ns = w ? (int64_t)w : 1;
}

uint32_t ts__views_bin_of(int64_t start_ns, int64_t bin_ns, uint32_t n, int64_t t)
{
    if (t <= start_ns) return 0;
    uint64_t b = ((uint64_t)t - (uint64_t)start_ns) / (uint64_t)bin_ns;
    return b >= n ? n - 1 : (uint32_t)b;
}

int64_t ts__views_pct(const int64_t *v, uint64_t n, double p)
{
    double rank = p / 100.0 * (double)n;
    uint64_t k = (uint64_t)rank;
    if ((double)k < rank) k++;   /* ceil */
    if (k == 0) k = 1;
    if (k > n) k = n;
    return v[k - 1];
}

uint32_t ts__views_size_bin(int64_t bytes)
{
    if (bytes <= 1) return 0;
    return 63u - (uint32_t)__builtin_clzll((uint64_t)bytes);
}

int ts__views_grow(void **p, uint64_t *cap, size_t elem, uint64_t need)
{
    if (need <= *cap) return TS_OK;
    uint64_t nc = *cap ? *cap * 2 : 64;
    while (nc < need) nc *= 2;
    if (nc > SIZE_MAX / elem) return TS_ENOMEM;
    void *q = ts__realloc(*p, *cap * elem, nc * elem);
    if (!q) return TS_ENOMEM;
    *p = q;
    *cap = nc;
    return TS_OK;
}
