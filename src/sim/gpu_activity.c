/* gpu_activity.c — step-function GPU activity and its lazily computed window aggregate. */
#include "sim/gpu_activity.h"

#include <math.h>
#include <stdlib.h>

#define GPU_ACTIVITY_STACK_WINDOW 128

static int idx(const gpu_activity *a, int i)
{
    return (a->head + i) % GPU_ACTIVITY_CHANGES;
}

void gpu_activity_init(gpu_activity *a, activity_sample initial)
{
    a->head = 0;
    a->len = 1;
    a->at[0] = -INFINITY;
    a->value[0] = initial;
}

void gpu_activity_set(gpu_activity *a, double t, activity_sample v)
{
    int last = idx(a, a->len - 1);
    if (a->at[last] == t) { /* several changes at one instant: the last one counts */
        a->value[last] = v;
        return;
    }
    if (a->len == GPU_ACTIVITY_CHANGES) { /* drop the oldest; it is older than any window */
        a->head = idx(a, 1);
        a->len--;
    }
    int i = idx(a, a->len++);
    a->at[i] = t;
    a->value[i] = v;
}

activity_sample gpu_activity_current(const gpu_activity *a)
{
    return a->value[idx(a, a->len - 1)];
}

double gpu_activity_last_change(const gpu_activity *a)
{
    return a->at[idx(a, a->len - 1)];
}

bool gpu_activity_settled(const gpu_activity *a, double now, int window)
{
    double first_sample = floor(now) - window + 1;
    return gpu_activity_last_change(a) <= first_sample;
}

activity_sample gpu_activity_aggregate(const gpu_activity *a, double now, int window,
                                       agg_mode mode, double ewma_alpha)
{
    if (gpu_activity_settled(a, now, window))
        return gpu_activity_current(a);
    /* The usual windows (30 samples) fit on the stack: no allocation per aggregate. */
    double stackbuf[3 * GPU_ACTIVITY_STACK_WINDOW];
    double *buf = window <= GPU_ACTIVITY_STACK_WINDOW ? stackbuf
                                                      : malloc(3 * (size_t)window * sizeof *buf);
    if (!buf) { /* no memory for the samples: the window is unknown, which fails the gate */
        activity_sample unknown = {NAN, NAN, NAN};
        return unknown;
    }
    double *smact = buf, *smocc = buf + window, *drama = buf + 2 * window;
    double first_sample = floor(now) - window + 1;
    int c = 0; /* change point in effect at the sample time */
    for (int s = 0; s < window; s++) {
        double t = first_sample + s;
        while (c + 1 < a->len && a->at[idx(a, c + 1)] <= t)
            c++;
        const activity_sample *v = &a->value[idx(a, c)];
        smact[s] = v->smact;
        smocc[s] = v->smocc;
        drama[s] = v->drama;
    }
    activity_sample out = {
        aggregate_values(smact, window, mode, ewma_alpha),
        aggregate_values(smocc, window, mode, ewma_alpha),
        aggregate_values(drama, window, mode, ewma_alpha),
    };
    if (buf != stackbuf)
        free(buf);
    return out;
}
