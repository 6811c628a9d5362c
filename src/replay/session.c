/* session.c - an evaluation session (replay.h): the parts of a bucket
 * what-if that every candidate of one search shares, kept by the first
 * replay that computes them and reused by the next ones whose inputs to
 * them are the same, so that a search prices each candidate without
 * re-reading gradients.json and the calibration log, re-fitting the
 * collective cost model or re-fitting the contention model's measured side
 * (kappa's 60 least-squares rounds, the measured overlaps and sharing).
 * Every reuse is checked against the inputs the kept result was computed
 * from, so a price made in a session is the full replay's, to the
 * nanosecond. Not for: the candidate's own simulation (rebucket.c,
 * contention.c, sim.c) or the search (optimize/).
 */
#include <stdlib.h>

#include "replay/replay.h"

int ts__replay_session_create(const ts_graph *g, ts_replay_session **out)
{
    *out = ts__calloc(1, sizeof **out);
    if (!*out) return TS_ENOMEM;
    (*out)->g = g;
    return TS_OK;
}

void ts__replay_session_destroy(ts_replay_session *s)
{
    if (!s) return;
    if (s->grads_path) ts__free(s->grads_path, strlen(s->grads_path) + 1);
    ts__free(s->grads_rev, (size_t)s->n_grads * sizeof *s->grads_rev);
    ts_coll_model_destroy(s->model);
    if (s->model_log) ts__free(s->model_log, strlen(s->model_log) + 1);
    ts__free(s->model_key, (size_t)s->n_model_key * sizeof *s->model_key + 1);
    for (uint32_t i = 0; i < sizeof s->ct / sizeof s->ct[0]; i++) ts__contention_memo_free(&s->ct[i]);
    ts__free(s, sizeof *s);
}

/* The samples ts__replay_fit_model takes from the trace, as 4 numbers
 * each (kind, group, bytes, transfer); returns their count of numbers, or
 * writes nothing when key is NULL. */
static uint32_t model_key(const ts_replay *r, int64_t *key)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n_colls; i++) {
        const ts_replay_coll *c = &r->colls[i];
        if (c->bytes < 0 || c->transfer_ns <= 0 || c->priced == TS_NONE32 || c->kind >= TS_COLL_COUNT) continue;
        if (key) {
            key[n] = c->kind;
            key[n + 1] = c->group;
            key[n + 2] = c->bytes;
            key[n + 3] = c->transfer_ns;
        }
        n += 4;
    }
    return n;
}

static bool same_log(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* Whether the options reprice collectives after the rebucket: that pass
 * sets the model's bandwidth and latency, so it gets a model of its own. */
static bool reprices(const ts_replay_options *opt)
{
    return opt->world || opt->bandwidth_gbps > 0 || opt->latency_us > 0 || opt->bandwidth_factor > 0 ||
           opt->latency_factor > 0;
}

static bool model_matches(const ts_replay_session *s, const ts_replay *r, const ts_replay_options *opt)
{
    if (!s->have_model || !same_log(s->model_log, opt->nccl_tests_log) || model_key(r, NULL) != s->n_model_key)
        return false;
    for (uint32_t i = 0, k = 0; i < r->n_colls; i++) {
        const ts_replay_coll *c = &r->colls[i];
        if (c->bytes < 0 || c->transfer_ns <= 0 || c->priced == TS_NONE32 || c->kind >= TS_COLL_COUNT) continue;
        const int64_t *e = s->model_key + k;
        if (e[0] != (int64_t)c->kind || e[1] != (int64_t)c->group || e[2] != c->bytes || e[3] != c->transfer_ns)
            return false;
        k += 4;
    }
    return true;
}

/* Hand r's freshly fitted model to the session (the first fit only: a
 * replay of the session may still borrow the kept one). */
static void keep_model(ts_replay_session *s, ts_replay *r, const ts_replay_options *opt)
{
    if (s->have_model) return;
    uint32_t n = model_key(r, NULL);
    int64_t *key = ts__malloc((size_t)n * sizeof *key + 1);
    char *log = opt->nccl_tests_log ? ts__strdup(opt->nccl_tests_log) : NULL;
    if (!key || (opt->nccl_tests_log && !log)) {   /* not kept: the next replay fits again */
        ts__free(key, (size_t)n * sizeof *key + 1);
        if (log) ts__free(log, strlen(log) + 1);
        return;
    }
    model_key(r, key);
    s->model_key = key;
    s->n_model_key = n;
    s->model_log = log;
    s->model = r->model;
    s->model_from_trace = r->model_from_trace;
    s->have_model = true;
    r->model_borrowed = true;
}

int ts__replay_fit_model_session(ts_replay *r, const ts_replay_options *opt, ts_error *err)
{
    ts_replay_session *s = r->session;
    if (s && !reprices(opt) && model_matches(s, r, opt)) {
        r->model = s->model;
        r->model_from_trace = s->model_from_trace;
        r->model_borrowed = true;
        s->n_model_reused++;
        return TS_OK;
    }
    int rc = ts__replay_fit_model(r, opt, err);
    if (rc == TS_OK && s && !reprices(opt)) keep_model(s, r, opt);
    return rc;
}
