/* nvml_lib.h — libnvidia-ml loaded at run time: the dlopen handle and one function pointer per
 * NVML entry point carma uses, each resolved with dlsym (newest versioned name first, then the
 * older ones). Required entry points missing -> the load fails; an optional one missing stays
 * NULL and the metric it would give stays unknown. */
#ifndef CARMA_GPU_NVML_LIB_H
#define CARMA_GPU_NVML_LIB_H

#include "gpu/nvml_api.h"
#include "util/err.h"

#define NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define NVML_LIBRARY_ENV "CARMA_NVML_LIBRARY"

/* Which process record a resolved process-list symbol takes. */
typedef enum nvml_proc_layout {
    NVML_PROCS_NONE = 0,
    NVML_PROCS_V1, /* plain symbol: 16-byte records */
    NVML_PROCS_V2, /* _v2: 24 bytes */
    NVML_PROCS_V3  /* _v3: 24 bytes today, 32 on drivers 535.43-535.86 (stride probed) */
} nvml_proc_layout;

typedef struct nvml_lib {
    void *dl;
    char path[512]; /* what was opened, for messages */
    /* required */
    nvml_init_fn init;
    nvml_shutdown_fn shutdown;
    nvml_count_fn device_count;
    nvml_handle_fn device_handle;
    /* optional: NULL when the library lacks them */
    nvml_error_string_fn error_string;
    nvml_string_fn device_uuid, device_name;
    nvml_memory_v2_fn memory_v2;
    nvml_memory_v1_fn memory_v1;
    nvml_utilization_fn utilization;
    nvml_uint_fn power_usage;
    nvml_uint_fn minor_number; /* /dev/nvidiaN of a GPU, for SLURM_JOB_GPUS (visible.h) */
    nvml_ull_fn total_energy;
    nvml_mig_mode_fn mig_mode; /* NULL on a driver that predates MIG: no GPU has it on */
    nvml_procs_fn compute_procs, mps_procs;
    nvml_proc_layout compute_layout, mps_layout;
    nvml_gpm_support_fn gpm_query_support;
    nvml_gpm_alloc_fn gpm_sample_alloc;
    nvml_gpm_free_fn gpm_sample_free;
    nvml_gpm_get_fn gpm_sample_get;
    nvml_gpm_metrics_fn gpm_metrics_get;
} nvml_lib;

/* Opens `path` (NULL: $CARMA_NVML_LIBRARY, else libnvidia-ml.so.1), resolves the symbols and
 * calls nvmlInit. Errors name the library and give dlerror() or NVML's message. */
int nvml_lib_open(nvml_lib *lib, const char *path, carma_err *err);
/* nvmlShutdown and dlclose; safe on a zeroed or already closed lib. */
void nvml_lib_close(nvml_lib *lib);
/* NVML's text for a return code ("NVML error N" when nvmlErrorString is missing). */
const char *nvml_lib_strerror(const nvml_lib *lib, nvmlReturn_t rc);
/* True when all five GPM entry points resolved. */
int nvml_lib_has_gpm(const nvml_lib *lib);

#endif
