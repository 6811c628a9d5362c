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
 * bench/gloo_allreduce.py). --link-bound auto compares it with what the
 * trace's tail all-reduces achieved (rebucket.c, link_bound). Chosen from
 * the loopback measurements, not the testbed's. */
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
    bool          (*after_sim)(void *ctx, ts_sim *s); /* as contention.h's; its result is not needed here */
    void           *after_sim_ctx;
} ts_link;

/* Only all-reduces of at least this many bytes tell a link from gloo's CPU
 * work: a small one is mostly its fixed cost (0.4 ms at 4 KiB over
 * loopback, more beside compute), so one gradient per all-reduce on
 * loopback achieves under the floor too (bench/data/optimize_transformer12:
 * 0.065 GB/s over all of its 876). 1 MiB over loopback took 1.1-1.4 ms alone
 * in the calibration logs. */
#define TS_LINK_MIN_BYTES (1 << 20)

/* A measured all-reduce: its last rank's measured start, its measured
 * transfer, its bytes (<= 0 = unknown). */
typedef struct ts_link_span { int64_t start, dur, bytes; } ts_link_span;

/* Bytes per ns the measured all-reduces of at least min_bytes achieved
 * together: their bytes over the time at least one of them was in flight.
 * 0 = none. *n_used: how many were counted. Sorts sp by start. */
double ts__link_rate(ts_link_span *sp, uint32_t n, int64_t min_bytes, uint32_t *n_used);

/* Re-price every new all-reduce on one link of `rate` bytes per ns shared
 * by those in flight at once (processor sharing, from their average overlap
 * in the simulated schedule), re-simulating until the schedule settles; a new one holding an
 * old one's gradients scales that one's measured time by the change of its
 * price. The caller simulates once more afterwards. */
TS_NODISCARD int ts__link_apply(const ts_link *lk, ts_sim *s, double rate, ts_error *err);

#endif
