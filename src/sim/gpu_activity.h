/* gpu_activity.h — a GPU's activity as a step function of time, and its rolling-window
 * aggregate computed lazily. The live monitor samples every GPU at 1 Hz into a window of W
 * samples; simulating that sample by sample for 1000 GPUs would dominate the run. Instead each
 * GPU keeps its recent change points: a GPU whose activity has not changed for W seconds has an
 * aggregate equal to its current activity, and only recently changed GPUs are re-aggregated,
 * from samples reconstructed at integer seconds. */
#ifndef CARMA_SIM_GPU_ACTIVITY_H
#define CARMA_SIM_GPU_ACTIVITY_H

#include <stdbool.h>

#include "sched/window.h"

#define GPU_ACTIVITY_CHANGES 64 /* change points kept per GPU */

typedef struct gpu_activity {
    double at[GPU_ACTIVITY_CHANGES];            /* ring of change times, oldest at head */
    activity_sample value[GPU_ACTIVITY_CHANGES];/* activity from at[i] until the next change */
    int head, len;
} gpu_activity;

/* Starts with constant activity `initial` since the beginning of time. */
void gpu_activity_init(gpu_activity *a, activity_sample initial);
/* The activity becomes `v` at time `t` (t never decreases). */
void gpu_activity_set(gpu_activity *a, double t, activity_sample v);
activity_sample gpu_activity_current(const gpu_activity *a);
double gpu_activity_last_change(const gpu_activity *a);
/* True when every sample of a `window`-sample window read at `now` sees the current value. */
bool gpu_activity_settled(const gpu_activity *a, double now, int window);
/* The window aggregate at `now`: samples at the integer seconds floor(now)-window+1 ..
 * floor(now), aggregated as the core's window.h does. */
activity_sample gpu_activity_aggregate(const gpu_activity *a, double now, int window,
                                       agg_mode mode, double ewma_alpha);

#endif
