/* precision.h - mixed-precision what-ifs from traces (seed 001, QSync's
 * predictor): per-op times at each precision read from profiled runs of one
 * model at fp32 and at a lower precision, ops mapped across the runs, a
 * casting cost alpha * bytes + beta fitted on the runs' own cast ops, and the
 * iteration time and peak memory a precision plan predicts; plus QSync's
 * greedy plan search.
 *
 * Ownership: ts_prec_model_create() makes a model owned by the caller, freed
 * with ts_prec_model_destroy(); it keeps no pointer into the traces. Times
 * are int64 nanoseconds; sizes are bytes.
 *
 * Model of one iteration (docs/precision.md has the whole rule set):
 *   op       the outermost slice whose name contains "::" (aten::linear,
 *            autograd::engine::evaluate_function: AddmmBackward0); slices
 *            around ops (record_function ranges, nn.Module names) are scopes;
 *   unit     a forward op that is not a cast (aten::to, aten::_to_copy), with
 *            the cast op just before it (its entry cast), and the backward
 *            ops whose "Sequence number" is that of an op inside it;
 *   other    every other op (AccumulateGrad, optimizer): precision-free,
 *            timed from the fp32 run.
 * Units map across runs by position in forward program order, names equal.
 */
#ifndef TRAINSCOPE_PRECISION_H
#define TRAINSCOPE_PRECISION_H

#include <stdbool.h>
#include <stdio.h>
#include "trainscope/common.h"
#include "trainscope/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ts_precision { TS_PREC_FP32 = 0, TS_PREC_BF16, TS_PREC_FP16, TS_PREC_INT8, TS_PREC_COUNT } ts_precision;
TS_API const char *ts_precision_name(ts_precision p);            /* "fp32", "bf16", ... */
TS_API int ts_precision_bytes(ts_precision p);                   /* 4, 2, 2, 1 */
/* "fp32"/"f32"/"float32", "bf16"/"bfloat16", "fp16"/"f16"/"half", "int8"/"i8"; false if unknown */
TS_API bool ts_precision_from_name(const char *name, ts_precision *out);

typedef struct ts_prec_model ts_prec_model;

/* Build the model from one run per precision: traces[TS_PREC_FP32] is
 * required, the others may be NULL; paths[] name them in messages. Each run
 * must hold iterations (ProfilerStep#N) of the same training step on one CPU
 * thread. Fails with TS_EFORMAT naming the run and the first op that cannot
 * be mapped (another model, another op order). */
TS_API TS_NODISCARD int ts_prec_model_create(const ts_job *const traces[TS_PREC_COUNT],
                                             const char *const paths[TS_PREC_COUNT],
                                             ts_prec_model **out, ts_error *err);
TS_API void ts_prec_model_destroy(ts_prec_model *m);

/* The casting cost over the runs' top-level cast ops: time = alpha * bytes
 * + beta, bytes = elements x 6 (an fp32 <-> 16-bit cast reads one and
 * writes the other), a Theil-Sen line (median of pairwise slopes, then of
 * the intercepts): a cast a busy machine slowed does not set it. */
typedef struct ts_prec_cast_fit {
    double   alpha_ns_per_byte;
    double   beta_ns;
    uint32_t n_casts;             /* casts the fit used */
    double   median_abs_err_pct;  /* on those casts (in sample) */
} ts_prec_cast_fit;
TS_API void ts_prec_model_cast_fit(const ts_prec_model *m, ts_prec_cast_fit *out);
/* Casts of any run (e.g. one held out): elements and duration of each
 * top-level aten::to / aten::_to_copy with "Input Dims" (on GPU runs: the
 * time of the GPU ops it launched; casts that launch none are left out).
 * Fills up to cap; returns how many there are, UINT32_MAX when memory ran
 * out. */
TS_API uint32_t ts_prec_trace_casts(const ts_job *t, int64_t *elems, int64_t *dur_ns, uint32_t cap);

typedef struct ts_prec_unit_info {
    const char *op;              /* e.g. "aten::linear" (valid while the model lives) */
    const char *scope;           /* innermost enclosing range, "" = none */
    int64_t     input_elems;     /* elements of its first input, -1 = unknown */
    int64_t     fwd_ns[TS_PREC_COUNT];  /* 20% trimmed mean over iterations; -1 = no run */
    int64_t     bwd_ns[TS_PREC_COUNT];
} ts_prec_unit_info;
TS_API uint32_t ts_prec_model_n_units(const ts_prec_model *m);
TS_API void     ts_prec_model_unit(const ts_prec_model *m, uint32_t i, ts_prec_unit_info *out);
/* Precisions the model has runs for, as a bit set over ts_precision. */
TS_API uint32_t ts_prec_model_precisions(const ts_prec_model *m);
/* Bytes alive when the fp32 run's step starts (weights, buffers, the batch:
 * no plan goes below them); -1 when the runs hold no memory events. */
TS_API int64_t  ts_prec_model_base_bytes(const ts_prec_model *m);
/* Lines about ops of a lower-precision run left out (not mapped), one per
 * op; they are warnings, not errors, for "other" ops only. */
TS_API uint32_t ts_prec_model_n_notes(const ts_prec_model *m);
TS_API const char *ts_prec_model_note(const ts_prec_model *m, uint32_t i);

/* A plan: one precision per unit. Read a plan file (the format `memory
 * --precision-plan` takes: "<op|name:prefix|*> <fp32|bf16|fp16|int8>", '#'
 * comments, later rules win; "op" matches the op name with or without
 * "aten::", "name:P" a unit whose scope or op name starts with P, "op:N"
 * the N-th unit, as the greedy search prints plans). A rule
 * that matches no unit, or a precision the model has no run for, is an
 * error naming the file and line. prec[] has ts_prec_model_n_units() rows. */
/* Does plan pattern pat ("*", "aten::op" or "op", "name:P", "op:N") match unit u? */
TS_API bool ts_prec_model_matches(const ts_prec_model *m, uint32_t u, const char *pat);
TS_API TS_NODISCARD int ts_prec_plan_load(const ts_prec_model *m, const char *path, uint8_t *prec, ts_error *err);
/* Accuracy indicators for the greedy search: a file of "<pattern> <value>"
 * lines (patterns as a plan's, value >= 0, later lines win), 1 for a unit
 * no line names; path NULL: 1 each. ind[] has ts_prec_model_n_units() rows.
 * A bad line or a pattern that matches no unit is an error "FILE:N: what". */
TS_API TS_NODISCARD int ts_prec_indicators_load(const ts_prec_model *m, const char *path, double *ind,
                                                ts_error *err);

/* AMP-style op lists as what may change: a torch autocast op list (op
 * names such as linear, conv2d, aten::addmm, separated by blanks, commas or
 * lines) or dPRO's / TensorFlow's auto mixed precision settings (lines
 * TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_<LIST>_ADD=Op1,Op2 with LIST one of
 * ALLOWLIST, WHITELIST, PRIORLIST, INFERLIST, GRAYLIST, CLEARLIST: may
 * change; DENYLIST_ADD, BLACKLIST_ADD and any *_REMOVE: stay fp32;
 * PRIORLIST_FILE=PATH: that file's ops, one a line, PATH relative to the
 * list's folder; other TF_AUTO_MIXED_PRECISION_* keys (FORCE, LEVEL) are
 * taken as read; an "export " prefix is allowed). Names match a unit's op
 * case-insensitively, with or without "aten::". allowed[u] = 1 for units
 * that may change (ts_prec_model_n_units() rows); *n_allowed counts them. A
 * list none of whose ops the fp32 run has, a key of another kind, or an
 * unreadable PRIORLIST_FILE is an error "FILE:N: what" (TS_EPARSE/TS_ENOENT/
 * TS_EIO). */
TS_API TS_NODISCARD int ts_prec_allow_list_load(const ts_prec_model *m, const char *path, uint8_t *allowed,
                                                uint32_t *n_allowed, ts_error *err);

/* The casting cost fitted on any trace's top-level cast ops (as
 * ts_prec_model_cast_fit, e.g. a precision run given to price the casts of
 * another what-if). TS_ENODATA when the trace holds fewer than two casts of
 * different sizes (no line can be fitted), TS_ENOMEM. */
TS_API TS_NODISCARD int ts_prec_cast_fit_trace(const ts_job *t, ts_prec_cast_fit *out);

/* The profiler's cost per profiled slice (its record_function, shapes and
 * memory records), measured apart (bench/precision_gt.py measures it on
 * trivial ops): every time the model takes from the runs is reduced by it
 * times the slices inside, so predictions are for the step unprofiled.
 * 0 (the default) keeps the runs' times. */
TS_API void ts_prec_model_set_overhead(ts_prec_model *m, double ns_per_slice);

typedef struct ts_prec_prediction {
    int64_t  iteration_ns;        /* predicted step time */
    int64_t  fp32_iteration_ns;   /* the fp32 run's step (trimmed mean), as measured (less the overhead, when set) */
    int64_t  peak_bytes;          /* predicted peak memory; -1 = the runs hold no memory events */
    int64_t  fp32_peak_bytes;     /* the fp32 run's peak as recorded; -1 = none */
    uint32_t n_casts;             /* casts the plan adds where adjacent units differ (forward + backward) */
    int64_t  cast_ns;             /* their time */
    double   change_pct;          /* iteration_ns against fp32_iteration_ns in percent; 0 when
                                     the fp32 step is not positive */
} ts_prec_prediction;
/* Predict a plan (prec[] as ts_prec_plan_load fills it). */
TS_API void ts_prec_predict(const ts_prec_model *m, const uint8_t *prec, ts_prec_prediction *out);

/* What the greedy search changes at a time. TS_PREC_BY_MODULE (the
 * default): a module, as a per-module autocast plan applies it
 * (python/trainscope_precision.py apply(), the greedy.plan of `optimize
 * --passes precision`): the units whose scope (innermost record_function
 * range) is a module's qualified name (letters, digits, '_' and '.': not
 * ProfilerStep#N nor Optimizer.step#...) are lowered together, priced
 * together and their memory counted together; units in no module stay at
 * `high` (a per-module plan cannot reach them). TS_PREC_BY_OP: every unit on
 * its own, for plans applied per op (a `replay --precision-plan` what-if,
 * frameworks that set each op's type). */
typedef enum ts_prec_granularity { TS_PREC_BY_MODULE = 0, TS_PREC_BY_OP = 1 } ts_prec_granularity;
/* The module of unit u for per-module plans: its scope when that is a
 * module's qualified name, else NULL (valid while the model lives). */
TS_API const char *ts_prec_model_unit_module(const ts_prec_model *m, uint32_t u);

/* QSync's greedy search over groups (`by`: a module's units, or one unit):
 * start from all units at `high`; repeatedly lower to `low` the group with
 * the most time saved per unit of its indicator (indicator NULL = 1 each;
 * values <= 1e-12 count as 1e-12; INFINITY pins a unit at `high`, as an allow
 * list's outsiders are; a module's indicator is the largest of its units'
 * that take a tensor, counted once), while the sum of lowered indicators
 * stays within accuracy_budget; stop when no group saves time.
 * memory_limit_bytes > 0: a lowering that takes a fitting plan over the
 * limit is passed over; if the plan's peak is over the limit, go on lowering
 * runs of adjacent groups, the one losing the least time per peak byte
 * saved (the cheapest that fits on its own when it costs no more), until it
 * fits; then raise back, best first, any lowered group whose raising saves
 * time and keeps the plan within the limit. Fills prec[] and *out; returns
 * TS_OK, TS_ERANGE when no plan within the budget fits (prec[] is the
 * closest found), TS_ENOENT when `by` is TS_PREC_BY_MODULE and no unit is in
 * a module, TS_EINVAL when the model lacks a run at `high` or `low`,
 * TS_ENOMEM. */
TS_API TS_NODISCARD int ts_prec_greedy(const ts_prec_model *m, const double *indicator, double accuracy_budget,
                                       int64_t memory_limit_bytes, ts_precision high, ts_precision low,
                                       ts_prec_granularity by, uint8_t *prec, ts_prec_prediction *out);

/* A plan as the plan file the greedy prints and python/trainscope_precision.py
 * apply() reads: a comment line, then "op:N P  # OP in SCOPE" for every unit
 * not at fp32. TS_EIO when a write to out failed. */
TS_API TS_NODISCARD int ts_prec_plan_write(FILE *out, const ts_prec_model *m, const uint8_t *prec);

#ifdef __cplusplus
}
#endif
#endif
