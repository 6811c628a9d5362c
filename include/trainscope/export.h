/* export.h - a loaded job and its analyses written as one SQLite database
 * (`trainscope export PATH... --sqlite out.db`), with tables modelled on
 * Perfetto's trace processor (slice, thread_track, process, thread, flow,
 * args, counter, counter_track: the same names where the concept is the
 * same) plus the analyses (breakdown*, critical_path, replay*). The schema
 * is documented in docs/export.md.
 *
 * Not for: computing anything; the caller passes the results it has (any
 * analysis may be NULL; its tables are then empty and the warning table says
 * why when the caller says so).
 * Ownership: everything is borrowed for the duration of the call.
 * Times in the database are int64 nanoseconds.
 */
#ifndef TRAINSCOPE_EXPORT_H
#define TRAINSCOPE_EXPORT_H

#include "trainscope/common.h"
#include "trainscope/model.h"
#include "trainscope/analyze.h"
#include "trainscope/graph.h"
#include "trainscope/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What to write; zero-initialise, set size. Grows only at the end. */
typedef struct ts_sqlite_input {
    size_t                  size;          /* sizeof(ts_sqlite_input) */
    const ts_job           *job;           /* required: the trace tables */
    const ts_breakdown     *breakdown;     /* NULL = breakdown tables empty */
    const ts_graph         *graph;         /* NULL = no clock offsets (rank.clock_offset NULL) and no
                                              graph warnings; required with critical_path */
    const ts_critical_path *critical_path; /* NULL = critical_path table empty; borrows graph */
    const ts_replay        *replay;        /* NULL = replay tables empty */
    /* Why an analysis is missing (NULL = not asked for): one warning row each. */
    const char *breakdown_why, *critical_path_why, *replay_why;
} ts_sqlite_input;

/* What was written. */
typedef struct ts_sqlite_stats {
    uint64_t n_rows;       /* rows in every table together */
    uint32_t n_tables;
    uint64_t n_slices;     /* slice rows (instants included, dur 0) */
    uint64_t n_args;
    uint64_t n_warnings;   /* rows of the warning table */
    int64_t  write_ns;     /* wall time from opening the file to its rename */
    int64_t  write_cpu_ns; /* CPU time of the calling thread over the same stretch (less
                              disturbed than wall time by other work on the machine) */
} ts_sqlite_stats;

/* Write in's job and results to a new SQLite database at path, replacing
 * any file there only on success: it is written under a temporary name
 * beside path (one transaction, no journal) and renamed. On failure (an
 * unwritable folder, a full disk, path naming a directory or a device)
 * nothing is left at path or beside it and err says, on one line, what and
 * where ("out.db: cannot write: database or disk is full"): TS_EIO; TS_EINVAL
 * for a NULL job; TS_ENOMEM. out may be NULL. */
TS_API TS_NODISCARD int ts_sqlite_write(const ts_sqlite_input *in, const char *path, ts_sqlite_stats *out,
                                        ts_error *err);

#ifdef __cplusplus
}
#endif
#endif
