/* task_states.c — many tasks' states looked up at once (tasks.h, d_states): the dependencies
 * of a scheduling pass's parked tasks, or of a submission's tasks. d_task scans every live task
 * and d_find_task reads a whole task (its environment too) from the store: a user's parked
 * tasks (max_tasks_per_user of them) times their dependencies (up to SUB_MAX_DEPS) such looks
 * each turn held the loop, and every other user, for seconds. So the live tasks are sorted by
 * id once, and the state of one that is not live is read from the store once (many tasks may
 * wait for the same ones). */
#include <stdlib.h>

#include "daemon/registry.h"
#include "daemon/tasks.h"

static int by_id(const void *a, const void *b)
{
    uint64_t x = (*(dtask *const *)a)->st.id, y = (*(dtask *const *)b)->st.id;
    return (x > y) - (x < y);
}

void d_states_make(const daemon_state *d, d_states *v)
{
    *v = (d_states){.live = malloc((d->ntasks ? d->ntasks : 1) * sizeof *v->live)};
    if (!v->live)
        return;
    v->nlive = d->ntasks;
    for (size_t i = 0; i < v->nlive; i++)
        v->live[i] = d->tasks[i];
    qsort(v->live, v->nlive, sizeof *v->live, by_id);
}

void d_states_free(d_states *v)
{
    free(v->live);
    free(v->ids);
    free(v->states);
}

dtask *d_states_live(daemon_state *d, const d_states *v, uint64_t id)
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

static size_t slot(const d_states *v, uint64_t id)
{
    size_t i = (size_t)(id * 0x9E3779B97F4A7C15ull) & (v->cap - 1);
    while (v->ids[i] && v->ids[i] != id)
        i = (i + 1) & (v->cap - 1);
    return i;
}

/* Remembers a stored state for the view's life (kept at most half full; out of memory,
 * it is simply read again). */
static void remember(d_states *v, uint64_t id, dstate s)
{
    if (!v->live)
        return;
    if (2 * (v->n + 1) > v->cap) {
        d_states bigger = {.cap = v->cap ? 2 * v->cap : 256};
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
static int stored_state(daemon_state *d, d_states *v, uint64_t id, dstate *s)
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

int d_states_get(daemon_state *d, d_states *v, uint64_t id, dstate *s)
{
    dtask *x = d_states_live(d, v, id);
    if (x) {
        *s = x->state;
        return 0;
    }
    return stored_state(d, v, id, s);
}
