/* metric_source.c — names of the places a GPU metric can come from (backend.h). */
#include "gpu/backend.h"

const char *metric_source_name(metric_source s)
{
    switch (s) {
    case SRC_SIM: return "sim";
    case SRC_NVML: return "nvml";
    case SRC_GPM: return "gpm";
    case SRC_DCGM: return "dcgm";
    case SRC_UNKNOWN: break;
    }
    return "unknown";
}
