/* from_opfs.c - dPRO's from_opfs2tsfs: the tensor fusion that matches a
 * given operator fusion. Gradients produced by ops of one fused cluster go
 * into one all-reduce group; every other gradient is all-reduced alone.
 *
 * Input: dPRO's cluster_mapping.txt (`op_name cluster_id` a line; names may
 * hold spaces, the id is the last word; `#` lines are comments), as op
 * fusion writes it for a PyTorch trace: each cluster a run of ops back to
 * back on one lane, listed in lane order, for one rank and iteration. The
 * clusters are found again in the trace (rank and iteration of the first
 * AccumulateGrad): each is the first unclaimed run of consecutive ops on one
 * lane with exactly its names; a cluster found nowhere is an error naming
 * its op (a mapping for another graph). A gradient is produced by the
 * autograd function (`autograd::engine::evaluate_function: X`, X not
 * AccumulateGrad) that ran last before its AccumulateGrad on that lane; the
 * k-th AccumulateGrad by start is the k-th gradient in reduction order
 * (gradients.json reversed, DDP's order). The groups are cut where two
 * gradients next in reduction order come from different clusters (a
 * cluster whose gradients are not neighbours gives one group per run).
 * Not for: pricing (optimize.c replays the result) or TensorFlow graphs
 * (dPRO follows the DAG's BW -> Comm edges; no trace here has both).
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph/graph.h"
#include "ingest/ingest.h"
#include "optimize/op_fusion.h"
#include "optimize/passes.h"

static const char EVAL[] = "autograd::engine::evaluate_function: ";
static const char ACC[] = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad";

typedef struct opfs_line { const char *name; size_t len; uint32_t cluster, line; } opfs_line;

typedef struct opfs_ctx {
    const ts_graph *g;
    const char     *path;
    opfs_line      *ln;
    uint32_t        n_ln, cap_ln;
    uint32_t       *seq;       /* nodes of one rank and iteration, by lane then node order */
    uint32_t        n_seq;
    ts_map64        cluster_of; /* node + 1 -> cluster index + 1 */
    const ts_opt_grads *grads;
    uint32_t       *cl;        /* [grads->n]: cluster + 1 of each gradient, 0 = none */
    ts_error       *err;
} opfs_ctx;

static int parse(opfs_ctx *c, const char *data, size_t n)
{
    const char *p = data, *end = data + n;
    for (uint32_t line = 1; p < end; line++) {
        const char *e = memchr(p, '\n', (size_t)(end - p)), *s = p;
        if (!e) e = end;
        p = e + 1;
        const char *t = e;
        while (t > s && (t[-1] == '\r' || t[-1] == ' ' || t[-1] == '\t')) t--;
        if (t == s || *s == '#') continue;
        const char *sp = t;
        while (sp > s && sp[-1] != ' ' && sp[-1] != '\t') sp--;
        uint64_t id = 0;
        const char *d = sp;
        while (d < t && *d >= '0' && *d <= '9' && id < UINT32_MAX) id = id * 10 + (uint64_t)(*d++ - '0');
        const char *ne = sp;
        while (ne > s && (ne[-1] == ' ' || ne[-1] == '\t')) ne--;
        if (sp == s || d != t || d == sp || id >= UINT32_MAX || ne == s || memchr(s, 0, (size_t)(t - s)))
            return ts__error(c->err, TS_EPARSE, "%s: line %u: expected 'op_name cluster_id'", c->path, line);
        if (ts__grow((void **)&c->ln, &c->cap_ln, sizeof *c->ln, (size_t)c->n_ln + 1))
            return ts__error(c->err, TS_ENOMEM, "optimize: out of memory");
        c->ln[c->n_ln++] = (opfs_line){s, (size_t)(ne - s), (uint32_t)id, line};
    }
    if (!c->n_ln) return ts__error(c->err, TS_EPARSE, "%s: no 'op_name cluster_id' line", c->path);
    return TS_OK;
}


static const ts_graph *sort_g;
static int by_lane(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    uint32_t la = sort_g->nodes.lane[a], lb = sort_g->nodes.lane[b];
    return la != lb ? (la > lb) - (la < lb) : (a > b) - (a < b);
}

static bool is_acc(const ts_graph *g, uint32_t n) { return !strcmp(ts__graph_node_name(g, n), ACC); }

/* The rank and iteration of the first AccumulateGrad; its nodes into seq. */
static int pick_iteration(opfs_ctx *c)
{
    const ts_graph *g = c->g;
    uint32_t first = TS_NONE32;
    for (uint32_t n = 0; n < g->nodes.n && first == TS_NONE32; n++)
        if (g->nodes.rank[n] != TS_GRAPH_NO_RANK && g->nodes.iteration[n] >= 0 && is_acc(g, n)) first = n;
    if (first == TS_NONE32)
        return ts__error(c->err, TS_ENODATA, "optimize: --from-opfs: no AccumulateGrad inside an iteration "
                                             "(a PyTorch trace of a training step is needed)");
    if (!(c->seq = ts__malloc((size_t)g->nodes.n * sizeof *c->seq + 1))) return ts__error(c->err, TS_ENOMEM, "optimize: out of memory");
    for (uint32_t n = 0; n < g->nodes.n; n++)
        if (g->nodes.rank[n] == g->nodes.rank[first] && g->nodes.iteration[n] == g->nodes.iteration[first]) c->seq[c->n_seq++] = n;
    sort_g = g;
    qsort(c->seq, c->n_seq, sizeof *c->seq, by_lane);
    return TS_OK;
}

static bool run_matches(const opfs_ctx *c, uint32_t p, uint32_t l0, uint32_t k)
{
    const ts_graph *g = c->g;
    uint64_t v;
    if (p + k > c->n_seq) return false;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t n = c->seq[p + j];
        const char *name = ts__graph_node_name(g, n);
        if (g->nodes.lane[n] != g->nodes.lane[c->seq[p]] || ts__map64_get(&c->cluster_of, (uint64_t)n + 1, &v) ||
            strlen(name) != c->ln[l0 + j].len || memcmp(name, c->ln[l0 + j].name, c->ln[l0 + j].len))
            return false;
    }
    return true;
}

/* Each cluster (a run of lines with one id) claims its run in seq. */
static int match_clusters(opfs_ctx *c)
{
    uint32_t idx = 0;
    for (uint32_t l0 = 0, l1; l0 < c->n_ln; l0 = l1, idx++) {
        for (l1 = l0; l1 < c->n_ln && c->ln[l1].cluster == c->ln[l0].cluster; l1++) {}
        uint32_t p = 0;
        while (p < c->n_seq && !run_matches(c, p, l0, l1 - l0)) p++;
        if (p == c->n_seq) {
            const opfs_line *L = &c->ln[l0];
            return ts__error(c->err, TS_EFORMAT, "%s: line %u: op '%.*s' (cluster %u) is not in the trace as listed "
                             "(a cluster_mapping for another graph?)", c->path, L->line, (int)L->len, L->name, L->cluster);
        }
        for (uint32_t j = 0; j < l1 - l0; j++)
            if (ts__map64_put(&c->cluster_of, (uint64_t)c->seq[p + j] + 1, (uint64_t)idx + 1))
                return ts__error(c->err, TS_ENOMEM, "optimize: out of memory");
    }
    return TS_OK;
}

static const uint32_t *sort_seq;
static int by_start(const void *x, const void *y)
{
    uint32_t a = sort_seq[*(const uint32_t *)x], b = sort_seq[*(const uint32_t *)y];
    int64_t sa = ts__graph_start(sort_g, a), sb = ts__graph_start(sort_g, b);
    return sa != sb ? (sa > sb) - (sa < sb) : (a > b) - (a < b);
}

/* Cluster (index + 1, 0 = none) of each gradient in reduction order. */
static int grad_clusters(opfs_ctx *c, const ts_opt_grads *grads, uint32_t *cl)
{
    const ts_graph *g = c->g;
    uint32_t *acc = ts__malloc((size_t)c->n_seq * sizeof *acc + 1), n_acc = 0;
    if (!acc) return ts__error(c->err, TS_ENOMEM, "optimize: out of memory");
    for (uint32_t p = 0; p < c->n_seq; p++)
        if (is_acc(g, c->seq[p])) acc[n_acc++] = p;   /* positions in seq */
    int rc = TS_OK;
    if (n_acc != grads->n)
        rc = ts__error(c->err, TS_EFORMAT, "optimize: --from-opfs: the trace's iteration has %u AccumulateGrad, "
                       "the gradients file names %u gradients", n_acc, grads->n);
    sort_g = g;
    sort_seq = c->seq;
    if (rc == TS_OK) qsort(acc, n_acc, sizeof *acc, by_start);
    for (uint32_t k = 0; rc == TS_OK && k < n_acc; k++) {
        /* the producer: the last autograd function before it on its lane */
        uint32_t p = acc[k], lane = g->nodes.lane[c->seq[p]], prod = TS_NONE32;
        for (uint32_t q = p; q-- > 0 && prod == TS_NONE32 && g->nodes.lane[c->seq[q]] == lane;) {
            const char *name = ts__graph_node_name(g, c->seq[q]);
            if (!strncmp(name, EVAL, sizeof EVAL - 1) && !is_acc(g, c->seq[q])) prod = c->seq[q];
        }
        uint64_t v = 0;
        if (prod != TS_NONE32) ts__map64_get(&c->cluster_of, (uint64_t)prod + 1, &v);
        cl[k] = (uint32_t)v;
    }
    ts__free(acc, (size_t)c->n_seq * sizeof *acc + 1);
    return rc;
}

static int pick_iteration(opfs_ctx *c);
static int match_clusters(opfs_ctx *c);
static int grad_clusters(opfs_ctx *c, const ts_opt_grads *grads, uint32_t *cl);

/* All of it while the file's bytes live (the lines point into them). */
static int derive_cb(void *ud, const char *data, size_t n)
{
    opfs_ctx *c = ud;
    int rc = parse(c, data, n);
    if (rc == TS_OK) rc = pick_iteration(c);
    if (rc == TS_OK) rc = match_clusters(c);
    if (rc == TS_OK) rc = grad_clusters(c, c->grads, c->cl);
    return rc;
}

int ts__opfs_to_tsfs(const ts_graph *g, const ts_opt_grads *grads, const char *path, uint8_t *vars,
                     uint32_t *n_grouped, ts_error *err)
{
    uint32_t *cl = ts__calloc((size_t)grads->n + 1, sizeof *cl);
    opfs_ctx c = {.g = g, .path = path, .grads = grads, .cl = cl, .err = err};
    ts__map64_init(&c.cluster_of);
    int rc = cl ? ts__with_file_bytes(path, TS__SIDE_FILE_MAX_BYTES, derive_cb, &c, err)
                : ts__error(err, TS_ENOMEM, "optimize: out of memory");
    *n_grouped = 0;
    for (uint32_t i = 0; rc == TS_OK && i < grads->n; i++) {
        bool with_next = i + 1 < grads->n && cl[i] && cl[i] == cl[i + 1];
        bool with_prev = i > 0 && cl[i] && cl[i] == cl[i - 1];
        if (i + 1 < grads->n) vars[i] = !with_next;
        *n_grouped += with_next || with_prev;
    }
    ts__free(cl, ((size_t)grads->n + 1) * sizeof *cl);
    ts__free(c.ln, (size_t)c.cap_ln * sizeof *c.ln);
    ts__free(c.seq, (size_t)g->nodes.n * sizeof *c.seq + 1);
    ts__map64_free(&c.cluster_of);
    return rc;
}
