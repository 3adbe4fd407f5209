/* fakegpu_state.h — the shared state file of the fake-GPU backend (fakegpu.h; `sim` to users):
 * the virtual GPUs and, per process, the memory and activity it put on them. carma-fakejob
 * writes its registration here (under an exclusive flock); the backend reads it (under a shared
 * flock) every tick. The file's format and its "sim" words are on disk: kept as they were.
 *
 * A change never rewrites the file in place: the new contents go to PATH.tmp in the same
 * directory, are flushed, and are renamed over PATH. A writer killed at any moment (the fake
 * jobs of a cancelled task are SIGKILLed) leaves the old file or the new one, never a partial
 * one. So a writer needs write access to the directory, and the file is private (0600) to the
 * user who last wrote it.
 *
 * Text format, one record a line:
 *     carma-sim 1
 *     gpu UUID NAME TOTAL_MIB TDP_W
 *     proc PID GPU_INDEX MIB SMACT SMOCC DRAMA
 */
#ifndef CARMA_GPU_FAKEGPU_STATE_H
#define CARMA_GPU_FAKEGPU_STATE_H

#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

#define FAKEGPU_MAX_GPUS 64
#define FAKEGPU_MAX_PROCS 512

typedef struct fakegpu_dev {
    char uuid[48];
    char name[48];
    uint64_t total_mib;
    double tdp_w;
} fakegpu_dev;

typedef struct fakegpu_proc {
    pid_t pid;
    int gpu;
    uint64_t mib;
    double smact, smocc, drama;
} fakegpu_proc;

typedef struct fakegpu_state {
    int ngpus;
    fakegpu_dev gpus[FAKEGPU_MAX_GPUS];
    int nprocs;
    fakegpu_proc procs[FAKEGPU_MAX_PROCS];
} fakegpu_state;

/* Parses "2xA100-40GB" or "2xA100-40GB,1xV100-16GB": COUNTxNAME, NAME ending in -<N>GB. */
int fakegpu_parse_spec(const char *spec, fakegpu_state *out, carma_err *err);
/* 0 when the spec parses, else -1 with fakegpu_parse_spec's error: the config's check and the
 * daemon's, before it starts, without a state of their own (it is large). */
int fakegpu_check_spec(const char *spec, carma_err *err);

/* Creates (or replaces) the file with these GPUs. When the file already describes the same
 * GPUs, the processes in it are kept (a restarted daemon finds its running fake jobs again). */
int fakegpu_state_init_file(const char *path, const fakegpu_state *gpus, carma_err *err);

/* Reads the file; processes that no longer exist are left out. An empty file, or one without
 * the header line, is an error. */
int fakegpu_state_read(const char *path, fakegpu_state *out, carma_err *err);

/* Registers `mib` of memory and the activity on each GPU named in `devices` (a
 * CUDA_VISIBLE_DEVICES value: UUIDs or indices). Returns 0 when registered, 1 when some GPU
 * lacks the memory (nothing registered; *oom_gpu = that GPU's position in `devices`,
 * *oom_total / *oom_free its figures), -1 on error. */
int fakegpu_state_register(const char *path, pid_t pid, const char *devices, uint64_t mib,
                       double smact, double smocc, double drama, int *oom_gpu,
                       uint64_t *oom_total, uint64_t *oom_free, carma_err *err);

/* Removes every registration of pid. */
int fakegpu_state_unregister(const char *path, pid_t pid, carma_err *err);

/* Memory used on a GPU by the processes in the state. */
uint64_t fakegpu_state_used_mib(const fakegpu_state *st, int gpu);

#endif
