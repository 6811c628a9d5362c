/* views_int.h - what the views_*.c analyses share: time bins, the rank
 * filter, percentiles, growable arrays and growable arrays.
 *
 * Not for: anything a view alone needs (that stays static in its file).
 */
#ifndef TS_ANALYZE_VIEWS_INT_H
#define TS_ANALYZE_VIEWS_INT_H

#include "core/core.h"
#include "trace/model.h"
#include "trainscope/views.h"

/* The options with defaults filled in (opt NULL or of an older size). */
typedef struct ts__views_cfg { uint32_t n_bins; int32_t rank; bool one_thread; int64_t tid; } ts__views_cfg;
void ts__views_cfg_from(const ts_views_opts *opt, ts__views_cfg *c);
static inline bool ts__views_rank_ok(const ts__views_cfg *c, const ts_rank *r)
{
    return c->rank < 0 || r->rank == c->rank;
}

/* n_bins equal bins over [lo, hi]: width ceil((hi - lo + 1) / n), at least 1. */
void     ts__views_bins(int64_t lo, int64_t hi, uint32_t n, int64_t *start_ns, int64_t *bin_ns);
/* The bin holding t, clamped to [0, n). */
uint32_t ts__views_bin_of(int64_t start_ns, int64_t bin_ns, uint32_t n, int64_t t);
/* Nearest-rank percentile p (0..100) of sorted v[0..n) (n > 0). */
int64_t  ts__views_pct(const int64_t *v, uint64_t n, double p);
/* floor(log2(bytes)), 0 for bytes <= 1: the power-of-two size bin. */
uint32_t ts__views_size_bin(int64_t bytes);

/* Grow *p (elements of elem bytes, *cap of them) to hold need; TS_ENOMEM. */
TS_NODISCARD int ts__views_grow(void **p, uint64_t *cap, size_t elem, uint64_t need);


#endif
