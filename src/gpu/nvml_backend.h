/* nvml_backend.h — the "nvml" GPU backend: real GPUs through libnvidia-ml loaded at run time,
 * SM activity/occupancy/DRAM activity through GPM (Hopper+) or DCGM (older GPUs). The backend
 * table (backend.c) lists it; tests call it directly. open()'s arg is the library path (NULL:
 * $CARMA_NVML_LIBRARY, else libnvidia-ml.so.1). */
#ifndef CARMA_GPU_NVML_BACKEND_H
#define CARMA_GPU_NVML_BACKEND_H

#include "gpu/backend.h"

extern const gpu_backend_ops gpu_backend_nvml;

/* gpu_backend_nvml's open() leaves out every GPU in MIG mode (nvmlDeviceGetMigMode's current
 * mode enabled): CUDA runs nothing on such a GPU as a whole, only on its MIG instances, and
 * carma places tasks on whole GPUs. A GPU whose mode cannot be read is kept (its reading's mig
 * is GPU_MIG_UNKNOWN). This open keeps them too, marked GPU_MIG_ON in their readings: for
 * `carma gpus --gpu-backend nvml`, which shows every GPU. */
int nvml_backend_open_all(gpu_backend **out, const char *library, carma_err *err);

/* A GPU open() left out because it is in MIG mode. */
typedef struct nvml_mig_gpu {
    unsigned nvml_index;
    char uuid[96]; /* "" when unknown */
} nvml_mig_gpu;

/* The GPUs open() left out for MIG mode, in NVML order: *n of them (0 after
 * nvml_backend_open_all). The daemon logs each. */
const nvml_mig_gpu *nvml_backend_mig_left_out(const gpu_backend *b, int *n);

/* Where SM activity comes from on GPUs without GPM, or why it is unknown there (e.g. "DCGM:
 * cannot load libdcgm.so.4 ...", or DCGM's mode: the node's host engine or embedded); "" when
 * every GPU has GPM. For `carma gpus --gpu-backend nvml`. */
const char *nvml_backend_activity_note(const gpu_backend *b);

/* Which GPUs SLURM_JOB_GPUS or CUDA_VISIBLE_DEVICES left to carma, with their NVML indices and
 * UUIDs (src/gpu/visible.h), or "" when neither is set and every GPU is used. */
const char *nvml_backend_visible_note(const gpu_backend *b);

#endif
