/* visible.h — which of the machine's GPUs a daemon inside a job allocation may use. NVML, unlike
 * CUDA, ignores CUDA_VISIBLE_DEVICES and lists every GPU of the node, so a daemon started in a
 * Slurm job that holds some GPUs restricts itself: by SLURM_JOB_GPUS (the job's GPU indices on
 * the node, matched against each GPU's /dev/nvidiaN minor number), else by CUDA_VISIBLE_DEVICES
 * (UUIDs, or a unique "GPU-..." prefix, as CUDA accepts them, or NVML indices). Pure: the
 * caller reads the GPUs' identities and the environment; tests give both. */
#ifndef CARMA_GPU_VISIBLE_H
#define CARMA_GPU_VISIBLE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

#define GPU_VISIBLE_NOTE_MAX 1024

/* One GPU as NVML lists it. */
typedef struct gpu_ident {
    int nvml_index;
    bool minor_known; /* nvmlDeviceGetMinorNumber answered */
    unsigned minor;   /* /dev/nvidia<minor> */
    char uuid[96];    /* "" when unknown */
} gpu_ident;

typedef struct gpu_visible_env {
    const char *slurm_job_gpus;       /* SLURM_JOB_GPUS, NULL when unset */
    const char *cuda_visible_devices; /* CUDA_VISIBLE_DEVICES, NULL when unset */
    bool minor_supported;             /* the library has nvmlDeviceGetMinorNumber */
} gpu_visible_env;

/* Sets keep[i] for every GPU of all[0..n) the environment allows (all of them when neither
 * variable is set) and writes a one-line note saying what was kept and why ("" when nothing was
 * filtered). An entry that names no GPU, an empty list, or a list that leaves no GPU is an error
 * naming the variable and the entry. */
int gpu_visible_select(const gpu_ident *all, int n, const gpu_visible_env *env, bool *keep,
                       char *note, size_t note_cap, carma_err *err);

#endif
