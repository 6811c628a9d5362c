/* collective.c - alpha-beta cost models of collectives (nccl-tests terms).
 *
 * A model is a list of samples and, after ts_coll_model_fit, one fit per
 * (kind, n_ranks) group. A fit is two lines over bus bytes x = bytes *
 * bus_factor(kind, n): time = alpha + x / busbw. The "tree" line covers the
 * small, latency-bound sizes and the "ring" line the large, bandwidth-bound
 * ones (NCCL's tuner switches protocol and algorithm the same way); a
 * prediction takes the faster of the two, as the tuner does.
 * Invariants: fits are sorted by (kind, n_ranks); alpha >= 0; busbw > 0.
 * Not for: the simulation itself (sim.c) or reading traces.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"
#include "replay/contention.h"
#include "trainscope/replay.h"

typedef struct coll_sample {
    uint8_t  kind;        /* ts_coll_kind */
    uint32_t n_ranks;
    uint64_t bytes;
    int64_t  time_ns;     /* > 0 */
} coll_sample;

typedef struct coll_line {
    double alpha_ns;      /* fixed cost, >= 0 */
    double ns_per_byte;   /* 1 / bus bandwidth in bytes/ns, > 0 */
} coll_line;

typedef struct coll_fit {
    ts_coll_fit_info info;
    coll_line line[TS_ALGO_COUNT];
} coll_fit;

struct ts_coll_model {
    coll_sample *samples;
    uint32_t     n_samples, cap_samples;
    coll_fit    *fits;
    uint32_t     n_fits, cap_fits;
    double       given_busbw_gbps;   /* 0 = use the fit */
    double       given_latency_us;   /* 0 = use the fit */
    double       cpu_compute_ratio;  /* CPU-only (gloo) logs: compute rate beside all-reduces in flight
                                        over its rate alone, (0, 1]; 0 = not in the log */
    double       cpu_in_flight;      /* all-reduces running on average meanwhile, > 0; 0 = not in the
                                        log (then TS_GLOO_WORKERS) */
    double       cpu_disturbed_ratio;/* the log's sharing line had compute faster beside the all-reduces
                                        than alone (this ratio, > 1: the machine's load changed during
                                        the test), so it gives no slowdown; 0 = not so */
    /* Servers, from the "Rank N ... on HOST" lines of nccl-tests logs: the
     * GPUs a server holds (the most ranks one host ran in a log that spans
     * several hosts; 0 = no such log) and, per logged group size, whether
     * it spanned several hosts. */
    uint32_t     gpus_per_server;
    uint32_t     n_spans;
    struct { uint32_t n_ranks; bool multi; } spans[32];
};

static const char *const kind_names[TS_COLL_COUNT] = {
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv",
};

const char *ts_coll_kind_name(ts_coll_kind k)
{
    return (unsigned)k < TS_COLL_COUNT ? kind_names[k] : "unknown";
}

/* Case-insensitive substring test ignoring '_' in the haystack, so
 * "all_reduce", "allreduce" and "AllReduce" all match "allreduce". */
static bool name_has(const char *name, const char *needle)
{
    char flat[256];
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < sizeof flat; p++)
        if (*p != '_' && *p != '-') flat[n++] = (char)tolower((unsigned char)*p);
    flat[n] = 0;
    return strstr(flat, needle) != NULL;
}

bool ts_coll_kind_from_name(const char *name, ts_coll_kind *out)
{
    /* Order matters: "reducescatter" before "reduce", "allreduce" before "reduce". */
    static const struct { const char *needle; ts_coll_kind kind; } table[] = {
        {"allreduce", TS_COLL_ALL_REDUCE},        {"reducescatter", TS_COLL_REDUCE_SCATTER},
        {"allgather", TS_COLL_ALL_GATHER},        {"alltoall", TS_COLL_ALL_TO_ALL},
        {"broadcast", TS_COLL_BROADCAST},         {"sendrecv", TS_COLL_SEND_RECV},
        {"send", TS_COLL_SEND_RECV},              {"recv", TS_COLL_SEND_RECV},
        {"reduce", TS_COLL_REDUCE},
    };
    if (!name) return false;
    bool comm = name_has(name, "nccl") || name_has(name, "gloo") || name_has(name, "c10d") ||
                name_has(name, "mpi") || !strncmp(name, "all", 3) || name_has(name, "collective");
    if (!comm) return false;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (name_has(name, table[i].needle)) { *out = table[i].kind; return true; }
    return false;
}

double ts_coll_bus_factor(ts_coll_kind k, uint32_t n)
{
    if (n <= 1) return 1.0;
    switch (k) {
    case TS_COLL_ALL_REDUCE: return 2.0 * (n - 1) / n;
    case TS_COLL_ALL_GATHER:
    case TS_COLL_REDUCE_SCATTER:
    case TS_COLL_ALL_TO_ALL: return (double)(n - 1) / n;
    default: return 1.0;
    }
}

/* What a line's alpha scales with across group sizes: the latency steps of
 * a tree, 2 ceil(log2 n), for both lines. Why not a ring's 2(n-1) steps for
 * the ring line: its alpha is the intercept of a line fitted over pipelined
 * mid-to-large messages, not n-1 hop latencies, and NCCL's intra-server hops
 * cost little beside the network's. On the A100 sweeps of
 * ../shared/data/nccl-tests (bench/collectives), pricing 128 GPUs from a
 * 16-GPU fit had a 90th percentile error of 226% on messages of 1 MiB and
 * more with 2(n-1) and 22% with log2 steps; 64 from 32, 35% and 16%. */
static double latency_steps(uint32_t n)
{
    return n <= 1 ? 1.0 : 2.0 * ceil(log2((double)n));
}

int ts_coll_model_create(ts_coll_model **out)
{
    *out = ts__calloc(1, sizeof **out);
    return *out ? TS_OK : TS_ENOMEM;
}

void ts_coll_model_destroy(ts_coll_model *m)
{
    if (!m) return;
    ts__free(m->samples, (size_t)m->cap_samples * sizeof *m->samples);
    ts__free(m->fits, (size_t)m->cap_fits * sizeof *m->fits);
    ts__free(m, sizeof *m);
}

int ts_coll_model_add_sample(ts_coll_model *m, ts_coll_kind kind, uint32_t n_ranks,
                             uint64_t bytes, int64_t time_ns)
{
    if ((unsigned)kind >= TS_COLL_COUNT || n_ranks == 0 || time_ns <= 0) return TS_EINVAL;
    if (ts__grow((void **)&m->samples, &m->cap_samples, sizeof *m->samples, m->n_samples + 1))
        return TS_ENOMEM;
    m->samples[m->n_samples++] = (coll_sample){(uint8_t)kind, n_ranks, bytes, time_ns};
    return TS_OK;
}

/* ---- nccl-tests logs ---- */

/* Strip mpirun's "[1,0]<stdout>:" prefix. */
static char *strip_mpi_prefix(char *line)
{
    if (line[0] != '[') return line;
    char *p = strstr(line, ">:");
    return p ? p + 2 : line;
}

/* The kind named by an nccl-tests binary ("reduce_scatter_perf") in s, if any. */
static bool perf_kind(const char *s, ts_coll_kind *out)
{
    static const struct { const char *bin; ts_coll_kind kind; } bins[] = {
        {"all_reduce_perf", TS_COLL_ALL_REDUCE}, {"all_gather_perf", TS_COLL_ALL_GATHER},
        {"reduce_scatter_perf", TS_COLL_REDUCE_SCATTER}, {"alltoall_perf", TS_COLL_ALL_TO_ALL},
        {"broadcast_perf", TS_COLL_BROADCAST}, {"sendrecv_perf", TS_COLL_SEND_RECV},
        {"reduce_perf", TS_COLL_REDUCE},
    };
    for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++)
        if (strstr(s, bins[i].bin)) { *out = bins[i].kind; return true; }
    return false;
}

enum { LOG_MAX_HOSTS = 64 };

typedef struct log_state {
    ts_coll_kind kind;
    uint32_t max_rank_plus1;   /* from "#  Rank N ..." lines */
    int      time_col;         /* column of the out-of-place time, from the header */
    uint32_t n_hosts;          /* distinct "on HOST" names of the Rank lines (at most LOG_MAX_HOSTS) */
    char     host[LOG_MAX_HOSTS][64];
    uint32_t host_ranks[LOG_MAX_HOSTS];
} log_state;

/* "Rank  8 Pid  12115 on node-000002 device  0 ...": count the rank on its host. */
static void log_host(log_state *st, const char *p)
{
    const char *on = strstr(p, " on ");
    char name[64];
    if (!on || sscanf(on + 4, "%63s", name) != 1) return;
    uint32_t i = 0;
    while (i < st->n_hosts && strcmp(st->host[i], name)) i++;
    if (i == st->n_hosts) {
        if (i == LOG_MAX_HOSTS) return;
        snprintf(st->host[i], sizeof st->host[i], "%s", name);
        st->host_ranks[i] = 0;
        st->n_hosts++;
    }
    st->host_ranks[i]++;
}

/* After a log: remember whether its group spanned several servers and, if
 * so, how many GPUs one server gave it. */
static void note_servers(ts_coll_model *m, const log_state *st, uint32_t n_ranks)
{
    if (st->n_hosts == 0) return;
    bool multi = st->n_hosts > 1;
    if (multi)
        for (uint32_t i = 0; i < st->n_hosts; i++)
            if (st->host_ranks[i] > m->gpus_per_server) m->gpus_per_server = st->host_ranks[i];
    for (uint32_t i = 0; i < m->n_spans; i++)
        if (m->spans[i].n_ranks == n_ranks) { m->spans[i].multi = multi; return; }
    if (m->n_spans < sizeof m->spans / sizeof m->spans[0]) {
        m->spans[m->n_spans].n_ranks = n_ranks;
        m->spans[m->n_spans++].multi = multi;
    }
}

/* bench/gloo_allreduce.py's line "# sharing with compute: ... the matmuls
 * run at A/s alone and B/s (xR) beside them[, F all-reduces running on
 * average]": B / A and F into m (F missing: gloo's workers all busy). Other
 * logs have no such line. */
static void log_sharing(ts_coll_model *m, const char *line)
{
    const char *p = strstr(line, "matmuls run at "), *q = strstr(line, "beside them, ");
    double alone, beside, f;
    if (!strstr(line, "sharing with compute") || !p ||
        sscanf(p, "matmuls run at %lf/s alone and %lf/s", &alone, &beside) != 2 || !(alone > 0) || !(beside > 0))
        return;
    if (beside > alone) {   /* a measurement the load disturbed, not a speed-up from sharing */
        m->cpu_disturbed_ratio = beside / alone;
        return;
    }
    m->cpu_compute_ratio = beside / alone;
    m->cpu_in_flight = q && sscanf(q, "beside them, %lf all-reduces running", &f) == 1 && f > 0 ? f : 0;
}

double ts__coll_model_cpu_disturbed(const ts_coll_model *m) { return m ? m->cpu_disturbed_ratio : 0; }

double ts__coll_model_cpu_kappa(const ts_coll_model *m)
{
    /* The sharing test ran f all-reduces beside the matmuls: rate ratio q,
     * 1 / q = 1 + kappa f. */
    if (!m || !(m->cpu_compute_ratio > 0)) return 0;
    double f = m->cpu_in_flight > 0 ? m->cpu_in_flight : TS_GLOO_WORKERS;
    return (1.0 / m->cpu_compute_ratio - 1.0) / f;
}

static void log_header(log_state *st, const char *line)
{
    const char *p = line + 1;
    int rank;
    if (sscanf(p, " Rank %d", &rank) == 1 && rank >= 0) {
        if ((uint32_t)rank + 1 > st->max_rank_plus1) st->max_rank_plus1 = (uint32_t)rank + 1;
        log_host(st, p);
    }
    perf_kind(p, &st->kind);
    if (!strstr(p, "size") || !strstr(p, "time")) return;
    /* Header: size count type [redop] [root] time algbw busbw #wrong time ... */
    char buf[512];
    snprintf(buf, sizeof buf, "%s", p);
    int col = 0;
    for (char *t = strtok(buf, " \t\r\n"); t; t = strtok(NULL, " \t\r\n"), col++)
        if (!strcmp(t, "time")) { st->time_col = col; break; }
}

static int log_row(ts_coll_model *m, const log_state *st, char *line, uint32_t n_ranks)
{
    char *tok[24];
    int n = 0;
    for (char *t = strtok(line, " \t\r\n"); t && n < 24; t = strtok(NULL, " \t\r\n")) tok[n++] = t;
    if (n <= st->time_col) return TS_EPARSE;
    char *end;
    unsigned long long bytes = strtoull(tok[0], &end, 10);
    if (*end) return TS_EPARSE;
    /* The out-of-place time only: with one GPU the in-place one is a no-op. */
    double us = strtod(tok[st->time_col], &end);
    if (*end) return TS_EPARSE;
    if (!(us > 0)) return TS_OK;          /* "0" rows of skipped sizes carry no timing */
    if (!(us < 1e12)) return TS_EPARSE;   /* 11 days for one all-reduce: not a time (and past int64 ns soon) */
    return ts_coll_model_add_sample(m, st->kind, n_ranks, bytes, (int64_t)llround(us * 1e3));
}

int ts_coll_model_load_nccl_tests(ts_coll_model *m, const char *path, ts_error *err)
{
    size_t len, cap;
    char *text = ts__read_bounded(path, "an nccl-tests log", TS__SIDE_FILE_MAX_BYTES, &len, &cap, err);
    if (!text) return err ? err->status : TS_EIO;
    log_state *st = ts__calloc(1, sizeof *st);   /* ~4 KiB of host names: not on the stack */
    if (!st) { ts__free(text, cap); return ts__error(err, TS_ENOMEM, "%s: out of memory", path); }
    st->kind = TS_COLL_ALL_REDUCE;
    st->time_col = 4;
    perf_kind(path, &st->kind);
    uint32_t first_new = m->n_samples, line_no = 0, n_rows = 0;
    char raw[1024];
    int rc = TS_OK;
    /* Two passes over one buffered read would need the whole file; instead rows
     * are added with n_ranks 0 and patched once the Rank lines are all seen
     * (nccl-tests prints them all before the first row anyway). */
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        line_no++;
        if (n >= sizeof raw) {
            rc = ts__error(err, TS_EPARSE, "%s: line %u: longer than %zu bytes (not an nccl-tests log?)", path,
                           line_no, sizeof raw - 1);
            break;
        }
        memcpy(raw, p, n);
        raw[n] = 0;
        p += n + 1;
        char *line = strip_mpi_prefix(raw);
        while (*line == ' ' || *line == '\t') line++;
        if (*line == '#') { log_header(st, line); log_sharing(m, line); continue; }
        if (!isdigit((unsigned char)*line)) continue;
        rc = log_row(m, st, line, st->max_rank_plus1 ? st->max_rank_plus1 : 1);
        if (rc == TS_EPARSE) { ts__error(err, rc, "%s: line %u: malformed nccl-tests row", path, line_no); break; }
        if (rc) { ts__error(err, rc, "%s: line %u: %s", path, line_no, ts_strerror(rc)); break; }
        n_rows++;
    }
    ts__free(text, cap);
    if (!rc && n_rows == 0) rc = ts__error(err, TS_ENODATA, "%s: no nccl-tests result rows", path);
    uint32_t n_ranks = st->max_rank_plus1 ? st->max_rank_plus1 : 1;
    if (rc) {
        m->n_samples = first_new;
    } else {
        for (uint32_t i = first_new; i < m->n_samples; i++) m->samples[i].n_ranks = n_ranks;
        note_servers(m, st, n_ranks);
    }
    ts__free(st, sizeof *st);
    return rc;
}

/* ---- fitting ---- */

typedef struct xt { double x, t; uint64_t bytes; } xt;

static double line_at(coll_line l, double x) { return l.alpha_ns + x * l.ns_per_byte; }

/* Squared relative error of min(a, b) over n points (a == b: of one line). */
static double rel_err2(const xt *pts, uint32_t n, coll_line a, coll_line b)
{
    double e = 0;
    for (uint32_t i = 0; i < n; i++) {
        double p = fmin(line_at(a, pts[i].x), line_at(b, pts[i].x));
        double r = (p - pts[i].t) / pts[i].t;
        e += r * r;
    }
    return e;
}

/* Least squares of t = alpha + u x weighted by 1/t^2 (i.e. on relative error),
 * over pts[lo, hi). Neither may go negative, because a negative latency or
 * bandwidth predicts nonsense outside the fitted range: such a fit becomes
 * the better of a line through the origin and a flat one, and u stays
 * positive. O(hi - lo). */
static coll_line fit_line(const xt *pts, uint32_t lo, uint32_t hi)
{
    double sw = 0, sx = 0, sxx = 0, st = 0, sxt = 0;
    for (uint32_t i = lo; i < hi; i++) {
        double w = 1.0 / (pts[i].t * pts[i].t);
        sw += w; sx += w * pts[i].x; sxx += w * pts[i].x * pts[i].x;
        st += w * pts[i].t; sxt += w * pts[i].x * pts[i].t;
    }
    coll_line l = {0, 0};
    double det = sw * sxx - sx * sx;
    if (hi - lo >= 2 && det > 1e-300 * sw * sxx) {
        l.alpha_ns = (st * sxx - sx * sxt) / det;
        l.ns_per_byte = (sw * sxt - sx * st) / det;
    }
    if (!(l.alpha_ns >= 0) || !(l.ns_per_byte > 0)) {
        /* Constrained: a line through the origin or a flat one, whichever
         * fits the range better. Until 24 Nov 07:15 a negative latency
         * always gave the line through the origin; on a range where time
         * does not grow with size (a gloo log's 4-8 KiB rows, ~400 us each)
         * that line is ~0.1 us/B, and, below the range where it is the
         * cheaper of the two lines, it priced a 1-byte all-reduce at 0.1 us. */
        coll_line origin = {0, sxx > 0 && sxt > 0 ? sxt / sxx : 0}, flat = {sw > 0 ? st / sw : 0, 1e-12};
        double eo = rel_err2(pts + lo, hi - lo, origin, origin), ef = rel_err2(pts + lo, hi - lo, flat, flat);
        l = origin.ns_per_byte > 0 && eo < ef ? origin : flat;
    }
    if (!(l.ns_per_byte > 0)) l.ns_per_byte = 1e-12;
    return l;
}

static int cmp_xt(const void *a, const void *b)
{
    const xt *p = a, *q = b;
    return (p->x > q->x) - (p->x < q->x);
}

/* Choose the split between the tree and ring lines that minimises the squared
 * relative error of min(tree, ring): O(n^2) over a group's sizes, and a group
 * has a few dozen, so this is microseconds. */
static void fit_group(coll_fit *fit, xt *pts, uint32_t n)
{
    qsort(pts, n, sizeof *pts, cmp_xt);
    coll_line best_t = fit_line(pts, 0, n), best_r = best_t;
    /* Fewer than 3 distinct sizes, or sizes within a factor of 4 of each
     * other (a trace's few buckets, not a sweep), cannot separate a fixed
     * cost from a per-byte one, and their scatter (two buckets sharing a
     * link) would pick either at random: such a group is all per-byte
     * time. Until 26 Nov two 4.2 MB buckets of a 100 Mbit/s testbed trace
     * fitted a fixed cost of 0.7 s, and --bandwidth at 4x the link predicted
     * a slowdown; an 8.4 and a 3.8 MB one (cnn) doubled an unchanged link. */
    uint32_t distinct = n ? 1 : 0;
    for (uint32_t i = 1; i < n; i++) distinct += pts[i].x > 1.1 * pts[i - 1].x;
    bool narrow = n >= 2 && pts[0].x > 0 && (distinct < 3 || pts[n - 1].x < 4 * pts[0].x);
    if (narrow) {
        double sxx = 0, sxt = 0;
        for (uint32_t i = 0; i < n; i++) {
            double w = 1.0 / (pts[i].t * pts[i].t);
            sxx += w * pts[i].x * pts[i].x;
            sxt += w * pts[i].x * pts[i].t;
        }
        if (sxt > 0) best_t = best_r = (coll_line){0, sxt / sxx};
    }
    double best_e = rel_err2(pts, n, best_t, best_r);
    uint32_t best_k = 0;
    for (uint32_t k = 2; !narrow && k + 2 <= n; k++) {
        /* Each side needs two sizes to determine a line: over one, fit_line
         * falls back to a flat line through its mean, whose "fixed cost"
         * is the whole time of that size. Until 26 Nov 23:40 the ring line of a
         * cnn testbed trace at 1 MB buckets (sizes 0.3-8.4 MB, the four
         * largest rows all 8.4 MB) was such a line: 2.3 s at 0 bytes. */
        if (pts[k - 1].x <= 1.1 * pts[0].x || pts[n - 1].x <= 1.1 * pts[k].x) continue;
        coll_line t = fit_line(pts, 0, k), r = fit_line(pts, k, n);
        double e = rel_err2(pts, n, t, r);
        if (e < best_e) { best_e = e; best_t = t; best_r = r; best_k = k; }
    }
    fit->line[TS_ALGO_TREE] = best_t;
    fit->line[TS_ALGO_RING] = best_r;
    fit->info.switch_bytes = pts[best_k].bytes;
    double *errs = ts__malloc((size_t)n * sizeof *errs);
    double mx = 0;
    for (uint32_t i = 0; i < n; i++) {
        double p = fmin(line_at(best_t, pts[i].x), line_at(best_r, pts[i].x));
        double e = fabs(p - pts[i].t) / pts[i].t * 100.0;
        if (errs) errs[i] = e;
        if (e > mx) mx = e;
    }
    if (errs) {
        qsort(errs, n, sizeof *errs, ts__cmp_double);
        fit->info.median_abs_err_pct = n % 2 ? errs[n / 2] : 0.5 * (errs[n / 2 - 1] + errs[n / 2]);
        ts__free(errs, (size_t)n * sizeof *errs);
    }
    fit->info.max_abs_err_pct = mx;
    for (int a = 0; a < TS_ALGO_COUNT; a++) {
        fit->info.latency_us[a] = fit->line[a].alpha_ns / 1e3;
        fit->info.busbw_gbps[a] = 1.0 / fit->line[a].ns_per_byte;   /* bytes/ns = GB/s */
    }
}

static int cmp_sample(const void *a, const void *b)
{
    const coll_sample *p = a, *q = b;
    if (p->kind != q->kind) return p->kind - q->kind;
    return (p->n_ranks > q->n_ranks) - (p->n_ranks < q->n_ranks);
}

int ts_coll_model_fit(ts_coll_model *m, ts_error *err)
{
    if (m->n_samples == 0) {
        if (m->given_busbw_gbps > 0 || m->given_latency_us > 0) return TS_OK;
        return ts__error(err, TS_ENODATA, "collective model: no samples to fit and no bandwidth given");
    }
    qsort(m->samples, m->n_samples, sizeof *m->samples, cmp_sample);
    xt *pts = ts__malloc((size_t)m->n_samples * sizeof *pts);
    if (!pts) return ts__error(err, TS_ENOMEM, "collective model: out of memory");
    m->n_fits = 0;
    int rc = TS_OK;
    for (uint32_t lo = 0, hi; lo < m->n_samples; lo = hi) {
        const coll_sample *s0 = &m->samples[lo];
        for (hi = lo; hi < m->n_samples && !cmp_sample(&m->samples[hi], s0); hi++) {
            const coll_sample *s = &m->samples[hi];
            pts[hi - lo] = (xt){(double)s->bytes * ts_coll_bus_factor(s->kind, s->n_ranks),
                                (double)s->time_ns, s->bytes};
        }
        if (ts__grow((void **)&m->fits, &m->cap_fits, sizeof *m->fits, m->n_fits + 1)) { rc = TS_ENOMEM; break; }
        coll_fit *f = &m->fits[m->n_fits++];
        memset(f, 0, sizeof *f);
        f->info.kind = (ts_coll_kind)s0->kind;
        f->info.n_ranks = s0->n_ranks;
        f->info.n_samples = hi - lo;
        fit_group(f, pts, hi - lo);
    }
    ts__free(pts, (size_t)m->n_samples * sizeof *pts);
    if (rc) { m->n_fits = 0; return ts__error(err, rc, "collective model: out of memory"); }
    return TS_OK;
}

void ts_coll_model_set_bandwidth(ts_coll_model *m, double gbps) { m->given_busbw_gbps = gbps > 0 ? gbps : 0; }
void ts_coll_model_set_latency(ts_coll_model *m, double us) { m->given_latency_us = us > 0 ? us : 0; }

int ts__coll_model_spans_servers(const ts_coll_model *m, uint32_t n)
{
    if (!m) return -1;
    for (uint32_t i = 0; i < m->n_spans; i++)
        if (m->spans[i].n_ranks == n) return m->spans[i].multi;
    return m->gpus_per_server ? n > m->gpus_per_server : -1;
}

/* Whether fit f may price a group of n ranks: when both are known to be on
 * one server or both on several, or either is unknown. Why: a ring within
 * one server runs on NVLink, across servers on the network; on the A100
 * sweeps pricing 16-128 GPUs from the 8-GPU fit was 30-45% too fast. */
static bool same_span(const ts_coll_model *m, const coll_fit *f, int span_n)
{
    int sf = ts__coll_model_spans_servers(m, f->info.n_ranks);
    return span_n < 0 || sf < 0 || sf == span_n;
}

/* The fit to predict (kind, n) from: same kind, nearest n in log2 distance
 * (ties to the larger group, whose links are the slower ones); else the same
 * search over all-reduce fits. Fits on the same side of the server boundary
 * as n come first (same_span). NULL when there is no fit at all. */
static const coll_fit *nearest_fit(const ts_coll_model *m, ts_coll_kind kind, uint32_t n)
{
    int span_n = ts__coll_model_spans_servers(m, n);
    for (int pass = 0; pass < 6; pass++) {
        const coll_fit *best = NULL;
        double best_d = INFINITY;
        for (uint32_t i = 0; i < m->n_fits; i++) {
            const coll_fit *f = &m->fits[i];
            if (pass % 2 == 0 && !same_span(m, f, span_n)) continue;
            if (pass / 2 == 0 && f->info.kind != kind) continue;
            if (pass / 2 == 1 && f->info.kind != TS_COLL_ALL_REDUCE) continue;
            /* A one-rank group is a local copy: never a stand-in for a real one. */
            if ((f->info.n_ranks <= 1) != (n <= 1)) continue;
            double d = fabs(log2((double)f->info.n_ranks) - log2((double)(n ? n : 1)));
            if (d < best_d || (d == best_d && best && f->info.n_ranks > best->info.n_ranks)) { best = f; best_d = d; }
        }
        if (best) return best;
    }
    return NULL;
}

/* The fits of `kind` closest to n below and above it (NULL when none):
 * a group size between two fitted ones (on its side of the server
 * boundary) is priced between them. */
static void bracket_fits(const ts_coll_model *m, ts_coll_kind kind, uint32_t n, const coll_fit **lo, const coll_fit **hi)
{
    *lo = *hi = NULL;
    int span_n = ts__coll_model_spans_servers(m, n);
    for (uint32_t i = 0; i < m->n_fits; i++) {
        const coll_fit *f = &m->fits[i];
        if (f->info.kind != kind || f->info.n_ranks <= 1 || !same_span(m, f, span_n)) continue;
        if (f->info.n_ranks < n && (!*lo || f->info.n_ranks > (*lo)->info.n_ranks)) *lo = f;
        if (f->info.n_ranks > n && (!*hi || f->info.n_ranks < (*hi)->info.n_ranks)) *hi = f;
    }
}

/* A predicted time in ns, held at 2^62 where it would pass it (a huge size
 * at a slow bandwidth): replay then refuses the what-if as out of range,
 * where llround past int64 gave an unspecified (often negative) time. */
static int64_t ns_saturated(double ns)
{
    return ns < 0x1p62 ? (int64_t)llround(ns) : (int64_t)1 << 62;
}

int64_t ts_coll_model_predict_ns(const ts_coll_model *m, ts_coll_kind kind, uint64_t bytes, uint32_t n)
{
    if ((unsigned)kind >= TS_COLL_COUNT) return -1;
    double x = (double)bytes * ts_coll_bus_factor(kind, n);
    const coll_fit *f = nearest_fit(m, kind, n);
    if (!f) {
        if (!(m->given_busbw_gbps > 0)) return -1;
        return ns_saturated(m->given_latency_us * 1e3 + x / m->given_busbw_gbps);
    }
    /* Between two fitted group sizes: each line's alpha and seconds per byte
     * taken linearly in log2(n) between theirs. Else the nearest fit, its
     * alpha scaled by latency_steps and its bandwidth kept. */
    const coll_fit *lo = NULL, *hi = NULL;
    double t = 0;
    if (f->info.n_ranks != n && n > 1) {
        bracket_fits(m, f->info.kind, n, &lo, &hi);
        if (lo && hi) t = (log2((double)n) - log2((double)lo->info.n_ranks)) /
                          (log2((double)hi->info.n_ranks) - log2((double)lo->info.n_ranks));
        else lo = hi = NULL;
    }
    double alpha[TS_ALGO_COUNT], ns_per_byte[TS_ALGO_COUNT];
    for (int a = 0; a < TS_ALGO_COUNT; a++) {
        if (lo) {
            alpha[a] = (1 - t) * lo->line[a].alpha_ns + t * hi->line[a].alpha_ns;
            ns_per_byte[a] = (1 - t) * lo->line[a].ns_per_byte + t * hi->line[a].ns_per_byte;
        } else {
            alpha[a] = f->line[a].alpha_ns * latency_steps(n) / latency_steps(f->info.n_ranks);
            ns_per_byte[a] = f->line[a].ns_per_byte;
        }
    }
    /* A given bandwidth is a bus bandwidth (nccl-tests' terms: the same
     * bytes-on-the-wire rule, ts_coll_bus_factor, for every algorithm), so
     * each line moves x bus bytes at it and keeps its fixed cost. Until 26
     * Nov 23:40 it replaced the ring line's slope and scaled the tree's by the
     * same ratio; a flat ring line (slope 1e-12) then scaled the tree's
     * past any use and left the ring line's fixed cost as the price. */
    double best = INFINITY;
    for (int a = 0; a < TS_ALGO_COUNT; a++) {
        double al = m->given_latency_us > 0 ? m->given_latency_us * 1e3 : alpha[a];
        double tm = al + (m->given_busbw_gbps > 0 ? x / m->given_busbw_gbps : x * ns_per_byte[a]);
        if (tm < best) best = tm;
    }
    return ns_saturated(best);
}

uint32_t ts_coll_model_n_fits(const ts_coll_model *m) { return m->n_fits; }

void ts_coll_model_fit_info(const ts_coll_model *m, uint32_t i, ts_coll_fit_info *out)
{
    if (i < m->n_fits) *out = m->fits[i].info;
    else memset(out, 0, sizeof *out);
}
