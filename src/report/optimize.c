/* optimize.c - `trainscope optimize`'s output: the search's result as a few
 * table lines or one JSON object (report_replay.h).
 *
 * Not for: the plan's files (plan.c writes what a user applies) or
 * any figure: they come from ts_optimize_get_summary and the changes.
 */
#include "report/report_int.h"
#include "trainscope/report_replay.h"

static int status_of(FILE *out) { return ferror(out) ? TS_EIO : TS_OK; }

int ts_report_optimize_json(FILE *out, const ts_job *t, const ts_graph *g, const ts_optimize *o)
{
    ts_optimize_summary s;
    ts_optimize_get_summary(o, &s);
    fprintf(out, "{\"measured_iteration_us\":%.3f,\"baseline_iteration_us\":%.3f,\"predicted_iteration_us\":%.3f,"
            "\"predicted_gain_pct\":%.3f,\"evaluations\":%llu,\"search\":\"%s\",\"seconds\":%.3f,"
            "\"buckets_before\":%u,\"buckets_after\":%u,\"op_fusion_pairs\":%u,\"no_change\":%s,",
            (double)s.measured_ns / 1e3, (double)s.baseline_ns / 1e3, (double)s.best_ns / 1e3, s.gain_pct,
            (unsigned long long)s.n_evals, ts_search_kind_name(s.search), s.search_s, s.n_old_buckets,
            s.n_new_buckets, s.n_fused, s.no_change ? "true" : "false");
    fprintf(out, "\"hook_cost_us\":%.3f,\"hook_group_cost_us\":%.3f,\"plan_cost_us\":%.3f,\"pruned_changes\":%u,"
            "\"cap_groupings\":%u,\"cap_proposals\":%u,",
            (double)s.hook_cost_ns / 1e3, (double)s.hook_group_ns / 1e3, (double)s.apply_cost_ns / 1e3, s.n_pruned,
            s.n_cap_groupings, s.n_cap_proposals);
    if (s.declined_ns > 0)
        fprintf(out, "\"declined\":{\"form\":\"ddp_hook\",\"buckets\":%u,\"predicted_gain_us\":%.3f,\"cost_us\":%.3f},",
                s.declined_buckets, (double)s.declined_ns / 1e3, (double)s.declined_cost_ns / 1e3);
    if (s.two_stage)   /* which stage priced what: the evaluations on the representatives, the iterations folded */
        fprintf(out, "\"evaluations_on\":\"representatives\",\"representative_ranks\":%u,\"repriced_folded\":%u,"
                "\"representatives_error_pct\":[%.4f,%.4f],", s.n_rep_ranks, s.n_repriced, s.rep_err_min_pct,
                s.rep_err_max_pct);
    fprintf(out, "\"ddp_bucket_cap_mb\":");
    if (s.ddp_bucket_cap_mb >= 0) fprintf(out, "%.6f", s.ddp_bucket_cap_mb);
    else fprintf(out, "null");
    ts__report_warnings_json_close(out, &t, 1, g);
    return status_of(out);
}

int ts_report_optimize_table(FILE *out, FILE *warn, const ts_job *t, const ts_graph *g, const ts_optimize *o)
{
    ts_optimize_summary s;
    ts_optimize_get_summary(o, &s);
    ts_report_warnings_graph(warn, t, g, NULL, ts_report_warn_all(false));
    fprintf(out, "iteration: measured %.3f ms, predicted as traced %.3f ms, with the plan %.3f ms (%+.2f%%)\n",
            (double)s.measured_ns / 1e6, (double)s.baseline_ns / 1e6, (double)s.best_ns / 1e6, 0.0 - s.gain_pct);   /* 0 - x: no "-0.00" for no gain */
    if (s.n_grads) fprintf(out, "buckets: %u in the trace, %u in the plan\n", s.n_old_buckets, s.n_new_buckets);
    if (s.n_fusable) fprintf(out, "op fusion: %u of %u candidate pairs of ops fused\n", s.n_fused, s.n_fusable);
    fprintf(out, "search: %s, %llu evaluations in %.2f s (%.0f/s)%s", ts_search_kind_name(s.search),
            (unsigned long long)s.n_evals, s.search_s, s.evals_per_s, s.two_stage ? ", on the representatives" : "");
    if (s.n_cap_proposals)
        fprintf(out, "; the first %u after the trace's: groupings a bucket_cap_mb gives (%u of %u)", s.n_cap_proposals,
                s.n_cap_proposals, s.n_cap_groupings);
    fprintf(out, "\n");
    if (s.two_stage)
        fprintf(out, "two stages: searched on the %u representatives of the folded job; %u strategies (the trace's "
                "included) re-priced by the folded replay, which gives both iterations above; the representatives' "
                "prices of those were %+.3f%% to %+.3f%% off\n", s.n_rep_ranks, s.n_repriced, s.rep_err_min_pct,
                s.rep_err_max_pct);
    fprintf(out, "\n");
    for (uint32_t i = 0; i < ts_optimize_n_changes(o); i++) fprintf(out, "%s\n", ts_optimize_change(o, i));
    return status_of(out);
}
