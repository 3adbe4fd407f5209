/* gpm.h — SM activity, SM occupancy and DRAM bandwidth utilization from NVML's GPM interface
 * (Hopper and newer). GPM metrics are differences between two samples taken more than 100 ms
 * apart (GPM_MIN_INTERVAL_S, below), so a reader keeps the previous sample of each GPU; its
 * first call gives no values. GPM reports 0..100; this is the edge where that becomes a 0..1
 * fraction. */
#ifndef CARMA_GPU_GPM_H
#define CARMA_GPU_GPM_H

#include <stdbool.h>

#include "gpu/nvml_lib.h"

/* nvml.h: the interval between two nvmlGpmSampleGet calls should be greater than 100 ms; a
 * tick's clock is read before its GPUs are sampled, so leave a margin over it. */
#define GPM_MIN_INTERVAL_S 0.11

typedef struct gpm_reader {
    bool supported;            /* the library has GPM and the device says it supports it */
    nvmlGpmSample_t prev, cur; /* allocated when supported */
    bool have_prev;
    double prev_t;             /* monotonic seconds of prev */
    bool have_last;            /* a metric set was computed */
    double smact, smocc, drama; /* the last computed set, 0..1 or NaN */
} gpm_reader;

/* Asks the device for GPM support and allocates the two samples. An unsupported device (or a
 * library without GPM) gives a reader with supported = false. Returns whether that is the
 * answer: false when a query failed (a transient error, or no memory for the samples), and
 * the reader, unsupported for now, should be set up again later. */
bool gpm_reader_init(gpm_reader *g, const nvml_lib *lib, nvmlDevice_t dev);

/* Takes a sample at monotonic time `now`. When the previous sample is GPM_MIN_INTERVAL_S older,
 * computes the metrics between the two. Writes the latest computed values (NaN for any the
 * device did not give) and returns true; returns false with NaNs when none is available yet
 * or the sample failed. *rc gets the NVML code of a failed call (NVML_SUCCESS otherwise). */
bool gpm_reader_sample(gpm_reader *g, const nvml_lib *lib, nvmlDevice_t dev, double now,
                       double *smact, double *smocc, double *drama, nvmlReturn_t *rc);

/* Forgets the baseline and the last values (after a GPU was lost: an interval across the loss
 * means nothing). */
void gpm_reader_reset(gpm_reader *g);

void gpm_reader_free(gpm_reader *g, const nvml_lib *lib);

/* GPM percent (0..100) to a 0..1 fraction; NaN stays NaN, and small overshoots are clamped. */
double gpm_percent_to_fraction(double pct);

#endif
