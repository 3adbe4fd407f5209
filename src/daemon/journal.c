/* journal.c — the daemon's log lines, wall clock and durable record: the loop iteration's store
 * transaction (d_txn, d_commit, d_fail) and the writes of a task's row, its attempt's row and
 * its events. */
#include "daemon/journal.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon/registry.h"

double daemon_wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void dlog(daemon_state *d, const char *fmt, ...)
{
    if (!d->opts->log)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    d->opts->log(msg);
}

void d_fail(daemon_state *d, const carma_err *err)
{
    if (!d->failed) {
        d->fatal = *err;
        d->failed = true;
    }
}

bool d_txn(daemon_state *d)
{
    if (d->failed)
        return false;
    if (d->in_txn)
        return true;
    carma_err err;
    if (store_begin(d->db, &err)) {
        d_fail(d, &err);
        return false;
    }
    d->in_txn = true;
    return true;
}

bool d_commit(daemon_state *d)
{
    if (!d->in_txn)
        return !d->failed;
    d->in_txn = false;
    carma_err err;
    if (d->failed) {
        store_rollback(d->db);
        return false;
    }
    if (store_commit(d->db, &err)) {
        store_rollback(d->db);
        d_fail(d, &err);
        return false;
    }
    return true;
}

bool d_save_task(daemon_state *d, const dtask *t)
{
    if (!d_txn(d))
        return false;
    store_task_row row = {
        .id = t->st.id, .state = dstate_name(t->state), .recovery = t->recovery,
        .queue_seq = t->queue_seq, .attempts = t->st.attempts, .ended_at = t->ended_at,
        .outcome = t->outcome,
        .learned_mib = t->st.learned_known ? (int64_t)t->st.learned_mib : -1,
        .held = t->held, .priority = t->priority, .end_reason = t->end_reason,
    };
    carma_err err;
    if (store_update_task(d->db, &row, &err)) {
        d_fail(d, &err);
        return false;
    }
    return true;
}

void d_gpus_text(const int *gpus, int n, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%d", i ? "," : "", gpus[i]);
}

void d_gpu_uuids_text(const daemon_state *d, const int *gpus, int n, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *u = gpus[i] >= 0 && gpus[i] < d->ngpus ? d->readings[gpus[i]].uuid : "";
        size_t len = strlen(u);
        if (!len || strchr(u, ',') || o + len + 2 > cap) {
            buf[0] = '\0'; /* one unknown: none is recorded, the numbers stand */
            return;
        }
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? "," : "", u);
    }
}

/* The row's state, from the attempt: written, launched, ended. */
static const char *attempt_state(const attempt *a)
{
    return a->ended > 0 ? "ended" : a->launch_pending ? "starting" : "running";
}

bool d_save_attempt(daemon_state *d, const dtask *t, bool insert)
{
    const attempt *at = &t->att;
    assert(at->n >= 1 && at->dir);
    char gpus[128], uuids[SCHED_MAX_TASK_GPUS * 97];
    d_gpus_text(at->gpus, at->ngpus, gpus, sizeof gpus);
    d_gpu_uuids_text(d, at->gpus, at->ngpus, uuids, sizeof uuids);
    store_attempt_row a = {
        .task_id = t->st.id, .n = at->n, .gpus = gpus, .dir = at->dir,
        .state = attempt_state(at), .task_pid = at->pid, .started_at = at->started,
        .ended_at = at->ended, .exited = at->exit.exited, .exit_code = at->exit.exit_code,
        .term_signal = at->exit.term_signal, .outcome = t->outcome, .tail = "",
        .peak_mib = at->peak_mib, .gpu_uuids = uuids,
    };
    carma_err err;
    if (!d_txn(d))
        return false;
    if ((insert ? store_insert_attempt : store_update_attempt)(d->db, &a, &err)) {
        d_fail(d, &err);
        return false;
    }
    return true;
}

bool d_event(daemon_state *d, const dtask *t, const char *kind, const char *detail)
{
    carma_err err;
    if (!d_txn(d))
        return false;
    if (store_event(d->db, t->st.id, daemon_wall_now(), kind, detail, &err)) {
        d_fail(d, &err);
        return false;
    }
    return true;
}
