/* gpm.c — NVML GPM sampling (see gpm.h). */
#include "gpu/gpm.h"

#include <math.h>
#include <string.h>

double gpm_percent_to_fraction(double pct)
{
    if (isnan(pct))
        return NAN;
    double f = pct / 100.0;
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

bool gpm_reader_init(gpm_reader *g, const nvml_lib *lib, nvmlDevice_t dev)
{
    memset(g, 0, sizeof *g);
    g->smact = g->smocc = g->drama = NAN;
    if (!nvml_lib_has_gpm(lib))
        return true;
    nvmlGpmSupport_t s = {.version = NVML_GPM_SUPPORT_VERSION};
    nvmlReturn_t rc = lib->gpm_query_support(dev, &s);
    /* NOT_SUPPORTED, or a support struct this library does not take: no GPM, for good */
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
        return true;
    if (rc != NVML_SUCCESS)
        return false; /* GPU_IS_LOST, UNKNOWN, TIMEOUT...: no answer yet */
    if (!s.isSupportedDevice)
        return true;
    if (lib->gpm_sample_alloc(&g->prev) != NVML_SUCCESS)
        return false;
    if (lib->gpm_sample_alloc(&g->cur) != NVML_SUCCESS) {
        lib->gpm_sample_free(g->prev);
        g->prev = NULL;
        return false;
    }
    g->supported = true;
    return true;
}

void gpm_reader_free(gpm_reader *g, const nvml_lib *lib)
{
    if (g->supported) {
        lib->gpm_sample_free(g->prev);
        lib->gpm_sample_free(g->cur);
    }
    memset(g, 0, sizeof *g);
}

void gpm_reader_reset(gpm_reader *g)
{
    g->have_prev = g->have_last = false;
    g->smact = g->smocc = g->drama = NAN;
}

static void swap_samples(gpm_reader *g, double now)
{
    nvmlGpmSample_t t = g->prev;
    g->prev = g->cur;
    g->cur = t;
    g->prev_t = now;
    g->have_prev = true;
}

static nvmlReturn_t compute_metrics(gpm_reader *g, const nvml_lib *lib)
{
    static const unsigned ids[3] = {NVML_GPM_METRIC_SM_UTIL, NVML_GPM_METRIC_SM_OCCUPANCY,
                                    NVML_GPM_METRIC_DRAM_BW_UTIL};
    nvmlGpmMetricsGet_t mg;
    memset(&mg, 0, sizeof mg);
    mg.version = NVML_GPM_METRICS_GET_VERSION;
    mg.numMetrics = 3;
    mg.sample1 = g->prev;
    mg.sample2 = g->cur;
    for (int i = 0; i < 3; i++)
        mg.metrics[i].metricId = ids[i];
    nvmlReturn_t rc = lib->gpm_metrics_get(&mg);
    if (rc != NVML_SUCCESS)
        return rc;
    double v[3];
    for (int i = 0; i < 3; i++)
        v[i] = mg.metrics[i].nvmlReturn == NVML_SUCCESS && mg.metrics[i].metricId == ids[i]
                   ? gpm_percent_to_fraction(mg.metrics[i].value)
                   : NAN;
    g->smact = v[0];
    g->smocc = v[1];
    g->drama = v[2];
    g->have_last = true;
    return NVML_SUCCESS;
}

bool gpm_reader_sample(gpm_reader *g, const nvml_lib *lib, nvmlDevice_t dev, double now,
                       double *smact, double *smocc, double *drama, nvmlReturn_t *rc)
{
    *smact = *smocc = *drama = NAN;
    *rc = NVML_SUCCESS;
    if (!g->supported)
        return false;
    if (g->have_prev && now - g->prev_t < GPM_MIN_INTERVAL_S) {
        /* too soon for a new interval: keep prev as the baseline, report the last set */
    } else {
        *rc = lib->gpm_sample_get(dev, g->cur);
        if (*rc != NVML_SUCCESS) {
            g->have_prev = g->have_last = false;
            return false;
        }
        if (g->have_prev) {
            *rc = compute_metrics(g, lib);
            if (*rc != NVML_SUCCESS)
                g->have_last = false;
        }
        swap_samples(g, now);
    }
    if (!g->have_last)
        return false;
    *smact = g->smact;
    *smocc = g->smocc;
    *drama = g->drama;
    return true;
}
