/* scale_gen.c - write N rank files of one job derived from real rank traces,
 * for bench/scale.sh and the scale tests (issue 27 item 4).
 *
 * Rank r is a copy of source r % n_sources (e.g. nccl_data alone, or the two
 * trace_filter ranks alternating) with its clock jittered: every "ts" becomes
 * t0 + (ts - t0) * f_r + o_r and every "dur" dur * f_r, where f_r is uniform in
 * [1 - 0.001 - jitter, 1 - 0.001] and o_r a clock offset uniform in [0, 1000) us,
 * deterministic in the seed (--jitter -1: f_r = 1, clock offsets only, so
 * every copy keeps its source's exact nesting: bench/optimize's folded
 * 1,024-rank search). Each event's ends are mapped and rounded (a
 * "dur" is taken to follow its event's "ts", as Kineto writes them). Stretching a rank's whole clock keeps its nesting,
 * its order and its collectives (names, sequence numbers, sizes, process
 * groups) as they were, so the job's collectives stay consistent; each rank
 * arrives at them at its own pace. distributedInfo's "rank" and "world_size"
 * become r and N. Numbers keep their form (integers stay integers).
 * Not for: analysis. Text-level edits: the sources must be Chrome-trace JSON
 * with "ts"/"dur" written as plain numbers (Kineto's are).
 *
 * Usage: build/bench/scale_gen --out DIR --ranks N [--jitter 0.02] [--seed 1]
 *            [--compress none|gz|zst|mix] [--names rank|host] SOURCE.json[.gz]...
 * Files are DIR/rank-<r>.json[.gz|.zst] (mix: none, gz, zst by r % 3), or with
 * --names host DIR/host_<hash>.pt.trace.json[...] (rank only inside, as Kineto).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

typedef struct buf { char *p; size_t n, cap; } buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) { fprintf(stderr, "scale_gen: out of memory\n"); exit(2); }
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static buf read_source(const char *path)
{
    gzFile f = gzopen(path, "rb");
    if (!f) { fprintf(stderr, "scale_gen: %s: cannot open\n", path); exit(2); }
    buf b = {0};
    char chunk[1 << 16];
    int k;
    while ((k = gzread(f, chunk, sizeof chunk)) > 0) put(&b, chunk, (size_t)k);
    if (k < 0) { fprintf(stderr, "scale_gen: %s: read failed\n", path); exit(2); }
    gzclose(f);
    put(&b, "", 1);
    b.n--;
    return b;
}

static uint64_t ts_mix(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33;
    return x;
}

static double unit(uint64_t *s)
{
    *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
    return (double)((*s * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

/* The smallest "ts" of the source: the origin the stretch keeps fixed. */
static double min_ts(const buf *src)
{
    double lo = INFINITY;
    for (const char *p = src->p; (p = strstr(p, "\"ts\":")); p += 5) {
        double v = strtod(p + 5, NULL);
        if (v < lo) lo = v;
    }
    return isfinite(lo) ? lo : 0;
}

/* Copy src with key's numbers rewritten: "rank"/"world_size" inside
 * distributedInfo set, "ts"/"dur" stretched. */
static void transform(const buf *src, buf *out, double t0, double f, double off_us, int rank, int world)
{
    const char *p = src->p, *end = src->p + src->n;
    const char *di = strstr(src->p, "\"distributedInfo\"");
    const char *di_end = di ? strchr(di, '}') : NULL;
    char num[64];
    double last_ts = t0;   /* the source "ts" of the event whose "dur" comes next */
    const char *ts1 = strstr(src->p, "\"ts\":");   /* a source in whole us stays in whole us */
    int ns = ts1 && strcspn(ts1 + 5, ".,}") < strcspn(ts1 + 5, ",}");
    while (p < end) {
        const char *q = strchr(p, '"');
        if (!q) { put(out, p, (size_t)(end - p)); break; }
        put(out, p, (size_t)(q - p));
        int is_ts = !strncmp(q, "\"ts\":", 5), is_dur = !strncmp(q, "\"dur\":", 6);
        int in_di = di && q > di && q < di_end;
        int is_rank = in_di && !strncmp(q, "\"rank\":", 7), is_world = in_di && !strncmp(q, "\"world_size\":", 13);
        if (!is_ts && !is_dur && !is_rank && !is_world) {   /* copy the string as it is */
            const char *e = q + 1;
            while (e < end && *e != '"') e += *e == '\\' ? 2 : 1;
            put(out, q, (size_t)(e + 1 - q));
            p = e + 1;
            continue;
        }
        const char *colon = strchr(q, ':') + 1;
        put(out, q, (size_t)(colon - q));
        while (*colon == ' ') put(out, colon++, 1);
        char *stop;
        double v = strtod(colon, &stop);
        if (stop == colon) { p = colon; continue; }   /* not a number: leave it */
        int frac = memchr(colon, '.', (size_t)(stop - colon)) != NULL;
        int n;
        if (is_rank) n = snprintf(num, sizeof num, "%d", rank);
        else if (is_world) n = snprintf(num, sizeof num, "%d", world);
        else {
            /* Both ends mapped and rounded (to the ns, or to the us where the
             * source has whole us), the duration their difference: rounding
             * is monotone, so a child never ends past its parent. */
            double scale = ns ? 1000.0 : 1.0;
            long long a = llround((t0 + ((is_ts ? v : last_ts) - t0) * f + off_us) * scale);
            long long w = is_ts ? a : llround((t0 + (last_ts + v - t0) * f + off_us) * scale) - a;
            if (is_ts) last_ts = v;
            n = ns ? snprintf(num, sizeof num, "%s%lld.%03lld", w < 0 ? "-" : "", llabs(w) / 1000, llabs(w) % 1000)
                   : snprintf(num, sizeof num, frac ? "%lld.0" : "%lld", w);
        }
        put(out, num, (size_t)n);
        p = stop;
    }
}

static void write_file(const char *path, const buf *b, const char *how)
{
    FILE *f = fopen(path, "wb");
    if (!f) { fprintf(stderr, "scale_gen: %s: cannot create\n", path); exit(2); }
    int ok = 1;
    if (!strcmp(how, "gz")) {
        fclose(f);
        gzFile g = gzopen(path, "wb1");
        ok = g && gzwrite(g, b->p, (unsigned)b->n) == (int)b->n;
        ok &= g && gzclose(g) == Z_OK;
    } else if (!strcmp(how, "zst")) {
        size_t cap = ZSTD_compressBound(b->n);
        char *z = malloc(cap);
        size_t k = z ? ZSTD_compress(z, cap, b->p, b->n, 1) : 0;
        ok = z && !ZSTD_isError(k) && fwrite(z, 1, k, f) == k;
        ok &= fclose(f) == 0;
        free(z);
    } else {
        ok = fwrite(b->p, 1, b->n, f) == b->n;
        ok &= fclose(f) == 0;
    }
    if (!ok) { fprintf(stderr, "scale_gen: %s: write failed (disk full?)\n", path); exit(2); }
}

int main(int argc, char **argv)
{
    const char *out = NULL, *compress = "none", *names = "rank", *srcs[16];
    int n = 0, n_src = 0;
    double jitter = 0.02;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--out") && v) out = argv[++i];
        else if (!strcmp(argv[i], "--ranks") && v) n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--jitter") && v) jitter = atof(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && v) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--compress") && v) compress = argv[++i];
        else if (!strcmp(argv[i], "--names") && v) names = argv[++i];
        else if (argv[i][0] != '-' && n_src < 16) srcs[n_src++] = argv[i];
        else { fprintf(stderr, "usage: %s --out DIR --ranks N [--jitter J] [--seed S] "
                       "[--compress none|gz|zst|mix] [--names rank|host] SOURCE...\n", argv[0]); return 2; }
    }
    if (!out || n <= 0 || n_src == 0) { fprintf(stderr, "scale_gen: --out, --ranks and a SOURCE are needed\n"); return 2; }
    buf src[16];
    double t0[16];
    for (int s = 0; s < n_src; s++) { src[s] = read_source(srcs[s]); t0[s] = min_ts(&src[s]); }
    buf o = {0};
    uint64_t rng = seed * 0x9e3779b97f4a7c15ULL + 1;
    static const char *const kinds[3] = {"none", "gz", "zst"};
    for (int r = 0; r < n; r++) {
        /* slower clocks only (f < 1): a child that a whole-us source ends 1 us
         * after its parent (nested by the reader's rounding rule) stays within 1 us */
        double f = 1.0 - 0.001 - jitter * unit(&rng), off = 1000.0 * unit(&rng);
        if (jitter < 0) f = 1.0;   /* --jitter -1: offsets only, each copy exactly its source's shape */
        const char *how = !strcmp(compress, "mix") ? kinds[r % 3] : compress;
        o.n = 0;
        transform(&src[r % n_src], &o, t0[r % n_src], f, off, r, n);
        char path[4096];
        const char *ext = !strcmp(how, "gz") ? ".gz" : !strcmp(how, "zst") ? ".zst" : "";
        if (!strcmp(names, "host"))   /* Kineto's way: no rank in the name, names in no rank order */
            snprintf(path, sizeof path, "%s/host_%08llx.pt.trace.json%s", out,
                     (unsigned long long)(ts_mix((uint64_t)r + seed) & 0xffffffffu), ext);
        else
            snprintf(path, sizeof path, "%s/rank-%d.json%s", out, r, ext);
        write_file(path, &o, how);
    }
    free(o.p);
    for (int s = 0; s < n_src; s++) free(src[s].p);
    return 0;
}
