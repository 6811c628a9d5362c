/* cmd_critical_path.c - `trainscope critical-path PATH...`: the longest
 * dependency path of one iteration across ranks, where its time went, which
 * rank made the others wait, and the ops on it.
 *
 * Thin: parse options, load, build the global graph, search, print (table or
 * json), optionally export a Chrome trace with the path marked.
 * Exit: 0 ok, 1 nothing to follow, 2 bad input or usage.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "graph/critical_path.h"
#include "report/chrome_export.h"
#include "report/report_int.h"
#include "trainscope/graph.h"
#include "trainscope/ingest.h"

typedef struct cp_args {
    int64_t     iteration;   /* -1 = last complete one */
    int         format;      /* TS_FMT_TABLE or TS_FMT_JSON */
    const char *export_path; /* NULL = none */
    const char *marker;      /* --iteration-marker */
    int         leaf_ops;
    int         no_align;    /* --no-align: keep every rank's clock */
    int         top;         /* rows of top ops */
    int         verbose;     /* every warning line, also on a terminal */
} cp_args;

static void usage(FILE *f)
{
    fputs("usage: trainscope critical-path [OPTIONS] PATH...\n\n"
          "The longest dependency path of one iteration through the global graph of\n"
          "all ranks (CPU ops, launches, kernels, copies, collectives matched across\n"
          "ranks after clock alignment), split into compute, communication, memory,\n"
          "launch, cpu and waiting on another rank, with the ops that make it up.\n"
          "PATH is a trace file or a directory of per-rank traces.\n\n"
          "options:\n"
          "  --iteration N            ProfilerStep#N (default: the last one all ranks have;\n"
          "                           the whole trace when there are no iterations)\n"
          "  --format table|json      output format (default table); times in json are us\n"
          "  --export FILE            write a Chrome trace with the path marked\n"
          "                           (args.critical = 1, flow arrows) for Perfetto UI\n"
          "  --leaf-ops               CPU nodes are leaf ops (default: top-level ops)\n"
          "  --no-align               keep each rank's clock (default: align ranks on\n"
          "                           their matched collectives)\n"
          "  --top N                  ops listed (default 10)\n"
          "  --iteration-marker NAME  slice-name prefix of iterations (ProfilerStep#)\n"
          TS_CLI_COMMON_HELP TS_CLI_GRAPH_HELP
          "                           (--window all: the whole trace, not an iteration)\n"
          "  -v, --verbose            every warning line (on a terminal warnings are\n"
          "                           folded into one line per kind, summed over ranks\n"
          "                           and files; piped, and in json, all are kept)\n"
          "  -h, --help               this help\n\n"
          "json: length_us, iteration_us, categories (compute/communication/memory/\n"
          "launch/cpu/wait_on_rank _us, summing to length_us; a job without GPU work\n"
          "counts its CPU ops as compute), waited_for_rank,\n"
          "wait_on_rank [{rank, wait_us}], top_ops [{rank, kind, name, count, total_us,\n"
          "edge (kind \"gap\": time between ops that no op owns)}] (all rows together:\n"
          "the path's length),\n"
          "path [{rank, kind, name, start_us (aligned clock), dur_us, on_path_us (its own\n"
          "time on the path, as in top_ops)}], each node once,\n"
          "ranks [{rank, file, clock_offset_ns, matched_collectives, residual_median_ns,\n"
          "residual_max_ns, causality_violations}], graph_nodes, graph_edges,\n"
          "collectives, edges_by_kind, warnings [{rank, file, kind, count, first}]: the\n"
          "trace's ingest warnings, then the graph's and the path's (kind graph or\n"
          "critical_path, file \"\", rank -1 unless the line names one).\n\n"
          "exit codes: 0 ok, 1 nothing to follow, 2 bad input or usage\n", f);
}

static int parse_args(int argc, char **argv, cp_args *a)
{
    static const struct option longopts[] = {
        {"iteration", required_argument, 0, 'i'}, {"format", required_argument, 0, 'f'},
        {"export", required_argument, 0, 'e'}, {"leaf-ops", no_argument, 0, 'l'}, {"no-align", no_argument, 0, 'n'},
        {"top", required_argument, 0, 't'}, {"iteration-marker", required_argument, 0, 'm'},
        {"verbose", no_argument, 0, 'v'}, TS_CLI_COMMON_LONGOPTS, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->iteration = -1;
    a->top = 10;
    optind = 1;
    opterr = 0;
    int c;
    int64_t v;
    while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (ts_cli_opt_int("critical-path", "--iteration", optarg, 0, INT64_MAX, &a->iteration)) return -1;
            break;
        case 'f':
            a->format = ts__report_format(optarg);
            if (a->format != TS_FMT_TABLE && a->format != TS_FMT_JSON) {
                ts_cli_errorf("critical-path: --format wants table or json, got '%s'", optarg);
                return -1;
            }
            break;
        case 'e': a->export_path = optarg; break;
        case 'l': a->leaf_ops = 1; break;
        case 'n': a->no_align = 1; break;
        case 't':
            if (ts_cli_opt_int("critical-path", "--top", optarg, 0, INT32_MAX, &v)) return -1;
            a->top = (int)v;
            break;
        case 'm': a->marker = optarg; break;
        case 'v': a->verbose = 1; break;
        TS_CLI_COMMON_CASES:
            if (ts_cli_opt_common("critical-path", c, optarg)) return -1;
            break;
        case 'h': usage(stdout); return 1;
        default:
            return ts_cli_opt_unknown("critical-path", argv[optind - 1]);
        }
    }
    if (ts_cli_need_trace("critical-path", optind, argc)) return -1;
    if (ts_cli_window_all()) {
        if (a->iteration >= 0) {
            ts_cli_errorf("critical-path: --iteration and --window all ask for different windows; give one");
            return -1;
        }
        a->iteration = TS_CP_WHOLE_TRACE;
    }
    return 0;
}

/* Own time on the path per (rank, kind, name), largest first; count = path
 * segments. The path's time in edge gaps that no op owns (untraced host time
 * between a thread's ops, a kernel queued after its launch, a transfer) is
 * listed too, per (rank, edge kind), so that the rows account for the whole
 * path: on trace_filter's rank 1, 477 of 624 ms were untraced time between
 * top-level ops, which no op row showed. */
typedef struct top_op { const char *name; int32_t rank; uint8_t kind; uint8_t gap; uint32_t count; int64_t ns; } top_op;

/* What the path waited for when it ran along an edge of kind k without an op. */
static const char *gap_name(ts_edge_kind k)
{
    switch (k) {
    case TS_EDGE_PROGRAM: return "host time between ops, in no node";
    case TS_EDGE_LAUNCH: return "launch call -> its GPU op starting";
    case TS_EDGE_STREAM: return "between GPU ops on a stream";
    case TS_EDGE_STREAM_WAIT: return "cross-stream event wait";
    case TS_EDGE_HOST_SYNC: return "GPU op end -> host sync returning";
    case TS_EDGE_FWDBWD: return "forward op -> its backward";
    case TS_EDGE_COLL_LAUNCH: return "collective call -> its kernel/worker";
    case TS_EDGE_WORKER: return "gloo worker result -> the op using it";
    case TS_EDGE_COLL_ENTER: return "collective arrival";
    case TS_EDGE_COLL_EXIT: return "collective transfer";
    case TS_EDGE_MPI_REQUEST: return "MPI request -> its wait";
    case TS_EDGE_DEP: return "execution-trace dependency";
    default: return ts__edge_kind_name(k);
    }
}

static const char *top_kind_name(const top_op *o)
{
    return o->gap ? "gap" : ts__node_kind_name((ts_node_kind)o->kind);
}

static int cmp_key(const void *x, const void *y)
{
    const top_op *a = x, *b = y;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->gap != b->gap) return a->gap < b->gap ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    return strcmp(a->name, b->name);
}
static int cmp_ns(const void *x, const void *y)
{
    const top_op *a = x, *b = y;
    return (a->ns < b->ns) - (a->ns > b->ns);
}

static top_op *top_ops(const ts_critical_path *cp, uint32_t *n_out)
{
    const ts_graph *g = cp->g;
    top_op *v = malloc(((size_t)cp->n_segs + 1) * sizeof *v);
    uint32_t n = 0;
    if (!v) return NULL;
    for (uint32_t i = 0; i < cp->n_segs; i++) {
        const ts_cp_segment *sg = &cp->segs[i];
        uint32_t nd = sg->owner;
        if (sg->dur_ns <= 0) continue;
        if (nd == TS_NONE32 && sg->edge != TS_NONE32) {   /* a gap no op owns: charge the rank it ran on */
            uint32_t at = g->nodes.rank[sg->node] != TS_GRAPH_NO_RANK ? sg->node : g->edges.src[sg->edge];
            if (g->nodes.rank[at] == TS_GRAPH_NO_RANK) continue;
            ts_edge_kind k = (ts_edge_kind)g->edges.kind[sg->edge];
            v[n++] = (top_op){gap_name(k), g->rank_number[g->nodes.rank[at]], (uint8_t)k, 1, 1, sg->dur_ns};
            continue;
        }
        if (nd == TS_NONE32 || g->nodes.rank[nd] == TS_GRAPH_NO_RANK) continue;
        v[n++] = (top_op){ts__graph_node_name(g, nd), g->rank_number[g->nodes.rank[nd]], g->nodes.kind[nd], 0, 1,
                          sg->dur_ns};
    }
    qsort(v, n, sizeof *v, cmp_key);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (m && !cmp_key(&v[m - 1], &v[i])) { v[m - 1].ns += v[i].ns; v[m - 1].count++; }
        else v[m++] = v[i];
    }
    qsort(v, m, sizeof *v, cmp_ns);
    *n_out = m;
    return v;
}

/* The rank others waited for longest on the path, -1 = none. */
static int straggler(const ts_critical_path *cp, int64_t *ns)
{
    int best = -1;
    *ns = 0;
    for (uint32_t r = 0; r < cp->g->n_ranks; r++)
        if (cp->wait_on_rank_ns[r] > *ns) { *ns = cp->wait_on_rank_ns[r]; best = (int)r; }
    return best;
}

static void print_json(const ts_trace *t, const ts_graph *g, const ts_critical_path *cp, const top_op *ops,
                       uint32_t n_ops, int top)
{
    ts_buf b;
    ts__buf_init(&b);
    ts_json j;
    ts__json_init(&j, &b);
    ts__json_obj_begin(&j);
    ts__json_kv_i64(&j, "iteration", cp->step);
    ts__json_kv_us(&j, "length_us", cp->end_ns - cp->start_ns);
    ts__json_kv_us(&j, "iteration_us", cp->window_ns);
    ts__json_kv_u64(&j, "path_nodes", cp->n_nodes);
    ts__json_key(&j, "categories");
    ts__json_obj_begin(&j);
    for (int c = 0; c < TS_CP_COUNT; c++) {
        char key[48];
        snprintf(key, sizeof key, "%s_us", ts_cp_category_name((ts_cp_category)c));
        ts__json_kv_us(&j, key, cp->cat_ns[c]);
    }
    ts__json_obj_end(&j);
    int64_t wait_ns;
    int s = straggler(cp, &wait_ns);
    ts__json_key(&j, "waited_for_rank");
    if (s >= 0) ts__json_i64(&j, g->rank_number[s]); else ts__json_null(&j);
    ts__json_key(&j, "wait_on_rank");
    ts__json_arr_begin(&j);
    for (uint32_t r = 0; r < g->n_ranks; r++) {
        if (!cp->wait_on_rank_ns[r]) continue;
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", g->rank_number[r]);
        ts__json_kv_us(&j, "wait_us", cp->wait_on_rank_ns[r]);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__json_key(&j, "top_ops");
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < n_ops && (int)i < top; i++) {
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", ops[i].rank);
        ts__json_kv_str(&j, "kind", top_kind_name(&ops[i]));
        ts__json_kv_str(&j, "name", ops[i].name);
        if (ops[i].gap) ts__json_kv_str(&j, "edge", ts__edge_kind_name((ts_edge_kind)ops[i].kind));
        ts__json_kv_u64(&j, "count", ops[i].count);
        ts__json_kv_us(&j, "total_us", ops[i].ns);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__json_key(&j, "path");   /* every node on the path in time order (barriers left out) */
    ts__json_arr_begin(&j);
    for (uint32_t i = 0; i < cp->n_nodes; i++) {
        uint32_t n = cp->nodes[i];
        if (g->nodes.rank[n] == TS_GRAPH_NO_RANK) continue;
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", g->rank_number[g->nodes.rank[n]]);
        ts__json_kv_str(&j, "kind", ts__node_kind_name((ts_node_kind)g->nodes.kind[n]));
        ts__json_kv_str(&j, "name", ts__graph_node_name(g, n));
        ts__json_kv_us(&j, "start_us", ts__graph_start(g, n));
        ts__json_kv_us(&j, "dur_us", g->nodes.dur_ns[n]);
        ts__json_kv_us(&j, "on_path_us", cp->node_ns[i]);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__json_key(&j, "ranks");
    ts__json_arr_begin(&j);
    for (uint32_t r = 0; r < g->n_ranks; r++) {
        ts__json_obj_begin(&j);
        ts__json_kv_i64(&j, "rank", g->rank_number[r]);
        ts__json_kv_str(&j, "file", g->trace->ranks[g->rank_model[r]]->path);
        ts__json_kv_i64(&j, "clock_offset_ns", g->align[r].offset_ns);
        ts__json_kv_u64(&j, "matched_collectives", g->align[r].n_matched);
        ts__json_kv_i64(&j, "residual_median_ns", g->align[r].resid_med_ns);
        ts__json_kv_i64(&j, "residual_max_ns", g->align[r].resid_max_ns);
        ts__json_kv_u64(&j, "causality_violations", g->align[r].n_violations);
        ts__json_obj_end(&j);
    }
    ts__json_arr_end(&j);
    ts__json_kv_u64(&j, "graph_nodes", g->nodes.n);
    ts__json_kv_u64(&j, "graph_edges", g->edges.n);
    ts__json_kv_u64(&j, "collectives", g->n_colls);
    uint32_t by_kind[TS_EDGE_KIND_COUNT] = {0};
    for (uint32_t e = 0; e < g->edges.n; e++) by_kind[g->edges.kind[e]]++;
    ts__json_key(&j, "edges_by_kind");
    ts__json_obj_begin(&j);
    for (int k = 0; k < TS_EDGE_KIND_COUNT; k++) ts__json_kv_u64(&j, ts__edge_kind_name((ts_edge_kind)k), by_kind[k]);
    ts__json_obj_end(&j);
    ts__report_warnings_json_open(&j, t);
    for (uint32_t i = 0; i < g->n_warnings; i++) ts__report_warning_json_line(&j, "graph", g->warnings[i]);
    for (uint32_t i = 0; i < cp->n_warnings; i++) ts__report_warning_json_line(&j, "critical_path", cp->warnings[i]);
    ts__json_arr_end(&j);
    ts__json_obj_end(&j);
    ts__buf_add(&b, "\n", 1);
    fwrite(b.s, 1, b.len, stdout);
    ts__buf_free(&b);
}

static void pct_line(const char *label, int64_t ns, int64_t total)
{
    printf("  %-22s %12.3f us  %5.1f%%\n", label, ns / 1e3, total > 0 ? 100.0 * (double)ns / (double)total : 0.0);
}

static void print_table(const ts_graph *g, const ts_critical_path *cp, const top_op *ops, uint32_t n_ops, int top)
{
    int64_t len = cp->end_ns - cp->start_ns;
    if (cp->step >= 0) printf("critical path of iteration %lld: %.3f us\n", (long long)cp->step, len / 1e3);
    else printf("critical path of the whole trace: %.3f us\n", len / 1e3);
    printf("  iteration span %.3f us, %u nodes on the path\n", cp->window_ns / 1e3, cp->n_nodes);
    printf("  %u ranks, %u graph nodes, %u edges, %u collectives matched\n\n", g->n_ranks, g->nodes.n, g->edges.n,
           g->n_colls);
    for (int c = 0; c < TS_CP_COUNT; c++) pct_line(ts_cp_category_name((ts_cp_category)c), cp->cat_ns[c], len);
    int64_t wait_ns;
    int s = straggler(cp, &wait_ns);
    if (s >= 0) printf("\n  ranks waited %.3f us for rank %d on the path\n", wait_ns / 1e3, g->rank_number[s]);
    if (g->n_ranks > 1) {
        printf("\n  %-6s %16s %12s %14s\n", "rank", "clock offset us", "matched", "residual us");
        for (uint32_t r = 0; r < g->n_ranks; r++)
            printf("  %-6d %16.3f %12u %14.3f\n", g->rank_number[r], g->align[r].offset_ns / 1e3,
                   g->align[r].n_matched, g->align[r].resid_max_ns / 1e3);
    }
    if (n_ops && top > 0) {
        printf("\n  %-5s %-11s %6s %12s  %s\n", "rank", "kind", "count", "time us", "op (or gap) on the path");
        for (uint32_t i = 0; i < n_ops && (int)i < top; i++) {
            /* keep 80 columns; long names differ at their end ("...function: AddmmBackward0") */
            size_t len_name = strlen(ops[i].name);
            const char *tail = len_name > 38 ? ops[i].name + len_name - 35 : ops[i].name;
            while (((unsigned char)*tail & 0xC0) == 0x80) tail++;   /* never start inside a UTF-8 character */
            printf("  %-5d %-11s %6u %12.3f  %s%s\n", ops[i].rank, top_kind_name(&ops[i]),
                   ops[i].count, ops[i].ns / 1e3, tail != ops[i].name ? "..." : "", tail);
        }
    }
}

static int run(const cp_args *a, ts_trace *t, ts_graph *g)
{
    ts_error err = {0};
    ts_critical_path *cp = NULL;
    int rc = ts_critical_path_create(g, a->iteration, &cp, &err);
    if (rc == TS_OK && a->export_path) rc = ts__chrome_export_critical_path(cp, a->export_path, &err);
    if (rc != TS_OK) {
        ts_cli_errorf("%s", err.msg[0] ? err.msg : ts_strerror(rc));
        ts_critical_path_destroy(cp);
        ts_graph_destroy(g);
        return rc == TS_ENODATA ? TS_EXIT_NOTHING : TS_EXIT_BAD;
    }
    uint32_t n_ops = 0;
    top_op *ops = top_ops(cp, &n_ops);
    if (a->format == TS_FMT_JSON) {
        print_json(t, g, cp, ops, n_ops, a->top);
    } else {
        const char **lines = malloc(((size_t)g->n_warnings + cp->n_warnings + 1) * sizeof *lines);
        uint32_t n_lines = 0;
        for (uint32_t i = 0; lines && i < g->n_warnings; i++) lines[n_lines++] = g->warnings[i];
        for (uint32_t i = 0; lines && i < cp->n_warnings; i++) lines[n_lines++] = cp->warnings[i];
        /* no memory for the list: every line, as before */
        ts__report_warnings_emit(stderr, t, lines, n_lines, !lines || ts__report_warn_all(a->verbose));
        free(lines);
        print_table(g, cp, ops, n_ops, a->top);
    }
    free(ops);
    ts_critical_path_destroy(cp);
    ts_graph_destroy(g);
    return TS_EXIT_OK;
}

int ts_cmd_critical_path(int argc, char **argv)
{
    cp_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc) return prc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    ts_trace *t = NULL;
    ts_graph *g = NULL;
    ts_graph_options go = {.size = sizeof go, .leaf_ops = a.leaf_ops, .no_align = a.no_align};
    int ex = ts_cli_load_graph(argv + optind, argc - optind, a.marker, a.export_path != NULL, &go, &t, &g);
    if (ex != TS_EXIT_OK) return ex;
    int code = run(&a, t, g);   /* destroys g */
    ts_trace_destroy(t);
    return code;
}
