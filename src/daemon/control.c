/* control.c — what a user controls about their queued tasks, as task-spooler and Slurm users
 * expect: dependencies (--after, --afterok), hold and release, priority, and each attempt's
 * time limit. A queued task the core must not place yet (held, or waiting for its
 * dependencies) is kept out of the core, "parked", so that the core needs to know nothing of
 * it; the core's main queue is kept in order of priority, then of submission (queue_seq),
 * the order a restart rebuilds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

/* A pass's look at the dependencies of the parked tasks. d_task scans every live task and
 * d_find_task reads a whole task (its environment too) from the store: a user's parked tasks
 * (max_tasks_per_user of them) times their dependencies (up to SUB_MAX_DEPS, those not in
 * memory listed first) such looks each turn held the loop, and every other user, for seconds.
 * So the live tasks are sorted by id once a pass, and the state of one that is not live is
 * read from the store once a pass (many tasks may wait for the same ones). live NULL (d_release's
 * look at one task, or out of memory): d_task. */
typedef struct deps_view {
    dtask **live;
    size_t nlive;
    uint64_t *ids; /* states read from the store, open addressing (0: an empty slot) */
    dstate *states;
    size_t cap, n;
} deps_view;

static int by_id(const void *a, const void *b)
{
    uint64_t x = (*(dtask *const *)a)->st.id, y = (*(dtask *const *)b)->st.id;
    return (x > y) - (x < y);
}

static void view_make(const daemon_state *d, deps_view *v)
{
    *v = (deps_view){.live = malloc((d->ntasks ? d->ntasks : 1) * sizeof *v->live)};
    if (!v->live)
        return;
    v->nlive = d->ntasks;
    for (size_t i = 0; i < v->nlive; i++)
        v->live[i] = d->tasks[i];
    qsort(v->live, v->nlive, sizeof *v->live, by_id);
}

static void view_free(deps_view *v)
{
    free(v->live);
    free(v->ids);
    free(v->states);
}

static dtask *live_task(daemon_state *d, const deps_view *v, uint64_t id)
{
    if (!v->live)
        return d_task(d, id);
    size_t lo = 0, hi = v->nlive;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->live[mid]->st.id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < v->nlive && v->live[lo]->st.id == id ? v->live[lo] : NULL;
}

static size_t slot(const deps_view *v, uint64_t id)
{
    size_t i = (size_t)(id * 0x9E3779B97F4A7C15ull) & (v->cap - 1);
    while (v->ids[i] && v->ids[i] != id)
        i = (i + 1) & (v->cap - 1);
    return i;
}

/* Remembers a stored state for the rest of the pass (kept at most half full; out of memory,
 * it is simply read again). */
static void remember(deps_view *v, uint64_t id, dstate s)
{
    if (!v->live)
        return;
    if (2 * (v->n + 1) > v->cap) {
        deps_view bigger = {.cap = v->cap ? 2 * v->cap : 256};
        bigger.ids = calloc(bigger.cap, sizeof *bigger.ids);
        bigger.states = malloc(bigger.cap * sizeof *bigger.states);
        if (!bigger.ids || !bigger.states) {
            free(bigger.ids);
            free(bigger.states);
            return;
        }
        for (size_t i = 0; i < v->cap; i++)
            if (v->ids[i]) {
                size_t k = slot(&bigger, v->ids[i]);
                bigger.ids[k] = v->ids[i];
                bigger.states[k] = v->states[i];
            }
        free(v->ids);
        free(v->states);
        v->ids = bigger.ids;
        v->states = bigger.states;
        v->cap = bigger.cap;
    }
    size_t k = slot(v, id);
    v->ids[k] = id;
    v->states[k] = s;
    v->n++;
}

/* Called back by store_select: the row's state only (its spec is not parsed). */
static int row_state(void *ctx, const store_task_row *row, const store_attempt_row *a,
                     carma_err *err)
{
    (void)a;
    (void)err;
    dstate *s = ctx;
    if (dstate_from(row->state, s))
        *s = DS_COUNT;
    return 0;
}

/* The state of a task not in memory: ended, or DS_COUNT when there is no such task; -1 when
 * the store cannot say (the task then waits: a read error is no dependency broken). */
static int stored_state(daemon_state *d, deps_view *v, uint64_t id, dstate *s)
{
    if (v->cap) {
        size_t k = slot(v, id);
        if (v->ids[k]) {
            *s = v->states[k];
            return 0;
        }
    }
    carma_err err;
    *s = DS_COUNT;
    if (store_select(d->db, &(store_filter){.id = id, .limit = 1}, row_state, s, &err))
        return -1;
    remember(v, id, *s);
    return 0;
}

/* Whether the task's dependencies allow it to start; why names the one that never will. */
static deps_state deps_of(daemon_state *d, deps_view *v, const dtask *t, char *why, size_t cap)
{
    /* first the live ones, in memory: a task waiting for one reads nothing from the store */
    for (size_t i = 0; i < t->sub.ndeps; i++) {
        dtask *x = live_task(d, v, t->sub.deps[i].id);
        if (x && (x->state == DS_QUEUED || x->state == DS_RUNNING))
            return DEPS_WAIT;
    }
    for (size_t i = 0; i < t->sub.ndeps; i++) {
        const sub_dep *dep = &t->sub.deps[i];
        dtask *x = live_task(d, v, dep->id);
        dstate s = x ? x->state : DS_COUNT;
        if (!x && stored_state(d, v, dep->id, &s))
            return DEPS_WAIT;
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
    deps_view v;
    view_make(d, &v);
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
    view_free(&v);
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
    deps_view one = {0};
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
