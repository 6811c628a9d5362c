/* load.c - ts_graph_load: rank files to a graph in bounded memory.
 *
 * Not for: parsing (ingest/) or graph building (stream.c does it one rank at a
 * time). Threads: n_threads loaders take files in order, but never more than
 * `window` (= n_threads) ahead of the rank the calling thread is adding, so at
 * most n_threads + 1 full ranks exist at once; the calling thread adds ranks
 * to the stream in file order. The first failure in file order wins, as in
 * ts_job_load.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "graph/stream.h"
#include "ingest/ingest.h"

typedef struct pipe_ {
    char              **files;
    uint32_t            n;
    const ts_load_opts *opts;
    bool                spare_core;
    ts_rank           **slot;     /* per file: the loaded rank until the adder takes it */
    int                *rc;       /* per file */
    ts_error           *errs;     /* per file */
    uint8_t            *done;     /* per file: loaded (or failed) */
    uint32_t            next;     /* next file a loader takes */
    uint32_t            added;    /* files the adder has taken */
    uint32_t            window;
    bool                stop;
    pthread_mutex_t     mu;
    pthread_cond_t      cv;
} pipe_;

static void *loader(void *arg)
{
    pipe_ *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->stop && p->next < p->n && p->next >= p->added + p->window) pthread_cond_wait(&p->cv, &p->mu);
        if (p->stop || p->next >= p->n) { pthread_mutex_unlock(&p->mu); return NULL; }
        uint32_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        ts_rank *r = NULL;
        int rc = ts__load_rank(p->files[i], (int32_t)i, p->opts, p->spare_core, &r, &p->errs[i]);
        pthread_mutex_lock(&p->mu);
        p->slot[i] = r;
        p->rc[i] = rc;
        p->done[i] = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

/* The calling thread's part: take file i's rank as soon as it is loaded. */
static int add_all(pipe_ *p, ts_graph_stream *s, ts_error *err)
{
    int rc = TS_OK;
    for (uint32_t i = 0; i < p->n && rc == TS_OK; i++) {
        pthread_mutex_lock(&p->mu);
        while (!p->done[i]) pthread_cond_wait(&p->cv, &p->mu);
        ts_rank *r = p->slot[i];
        p->slot[i] = NULL;
        pthread_mutex_unlock(&p->mu);
        if (p->rc[i]) {
            rc = p->rc[i];
            if (err) *err = p->errs[i];
        } else {
            rc = ts__graph_stream_add(s, r, err);
        }
        pthread_mutex_lock(&p->mu);
        p->added = i + 1;
        if (rc) p->stop = true;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    return rc;
}

static int n_loaders(const ts_load_opts *opts, uint32_t n_files)
{
    long n = opts && opts->size >= offsetof(ts_load_opts, n_threads) + sizeof(int) && opts->n_threads > 0
                 ? opts->n_threads : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > 64) n = 64;
    if ((uint32_t)n > n_files) n = (long)n_files;
    return (int)n;
}

static int run_pipe(pipe_ *p, ts_graph_stream *s, ts_error *err)
{
    int nl = n_loaders(p->opts, p->n);
    p->window = (uint32_t)nl;
    p->spare_core = false;   /* the adder works beside the loaders: no core to spare */
    pthread_t tids[64];
    int started = 0;
    for (int i = 0; i < nl; i++)
        if (pthread_create(&tids[started], NULL, loader, p) == 0) started++;
    if (started == 0) return ts__error(err, TS_ENOMEM, "cannot start a loader thread");
    int rc = add_all(p, s, err);
    for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
    for (uint32_t i = 0; i < p->n; i++) ts__rank_destroy(p->slot[i]);   /* loaded after a failure */
    return rc;
}

/* Rank files named with their rank (`rank-N`, every one of them) are added
 * in rank order, whatever their names' order (rank-10 sorts before rank-2). */
static int cmp_named_rank(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    int32_t rx = ts__rank_from_filename(x), ry = ts__rank_from_filename(y);
    if (rx != ry) return rx < ry ? -1 : 1;
    return strcmp(x, y);
}

static void rank_order(char **files, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (ts__rank_from_filename(files[i]) < 0) return;
    qsort(files, n, sizeof *files, cmp_named_rank);
}

int ts__graph_file_order(char *const *files, uint32_t n, uint32_t *pos)
{
    for (uint32_t i = 0; i < n; i++) pos[i] = i;
    for (uint32_t i = 0; i < n; i++)
        if (ts__rank_from_filename(files[i]) < 0) return TS_OK;   /* name order, as rank_order leaves it */
    char **by = ts__malloc((size_t)n * sizeof *by + 1);
    if (!by) return TS_ENOMEM;
    memcpy(by, files, (size_t)n * sizeof *by);
    qsort(by, n, sizeof *by, cmp_named_rank);
    for (uint32_t i = 0; i < n; i++) {   /* (rank, name) orders the unique names totally */
        uint32_t lo = 0, hi = n;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (cmp_named_rank(&by[mid], &files[i]) < 0) lo = mid + 1;
            else hi = mid;
        }
        pos[i] = lo;
    }
    ts__free(by, (size_t)n * sizeof *by + 1);
    return TS_OK;
}

/* What a caller keeps beside the graph (ts__graph_load_keep). */
typedef struct extra {
    ts_keep_fn keep;
    bool       keep_ids;
    ts_error  *graph_err;
} extra;

static int load_files(char **files, uint32_t n, const ts_load_opts *lo, const ts_graph_options *opt,
                      const char *note, const extra *x, ts_job **trace, ts_graph **out, ts_error *err)
{
    ts_graph_stream *s = NULL;
    int rc = ts__graph_stream_begin(n, opt, &s, err);
    if (rc) return rc;
    ts__graph_stream_note(s, note);
    if (x->keep) ts__graph_stream_keep(s, x->keep, x->keep_ids);
    pipe_ p = {.files = files, .n = n, .opts = lo};
    p.slot = ts__calloc(n, sizeof *p.slot);
    p.rc = ts__calloc(n, sizeof *p.rc);
    p.errs = ts__calloc(n, sizeof *p.errs);
    p.done = ts__calloc(n, 1);
    if (!p.slot || !p.rc || !p.errs || !p.done) rc = ts__error(err, TS_ENOMEM, "out of memory");
    if (rc == TS_OK) {
        pthread_mutex_init(&p.mu, NULL);
        pthread_cond_init(&p.cv, NULL);
        ts__mem_phase("loading rank files");
        rc = run_pipe(&p, s, err);
        pthread_mutex_destroy(&p.mu);
        pthread_cond_destroy(&p.cv);
    }
    ts__free(p.slot, n * sizeof *p.slot);
    ts__free(p.rc, n * sizeof *p.rc);
    ts__free(p.errs, n * sizeof *p.errs);
    ts__free(p.done, n);
    if (rc == TS_OK && (rc = ts__mem_check("matching collectives")) != TS_OK)
        ts__error(err, rc, "out of memory after loading %u rank files", n);
    if (rc) { ts__graph_stream_abort(s); return rc; }
    return ts__graph_stream_finish_soft(s, trace, out, x->graph_err, err);
}

/* Is one of the rank files (paths given and files of directories alike) a
 * PyTorch host execution trace? Its ops join the ranks' slices by their
 * args, which the bounded path drops, so such a load takes the whole-rank
 * path. A file that cannot be read is left for the loader to name. */
static bool has_host_et(char *const *paths, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        unsigned char head[64];
        size_t got = 0;
        ts_error e = {0};
        if (ts__sniff_file(paths[i], head, sizeof head, &got, &e) == TS_OK && ts__et_is_host_et(head, got)) return true;
    }
    return false;
}

/* Whole ranks: ts_job_load, then the graph (a failure to build it left in
 * x->graph_err, but out of memory, when the caller takes one). */
static int load_whole(const char *const *paths, uint32_t n_paths, const ts_load_opts *lo, const ts_graph_options *opt,
                      const extra *x, ts_job **trace, ts_graph **out, ts_error *err)
{
    int rc = ts_job_load(paths, n_paths, lo, trace, err);
    if (rc == TS_OK && (rc = ts_graph_create(*trace, opt, out, err)) != TS_OK) {
        if (x->graph_err && err && rc != TS_ENOMEM) {
            *x->graph_err = *err;
            ts__error_clear(err);
            return TS_OK;
        }
        ts_job_destroy(*trace);
        *trace = NULL;
    }
    return rc;
}

static int graph_load(const char *const *paths, uint32_t n_paths, const ts_load_opts *lo, const ts_graph_options *opt,
                      const extra *x, ts_job **trace, ts_graph **out, ts_error *err)
{
    ts__error_clear(err);
    ts__error_clear(x->graph_err);
    *trace = NULL;
    *out = NULL;
    if (!paths || n_paths == 0) return ts__error(err, TS_EINVAL, "ts_graph_load: no paths given");
    char **files = NULL, note[480];
    uint32_t n = 0;
    int rc = TS_OK;
    bool whole = n_paths == 1 && ts__ctf_is_trace(paths[0]);   /* one CTF session: all its ranks in one read */
    if (!whole) {
        rc = ts__trace_files(paths, n_paths, &files, &n, note, sizeof note, err);
        if (rc == TS_ENOMEM) ts__error(err, rc, "out of memory listing the rank files");
        if (rc) return rc;
        whole = has_host_et(files, n);   /* an execution trace joins whole ranks (ingest/load.c) */
    }
    if (whole) {
        ts__trace_files_free(files, n);
        return load_whole(paths, n_paths, lo, opt, x, trace, out, err);
    }
    rank_order(files, n);
    rc = load_files(files, n, lo, opt, note, x, trace, out, err);
    ts__trace_files_free(files, n);
    return rc;
}

int ts_graph_load(const char *const *paths, uint32_t n_paths, const ts_load_opts *lo, const ts_graph_options *opt,
                  ts_job **trace, ts_graph **out, ts_error *err)
{
    extra x = {0};
    return graph_load(paths, n_paths, lo, opt, &x, trace, out, err);
}

int ts__graph_load_keep(const char *const *paths, uint32_t n_paths, const ts_load_opts *lo,
                        const ts_graph_options *opt, ts_keep_fn keep, bool keep_ids, ts_job **trace, ts_graph **out,
                        ts_error *graph_err, ts_error *err)
{
    extra x = {.keep = keep, .keep_ids = keep_ids, .graph_err = graph_err};
    return graph_load(paths, n_paths, lo, opt, &x, trace, out, err);
}

/* The representatives of a folded graph (one rank per replica group) read
 * again from their files, unfolded: the job as the replica groups' first
 * members alone. */
int ts_graph_load_representatives(const ts_graph *g, const ts_load_opts *lo, const ts_graph_options *opt,
                                  ts_job **trace, ts_graph **out, ts_error *err)
{
    *trace = NULL;
    *out = NULL;
    const char **paths = ts__malloc(((size_t)g->n_ranks + 1) * sizeof *paths);
    if (!paths) return ts__error(err, TS_ENOMEM, "graph: out of memory");
    uint32_t n = 0;
    for (uint32_t r = 0; r < g->n_ranks; r++) {
        ts_graph_rank ri;
        if (ts_graph_replica_of(g, r) != r || ts_graph_rank_info(g, r, &ri) || !ri.file) continue;
        paths[n++] = ri.file;
    }
    ts_graph_options go = {.size = sizeof go};
    if (opt) memcpy(&go, opt, opt->size < sizeof go ? opt->size : sizeof go);
    go.size = sizeof go;
    go.fold_replicas = 0;
    int rc = n ? ts_graph_load(paths, n, lo, &go, trace, out, err)
               : ts__error(err, TS_EINVAL, "graph: no representative rank names its file");
    ts__free(paths, ((size_t)g->n_ranks + 1) * sizeof *paths);
    return rc;
}

int32_t ts_graph_rank_number(const ts_graph *g, uint32_t ri) { return ri < g->n_ranks ? g->rank_number[ri] : -1; }
uint32_t ts_graph_replica_of(const ts_graph *g, uint32_t ri)
{
    return g->replica_of && ri < g->n_ranks ? g->replica_of[ri] : ri;
}
