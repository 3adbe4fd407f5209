/* env.c — the environment a task's attempt runs with: a clean base (PATH, USER, LOGNAME,
 * HOME), the submitted variables (the submitter's whole environment, as task-spooler and Slurm
 * pass it, less the reserved ones: submission_env_reserved), then the daemon's
 * (CUDA_VISIBLE_DEVICES with the attempt's GPU UUIDs, CUDA_DEVICE_ORDER, CARMA_TASK_ID,
 * CARMA_ATTEMPT, CARMA_ARRAY_INDEX, the fake-GPU backend's state file, the MPS variables).
 * The reserved ones are skipped here too, whatever a client sent: a submitted
 * NVIDIA_VISIBLE_DEVICES or CUDA_MPS_PIPE_DIRECTORY would point the task at GPUs or an MPS
 * server that carma did not give it. A variable that cannot be stored fails the whole environment:
 * a task never runs without one of them (without CUDA_VISIBLE_DEVICES it would run on every
 * GPU). */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/journal.h"
#include "daemon/tasks.h"
#include "util/array.h"
#include "util/strutil.h"

/* Sets KEY=VALUE, replacing the key's earlier value. -1 when out of memory (e unchanged). */
static int env_set(task_env *e, const char *kv)
{
    size_t klen = (size_t)(strchr(kv, '=') - kv) + 1;
    char *copy = str_dup(kv);
    if (!copy)
        return -1;
    for (size_t i = 0; i < e->n; i++)
        if (!strncmp(e->v[i], kv, klen)) {
            free(e->v[i]);
            e->v[i] = copy;
            return 0;
        }
    char **v = array_grow(e->v, &e->cap, e->n + 2, sizeof *v, 32);
    if (!v) {
        free(copy);
        return -1;
    }
    e->v = v;
    e->v[e->n++] = copy;
    e->v[e->n] = NULL;
    return 0;
}

static int env_setf(task_env *e, const char *key, const char *value)
{
    size_t n = strlen(key) + strlen(value) + 2;
    char *kv = malloc(n);
    if (!kv)
        return -1;
    snprintf(kv, n, "%s=%s", key, value);
    int rc = env_set(e, kv);
    free(kv);
    return rc;
}

void d_task_env_free(task_env *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i]);
    free(e->v);
    *e = (task_env){0};
}

int d_task_env(daemon_state *d, const dtask *t, task_env *e, carma_err *err)
{
    *e = (task_env){0};
    struct passwd *pw = getpwuid(t->uid);
    int rc = env_setf(e, "PATH", "/usr/local/bin:/usr/bin:/bin");
    rc = rc ? rc : env_setf(e, "USER", t->user);
    rc = rc ? rc : env_setf(e, "LOGNAME", t->user);
    rc = rc ? rc : env_setf(e, "HOME", pw && pw->pw_dir ? pw->pw_dir : "/");
    for (size_t i = 0; i < t->sub.nenv && rc == 0; i++)
        if (!submission_env_reserved(t->sub.env[i]))
            rc = env_set(e, t->sub.env[i]);
    char uuids[SCHED_MAX_TASK_GPUS * 100], num[32];
    d_gpu_uuids_text(d, t->att.gpus, t->att.ngpus, uuids, sizeof uuids);
    if (t->att.ngpus > 0 && !uuids[0]) {
        /* placement passes over such GPUs (monitor.c): an empty CUDA_VISIBLE_DEVICES would
         * show the task no GPU at all */
        d_task_env_free(e);
        return carma_err_set(err, "a GPU's UUID is not known: not started without it");
    }
    rc = rc ? rc : env_setf(e, "CUDA_VISIBLE_DEVICES", uuids);
    rc = rc ? rc : env_setf(e, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
    snprintf(num, sizeof num, "%llu", (unsigned long long)t->st.id);
    rc = rc ? rc : env_setf(e, "CARMA_TASK_ID", num);
    snprintf(num, sizeof num, "%d", t->att.n);
    rc = rc ? rc : env_setf(e, "CARMA_ATTEMPT", num);
    snprintf(num, sizeof num, "%d", t->sub.array_index);
    if (t->sub.array_index >= 0)
        rc = rc ? rc : env_setf(e, "CARMA_ARRAY_INDEX", num);
    if (d->fakegpu_state_path[0])
        rc = rc ? rc : env_setf(e, "CARMA_SIM_STATE", d->fakegpu_state_path);
    if (rc == 0) {
        mps_env mps;
        carma_err merr;
        if (d_mps_task_env(d, t, &mps, &merr))
            dlog(d, "task %llu: no MPS limits: %s", (unsigned long long)t->st.id, merr.msg);
        for (int i = 0; i < mps.n && rc == 0; i++)
            rc = env_set(e, mps.vars[i]);
    }
    if (rc) {
        d_task_env_free(e);
        return carma_err_set(err, "out of memory building the task's environment");
    }
    return 0;
}
