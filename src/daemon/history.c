/* history.c — looking back at a task: every attempt it made (from the store; the current one
 * as the daemon follows it, which may be ahead of its row), their run times, GPU-hours and
 * peaks summed, for `show` and for `history` (sacct-like, docs/protocol.md). */
#include <stdlib.h>
#include <string.h>

#include "daemon/journal.h"
#include "daemon/registry.h"
#include "daemon/tasks.h"

typedef struct walk {
    const dtask *t;
    task_sums *sums;
    json_t *list; /* NULL: not wanted */
    double now;
} walk;

static json_t *gpus_array(const char *text)
{
    json_t *a = json_array();
    for (const char *p = text; p && *p;) {
        char *end;
        long g = strtol(p, &end, 10);
        if (end == p)
            break;
        json_array_append_new(a, json_integer(g));
        p = *end == ',' ? end + 1 : end;
    }
    return a;
}

static json_t *num_or_null(bool known, double v)
{
    return known ? json_real(v) : json_null();
}

static int add_attempt(void *ctx, const store_attempt_row *row, carma_err *err)
{
    (void)err;
    walk *w = ctx;
    store_attempt_row a = *row;
    char gpus[128];
    const attempt *live = &w->t->att;
    if (live->n == a.n && live->dir) { /* the daemon's copy: its end and peak may be newer */
        d_gpus_text(live->gpus, live->ngpus, gpus, sizeof gpus);
        a.gpus = gpus;
        a.started_at = live->started;
        a.ended_at = live->ended;
        a.exited = live->exit.exited;
        a.exit_code = live->exit.exit_code;
        a.term_signal = live->exit.term_signal;
        a.peak_mib = live->peak_mib;
        a.outcome = live->ended > 0 ? w->t->outcome : "";
    }
    bool ended = a.ended_at > 0;
    double run = (ended ? a.ended_at : w->now) - a.started_at;
    if (run < 0)
        run = 0;
    json_t *g = gpus_array(a.gpus);
    task_sums *s = w->sums;
    s->n++;
    if (s->first_start == 0 || a.started_at < s->first_start)
        s->first_start = a.started_at;
    s->elapsed_s += run;
    s->gpu_s += run * (double)json_array_size(g);
    if (a.peak_mib > s->peak_mib)
        s->peak_mib = a.peak_mib;
    if (!w->list) {
        json_decref(g);
        return 0;
    }
    json_t *j = json_object();
    json_object_set_new(j, "n", json_integer(a.n));
    json_object_set_new(j, "gpus", g);
    json_object_set_new(j, "started_at", json_real(a.started_at));
    json_object_set_new(j, "ended_at", num_or_null(ended, a.ended_at));
    json_object_set_new(j, "elapsed_s", json_real(run));
    json_object_set_new(j, "outcome", ended && a.outcome[0] ? json_string(a.outcome)
                                                            : json_null());
    json_object_set_new(j, "exit_code", ended && a.exited ? json_integer(a.exit_code)
                                                          : json_null());
    json_object_set_new(j, "signal", ended && !a.exited ? json_integer(a.term_signal)
                                                        : json_null());
    json_object_set_new(j, "peak_mib", a.peak_mib >= 0 ? json_integer((json_int_t)a.peak_mib)
                                                       : json_null());
    json_array_append_new(w->list, j);
    return 0;
}

int d_task_attempts(daemon_state *d, const dtask *t, task_sums *sums, json_t **list,
                    carma_err *err)
{
    *sums = (task_sums){.peak_mib = -1};
    walk w = {t, sums, list ? json_array() : NULL, daemon_wall_now()};
    if (store_attempts(d->db, t->st.id, add_attempt, &w, err)) {
        json_decref(w.list);
        return -1;
    }
    if (list)
        *list = w.list;
    return 0;
}

/* The sums as JSON fields of j: started_at (the first attempt's), wait_s (until then, or
 * until now while it has never started), elapsed_s, gpu_hours. */
static void sums_json(const dtask *t, const task_sums *s, json_t *j)
{
    bool started = s->first_start > 0;
    double wait = (started ? s->first_start : daemon_wall_now()) - t->submitted_at;
    json_object_set_new(j, "started_at", num_or_null(started, s->first_start));
    json_object_set_new(j, "wait_s", num_or_null(started || t->state == DS_QUEUED,
                                                 wait > 0 ? wait : 0));
    json_object_set_new(j, "elapsed_s", num_or_null(started, s->elapsed_s));
    json_object_set_new(j, "gpu_hours", json_real(s->gpu_s / 3600.0));
}

json_t *d_task_show_json(daemon_state *d, const dtask *t, carma_err *err)
{
    task_sums s;
    json_t *list;
    if (d_task_attempts(d, t, &s, &list, err))
        return NULL;
    json_t *j = d_task_json(d, t, true);
    sums_json(t, &s, j);
    json_object_set_new(j, "attempt_list", list);
    return j;
}

json_t *d_history_task_json(daemon_state *d, const dtask *t, carma_err *err)
{
    task_sums s;
    if (d_task_attempts(d, t, &s, NULL, err))
        return NULL;
    json_t *j = json_object();
    json_object_set_new(j, "id", json_integer((json_int_t)t->st.id));
    json_object_set_new(j, "user", json_string(t->user));
    json_object_set_new(j, "name", json_string(t->sub.name));
    json_object_set_new(j, "state", json_string(dstate_name(t->state)));
    json_object_set_new(j, "attempts", json_integer(t->st.attempts));
    json_object_set_new(j, "ngpus", json_integer(t->sub.ngpus));
    json_object_set_new(j, "submitted_at", json_real(t->submitted_at));
    json_object_set_new(j, "ended_at", num_or_null(t->ended_at > 0, t->ended_at));
    sums_json(t, &s, j);
    json_object_set_new(j, "peak_mib", s.peak_mib >= 0 ? json_integer((json_int_t)s.peak_mib)
                                                       : json_null());
    json_object_set_new(j, "outcome", t->outcome[0] ? json_string(t->outcome) : json_null());
    bool ended = t->att.n > 0 && t->att.ended > 0;
    json_object_set_new(j, "exit_code", ended && t->att.exit.exited
                                            ? json_integer(t->att.exit.exit_code)
                                            : json_null());
    json_object_set_new(j, "signal", ended && !t->att.exit.exited
                                         ? json_integer(t->att.exit.term_signal)
                                         : json_null());
    return j;
}

json_t *d_history_json(daemon_state *d, const history_query *q, carma_err *err)
{
    store_filter f = {.after = q->after, .state = q->state, .user = q->user,
                      .ended = !q->all && !q->state, .since = q->since};
    return d_task_page(d, &f, q->limit, d_history_task_json, err);
}
