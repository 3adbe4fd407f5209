/* simstate.h — the shared state file of the `sim` GPU backend: the virtual GPUs and, per
 * process, the memory and activity it put on them. carma-fakejob writes its registration here
 * (under an exclusive flock); the sim backend reads it (under a shared flock) every tick.
 *
 * Text format, one record a line:
 *     carma-sim 1
 *     gpu UUID NAME TOTAL_MIB TDP_W
 *     proc PID GPU_INDEX MIB SMACT SMOCC DRAMA
 */
#ifndef CARMA_GPU_SIMSTATE_H
#define CARMA_GPU_SIMSTATE_H

#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

#define SIM_MAX_GPUS 64
#define SIM_MAX_PROCS 512

typedef struct sim_gpu {
    char uuid[48];
    char name[48];
    uint64_t total_mib;
    double tdp_w;
} sim_gpu;

typedef struct sim_proc {
    pid_t pid;
    int gpu;
    uint64_t mib;
    double smact, smocc, drama;
} sim_proc;

typedef struct sim_state {
    int ngpus;
    sim_gpu gpus[SIM_MAX_GPUS];
    int nprocs;
    sim_proc procs[SIM_MAX_PROCS];
} sim_state;

/* Parses "2xA100-40GB" or "2xA100-40GB,1xV100-16GB": COUNTxNAME, NAME ending in -<N>GB. */
int sim_parse_spec(const char *spec, sim_state *out, carma_err *err);

/* Creates the file with these GPUs (mode 0666: fake jobs of every user register in it). When
 * the file already describes the same GPUs, the processes in it are kept (a restarted daemon
 * finds its running fake jobs again). */
int sim_state_init_file(const char *path, const sim_state *gpus, carma_err *err);

/* Reads the file; processes that no longer exist are left out. */
int sim_state_read(const char *path, sim_state *out, carma_err *err);

/* Registers `mib` of memory and the activity on each GPU named in `devices` (a
 * CUDA_VISIBLE_DEVICES value: UUIDs or indices). Returns 0 when registered, 1 when some GPU
 * lacks the memory (nothing registered; *oom_gpu = that GPU's position in `devices`,
 * *oom_total / *oom_free its figures), -1 on error. */
int sim_state_register(const char *path, pid_t pid, const char *devices, uint64_t mib,
                       double smact, double smocc, double drama, int *oom_gpu,
                       uint64_t *oom_total, uint64_t *oom_free, carma_err *err);

/* Removes every registration of pid. */
int sim_state_unregister(const char *path, pid_t pid, carma_err *err);

/* Memory used on a GPU by the processes in the state. */
uint64_t sim_state_used_mib(const sim_state *st, int gpu);

#endif
