/* promtext.c — Prometheus's text exposition format, written into a buffer (promtext.h). */
#include "util/promtext.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/strutil.h"

static void put(promtext *p, const char *s, size_t n)
{
    if (p->failed)
        return;
    char *grown = array_grow(p->buf, &p->cap, p->len + n + 1, 1, 4096);
    if (!grown) {
        p->failed = true;
        return;
    }
    p->buf = grown;
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = '\0';
}

static void puts_(promtext *p, const char *s)
{
    put(p, s, strlen(s));
}

static void putf(promtext *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(promtext *p, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        p->failed = true; /* the callers' numbers always fit */
    else
        put(p, tmp, (size_t)n);
}

/* The shortest form that reads back as v (fmt_double), infinities as Prometheus spells them. */
static void format_value(double v, char *out, size_t cap)
{
    if (isinf(v))
        snprintf(out, cap, "%s", v > 0 ? "+Inf" : "-Inf");
    else
        fmt_double(out, cap, v);
}

size_t promtext_escape_label(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    if (cap == 0)
        return 0;
    for (const unsigned char *s = (const unsigned char *)in; *s; s++) {
        char esc[3] = {0};
        if (*s == '\\' || *s == '"')
            esc[0] = '\\', esc[1] = (char)*s;
        else if (*s == '\n')
            esc[0] = '\\', esc[1] = 'n';
        else
            esc[0] = *s >= 0x20 && *s < 0x7f ? (char)*s : '?';
        size_t k = strlen(esc);
        if (n + k >= cap)
            break;
        memcpy(out + n, esc, k);
        n += k;
    }
    out[n] = '\0';
    return n;
}

void promtext_family(promtext *p, const char *name, const char *type, const char *help)
{
    puts_(p, "# HELP ");
    puts_(p, name);
    put(p, " ", 1);
    for (const char *s = help; *s; s++)
        if (*s == '\\')
            put(p, "\\\\", 2);
        else if (*s == '\n')
            put(p, "\\n", 2);
        else
            put(p, s, 1);
    puts_(p, "\n# TYPE ");
    puts_(p, name);
    put(p, " ", 1);
    puts_(p, type);
    put(p, "\n", 1);
}

static void name_labels(promtext *p, const char *name, const prom_label *labels, int nlabels)
{
    puts_(p, name);
    if (nlabels <= 0)
        return;
    put(p, "{", 1);
    for (int i = 0; i < nlabels; i++) {
        char esc[1024];
        promtext_escape_label(labels[i].value, esc, sizeof esc);
        putf(p, "%s%s=\"", i ? "," : "", labels[i].name);
        puts_(p, esc);
        put(p, "\"", 1);
    }
    put(p, "}", 1);
}

void promtext_sample(promtext *p, const char *name, const prom_label *labels, int nlabels,
                     double value)
{
    if (isnan(value))
        return;
    char v[64];
    format_value(value, v, sizeof v);
    name_labels(p, name, labels, nlabels);
    putf(p, " %s\n", v);
}

void promtext_sample_u64(promtext *p, const char *name, const prom_label *labels, int nlabels,
                         uint64_t value)
{
    name_labels(p, name, labels, nlabels);
    putf(p, " %" PRIu64 "\n", value);
}

void promtext_histogram(promtext *p, const char *name, const double *bounds, int n,
                        const uint64_t *counts, double sum)
{
    char series[256], le[64];
    snprintf(series, sizeof series, "%s_bucket", name);
    uint64_t cum = 0;
    for (int i = 0; i <= n; i++) {
        cum += counts[i];
        if (i < n)
            format_value(bounds[i], le, sizeof le);
        else
            snprintf(le, sizeof le, "+Inf");
        promtext_sample_u64(p, series, &(prom_label){"le", le}, 1, cum);
    }
    snprintf(series, sizeof series, "%s_sum", name);
    promtext_sample(p, series, NULL, 0, sum);
    snprintf(series, sizeof series, "%s_count", name);
    promtext_sample_u64(p, series, NULL, 0, cum);
}

char *promtext_take(promtext *p, size_t *len)
{
    char *out = p->failed ? NULL : p->buf;
    *len = p->failed ? 0 : p->len;
    if (p->failed)
        free(p->buf);
    else if (!out && (out = calloc(1, 1)) == NULL)
        *len = 0;
    *p = (promtext){0};
    return out;
}

void promtext_free(promtext *p)
{
    free(p->buf);
    *p = (promtext){0};
}
