/* restore.c — the tasks found in the database at start-up. Queued tasks go back to their
 * queues in their order; each running attempt's directory says what became of it while the
 * daemon was away: still running (its supervisor is adopted), ended (its result is classified
 * once the core holds every task; an out-of-memory crash once some GPU's memory is known,
 * d_oom_waits), its supervisor lost (failed), or written but never launched (the task
 * returns to its queue and the attempt does not count). */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon/journal.h"
#include "daemon/registry.h"
#include "daemon/tasks.h"
#include "util/array.h"
#include "util/safefs.h"
#include "util/strutil.h"

/* A running attempt that ended while the daemon was away: classified once the core is ready. */
typedef struct ended_attempt {
    dtask *t;
    sup_result *r; /* NULL: its supervisor died without a result */
} ended_attempt;

typedef struct restore_ctx {
    daemon_state *d;
    dtask **queued;
    size_t nqueued, qcap;
    ended_attempt *ended;
    size_t nended, ecap;
} restore_ctx;

static int push_queued(restore_ctx *rc, dtask *t, carma_err *err)
{
    dtask **v = array_grow(rc->queued, &rc->qcap, rc->nqueued + 1, sizeof *v, 64);
    if (!v)
        return carma_err_set(err, "out of memory");
    rc->queued = v;
    rc->queued[rc->nqueued++] = t;
    return 0;
}

static int push_ended(restore_ctx *rc, dtask *t, sup_result *r, carma_err *err)
{
    ended_attempt *v = array_grow(rc->ended, &rc->ecap, rc->nended + 1, sizeof *v, 64);
    if (!v)
        return carma_err_set(err, "out of memory");
    rc->ended = v;
    rc->ended[rc->nended++] = (ended_attempt){t, r};
    return 0;
}

static int parse_gpus(const char *text, int *gpus, int max)
{
    int n = 0;
    for (const char *p = text; *p && n < max;) {
        char *end;
        long g = strtol(p, &end, 10);
        if (end == p)
            return -1;
        gpus[n++] = (int)g;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* The attempt's row as the task's attempt (the inverse of d_save_attempt). */
static int attempt_from_row(attempt *at, const store_attempt_row *a, carma_err *err)
{
    at->n = a->n;
    at->ngpus = parse_gpus(a->gpus, at->gpus, SCHED_MAX_TASK_GPUS);
    if (!(at->dir = str_dup(a->dir)))
        return carma_err_set(err, "out of memory");
    at->pid = a->task_pid;
    at->started = a->started_at;
    at->started_mono = NAN;
    at->ended = a->ended_at;
    at->exit = (exit_status){a->exited, a->exit_code, a->term_signal};
    at->peak_mib = a->peak_mib;
    at->peak_saved_mib = a->peak_mib;
    at->not_solo = true; /* this daemon did not watch all of it */
    return 0;
}

/* The task row and its latest attempt's as a task (not yet entered anywhere). */
dtask *task_from_rows(const store_task_row *row, const store_attempt_row *a,
                             carma_err *err)
{
    json_error_t jerr;
    json_t *spec = json_loads(row->spec, 0, &jerr);
    dtask *t = d_new_task();
    int rc = !t    ? carma_err_set(err, "out of memory")
             : !spec ? carma_err_set(err, "its spec is not JSON: %s", jerr.text)
             : submission_from_json(spec, &t->sub, err);
    json_decref(spec);
    if (rc == 0 && !(t->user = str_dup(row->user)))
        rc = carma_err_set(err, "out of memory");
    if (rc == 0 && dstate_from(row->state, &t->state))
        rc = carma_err_set(err, "unknown state '%s'", row->state);
    if (rc == 0 && a)
        rc = attempt_from_row(&t->att, a, err);
    if (rc) {
        d_free_task(t);
        carma_err_prefix(err, "task %llu in the state database is unreadable",
                         (unsigned long long)row->id);
        return NULL;
    }
    t->st.id = row->id;
    t->uid = row->uid;
    t->gid = row->gid;
    t->recovery = row->recovery;
    t->queue_seq = row->queue_seq;
    t->st.attempts = row->attempts;
    t->submitted_at = row->submitted_at;
    /* its wait so far, on the core's clock (which a restart does not carry over) */
    t->st.queued_at = clock_mono_s() - (daemon_wall_now() - row->submitted_at);
    t->ended_at = row->ended_at;
    snprintf(t->outcome, sizeof t->outcome, "%s", row->outcome);
    t->history_mib = row->history_mib;
    t->held = row->held;
    t->priority = row->priority;
    snprintf(t->end_reason, sizeof t->end_reason, "%s", row->end_reason ? row->end_reason : "");
    d_fill_sched_task(t);
    if (row->learned_mib > 0) { /* what its out-of-memory crashes taught the core (>= 1) */
        t->st.learned_known = true;
        t->st.learned_mib = (uint64_t)row->learned_mib;
    }
    return t;
}

/* Why the attempt directory dir cannot be looked at, for the log: a symlink or a file in its
 * place (nothing there is followed or trusted) is named as such, not as unreadable files. */
static void unreadable_why(const char *dir, char *buf, size_t cap)
{
    struct stat sb;
    if (lstat(dir, &sb))
        snprintf(buf, cap, "cannot be looked at now (%s: %s)", dir, strerror(errno));
    else if (S_ISLNK(sb.st_mode) || !S_ISDIR(sb.st_mode))
        snprintf(buf, cap, "cannot be looked at: %s is a %s, not its directory (carma follows "
                 "no link there; put the attempt's directory back in its place)", dir,
                 safefs_type_name(sb.st_mode));
    else
        snprintf(buf, cap, "cannot be looked at now (its files in %s are unreadable)", dir);
}

/* Written but never launched: back to its queue, the attempt does not count. */
static int requeue_never_started(restore_ctx *rc, dtask *t, carma_err *err)
{
    daemon_state *d = rc->d;
    t->state = DS_QUEUED;
    t->st.attempts--;
    t->recovery = t->att.n > 1;
    dlog(d, "task %llu: attempt %d was never started; queued again",
         (unsigned long long)t->st.id, t->att.n);
    if (!d_txn(d) || store_delete_attempt(d->db, t->st.id, t->att.n, err) ||
        !d_save_task(d, t) ||
        !d_event(d, t, "requeued", "attempt never started before a daemon restart"))
        return d->failed ? carma_err_set(err, "%s", d->fatal.msg) : -1;
    t->att.n--;
    return push_queued(rc, t, err);
}

/* Which of this daemon's GPUs the attempt ran on, by the UUIDs recorded at launch: the
 * daemon numbers the GPUs it sees and uses, so a GPU left out now (MIG turned on), gone, or
 * another set of GPUs moves the numbers. Returns how many of them it does not see now (the
 * first one's UUID in *lost_uuid); 0 with the numbers as recorded when no UUIDs were (an
 * older carma, a UUID not read at launch), and when one is not found while a GPU's UUID is
 * unknown now (a GPU lost at start, which the daemon keeps: it may be that one). */
static int find_gpus(daemon_state *d, dtask *t, const char *uuids, char *lost_uuid, size_t cap)
{
    int found[SCHED_MAX_TASK_GPUS], n = 0, lost = 0;
    const char *p = uuids ? uuids : "";
    while (*p && n < t->att.ngpus) {
        size_t len = strcspn(p, ",");
        if (len == 0)
            return 0; /* not a UUID list: the numbers stand */
        int g = -1;
        for (int i = 0; i < d->ngpus && g < 0; i++)
            if (strlen(d->readings[i].uuid) == len && !strncmp(d->readings[i].uuid, p, len))
                g = i;
        if (g < 0 && lost++ == 0)
            snprintf(lost_uuid, cap, "%.*s", (int)len, p);
        found[n++] = g;
        p += len + (p[len] == ',');
    }
    if (n == 0 || n != t->att.ngpus || *p)
        return 0; /* not one UUID per GPU: the numbers stand */
    bool unknown = false;
    for (int i = 0; i < d->ngpus; i++)
        unknown |= !d->readings[i].uuid[0];
    if (lost && unknown) {
        dlog(d, "task %llu: GPU %s is not among the GPUs whose UUID is known now; kept on its "
             "recorded GPU numbers", (unsigned long long)t->st.id, lost_uuid);
        return 0;
    }
    if (lost)
        return lost;
    for (int k = 0; k < n; k++) {
        if (found[k] != t->att.gpus[k])
            dlog(d, "task %llu: its GPU %s is GPU %d now (was %d)", (unsigned long long)t->st.id,
                 d->readings[found[k]].uuid, found[k], t->att.gpus[k]);
        t->att.gpus[k] = found[k];
    }
    return 0;
}

/* A task that was running: its attempt adopted, kept for classification, or requeued. */
static int restore_running(restore_ctx *rc, dtask *t, const store_attempt_row *a,
                           carma_err *err)
{
    daemon_state *d = rc->d;
    if (!a || t->att.ngpus != t->sub.ngpus)
        return carma_err_set(err, "task %llu is running without a valid attempt record",
                             (unsigned long long)t->st.id);
    char lost_uuid[96] = "";
    int was[SCHED_MAX_TASK_GPUS];
    memcpy(was, t->att.gpus, sizeof was);
    int lost = find_gpus(d, t, a->gpu_uuids, lost_uuid, sizeof lost_uuid);
    bool moved = memcmp(was, t->att.gpus, (size_t)t->att.ngpus * sizeof *was) != 0;
    pid_t task_pid = 0;
    sup_result result;
    sup_status s = supervisor_poll(t->att.dir, &task_pid, &result);
    if (task_pid > 0)
        t->att.pid = task_pid;
    if (s == SUP_NEVER_STARTED)
        return requeue_never_started(rc, t, err);
    if (lost && (s == SUP_RUNNING || s == SUP_UNKNOWN)) {
        char how[64] = "may still run (its files cannot be read now)";
        if (s == SUP_RUNNING)
            snprintf(how, sizeof how, t->att.pid > 0 ? "still runs (pid %d)" : "is starting",
                     (int)t->att.pid);
        char kill_it[40] = "";
        if (t->att.pid > 0)
            snprintf(kill_it, sizeof kill_it, " (kill %d)", (int)t->att.pid);
        return carma_err_set(err, "task %llu: attempt %d %s on GPU %s, which this daemon does "
                             "not see (gone, MIG enabled, or not among its GPUs): start carma "
                             "where that GPU is seen, or once the task has ended%s",
                             (unsigned long long)t->st.id, t->att.n, how, lost_uuid, kill_it);
    }
    if (lost) { /* it ended: its result is recorded with the first GPUs standing in */
        if (t->att.ngpus > d->ngpus)
            return carma_err_set(err, "task %llu: attempt %d ended on %d GPUs and this daemon "
                                 "sees %d: start carma where they are seen to record its end",
                                 (unsigned long long)t->st.id, t->att.n, t->att.ngpus,
                                 d->ngpus);
        for (int k = 0; k < t->att.ngpus; k++)
            t->att.gpus[k] = k;
        dlog(d, "task %llu: GPU %s, where attempt %d ran, is not seen now; its result is "
             "recorded without it", (unsigned long long)t->st.id, lost_uuid, t->att.n);
    } else if (moved && !d_save_attempt(d, t, false)) { /* `show` gives the number it has now */
        return carma_err_set(err, "%s", d->fatal.msg);
    }
    /* Stand-ins take no launch hold: the GPUs may be running another restored task, whose
     * hold releasing this one's end must not drop. */
    if (sched_restore_running(d->core, &t->st, t->att.gpus, t->att.ngpus,
                              lost ? GPU_AVAILABLE : GPU_LAUNCHING, 0, err))
        return -1;
    if (d_running_add(d, t))
        return carma_err_set(err, "out of memory");
    /* A cancel accepted (its event committed) that the last daemon may not have sent before it
     * stopped: sent now by d_reap when the attempt still runs; one lost with its supervisor
     * ends cancelled. One that ended by itself keeps its result, but for an out-of-memory
     * crash: that would be relaunched, running again a task whose cancel was acknowledged. */
    bool oom = s == SUP_ENDED && oom_classify(result.status, result.cancelled, result.tail,
                                              result.tail_len) == TASK_OOM;
    int asked = s == SUP_ENDED && !oom
                    ? 0
                    : store_event_since_launch(d->db, t->st.id, "cancel", err);
    if (asked < 0)
        return -1;
    t->cancel_requested = asked > 0;
    /* A time limit the last daemon acted on (its "timeout" event committed, d_time_limit): as
     * that left it, so that the end is not said a second time (d_attempt_result) and a task
     * still running is cancelled, not timed out again. One that ended by itself keeps its
     * result, as for a cancel above. */
    int limit = store_event_since_launch(d->db, t->st.id, "timeout", err);
    if (limit < 0)
        return -1;
    if (limit > 0 && !(s == SUP_ENDED && !oom && !result.cancelled)) {
        t->timed_out = t->cancel_requested = true;
        snprintf(t->end_reason, sizeof t->end_reason, "time limit of %lld s reached",
                 (long long)t->sub.time_limit_s);
    }
    if (s == SUP_RUNNING || s == SUP_UNKNOWN) {
        char why[4400] = "still running";
        if (s == SUP_UNKNOWN)
            unreadable_why(t->att.dir, why, sizeof why);
        dlog(d, "task %llu: attempt %d %s; adopted", (unsigned long long)t->st.id, t->att.n,
             why);
        if (asked)
            dlog(d, "task %llu: its cancel, asked for before the restart, is sent now",
                 (unsigned long long)t->st.id);
        return 0; /* d_reap looks again each turn */
    }
    dlog(d, "task %llu: attempt %d %s while the daemon was away", (unsigned long long)t->st.id,
         t->att.n, s == SUP_LOST ? "lost its supervisor" : "ended");
    if (s == SUP_LOST) {
        supervisor_kill_leftovers(t->att.dir, t->att.pid, t->uid);
        return push_ended(rc, t, NULL, err);
    }
    sup_result *r = malloc(sizeof *r);
    if (!r)
        return carma_err_set(err, "out of memory");
    *r = result;
    if (push_ended(rc, t, r, err)) {
        free(r);
        return -1;
    }
    return 0;
}

static int restore_row(void *ctx, const store_task_row *row, const store_attempt_row *a,
                       carma_err *err)
{
    restore_ctx *rc = ctx;
    dtask *t = task_from_rows(row, a, err);
    if (!t)
        return -1;
    if (t->state == DS_QUEUED || t->state == DS_RUNNING) {
        if (d_take_run_history(rc->d, t, err)) {
            d_free_task(t);
            return -1;
        }
        d_fill_sched_task(t);
    }
    if (d_put_task(rc->d, t, err)) {
        d_free_task(t);
        return -1;
    }
    if (t->state == DS_QUEUED)
        return push_queued(rc, t, err);
    if (t->state == DS_RUNNING)
        return restore_running(rc, t, a, err);
    return 0;
}

static int by_seq(const void *a, const void *b)
{
    const dtask *x = *(dtask *const *)a, *y = *(dtask *const *)b;
    return (x->queue_seq > y->queue_seq) - (x->queue_seq < y->queue_seq);
}

/* The queued tasks back in their queues, in their order (the main queue's by priority, then
 * by queue_seq); held ones and those with dependencies are parked (control.c). */
static int queue_again(daemon_state *d, restore_ctx *rc, carma_err *err)
{
    if (rc->nqueued > 1)
        qsort(rc->queued, rc->nqueued, sizeof *rc->queued, by_seq);
    for (size_t i = 0; i < rc->nqueued; i++)
        if (d_enqueue(d, rc->queued[i], err))
            return -1;
    return 0;
}

int d_restore(daemon_state *d, carma_err *err)
{
    restore_ctx rc = {.d = d};
    /* the live tasks only: the ended ones stay in the store, which answers for them */
    int r = store_select(d->db, &(store_filter){.live = true}, restore_row, &rc, err);
    if (r == 0)
        r = queue_again(d, &rc, err);
    for (size_t i = 0; i < rc.nended; i++) {
        dtask *t = rc.ended[i].t;
        const sup_result *res = rc.ended[i].r;
        /* an out-of-memory crash while no GPU's memory is known: left running for d_reap */
        if (r == 0 && res && !d_oom_waits(d, t, res))
            d_attempt_result(d, t, res);
        else if (r == 0 && !res)
            d_end_attempt(d, t, t->cancel_requested ? TASK_CANCELLED : TASK_FAILED,
                          "its supervisor died without a result");
        free(rc.ended[i].r);
    }
    free(rc.queued);
    free(rc.ended);
    if (r == 0 && d->failed)
        r = carma_err_set(err, "%s", d->fatal.msg);
    if (r == 0 && d->in_txn && !d_commit(d))
        r = carma_err_set(err, "%s", d->fatal.msg);
    assert(r != 0 || d_tasks_ok(d));
    d->need_schedule = true;
    return r;
}
