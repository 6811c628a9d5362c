/* html_stragglers.c - the HTML report's stragglers section (jobs of several
 * ranks): at the collectives matched across ranks, on aligned clocks, who
 * arrived last, how long the others waited for them, and who waited for
 * whom (ts_stragglers_compute, the figures `breakdown` prints).
 * Not for: computing lateness (analyze/stragglers.c).
 * Bound: a rank per row (folded behind <details> past TS_HTML_MANY_RANKS),
 * the PAIRS largest waiter/straggler pairs.
 */
#include "report/html.h"

#define PAIRS 10

static void us_td(ts_buf *b, const char *key, int64_t ns)
{
    ts__buf_printf(b, "<td class=\"num\" data-k=\"%s\">", key);
    ts__html_us(b, ns);
    ts__buf_puts(b, "</td>");
}

static void rank_table(ts_buf *b, const ts_stragglers *st)
{
    static const char *const h[] = {"#rank", "#collectives", "#arrived last", "#late (us)", "#most late (us)",
                                    "#waited (us)", "#others waited for it (us)"};
    bool many = st->n_ranks > TS_HTML_MANY_RANKS;
    if (many) ts__buf_printf(b, "<details><summary>every rank (%u rows)</summary>\n", st->n_ranks);
    ts__html_table_open(b, "stragglers-table", h, 7);
    for (uint32_t i = 0; i < st->n_ranks; i++) {
        const ts_straggler_rank *r = &st->ranks[i];
        ts__buf_printf(b, "<tr><td class=\"num\" data-k=\"rank\">%d</td><td class=\"num\" data-k=\"collectives\">%u"
                          "</td><td class=\"num\" data-k=\"last\">%u</td>", r->rank, r->n_colls, r->n_last);
        us_td(b, "late_us", r->late_ns);
        us_td(b, "max_late_us", r->max_late_ns);
        us_td(b, "waited_us", r->waited_ns);
        us_td(b, "caused_us", r->caused_ns);
        ts__buf_puts(b, "</tr>\n");
    }
    ts__buf_puts(b, many ? "</tbody></table></details>\n" : "</tbody></table>\n");
}

static void pair_table(ts_buf *b, const ts_stragglers *st)
{
    if (!st->n_pairs) return;
    static const char *const h[] = {"#waiter", "#waited for", "#collectives", "#wait (us)"};
    ts__buf_puts(b, "<h3>Who waited for whom (largest waits)</h3>\n");
    ts__html_table_open(b, "straggler-pairs", h, 4);
    for (uint32_t i = 0; i < st->n_pairs && i < PAIRS; i++) {
        const ts_straggler_pair *p = &st->pairs[i];
        ts__buf_printf(b, "<tr><td class=\"num\">%d</td><td class=\"num\">%d</td><td class=\"num\">%u</td>", p->waiter,
                       p->straggler, p->n);
        us_td(b, "wait_us", p->wait_ns);
        ts__buf_puts(b, "</tr>\n");
    }
    ts__buf_puts(b, "</tbody></table>\n");
    if (st->n_pairs > PAIRS) ts__buf_printf(b, "<p class=\"note\">%u more pairs.</p>\n", st->n_pairs - PAIRS);
}

int ts__html_stragglers(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err)
{
    if (!in->graph || ts_graph_n_collectives(in->graph) == 0) return TS_ENODATA;
    ts_stragglers *st = NULL;
    int rc = ts_stragglers_compute(in->graph, &st, err);
    if (rc == TS_OK && st->n_colls == 0) rc = TS_ENODATA;   /* no collective of 2+ ranks */
    if (rc == TS_OK) {
        const ts_straggler_rank *worst = NULL;
        for (uint32_t i = 0; i < st->n_ranks; i++)
            if (!worst || st->ranks[i].caused_ns > worst->caused_ns) worst = &st->ranks[i];
        ts__buf_printf(out, "<p>At %u collectives matched across ranks, the ranks waited ", st->n_colls);
        ts__html_dur(out, st->total_wait_ns);
        ts__buf_puts(out, " in all for the last to arrive");
        if (worst && worst->caused_ns > 0) {
            ts__buf_printf(out, "; rank %d arrived last %u times and made the others wait ", worst->rank,
                           worst->n_last);
            ts__html_dur(out, worst->caused_ns);
        }
        ts__buf_puts(out, " (aligned clocks; lateness = arrival - first arrival).</p>\n");
        rank_table(out, st);
        pair_table(out, st);
    }
    ts_stragglers_destroy(st);
    return rc;
}
