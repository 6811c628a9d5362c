/* warnings.c - the recoverable input problems a rank collected during ingest
 * (unknown phases, unmatched B/E, negative durations, invalid UTF-8, ...),
 * written the same way by every command: under a "warnings" key in JSON, one
 * line per kind on stderr in table mode. Never silently dropped. Also the
 * output-format names the commands share. */
#include "report/report_int.h"

void ts__report_warnings_json(ts_json *j, const ts_trace *t)
{
    ts__json_key(j, "warnings");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < t->n_ranks; i++) {
        const ts_rank *r = t->ranks[i];
        for (int k = 0; k < TS_WARN_COUNT; k++) {
            if (!r->warn_count[k]) continue;
            ts__json_obj_begin(j);
            ts__json_kv_i64(j, "rank", r->rank);
            ts__json_kv_str(j, "file", r->path);
            ts__json_kv_str(j, "kind", ts__warn_name((ts_warn_kind)k));
            ts__json_kv_u64(j, "count", r->warn_count[k]);
            ts__json_kv_str(j, "first", r->warn_first[k] ? r->warn_first[k] : "");
            ts__json_obj_end(j);
        }
    }
    ts__json_arr_end(j);
}

void ts__report_warnings_print(FILE *f, const ts_trace *t)
{
    for (uint32_t i = 0; i < t->n_ranks; i++) {
        const ts_rank *r = t->ranks[i];
        for (int k = 0; k < TS_WARN_COUNT; k++) {
            if (!r->warn_count[k]) continue;
            fprintf(f, "trainscope: warning: %s: %llu %s (first: %s)\n", r->path,
                    (unsigned long long)r->warn_count[k], ts__warn_name((ts_warn_kind)k),
                    r->warn_first[k] ? r->warn_first[k] : "-");
        }
    }
}

int ts__report_format(const char *s)
{
    static const char *const names[] = {"table", "json", "csv"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}
