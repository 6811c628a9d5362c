/* rawfmt.h - the capture record: the binary stream a traced process writes
 * (DIR/.raw/<pid>-<n>-<t>.tsr) and the converter turns into Chrome-trace JSON.
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
 *   size        2      whole record incl. header and padding, multiple of 8, >= 16
 *                      (a TS__REC_PAD record may be 8: only size and type are written)
 *   type        1      ts__rec_type
 *   flags       1      TS__RECF_TRACK: pid, tid (int64 each) follow v
 *                      TS__RECF_FLOW:  flow id (uint64) follows (after pid/tid)
 *                      TS__RECF_NS:    ts_ns is CLOCK_MONOTONIC ns whatever the stream's clock
 *   n_args      1      number of args after the strings
 *   flow_phase  1      's', 't', 'f' for TS__REC_FLOW and flows on X events; 0 = none
 *   str_id      2      TS__REC_SDEF / TS__REC_BREF: the (cat, name) pair's id in this buffer
 *   ts_ns       8      the stream's clock (header clock_kind): ns, or TSC ticks
 *   v           8      only for X (dur_ns), C (double bits), AB/AE/FLOW (id), RANK (rank<<32 | world)
 *                      and any record with TS__RECF_TRACK (emitted events share one layout)
 *   strings            NUL-terminated: cat, name (B, X, I, AB, SDEF), name (C, TNAME), cat (FLOW);
 *                      then the flow category when TS__RECF_FLOW
 *   args               n_args of: key NUL, tag 'i' + int64 (unaligned) | tag 's' + string NUL
 *                      | tag 'j' + string NUL that the caller said is JSON text (up to 2047 bytes)
 *   padding            zero bytes up to size
 * A push of a (cat, name) pair the buffer has seen is a 16-byte BREF naming
 * the pair by the id an earlier SDEF record of the same buffer gave it; a pop
 * is a 16-byte E. So the hot push/pop pair costs 32 bytes of stream.
 */
#ifndef TS_CAPTURE_RAWFMT_H
#define TS_CAPTURE_RAWFMT_H

#include <stddef.h>
#include <stdint.h>

#define TS__RAW_MAGIC "TSRAW02"          /* 8 bytes with the NUL */
#define TS__RAW_CHUNK_MAGIC 0x4b434854u  /* "THCK" */

typedef struct ts__raw_header {
    char     magic[8];             /* TS__RAW_MAGIC */
    uint32_t pid, ppid;            /* of the writing process */
    int64_t  realtime_offset_ns;   /* CLOCK_REALTIME - CLOCK_MONOTONIC at start, aligns hosts */
    int64_t  start_ns;             /* CLOCK_MONOTONIC when tracing started */
    int32_t  rank, world_size;     /* from the environment at start, -1 = unknown */
    char     comm[64];             /* process name (/proc/self/comm), NUL-terminated */
    uint32_t clock_kind;           /* TS__CLOCK_NS or TS__CLOCK_TSC: unit of fast-path ts_ns */
    uint32_t reserved;             /* 0 */
    uint64_t start_tsc;            /* TSC read together with start_ns (TS__CLOCK_TSC) */
} ts__raw_header;

/* Fast-path records read the clock that is cheapest: the invariant TSC where
 * the CPU has one (a plain rdtsc, no vDSO call), else CLOCK_MONOTONIC. TSC
 * values are turned into ns at conversion, piecewise linearly between the
 * (TSC, ns) samples of the header and of every chunk (taken when the chunk
 * is written): an event lies between two samples, so the error stays within
 * the jitter of reading the two clocks together (tens of ns), and a change in
 * CLOCK_MONOTONIC's rate (NTP slewing) during a long run is followed. */
enum { TS__CLOCK_NS = 0, TS__CLOCK_TSC = 1 };

typedef struct ts__raw_chunk {
    uint32_t magic;       /* TS__RAW_CHUNK_MAGIC */
    uint32_t buf_id;      /* thread buffer number, dense from 0 */
    uint32_t tid;         /* OS thread id owning the buffer */
    uint32_t reserved;    /* 0 */
    uint64_t dropped;     /* events this buffer dropped so far (cumulative) */
    uint64_t n_bytes;     /* record bytes that follow, multiple of 8 */
    int64_t  sample_ns;   /* CLOCK_MONOTONIC when the chunk was written */
    uint64_t sample_tsc;  /* TSC read together with sample_ns (0 when not TSC) */
} ts__raw_chunk;

typedef enum ts__rec_type {
    TS__REC_PAD = 0,    /* filler to the end of a ring; skipped */
    TS__REC_B,          /* push: cat, name (when the pair cache cannot be used) */
    TS__REC_SDEF,       /* defines str_id as the (cat, name) that follow; no event */
    TS__REC_BREF,       /* push of the pair str_id */
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

enum { TS__RECF_TRACK = 1, TS__RECF_FLOW = 2, TS__RECF_NS = 4 };  /* NS: ts_ns is ns even in a TSC stream */

typedef struct ts__rec {
    uint16_t size;
    uint8_t  type, flags;
    uint8_t  n_args, flow_phase;
    uint16_t str_id;
    int64_t  ts_ns;
} ts__rec;

/* Whether a record of this type carries the 8-byte v after the header. */
static inline int ts__rec_has_v(unsigned type)
{
    return type == TS__REC_X || type == TS__REC_C || type == TS__REC_AB || type == TS__REC_AE ||
           type == TS__REC_FLOW || type == TS__REC_RANK;
}

/* Bytes between the header and the track/flow fields: 8 when v is present
 * (its type has one, or the record was emitted with a track). */
static inline unsigned ts__rec_v_bytes(const ts__rec *r)
{
    return ts__rec_has_v(r->type) || (r->flags & TS__RECF_TRACK) ? 8 : 0;
}

/* Convert the raw stream at raw_path into DIR/rank-<R>.<pid>.json (or
 * pid-<pid>.json), merging the thread streams in time order, pairing
 * push/pop and begin/end into complete events, naming tracks and recording
 * dropped counts. The file appears atomically (written aside, renamed). On
 * success the written path goes to out_path (may be NULL) and TS_OK (0) is
 * returned; a stream without events writes nothing and returns TS_ENODATA;
 * on failure a negative status and a one-line message in err. losses (may
 * be NULL) gets what the JSON's "trainscope" block counts, for the caller to
 * report.
 * Allocates with the C library's malloc: it also runs inside traced programs. */
typedef struct ts__raw_losses {
    uint64_t dropped_events;     /* buffers full */
    uint64_t bad_records;        /* damaged records skipped */
    uint64_t unfinished_ranges;  /* still open at the end, closed there */
    uint64_t unmatched_ends;     /* pops and range ends without a begin */
    uint64_t cut_at_byte;        /* the stream's last chunk is incomplete from here (killed, disk full), 0 = whole */
    uint64_t n_events;           /* events written to the JSON */
} ts__raw_losses;
int ts__raw_convert(const char *raw_path, const char *dir, char *out_path, size_t out_n,
                    char *err, size_t err_n, ts__raw_losses *losses);

/* The job's status board, DIR/.raw/status: `trainscope record` creates it
 * (TS__STATUS_BYTES, space reserved before the job starts, so a disk that
 * fills later cannot take it) and names it in TRAINSCOPE_STATUS; every
 * process that starts a stream maps it shared and claims a slot, so record
 * learns what never reached the disk: events whose write failed (with the
 * errno) and processes still tracing when the job ended (daemons). Slot 0 is
 * the header; its n_claimed counts every claim, those past the last slot
 * too. Fields are updated with __atomic builtins (lock-free, signal-safe). */
#define TS__STATUS_NAME  "status"
#define TS__STATUS_MAGIC "TSSTAT01"
#define TS__STATUS_SLOTS 1024                /* slot 0 = header; 64 KiB */
typedef struct ts__status_slot {
    char     magic[8];   /* header: TS__STATUS_MAGIC; slots: unused */
    uint32_t pid;        /* 0 = unclaimed; header: n_claimed */
    uint32_t state;      /* TS__STATUS_TRACING, then TS__STATUS_CLOSED at stop */
    uint64_t lost;       /* events that never reached the stream (write failed) */
    int32_t  err;        /* errno of the first failed write, 0 = none */
    uint32_t pad;
    char     stream[16]; /* "<pid>-<seq>-": the prefix of its .tsr name; "" with err: it could not be opened */
    char     comm[16];
} ts__status_slot;
enum { TS__STATUS_TRACING = 1, TS__STATUS_CLOSED = 2 };
#define TS__STATUS_BYTES (TS__STATUS_SLOTS * sizeof(ts__status_slot))

#endif
