/* collective.c - the global part of the graph: collectives matched across
 * ranks, per-rank clock offsets estimated from them, and barrier nodes that
 * make every member of an instance finish after the last one arrived.
 *
 * Matching key: (process group, normalized collective name) plus the
 * "seq" arg when the trace has one, else the ordinal of the op among this
 * rank's ops of that key. Members of an instance are stored in rank order.
 * Alignment: rank index 0 is the reference; every other rank's offset is the
 * median of (aligned end of an already aligned member - its end) over shared
 * instances, clamped into the window the causality constraints leave (no rank
 * leaves an instance before that member entered it, and the reverse); ranks
 * outside rank 0's groups are reached in further passes through ranks in
 * both; then violations left between non-reference ranks are fixed by moving
 * offsets to the edge of the window the others allow. O(passes * members log
 * members); one pass for data parallelism.
 */
#include "graph/build.h"

#include <ctype.h>
#include <stdlib.h>
#include <stdio.h>

/* "ncclDevKernel_AllReduce_Sum_f32" / "ncclKernel_AllReduce_RING_LL_Sum_float"
 * / "c10d::allreduce_" / "gloo:all_reduce" / "allreduce" -> "allreduce". */
static uint32_t norm_name(ts_graph *g, const char *raw)
{
    char out[64];
    size_t n = 0;
    const char *p = raw;
    bool kernel = !strncmp(p, "ncclKernel_", 11) || !strncmp(p, "ncclDevKernel_", 14);
    if (kernel) p = strchr(p, '_') + 1;
    else for (const char *q = raw; *q; q++) if (*q == ':') p = q + 1;
    for (; *p && n + 1 < sizeof out; p++) {
        if (kernel && (*p == '_' || *p == '(')) break;
        if (*p == '_') continue;
        if (*p == '(') break;
        out[n++] = (char)tolower((unsigned char)*p);
    }
    return ts__str_intern(&g->strings, out, n);
}

static int64_t dtype_bytes(const char *dt)
{
    if (!dt) return 4;
    if (!strcmp(dt, "Half") || !strcmp(dt, "BFloat16") || !strcmp(dt, "Short")) return 2;
    if (!strcmp(dt, "Double") || !strcmp(dt, "Long") || !strcmp(dt, "ComplexFloat")) return 8;
    if (!strcmp(dt, "Byte") || !strcmp(dt, "Char") || !strcmp(dt, "Bool")) return 1;
    return 4;
}

/* The slice that carries a member's collective args: itself, or the
 * record_param_comms nested right inside a c10d:: call. */
uint32_t ts__graph_args_slice(const ts_rank *r, uint32_t s)
{
    if (ts__slice_arg_str(r, s, "Collective name")) return s;
    uint32_t end = r->tracks[r->slices.track[s]].first_slice + r->tracks[r->slices.track[s]].n_slices;
    for (uint32_t c = s + 1; c < end && c <= s + 16 && r->slices.ts_ns[c] < ts__slice_end(r, s); c++)
        if (r->slices.parent[c] == s && ts__slice_arg_str(r, c, "Collective name")) return c;
    return s;
}

/* An integer arg that PyTorch may write as a number or as a decimal string. */
static bool arg_int(const ts_rank *r, uint32_t s, const char *key, int64_t *out)
{
    if (ts__slice_arg_i64(r, s, key, out)) return true;
    const char *v = ts__slice_arg_str(r, s, key);
    char *end;
    if (!v || !*v) return false;
    *out = strtoll(v, &end, 10);
    return *end == 0;
}

/* Point-to-point: a send from a to b pairs with b's receive from a, so both
 * get the key "p2p a>b"; 0 when the trace names no peer. */
static uint32_t p2p_name(ts_graph *g, const ts_rank *r, uint32_t s, uint32_t name, int32_t self)
{
    const char *n = ts__str(&g->strings, name);
    bool send = !strcmp(n, "send") || !strcmp(n, "isend"), recv = !strcmp(n, "recv") || !strcmp(n, "irecv");
    int64_t peer;
    if (self < 0 || !(send ? arg_int(r, s, "Dst Rank", &peer) : recv && arg_int(r, s, "Src Rank", &peer))) return 0;
    char key[64];
    int len = snprintf(key, sizeof key, "p2p %lld>%lld", (long long)(send ? self : peer), (long long)(send ? peer : self));
    return ts__str_intern(&g->strings, key, (size_t)len);
}

void ts__graph_coll_key(ts_graph *g, uint32_t node, uint32_t *name, uint32_t *pg, int64_t *seq, int64_t *bytes)
{
    const ts_rank *r = ts__graph_rank(g, node);
    uint32_t s = ts__graph_args_slice(r, g->nodes.slice[node]);
    const char *cname = ts__slice_arg_str(r, s, "Collective name");
    *name = norm_name(g, cname ? cname : ts__rank_str(r, r->slices.name[s]));
    const char *pgs = ts__slice_arg_str(r, s, "Process Group Name");
    if (!pgs) pgs = ts__slice_arg_str(r, s, "pg_name");
    *pg = pgs ? ts__str_intern(&g->strings, pgs, strlen(pgs)) : 0;
    if (!arg_int(r, s, "Seq", seq) && !arg_int(r, s, "seq", seq)) *seq = -1;
    uint32_t p2p = p2p_name(g, r, s, *name, g->rank_number[g->nodes.rank[node]]);
    if (p2p) { *name = p2p; *seq = -1; }   /* p2p sequence numbers count per peer pair: match by order */
    int64_t nel;
    if (!arg_int(r, s, "In msg nelems", &nel) ||   /* a size past int64 is no size */
        __builtin_mul_overflow(nel, (int64_t)dtype_bytes(ts__slice_arg_str(r, s, "dtype")), bytes))
        *bytes = -1;
}

static void rank_extent(const ts_rank *m, int64_t *lo, int64_t *hi)
{
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    for (uint32_t s = 0; s < m->slices.n; s++) {
        if (m->slices.ts_ns[s] < *lo) *lo = m->slices.ts_ns[s];
        if (ts__slice_end(m, s) > *hi) *hi = ts__slice_end(m, s);
    }
}

/* Clocks that count from the epoch (Kineto) must overlap between ranks of one
 * run; two ranks recorded at different times are different runs. Relative
 * clocks (legacy traces) cannot tell, so they are not judged. */
static void check_overlap(ts_graph *g)
{
    const int64_t epoch_2000_ns = 946684800LL * 1000000000LL;
    if (g->n_ranks < 2) return;
    const ts_rank *m0 = g->trace->ranks[g->rank_model[0]];
    int64_t lo0, hi0;
    rank_extent(m0, &lo0, &hi0);
    if (m0->slices.n == 0 || lo0 < epoch_2000_ns) return;
    for (uint32_t r = 1; r < g->n_ranks; r++) {
        const ts_rank *m = g->trace->ranks[g->rank_model[r]];
        int64_t lo, hi;
        if (m == m0) continue;   /* a replicated rank */
        rank_extent(m, &lo, &hi);
        if (m->slices.n == 0 || lo < epoch_2000_ns || (lo <= hi0 && hi >= lo0)) continue;
        ts__graph_warn(g, "%s (rank %d) and %s (rank %d) were recorded %.1f s apart: traces of different runs?",
                       m0->path ? m0->path : "?", g->rank_number[0], m->path ? m->path : "?", g->rank_number[r],
                       (double)(lo > hi0 ? lo - hi0 : lo0 - hi) / 1e9);
    }
}

/* Traces of different jobs, or ranks missing from the job: checked before
 * anything is matched. */
static int check_job(ts_graph *g, ts_error *err)
{
    int32_t ws = -1;
    uint32_t ws_rank = 0;
    for (uint32_t r = 0; r < g->n_ranks; r++) {
        const ts_rank *m = g->trace->ranks[g->rank_model[r]];
        if (m->world_size <= 0) continue;
        if (ws > 0 && m->world_size != ws)
            return ts__error(err, TS_EFORMAT, "%s (rank %d) says world size %d but %s (rank %d) says %d: "
                             "traces of different jobs", m->path ? m->path : "?", m->rank, m->world_size,
                             g->trace->ranks[ws_rank]->path ? g->trace->ranks[ws_rank]->path : "?",
                             g->trace->ranks[ws_rank]->rank, ws);
        ws = m->world_size;
        ws_rank = g->rank_model[r];
    }
    if (ws > 0 && (uint32_t)ws > g->n_ranks && g->n_ranks > 1) {
        char missing[160] = "";
        size_t len = 0;
        int n_listed = 0;
        for (int32_t k = 0; k < ws && n_listed < 8; k++) {   /* name the first few absent rank numbers */
            bool have = false;
            for (uint32_t r = 0; r < g->n_ranks && !have; r++) have = g->rank_number[r] == k;
            if (!have && len < sizeof missing - 16) {
                len += (size_t)snprintf(missing + len, sizeof missing - len, "%s%d", n_listed ? ", " : "", k);
                n_listed++;
            }
        }
        ts__graph_warn(g, "the job has %d ranks but %u traces were given (missing: %s%s); collectives are matched "
                       "among the given ranks only", ws, g->n_ranks, missing, (uint32_t)ws - g->n_ranks > 8 ? ", ..." : "");
    } else if (ws > 1 && g->n_ranks == 1) {
        /* One rank of a larger job is a fine single-rank analysis, but its
         * collectives cannot be matched: their measured times, waits for the
         * other ranks included, stand as transfer times. */
        ts__graph_warn(g, "rank %d is one of the job's %d ranks and the only trace given: its collectives keep their "
                       "measured times, including any wait for the other ranks (give every rank's trace to "
                       "match them)", g->rank_number[0], ws);
    }
    check_overlap(g);
    return TS_OK;
}

typedef struct pair { uint32_t coll, node; int64_t bytes; } pair;   /* bytes: the member's size, -1 = unknown */

static uint32_t new_coll(ts_graph *g, uint32_t node)
{
    if (ts__grow((void **)&g->colls, &g->cap_colls, sizeof *g->colls, g->n_colls + 1)) {
        g->oom = true;
        return TS_NONE32;
    }
    ts_coll *c = &g->colls[g->n_colls];
    memset(c, 0, sizeof *c);
    ts__graph_coll_key(g, node, &c->name, &c->pg, &c->seq, &c->bytes);
    c->barrier = TS_NONE32;
    return g->n_colls++;
}

/* Group (coll, node) pairs by coll into coll_members (stable: rank order). */
static int group_members(ts_graph *g, const pair *pairs, uint32_t n_pairs)
{
    if (ts__grow((void **)&g->coll_members, &g->cap_coll_members, sizeof *g->coll_members, n_pairs + 1))
        return TS_ENOMEM;
    for (uint32_t c = 0; c < g->n_colls; c++) g->colls[c].n_members = 0;
    for (uint32_t i = 0; i < n_pairs; i++) g->colls[pairs[i].coll].n_members++;
    uint32_t off = 0;
    for (uint32_t c = 0; c < g->n_colls; c++) {
        g->colls[c].first_member = off;
        off += g->colls[c].n_members;
        g->colls[c].n_members = 0;
    }
    for (uint32_t i = 0; i < n_pairs; i++) {
        ts_coll *c = &g->colls[pairs[i].coll];
        g->coll_members[c->first_member + c->n_members++] = pairs[i].node;
        g->nodes.coll[pairs[i].node] = pairs[i].coll;
    }
    g->n_coll_members = n_pairs;
    return TS_OK;
}

/* Warn about instances that some ranks never reached (a rank missing, a run
 * cut off, or ops that do not correspond). */
static void warn_unmatched(ts_graph *g)
{
    /* expected members per key = the most any instance of that key reached */
    ts_map64 most;
    ts__map64_init(&most);
    uint32_t n_short = 0;
    for (uint32_t c = 0; c < g->n_colls; c++) {
        uint64_t key = (uint64_t)g->colls[c].name << 32 | g->colls[c].pg, m = 0;
        (void)ts__map64_get(&most, key, &m);
        if (g->colls[c].n_members > m && ts__map64_put(&most, key, g->colls[c].n_members)) g->oom = true;
    }
    for (uint32_t c = 0; c < g->n_colls; c++) {
        const ts_coll *co = &g->colls[c];
        uint64_t m = 0;
        (void)ts__map64_get(&most, (uint64_t)co->name << 32 | co->pg, &m);
        if (co->n_members == m) continue;
        if (n_short++ >= 3) continue;
        uint32_t node = g->coll_members[co->first_member];
        ts__graph_warn(g, "collective '%s' (group '%s', %s %lld) reached by %u of %u ranks; first seen on rank %d "
                       "as '%s' at %lld ns: it is not synchronized across ranks",
                       ts__str(&g->strings, co->name), ts__str(&g->strings, co->pg),
                       co->seq >= 0 ? "seq" : "instance", (long long)(co->seq >= 0 ? co->seq : co->ordinal),
                       co->n_members, (unsigned)m, g->rank_number[g->nodes.rank[node]],
                       ts__graph_node_name(g, node), (long long)g->nodes.start_ns[node]);
    }
    if (n_short > 3) ts__graph_warn(g, "%u collective instances in all are not reached by every rank", n_short);
    ts__map64_free(&most);
}

/* Whether every rank of an instance of this (normalized) collective hands it
 * the same number of bytes: true of all-reduce, broadcast, reduce, all-gather
 * and reduce-scatter ("In msg nelems" is each rank's input); not of
 * all-to-all (uneven splits), scatter or point-to-point. */
static bool same_bytes_on_every_rank(const char *name)
{
    return !strncmp(name, "allreduce", 9) || !strncmp(name, "broadcast", 9) || !strncmp(name, "allgather", 9) ||
           !strncmp(name, "reducescatter", 13) || !strcmp(name, "reduce");
}

/* Matched instances whose ranks disagree on the message size: traces of
 * different jobs that happen to share a world size and a sequence of
 * collectives, or ops matched wrongly. Their transfer times would be
 * wrong without a word, so say so, naming the first one. Reads the sizes
 * the matching loop took from each member (pairs, rank-major, so a
 * collective's first sized member is its lowest rank's). */
static int warn_sizes(ts_graph *g, const pair *pairs, uint32_t n_pairs)
{
    /* per collective: its first sized member and, once one disagrees, that one */
    uint32_t *first = ts__malloc(2 * (size_t)g->n_colls * sizeof *first + 1), *other = first + g->n_colls;
    int64_t *b0 = ts__malloc(2 * (size_t)g->n_colls * sizeof *b0 + 1), *b1 = b0 + g->n_colls;
    if (!first || !b0) {
        ts__free(first, 2 * (size_t)g->n_colls * sizeof *first + 1);
        ts__free(b0, 2 * (size_t)g->n_colls * sizeof *b0 + 1);
        return TS_ENOMEM;
    }
    for (uint32_t c = 0; c < g->n_colls; c++) first[c] = other[c] = TS_NONE32;
    for (uint32_t i = 0; i < n_pairs; i++) {
        uint32_t c = pairs[i].coll;
        if (pairs[i].bytes < 0 || other[c] != TS_NONE32) continue;
        if (first[c] == TS_NONE32) first[c] = pairs[i].node, b0[c] = pairs[i].bytes;
        else if (pairs[i].bytes != b0[c]) other[c] = pairs[i].node, b1[c] = pairs[i].bytes;
    }
    uint32_t n_diff = 0, n_checked = 0;
    for (uint32_t c = 0; c < g->n_colls; c++) {
        const ts_coll *co = &g->colls[c];
        if (co->n_members < 2 || first[c] == TS_NONE32 || !same_bytes_on_every_rank(ts__str(&g->strings, co->name)))
            continue;
        n_checked++;
        if (other[c] == TS_NONE32 || n_diff++) continue;
        ts__graph_warn(g, "collective '%s' (group '%s', %s %lld): rank %d hands it %lld bytes ('%s' at %lld ns) but "
                       "rank %d %lld bytes ('%s' at %lld ns): traces of different jobs, or collectives matched wrongly",
                       ts__str(&g->strings, co->name), ts__str(&g->strings, co->pg), co->seq >= 0 ? "seq" : "instance",
                       (long long)(co->seq >= 0 ? co->seq : co->ordinal), g->rank_number[g->nodes.rank[first[c]]],
                       (long long)b0[c], ts__graph_node_name(g, first[c]), (long long)g->nodes.start_ns[first[c]],
                       g->rank_number[g->nodes.rank[other[c]]], (long long)b1[c], ts__graph_node_name(g, other[c]),
                       (long long)g->nodes.start_ns[other[c]]);
    }
    if (n_diff > 1)
        ts__graph_warn(g, "%u of %u matched collective instances of known size differ in size across ranks", n_diff,
                       n_checked);
    ts__free(first, 2 * (size_t)g->n_colls * sizeof *first + 1);
    ts__free(b0, 2 * (size_t)g->n_colls * sizeof *b0 + 1);
    return TS_OK;
}

int ts__graph_match(ts_graph *g, ts_graph_members *members, const int64_t *ord_of, ts_error *err)
{
    int rc = check_job(g, err);
    if (rc) return rc;
    uint32_t total = 0;
    for (uint32_t r = 0; r < g->n_ranks; r++) total += members[r].n;
    pair *pairs = ts__malloc((size_t)total * sizeof *pairs + 1);
    ts_map64 inst, count;
    ts__map64_init(&inst);
    ts__map64_init(&count);
    uint32_t n_pairs = 0;
    if (!pairs) rc = TS_ENOMEM;
    for (uint32_t r = 0; rc == TS_OK && r < g->n_ranks; r++) {
        ts__map64_free(&count);
        ts__map64_init(&count);
        if (members[r].n == 0 && total > 0 && g->n_ranks > 1)
            ts__graph_warn(g, "rank %d has no collectives; its clock cannot be aligned", g->rank_number[r]);
        for (uint32_t i = 0; rc == TS_OK && i < members[r].n; i++) {
            uint32_t node = members[r].node[i], name, pg;
            int64_t seq, bytes;
            ts__graph_coll_key(g, node, &name, &pg, &seq, &bytes);
            uint64_t key_id = (uint64_t)name << 32 | pg, ord = 0;
            if (seq < 0 && ord_of && ord_of[node] != INT64_MIN) {
                ord = (uint64_t)ord_of[node];   /* paired by time (ts__graph_rematch_by_time) */
            } else if (seq < 0) {
                (void)ts__map64_get(&count, key_id, &ord);
                if (ts__map64_put(&count, key_id, ord + 1)) { rc = TS_ENOMEM; break; }
            } else {
                ord = (uint64_t)seq;
            }
            uint64_t key = ts__hash_u64(key_id) ^ (ord * 0x9e3779b97f4a7c15ULL), c;
            if (key == UINT64_MAX) key--;
            if (!ts__map64_get(&inst, key, &c)) {
                c = new_coll(g, node);
                if (c == TS_NONE32 || ts__map64_put(&inst, key, c)) { rc = TS_ENOMEM; break; }
                g->colls[c].ordinal = (int64_t)ord;
            }
            pairs[n_pairs++] = (pair){(uint32_t)c, node, bytes};
        }
    }
    if (rc == TS_OK) rc = group_members(g, pairs, n_pairs);
    if (rc == TS_OK) warn_unmatched(g);
    if (rc == TS_OK) rc = warn_sizes(g, pairs, n_pairs);
    ts__free(pairs, (size_t)total * sizeof *pairs + 1);
    ts__map64_free(&inst);
    ts__map64_free(&count);
    if (rc == TS_OK && g->oom) rc = TS_ENOMEM;
    return rc ? ts__error(err, rc, "out of memory matching collectives") : TS_OK;
}

/* ---- clock alignment ---- */

/* A member's end on its own clock / aligned: the end of its completion
 * (itself, or the MPI_Wait of a nonblocking call: same-instance ends
 * coincide there). */
static inline int64_t n_end(const ts_graph *g, uint32_t m)
{
    uint32_t x = ts__graph_member_exit(g, m);
    return g->nodes.start_ns[x] + g->nodes.dur_ns[x];
}
static inline int64_t a_end(const ts_graph *g, uint32_t m) { return ts__graph_end(g, ts__graph_member_exit(g, m)); }

/* One pass: every rank not aligned yet that shares an instance with an
 * aligned rank gets offset = median over such instances of (the aligned
 * member's aligned end - its own end), clamped into the causality window
 * (it may not leave before that member entered, nor enter after it left).
 * Returns the number of ranks aligned by this pass. */
static uint32_t align_pass(ts_graph *g, int64_t *buf, const uint32_t *off, uint32_t *fill, int64_t *lo,
                           int64_t *hi, uint8_t *done)
{
    for (uint32_t r = 0; r < g->n_ranks; r++) { fill[r] = 0; lo[r] = INT64_MIN; hi[r] = INT64_MAX; }
    for (uint32_t c = 0; c < g->n_colls; c++) {
        const ts_coll *co = &g->colls[c];
        uint32_t ref = TS_NONE32;
        for (uint32_t k = 0; k < co->n_members && ref == TS_NONE32; k++)
            if (done[g->nodes.rank[g->coll_members[co->first_member + k]]]) ref = g->coll_members[co->first_member + k];
        if (ref == TS_NONE32) continue;
        int64_t ref_s = ts__graph_start(g, ref), ref_e = a_end(g, ref);
        for (uint32_t k = 0; k < co->n_members; k++) {
            uint32_t m = g->coll_members[co->first_member + k];
            uint16_t r = g->nodes.rank[m];
            if (done[r]) continue;
            buf[off[r] + fill[r]++] = ref_e - n_end(g, m);
            int64_t l = ref_s - n_end(g, m), h = ref_e - g->nodes.start_ns[m];
            if (l > lo[r]) lo[r] = l;
            if (h < hi[r]) hi[r] = h;
        }
    }
    uint32_t n_new = 0;
    for (uint32_t r = 0; r < g->n_ranks; r++) {
        if (done[r] || fill[r] == 0) continue;
        int64_t o = ts__median_i64(buf + off[r], fill[r]);
        if (lo[r] <= hi[r]) o = o < lo[r] ? lo[r] : o > hi[r] ? hi[r] : o;
        g->align[r].offset_ns = o;
        g->align[r].n_matched = fill[r];
        done[r] = 2;   /* aligned in this pass: a reference from the next pass on */
        n_new++;
    }
    for (uint32_t r = 0; r < g->n_ranks; r++) if (done[r] == 2) done[r] = 1;
    return n_new;
}

/* Offsets against rank index 0, spreading out through shared instances
 * (ranks in other process groups are reached through ranks in both). */
static void estimate_offsets(ts_graph *g, int64_t *buf, uint32_t *off)
{
    size_t nr = g->n_ranks + 1;
    uint32_t *fill = ts__calloc(nr, sizeof *fill);
    int64_t *lo = ts__malloc(nr * sizeof *lo), *hi = ts__malloc(nr * sizeof *hi);
    uint8_t *done = ts__calloc(nr, 1);
    if (!fill || !lo || !hi || !done) { g->oom = true; goto out; }
    done[0] = 1;
    while (align_pass(g, buf, off, fill, lo, hi, done) > 0) {}
    for (uint32_t c = 0; c < g->n_colls && g->n_ranks > 1; c++)   /* rank 0's own sample count */
        if (g->colls[c].n_members > 1 && g->nodes.rank[g->coll_members[g->colls[c].first_member]] == 0)
            g->align[0].n_matched++;
    for (uint32_t r = 1; r < g->n_ranks; r++)
        if (!done[r] && g->n_colls)
            ts__graph_warn(g, "rank %d shares no collective with the aligned ranks; its clock is left as is",
                           g->rank_number[r]);
out:
    ts__free(fill, nr * sizeof *fill);
    ts__free(lo, nr * sizeof *lo);
    ts__free(hi, nr * sizeof *hi);
    ts__free(done, nr);
}

/* Per instance, the two latest aligned arrivals and the two earliest aligned
 * departures, so "the others' last arrival" excluding any one member is O(1). */
typedef struct coll_edge_stats { int64_t s1, s2, e1, e2; uint32_t s1_k, e1_k; } coll_edge_stats;

static void edge_stats(const ts_graph *g, const ts_coll *co, coll_edge_stats *st)
{
    *st = (coll_edge_stats){INT64_MIN, INT64_MIN, INT64_MAX, INT64_MAX, TS_NONE32, TS_NONE32};
    for (uint32_t k = 0; k < co->n_members; k++) {
        uint32_t m = g->coll_members[co->first_member + k];
        int64_t a = ts__graph_start(g, m), e = a_end(g, m);
        if (a > st->s1) { st->s2 = st->s1; st->s1 = a; st->s1_k = k; } else if (a > st->s2) st->s2 = a;
        if (e < st->e1) { st->e2 = st->e1; st->e1 = e; st->e1_k = k; } else if (e < st->e2) st->e2 = e;
    }
}

/* The window rank r's offset may take given the other members' offsets: it
 * may not leave an instance before the last other member entered, nor enter
 * after the first other member left. */
static void rank_window(const ts_graph *g, const coll_edge_stats *st, const uint32_t *colls, const uint32_t *ks,
                        uint32_t n, int64_t *lo, int64_t *hi)
{
    *lo = INT64_MIN;
    *hi = INT64_MAX;
    for (uint32_t i = 0; i < n; i++) {
        const ts_coll *co = &g->colls[colls[i]];
        const coll_edge_stats *c = &st[colls[i]];
        uint32_t m = g->coll_members[co->first_member + ks[i]];
        int64_t last_in = ks[i] == c->s1_k ? c->s2 : c->s1, first_out = ks[i] == c->e1_k ? c->e2 : c->e1;
        if (last_in != INT64_MIN && last_in - n_end(g, m) > *lo) *lo = last_in - n_end(g, m);
        if (first_out != INT64_MAX && first_out - g->nodes.start_ns[m] < *hi) *hi = first_out - g->nodes.start_ns[m];
    }
}

typedef struct fix_ctx {
    uint32_t        *first;   /* n_ranks + 1: rank r's instances are [first[r], first[r + 1]) of colls/ks */
    uint32_t        *colls;   /* instance rows */
    uint32_t        *ks;      /* the rank's member index within each instance */
    coll_edge_stats *st;      /* per instance, refreshed every round */
    uint8_t         *dirty;   /* per instance: a member moved this round */
} fix_ctx;

static void index_by_rank(const ts_graph *g, fix_ctx *f)
{
    memset(f->first, 0, ((size_t)g->n_ranks + 1) * sizeof *f->first);
    for (uint32_t i = 0; i < g->n_coll_members; i++) f->first[g->nodes.rank[g->coll_members[i]] + 1]++;
    for (uint32_t r = 0; r < g->n_ranks; r++) f->first[r + 1] += f->first[r];
    for (uint32_t c = 0; c < g->n_colls; c++)
        for (uint32_t k = 0; k < g->colls[c].n_members; k++) {
            uint16_t r = g->nodes.rank[g->coll_members[g->colls[c].first_member + k]];
            f->colls[f->first[r]] = c;
            f->ks[f->first[r]++] = k;
        }
    for (uint32_t r = g->n_ranks; r > 0; r--) f->first[r] = f->first[r - 1];   /* undo the fill's advance */
    f->first[0] = 0;
}

/* Move rank r to the nearest edge of its window if it lies outside it and
 * none of its instances moved this round; true when it moved. */
static bool try_move(ts_graph *g, fix_ctx *f, uint16_t r)
{
    if (r == 0) return false;   /* the reference */
    for (uint32_t i = f->first[r]; i < f->first[r + 1]; i++) if (f->dirty[f->colls[i]]) return false;
    int64_t lo, hi, o = g->align[r].offset_ns;
    rank_window(g, f->st, f->colls + f->first[r], f->ks + f->first[r], f->first[r + 1] - f->first[r], &lo, &hi);
    if (lo > hi || (o >= lo && o <= hi)) return false;
    g->align[r].offset_ns = o < lo ? lo : hi;
    for (uint32_t i = f->first[r]; i < f->first[r + 1]; i++) f->dirty[f->colls[i]] = 1;
    return true;
}

/* Fix what the medians left: a rank that leaves an instance before another
 * member entered it (the early leaver or the late arrival) moves to the
 * nearest edge of the window the others allow. At most one member of an
 * instance moves per round, so two ranks never chase each other; each round
 * is O(members), and at most 16 run. A rank whose window is empty stays for
 * the residual report to flag. */
static void fix_violations(ts_graph *g, fix_ctx *f)
{
    index_by_rank(g, f);
    for (int round = 0; round < 16; round++) {
        bool moved = false;
        for (uint32_t c = 0; c < g->n_colls; c++) { edge_stats(g, &g->colls[c], &f->st[c]); f->dirty[c] = 0; }
        for (uint32_t c = 0; c < g->n_colls; c++) {
            const ts_coll *co = &g->colls[c];
            if (co->n_members < 2 || f->st[c].e1 >= f->st[c].s1) continue;   /* causal */
            moved |= try_move(g, f, g->nodes.rank[g->coll_members[co->first_member + f->st[c].e1_k]]);
            moved |= try_move(g, f, g->nodes.rank[g->coll_members[co->first_member + f->st[c].s1_k]]);
        }
        if (!moved) break;
    }
}

/* Residuals: each member's aligned end against the instance's median end. */
static void residuals(ts_graph *g, int64_t *buf, uint32_t *off)
{
    uint32_t *fill = ts__calloc(g->n_ranks + 1, sizeof *fill);
    int64_t ends[64];
    if (!fill) { g->oom = true; return; }
    for (uint32_t c = 0; c < g->n_colls; c++) {
        const ts_coll *co = &g->colls[c];
        if (co->n_members < 2) continue;
        int64_t last_in = INT64_MIN, mid;
        uint32_t ne = 0;
        for (uint32_t k = 0; k < co->n_members; k++) {
            uint32_t m = g->coll_members[co->first_member + k];
            int64_t s = ts__graph_start(g, m);
            if (s > last_in) last_in = s;
            if (ne < 64) ends[ne++] = a_end(g, m);   /* median of a sample bounds the cost */
        }
        mid = ts__median_i64(ends, ne);
        for (uint32_t k = 0; k < co->n_members; k++) {
            uint32_t m = g->coll_members[co->first_member + k];
            uint16_t r = g->nodes.rank[m];
            int64_t d = a_end(g, m) - mid;
            buf[off[r] + fill[r]++] = d < 0 ? -d : d;
            if (a_end(g, m) < last_in) g->align[r].n_violations++;
        }
    }
    for (uint32_t r = 0; r < g->n_ranks; r++) {
        if (!fill[r]) continue;
        g->align[r].resid_med_ns = ts__median_i64(buf + off[r], fill[r]);
        g->align[r].resid_max_ns = buf[off[r] + fill[r] - 1];   /* sorted by the median */
        if (g->align[r].n_violations)
            ts__graph_warn(g, "rank %d: after alignment it leaves %u collectives before the last rank entered "
                           "(clock drift or unmatched collectives)", g->rank_number[r], g->align[r].n_violations);
    }
    ts__free(fill, (g->n_ranks + 1) * sizeof *fill);
}

void ts__graph_align(ts_graph *g)
{
    uint32_t *off = ts__calloc(g->n_ranks + 1, sizeof *off);
    int64_t *buf = ts__malloc((size_t)g->n_coll_members * sizeof *buf + 8);
    if (!off || !buf) { g->oom = true; goto out; }
    for (uint32_t i = 0; i < g->n_coll_members; i++) off[g->nodes.rank[g->coll_members[i]] + 1]++;
    for (uint32_t r = 0; r < g->n_ranks; r++) off[r + 1] += off[r];
    if (!g->opt.no_align) {
        estimate_offsets(g, buf, off);
        size_t nr = (size_t)g->n_ranks + 2, nm = (size_t)g->n_coll_members + 1, nc = (size_t)g->n_colls + 1;
        fix_ctx f = {ts__malloc(nr * sizeof *f.first), ts__malloc(nm * sizeof *f.colls), ts__malloc(nm * sizeof *f.ks),
                     ts__malloc(nc * sizeof *f.st), ts__malloc(nc)};
        if (f.first && f.colls && f.ks && f.st && f.dirty) fix_violations(g, &f);
        else g->oom = true;
        ts__free(f.first, nr * sizeof *f.first);
        ts__free(f.colls, nm * sizeof *f.colls);
        ts__free(f.ks, nm * sizeof *f.ks);
        ts__free(f.st, nc * sizeof *f.st);
        ts__free(f.dirty, nc);
    }
    residuals(g, buf, off);   /* with --no-align too: they show how far apart the clocks are */
out:
    ts__free(off, (g->n_ranks + 1) * sizeof *off);
    ts__free(buf, (size_t)g->n_coll_members * sizeof *buf + 8);
}

void ts__graph_barriers(ts_graph *g)
{
    uint32_t lane = TS_NONE32;
    for (uint32_t c = 0; c < g->n_colls; c++) {
        ts_coll *co = &g->colls[c];
        if (co->n_members < 2) continue;
        if (lane == TS_NONE32 && (lane = ts__graph_add_lane(g, TS_GRAPH_NO_RANK, false, TS_NONE32)) == TS_NONE32)
            return;
        int64_t last = INT64_MIN, first = INT64_MAX;
        for (uint32_t k = 0; k < co->n_members; k++) {
            uint32_t m = g->coll_members[co->first_member + k];
            int64_t s = ts__graph_start(g, m);
            if (s > last) { last = s; co->last_rank = g->nodes.rank[m]; }
            if (s < first) first = s;
        }
        co->wait_ns = last - first;
        uint32_t b = ts__graph_add_node(g, TS_GRAPH_NO_RANK, TS_NODE_BARRIER, lane, TS_NONE32, last, 0);
        if (b == TS_NONE32) return;
        g->nodes.coll[b] = c;
        co->barrier = b;
        for (uint32_t k = 0; k < co->n_members; k++) {
            uint32_t m = g->coll_members[co->first_member + k];
            ts__graph_add_edge(g, m, b, TS_EDGE_COLL_ENTER, 0);
            ts__graph_add_edge(g, b, ts__graph_member_exit(g, m), TS_EDGE_COLL_EXIT, TS_EDGE_FROM_END | TS_EDGE_TO_END);
        }
    }
}

/* ---- re-pairing by time ----
 * Order pairing assumes every rank recorded every op. Sampled traces drop
 * different ops on different ranks, and the pairs slide; alignment then shows
 * causality violations it cannot remove. When both clocks count from the epoch
 * (synchronized hosts), such a rank's instances are re-paired with rank 0's by
 * nearest end on the raw clocks, per key, in order (two pointers over ends
 * sorted per key), within half the shorter op. Unpaired ops stay single. */

typedef struct timed { uint64_t key; int64_t end, dur, val; } timed;   /* val: ordinal (ref) or node */

static int cmp_timed(const void *a, const void *b)
{
    const timed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

static bool epoch_clock(const ts_graph *g, uint16_t r)
{
    const ts_rank *m = g->trace->ranks[g->rank_model[r]];
    return m->slices.n > 0 && m->slices.ts_ns[0] > 946684800LL * 1000000000LL;
}

/* Members of rank r in instances matched by order, as (key, raw end, dur, val). */
static uint32_t timed_members(const ts_graph *g, uint16_t r, bool ref, timed *out)
{
    uint32_t n = 0;
    for (uint32_t c = 0; c < g->n_colls; c++) {
        const ts_coll *co = &g->colls[c];
        if (co->seq >= 0) continue;
        for (uint32_t k = 0; k < co->n_members; k++) {
            uint32_t m = g->coll_members[co->first_member + k];
            if (g->nodes.rank[m] != r) continue;
            out[n++] = (timed){(uint64_t)co->name << 32 | co->pg, n_end(g, m),
                               n_end(g, m) - g->nodes.start_ns[m], ref ? co->ordinal : (int64_t)m};
        }
    }
    qsort(out, n, sizeof *out, cmp_timed);
    return n;
}

static inline int64_t pair_tol(const timed *x, const timed *y) { return (x->dur < y->dur ? x->dur : y->dur) / 2; }

/* Pair rank r's members (b) with the reference's (a), both sorted by (key,
 * end): each b takes the first a of its key ending within half the shorter
 * op of its end; fills ord_of; returns the pairs made. */
static uint32_t pair_by_time(const timed *a, uint32_t na, const timed *b, uint32_t nb, int64_t *ord_of,
                             int64_t *fresh)
{
    uint32_t i = 0, n_paired = 0;
    for (uint32_t j = 0; j < nb; j++) {
        while (i < na && (a[i].key < b[j].key || (a[i].key == b[j].key && a[i].end < b[j].end - pair_tol(&a[i], &b[j]))))
            i++;   /* reference ops of smaller keys, or that ended too early to be its partner */
        if (i < na && a[i].key == b[j].key && a[i].end <= b[j].end + pair_tol(&a[i], &b[j])) {
            ord_of[b[j].val] = a[i++].val;
            n_paired++;
        } else {
            ord_of[b[j].val] = (*fresh)++;   /* no partner on the reference rank */
        }
    }
    return n_paired;
}

/* Ranks in an instance someone left before the last member entered (the
 * early leavers and the last arrival), on the aligned clocks; true if any. */
static bool mark_violations(const ts_graph *g, uint8_t *involved)
{
    bool any = false;
    for (uint32_t c = 0; c < g->n_colls; c++) {
        coll_edge_stats st;
        edge_stats(g, &g->colls[c], &st);
        if (g->colls[c].n_members < 2 || st.e1 >= st.s1) continue;
        any = true;
        for (uint32_t k = 0; k < g->colls[c].n_members; k++) {
            uint32_t m = g->coll_members[g->colls[c].first_member + k];
            if (k == st.s1_k || a_end(g, m) < st.s1) involved[g->nodes.rank[m]] = 1;
        }
    }
    return any;
}

int ts__graph_rematch_by_time(ts_graph *g, ts_graph_members *members, uint32_t warn_mark, ts_error *err)
{
    if (g->opt.no_align || g->n_ranks < 2 || !epoch_clock(g, 0)) return TS_OK;
    uint8_t *involved = ts__calloc((size_t)g->n_ranks + 1, 1);
    if (!involved) return ts__error(err, TS_ENOMEM, "out of memory re-pairing collectives");
    bool needed = mark_violations(g, involved);
    if (!needed) { ts__free(involved, (size_t)g->n_ranks + 1); return TS_OK; }
    int64_t *ord_of = ts__malloc((size_t)g->nodes.n * sizeof *ord_of + 8);
    timed *a = ts__malloc((size_t)g->n_coll_members * sizeof *a + 8), *b = ts__malloc((size_t)g->n_coll_members * sizeof *b + 8);
    int rc = (!ord_of || !a || !b) ? TS_ENOMEM : TS_OK;
    int64_t fresh = (int64_t)1 << 40;
    uint32_t n_repaired = 0;
    if (rc == TS_OK) {
        for (uint32_t n = 0; n < g->nodes.n; n++) ord_of[n] = INT64_MIN;
        uint32_t na = timed_members(g, 0, true, a);
        for (uint32_t r = 1; r < g->n_ranks; r++) {
            if (!involved[r] || !epoch_clock(g, (uint16_t)r)) continue;
            uint32_t nb = timed_members(g, (uint16_t)r, false, b);
            pair_by_time(a, na, b, nb, ord_of, &fresh);
            n_repaired++;
        }
        /* start over from the local graphs' members */
        for (uint32_t i = 0; i < g->n_coll_members; i++) g->nodes.coll[g->coll_members[i]] = TS_NONE32;
        g->n_colls = g->n_coll_members = 0;
        memset(g->align, 0, (g->n_ranks + 1) * sizeof *g->align);
        while (g->n_warnings > warn_mark) { g->n_warnings--; ts__free(g->warnings[g->n_warnings], strlen(g->warnings[g->n_warnings]) + 1); }
        rc = ts__graph_match(g, members, ord_of, err);
        if (rc == TS_OK) {
            ts__graph_align(g);
            ts__graph_warn(g, "%u rank(s) had collectives that order pairing could not make causal; they were "
                           "re-paired with rank %d's by nearest end on their epoch clocks", n_repaired, g->rank_number[0]);
        }
    }
    ts__free(ord_of, (size_t)g->nodes.n * sizeof *ord_of + 8);
    ts__free(a, (size_t)g->n_coll_members * sizeof *a + 8);
    ts__free(b, (size_t)g->n_coll_members * sizeof *b + 8);
    ts__free(involved, (size_t)g->n_ranks + 1);
    return rc == TS_ENOMEM ? ts__error(err, rc, "out of memory re-pairing collectives") : rc;
}
