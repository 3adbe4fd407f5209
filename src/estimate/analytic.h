/* analytic.h — carma's own memory estimator: a training step's peak memory as nvidia-smi sees
 * it, built from parts (literature.md §3):
 *
 *   peak = context + [conv] cudnn_context
 *        + state_factor * (weights + gradients + optimizer state)   per-tensor allocator rounding
 *        + act_factor   * (outputs kept for backward) * B             per-tensor allocator rounding
 *        + peak_factor  * (largest single layer output) * B           workspace / temporaries
 *   estimate = margin * peak
 *
 * The coefficients are fitted by analytic_fit.c on the synthetic GPUMemNet datasets only
 * (never on the real models, which are the test set); the compiled-in defaults are that fit's
 * result and a unit test re-runs the fit to check them. */
#ifndef CARMA_ESTIMATE_ANALYTIC_H
#define CARMA_ESTIMATE_ANALYTIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "estimate/summary.h"
#include "util/err.h"

typedef enum carma_optimizer {
    OPT_ADAM = 0,     /* weights, gradients, two moments: 4 copies */
    OPT_SGD,          /* weights, gradients: 2 copies */
    OPT_SGD_MOMENTUM, /* + momentum buffer: 3 copies */
} carma_optimizer;

int carma_optimizer_from_name(const char *name, carma_optimizer *out);
const char *carma_optimizer_name(carma_optimizer o);

#define CARMA_NCOEF 5
typedef struct carma_coeffs {
    double c[CARMA_NCOEF]; /* context MiB, cuDNN context MiB, state, activation, peak factors */
    double margin;         /* safety factor applied last */
} carma_coeffs;

/* The coefficients fitted on the synthetic datasets (see analytic_fit.h). */
const carma_coeffs *carma_default_coeffs(void);

/* One layer as the model sees it: output elements per sample kept for backward (already
 * weighted by what the layer type keeps) and parameters. */
typedef struct carma_layer {
    double elems;
    double params;
} carma_layer;

typedef struct carma_workload {
    carma_layer *layers;
    size_t n, cap;
    bool has_conv;
} carma_workload;

int carma_workload_push(carma_workload *w, double elems, double params, carma_err *err);
void carma_workload_free(carma_workload *w);

/* Builds the workload of a parsed summary; seq_len is used for module printouts (tokens per
 * sample). Attention that materialises S x S scores (no SDPA kernel) is added per layer. */
int carma_workload_from_summary(const model_summary *s, int seq_len, carma_workload *w,
                                carma_err *err);

/* Elements kept for backward per output element of a layer of `type` whose output the layer
 * `next` consumes (NULL: the loss): 1 when either saves it, plus a dropout mask (1/4) or max
 * pooling indices (2); 0 for views. */
double carma_kept_weight(const char *type, const char *next);

/* The model's terms, in MiB. */
typedef struct carma_terms {
    double x[CARMA_NCOEF]; /* 1, has_conv, state MiB, activation MiB, largest-output MiB */
} carma_terms;

void carma_terms_of(const carma_workload *w, int batch, carma_optimizer opt, carma_terms *t);
/* Coefficients . terms, before the margin. */
double carma_peak_mib(const carma_coeffs *c, const carma_terms *t);

/* The CUDA caching allocator's footprint of one request of `bytes` (512 B rounding; requests
 * above 1 MiB take whole 2 MiB pages). */
double carma_alloc_bytes(double bytes);

/* The estimate in MiB (margin applied, rounded up), as a double: estimator_run turns it into
 * whole MiB with the range check every estimator's figure gets. */
double carma_estimate_mib(const carma_coeffs *c, const carma_workload *w, int batch,
                            carma_optimizer opt);

#endif
