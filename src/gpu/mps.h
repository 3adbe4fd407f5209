/* mps.h — CUDA MPS helpers for the daemon's `mps = on` mode: the per-task client environment
 * (memory cap = the task's memory figure + margin, optional SM thread percentage), starting and
 * stopping an MPS control daemon with its own pipe and log directories (fork/exec of
 * nvidia-cuda-mps-control), and recognising MPS server processes in NVML's lists (under MPS
 * NVML shows the server holding the context, not the tasks). */
#ifndef CARMA_GPU_MPS_H
#define CARMA_GPU_MPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

#define MPS_CONTROL_BIN "nvidia-cuda-mps-control"
#define MPS_CONTROL_ENV "CARMA_MPS_CONTROL" /* overrides the binary (a path) */
#define MPS_PID_FILE "nvidia-cuda-mps-control.pid"

typedef struct mps_options {
    const char *control_bin;     /* NULL: $CARMA_MPS_CONTROL, else MPS_CONTROL_BIN via PATH */
    const char *pipe_dir;        /* CUDA_MPS_PIPE_DIRECTORY (required) */
    const char *log_dir;         /* CUDA_MPS_LOG_DIRECTORY (required) */
    const char *visible_devices; /* CUDA_VISIBLE_DEVICES for the daemon; NULL: all GPUs */
    int default_thread_pct;      /* daemon-wide CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; 0: unset */
    double timeout_s;            /* per control call; 0: 10 s */
    bool shared;                 /* tasks run as other users (a root daemon): see below */
} mps_options;

/* The default pipe and log directories of a daemon whose state directory is `state`:
 * STATE/mps/pipe and STATE/mps/log. With `shared` (a root daemon, its tasks run as their
 * submitters) the pipe directory is STATE-mps instead, beside the state directory: that one
 * is private (0700), and the MPS server the control daemon starts for a task's user runs as
 * that user and must reach the pipe directory itself. -1 when a path is too long. */
int mps_default_dirs(const char *state, bool shared, char *pipe, size_t pipe_cap, char *log,
                     size_t log_cap, carma_err *err);

/* Creates the pipe and log directories when missing (0700); an existing one must be the
 * effective user's, writable by nobody else, and not a symlink (else -1, naming it). With
 * o->shared the pipe directory is made 0755 (its missing parents too), and it must be
 * searchable by others (o+x), as must every directory above it, each of those also owned by
 * the effective user or root and writable by nobody else unless sticky (whoever could write
 * there could swap the pipe directory for one of theirs): else -1, naming the directory and
 * why. The log directory stays private either way. */
int mps_dirs_prepare(const mps_options *o, carma_err *err);

/* Creates the pipe and log directories as mps_dirs_prepare and runs
 * `nvidia-cuda-mps-control -d` with them in its environment (with o->shared, under umask 022,
 * not the daemon's 077); succeeds when that exits 0.
 * Errors say when the binary is absent and quote the start log (LOG_DIR/carma-mps-start.log)
 * otherwise. */
int mps_control_start(const mps_options *o, carma_err *err);

/* Sends one command (e.g. "get_server_list") to the control daemon through
 * nvidia-cuda-mps-control's stdin; its output (NUL-terminated, cut to cap) goes to reply. */
int mps_control_command(const mps_options *o, const char *cmd, char *reply, size_t cap,
                        carma_err *err);

/* `quit`: the control daemon and its servers exit. */
int mps_control_stop(const mps_options *o, carma_err *err);

/* True when PIPE_DIR/nvidia-cuda-mps-control.pid names a live process. */
bool mps_control_running(const mps_options *o);

/* Environment for one client task, as "KEY=VALUE" strings for its exec: the pipe directory,
 * CUDA_MPS_PINNED_DEVICE_MEM_LIMIT with (figure + margin) MiB on each of its ngpus GPUs, named
 * by the ordinal the task's CUDA sees (0..ngpus-1, in its CUDA_VISIBLE_DEVICES order): limits
 * keyed by UUID are not applied by some drivers (NVIDIA's k8s-device-plugin moved to
 * ordinals for that; the Slurm plugin here sets ordinals too), and, when thread_pct is
 * 1..100, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE. */
#define MPS_ENV_MAX 4
#define MPS_ENV_LEN 2048
typedef struct mps_env {
    int n;
    char vars[MPS_ENV_MAX][MPS_ENV_LEN];
} mps_env;
int mps_client_env(const mps_options *o, int ngpus,
                   uint64_t figure_mib, uint64_t margin_mib, int thread_pct, mps_env *out,
                   carma_err *err);

/* True when `pid` is an MPS server: argv[0] or the executable is nvidia-cuda-mps-server, or
 * (when those cannot be read) its comm is the kernel's 15-character cut "nvidia-cuda-mps". */
bool mps_is_server_process(const char *proc_root, pid_t pid);

#endif
