/* task_query.c — tasks as clients ask for them. Only the live tasks (queued, running) are in
 * memory; an ended one is read from the store when asked for, so the daemon's memory and the
 * time of a listing do not grow with every task ever submitted. One task by id; the `queue`
 * listing: the live tasks in the order they will be considered, or (ended ones wanted) every
 * task in id order from the store, a page at a time. */
#include <stdlib.h>
#include <string.h>

#include "daemon/registry.h"
#include "daemon/tasks.h"

/* Called back by store_select: the row as a task (the first one only). */
static int load_one(void *ctx, const store_task_row *row, const store_attempt_row *a,
                    carma_err *err)
{
    dtask **out = ctx;
    if (*out)
        return 0;
    return (*out = task_from_rows(row, a, err)) ? 0 : -1;
}

dtask *d_find_task(daemon_state *d, uint64_t id, dtask **loaded, carma_err *err)
{
    *loaded = NULL;
    dtask *t = d_task(d, id);
    if (t)
        return t;
    if (store_select(d->db, &(store_filter){.id = id, .limit = 1}, load_one, loaded, err))
        return NULL;
    if (!*loaded)
        carma_err_set(err, "no task %llu", (unsigned long long)id);
    return *loaded;
}

static bool wanted(const queue_query *q, const dtask *t)
{
    return (!q->state || !strcmp(q->state, dstate_name(t->state))) &&
           (!q->user || !strcmp(q->user, t->user));
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = (*(dtask *const *)a)->st.id, y = (*(dtask *const *)b)->st.id;
    return (x > y) - (x < y);
}

/* Parked tasks (held, or waiting for dependencies) in the main queue's order. */
static int by_queue_order(const void *a, const void *b)
{
    const dtask *x = *(dtask *const *)a, *y = *(dtask *const *)b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return (x->queue_seq > y->queue_seq) - (x->queue_seq < y->queue_seq);
}

/* Appends the live tasks that pass `keep` (sorted by cmp) while fewer than max are listed. */
static int list_sorted(daemon_state *d, const queue_query *q, json_t *tasks, size_t max,
                       bool (*keep)(const dtask *), int (*cmp)(const void *, const void *),
                       carma_err *err)
{
    size_t n = 0;
    for (size_t i = 0; i < d->ntasks; i++)
        n += keep(d->tasks[i]);
    if (n == 0 || json_array_size(tasks) >= max)
        return 0;
    dtask **v = malloc(n * sizeof *v);
    if (!v)
        return carma_err_set(err, "out of memory");
    n = 0;
    for (size_t i = 0; i < d->ntasks; i++)
        if (keep(d->tasks[i]))
            v[n++] = d->tasks[i];
    qsort(v, n, sizeof *v, cmp);
    for (size_t i = 0; i < n && json_array_size(tasks) < max; i++)
        if (wanted(q, v[i]))
            json_array_append_new(tasks, d_task_json(d, v[i], false));
    free(v);
    return 0;
}

static bool is_parked(const dtask *t)
{
    return t->state == DS_QUEUED && t->parked;
}

static bool is_running(const dtask *t)
{
    return t->state == DS_RUNNING;
}

/* The live tasks: the recovery queue, then the main queue, in the order they will be
 * considered, then the parked ones (held, waiting for dependencies) in the main queue's
 * order, then the running ones by id. */
static int list_live(daemon_state *d, const queue_query *q, json_t *tasks, carma_err *err)
{
    size_t max = q->limit > 0 ? (size_t)q->limit : (size_t)-1;
    sched_task *heads[2] = {sched_recovery_head(d->core), sched_main_head(d->core)};
    for (int k = 0; k < 2; k++)
        for (sched_task *s = heads[k]; s && json_array_size(tasks) < max; s = s->qnext)
            if (wanted(q, (dtask *)s))
                json_array_append_new(tasks, d_task_json(d, (dtask *)s, false));
    if (list_sorted(d, q, tasks, max, is_parked, by_queue_order, err))
        return -1;
    return list_sorted(d, q, tasks, max, is_running, by_id, err);
}

typedef struct page {
    daemon_state *d;
    json_t *tasks;
    size_t want;   /* the page's size: one more row is read to know whether there is more */
    uint64_t last; /* the last id put on the page */
    bool more;
    d_task_json_fn fn;
} page;

static int page_row(void *ctx, const store_task_row *row, const store_attempt_row *a,
                    carma_err *err)
{
    page *pg = ctx;
    if (json_array_size(pg->tasks) == pg->want) {
        pg->more = true;
        return 0;
    }
    /* a live task as the daemon follows it; an ended one as stored */
    dtask *t = d_task(pg->d, row->id);
    dtask *loaded = t ? NULL : task_from_rows(row, a, err);
    if (!t && !loaded)
        return -1;
    json_t *j = pg->fn(pg->d, t ? t : loaded, err);
    d_free_task(loaded);
    if (!j)
        return -1;
    json_array_append_new(pg->tasks, j);
    pg->last = row->id;
    return 0;
}

json_t *d_task_page(daemon_state *d, const store_filter *f, int limit, d_task_json_fn fn,
                    carma_err *err)
{
    json_t *tasks = json_array(), *next = json_null();
    page pg = {.d = d, .tasks = tasks, .fn = fn,
               .want = limit > 0 && limit < QUEUE_PAGE_MAX ? (size_t)limit : QUEUE_PAGE_MAX};
    store_filter one_more = *f;
    one_more.limit = (int)pg.want + 1;
    if (store_select(d->db, &one_more, page_row, &pg, err)) {
        json_decref(tasks);
        return NULL;
    }
    if (pg.more)
        next = json_integer((json_int_t)pg.last);
    json_t *r = proto_ok();
    json_object_set_new(r, "tasks", tasks);
    json_object_set_new(r, "next", next);
    return r;
}

static json_t *queue_row(daemon_state *d, const dtask *t, carma_err *err)
{
    (void)err;
    return d_task_json(d, t, false);
}

json_t *d_queue_json(daemon_state *d, const queue_query *q, carma_err *err)
{
    bool ended = q->state && strcmp(q->state, "queued") && strcmp(q->state, "running");
    if (q->all || ended)
        return d_task_page(d, &(store_filter){.after = q->after, .state = q->state,
                                              .user = q->user},
                           q->limit, queue_row, err);
    json_t *tasks = json_array();
    if (list_live(d, q, tasks, err)) {
        json_decref(tasks);
        return NULL;
    }
    json_t *r = proto_ok();
    json_object_set_new(r, "tasks", tasks);
    json_object_set_new(r, "next", json_null());
    return r;
}
