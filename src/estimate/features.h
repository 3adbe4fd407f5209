/* features.h — the features GPUMemNet reads from a parsed summary (gpumemnet-spec §4):
 * activations per sample A, parameters P, layer counts, depth and the dominant activation.
 * They follow the reference parsers, quirks included, because the published weights were
 * trained on them: the CNN rules for torchsummary/torchinfo tables, the Transformer rules
 * (sequence length S, Linear activations not multiplied by S) for module printouts. */
#ifndef CARMA_ESTIMATE_FEATURES_H
#define CARMA_ESTIMATE_FEATURES_H

#include <stdint.h>

#include "estimate/summary.h"

typedef enum model_family { FAMILY_CNN = 0, FAMILY_TRANSFORMER } model_family;

typedef struct gmn_features {
    model_family family;
    double A;       /* activations per sample */
    double P;       /* parameters */
    int n_conv2d, n_batchnorm2d, n_dropout, n_adaptive_pool, n_linear, n_softmax;
    int n_activation, n_layernorm, n_embedding, n_ndq_linear, n_conv1d;
    int depth;      /* recognised layer lines */
    char dominant[16]; /* most frequent activation layer ("" for Transformer summaries) */
} gmn_features;

#define FEATURES_DEFAULT_SEQ_LEN 512

/* seq_len is used for module printouts only (Transformer rules). */
void features_from_summary(const model_summary *s, int seq_len, gmn_features *f);

/* The (sin, cos) encoding of an activation name among the 10 CNN names (ELU ... Tanh, sorted);
 * ReLU6 and unknown names count as ReLU, as in the reference tester. */
void features_activation_encoding(const char *name, double *s, double *c);
/* The same over the 11 MLP-dataset names (the CNN list plus Identity); unknown -> ReLU. */
void features_activation_encoding_mlp(const char *name, double *s, double *c);

#endif
