/* html_breakdown.c - the HTML report's breakdown sections: per-rank temporal
 * breakdown (HTA's definitions, analyze/breakdown.c) as stacked columns and
 * a table whose numbers are those of `breakdown --format json` (same units,
 * same rounding: a test compares them), and the shares of kernel types (HTA's
 * kernel-type breakdown) and of op categories (stats by category).
 * Not for: computing any of it; it reads ts_breakdown and ts_stats.
 * Bound: one column per rank up to the plot width, then ranks share columns.
 */
#include "report/html.h"

#include <stdlib.h>
#include <string.h>

#define BAR_H 160   /* height of the stacked columns */

/* A rank's temporal figures are ts_breakdown_rank_temporal's (analyze.h), as
 * `breakdown` prints them: a CPU-only rank's are its busiest thread's. */

/* Parts of a column, bottom up. */
static const char *const part_class[4] = {"k-compute", "k-comm", "k-mem", "k-idle"};
static const char *const part_label[4] = {"compute", "communication", "memory", "idle"};

static void parts_of(const ts_breakdown_temporal *tp, double pct[4])
{
    pct[0] = ts__html_pct(tp->compute_ns, tp->span_ns);
    pct[1] = ts__html_pct(tp->comm_ns, tp->span_ns);
    pct[2] = ts__html_pct(tp->memory_ns, tp->span_ns);
    pct[3] = ts__html_pct(tp->idle_ns, tp->span_ns);
}

/* Column c holds ranks [first, first + n): their mean shares, one hover
 * title for the column's parts. */
static void column(ts_buf *b, const ts_breakdown *bd, uint32_t first, uint32_t n, double x, double w)
{
    double sum[4] = {0};
    for (uint32_t i = first; i < first + n; i++) {
        ts_breakdown_temporal tp = ts_breakdown_rank_temporal(&bd->ranks[i]);
        double p[4];
        parts_of(&tp, p);
        for (int k = 0; k < 4; k++) sum[k] += p[k] / n;
    }
    if (n == 1) ts__buf_printf(b, "<g><title>rank %d:", bd->ranks[first].rank);
    else ts__buf_printf(b, "<g><title>ranks %d to %d (mean):", bd->ranks[first].rank, bd->ranks[first + n - 1].rank);
    for (int k = 0; k < 4; k++) ts__buf_printf(b, "%s %s %.2f%%", k ? "," : "", part_label[k], sum[k]);
    ts__buf_puts(b, "</title>");
    double y = 20 + BAR_H;
    for (int k = 0; k < 4; k++) {
        double h = BAR_H * sum[k] / 100;
        if (h <= 0) continue;
        y -= h;
        ts__buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" class=\"%s\"/>", x, y, w, h,
                       part_class[k]);
    }
    ts__buf_puts(b, "</g>\n");
}

static void columns_svg(ts_buf *b, const ts_breakdown *bd)
{
    uint32_t n = bd->n_ranks;
    uint32_t per = (n + TS_HTML_PLOT_W - 1) / TS_HTML_PLOT_W;   /* ranks per column */
    uint32_t n_cols = (n + per - 1) / per;
    double cw = (double)TS_HTML_PLOT_W / n_cols;
    if (cw > 48) cw = 48;
    int w = TS_HTML_LABEL_W + TS_HTML_PLOT_W;
    ts__html_svg_open(b, "breakdown-bars", w, BAR_H + 60, "share of each rank's span: compute, communication, "
                      "memory, idle");
    ts__buf_printf(b, "<g class=\"axis\"><text x=\"%d\" y=\"24\">100%%</text><text x=\"%d\" y=\"%d\">0%%</text></g>",
                   TS_HTML_LABEL_W - 20, TS_HTML_LABEL_W - 20, 20 + BAR_H);
    for (uint32_t c = 0; c < n_cols; c++) {
        uint32_t first = c * per, k = n - first < per ? n - first : per;
        double x = TS_HTML_LABEL_W + c * cw;
        column(b, bd, first, k, x + (cw > 3 ? 0.5 : 0), cw > 3 ? cw - 1 : cw);
        if (cw >= 24)
            ts__buf_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>", x + cw / 2, BAR_H + 34,
                           bd->ranks[first].rank);
    }
    ts__html_legend(b, TS_HTML_LABEL_W, BAR_H + 42, part_class, part_label, 4);
    ts__buf_puts(b, "</svg>\n");
}

static void us_cell(ts_buf *b, const char *key, int64_t ns)
{
    ts__buf_printf(b, "<td class=\"num\" data-k=\"%s\">", key);
    ts__html_us(b, ns);
    ts__buf_puts(b, "</td>");
}

static void pct_cell(ts_buf *b, const char *key, double v)
{
    ts__buf_printf(b, "<td class=\"num\" data-k=\"%s\">%.2f</td>", key, v);
}

static void table_row(ts_buf *b, const ts_breakdown_rank *r)
{
    ts_breakdown_temporal tp = ts_breakdown_rank_temporal(r);
    ts__buf_printf(b, "<tr data-rank=\"%d\"><td class=\"num\" data-k=\"rank\">%d</td><td data-k=\"basis\">%s</td>",
                   r->rank, r->rank, r->has_gpu ? "gpu" : "cpu_thread");
    us_cell(b, "span_us", tp.span_ns);
    us_cell(b, "idle_us", tp.idle_ns);
    us_cell(b, "compute_us", tp.compute_ns);
    us_cell(b, "non_compute_us", tp.non_compute_ns);
    us_cell(b, "communication_us", tp.comm_ns);
    us_cell(b, "memory_us", tp.memory_ns);
    pct_cell(b, "idle_pct", ts__html_pct(tp.idle_ns, tp.span_ns));
    pct_cell(b, "compute_pct", ts__html_pct(tp.compute_ns, tp.span_ns));
    pct_cell(b, "non_compute_pct", ts__html_pct(tp.non_compute_ns, tp.span_ns));
    if (r->comm_comp_overlap_pct >= 0) pct_cell(b, "comm_comp_overlap_pct", r->comm_comp_overlap_pct);
    else ts__buf_puts(b, "<td class=\"num\" data-k=\"comm_comp_overlap_pct\">-</td>");
    ts__buf_puts(b, "</tr>\n");
}

/* Over many ranks: each figure's lowest, median and highest rank, so the
 * outliers show without scrolling the full table. */
static int64_t fig_of(const ts_breakdown_rank *r, int k)
{
    ts_breakdown_temporal tp = ts_breakdown_rank_temporal(r);
    const int64_t v[6] = {tp.span_ns, tp.idle_ns, tp.compute_ns, tp.non_compute_ns, tp.comm_ns, tp.memory_ns};
    return v[k];
}

typedef struct rank_val { int64_t v; int32_t rank; } rank_val;
static int by_val(const void *a, const void *b)
{
    const rank_val *x = a, *y = b;
    return x->v != y->v ? (x->v > y->v) - (x->v < y->v) : (x->rank > y->rank) - (x->rank < y->rank);
}

static int spread_table(ts_buf *b, const ts_breakdown *bd, ts_error *err)
{
    static const char *const names[6] = {"span", "idle", "compute", "non-compute", "communication", "memory"};
    rank_val *v = ts__malloc(bd->n_ranks * sizeof *v);
    if (!v) return ts__error(err, TS_ENOMEM, "out of memory");
    static const char *const h[] = {"figure (us)", "#lowest", "#rank", "#median", "#highest", "#rank"};
    ts__buf_printf(b, "<h3>Spread over the %u ranks</h3>\n", bd->n_ranks);
    ts__html_table_open(b, "breakdown-spread", h, 6);
    for (int k = 0; k < 6; k++) {
        for (uint32_t i = 0; i < bd->n_ranks; i++) v[i] = (rank_val){fig_of(&bd->ranks[i], k), bd->ranks[i].rank};
        qsort(v, bd->n_ranks, sizeof *v, by_val);
        const rank_val *lo = &v[0], *mid = &v[bd->n_ranks / 2], *hi = &v[bd->n_ranks - 1];
        ts__buf_printf(b, "<tr><td>%s</td><td class=\"num\">", names[k]);
        ts__html_us(b, lo->v);
        ts__buf_printf(b, "</td><td class=\"num\">%d</td><td class=\"num\">", lo->rank);
        ts__html_us(b, mid->v);
        ts__buf_puts(b, "</td><td class=\"num\">");
        ts__html_us(b, hi->v);
        ts__buf_printf(b, "</td><td class=\"num\">%d</td></tr>\n", hi->rank);
    }
    ts__buf_puts(b, "</tbody></table>\n");
    ts__free(v, bd->n_ranks * sizeof *v);
    return TS_OK;
}

int ts__html_breakdown(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err)
{
    const ts_breakdown *bd = in->breakdown;
    if (!bd || !bd->n_ranks) return TS_ENODATA;
    ts__buf_puts(out, "<p class=\"note\">Holistic Trace Analysis' temporal breakdown over each rank's GPU span "
                      "(CPU-only ranks: their busiest thread); non-compute = communication not hidden by compute "
                      "+ memory hidden by neither. Times in microseconds.</p>\n");
    columns_svg(out, bd);
    bool many = bd->n_ranks > TS_HTML_MANY_RANKS;
    if (many) {
        int rc = spread_table(out, bd, err);
        if (rc) return rc;
        ts__buf_printf(out, "<details><summary>every rank (%u rows)</summary>\n", bd->n_ranks);
    }
    static const char *const h[] = {"#rank", "basis", "#span", "#idle", "#compute", "#non-compute",
                                    "#communication", "#memory", "#idle %", "#compute %", "#non-compute %",
                                    "#comm/comp overlap %"};
    ts__html_table_open(out, "breakdown-table", h, 12);
    for (uint32_t i = 0; i < bd->n_ranks; i++) table_row(out, &bd->ranks[i]);
    ts__buf_puts(out, many ? "</tbody></table></details>\n" : "</tbody></table>\n");
    return TS_OK;
}

/* ---- shares ---- */

/* One 100% bar of n parts. */
static void share_bar(ts_buf *b, const char *id, const char *title, const char *const *classes,
                      const char *const *labels, const int64_t *ns, int n)
{
    int64_t all = 0;
    for (int i = 0; i < n; i++) all += ns[i];
    ts__html_svg_open(b, id, TS_HTML_LABEL_W + TS_HTML_PLOT_W, 56, title);
    double x = TS_HTML_LABEL_W;
    for (int i = 0; i < n && all > 0; i++) {
        double w = TS_HTML_PLOT_W * (double)ns[i] / (double)all;
        if (w <= 0) continue;
        ts__buf_printf(b, "<rect x=\"%.2f\" y=\"4\" width=\"%.2f\" height=\"24\" class=\"%s\"><title>", x, w, classes[i]);
        ts__html_text(b, labels[i]);
        ts__buf_printf(b, ": %.2f%%</title></rect>", ts__html_pct(ns[i], all));
        x += w;
    }
    const char *cls[8], *lab[8];   /* the legend names only the parts drawn */
    int k = 0;
    for (int i = 0; i < n && k < 8; i++)
        if (ns[i] > 0) { cls[k] = classes[i]; lab[k++] = labels[i]; }
    ts__html_legend(b, TS_HTML_LABEL_W, 38, cls, lab, k);
    ts__buf_puts(b, "</svg>\n");
}

/* HTA's kernel-type breakdown summed over ranks: the time spent in each
 * combination of running types (the rank -1 rows of breakdown's JSON), and
 * each type's plain total. */
static void kernel_types(ts_buf *b, const ts_breakdown *bd)
{
    int64_t combo[8], type[TS_KT_COUNT] = {0}, all = 0;
    ts_breakdown_type_totals(bd, combo);
    for (uint32_t i = 0; i < bd->n_ranks; i++)
        for (int k = 0; k < TS_KT_COUNT; k++) type[k] += bd->ranks[i].type_total_ns[k];
    for (int m = 1; m < 8; m++) all += combo[m];
    if (!all) { ts__buf_puts(b, "<p class=\"note\">No GPU kernels.</p>\n"); return; }
    static const char *const cls[TS_KT_COUNT] = {"k-compute", "k-comm", "k-mem"};
    const char *labels[TS_KT_COUNT];
    for (int k = 0; k < TS_KT_COUNT; k++) labels[k] = ts_kernel_type_name((ts_kernel_type)k);
    ts__buf_puts(b, "<h3>Kernel types (sum of kernel durations, all ranks)</h3>\n");
    share_bar(b, "kernel-type-bar", "kernel time per type", cls, labels, type, TS_KT_COUNT);
    static const char *const h[] = {"kernel type", "#time (us)", "#%"};
    ts__buf_puts(b, "<h3>Time in each combination of running kernel types (HTA)</h3>\n");
    ts__html_table_open(b, "kernel-types-table", h, 3);
    for (int m = 1; m < 8; m++) {
        if (!combo[m]) continue;
        ts__buf_printf(b, "<tr><td data-k=\"kernel_type\">%s</td><td class=\"num\" data-k=\"time_us\">", ts_kernel_type_combo_name((unsigned)m));
        ts__html_us(b, combo[m]);
        ts__buf_printf(b, "</td><td class=\"num\" data-k=\"pct\">%.2f</td></tr>\n", ts__html_pct(combo[m], all));
    }
    ts__buf_puts(b, "</tbody></table>\n");
}

static void op_categories(ts_buf *b, const ts_stats *st)
{
    static const char *const cls[TS_STAT_CAT_COUNT] = {"k-cpu", "k-compute", "k-mem", "k-other", "k-rt", "k-comm"};
    const char *labels[TS_STAT_CAT_COUNT];
    int64_t ns[TS_STAT_CAT_COUNT] = {0}, all = 0;
    uint64_t count[TS_STAT_CAT_COUNT] = {0};
    for (int c = 0; c < TS_STAT_CAT_COUNT; c++) labels[c] = ts_stat_cat_name((ts_stat_cat)c);
    for (uint32_t i = 0; i < st->n_rows; i++) {
        ns[st->rows[i].cat] += st->rows[i].total_ns;
        count[st->rows[i].cat] += st->rows[i].count;
    }
    for (int c = 0; c < TS_STAT_CAT_COUNT; c++) all += ns[c];
    ts__buf_puts(b, "<h3>Op categories (summed durations, all ranks)</h3>\n");
    if (!all) { ts__buf_puts(b, "<p class=\"note\">No ops in the window.</p>\n"); return; }
    share_bar(b, "op-category-bar", "summed time per op category", cls, labels, ns, TS_STAT_CAT_COUNT);
    static const char *const h[] = {"category", "#count", "#total (us)", "#% of all categories"};
    ts__html_table_open(b, "op-categories-table", h, 4);
    for (int c = 0; c < TS_STAT_CAT_COUNT; c++) {
        if (!count[c]) continue;
        ts__buf_printf(b, "<tr><td>%s</td><td class=\"num\">%llu</td><td class=\"num\">", labels[c],
                       (unsigned long long)count[c]);
        ts__html_us(b, ns[c]);
        ts__buf_printf(b, "</td><td class=\"num\">%.2f</td></tr>\n", ts__html_pct(ns[c], all));
    }
    ts__buf_puts(b, "</tbody></table>\n");
}

int ts__html_shares(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err)
{
    if (!in->breakdown && !in->stats_by_category) return TS_ENODATA;
    if (in->breakdown) kernel_types(out, in->breakdown);
    if (in->stats_by_category) op_categories(out, in->stats_by_category);
    return TS_OK;
}
