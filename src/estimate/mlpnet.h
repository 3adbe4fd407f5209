/* mlpnet.h — the small fully connected classifiers of GPUMemNet, for inference and training.
 *
 * A net is one or more members whose logits are averaged (one member = the published single
 * "FC_base" classifier; several = the MLP-ensemble). A member is a stack of layers
 * `Linear -> BatchNorm1d (eval: running statistics, eps 1e-5) -> ReLU`, and a last Linear
 * without BatchNorm giving the logits.
 *
 * Weights files are plain text: for each tensor a line `tensor NAME DTYPE NDIM DIMS...` then
 * its values, row-major, on one line. Single classifiers use the names model.fcK.*,
 * model.bnK.*, model.final.*; ensembles use members.M.model.I.* (I = 3j for Linear j, 3j+1 for
 * its BatchNorm, 3*depth for the output Linear), as in the reference checkpoints. */
#ifndef CARMA_ESTIMATE_MLPNET_H
#define CARMA_ESTIMATE_MLPNET_H

#include <stdbool.h>
#include <stdio.h>

#include "util/err.h"

#define MLPNET_BN_EPS 1e-5

typedef struct mlp_layer {
    int in, out;
    double *w;  /* out x in, row-major */
    double *b;  /* out */
    bool bn;    /* followed by BatchNorm + ReLU (every layer but the last) */
    double *gamma, *beta, *mean, *var; /* out each, when bn */
} mlp_layer;

typedef struct mlp_member {
    int nlayers;
    mlp_layer *layers;
} mlp_member;

typedef struct mlp_net {
    int nin, nout;
    int nmembers;
    mlp_member *members;
} mlp_net;

/* Builds a member with the given layer widths: widths[0] = inputs, widths[n] = outputs; all
 * parameters zero, BatchNorm gamma 1 and var 1. Returns -1 on allocation failure. */
int mlp_member_init(mlp_member *m, const int *widths, int n, carma_err *err);
void mlp_net_free(mlp_net *net);

/* Averaged logits of one input (eval mode); logits has net->nout entries. */
void mlp_net_logits(const mlp_net *net, const double *x, double *logits);
/* Argmax of the averaged logits. */
int mlp_net_predict(const mlp_net *net, const double *x);

/* Loads a weights file; the input size must be `nin` (0 = any). Errors name the file, the line
 * and the tensor. */
int mlp_net_load(const char *path, int nin, mlp_net *out, carma_err *err);
/* Writes an ensemble in the text format (members.M.model.I.*). */
int mlp_net_write(const mlp_net *net, FILE *f, const char *comment);

#endif
