/* reorder.c - put a graph's ranks in rank-number order after they were
 * built in another (graph/stream.c adds rank files in name order, and a
 * Kineto file's name does not carry its rank).
 *
 * Not for: graphs already matched (colls, barriers and indexes would need
 * remapping too: ts__graph_reorder_ranks runs before ts__graph_match).
 * Invariant kept: rank r's nodes are the contiguous rows [rank_first_node[r],
 * rank_first_node[r + 1]) and its lanes contiguous, each in the order built.
 */
#include "graph/build.h"

/* New row of every old row of a table split per rank into runs [first[r],
 * first[r + 1]), the runs laid out in pos order. */
static uint32_t *row_map(const uint32_t *first, const uint32_t *pos, uint32_t n_ranks, uint32_t n_rows)
{
    uint32_t *inv = ts__malloc(((size_t)n_ranks + 1) * sizeof *inv);
    uint32_t *map = ts__malloc(((size_t)n_rows + 1) * sizeof *map);
    if (!inv || !map) {
        ts__free(inv, ((size_t)n_ranks + 1) * sizeof *inv);
        ts__free(map, ((size_t)n_rows + 1) * sizeof *map);
        return NULL;
    }
    for (uint32_t r = 0; r < n_ranks; r++) inv[pos[r]] = r;
    uint32_t at = 0;
    for (uint32_t k = 0; k < n_ranks; k++)
        for (uint32_t i = first[inv[k]]; i < first[inv[k] + 1]; i++) map[i] = at++;
    for (uint32_t i = first[n_ranks]; i < n_rows; i++) map[i] = i;   /* rows past the ranks' (none yet) */
    ts__free(inv, ((size_t)n_ranks + 1) * sizeof *inv);
    return map;
}

/* Column *col (cap rows of elem bytes, n used) scattered by map into a new block. */
static int scatter(void **col, size_t elem, uint32_t cap, uint32_t n, const uint32_t *map)
{
    char *to = ts__malloc((size_t)cap * elem + 1), *from = *col;
    if (!to) return TS_ENOMEM;
    for (uint32_t i = 0; i < n; i++) memcpy(to + (size_t)map[i] * elem, from + (size_t)i * elem, elem);
    ts__free(from, (size_t)cap * elem);
    *col = to;
    return TS_OK;
}

static int move_nodes(ts_graph *g, const uint32_t *pos, const uint32_t *nmap, const uint32_t *lmap)
{
    ts_col_ref cols[16];
    size_t nc = ts__graph_node_cols(&g->nodes, cols);
    for (size_t c = 0; c < nc; c++)
        if (scatter(cols[c].p, cols[c].elem, g->nodes.cap, g->nodes.n, nmap)) return TS_ENOMEM;
    for (uint32_t i = 0; i < g->nodes.n; i++) {
        if (g->nodes.rank[i] != TS_GRAPH_NO_RANK) g->nodes.rank[i] = (uint16_t)pos[g->nodes.rank[i]];
        g->nodes.lane[i] = lmap[g->nodes.lane[i]];
    }
    if (scatter((void **)&g->lanes, sizeof *g->lanes, g->cap_lanes, g->n_lanes, lmap)) return TS_ENOMEM;
    for (uint32_t l = 0; l < g->n_lanes; l++)
        if (g->lanes[l].rank != TS_GRAPH_NO_RANK) g->lanes[l].rank = (uint16_t)pos[g->lanes[l].rank];
    for (uint32_t e = 0; e < g->edges.n; e++) {
        g->edges.src[e] = nmap[g->edges.src[e]];
        g->edges.dst[e] = nmap[g->edges.dst[e]];
    }
    return TS_OK;
}

/* Per-rank arrays in new order, and everything that names a node row. */
static int move_ranks(ts_graph *g, const uint32_t *pos, const uint32_t *nmap, ts_graph_members *members)
{
    uint32_t n = g->n_ranks;
    ts_graph_members *m2 = ts__malloc((size_t)n * sizeof *m2 + 1);
    int32_t *num = ts__malloc((size_t)n * sizeof *num + 1);
    uint32_t *rep = ts__malloc((size_t)n * sizeof *rep + 1), *size = ts__malloc((size_t)n * sizeof *size + 1);
    ts_map64 done;
    ts__map64_init(&done);
    int rc = !m2 || !num || !rep || !size ? TS_ENOMEM : TS_OK;
    for (uint32_t r = 0; rc == TS_OK && r < n; r++) {
        for (uint32_t k = 0; k < members[r].n; k++) members[r].node[k] = nmap[members[r].node[k]];
        m2[pos[r]] = members[r];
        num[pos[r]] = g->rank_number[r];
        size[pos[r]] = g->rank_first_node[r + 1] - g->rank_first_node[r];
        if (g->replica_of) rep[pos[r]] = pos[g->replica_of[r]];
    }
    const ts_map64 *md = &g->mpi_done;
    for (uint32_t i = 0; rc == TS_OK && i < md->n_slots; i++)
        if (md->keys[i] != UINT64_MAX && ts__map64_put(&done, nmap[md->keys[i]], nmap[md->vals[i]])) rc = TS_ENOMEM;
    if (rc == TS_OK) {
        memcpy(members, m2, (size_t)n * sizeof *m2);
        memcpy(g->rank_number, num, (size_t)n * sizeof *num);
        if (g->replica_of) memcpy(g->replica_of, rep, (size_t)n * sizeof *rep);
        for (uint32_t r = 0; r < n; r++) g->rank_first_node[r + 1] = g->rank_first_node[r] + size[r];
        ts__map64_free(&g->mpi_done);
        g->mpi_done = done;
    } else {
        ts__map64_free(&done);
    }
    ts__free(m2, (size_t)n * sizeof *m2 + 1);
    ts__free(num, (size_t)n * sizeof *num + 1);
    ts__free(rep, (size_t)n * sizeof *rep + 1);
    ts__free(size, (size_t)n * sizeof *size + 1);
    return rc;
}

int ts__graph_reorder_ranks(ts_graph *g, const uint32_t *pos, const uint32_t *lane_first, ts_graph_members *members)
{
    uint32_t *nmap = row_map(g->rank_first_node, pos, g->n_ranks, g->nodes.n);
    uint32_t *lmap = row_map(lane_first, pos, g->n_ranks, g->n_lanes);
    int rc = !nmap || !lmap ? TS_ENOMEM : move_nodes(g, pos, nmap, lmap);
    if (rc == TS_OK) rc = move_ranks(g, pos, nmap, members);
    if (nmap) ts__free(nmap, ((size_t)g->nodes.n + 1) * sizeof *nmap);
    if (lmap) ts__free(lmap, ((size_t)g->n_lanes + 1) * sizeof *lmap);
    return rc;
}
