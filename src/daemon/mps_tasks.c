/* mps_tasks.c — the daemon's `mps = on` mode: it starts an MPS control daemon with its own pipe
 * and log directories (unless one already runs there), gives each task the pipe directory and
 * each collocated task a pinned-memory cap of its figure plus margin_mib (and the configured
 * active thread percentage), so a task whose estimate was too low fails alone; a cancelled
 * task's clients are terminated through the control daemon before the task is signalled, as
 * the MPS documentation asks. A CUDA program that cannot reach the control daemon runs without
 * MPS, silently (nvidia-cuda-mps-control(1)), and without its cap: a root daemon's pipe
 * directory is one other users' MPS servers can reach (mps.h), and a task whose process NVML
 * lists as a plain compute process rather than an MPS client is logged, once. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/journal.h"
#include "daemon/tasks.h"
#include "gpu/procs.h"

#define MPS_CALL_TIMEOUT_S 3.0

/* An older carma kept a root daemon's pipe directory in the state directory (0700), where no
 * other user's MPS server could reach it. A control daemon it left running there (for tasks
 * that outlived it) is not this one's: the log says so, and how to end it. */
static void note_old_control(daemon_state *d)
{
    char old[PATH_MAX + 16];
    snprintf(old, sizeof old, "%s/mps/pipe", d->opts->state_dir);
    mps_options o = {.pipe_dir = old};
    if (strcmp(old, d->mps_pipe) && mps_control_running(&o))
        dlog(d, "MPS: a control daemon still runs with pipe directory %s (an older carma's, "
             "which other users' tasks cannot reach); it is left running: once its tasks end, "
             "stop it (echo quit | CUDA_MPS_PIPE_DIRECTORY=%s nvidia-cuda-mps-control)", old,
             old);
}

int d_mps_start(daemon_state *d, carma_err *err)
{
    const daemon_config *c = &d->cfg.daemon;
    d->mps_on = c->mps;
    if (!d->mps_on)
        return 0;
    /* Only a root daemon runs tasks as other users (connect.c refuses them otherwise). */
    bool shared = geteuid() == 0;
    if (mps_default_dirs(d->opts->state_dir, shared, d->mps_pipe, sizeof d->mps_pipe,
                         d->mps_log, sizeof d->mps_log, err))
        return carma_err_prefix(err, "mps = on");
    if (c->mps_pipe_dir[0])
        snprintf(d->mps_pipe, sizeof d->mps_pipe, "%s", c->mps_pipe_dir);
    if (c->mps_log_dir[0])
        snprintf(d->mps_log, sizeof d->mps_log, "%s", c->mps_log_dir);
    d->mps = (mps_options){.pipe_dir = d->mps_pipe, .log_dir = d->mps_log,
                           .timeout_s = MPS_CALL_TIMEOUT_S, .shared = shared};
    /* before its pid file is believed: only a directory of ours says who runs there */
    if (mps_dirs_prepare(&d->mps, err))
        return carma_err_prefix(err, "mps = on");
    if (shared) {
        /* Tasks are handed the path checked, every directory of it: none through a link. */
        char real[PATH_MAX];
        if (!realpath(d->mps_pipe, real))
            return carma_err_set(err, "mps = on: MPS pipe directory %s: %s", d->mps_pipe,
                                 strerror(errno));
        size_t len = strlen(real);
        if (len >= sizeof d->mps_pipe)
            return carma_err_set(err, "mps = on: MPS pipe directory %s resolves to a path too "
                                      "long: %s", d->mps_pipe, real);
        memcpy(d->mps_pipe, real, len + 1);
        if (!c->mps_pipe_dir[0])
            note_old_control(d);
    }
    if (mps_control_running(&d->mps)) {
        dlog(d, "MPS: control daemon already running with pipe directory %s", d->mps_pipe);
        return 0;
    }
    if (mps_control_start(&d->mps, err))
        return carma_err_prefix(err, "mps = on");
    d->mps_started = true;
    dlog(d, "MPS: control daemon started (pipes %s, logs %s)", d->mps_pipe, d->mps_log);
    return 0;
}

void d_mps_stop(daemon_state *d)
{
    if (!d->mps_started)
        return;
    if (d->nrunning > 0) {
        /* Running tasks outlive the daemon (their supervisors adopt them again); their MPS
         * server must too. */
        dlog(d, "MPS: control daemon left running for %d running task(s)", d->nrunning);
        return;
    }
    carma_err err;
    if (mps_control_stop(&d->mps, &err))
        dlog(d, "MPS: %s", err.msg);
    else
        dlog(d, "MPS: control daemon stopped");
}

/* The task's own figure (the or-* policies' fixed floor is not one); 0: none. */
static uint64_t task_figure(const daemon_state *d, const dtask *t)
{
    dtask_mem mem = d_task_mem(d, t);
    return mem.from == DMEM_SUBMITTED || mem.from == DMEM_HISTORY || mem.from == DMEM_LEARNED
               ? mem.mib
               : 0;
}

int d_mps_task_env(daemon_state *d, const dtask *t, mps_env *env, carma_err *err)
{
    memset(env, 0, sizeof *env);
    if (!d->mps_on)
        return 0;
    uint64_t figure = task_figure(d, t);
    if (!t->att.collocated || figure == 0) {
        /* Alone on its GPUs (or no figure to cap it with): an MPS client without a cap. */
        if (t->att.collocated)
            dlog(d, "task %llu: collocated without a memory figure; no MPS memory cap",
                 (unsigned long long)t->st.id);
        env->n = 1;
        snprintf(env->vars[0], MPS_ENV_LEN, "CUDA_MPS_PIPE_DIRECTORY=%s", d->mps_pipe);
        return 0;
    }
    return mps_client_env(&d->mps, t->att.ngpus, figure, d->cfg.sched.margin_mib,
                          d->cfg.daemon.mps_thread_pct, env, err);
}

/* The task's processes that the last sample saw on its GPUs. */
static int task_clients(daemon_state *d, const dtask *t, pid_t *out, int cap)
{
    carma_err err;
    pid_set pids = {0};
    if (t->att.pid <= 0 || proc_task_tree(PROC_ROOT, t->att.pid, &pids, &err))
        return 0;
    int n = 0;
    for (int k = 0; k < t->att.ngpus; k++) {
        const gpu_reading *r = &d->readings[t->att.gpus[k]];
        for (int i = 0; i < r->nprocs && n < cap; i++) {
            bool dup = false;
            for (int j = 0; j < n; j++)
                dup |= out[j] == r->procs[i].pid;
            if (!dup && pid_set_has(&pids, r->procs[i].pid))
                out[n++] = r->procs[i].pid;
        }
    }
    pid_set_free(&pids);
    return n;
}

void d_mps_terminate(daemon_state *d, const dtask *t)
{
    if (!d->mps_on)
        return;
    pid_t clients[GPU_MAX_PROCS];
    int nclients = task_clients(d, t, clients, GPU_MAX_PROCS);
    if (nclients == 0)
        return;
    char reply[1024], cmd[96];
    carma_err err;
    if (mps_control_command(&d->mps, "get_server_list", reply, sizeof reply, &err)) {
        dlog(d, "task %llu: MPS: %s", (unsigned long long)t->st.id, err.msg);
        return;
    }
    /* One server per line; a client belongs to one of them, the others refuse. */
    for (char *line = strtok(reply, "\n"); line; line = strtok(NULL, "\n")) {
        long server = strtol(line, NULL, 10);
        if (server <= 0)
            continue;
        for (int i = 0; i < nclients; i++) {
            snprintf(cmd, sizeof cmd, "terminate_client %ld %d", server, (int)clients[i]);
            if (mps_control_command(&d->mps, cmd, NULL, 0, &err) == 0)
                dlog(d, "task %llu: MPS client %d terminated", (unsigned long long)t->st.id,
                     (int)clients[i]);
        }
    }
}

/* Samples in a row that must list one of a task's processes as a plain compute process before
 * it is taken for one: the compute and MPS client lists are read one after the other, and a
 * client that starts or ends in between can be in one only. */
#define MPS_PLAIN_SAMPLES 2

void d_mps_watch(daemon_state *d, dtask *t, const pid_set *pids)
{
    if (!d->mps_on || t->att.mps_client < 0)
        return;
    int clients = 0, plain = 0, gpu = -1;
    pid_t which = 0;
    for (int k = 0; k < t->att.ngpus; k++) {
        const gpu_reading *r = &d->readings[t->att.gpus[k]];
        if (!r->procs_known || !r->mps_known)
            continue; /* no MPS client list: nothing to tell a client by */
        for (int i = 0; i < r->nprocs; i++) {
            if (!pid_set_has(pids, r->procs[i].pid))
                continue;
            if (r->procs[i].mps_client) {
                clients++;
            } else if (!plain++) {
                gpu = t->att.gpus[k];
                which = r->procs[i].pid;
            }
        }
    }
    if (!plain) {
        t->att.mps_plain_samples = 0;
        if (clients)
            t->att.mps_client = 1;
        return;
    }
    if (++t->att.mps_plain_samples < MPS_PLAIN_SAMPLES)
        return;
    /* Once: one process outside MPS is enough for the cap not to hold. */
    t->att.mps_client = -1;
    uint64_t figure = task_figure(d, t);
    char cap[96] = "it runs without MPS";
    if (t->att.collocated && figure > 0)
        snprintf(cap, sizeof cap, "its MPS memory cap (%llu MiB) does not apply",
                 (unsigned long long)(figure + d->cfg.sched.margin_mib));
    dlog(d, "task %llu: its process %d on GPU %d is not an MPS client (NVML lists it as a "
         "compute process, not among the MPS clients): CUDA could not use the MPS control "
         "daemon at %s (as the task's user), or the task does not pass on "
         "CUDA_MPS_PIPE_DIRECTORY; %s", (unsigned long long)t->st.id, (int)which, gpu,
         d->mps_pipe, cap);
}
