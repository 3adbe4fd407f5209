/* dcgm.h — SM activity, SM occupancy and DRAM activity (DCGM fields 1002, 1003, 1005) plus power
 * and energy (155, 156) from NVIDIA DCGM, loaded with dlopen (libdcgm.so.4, then libdcgm.so.3;
 * $CARMA_DCGM_LIBRARY overrides) and run in embedded mode. Used for GPUs without GPM (Ampere and
 * older). When DCGM is absent these metrics stay unknown. DCGM ratios are already 0..1. */
#ifndef CARMA_GPU_DCGM_H
#define CARMA_GPU_DCGM_H

#include <stdbool.h>

#include "util/err.h"

#define DCGM_LIBRARY_ENV "CARMA_DCGM_LIBRARY"
#define DCGM_STATUS_MAX (CARMA_ERR_MAX + 192) /* dcgm_reader_status's text, with its NUL */

typedef struct dcgm_reader dcgm_reader;

/* One GPU's values, indexed by NVML index (DCGM field 52). NaN = unknown. */
typedef struct dcgm_gpu_values {
    bool present; /* DCGM reported this GPU */
    double smact, smocc, drama; /* 0..1 */
    double power_w, energy_mj;
} dcgm_gpu_values;

/* Loads DCGM, starts the embedded host engine and watches the fields. Errors name the library
 * tried and give dlerror() or DCGM's message. */
int dcgm_reader_open(dcgm_reader **out, carma_err *err);
/* "" when every field is watched, else why the profiling fields (SM activity, occupancy, DRAM
 * activity) are not while power and energy still are. */
const char *dcgm_reader_status(const dcgm_reader *d);
/* Latest values into vals[0..n) by NVML index; GPUs DCGM did not report get present = false. */
int dcgm_reader_read(dcgm_reader *d, dcgm_gpu_values *vals, int n, carma_err *err);
void dcgm_reader_close(dcgm_reader *d);

#endif
