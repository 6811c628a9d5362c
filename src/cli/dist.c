/* dist.c - the CLI side of a distributed run: `mpirun -np P trainscope
 * stats|critical-path|replay PATH...` (docs/distributed.md).
 *
 * For: deciding that a run is distributed (started under MPI, or
 * --distributed), loading build/libtrainscope_dist.so (the MPI transport,
 * dist/dist.h) with dlopen only then, and the load: every process loads its
 * share of the rank files (ts__load_share), serializes its ranks
 * (ts__rank_serialize) and sends them to process 0, which checks that every
 * file came exactly once, rebuilds the ranks and hands the trace to the
 * command; the command then runs on process 0 as in a single process and
 * prints the same bytes. The other processes print nothing and end after
 * sending. Not for: analysis (the commands run unchanged), MPI calls (dist.so).
 *
 * Faults: a file that fails on some process is reported by process 0 with
 * the message a single process gives (the first failing file in load order),
 * exit 2; a process that dies makes mpirun end the job (its own message names
 * the process); process 0 failing while others still send calls MPI_Abort.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "dist/dist.h"
#include "ingest/ingest.h"

#define MSG_MAGIC 0x31445354u   /* "TSD1" */

static struct {
    bool               on;        /* this run is distributed */
    bool               loaded;    /* the one load has happened */
    const ts_dist_ops *ops;
    int                me, np;
    int64_t            t0_ns;     /* start of the load; analysis time counts from its end */
    int64_t            t_loaded_ns;
    bool               times;     /* TS_DIST_TIMES=1: phase timings on stderr (bench/dist.sh) */
    double             own_s;     /* this process: share loaded, serialized, packed, freed */
} D;

bool ts_cli_dist_quiet(void) { return D.on && D.me != 0; }
bool ts_cli_dist_on(void) { return D.on; }

static bool under_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

/* The library beside the executable (build/ or build/san/), or TS_DIST_LIB. */
static void *open_plugin(char *why, size_t why_n)
{
    char path[PATH_MAX];
    const char *env = getenv("TS_DIST_LIB");
    if (env && *env) snprintf(path, sizeof path, "%s", env);
    else {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0) { snprintf(why, why_n, "cannot find the trainscope executable (/proc/self/exe)"); return NULL; }
        path[n] = 0;
        char *slash = strrchr(path, '/');
        size_t at = slash ? (size_t)(slash - path) + 1 : 0;
        snprintf(path + at, sizeof path - at, "%s", TS_DIST_LIBRARY);
    }
    /* RTLD_GLOBAL: Open MPI's own components resolve libmpi's symbols through it */
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) snprintf(why, why_n, "%s", dlerror());
    return h;
}

int ts_cli_dist_begin(const char *cmd, int *argc, char **argv)
{
    bool flag = false;
    int k = 1;
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--")) { while (i < *argc) argv[k++] = argv[i++]; break; }
        if (!strcmp(argv[i], "--distributed")) flag = true;
        else argv[k++] = argv[i];
    }
    *argc = k;
    argv[k] = NULL;
    if (!flag && !under_mpi()) return TS_EXIT_OK;
    char why[512] = "";
    void *h = open_plugin(why, sizeof why);
    const ts_dist_ops *ops = h ? dlsym(h, TS_DIST_SYMBOL) : NULL;
    if (!ops || ops->abi != TS_DIST_ABI) {
        ts_cli_errorf("%s: a distributed run (%s) needs %s: %s", cmd,
                      flag ? "--distributed" : "started under MPI", TS_DIST_LIBRARY,
                      h ? "it is another version" : why);
        return TS_EXIT_BAD;
    }
    if (ops->init(&D.me, &D.np, why, sizeof why)) { ts_cli_errorf("%s: %s", cmd, why); return TS_EXIT_BAD; }
    D.on = true;
    D.ops = ops;
    const char *t = getenv("TS_DIST_TIMES");
    D.times = t && !strcmp(t, "1");
    return TS_EXIT_OK;
}

/* ---- the message each process sends to process 0 ----
 * u32 magic, u32 process, u32 n_files, u64 list hash, i32 status,
 * u32 failed file, string error, f64 ingest s, f64 serialize s, u32 ranks,
 * then per rank: u32 file row, u64 length, the rank's bytes. */
static void put(ts_buf *b, const void *p, size_t n) { if (n) ts__buf_add(b, (const char *)p, n); }
static void put_u32(ts_buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(ts_buf *b, uint64_t v) { put(b, &v, 8); }
static void put_f64(ts_buf *b, double v) { put(b, &v, 8); }

typedef struct msg {
    uint32_t process, n_files, failed, n_ranks;
    uint64_t hash;
    int32_t  status;
    char     error[sizeof ((ts_error *)0)->msg];
    double   ingest_s, serialize_s;
    const uint8_t *ranks;   /* the per-rank records */
    size_t   ranks_n;
} msg;

static bool get(const uint8_t *p, size_t n, size_t *at, void *out, size_t k)
{
    if (k > n - *at) return false;
    memcpy(out, p + *at, k);
    *at += k;
    return true;
}

static bool parse_msg(const uint8_t *p, size_t n, msg *m)
{
    size_t at = 0;
    uint32_t magic = 0, elen = 0;
    memset(m, 0, sizeof *m);
    if (!get(p, n, &at, &magic, 4) || magic != MSG_MAGIC || !get(p, n, &at, &m->process, 4) ||
        !get(p, n, &at, &m->n_files, 4) || !get(p, n, &at, &m->hash, 8) || !get(p, n, &at, &m->status, 4) ||
        !get(p, n, &at, &m->failed, 4) || !get(p, n, &at, &elen, 4) || elen >= sizeof m->error ||
        !get(p, n, &at, m->error, elen) || !get(p, n, &at, &m->ingest_s, 8) || !get(p, n, &at, &m->serialize_s, 8) ||
        !get(p, n, &at, &m->n_ranks, 4))
        return false;
    m->error[elen] = 0;
    m->ranks = p + at;
    m->ranks_n = n - at;
    return true;
}

/* This process's share: loaded, serialized into b. */
static void make_msg(char **paths, int n, const ts_load_opts *lo, ts_buf *b)
{
    ts_load_share sh;
    ts_error err = {0};
    int64_t t0 = ts__now_ns();
    int rc = ts__load_share((const char *const *)paths, (uint32_t)n, lo, (uint32_t)D.me, (uint32_t)D.np, &sh, &err);
    int64_t t1 = ts__now_ns();
    const char *die = getenv("TS_DIST_TEST_EXIT_PROCESS");   /* tests only: this process dies here */
    if (die && atoi(die) == D.me && *die) _exit(3);
    ts_buf ranks;
    ts__buf_init(&ranks);
    for (uint32_t i = 0; rc == TS_OK && i < sh.n; i++) {
        put_u32(&ranks, sh.file[i]);
        size_t at = ranks.len;
        put_u64(&ranks, 0);
        size_t start = ranks.len;
        rc = ts__rank_serialize(sh.ranks[i], &ranks);
        if (rc) ts__error(&err, rc, "%s: out of memory serializing the rank", sh.ranks[i]->path);
        else { uint64_t len = ranks.len - start; memcpy(ranks.s + at, &len, 8); }
    }
    int64_t t2 = ts__now_ns();
    size_t elen = strnlen(err.msg, sizeof err.msg - 1);
    put_u32(b, MSG_MAGIC); put_u32(b, (uint32_t)D.me); put_u32(b, sh.n_files); put_u64(b, sh.list_hash);
    put_u32(b, (uint32_t)rc); put_u32(b, sh.failed_file); put_u32(b, (uint32_t)elen); put(b, err.msg, elen);
    put_f64(b, (double)(t1 - t0) / 1e9); put_f64(b, (double)(t2 - t1) / 1e9);
    put_u32(b, rc ? 0 : sh.n);
    if (!rc) put(b, ranks.s, ranks.len);
    ts__buf_free(&ranks);
    ts__load_share_free(&sh);
}

/* Process 0: the first error in file order, or a disagreement about the file list. */
static int check_msgs(const msg *m, int np)
{
    int first = -1;
    for (int i = 0; i < np; i++) {
        if (m[i].status == TS_OK) continue;
        if (first < 0 || m[i].failed < m[first].failed) first = i;
    }
    if (first >= 0) {
        ts_cli_errorf("%s", m[first].error[0] ? m[first].error : ts_strerror(m[first].status));
        return TS_EXIT_BAD;
    }
    for (int i = 1; i < np; i++)
        if (m[i].n_files != m[0].n_files || m[i].hash != m[0].hash) {
            ts_cli_errorf("process %d found %u trace files under the paths given, process 0 found %u%s: every "
                          "process must see the same files (a shared file system, or the same paths on every host)",
                          i, m[i].n_files, m[0].n_files, m[i].n_files == m[0].n_files ? " with other names" : "");
            return TS_EXIT_BAD;
        }
    return TS_EXIT_OK;
}

/* Process 0: every process's ranks, each file exactly once, into a trace. */
static int rebuild(const msg *m, int np, char **paths, ts_trace **out)
{
    uint32_t nf = m[0].n_files;
    ts_rank **ranks = ts__calloc(nf ? nf : 1, sizeof *ranks);
    int *from = ts__calloc(nf ? nf : 1, sizeof *from);
    int ex = ranks && from ? TS_EXIT_OK : TS_EXIT_BAD;
    if (ex) ts_cli_errorf("out of memory");
    for (int i = 0; i < np && ex == TS_EXIT_OK; i++) {
        size_t at = 0;
        for (uint32_t k = 0; k < m[i].n_ranks && ex == TS_EXIT_OK; k++) {
            uint32_t f = UINT32_MAX;
            uint64_t len = 0;
            char what[96];
            snprintf(what, sizeof what, "the ranks process %d sent", i);
            if (!get(m[i].ranks, m[i].ranks_n, &at, &f, 4) || !get(m[i].ranks, m[i].ranks_n, &at, &len, 8) ||
                f >= nf || len > m[i].ranks_n - at) {
                ts_cli_errorf("%s: byte %zu: cut short or damaged", what, at);
                ex = TS_EXIT_BAD;
                break;
            }
            ts_error err = {0};
            if (ranks[f]) {
                ts_cli_errorf("%s: byte 0: sent by process %d and by process %d (a rank file assigned twice)",
                              ranks[f]->path, from[f], i);
                ex = TS_EXIT_BAD;
            } else if (ts__rank_deserialize(m[i].ranks + at, (size_t)len, what, &ranks[f], &err)) {
                ts_cli_errorf("%s", err.msg);
                ex = TS_EXIT_BAD;
            }
            from[f] = i;
            at += (size_t)len;
        }
    }
    for (uint32_t f = 0; f < nf && ex == TS_EXIT_OK; f++)
        if (!ranks[f]) {
            ts_cli_errorf("%s: trace file %u of %u came from no process (each process loads every %d-th file)",
                          paths[0], f, nf, np);
            ex = TS_EXIT_BAD;
        }
    ts_error err = {0};
    if (ex == TS_EXIT_OK && ts__trace_from_ranks(ranks, nf, out, &err)) {
        ts_cli_errorf("%s", err.msg);
        ex = TS_EXIT_BAD;
    } else if (ex != TS_EXIT_OK)
        for (uint32_t f = 0; ranks && f < nf; f++) ts__rank_destroy(ranks[f]);
    ts__free(ranks, (nf ? nf : 1) * sizeof *ranks);
    ts__free(from, (nf ? nf : 1) * sizeof *from);
    return ex;
}

static void print_times(const msg *m, int np, double wait_s, double gather_s, double rebuild_s, uint64_t bytes)
{
    double ing = 0, ser = 0;
    for (int i = 0; i < np; i++) {
        if (m[i].ingest_s > ing) ing = m[i].ingest_s;
        if (m[i].serialize_s > ser) ser = m[i].serialize_s;
    }
    fprintf(stderr, "dist: processes %d files %u ingest_max_s %.3f serialize_max_s %.3f wait_s %.3f exchange_s %.3f "
            "exchange_mb %.1f rebuild_s %.3f\n", np, m[0].n_files, ing, ser, wait_s, gather_s, (double)bytes / 1e6,
            rebuild_s);
    fprintf(stderr, "dist: process 0 share_total_s %.3f (ingest, serialize, packing the message, freeing the share)\n",
            D.own_s);
    for (int i = 0; i < np; i++)
        fprintf(stderr, "dist: process %d ingest_s %.3f serialize_s %.3f ranks %u\n", i, m[i].ingest_s,
                m[i].serialize_s, m[i].n_ranks);
}

/* Process 0 after the gather: the trace, or an error printed. */
static int root_load(void **all, uint64_t *lens, char **paths, double wait_s, double gather_s, ts_trace **out)
{
    msg *m = ts__calloc((size_t)D.np, sizeof *m);
    if (!m) { ts_cli_errorf("out of memory"); return TS_EXIT_BAD; }
    int ex = TS_EXIT_OK;
    uint64_t bytes = 0;
    for (int i = 0; i < D.np && ex == TS_EXIT_OK; i++) {
        bytes += lens[i];
        if (!parse_msg(all[i], (size_t)lens[i], &m[i]) || m[i].process != (uint32_t)i) {
            ts_cli_errorf("the message of process %d: byte 0: cut short or damaged (%llu bytes)", i,
                          (unsigned long long)lens[i]);
            ex = TS_EXIT_BAD;
        }
    }
    if (ex == TS_EXIT_OK) ex = check_msgs(m, D.np);
    int64_t t0 = ts__now_ns();
    if (ex == TS_EXIT_OK) ex = rebuild(m, D.np, paths, out);
    if (ex == TS_EXIT_OK && D.times) print_times(m, D.np, wait_s, gather_s, (double)(ts__now_ns() - t0) / 1e9, bytes);
    ts__free(m, (size_t)D.np * sizeof *m);
    return ex;
}

int ts_cli_dist_load(char **paths, int n, const ts_load_opts *lo_in, ts_trace **out)
{
    *out = NULL;
    if (D.loaded) {
        ts_cli_errorf("a distributed run loads one set of traces; this command and options load several: "
                      "run it in one process (without mpirun or --distributed)");
        return TS_EXIT_BAD;
    }
    D.loaded = true;
    D.t0_ns = ts__now_ns();
    ts_load_opts lo = *lo_in;
    lo.n_threads = 1;   /* the processes are the parallelism: one thread each */
    ts_buf b;
    ts__buf_init(&b);
    make_msg(paths, n, &lo, &b);
    D.own_s = (double)(ts__now_ns() - D.t0_ns) / 1e9;
    if (b.oom) {
        ts_cli_errorf("process %d: out of memory packing its ranks", D.me);
        D.ops->abort(TS_EXIT_BAD);
    }
    double w0 = D.ops->wtime();
    D.ops->barrier();
    double w1 = D.ops->wtime();
    void **all = NULL;
    uint64_t *lens = NULL;
    char why[256] = "";
    if (D.ops->gather(b.s, b.len, &all, &lens, why, sizeof why)) {
        ts_cli_errorf("process %d: %s", D.me, why);
        D.ops->abort(TS_EXIT_BAD);
    }
    double w2 = D.ops->wtime();
    ts__buf_free(&b);
    if (D.me != 0) {   /* its part is done: process 0 answers */
        fflush(stdout);
        D.ops->finalize();
        exit(TS_EXIT_OK);
    }
    int ex = root_load(all, lens, paths, w1 - w0, w2 - w1, out);
    for (int i = 0; i < D.np; i++) free(all[i]);
    free(all);
    free(lens);
    D.t_loaded_ns = ts__now_ns();
    return ex;
}

int ts_cli_dist_end(int ex)
{
    if (!D.on) return ex;
    if (D.times && D.me == 0 && D.t_loaded_ns)
        fprintf(stderr, "dist: global_analysis_s %.3f total_s %.3f\n", (double)(ts__now_ns() - D.t_loaded_ns) / 1e9,
                (double)(ts__now_ns() - D.t0_ns) / 1e9);
    D.ops->finalize();
    return ex;
}
