/* op_fusion.c - the operator-fusion pass for PyTorch traces: chains of
 * pointwise ops (what a fusing compiler takes into one kernel) found in the
 * trace itself, priced with dPRO's --simulate estimate.
 *
 * Candidates: two pointwise ops one right after the other on one lane (CPU
 * thread or GPU stream) inside one iteration: aten:: elementwise and layout
 * (view, transpose, clone: no arithmetic) ops and their autograd nodes, or
 * GPU kernels named *elementwise*. Fusing pairs
 * (a,b) and (b,c) makes the cluster {a,b,c}. One var per pair of op names
 * and its ordinal among such pairs on its lane in the iteration, so a
 * fusion applies to every iteration and rank alike (the same program).
 * Estimate (dPRO's, without an XLA cost model): a fused kernel takes the sum
 * of its ops' times less the overhead each op after the first no longer
 * pays; that overhead is the op's floor, the least self time any op of its
 * name has in the trace (what it costs doing almost nothing: dispatch and
 * launch). The memory traffic a fused op saves is not counted: the traces
 * here carry no tensor sizes, so the estimate is conservative. Applied as
 * retimes of the later ops (ts_replay_options.retime_*).
 * With an XLA candidate list (op_fusion_xla.c) the candidates are instead
 * two listed ops back to back on a lane, and the rule may be dPRO's
 * --simulate one (every op but a cluster's last at 0.8 of its time: the
 * earlier op of a fused pair is retimed) or the fixed cost (alpha) of the
 * model fitted on dPRO's timing tables (dpro_table.c) in place of the floor.
 */
#include <stdio.h>

#include "graph/graph.h"
#include "optimize/cost_model.h"
#include "optimize/op_fusion.h"

static const char *const POINTWISE[] = {
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "relu", "relu_", "gelu", "silu", "sigmoid",
    "tanh", "neg", "exp", "sqrt", "rsqrt", "pow", "dropout", "native_dropout", "threshold_backward",
    "gelu_backward", "sigmoid_backward", "tanh_backward", "where", "clamp", "masked_fill", "addcmul_", "addcdiv_",
    /* layout ops: no arithmetic, a fusing compiler folds them into the kernel's indexing */
    "view", "reshape", "transpose", "t", "permute", "contiguous", "clone", "expand", "squeeze", "unsqueeze",
};
static const char *const POINTWISE_GRAD[] = {
    "AddBackward0", "SubBackward0", "MulBackward0", "DivBackward0", "ReluBackward0", "GeluBackward0",
    "SiluBackward0", "SigmoidBackward0", "TanhBackward0", "NegBackward0", "ExpBackward0", "PowBackward0",
    "SqrtBackward0", "RsqrtBackward0", "NativeDropoutBackward0", "ThresholdBackward0",
    "ViewBackward0", "TransposeBackward0", "TBackward0", "UnsafeViewBackward0", "PermuteBackward0",
    "ExpandBackward0", "SqueezeBackward0", "UnsqueezeBackward0", "CloneBackward0", "ReshapeAliasBackward0",
};

bool ts__opf_pointwise(const char *name, bool kernel)
{
    if (kernel) return strstr(name, "elementwise") != NULL;
    static const char grad_prefix[] = "autograd::engine::evaluate_function: ";
    if (!strncmp(name, grad_prefix, sizeof grad_prefix - 1)) {
        name += sizeof grad_prefix - 1;
        for (size_t i = 0; i < sizeof POINTWISE_GRAD / sizeof *POINTWISE_GRAD; i++)
            if (!strcmp(name, POINTWISE_GRAD[i])) return true;
        return false;
    }
    if (strncmp(name, "aten::", 6)) return false;
    for (size_t i = 0; i < sizeof POINTWISE / sizeof *POINTWISE; i++)
        if (!strcmp(name + 6, POINTWISE[i])) return true;
    return false;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull;
}

static bool fusable(const ts_graph *g, const ts_opf_cfg *cfg, uint32_t n)
{
    uint8_t k = g->nodes.kind[n];
    if ((k != TS_NODE_CPU_OP && k != TS_NODE_KERNEL) || g->nodes.iteration[n] < 0) return false;
    const char *name = ts__graph_node_name(g, n);
    return cfg->xla ? ts__xla_has(cfg->xla, name) : ts__opf_pointwise(name, k == TS_NODE_KERNEL);
}

/* Each op name's floor: the least self time of any node of that name. */
static int floors(const ts_graph *g, const ts_opf_cfg *cfg, ts_map64 *floor_of)
{
    for (uint32_t n = 0; cfg->rule == TS_OPF_FLOOR && n < g->nodes.n; n++) {
        if (g->nodes.rank[n] == TS_GRAPH_NO_RANK || !fusable(g, cfg, n)) continue;
        uint64_t key = hash_str(1469598103934665603ull, ts__graph_node_name(g, n)), v;
        uint64_t self = (uint64_t)ts__graph_self(g, n);
        if (!ts__map64_get(floor_of, key, &v) || self < v)
            if (ts__map64_put(floor_of, key, self)) return TS_ENOMEM;
    }
    return TS_OK;
}

static int add_instance(ts_opf *f, uint32_t a, uint32_t b, uint32_t var, uint32_t node, int64_t fused_ns)
{
    const ts_col_ref cols[] = {{(void **)&f->inst_a, sizeof *f->inst_a}, {(void **)&f->inst_b, sizeof *f->inst_b},
                               {(void **)&f->inst_var, sizeof *f->inst_var},
                               {(void **)&f->inst_node, sizeof *f->inst_node},
                               {(void **)&f->inst_fused_ns, sizeof *f->inst_fused_ns}};
    if (ts__grow_cols(cols, 5, &f->cap_inst, (size_t)f->n_inst + 1, 64)) return TS_ENOMEM;
    f->inst_a[f->n_inst] = a;
    f->inst_b[f->n_inst] = b;
    f->inst_var[f->n_inst] = var;
    f->inst_node[f->n_inst] = node;
    f->inst_fused_ns[f->n_inst++] = fused_ns;
    return TS_OK;
}

/* The var of pair (a, b): its names and its ordinal among such pairs on
 * the lane in the iteration (counted in seen). */
static int var_of(ts_opf *f, const ts_graph *g, uint32_t a, uint32_t b, ts_map64 *seen, ts_map64 *vars,
                  uint32_t *var)
{
    uint64_t pair = hash_str(hash_str(1469598103934665603ull, ts__graph_node_name(g, a)), ts__graph_node_name(g, b));
    uint64_t at = (pair ^ ((uint64_t)g->nodes.lane[a] << 20) ^ ((uint64_t)(uint32_t)g->nodes.iteration[a] << 42)) *
                  0x9E3779B97F4A7C15ull, count = 0;
    ts__map64_get(seen, at, &count);
    if (ts__map64_put(seen, at, count + 1)) return TS_ENOMEM;
    uint64_t key = (pair + count * 0x9E3779B97F4A7C15ull) | 1, v;
    if (ts__map64_get(vars, key, &v)) { *var = (uint32_t)v; return TS_OK; }
    if (ts__grow((void **)&f->var_rep, &f->cap_vars, sizeof *f->var_rep, (size_t)f->n_vars + 1)) return TS_ENOMEM;
    f->var_rep[f->n_vars] = f->n_inst;   /* the instance about to be added */
    *var = f->n_vars++;
    return ts__map64_put(vars, key, *var);
}

/* The node a fused pair (a, b) retimes and its time once fused; TS_ENOENT
 * when the table has no time for it. */
static int fused_time(const ts_graph *g, const ts_opf_cfg *cfg, const ts_map64 *floor_of, uint32_t a, uint32_t b,
                      uint32_t *node, int64_t *ns)
{
    *node = b;
    uint64_t fixed = 0;
    if (cfg->rule == TS_OPF_SIMULATE) {
        *node = a;
        *ns = (int64_t)((double)ts__graph_self(g, a) * TS_OPF_SIMULATE_RATIO + 0.5);
        return TS_OK;
    }
    const char *name = ts__graph_node_name(g, b);
    if (cfg->rule == TS_OPF_TABLE) {
        const ts_cost_fit *fit = ts__cost_lookup(cfg->table, name);
        if (!fit) return TS_ENOENT;
        fixed = (uint64_t)(fit->alpha_ns + 0.5);
    } else {
        ts__map64_get(floor_of, hash_str(1469598103934665603ull, name), &fixed);
    }
    int64_t fused = ts__graph_self(g, b) - (int64_t)fixed;
    *ns = fused > 0 ? fused : 0;
    return TS_OK;
}

int ts__opf_find(ts_opf *f, const ts_graph *g, const ts_opf_cfg *cfg, ts_error *err)
{
    memset(f, 0, sizeof *f);
    ts_map64 floor_of, seen, vars;
    ts__map64_init(&floor_of);
    ts__map64_init(&seen);
    ts__map64_init(&vars);
    uint32_t *last = ts__malloc(((size_t)g->n_lanes + 1) * sizeof *last);
    int rc = last ? floors(g, cfg, &floor_of) : TS_ENOMEM;
    for (uint32_t l = 0; last && l <= g->n_lanes; l++) last[l] = TS_NONE32;
    for (uint32_t b = 0; rc == TS_OK && b < g->nodes.n; b++) {
        if (g->nodes.rank[b] == TS_GRAPH_NO_RANK) continue;
        uint32_t lane = g->nodes.lane[b], a = last[lane];
        last[lane] = b;
        if (a == TS_NONE32 || !fusable(g, cfg, b) || !fusable(g, cfg, a) ||
            g->nodes.iteration[a] != g->nodes.iteration[b] || g->nodes.kind[a] != g->nodes.kind[b])
            continue;
        uint32_t var, node;
        int64_t fused;
        if ((rc = fused_time(g, cfg, &floor_of, a, b, &node, &fused))) {
            ts__error(err, TS_EFORMAT, "optimize: %s: no time for op '%s' (a timing table for another graph?)",
                      cfg->table_name ? cfg->table_name : "the timing table", ts__graph_node_name(g, b));
            rc = TS_EFORMAT;
            break;
        }
        rc = var_of(f, g, a, b, &seen, &vars, &var);
        if (rc == TS_OK) rc = add_instance(f, a, b, var, node, fused);
    }
    ts__free(last, ((size_t)g->n_lanes + 1) * sizeof *last);
    ts__map64_free(&floor_of);
    ts__map64_free(&seen);
    ts__map64_free(&vars);
    f->rt_nodes = ts__malloc((size_t)f->n_inst * sizeof *f->rt_nodes + 1);
    f->rt_ns = ts__malloc((size_t)f->n_inst * sizeof *f->rt_ns + 1);
    if (rc == TS_OK && (!f->rt_nodes || !f->rt_ns)) rc = TS_ENOMEM;
    if (rc) { ts__opf_free(f); return rc == TS_EFORMAT ? rc : ts__error(err, rc, "optimize: out of memory"); }
    return TS_OK;
}

void ts__opf_free(ts_opf *f)
{
    ts__free(f->inst_a, (size_t)f->cap_inst * sizeof *f->inst_a);
    ts__free(f->inst_b, (size_t)f->cap_inst * sizeof *f->inst_b);
    ts__free(f->inst_var, (size_t)f->cap_inst * sizeof *f->inst_var);
    ts__free(f->inst_node, (size_t)f->cap_inst * sizeof *f->inst_node);
    ts__free(f->inst_fused_ns, (size_t)f->cap_inst * sizeof *f->inst_fused_ns);
    ts__free(f->var_rep, (size_t)f->cap_vars * sizeof *f->var_rep);
    ts__free(f->rt_nodes, (size_t)f->n_inst * sizeof *f->rt_nodes + 1);
    ts__free(f->rt_ns, (size_t)f->n_inst * sizeof *f->rt_ns + 1);
    memset(f, 0, sizeof *f);
}

uint32_t ts__opf_retimes(ts_opf *f, const uint8_t *vars)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->n_inst; i++) {
        if (vars[f->inst_var[i]]) continue;   /* 1 = not fused */
        f->rt_nodes[n] = f->inst_node[i];
        f->rt_ns[n++] = f->inst_fused_ns[i];
    }
    return n;
}

void ts__opf_write_mapping(const ts_opf *f, const ts_graph *g, const uint8_t *vars, ts_buf *b)
{
    /* the clusters of one rank and iteration (the first instance's): each
     * fused pair joins b to a's cluster; ops in lane order */
    ts__buf_puts(b, "# cluster_mapping.txt (dPRO's format: op name, cluster id), written by trainscope optimize\n");
    if (!f->n_inst) return;
    uint16_t rank = g->nodes.rank[f->inst_a[0]];
    int32_t iter = g->nodes.iteration[f->inst_a[0]];
    uint32_t cluster = 0, open_b = TS_NONE32;
    for (uint32_t i = 0; i < f->n_inst; i++) {
        uint32_t a = f->inst_a[i], bb = f->inst_b[i];
        if (vars[f->inst_var[i]] || g->nodes.rank[a] != rank || g->nodes.iteration[a] != iter) continue;
        if (a != open_b) {   /* a new cluster starts at a */
            ts__buf_printf(b, "%s %u\n", ts__graph_node_name(g, a), ++cluster);
        }
        ts__buf_printf(b, "%s %u\n", ts__graph_node_name(g, bb), cluster);
        open_b = bb;
    }
}
