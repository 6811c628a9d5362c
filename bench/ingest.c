/* ingest.c - ingest benchmark: trainscope's JSON reader next to Python's
 * json.load on the same files, in one run.
 *
 * Cases: (a) ../shared/data/kineto/nccl_parser_config/nccl_data.json.gz as is;
 * (b) a ~500 MB uncompressed trace made by replicating that trace's events
 * with timestamps shifted per copy back to back (written under /tmp, reused if present);
 * (c) multi-rank scaling: a directory of N rank files, 1 thread vs 2 threads.
 * Each measurement runs in a forked child so its peak RSS (wait4) is its own.
 * Prints MB/s of uncompressed JSON per core, wall time, peak RSS and the
 * RSS/JSON ratio, the CPU time of `stats` on the loaded trace, Python's
 * figures, and ours/Python.
 *
 * Each of our measurements runs --repeat times (default 5) and reports the
 * run with the median CPU time, plus the fastest: on a shared machine one
 * run says little.
 *
 * Usage: build/bench/ingest [--data DIR] [--mb 500] [--ranks 4] [--repeat 5] [--no-python]
 * Not a test: nothing here asserts a speed.
 */
#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <zlib.h>

#include "trainscope/analyze.h"
#include "trainscope/ingest.h"

typedef struct result {
    double wall_s;       /* seconds, as the child measured it (load only) */
    double cpu_s;        /* CPU seconds of the load, all threads (user + system) */
    double stats_cpu_s;  /* CPU seconds of ts_stats_compute on the loaded trace */
    double peak_rss_mb;  /* child's maxrss when the load returned */
    double peak_rss_all_mb; /* child's maxrss at exit (load + stats) */
    int    ok;
} result;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Run ts_job_load on paths in a child; the child reports its wall time. */
static result run_ours(const char *const *paths, uint32_t n, int threads)
{
    result r = {0};
    int fd[2];
    if (pipe(fd)) return r;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        ts_load_opts o = {sizeof o, threads, NULL, 0};
        ts_job *t = NULL;
        ts_error err;
        double t0 = now_s(), c0 = cpu_now_s();
        int rc = ts_job_load(paths, n, &o, &t, &err);
        struct rusage self;
        getrusage(RUSAGE_SELF, &self);
        double dt[4] = {now_s() - t0, cpu_now_s() - c0, 0, (double)self.ru_maxrss / 1024.0};
        if (rc) fprintf(stderr, "ingest: %s\n", err.msg);
        ts_stats *st = NULL;
        c0 = cpu_now_s();
        if (rc == TS_OK && (rc = ts_stats_compute(t, NULL, &st, &err)) != TS_OK)
            fprintf(stderr, "stats: %s\n", err.msg);
        dt[2] = cpu_now_s() - c0;
        ts_stats_destroy(st);
        ts_job_destroy(t);
        if (write(fd[1], dt, sizeof dt) != sizeof dt) _exit(3);
        _exit(rc ? 2 : 0);
    }
    close(fd[1]);
    double dt[4] = {0, 0, 0, 0};
    ssize_t k = read(fd[0], dt, sizeof dt);
    close(fd[0]);
    int st;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    r.ok = k == sizeof dt && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    r.wall_s = dt[0];
    r.cpu_s = dt[1];
    r.stats_cpu_s = dt[2];
    r.peak_rss_mb = dt[3];
    r.peak_rss_all_mb = (double)ru.ru_maxrss / 1024.0;
    return r;
}

static int cmp_cpu(const void *a, const void *b)
{
    const result *x = a, *y = b;
    return (x->cpu_s > y->cpu_s) - (x->cpu_s < y->cpu_s);
}

/* run_ours `reps` times; the run with the median CPU time (the figure the
 * report divides by), with `fastest` set to the smallest CPU time seen. A
 * failed run fails the whole measurement. */
static result run_ours_median(const char *const *paths, uint32_t n, int threads, int reps, double *fastest)
{
    result v[32];
    if (reps < 1) reps = 1;
    if (reps > 32) reps = 32;
    for (int i = 0; i < reps; i++) {
        v[i] = run_ours(paths, n, threads);
        if (!v[i].ok) return v[i];
    }
    qsort(v, (size_t)reps, sizeof *v, cmp_cpu);
    if (fastest) *fastest = v[0].cpu_s;
    return v[reps / 2];
}

/* Python's json.load (gzip.open for .gz) in a child; it prints its own time. */
static result run_python(const char *path)
{
    result r = {0};
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "import gzip,json,sys,time\n"
             "p=sys.argv[1]\n"
             "t=time.perf_counter()\n"
             "c=time.process_time()\n"
             "f=gzip.open(p,'rb') if p.endswith('.gz') else open(p,'rb')\n"
             "d=json.load(f)\n"
             "print(time.perf_counter()-t, time.process_time()-c)\n");
    int fd[2];
    if (pipe(fd)) return r;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        execl("/usr/bin/python3", "python3", "-c", cmd, path, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[128] = {0};
    ssize_t k = 0, got;
    while ((size_t)k < sizeof buf - 1 &&
           ((got = read(fd[0], buf + k, sizeof buf - 1 - (size_t)k)) > 0 || (got < 0 && errno == EINTR)))
        if (got > 0) k += got;
    close(fd[0]);
    int st;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    r.ok = k > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (sscanf(buf, "%lf %lf", &r.wall_s, &r.cpu_s) != 2) r.ok = 0;
    r.peak_rss_mb = (double)ru.ru_maxrss / 1024.0;
    return r;
}

/* CPU seconds zlib needs just to inflate path (the floor for a .gz load). */
static double gunzip_cpu_s(const char *path)
{
    gzFile g = gzopen(path, "rb");
    if (!g) return 0;
    gzbuffer(g, 1 << 20);
    static char buf[1 << 18];
    double c0 = cpu_now_s();
    while (gzread(g, buf, sizeof buf) > 0) {}
    double dt = cpu_now_s() - c0;
    gzclose(g);
    return dt;
}

/* CPU seconds ISA-L's streaming inflate needs for path, in the chunk size
 * the loader's decoding thread uses (the floor for a .gz load: the loader
 * decodes with ISA-L). */
static double isal_cpu_s(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *in = malloc((size_t)n);
    static unsigned char out[128 << 10];
    double dt = 0;
    struct inflate_state *z = malloc(sizeof *z);
    if (in && z && fread(in, 1, (size_t)n, f) == (size_t)n) {
        double c0 = cpu_now_s();
        isal_inflate_init(z);
        z->crc_flag = ISAL_GZIP;
        z->next_in = in;
        z->avail_in = (uint32_t)n;
        int rc = ISAL_DECOMP_OK;
        while (rc == ISAL_DECOMP_OK && z->block_state != ISAL_BLOCK_FINISH) {
            z->next_out = out;
            z->avail_out = sizeof out;
            rc = isal_inflate(z);
        }
        if (rc == ISAL_DECOMP_OK) dt = cpu_now_s() - c0;
    }
    free(z);
    free(in);
    fclose(f);
    return dt;
}

/* CPU seconds libdeflate needs to inflate the whole file in one call (it has
 * no streaming mode, so using it would hold the whole JSON in memory). */
static double libdeflate_cpu_s(const char *path, size_t json_n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *in = malloc((size_t)n), *out = malloc(json_n + 1);
    size_t got = 0;
    double dt = 0;
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    if (in && out && d && fread(in, 1, (size_t)n, f) == (size_t)n) {
        double c0 = cpu_now_s();
        if (libdeflate_gzip_decompress(d, in, (size_t)n, out, json_n + 1, &got) == LIBDEFLATE_SUCCESS) dt = cpu_now_s() - c0;
    }
    if (d) libdeflate_free_decompressor(d);
    free(in);
    free(out);
    fclose(f);
    return dt;
}

/* ---- making the big trace ---- */

/* Whole uncompressed file into memory (bench setup only). */
static char *read_gz(const char *path, size_t *n)
{
    gzFile g = gzopen(path, "rb");
    if (!g) return NULL;
    size_t cap = 1 << 24, len = 0;
    char *b = malloc(cap);
    int k;
    while (b && (k = gzread(g, b + len, (unsigned)(cap - len))) > 0) {
        len += (size_t)k;
        if (len == cap) b = realloc(b, cap *= 2);
    }
    gzclose(g);
    *n = len;
    return b;
}

/* Offset of the ']' matching the '[' at open (strings respected). */
static size_t match_bracket(const char *s, size_t n, size_t open)
{
    int depth = 0;
    for (size_t i = open; i < n; i++) {
        char c = s[i];
        if (c == '"') {
            for (i++; i < n && s[i] != '"'; i++) if (s[i] == '\\') i++;
        } else if (c == '[' || c == '{') depth++;
        else if ((c == ']' || c == '}') && --depth == 0) return i;
    }
    return 0;
}

/* Write the events body with every "ts": shifted by shift_us microseconds. */
static void write_shifted(FILE *f, const char *s, size_t n, long long shift_us)
{
    const char *p = s, *e = s + n;
    while (p < e) {
        const char *q = memmem(p, (size_t)(e - p), "\"ts\": ", 6);
        if (!q) { fwrite(p, 1, (size_t)(e - p), f); break; }
        q += 6;
        fwrite(p, 1, (size_t)(q - p), f);
        char *end;
        long long us = strtoll(q, &end, 10);
        fprintf(f, "%lld", us + shift_us);
        p = end;
    }
}

/* Earliest and latest "ts" in the events body (microseconds). */
static void ts_range(const char *s, size_t n, long long *lo, long long *hi)
{
    const char *p = s, *e = s + n;
    *lo = LLONG_MAX;
    *hi = LLONG_MIN;
    while ((p = memmem(p, (size_t)(e - p), "\"ts\": ", 6)) != NULL) {
        char *end;
        long long us = strtoll(p + 6, &end, 10);
        if (us < *lo) *lo = us;
        if (us > *hi) *hi = us;
        p = end;
    }
}

/* Text of the JSON value after `"key": ` inside [p, e), up to the next ','
 * or '}' (numbers and short strings: pid, tid); empty when absent. */
static size_t field_text(const char *p, const char *e, const char *key, const char **at)
{
    const char *q = memmem(p, (size_t)(e - p), key, strlen(key));
    if (!q) { *at = p; return 0; }
    q += strlen(key);
    const char *r = q;
    while (r < e && *r != ',' && *r != '}' && *r != '\n') r++;
    *at = q;
    return (size_t)(r - q);
}

/* Split the events body into segments in which every thread's and stream's
 * complete events ("ph": "X") go forward in time: a new segment starts where
 * one goes back. A Kineto file is a few such segments (CPU ops, then runtime
 * calls, then GPU activity, each in time order over the whole window). Fills
 * cut[0..k) with the body offsets where segments start; returns k. */
static int split_segments(const char *s, size_t n, size_t *cut, int max_cuts)
{
    enum { MAX_TRACKS = 512 };
    static char keys[MAX_TRACKS][64];
    static double last[MAX_TRACKS];
    int n_keys = 0, k = 0;
    cut[k++] = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '{') continue;
        size_t end = match_bracket(s, n, i);
        if (!end) break;
        const char *p = s + i, *e = s + end, *v;
        if (field_text(p, e, "\"ph\": ", &v) >= 3 && !strncmp(v, "\"X\"", 3)) {
            char key[64];
            const char *pid, *tid, *ts;
            size_t np = field_text(p, e, "\"pid\": ", &pid), nt = field_text(p, e, "\"tid\": ", &tid);
            field_text(p, e, "\"ts\": ", &ts);
            snprintf(key, sizeof key, "%.*s|%.*s", (int)(np < 30 ? np : 30), pid, (int)(nt < 30 ? nt : 30), tid);
            double t = strtod(ts, NULL);
            int j = 0;
            while (j < n_keys && strcmp(keys[j], key)) j++;
            if (j == n_keys && n_keys < MAX_TRACKS) { strcpy(keys[n_keys], key); last[n_keys++] = t; }
            else if (j < n_keys) {
                if (t < last[j] && k < max_cuts) cut[k++] = i;
                last[j] = t;
            }
        }
        i = end;
    }
    return k;
}

/* Trace made of `copies` copies of src's events, claiming rank `rank`, laid
 * out as a profiler lays out one longer window: each segment of the source
 * (see split_segments) is written `copies` times, shifted in time by the
 * source's span rounded up to a whole second, before the next segment. So
 * the result has the source's layout (per track, time goes back only where
 * it goes back in the source) over a 51 s window for 51 copies of nccl_data.
 * An earlier version concatenated whole copies 2000 s apart: a 28-hour window
 * whose tracks went back in time 51 times as often as any profiler writes
 * them, which cost the time-keyed sorts passes no real trace needs. */
static int make_trace(const char *out, const char *src, size_t n, int copies, int rank)
{
    const char *te = strstr(src, "\"traceEvents\"");
    if (!te) return -1;
    size_t open = (size_t)(strchr(te, '[') - src), close = match_bracket(src, n, open);
    if (!close) return -1;
    const char *body = src + open + 1;
    size_t body_n = close - open - 1;
    size_t cut[257];
    int n_seg = split_segments(body, body_n, cut, 256);
    cut[n_seg] = body_n;
    FILE *f = fopen(out, "w");
    if (!f) return -1;
    /* header with the rank replaced */
    const char *rk = strstr(src, "\"rank\": 0");
    if (rk && (size_t)(rk - src) < open) {
        fwrite(src, 1, (size_t)(rk - src), f);
        fprintf(f, "\"rank\": %d", rank);
        fwrite(rk + 9, 1, open + 1 - (size_t)(rk + 9 - src), f);
    } else {
        fwrite(src, 1, open + 1, f);
    }
    long long lo, hi;
    ts_range(body, body_n, &lo, &hi);
    long long span_us = hi > lo ? (hi - lo) / 1000000 * 1000000 + 1000000 : 1000000;
    bool first = true;
    for (int g = 0; g < n_seg; g++) {
        /* the segment's text without the separating commas at its ends */
        size_t a = cut[g], b = cut[g + 1];
        while (a < b && body[a] != '{') a++;
        while (b > a && body[b - 1] != '}') b--;
        if (a == b) continue;
        for (int c = 0; c < copies; c++) {
            if (!first) fputs(",", f);
            first = false;
            write_shifted(f, body + a, b - a, span_us * c);
        }
    }
    fwrite(src + close, 1, n - close, f);
    return fclose(f);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The machine's own ceiling for (c): the same loads as two independent
 * processes at once, each reading half of the rank files on one thread
 * (nothing shared but the hardware). Where both cores compete for the
 * shared cache, memory bandwidth or the host, two such processes already
 * run slower than one alone; 2 threads in one process can at best match
 * them. Returns the wall seconds of the pair (median of reps), 0 on
 * failure. */
static double independent_pair_wall_s(const char *const *files, uint32_t n, int reps)
{
    double v[32];
    if (reps < 1) reps = 1;
    if (reps > 32) reps = 32;
    for (int i = 0; i < reps; i++) {
        double t0 = now_s();
        pid_t kid[2];
        for (int k = 0; k < 2; k++) {
            kid[k] = fork();
            if (kid[k] == 0) {
                uint32_t lo = k ? n / 2 : 0, hi = k ? n : n / 2;
                ts_load_opts o = {sizeof o, 1, NULL, 0};
                ts_job *t = NULL;
                int rc = ts_job_load(files + lo, hi - lo, &o, &t, NULL);
                ts_job_destroy(t);
                _exit(rc ? 2 : 0);
            }
        }
        int ok = 1;
        for (int k = 0; k < 2; k++) {
            int st;
            if (kid[k] < 0 || waitpid(kid[k], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) ok = 0;
        }
        if (!ok) return 0;
        v[i] = now_s() - t0;
    }
    qsort(v, (size_t)reps, sizeof *v, cmp_double);
    return v[reps / 2];
}

static double file_mb(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0;
}

/* Per-core throughput is JSON bytes over CPU seconds (user + system, around
 * the load only, in both programs): other jobs on the machine disturb it far
 * less than wall time. */
static void report(const char *what, double json_mb, result ours, double fastest_cpu_s, int reps, result py)
{
    printf("%-34s %8.1f MB JSON\n", what, json_mb);
    if (!ours.ok) { printf("  trainscope: FAILED\n"); return; }
    printf("  trainscope  wall %7.3f s  cpu %7.3f s  %7.1f MB/s per core  peak RSS %7.1f MB  RSS/JSON %.2f\n",
           ours.wall_s, ours.cpu_s, json_mb / ours.cpu_s, ours.peak_rss_mb, ours.peak_rss_mb / json_mb);
    printf("  (median of %d runs by CPU time; fastest run %.1f MB/s per core)\n", reps, json_mb / fastest_cpu_s);
    printf("  trainscope stats on the loaded trace: cpu %.3f s, peak RSS with it %.1f MB\n",
           ours.stats_cpu_s, ours.peak_rss_all_mb);
    if (py.ok)
        printf("  python json wall %7.3f s  cpu %7.3f s  %7.1f MB/s per core  peak RSS %7.1f MB  RSS/JSON %.2f\n"
               "  ours/python: %.1fx the throughput per core, %.2fx the peak RSS\n",
               py.wall_s, py.cpu_s, json_mb / py.cpu_s, py.peak_rss_mb, py.peak_rss_mb / json_mb,
               py.cpu_s / ours.cpu_s, ours.peak_rss_mb / py.peak_rss_mb);
}

int main(int argc, char **argv)
{
    const char *data = getenv("TS_DATA") ? getenv("TS_DATA") : "../shared/data";
    int target_mb = 500, n_ranks = 4, python = 1, reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
        else if (!strcmp(argv[i], "--mb") && i + 1 < argc) target_mb = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ranks") && i + 1 < argc) n_ranks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-python")) python = 0;
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--data DIR] [--mb N] [--ranks N] [--repeat N] [--no-python]\n", argv[0]);
            return 2;
        }
    }
    char gz[1024];
    snprintf(gz, sizeof gz, "%s/kineto/nccl_parser_config/nccl_data.json.gz", data);
    size_t n = 0;
    char *src = read_gz(gz, &n);
    if (!src || n == 0) { fprintf(stderr, "cannot read %s\n", gz); return 1; }
    double src_mb = (double)n / 1e6;
    printf("trainscope ingest benchmark (timings are noisy when other jobs share the CPU)\n\n");

    /* Make the inputs first, then free the source copy: a forked child
     * would otherwise count the parent's resident pages in its peak RSS. */
    int copies = (int)(target_mb / src_mb + 0.5);
    if (copies < 1) copies = 1;
    char big[256];
    snprintf(big, sizeof big, "/tmp/trainscope_bench_%dx_v3.json", copies);
    if (file_mb(big) < src_mb * copies * 0.99 && make_trace(big, src, n, copies, 0)) {
        fprintf(stderr, "cannot write %s\n", big);
        return 1;
    }
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/trainscope_bench_ranks_%d_v3", n_ranks);
    mkdir(dir, 0755);
    double dir_mb = 0;
    if (n_ranks > 64) n_ranks = 64;
    static char rank_paths[64][512];
    const char *rank_files[64];
    for (int r = 0; r < n_ranks; r++) {
        char *p = rank_paths[r];
        snprintf(p, sizeof rank_paths[r], "%s/rank-%d.json", dir, r);
        rank_files[r] = p;
        if (file_mb(p) < src_mb * 4 * 0.99 && make_trace(p, src, n, 4, r)) { fprintf(stderr, "cannot write %s\n", p); return 1; }
        dir_mb += file_mb(p);
    }
    free(src);

    /* (a) the real trace, gzip */
    const char *pa[] = {gz};
    double fastest = 0;
    result ours = run_ours_median(pa, 1, 1, reps, &fastest), py = python ? run_python(gz) : (result){0};
    report("(a) nccl_data.json.gz (gzip)", src_mb, ours, fastest, reps, py);
    result a_ours = ours, a_py = py;
    /* The load decodes on a second thread while it parses, so its wall time
     * is bounded by decoding (the floor) or parsing, whichever is slower. */
    double gz_s = gunzip_cpu_s(gz), ld_s = libdeflate_cpu_s(gz, n), is_s = isal_cpu_s(gz);
    if (is_s > 0)
        printf("  ISA-L inflate alone (the loader's decoder): cpu %.3f s (%.0f MB/s, %.0f%% of the load's CPU); "
               "load wall / inflate = %.2f\n", is_s, src_mb / is_s, 100 * is_s / ours.cpu_s, ours.wall_s / is_s);
    printf("  zlib inflate alone: cpu %.3f s (%.0f MB/s); load wall / zlib inflate = %.2f\n",
           gz_s, src_mb / gz_s, ours.wall_s / gz_s);
    if (ld_s > 0)
        printf("  libdeflate whole-buffer inflate: cpu %.3f s (%.0f MB/s; needs the whole JSON in memory)\n",
               ld_s, src_mb / ld_s);

    /* (b) ~target_mb replicated, uncompressed */
    const char *pb[] = {big};
    ours = run_ours_median(pb, 1, 1, reps, &fastest);
    py = python ? run_python(big) : (result){0};
    char what[128];
    snprintf(what, sizeof what, "(b) %d copies, plain JSON", copies);
    report(what, file_mb(big), ours, fastest, reps, py);
    result b_ours = ours, b_py = py;
    double b_mb = file_mb(big);

    /* (c) multi-rank directory: 1 vs 2 threads */
    const char *pc[] = {dir};
    result one = run_ours_median(pc, 1, 1, reps, NULL), two = run_ours_median(pc, 1, 2, reps, NULL);
    printf("(c) %d ranks in a directory          %8.1f MB JSON\n", n_ranks, dir_mb);
    if (one.ok && two.ok)
        printf("  1 thread    wall %7.3f s  %8.1f MB/s  cpu %7.3f s\n"
               "  2 threads   wall %7.3f s  %8.1f MB/s  cpu %7.3f s  wall speedup %.2fx (peak RSS %.1f MB)\n",
               one.wall_s, dir_mb / one.wall_s, one.cpu_s, two.wall_s, dir_mb / two.wall_s, two.cpu_s,
               one.wall_s / two.wall_s, two.peak_rss_mb);
    else
        printf("  FAILED\n");
    double pair_s = n_ranks >= 2 ? independent_pair_wall_s(rank_files, (uint32_t)n_ranks, reps) : 0;
    double ceiling = pair_s > 0 && one.ok ? one.wall_s / pair_s : 0;
    if (ceiling > 0)
        printf("  the machine's ceiling: the same files as 2 independent 1-thread processes at once, wall %.3f s: "
               "%.2fx one thread\n", pair_s, ceiling);

    /* The targets, each as a ratio taken in this run. The absolute
     * "1 GB/s per core" was set as "10x Python, 60x HTA" on a machine where
     * Python's json.load did 97 MB/s; on this kind of machine json.load has
     * measured 19-97 MB/s from one session to the next, so the ratio is
     * the figure that carries from machine to machine. */
    printf("\ntargets (issue 2), measured in this run:\n");
    printf("  (b) throughput per core: %.0f MB/s", b_mb / b_ours.cpu_s);
    if (b_py.ok)
        printf(" = %.1fx Python's json.load (%.1f MB/s): target 10x -> %s", b_py.cpu_s / b_ours.cpu_s,
               b_mb / b_py.cpu_s, b_py.cpu_s / b_ours.cpu_s >= 10 ? "met" : "NOT met");
    printf("; 1,000 MB/s absolute -> %s on this machine now\n", b_mb / b_ours.cpu_s >= 1000 ? "met" : "not met");
    printf("  (b) peak RSS %.2fx the JSON: target <= 1.0x -> %s\n", b_ours.peak_rss_mb / b_mb,
           b_ours.peak_rss_mb <= b_mb ? "met" : "NOT met");
    if (a_py.ok)
        printf("  (a) gzip: %.1fx Python's json.load on the same file; load wall %.2fx zlib's inflate alone "
               "(target: bounded by decompression, <= ~1.5x) -> %s\n", a_py.cpu_s / a_ours.cpu_s, a_ours.wall_s / gz_s,
               a_ours.wall_s <= 1.5 * gz_s ? "met" : "NOT met");
    if (one.ok && two.ok && ceiling > 0)
        printf("  (c) 2-thread wall speedup %.2fx; 2 independent processes on the same files reach %.2fx: the threads get "
               "%.0f%% of what this machine gives two loads at once\n", one.wall_s / two.wall_s, ceiling,
               100 * (one.wall_s / two.wall_s) / ceiling);
    return 0;
}
