/* mlpnet.c — see mlpnet.h. */
#include "estimate/mlpnet.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "util/array.h"

#define MAX_WIDTH 64

static void layer_free(mlp_layer *l)
{
    free(l->w);
    free(l->b);
    free(l->gamma);
    free(l->beta);
    free(l->mean);
    free(l->var);
}

static void member_free(mlp_member *m)
{
    for (int i = 0; i < m->nlayers; i++)
        layer_free(&m->layers[i]);
    free(m->layers);
    m->layers = NULL;
    m->nlayers = 0;
}

void mlp_net_free(mlp_net *net)
{
    for (int i = 0; i < net->nmembers; i++)
        member_free(&net->members[i]);
    free(net->members);
    memset(net, 0, sizeof *net);
}

static int layer_alloc(mlp_layer *l, int in, int out, bool bn)
{
    memset(l, 0, sizeof *l);
    l->in = in;
    l->out = out;
    l->bn = bn;
    l->w = calloc((size_t)in * (size_t)out, sizeof *l->w);
    l->b = calloc((size_t)out, sizeof *l->b);
    if (!l->w || !l->b)
        return -1;
    if (bn) {
        l->gamma = calloc((size_t)out, sizeof(double));
        l->beta = calloc((size_t)out, sizeof(double));
        l->mean = calloc((size_t)out, sizeof(double));
        l->var = calloc((size_t)out, sizeof(double));
        if (!l->gamma || !l->beta || !l->mean || !l->var)
            return -1;
        for (int i = 0; i < out; i++)
            l->gamma[i] = l->var[i] = 1.0;
    }
    return 0;
}

int mlp_member_init(mlp_member *m, const int *widths, int n, carma_err *err)
{
    m->nlayers = n;
    m->layers = calloc((size_t)n, sizeof *m->layers);
    if (!m->layers)
        return carma_err_set(err, "out of memory");
    for (int i = 0; i < n; i++) {
        if (widths[i] < 1 || widths[i] > MAX_WIDTH || widths[i + 1] < 1 ||
            widths[i + 1] > MAX_WIDTH ||
            layer_alloc(&m->layers[i], widths[i], widths[i + 1], i + 1 < n)) {
            member_free(m);
            return carma_err_set(err, "cannot build a layer %d -> %d", widths[i], widths[i + 1]);
        }
    }
    return 0;
}

static void member_logits(const mlp_member *m, const double *x, double *out)
{
    double a[MAX_WIDTH], z[MAX_WIDTH];
    memcpy(a, x, (size_t)m->layers[0].in * sizeof *a);
    for (int i = 0; i < m->nlayers; i++) {
        const mlp_layer *l = &m->layers[i];
        for (int o = 0; o < l->out; o++) {
            double s = l->b[o];
            for (int k = 0; k < l->in; k++)
                s += l->w[o * l->in + k] * a[k];
            if (l->bn) {
                s = (s - l->mean[o]) / sqrt(l->var[o] + MLPNET_BN_EPS) * l->gamma[o] + l->beta[o];
                s = s > 0 ? s : 0;
            }
            z[o] = s;
        }
        memcpy(a, z, (size_t)l->out * sizeof *a);
    }
    memcpy(out, a, (size_t)m->layers[m->nlayers - 1].out * sizeof *out);
}

void mlp_net_logits(const mlp_net *net, const double *x, double *logits)
{
    double tmp[MAX_WIDTH];
    for (int o = 0; o < net->nout; o++)
        logits[o] = 0;
    for (int m = 0; m < net->nmembers; m++) {
        member_logits(&net->members[m], x, tmp);
        for (int o = 0; o < net->nout; o++)
            logits[o] += tmp[o] / net->nmembers;
    }
}

int mlp_net_predict(const mlp_net *net, const double *x)
{
    double logits[MAX_WIDTH];
    mlp_net_logits(net, x, logits);
    int best = 0;
    for (int o = 1; o < net->nout; o++)
        if (logits[o] > logits[best])
            best = o;
    return best;
}

/* ---- the text format ---- */

typedef struct tensor {
    char name[96];
    int ndim;
    int dims[2];
    size_t n;
    double *v;
    bool used;
} tensor;

typedef struct tensor_set {
    tensor *t;
    size_t n;
} tensor_set;

static void tensors_free(tensor_set *ts)
{
    for (size_t i = 0; i < ts->n; i++)
        free(ts->t[i].v);
    free(ts->t);
}

/* The next line of *p (NUL-terminated in place), or NULL at the end; counts lines. */
static char *next_line(char **p, size_t *lineno)
{
    if (!*p || !**p)
        return NULL;
    char *line = *p, *nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        *p = nl + 1;
    } else {
        *p = NULL;
    }
    (*lineno)++;
    return line;
}

static int tensors_read(const char *path, char *text, tensor_set *ts, carma_err *err)
{
    size_t lineno = 0, cap = 0;
    char *cursor = text, *line;
    while ((line = next_line(&cursor, &lineno))) {
        if (line[0] == '#' || !*str_trim(line))
            continue;
        if (strncmp(line, "tensor ", 7))
            return carma_err_set(err, "%s:%zu: expected a 'tensor NAME DTYPE NDIM DIMS' line", path,
                                 lineno);
        tensor *nt = array_grow(ts->t, &cap, ts->n + 1, sizeof *nt, 64);
        if (!nt)
            return carma_err_set(err, "out of memory");
        ts->t = nt;
        tensor *t = &ts->t[ts->n];
        memset(t, 0, sizeof *t);
        char dtype[16];
        int d0 = 1, d1 = 1;
        int got = sscanf(line + 7, "%95s %15s %d %d %d", t->name, dtype, &t->ndim, &d0, &d1);
        if (got < 3 || t->ndim < 0 || t->ndim > 2 || got < 3 + t->ndim || d0 < 0 || d1 < 0)
            return carma_err_set(err, "%s:%zu: malformed tensor header", path, lineno);
        t->dims[0] = t->ndim >= 1 ? d0 : 1;
        t->dims[1] = t->ndim >= 2 ? d1 : 1;
        t->n = (size_t)t->dims[0] * (size_t)t->dims[1];
        ts->n++;
        char *vals = next_line(&cursor, &lineno);
        if (!vals)
            return carma_err_set(err, "%s:%zu: tensor %s has no values line", path, lineno + 1,
                                 t->name);
        /* the array grows with the values actually read, never to what the header claims: a
         * header of 8 x 973564148 over a short line must not allocate 62 GB first */
        size_t vcap = 0;
        char *p = vals;
        for (size_t i = 0; i < t->n; i++) {
            char *end;
            errno = 0;
            double v = strtod(p, &end);
            if (end == p || errno || !isfinite(v))
                return carma_err_set(err, "%s:%zu: tensor %s: value %zu missing or not a number",
                                     path, lineno, t->name, i + 1);
            double *nv = array_grow(t->v, &vcap, i + 1, sizeof *t->v, 64);
            if (!nv)
                return carma_err_set(err, "out of memory");
            t->v = nv;
            t->v[i] = v;
            p = end;
        }
        if (!t->v && !(t->v = malloc(sizeof *t->v))) /* a tensor of no values */
            return carma_err_set(err, "out of memory");
        while (*p == ' ' || *p == '\r')
            p++;
        if (*p)
            return carma_err_set(err, "%s:%zu: tensor %s has more than %zu values", path, lineno,
                                 t->name, t->n);
    }
    return 0;
}

static tensor *find(tensor_set *ts, const char *name)
{
    for (size_t i = 0; i < ts->n; i++)
        if (!strcmp(ts->t[i].name, name))
            return &ts->t[i];
    return NULL;
}

/* Copies the vector `name` (length n) into dst. */
static int take_vec(const char *path, tensor_set *ts, const char *name, int n, double *dst,
                    carma_err *err)
{
    tensor *t = find(ts, name);
    if (!t)
        return carma_err_set(err, "%s: missing tensor %s", path, name);
    if ((int)t->n != n)
        return carma_err_set(err, "%s: tensor %s has %zu values, expected %d", path, name, t->n, n);
    memcpy(dst, t->v, (size_t)n * sizeof *dst);
    t->used = true;
    return 0;
}

/* Reads one Linear (+ BatchNorm when bn_prefix is set) into *l. */
static int take_layer(const char *path, tensor_set *ts, const char *lin, const char *bn_prefix,
                      mlp_layer *l, carma_err *err)
{
    char name[128];
    snprintf(name, sizeof name, "%s.weight", lin);
    tensor *w = find(ts, name);
    if (!w || w->ndim != 2)
        return carma_err_set(err, "%s: missing 2-D tensor %s", path, name);
    if (w->dims[0] > MAX_WIDTH || w->dims[1] > MAX_WIDTH || w->dims[0] < 1 || w->dims[1] < 1)
        return carma_err_set(err, "%s: tensor %s is too large for a GPUMemNet layer", path, name);
    if (layer_alloc(l, w->dims[1], w->dims[0], bn_prefix != NULL))
        return carma_err_set(err, "out of memory");
    if (take_vec(path, ts, name, l->in * l->out, l->w, err))
        return -1;
    snprintf(name, sizeof name, "%s.bias", lin);
    if (take_vec(path, ts, name, l->out, l->b, err))
        return -1;
    if (!bn_prefix)
        return 0;
    static const char *const parts[] = {"weight", "bias", "running_mean", "running_var"};
    double *dst[] = {l->gamma, l->beta, l->mean, l->var};
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%s.%s", bn_prefix, parts[i]);
        if (take_vec(path, ts, name, l->out, dst[i], err))
            return -1;
    }
    return 0;
}

static int grow_layers(mlp_member *m)
{
    mlp_layer *nl = realloc(m->layers, (size_t)(m->nlayers + 1) * sizeof *nl);
    if (!nl)
        return -1;
    m->layers = nl;
    memset(&m->layers[m->nlayers], 0, sizeof *nl);
    return 0;
}

static int build_single(const char *path, tensor_set *ts, mlp_member *m, carma_err *err)
{
    char lin[64], bn[64];
    for (int k = 1;; k++) {
        snprintf(lin, sizeof lin, "model.fc%d", k);
        snprintf(bn, sizeof bn, "model.bn%d", k);
        char wname[80];
        snprintf(wname, sizeof wname, "%s.weight", lin);
        if (!find(ts, wname))
            break;
        if (grow_layers(m))
            return carma_err_set(err, "out of memory");
        m->nlayers++;
        if (take_layer(path, ts, lin, bn, &m->layers[m->nlayers - 1], err))
            return -1;
    }
    if (grow_layers(m))
        return carma_err_set(err, "out of memory");
    m->nlayers++;
    return take_layer(path, ts, "model.final", NULL, &m->layers[m->nlayers - 1], err);
}

static int build_member(const char *path, tensor_set *ts, int mi, mlp_member *m, carma_err *err)
{
    char lin[64], bn[64], probe[96];
    for (int j = 0;; j++) {
        snprintf(lin, sizeof lin, "members.%d.model.%d", mi, 3 * j);
        snprintf(bn, sizeof bn, "members.%d.model.%d", mi, 3 * j + 1);
        snprintf(probe, sizeof probe, "%s.running_mean", bn);
        bool has_bn = find(ts, probe) != NULL;
        if (grow_layers(m))
            return carma_err_set(err, "out of memory");
        m->nlayers++;
        if (take_layer(path, ts, lin, has_bn ? bn : NULL, &m->layers[m->nlayers - 1], err))
            return -1;
        if (!has_bn)
            return 0;
    }
}

static int check_shapes(const char *path, mlp_net *net, int nin, carma_err *err)
{
    net->nin = net->members[0].layers[0].in;
    net->nout = net->members[0].layers[net->members[0].nlayers - 1].out;
    if (nin && net->nin != nin)
        return carma_err_set(err, "%s: network takes %d inputs, expected %d", path, net->nin, nin);
    for (int mi = 0; mi < net->nmembers; mi++) {
        const mlp_member *m = &net->members[mi];
        if (m->layers[0].in != net->nin || m->layers[m->nlayers - 1].out != net->nout)
            return carma_err_set(err, "%s: member %d has other input/output sizes", path, mi);
        for (int i = 1; i < m->nlayers; i++)
            if (m->layers[i].in != m->layers[i - 1].out)
                return carma_err_set(err, "%s: member %d layer %d takes %d inputs but gets %d",
                                     path, mi, i, m->layers[i].in, m->layers[i - 1].out);
    }
    return 0;
}

int mlp_net_load(const char *path, int nin, mlp_net *out, carma_err *err)
{
    memset(out, 0, sizeof *out);
    char *text = read_text_file(path, NULL, err);
    if (!text)
        return carma_err_prefix(err, "cannot read weights file");
    tensor_set ts = {0};
    int rc = tensors_read(path, text, &ts, err);
    free(text);
    if (rc)
        goto done;
    if (find(&ts, "model.fc1.weight")) {
        out->members = calloc(1, sizeof *out->members);
        rc = out->members ? 0 : carma_err_set(err, "out of memory");
        if (!rc) {
            out->nmembers = 1;
            rc = build_single(path, &ts, &out->members[0], err);
        }
    } else if (find(&ts, "members.0.model.0.weight")) {
        char probe[64];
        int nm = 0;
        for (;; nm++) {
            snprintf(probe, sizeof probe, "members.%d.model.0.weight", nm);
            if (!find(&ts, probe))
                break;
        }
        out->members = calloc((size_t)nm, sizeof *out->members);
        rc = out->members ? 0 : carma_err_set(err, "out of memory");
        for (int mi = 0; !rc && mi < nm; mi++) {
            out->nmembers++;
            rc = build_member(path, &ts, mi, &out->members[mi], err);
        }
    } else {
        rc = carma_err_set(err, "%s: neither model.fc1.weight nor members.0.model.0.weight found",
                           path);
    }
    if (!rc)
        rc = check_shapes(path, out, nin, err);
done:
    tensors_free(&ts);
    if (rc)
        mlp_net_free(out);
    return rc;
}

static void write_tensor(FILE *f, const char *name, const double *v, int d0, int d1)
{
    if (d1 > 0)
        fprintf(f, "tensor %s f32 2 %d %d\n", name, d0, d1);
    else
        fprintf(f, "tensor %s f32 1 %d\n", name, d0);
    int n = d0 * (d1 > 0 ? d1 : 1);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%.17g", i ? " " : "", v[i]);
    fputc('\n', f);
}

int mlp_net_write(const mlp_net *net, FILE *f, const char *comment)
{
    if (comment)
        fprintf(f, "# %s\n", comment);
    char name[128];
    for (int mi = 0; mi < net->nmembers; mi++) {
        const mlp_member *m = &net->members[mi];
        for (int j = 0; j < m->nlayers; j++) {
            const mlp_layer *l = &m->layers[j];
            snprintf(name, sizeof name, "members.%d.model.%d.weight", mi, 3 * j);
            write_tensor(f, name, l->w, l->out, l->in);
            snprintf(name, sizeof name, "members.%d.model.%d.bias", mi, 3 * j);
            write_tensor(f, name, l->b, l->out, 0);
            if (!l->bn)
                continue;
            static const char *const parts[] = {"weight", "bias", "running_mean", "running_var"};
            const double *src[] = {l->gamma, l->beta, l->mean, l->var};
            for (int k = 0; k < 4; k++) {
                snprintf(name, sizeof name, "members.%d.model.%d.%s", mi, 3 * j + 1, parts[k]);
                write_tensor(f, name, src[k], l->out, 0);
            }
        }
    }
    return ferror(f) ? -1 : 0;
}
