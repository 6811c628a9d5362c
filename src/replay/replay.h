/* replay.h - what the files of replay/ share: the replay result and the
 * what-if passes that edit a ts_sim before it runs.
 *
 * Flow (ts_replay_run_graph): sim_from_graph() makes the graph r->sim's base
 * rows, borrowing its columns (ts__sim_borrow); when what-ifs are asked for,
 * the gaps and self times are the sim's own copies and each collective's
 * transfer time moves onto its barrier node (so a what-if prices a collective
 * in one place); the what-if passes edit r->sim; ts__sim_run evaluates it;
 * iteration times are compared per rank. Not for: reading traces or building
 * graphs.
 */
#ifndef TS_REPLAY_REPLAY_H
#define TS_REPLAY_REPLAY_H

#include "graph/graph.h"
#include "replay/contention.h"
#include "replay/sim.h"
#include "trainscope/replay.h"

/* An edge a what-if cut: its gap is so negative that it never binds. */
#define TS_SIM_CUT_GAP (INT64_MIN / 4)

typedef struct ts_replay_rank_row {
    int32_t  rank;            /* the job's rank number, -1 = unknown */
    int64_t  meas_ns;         /* median measured iteration */
    int64_t  pred_ns;         /* median predicted iteration */
    int64_t  offset_ns;       /* clock offset the graph applied */
} ts_replay_rank_row;

/* One collective instance as the what-ifs see it. */
typedef struct ts_replay_coll {
    uint32_t barrier;         /* sim node row of its barrier, TS_NONE32 = single member */
    uint32_t graph_coll;      /* row in graph colls, TS_NONE32 = made by a what-if */
    ts_coll_kind kind;        /* TS_COLL_COUNT = not recognised */
    int64_t  bytes;           /* message bytes, -1 = unknown */
    uint32_t n_members;       /* members in the trace */
    int64_t  transfer_ns;     /* measured transfer time (the priced node's self_ns before edits) */
    uint32_t priced;          /* node whose self_ns is the transfer: the barrier, or the sole
                                 member when the trace holds one rank of the job */
    uint32_t group;           /* ranks the collective spans (the job's world size when the
                                 trace holds fewer), for the cost model */
} ts_replay_coll;

/* One rank's iteration as compared: its ProfilerStep span on the aligned
 * clock, and where the replay puts it (moved by as much as the simulation
 * moved the first start and the last end of its nodes). */
typedef struct ts_replay_iter {
    int64_t step;             /* N of ProfilerStep#N; -1 = the whole trace (no iterations) */
    int64_t meas_start_ns, meas_dur_ns;   /* meas_dur_ns < 0: the rank has no nodes there */
    int64_t pred_start_ns, pred_dur_ns;
} ts_replay_iter;

/* An evaluation session: what the candidates of one search share, kept by
 * the first replay that computes it and reused by the next replays on the
 * same graph whose inputs to it are the same (each memo keeps its inputs
 * and is compared element for element before a reuse, so a price made in a
 * session equals a full replay's). Kept: the gradients' sizes
 * (gradients.json read once), the cost model fitted on the trace's
 * collectives and the calibration log (ts__replay_fit_model), and the
 * measured side of the gloo contention model (contention.h). */
typedef struct ts_replay_session {
    const ts_graph *g;
    char           *grads_path;   /* gradients.json the sizes came from, NULL = none loaded */
    int64_t        *grads_rev;    /* [n_grads] bytes in reduction (reverse registration) order */
    uint32_t        n_grads;
    bool            have_model;   /* model (maybe NULL: nothing to fit) was fitted on model_key */
    ts_coll_model  *model;
    bool            model_from_trace;
    char           *model_log;    /* the calibration log it read, NULL = none */
    int64_t        *model_key;    /* [n_model_key]: (kind, group, bytes, transfer) of each sample it took */
    uint32_t        n_model_key;
    ts_contention_memo ct[4];     /* a few: a partition that zeroes some copies has other ops to slow */
    uint32_t        ct_next;
    uint64_t        n_model_reused, n_grads_reused;
    uint64_t        n_contended, n_rounds;   /* contention passes run and their simulations, in all */
    bool            all_rounds;   /* tests: the contention rounds never stop at their fixed point */
} ts_replay_session;

TS_NODISCARD int ts__replay_session_create(const ts_graph *g, ts_replay_session **out);
void ts__replay_session_destroy(ts_replay_session *s);
/* ts_replay_run_graph within a session (NULL = none: a plain replay). */
TS_NODISCARD int ts__replay_run_session(const ts_graph *g, const ts_replay_options *opt, ts_replay_session *session,
                                        ts_replay **out, ts_error *err);
/* The cost model for a rebucket: the session's when fitted on the same
 * samples and log (then borrowed: r->model_borrowed), else fitted
 * (ts__replay_fit_model) and, in a session, handed to it (session.c). */
TS_NODISCARD int ts__replay_fit_model_session(ts_replay *r, const ts_replay_options *opt, ts_error *err);
/* gradients.json's bytes in reduction order: the session's copy when it
 * read the same path (*owned false), else read into a new array. */
TS_NODISCARD int ts__replay_grads_session(ts_replay *r, const char *path, int64_t **rev, uint32_t *n, bool *owned,
                                          ts_error *err);

struct ts_replay {
    const ts_graph *g;        /* borrowed (or owned_graph) */
    ts_replay_session *session; /* NULL = none (session.c) */
    bool            model_borrowed; /* model is the session's: not destroyed with the replay */
    ts_graph       *owned_graph;
    ts_sim          sim;
    ts_replay_coll *colls;
    uint32_t        n_colls, cap_colls;
    ts_coll_model  *model;    /* cost model for what-ifs that reprice collectives, NULL = none */
    bool            model_from_trace; /* model fitted on the trace's own collectives (no usable log given) */

    ts_replay_rank_row *ranks;
    uint32_t        n_ranks;
    uint32_t        n_iterations;
    int64_t         meas_ns, pred_ns;
    ts_replay_iteration_info *job_iters;   /* [n_iter_slots], the first n_iterations used: the
                                              slowest rank's, per iteration */
    ts_replay_iter *iters;    /* [rank * n_iter_slots + k], for the export */
    uint32_t        n_iter_slots;

    char          **warnings; /* owned lines */
    uint32_t        n_warnings, cap_warnings;
    int64_t         graph_ns, replay_ns;
    uint8_t        *removed;  /* per base node, NULL = none: 1 = a what-if replaced it (an old gloo bucket
                                 regrouped by --bucket-mb); it takes no time and the export leaves it out */
    uint32_t       *old_group_grads;   /* [n_old_groups]: gradients per old bucket, in reduction order, as
                                          the bucket what-if inferred them (first iteration); NULL = none */
    uint32_t        n_old_groups;
    bool            what_if;           /* edits were asked for: pred - meas is their change */
    bool            transfers_moved;   /* each collective's transfer time is its barrier's self time
                                          (what-ifs asked for); false: the sim borrows the graph's
                                          times and barriers take no time (results are equal) */
};

/* Display name of sim node n (what-if nodes carry their own). */
static inline const char *ts__replay_node_name(const ts_replay *r, uint32_t n)
{
    return n < r->sim.n_base_nodes ? ts__graph_node_name(r->g, n) : r->sim.name[n];
}

/* A spread with nothing in it, and one more (measured, predicted) pair in it. */
void ts__replay_spread_init(ts_replay_spread *sp);
void ts__replay_spread_add(ts_replay_spread *sp, int64_t measured_ns, int64_t predicted_ns);
void ts__replay_warn(ts_replay *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What-if passes (whatif.c). Each returns TS_OK or fills err; after a
 * failure the result is destroyed by the caller. */
TS_NODISCARD int ts__replay_scale(ts_replay *r, const char *spec, ts_error *err);
/* Tie the ops gloo's workers woke before their recorded end to them (whatif.c). */
void ts__replay_tie_woken(ts_replay *r);
/* Take the profiler's cost per recorded CPU op (us) off the trace (whatif.c). */
void ts__replay_unprofile(ts_replay *r, double us);
TS_NODISCARD int ts__replay_fit_model(ts_replay *r, const ts_replay_options *opt, ts_error *err);
TS_NODISCARD int ts__replay_reprice(ts_replay *r, const ts_replay_options *opt, ts_error *err);
TS_NODISCARD int ts__replay_rebucket(ts_replay *r, const ts_replay_options *opt, ts_error *err);
/* The bytes of every gradient all-reduce whose size the trace lacks, from
 * gradients.json and DDP's bucket assignment at the trace's cap (given or
 * inferred, as --bucket-mb infers it), so that repricing what-ifs can price
 * them (rebucket.c). */
/* whatif.c: the gradient all-reduces at opt->grad_bytes_per_elem bytes an element. */
TS_NODISCARD int ts__replay_grad_precision(ts_replay *r, const ts_replay_options *opt, ts_error *err);
TS_NODISCARD int ts__replay_sizes_from_gradients(ts_replay *r, const ts_replay_options *opt, ts_error *err);

#endif
