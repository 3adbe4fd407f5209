/* window.c — rolling window of activity samples and CARMA's three aggregations (§6.3). */
#include "sched/window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int window_init(metric_window *w, int cap, carma_err *err)
{
    memset(w, 0, sizeof *w);
    if (cap < 1)
        return carma_err_set(err, "window: must hold at least 1 sample");
    w->samples = calloc((size_t)cap, sizeof *w->samples);
    if (!w->samples)
        return carma_err_set(err, "window: out of memory");
    w->cap = cap;
    return 0;
}

void window_free(metric_window *w)
{
    free(w->samples);
    memset(w, 0, sizeof *w);
}

void window_clear(metric_window *w)
{
    w->len = 0;
    w->head = 0;
}

void window_push(metric_window *w, activity_sample s)
{
    if (w->len < w->cap) {
        w->samples[(w->head + w->len) % w->cap] = s;
        w->len++;
    } else {
        w->samples[w->head] = s;
        w->head = (w->head + 1) % w->cap;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Windows are short (30 samples by default): insertion sort beats qsort's call overhead there,
 * and the simulator aggregates often enough for it to matter. */
static void sort_values(double *v, int n)
{
    if (n > 64) {
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        return;
    }
    for (int i = 1; i < n; i++) {
        double x = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > x) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

/* Quantile q of sorted[0..n-1] by linear interpolation (numpy's default). */
static double quantile_sorted(const double *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    int hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/* EMA in time order: y0 = x0, yt = (1 - alpha) y(t-1) + alpha xt. */
static double ema_last(const double *x, int n, double alpha)
{
    double y = x[0];
    for (int i = 1; i < n; i++)
        y = (1.0 - alpha) * y + alpha * x[i];
    return y;
}

double aggregate_values(const double *values, int n, agg_mode mode, double ewma_alpha)
{
    double stackbuf[2][64];
    double *kept = stackbuf[0], *sorted = stackbuf[1];
    double *heap = NULL;
    if (n > 64) {
        heap = malloc(2 * (size_t)n * sizeof *heap);
        if (!heap)
            return NAN;
        kept = heap;
        sorted = heap + n;
    }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(values[i]))
            kept[m++] = values[i];
    double result = NAN;
    if (m > 0) {
        double sum = 0;
        for (int i = 0; i < m; i++)
            sum += kept[i];
        double mean = sum / m;
        switch (mode) {
        case AGG_MEAN:
            result = mean;
            break;
        case AGG_EWMA:
            result = ema_last(kept, m, ewma_alpha);
            break;
        case AGG_RISK:
        case AGG_RISK_EQUAL: {
            /* CARMA weighs (mean, median, p95, EMA) 0.2/0.3/0.3/0.2; AEGIS 0.25 each. */
            double w_mean = mode == AGG_RISK ? 0.20 : 0.25, w_q = 0.5 - w_mean;
            memcpy(sorted, kept, (size_t)m * sizeof *sorted);
            sort_values(sorted, m);
            result = w_mean * mean + w_q * quantile_sorted(sorted, m, 0.50) +
                     w_q * quantile_sorted(sorted, m, 0.95) +
                     w_mean * ema_last(kept, m, 2.0 / (m + 1));
            break;
        }
        case AGG_COUNT:
            break;
        }
    }
    free(heap);
    return result;
}

activity_sample window_aggregate(const metric_window *w, agg_mode mode, double ewma_alpha)
{
    activity_sample out = {NAN, NAN, NAN};
    if (w->len == 0)
        return out;
    double *vals = malloc(3 * (size_t)w->len * sizeof *vals);
    if (!vals)
        return out;
    double *smact = vals, *smocc = vals + w->len, *drama = vals + 2 * w->len;
    for (int i = 0; i < w->len; i++) {
        const activity_sample *s = &w->samples[(w->head + i) % w->cap];
        smact[i] = s->smact;
        smocc[i] = s->smocc;
        drama[i] = s->drama;
    }
    out.smact = aggregate_values(smact, w->len, mode, ewma_alpha);
    out.smocc = aggregate_values(smocc, w->len, mode, ewma_alpha);
    out.drama = aggregate_values(drama, w->len, mode, ewma_alpha);
    free(vals);
    return out;
}
