/* stragglers.c - who arrives late at collectives, who waits for whom, and
 * how long, summed per rank, per pair and per iteration (analyze.h says what
 * each figure means).
 *
 * Not for: matching collectives or aligning clocks; both are the graph's
 * (graph/collective.c), so the same instances and offsets serve the critical
 * path, replay and this report. Arrival = a member's start on the aligned
 * clock; a nonblocking MPI member arrives when it is posted. Cost: O(members)
 * plus a sort of the pairs and iterations (small: ranks^2 and steps x ranks).
 */
#include "analyze/analyze_int.h"
#include "graph/graph.h"

#include <stdlib.h>

typedef struct st_impl {
    ts_stragglers pub;   /* first: a ts_stragglers* is an st_impl* */
    uint32_t cap_pairs, cap_iters, cap_colls, cap_late;
    ts_map64 pair_of;    /* waiter * 2^32 + straggler -> pair row + 1 */
    ts_map64 iter_of;    /* (step, rank index) hashed -> iteration row + 1 */
} st_impl;

/* The ProfilerStep holding graph node n's slice start on its rank, -1 = none. */
static int64_t step_of_node(const ts_graph *g, uint32_t n)
{
    const ts_rank *r = ts__graph_rank(g, n);
    if (!r) return -1;
    int64_t t = g->nodes.start_ns[n], step = -1;
    for (uint32_t i = 0; i < r->n_iterations; i++)
        if (r->iterations[i].start_ns <= t && t < r->iterations[i].end_ns) step = r->iterations[i].step;
    return step;
}

static int add_pair(st_impl *s, int32_t waiter, int32_t straggler, int64_t wait)
{
    uint64_t key = (uint64_t)(uint32_t)waiter << 32 | (uint32_t)straggler, v;
    if (!ts__map64_get(&s->pair_of, key, &v)) {
        if (s->pub.n_pairs == s->cap_pairs &&
            ts__grow((void **)&s->pub.pairs, &s->cap_pairs, sizeof *s->pub.pairs, (size_t)s->pub.n_pairs + 1))
            return TS_ENOMEM;
        s->pub.pairs[s->pub.n_pairs] = (ts_straggler_pair){waiter, straggler, 0, 0};
        v = ++s->pub.n_pairs;
        if (ts__map64_put(&s->pair_of, key, v)) return TS_ENOMEM;
    }
    s->pub.pairs[v - 1].n++;
    s->pub.pairs[v - 1].wait_ns += wait;
    return TS_OK;
}

static ts_straggler_iter *iter_row(st_impl *s, int64_t step, uint32_t rank_idx, int32_t rank)
{
    uint64_t key = ts__hash_u64((uint64_t)step * 65537u + rank_idx), v;
    if (key == UINT64_MAX) key = 0;
    for (;; key = key + 1 == UINT64_MAX ? 0 : key + 1) {
        if (!ts__map64_get(&s->iter_of, key, &v)) break;
        ts_straggler_iter *it = &s->pub.iters[v - 1];
        if (it->step == step && it->rank == rank) return it;
    }
    if (s->pub.n_iters == s->cap_iters &&
        ts__grow((void **)&s->pub.iters, &s->cap_iters, sizeof *s->pub.iters, (size_t)s->pub.n_iters + 1))
        return NULL;
    if (ts__map64_put(&s->iter_of, key, (uint64_t)s->pub.n_iters + 1)) return NULL;
    ts_straggler_iter *it = &s->pub.iters[s->pub.n_iters++];
    *it = (ts_straggler_iter){.step = step, .rank = rank};
    return it;
}

/* One instance: lateness of each member, the waits for its last arrival. */
static int one_coll(st_impl *s, const ts_graph *g, const ts_coll *co)
{
    int64_t first = INT64_MAX, last = INT64_MIN;
    uint32_t last_m = TS_NONE32;
    for (uint32_t k = 0; k < co->n_members; k++) {
        uint32_t m = g->coll_members[co->first_member + k];
        int64_t a = ts__graph_start(g, m);
        if (a < first) first = a;
        if (a > last) { last = a; last_m = m; }
    }
    uint16_t last_idx = g->nodes.rank[last_m];
    int32_t last_rank = g->rank_number[last_idx];
    int64_t step = step_of_node(g, g->coll_members[co->first_member]);
    if (s->pub.n_colls == s->cap_colls &&
        ts__grow((void **)&s->pub.colls, &s->cap_colls, sizeof *s->pub.colls, (size_t)s->pub.n_colls + 1))
        return TS_ENOMEM;
    ts_straggler_coll *c = &s->pub.colls[s->pub.n_colls++];
    *c = (ts_straggler_coll){ts__str(&g->strings, co->name), co->ordinal, step, last_rank, last - first,
                             s->pub.n_late, 0};
    s->pub.ranks[last_idx].n_last++;
    for (uint32_t k = 0; k < co->n_members; k++) {
        uint32_t m = g->coll_members[co->first_member + k];
        uint16_t ri = g->nodes.rank[m];
        int64_t a = ts__graph_start(g, m), late = a - first, wait = last - a;
        ts_straggler_rank *sr = &s->pub.ranks[ri];
        sr->n_colls++;
        sr->late_ns += late;
        if (late > sr->max_late_ns) sr->max_late_ns = late;
        if (s->pub.n_late == s->cap_late &&
            ts__grow((void **)&s->pub.late, &s->cap_late, sizeof *s->pub.late, (size_t)s->pub.n_late + 1))
            return TS_ENOMEM;
        s->pub.late[s->pub.n_late++] = (ts_straggler_late){g->rank_number[ri], late};
        c->n_late++;
        ts_straggler_iter *waiter_it = iter_row(s, step, ri, g->rank_number[ri]);
        if (!waiter_it) return TS_ENOMEM;
        waiter_it->n_colls++;
        if (m == last_m || wait <= 0) continue;
        sr->waited_ns += wait;
        waiter_it->waited_ns += wait;
        s->pub.ranks[last_idx].caused_ns += wait;
        s->pub.total_wait_ns += wait;
        ts_straggler_iter *late_it = iter_row(s, step, last_idx, last_rank);
        if (!late_it || add_pair(s, g->rank_number[ri], last_rank, wait)) return TS_ENOMEM;
        late_it->caused_ns += wait;
    }
    return TS_OK;
}

static int cmp_pair(const void *a, const void *b)
{
    const ts_straggler_pair *x = a, *y = b;
    if (x->wait_ns != y->wait_ns) return x->wait_ns > y->wait_ns ? -1 : 1;
    if (x->waiter != y->waiter) return x->waiter < y->waiter ? -1 : 1;
    return (x->straggler > y->straggler) - (x->straggler < y->straggler);
}

static int cmp_iter(const void *a, const void *b)
{
    const ts_straggler_iter *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int ts_stragglers_compute(const ts_graph *g, ts_stragglers **out, ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    st_impl *s = ts__calloc(1, sizeof *s);
    if (!s) return ts__error(err, TS_ENOMEM, "out of memory while finding stragglers");
    ts__map64_init(&s->pair_of);
    ts__map64_init(&s->iter_of);
    s->pub.ranks = ts__calloc(g->n_ranks ? g->n_ranks : 1, sizeof *s->pub.ranks);
    int rc = s->pub.ranks ? TS_OK : TS_ENOMEM;
    if (!rc) s->pub.n_ranks = g->n_ranks;
    for (uint32_t i = 0; i < s->pub.n_ranks; i++) s->pub.ranks[i].rank = g->rank_number[i];
    for (uint32_t c = 0; c < g->n_colls && !rc; c++)
        if (g->colls[c].n_members >= 2) rc = one_coll(s, g, &g->colls[c]);
    ts__map64_free(&s->pair_of);
    ts__map64_free(&s->iter_of);
    if (rc) {
        ts_stragglers_destroy(&s->pub);
        return ts__error(err, TS_ENOMEM, "out of memory while finding stragglers");
    }
    if (s->pub.n_pairs) qsort(s->pub.pairs, s->pub.n_pairs, sizeof *s->pub.pairs, cmp_pair);
    if (s->pub.n_iters) qsort(s->pub.iters, s->pub.n_iters, sizeof *s->pub.iters, cmp_iter);
    *out = &s->pub;
    return TS_OK;
}

void ts_stragglers_destroy(ts_stragglers *pub)
{
    if (!pub) return;
    st_impl *s = (st_impl *)pub;
    ts__free(s->pub.ranks, (size_t)(s->pub.n_ranks ? s->pub.n_ranks : 1) * sizeof *s->pub.ranks);
    ts__free(s->pub.pairs, (size_t)s->cap_pairs * sizeof *s->pub.pairs);
    ts__free(s->pub.iters, (size_t)s->cap_iters * sizeof *s->pub.iters);
    ts__free(s->pub.colls, (size_t)s->cap_colls * sizeof *s->pub.colls);
    ts__free(s->pub.late, (size_t)s->cap_late * sizeof *s->pub.late);
    ts__free(s, sizeof *s);
}
