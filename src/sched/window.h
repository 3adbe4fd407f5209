/* window.h — per-GPU rolling window of activity samples and its aggregation (CARMA §6.3).
 * Pure: drivers push samples and read aggregates into gpu_view. */
#ifndef CARMA_SCHED_WINDOW_H
#define CARMA_SCHED_WINDOW_H

#include "sched/sched.h"

typedef struct activity_sample {
    double smact, smocc, drama; /* 0..1, NaN = unknown */
} activity_sample;

typedef struct metric_window {
    int cap;   /* samples kept */
    int len;   /* samples held (<= cap) */
    int head;  /* index of the oldest sample */
    activity_sample *samples;
} metric_window;

int window_init(metric_window *w, int cap, carma_err *err);
void window_free(metric_window *w);
void window_clear(metric_window *w);
void window_push(metric_window *w, activity_sample s);

/* Aggregates each metric over the window, NaN samples dropped first; NaN when none remain.
 *   AGG_MEAN: arithmetic mean.
 *   AGG_EWMA: last value of y0 = x0, yt = (1 - alpha) y(t-1) + alpha xt.
 *   AGG_RISK: 0.2 mean + 0.3 median + 0.3 p95 + 0.2 EMA(alpha = 2 / (n + 1)), quantiles by
 *             linear interpolation (the reference's 0.2 median + 0.1 p50, folded).
 *   AGG_RISK_EQUAL: the same four at 0.25 each (AEGIS's telemetry/monitor.py). */
activity_sample window_aggregate(const metric_window *w, agg_mode mode, double ewma_alpha);

/* The same aggregation over a plain array of n values (NaN dropped). */
double aggregate_values(const double *values, int n, agg_mode mode, double ewma_alpha);

#endif
