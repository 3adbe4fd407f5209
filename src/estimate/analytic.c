/* analytic.c — see analytic.h. */
#include "estimate/analytic.h"
#include "util/array.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MIB (1024.0 * 1024.0)
#define BYTES_PER_ELEM 4.0      /* fp32 training */
#define DROPOUT_WEIGHT 1.25     /* output + a one-byte mask */
#define HEAD_DIM 64.0           /* heads = d_model / 64 when a printout does not say */
/* Eager attention keeps the scores' softmax output, the dropout output and its mask per head:
 * set from first principles, since no synthetic dataset has attention to fit it on. */
#define ATTN_SCORE_WEIGHT 2.25

int carma_optimizer_from_name(const char *name, carma_optimizer *out)
{
    static const char *const names[] = {"adam", "sgd", "sgd-momentum"};
    for (int i = 0; i < 3; i++)
        if (!strcasecmp(name, names[i])) {
            *out = (carma_optimizer)i;
            return 0;
        }
    if (!strcasecmp(name, "adamw")) {
        *out = OPT_ADAM;
        return 0;
    }
    return -1;
}

const char *carma_optimizer_name(carma_optimizer o)
{
    return o == OPT_SGD ? "sgd" : o == OPT_SGD_MOMENTUM ? "sgd-momentum" : "adam";
}

static int optimizer_copies(carma_optimizer o)
{
    return o == OPT_SGD ? 2 : o == OPT_SGD_MOMENTUM ? 3 : 4;
}

int carma_workload_push(carma_workload *w, double elems, double params, carma_err *err)
{
    carma_layer *nl = array_grow(w->layers, &w->cap, w->n + 1, sizeof *nl, 64);
    if (!nl)
        return carma_err_set(err, "out of memory");
    w->layers = nl;
    w->layers[w->n++] = (carma_layer){elems, params};
    return 0;
}

void carma_workload_free(carma_workload *w)
{
    free(w->layers);
    memset(w, 0, sizeof *w);
}

/* Autograd's saved tensors decide what stays alive until backward: a layer's output is kept when
 * the layer saves its own result (ReLU, Tanh, Sigmoid, Softmax) or when the layer consuming it
 * saves its input (Conv, Linear, BatchNorm, LayerNorm, pooling, and the activations whose
 * derivative needs the input: GELU, SiLU, Mish, Softplus, ELU, SELU, LeakyReLU, PReLU, ReLU6).
 * Dropout keeps a one-byte mask, max pooling int64 indices. */
static bool saves_output(const char *t)
{
    return !strcmp(t, "ReLU") || !strcmp(t, "Tanh") || !strcmp(t, "Sigmoid") ||
           strstr(t, "Softmax") != NULL;
}

static bool is_view(const char *t)
{
    return !strcmp(t, "Identity") || !strcmp(t, "Flatten") || !strcmp(t, "Unflatten");
}

static bool saves_input(const char *t)
{
    static const char *const keys[] = {"Conv", "Linear", "BatchNorm", "LayerNorm", "GroupNorm",
                                       "Pool", "GELU", "SiLU", "Mish", "Softplus", "ELU",
                                       "LeakyReLU", "PReLU", "ReLU6", "Hardswish", "Hardtanh"};
    if (!t)
        return true; /* the loss keeps the logits */
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (strstr(t, keys[k]))
            return true;
    /* module types this table does not know (containers, custom blocks): assume kept */
    return !saves_output(t) && strcmp(t, "Dropout") && strcmp(t, "ReLU");
}

double carma_kept_weight(const char *type, const char *next)
{
    if (is_view(type))
        return 0;
    double w = saves_output(type) || saves_input(next) ? 1 : 0;
    if (strstr(type, "Dropout"))
        w += 0.25;
    if (strstr(type, "MaxPool"))
        w += 2;
    return w;
}

static bool is_conv(const char *t)
{
    return !strncmp(t, "Conv", 4) && (strstr(t, "2d") || strstr(t, "1d") || strstr(t, "3d"));
}

static int from_table(const model_summary *s, carma_workload *w, carma_err *err)
{
    double psum = 0;
    /* torchsummary lists containers as rows with their own (residual, concat) outputs;
     * torchinfo nests them, so only its leaves are counted */
    bool leaves_only = s->format == SUMMARY_TORCHINFO;
    for (size_t i = 0; i < s->n; i++) {
        const summary_layer *l = &s->layers[i];
        if (leaves_only && !l->leaf)
            continue;
        const char *next = NULL; /* the consumer: the next counted row that is not a view */
        for (size_t j = i + 1; j < s->n && !next; j++)
            if ((!leaves_only || s->layers[j].leaf) && !is_view(s->layers[j].type))
                next = s->layers[j].type;
        w->has_conv |= is_conv(l->type);
        psum += (double)l->params;
        if (carma_workload_push(w,
                                (double)summary_layer_elems(l) * carma_kept_weight(l->type, next),
                                (double)l->params, err))
            return -1;
    }
    /* parameters a summary's rows do not show (functional layers, nested modules) */
    if (s->has_total && (double)s->total_params > psum)
        return carma_workload_push(w, 0, (double)s->total_params - psum, err);
    return 0;
}

static bool is_activation(const char *t)
{
    static const char *const keys[] = {"Activation", "GELU", "ReLU", "Tanh", "SiLU", "Softmax",
                                       "Sigmoid", "Mish", "ELU"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (strstr(t, keys[k]))
            return true;
    return false;
}

/* An attention module that computes its scores itself: its name says Attention but not SDPA or
 * Flash (fused kernels keep no S x S scores), and no attention module is nested inside it (BERT's
 * BertAttention only wraps BertSdpaSelfAttention). */
static bool is_eager_attention(const model_summary *s, size_t i)
{
    const char *t = s->layers[i].type;
    if (!strstr(t, "Attention") || strstr(t, "Sdpa") || strstr(t, "Flash"))
        return false;
    for (size_t j = i + 1; j < s->n && s->layers[j].depth > s->layers[i].depth; j++)
        if (!s->layers[j].leaf && strstr(s->layers[j].type, "Attention"))
            return false;
    return true;
}

/* Module printouts have no shapes: follow the per-token width through the layers. */
static int from_repr(const model_summary *s, int seq_len, carma_workload *w, carma_err *err)
{
    double S = seq_len, cur = 0, dmodel = 0;
    for (size_t i = 0; i < s->n; i++) {
        const summary_layer *l = &s->layers[i];
        const char *t = l->type;
        double elems = 0, params = (double)l->params;
        if (!l->leaf) {
            if (is_eager_attention(s, i) && dmodel > 0) {
                double heads = fmax(1.0, floor(dmodel / HEAD_DIM));
                if (carma_workload_push(w, ATTN_SCORE_WEIGHT * heads * S * S, 0, err))
                    return -1;
            }
            continue;
        }
        if (strstr(t, "Embedding") && l->out_features > 0) {
            cur = (double)l->out_features;
            if (dmodel == 0)
                dmodel = cur;
            elems = S * cur;
        } else if (strstr(t, "Linear") && l->out_features > 0) {
            cur = (double)l->out_features;
            elems = S * cur;
        } else if (!strcmp(t, "Conv1D")) { /* GPT-2's transposed Linear: out = params / (in + 1) */
            double in = fmod(params, cur + 1) == 0 ? cur : dmodel;
            if (in > 0 && fmod(params, in + 1) == 0)
                cur = params / (in + 1);
            elems = S * cur;
        } else if (strstr(t, "Dropout")) {
            elems = DROPOUT_WEIGHT * S * cur;
        } else if (strstr(t, "LayerNorm") || is_activation(t)) {
            elems = S * cur;
        } else if (is_conv(t)) {
            w->has_conv = true;
        }
        if (carma_workload_push(w, elems, params, err))
            return -1;
    }
    return 0;
}

int carma_workload_from_summary(const model_summary *s, int seq_len, carma_workload *w,
                                carma_err *err)
{
    memset(w, 0, sizeof *w);
    int rc = s->format == SUMMARY_MODULE_REPR ? from_repr(s, seq_len > 0 ? seq_len : 512, w, err)
                                              : from_table(s, w, err);
    if (rc)
        carma_workload_free(w);
    return rc;
}

double carma_alloc_bytes(double bytes)
{
    if (bytes <= 0)
        return 0;
    if (bytes <= MIB)
        return 512.0 * ceil(bytes / 512.0);
    return 2.0 * MIB * ceil(bytes / (2.0 * MIB));
}

void carma_terms_of(const carma_workload *w, int batch, carma_optimizer opt, carma_terms *t)
{
    double B = batch, state = 0, act = 0, peak = 0;
    for (size_t i = 0; i < w->n; i++) {
        state += carma_alloc_bytes(BYTES_PER_ELEM * w->layers[i].params);
        double a = carma_alloc_bytes(BYTES_PER_ELEM * B * w->layers[i].elems);
        act += a;
        peak = fmax(peak, a);
    }
    t->x[0] = 1;
    t->x[1] = w->has_conv ? 1 : 0;
    t->x[2] = optimizer_copies(opt) * state / MIB;
    t->x[3] = act / MIB;
    t->x[4] = peak / MIB;
}

double carma_peak_mib(const carma_coeffs *c, const carma_terms *t)
{
    double s = 0;
    for (int i = 0; i < CARMA_NCOEF; i++)
        s += c->c[i] * t->x[i];
    return s;
}

double carma_estimate_mib(const carma_coeffs *c, const carma_workload *w, int batch,
                          carma_optimizer opt)
{
    carma_terms t;
    carma_terms_of(w, batch, opt, &t);
    return ceil(c->margin * carma_peak_mib(c, &t));
}
