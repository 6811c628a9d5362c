/* sim.c - the replay simulator: evaluate a ts_sim's points in dependency order.
 *
 * Points are numbered 2n (start of node n) and 2n+1 (end). Every node has an
 * implicit edge start -> end weighted self_ns. The pass is Kahn's algorithm on
 * the point graph, so a nesting pair (parent.start -> child.start, child.end ->
 * parent.end) is no cycle although the node pair looks like one.
 * Invariant after a successful run: start_ns[n] <= end_ns[n] for every node.
 */
#include <stdlib.h>

#include "replay/sim.h"

void ts__sim_init(ts_sim *s) { memset(s, 0, sizeof *s); }

static void order_free(ts_sim *s)
{
    size_t np = 2 * (size_t)s->order_nodes;
    ts__free(s->order, np * sizeof *s->order + 1);
    ts__free(s->mark, np * sizeof *s->mark + 1);
    ts__free(s->dfs, 2 * np * sizeof *s->dfs + 1);
    ts__free(s->in_first, (np + 1) * sizeof *s->in_first);
    ts__free(s->in_edge, (size_t)s->order_edges * sizeof *s->in_edge + 1);
    s->order = s->mark = s->dfs = s->in_first = s->in_edge = NULL;
    s->order_nodes = s->order_edges = s->stamp = 0;
}

/* Columns the sim always owns; the others (lendable_cols) may be borrowed. */
#define SIM_NODE_COLS(X) X(name) X(start_ns) X(end_ns)

typedef struct sim_col { void **p; size_t elem; } sim_col;

/* The lendable columns of the node or the edge table, in the bit order of
 * ts_sim.borrowed (nodes: bits 0-7, edges: bits 8-12). own_start_ns and
 * meas_start_ns may be lent the same rows; each becomes a copy of its own. */
static size_t lendable_cols(ts_sim *s, bool edges, sim_col *c, unsigned *bit0)
{
#define C_(f) (sim_col){(void **)&s->f, sizeof *s->f}
    if (edges) {
        sim_col e[] = {C_(esrc), C_(edst), C_(eflags), C_(ekind), C_(egap_ns)};
        memcpy(c, e, sizeof e);
        *bit0 = 8;
        return sizeof e / sizeof e[0];
    }
    sim_col n[] = {C_(own_start_ns), C_(self_ns), C_(lane), C_(rank), C_(kind), C_(iteration),
                   C_(meas_start_ns), C_(meas_dur_ns)};
#undef C_
    memcpy(c, n, sizeof n);
    *bit0 = 0;
    return sizeof n / sizeof n[0];
}

/* The bits of the two columns a graph's start column is lent as. */
enum { LENT_OWN_START = 1u << 0, LENT_MEAS_START = 1u << 6 };

void ts__sim_free(ts_sim *s)
{
#define FREE_NODE_(c) ts__free((void *)s->c, (size_t)s->cap_nodes * sizeof *s->c);
    SIM_NODE_COLS(FREE_NODE_)
#undef FREE_NODE_
    for (int edges = 0; edges < 2; edges++) {
        sim_col c[8];
        unsigned bit0;
        size_t k = lendable_cols(s, edges, c, &bit0);
        size_t cap = edges ? s->cap_edges : s->cap_nodes_ro;
        for (size_t i = 0; i < k; i++)
            if (!(s->borrowed & (1u << (bit0 + i)))) ts__free(*c[i].p, cap * c[i].elem);
    }
    ts__free(s->meas_offset_ns, s->n_offsets * sizeof *s->meas_offset_ns);
    order_free(s);
    memset(s, 0, sizeof *s);
}

/* Grow every column of one table to at least `need` rows (capacity doubles,
 * so appends are amortized O(1)). A failure part way leaves the columns
 * already grown larger than cap_*; that only understates the size later passed
 * to ts__free, which the allocation hook uses for accounting, never for safety. */
static bool grow_col(void *colp, size_t elem, uint32_t old_cap, uint32_t cap)
{
    void *old, *p;
    memcpy(&old, colp, sizeof old);
    p = ts__realloc(old, (size_t)old_cap * elem, (size_t)cap * elem);
    if (!p) return false;
    memcpy(colp, &p, sizeof p);
    return true;
}

static uint32_t next_cap(uint32_t cap, uint32_t need)
{
    cap = cap ? cap * 2 : 1024;
    while (cap < need) cap *= 2;
    return cap;
}

/* Grow the lendable columns of one table to `need` rows: a borrowed column
 * becomes an owned copy of its rows, an owned one is reallocated. */
static bool grow_lendable(ts_sim *s, uint32_t need, bool edges)
{
    sim_col c[8];
    unsigned bit0;
    size_t k = lendable_cols(s, edges, c, &bit0);
    uint32_t *capp = edges ? &s->cap_edges : &s->cap_nodes_ro, n = edges ? s->n_edges : s->n_nodes;
    uint32_t cap = next_cap(*capp, need);
    for (size_t i = 0; i < k; i++) {
        unsigned bit = 1u << (bit0 + i);
        if (!(s->borrowed & bit)) {
            if (!grow_col(c[i].p, c[i].elem, *capp, cap)) return false;
            continue;
        }
        void *p = ts__malloc((size_t)cap * c[i].elem);
        if (!p) return false;   /* the columns copied so far are owned now, with their bits cleared */
        memcpy(p, *c[i].p, (size_t)n * c[i].elem);
        *c[i].p = p;
        s->borrowed &= (uint16_t)~bit;
    }
    *capp = cap;
    return true;
}

/* Once own_start_ns and meas_start_ns are copies the sim owns, put their
 * rows on the aligned clock, so appended nodes need no offset. */
static void apply_offsets(ts_sim *s)
{
    if (!s->meas_offset_ns || (s->borrowed & (LENT_OWN_START | LENT_MEAS_START))) return;
    for (uint32_t n = 0; n < s->n_nodes; n++) {
        int64_t off = ts__sim_offset(s, n);
        if (ts__sim_measured(s, n)) s->meas_start_ns[n] += off;
        s->own_start_ns[n] += off;
    }
    ts__free(s->meas_offset_ns, s->n_offsets * sizeof *s->meas_offset_ns);
    s->meas_offset_ns = NULL;
    s->n_offsets = 0;
}

static bool grow_nodes(ts_sim *s, uint32_t need)
{
    if (need > s->cap_nodes_ro) {
        if (!grow_lendable(s, need, false)) return false;
        apply_offsets(s);
    }
    if (need > s->cap_nodes) {
        uint32_t cap = next_cap(s->cap_nodes, need);
#define GROW_(c) if (!grow_col(&s->c, sizeof *s->c, s->cap_nodes, cap)) return false;
        SIM_NODE_COLS(GROW_)
#undef GROW_
        s->cap_nodes = cap;
    }
    return true;
}

static bool grow_edges(ts_sim *s, uint32_t need)
{
    return need <= s->cap_edges || grow_lendable(s, need, true);
}

bool ts__sim_reserve(ts_sim *s, uint32_t n_nodes, uint32_t n_edges)
{
    return grow_nodes(s, n_nodes) && grow_edges(s, n_edges);
}

/* Point column f at the lender's rows, or leave it to be allocated. */
#define LEND_(f, bit) do { if (l->f) { s->f = (void *)l->f; s->borrowed |= (uint16_t)(1u << (bit)); } } while (0)

bool ts__sim_borrow(ts_sim *s, uint32_t n_nodes, uint32_t n_edges, const ts_sim_lend *l)
{
    TS_ASSERT(s->n_nodes == 0 && s->n_edges == 0 && !s->lane && !s->esrc);
    if (l->n_offsets) {
        s->meas_offset_ns = ts__calloc(l->n_offsets, sizeof *s->meas_offset_ns);
        if (!s->meas_offset_ns) return false;
        s->n_offsets = l->n_offsets;
    }
    /* the lender's rows are never written through these: appends copy first */
    if (l->meas_start_ns) {
        s->own_start_ns = (void *)l->meas_start_ns;
        s->borrowed |= LENT_OWN_START;
    }
    LEND_(self_ns, 1); LEND_(lane, 2); LEND_(rank, 3); LEND_(kind, 4); LEND_(iteration, 5);
    LEND_(meas_start_ns, 6); LEND_(meas_dur_ns, 7);
    LEND_(esrc, 8); LEND_(edst, 9); LEND_(eflags, 10); LEND_(ekind, 11); LEND_(egap_ns, 12);
    /* what is not lent is owned: allocate it for exactly these rows */
    uint16_t lent = s->borrowed;
    s->borrowed = 0;
    sim_col c[8];
    unsigned bit0;
    for (int edges = 0; edges < 2; edges++) {
        size_t k = lendable_cols(s, edges, c, &bit0);
        size_t rows = edges ? n_edges : n_nodes;
        for (size_t i = 0; i < k; i++) {
            if (lent & (1u << (bit0 + i))) continue;
            void *p = ts__malloc(rows * c[i].elem);
            if (!p) { s->borrowed = lent; return false; }   /* ts__sim_free releases what was made */
            ts__prefault(p, rows * c[i].elem);
            *c[i].p = p;
        }
    }
    s->borrowed = lent;
    s->cap_nodes_ro = n_nodes;
    s->cap_edges = n_edges;
    if (!grow_nodes(s, n_nodes)) return false;   /* the owned columns */
    ts__prefault(s->start_ns, n_nodes * sizeof *s->start_ns);   /* about to be filled */
    ts__prefault(s->end_ns, n_nodes * sizeof *s->end_ns);
    s->n_nodes = n_nodes;
    s->n_edges = n_edges;
    return true;
}
#undef LEND_

uint32_t ts__sim_add_node(ts_sim *s, uint16_t rank, uint8_t kind, int64_t own_start_ns,
                          int64_t self_ns, int64_t meas_start_ns, int64_t meas_end_ns)
{
    if (!grow_nodes(s, s->n_nodes + 1)) { s->oom = true; return TS_NONE32; }
    uint32_t n = s->n_nodes++;
    s->own_start_ns[n] = own_start_ns;
    s->self_ns[n] = self_ns > 0 ? self_ns : 0;
    s->meas_start_ns[n] = meas_start_ns;
    s->meas_dur_ns[n] = meas_start_ns == INT64_MIN ? 0 : meas_end_ns - meas_start_ns;
    s->lane[n] = TS_NONE32;
    s->rank[n] = rank;
    s->kind[n] = kind;
    s->iteration[n] = -1;
    s->name[n] = "";
    s->start_ns[n] = s->end_ns[n] = 0;
    return n;
}

uint32_t ts__sim_add_edge(ts_sim *s, uint32_t src, uint32_t dst, uint8_t flags, int64_t gap_ns)
{
    TS_ASSERT(src < s->n_nodes && dst < s->n_nodes);
    if (!grow_edges(s, s->n_edges + 1)) { s->oom = true; return TS_NONE32; }
    uint32_t e = s->n_edges++;
    s->esrc[e] = src;
    s->edst[e] = dst;
    s->eflags[e] = flags;
    s->egap_ns[e] = gap_ns;
    s->ekind[e] = 0;
    return e;
}

static inline uint32_t src_point(const ts_sim *s, uint32_t e)
{
    return 2 * s->esrc[e] + ((s->eflags[e] & TS_SIM_FROM_END) ? 1 : 0);
}
static inline uint32_t dst_point(const ts_sim *s, uint32_t e)
{
    return 2 * s->edst[e] + ((s->eflags[e] & TS_SIM_TO_END) ? 1 : 0);
}

/* Scratch of one run: out-edge CSR by source point of the edges the base
 * index does not cover, holding each edge's destination point and gap inline
 * (the hot loop reads them sequentially), in-degrees, and the stack. */
typedef struct sim_scratch {
    uint32_t *out_first;   /* 2n + 1, NULL when every edge is in the base index */
    uint32_t *out_dst;     /* extra edges: destination point */
    int64_t  *out_gap;     /* extra edges */
    uint32_t *indeg;       /* 2n */
    uint32_t *stack;       /* 2n */
    size_t    bytes;
    void     *block;
} sim_scratch;

static bool scratch_alloc(sim_scratch *sc, const ts_sim *s, uint32_t first_extra)
{
    size_t np = 2 * (size_t)s->n_nodes, nx = s->n_edges - first_extra;
    size_t csr = nx ? np + 1 + nx : 0;
    sc->bytes = nx * sizeof(int64_t) + (csr + np + np) * sizeof(uint32_t);
    sc->block = ts__malloc(sc->bytes);
    if (!sc->block) return false;
    sc->out_gap = sc->block;                        /* 8-byte column first: aligned */
    sc->indeg = (uint32_t *)(sc->out_gap + nx);
    sc->stack = sc->indeg + np;
    sc->out_first = nx ? sc->stack + np : NULL;
    sc->out_dst = nx ? sc->out_first + np + 1 : NULL;
    return true;
}

/* In-degrees of every point, and a counting sort by source point of the
 * edges from first_extra on: O(V + E). */
static void build_index(const ts_sim *s, sim_scratch *sc, uint32_t first_extra)
{
    uint32_t np = 2 * s->n_nodes;
    memset(sc->indeg, 0, (size_t)np * sizeof(uint32_t));
    for (uint32_t e = 0; e < s->n_edges; e++) sc->indeg[dst_point(s, e)]++;
    if (!sc->out_first) return;
    memset(sc->out_first, 0, ((size_t)np + 1) * sizeof(uint32_t));
    for (uint32_t e = first_extra; e < s->n_edges; e++) sc->out_first[src_point(s, e) + 1]++;
    for (uint32_t p = 0; p < np; p++) sc->out_first[p + 1] += sc->out_first[p];
    /* the stack doubles as the fill cursor here; it is empty before use. */
    memcpy(sc->stack, sc->out_first, (size_t)np * sizeof(uint32_t));
    for (uint32_t e = first_extra; e < s->n_edges; e++) {
        uint32_t k = sc->stack[src_point(s, e)]++;
        sc->out_dst[k] = dst_point(s, e);
        sc->out_gap[k] = s->egap_ns[e];
    }
}

/* A what-if's scaled or repriced times can take a point past int64 (a sum
 * that wraps prints a negative prediction). Points are summed with an
 * overflow check (one flag, no branch taken on real traces), and after a
 * what-if every end must lie within 2^62 ns, so the comparisons after the
 * run (predicted - measured) stay within int64 too. The graph's bounds make
 * both hold for an unedited replay. */
static inline int64_t add_ck(ts_sim *s, int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) { s->overflow = true; return a; }
    return r;
}

static int check_range(const ts_sim *s, ts_error *err)
{
    int64_t hi = 0;
    for (uint32_t i = 0; i < s->n_nodes && !s->overflow; i++)
        if (s->end_ns[i] > hi) hi = s->end_ns[i];
    if (!s->overflow && hi < ((int64_t)1 << 62)) return TS_OK;
    return ts__error(err, TS_ERANGE, "replay: the what-if takes the simulated times past 2^62 ns (146 years); "
                     "a --scale factor, --bandwidth or --latency-us is out of range");
}

/* Raise point q's value to at least v. A start point with start-edges starts
 * at INT64_MIN, so the max over its edges decides. */
static inline void relax(ts_sim *s, uint32_t q, int64_t v)
{
    int64_t *val = (q & 1) ? s->end_ns : s->start_ns;
    if (v > val[q >> 1]) val[q >> 1] = v;
}

/* Relax every edge leaving point p (value v); push points that became ready. */
static inline uint32_t leave(ts_sim *s, const sim_scratch *sc, uint32_t p, int64_t v, uint32_t top)
{
    uint32_t i = p >> 1;
    if (s->base_out && i < s->n_base_nodes) {
        uint8_t want = (p & 1) ? TS_SIM_FROM_END : 0;
        for (uint32_t e = s->base_out[i]; e < s->base_out[i + 1]; e++) {
            if ((s->eflags[e] & TS_SIM_FROM_END) != want) continue;
            uint32_t q = dst_point(s, e);
            relax(s, q, add_ck(s, v, s->egap_ns[e]));
            if (--sc->indeg[q] == 0) sc->stack[top++] = q;
        }
    }
    if (sc->out_first)
        for (uint32_t k = sc->out_first[p]; k < sc->out_first[p + 1]; k++) {
            uint32_t q = sc->out_dst[k];
            relax(s, q, add_ck(s, v, sc->out_gap[k]));
            if (--sc->indeg[q] == 0) sc->stack[top++] = q;
        }
    return top;
}

/* Evaluate in the base graph's topological order, each point pulled from
 * its in-edges: no scratch memory and no in-degree pass (at 16 M nodes the
 * Kahn pass needed 256 MB of fresh scratch). Valid while nothing was
 * appended: edits of gaps and self times do not change the order. */
static void run_in_base_order(ts_sim *s)
{
    const uint32_t *in_first = s->base_in_first, *in_edge = s->base_in_edge;
    for (uint32_t i = 0; i < 2 * s->n_nodes; i++) {
        uint32_t p = s->base_topo[i], n = p >> 1;
        bool to_end = p & 1, any = false;
        int64_t v = to_end ? add_ck(s, s->start_ns[n], s->self_ns[n]) : INT64_MIN;
        for (uint32_t k = in_first[n]; k < in_first[n + 1]; k++) {
            uint32_t e = in_edge[k], a = s->esrc[e];
            if (((s->eflags[e] & TS_SIM_TO_END) != 0) != to_end) continue;
            int64_t x = add_ck(s, (s->eflags[e] & TS_SIM_FROM_END) ? s->end_ns[a] : s->start_ns[a], s->egap_ns[e]);
            if (x > v) v = x;
            any = true;
        }
        if (to_end) s->end_ns[n] = v;
        else s->start_ns[n] = any ? v : ts__sim_own_start(s, n);
    }
}

/* Keep the order of a Kahn run that reached every point (popped: the
 * points as it evaluated them) and index the edges by destination node (a
 * counting sort), for run_in_kept_order: O(V + E). Out of memory keeps
 * nothing (the next run is Kahn's again). */
static void keep_order(ts_sim *s, const uint32_t *popped)
{
    order_free(s);
    size_t n = s->n_nodes, np = 2 * n, ne = s->n_edges;
    s->order = ts__malloc(np * sizeof *s->order + 1);
    s->mark = ts__calloc(np + 1, sizeof *s->mark);
    s->dfs = ts__malloc(2 * np * sizeof *s->dfs + 1);
    s->in_first = ts__calloc(np + 1, sizeof *s->in_first);
    s->in_edge = ts__malloc(ne * sizeof *s->in_edge + 1);
    s->order_nodes = (uint32_t)n;
    s->order_edges = (uint32_t)ne;
    if (!s->order || !s->mark || !s->dfs || !s->in_first || !s->in_edge) { order_free(s); return; }
    memcpy(s->order, popped, np * sizeof *s->order);
    for (uint32_t e = 0; e < ne; e++) s->in_first[dst_point(s, e) + 1]++;
    for (size_t p = 0; p < np; p++) s->in_first[p + 1] += s->in_first[p];
    for (uint32_t e = 0; e < ne; e++) s->in_edge[s->in_first[dst_point(s, e)]++] = e;   /* now point p's end */
    for (size_t p = np; p > 0; p--) s->in_first[p] = s->in_first[p - 1];
    s->in_first[0] = 0;
    s->order_stale = false;
}

/* Point p's value from its sources, or false (nothing written) when one
 * is not evaluated in this run (mark != done): *wait is set to it. */
static inline __attribute__((always_inline)) bool pull_point(ts_sim *s, uint32_t p, uint32_t done, uint32_t *wait)
{
    uint32_t n = p >> 1, j0 = s->in_first[p], j1 = s->in_first[p + 1];
    bool to_end = p & 1;
    if (to_end && s->mark[p - 1] != done) { *wait = p - 1; return false; }
    int64_t v = to_end ? add_ck(s, s->start_ns[n], s->self_ns[n]) : INT64_MIN;
    for (uint32_t j = j0; j < j1; j++) {
        uint32_t e = s->in_edge[j], a = src_point(s, e);
        if (s->mark[a] != done) { *wait = a; return false; }
        int64_t x = add_ck(s, (a & 1) ? s->end_ns[a >> 1] : s->start_ns[a >> 1], s->egap_ns[e]);
        if (x > v) v = x;
    }
    if (to_end) s->end_ns[n] = v;
    else s->start_ns[n] = j1 > j0 ? v : ts__sim_own_start(s, n);
    s->mark[p] = done;
    return true;
}

/* Evaluate p after every source it waits on, depth first. False on a
 * cycle (a pending point reached again): the caller runs Kahn's pass,
 * which reports it. */
static bool pull_deep(ts_sim *s, uint32_t p, uint32_t done)
{
    uint32_t top = 0, wait;
    s->dfs[top++] = p;
    s->mark[p] = done - 1;
    while (top > 0) {
        uint32_t q = s->dfs[top - 1];
        if (pull_point(s, q, done, &wait)) { top--; continue; }
        if (s->mark[wait] == done - 1) return false;
        s->mark[wait] = done - 1;
        s->dfs[top++] = wait;   /* each point is pushed once a run: top < 2 n */
    }
    return true;
}

/* Every point in the kept order, a point waiting on a later one taking
 * that one first (pull_deep). The values are Kahn's: each point is the
 * max over the same edges, whatever the order. False on a cycle. */
static bool run_in_kept_order(ts_sim *s)
{
    if (s->stamp >= UINT32_MAX / 2 - 1) {   /* marks of old runs could read as this one's */
        memset(s->mark, 0, 2 * (size_t)s->order_nodes * sizeof *s->mark);
        s->stamp = 0;
    }
    uint32_t done = 2 * ++s->stamp, wait;
    for (uint32_t k = 0; k < 2 * s->n_nodes; k++) {
        uint32_t p = s->order[k];
        if (s->mark[p] == done || pull_point(s, p, done, &wait)) continue;
        if (!pull_deep(s, p, done)) return false;
    }
    return true;
}

int ts__sim_run(ts_sim *s, ts_error *err)
{
    if (s->oom) return ts__error(err, TS_ENOMEM, "replay: out of memory building the simulation");
    s->overflow = false;
    if (s->base_topo && s->base_in_first && s->n_nodes == s->n_base_nodes && s->n_edges == s->n_base_edges) {
        run_in_base_order(s);
        return s->edited || s->overflow ? check_range(s, err) : TS_OK;
    }
    if (s->order && !s->order_stale && s->order_nodes == s->n_nodes && s->order_edges == s->n_edges) {
        if (run_in_kept_order(s)) return s->edited || s->overflow ? check_range(s, err) : TS_OK;
        s->overflow = false;   /* a cycle: Kahn's pass below reports it */
        order_free(s);
    }
    uint32_t n = s->n_nodes, np = 2 * n;
    uint32_t first_extra = s->base_out ? s->n_base_edges : 0;
    sim_scratch sc;
    if (!scratch_alloc(&sc, s, first_extra)) return ts__error(err, TS_ENOMEM, "replay: out of memory");
    build_index(s, &sc, first_extra);
    /* Point 2i's value lives in start_ns[i], point 2i+1's in end_ns[i]. A
     * stack, not a FIFO: the point readied last is usually the next op on
     * the same lane, so popping it keeps the walk in neighbouring rows (one
     * rank at a time) instead of striding across all ranks. Any pop order
     * gives a topological order. */
    uint32_t top = 0, done = 0;
    uint32_t *popped = s->keep_order ? ts__malloc((size_t)np * sizeof *popped + 1) : NULL;   /* NULL: none kept */
    for (uint32_t i = n; i-- > 0;) {    /* pushed in reverse: row 0 pops first */
        s->start_ns[i] = sc.indeg[2 * i] ? INT64_MIN : ts__sim_own_start(s, i);
        s->end_ns[i] = INT64_MIN;
        sc.indeg[2 * i + 1]++;                      /* the implicit start -> end edge */
        if (!sc.indeg[2 * i]) sc.stack[top++] = 2 * i;
    }
    while (top > 0) {
        uint32_t p = sc.stack[--top], i = p >> 1;
        if (popped) popped[done] = p;
        done++;
        int64_t v = (p & 1) ? s->end_ns[i] : s->start_ns[i];
        if (!(p & 1)) {
            relax(s, p + 1, add_ck(s, v, s->self_ns[i]));
            if (--sc.indeg[p + 1] == 0) sc.stack[top++] = p + 1;
        }
        top = leave(s, &sc, p, v, top);
    }
    int rc = s->edited || s->overflow ? check_range(s, err) : TS_OK;
    if (done < np) {
        uint32_t stuck = 0;
        for (uint32_t p = 0; p < np; p++) if (sc.indeg[p]) { stuck = p >> 1; break; }
        rc = ts__error(err, TS_EFORMAT, "replay: dependency cycle through node %u '%s' (rank %u): %u of %u points unreachable",
                       stuck, stuck >= s->n_base_nodes && s->name[stuck] ? s->name[stuck] : "?",
                       (unsigned)s->rank[stuck], np - done, np);
    }
    if (popped && done == np) keep_order(s, popped);
    ts__free(popped, (size_t)np * sizeof *popped + 1);
    ts__free(sc.block, sc.bytes);
    return rc;
}

/* Max over the edges into each point of the src point's measured value:
 * into start_ns/end_ns used as scratch, INT64_MIN where no edge enters. */
static void max_measured_preds(ts_sim *s)
{
    for (uint32_t i = 0; i < s->n_nodes; i++) s->start_ns[i] = s->end_ns[i] = INT64_MIN;
    for (uint32_t e = 0; e < s->n_edges; e++) {
        uint32_t a = s->esrc[e], b = s->edst[e];
        if (!ts__sim_measured(s, a)) continue;
        int64_t v = (s->eflags[e] & TS_SIM_FROM_END) ? ts__sim_meas_end(s, a) : ts__sim_meas_start(s, a);
        int64_t *col = (s->eflags[e] & TS_SIM_TO_END) ? s->end_ns : s->start_ns;
        if (v > col[b]) col[b] = v;
    }
}

void ts__sim_calibrate(ts_sim *s)
{
    max_measured_preds(s);
    for (uint32_t e = 0; e < s->n_edges; e++) {
        uint32_t b = s->edst[e];
        if (!ts__sim_measured(s, b)) continue;
        bool to_end = s->eflags[e] & TS_SIM_TO_END;
        int64_t point = to_end ? ts__sim_meas_end(s, b) : ts__sim_meas_start(s, b);
        int64_t pred = to_end ? s->end_ns[b] : s->start_ns[b];
        if (pred != INT64_MIN) s->egap_ns[e] = point - pred;
    }
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        if (!ts__sim_measured(s, i)) continue;
        s->own_start_ns[i] = s->meas_start_ns[i];   /* the same clock, so the same offset */
        int64_t dur = s->meas_dur_ns[i];
        /* An end explained by an end-edge that arrives at or after start + dur
         * means the node was waiting, not working: it needs no time itself. */
        bool explained = s->end_ns[i] != INT64_MIN && s->end_ns[i] >= ts__sim_meas_start(s, i);
        s->self_ns[i] = explained ? 0 : (dur > 0 ? dur : 0);
    }
}
