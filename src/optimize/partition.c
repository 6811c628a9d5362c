/* partition.c - the tensor-partition pass (dPRO's tensor partition): one
 * large gradient all-reduced in k = 2^level pieces of equal bytes, so the
 * first pieces can start while the last bytes of the bucket before are
 * still in flight, at one more fixed cost per piece. The replay prices the
 * pieces (replay/rebucket.c cuts the gradient into units). Not to be
 * confused with the de-fusion moves of the search. Also the replay edits
 * of a strategy's buckets and pieces (ts__part_replay_edits). Not for:
 * grouping (tensor_fusion.c).
 */
#include "optimize/passes.h"

int ts__part_candidates(ts_opt_grads *g, uint32_t n_max, uint32_t max_pieces)
{
    g->part_grad = ts__malloc((size_t)g->n * sizeof *g->part_grad + 1);
    g->part_max = ts__malloc((size_t)g->n + 1);
    if (!g->part_grad || !g->part_max) return TS_ENOMEM;
    uint32_t levels = 0;
    while ((2u << levels) <= max_pieces && levels < 12) levels++;
    /* the n_max largest, by repeated selection: n_max is small */
    g->n_part = 0;
    for (uint32_t round = 0; round < n_max && levels; round++) {
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < g->n; i++) {
            bool taken = false;
            for (uint32_t j = 0; j < g->n_part && !taken; j++) taken = g->part_grad[j] == i;
            if (!taken && g->bytes[i] >= 2 * TS_PART_MIN_BYTES && (best == UINT32_MAX || g->bytes[i] > g->bytes[best]))
                best = i;
        }
        if (best == UINT32_MAX) break;
        uint32_t lv = 0;
        while (lv < levels && g->bytes[best] / (2 << lv) >= TS_PART_MIN_BYTES) lv++;
        g->part_grad[g->n_part] = best;
        g->part_max[g->n_part++] = (uint8_t)lv;
    }
    return TS_OK;
}

void ts__part_pieces(const ts_opt_grads *g, const uint8_t *part_vars, uint32_t *pieces)
{
    for (uint32_t i = 0; i < g->n; i++) pieces[i] = 1;
    for (uint32_t j = 0; part_vars && j < g->n_part; j++) pieces[g->part_grad[j]] = 1u << part_vars[j];
}

uint32_t ts__part_replay_edits(const ts_opt_grads *g, const uint8_t *vars, uint32_t *pieces, uint32_t *units,
                               ts_replay_options *ro)
{
    ts__part_pieces(g, g->n_part ? vars + ts__tf_n_vars(g) : NULL, pieces);
    bool cut = false;
    for (uint32_t i = 0; i < g->n; i++) cut = cut || pieces[i] > 1;
    ro->bucket_mb = 0;
    ro->n_bucket_groups = ts__tf_groups(g, vars, pieces, units);
    ro->bucket_group_units = units;
    ro->grad_pieces = cut ? pieces : NULL;
    return ro->n_bucket_groups;
}
