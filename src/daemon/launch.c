/* launch.c — placing tasks: what the core places (sched_next) becomes a new attempt, written to
 * the store with its task; after the commit, each attempt's supervisor is started with the
 * task's environment (env.c), as its submitter when the daemon is root, and its command
 * (under `conda activate ENV` when the task names a conda environment: a .rad's line 2). */
#include <assert.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/journal.h"
#include "daemon/registry.h"
#include "daemon/shellcmd.h"
#include "daemon/tasks.h"
#include "util/strutil.h"
#include "util/usergroups.h"

#define MAX_LAUNCHES_PER_TURN 256

/* The command under `conda activate ENV`, in the task's own shell, as its user: conda's
 * activation script for POSIX shells (`conda shell.posix activate`, conda >= 4.6) is run
 * through conda found as the submitter's shell finds it ($CONDA_EXE, which `conda init` sets,
 * else `conda` on the task's PATH); without it, or when activation fails, the attempt fails
 * with a message naming ENV on its stderr. The task's program still replaces the shell
 * (`exec`) when its command allows it (shellcmd.h). NULL when out of memory. */
static char *conda_command(const submission *sub)
{
    char *line = NULL;
    size_t len = 0;
    if (str_append_shell_word(&line, &len, sub->conda_env))
        return NULL;
    static const char body[] =
        "\n__carma_conda=${CONDA_EXE:-conda}\n"
        "command -v \"$__carma_conda\" >/dev/null 2>&1 || { echo \"carma: conda activate "
        "$__carma_env: no conda on the task's PATH (nor \\$CONDA_EXE)\" >&2; exit 127; }\n"
        "__carma_act=$(\"$__carma_conda\" shell.posix activate \"$__carma_env\") || { echo "
        "\"carma: conda activate $__carma_env failed\" >&2; exit 1; }\n"
        "eval \"$__carma_act\" || exit 1\n"
        "unset __carma_env __carma_conda __carma_act\n";
    const char *ex = shellcmd_can_exec(sub->command) ? "exec " : "";
    size_t n = 12 + len + sizeof body + strlen(ex) + strlen(sub->command) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "__carma_env=%s%s%s%s", line, body, ex, sub->command);
    free(line);
    return out;
}

/* Starts the written attempt's supervisor; a launch that fails ends the attempt as failed. */
static void launch_one(daemon_state *d, dtask *t)
{
    assert(d->failed || (t->state == DS_RUNNING && t->att.launch_pending && d_task_ok(d, t)));
    carma_err err;
    task_env env;
    t->att.launch_pending = false;
    if (d_task_env(d, t, &env, &err)) {
        dlog(d, "task %llu: launch failed: %s", (unsigned long long)t->st.id, err.msg);
        d_end_attempt(d, t, TASK_FAILED, "launch failed");
        return;
    }
    gid_t *groups = NULL;
    int ngroups = 0;
    bool switch_user = geteuid() == 0 && t->uid != 0;
    char *conda = t->sub.conda_env ? conda_command(&t->sub) : NULL;
    if ((t->sub.conda_env && !conda) ||
        (switch_user && user_groups(t->user, t->gid, &groups, &ngroups))) {
        dlog(d, "task %llu: launch failed: out of memory", (unsigned long long)t->st.id);
        free(groups);
        free(conda);
        d_task_env_free(&env);
        d_end_attempt(d, t, TASK_FAILED, "launch failed");
        return;
    }
    launch_spec spec = {
        .dir = t->att.dir, .parent_fd = d->attempts_fd, .cwd = t->sub.cwd, .env = env.v,
        .command = conda ? conda : t->sub.command,
        .switch_user = switch_user, .uid = t->uid, .gid = t->gid, .groups = groups,
        .ngroups = ngroups, .kill_grace_s = d->cfg.daemon.kill_grace_s,
        .task_umask = (int)d->task_umask, .task_nofile = d->task_nofile,
        .max_output_bytes = (int64_t)d->cfg.daemon.max_output_mib << 20,
        .min_free_bytes = (int64_t)d->cfg.daemon.state_min_free_mib << 20,
        .time_limit_s = (double)t->sub.time_limit_s,
    };
    char aside[256] = "";
    spec.set_aside = aside;
    spec.set_aside_cap = sizeof aside;
    pid_t sup = 0;
    int launched = supervisor_launch(&spec, &sup, &err);
    if (aside[0]) /* the database was replaced, and task ids began again */
        dlog(d, "task %llu attempt %d: its directory held another attempt's files; they are "
             "kept in attempts/%s", (unsigned long long)t->st.id, t->att.n, aside);
    if (launched) {
        dlog(d, "task %llu: launch failed: %s", (unsigned long long)t->st.id, err.msg);
        d_end_attempt(d, t, TASK_FAILED, "launch failed");
    } else {
        dlog(d, "task %llu attempt %d: supervisor %d started", (unsigned long long)t->st.id,
             t->att.n, (int)sup);
        d_save_attempt(d, t, false);
    }
    free(groups);
    free(conda);
    d_task_env_free(&env);
}

/* The placed task's new attempt (not yet launched). False when it cannot be recorded. */
static bool new_attempt(daemon_state *d, dtask *t, const sched_decision *dec)
{
    assert(t->state == DS_QUEUED && t->running_idx < 0);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/attempts/%llu.%d", d->opts->state_dir,
             (unsigned long long)t->st.id, t->st.attempts);
    char *owned = str_dup(dir);
    free(t->att.dir);
    t->att = (attempt){
        .n = t->st.attempts, .ngpus = dec->ngpus, .dir = owned, .started = daemon_wall_now(),
        .started_mono = clock_mono_s(),
        .peak_mib = -1, .oom_need_mib = -1, .peak_saved_mib = -1, .launch_pending = true,
        .collocated = dec->collocated, .not_solo = dec->collocated,
    };
    memcpy(t->att.gpus, dec->gpus, sizeof dec->gpus);
    t->state = DS_RUNNING;
    t->recovery = false;
    t->outcome[0] = '\0';
    carma_err err;
    if (!owned || d_running_add(d, t)) {
        carma_err_set(&err, "out of memory");
        d_fail(d, &err);
        return false;
    }
    assert(d_task_ok(d, t));
    return true;
}

void d_schedule(daemon_state *d)
{
    d_unpark(d);
    if (!d->have_sample || d->failed)
        return;
    d->need_schedule = false;
    sched_task *never;
    while ((never = sched_take_never_fits(d->core, d->views)) != NULL)
        d_end_never_fits(d, (dtask *)never); /* st is the first member */
    if (d->state_low)
        return; /* short of space: queued tasks wait (d_check_state_space calls us back) */
    dtask *launched[MAX_LAUNCHES_PER_TURN];
    int n = 0;
    sched_decision dec;
    double now = clock_mono_s();
    while (n < MAX_LAUNCHES_PER_TURN && sched_next(d->core, now, d->views, &dec)) {
        dtask *t = (dtask *)dec.task; /* st is the first member */
        /* queued since its submission, or since its last attempt ended (a retry) */
        double queued_since = t->att.n > 0 && t->att.ended > 0 ? t->att.ended : t->submitted_at;
        if (!new_attempt(d, t, &dec))
            break;
        d_metrics_placed(d, dec.collocated, t->att.started - queued_since);
        d_save_attempt(d, t, true);
        d_save_task(d, t);
        char detail[320], gpus[128];
        d_gpus_text(dec.gpus, dec.ngpus, gpus, sizeof gpus);
        snprintf(detail, sizeof detail, "attempt %d on GPUs %s (%s%s%s)", t->att.n, gpus,
                 dec.rule == PLACE_EXCLUSIVE_FIRST ? "exclusive-first" : "policy",
                 dec.collocated ? ", collocated" : "", dec.from_recovery ? ", recovery" : "");
        d_event(d, t, "launch", detail);
        dlog(d, "task %llu: %s", (unsigned long long)t->st.id, detail);
        launched[n++] = t;
    }
    if (n == 0 || !d_commit(d))
        return;
    for (int i = 0; i < n; i++)
        launch_one(d, launched[i]);
    d_commit(d);
}
