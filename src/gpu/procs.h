/* procs.h — a task's processes read from /proc (never from `ps` output), matched against the
 * GPUs' process lists: which GPUs the task is on (to move the core's grace state) and how much
 * memory its processes hold there (to record its peak). */
#ifndef CARMA_GPU_PROCS_H
#define CARMA_GPU_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu/backend.h"
#include "util/err.h"

#define PROC_ROOT "/proc"
#define PROC_MAX_GPUS 64

typedef struct pid_set {
    pid_t *pids;
    int n;
    size_t cap;
} pid_set;

void pid_set_free(pid_set *s);
bool pid_set_has(const pid_set *s, pid_t pid);

/* One reading of every process's parent, process group and session, so that a tick with
 * several running tasks scans /proc once. */
typedef struct proc_entry {
    pid_t pid, ppid, pgrp, sid;
} proc_entry;
typedef struct proc_table {
    proc_entry *e;
    int n;
} proc_table;

/* Reads every process under proc_root; errors only when proc_root cannot be read. */
int proc_table_scan(const char *proc_root, proc_table *t, carma_err *err);
/* Reads only the given processes and their ancestors (their parent chains up to init): enough
 * for proc_table_task_tree to say which of `pids` belong to a task, at a fraction of a full
 * scan's cost when few processes are on the GPUs. Processes that have exited are left out. */
int proc_table_scan_pids(const char *proc_root, const pid_t *pids, int n, proc_table *t,
                         carma_err *err);
void proc_table_free(proc_table *t);
bool proc_table_has(const proc_table *t, pid_t pid);
/* The task tree of `root` (as proc_task_tree below) from a table. */
int proc_table_task_tree(const proc_table *t, pid_t root, pid_set *out, carma_err *err);

/* The processes of a task whose launched process is `root`: root itself if it still runs, its
 * descendants, and every process of the process group or session that root leads (the
 * daemon's supervisors start each task as a process-group leader), so workers that outlived
 * their parent are still counted.
 * `proc_root` is "/proc" (PROC_ROOT) or a directory laid out like it (tests). Replaces *out's
 * contents; errors only when proc_root cannot be read. Scans /proc each call. */
int proc_task_tree(const char *proc_root, pid_t root, pid_set *out, carma_err *err);

/* Where a task's processes are on the GPUs. */
typedef struct task_gpu_usage {
    int ngpus;                       /* GPUs holding at least one of the task's processes */
    int gpus[PROC_MAX_GPUS];         /* their gpu_reading.index, in reading order */
    uint64_t used_mib[PROC_MAX_GPUS]; /* summed memory of the task's processes on each GPU */
    bool used_known[PROC_MAX_GPUS];  /* false when some process's memory was unknown */
    uint64_t total_mib;              /* sum over the GPUs */
    bool total_known;                /* every matched process's memory was known */
    int nprocs;                      /* process entries matched */
} task_gpu_usage;

/* Matches `pids` against the process lists of readings[0..n). GPUs whose list is unknown are
 * skipped (nothing can be said about them). */
void proc_match_task(const pid_set *pids, const gpu_reading *readings, int n,
                     task_gpu_usage *out);

/* True when the GPU's process list is known and holds no process but MPS servers (which hold a
 * context on every GPU they serve whether or not an MPS client runs). */
bool gpu_reading_idle(const gpu_reading *r, const char *proc_root);
/* True when the GPU's process list is known and holds no process but those in pids (NULL: none)
 * and MPS servers: a task's GPU that it has to itself. `live` (NULL: none) is a table read
 * after the reading (proc_table_scan_pids of its processes): a listed process missing from it
 * exited in between, most often the task's own at its end, and witnesses nothing. */
bool gpu_reading_only(const gpu_reading *r, const pid_set *pids, const proc_table *live,
                      const char *proc_root);

#endif
