/* backend.c — the table of GPU backends. A backend adds one line here (and its header). */
#include "gpu/backend.h"

#include <stdio.h>
#include <string.h>

#include "gpu/nvml_backend.h"
#include "gpu/fakegpu.h"

static const gpu_backend_ops *const backends[] = {
    &gpu_backend_fakegpu,
    &gpu_backend_nvml,
};

#define NBACKENDS (sizeof backends / sizeof backends[0])

const gpu_backend_ops *gpu_backend_find(const char *name)
{
    for (size_t i = 0; name && i < NBACKENDS; i++)
        if (!strcmp(backends[i]->name, name))
            return backends[i];
    return NULL;
}

const char *gpu_backend_names(void)
{
    static char names[128];
    if (!names[0]) {
        size_t n = 0;
        for (size_t i = 0; i < NBACKENDS; i++)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "",
                                  backends[i]->name);
    }
    return names;
}

int gpu_backend_check(const char *name, carma_err *err)
{
    if (gpu_backend_find(name))
        return 0;
    return carma_err_set(err, "unknown GPU backend '%s' (available: %s)", name ? name : "",
                         gpu_backend_names());
}

const char *metric_source_name(metric_source s)
{
    switch (s) {
    case SRC_UNKNOWN:
        return "unknown";
    case SRC_FAKEGPU:
        return "sim";
    case SRC_NVML:
        return "nvml";
    case SRC_GPM:
        return "gpm";
    case SRC_DCGM:
        return "dcgm";
    }
    return "unknown";
}
