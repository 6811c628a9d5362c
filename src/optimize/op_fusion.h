/* op_fusion.h - the operator-fusion pass (op_fusion.c): candidate pairs of
 * pointwise ops found in a graph, one search var per recurring pair. */
#ifndef TS_OPTIMIZE_OP_FUSION_H
#define TS_OPTIMIZE_OP_FUSION_H

#include "core/core.h"
#include "trainscope/graph.h"

typedef struct ts_opf {
    uint32_t  n_vars;          /* distinct pairs: var 0 = fused, 1 = apart (the trace) */
    uint32_t *var_rep;         /* [n_vars]: an instance of it, for words */
    uint32_t  cap_vars;
    uint32_t  n_inst, cap_inst;
    uint32_t *inst_a, *inst_b; /* graph rows: b runs right after a on one lane */
    uint32_t *inst_var;
    int64_t  *inst_fused_ns;   /* b's self time once fused into a's kernel */
    uint32_t *rt_nodes;        /* [n_inst] scratch: the retimes of a strategy */
    int64_t  *rt_ns;
} ts_opf;

bool ts__opf_pointwise(const char *name, bool kernel);
TS_NODISCARD int ts__opf_find(ts_opf *f, const ts_graph *g, ts_error *err);
void ts__opf_free(ts_opf *f);
/* Fill rt_nodes / rt_ns for the fused vars (vars[v] == 0); returns their count. */
uint32_t ts__opf_retimes(ts_opf *f, const uint8_t *vars);
/* dPRO's cluster_mapping.txt of the fused vars, for one rank and iteration. */
void ts__opf_write_mapping(const ts_opf *f, const ts_graph *g, const uint8_t *vars, ts_buf *b);

#endif
