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

/* ---- after the job: what it left (ts_record_finish) ---- */
/* Its raw streams, one per process that loaded the tracer. */
typedef struct ts_record_streams {
    int      n_files;            /* trace files written */
    int      n_streams;          /* raw streams found */
    int      n_empty;            /* of those, streams without an event */
    int      n_failed;           /* could not be converted: they stay in DIR/.raw */
    int      n_left_live;        /* of processes still tracing: they stay in DIR/.raw */
    int      n_python;           /* of Python processes (comm python*) */
    uint64_t python_events;      /* events in their files */
    char     empty_names[96];    /* comms of the empty ones, comma-separated, cut */
    ts_record_losses sum;        /* losses over every file (dropped, bad, unfinished) */
    uint64_t n_cut;              /* streams whose last chunk is incomplete */
} ts_record_streams;
/* What the status board says about the job's processes. */
typedef struct ts_record_board {
    uint32_t n_claimed;          /* streams started (claims past the last slot too) */
    uint64_t lost;               /* events whose write failed */
    int      lost_errno;         /* the first failed write's errno */
    int      n_lossy;            /* processes that lost events that way */
    char     lossy_names[96];    /* their comms, comma-separated, cut */
    int      n_nostream;         /* processes whose stream could not be opened: all their events lost */
    int      nostream_errno;     /* the first one's errno */
    char     nostream_names[96];
    int      n_live;             /* still tracing now (daemons): their streams are not converted */
    char     live_names[160];    /* "pid 12 (sleep), ...", cut */
} ts_record_board;
/* What torch's profiler left in each process (--torch: one "key=value ..."
 * line per process in DIR/.raw/torch-<pid>.txt). */
typedef struct ts_record_torch {
    int      n, ok, failed, nowindow, unsaved;   /* processes, by state */
    uint64_t events, dropped;                    /* of the saved ones */
    long     steps_min;          /* optimizer steps of the nowindow ones, fewest */
    char     format[16];         /* "kineto" or the legacy profiler's name */
    char     window[32];         /* "A:B" steps recorded (B < 0: to the end), "" = every step */
    char     reason[200];        /* the first failure's reason */
} ts_record_torch;
typedef struct ts_record_job {
    ts_record_streams streams;
    ts_record_board   board;
    ts_record_torch   torch;
    bool              gradients;  /* DIR/.gradients.json is there (--torch saved the DDP model's) */
    bool              lost;       /* events were lost or a stream could not be converted */
} ts_record_job;
/* Called once per stream that could not be converted, with why (one line). */
typedef void (*ts_record_fail_fn)(void *ud, const char *why);
/* After the job (or for `record --convert`): convert every raw stream in
 * dir/.raw but those of processes still tracing (their files are removed
 * once converted), read the board and torch's lines, and remove the board
 * and dir/.raw when nothing is left there for --convert. Fills *out;
 * TS_ENOMEM leaves the streams unconverted. */
TS_API TS_NODISCARD int ts_record_finish(const char *dir, ts_record_job *out, ts_record_fail_fn on_fail, void *ud);

/* --lttng: create, configure and start session `name` writing CTF into
 * dir/lttng (through the `lttng` command); stop and destroy it. On failure
 * err says which lttng step failed and why. */
TS_API TS_NODISCARD int ts_record_lttng_start(const char *dir, const char *name, ts_error *err);
TS_API TS_NODISCARD int ts_record_lttng_stop(const char *name, ts_error *err);

#ifdef __cplusplus
}
#endif
#endif
