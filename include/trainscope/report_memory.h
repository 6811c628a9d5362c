/* report_memory.h - `trainscope memory`'s results on a terminal or as JSON:
 * a dump pair's liveness summary (ts_memgraph), a memory-limit fit
 * (ts_mem_fit), and what --trace finds in measured memory (raw timelines,
 * Kineto [memory] events, allocator snapshots) with memory.json and the
 * curves' charts under -o DIR.
 *
 * Not for: computing anything (the figures come from memory.h's results; the
 * caller runs ts_memgraph_offload and passes its answer) or the G10 files
 * (ts_memgraph_write).
 * Each function returns TS_OK, or TS_EIO when writing `out` failed.
 */
#ifndef TRAINSCOPE_REPORT_MEMORY_H
#define TRAINSCOPE_REPORT_MEMORY_H

#include <stdbool.h>
#include <stdio.h>

#include "trainscope/memory.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the summary of a dump pair shows beside the graph's own figures. */
typedef struct ts_report_mem_args {
    int      g10_compat;          /* the rules the graph was built with: 1 = G10's */
    uint32_t batch;               /* batch size the dumps were traced at; 0 = not given */
    uint32_t top;                 /* tensors listed at the peak */
    double   offload_gbps;        /* the link of the offload figures (GB/s) */
    uint32_t offload_candidates;  /* ts_memgraph_offload at that link: (tensor, period) pairs */
    int64_t  offload_freed_bytes; /* ... and the bytes it frees at the peak */
} ts_report_mem_args;

/* Rules, times, peak and the tensors alive there (largest a->top), offload. */
TS_API TS_NODISCARD int ts_report_memgraph_table(FILE *out, const ts_memgraph *g, const ts_mem_summary *s,
                                                 const ts_report_mem_args *a);
/* Does the step fit the limit, and the cost of each way to make it fit. */
TS_API TS_NODISCARD int ts_report_mem_fit_table(FILE *out, const ts_mem_fit *f, double link_gbps);
/* One JSON line: the summary, inside {"memory_limit_bytes",...,"step":{...}}
 * when fit is given (NULL: no limit asked). */
TS_API TS_NODISCARD int ts_report_memgraph_json(FILE *out, const ts_memgraph *g, const ts_mem_summary *s,
                                                const ts_report_mem_args *a, const ts_mem_fit *fit);

/* CSV (RFC 4180, CRLF records, bytes and ns as integers) of one table:
 * "tensors" (the default: every tensor alive at the peak, largest first:
 * tensor, name, type, bytes, global) or "fit" (with a limit, fit non-NULL:
 * option, fits, peak_bytes, choices, added_ns, bytes_moved). Another name,
 * or "fit" without one: TS_EINVAL with err saying so, nothing written. */
TS_API TS_NODISCARD int ts_report_memgraph_csv(FILE *out, const ts_memgraph *g, const ts_mem_summary *s,
                                               const ts_mem_fit *fit, const char *table, ts_error *err);

/* An allocator snapshot: per device its segments, trace and the frames of
 * the blocks alive at its peak (the top `top`). JSON: one object per device,
 * one per line. */
TS_API TS_NODISCARD int ts_report_mem_snapshot(FILE *out, const char *path, const ts_mem_snapshot *s, uint32_t top,
                                               bool json);

/* memory --trace: raw timelines and Kineto rows, each said on `out` as it
 * comes (a table) or kept as one JSON line each for ts_report_mem_trace_end;
 * their curves, titled after their file or (rank, device), for charts. */
typedef struct ts_report_mem_trace ts_report_mem_trace;
TS_API TS_NODISCARD int ts_report_mem_trace_create(FILE *out, bool json, ts_report_mem_trace **rep);
/* CSV instead of a table: one of the tables "timelines" (raw timelines:
 * file, events, peak_bytes, peak_ns, final_bytes, category, at_peak_bytes,
 * max_bytes; a row per file and category), "peaks" (Kineto: rank,
 * device_type, device_id, events, peak_bytes, peak_ns, first_ns, last_ns,
 * ops innermost first joined by " < ") or "frames" (snapshots: file, device,
 * reserved_bytes, allocated_bytes, peak_bytes, frame, bytes, blocks; a row per
 * allocating frame alive at the peak), printed by ts_report_mem_trace_end.
 * table NULL: the first one the inputs filled. Another name: TS_EINVAL with err. */
TS_API TS_NODISCARD int ts_report_mem_trace_create_csv(FILE *out, const char *table, ts_report_mem_trace **rep,
                                                       ts_error *err);
TS_API void ts_report_mem_trace_destroy(ts_report_mem_trace *rep);   /* frees the curves it was given */
/* An allocator snapshot's rows of the "frames" table (CSV only). */
TS_API TS_NODISCARD int ts_report_mem_trace_snapshot(ts_report_mem_trace *rep, const char *path,
                                                     const ts_mem_snapshot *s);
TS_API TS_NODISCARD int ts_report_mem_trace_timeline(ts_report_mem_trace *rep, const char *path,
                                                     const ts_mem_timeline *t);
/* The table's header line of the Kineto rows (nothing in JSON). */
TS_API TS_NODISCARD int ts_report_mem_trace_peaks_head(ts_report_mem_trace *rep);
TS_API TS_NODISCARD int ts_report_mem_trace_peak(ts_report_mem_trace *rep, const ts_mem_trace_peak *p);
/* The traces' ingest warnings: on warn beside a table, else one more JSON
 * line {"warnings":[...]}. */
TS_API TS_NODISCARD int ts_report_mem_trace_warnings(ts_report_mem_trace *rep, FILE *warn, const ts_job *t);
/* Keep curve c (its arrays are taken over: *c is left empty) for a chart,
 * titled after the raw timeline at path, or after Kineto row p. */
TS_API TS_NODISCARD int ts_report_mem_trace_timeline_curve(ts_report_mem_trace *rep, const char *path,
                                                           ts_mem_curve *c);
TS_API TS_NODISCARD int ts_report_mem_trace_peak_curve(ts_report_mem_trace *rep, const ts_mem_trace_peak *p,
                                                       ts_mem_curve *c);
TS_API uint32_t ts_report_mem_trace_n_curves(const ts_report_mem_trace *rep);
/* The name chart i is written under, without ".svg": "memory" for one
 * curve, "memory_K" for several. */
TS_API void ts_report_mem_trace_chart_name(const ts_report_mem_trace *rep, uint32_t i, char *out, size_t size);
/* The JSON lines kept, or the CSV table, on `out` (nothing in table mode).
 * CSV without a table named: the first one the inputs filled. */
TS_API TS_NODISCARD int ts_report_mem_trace_end(ts_report_mem_trace *rep, ts_error *err);
/* An allocator snapshot's alloc/free timeline as CSV at csv_path (device,
 * index, time_us, action, addr, bytes, allocated_bytes after it, frame,
 * user_frame; docs/csv.md's records), written whole or not at all. */
TS_API TS_NODISCARD int ts_mem_snapshot_write_timeline(const char *snapshot_path, const char *csv_path, ts_error *err);
/* -o DIR: memory.json (the JSON lines as one array) and, with plots, one
 * chart per curve, written whole or not at all (ts_mem_curves_write). */
TS_API TS_NODISCARD int ts_report_mem_trace_write_dir(const ts_report_mem_trace *rep, const char *dir, bool plots,
                                                      ts_error *err);

#ifdef __cplusplus
}
#endif
#endif
