/* load.c - ts_job_load(): expand paths (files, directories of per-rank
 * files), parse each file into a rank on a pool of threads, build the trace.
 *
 * Not for: parsing (chrome_json.c). Ranks share nothing while loading (each
 * has its own string pool and tables), so the workers take files from an
 * atomic counter and never lock. The first failure (in input order) wins.
 */
#include "ingest/ingest.h"

#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct file_list {
    char   **v;           /* owned paths, in load order */
    uint32_t n, cap;
} file_list;

static int list_add(file_list *l, const char *path)
{
    if (l->n == l->cap && ts__grow((void **)&l->v, &l->cap, sizeof *l->v, (size_t)l->n + 1)) return TS_ENOMEM;
    l->v[l->n] = ts__strdup(path);
    if (!l->v[l->n]) return TS_ENOMEM;
    l->n++;
    return TS_OK;
}

static void list_free(file_list *l)
{
    for (uint32_t i = 0; i < l->n; i++) ts__free(l->v[i], strlen(l->v[i]) + 1);
    ts__free(l->v, (size_t)l->cap * sizeof *l->v);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool is_trace_name(const char *name)
{
    return name[0] != '.' &&
           (ends_with(name, ".json") || ends_with(name, ".json.gz") || ends_with(name, ".json.zst") ||
            ends_with(name, ".sqlite") || ends_with(name, ".sqlite.gz") || ends_with(name, ".sqlite.zst") ||
            ts__xplane_is_name(name) || ts__chakra_is_name(name));
}

/* What a rank is read for: kept whole; reduced by ts__rank_summary to what
 * its keep function marks (flows counted, not stored); or to nothing but
 * its counts (info: slices' args not kept either). */
typedef enum load_mode { LOAD_WHOLE, LOAD_SUMMARY, LOAD_COUNTS } load_mode;

/* One file into one rank, by what its first bytes say it is (a folder: a
 * dPRO GPU folder, which expand_paths listed as one): an SQLite
 * database is an Nsight Systems export; a protobuf has no magic, so a
 * `*.xplane.pb` name means a TensorFlow XPlane, `*.et` a Chakra execution
 * trace; anything else JSON. */
static int ingest_file(const char *path, int32_t order, const ts_load_opts *opts, bool spare_core, load_mode mode,
                       ts_rank **out, ts_error *err)
{
    bool summary = mode != LOAD_WHOLE, counts = mode == LOAD_COUNTS;
    unsigned char head[64];
    size_t n = 0;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return ts__dpro_ingest(path, order, opts, counts, out, err);
    int rc = ts__sniff_file(path, head, sizeof head, &n, err);
    if (rc) { *out = NULL; return rc; }
    if (ts__nsys_is_sqlite(head, n)) return ts__nsys_ingest(path, order, opts, out, err);
    if (ts__xplane_is_name(path)) return ts__xplane_ingest(path, order, counts, out, err);
    if (ts__chakra_is_name(path)) return ts__chakra_ingest(path, order, summary, out, err);
    return ts__ingest_json_path(path, order, opts, spare_core, counts, out, err);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Why path cannot be loaded as a trace file (stat failed with errno e, or it
 * is not a regular file): a dangling link, a link loop, a fifo... Never
 * opens it, so a fifo cannot block the load. */
static int unreadable(const char *path, const struct stat *st, int e, ts_error *err)
{
    struct stat lst;
    if (st) {
        const char *what = S_ISDIR(st->st_mode) ? "a directory" : S_ISFIFO(st->st_mode) ? "a fifo"
                         : S_ISSOCK(st->st_mode) ? "a socket" : S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ? "a device"
                         : "not a regular file";
        return ts__error(err, TS_EIO, "%s: byte 0: %s, not a trace file", path, what);
    }
    if (e == ELOOP) return ts__error(err, TS_ENOENT, "%s: byte 0: a loop of symbolic links", path);
    if (e == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        char to[512];
        ssize_t n = readlink(path, to, sizeof to - 1);
        to[n > 0 ? n : 0] = 0;
        return ts__error(err, TS_ENOENT, "%s: byte 0: a symbolic link to '%s', which does not exist", path, to);
    }
    if (e == ENOENT) return ts__error(err, TS_ENOENT, "%s: byte 0: no such file or directory", path);
    return ts__error(err, TS_EIO, "%s: byte 0: %s", path, strerror(e));
}

/* The note a directory load leaves on its first rank: the entries it did
 * not take, as they were not named like traces. */
typedef struct skip_note {
    char     msg[400];
    uint32_t n;          /* entries skipped in all */
} skip_note;

static void note_skip(skip_note *sk, const char *dir, const char *name)
{
    size_t len = strlen(sk->msg);
    if (sk->n++ == 0)
        len += (size_t)snprintf(sk->msg, sizeof sk->msg, "%s: skipped entries not named like a trace "
                                "(*.json, *.json.gz, *.json.zst): ", dir);
    if (sk->n <= 5 && len < sizeof sk->msg)
        snprintf(sk->msg + len, sizeof sk->msg - len, "%s%s", sk->n > 1 ? ", " : "", name);
}

/* Trace files directly inside dir, in name order. An entry named like a
 * trace that is not a readable regular file (a dangling link, a link loop,
 * a fifo, a directory) is an error: the job would be analysed with a rank
 * fewer. Other entries are skipped and noted in sk. */
static int expand_dir(file_list *l, const char *dir, skip_note *sk, ts_error *err)
{
    DIR *d = opendir(dir);
    if (!d) return ts__error(err, errno == ENOENT ? TS_ENOENT : TS_EIO, "%s: byte 0: cannot open directory (%s)", dir,
                             strerror(errno));
    uint32_t first = l->n;
    struct dirent *de;
    int rc = TS_OK;
    while (rc == TS_OK && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        /* .gradients.json: the side file `record --torch` writes beside the
         * ranks' traces (the model's gradients, for optimize), not a rank */
        if (!strcmp(de->d_name, ".gradients.json")) continue;
        if (!is_trace_name(de->d_name)) { note_skip(sk, dir, de->d_name); continue; }
        size_t n = strlen(dir) + strlen(de->d_name) + 2;
        char *p = ts__malloc(n);
        if (!p) { rc = ts__error(err, TS_ENOMEM, "%s: out of memory", dir); break; }
        snprintf(p, n, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(p, &st) != 0) rc = unreadable(p, NULL, errno, err);
        else if (!S_ISREG(st.st_mode)) rc = unreadable(p, &st, 0, err);
        else if ((rc = list_add(l, p)) != TS_OK) ts__error(err, rc, "%s: out of memory", dir);
        ts__free(p, n);
    }
    closedir(d);
    if (rc) return rc;
    if (l->n == first)
        return ts__error(err, TS_ENOENT, "%s: byte 0: directory holds no trace files (*.json, *.json.gz, *.json.zst, "
                         "*.sqlite, *.xplane.pb, *.et)", dir);
    qsort(l->v + first, l->n - first, sizeof *l->v, cmp_str);
    return TS_OK;
}

static int add_dpro(void *ud, const char *gpu_dir) { return list_add(ud, gpu_dir); }

/* A directory: the GPU folders of a dPRO trace at or below it, one rank
 * each, or else its trace files. */
static int expand_tree(file_list *l, const char *dir, skip_note *sk, ts_error *err)
{
    int k = ts__dpro_gpu_dirs(dir, add_dpro, l);
    if (k < 0) return ts__error(err, TS_ENOMEM, "%s: out of memory", dir);
    return k ? TS_OK : expand_dir(l, dir, sk, err);
}

static int expand_paths(file_list *l, const char *const *paths, uint32_t n, skip_note *sk, ts_error *err)
{
    for (uint32_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) return unreadable(paths[i], NULL, errno, err);
        int rc = S_ISDIR(st.st_mode) ? expand_tree(l, paths[i], sk, err) : list_add(l, paths[i]);
        if (rc == TS_ENOMEM) return ts__error(err, rc, "%s: out of memory", paths[i]);
        if (rc) return rc;
    }
    return TS_OK;
}

int32_t ts__rank_from_filename(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (const char *p = base; *p; p++) {
        if (strncasecmp(p, "rank", 4) != 0) continue;
        const char *q = p + 4;
        if (*q == '-' || *q == '_') q++;
        if (!isdigit((unsigned char)*q)) continue;
        long v = 0;
        for (; isdigit((unsigned char)*q) && v < INT32_MAX / 10; q++) v = v * 10 + (*q - '0');
        return (int32_t)v;
    }
    return -1;
}

/* ---- the worker pool ---- */
typedef struct job {
    const file_list    *files;
    const ts_load_opts *opts;   /* may be NULL */
    const uint32_t *idx;        /* the files to load: rows of files, NULL = all of them */
    uint32_t   n;               /* files to load (idx's length, or files->n) */
    ts_rank  **ranks;           /* one slot per file loaded, written by the worker that took it */
    ts_error  *errs;            /* one per file */
    int       *rcs;             /* one status per file */
    bool       spare_core;      /* fewer workers than cores: compressed files may decode on a thread of their own */
    ts_keep_fn keep;            /* summary loads: what each rank keeps (NULL = all) */
    bool       keep_ids;
    atomic_uint next;           /* next file index to take */
} job;

static int load_rank(const char *path, int32_t order, const ts_load_opts *opts, bool spare_core, load_mode mode,
                     ts_rank **out, ts_error *err);
static void keep_none(const ts_rank *r, uint8_t *keep);

/* File f (slot i) into a rank, reduced at once to what jb->keep marks. */
static int load_summary(job *jb, uint32_t i, uint32_t f)
{
    ts_rank *full = NULL;
    load_mode mode = jb->keep == keep_none ? LOAD_COUNTS : LOAD_SUMMARY;
    int rc = load_rank(jb->files->v[f], (int32_t)f, jb->opts, jb->spare_core, mode, &full, &jb->errs[i]);
    return rc ? rc : ts__rank_summary(full, jb->keep, jb->keep_ids, &jb->ranks[i], &jb->errs[i]);
}

int ts__rank_summary(ts_rank *full, ts_keep_fn keep_fn, bool keep_ids, ts_rank **out, ts_error *err)
{
    *out = NULL;
    size_t n = (size_t)full->slices.n + 1;
    uint8_t *keep = ts__calloc(n, 1);
    uint32_t *map = ts__malloc(n * sizeof *map);
    int rc = !keep || !map ? ts__error(err, TS_ENOMEM, "%s: out of memory", full->path) : TS_OK;
    if (rc == TS_OK) {
        keep_fn(full, keep);
        rc = ts__rank_compact(full, keep, map, keep_ids, out, err);
    }
    ts__free(keep, n);
    ts__free(map, n * sizeof *map);
    ts__rank_destroy(full);
    return rc;
}

static void *worker(void *arg)
{
    job *jb = arg;
    for (;;) {
        uint32_t i = atomic_fetch_add(&jb->next, 1);
        if (i >= jb->n) break;
        uint32_t f = jb->idx ? jb->idx[i] : i;   /* the rank's order is its row in the whole list */
        if (jb->keep)
            jb->rcs[i] = load_summary(jb, i, f);
        else
            jb->rcs[i] = ingest_file(jb->files->v[f], (int32_t)f, jb->opts, jb->spare_core, LOAD_WHOLE, &jb->ranks[i],
                                     &jb->errs[i]);
    }
    return NULL;
}

/* Input bytes a worker should have before another one starts. Why: a
 * second thread's start, its own malloc arena and the two threads'
 * contention cost more CPU time than the few milliseconds of wall time it
 * saves on a small load (a 4.7 MB dPRO folder of 4 ranks: 7.1 ms of CPU
 * on one thread, 9.9 ms on two, for 9.1 and 9.4 ms of wall time on a
 * loaded 2-core machine; docs/ingest.md). */
enum { BYTES_PER_WORKER = 8 << 20 };

/* About how much trace a path holds, up to `enough`: a file's size (a
 * compressed one counted 8 times), a folder's (a dPRO GPU folder) the sum
 * of the files in it. */
static uint64_t file_bytes(const char *path, const struct stat *st)
{
    uint64_t n = (uint64_t)(st->st_size > 0 ? st->st_size : 0);
    return ends_with(path, ".gz") || ends_with(path, ".zst") ? n * 8 : n;
}

static uint64_t input_bytes(const char *path, uint64_t enough)
{
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    if (S_ISREG(st.st_mode)) return file_bytes(path, &st);
    if (!S_ISDIR(st.st_mode)) return 0;
    DIR *d = opendir(path);
    uint64_t sum = 0;
    struct dirent *de;
    while (d && sum < enough && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, de->d_name);
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) sum += file_bytes(p, &st);
    }
    if (d) closedir(d);
    return sum;
}

/* Threads for files idx[0..n) (NULL: the first n): n_threads when set,
 * else the online cores, no more than the files, and one per
 * BYTES_PER_WORKER of input. */
static int n_workers(const ts_load_opts *opts, const file_list *files, const uint32_t *idx, uint32_t n_files)
{
    bool asked = opts && opts->size >= offsetof(ts_load_opts, n_threads) + sizeof(int) && opts->n_threads > 0;
    long n = asked ? opts->n_threads : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if ((uint32_t)n > n_files) n = (long)n_files;
    if (!asked && n > 1) {
        uint64_t enough = (uint64_t)n * BYTES_PER_WORKER, bytes = 0;
        for (uint32_t i = 0; i < n_files && bytes < enough; i++)
            bytes += input_bytes(files->v[idx ? idx[i] : i], enough);
        if (bytes < enough) n = bytes / BYTES_PER_WORKER > 1 ? (long)(bytes / BYTES_PER_WORKER) : 1;
    }
    return (int)n;
}

/* Runs the pool on files idx[0..n) (NULL: all files), each rank reduced to
 * what keep marks (NULL: kept whole); returns the first failure in file order
 * (its position in *failed when not NULL), ranks all freed. */
static int load_some(const file_list *files, const uint32_t *idx, uint32_t n, const ts_load_opts *opts,
                     ts_keep_fn keep, bool keep_ids, ts_rank **ranks, uint32_t *failed, ts_error *err)
{
    job jb = {.files = files, .idx = idx, .n = n, .opts = opts, .ranks = ranks, .keep = keep, .keep_ids = keep_ids};
    jb.errs = ts__calloc(n ? n : 1, sizeof *jb.errs);
    jb.rcs = ts__calloc(n ? n : 1, sizeof *jb.rcs);
    if (!jb.errs || !jb.rcs) {
        ts__free(jb.errs, (n ? n : 1) * sizeof *jb.errs);
        ts__free(jb.rcs, (n ? n : 1) * sizeof *jb.rcs);
        return ts__error(err, TS_ENOMEM, "out of memory");
    }
    atomic_init(&jb.next, 0);
    int nw = n ? n_workers(opts, files, idx, n) : 1;
    jb.spare_core = nw < sysconf(_SC_NPROCESSORS_ONLN);
    pthread_t tids[64];
    if (nw > 64) nw = 64;
    int started = 0;
    for (int i = 1; i < nw; i++)
        if (pthread_create(&tids[started], NULL, worker, &jb) == 0) started++;
    worker(&jb);   /* the calling thread works too */
    for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
    int rc = TS_OK;
    for (uint32_t i = 0; i < n && rc == TS_OK; i++)
        if (jb.rcs[i] != TS_OK) {
            rc = jb.rcs[i];
            if (err) *err = jb.errs[i];
            if (failed) *failed = i;
        }
    if (rc != TS_OK)
        for (uint32_t i = 0; i < n; i++) { ts__rank_destroy(ranks[i]); ranks[i] = NULL; }
    ts__free(jb.errs, (n ? n : 1) * sizeof *jb.errs);
    ts__free(jb.rcs, (n ? n : 1) * sizeof *jb.rcs);
    return rc;
}

static int load_all(const file_list *files, const ts_load_opts *opts, ts_keep_fn keep, bool keep_ids, ts_rank **ranks,
                    ts_error *err)
{
    return load_some(files, NULL, files->n, opts, keep, keep_ids, ranks, NULL, err);
}

static int cmp_rank_ptr(const void *a, const void *b)
{
    const ts_rank *x = *(ts_rank *const *)a, *y = *(ts_rank *const *)b;
    if (x->rank != y->rank) return (x->rank > y->rank) - (x->rank < y->rank);
    return strcmp(x->path, y->path);
}

/* Two files claiming one rank is an input error; say so in the `FILE: byte
 * OFFSET:` form before the trace is built. O(n log n). */
static int check_unique_ranks(ts_rank **ranks, uint32_t n, ts_error *err)
{
    if (n < 2) return TS_OK;
    ts_rank **v = ts__malloc(n * sizeof *v);
    if (!v) return ts__error(err, TS_ENOMEM, "out of memory");
    memcpy(v, ranks, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_rank_ptr);
    int rc = TS_OK;
    for (uint32_t i = 1; i < n && rc == TS_OK; i++)
        if (v[i]->rank == v[i - 1]->rank)
            rc = ts__error(err, TS_EFORMAT, "%s: byte 0: claims rank %d, which %s already claims",
                           v[i]->path, v[i]->rank, v[i - 1]->path);
    ts__free(v, n * sizeof *v);
    return rc;
}

static int trace_load(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts, ts_keep_fn keep,
                      bool keep_ids, bool not_ctf, ts_job **out, ts_error *err);

/* PyTorch host execution traces out of `files` into `ets`: they are no
 * ranks, but join the ranks once those are read (pytorch_et.c). */
static int split_ets(file_list *files, file_list *ets, ts_error *err)
{
    uint32_t k = 0;
    int rc = TS_OK;
    for (uint32_t i = 0; i < files->n; i++) {
        unsigned char head[64];
        size_t n = 0;
        const char *p = files->v[i];
        bool et = false;
        struct stat st;
        if (rc == TS_OK && !ts__xplane_is_name(p) && !ts__chakra_is_name(p) && !(stat(p, &st) == 0 && S_ISDIR(st.st_mode))) {
            rc = ts__sniff_file(p, head, sizeof head, &n, err);
            et = rc == TS_OK && ts__et_is_host_et(head, n);
        }
        if (et && ets->n == ets->cap && ts__grow((void **)&ets->v, &ets->cap, sizeof *ets->v, (size_t)ets->n + 1))
            rc = ts__error(err, TS_ENOMEM, "%s: out of memory", p), et = false;
        if (et) ets->v[ets->n++] = files->v[i];
        else files->v[k++] = files->v[i];
    }
    files->n = k;
    if (rc == TS_OK && k == 0 && ets->n)
        rc = ts__error(err, TS_EFORMAT, "%s: byte 0: not a Chrome trace but a PyTorch execution trace (Chakra ET), "
                       "which has no op times: give the Kineto trace of the same run beside it", ets->v[0]);
    return rc;
}

static int join_ets(const file_list *ets, ts_rank **ranks, uint32_t n_ranks, ts_error *err)
{
    int rc = TS_OK;
    for (uint32_t i = 0; i < ets->n && rc == TS_OK; i++) rc = ts__et_join(ets->v[i], ranks, n_ranks, err);
    return rc;
}

/* Python functions as the ops of ranks that have no CPU ops (see ingest.h). */
static void python_as_ops(ts_job *t, const ts_load_opts *opts)
{
    uint32_t depth = opts && opts->size >= offsetof(ts_load_opts, python_depth) + sizeof(uint32_t)
                         ? opts->python_depth : 0;
    for (uint32_t i = 0; t && i < t->n_ranks; i++) ts__rank_python_as_ops(t->ranks[i], depth);
}

int ts_job_load(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts,
                  ts_job **out, ts_error *err)
{
    int rc = trace_load(paths, n_paths, opts, NULL, false, false, out, err);
    if (rc == TS_OK) python_as_ops(*out, opts);
    return rc;
}

/* info reads no slice (ts_rank_read_counts keeps their counts). */
static void keep_none(const ts_rank *r, uint8_t *keep) { (void)r; (void)keep; }

int ts_job_load_info(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts, ts_job **out,
                     ts_error *err)
{
    return ts__trace_load_summary(paths, n_paths, opts, keep_none, false, out, err);
}

int ts__trace_load_summary(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts, ts_keep_fn keep,
                           bool keep_ids, ts_job **out, ts_error *err)
{
    if (n_paths == 1 && paths && ts__ctf_is_trace(paths[0])) return ts_job_load(paths, n_paths, opts, out, err);
    /* not_ctf: the walk of a folder for CTF metadata is not done twice */
    return trace_load(paths, n_paths, opts, keep, keep_ids, true, out, err);   /* python_as_ops: per rank, before keep */
}

/* not_ctf: the caller found that paths is no CTF trace. */
static int trace_load(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts, ts_keep_fn keep,
                      bool keep_ids, bool not_ctf, ts_job **out, ts_error *err)
{
    if (err) { err->status = TS_OK; err->msg[0] = 0; }
    if (!out) return ts__error(err, TS_EINVAL, "ts_job_load: out is NULL");
    *out = NULL;
    if (!paths || n_paths == 0) return ts__error(err, TS_EINVAL, "ts_job_load: no paths given");
    ts__mem_phase("loading rank files");
    if (!not_ctf && n_paths == 1 && ts__ctf_is_trace(paths[0])) return ts__ctf_load(paths[0], opts, out, err);
    file_list files = {0}, ets = {0};
    skip_note sk = {.n = 0};
    int rc = expand_paths(&files, paths, n_paths, &sk, err);
    if (rc == TS_OK) rc = split_ets(&files, &ets, err);
    if (ets.n) keep = NULL;   /* the join reads each op's args: ranks stay whole (ts_stats_load too) */
    ts_rank **ranks = NULL;
    if (rc == TS_OK) {
        ranks = ts__calloc(files.n, sizeof *ranks);
        if (!ranks) rc = ts__error(err, TS_ENOMEM, "out of memory");
    }
    if (rc == TS_OK) rc = load_all(&files, opts, keep, keep_ids, ranks, err);
    if (rc == TS_OK && ((rc = check_unique_ranks(ranks, files.n, err)) != TS_OK ||
                        (rc = join_ets(&ets, ranks, files.n, err)) != TS_OK))
        for (uint32_t i = 0; i < files.n; i++) ts__rank_destroy(ranks[i]);
    if (rc == TS_OK && sk.n)
        ts__rank_warn(ranks[0], TS_WARN_OTHER, "%s%s (%u in all)", sk.msg, sk.n > 5 ? ", ..." : "", sk.n);
    if (rc == TS_OK) rc = ts__job_create(ranks, files.n, out, err);
    if (ranks) ts__free(ranks, files.n * sizeof *ranks);
    list_free(&files);
    list_free(&ets);
    return rc;
}

/* ---- one process's share of a distributed load (docs/distributed.md) ---- */

static uint64_t list_hash(const file_list *l)
{
    uint64_t h = ts__hash_u64(l->n);
    for (uint32_t i = 0; i < l->n; i++) h = ts__hash_u64(h ^ ts__hash_bytes(l->v[i], strlen(l->v[i])));
    return h;
}

void ts__load_share_free(ts_load_share *s)
{
    for (uint32_t i = 0; i < s->n; i++) ts__rank_destroy(s->ranks[i]);
    ts__free(s->ranks, (size_t)(s->cap ? s->cap : 1) * sizeof *s->ranks);
    ts__free(s->file, (size_t)(s->cap ? s->cap : 1) * sizeof *s->file);
    memset(s, 0, sizeof *s);
}

/* The whole list every process expands alike, its count and hash in out. */
static int share_list(const char *const *paths, uint32_t n_paths, uint32_t part, uint32_t n_parts, file_list *files,
                      skip_note *sk, ts_load_share *out, ts_error *err)
{
    memset(out, 0, sizeof *out);
    if (err) { err->status = TS_OK; err->msg[0] = 0; }
    if (!paths || n_paths == 0 || n_parts == 0 || part >= n_parts)
        return ts__error(err, TS_EINVAL, "ts__load_share: no paths or no such part");
    ts__mem_phase("loading rank files");
    if (n_paths == 1 && ts__ctf_is_trace(paths[0]))
        return ts__error(err, TS_EINVAL, "%s: byte 0: a CTF trace is read whole, not shared out by rank file; "
                         "analyse it in one process", paths[0]);
    int rc = expand_paths(files, paths, n_paths, sk, err);
    if (rc == TS_OK) {
        out->n_files = files->n;
        out->list_hash = list_hash(files);
    }
    return rc;
}

int ts__load_share_each(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts, uint32_t part,
                        uint32_t n_parts, ts_share_fn fn, void *ctx, ts_load_share *out, ts_error *err)
{
    file_list files = {0};
    skip_note sk = {.n = 0};
    int rc = share_list(paths, n_paths, part, n_parts, &files, &sk, out, err);
    if (rc == TS_OK && sk.n)
        snprintf(out->note, sizeof out->note, "%s%s (%u in all)", sk.msg, sk.n > 5 ? ", ..." : "", sk.n);
    for (uint32_t f = part; rc == TS_OK && f < files.n; f += n_parts) {
        ts_rank *r = NULL;
        if ((rc = ts__load_rank(files.v[f], (int32_t)f, opts, false, &r, err)) != TS_OK) {
            out->failed_file = f;
            break;
        }
        out->n++;
        fn(ctx, f, r);
    }
    list_free(&files);
    return rc;
}

int ts__load_share(const char *const *paths, uint32_t n_paths, const ts_load_opts *opts, uint32_t part,
                   uint32_t n_parts, ts_load_share *out, ts_error *err)
{
    file_list files = {0};
    skip_note sk = {.n = 0};
    int rc = share_list(paths, n_paths, part, n_parts, &files, &sk, out, err);
    if (rc == TS_OK) {
        out->cap = files.n / n_parts + 1;
        out->ranks = ts__calloc(out->cap, sizeof *out->ranks);
        out->file = ts__calloc(out->cap, sizeof *out->file);
        if (!out->ranks || !out->file) rc = ts__error(err, TS_ENOMEM, "out of memory");
    }
    uint32_t n = 0;
    for (uint32_t f = part; rc == TS_OK && f < files.n; f += n_parts) out->file[n++] = f;
    uint32_t failed = 0;
    if (rc == TS_OK && n) rc = load_some(&files, out->file, n, opts, NULL, false, out->ranks, &failed, err);
    if (rc == TS_OK) {
        out->n = n;
        if (sk.n && n && out->file[0] == 0)   /* the note a whole load leaves on its first file's rank */
            ts__rank_warn(out->ranks[0], TS_WARN_OTHER, "%s%s (%u in all)", sk.msg, sk.n > 5 ? ", ..." : "", sk.n);
        uint32_t depth = opts && opts->size >= offsetof(ts_load_opts, python_depth) + sizeof(uint32_t)
                             ? opts->python_depth : 0;
        for (uint32_t i = 0; i < n; i++) ts__rank_python_as_ops(out->ranks[i], depth);
    } else {
        out->failed_file = out->file && n ? out->file[failed] : 0;
        out->n = 0;
    }
    list_free(&files);
    return rc;
}

int ts__trace_from_ranks(ts_rank **ranks, uint32_t n, ts_job **out, ts_error *err)
{
    *out = NULL;
    int rc = check_unique_ranks(ranks, n, err);
    if (rc) {
        for (uint32_t i = 0; i < n; i++) ts__rank_destroy(ranks[i]);
        return rc;
    }
    return ts__job_create(ranks, n, out, err);
}

/* ---- per-rank streaming (ingest.h) ---- */

int ts__trace_files(const char *const *paths, uint32_t n_paths, char ***files, uint32_t *n, char *note, size_t cap,
                    ts_error *err)
{
    file_list l = {0};
    skip_note sk = {.n = 0};
    *files = NULL;
    *n = 0;
    if (note && cap) note[0] = 0;
    int rc = expand_paths(&l, paths, n_paths, &sk, err);
    if (rc) { list_free(&l); return rc; }
    if (sk.n && note && cap) snprintf(note, cap, "%s%s (%u in all)", sk.msg, sk.n > 5 ? ", ..." : "", sk.n);
    *files = l.v;
    *n = l.n;
    return TS_OK;
}

void ts__trace_files_free(char **files, uint32_t n)
{
    file_list l = {.v = files, .n = n, .cap = n};
    /* list_free frees cap slots' worth: the list may have grown past n */
    for (uint32_t i = 0; i < l.n; i++) ts__free(l.v[i], strlen(l.v[i]) + 1);
    ts__free(files, (size_t)n * sizeof *files);
}

static int load_rank(const char *path, int32_t order, const ts_load_opts *opts, bool spare_core, load_mode mode,
                     ts_rank **out, ts_error *err)
{
    int rc = ingest_file(path, order, opts, spare_core, mode, out, err);
    if (rc) return rc;
    uint32_t depth = opts && opts->size >= offsetof(ts_load_opts, python_depth) + sizeof(uint32_t)
                         ? opts->python_depth : 0;
    ts__rank_python_as_ops(*out, depth);
    return TS_OK;
}

int ts__load_rank(const char *path, int32_t order, const ts_load_opts *opts, bool spare_core, ts_rank **out,
                  ts_error *err)
{
    return load_rank(path, order, opts, spare_core, LOAD_WHOLE, out, err);
}
