/* rawfmt.h - the capture record: the binary stream a traced process writes
 * (DIR/.raw/<pid>-<n>.tsr) and the converter turns into Chrome-trace JSON.
 *
 * Not for: anything the analysis reads directly; it reads the JSON. The raw
 * stream exists so that the traced program only ever copies bytes (cheap, and
 * async-signal-safe when a signal flushes it); formatting happens at exit or
 * afterwards in `trainscope record`.
 *
 * File = ts__raw_header, then chunks. A chunk = ts__raw_chunk, then n_bytes
 * of records from one thread buffer. A chunk is written with one O_APPEND
 * writev, so chunks of different threads never interleave. Records of one
 * buffer appear in the order they were written.
 *
 * Record (8-byte aligned, little-endian, the writer's native layout):
 *   field       bytes  meaning
 *   size        4      whole record incl. header and padding, multiple of 8, >= 24
 *                      (a TS__REC_PAD record may be 8 or 16: only size and type are written)
 *   type        1      ts__rec_type
 *   n_args      1      number of args after the strings
 *   flow_phase  1      's', 't', 'f' for TS__REC_FLOW and flows on X events; 0 = none
 *   flags       1      TS__RECF_TRACK: pid, tid (int64 each) follow the header
 *                      TS__RECF_FLOW:  flow id (uint64) follows (after pid/tid)
 *   ts_ns       8      CLOCK_MONOTONIC ns
 *   v           8      X: dur_ns; AB/AE/FLOW: id; C: double bits; RANK: rank<<32 | world (uint32 each, ~0 = unknown)
 *   strings            NUL-terminated: cat, name (B, X, I, AB), name (C, TNAME), cat (FLOW); then the
 *                      flow category when TS__RECF_FLOW
 *   args               n_args of: key NUL, tag 'i' + int64 (unaligned) | tag 's' + string NUL
 *   padding            zero bytes up to size
 */
#ifndef TS_CAPTURE_RAWFMT_H
#define TS_CAPTURE_RAWFMT_H

#include <stddef.h>
#include <stdint.h>

#define TS__RAW_MAGIC "TSRAW01"          /* 8 bytes with the NUL */
#define TS__RAW_CHUNK_MAGIC 0x4b434854u  /* "THCK" */

typedef struct ts__raw_header {
    char     magic[8];             /* TS__RAW_MAGIC */
    uint32_t pid, ppid;            /* of the writing process */
    int64_t  realtime_offset_ns;   /* CLOCK_REALTIME - CLOCK_MONOTONIC at start, aligns hosts */
    int64_t  start_ns;             /* CLOCK_MONOTONIC when tracing started */
    int32_t  rank, world_size;     /* from the environment at start, -1 = unknown */
    char     comm[64];             /* process name (/proc/self/comm), NUL-terminated */
} ts__raw_header;

typedef struct ts__raw_chunk {
    uint32_t magic;       /* TS__RAW_CHUNK_MAGIC */
    uint32_t buf_id;      /* thread buffer number, dense from 0 */
    uint32_t tid;         /* OS thread id owning the buffer */
    uint32_t reserved;    /* 0 */
    uint64_t dropped;     /* events this buffer dropped so far (cumulative) */
    uint64_t n_bytes;     /* record bytes that follow, multiple of 8 */
} ts__raw_chunk;

typedef enum ts__rec_type {
    TS__REC_PAD = 0,    /* filler to the end of a ring; skipped */
    TS__REC_B,          /* push: cat, name */
    TS__REC_E,          /* pop */
    TS__REC_X,          /* complete event with dur in v */
    TS__REC_I,          /* instant: cat, name */
    TS__REC_C,          /* counter: name, value bits in v */
    TS__REC_AB,         /* begin of range id v: cat, name */
    TS__REC_AE,         /* end of range id v */
    TS__REC_FLOW,       /* flow id v, flow_phase, cat */
    TS__REC_TNAME,      /* thread name */
    TS__REC_RANK,       /* rank and world size in v */
    TS__REC_NTYPES
} ts__rec_type;

enum { TS__RECF_TRACK = 1, TS__RECF_FLOW = 2 };

typedef struct ts__rec {
    uint32_t size;
    uint8_t  type, n_args, flow_phase, flags;
    int64_t  ts_ns;
    int64_t  v;
} ts__rec;

/* Convert the raw stream at raw_path into DIR/rank-<R>.<pid>.json (or
 * pid-<pid>.json), merging the thread streams in time order, pairing
 * push/pop and begin/end into complete events, naming tracks and recording
 * dropped counts. The file appears atomically (written aside, renamed). On
 * success the written path goes to out_path (may be NULL) and TS_OK (0) is
 * returned; a stream without events writes nothing and returns TS_ENODATA;
 * on failure a negative status and a one-line message in err.
 * Allocates with the C library's malloc: it also runs inside traced programs. */
int ts__raw_convert(const char *raw_path, const char *dir, char *out_path, size_t out_n,
                    char *err, size_t err_n);

#endif
