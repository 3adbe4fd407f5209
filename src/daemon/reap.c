/* reap.c — the running attempts: each loop looks at every one's supervisor (supervisor.h),
 * ends the attempts that ended (classified by oomclass.h; the core's recovery rules send an
 * out-of-memory crash back to the recovery queue), records what a done run measured (its peak;
 * with its GPUs to itself, its run time and activity) and what a crash was seen to need (its
 * identical queued tasks learn it), and sends the cancels that were requested, after the
 * commit that recorded them. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "daemon/journal.h"
#include "daemon/registry.h"
#include "daemon/tasks.h"

void d_never_fits_reason(dtask *t)
{
    snprintf(t->end_reason, sizeof t->end_reason,
             t->att.n == 0 ? "never started: an identical task was seen to need %llu MiB, more "
                             "than any GPU here holds"
                           : "not retried: it needs %llu MiB, more than any GPU here holds",
             (unsigned long long)t->st.learned_mib);
}

/* Whether a and b are the same task as the memory history knows them (D_TASK_KEY). */
static bool identical(const dtask *a, const dtask *b)
{
    return a->uid == b->uid && a->sub.batch == b->sub.batch && a->sub.ngpus == b->sub.ngpus &&
           !strcmp(a->sub.cwd, b->sub.cwd) && !strcmp(a->sub.command, b->sub.command);
}

/* t's out-of-memory crash was seen to need t->st.learned_mib: its identical tasks still
 * queued (a sweep, an array) learn it now rather than crash once each, and a later identical
 * submission finds seen_mib in the memory history (take_history in submit.c). */
static void teach_identical(daemon_state *d, const dtask *t, int64_t seen_mib)
{
    carma_err err;
    if (seen_mib >= 0 && d_txn(d) &&
        store_history_put(d->db, &(store_task_key)D_TASK_KEY(t), (uint64_t)seen_mib,
                          daemon_wall_now(), &err))
        d_fail(d, &err);
    if (!t->st.learned_known || !t->st.learned_seen)
        return;
    uint64_t mib = t->st.learned_mib;
    int taught = 0;
    char detail[160];
    snprintf(detail, sizeof detail, "figure %llu MiB, learned from task %llu's out-of-memory "
             "crash (an identical task)", (unsigned long long)mib, (unsigned long long)t->st.id);
    for (size_t i = 0; i < d->ntasks; i++) {
        dtask *u = d->tasks[i];
        if (u == t || u->state != DS_QUEUED || !identical(u, t) ||
            (u->st.learned_known && u->st.learned_mib >= mib))
            continue;
        sched_task_learn(d->core, &u->st, mib);
        d_save_task(d, u);
        d_event(d, u, "learned", detail);
        taught++;
    }
    if (taught)
        dlog(d, "task %llu: %d queued identical task(s) learned its figure, %llu MiB",
             (unsigned long long)t->st.id, taught, (unsigned long long)mib);
}

void d_end_attempt(daemon_state *d, dtask *t, task_outcome outcome, const char *why)
{
    d_end_attempt_at(d, t, outcome, why, daemon_wall_now());
}

void d_end_attempt_at(daemon_state *d, dtask *t, task_outcome outcome, const char *why,
                      double ended)
{
    assert(d->failed || (t->state == DS_RUNNING && !t->att.launch_pending && d_task_ok(d, t)));
    bool timeout = outcome == TASK_CANCELLED && t->timed_out;
    snprintf(t->outcome, sizeof t->outcome, "%s", timeout ? "timeout" : task_outcome_name(outcome));
    t->att.ended = ended;
    d_running_remove(d, t);
    d_metrics_attempt_ended(d, t, outcome);
    /* What the monitor saw it hold, or its out-of-memory message says it needed, when more,
     * teaches the carma policy its figure (sched_task_oom). */
    int64_t seen_mib = t->att.peak_mib > t->att.oom_need_mib ? t->att.peak_mib
                                                              : t->att.oom_need_mib;
    sched_oom_seen seen = {seen_mib >= 0, seen_mib >= 0 ? (uint64_t)seen_mib : 0};
    sched_end end = outcome == TASK_OOM ? sched_task_oom(d->core, &t->st, &seen, clock_mono_s())
                                        : sched_task_ended(d->core, &t->st, outcome,
                                                           clock_mono_s());
    if (end == SCHED_END_NEVER_FITS)
        d_never_fits_reason(t);
    if (end == SCHED_END_RETRY) {
        t->state = DS_QUEUED;
        t->recovery = true;
        t->queue_seq = store_next_seq(d->db);
    } else {
        t->state = outcome == TASK_DONE        ? DS_DONE
                   : timeout                   ? DS_TIMEOUT
                   : outcome == TASK_CANCELLED ? DS_CANCELLED
                                               : DS_FAILED;
        t->recovery = false;
        t->ended_at = t->att.ended;
    }
    assert(d->failed || d_task_ok(d, t));
    d_save_attempt(d, t, false);
    d_save_task(d, t);
    if (outcome == TASK_OOM)
        teach_identical(d, t, seen_mib);
    if (outcome == TASK_DONE && t->att.peak_mib >= 0 && d_txn(d)) {
        carma_err err;
        if (store_history_put(d->db, &(store_task_key)D_TASK_KEY(t), (uint64_t)t->att.peak_mib,
                              daemon_wall_now(), &err))
            d_fail(d, &err);
    }
    if (outcome == TASK_DONE && !t->att.not_solo && t->att.ended > t->att.started &&
        d_txn(d)) {
        /* with its GPUs to itself throughout: its run time and activity are its own */
        carma_err err;
        int n = t->att.act_n, u = t->att.util_n;
        store_run r = {t->att.ended - t->att.started, n ? t->att.act_smact / n : NAN,
                       n ? t->att.act_drama / n : NAN, u ? t->att.act_util / u : NAN};
        if (store_run_put(d->db, &(store_task_key)D_TASK_KEY(t), &r, daemon_wall_now(), &err))
            d_fail(d, &err);
    }
    char detail[200];
    snprintf(detail, sizeof detail, "attempt %d: %s%s%s", t->att.n, t->outcome, why ? ", " : "",
             why ? why : "");
    if (end == SCHED_END_NEVER_FITS)
        snprintf(detail + strlen(detail), sizeof detail - strlen(detail), "; %s",
                 t->end_reason);
    d_event(d, t, end == SCHED_END_RETRY ? "recovery" : "ended", detail);
    dlog(d, "task %llu %s (%s)", (unsigned long long)t->st.id,
         end == SCHED_END_RETRY ? "to the recovery queue" : dstate_name(t->state), detail);
    d->need_schedule = true;
    if (end != SCHED_END_RETRY) {
        d_metrics_task_ended(d, t);
        d_on_finish(d, t);
    }
}

void d_attempt_result(daemon_state *d, dtask *t, const sup_result *r)
{
    t->att.exit = r->status;
    task_outcome o = oom_classify(r->status, r->cancelled || t->cancel_requested, r->tail,
                                  r->tail_len);
    /* its supervisor cancelled it: its output passed max_output_mib (outpump.h) */
    bool output_over = r->output_over_mib > 0 && !t->timed_out;
    if (output_over) {
        snprintf(t->end_reason, sizeof t->end_reason, "output passed max_output_mib = %lld MiB",
                 (long long)r->output_over_mib);
        d_event(d, t, "output_limit", t->end_reason);
        dlog(d, "task %llu: %s; cancelled", (unsigned long long)t->st.id, t->end_reason);
    }
    /* the end as its result file dates it (a task that ended while the daemon was away ended
     * then, not at the restart), when that is a time the attempt ran */
    double now = daemon_wall_now(), ended = r->ended_at;
    ended = ended >= t->att.started && ended <= now ? ended : now;
    /* cancelled past its time limit: by carma (after a restart too, which forgot the mark),
     * or by its supervisor, which says so: the result file's time is the kernel's coarse
     * clock, which may put the end a few ms before the limit */
    if (o == TASK_CANCELLED && !t->timed_out && !output_over &&
        (r->time_limit || d_past_time_limit(t, ended - t->att.started))) {
        t->timed_out = true;
        snprintf(t->end_reason, sizeof t->end_reason, "time limit of %lld s reached",
                 (long long)t->sub.time_limit_s);
        /* as d_time_limit says it: its supervisor's clock usually runs out before the
         * daemon's next look, and the task's events must still show why it ended */
        d_event(d, t, "timeout", t->end_reason);
    }
    char why[96];
    if (r->status.exited)
        snprintf(why, sizeof why, "exit %d", r->status.exit_code);
    else
        snprintf(why, sizeof why, "signal %d", r->status.term_signal);
    if (o == TASK_OOM) {
        const char *m = oom_marker_in(r->tail, r->tail_len);
        snprintf(why + strlen(why), sizeof why - strlen(why), ", '%s' in stderr", m);
        uint64_t need;
        if (oom_demand_mib(r->tail, r->tail_len, &need)) {
            t->att.oom_need_mib = need > INT64_MAX ? INT64_MAX : (int64_t)need;
            snprintf(why + strlen(why), sizeof why - strlen(why), ", needed %llu MiB",
                     (unsigned long long)need);
        }
    }
    d_end_attempt_at(d, t, o, why, ended);
}

/* Asks t's supervisor to cancel it, once. */
static void send_cancel(daemon_state *d, dtask *t)
{
    carma_err err;
    if (!t->cancel_requested || t->att.cancel_sent || t->att.launch_pending)
        return;
    d_mps_terminate(d, t);
    if (supervisor_cancel(t->att.dir, &err) == 0)
        t->att.cancel_sent = true;
}

void d_send_cancels(daemon_state *d)
{
    for (int i = 0; i < d->nrunning; i++)
        send_cancel(d, d->running[i]);
}

/* Judged against no GPU's memory (the daemon's first samples failed, as after a restart that
 * found the crash), a task needing more than any GPU holds went to the recovery queue, where
 * it never fit and held back every task after it; so it waits, still running, for a sample
 * that gives some GPU's memory. Its time limit no longer applies: it has ended. */
bool d_oom_waits(daemon_state *d, dtask *t, const sup_result *r)
{
    if (sched_oom_judgeable(d->core) ||
        oom_classify(r->status, r->cancelled || t->cancel_requested, r->tail, r->tail_len) !=
            TASK_OOM)
        return false;
    if (!t->att.oom_waits)
        dlog(d, "task %llu: attempt %d crashed out of memory; judged once a GPU sample gives "
             "the GPUs' memory (none has yet)", (unsigned long long)t->st.id, t->att.n);
    t->att.oom_waits = true;
    return true;
}

/* One running attempt. The result lives on the caller's stack (4 KiB of stderr tail): looking
 * at an attempt allocates nothing, so it cannot be skipped for want of memory. */
static void reap_one(daemon_state *d, dtask *t)
{
    sup_result r;
    pid_t task_pid = 0;
    sup_status s = supervisor_poll(t->att.dir, &task_pid, &r);
    if (s == SUP_UNKNOWN)
        return; /* its files could not be read (no descriptor left, say): next time */
    if (task_pid > 0)
        t->att.pid = task_pid;
    if (s == SUP_ENDED && d_oom_waits(d, t, &r))
        return;
    if (s == SUP_ENDED)
        d_attempt_result(d, t, &r);
    else if (s == SUP_LOST || s == SUP_NEVER_STARTED) {
        if (s == SUP_LOST)
            supervisor_kill_leftovers(t->att.dir, t->att.pid, t->uid);
        d_end_attempt(d, t, t->cancel_requested ? TASK_CANCELLED : TASK_FAILED,
                      "its supervisor died without a result");
    } else {
        send_cancel(d, t);
    }
}

void d_reap(daemon_state *d)
{
    /* From the end: an attempt that ends leaves d->running, and the last one takes its place. */
    for (int i = d->nrunning - 1; i >= 0 && !d->failed; i--) {
        dtask *t = d->running[i];
        assert(t->running_idx == i && t->state == DS_RUNNING);
        if (!t->att.launch_pending) {
            reap_one(d, t);
            /* its cancel goes out next time, after the commit */
            if (t->state == DS_RUNNING && !t->att.oom_waits)
                d_time_limit(d, t);
        }
    }
}
