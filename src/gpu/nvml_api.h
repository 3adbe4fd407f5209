/* nvml_api.h — our own declarations of the part of NVML carma uses. No NVIDIA header exists on
 * the build machines, so the library is reached with dlopen/dlsym against these. Layouts and
 * values follow NVML's public header (13.x) as summarised in the project's ecosystem notes:
 * return codes, the version word of versioned structs, the 24-byte process record of the _v2/_v3
 * process lists, the MIG mode values, and the GPM (Hopper+) sample and metric structs. The fake
 * library in tests/fake_nvml implements the same declarations. */
#ifndef CARMA_GPU_NVML_API_H
#define CARMA_GPU_NVML_API_H

#include <stdint.h>

typedef int nvmlReturn_t; /* an enum in NVML's header; stored as int, as nvtop does */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_LIBRARY_NOT_FOUND 12
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_LIB_RM_VERSION_MISMATCH 18
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define NVML_ERROR_UNKNOWN 999

/* Buffer sizes for UUID and name strings (NVML_DEVICE_*_V2_BUFFER_SIZE). */
#define NVML_DEVICE_UUID_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_BUFFER_SIZE 96

/* usedGpuMemory when the driver cannot tell (e.g. Windows WDDM): all ones. */
#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFULL

/* NVML_STRUCT_VERSION(data, ver) = sizeof(struct) | ver << 24. */
#define NVML_STRUCT_VERSION(size, ver) ((unsigned int)(size) | ((unsigned int)(ver) << 24))

typedef struct nvmlMemory_v1 {
    unsigned long long total, free, used; /* bytes; v1 used includes driver-reserved memory */
} nvmlMemory_t;

typedef struct nvmlMemory_v2 {
    unsigned int version; /* NVML_STRUCT_VERSION(sizeof(nvmlMemory_v2_t), 2) = 0x02000028 */
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define NVML_MEMORY_V2_VERSION NVML_STRUCT_VERSION(sizeof(nvmlMemory_v2_t), 2)

typedef struct nvmlUtilization {
    unsigned int gpu, memory; /* percent */
} nvmlUtilization_t;

/* Process records. The plain list takes v1 (16 bytes); _v2 and today's _v3 take v2 (24 bytes);
 * drivers 535.43-535.86 wrote 32-byte records from _v3 (an extra usedGpuCcProtectedMemory),
 * which is why the reader probes the stride instead of trusting sizeof. */
typedef struct nvmlProcessInfo_v1 {
    unsigned int pid;
    unsigned long long usedGpuMemory; /* bytes */
} nvmlProcessInfo_v1_t;

typedef struct nvmlProcessInfo_v2 {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_v2_t;

#define NVML_PROCESS_INFO_CC_SIZE 32 /* the 535.43-535.86 _v3 record */

/* ---- MIG (Ampere and newer) ----
 * nvmlDeviceGetMigMode(device, &currentMode, &pendingMode) gives each mode as one of these.
 * The current mode is what CUDA sees now; the pending one takes effect at the next GPU reset.
 * A GPU that cannot do MIG answers NVML_ERROR_NOT_SUPPORTED. */
#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE 1

/* ---- GPM (Hopper and newer) ---- */
#define NVML_GPM_SUPPORT_VERSION 1
#define NVML_GPM_METRICS_GET_VERSION 1

/* Metric ids (nvmlGpmMetricId_t). */
#define NVML_GPM_METRIC_SM_UTIL 2       /* ~ DCGM SMACT, percent */
#define NVML_GPM_METRIC_SM_OCCUPANCY 3  /* ~ DCGM SMOCC, percent */
#define NVML_GPM_METRIC_DRAM_BW_UTIL 10 /* ~ DCGM DRAMA, percent */

/* NVML_GPM_METRIC_MAX grew from 98 to 333 across drivers with the same struct version; the
 * driver only touches the first numMetrics entries, and we ask for three. */
#define NVML_GPM_METRIC_MAX 333

typedef struct nvmlGpmSupport {
    unsigned int version;
    unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

typedef struct nvmlGpmMetric {
    unsigned int metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    struct {
        char *shortName, *longName, *unit;
    } metricInfo;
} nvmlGpmMetric_t;

typedef struct nvmlGpmMetricsGet {
    unsigned int version;
    unsigned int numMetrics;
    nvmlGpmSample_t sample1, sample2;
    nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

/* ---- function signatures (pointer types for dlsym) ---- */
typedef nvmlReturn_t (*nvml_init_fn)(void);
typedef nvmlReturn_t (*nvml_shutdown_fn)(void);
typedef const char *(*nvml_error_string_fn)(nvmlReturn_t);
typedef nvmlReturn_t (*nvml_count_fn)(unsigned int *);
typedef nvmlReturn_t (*nvml_handle_fn)(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*nvml_string_fn)(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*nvml_memory_v1_fn)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*nvml_memory_v2_fn)(nvmlDevice_t, nvmlMemory_v2_t *);
typedef nvmlReturn_t (*nvml_utilization_fn)(nvmlDevice_t, nvmlUtilization_t *);
typedef nvmlReturn_t (*nvml_uint_fn)(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*nvml_ull_fn)(nvmlDevice_t, unsigned long long *);
/* nvmlDeviceGetMigMode: current mode, pending mode */
typedef nvmlReturn_t (*nvml_mig_mode_fn)(nvmlDevice_t, unsigned int *, unsigned int *);
/* The process lists take a record array whose layout depends on the symbol (see above). */
typedef nvmlReturn_t (*nvml_procs_fn)(nvmlDevice_t, unsigned int *, void *);
typedef nvmlReturn_t (*nvml_gpm_support_fn)(nvmlDevice_t, nvmlGpmSupport_t *);
typedef nvmlReturn_t (*nvml_gpm_alloc_fn)(nvmlGpmSample_t *);
typedef nvmlReturn_t (*nvml_gpm_free_fn)(nvmlGpmSample_t);
typedef nvmlReturn_t (*nvml_gpm_get_fn)(nvmlDevice_t, nvmlGpmSample_t);
typedef nvmlReturn_t (*nvml_gpm_metrics_fn)(nvmlGpmMetricsGet_t *);

#endif
