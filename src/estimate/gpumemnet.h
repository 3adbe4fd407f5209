/* gpumemnet.h — GPUMemNet's published single classifiers: input vectors, class, estimate.
 *
 * Classes are 8000 MiB bins; class k is reported as its upper edge (k+1)*8000 MiB. */
#ifndef CARMA_ESTIMATE_GPUMEMNET_H
#define CARMA_ESTIMATE_GPUMEMNET_H

#include <stdint.h>

#include "estimate/features.h"
#include "estimate/mlpnet.h"
#include "util/err.h"

#define GPUMEMNET_BIN_MIB 8000
#define GPUMEMNET_MAX_INPUTS 9

/* Weights files under the data directory, by family. */
const char *gpumemnet_weights_file(model_family fam);
/* Number of inputs of the family's published classifier (CNN 9, Transformer 8). */
int gpumemnet_ninputs(model_family fam);

/* The input vector in the published order:
 *   CNN:         [A, P, B, A*B, #Conv2d, #BatchNorm2d, #Dropout, sin, cos]
 *   Transformer: [depth, A, A*B, P, B, #Linear, #LayerNorm, #Dropout] */
int gpumemnet_input(const gmn_features *f, int batch, double *x);

/* Loads the published classifier of a family from the data directory. */
int gpumemnet_load(model_family fam, mlp_net *net, carma_err *err);

int gpumemnet_class(const mlp_net *net, const gmn_features *f, int batch);
uint64_t gpumemnet_class_mib(int cls);

#endif
