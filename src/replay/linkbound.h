/* linkbound.h - the price of regrouped gradient all-reduces when the link,
 * not the CPU, bounds them (the model is described in linkbound.c). Used by
 * rebucket.c for --bucket-mb and bucket plans on CPU (gloo) jobs. Not for:
 * the CPU-sharing model of gloo on a fast link (contention.c).
 */
#ifndef TS_REPLAY_LINKBOUND_H
#define TS_REPLAY_LINKBOUND_H

#include "replay/sim.h"

/* Below this many bytes per ns (0.1 GB/s, 0.8 Gbit/s) of bus bandwidth
 * achieved by the trace's gradient all-reduces together, their CPU work
 * cannot be what bounds them: gloo's all-reduce over loopback, the CPU
 * alone, reached 0.56-1.06 GB/s of bus bandwidth for 1-16 MiB on the busy
 * 2-core machines of the committed calibration logs (22 and 24 Nov,
 * bench/gloo_allreduce.py), and 0.175-0.6 GB/s together beside backward in
 * the windows of the eleven loopback ground truths. --link-bound auto takes
 * a trace under it as link-bound (the testbed's 50-400 Mbit/s links:
 * 0.005-0.047). Chosen from the loopback measurements, not the testbed's. */
#define TS_LINK_CPU_FLOOR_BPNS 0.1

/* What the model reads; arrays are borrowed from the caller. Collective i
 * has its barrier coll_bar[i] (whose self time is its transfer), a member
 * per rank, its bytes, and for a measured (old) one its measured transfer;
 * coll_same[i] >= 0: a new one holding exactly old coll_same[i]'s gradients. */
typedef struct ts_link {
    uint16_t        n_ranks;
    uint32_t        n_colls;
    const uint32_t *coll_bar;
    const uint32_t *coll_member;   /* [i * n_ranks + k] */
    const int64_t  *coll_bytes;    /* <= 0 = unknown */
    const int64_t  *coll_meas_ns;  /* old: measured transfer; new: 0 */
    const int32_t  *coll_same;
    const uint8_t  *coll_new;
    /* Called after each simulation of the re-pricing rounds (may be NULL):
     * rebucket.c hands the new buckets to gloo's workers there. */
    void          (*after_sim)(void *ctx, ts_sim *s);
    void           *after_sim_ctx;
} ts_link;

/* Bytes per ns the measured (old) all-reduces achieved together: their
 * bytes over the time at least one of them was in flight (each from its
 * last member's measured start for its measured transfer). 0 = none of
 * known size. *n_used: how many were counted. */
double ts__link_rate(const ts_link *lk, const ts_sim *s, uint32_t *n_used);

/* Re-price every new all-reduce on one link of `rate` bytes per ns shared
 * by those in flight at once (processor sharing, from their simulated
 * starts), re-simulating until the schedule settles; a new one holding an
 * old one's gradients scales that one's measured time by the change of its
 * price. The caller simulates once more afterwards. */
TS_NODISCARD int ts__link_apply(const ts_link *lk, ts_sim *s, double rate, ts_error *err);

#endif
