/* dist.c - the CLI side of a distributed run: `mpirun -np P trainscope
 * stats|critical-path|replay PATH...` (docs/distributed.md).
 *
 * For: deciding that a run is distributed (started under MPI, or
 * --distributed), loading build/libtrainscope_dist.so (the MPI transport,
 * dist/dist.h) with dlopen only then, and the load: every process loads its
 * share of the rank files (ts__load_share); the others send process 0 a
 * header, then each rank in a message of its own: for stats the summary it
 * reads (ts__stats_keep's, ts__rank_serialize); for the graph commands the
 * rank condensed where it was read, as it is read (its local graph and
 * compact rank, ts__graph_part_build / graph/part.c), which process 0 adds
 * to its graph stream (graph/stream.h) as it arrives without re-parsing or
 * rebuilding it; process 0's own ranks go into the stream as it reads them,
 * as one process on the bounded path does. So process 0 holds the condensed
 * job plus one rank, not every rank. It checks that every file came exactly
 * once and hands the trace (and graph) to the command; the command then runs
 * on process 0 as in a single process and prints the same bytes. The other
 * processes print nothing and end after sending. With --in-memory (or an
 * option that reads every op) whole ranks are gathered, the trace built from
 * them. Not for: analysis (the commands run unchanged), MPI calls (dist.so).
 *
 * Faults: a file that fails on some process is reported by process 0 with
 * the message a single process gives (the first failing file in load order),
 * exit 2; a process that dies makes mpirun end the job (its own message names
 * the process); process 0 failing while others still send calls MPI_Abort.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "analyze/analyze_int.h"
#include "cli/cli.h"
#include "dist/dist.h"
#include "graph/stream.h"
#include "ingest/ingest.h"

#define MSG_MAGIC 0x32445354u   /* "TSD2": a process's header */
#define RANK_MAGIC 0x32525354u  /* "TSR2": one of its ranks, whole or its summary (trace/serial.c) */
#define PART_MAGIC 0x32505354u  /* "TSP2": one of its ranks condensed: local graph + compact rank (graph/part.c) */

static struct {
    bool               on;        /* this run is distributed */
    bool               loaded;    /* the one load has happened */
    const ts_dist_ops *ops;
    int                me, np;
    int64_t            t0_ns;     /* start of the load; analysis time counts from its end */
    int64_t            t_loaded_ns;
    bool               times;     /* TS_DIST_TIMES=1: phase timings on stderr (bench/dist.sh) */
    double             own_s;     /* this process: share loaded, serialized, packed, freed */
    double             cpu_loaded_s;  /* process 0: CPU seconds when the trace was whole */
    double             cpu0_s;    /* CPU seconds at the start of the load (MPI's start-up is not counted) */
} D;

/* CPU seconds of this process (all its threads) and its peak RSS in MB:
 * timings that other work on the machine disturbs less than wall time. */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}
static double peak_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

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

/* ---- the messages each other process sends to process 0 ----
 * A header: u32 magic, u32 process, u32 n_files, u64 list hash, i32 status,
 * u32 failed file, string error, f64 ingest s, f64 CPU s, f64 peak MB,
 * u32 ranks; then one message per rank: u32 RANK_MAGIC, u32
 * process, u32 file row, i32 status, string error (status != 0) or the
 * rank's bytes; a condensed rank (PART_MAGIC) the same with the part's
 * bytes. Messages of one process arrive in the order sent. */
static void put(ts_buf *b, const void *p, size_t n) { if (n) ts__buf_add(b, (const char *)p, n); }
static void put_u32(ts_buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(ts_buf *b, uint64_t v) { put(b, &v, 8); }
static void put_f64(ts_buf *b, double v) { put(b, &v, 8); }

typedef struct msg {
    bool     got;
    uint32_t n_files, failed, n_ranks;
    uint64_t hash;
    int32_t  status;
    char     error[sizeof ((ts_error *)0)->msg];
    double   ingest_s, cpu_s, peak_mb;   /* cpu_s: the whole share, CPU time */
} msg;

static bool get(const uint8_t *p, size_t n, size_t *at, void *out, size_t k)
{
    if (k > n - *at) return false;
    memcpy(out, p + *at, k);
    *at += k;
    return true;
}

/* The header into m; *at is then the first rank record. */
static bool parse_header(const uint8_t *p, size_t n, int from, msg *m, size_t *at)
{
    uint32_t magic = 0, process = 0, elen = 0;
    *at = 0;
    if (!get(p, n, at, &magic, 4) || magic != MSG_MAGIC || !get(p, n, at, &process, 4) || process != (uint32_t)from ||
        !get(p, n, at, &m->n_files, 4) || !get(p, n, at, &m->hash, 8) || !get(p, n, at, &m->status, 4) ||
        !get(p, n, at, &m->failed, 4) || !get(p, n, at, &elen, 4) || elen >= sizeof m->error ||
        !get(p, n, at, m->error, elen) || !get(p, n, at, &m->ingest_s, 8) ||
        !get(p, n, at, &m->cpu_s, 8) || !get(p, n, at, &m->peak_mb, 8) ||
        !get(p, n, at, &m->n_ranks, 4))
        return false;
    m->error[elen] = 0;
    return true;
}

/* This process's share: whole (sh->ranks), or with fn each rank as it is
 * read (process 0, which keeps only what it reduces them to). */
static int load_share(char **paths, int n, const ts_load_opts *lo, ts_share_fn fn, void *ctx, ts_load_share *sh,
                      msg *m)
{
    ts_error err = {0};
    int64_t t0 = ts__now_ns();
    const char *const *p = (const char *const *)paths;
    int rc = fn ? ts__load_share_each(p, (uint32_t)n, lo, (uint32_t)D.me, (uint32_t)D.np, fn, ctx, sh, &err)
                : ts__load_share(p, (uint32_t)n, lo, (uint32_t)D.me, (uint32_t)D.np, sh, &err);
    m->ingest_s = (double)(ts__now_ns() - t0) / 1e9;
    m->status = rc;
    m->failed = sh->failed_file;
    m->n_files = sh->n_files;
    m->hash = sh->list_hash;
    snprintf(m->error, sizeof m->error, "%s", rc ? (err.msg[0] ? err.msg : ts_strerror(rc)) : "");
    m->got = true;
    const char *die = getenv("TS_DIST_TEST_EXIT_PROCESS");   /* tests only: this process dies here */
    if (die && *die && atoi(die) == D.me) _exit(3);
    return rc;
}

/* Send b, or end the job when it could not be packed (process 0 would wait
 * for its bytes). */
static void send_buf(ts_buf *b)
{
    if (b->oom) {
        fprintf(stderr, "trainscope: process %d: out of memory packing its ranks\n", D.me);
        D.ops->abort(TS_EXIT_BAD);
    }
    D.ops->send(b->s, b->len);
    ts__buf_free(b);
}

/* A rank message's head: magic, process, file row, and a status of 0 that
 * msg_error overwrites (at: where the status is). */
static size_t msg_head(ts_buf *b, uint32_t magic, uint32_t file)
{
    put_u32(b, magic); put_u32(b, (uint32_t)D.me); put_u32(b, file);
    size_t at = b->len;
    put_u32(b, 0);
    return at;
}

/* The rank could not be reduced or serialized: the message is its error. */
static void msg_error(ts_buf *b, size_t at, int rc, const ts_error *err)
{
    b->len = at;
    b->oom = false;
    put_u32(b, (uint32_t)rc);
    put_u32(b, (uint32_t)strlen(err->msg));
    put(b, err->msg, strlen(err->msg));
}

/* One rank's message: its summary (keep) or whole rank, serialized; a rank
 * that cannot be reduced or serialized is sent as its error. Takes r. */
static void send_rank(ts_rank *r, uint32_t file, ts_keep_fn keep)
{
    ts_error err = {0};
    ts_buf b;
    ts__buf_init(&b);
    size_t at = msg_head(&b, RANK_MAGIC, file);
    int rc = keep ? ts__rank_summary(r, keep, true, &r, &err) : TS_OK;
    if (rc == TS_OK && (rc = ts__rank_serialize(r, &b)) != TS_OK)
        ts__error(&err, rc, "%s: out of memory serializing the rank on process %d", r->path, D.me);
    ts__rank_destroy(r);
    if (rc) msg_error(&b, at, rc, &err);
    send_buf(&b);
}

/* The graph commands' messages, packed as the share is read: each rank
 * condensed (its local graph and compact rank, what process 0's graph
 * stream keeps of it) and serialized at once, so the process holds bytes,
 * never its share's ranks. */
typedef struct outbox {
    const ts_graph_options *go;
    ts_buf  *msg;
    uint32_t n, cap;
    bool     oom;   /* the list of messages could not grow */
} outbox;

static void pack_part(void *ctx, uint32_t f, ts_rank *r)
{
    outbox *o = ctx;
    if (o->oom || ts__grow((void **)&o->msg, &o->cap, sizeof *o->msg, o->n + 1)) {
        o->oom = true;
        ts__rank_destroy(r);
        return;
    }
    ts_buf *b = &o->msg[o->n++];
    ts__buf_init(b);
    size_t at = msg_head(b, PART_MAGIC, f);
    ts_graph_part *p = NULL;
    ts_error err = {0};
    int rc = ts__graph_part_build(r, o->go, &p, &err);
    if (rc == TS_OK && (rc = ts__graph_part_serialize(p, b)) != TS_OK)
        ts__error(&err, rc, "%s: %s its condensed rank on process %d", ts__graph_part_path(p),
                  rc == TS_ENOMEM ? "out of memory serializing" : "a local graph of another form in", D.me);
    ts__graph_part_free(p);
    if (rc) msg_error(b, at, rc, &err);
}

/* TS_DIST_SEND=ranks: the graph commands send whole ranks, which process 0
 * condenses (what every run did before condensed ranks; bench/dist.sh
 * compares the two in one run). */
static bool send_whole_ranks(void)
{
    const char *v = getenv("TS_DIST_SEND");
    return v && !strcmp(v, "ranks");
}

/* A process other than 0: its share's header, then each rank, to process 0
 * (go: a graph command, whose ranks go condensed unless send_whole_ranks). */
static void send_share(char **paths, int n, const ts_load_opts *lo, ts_keep_fn keep, const ts_graph_options *go)
{
    ts_load_share sh;
    msg m = {0};
    outbox o = {.go = go};
    bool parts = go && !send_whole_ranks();
    int rc = load_share(paths, n, lo, parts ? pack_part : NULL, &o, &sh, &m);
    if (o.oom) {
        fprintf(stderr, "trainscope: process %d: out of memory packing its ranks\n", D.me);
        D.ops->abort(TS_EXIT_BAD);
    }
    size_t elen = strlen(m.error);
    ts_buf b;
    ts__buf_init(&b);
    put_u32(&b, MSG_MAGIC); put_u32(&b, (uint32_t)D.me); put_u32(&b, m.n_files); put_u64(&b, m.hash);
    put_u32(&b, (uint32_t)m.status); put_u32(&b, m.failed); put_u32(&b, (uint32_t)elen); put(&b, m.error, elen);
    put_f64(&b, m.ingest_s); put_f64(&b, cpu_s() - D.cpu0_s); put_f64(&b, peak_mb());
    put_u32(&b, rc ? 0 : parts ? o.n : sh.n);
    D.own_s = (double)(ts__now_ns() - D.t0_ns) / 1e9;
    D.ops->barrier();
    send_buf(&b);
    for (uint32_t i = 0; i < o.n; i++) {   /* a failed share sends none: the header said 0 */
        if (rc == TS_OK) send_buf(&o.msg[i]);
        else ts__buf_free(&o.msg[i]);
    }
    ts__free(o.msg, o.cap * sizeof *o.msg);
    if (parts) sh.n = 0;   /* counted, none held */
    for (uint32_t i = 0; rc == TS_OK && i < sh.n; i++) {
        send_rank(sh.ranks[i], sh.file[i], keep);
        sh.ranks[i] = NULL;   /* sent and freed: the share shrinks as it goes */
    }
    ts__load_share_free(&sh);
}

/* ---- process 0 ---- */
typedef struct root {
    msg      *m;            /* per process */
    uint32_t  nf;           /* files in the whole list (process 0's count) */
    ts_rank **ranks;        /* per file row, without a stream: the ranks as they came */
    int      *from;         /* per file row: the process that sent it, -1 = none yet */
    ts_graph_stream *stream;   /* the graph commands: each rank is added as it comes */
    const ts_graph_options *go;   /* NULL: no graph */
    ts_keep_fn keep;        /* stats: what process 0's own ranks are reduced to (the others come reduced) */
    const ts_load_share *own;   /* process 0's share being read: its file count */
    char    **paths;        /* as given */
    int       n_paths;
    uint32_t *pos;          /* with a stream, per file row: its place in the single process's order */
    char      fault[sizeof ((ts_error *)0)->msg];   /* the first fault that is not a file's own error */
    double    rebuild_s, rebuild_cpu_s;
    uint64_t  bytes;
} root;

static void fault(root *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fault(root *R, const char *fmt, ...)
{
    if (R->fault[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(R->fault, sizeof R->fault, fmt, ap);
    va_end(ap);
}

static bool failed(const root *R)
{
    if (R->fault[0]) return true;
    for (int i = 0; i < D.np; i++)
        if (R->m[i].got && R->m[i].status != TS_OK) return true;
    return false;
}

/* File f is taken by process `from`, unless another process sent it already. */
static bool claim(root *R, uint32_t f, int from, const char *path)
{
    if (R->from[f] >= 0) {
        fault(R, "%s: byte 0: sent by process %d and by process %d (a rank file assigned twice)", path, R->from[f],
              from);
        return false;
    }
    R->from[f] = from;
    return true;
}

/* File f's rank, from process `from`: into the stream, or kept by file row. */
static void take_rank(root *R, uint32_t f, int from, ts_rank *r)
{
    if (!claim(R, f, from, r->path)) { ts__rank_destroy(r); return; }
    ts_error err = {0};
    if (R->stream) {
        if (ts__graph_stream_add_at(R->stream, r, R->pos[f], &err)) fault(R, "%s", err.msg[0] ? err.msg : "out of memory");
    } else {
        R->ranks[f] = r;
    }
}

/* File f's rank condensed on process `from`: into the stream as it is. */
static void take_part(root *R, uint32_t f, int from, ts_graph_part *q)
{
    ts_error err = {0};
    if (!claim(R, f, from, ts__graph_part_path(q))) ts__graph_part_free(q);
    else if (ts__graph_stream_add_part_at(R->stream, q, R->pos[f], &err))
        fault(R, "%s", err.msg[0] ? err.msg : "out of memory");
}

/* A process's header: its share's status and counts (a damaged one ends
 * the job: how many messages follow is unknown). */
static void take_header(root *R, int from, const uint8_t *p, size_t n)
{
    msg *m = &R->m[from];
    size_t at;
    if (from <= 0 || from >= D.np || m->got) { fault(R, "a second header from process %d", from); return; }
    if (!parse_header(p, n, from, m, &at)) {
        ts_cli_errorf("the message of process %d: byte 0: cut short or damaged (%zu bytes)", from, n);
        D.ops->abort(TS_EXIT_BAD);   /* how many messages follow is unknown: no one may wait */
    }
    m->got = true;
    if (m->status == TS_OK && (m->n_files != R->nf || m->hash != R->m[0].hash))
        fault(R, "process %d found %u trace files under the paths given, process 0 found %u%s: every process must "
              "see the same files (a shared file system, or the same paths on every host)", from, m->n_files, R->nf,
              m->n_files == R->nf ? " with other names" : "");
}

/* One rank's message: rebuilt and taken unless the run has failed already
 * (then only received, so the sender can end). */
static void take_rank_msg(root *R, int from, const uint8_t *p, size_t n)
{
    uint32_t magic = 0, process = 0, f = UINT32_MAX, status = 0, elen = 0;
    size_t at = 0;
    if (!get(p, n, &at, &magic, 4) || (magic != RANK_MAGIC && magic != PART_MAGIC) || !get(p, n, &at, &process, 4) ||
        process != (uint32_t)from || !get(p, n, &at, &f, 4) || !get(p, n, &at, &status, 4) || f >= R->nf) {
        fault(R, "a rank process %d sent: byte 0: cut short or damaged (%zu bytes)", from, n);
        return;
    }
    if (status) {   /* the rank could not be reduced or serialized there */
        char e[sizeof R->fault] = "";
        if (get(p, n, &at, &elen, 4) && elen < sizeof e && get(p, n, &at, e, elen)) e[elen] = 0;
        fault(R, "%s", e[0] ? e : "a rank process sent: damaged error");
        return;
    }
    if (failed(R)) return;
    int64_t t0 = ts__now_ns();
    double c0 = cpu_s();
    char what[64];
    snprintf(what, sizeof what, "the %srank process %d sent", magic == PART_MAGIC ? "condensed " : "", from);
    ts_rank *r = NULL;
    ts_graph_part *q = NULL;
    ts_error err = {0};
    if (magic == PART_MAGIC && !R->stream) fault(R, "%s: byte 0: a condensed rank, but no graph is built", what);
    else if (magic == PART_MAGIC && ts__graph_part_deserialize(p + at, n - at, what, &q, &err)) fault(R, "%s", err.msg);
    else if (magic == PART_MAGIC) take_part(R, f, from, q);
    else if (ts__rank_deserialize(p + at, n - at, what, &r, &err)) fault(R, "%s", err.msg);
    else take_rank(R, f, from, r);
    R->rebuild_s += (double)(ts__now_ns() - t0) / 1e9;
    R->rebuild_cpu_s += cpu_s() - c0;
}

/* What process 0 says when the run failed: the first failing file in load
 * order (the message a single process gives), else the first fault. */
static void report_failure(const root *R)
{
    int first = -1;
    for (int i = 0; i < D.np; i++)
        if (R->m[i].got && R->m[i].status != TS_OK && (first < 0 || R->m[i].failed < R->m[first].failed)) first = i;
    if (first >= 0) ts_cli_errorf("%s", R->m[first].error);
    else ts_cli_errorf("%s", R->fault);
}

static void print_times(const root *R, double wait_s, double exchange_s, double exchange_cpu_s)
{
    double ing = 0;
    for (int i = 0; i < D.np; i++)
        if (R->m[i].ingest_s > ing) ing = R->m[i].ingest_s;
    fprintf(stderr, "dist: processes %d files %u ingest_max_s %.3f wait_s %.3f exchange_s %.3f "
            "exchange_mb %.1f rebuild_s %.3f\n", D.np, R->nf, ing, wait_s, exchange_s, (double)R->bytes / 1e6,
            R->rebuild_s);
    fprintf(stderr, "dist: process 0 exchange_cpu_s %.3f rebuild_cpu_s %.3f (rebuild: ranks deserialized and, for "
            "the graph commands, added to the graph)\n", exchange_cpu_s, R->rebuild_cpu_s);
    fprintf(stderr, "dist: process 0 share_total_s %.3f share_cpu_s %.3f (its share loaded and reduced)\n",
            D.own_s, R->m[0].cpu_s);
    for (int i = 0; i < D.np; i++)
        fprintf(stderr, "dist: process %d ingest_s %.3f share_cpu_s %.3f peak_rss_mb %.0f ranks %u\n", i,
                R->m[i].ingest_s, R->m[i].cpu_s, R->m[i].peak_mb, R->m[i].n_ranks);
}

/* Every message of the other processes: np - 1 headers, then as many rank
 * messages as they announce (all of them, also after a failure: a sender
 * waits until its bytes are taken). */
static void receive_all(root *R)
{
    uint64_t headers = (uint64_t)D.np - 1, ranks = 0;
    while (headers + ranks > 0) {
        int from = -1;
        void *buf = NULL;
        uint64_t len = 0;
        char why[256] = "";
        if (D.ops->recv(&from, &buf, &len, why, sizeof why)) {
            ts_cli_errorf("process 0: %s", why);
            D.ops->abort(TS_EXIT_BAD);
        }
        R->bytes += len;
        uint32_t magic = 0;
        if (len >= 4) memcpy(&magic, buf, 4);
        if ((magic == RANK_MAGIC || magic == PART_MAGIC) && ranks > 0) {
            ranks--;
            take_rank_msg(R, from, buf, (size_t)len);
        } else if (headers > 0) {
            headers--;
            take_header(R, from, buf, (size_t)len);
            if (from > 0 && from < D.np && R->m[from].status == TS_OK) ranks += R->m[from].n_ranks;
        } else {
            ts_cli_errorf("process 0: an unexpected message from process %d (%llu bytes)", from,
                          (unsigned long long)len);
            D.ops->abort(TS_EXIT_BAD);
        }
        free(buf);
    }
}

/* The per-file tables (and the stream) once the file count is known. */
static void root_alloc(root *R, uint32_t nf)
{
    if (R->from) return;
    R->nf = nf;
    R->ranks = ts__calloc(nf ? nf : 1, sizeof *R->ranks);
    R->from = ts__malloc((nf ? nf : 1) * sizeof *R->from);
    if (!R->ranks || !R->from) { ts_cli_errorf("out of memory"); D.ops->abort(TS_EXIT_BAD); }
    memset(R->from, 0xff, (nf ? nf : 1) * sizeof *R->from);
    ts_error err = {0};
    if (!R->go || !nf) return;
    char **files = NULL;
    uint32_t n = 0;
    R->pos = ts__malloc((size_t)nf * sizeof *R->pos);
    if (!R->pos || ts__trace_files((const char *const *)R->paths, (uint32_t)R->n_paths, &files, &n, NULL, 0, &err) ||
        n != nf || ts__graph_file_order(files, n, R->pos) || ts__graph_stream_begin(nf, R->go, &R->stream, &err))
        fault(R, "%s", err.msg[0] ? err.msg : "out of memory ordering the rank files");
    ts__trace_files_free(files, n);
}

/* One rank of process 0's own share, as it is read: reduced by keep, or
 * added to the stream; never held whole beyond this call. */
static void take_own(void *ctx, uint32_t f, ts_rank *r)
{
    root *R = ctx;
    root_alloc(R, R->own->n_files);
    ts_error err = {0};
    if (failed(R)) { ts__rank_destroy(r); return; }
    if (R->keep && ts__rank_summary(r, R->keep, true, &r, &err)) { fault(R, "%s", err.msg); return; }
    take_rank(R, f, 0, r);
}

/* Every rank in: the trace (the note on skipped directory entries on the
 * first file's rank, as a whole load leaves it) and the graph. */
static int finish(root *R, const char *note, ts_job **out, ts_graph **graph, ts_error *err)
{
    if (R->stream) {
        ts__graph_stream_note(R->stream, note);
        return ts__graph_stream_finish(R->stream, out, graph, err);
    }
    if (note[0] && R->nf && R->ranks[0]) ts__rank_warn(R->ranks[0], TS_WARN_OTHER, "%s", note);
    return ts__trace_from_ranks(R->ranks, R->nf, out, err);
}

/* Process 0: its own share, then every other process's messages; *out the
 * trace (and with go, *graph, built as the ranks came), or exit 2. */
static int root_load(char **paths, int n, const ts_load_opts *lo, ts_keep_fn keep, const ts_graph_options *go,
                     ts_job **out, ts_graph **graph)
{
    ts_load_share sh;
    root R = {.keep = keep, .go = go, .own = &sh, .paths = paths, .n_paths = n};
    R.m = ts__calloc((size_t)D.np, sizeof *R.m);
    if (!R.m) { ts_cli_errorf("out of memory"); D.ops->abort(TS_EXIT_BAD); }
    if (load_share(paths, n, lo, take_own, &R, &sh, &R.m[0]) == TS_OK) root_alloc(&R, sh.n_files);
    R.m[0].n_ranks = sh.n;
    char note[sizeof sh.note];   /* placed as a whole load places it, once every rank is in */
    memcpy(note, sh.note, sizeof note);
    sh.n = 0;   /* counted, none held: each went its way as it was read */
    ts__load_share_free(&sh);
    D.own_s = (double)(ts__now_ns() - D.t0_ns) / 1e9;
    R.m[0].cpu_s = cpu_s() - D.cpu0_s;
    R.m[0].peak_mb = peak_mb();
    double w0 = D.ops->wtime();
    D.ops->barrier();
    double w1 = D.ops->wtime(), c1 = cpu_s();
    receive_all(&R);
    double w2 = D.ops->wtime(), c2 = cpu_s();
    for (uint32_t f = 0; f < R.nf && !failed(&R); f++)
        if (R.from[f] < 0) fault(&R, "%s: trace file %u of %u came from no process", paths[0], f, R.nf);
    int ex = TS_EXIT_OK;
    ts_error err = {0};
    if (failed(&R)) {
        report_failure(&R);
        for (uint32_t f = 0; R.ranks && f < R.nf; f++) ts__rank_destroy(R.ranks[f]);
        ts__graph_stream_abort(R.stream);
        ex = TS_EXIT_BAD;
    } else if (finish(&R, note, out, graph, &err) != TS_OK) {
        ts_cli_errorf("%s", err.msg[0] ? err.msg : "out of memory");
        ex = TS_EXIT_BAD;
    } else if (D.times) {
        print_times(&R, w1 - w0, w2 - w1 - R.rebuild_s, c2 - c1 - R.rebuild_cpu_s);
    }
    ts__free(R.ranks, (R.nf ? R.nf : 1) * sizeof *R.ranks);
    ts__free(R.from, (R.nf ? R.nf : 1) * sizeof *R.from);
    if (R.pos) ts__free(R.pos, (size_t)R.nf * sizeof *R.pos);
    ts__free(R.m, (size_t)D.np * sizeof *R.m);
    return ex;
}

static int dist_load(char **paths, int n, const ts_load_opts *lo_in, ts_keep_fn keep, const ts_graph_options *go,
                     ts_job **out, ts_graph **graph)
{
    *out = NULL;
    if (D.loaded) {
        ts_cli_errorf("a distributed run loads one set of traces; this command and options load several: "
                      "run it in one process (without mpirun or --distributed)");
        return TS_EXIT_BAD;
    }
    D.loaded = true;
    D.t0_ns = ts__now_ns();
    D.cpu0_s = cpu_s();
    ts_load_opts lo = *lo_in;
    lo.n_threads = 1;   /* the processes are the parallelism: one thread each */
    if (D.me != 0) {    /* its part is done once sent: process 0 answers */
        send_share(paths, n, &lo, keep, go);
        fflush(stdout);
        D.ops->finalize();
        exit(TS_EXIT_OK);
    }
    int ex = root_load(paths, n, &lo, keep, go, out, graph);
    D.t_loaded_ns = ts__now_ns();
    D.cpu_loaded_s = cpu_s();
    return ex;
}

int ts_cli_dist_load(char **paths, int n, const ts_load_opts *lo, bool stats_summary, ts_job **out)
{
    return dist_load(paths, n, lo, stats_summary ? ts__stats_keep : NULL, NULL, out, NULL);
}

int ts_cli_dist_load_graph(char **paths, int n, const ts_load_opts *lo, const ts_graph_options *go, ts_job **out,
                           ts_graph **graph)
{
    *graph = NULL;
    return dist_load(paths, n, lo, NULL, go, out, graph);
}

int ts_cli_dist_end(int ex)
{
    if (!D.on) return ex;
    if (D.times && D.me == 0 && D.t_loaded_ns)
        fprintf(stderr, "dist: global_analysis_s %.3f global_analysis_cpu_s %.3f total_s %.3f total_cpu_s %.3f "
                "process0_peak_rss_mb %.0f\n", (double)(ts__now_ns() - D.t_loaded_ns) / 1e9, cpu_s() - D.cpu_loaded_s,
                (double)(ts__now_ns() - D.t0_ns) / 1e9, cpu_s() - D.cpu0_s, peak_mb());
    D.ops->finalize();
    return ex;
}
