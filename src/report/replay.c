/* replay.c - `trainscope replay`'s output: the replay's results (ts_replay,
 * ts_replay_windows) as a terminal table or one JSON object, and their
 * warnings (report_replay.h).
 *
 * Not for: computing a figure. Every number here comes from the results'
 * public accessors (the medians over windows and the iteration spread too);
 * this file only formats them.
 */
#include <stdlib.h>

#include "report/report_int.h"
#include "trainscope/report.h"
#include "trainscope/report_replay.h"

static int write_buf(FILE *out, ts_buf *b)
{
    ts__buf_add(b, "\n", 1);
    int rc = b->oom ? TS_ENOMEM : fwrite(b->s, 1, b->len, out) == b->len ? TS_OK : TS_EIO;
    ts__buf_free(b);
    return rc;
}

/* An iteration's row: JSON's "per_iteration" items and CSV's iterations table. */
static int iteration_fields(const ts_replay_iteration_info *it, ts__fld f[TS__FLD_MAX])
{
    f[0] = (ts__fld){"step", TS__FLD_INT, .i = it->step};
    f[1] = (ts__fld){"measured", TS__FLD_NS, .i = it->measured_iteration_ns};
    f[2] = (ts__fld){"predicted", TS__FLD_NS, .i = it->predicted_iteration_ns};
    return 3;
}

int ts_report_replay_json(FILE *out, const ts_job *t, const ts_replay *r)
{
    ts__fld f[TS__FLD_MAX];
    ts_buf b;
    ts__buf_init(&b);
    ts_json j;
    ts__json_init(&j, &b);
    ts__json_obj_begin(&j);
    ts__json_kv_us(&j, "measured_iteration_us", ts_replay_measured_iteration_ns(r));
    ts__json_kv_us(&j, "predicted_iteration_us", ts_replay_predicted_iteration_ns(r));
    ts__json_kv_double(&j, "error_pct", ts_replay_error_pct(r), 3);
    ts__json_kv_bool(&j, "what_if", ts_replay_is_what_if(r));   /* true: error_pct is the edit's change */
    ts__json_kv_u64(&j, "iterations", ts_replay_n_iterations(r));
    ts__json_key(&j, "per_iteration");
    ts__json_arr_begin(&j);
    for (uint32_t k = 0; k < ts_replay_n_iterations(r); k++) {
        ts_replay_iteration_info it;
        ts_replay_iteration(r, k, &it);
        ts__fld_json(&j, f, iteration_fields(&it, f));
    }
    ts__json_arr_end(&j);
    ts__json_key(&j, "ranks");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < ts_replay_n_ranks(r); i++) {
        ts_replay_rank_info ri;
        ts_replay_rank(r, i, &ri);
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", ri.rank);
        ts__json_kv_us(&j, "measured_iteration_us", ri.measured_iteration_ns);
        ts__json_kv_us(&j, "predicted_iteration_us", ri.predicted_iteration_ns);
        ts__json_kv_us(&j, "clock_offset_us", ri.clock_offset_ns);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts_replay_stats st;
    ts_replay_get_stats(r, &st);
    ts__json_kv_u64(&j, "nodes", st.n_nodes);
    ts__json_kv_u64(&j, "edges", st.n_edges);
    ts__json_kv_u64(&j, "collectives", st.n_collectives);
    ts__report_warnings_json_open(&j, t);   /* the trace's ingest warnings, then the replay's */
    for (uint32_t i = 0; i < ts_replay_n_warnings(r); i++) ts__report_warning_json_line(&j, "replay", ts_replay_warning(r, i));
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    return write_buf(out, &b);
}

/* "per iteration, least to greatest of 5: ..." (what: "iteration" or
 * "window"), and with a what-if its change per iteration: when the least and
 * greatest straddle zero, the edit's sign rests on which were traced. */
static void spread_print(FILE *out, const ts_replay_spread *sp, const char *what, bool what_if)
{
    if (sp->n < 2) return;
    char a[32], b[32], c[32], d[32];
    ts_report_duration((double)sp->measured_min_ns, a, sizeof a);
    ts_report_duration((double)sp->measured_max_ns, b, sizeof b);
    ts_report_duration((double)sp->predicted_min_ns, c, sizeof c);
    ts_report_duration((double)sp->predicted_max_ns, d, sizeof d);
    fprintf(out, "per %s, least to greatest of %u: measured %s to %s, %s %s to %s\n", what, sp->n, a, b,
            what_if ? "with the what-if" : "predicted", c, d);
    if (what_if && sp->change_min_pct <= sp->change_max_pct)
        fprintf(out, "change per %s, least to greatest: %+.2f%% to %+.2f%%\n", what, sp->change_min_pct,
                sp->change_max_pct);
}

/* The trace's and the replay's warnings, folded per kind on a terminal. */
static void replay_warnings(FILE *f, const ts_job *t, const ts_replay *r, bool verbose)
{
    uint32_t n = ts_replay_n_warnings(r);
    const char **lines = malloc(((size_t)n + 1) * sizeof *lines);
    for (uint32_t i = 0; lines && i < n; i++) lines[i] = ts_replay_warning(r, i);
    if (lines) ts_report_warnings(f, t, lines, n, ts_report_warn_all(verbose));
    else {   /* no memory to fold them: every line, as recorded */
        ts__report_warnings_print(f, t);
        for (uint32_t i = 0; i < n; i++) fprintf(f, "trainscope: warning: %s\n", ts_replay_warning(r, i));
    }
    free(lines);
}


/* With a what-if, predicted minus measured is the change the edit makes,
 * not an error of the replay, and the table says so. */
int ts_report_replay_table(FILE *out, FILE *warn, const ts_job *t, const ts_replay *r, bool verbose)
{
    bool what_if = ts_replay_is_what_if(r);
    const ts_col cols[] = {
        {"rank", TS_ALIGN_RIGHT, 0}, {"measured", TS_ALIGN_RIGHT, 0},
        {what_if ? "what-if" : "predicted", TS_ALIGN_RIGHT, 0},
        {what_if ? "change %" : "error %", TS_ALIGN_RIGHT, 0}, {"clock offset", TS_ALIGN_RIGHT, 0},
    };
    ts_table *tb = ts_table_create(cols, 5);
    if (!tb) return TS_ENOMEM;
    int rc = TS_OK;
    for (uint32_t i = 0; rc == TS_OK && i < ts_replay_n_ranks(r); i++) {
        ts_replay_rank_info ri;
        ts_replay_rank(r, i, &ri);
        char c[5][32];
        snprintf(c[0], sizeof c[0], "%d", ri.rank);
        ts_report_duration((double)ri.measured_iteration_ns, c[1], sizeof c[1]);
        ts_report_duration((double)ri.predicted_iteration_ns, c[2], sizeof c[2]);
        snprintf(c[3], sizeof c[3], "%+.2f", ts_replay_change_pct(ri.predicted_iteration_ns, ri.measured_iteration_ns));
        ts_report_duration((double)ri.clock_offset_ns, c[4], sizeof c[4]);
        const char *cells[5] = {c[0], c[1], c[2], c[3], c[4]};
        rc = ts_table_add_row(tb, cells);
    }
    if (rc == TS_OK) rc = ts_table_write(tb, out);
    ts_table_destroy(tb);
    char m[32], p[32];
    ts_report_duration((double)ts_replay_measured_iteration_ns(r), m, sizeof m);
    ts_report_duration((double)ts_replay_predicted_iteration_ns(r), p, sizeof p);
    if (what_if)
        fprintf(out, "\niteration (median of %u, slowest rank): measured %s as traced, %s with the what-if, change %+.2f%%\n",
                ts_replay_n_iterations(r), m, p, ts_replay_error_pct(r));
    else
        fprintf(out, "\niteration (median of %u, slowest rank): measured %s, predicted %s, error %+.2f%%\n",
                ts_replay_n_iterations(r), m, p, ts_replay_error_pct(r));
    ts_replay_spread sp;
    ts_replay_iteration_spread(r, &sp);
    spread_print(out, &sp, "iteration", what_if);
    fflush(out);   /* the table before its warnings, also when both go down one pipe */
    replay_warnings(warn, t, r, verbose);
    return rc;
}

int ts_report_replay_windows_json(FILE *out, const ts_replay_windows *w)
{
    ts_buf b;
    ts__buf_init(&b);
    ts_json j;
    ts__json_init(&j, &b);
    ts__json_obj_begin(&j);
    ts__json_kv_us(&j, "measured_iteration_us", ts_replay_windows_measured_ns(w));     /* medians over the windows */
    ts__json_kv_us(&j, "predicted_iteration_us", ts_replay_windows_predicted_ns(w));
    ts__json_kv_double(&j, "error_pct", ts_replay_windows_error_pct(w), 3);
    ts__json_kv_bool(&j, "what_if", ts_replay_windows_is_what_if(w));
    ts__json_key(&j, "windows");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < ts_replay_windows_n(w); i++) {
        ts_replay_window_info x;
        ts_replay_windows_window(w, i, &x);
        ts__json_obj_begin(&j);
        ts__json_kv_str(&j, "path", x.path);
        ts__json_kv_u64(&j, "iterations", x.n_iterations);
        ts__json_kv_us(&j, "measured_iteration_us", x.measured_iteration_ns);
        ts__json_kv_us(&j, "predicted_iteration_us", x.predicted_iteration_ns);
        ts__json_kv_double(&j, "error_pct", x.error_pct, 3);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__json_key(&j, "ranks");
    ts__json_arr_begin(&j);
    for (uint32_t k = 0; k < ts_replay_windows_n_ranks(w); k++) {
        ts_replay_rank_info ri;
        ts_replay_windows_rank(w, k, &ri);
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", ri.rank);
        ts__json_kv_us(&j, "measured_iteration_us", ri.measured_iteration_ns);
        ts__json_kv_us(&j, "predicted_iteration_us", ri.predicted_iteration_ns);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__report_warnings_json_open(&j, NULL);   /* every window's ingest warnings, then the replays' */
    for (uint32_t i = 0; i < ts_replay_windows_n_ingest_warnings(w); i++) {
        ts_replay_window_ingest_warning x;
        ts_replay_windows_ingest_warning(w, i, &x);
        ts__report_warning_json_item(&j, x.rank, x.file, x.kind, x.count, x.first);
    }
    for (uint32_t i = 0; i < ts_replay_windows_n_warnings(w); i++)
        ts__report_warning_json_line(&j, "replay", ts_replay_windows_warning(w, i));
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    return write_buf(out, &b);
}

/* The windows' distinct replay lines, folded per kind on a terminal. */
static int windows_warnings(FILE *warn, const ts_replay_windows *w, bool verbose)
{
    uint32_t nw = ts_replay_windows_n_warnings(w);
    const char **lines = malloc(((size_t)nw + 1) * sizeof *lines);
    if (!lines) return TS_ENOMEM;
    for (uint32_t i = 0; i < nw; i++) lines[i] = ts_replay_windows_warning(w, i);
    ts_report_warnings(warn, NULL, lines, nw, ts_report_warn_all(verbose));
    free(lines);
    return TS_OK;
}

int ts_report_replay_windows_table(FILE *out, FILE *warn, const ts_replay_windows *w, bool verbose)
{
    bool what_if = ts_replay_windows_is_what_if(w);
    const ts_col cols[] = {
        {"window", TS_ALIGN_LEFT, 0}, {"iterations", TS_ALIGN_RIGHT, 0}, {"measured", TS_ALIGN_RIGHT, 0},
        {what_if ? "what-if" : "predicted", TS_ALIGN_RIGHT, 0},
        {what_if ? "change %" : "error %", TS_ALIGN_RIGHT, 0},
    };
    ts_table *tb = ts_table_create(cols, 5);
    if (!tb) return TS_ENOMEM;
    int rc = TS_OK;
    uint32_t n = ts_replay_windows_n(w);
    for (uint32_t i = 0; rc == TS_OK && i < n; i++) {
        ts_replay_window_info x;
        ts_replay_windows_window(w, i, &x);
        char c[4][32];
        snprintf(c[0], sizeof c[0], "%u", x.n_iterations);
        ts_report_duration((double)x.measured_iteration_ns, c[1], sizeof c[1]);
        ts_report_duration((double)x.predicted_iteration_ns, c[2], sizeof c[2]);
        snprintf(c[3], sizeof c[3], "%+.2f", x.error_pct);
        const char *cells[5] = {x.path, c[0], c[1], c[2], c[3]};
        rc = ts_table_add_row(tb, cells);
    }
    if (rc == TS_OK) rc = ts_table_write(tb, out);
    ts_table_destroy(tb);
    if (rc) return rc;
    char ms[32], ps[32];
    ts_report_duration((double)ts_replay_windows_measured_ns(w), ms, sizeof ms);
    ts_report_duration((double)ts_replay_windows_predicted_ns(w), ps, sizeof ps);
    fprintf(out, "\niteration (median of %u windows, each the median of its iterations, slowest rank): measured %s%s, "
            "%s %s, %s %+.2f%%\n", n, ms, what_if ? " as traced" : "", what_if ? "with the what-if" : "predicted",
            ps, what_if ? "change" : "error", ts_replay_windows_error_pct(w));
    ts_replay_spread sp;
    ts_replay_windows_spread(w, &sp);
    spread_print(out, &sp, "window", what_if);
    fflush(out);
    return windows_warnings(warn, w, verbose);
}

/* ---- CSV: tables through ts_report_csv (the one CSV writer, report.h) ---- */

static void csv_ranks(ts_csv *c, const void *res)
{
    const ts_replay *r = res;
    TS__CSV_HEAD(c, "rank", "measured_ns", "predicted_ns", "error_pct", "clock_offset_ns");
    for (uint32_t i = 0; i < ts_replay_n_ranks(r); i++) {
        ts_replay_rank_info ri;
        ts_replay_rank(r, i, &ri);
        ts_csv_i64(c, ri.rank);
        ts_csv_i64(c, ri.measured_iteration_ns);
        ts_csv_i64(c, ri.predicted_iteration_ns);
        ts_csv_real(c, ts_replay_change_pct(ri.predicted_iteration_ns, ri.measured_iteration_ns), 3);
        ts_csv_i64(c, ri.clock_offset_ns);
        ts_csv_end_row(c);
    }
}

static void csv_iterations(ts_csv *c, const void *res)
{
    const ts_replay *r = res;
    ts__fld f[TS__FLD_MAX];
    ts_replay_iteration_info none = {0};
    ts__fld_csv_head(c, f, iteration_fields(&none, f));
    for (uint32_t i = 0; i < ts_replay_n_iterations(r); i++) {
        ts_replay_iteration_info it;
        ts_replay_iteration(r, i, &it);
        ts__fld_csv_row(c, f, iteration_fields(&it, f));
    }
}

static const ts_csv_table replay_tables[] = {{"ranks", csv_ranks}, {"iterations", csv_iterations}};

int ts_report_replay_csv(FILE *out, FILE *warn, const ts_job *t, const ts_replay *r, const char *table,
                         bool verbose, ts_error *err)
{
    int rc = ts_report_csv("replay", replay_tables, 2, r, table, NULL, out, err);
    if (rc) return rc;
    fflush(out);   /* the table before its warnings */
    replay_warnings(warn, t, r, verbose);
    return ferror(out) ? TS_EIO : TS_OK;
}

static void csv_windows(ts_csv *c, const void *res)
{
    const ts_replay_windows *w = res;
    TS__CSV_HEAD(c, "path", "iterations", "measured_ns", "predicted_ns", "error_pct");
    for (uint32_t i = 0; i < ts_replay_windows_n(w); i++) {
        ts_replay_window_info x;
        ts_replay_windows_window(w, i, &x);
        ts_csv_str(c, x.path);
        ts_csv_i64(c, x.n_iterations);
        ts_csv_i64(c, x.measured_iteration_ns);
        ts_csv_i64(c, x.predicted_iteration_ns);
        ts_csv_real(c, x.error_pct, 3);
        ts_csv_end_row(c);
    }
}

static void csv_window_ranks(ts_csv *c, const void *res)
{
    const ts_replay_windows *w = res;
    TS__CSV_HEAD(c, "rank", "measured_ns", "predicted_ns");
    for (uint32_t k = 0; k < ts_replay_windows_n_ranks(w); k++) {
        ts_replay_rank_info ri;
        ts_replay_windows_rank(w, k, &ri);
        ts_csv_i64(c, ri.rank);
        ts_csv_i64(c, ri.measured_iteration_ns);
        ts_csv_i64(c, ri.predicted_iteration_ns);
        ts_csv_end_row(c);
    }
}

static const ts_csv_table windows_tables[] = {{"windows", csv_windows}, {"ranks", csv_window_ranks}};

int ts_report_replay_windows_csv(FILE *out, FILE *warn, const ts_replay_windows *w, const char *table, bool verbose,
                                 ts_error *err)
{
    int rc = ts_report_csv("replay", windows_tables, 2, w, table, NULL, out, err);
    if (rc) return rc;
    fflush(out);
    rc = windows_warnings(warn, w, verbose);
    return rc ? rc : ferror(out) ? TS_EIO : TS_OK;
}
