/* registry.c — the daemon's tasks in memory: the live ones (an ended task leaves once its end
 * is committed, and is read from the store after), the running set, the state names, and
 * the invariants that tie a task's state to the core's view and to the running set. */
#include "daemon/registry.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

static const char *const state_names[DS_COUNT] = {"queued", "running", "done", "failed",
                                                  "cancelled", "timeout"};

const char *dstate_name(dstate s)
{
    return (unsigned)s < DS_COUNT ? state_names[s] : "?";
}

int dstate_from(const char *name, dstate *out)
{
    for (int i = 0; i < DS_COUNT; i++)
        if (!strcmp(name, state_names[i])) {
            *out = (dstate)i;
            return 0;
        }
    return -1;
}

dtask *d_new_task(void)
{
    dtask *t = calloc(1, sizeof *t);
    if (t) {
        /* unknown, not 0: a runtime, solo profile or queue time of 0 would be taken as
         * known by the carma policy (an instant task, one that presses on nobody) */
        sched_task_init(&t->st);
        submission_init(&t->sub);
        t->running_idx = -1;
        t->history_mib = -1;
        t->run_hist = (store_run){NAN, NAN, NAN, NAN};
        t->att.peak_mib = -1;
        t->att.oom_need_mib = -1;
        t->att.peak_saved_mib = -1;
        t->att.started_mono = NAN;
    }
    return t;
}

void d_free_task(dtask *t)
{
    if (!t)
        return;
    submission_free(&t->sub);
    free(t->user);
    free(t->att.dir);
    free(t);
}

dtask *d_task(daemon_state *d, uint64_t id)
{
    /* a scan: the live tasks are few, and a lookup by id is a client's request (show, cancel,
     * logs), never the loop's */
    for (size_t i = 0; i < d->ntasks; i++)
        if (d->tasks[i]->st.id == id)
            return d->tasks[i];
    return NULL;
}

int d_put_task(daemon_state *d, dtask *t, carma_err *err)
{
    assert(t->st.id > 0 && !d_task(d, t->st.id));
    dtask **n = array_grow(d->tasks, &d->tasks_cap, d->ntasks + 1, sizeof *n, 256);
    if (!n)
        return carma_err_set(err, "out of memory");
    d->tasks = n;
    t->live_idx = d->ntasks;
    d->tasks[d->ntasks++] = t;
    return 0;
}

void d_remove_task(daemon_state *d, dtask *t)
{
    size_t i = t->live_idx;
    assert(i < d->ntasks && d->tasks[i] == t && t->running_idx < 0);
    d->tasks[i] = d->tasks[--d->ntasks];
    d->tasks[i]->live_idx = i;
    d_free_task(t);
}

void d_forget_ended(daemon_state *d)
{
    for (size_t i = d->ntasks; i-- > 0;) {
        dstate s = d->tasks[i]->state;
        if (s != DS_QUEUED && s != DS_RUNNING)
            d_remove_task(d, d->tasks[i]);
    }
}

void d_free_tasks(daemon_state *d)
{
    for (size_t i = 0; i < d->ntasks; i++)
        d_free_task(d->tasks[i]);
    free(d->tasks);
    d->tasks = NULL;
    d->ntasks = d->tasks_cap = 0;
}

/* The core's view of the task: the submitted figures, and, when no measured figure was
 * submitted, the peak measured on an earlier identical run. */
void d_fill_sched_task(dtask *t)
{
    t->st.ngpus = t->sub.ngpus;
    t->st.mem = t->sub.mem;
    uint64_t mib;
    if (t->history_mib >= 0 && !mem_figures_get(&t->st.mem, MEM_ORACLE, &mib))
        mem_figures_set(&t->st.mem, MEM_ORACLE, (uint64_t)t->history_mib);
    t->st.max_retries = t->sub.max_retries;
    /* The last solo run of an identical task is its runtime estimate and solo profile. Its
     * time limit is the longest it can run: the carma policy's backfill plans with it when it
     * is shorter (and its longest-first order does not take the submitter's word for it). */
    t->st.runtime_est_s = t->run_hist.runtime_s;
    t->st.runtime_is_limit = false;
    if (t->sub.time_limit_s > 0 &&
        !((double)t->sub.time_limit_s >= t->run_hist.runtime_s)) { /* NaN: no history */
        t->st.runtime_est_s = (double)t->sub.time_limit_s;
        t->st.runtime_is_limit = true;
    }
    t->st.solo_smact = t->run_hist.smact;
    t->st.solo_drama = t->run_hist.drama;
    /* horus's profile is the solo run's utilization; lucid's class is not known here, so lucid
     * places it on idle GPUs only (as horus does a task with no solo run) */
    t->st.profiled_util = t->run_hist.util;
    t->st.lucid_class = LUCID_UNKNOWN;
}

int d_running_add(daemon_state *d, dtask *t)
{
    assert(t->running_idx < 0);
    dtask **n = array_grow(d->running, &d->running_cap, (size_t)d->nrunning + 1, sizeof *n, 64);
    if (!n)
        return -1;
    d->running = n;
    t->running_idx = d->nrunning;
    d->running[d->nrunning++] = t;
    return 0;
}

void d_running_remove(daemon_state *d, dtask *t)
{
    int i = t->running_idx;
    if (i < 0)
        return;
    assert(i < d->nrunning && d->running[i] == t);
    d->running[i] = d->running[--d->nrunning];
    d->running[i]->running_idx = i;
    t->running_idx = -1;
}

bool d_task_ok(const daemon_state *d, const dtask *t)
{
    if (t->st.id == 0 || t->live_idx >= d->ntasks || d->tasks[t->live_idx] != t)
        return false;
    bool in_running = t->running_idx >= 0 && t->running_idx < d->nrunning &&
                      d->running[t->running_idx] == t;
    if ((t->running_idx >= 0) != in_running)
        return false;
    if (t->att.launch_pending && t->state != DS_RUNNING)
        return false;
    switch (t->state) {
    case DS_RUNNING:
        if (!in_running || t->st.where != SCHED_RUNNING || t->att.n < 1 ||
            t->att.n != t->st.attempts || !t->att.dir || t->att.ngpus != t->sub.ngpus)
            return false;
        for (int k = 0; k < t->att.ngpus; k++)
            if (t->att.gpus[k] != t->st.gpus[k] || t->att.gpus[k] < 0 ||
                t->att.gpus[k] >= d->ngpus)
                return false;
        return true;
    case DS_QUEUED:
        return !in_running && t->st.where == (t->parked     ? SCHED_NOWHERE
                                              : t->recovery ? SCHED_IN_RECOVERY
                                                            : SCHED_IN_MAIN);
    case DS_DONE:
    case DS_FAILED:
    case DS_CANCELLED:
    case DS_TIMEOUT:
        return !in_running && t->st.where == SCHED_NOWHERE;
    case DS_COUNT:
        break;
    }
    return false;
}

bool d_tasks_ok(const daemon_state *d)
{
    if (d->nrunning < 0 || (size_t)d->nrunning > d->running_cap)
        return false;
    int running = 0;
    for (size_t i = 0; i < d->ntasks; i++) {
        const dtask *t = d->tasks[i];
        if (!d_task_ok(d, t))
            return false;
        running += t->state == DS_RUNNING;
    }
    return running == d->nrunning;
}
