/* warnings.c - the recoverable input problems a rank collected during ingest
 * (unknown phases, unmatched B/E, negative durations, invalid UTF-8, ...)
 * and an analysis's own warning lines, written the same way by every command:
 * one "warnings" array in JSON whose items all have one shape, one line per
 * kind on stderr in table mode. Never silently dropped. Also the
 * output-format names the commands share. */
#include "report/report_int.h"
#include "trainscope/graph.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ts__report_warning_json_item(ts_json *j, int64_t rank, const char *file, const char *kind, uint64_t count,
                                  const char *first)
{
    ts__json_obj_begin(j);
    ts__json_kv_i64(j, "rank", rank);
    ts__json_kv_str(j, "file", file);
    ts__json_kv_str(j, "kind", kind);
    ts__json_kv_u64(j, "count", count);
    ts__json_kv_str(j, "first", first ? first : "");
    ts__json_obj_end(j);
}

void ts__report_warnings_json_trace(ts_json *j, const ts_job *t)
{
    for (uint32_t i = 0; t && i < t->n_ranks; i++) {
        const ts_rank *r = t->ranks[i];
        for (int k = 0; k < TS_WARN_COUNT; k++)
            if (r->warn_count[k])
                ts__report_warning_json_item(j, r->rank, r->path, ts__warn_name((ts_warn_kind)k), r->warn_count[k],
                                             r->warn_first[k]);
    }
}

static int32_t line_rank(const char *s, const char **rest);

void ts__report_warning_json_line(ts_json *j, const char *kind, const char *line)
{
    const char *rest;
    ts__report_warning_json_item(j, line_rank(line, &rest), "", kind, 1, line);
}

void ts__report_warnings_json_open(ts_json *j, const ts_job *t)
{
    ts__json_key(j, "warnings");
    ts__json_arr_begin(j);
    ts__report_warnings_json_trace(j, t);
}

void ts__report_warnings_json(ts_json *j, const ts_job *t)
{
    ts__report_warnings_json_open(j, t);
    ts__json_arr_end(j);
}

void ts__report_warnings_print(FILE *f, const ts_job *t)
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

int ts__report_format(const char *s) { return ts_report_format_parse(s); }

int ts_report_format_parse(const char *s)
{
    static const char *const names[] = {"table", "json", "csv"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

/* ---- terminal summary: one line per kind of warning ----
 * A kind is a line's text with its standalone numbers (digit runs not part
 * of a word, not after '-' or '.') read as '#', after a leading "rank N"; lines
 * of one kind about several ranks fold into one line naming the ranks, their
 * numbers (counts) summed; other repeated kinds print their first line and
 * how many more there are. O(lines^2) over a few hundred lines at most. */
enum { WARN_NUMS = 12 };

typedef struct warn_kind {
    char    *tmpl;                  /* rest of the line, numbers as '#' (owned) */
    uint32_t first;                 /* its first line */
    uint32_t n;                     /* lines of this kind */
    bool     per_rank;              /* every line began "rank N" */
    uint64_t sum[WARN_NUMS];        /* per '#', summed over the lines */
    int32_t *ranks;                 /* per line (per_rank), owned */
} warn_kind;

static bool word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (c >= '0' && c <= '9'); }

/* The rank a line starts with ("rank N..."), -1 = none; *rest after it and a ": ". */
static int32_t line_rank(const char *s, const char **rest)
{
    *rest = s;
    if (strncmp(s, "rank ", 5) || s[5] < '0' || s[5] > '9') return -1;
    char *end;
    long v = strtol(s + 5, &end, 10);
    if (word_char(*end) || v > INT32_MAX) return -1;
    if (*end == ':') end++;
    while (*end == ' ') end++;
    *rest = end;
    return (int32_t)v;
}

/* rest's template into b and its numbers into nums; false when too many. */
static bool line_template(const char *rest, ts_buf *b, uint64_t *nums, int *n_nums)
{
    *n_nums = 0;
    for (const char *p = rest; *p;) {
        bool digit = *p >= '0' && *p <= '9';
        if (!digit || (p > rest && (word_char(p[-1]) || p[-1] == '-' || p[-1] == '.'))) {
            ts__buf_add(b, p++, 1);   /* text, or a digit inside a word or a number with a sign or point */
            continue;
        }
        const char *q = p;
        while (*q >= '0' && *q <= '9') q++;
        if (word_char(*q) || *q == '.') {   /* "8B", "1.5": not a count */
            ts__buf_add(b, p, (size_t)(q - p));
        } else {
            if (*n_nums == WARN_NUMS) return false;
            nums[(*n_nums)++] = strtoull(p, NULL, 10);
            ts__buf_add(b, "#", 1);
        }
        p = q;
    }
    ts__buf_add(b, "", 0);
    return !b->oom;
}

/* "0-3, 5, 7": the ranks in order, runs folded. */
static void rank_list(FILE *f, int32_t *r, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)   /* insertion sort: a few hundred at most */
        for (uint32_t k = i; k > 0 && r[k - 1] > r[k]; k--) { int32_t x = r[k]; r[k] = r[k - 1]; r[k - 1] = x; }
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        while (j + 1 < n && r[j + 1] <= r[j] + 1) j++;
        fprintf(f, "%s%d", i ? ", " : "", r[i]);
        if (r[j] != r[i]) fprintf(f, "-%d", r[j]);
        i = j + 1;
    }
}

static void print_kind(FILE *f, const warn_kind *k, const char *const *lines)
{
    if (k->n == 1) { fprintf(f, "trainscope: warning: %s\n", lines[k->first]); return; }
    if (!k->per_rank) {
        fprintf(f, "trainscope: warning: %s (and %u more like it)\n", lines[k->first], k->n - 1);
        return;
    }
    fputs("trainscope: warning: ranks ", f);
    rank_list(f, k->ranks, k->n);
    fputs(", summed: ", f);
    int i = 0;
    for (const char *p = k->tmpl; *p; p++) {
        if (*p == '#' && i < WARN_NUMS) fprintf(f, "%llu", (unsigned long long)k->sum[i++]);
        else fputc(*p, f);
    }
    fputc('\n', f);
}

/* Group lines into kinds (kinds[] has room for n); returns how many. */
static uint32_t group_kinds(const char *const *lines, uint32_t n, warn_kind *kinds, bool *oom)
{
    uint32_t nk = 0;
    for (uint32_t i = 0; i < n && !*oom; i++) {
        const char *rest;
        int32_t rank = line_rank(lines[i], &rest);
        ts_buf b;
        ts__buf_init(&b);
        uint64_t nums[WARN_NUMS];
        int n_nums;
        bool ok = line_template(rest, &b, nums, &n_nums);
        uint32_t k = 0;
        while (ok && k < nk && (kinds[k].per_rank != (rank >= 0) || strcmp(kinds[k].tmpl, ts__buf_cstr(&b)))) k++;
        if (!ok || k == nk) {
            kinds[nk] = (warn_kind){.first = i, .per_rank = rank >= 0 && ok};
            kinds[nk].tmpl = ts__strdup(ok ? ts__buf_cstr(&b) : lines[i]);
            kinds[nk].ranks = ts__calloc((size_t)n + 1, sizeof *kinds[nk].ranks);
            if (!kinds[nk].tmpl || !kinds[nk].ranks) *oom = true;
            k = nk++;
        }
        warn_kind *w = &kinds[k];
        if (w->ranks) w->ranks[w->n] = rank;
        w->n++;
        for (int m = 0; ok && m < n_nums; m++) w->sum[m] += nums[m];
        ts__buf_free(&b);
    }
    return nk;
}

/* Ingest warnings of one kind over every file: the total and the first.
 * Returns the lines it stands for (files with that kind). */
static uint32_t print_ingest_kind(FILE *f, const ts_job *t, int k)
{
    uint64_t total = 0;
    uint32_t files = 0;
    const ts_rank *first = NULL;
    for (uint32_t i = 0; i < t->n_ranks; i++) {
        if (!t->ranks[i]->warn_count[k]) continue;
        total += t->ranks[i]->warn_count[k];
        files++;
        if (!first) first = t->ranks[i];
    }
    if (!files) return 0;
    if (files == 1)
        fprintf(f, "trainscope: warning: %s: %llu %s (first: %s)\n", first->path, (unsigned long long)total,
                ts__warn_name((ts_warn_kind)k), first->warn_first[k] ? first->warn_first[k] : "-");
    else
        fprintf(f, "trainscope: warning: %llu %s in %u files (first: %s: %s)\n", (unsigned long long)total,
                ts__warn_name((ts_warn_kind)k), files, first->path, first->warn_first[k] ? first->warn_first[k] : "-");
    return files;
}

bool ts_report_warn_all(bool verbose) { return verbose || !isatty(fileno(stderr)); }

void ts_report_warnings(FILE *f, const ts_job *t, const char *const *lines, uint32_t n, bool all)
{
    if (all) {
        if (t) ts__report_warnings_print(f, t);
        for (uint32_t i = 0; i < n; i++) fprintf(f, "trainscope: warning: %s\n", lines[i]);
        return;
    }
    uint32_t lines_all = n, lines_out = 0;
    for (int k = 0; t && k < TS_WARN_COUNT; k++) {
        uint32_t files = print_ingest_kind(f, t, k);
        lines_all += files;
        lines_out += files > 0;
    }
    bool oom = false;
    warn_kind *kinds = ts__calloc((size_t)n + 1, sizeof *kinds);
    uint32_t nk = kinds ? group_kinds(lines, n, kinds, &oom) : 0;
    if (!kinds || oom) {   /* no memory to fold them: every line, as recorded */
        for (uint32_t i = 0; i < n; i++) fprintf(f, "trainscope: warning: %s\n", lines[i]);
    } else {
        for (uint32_t k = 0; k < nk; k++) print_kind(f, &kinds[k], lines);
        lines_out += nk;
        if (lines_out < lines_all)
            fprintf(f, "trainscope: warning: (%u warning lines folded into these %u; --verbose lists each)\n",
                    lines_all, lines_out);
    }
    for (uint32_t k = 0; kinds && k < nk; k++) {
        ts__free(kinds[k].tmpl, kinds[k].tmpl ? strlen(kinds[k].tmpl) + 1 : 0);
        ts__free(kinds[k].ranks, ((size_t)n + 1) * sizeof *kinds[k].ranks);
    }
    ts__free(kinds, ((size_t)n + 1) * sizeof *kinds);
}

void ts__report_warnings_json_graph(ts_json *j, const ts_graph *g)
{
    for (uint32_t i = 0; g && i < ts_graph_n_warnings(g); i++) ts__report_warning_json_line(j, "graph", ts_graph_warning(g, i));
}

void ts__report_warnings_json_close(FILE *f, const ts_job *const *ts, uint32_t n, const ts_graph *g)
{
    ts_buf b;
    ts__buf_init(&b);
    ts_json j;
    ts__json_init(&j, &b);
    ts__json_obj_begin(&j);
    ts__report_warnings_json_open(&j, NULL);
    for (uint32_t i = 0; i < n; i++) ts__report_warnings_json_trace(&j, ts[i]);
    ts__report_warnings_json_graph(&j, g);
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    fprintf(f, ",%s\n", b.len && !b.oom ? ts__buf_cstr(&b) + 1 : "\"warnings\":null}");   /* past its '{' */
    ts__buf_free(&b);
}

void ts_report_warnings_graph(FILE *f, const ts_job *t, const ts_graph *g, const ts_critical_path *cp, bool all)
{
    uint32_t ng = g ? ts_graph_n_warnings(g) : 0, nc = cp ? ts_critical_path_n_warnings(cp) : 0, n = ng + nc;
    const char **lines = ts__calloc((size_t)n + 1, sizeof *lines);
    for (uint32_t i = 0; lines && i < ng; i++) lines[i] = ts_graph_warning(g, i);
    for (uint32_t i = 0; lines && i < nc; i++) lines[ng + i] = ts_critical_path_warning(cp, i);
    ts_report_warnings(f, t, lines, lines ? n : 0, all || !lines);
    for (uint32_t i = 0; !lines && i < ng; i++) fprintf(f, "trainscope: warning: %s\n", ts_graph_warning(g, i));
    for (uint32_t i = 0; !lines && i < nc; i++) fprintf(f, "trainscope: warning: %s\n", ts_critical_path_warning(cp, i));
    ts__free(lines, ((size_t)n + 1) * sizeof *lines);
}
