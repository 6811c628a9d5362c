/* cost_model.h - per-op time as a function of the op's shapes, fitted on
 * traces that carry them (record_shapes: Kineto's "Input Dims"), seed 000's
 * "Train Cost Model". Not for: collectives (replay/collective.c). */
#ifndef TS_OPTIMIZE_COST_MODEL_H
#define TS_OPTIMIZE_COST_MODEL_H

#include "core/core.h"
#include "trainscope/model.h"

typedef struct ts_op_sample {
    char   *name;             /* owned op name */
    double  work;             /* FLOPs of a matrix product, else elements of its largest input */
    double  time_ns;          /* the GPU time of its kernels (else its own CPU time) */
} ts_op_sample;

typedef struct ts_op_samples { ts_op_sample *v; uint32_t n, cap; } ts_op_samples;

/* Samples of every op of t with "Input Dims": its kernels' time (kernels
 * matched to the op by correlation id through the launch it encloses),
 * else, in a trace without kernels, the op's own duration. */
TS_NODISCARD int ts__cost_samples(const ts_job *t, ts_op_samples *out, ts_error *err);
void ts__cost_samples_free(ts_op_samples *s);
/* Append a sample (name copied). */
TS_NODISCARD int ts__cost_push_sample(ts_op_samples *s, const char *name, double work, double time_ns);
/* The work of an op from its name and "Input Dims" JSON text; < 0 when unreadable. */
double ts__cost_work(const char *name, const char *dims);

typedef struct ts_cost_fit {
    char    *name;            /* owned */
    double   alpha_ns, beta_ns; /* time = alpha + beta x work, both >= 0 */
    double   median_ns;       /* the name's median time: the shape-blind baseline */
    uint32_t n;               /* training samples */
} ts_cost_fit;
typedef struct ts_cost_model { ts_cost_fit *fit; uint32_t n, cap; } ts_cost_model;

/* Per op name with at least min_samples samples: least squares on relative error. */
TS_NODISCARD int ts__cost_fit(const ts_op_samples *train, uint32_t min_samples, ts_cost_model *m);
void ts__cost_model_free(ts_cost_model *m);
const ts_cost_fit *ts__cost_lookup(const ts_cost_model *m, const char *name);

#endif
