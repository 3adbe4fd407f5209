/* dcgm.h — SM activity, SM occupancy and DRAM activity (DCGM fields 1002, 1003, 1005) plus power
 * and energy (155, 156) from NVIDIA DCGM, loaded with dlopen (libdcgm.so.4, then libdcgm.so.3;
 * $CARMA_DCGM_LIBRARY overrides). carma connects to the node's nv-hostengine
 * ($CARMA_DCGM_HOSTENGINE, else 127.0.0.1, its default) and runs an embedded host engine only
 * when none answers. Used for GPUs without GPM (Ampere and older). When DCGM is absent these
 * metrics stay unknown. DCGM ratios are already 0..1. */
#ifndef CARMA_GPU_DCGM_H
#define CARMA_GPU_DCGM_H

#include <stdbool.h>

#include "util/err.h"

#define DCGM_LIBRARY_ENV "CARMA_DCGM_LIBRARY"
/* IP[:port] (port 5555 when left out) or unix://PATH */
#define DCGM_HOSTENGINE_ENV "CARMA_DCGM_HOSTENGINE"
#define DCGM_CONNECT_TIMEOUT_MS 500
#define DCGM_STATUS_MAX (2 * CARMA_ERR_MAX) /* dcgm_reader_status's text, with its NUL */

typedef struct dcgm_reader dcgm_reader;

/* One GPU's values, indexed by NVML index (DCGM field 52). NaN = unknown. */
typedef struct dcgm_gpu_values {
    bool present; /* DCGM reported this GPU */
    double smact, smocc, drama; /* 0..1 */
    double power_w, energy_mj;
} dcgm_gpu_values;

/* Loads DCGM, connects to the host engine or starts an embedded one, and watches the fields.
 * Errors name the library tried and give dlerror() or DCGM's message. */
int dcgm_reader_open(dcgm_reader **out, carma_err *err);
/* Which host engine is used ("DCGM via nv-hostengine at 127.0.0.1", "DCGM embedded (no
 * nv-hostengine at ...)") and, when they could not be watched, why the profiling fields (SM
 * activity, occupancy, DRAM activity) stay unknown while power and energy still arrive. */
const char *dcgm_reader_status(const dcgm_reader *d);
/* Latest values into vals[0..n) by NVML index; GPUs DCGM did not report get present = false. */
int dcgm_reader_read(dcgm_reader *d, dcgm_gpu_values *vals, int n, carma_err *err);
void dcgm_reader_close(dcgm_reader *d);

#endif
