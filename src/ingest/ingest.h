/* ingest.h - internals shared by the ingest files: the byte source that hides
 * compression, and the one-file Chrome-trace JSON parser.
 *
 * Not for: the public loading API (include/trainscope/ingest.h) or the model
 * layout (trace/model.h). A source yields the uncompressed bytes of one file
 * in caller-sized pieces, so no file is ever held whole in memory.
 */
#ifndef TS_INGEST_INGEST_H
#define TS_INGEST_INGEST_H

#include <stdbool.h>
#include <stdint.h>

#include "trace/model.h"
#include "trainscope/ingest.h"

/* TS_SRC_MAP: an uncompressed regular file mapped whole (see source.c). */
typedef enum ts_src_kind { TS_SRC_MEM = 0, TS_SRC_PLAIN, TS_SRC_GZIP, TS_SRC_ZSTD, TS_SRC_MAP } ts_src_kind;

/* One input stream of uncompressed JSON bytes. Compression is detected from
 * the magic bytes, not the file name. */
typedef struct ts_src {
    const char   *name;        /* file name used in error messages (borrowed) */
    ts_src_kind   kind;
    int           fd;          /* -1 for memory sources */
    const char   *mem;         /* TS_SRC_MEM: the whole input (borrowed) */
    size_t        mem_n, mem_off; /* MEM: input size; MEM and MAP: bytes handed out by ts__src_read */
    unsigned char *in;         /* compressed input window (owned) */
    size_t        in_cap, in_n, in_off; /* bytes held / consumed in `in` */
    uint64_t      in_total;    /* compressed bytes read from the file so far */
    bool          in_eof;      /* the file has no more compressed bytes */
    bool          done;        /* the stream ended cleanly */
    bool          frame_end;   /* zstd: the last call ended a frame, so input may stop here */
    void         *dec;         /* struct inflate_state* (ISA-L) or ZSTD_DStream* (owned) */
    struct ts_src_pipe *pipe;  /* gzip/zstd files: the decoding thread and its chunks (owned), NULL = none */
    char         *map;         /* TS_SRC_MAP: file bytes, then >= TS_SRC_MAP_PAD zero bytes (owned) */
    size_t        map_n;       /* TS_SRC_MAP: file size, bytes */
    size_t        map_len;     /* TS_SRC_MAP: length of the whole mapping, bytes */
    size_t        map_released;/* TS_SRC_MAP: bytes [0, map_released) were given back (page multiple) */
} ts_src;

/* Zero bytes guaranteed after a mapped file's last byte (>= the scanner's JS_PAD). */
enum { TS_SRC_MAP_PAD = 4096 };

/* Open a file (plain, gzip or zstd). Fills err with `FILE: byte 0: ...` on
 * failure; the source is then closed already. */
TS_NODISCARD int ts__src_open(ts_src *s, const char *path, ts_error *err);
/* As ts__src_open; `spare_core` false keeps gzip/zstd decoding on the
 * caller's thread (when every core already parses a file of its own, a
 * decoding thread only adds hand-over cost). */
TS_NODISCARD int ts__src_open_file(ts_src *s, const char *path, bool spare_core, ts_error *err);
/* As ts__src_open_file(s, path, false, err), but a compressed regular file
 * is mapped and decoded from the mapping: no read(2) copy, no input window
 * to fault in, and each decoder call sees all the input (ISA-L then stops
 * only when the output is full). For readers that drain the file in one go
 * (pickle); the mapping is page cache, as large as the compressed file. */
TS_NODISCARD int ts__src_open_inplace(ts_src *s, const char *path, ts_error *err);
/* A source over bytes in memory (tests, fuzzing); compressed bytes are
 * recognized as in files. */
TS_NODISCARD int ts__src_open_mem(ts_src *s, const char *name, const void *data, size_t n, ts_error *err);
/* Read up to cap uncompressed bytes into dst. Returns the count (0 = end of
 * stream) or a negative TS_E* with err filled (a cut-short gzip/zstd stream). */
long ts__src_read(ts_src *s, char *dst, size_t cap, ts_error *err);
/* Uncompressed bytes the source will yield, estimated for sizing tables:
 * exact for memory and mapped files, 16x the file for gzip/zstd (JSON traces
 * compress 10-15x), the file size for other plain files; 0 = unknown. */
uint64_t ts__src_size_hint(const ts_src *s);
/* TS_SRC_MAP: the pages wholly below byte `upto` will not be read again soon;
 * drop them from the process (they come back from the page cache if touched). */
void ts__src_release(ts_src *s, size_t upto);
void ts__src_close(ts_src *s);
/* The whole uncompressed content at once, for binary formats that need
 * random access (see source.c); at most `limit` bytes. *owned (to
 * ts__free(*owned, *owned_cap)) is NULL when *data points into the source's
 * own mapping, which lives until ts__src_close. */
TS_NODISCARD int ts__src_slurp(ts_src *s, const char **data, size_t *n, char **owned, size_t *owned_cap,
                               size_t limit, ts_error *err);
/* Open path (plain, gzip or zstd), slurp it (at most limit bytes) and call
 * fn on the whole content; fn's status is returned. */
TS_NODISCARD int ts__with_file_bytes(const char *path, size_t limit, int (*fn)(void *ud, const char *data, size_t n),
                                     void *ud, ts_error *err);
/* The first bytes (up to cap) of a file's uncompressed content, for telling
 * formats apart; *n may be less than cap for a short file. */
TS_NODISCARD int ts__sniff_file(const char *path, unsigned char *head, size_t cap, size_t *n, ts_error *err);

/* Parse one source into a new rank (finished, ready for ts__job_create).
 * `order` is the rank number used when neither distributedInfo nor the file
 * name gives one. On failure *out is NULL and err holds the message. */
TS_NODISCARD int ts__ingest_json(ts_src *src, const char *path, int32_t order,
                                 const ts_load_opts *opts, ts_rank **out, ts_error *err);
/* counts_only: the rank goes to a summary that keeps no slice (info's
 * loads), so its slices' arg rows are not kept (n_args 0); everything info
 * counts (rows, warnings, flows, iterations) is as in a whole load. */
/* Convenience wrappers over ts__ingest_json. */
TS_NODISCARD int ts__ingest_json_file(const char *path, int32_t order, const ts_load_opts *opts,
                                      ts_rank **out, ts_error *err);
/* ts__ingest_json_file with the source's `spare_core` choice (see ts__src_open_file). */
TS_NODISCARD int ts__ingest_json_path(const char *path, int32_t order, const ts_load_opts *opts, bool spare_core,
                                      bool counts_only, ts_rank **out, ts_error *err);
TS_NODISCARD int ts__ingest_json_buffer(const char *name, const void *data, size_t n,
                                        const ts_load_opts *opts, ts_rank **out, ts_error *err);
/* ts__ingest_json_buffer as a counts_only read (info's; see above): for
 * fuzz_json, which checks that it counts what the whole read counts. */
TS_NODISCARD int ts__ingest_json_buffer_counts(const char *name, const void *data, size_t n, ts_rank **out,
                                               ts_error *err);

/* Several JSON files (a dPRO GPU folder's computation, communication and
 * I/O traces) into one rank named `name`; file i's pids are moved by i << 40
 * so their processes stay apart (a GPU stream's device is its pid: put the
 * file with GPU kinds first). */
TS_NODISCARD int ts__ingest_json_parts(const char *name, const char *const *paths, uint32_t n, int32_t order,
                                       const ts_load_opts *opts, bool counts_only, ts_rank **out, ts_error *err);

/* The rank number a file name carries (`rank-3`, `rank3`, `rank_3`), -1 = none. */
int32_t ts__rank_from_filename(const char *path);

/* Nsight Systems SQLite exports (nsys.c): one file, one rank. `head` holds
 * the file's first bytes; ts__nsys_is_export tells an SQLite file by its
 * magic. */
bool ts__nsys_is_sqlite(const unsigned char *head, size_t n);
TS_NODISCARD int ts__nsys_ingest(const char *path, int32_t order, const ts_load_opts *opts, ts_rank **out,
                                 ts_error *err);
/* The same over bytes in memory (tests, fuzzing). */
TS_NODISCARD int ts__nsys_ingest_buffer(const char *name, const void *data, size_t n, const ts_load_opts *opts,
                                        ts_rank **out, ts_error *err);

/* MLCommons Chakra execution traces (chakra.c): `*.et` by name (protobuf
 * has no magic). */
bool ts__chakra_is_name(const char *path);
/* summary: the rank only goes to ts__rank_summary (info's loads), so its
 * dependency flows are counted (ts_flows.n_counted), not stored. */
TS_NODISCARD int ts__chakra_ingest(const char *path, int32_t order, bool summary, ts_rank **out, ts_error *err);
TS_NODISCARD int ts__chakra_ingest_buffer(const char *name, const void *data, size_t n, ts_rank **out, ts_error *err);
/* TensorFlow 2 profiler XPlane captures (xplane.c): `*.xplane.pb` by name
 * (protobuf has no magic bytes), plain or compressed; one file, one rank.
 * counts_only (info's loads, as ts__ingest_json_path's): events' stats are
 * checked as in a whole load but become no arg rows (nor correlation ids);
 * rows, warnings, flows, iterations and errors are a whole load's. */
bool ts__xplane_is_name(const char *path);
TS_NODISCARD int ts__xplane_ingest(const char *path, int32_t order, bool counts_only, ts_rank **out, ts_error *err);
TS_NODISCARD int ts__xplane_ingest_buffer(const char *name, const void *data, size_t n, bool counts_only,
                                          ts_rank **out, ts_error *err);

/* PyTorch host execution traces (pytorch_et.c): JSON whose first key is
 * "schema". They carry no times, so they are not ranks: each is joined onto
 * the rank (already finished) that holds its process's Kineto trace. */
bool ts__et_is_host_et(const unsigned char *head, size_t n);
TS_NODISCARD int ts__et_join(const char *path, ts_rank **ranks, uint32_t n_ranks, ts_error *err);
/* The same over an ET's bytes in memory (plain JSON; tests, fuzzing). */
TS_NODISCARD int ts__et_join_buffer(const char *name, const void *data, size_t n, ts_rank **ranks, uint32_t n_ranks,
                                    ts_error *err);

/* TensorFlow 1 timelines (tf_timeline.c): after the JSON reader named the
 * tracks, before finish. True when the process names are timeline.py's
 * "<device> Compute"; tracks from first_track on (the file's own) are then
 * mapped to GPU streams and host ops and `note` says how. */
bool ts__tf1_timeline_map(ts_rank *r, uint32_t first_track, char *note, size_t cap);

/* dPRO trace folders (dpro.c): a GPU folder (computation trace temp.json
 * or trace.json.gz, comm.json, io.json...) is one rank. ts__dpro_gpu_dirs
 * calls add on every GPU folder at dir, below it (a worker's folder) or two
 * levels below (the trial's root), in order; it returns 1 when it found
 * any, 0 when dir is no dPRO folder, TS_ENOMEM (add's failure). */
typedef int (*ts__dpro_add_fn)(void *ud, const char *gpu_dir);
bool ts__dpro_is_gpu_dir(const char *dir);
int  ts__dpro_gpu_dirs(const char *dir, ts__dpro_add_fn add, void *ud);
TS_NODISCARD int ts__dpro_ingest(const char *dir, int32_t order, const ts_load_opts *opts, bool counts_only,
                                 ts_rank **out, ts_error *err);

/* CTF (LTTng) traces of trainscope's tracepoints, read through libbabeltrace2
 * (ctf.c): a directory with a `metadata` file in or below it is one; it loads
 * as one rank per traced process. */
bool ts__ctf_is_trace(const char *path);
TS_NODISCARD int ts__ctf_load(const char *path, const ts_load_opts *opts, ts_job **out, ts_error *err);
/* ctf_check.c: the packets of the CTF trace in dir (the folder of one
 * `metadata`) checked, before libbabeltrace2 reads them, for the values it
 * aborts or loops on: TS_EPARSE "FILE: byte N: what"; TS_OK also when the
 * metadata's packet layout is not one the check reads.
 * ts__ctf_check_layout_text: the same metadata parse alone (fuzz, tests):
 * TS_OK and the header's size in bits, TS_ENODATA when the layout is not
 * read, TS_ENOMEM. */
TS_NODISCARD int ts__ctf_check_packets(const char *dir, ts_error *err);
TS_NODISCARD int ts__ctf_check_layout_text(const char *text, size_t len, uint32_t *header_bits);

/* ---- a distributed load: one process's share of the rank files ----
 * Every process expands the same paths into the same list and loads the
 * files f with f % n_parts == part, each keeping its row of the whole list
 * as its order (so ranks numbered by order number as in a whole load); the
 * ranks come back finished, with the notes a whole load leaves (directory
 * entries skipped: on file 0's rank) and python_as_ops applied. On failure
 * failed_file is the row of the first file of the share that failed (0 when
 * the paths themselves did) and no rank is kept. See docs/distributed.md. */
typedef struct ts_load_share {
    ts_rank **ranks;        /* the share's ranks, n of them (owned) */
    uint32_t *file;         /* row of each rank's file in the whole list */
    uint32_t  n, cap;
    uint32_t  n_files;      /* files in the whole list */
    uint64_t  list_hash;    /* of the whole list: processes that saw other files disagree */
    uint32_t  failed_file;
    char      note[480];    /* ts__load_share_each: the skipped entries' note, "" = none (the caller places it) */
} ts_load_share;
TS_NODISCARD int ts__load_share(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts,
                                uint32_t part, uint32_t n_parts, ts_load_share *out, ts_error *err);
void ts__load_share_free(ts_load_share *s);
/* The same share one rank at a time, for a process that keeps only what it
 * reduces each rank to: fn takes each finished rank (file row f) as soon as
 * it is read; out gets the counts (n: ranks read), hash, failed file and the
 * note on skipped directory entries (left for the caller to place), no ranks
 * (set n to 0 before ts__load_share_free). */
typedef void (*ts_share_fn)(void *ctx, uint32_t f, ts_rank *r);
TS_NODISCARD int ts__load_share_each(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts,
                                     uint32_t part, uint32_t n_parts, ts_share_fn fn, void *ctx, ts_load_share *out,
                                     ts_error *err);
/* The trace of ranks gathered from every share: two files claiming one rank
 * is the error a whole load gives; takes the ranks, on failure too. */
TS_NODISCARD int ts__trace_from_ranks(ts_rank **ranks, uint32_t n, ts_job **out, ts_error *err);

/* ---- per-rank streaming (load.c): what ts_job_load does, one rank at a
 * time, for callers that keep a summary of each rank instead of the whole
 * trace (graph/stream.c's bounded path, the MPI plugin's share of ranks).
 * ts__trace_files expands paths (files, directories of rank files, in name
 * order) into *files (n owned paths, free with ts__trace_files_free), and
 * puts in note (cap bytes, "" = none) the warning a directory load leaves on
 * its first rank about entries it skipped; a missing, unreadable or
 * non-regular entry named like a trace is an error naming it. ts__load_rank
 * reads files[i] (order = i, the rank number when nothing else gives one)
 * into one finished rank, Python functions as ops where it has no CPU ops
 * (opts->python_depth). A CTF session is not a rank file: callers send a
 * single CTF path to ts_job_load. */
TS_NODISCARD int ts__trace_files(const char *const *paths, uint32_t n_paths, char ***files, uint32_t *n,
                                 char *note, size_t cap, ts_error *err);
void ts__trace_files_free(char **files, uint32_t n);
TS_NODISCARD int ts__load_rank(const char *path, int32_t order, const ts_load_opts *opts, bool spare_core,
                               ts_rank **out, ts_error *err);
/* ts_job_load for an analysis that reads only some slices of each rank:
 * each rank, as soon as its file is read (on the loader's thread, so at most
 * n_threads full ranks exist at once), is reduced by ts__rank_compact to the
 * slices keep(r, keep) marks (keep zeroed, one byte per slice: 1 = the
 * slice, 2 = with its args), corr kept when keep_ids (ext_id never). The analysis
 * must then read only what it marked (analyze/stats.c's ts_stats_load). */
typedef void (*ts_keep_fn)(const ts_rank *r, uint8_t *keep);
TS_NODISCARD int ts__trace_load_summary(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts,
                                        ts_keep_fn keep, bool keep_ids, ts_job **out, ts_error *err);
/* One finished rank reduced so (its summary into *out); full is destroyed,
 * on failure too. */
TS_NODISCARD int ts__rank_summary(ts_rank *full, ts_keep_fn keep, bool keep_ids, ts_rank **out, ts_error *err);

#endif
