/* html.c - `trainscope report`: one self-contained HTML file from a job's
 * analyses (include/trainscope/html.h). This file owns the page (head, style
 * sheet, the sorting script, table of contents), wraps each section of
 * ts__html_sections[] (html_sections.c) and writes the file whole or not at
 * all; the sections draw themselves (html_*.c), with the helpers below.
 * Not for: computing anything an analysis computes; a section reads results.
 * Invariant: nothing in the page refers to a URL (no network, no CDN): the
 * style sheet and script are inline and charts are inline SVG.
 */
#include "report/html.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "trace/model.h"
#include "trainscope/report.h"

/* ---- shared helpers ---- */

void ts__html_text(ts_buf *b, const char *s)
{
    if (!s) return;
    const char *run = s;
    for (; *s; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default: continue;
        }
        ts__buf_add(b, run, (size_t)(s - run));
        ts__buf_puts(b, rep);
        run = s + 1;
    }
    ts__buf_add(b, run, (size_t)(s - run));
}

void ts__html_dur(ts_buf *b, int64_t ns)
{
    char d[32];
    ts__buf_puts(b, ts_report_duration((double)ns, d, sizeof d));
}

void ts__html_bytes(ts_buf *b, int64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (fabs(v) >= 1024 && u < 4) { v /= 1024; u++; }
    if (u == 0) ts__buf_printf(b, "%lld B", (long long)bytes);
    else ts__buf_printf(b, "%.*f %s", fabs(v) < 10 ? 2 : fabs(v) < 100 ? 1 : 0, v, units[u]);
}

void ts__html_us(ts_buf *b, int64_t ns)
{
    /* As ts__json_us: integer arithmetic, so no rounding differs. */
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    ts__buf_printf(b, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
                   (unsigned long long)(a % 1000));
}

double ts__html_pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

void ts__html_table_open(ts_buf *b, const char *id, const char *const *headers, int n)
{
    ts__buf_puts(b, "<table class=\"sortable\"");
    if (id) ts__buf_printf(b, " id=\"%s\"", id);
    ts__buf_puts(b, "><thead><tr>");
    for (int i = 0; i < n; i++) {
        bool num = headers[i][0] == '#';
        ts__buf_puts(b, num ? "<th class=\"num\">" : "<th>");
        ts__html_text(b, headers[i] + num);
        ts__buf_puts(b, "</th>");
    }
    ts__buf_puts(b, "</tr></thead><tbody>\n");
}

void ts__html_svg_open(ts_buf *b, const char *id, int w, int h, const char *title)
{
    ts__buf_printf(b, "<svg id=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\"><title>", id, w,
                   h, w, h);
    ts__html_text(b, title);
    ts__buf_puts(b, "</title>\n");
}

/* The largest 1, 2 or 5 x 10^k not above span / 6: about six ticks. */
static int64_t tick_step(int64_t span_ns)
{
    int64_t step = 1;
    while (step * 10 <= span_ns / 6) step *= 10;
    if (step * 5 <= span_ns / 6) step *= 5;
    else if (step * 2 <= span_ns / 6) step *= 2;
    return step;
}

void ts__html_time_axis(ts_buf *b, double x0, double w, double y, int64_t span_ns)
{
    if (span_ns <= 0) return;
    int64_t step = tick_step(span_ns);
    bool ms = step >= 100000;
    ts__buf_printf(b, "<g class=\"axis\"><path d=\"M%.1f %.1fH%.1f\"/>", x0, y, x0 + w);
    for (int64_t t = 0; t <= span_ns; t += step) {
        double x = x0 + w * (double)t / (double)span_ns;
        ts__buf_printf(b, "<path d=\"M%.1f %.1fv4\"/><text x=\"%.1f\" y=\"%.1f\">%g%s</text>", x, y, x, y + 15,
                       ms ? (double)t / 1e6 : (double)t / 1e3, ms ? "ms" : "us");
    }
    ts__buf_puts(b, "</g>\n");
}

void ts__html_legend(ts_buf *b, double x, double y, const char *const *classes, const char *const *labels, int n)
{
    ts__buf_puts(b, "<g class=\"legend\">");
    for (int i = 0; i < n; i++) {
        ts__buf_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"10\" class=\"%s\"/>"
                          "<text x=\"%.0f\" y=\"%.0f\">", x, y, classes[i], x + 14, y + 9);
        ts__html_text(b, labels[i]);
        ts__buf_puts(b, "</text>");
        x += 24 + 7.0 * (double)strlen(labels[i]);
    }
    ts__buf_puts(b, "</g>\n");
}

/* ---- the page ---- */

/* Colours: k-compute (GPU compute, CPU compute of CPU-only jobs), k-comm,
 * k-mem (memcpy/memset), k-idle, k-cpu (CPU ops of GPU jobs), k-rt
 * (runtime calls, launches), k-wait (waiting for another rank), k-other. */
static const char style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:20px;color:#222;max-width:1400px}"
    "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:28px}"
    "table{border-collapse:collapse;margin:8px 0}td,th{padding:2px 8px;border-bottom:1px solid #eee;"
    "text-align:left}tbody tr:hover{background:#eef4ff}th{background:#f4f4f4;cursor:pointer;user-select:none}td.num,th.num{text-align:right;"
    "font-variant-numeric:tabular-nums}th[data-dir=a]::after{content:' \\25B2'}th[data-dir=d]::after"
    "{content:' \\25BC'}nav a{margin-right:12px}.note{color:#666}.err{color:#a00}svg{display:block;"
    "margin:6px 0}svg text{font-size:11px;fill:#333}.axis path{stroke:#888;fill:none}.axis text"
    "{text-anchor:middle}.lane{fill:#fafafa}.k-compute{fill:#4e79a7}.k-comm{fill:#e15759}.k-mem"
    "{fill:#f28e2b}.k-idle{fill:#d7d7d7}.k-cpu{fill:#59a14f}.k-rt{fill:#b07aa1}.k-wait{fill:#edc948}"
    ".k-other{fill:#9c9c9c}.k-meas{fill:#76b7b2}.k-pred{fill:#4e79a7}rect:hover{stroke:#000;"
    "stroke-width:1}.cp{fill:#d00}.cpl{stroke:#d00;stroke-width:1.2;fill:none}.curve{stroke:#4e79a7;"
    "stroke-width:1.2;fill:none}.peak{stroke:#d00;stroke-dasharray:4 3}"
    "details{margin:8px 0}summary{cursor:pointer;color:#246}td.name{max-width:640px;overflow:hidden;"
    "text-overflow:ellipsis;white-space:nowrap}";

/* Click a header to sort its table (numbers by value, text by collation);
 * a cell's data-v, when present, is its sort key; each header gets the
 * tooltip "click to sort" (so a dumped DOM shows the script ran). Hover text
 * of the charts is SVG <title>. */
static const char script[] =
    "document.querySelectorAll('table.sortable th').forEach(function(th){th.title='click to sort';"
    "th.addEventListener('click',"
    "function(){var b=th.closest('table').tBodies[0],i=[].indexOf.call(th.parentNode.children,th),"
    "n=th.classList.contains('num'),d=th.dataset.dir==='d'?1:-1;th.parentNode.querySelectorAll('th')"
    ".forEach(function(h){delete h.dataset.dir;});th.dataset.dir=d>0?'a':'d';function k(r){var c=r.cells[i];"
    "if(!c)return n?-Infinity:'';var v=c.dataset.v!==undefined?c.dataset.v:c.textContent;if(!n)return v;"
    "v=parseFloat(v.replace(/,/g,''));return isNaN(v)?-Infinity:v;}var rows=[].slice.call(b.rows);"
    "rows.sort(function(x,y){var p=k(x),q=k(y);return n?d*(p-q):d*String(p).localeCompare(q);});"
    "rows.forEach(function(r){b.appendChild(r);});});});";

static void page_head(ts_buf *b, const ts_report_html_input *in, const ts_report_html_opts *o)
{
    ts__buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
    char title[512];
    if (o->title) snprintf(title, sizeof title, "%s", o->title);
    else snprintf(title, sizeof title, "trainscope report: %s",
                  in->trace->n_ranks ? in->trace->ranks[0]->path : "(no ranks)");
    ts__html_text(b, title);
    ts__buf_printf(b, "</title><style>%s</style></head>\n<body>\n<h1>", style);
    ts__html_text(b, title);
    ts__buf_printf(b, "</h1>\n<p class=\"note\">trainscope %s</p>\n", ts_version());
}

/* One section into b: the writer's fragment inside <section id><h2>; *shown
 * says whether it is in the page. Only TS_ENOMEM fails the report. */
static int one_section(ts_buf *b, const ts_html_section *s, const ts_report_html_input *in,
                       const ts_report_html_opts *o, bool *shown, ts_buf *errors)
{
    size_t mark = b->len;
    ts__buf_printf(b, "<section id=\"%s\"><h2>", s->id);
    ts__html_text(b, s->title);
    ts__buf_puts(b, "</h2>\n");
    ts_error err = {0};
    int rc = s->write(b, in, o, &err);
    *shown = rc != TS_ENODATA;
    if (rc == TS_ENODATA) { b->len = mark; if (b->s) b->s[mark] = 0; return TS_OK; }
    if (rc == TS_ENOMEM || b->oom) return TS_ENOMEM;
    if (rc != TS_OK) {
        const char *msg = err.msg[0] ? err.msg : ts_strerror(rc);
        ts__buf_puts(b, "<p class=\"err\">could not draw this section: ");
        ts__html_text(b, msg);
        ts__buf_puts(b, "</p>\n");
        ts__buf_printf(errors, "<li>%s: ", s->id);
        ts__html_text(errors, msg);
        ts__buf_puts(errors, "</li>");
    }
    ts__buf_puts(b, "</section>\n");
    return TS_OK;
}

/* The whole page into out. */
static int build(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o)
{
    ts_buf body, errors;
    ts__buf_init(&body);
    ts__buf_init(&errors);
    bool shown[64] = {0};
    int rc = TS_OK;
    uint32_t n = ts__html_n_sections < 64 ? ts__html_n_sections : 64;
    for (uint32_t i = 0; i < n && rc == TS_OK; i++)
        rc = one_section(&body, &ts__html_sections[i], in, o, &shown[i], &errors);
    page_head(out, in, o);
    ts__buf_puts(out, "<nav>");
    for (uint32_t i = 0; i < n; i++)
        if (shown[i]) {
            ts__buf_printf(out, "<a href=\"#%s\">", ts__html_sections[i].id);
            ts__html_text(out, ts__html_sections[i].title);
            ts__buf_puts(out, "</a>");
        }
    ts__buf_puts(out, "</nav>\n");
    if (errors.len) ts__buf_printf(out, "<ul class=\"err\" id=\"section-errors\">%s</ul>\n", ts__buf_cstr(&errors));
    ts__buf_add(out, body.s ? body.s : "", body.len);
    ts__buf_printf(out, "<script>%s</script>\n</body></html>\n", script);
    if (body.oom || errors.oom || out->oom) rc = TS_ENOMEM;
    ts__buf_free(&body);
    ts__buf_free(&errors);
    return rc;
}

static ts_report_html_opts resolve_opts(const ts_report_html_opts *o)
{
    ts_report_html_opts r = {.size = sizeof r, .iteration = -1};
    if (o) {
        size_t n = o->size && o->size < sizeof r ? o->size : sizeof r;
        memcpy(&r, o, n);
        r.size = sizeof r;
    }
    if (!r.timeline_ranks) r.timeline_ranks = 8;
    if (!r.top_ops) r.top_ops = 15;
    return r;
}

static int check_input(const ts_report_html_input *in, ts_error *err)
{
    if (!in || !in->trace) return ts__error(err, TS_EINVAL, "report: no trace given");
    if (in->critical_path && !in->graph) return ts__error(err, TS_EINVAL, "report: a critical path needs its graph");
    return TS_OK;
}

int ts_report_html_write(const ts_report_html_input *in, const ts_report_html_opts *opts, const char *path,
                         ts_error *err)
{
    ts__error_clear(err);
    /* A caller built against an older, shorter struct: the fields it lacks are NULL. */
    ts_report_html_input all = {.size = sizeof all};
    if (in) memcpy(&all, in, in->size && in->size < sizeof all ? in->size : sizeof all);
    int rc = check_input(in ? &all : NULL, err);
    if (rc) return rc;
    ts_report_html_opts o = resolve_opts(opts);
    ts_buf b;
    ts__buf_init(&b);
    rc = build(&b, &all, &o);
    if (rc == TS_OK) rc = ts__write_file(path, &b, err);
    else ts__error(err, rc, "report: out of memory");
    ts__buf_free(&b);
    return rc;
}

/* ---- running the analyses (ts_report_html_trace) ---- */

typedef struct analyses {
    ts_breakdown *bd;
    ts_stats *by_name, *by_cat;
    ts_graph *g;
    ts_critical_path *cp;
    ts_replay *rp;
    char notes[6][1100];
    const char *note_ptr[6];
    uint32_t n_notes;
} analyses;

/* An analysis that failed: out of memory fails the report, anything else
 * becomes a note and its section is left out. */
static int note(analyses *a, const char *what, int rc, const ts_error *e)
{
    if (rc == TS_OK) return TS_OK;
    if (rc == TS_ENOMEM) return rc;
    if (a->n_notes < 6) {
        snprintf(a->notes[a->n_notes], sizeof a->notes[0], "%s: %s", what, e->msg[0] ? e->msg : ts_strerror(rc));
        a->note_ptr[a->n_notes] = a->notes[a->n_notes];
        a->n_notes++;
    }
    return TS_OK;
}

static int run_analyses(const ts_job *t, const ts_report_html_opts *o, analyses *a, ts_error *err)
{
    ts_error e = {0};
    ts_breakdown_opts bo = {.size = sizeof bo, .top_kernels = 5, .window_all = o->window_all};
    int rc = note(a, "breakdown", ts_breakdown_compute(t, &bo, &a->bd, &e), &e);
    ts_stats_opts so = {.size = sizeof so, .by = TS_STATS_BY_NAME, .window_all = o->window_all};
    if (rc == TS_OK) rc = note(a, "stats", ts_stats_compute(t, &so, &a->by_name, &e), &e);
    so.by = TS_STATS_BY_CATEGORY;
    if (rc == TS_OK) rc = note(a, "stats", ts_stats_compute(t, &so, &a->by_cat, &e), &e);
    if (rc == TS_OK) rc = note(a, "graph", ts_graph_create(t, NULL, &a->g, &e), &e);
    if (rc == TS_OK && a->g) {
        int64_t it = o->window_all && o->iteration == -1 ? TS_CP_WHOLE_TRACE : o->iteration;
        rc = note(a, "critical path", ts_critical_path_create(a->g, it, &a->cp, &e), &e);
        ts_replay_options ro = {.size = sizeof ro, .window_all = o->window_all};
        if (rc == TS_OK) rc = note(a, "replay", ts_replay_run_graph(a->g, &ro, &a->rp, &e), &e);
    }
    if (rc) ts__error(err, rc, "report: out of memory");
    return rc;
}

static void free_analyses(analyses *a)
{
    ts_replay_destroy(a->rp);
    ts_critical_path_destroy(a->cp);
    ts_graph_destroy(a->g);
    ts_stats_destroy(a->by_cat);
    ts_stats_destroy(a->by_name);
    ts_breakdown_destroy(a->bd);
}

int ts_report_html_trace(const ts_job *t, const ts_report_html_opts *opts, const char *path, ts_error *err)
{
    ts__error_clear(err);
    if (!t) return ts__error(err, TS_EINVAL, "report: no trace given");
    ts_report_html_opts o = resolve_opts(opts);
    ts__file f;
    int rc = ts__file_open(&f, path, err);   /* first: an unwritable PATH fails before the analyses run */
    if (rc) return rc;
    analyses a = {0};
    ts_buf b;
    ts__buf_init(&b);
    rc = run_analyses(t, &o, &a, err);
    if (rc == TS_OK) {
        ts_report_html_input in = {.size = sizeof in, .trace = t, .breakdown = a.bd, .stats_by_name = a.by_name,
                                   .stats_by_category = a.by_cat, .graph = a.g, .critical_path = a.cp,
                                   .replay = a.rp, .notes = a.note_ptr, .n_notes = a.n_notes};
        for (uint32_t i = 0; o.on_note && i < a.n_notes; i++) o.on_note(o.note_ud, a.notes[i]);
        rc = build(&b, &in, &o);
        if (rc) ts__error(err, rc, "report: out of memory");
    }
    if (rc == TS_OK && b.len && fwrite(b.s, 1, b.len, f.f) != b.len) f.e = errno;   /* ts__file_close says it */
    int crc = ts__file_close(&f, rc == TS_OK, rc == TS_OK ? err : NULL);
    if (rc == TS_OK) rc = crc;
    ts__buf_free(&b);
    free_analyses(&a);
    return rc;
}
