/* windows.c - one job traced in several profiling windows (replay --windows):
 * each window's replay figures kept after its trace and replay are gone, and
 * the job's figures as medians over the windows (replay.h says why).
 *
 * Not for: loading or replaying a window (the caller does, one at a time, so
 * memory stays one window's) or printing (report/replay.c).
 * Invariants: every kept window has the first window's ranks in its order;
 * warnings are owned copies; medians are computed on demand in O(n log n)
 * over n windows (a handful) in a scratch array grown with the windows.
 */
#include <string.h>

#include "core/core.h"
#include "trace/model.h"
#include "replay/replay.h"

typedef struct window {
    char                *path;          /* owned */
    uint32_t             n_iterations;
    int64_t              measured_ns, predicted_ns;
    ts_replay_rank_info *ranks;         /* [n_ranks] as ts_replay_rank gives them */
} window;

typedef struct ingest_warning {
    int32_t  rank;
    int      kind;                      /* ts_warn_kind */
    uint64_t count;
    char    *file, *first;              /* owned */
} ingest_warning;

struct ts_replay_windows {
    window         *w;
    uint32_t        n, cap;
    uint32_t        n_ranks;            /* every window's (the first's) */
    bool            what_if;
    char          **warnings;           /* distinct lines, first-seen order */
    uint32_t        n_warnings;
    ingest_warning *ingest;
    uint32_t        n_ingest;
    int64_t        *scratch;            /* [cap_scratch]: one figure per window, for a median */
    uint32_t        cap_scratch;
};

int ts_replay_windows_create(ts_replay_windows **out)
{
    *out = ts__calloc(1, sizeof **out);
    return *out ? TS_OK : TS_ENOMEM;
}

void ts_replay_windows_destroy(ts_replay_windows *w)
{
    if (!w) return;
    for (uint32_t i = 0; i < w->n; i++) {
        ts__free(w->w[i].path, strlen(w->w[i].path) + 1);
        ts__free(w->w[i].ranks, ((size_t)w->n_ranks + 1) * sizeof *w->w[i].ranks);
    }
    ts__free(w->w, (size_t)w->cap * sizeof *w->w);
    ts__free(w->scratch, (size_t)w->cap_scratch * sizeof *w->scratch);
    for (uint32_t i = 0; i < w->n_warnings; i++) ts__free(w->warnings[i], strlen(w->warnings[i]) + 1);
    ts__free(w->warnings, (size_t)w->n_warnings * sizeof *w->warnings);
    for (uint32_t i = 0; i < w->n_ingest; i++) {
        ts__free(w->ingest[i].file, strlen(w->ingest[i].file) + 1);
        ts__free(w->ingest[i].first, strlen(w->ingest[i].first) + 1);
    }
    ts__free(w->ingest, (size_t)w->n_ingest * sizeof *w->ingest);
    ts__free(w, sizeof *w);
}

static int keep_warning(ts_replay_windows *w, const char *msg)
{
    for (uint32_t i = 0; i < w->n_warnings; i++)
        if (!strcmp(w->warnings[i], msg)) return TS_OK;
    char *copy = ts__strdup(msg);
    char **grown = copy ? ts__realloc(w->warnings, (size_t)w->n_warnings * sizeof *grown,
                                      ((size_t)w->n_warnings + 1) * sizeof *grown) : NULL;
    if (!grown) { if (copy) ts__free(copy, strlen(copy) + 1); return TS_ENOMEM; }
    w->warnings = grown;
    w->warnings[w->n_warnings++] = copy;
    return TS_OK;
}

static int keep_ingest(ts_replay_windows *w, const ts_job *t)
{
    for (uint32_t i = 0; t && i < t->n_ranks; i++) {
        const ts_rank *r = t->ranks[i];
        for (int k = 0; k < TS_WARN_COUNT; k++) {
            if (!r->warn_count[k]) continue;
            char *file = ts__strdup(r->path), *first = ts__strdup(r->warn_first[k] ? r->warn_first[k] : "");
            ingest_warning *grown = file && first ? ts__realloc(w->ingest, (size_t)w->n_ingest * sizeof *grown,
                                                                ((size_t)w->n_ingest + 1) * sizeof *grown) : NULL;
            if (!grown) {
                if (file) ts__free(file, strlen(file) + 1);
                if (first) ts__free(first, strlen(first) + 1);
                return TS_ENOMEM;
            }
            w->ingest = grown;
            w->ingest[w->n_ingest++] = (ingest_warning){r->rank, k, r->warn_count[k], file, first};
        }
    }
    return TS_OK;
}

/* A replayed window has at least one rank; the guards keep the message safe regardless. */
static int ranks_differ(const ts_replay_windows *w, const char *path, const ts_replay_rank_info *rk, uint32_t n,
                        ts_error *err)
{
    const window *w0 = &w->w[0];
    uint32_t n0 = w->n_ranks;
    return ts__error(err, TS_EINVAL, "replay: window %s holds ranks %d to %d (%u), window %s ranks %d to %d (%u): "
                     "--windows wants windows of one job", path, n ? rk[0].rank : -1, n ? rk[n - 1].rank : -1, n,
                     w0->path, n0 ? w0->ranks[0].rank : -1, n0 ? w0->ranks[n0 - 1].rank : -1, n0);
}

static bool same_ranks(const ts_replay_windows *w, const ts_replay_rank_info *rk, uint32_t n)
{
    if (!w->n) return true;
    bool same = n == w->n_ranks;
    for (uint32_t k = 0; same && k < n; k++) same = rk[k].rank == w->w[0].ranks[k].rank;
    return same;
}

int ts_replay_windows_add(ts_replay_windows *w, const char *path, const ts_job *t, const ts_replay *r,
                          ts_error *err)
{
    uint32_t n = ts_replay_n_ranks(r);
    ts_replay_rank_info *rk = ts__calloc((size_t)n + 1, sizeof *rk);
    if (!rk) return ts__error(err, TS_ENOMEM, "replay: out of memory");
    for (uint32_t k = 0; k < n; k++) ts_replay_rank(r, k, &rk[k]);
    if (!same_ranks(w, rk, n)) {
        int rc = ranks_differ(w, path, rk, n, err);
        ts__free(rk, ((size_t)n + 1) * sizeof *rk);
        return rc;
    }
    char *copy = ts__strdup(path);
    if (copy && w->n == w->cap) {
        uint32_t cap = w->cap ? 2 * w->cap : 8;
        if (w->cap_scratch < cap) {
            int64_t *sc = ts__realloc(w->scratch, (size_t)w->cap_scratch * sizeof *sc, (size_t)cap * sizeof *sc);
            if (sc) { w->scratch = sc; w->cap_scratch = cap; }
        }
        window *grown = w->cap_scratch >= cap ? ts__realloc(w->w, (size_t)w->cap * sizeof *grown,
                                                            (size_t)cap * sizeof *grown) : NULL;
        if (grown) { w->w = grown; w->cap = cap; }
    }
    if (!copy || w->n == w->cap) {
        if (copy) ts__free(copy, strlen(copy) + 1);
        ts__free(rk, ((size_t)n + 1) * sizeof *rk);
        return ts__error(err, TS_ENOMEM, "replay: out of memory");
    }
    w->w[w->n++] = (window){copy, ts_replay_n_iterations(r), ts_replay_measured_iteration_ns(r),
                            ts_replay_predicted_iteration_ns(r), rk};
    w->n_ranks = n;
    w->what_if = ts_replay_is_what_if(r);
    int rc = TS_OK;
    for (uint32_t k = 0; rc == TS_OK && k < ts_replay_n_warnings(r); k++) rc = keep_warning(w, ts_replay_warning(r, k));
    if (rc == TS_OK) rc = keep_ingest(w, t);
    return rc ? ts__error(err, rc, "replay: out of memory") : TS_OK;
}

uint32_t ts_replay_windows_n(const ts_replay_windows *w) { return w->n; }
bool ts_replay_windows_is_what_if(const ts_replay_windows *w) { return w->what_if; }
uint32_t ts_replay_windows_n_ranks(const ts_replay_windows *w) { return w->n ? w->n_ranks : 0; }

void ts_replay_windows_window(const ts_replay_windows *w, uint32_t i, ts_replay_window_info *out)
{
    if (i >= w->n) { *out = (ts_replay_window_info){"", 0, 0, 0, 0}; return; }
    const window *x = &w->w[i];
    *out = (ts_replay_window_info){x->path, x->n_iterations, x->measured_ns, x->predicted_ns,
                                   ts_replay_change_pct(x->predicted_ns, x->measured_ns)};
}

/* Median over the windows of field f (0 measured, 1 predicted) of rank slot
 * k, or of the job's figure when k < 0; in the scratch the windows grew
 * with, so it never fails. */
static int64_t median_of(const ts_replay_windows *w, int f, int64_t k)
{
    int64_t *v = w->scratch;
    if (!w->n) return 0;
    for (uint32_t i = 0; i < w->n; i++) {
        const window *x = &w->w[i];
        v[i] = k < 0 ? (f ? x->predicted_ns : x->measured_ns)
                     : (f ? x->ranks[k].predicted_iteration_ns : x->ranks[k].measured_iteration_ns);
    }
    return ts__median_i64(v, w->n);
}

int64_t ts_replay_windows_measured_ns(const ts_replay_windows *w) { return median_of(w, 0, -1); }
int64_t ts_replay_windows_predicted_ns(const ts_replay_windows *w) { return median_of(w, 1, -1); }

double ts_replay_windows_error_pct(const ts_replay_windows *w)
{
    return ts_replay_change_pct(median_of(w, 1, -1), median_of(w, 0, -1));
}

void ts_replay_windows_rank(const ts_replay_windows *w, uint32_t k, ts_replay_rank_info *out)
{
    memset(out, 0, sizeof *out);
    if (!w->n || k >= w->n_ranks) { out->rank = -1; return; }
    out->rank = w->w[0].ranks[k].rank;
    out->measured_iteration_ns = median_of(w, 0, k);
    out->predicted_iteration_ns = median_of(w, 1, k);
    out->clock_offset_ns = w->w[0].ranks[k].clock_offset_ns;
}

void ts_replay_windows_spread(const ts_replay_windows *w, ts_replay_spread *out)
{
    ts__replay_spread_init(out);
    for (uint32_t i = 0; i < w->n; i++) ts__replay_spread_add(out, w->w[i].measured_ns, w->w[i].predicted_ns);
}

uint32_t ts_replay_windows_n_warnings(const ts_replay_windows *w) { return w->n_warnings; }
const char *ts_replay_windows_warning(const ts_replay_windows *w, uint32_t i)
{
    return i < w->n_warnings ? w->warnings[i] : NULL;
}

uint32_t ts_replay_windows_n_ingest_warnings(const ts_replay_windows *w) { return w->n_ingest; }
void ts_replay_windows_ingest_warning(const ts_replay_windows *w, uint32_t i, ts_replay_window_ingest_warning *out)
{
    if (i >= w->n_ingest) { *out = (ts_replay_window_ingest_warning){-1, "", "", 0, ""}; return; }
    const ingest_warning *x = &w->ingest[i];
    *out = (ts_replay_window_ingest_warning){x->rank, x->file, ts__warn_name((ts_warn_kind)x->kind), x->count,
                                             x->first};
}
