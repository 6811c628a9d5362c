/* passes.h - the optimizer's passes and the state they share: the
 * gradients (in the order they are all-reduced) and the meaning of each
 * search variable.
 *
 * Vars [0, n_grad - 1): tensor fusion, 1 = a bucket boundary between
 * gradient i and i + 1 (reduction order), 0 = the two share a bucket.
 * Vars [n_grad - 1, n_grad - 1 + n_part): partition, level v = the
 * gradient part_grad[j] is all-reduced in 2^v pieces. A piece of a cut
 * gradient is a bucket of its own, except that the first piece may share
 * the bucket before it and the last the bucket after it.
 * Not for: searching (search.c) or files (plan.c).
 */
#ifndef TS_OPTIMIZE_PASSES_H
#define TS_OPTIMIZE_PASSES_H

#include "optimize/optimize_int.h"
#include "replay/gradients.h"

typedef struct ts_opt_grads {
    uint32_t  n;              /* gradients */
    int64_t  *bytes;          /* [n] reduction order (gradients.json reversed) */
    const char **name;        /* [n] reduction order, borrowed from src; "" when the file has none */
    ts_gradients src;         /* as read, registration order */
    uint64_t  fingerprint;    /* of the names and sizes: a plan names the gradients it is for */
    /* partition candidates */
    uint32_t  n_part;
    uint32_t *part_grad;      /* [n_part]: gradient (reduction order) */
    uint8_t  *part_max;       /* [n_part]: largest level */
} ts_opt_grads;

TS_NODISCARD int ts__opt_grads_load(const char *path, ts_opt_grads *g, ts_error *err);
void ts__opt_grads_free(ts_opt_grads *g);

static inline uint32_t ts__tf_n_vars(const ts_opt_grads *g) { return g->n ? g->n - 1 : 0; }

/* tensor_fusion.c */
/* The boundaries of the trace's grouping (old_grads[j] gradients per bucket). */
void ts__tf_init(const ts_opt_grads *g, const uint32_t *old_grads, uint32_t n_old, uint8_t *vars);
/* Units per bucket (pieces of a cut gradient are units) for vars; pieces[]
 * (per gradient) gets 2^level or 1. units has room for every piece. */
uint32_t ts__tf_groups(const ts_opt_grads *g, const uint8_t *vars, uint32_t *pieces, uint32_t *units);
/* A DDP bucket_cap_mb whose buckets (first one capped at 1 MiB) are
 * exactly the vars' grouping; < 0 when none is (or a gradient is cut). */
double ts__tf_ddp_cap_mb(const ts_opt_grads *g, const uint8_t *vars);
/* Whether DDP's buckets at cap bytes (the first at 1 MiB, as
 * ts__ddp_buckets forms them) are exactly the vars' grouping. */
bool ts__tf_is_ddp_cap(const ts_opt_grads *g, const uint8_t *vars, int64_t cap);
/* Up to max distinct groupings DDP makes at some bucket_cap_mb (first
 * bucket at 1 MiB) that ts__tf_ddp_cap_mb names a cap for (a whole KiB),
 * as tensor-fusion vars, nt = n - 1 bytes each, into out
 * (room for max of them); fewest-cap first, taken evenly when there are
 * more. Returns how many. */
uint32_t ts__tf_cap_groupings(const ts_opt_grads *g, uint8_t *out, uint32_t max);
/* DDP's default bucket_cap_mb. */
#define TS_DDP_DEFAULT_CAP_MB 25
/* A HOROVOD_FUSION_THRESHOLD (bytes) whose fusion (the ready gradients in
 * order, while the sum stays <= it) gives exactly the vars' grouping when
 * every gradient is ready at once; < 0 when none does. The roundest such
 * value (a multiple of 64 MiB, 1 MiB, 64 KiB, 4 KiB or 512 when one fits). */
int64_t ts__tf_horovod_threshold(const ts_opt_grads *g, const uint8_t *vars);
/* from_opfs.c: the tensor-fusion vars matching the operator fusion of a
 * cluster_mapping.txt (dPRO's from_opfs2tsfs); *n_grouped gradients share
 * a group. TS_EFORMAT for a mapping or gradients of another graph. */
TS_NODISCARD int ts__opfs_to_tsfs(const ts_graph *g, const ts_opt_grads *grads, const char *path, uint8_t *vars,
                                  uint32_t *n_grouped, ts_error *err);
/* Every N layers (parameter-name prefixes) in one bucket. */
void ts__tf_layers(const ts_opt_grads *g, uint32_t n_layers, uint8_t *vars);

/* partition.c */
/* The candidates: the n_max largest gradients that cut in two still leave
 * pieces of at least TS_PART_MIN_BYTES; levels up to log2(max_pieces). */
#define TS_PART_MIN_BYTES (64 * 1024)
TS_NODISCARD int ts__part_candidates(ts_opt_grads *g, uint32_t n_max, uint32_t max_pieces);
/* Pieces of each gradient (reduction order) for the partition vars. */
void ts__part_pieces(const ts_opt_grads *g, const uint8_t *part_vars, uint32_t *pieces);
/* The replay's bucket edits (ro's bucket_mb, groups and pieces) for the
 * tensor-fusion vars followed by the partition vars: pieces and units are
 * scratch the options point into afterwards. Returns the bucket count. */
uint32_t ts__part_replay_edits(const ts_opt_grads *g, const uint8_t *vars, uint32_t *pieces, uint32_t *units,
                               ts_replay_options *ro);

#endif
