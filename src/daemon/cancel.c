/* cancel.c — cancelling a task: a queued one leaves its queue and ends now; a running one is
 * marked, and its supervisor is asked to cancel (SIGTERM, then SIGKILL after kill_grace_s) by
 * d_reap, once the commit has recorded the request. And a queued task failed because it can
 * never fit (d_end_never_fits). */
#include <assert.h>
#include <stdio.h>

#include "daemon/journal.h"
#include "daemon/registry.h"
#include "daemon/tasks.h"

/* Ends a queued task, already out of the core's queues, as `state`: stored, its event, the
 * counters and the on_finish hook. */
static int end_queued(daemon_state *d, dtask *t, dstate state, const char *event,
                      const char *detail, carma_err *err)
{
    t->state = state;
    t->recovery = false;
    t->ended_at = daemon_wall_now();
    assert(d->failed || d_task_ok(d, t));
    if (!d_save_task(d, t) || !d_event(d, t, event, detail))
        return carma_err_set(err, "%s", d->fatal.msg);
    d->need_schedule = true;
    d_metrics_task_ended(d, t);
    d_on_finish(d, t);
    return 0;
}

void d_end_never_fits(daemon_state *d, dtask *t)
{
    d_never_fits_reason(t);
    dlog(d, "task %llu failed (%s)", (unsigned long long)t->st.id, t->end_reason);
    carma_err err;
    end_queued(d, t, DS_FAILED, "ended", t->end_reason, &err); /* a store error ends the daemon */
}

int d_cancel(daemon_state *d, dtask *t, carma_err *err)
{
    if (t->state == DS_QUEUED) {
        sched_remove_queued(d->core, &t->st);
        snprintf(t->outcome, sizeof t->outcome, "cancelled");
        return end_queued(d, t, DS_CANCELLED, "cancelled",
                          t->end_reason[0] ? t->end_reason : "while queued", err);
    }
    if (t->state != DS_RUNNING)
        return carma_err_set(err, "task %llu is already %s", (unsigned long long)t->st.id,
                             dstate_name(t->state));
    if (t->cancel_requested)
        return 0;
    t->cancel_requested = true;
    if (!d_event(d, t, "cancel", "SIGTERM, then SIGKILL after the grace period"))
        return carma_err_set(err, "%s", d->fatal.msg);
    return 0; /* the signal goes out in d_reap, after the commit */
}
