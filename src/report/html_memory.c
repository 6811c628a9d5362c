/* html_memory.c - the HTML report's memory section: "Total Allocated" over
 * time for each (rank, device) whose trace has Kineto [memory] events
 * (ts_mem_trace_peaks / ts_mem_trace_curve), with the peak marked and the
 * ops that enclosed it.
 * Not for: torch.fx liveness or allocator snapshots (`memory`, views).
 * Bound: a curve keeps the lowest and highest value of each pixel column, so
 * it has at most 2 x plot-width points whatever the number of events; at most
 * MAX_CURVES devices are drawn, all are listed in the table.
 */
#include "report/html.h"

#include <string.h>

#include "trainscope/memory.h"

#define MAX_ROWS   64
#define MAX_CURVES 4
#define CURVE_H    140

static const char *device_name(int32_t type) { return type == 0 ? "CPU" : type == 1 ? "CUDA" : "device"; }

/* Per pixel column: the min and max of the points in it, in time order. */
static void curve_path(ts_buf *b, const ts_mem_curve *c, int64_t t0, int64_t t1, int64_t top)
{
    double span = t1 > t0 ? (double)(t1 - t0) : 1, y0 = 20 + CURVE_H;
    int col = -1;
    int64_t lo = 0, hi = 0;
    bool first = true;
    for (size_t i = 0; i <= c->n; i++) {
        int x = i < c->n ? (int)((double)((c->t_ns[i] < t0 ? t0 : c->t_ns[i]) - t0) / span * TS_HTML_PLOT_W) : -2;
        if (x != col && col >= 0) {
            double xl = TS_HTML_LABEL_W + col;
            ts__buf_printf(b, "%c%.0f %.1fV%.1f", first ? 'M' : 'L', xl, y0 - CURVE_H * (double)lo / (double)top,
                           y0 - CURVE_H * (double)hi / (double)top);
            first = false;
        }
        if (i == c->n) break;
        if (x != col) { col = x; lo = hi = c->bytes[i]; }
        if (c->bytes[i] < lo) lo = c->bytes[i];
        if (c->bytes[i] > hi) hi = c->bytes[i];
    }
}

static int one_curve(ts_buf *b, const ts_job *t, const ts_mem_trace_peak *p, uint32_t k, ts_error *err)
{
    ts_mem_curve c;
    int rc = ts_mem_trace_curve(t, p, &c, err);
    if (rc) return rc;
    int64_t top = p->peak_bytes > 0 ? p->peak_bytes : 1;
    char id[32], title[128];
    snprintf(id, sizeof id, "memory-curve-%u", k);
    snprintf(title, sizeof title, "rank %u %s %d: total allocated over time", p->rank, device_name(p->device_type),
             p->device_id);
    ts__html_svg_open(b, id, TS_HTML_LABEL_W + TS_HTML_PLOT_W, CURVE_H + 48, title);
    ts__buf_printf(b, "<text x=\"4\" y=\"30\">rank %u %s %d</text><text x=\"4\" y=\"46\">peak ", p->rank,
                   device_name(p->device_type), p->device_id);
    ts__html_bytes(b, p->peak_bytes);
    ts__buf_puts(b, "</text><path class=\"curve\" d=\"");
    curve_path(b, &c, p->first_ns, p->last_ns, top);
    double span = p->last_ns > p->first_ns ? (double)(p->last_ns - p->first_ns) : 1;
    double px = TS_HTML_LABEL_W + TS_HTML_PLOT_W * (double)(p->peak_ns - p->first_ns) / span;
    ts__buf_printf(b, "\"/><path class=\"peak\" d=\"M%.1f 20V%d\"><title>peak at +", px, 20 + CURVE_H);
    ts__html_dur(b, p->peak_ns - p->first_ns);
    ts__buf_puts(b, "</title></path>");
    ts__html_time_axis(b, TS_HTML_LABEL_W, TS_HTML_PLOT_W, 20 + CURVE_H, p->last_ns - p->first_ns);
    ts__buf_puts(b, "</svg>\n");
    ts_mem_curve_free(&c);
    return TS_OK;
}

static void peak_table(ts_buf *b, const ts_mem_trace_peak *rows, uint32_t n)
{
    static const char *const h[] = {"#rank", "device", "#events", "#peak (bytes)", "peak", "at (from first event)",
                                    "ops around the peak (innermost first)"};
    ts__html_table_open(b, "memory-peaks", h, 7);
    for (uint32_t i = 0; i < n; i++) {
        const ts_mem_trace_peak *p = &rows[i];
        ts__buf_printf(b, "<tr><td class=\"num\">%u</td><td>%s %d</td><td class=\"num\">%llu</td>"
                          "<td class=\"num\">%lld</td><td>", p->rank, device_name(p->device_type), p->device_id,
                       (unsigned long long)p->n_events, (long long)p->peak_bytes);
        ts__html_bytes(b, p->peak_bytes);
        ts__buf_puts(b, "</td><td>");
        ts__html_dur(b, p->peak_ns - p->first_ns);
        ts__buf_puts(b, "</td><td>");
        for (uint32_t k = 0; k < p->n_ops; k++) {
            if (k) ts__buf_puts(b, " &lt; ");
            ts__html_text(b, p->ops[k]);
        }
        ts__buf_puts(b, "</td></tr>\n");
    }
    ts__buf_puts(b, "</tbody></table>\n");
}

int ts__html_memory(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, ts_error *err)
{
    ts_mem_trace_peak *rows = ts__malloc(MAX_ROWS * sizeof *rows);
    if (!rows) return ts__error(err, TS_ENOMEM, "out of memory");
    uint32_t n = 0;
    int rc = ts_mem_trace_peaks(in->trace, rows, MAX_ROWS, &n, err);   /* TS_ENODATA: no section */
    uint32_t shown = n < MAX_ROWS ? n : MAX_ROWS;
    if (rc == TS_OK)
        ts__buf_puts(out, "<p class=\"note\">PyTorch profiler [memory] events (profile_memory=True): bytes "
                          "allocated by the caching allocator after each event.</p>\n");
    for (uint32_t i = 0; i < shown && i < MAX_CURVES && rc == TS_OK; i++)
        if ((rc = one_curve(out, in->trace, &rows[i], i, err)) == TS_ENODATA) rc = TS_EFORMAT;   /* counted, not found */
    if (rc == TS_OK) {
        if (shown > MAX_CURVES)
            ts__buf_printf(out, "<p class=\"note\">Curves of %u more devices are not drawn.</p>\n", shown - MAX_CURVES);
        peak_table(out, rows, shown);
        if (n > shown) ts__buf_printf(out, "<p class=\"note\">%u more devices not listed.</p>\n", n - shown);
    }
    ts__free(rows, MAX_ROWS * sizeof *rows);
    return rc;
}
