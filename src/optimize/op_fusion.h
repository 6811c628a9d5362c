/* op_fusion.h - the operator-fusion pass (op_fusion.c): candidate pairs of
 * pointwise ops (or of ops an XLA candidate list names, op_fusion_xla.c)
 * found in a graph, one search var per recurring pair. */
#ifndef TS_OPTIMIZE_OP_FUSION_H
#define TS_OPTIMIZE_OP_FUSION_H

#include "core/core.h"
#include "trainscope/graph.h"

struct ts_cost_model;

typedef struct ts_opf {
    uint32_t  n_vars;          /* distinct pairs: var 0 = fused, 1 = apart (the trace) */
    uint32_t *var_rep;         /* [n_vars]: an instance of it, for words */
    uint32_t  cap_vars;
    uint32_t  n_inst, cap_inst;
    uint32_t *inst_a, *inst_b; /* graph rows: b runs right after a on one lane */
    uint32_t *inst_var;
    uint32_t *inst_node;       /* the node the fusion retimes (b, or a under TS_OPF_SIMULATE) */
    int64_t  *inst_fused_ns;   /* its self time once fused */
    uint32_t *rt_nodes;        /* [n_inst] scratch: the retimes of a strategy */
    int64_t  *rt_ns;
} ts_opf;

/* An XLA candidate list (op_fusion_xla.c): the op names dPRO may fuse. */
typedef struct ts_xla {
    char     *file;            /* owned: for errors */
    char    **name;            /* [n] owned */
    uint32_t *line;            /* [n]: where each is listed */
    uint32_t  n, cap;
    ts_map64  set;             /* name hash -> index */
} ts_xla;
uint64_t ts__opf_name_hash(const char *s, size_t n);
TS_NODISCARD int ts__xla_parse(ts_xla *x, const char *file, const char *data, size_t n, ts_error *err);
TS_NODISCARD int ts__xla_load(ts_xla *x, const char *path, ts_error *err);
void ts__xla_free(ts_xla *x);
bool ts__xla_has(const ts_xla *x, const char *name);
/* TS_EFORMAT `FILE: line N: op 'X' is not in the trace` for the first
 * listed op no node of g is named. */
TS_NODISCARD int ts__xla_check(const ts_xla *x, const ts_graph *g, ts_error *err);

/* How candidates are found and priced. */
typedef enum ts_opf_rule {
    TS_OPF_FLOOR = 0,   /* the fused op sheds its floor (least self time of its name in the trace) */
    TS_OPF_SIMULATE,    /* dPRO's --simulate: every op but a cluster's last takes 0.8 of its time */
    TS_OPF_TABLE,       /* the fused op sheds alpha, its fixed cost in the model fitted on dPRO's tables */
} ts_opf_rule;
typedef struct ts_opf_cfg {
    const ts_xla  *xla;          /* NULL: PyTorch pointwise ops; else only listed ops (any kind) */
    ts_opf_rule    rule;
    const struct ts_cost_model *table;   /* TS_OPF_TABLE: alpha per op name */
    const char    *table_name;   /* for errors */
} ts_opf_cfg;
#define TS_OPF_SIMULATE_RATIO 0.8   /* dPRO's SIMULATE_FUSION_RATIO (cost_model/op_fusion.py) */

bool ts__opf_pointwise(const char *name, bool kernel);
TS_NODISCARD int ts__opf_find(ts_opf *f, const ts_graph *g, const ts_opf_cfg *cfg, ts_error *err);
void ts__opf_free(ts_opf *f);
/* Fill rt_nodes / rt_ns for the fused vars (vars[v] == 0); returns their count. */
uint32_t ts__opf_retimes(ts_opf *f, const uint8_t *vars);
/* dPRO's cluster_mapping.txt of the fused vars, for one rank and iteration. */
void ts__opf_write_mapping(const ts_opf *f, const ts_graph *g, const uint8_t *vars, ts_buf *b);

#endif
