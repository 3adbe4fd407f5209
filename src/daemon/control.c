/* control.c — what a user controls about their queued tasks, as task-spooler and Slurm users
 * expect: dependencies (--after, --afterok), hold and release, priority, and each attempt's
 * time limit. A queued task the core must not place yet (held, or waiting for its
 * dependencies) is kept out of the core, "parked", so that the core needs to know nothing of
 * it; the core's main queue is kept in order of priority, then of submission (queue_seq),
 * the order a restart rebuilds. */
#include <math.h>
#include <stdio.h>

#include "daemon/journal.h"
#include "daemon/registry.h"
#include "daemon/tasks.h"

/* a goes ahead of b in the main queue */
static bool ahead(const dtask *a, const dtask *b)
{
    return a->priority > b->priority || (a->priority == b->priority && a->queue_seq < b->queue_seq);
}

/* Gives the task to the core: the recovery queue's tail, or its place in the main queue
 * (found from the tail, where a task of the usual priority 0 stays). */
static int enter_core(daemon_state *d, dtask *t, carma_err *err)
{
    t->parked = false;
    if (t->recovery)
        return sched_submit_recovery(d->core, &t->st, err);
    if (sched_submit(d->core, &t->st, err))
        return -1;
    sched_task *before = NULL;
    for (sched_task *p = t->st.qprev; p && ahead(t, (dtask *)p); p = p->qprev)
        before = p;
    if (before)
        sched_move_before(d->core, &t->st, before);
    return 0;
}

int d_enqueue(daemon_state *d, dtask *t, carma_err *err)
{
    if (t->held || t->sub.ndeps > 0) {
        t->parked = d->have_parked = true; /* d_unpark looks at its dependencies */
        d->need_schedule = true;
        return 0;
    }
    return enter_core(d, t, err);
}

typedef enum deps_state { DEPS_WAIT, DEPS_MET, DEPS_BROKEN } deps_state;

/* Whether the task's dependencies allow it to start; why names the one that never will. */
static deps_state deps_of(daemon_state *d, d_states *v, const dtask *t, char *why, size_t cap)
{
    /* first the live ones, in memory: a task waiting for one reads nothing from the store */
    for (size_t i = 0; i < t->sub.ndeps; i++) {
        dtask *x = d_states_live(d, v, t->sub.deps[i].id);
        if (x && (x->state == DS_QUEUED || x->state == DS_RUNNING))
            return DEPS_WAIT;
    }
    for (size_t i = 0; i < t->sub.ndeps; i++) {
        const sub_dep *dep = &t->sub.deps[i];
        dtask *x = d_states_live(d, v, dep->id);
        dstate s = x ? x->state : DS_COUNT;
        if (!x && d_states_get(d, v, dep->id, &s))
            return DEPS_WAIT; /* the store cannot say: no dependency broken */
        if (s == DS_QUEUED || s == DS_RUNNING)
            return DEPS_WAIT;
        if (dep->ok && s != DS_DONE) {
            if (s == DS_COUNT)
                snprintf(why, cap, "dependency %llu no longer exists",
                         (unsigned long long)dep->id);
            else
                snprintf(why, cap, "dependency %llu ended %s (--afterok)",
                         (unsigned long long)dep->id, dstate_name(s));
            return DEPS_BROKEN;
        }
    }
    return DEPS_MET;
}

void d_unpark(daemon_state *d)
{
    if (!d->have_parked) /* the usual case: no scan of every live task each turn */
        return;
    size_t parked = 0;
    /* d_cancel and enter_core below add no live task and remove none (d_forget_ended does) */
    d_states v;
    d_states_make(d, &v);
    for (size_t i = 0; i < d->ntasks && !d->failed; i++) {
        dtask *t = d->tasks[i];
        if (t->state != DS_QUEUED || !t->parked)
            continue;
        parked++;
        if (t->held)
            continue;
        char why[sizeof t->end_reason];
        carma_err err;
        switch (deps_of(d, &v, t, why, sizeof why)) {
        case DEPS_WAIT:
            break;
        case DEPS_MET:
            parked--;
            if (enter_core(d, t, &err))
                d_fail(d, &err);
            else
                d_event(d, t, "dependencies met", "");
            break;
        case DEPS_BROKEN:
            parked--;
            snprintf(t->end_reason, sizeof t->end_reason, "%s", why);
            if (d_cancel(d, t, &err))
                d_fail(d, &err);
            break;
        }
    }
    d_states_free(&v);
    d->have_parked = parked > 0 || d->failed;
}

static int must_be_queued(const dtask *t, const char *what, carma_err *err)
{
    if (t->state == DS_QUEUED)
        return 0;
    return carma_err_set(err, "task %llu is %s: only a queued task can be %s",
                         (unsigned long long)t->st.id, dstate_name(t->state), what);
}

static int saved(daemon_state *d, const dtask *t, const char *kind, const char *detail,
                 carma_err *err)
{
    if (!d_save_task(d, t) || !d_event(d, t, kind, detail))
        return carma_err_set(err, "%s", d->fatal.msg);
    return 0;
}

int d_hold(daemon_state *d, dtask *t, carma_err *err)
{
    if (must_be_queued(t, "held", err))
        return -1;
    if (t->held)
        return 0;
    if (!t->parked)
        sched_remove_queued(d->core, &t->st);
    t->held = t->parked = d->have_parked = true;
    return saved(d, t, "held", "", err);
}

int d_release(daemon_state *d, dtask *t, carma_err *err)
{
    if (must_be_queued(t, "released", err))
        return -1;
    if (!t->held) /* as asked already, as a hold of a held task (scontrol's habit) */
        return 0;
    t->held = false;
    d->need_schedule = true;
    /* With no dependencies, or with all of them met, it joins the queue now, so the reply
     * (and a `show` before the next pass) does not say it waits for dependencies; else
     * d_unpark gives it to the core once they allow (or cancels it, an --afterok broken). */
    char why[sizeof t->end_reason];
    d_states one = {0};
    bool met = t->sub.ndeps > 0 && deps_of(d, &one, t, why, sizeof why) == DEPS_MET;
    if ((t->sub.ndeps == 0 || met) && enter_core(d, t, err))
        return -1;
    if (saved(d, t, "released", "", err))
        return -1;
    /* as d_unpark says it when it queues a task whose dependencies allow */
    if (met && !d_event(d, t, "dependencies met", ""))
        return carma_err_set(err, "%s", d->fatal.msg);
    return 0;
}

int d_set_priority(daemon_state *d, dtask *t, int priority, carma_err *err)
{
    if (must_be_queued(t, "given a priority", err))
        return -1;
    t->priority = priority;
    if (!t->parked && !t->recovery) { /* to its new place */
        sched_remove_queued(d->core, &t->st);
        if (enter_core(d, t, err))
            return -1;
        d->need_schedule = true;
    }
    char detail[32];
    snprintf(detail, sizeof detail, "%d", priority);
    return saved(d, t, "priority", detail, err);
}

bool d_past_time_limit(const dtask *t, double run_s)
{
    return t->sub.time_limit_s > 0 && run_s >= (double)t->sub.time_limit_s;
}

double d_attempt_run_s(const dtask *t)
{
    return isnan(t->att.started_mono) ? daemon_wall_now() - t->att.started
                                      : clock_mono_s() - t->att.started_mono;
}

void d_time_limit(daemon_state *d, dtask *t)
{
    if (t->state != DS_RUNNING || t->cancel_requested || t->att.launch_pending ||
        !d_past_time_limit(t, d_attempt_run_s(t)))
        return;
    t->timed_out = t->cancel_requested = true; /* d_reap sends the cancel after the commit */
    snprintf(t->end_reason, sizeof t->end_reason, "time limit of %lld s reached",
             (long long)t->sub.time_limit_s);
    d_event(d, t, "timeout", t->end_reason);
    dlog(d, "task %llu: %s; cancelling", (unsigned long long)t->st.id, t->end_reason);
}
