/* analytic_fit.h — fits the carma estimator's coefficients on the synthetic GPUMemNet datasets
 * (the MLP set and the partial CNN set), never on real models.
 *
 * Rows: every MLP row; CNN rows that trained successfully, have layers, and are not of the
 * residual or dense architectures (their per-layer lists miss the residual and concatenation
 * tensors; GPUMemNet drops them too). Least squares on the relative error; the margin is then
 * the 95th percentile of measured / fitted over the CNN rows, the noisier family. */
#ifndef CARMA_ESTIMATE_ANALYTIC_FIT_H
#define CARMA_ESTIMATE_ANALYTIC_FIT_H

#include <stddef.h>

#include "estimate/analytic.h"
#include "util/err.h"

#define CARMA_FIT_MARGIN_QUANTILE 0.95

typedef struct carma_fit_report {
    size_t rows_mlp, rows_cnn;
    double median_ratio_mlp, median_ratio_cnn; /* measured / fitted, before the margin */
    double p95_ratio_mlp, p95_ratio_cnn;
    size_t under_mlp, under_cnn;               /* rows the estimate (margin applied) is below */
} carma_fit_report;

int carma_fit(const char *mlp_csv, const char *cnn_csv, carma_coeffs *out, carma_fit_report *rep,
              carma_err *err);

/* Parses a dataset's `Activations-Params` cell, "[('linear', 1173, 2753031), ...]", into a
 * workload (per-sample elements weighted by layer type). */
int carma_workload_from_tuples(const char *cell, carma_workload *w, carma_err *err);

#endif
