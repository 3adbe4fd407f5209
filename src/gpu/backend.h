/* backend.h — GPU backends behind one table (as nvtop's vendor table): each backend reads the
 * GPUs of this machine (or simulated ones) into gpu_reading records. Units are converted at
 * this edge: memory in MiB, utilizations 0..1, power in W, energy in mJ. A metric that could
 * not be read is NaN / known=false, never zero. */
#ifndef CARMA_GPU_BACKEND_H
#define CARMA_GPU_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

#define GPU_MAX_PROCS 64

typedef enum metric_source {
    SRC_UNKNOWN = 0, /* not read */
    SRC_FAKEGPU,     /* the fake-GPU backend (fakegpu.h); shown as "sim" */
    SRC_NVML,        /* plain NVML queries */
    SRC_GPM,         /* NVML GPM metrics (Hopper+) */
    SRC_DCGM         /* DCGM fields */
} metric_source;

const char *metric_source_name(metric_source s);

/* Whether a GPU runs in MIG mode (Multi-Instance GPU: CUDA then sees only its instances,
 * "MIG-..." UUIDs, never the whole GPU that carma places tasks on). */
typedef enum gpu_mig {
    GPU_MIG_UNKNOWN = 0, /* the query failed */
    GPU_MIG_OFF,         /* a whole GPU: MIG off, or a GPU (or driver) without MIG */
    GPU_MIG_ON           /* the nvml backend offers such a GPU to no scheduler (nvml_backend.h) */
} gpu_mig;

typedef struct gpu_proc {
    pid_t pid;
    uint64_t used_mib;  /* 0 with used_known = false when NVML cannot say */
    bool used_known;
    bool mps_client;    /* in the MPS client list (meaningful when the reading's mps_known) */
} gpu_proc;

typedef struct gpu_reading {
    int index;
    int minor;                  /* N of /dev/nvidiaN (Slurm's GPU numbers); -1 unknown */
    char uuid[96];
    char name[96];
    gpu_mig mig;
    bool mem_known;
    uint64_t total_mib, used_mib, free_mib;
    double util_gpu;            /* NVML utilization.gpu, 0..1, NaN unknown */
    double smact, smocc, drama; /* 0..1, NaN unknown */
    metric_source src_activity; /* where smact/smocc/drama came from */
    double power_w;             /* NaN unknown */
    double energy_mj;           /* total energy counter, NaN unknown */
    bool procs_known;
    bool mps_known;             /* the MPS client list was read too (procs[].mps_client) */
    int nprocs;
    gpu_proc procs[GPU_MAX_PROCS];
    metric_source src_power;    /* where power_w and energy_mj came from (NVML, or DCGM 155/156) */
} gpu_reading;

typedef struct gpu_backend gpu_backend;

typedef struct gpu_backend_ops {
    const char *name; /* "sim" (the fake-GPU backend), "nvml" */
    /* arg: backend-specific (sim: "2xA100-40GB@STATEFILE"; nvml: NULL). */
    int (*open)(gpu_backend **out, const char *arg, carma_err *err);
    int (*count)(gpu_backend *b);
    /* Reads every GPU into out[0..count-1]. */
    int (*sample)(gpu_backend *b, gpu_reading *out, carma_err *err);
    void (*close)(gpu_backend *b);
} gpu_backend_ops;

/* Looks up a backend by name in the table; NULL if unknown. */
const gpu_backend_ops *gpu_backend_find(const char *name);
/* Names of all backends, for help and errors: "sim, nvml". */
const char *gpu_backend_names(void);
/* 0 when name is a backend's, else -1 with err naming it and the backends (the config's
 * gpu_backend, --gpu-backend and the daemon's start all say it so). */
int gpu_backend_check(const char *name, carma_err *err);

#endif
