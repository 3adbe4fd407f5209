/* mlptrain.h — trains GPUMemNet's MLP-ensemble in C (gpumemnet-spec §3.1, §3.2): 13 members of
 * depths 1..7 and 1..6, hidden widths 8, 4, 4, ..., each `Linear -> BatchNorm1d -> ReLU`; the
 * members' logits are averaged and all are trained jointly with one Adam optimiser on the
 * cross-entropy of the averaged logits. Inputs are not normalised (the first BatchNorm does it).
 * Deterministic: a fixed seed drives initialisation and shuffling. */
#ifndef CARMA_ESTIMATE_MLPTRAIN_H
#define CARMA_ESTIMATE_MLPTRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "estimate/mlpnet.h"
#include "util/err.h"

#define MLP_MAX_FOLDS 16

typedef struct mlp_dataset {
    double *x; /* n x nin */
    int *y;    /* class per row */
    size_t n;
    int nin, nclasses;
} mlp_dataset;

/* The MLP dataset (mlp_data_step2.csv) with the mlp4mlp inputs [#Linear, B, P, A, #BatchNorm,
 * #Dropout, sin, cos] and 1 GB classes: class k covers (1000(k+1), 1000(k+2)] MiB, 5 classes. */
int mlp_dataset_load_mlp(const char *csv, mlp_dataset *out, carma_err *err);
void mlp_dataset_free(mlp_dataset *d);

typedef struct train_options {
    int epochs;
    int batch;
    double lr;
    uint64_t seed;
} train_options;

void train_options_defaults(train_options *o); /* 300 epochs, batch 128, lr 1e-3, seed 42 */

/* Trains a fresh ensemble on the rows idx[0..nidx) (all rows when idx is NULL). */
int mlp_train(const mlp_dataset *d, const size_t *idx, size_t nidx, const train_options *o,
              mlp_net *out, carma_err *err);

/* Accuracy on the given rows; *under_rate (optional) gets the share predicted below the truth. */
double mlp_accuracy(const mlp_net *net, const mlp_dataset *d, const size_t *idx, size_t n,
                    double *under_rate);

typedef struct cv_result {
    double fold_accuracy[MLP_MAX_FOLDS];
    double mean_accuracy, std_accuracy; /* population std over folds */
    double under_rate;                  /* over all held-out rows */
} cv_result;

/* K-fold cross-validation with a fresh model per fold (the reference reused one model across
 * folds, which leaks test rows); rows are shuffled once with the seed. */
int mlp_cross_validate(const mlp_dataset *d, int folds, const train_options *o, cv_result *out,
                       carma_err *err);

#endif
