/* mlptrain.c — see mlptrain.h. */
#include "estimate/mlptrain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/features.h"
#include "util/csv.h"
#include "util/strutil.h"
#include "util/rng.h"

#define NIN_MLP 8
#define NCLASS_MLP 5
#define BN_MOMENTUM 0.1
#define MAXW 16

static const int member_depths[] = {1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6};
#define NMEMBERS ((int)(sizeof member_depths / sizeof member_depths[0]))

/* ---- data ---- */

int mlp_dataset_load_mlp(const char *csv, mlp_dataset *out, carma_err *err)
{
    memset(out, 0, sizeof *out);
    csv_table t;
    if (csv_load(csv, &t, err))
        return -1;
    static const char *const cols[] = {"Depth", "Batch Size", "Total Parameters",
                                       "Total Activations", "Batch Normalization Layers",
                                       "Dropout Layers", "Activation Function",
                                       "Max GPU Memory (MiB)"};
    int c[8];
    for (int i = 0; i < 8; i++)
        if ((c[i] = csv_require_column(&t, cols[i], err)) < 0) {
            csv_free(&t);
            return -1;
        }
    out->nin = NIN_MLP;
    out->nclasses = NCLASS_MLP;
    out->x = malloc((t.nrows ? t.nrows : 1) * NIN_MLP * sizeof *out->x);
    out->y = malloc((t.nrows ? t.nrows : 1) * sizeof *out->y);
    if (!out->x || !out->y) {
        csv_free(&t);
        mlp_dataset_free(out);
        return carma_err_set(err, "out of memory");
    }
    for (size_t r = 0; r < t.nrows; r++) {
        char **f = t.rows[r].fields;
        double v[6], mem;
        for (int i = 0; i < 6; i++)
            if (parse_double(f[c[i]], &v[i])) {
                carma_err_set(err, "%s:%zu: '%s' is not a number", csv, t.rows[r].line, cols[i]);
                goto bad;
            }
        if (parse_double(f[c[7]], &mem) || mem <= 0) {
            carma_err_set(err, "%s:%zu: bad memory figure", csv, t.rows[r].line);
            goto bad;
        }
        double *x = out->x + out->n * NIN_MLP;
        memcpy(x, v, sizeof v);
        features_activation_encoding_mlp(f[c[6]], &x[6], &x[7]);
        int k = (int)ceil(mem / 1000.0) - 2;
        out->y[out->n++] = k < 0 ? 0 : k >= NCLASS_MLP ? NCLASS_MLP - 1 : k;
    }
    csv_free(&t);
    if (!out->n)
        return carma_err_set(err, "%s: no rows", csv);
    return 0;
bad:
    csv_free(&t);
    mlp_dataset_free(out);
    return -1;
}

void mlp_dataset_free(mlp_dataset *d)
{
    free(d->x);
    free(d->y);
    memset(d, 0, sizeof *d);
}

void train_options_defaults(train_options *o)
{
    o->epochs = 300;
    o->batch = 128;
    o->lr = 1e-3;
    o->seed = 42;
}

static void shuffle(size_t *v, size_t n, uint64_t *s)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(rng_next(s) % i);
        size_t t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

/* ---- training state: gradients and Adam moments, shaped like the parameters ---- */

typedef struct pstate {
    double *g, *m, *v;
    size_t n;
} pstate;

typedef struct layer_state {
    pstate w, b, gamma, beta;
    /* activations of the current mini-batch */
    double *in, *xhat, *out, *bmean, *binvstd;
} layer_state;

static int pstate_alloc(pstate *p, size_t n)
{
    p->n = n;
    p->g = calloc(n, sizeof(double));
    p->m = calloc(n, sizeof(double));
    p->v = calloc(n, sizeof(double));
    return p->g && p->m && p->v ? 0 : -1;
}

static void pstate_free(pstate *p)
{
    free(p->g);
    free(p->m);
    free(p->v);
}

static void adam(double *param, pstate *p, double lr, int step)
{
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    double c1 = 1 - pow(b1, step), c2 = 1 - pow(b2, step);
    for (size_t i = 0; i < p->n; i++) {
        p->m[i] = b1 * p->m[i] + (1 - b1) * p->g[i];
        p->v[i] = b2 * p->v[i] + (1 - b2) * p->g[i] * p->g[i];
        param[i] -= lr * (p->m[i] / c1) / (sqrt(p->v[i] / c2) + eps);
        p->g[i] = 0;
    }
}

/* Forward of one member over a mini-batch of m rows in train mode (batch statistics). */
static void member_forward(mlp_member *mem, layer_state *st, const double *x, int m, double *logits)
{
    const double *a = x;
    for (int li = 0; li < mem->nlayers; li++) {
        mlp_layer *l = &mem->layers[li];
        layer_state *s = &st[li];
        memcpy(s->in, a, (size_t)m * (size_t)l->in * sizeof *a);
        for (int r = 0; r < m; r++)
            for (int o = 0; o < l->out; o++) {
                double z = l->b[o];
                for (int k = 0; k < l->in; k++)
                    z += l->w[o * l->in + k] * s->in[r * l->in + k];
                s->out[r * l->out + o] = z;
            }
        if (l->bn) {
            for (int o = 0; o < l->out; o++) {
                double mean = 0, var = 0;
                for (int r = 0; r < m; r++)
                    mean += s->out[r * l->out + o];
                mean /= m;
                for (int r = 0; r < m; r++) {
                    double d = s->out[r * l->out + o] - mean;
                    var += d * d;
                }
                double unbiased = m > 1 ? var / (m - 1) : var;
                var /= m;
                double invstd = 1.0 / sqrt(var + MLPNET_BN_EPS);
                s->bmean[o] = mean;
                s->binvstd[o] = invstd;
                l->mean[o] = (1 - BN_MOMENTUM) * l->mean[o] + BN_MOMENTUM * mean;
                l->var[o] = (1 - BN_MOMENTUM) * l->var[o] + BN_MOMENTUM * unbiased;
                for (int r = 0; r < m; r++) {
                    double xh = (s->out[r * l->out + o] - mean) * invstd;
                    s->xhat[r * l->out + o] = xh;
                    double y = l->gamma[o] * xh + l->beta[o];
                    s->out[r * l->out + o] = y > 0 ? y : 0;
                }
            }
        }
        a = s->out;
    }
    const mlp_layer *last = &mem->layers[mem->nlayers - 1];
    memcpy(logits, a, (size_t)m * (size_t)last->out * sizeof *a);
}

/* Backward of one member; dout is d(loss)/d(member logits), m x nout; scratch >= m*MAXW*2. */
static void member_backward(mlp_member *mem, layer_state *st, const double *dout, int m,
                            double *scratch)
{
    double *da = scratch, *dprev = scratch + (size_t)m * MAXW;
    const mlp_layer *last = &mem->layers[mem->nlayers - 1];
    memcpy(da, dout, (size_t)m * (size_t)last->out * sizeof *da);
    for (int li = mem->nlayers - 1; li >= 0; li--) {
        mlp_layer *l = &mem->layers[li];
        layer_state *s = &st[li];
        if (l->bn) { /* through ReLU and BatchNorm: da becomes dz */
            for (int o = 0; o < l->out; o++) {
                double sum_dxh = 0, sum_dxh_xh = 0;
                for (int r = 0; r < m; r++) {
                    int i = r * l->out + o;
                    double dy = s->out[i] > 0 ? da[i] : 0;
                    s->gamma.g[o] += dy * s->xhat[i];
                    s->beta.g[o] += dy;
                    double dxh = dy * l->gamma[o];
                    da[i] = dxh;
                    sum_dxh += dxh;
                    sum_dxh_xh += dxh * s->xhat[i];
                }
                for (int r = 0; r < m; r++) {
                    int i = r * l->out + o;
                    da[i] = s->binvstd[o] / m * (m * da[i] - sum_dxh - s->xhat[i] * sum_dxh_xh);
                }
            }
        }
        for (int r = 0; r < m; r++)
            for (int k = 0; k < l->in; k++)
                dprev[r * l->in + k] = 0;
        for (int r = 0; r < m; r++)
            for (int o = 0; o < l->out; o++) {
                double dz = da[r * l->out + o];
                s->b.g[o] += dz;
                for (int k = 0; k < l->in; k++) {
                    s->w.g[o * l->in + k] += dz * s->in[r * l->in + k];
                    dprev[r * l->in + k] += dz * l->w[o * l->in + k];
                }
            }
        double *t = da;
        da = dprev;
        dprev = t;
    }
}

static void member_state_free(layer_state *st, int n)
{
    for (int i = 0; i < n; i++) {
        pstate_free(&st[i].w);
        pstate_free(&st[i].b);
        pstate_free(&st[i].gamma);
        pstate_free(&st[i].beta);
        free(st[i].in);
        free(st[i].xhat);
        free(st[i].out);
        free(st[i].bmean);
        free(st[i].binvstd);
    }
    free(st);
}

static layer_state *member_state_alloc(const mlp_member *mem, int maxbatch)
{
    layer_state *st = calloc((size_t)mem->nlayers, sizeof *st);
    if (!st)
        return NULL;
    for (int i = 0; i < mem->nlayers; i++) {
        const mlp_layer *l = &mem->layers[i];
        layer_state *s = &st[i];
        size_t mb = (size_t)maxbatch;
        if (pstate_alloc(&s->w, (size_t)l->in * (size_t)l->out) ||
            pstate_alloc(&s->b, (size_t)l->out) ||
            pstate_alloc(&s->gamma, (size_t)l->out) || pstate_alloc(&s->beta, (size_t)l->out) ||
            !(s->in = malloc(mb * (size_t)l->in * sizeof(double))) ||
            !(s->xhat = malloc(mb * (size_t)l->out * sizeof(double))) ||
            !(s->out = malloc(mb * (size_t)l->out * sizeof(double))) ||
            !(s->bmean = malloc((size_t)l->out * sizeof(double))) ||
            !(s->binvstd = malloc((size_t)l->out * sizeof(double)))) {
            member_state_free(st, mem->nlayers);
            return NULL;
        }
    }
    return st;
}

/* Builds the ensemble with Xavier-uniform weights and zero biases. */
static int build_ensemble(mlp_net *net, int nin, int nout, uint64_t *rng, carma_err *err)
{
    memset(net, 0, sizeof *net);
    net->nin = nin;
    net->nout = nout;
    net->members = calloc(NMEMBERS, sizeof *net->members);
    if (!net->members)
        return carma_err_set(err, "out of memory");
    for (int mi = 0; mi < NMEMBERS; mi++) {
        int depth = member_depths[mi], widths[MAXW];
        widths[0] = nin;
        for (int i = 0; i < depth; i++) {
            int h = (int)floor(8.0 * pow(0.5, i));
            widths[i + 1] = h < 4 ? 4 : h;
        }
        widths[depth + 1] = nout;
        if (mlp_member_init(&net->members[mi], widths, depth + 1, err)) {
            mlp_net_free(net);
            return -1;
        }
        net->nmembers++;
        for (int li = 0; li <= depth; li++) {
            mlp_layer *l = &net->members[mi].layers[li];
            double a = sqrt(6.0 / (l->in + l->out));
            for (int k = 0; k < l->in * l->out; k++)
                l->w[k] = (2 * rng_uniform(rng) - 1) * a;
        }
    }
    return 0;
}

int mlp_train(const mlp_dataset *d, const size_t *idx, size_t nidx, const train_options *o,
              mlp_net *out, carma_err *err)
{
    if (!idx)
        nidx = d->n;
    if (nidx < 2 || o->batch < 2 || o->epochs < 1)
        return carma_err_set(err, "training needs at least 2 rows, a batch of 2 and 1 epoch");
    uint64_t rng = o->seed;
    if (build_ensemble(out, d->nin, d->nclasses, &rng, err))
        return -1;
    int bs = o->batch;
    size_t *order = malloc(nidx * sizeof *order);
    layer_state **st = calloc(NMEMBERS, sizeof *st);
    double *x = malloc((size_t)bs * (size_t)d->nin * sizeof *x);
    double *logits = malloc((size_t)bs * (size_t)d->nclasses * sizeof *logits);
    double *mean = malloc((size_t)bs * (size_t)d->nclasses * sizeof *mean);
    double *scratch = malloc((size_t)bs * MAXW * 2 * sizeof *scratch);
    int rc = (order && st && x && logits && mean && scratch) ? 0 : -1;
    for (int mi = 0; !rc && mi < NMEMBERS; mi++)
        if (!(st[mi] = member_state_alloc(&out->members[mi], bs)))
            rc = -1;
    if (rc) {
        carma_err_set(err, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nidx; i++)
        order[i] = idx ? idx[i] : i;
    int step = 0, C = d->nclasses;
    for (int ep = 0; ep < o->epochs; ep++) {
        shuffle(order, nidx, &rng);
        for (size_t start = 0; start < nidx; start += (size_t)bs) {
            int m = (int)(nidx - start < (size_t)bs ? nidx - start : (size_t)bs);
            if (m < 2)
                continue; /* BatchNorm needs two rows */
            for (int r = 0; r < m; r++)
                memcpy(x + r * d->nin, d->x + order[start + r] * (size_t)d->nin,
                       (size_t)d->nin * sizeof *x);
            memset(mean, 0, (size_t)m * (size_t)C * sizeof *mean);
            for (int mi = 0; mi < NMEMBERS; mi++) {
                member_forward(&out->members[mi], st[mi], x, m, logits);
                for (int i = 0; i < m * C; i++)
                    mean[i] += logits[i] / NMEMBERS;
            }
            /* d(mean CE)/d(mean logits) = (softmax - onehot) / m, shared by every member / M */
            for (int r = 0; r < m; r++) {
                double mx = mean[r * C], sum = 0;
                for (int k = 1; k < C; k++)
                    mx = fmax(mx, mean[r * C + k]);
                for (int k = 0; k < C; k++)
                    sum += exp(mean[r * C + k] - mx);
                int y = d->y[order[start + r]];
                for (int k = 0; k < C; k++) {
                    double p = exp(mean[r * C + k] - mx) / sum;
                    mean[r * C + k] = (p - (k == y)) / m / NMEMBERS;
                }
            }
            step++;
            for (int mi = 0; mi < NMEMBERS; mi++) {
                mlp_member *mem = &out->members[mi];
                member_backward(mem, st[mi], mean, m, scratch);
                for (int li = 0; li < mem->nlayers; li++) {
                    mlp_layer *l = &mem->layers[li];
                    adam(l->w, &st[mi][li].w, o->lr, step);
                    adam(l->b, &st[mi][li].b, o->lr, step);
                    if (l->bn) {
                        adam(l->gamma, &st[mi][li].gamma, o->lr, step);
                        adam(l->beta, &st[mi][li].beta, o->lr, step);
                    }
                }
            }
        }
    }
done:
    for (int mi = 0; st && mi < NMEMBERS; mi++)
        if (st[mi])
            member_state_free(st[mi], out->members[mi].nlayers);
    free(st);
    free(order);
    free(x);
    free(logits);
    free(mean);
    free(scratch);
    if (rc)
        mlp_net_free(out);
    return rc;
}

double mlp_accuracy(const mlp_net *net, const mlp_dataset *d, const size_t *idx, size_t n,
                    double *under_rate)
{
    size_t right = 0, under = 0;
    for (size_t i = 0; i < n; i++) {
        size_t r = idx ? idx[i] : i;
        int p = mlp_net_predict(net, d->x + r * (size_t)d->nin);
        right += p == d->y[r];
        under += p < d->y[r];
    }
    if (under_rate)
        *under_rate = n ? (double)under / (double)n : 0;
    return n ? (double)right / (double)n : 0;
}

int mlp_cross_validate(const mlp_dataset *d, int folds, const train_options *o, cv_result *out,
                       carma_err *err)
{
    memset(out, 0, sizeof *out);
    if (folds < 2 || folds > MLP_MAX_FOLDS || (size_t)folds > d->n)
        return carma_err_set(err, "folds must be between 2 and %d (and at most the rows)",
                             MLP_MAX_FOLDS);
    size_t *perm = malloc(d->n * sizeof *perm), *train = malloc(d->n * sizeof *train);
    if (!perm || !train) {
        free(perm);
        free(train);
        return carma_err_set(err, "out of memory");
    }
    for (size_t i = 0; i < d->n; i++)
        perm[i] = i;
    uint64_t rng = o->seed ^ 0xC0FFEEull;
    shuffle(perm, d->n, &rng);
    int rc = 0;
    double under_sum = 0;
    for (int f = 0; f < folds && !rc; f++) {
        size_t lo = d->n * (size_t)f / (size_t)folds, hi = d->n * (size_t)(f + 1) / (size_t)folds;
        size_t nt = 0;
        for (size_t i = 0; i < d->n; i++)
            if (i < lo || i >= hi)
                train[nt++] = perm[i];
        mlp_net net;
        if (mlp_train(d, train, nt, o, &net, err)) {
            rc = -1;
            break;
        }
        double ur;
        out->fold_accuracy[f] = mlp_accuracy(&net, d, perm + lo, hi - lo, &ur);
        under_sum += ur * (double)(hi - lo);
        mlp_net_free(&net);
    }
    free(perm);
    free(train);
    if (rc)
        return -1;
    for (int f = 0; f < folds; f++)
        out->mean_accuracy += out->fold_accuracy[f] / folds;
    for (int f = 0; f < folds; f++)
        out->std_accuracy += pow(out->fold_accuracy[f] - out->mean_accuracy, 2) / folds;
    out->std_accuracy = sqrt(out->std_accuracy);
    out->under_rate = under_sum / (double)d->n;
    return 0;
}
