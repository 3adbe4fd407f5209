/* carma_spank.h — the parts of carma's SPANK plugin (carma_spank.so) and what they share: the
 * plugstack.conf settings, the submit side (--gpu-mem to a MiB figure for job_submit.lua) and
 * the node side (the job's MPS memory cap, carma's MPS server). docs/slurm.md describes it. */
#ifndef CARMA_SLURM_SPANK_H
#define CARMA_SLURM_SPANK_H

#include <slurm/spank.h>
#include <stdint.h>

#include "util/err.h"

/* The variable the submit side hands the controller with spank_job_control_setenv: it reaches
 * job_submit.lua in job_desc.spank_job_env as "CARMA_GPU_MEM_MIB=N" (and the job as
 * SLURM_SPANK_CARMA_GPU_MEM_MIB). */
#define CSPANK_ENV_MIB "CARMA_GPU_MEM_MIB"

/* When the figure cannot be had (--gpu-mem=auto's estimate failed), the reason, passed the same
 * way: job_submit.lua refuses the job with it (an `optional` plugin cannot stop sbatch). */
#define CSPANK_ENV_ERROR "CARMA_GPU_MEM_ERROR"

/* The largest figure accepted (MiB): 1 TiB, far above any GPU, below any overflow. */
#define CSPANK_MAX_MIB (1024u * 1024u)

/* Settings from the plugin's plugstack.conf line (key=value words). */
typedef struct cspank_conf {
    char carma[512];   /* carma=PATH: the binary that estimates (--gpu-mem=auto) */
    char socket[256];  /* socket=PATH: the node's carma daemon */
    unsigned shard_mib; /* shard_mib=N: the memory one shard stands for (1024) */
    int timeout_ms;     /* timeout_ms=N: the most one talk with the daemon may take (2000) */
} cspank_conf;

/* Reads the plugstack.conf words av[0..ac) into c (defaults first). Returns 0, or -1 with err
 * naming the word that is wrong. */
int cspank_conf_parse(cspank_conf *c, int ac, char **av, carma_err *err);

/* Submit side (srun, sbatch, salloc): the MiB figure of --gpu-mem's value: a size
 * (parse_size_mib: 10G, 8000M, 8000) or "auto", which runs `carma estimate --run --json`
 * on the job's command, as the submitting user. Returns 0, or -1 with err for the user. */
int cspank_submit_mib(const cspank_conf *c, const char *value, uint64_t *mib, carma_err *err);

/* The job's command as the submitting program was given it (argv words after its options),
 * for the estimate: srun and salloc, the command; sbatch, a Python batch script with its
 * arguments, or --wrap's command split into words. *argv is a NULL-terminated heap array
 * (cspank_free_argv). Returns 0, or -1 with err saying why the command cannot be told. */
int cspank_job_command(char ***argv, carma_err *err);
void cspank_free_argv(char **argv);

/* Node side (slurmstepd, as the job's user): sets the job's CUDA_MPS_PINNED_DEVICE_MEM_LIMIT
 * from its shards, and CUDA_MPS_PIPE_DIRECTORY when the node's carma daemon runs an MPS
 * server; a step granted no GPU, or a shard step whose cap cannot be set, gets an empty
 * CUDA_VISIBLE_DEVICES (no GPU). Never fails the hook: what goes wrong is logged. */
void cspank_node_setup(spank_t sp, const cspank_conf *c);

#endif
