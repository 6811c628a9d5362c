/* critical_path.c - the output of a critical path (ts_critical_path and the
 * graph it was found in): a text summary, JSON, CSV tables, and the Chrome
 * trace with the path marked.
 *
 * Not for: finding the path or adding up its ops (graph/critical_path.c,
 * graph/cp_ops.c). Reads them only through trainscope/graph.h.
 * JSON: iteration, length_us, iteration_us, path_nodes, categories,
 * waited_for_rank, wait_on_rank, top_ops, path, ranks, graph_nodes,
 * graph_edges, collectives, edges_by_kind, warnings (cmd_critical_path.c's
 * --help says what each holds).
 */
#include "report/chrome_export.h"
#include "report/report_int.h"

#include <string.h>

/* The fields of an op row and of a path node: JSON and CSV write the same list. */
static int op_fields(const ts_cp_op *op, ts__fld f[TS__FLD_MAX])
{
    f[0] = (ts__fld){"rank", TS__FLD_INT, .i = op->rank};
    f[1] = (ts__fld){"kind", TS__FLD_STR, .s = op->kind};
    f[2] = (ts__fld){"name", TS__FLD_STR, .s = op->name};
    f[3] = (ts__fld){"edge", TS__FLD_OPT_STR, .s = op->edge};
    f[4] = (ts__fld){"count", TS__FLD_U64, .i = (int64_t)op->count};
    f[5] = (ts__fld){"total", TS__FLD_NS, .i = op->total_ns};
    return 6;
}

static int node_fields(const ts_cp_node *n, ts__fld f[TS__FLD_MAX])
{
    f[0] = (ts__fld){"rank", TS__FLD_INT, .i = n->rank};
    f[1] = (ts__fld){"kind", TS__FLD_STR, .s = n->kind};
    f[2] = (ts__fld){"name", TS__FLD_STR, .s = n->name};
    f[3] = (ts__fld){"start", TS__FLD_NS, .i = n->start_ns};
    f[4] = (ts__fld){"dur", TS__FLD_NS, .i = n->dur_ns};
    f[5] = (ts__fld){"on_path", TS__FLD_NS, .i = n->on_path_ns};
    return 6;
}

static void json_ops(ts_json *j, const ts_critical_path *cp, uint32_t top)
{
    ts__fld f[TS__FLD_MAX];
    ts__json_key(j, "top_ops");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < ts_critical_path_n_ops(cp) && i < top; i++)
        ts__fld_json(j, f, op_fields(ts_critical_path_op(cp, i), f));
    ts__json_arr_end(j);
}

static void json_path(ts_json *j, const ts_critical_path *cp)
{
    ts__fld f[TS__FLD_MAX];
    ts__json_key(j, "path");   /* every node on the path in time order (barriers left out) */
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < ts_critical_path_n_nodes(cp); i++) {
        ts_cp_node n;
        if (ts_critical_path_node(cp, i, &n) || n.barrier) continue;
        ts__fld_json(j, f, node_fields(&n, f));
    }
    ts__json_arr_end(j);
}

static void json_graph(ts_json *j, const ts_graph *g)
{
    ts__json_key(j, "ranks");
    ts__json_arr_begin(j);
    for (uint32_t r = 0; r < ts_graph_n_ranks(g); r++) {
        ts_graph_rank gr;
        if (ts_graph_rank_info(g, r, &gr)) continue;
        ts__json_obj_begin(j);
        ts__json_kv_i64(j, "rank", gr.rank);
        ts__json_kv_str(j, "file", gr.file);
        ts__json_kv_i64(j, "clock_offset_ns", gr.offset_ns);
        ts__json_kv_u64(j, "matched_collectives", gr.n_matched);
        ts__json_kv_i64(j, "residual_median_ns", gr.resid_median_ns);
        ts__json_kv_i64(j, "residual_max_ns", gr.resid_max_ns);
        ts__json_kv_u64(j, "causality_violations", gr.n_violations);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
    ts__json_kv_u64(j, "graph_nodes", ts_graph_n_nodes(g));
    ts__json_kv_u64(j, "graph_edges", ts_graph_n_edges(g));
    ts__json_kv_u64(j, "collectives", ts_graph_n_collectives(g));
    ts__json_key(j, "edges_by_kind");
    ts__json_obj_begin(j);
    for (uint32_t k = 0; k < ts_graph_n_edge_kinds(); k++)
        ts__json_kv_u64(j, ts_graph_edge_kind_name(k), ts_graph_n_edges_of_kind(g, k));
    ts__json_obj_end(j);
}

static void print_json(ts_buf *b, const ts_job *t, const ts_critical_path *cp, uint32_t top)
{
    const ts_graph *g = ts_critical_path_graph(cp);
    ts_json j;
    ts__json_init(&j, b);
    ts__json_obj_begin(&j);
    ts__json_kv_i64(&j, "iteration", ts_critical_path_step(cp));
    ts__json_kv_us(&j, "length_us", ts_critical_path_length_ns(cp));
    ts__json_kv_us(&j, "iteration_us", ts_critical_path_window_ns(cp));
    ts__json_kv_u64(&j, "path_nodes", ts_critical_path_n_nodes(cp));
    ts__json_key(&j, "categories");
    ts__json_obj_begin(&j);
    for (int c = 0; c < TS_CP_COUNT; c++) {
        char key[48];
        snprintf(key, sizeof key, "%s_us", ts_cp_category_name((ts_cp_category)c));
        ts__json_kv_us(&j, key, ts_critical_path_category_ns(cp, (ts_cp_category)c));
    }
    ts__json_obj_end(&j);
    int64_t wait_ns;
    int32_t s = ts_critical_path_waited_for(cp, &wait_ns);
    ts_graph_rank gr;
    ts__json_key(&j, "waited_for_rank");
    if (s >= 0 && !ts_graph_rank_info(g, (uint32_t)s, &gr)) ts__json_i64(&j, gr.rank); else ts__json_null(&j);
    ts__json_key(&j, "wait_on_rank");
    ts__json_arr_begin(&j);
    for (uint32_t r = 0; r < ts_graph_n_ranks(g); r++) {
        int64_t w = ts_critical_path_wait_on_rank_ns(cp, r);
        if (!w || ts_graph_rank_info(g, r, &gr)) continue;
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", gr.rank);
        ts__json_kv_us(&j, "wait_us", w);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    json_ops(&j, cp, top);
    json_path(&j, cp);
    json_graph(&j, g);
    ts__report_warnings_json_open(&j, t);
    for (uint32_t i = 0; i < ts_graph_n_warnings(g); i++) ts__report_warning_json_line(&j, "graph", ts_graph_warning(g, i));
    for (uint32_t i = 0; i < ts_critical_path_n_warnings(cp); i++)
        ts__report_warning_json_line(&j, "critical_path", ts_critical_path_warning(cp, i));
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    ts__buf_add(b, "\n", 1);
}

static void pct_line(FILE *out, const char *label, int64_t ns, int64_t total)
{
    fprintf(out, "  %-22s %12.3f us  %5.1f%%\n", label, ns / 1e3, total > 0 ? 100.0 * (double)ns / (double)total : 0.0);
}

static void table_ops(FILE *out, const ts_critical_path *cp, uint32_t top)
{
    uint32_t n_ops = ts_critical_path_n_ops(cp);
    if (!n_ops || !top) return;
    fprintf(out, "\n  %-5s %-11s %6s %12s  %s\n", "rank", "kind", "count", "time us", "op (or gap) on the path");
    for (uint32_t i = 0; i < n_ops && i < top; i++) {
        const ts_cp_op *op = ts_critical_path_op(cp, i);
        /* keep 80 columns; long names differ at their end ("...function: AddmmBackward0") */
        size_t len_name = strlen(op->name);
        const char *tail = len_name > 38 ? op->name + len_name - 35 : op->name;
        while (((unsigned char)*tail & 0xC0) == 0x80) tail++;   /* never start inside a UTF-8 character */
        fprintf(out, "  %-5d %-11s %6u %12.3f  %s%s\n", op->rank, op->kind, op->count, op->total_ns / 1e3,
                tail != op->name ? "..." : "", tail);
    }
}

static int print_table(FILE *out, const ts_critical_path *cp, uint32_t top)
{
    const ts_graph *g = ts_critical_path_graph(cp);
    int64_t len = ts_critical_path_length_ns(cp), step = ts_critical_path_step(cp);
    if (step >= 0) fprintf(out, "critical path of iteration %lld: %.3f us\n", (long long)step, len / 1e3);
    else fprintf(out, "critical path of the whole trace: %.3f us\n", len / 1e3);
    fprintf(out, "  iteration span %.3f us, %u nodes on the path\n", ts_critical_path_window_ns(cp) / 1e3,
            ts_critical_path_n_nodes(cp));
    fprintf(out, "  %u ranks, %u graph nodes, %u edges, %u collectives matched\n\n", ts_graph_n_ranks(g),
            ts_graph_n_nodes(g), ts_graph_n_edges(g), ts_graph_n_collectives(g));
    for (int c = 0; c < TS_CP_COUNT; c++)
        pct_line(out, ts_cp_category_name((ts_cp_category)c), ts_critical_path_category_ns(cp, (ts_cp_category)c), len);
    int64_t wait_ns;
    int32_t s = ts_critical_path_waited_for(cp, &wait_ns);
    ts_graph_rank gr;
    if (s >= 0 && !ts_graph_rank_info(g, (uint32_t)s, &gr))
        fprintf(out, "\n  ranks waited %.3f us for rank %d on the path\n", wait_ns / 1e3, gr.rank);
    if (ts_graph_n_ranks(g) > 1) {
        fprintf(out, "\n  %-6s %16s %12s %14s\n", "rank", "clock offset us", "matched", "residual us");
        for (uint32_t r = 0; r < ts_graph_n_ranks(g); r++)
            if (!ts_graph_rank_info(g, r, &gr))
                fprintf(out, "  %-6d %16.3f %12u %14.3f\n", gr.rank, gr.offset_ns / 1e3, gr.n_matched,
                        gr.resid_max_ns / 1e3);
    }
    table_ops(out, cp, top);
    return ferror(out) ? TS_EIO : TS_OK;
}

/* ---- CSV tables (times in ns) ---- */
static void csv_categories(ts_csv *c, const void *res)
{
    const ts_critical_path *cp = res;
    TS__CSV_HEAD(c, "category", "time_ns");
    for (int k = 0; k < TS_CP_COUNT; k++) {
        ts_csv_str(c, ts_cp_category_name((ts_cp_category)k));
        ts_csv_i64(c, ts_critical_path_category_ns(cp, (ts_cp_category)k));
        ts_csv_end_row(c);
    }
}

static void csv_wait_on_rank(ts_csv *c, const void *res)
{
    const ts_critical_path *cp = res;
    const ts_graph *g = ts_critical_path_graph(cp);
    TS__CSV_HEAD(c, "rank", "wait_ns");
    for (uint32_t r = 0; r < ts_graph_n_ranks(g); r++) {
        ts_graph_rank gr;
        int64_t w = ts_critical_path_wait_on_rank_ns(cp, r);
        if (!w || ts_graph_rank_info(g, r, &gr)) continue;
        ts_csv_i64(c, gr.rank);
        ts_csv_i64(c, w);
        ts_csv_end_row(c);
    }
}

/* Every op row (not cut to --top): they sum to the path's length. */
static void csv_ops(ts_csv *c, const void *res)
{
    const ts_critical_path *cp = res;
    ts__fld f[TS__FLD_MAX];
    ts_cp_op none = {0};
    ts__fld_csv_head(c, f, op_fields(&none, f));
    for (uint32_t i = 0; i < ts_critical_path_n_ops(cp); i++) ts__fld_csv_row(c, f, op_fields(ts_critical_path_op(cp, i), f));
}

static void csv_path(ts_csv *c, const void *res)
{
    const ts_critical_path *cp = res;
    ts__fld f[TS__FLD_MAX];
    ts_cp_node none = {0};
    ts__fld_csv_head(c, f, node_fields(&none, f));
    for (uint32_t i = 0; i < ts_critical_path_n_nodes(cp); i++) {
        ts_cp_node n;
        if (ts_critical_path_node(cp, i, &n) || n.barrier) continue;
        ts__fld_csv_row(c, f, node_fields(&n, f));
    }
}

static void csv_ranks(ts_csv *c, const void *res)
{
    const ts_graph *g = ts_critical_path_graph(res);
    TS__CSV_HEAD(c, "rank", "file", "clock_offset_ns", "matched_collectives", "residual_median_ns", "residual_max_ns",
         "causality_violations");
    for (uint32_t r = 0; r < ts_graph_n_ranks(g); r++) {
        ts_graph_rank gr;
        if (ts_graph_rank_info(g, r, &gr)) continue;
        ts_csv_i64(c, gr.rank);
        ts_csv_str(c, gr.file);
        ts_csv_i64(c, gr.offset_ns);
        ts_csv_u64(c, gr.n_matched);
        ts_csv_i64(c, gr.resid_median_ns);
        ts_csv_i64(c, gr.resid_max_ns);
        ts_csv_u64(c, gr.n_violations);
        ts_csv_end_row(c);
    }
}

static void csv_edges(ts_csv *c, const void *res)
{
    const ts_graph *g = ts_critical_path_graph(res);
    TS__CSV_HEAD(c, "edge_kind", "edges");
    for (uint32_t k = 0; k < ts_graph_n_edge_kinds(); k++) {
        ts_csv_str(c, ts_graph_edge_kind_name(k));
        ts_csv_u64(c, ts_graph_n_edges_of_kind(g, k));
        ts_csv_end_row(c);
    }
}

static const ts_csv_table cp_tables[] = {
    {"categories", csv_categories}, {"wait_on_rank", csv_wait_on_rank}, {"ops", csv_ops},
    {"path", csv_path}, {"ranks", csv_ranks}, {"edges", csv_edges},
};

int ts_report_critical_path(const ts_critical_path *cp, const ts_job *t, const ts_report_opts *o, FILE *out,
                            ts_error *err)
{
    ts__error_clear(err);
    if (o->format == TS_FMT_CSV)
        return ts_report_csv("critical-path", cp_tables, sizeof cp_tables / sizeof cp_tables[0], cp, o->table, o->dir,
                             out, err);
    if (o->format == TS_FMT_TABLE)
        return print_table(out, cp, o->top) ? ts__error(err, TS_EIO, "writing the output failed") : TS_OK;
    ts_buf b;
    ts__buf_init(&b);
    print_json(&b, t, cp, o->top);
    int rc = ts__report_flush(&b, out, err);
    ts__buf_free(&b);
    return rc;
}

int ts_report_critical_path_chrome(const ts_critical_path *cp, const char *path, ts_error *err)
{
    return ts__chrome_export_critical_path(cp, path, err);
}
