/* record.h - what `trainscope record` uses of the capture side: the job's
 * status board (which processes traced, what never reached the disk),
 * converting the raw streams the job's processes left into trace files, and
 * the LTTng session behind --lttng.
 *
 * Not for: tracing a program (trace.h is the recording API) or reading the
 * trace files (ingest.h).
 * The board is DIR/.raw/status: record reserves it before the job starts (a
 * disk that fills later cannot take it) and names it to the job in
 * TRAINSCOPE_STATUS; every process that opens a stream claims a slot there.
 */
#ifndef TRAINSCOPE_RECORD_H
#define TRAINSCOPE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trainscope/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one raw stream's conversion counted (its JSON's "trainscope" block). */
typedef struct ts_record_losses {
    uint64_t dropped_events;     /* buffers full */
    uint64_t bad_records;        /* damaged records skipped */
    uint64_t unfinished_ranges;  /* still open at the end, closed there */
    uint64_t unmatched_ends;     /* pops and range ends without a begin */
    uint64_t cut_at_byte;        /* the stream's last chunk is incomplete from here, 0 = whole */
    uint64_t n_events;           /* events written to the JSON */
} ts_record_losses;
/* Convert the raw stream raw_path (DIR/.raw/NAME.tsr) into a trace file in dir,
 * written aside and renamed. TS_OK; TS_ENODATA for a stream without events
 * (nothing written); else a negative status and one line in err[0..err_n).
 * losses (may be NULL) gets the counts. */
TS_API TS_NODISCARD int ts_record_convert(const char *raw_path, const char *dir, char *err, size_t err_n,
                                          ts_record_losses *losses);
/* The process name in the stream's header ("" when unreadable). */
TS_API void ts_record_stream_comm(const char *raw_path, char *comm, size_t n);

#define TS_RECORD_STATUS_NAME "status"   /* the board's file name in DIR/.raw */
enum { TS_RECORD_STATUS_SLOTS = 1024 };  /* slot 0 is the header: 1023 processes are known */
/* Create abs_dir/.raw/status with its space reserved; its path goes to
 * path[0..path_n). On failure nothing is left and err says
 * "cannot reserve PATH (N bytes): why". */
TS_API TS_NODISCARD int ts_record_status_create(const char *abs_dir, char *path, size_t path_n, ts_error *err);
/* One process's slot of the board. */
typedef struct ts_record_slot {
    uint32_t pid;                /* 0 = unclaimed */
    bool     tracing;            /* it had not stopped tracing when the board was read */
    uint64_t lost;               /* events that never reached its stream (write failed) */
    int32_t  err;                /* errno of its first failed write, 0 = none */
    char     stream[17];         /* "<pid>-<seq>-", the prefix of its .tsr name; "" with err: never opened */
    char     comm[17];           /* its process name */
} ts_record_slot;
/* Read raw_dir/status: *n_claimed = streams started (claims past the last
 * slot counted too); slots[0..cap) get the claimed slots in order (slot 1
 * first). Returns how many were filled; -1 when there is no readable board
 * (*n_claimed = 0 then). */
TS_API int ts_record_status_read(const char *raw_dir, uint32_t *n_claimed, ts_record_slot *slots, uint32_t cap);

/* --lttng: create, configure and start session `name` writing CTF into
 * dir/lttng (through the `lttng` command); stop and destroy it. On failure
 * err says which lttng step failed and why. */
TS_API TS_NODISCARD int ts_record_lttng_start(const char *dir, const char *name, ts_error *err);
TS_API TS_NODISCARD int ts_record_lttng_stop(const char *name, ts_error *err);

#ifdef __cplusplus
}
#endif
#endif
