/* memgraph.h - the memory module's internal model: kernels and tensors of one
 * training iteration read from a torch.fx / AOTAutograd forward+backward pair,
 * plus the liveness, time and curve results computed on them.
 *
 * Not for traces (those are ts_model); not a general Python reader.
 *
 * Layout (all arrays owned by ts_memgraph, grown with ts__grow):
 *   tensors[]  one row per tensor, in creation order (forward primals first,
 *              then every op output in program order, then backward-only
 *              parameters such as tangents_1 when the backward header is read).
 *   kernels[]  one row per executed op, in program order; kernel id = index.
 *   refs[]     kernel inputs then outputs, as (tensor, name used, annotation):
 *              a tensor can be used under an alias name (G10 prints that name).
 * Invariants: every ref names an existing tensor; a kernel's refs are
 * contiguous ([first_ref, first_ref + n_in + n_out)); tensor.base is the row
 * that owns the storage (itself unless the tensor is a view in exact mode);
 * base rows always come before the rows that alias them.
 */
#ifndef TS_MEMORY_MEMGRAPH_H
#define TS_MEMORY_MEMGRAPH_H

#include <stdbool.h>
#include "core/core.h"
#include "trainscope/memory.h"

#define TS__MEM_MAX_DIMS 8

typedef struct ts__mem_tensor {
    uint32_t name_id;      /* strpool id of the defining name */
    uint32_t ann_id;       /* strpool id of its type, e.g. "f32[64, 3, 224, 224]" */
    int64_t  elems;        /* number of elements (1 for a scalar []) */
    int64_t  bytes;        /* storage bytes; 0 for a view in exact mode */
    uint32_t base;         /* row owning the storage (== own row unless a view) */
    uint8_t  elem_bytes;   /* bytes per element under the active rules */
    bool     is_global;    /* forward primal: weight, buffer or input batch */
    bool     is_returned;  /* returned by the backward graph (a gradient) */
    bool     is_fwd_output;/* returned by the forward graph */
    bool     is_bwd_input; /* a backward parameter: saved for backward, or a tangent */
    /* liveness, filled by ts__mem_liveness(): */
    int32_t  birth;        /* first kernel that reads or writes it; -1 = never used */
    int32_t  death;        /* last kernel reading it + 1; -1 = never read (G10) */
    uint32_t first_period; /* index into periods[] */
    uint32_t n_periods;
} ts__mem_tensor;

typedef struct ts__mem_ref {
    uint32_t tensor;       /* row in tensors[] */
    uint32_t name_id;      /* name the op used for it (an alias name in G10 mode) */
    uint32_t ann_id;       /* that name's annotated type */
} ts__mem_ref;

typedef struct ts__mem_kernel {
    uint32_t call_id;      /* strpool id of "torch.ops.aten.op.overload(args)" */
    uint32_t op_id;        /* strpool id of "op" (aten name without overload) */
    uint32_t first_ref;    /* first input in refs[] */
    uint16_t n_in, n_out;  /* inputs, then outputs, follow first_ref */
    uint32_t line;         /* 1-based line in its file */
    uint8_t  in_backward;  /* 0 forward file, 1 backward file */
    bool     is_view;      /* op only re-describes its input's storage */
    int64_t  time_ns;      /* duration; -1 until times are set */
    double   ms;           /* the time as its source gave it, in ms (G10's cycle arithmetic); -1 = none */
    double   flops;        /* roofline work estimate */
} ts__mem_kernel;

typedef struct ts__mem_period {
    int32_t start;         /* first idle kernel (G10's "a" of a--------b) */
    int32_t end;           /* next kernel that uses it; start > end wraps around */
    int64_t est_ns;        /* time from start to end; -1 when times unknown */
} ts__mem_period;

struct ts_memgraph {
    ts_mem_options   opt;
    ts_strpool       names;
    ts__mem_tensor  *tensors;  uint32_t n_tensors, cap_tensors;
    ts__mem_kernel  *kernels;  uint32_t n_kernels, cap_kernels;
    ts__mem_ref     *refs;     uint32_t n_refs, cap_refs;
    ts__mem_period  *periods;  uint32_t n_periods, cap_periods;
    double          *start_us; /* n_kernels+1 prefix sums of times in us (G10's own arithmetic) */
    int64_t         *alive;    /* n_kernels: bytes alive while kernel k runs */
    int64_t          global_bytes; /* sum of global tensors */
    bool             have_times;
    bool             analyzed;     /* ts_memgraph_analyze() ran; summary is valid */
    ts_mem_summary   summary;
    char             time_source[64]; /* "time table", "roofline a100", ... */
    char             files[2][512];   /* forward and backward paths, for messages */
    ts_map64         byname;   /* name id -> row | (uint64 ann_id << 32); live during load */
    int32_t          pending;  /* kernel awaiting its getitem outputs; -1 = none */
    uint32_t         pending_name; /* name id of that kernel's tuple variable */
    uint32_t        *fwd_ret;  uint32_t n_fwd_ret, cap_fwd_ret; /* rows the forward returns, in order */
    uint32_t         n_tangents;   /* tangents_N inputs of the backward */
};

/* precision.c: apply a --precision-plan file to the tensor sizes */
int ts__mem_precision_plan(ts_memgraph *g, const char *path, ts_error *err);
/* memgraph.c: a graph from two dumps already in memory (names label errors) */
int ts__mem_load_text(const char *const names[2], const char *const texts[2], const size_t lens[2],
                      const ts_mem_options *opt, ts_memgraph **out, ts_error *err);
/* fx_reader.c */
int ts__mem_read_fx(ts_memgraph *g, int which, const char *text, size_t len, ts_error *err);
/* liveness.c */
int ts__mem_liveness(ts_memgraph *g);
int ts__mem_curve(ts_memgraph *g);
/* Is the period long enough to move the tensor out and back at gbps? */
bool ts__mem_offloadable(const ts_memgraph *g, const ts__mem_tensor *t, const ts__mem_period *p,
                         double gbps);
/* liveness.c: the tensors alive while kernel k runs, largest first; returns count */
uint32_t ts__mem_alive_at(const ts_memgraph *g, int32_t k, uint32_t *rows, uint32_t cap);
/* liveness.c: tensor rows by bytes, largest first (ties by row) */
void ts__mem_sort_by_bytes(const ts_memgraph *g, uint32_t *rows, uint32_t n);
/* helpers shared by the writers */
static inline const char *ts__mem_name(const ts_memgraph *g, uint32_t id) { return ts__str(&g->names, id); }

/* Append a point to a measured memory curve (timeline.c), doubling its
 * arrays; TS_ENOMEM leaves it as it was. */
int ts__mem_curve_push(ts_mem_curve *c, int64_t ns, int64_t bytes);

#endif
