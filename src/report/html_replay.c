/* html_replay.c - the HTML report's replay and top-ops sections: measured
 * against replayed iteration times (per iteration as paired bars, per rank
 * as a table), and the ops that took the most time, per category, summed
 * over ranks (stats by name).
 * Not for: running the replay or the statistics; it reads their results.
 * Bound: bars per iteration up to the plot width (then iterations share a
 * bar pair); top-ops tables are cut at opts->top_ops rows.
 */
#include "report/html.h"

#include <stdlib.h>
#include <string.h>

#define REPLAY_H 150

static void iteration_bars(ts_buf *b, const ts_replay *r)
{
    uint32_t n = ts_replay_n_iterations(r);
    if (!n) return;
    uint32_t per = (2 * n + TS_HTML_PLOT_W / 2 - 1) / (TS_HTML_PLOT_W / 2);   /* iterations per bar pair */
    uint32_t n_pairs = (n + per - 1) / per;
    int64_t top = 1;
    for (uint32_t k = 0; k < n; k++) {
        ts_replay_iteration_info it;
        ts_replay_iteration(r, k, &it);
        if (it.measured_iteration_ns > top) top = it.measured_iteration_ns;
        if (it.predicted_iteration_ns > top) top = it.predicted_iteration_ns;
    }
    double pw = (double)TS_HTML_PLOT_W / n_pairs;
    if (pw > 60) pw = 60;
    ts__html_svg_open(b, "replay-bars", TS_HTML_LABEL_W + TS_HTML_PLOT_W, REPLAY_H + 60,
                      "iteration time per iteration: measured and replayed");
    ts__buf_puts(b, "<g class=\"axis\"><text x=\"150\" y=\"24\">");
    ts__html_dur(b, top);
    ts__buf_printf(b, "</text><text x=\"150\" y=\"%d\">0</text></g>", 20 + REPLAY_H);
    for (uint32_t p = 0; p < n_pairs; p++) {
        ts_replay_iteration_info it;
        int64_t meas = 0, pred = 0, step0 = 0;
        uint32_t k0 = p * per, k1 = k0 + per < n ? k0 + per : n;
        for (uint32_t k = k0; k < k1; k++) {
            ts_replay_iteration(r, k, &it);
            if (k == k0) step0 = it.step;
            meas += it.measured_iteration_ns / (k1 - k0);
            pred += it.predicted_iteration_ns / (k1 - k0);
        }
        double x = TS_HTML_LABEL_W + p * pw, w = pw / 2 > 1.5 ? pw / 2 - 0.5 : pw / 2;
        int64_t v[2] = {meas, pred};
        for (int s = 0; s < 2; s++) {
            double h = REPLAY_H * (double)v[s] / (double)top;
            ts__buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" class=\"%s\"><title>"
                              "step %lld%s: %s ", x + s * pw / 2, 20 + REPLAY_H - h, w, h, s ? "k-pred" : "k-meas",
                           (long long)step0, k1 - k0 > 1 ? " and after (mean)" : "", s ? "replayed" : "measured");
            ts__html_dur(b, v[s]);
            ts__buf_puts(b, "</title></rect>");
        }
    }
    static const char *const cls[2] = {"k-meas", "k-pred"};
    static const char *const lab[2] = {"measured", "replayed"};
    ts__html_legend(b, TS_HTML_LABEL_W, REPLAY_H + 40, cls, lab, 2);
    ts__buf_puts(b, "</svg>\n");
}

static void us_td(ts_buf *b, int64_t ns)
{
    ts__buf_puts(b, "<td class=\"num\">");
    ts__html_us(b, ns);
    ts__buf_puts(b, "</td>");
}

static double err_pct(int64_t pred, int64_t meas)
{
    return meas > 0 ? 100.0 * (double)(pred - meas) / (double)meas : 0;
}

static void rank_table(ts_buf *b, const ts_replay *r)
{
    static const char *const h[] = {"#rank", "#measured (us)", "#replayed (us)", "#error %", "#clock offset (us)"};
    uint32_t n = ts_replay_n_ranks(r);
    ts__buf_puts(b, "<h3>Per rank (medians over the compared iterations)</h3>\n");
    if (n > TS_HTML_MANY_RANKS) ts__buf_printf(b, "<details><summary>every rank (%u rows)</summary>\n", n);
    ts__html_table_open(b, "replay-ranks", h, 5);
    for (uint32_t i = 0; i < n; i++) {
        ts_replay_rank_info ri;
        ts_replay_rank(r, i, &ri);
        ts__buf_printf(b, "<tr><td class=\"num\">%d</td>", ri.rank);
        us_td(b, ri.measured_iteration_ns);
        us_td(b, ri.predicted_iteration_ns);
        ts__buf_printf(b, "<td class=\"num\">%.2f</td>", err_pct(ri.predicted_iteration_ns, ri.measured_iteration_ns));
        us_td(b, ri.clock_offset_ns);
        ts__buf_puts(b, "</tr>\n");
    }
    ts__buf_puts(b, n > TS_HTML_MANY_RANKS ? "</tbody></table></details>\n" : "</tbody></table>\n");
}

int ts__html_replay(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err)
{
    const ts_replay *r = in->replay;
    if (!r) return TS_ENODATA;
    ts__buf_puts(out, "<p>The job's dependency graph replayed as recorded: iteration time ");
    ts__html_dur(out, ts_replay_predicted_iteration_ns(r));
    ts__buf_puts(out, " replayed against ");
    ts__html_dur(out, ts_replay_measured_iteration_ns(r));
    ts__buf_printf(out, " measured (<span id=\"replay-error\">%+.2f</span>%%; the median of the slowest rank's "
                        "iterations, %u compared). A large error means the graph misses a dependency.</p>\n",
                   ts_replay_error_pct(r), ts_replay_n_iterations(r));
    iteration_bars(out, r);
    rank_table(out, r);
    return TS_OK;
}

/* ---- top ops ---- */

/* One (category, name) summed over ranks. */
typedef struct op_agg {
    const char *name;     /* borrowed from the first rank that has it */
    uint8_t     cat;
    uint32_t    n_ranks;
    uint64_t    count;
    int64_t     total_ns, max_ns;
    double      pct_sum;  /* sum over ranks of pct_of_window */
} op_agg;

static uint64_t name_hash(const char *s, unsigned cat)
{
    uint64_t h = 1469598103934665603ull ^ cat;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The row of (cat, name) in aggs, added when new; TS_NONE32 on OOM. Keys
 * are hashes: a collision moves on to the next key. */
static uint32_t agg_find(ts_map64 *m, op_agg **aggs, uint32_t *n, uint32_t *cap, const ts_stat_row *row)
{
    uint64_t key = name_hash(row->name ? row->name : "", row->cat), v;
    for (;; key++) {
        if (key == UINT64_MAX) key = 0;   /* the map's empty marker */
        if (!ts__map64_get(m, key, &v)) break;
        op_agg *a = &(*aggs)[v];
        if (a->cat == row->cat && !strcmp(a->name, row->name ? row->name : "")) return (uint32_t)v;
    }
    if (ts__grow((void **)aggs, cap, sizeof **aggs, *n + 1) || ts__map64_put(m, key, *n)) return TS_NONE32;
    (*aggs)[*n] = (op_agg){.name = row->name ? row->name : "", .cat = (uint8_t)row->cat};
    return (*n)++;
}

static int by_total_desc(const void *a, const void *b)
{
    const op_agg *x = a, *y = b;
    if (x->cat != y->cat) return x->cat < y->cat ? -1 : 1;
    return x->total_ns > y->total_ns ? -1 : x->total_ns < y->total_ns ? 1 : strcmp(x->name, y->name);
}

static void op_table(ts_buf *b, const op_agg *a, uint32_t n, uint32_t top, unsigned cat)
{
    static const char *const h[] = {"name", "#ranks", "#count", "#total (us)", "#mean (us)", "#max (us)",
                                    "#% of window (mean over ranks)"};
    ts__buf_printf(b, "<h3>%s</h3>\n", ts_stat_cat_name((ts_stat_cat)cat));
    char id[48];
    snprintf(id, sizeof id, "top-%s", ts_stat_cat_name((ts_stat_cat)cat));
    ts__html_table_open(b, id, h, 7);
    for (uint32_t i = 0; i < n && i < top; i++) {
        ts__buf_puts(b, "<tr><td class=\"name\" title=\"");   /* long names cut by the style sheet, whole on hover */
        ts__html_text(b, a[i].name);
        ts__buf_puts(b, "\">");
        ts__html_text(b, a[i].name);
        ts__buf_printf(b, "</td><td class=\"num\">%u</td><td class=\"num\">%llu</td>", a[i].n_ranks,
                       (unsigned long long)a[i].count);
        us_td(b, a[i].total_ns);
        us_td(b, a[i].count ? (int64_t)(a[i].total_ns / (int64_t)a[i].count) : 0);
        us_td(b, a[i].max_ns);
        ts__buf_printf(b, "<td class=\"num\">%.2f</td></tr>\n", a[i].n_ranks ? a[i].pct_sum / a[i].n_ranks : 0);
    }
    ts__buf_puts(b, "</tbody></table>\n");
    if (n > top) ts__buf_printf(b, "<p class=\"note\">%u more names.</p>\n", n - top);
}

int ts__html_top_ops(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err)
{
    const ts_stats *st = in->stats_by_name;
    if (!st || !st->n_rows) return TS_ENODATA;
    ts_map64 m;
    ts__map64_init(&m);
    op_agg *aggs = NULL;
    uint32_t n = 0, cap = 0;
    int rc = TS_OK;
    for (uint32_t i = 0; i < st->n_rows && rc == TS_OK; i++) {
        const ts_stat_row *row = &st->rows[i];
        uint32_t k = agg_find(&m, &aggs, &n, &cap, row);
        if (k == TS_NONE32) { rc = ts__error(err, TS_ENOMEM, "out of memory"); break; }
        op_agg *a = &aggs[k];
        a->n_ranks++;
        a->count += row->count;
        a->total_ns += row->total_ns;
        if (row->max_ns > a->max_ns) a->max_ns = row->max_ns;
        a->pct_sum += row->pct_of_window;
    }
    if (rc == TS_OK) {
        qsort(aggs, n, sizeof *aggs, by_total_desc);
        ts__buf_puts(out, "<p class=\"note\">Per category, the names with the most time summed over ranks, "
                          "in the analysis window. Click a column to sort.</p>\n");
        for (uint32_t i = 0; i < n;) {
            uint32_t j = i;
            while (j < n && aggs[j].cat == aggs[i].cat) j++;
            op_table(out, aggs + i, j - i, o->top_ops, aggs[i].cat);
            i = j;
        }
    }
    ts__free(aggs, cap * sizeof *aggs);
    ts__map64_free(&m);
    return rc;
}
