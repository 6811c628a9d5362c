/* precision.c - the precision what-if's output (replay --precision-plan,
 * --precision-greedy): a prediction as table lines or JSON, and a plan as a
 * plan file (report_replay.h); the precision pass's result (optimize
 * --passes precision).
 *
 * Not for: predicting or searching (replay/precision*.c); every figure comes
 * from ts_prec_prediction and the model's accessors.
 */
#include "report/report_int.h"
#include "trainscope/report_replay.h"

static int status_of(FILE *out) { return ferror(out) ? TS_EIO : TS_OK; }

int ts_report_prec_json(FILE *out, const ts_prec_model *m, const ts_prec_prediction *p, const ts_job *const *traces)
{
    ts_prec_cast_fit fit;
    ts_prec_model_cast_fit(m, &fit);
    fprintf(out, "{\"predicted_iteration_us\":%.3f,\"fp32_iteration_us\":%.3f,\"change_pct\":%.3f,"
            "\"predicted_peak_bytes\":%lld,\"fp32_peak_bytes\":%lld,\"casts\":%u,\"cast_us\":%.3f,"
            "\"cast_alpha_ns_per_byte\":%.6g,\"cast_beta_ns\":%.1f,\"casts_fitted\":%u,\"units\":%u,\"notes\":%u",
            (double)p->iteration_ns / 1e3, (double)p->fp32_iteration_ns / 1e3, p->change_pct, (long long)p->peak_bytes,
            (long long)p->fp32_peak_bytes, p->n_casts, (double)p->cast_ns / 1e3, fit.alpha_ns_per_byte,
            fit.beta_ns, fit.n_casts, ts_prec_model_n_units(m), ts_prec_model_n_notes(m));
    ts__report_warnings_json_close(out, traces, TS_PREC_COUNT, NULL);   /* the runs' ingest warnings */
    return status_of(out);
}

int ts_report_prec_table(FILE *out, const ts_prec_model *m, const ts_prec_prediction *p, const char *pre)
{
    ts_prec_cast_fit fit;
    ts_prec_model_cast_fit(m, &fit);
    fprintf(out, "%spredicted iteration %.3f ms (fp32 run %.3f ms, %+.2f%%), %u casts inserted (%.3f ms)\n",
            pre, (double)p->iteration_ns / 1e6, (double)p->fp32_iteration_ns / 1e6, p->change_pct, p->n_casts,
            (double)p->cast_ns / 1e6);
    if (p->peak_bytes >= 0)
        fprintf(out, "%spredicted peak memory %.3f MiB (fp32 run %.3f MiB)\n", pre, (double)p->peak_bytes / 1048576.0,
                (double)p->fp32_peak_bytes / 1048576.0);
    else fprintf(out, "%speak memory: the runs hold no [memory] events\n", pre);
    fprintf(out, "%scast cost %.4g ns/byte + %.0f ns, fitted on %u casts (median error %.1f%%); %u ops mapped\n",
            pre, fit.alpha_ns_per_byte, fit.beta_ns, fit.n_casts, fit.median_abs_err_pct, ts_prec_model_n_units(m));
    for (uint32_t i = 0; i < ts_prec_model_n_notes(m); i++) fprintf(out, "%snote: %s\n", pre, ts_prec_model_note(m, i));
    return status_of(out);
}

int ts_report_prec_plan(FILE *out, const ts_prec_model *m, const uint8_t *prec)
{
    return ts_prec_plan_write(out, m, prec);
}

int ts_report_prec_optimize_table(FILE *out, const ts_prec_model *m, const ts_optimize_prec *p)
{
    ts_optimize_prec_summary s;
    ts_optimize_prec_get_summary(p, &s);
    fprintf(out, "precision plan: %u of %u ops lowered (%u may change), indicators used %.6g\n", s.n_lowered,
            s.n_units, s.n_allowed, s.indicator_used);
    fprintf(out, "predicted iteration %.3f ms -> %.3f ms (%+.2f%%), %u casts (%.3f ms)\n",
            (double)s.before.iteration_ns / 1e6, (double)s.after.iteration_ns / 1e6,
            ts_replay_change_pct(s.after.iteration_ns, s.before.iteration_ns), s.after.n_casts,
            (double)s.after.cast_ns / 1e6);
    if (s.after.peak_bytes >= 0)
        fprintf(out, "predicted peak memory %.3f MiB -> %.3f MiB\n", (double)s.before.peak_bytes / 1048576.0,
                (double)s.after.peak_bytes / 1048576.0);
    int rc = ts_prec_plan_write(out, m, ts_optimize_prec_plan(p));
    return rc ? rc : status_of(out);
}

int ts_report_prec_optimize_json(FILE *out, const ts_optimize_prec *p)
{
    ts_optimize_prec_summary s;
    ts_optimize_prec_get_summary(p, &s);
    fprintf(out, "{\"units\":%u,\"may_change\":%u,\"lowered\":%u,\"indicator_used\":%.6g,"
            "\"before_iteration_us\":%.3f,\"predicted_iteration_us\":%.3f,\"before_peak_bytes\":%lld,"
            "\"predicted_peak_bytes\":%lld,\"casts\":%u}\n", s.n_units, s.n_allowed, s.n_lowered, s.indicator_used,
            (double)s.before.iteration_ns / 1e3, (double)s.after.iteration_ns / 1e3, (long long)s.before.peak_bytes,
            (long long)s.after.peak_bytes, s.after.n_casts);
    return status_of(out);
}
