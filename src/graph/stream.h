/* stream.h - PER-RANK STREAMING: building a graph one rank at a time, so a
 * caller holds one rank's events at once, not all of them (the bounded path
 * from files, ts_graph_load; the MPI plugin, which feeds each process its
 * share of ranks).
 *
 * Use: ts__graph_stream_begin(n_ranks) -> ts__graph_stream_add(full rank)
 * for each rank, in any order (finish puts the graph's ranks in rank-number
 * order; adding them in that order spares the move) ->
 * ts__graph_stream_finish -> trace (the ranks' summaries) + graph (borrowing
 * it). add builds the rank's local graph (nodes, lanes, local edges,
 * collective members), keeps a compact copy of the rank (ts__rank_compact:
 * only the slices the graph names, their ancestors, the slices that carry a
 * member's collective args, iteration marks) and destroys the full rank. With
 * fold_replicas, a rank whose local graph replicates an earlier kept rank's
 * (same shape, span and busy time within the tolerance) keeps only its
 * collective members. finish matches, aligns, joins and indexes the graph as
 * ts_graph_create does. Any failure leaves the stream to abort, which frees
 * everything it holds. Not thread-safe: one caller adds ranks in order.
 */
#ifndef TS_GRAPH_STREAM_H
#define TS_GRAPH_STREAM_H

#include "graph/graph.h"
#include "ingest/ingest.h"

typedef struct ts_graph_stream ts_graph_stream;

TS_NODISCARD int ts__graph_stream_begin(uint32_t n_ranks, const ts_graph_options *opt, ts_graph_stream **out,
                                        ts_error *err);
/* Takes ownership of full (destroyed on success and on failure). add_at:
 * the rank is the pos-th in the order of the files (0-based; add: the order
 * added), which the local graphs' warnings follow, whatever order the ranks
 * come in (the MPI plugin's process 0 adds them as they arrive). */
TS_NODISCARD int ts__graph_stream_add(ts_graph_stream *s, ts_rank *full, ts_error *err);
TS_NODISCARD int ts__graph_stream_add_at(ts_graph_stream *s, ts_rank *full, uint32_t pos, ts_error *err);
/* A note (a warning line) for the first rank, as ts_job_load leaves it. */
void ts__graph_stream_note(ts_graph_stream *s, const char *note);
/* Before the first add: each compact rank also keeps what keep marks
 * (ts_keep_fn: 1 = the slice, 2 = with its args; the larger mark wins), and
 * the launch ids when keep_ids: for an analysis that reads the ranks beside
 * the graph (analyze/breakdown.c's ts_breakdown_load). */
void ts__graph_stream_keep(ts_graph_stream *s, ts_keep_fn keep, bool keep_ids);
/* On success the stream is freed and *trace / *graph are the caller's.
 * With graph_err, a graph that cannot be matched or joined (bad input, not
 * out of memory) is no failure: *trace is returned, *graph NULL, and
 * graph_err says why (what ts_graph_create would say). */
TS_NODISCARD int ts__graph_stream_finish(ts_graph_stream *s, ts_job **trace, ts_graph **graph, ts_error *err);
TS_NODISCARD int ts__graph_stream_finish_soft(ts_graph_stream *s, ts_job **trace, ts_graph **graph,
                                              ts_error *graph_err, ts_error *err);
void ts__graph_stream_abort(ts_graph_stream *s);

/* ---- a rank condensed where it was read (the other processes of a
 * distributed run, docs/distributed.md) ----
 * What add keeps of a rank, made without a stream: the rank's local graph
 * (nodes, lanes, local edges, nonblocking MPI completions, the local pass's
 * warnings and counts), its collective members and its compact rank, as add
 * builds and keeps them (the same code); graph/part.c writes it as bytes and
 * reads it back. add_part_at puts it in a stream where add_at would have
 * put the full rank, without the full rank: the stream then holds what it
 * holds after add_at, row for row. Not for a stream that folds replicas or
 * keeps more (ts__graph_stream_keep): TS_EINVAL. */
typedef struct ts_graph_part ts_graph_part;
/* Takes full (destroyed on success and on failure). */
TS_NODISCARD int ts__graph_part_build(ts_rank *full, const ts_graph_options *opt, ts_graph_part **out, ts_error *err);
void ts__graph_part_free(ts_graph_part *p);
const char *ts__graph_part_path(const ts_graph_part *p);
/* Takes p (freed on success and on failure). */
TS_NODISCARD int ts__graph_stream_add_part_at(ts_graph_stream *s, ts_graph_part *p, uint32_t pos, ts_error *err);
/* graph/part.c: the part as bytes appended to b (TS_ENOMEM when b ran out;
 * TS_EINVAL for a local graph not in the form ts__graph_local makes), and
 * back: every row id and range is checked, bad bytes are TS_EFORMAT naming
 * `what` and the byte. Like trace/serial.c, this machine's layout only. */
TS_NODISCARD int ts__graph_part_serialize(const ts_graph_part *p, ts_buf *b);
TS_NODISCARD int ts__graph_part_deserialize(const void *bytes, size_t n, const char *what, ts_graph_part **out,
                                            ts_error *err);

/* Where each of files[0..n) (a whole load's list, ts__trace_files) is added
 * by ts_graph_load: pos[i] (rank files named `rank-N` go in rank order). */
TS_NODISCARD int ts__graph_file_order(char *const *files, uint32_t n, uint32_t *pos);

/* ts_graph_load (load.c) for an analysis that reads the ranks beside the
 * graph: each compact rank also keeps what keep marks (and the launch ids
 * when keep_ids), as ts__graph_stream_keep; graph_err as
 * ts__graph_stream_finish_soft (NULL: a graph that cannot be built fails the
 * load). A load of whole ranks (one CTF session, a PyTorch execution trace
 * among the files) is ts_job_load + ts_graph_create, soft alike. */
TS_NODISCARD int ts__graph_load_keep(const char *const *paths, uint32_t n_paths, const ts_load_opts *lo,
                                     const ts_graph_options *opt, ts_keep_fn keep, bool keep_ids, ts_job **trace,
                                     ts_graph **out, ts_error *graph_err, ts_error *err);

#endif
