/* summary.c — format detection, line splitting and helpers shared by the summary parsers. */
#include "estimate/summary.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "util/array.h"

const char *summary_format_name(summary_format f)
{
    switch (f) {
    case SUMMARY_TORCHSUMMARY: return "torchsummary";
    case SUMMARY_TORCHINFO: return "torchinfo";
    case SUMMARY_MODULE_REPR: return "module-repr";
    }
    return "?";
}

int summary_push(model_summary *s, const summary_layer *l, carma_err *err)
{
    summary_layer *nl = array_grow(s->layers, &s->cap, s->n + 1, sizeof *nl, 64);
    if (!nl)
        return carma_err_set(err, "out of memory");
    s->layers = nl;
    s->layers[s->n++] = *l;
    return 0;
}

int summary_parse_count(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    int digits = 0;
    for (; *s; s++) {
        if (*s == ',')
            continue;
        if (!isdigit((unsigned char)*s))
            return -1;
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
        digits++;
    }
    if (!digits)
        return -1;
    *out = v;
    return 0;
}

int summary_parse_shape(const char *s, int64_t *dims, int *ndims)
{
    if (*s != '[')
        return -1;
    s++;
    int n = 0;
    for (;;) {
        while (*s == ' ')
            s++;
        if (*s == ']' && n == 0)
            break;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno || n == SUMMARY_MAX_DIMS)
            return -1;
        dims[n++] = v;
        s = end;
        while (*s == ' ')
            s++;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == ']')
            break;
        return -1;
    }
    if (s[1] != '\0')
        return -1;
    *ndims = n;
    return 0;
}

/* The product of the dims after the batch one; -1 when it overflows. Dims are non-negative
 * here (checked by check_layer before anything multiplies them). */
static int layer_elems(const summary_layer *l, uint64_t *out)
{
    *out = 0;
    if (l->ndims < 1)
        return 0;
    if (l->ndims == 1) {
        *out = l->shape[0] > 0 ? (uint64_t)l->shape[0] : 0;
        return 0;
    }
    uint64_t e = 1;
    for (int i = 1; i < l->ndims; i++)
        if (__builtin_mul_overflow(e, l->shape[i] > 0 ? (uint64_t)l->shape[i] : 0, &e))
            return -1;
    *out = e;
    return 0;
}

uint64_t summary_layer_elems(const summary_layer *l)
{
    uint64_t e;
    return layer_elems(l, &e) ? UINT64_MAX : e;
}

/* Sizes the estimators can compute with: no negative dimension (but a leading -1, torchsummary's
 * batch), nothing above SUMMARY_MAX_SIZE. Errors name the file, line and value. */
static int check_layer(const char *name, const summary_layer *l, carma_err *err)
{
    const unsigned long long max = SUMMARY_MAX_SIZE;
    for (int i = 0; i < l->ndims; i++) {
        int64_t d = l->shape[i];
        if (d < 0 && !(i == 0 && d == -1))
            return carma_err_set(err, "%s:%zu: %s has a negative output dimension %lld", name,
                                 l->line, l->type, (long long)d);
        if (d > 0 && (uint64_t)d > SUMMARY_MAX_SIZE)
            return carma_err_set(err, "%s:%zu: %s has an output dimension of %lld, more than "
                                      "%llu", name, l->line, l->type, (long long)d, max);
    }
    uint64_t e;
    if (layer_elems(l, &e) || e > SUMMARY_MAX_SIZE)
        return carma_err_set(err, "%s:%zu: %s's output shape has more than %llu elements per "
                                  "sample", name, l->line, l->type, max);
    if (l->params > SUMMARY_MAX_SIZE)
        return carma_err_set(err, "%s:%zu: %s has %llu parameters, more than %llu", name,
                             l->line, l->type, (unsigned long long)l->params, max);
    int64_t feat[2] = {l->in_features, l->out_features};
    for (int k = 0; k < 2; k++)
        if (feat[k] > 0 && (uint64_t)feat[k] > SUMMARY_MAX_SIZE)
            return carma_err_set(err, "%s:%zu: %s has a size of %lld, more than %llu", name,
                                 l->line, l->type, (long long)feat[k], max);
    return 0;
}

static bool starts_with(const char *s, const char *p)
{
    return !strncmp(s, p, strlen(p));
}

void summary_read_footer(model_summary *s, summary_line *lines, size_t n, size_t i)
{
    static const char *const keys[] = {
        "Trainable params:", "Non-trainable params:", "Total mult-adds", "Input size (MB):",
        "Forward/backward pass size (MB):", "Params size (MB):", "Estimated Total Size (MB):",
    };
    for (; i < n; i++) {
        char *t = lines[i].text;
        while (*t == ' ')
            t++;
        if (!*t || *t == '=' || *t == '-')
            continue;
        if (starts_with(t, "Total params:")) {
            uint64_t v;
            if (!summary_parse_count(str_trim(t + strlen("Total params:")), &v)) {
                s->total_params = v;
                s->has_total = true;
            }
            continue;
        }
        bool known = false;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            known |= starts_with(t, keys[k]);
        if (!known)
            return; /* notes after the footer are not part of the summary */
    }
}

/* Splits text into NUL-terminated lines (a private copy owned by *buf). */
static int split_lines(const char *text, char **buf, summary_line **lines, size_t *n)
{
    *buf = str_dup(text);
    if (!*buf)
        return -1;
    size_t count = 1;
    for (const char *p = *buf; *p; p++)
        count += *p == '\n';
    *lines = malloc(count * sizeof **lines);
    if (!*lines)
        return -1;
    size_t k = 0;
    char *p = *buf;
    while (*p || k == 0) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        size_t len = strlen(p);
        if (len && p[len - 1] == '\r')
            p[len - 1] = '\0';
        (*lines)[k].text = p;
        (*lines)[k].no = k + 1;
        k++;
        if (!nl)
            break;
        p = nl + 1;
    }
    *n = k;
    return 0;
}

/* Marks rows that have no deeper row right after them as leaves. */
static void mark_leaves(model_summary *s)
{
    for (size_t i = 0; i < s->n; i++)
        s->layers[i].leaf = i + 1 == s->n || s->layers[i + 1].depth <= s->layers[i].depth;
}

int summary_parse(const char *name, const char *text, model_summary *out, carma_err *err)
{
    memset(out, 0, sizeof *out);
    char *buf = NULL;
    summary_line *lines = NULL;
    size_t n = 0;
    int rc = -1;
    if (split_lines(text, &buf, &lines, &n)) {
        carma_err_set(err, "%s: out of memory", name);
        goto done;
    }
    size_t i = 0;
    while (i < n && !*str_trim(lines[i].text))
        i++;
    if (i == n) {
        carma_err_set(err, "%s: empty summary (no layers)", name);
        goto done;
    }
    /* The first lines tell the format apart. */
    for (size_t j = i; j < n && j < i + 4; j++) {
        const char *t = lines[j].text;
        if (strstr(t, "Layer (type:depth-idx)")) {
            out->format = SUMMARY_TORCHINFO;
            rc = summary_parse_torchinfo(name, lines, n, j, out, err);
            goto parsed;
        }
        if (strstr(t, "Layer (type)")) {
            out->format = SUMMARY_TORCHSUMMARY;
            rc = summary_parse_torchsummary(name, lines, n, j, out, err);
            goto parsed;
        }
    }
    size_t len = strlen(lines[i].text);
    if (len > 1 && lines[i].text[len - 1] == '(' && isalpha((unsigned char)lines[i].text[0])) {
        out->format = SUMMARY_MODULE_REPR;
        rc = summary_parse_repr(name, lines, n, i, out, err);
        goto parsed;
    }
    carma_err_set(err, "%s:%zu: unknown summary format (expected torchsummary, torchinfo or a "
                       "module printout with parameter counts)", name, lines[i].no);
    goto done;
parsed:
    if (!rc && out->n == 0)
        rc = carma_err_set(err, "%s: summary has no layers", name);
    for (size_t k = 0; !rc && k < out->n; k++)
        rc = check_layer(name, &out->layers[k], err);
    if (!rc && out->has_total && out->total_params > SUMMARY_MAX_SIZE)
        rc = carma_err_set(err, "%s: total of %llu parameters is more than %llu", name,
                           (unsigned long long)out->total_params,
                           (unsigned long long)SUMMARY_MAX_SIZE);
    if (!rc)
        mark_leaves(out);
done:
    free(lines);
    free(buf);
    if (rc)
        summary_free(out);
    return rc;
}

int summary_load(const char *path, model_summary *out, carma_err *err)
{
    char *text = read_text_file(path, NULL, err);
    if (!text) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    int rc = summary_parse(path, text, out, err);
    free(text);
    return rc;
}

void summary_free(model_summary *s)
{
    free(s->layers);
    memset(s, 0, sizeof *s);
}
