/* features.c — see features.h. */
#include "estimate/features.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Activation layer names the CNN parser recognises (ReLU6 included: the vote keeps it). */
static const char *const act_names[] = {"ReLU6", "ReLU", "LeakyReLU", "PReLU", "ELU", "SELU",
                                        "GELU", "Tanh", "SiLU", "Softplus", "Mish"};
#define N_ACT (sizeof act_names / sizeof act_names[0])

/* The alphabetical list whose index sets the encoding angle i*pi/N (gpumemnet-spec §2.2). */
static const char *const cnn_encoding[] = {"ELU", "GELU", "LeakyReLU", "Mish", "PReLU",
                                           "ReLU", "SELU", "SiLU", "Softplus", "Tanh"};
#define N_ENC (sizeof cnn_encoding / sizeof cnn_encoding[0])

void features_activation_encoding(const char *name, double *s, double *c)
{
    size_t idx = 5; /* ReLU */
    for (size_t i = 0; i < N_ENC; i++)
        if (!strcmp(name, cnn_encoding[i]))
            idx = i;
    double theta = (double)idx * M_PI / (double)N_ENC;
    *s = sin(theta);
    *c = cos(theta);
}

void features_activation_encoding_mlp(const char *name, double *s, double *c)
{
    static const char *const names[] = {"ELU", "GELU", "Identity", "LeakyReLU", "Mish", "PReLU",
                                        "ReLU", "SELU", "SiLU", "Softplus", "Tanh"};
    const size_t n = sizeof names / sizeof names[0];
    size_t idx = 6; /* ReLU */
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, names[i]))
            idx = i;
    double theta = (double)idx * M_PI / (double)n;
    *s = sin(theta);
    *c = cos(theta);
}

/* 4-D: C*H*W; 2-D: N; anything else counts nothing (the reference's two shape patterns). */
static double chw_or_n(const summary_layer *l)
{
    if (l->ndims == 4 || l->ndims == 2)
        return (double)summary_layer_elems(l);
    return 0;
}

static void cnn_features(const model_summary *s, gmn_features *f)
{
    int votes[N_ACT] = {0};
    int first_seen[N_ACT];
    int order = 0;
    for (size_t i = 0; i < N_ACT; i++)
        first_seen[i] = -1;
    for (size_t i = 0; i < s->n; i++) {
        const summary_layer *l = &s->layers[i];
        if (!l->leaf)
            continue;
        const char *t = l->type;
        if (!strcmp(t, "Conv2d") || !strcmp(t, "BatchNorm2d")) {
            *(t[0] == 'C' ? &f->n_conv2d : &f->n_batchnorm2d) += 1;
            f->A += l->ndims == 4 ? (double)summary_layer_elems(l) : 0;
            f->P += (double)l->params;
        } else if (!strcmp(t, "Dropout")) {
            f->n_dropout++;
            f->A += chw_or_n(l);
        } else if (!strcmp(t, "AdaptiveAvgPool2d")) {
            f->n_adaptive_pool++;
            f->A += l->ndims >= 2 ? (double)l->shape[1] : 0;
        } else if (!strcmp(t, "Linear")) {
            f->n_linear++;
            f->A += l->ndims == 2 ? (double)l->shape[1] : 0;
            f->P += (double)l->params;
        } else if (!strcmp(t, "Softmax")) {
            f->n_softmax++;
            f->A += l->ndims == 2 ? (double)l->shape[1] : 0;
        } else {
            size_t k = 0;
            while (k < N_ACT && strcmp(t, act_names[k]))
                k++;
            if (k == N_ACT)
                continue; /* not a recognised layer: not counted, as in the reference */
            f->n_activation++;
            f->A += chw_or_n(l);
            if (first_seen[k] < 0)
                first_seen[k] = order++;
            votes[k]++;
        }
        f->depth++;
    }
    int best = -1;
    for (size_t k = 0; k < N_ACT; k++)
        if (votes[k] && (best < 0 || votes[k] > votes[best] ||
                         (votes[k] == votes[best] && first_seen[k] < first_seen[best])))
            best = (int)k;
    snprintf(f->dominant, sizeof f->dominant, "%s", best < 0 ? "ReLU" : act_names[best]);
}

static void transformer_features(const model_summary *s, int seq_len, gmn_features *f)
{
    double cur = seq_len;
    double psum = 0;
    for (size_t i = 0; i < s->n; i++) {
        const summary_layer *l = &s->layers[i];
        const char *t = l->type;
        if (!l->leaf)
            continue; /* containers are not lines the reference parser counts */
        if (!strcmp(t, "Embedding") && l->plain_args) {
            cur = (double)seq_len * (double)l->out_features;
            f->n_embedding++;
        } else if (!strcmp(t, "NonDynamicallyQuantizableLinear") && l->out_features >= 0) {
            cur = (double)l->out_features;
            f->n_ndq_linear++;
            f->n_linear++;
        } else if (!strcmp(t, "Linear") && l->out_features >= 0) {
            cur = (double)l->out_features; /* sequence length ignored, as in the reference */
            f->n_linear++;
        } else if (strstr(t, "LayerNorm")) {
            f->n_layernorm++;
        } else if (strstr(t, "Dropout")) {
            f->n_dropout++;
        } else if (!strcmp(t, "Conv1D")) {
            f->n_conv1d++;
            f->n_linear++;
        } else {
            continue;
        }
        psum += (double)l->params;
        f->A += cur;
        f->depth++;
    }
    f->P = s->has_total ? (double)s->total_params : psum;
}

void features_from_summary(const model_summary *s, int seq_len, gmn_features *f)
{
    memset(f, 0, sizeof *f);
    if (seq_len <= 0)
        seq_len = FEATURES_DEFAULT_SEQ_LEN;
    if (s->format == SUMMARY_MODULE_REPR) {
        f->family = FAMILY_TRANSFORMER;
        transformer_features(s, seq_len, f);
    } else {
        f->family = FAMILY_CNN;
        cnn_features(s, f);
    }
}
