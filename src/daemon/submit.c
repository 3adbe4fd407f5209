/* submit.c — a new task, an array's tasks or a batch of different ones: checked against the
 * server, given the memory figure an earlier identical run measured (when none was submitted)
 * and the run time and activity of its last solo run, stored, and queued in the core; a
 * request's tasks all or none. */
#include <assert.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/journal.h"
#include "daemon/registry.h"
#include "daemon/tasks.h"
#include "util/strutil.h"

/* A new task from the submission (which it takes), as the socket's peer submitted it. */
static dtask *new_submitted(const peer *p, submission *sub)
{
    struct passwd *pw = getpwuid(p->uid);
    char uname[32];
    snprintf(uname, sizeof uname, "%u", (unsigned)p->uid);
    dtask *t = d_new_task();
    if (!t || !(t->user = str_dup(pw ? pw->pw_name : uname))) {
        d_free_task(t);
        return NULL;
    }
    t->sub = *sub;
    submission_init(sub); /* the task owns it now */
    t->uid = p->uid;
    /* the user's primary group, not the connecting process's: a setgid program's group is
     * not the user's to give a task */
    t->gid = pw ? pw->pw_gid : p->gid;
    t->state = DS_QUEUED;
    t->submitted_at = daemon_wall_now();
    /* on the core's clock: the carma policy's longest-first bound on a task's wait */
    t->st.queued_at = clock_mono_s();
    t->held = t->sub.hold;
    t->priority = t->sub.priority;
    return t;
}

int d_take_run_history(daemon_state *d, dtask *t, carma_err *err)
{
    store_run r;
    int found = store_run_get(d->db, &(store_task_key)D_TASK_KEY(t), &r, err);
    if (found > 0)
        t->run_hist = r;
    return found < 0 ? -1 : 0;
}

/* The history's figure for this command, batch and GPU count, when no measured one was
 * submitted, and its last solo run. Opens the iteration's transaction (the reads are part of
 * it). */
static int take_history(daemon_state *d, dtask *t, carma_err *err)
{
    if (!d_txn(d))
        return carma_err_set(err, "%s", d->fatal.msg);
    if (d_take_run_history(d, t, err))
        return -1;
    uint64_t mib;
    if (mem_figures_get(&t->sub.mem, MEM_ORACLE, &mib))
        return 0;
    int found = store_history_get(d->db, &(store_task_key)D_TASK_KEY(t), &mib, err);
    if (found > 0)
        t->history_mib = (int64_t)mib;
    return found < 0 ? -1 : 0;
}

/* A task this server can never run is refused at once, naming the server's capacity, rather
 * than queued forever or launched into a certain out-of-memory crash: more GPUs than there
 * are, a measured figure of 0, or a per-GPU figure larger than its GPUs' memory. The figure
 * checked is the one the task would be placed with (the measured one for most policies); it
 * is checked only once every GPU's memory is known (a first sample was read). */
static int check_fits(const daemon_state *d, const dtask *t, carma_err *err)
{
    const submission *sub = &t->sub;
    /* The measured figure is submit's --mem, or a task file's (its source): named as given. */
    const char *given = sub->source ? "memory figure" : "--mem";
    uint64_t mib;
    if (mem_figures_get(&sub->mem, MEM_ORACLE, &mib) && mib == 0)
        return carma_err_set(err, "%s 0%s: a task needs some GPU memory", given,
                             sub->source ? " MiB" : "");
    dtask_mem m = d_task_mem(d, t);
    int largest = -1, known = 0, big_enough = 0;
    for (int g = 0; g < d->ngpus; g++) {
        const gpu_reading *r = &d->readings[g];
        if (!r->mem_known)
            continue;
        known++;
        if (largest < 0 || r->total_mib > d->readings[largest].total_mib)
            largest = g;
        big_enough += m.from != DMEM_NONE && r->total_mib >= m.mib;
    }
    if (m.from == DMEM_NONE || m.from == DMEM_POLICY || known < d->ngpus ||
        big_enough >= sub->ngpus)
        return 0;
    const char *what = m.from == DMEM_SUBMITTED && m.source == MEM_ORACLE ? given
                                                                           : d_task_mem_name(m);
    if (big_enough == 0)
        return carma_err_set(err, "%s %.1f GiB exceeds the largest GPU here (%.1f GiB, GPU %d)",
                             what, (double)m.mib / 1024,
                             (double)d->readings[largest].total_mib / 1024, largest);
    return carma_err_set(err, "%s %.1f GiB on %d GPUs: only %d GPU(s) here have that much "
                         "memory", what, (double)m.mib / 1024, sub->ngpus, big_enough);
}

/* What one request makes: one task (sub), an array's (sub with each of the indices), or a
 * batch's different tasks (specs, each read as a request's task is); n of them. what names
 * the many in messages. */
typedef struct members {
    submission *sub;     /* one task's, an array's; NULL for a batch */
    const int *array;    /* an array's indices, else NULL */
    const json_t *specs; /* a batch's task objects, else NULL */
    size_t n;
    const char *what;    /* "array", "batch" */
    long *refused;       /* a batch: the index of the task refused (else left at -1) */
} members;

/* The queue controls asked for: dependencies on tasks that exist (so that no cycle can be
 * made: a task only waits for older ones); a priority above 0, which passes other users'
 * tasks, from root or the daemon's own user only. */
static int check_controls(daemon_state *d, d_states *v, const peer *p, const submission *sub,
                          carma_err *err)
{
    if (sub->priority > 0 && p->uid != 0 && p->uid != geteuid())
        return carma_err_set(err, "--priority %d: a priority above 0 is root's only (lower "
                             "your other tasks' instead)", sub->priority);
    /* a batch of 1000 tasks of 64 dependencies each: one sorted look at the live tasks and one
     * read of each stored one, not a scan and a whole task's read per dependency */
    if (sub->ndeps && !v->live)
        d_states_make(d, v);
    for (size_t i = 0; i < sub->ndeps; i++) {
        uint64_t id = sub->deps[i].id;
        dstate s;
        if (d_states_get(d, v, id, &s))
            return carma_err_set(err, "--%s %llu: the state database cannot say whether it "
                                 "exists", sub->deps[i].ok ? "afterok" : "after",
                                 (unsigned long long)id);
        if (s == DS_COUNT)
            return carma_err_set(err, "--%s %llu: no task %llu",
                                 sub->deps[i].ok ? "afterok" : "after", (unsigned long long)id,
                                 (unsigned long long)id);
    }
    return 0;
}

/* What one task's submission must be, whatever came with it: GPUs the server has, a new
 * submission's bounds, its queue controls. */
static int check_spec(daemon_state *d, d_states *v, const peer *p, const submission *sub,
                      carma_err *err)
{
    if (sub->ngpus > d->ngpus)
        return carma_err_set(err, "task asks for %d GPUs but this server has %d", sub->ngpus,
                             d->ngpus);
    return submission_check_new(sub, err) || check_controls(d, v, p, sub, err) ? -1 : 0;
}

/* A user's tasks not ended live in the daemon's memory, and their specs (a whole environment,
 * a command of up to SUB_MAX_COMMAND bytes each) in its database: at most max_tasks_per_user of
 * them, so that no user fills either for the others (root is not limited). `adding` is how
 * many the submission makes (an array's or a batch's all count; what names which). */
static int check_user_tasks(const daemon_state *d, const peer *p, size_t adding,
                            const char *what, carma_err *err)
{
    int max = d->cfg.daemon.max_tasks_per_user;
    if (max == 0 || p->uid == 0)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < d->ntasks; i++) {
        const dtask *t = d->tasks[i];
        n += t->uid == p->uid && (t->state == DS_QUEUED || t->state == DS_RUNNING);
    }
    if (n + adding > (size_t)max) {
        if (adding > 1)
            return carma_err_set(err, "you have %zu tasks not ended and the %s adds %zu "
                                 "(max_tasks_per_user = %d): wait for some to end, cancel "
                                 "some, or submit a smaller %s", n, what, adding, max, what);
        return carma_err_set(err, "you have %zu tasks not ended (max_tasks_per_user = %d): "
                             "wait for some to end, or cancel some", n, max);
    }
    return 0;
}

/* The idempotency key stored with each task of a submission: the client's for a single task,
 * "KEY.i" for an array's or a batch's i-th (a '.' is in no client's key, so the two never
 * meet). */
static void task_key(char *out, size_t cap, const char *key, size_t i, size_t narray)
{
    if (narray)
        snprintf(out, cap, "%s.%zu", key, i);
    else
        snprintf(out, cap, "%s", key);
}

/* Whether this uid stored a task with key k (its id in *id): 1, 0, or -1 on a store error. */
static int key_lookup(daemon_state *d, const peer *p, const char *k, uint64_t *id, carma_err *err)
{
    int found = store_find_submit_key(d->db, p->uid, k, id, err);
    if (found < 0)
        d_fail(d, err);
    return found;
}

/* A submission repeated with its key: the ids of the tasks its first sending stored (1), none
 * stored (0), or -1 (a store error, or the key used for an array or batch of another size). */
static int find_repeat(daemon_state *d, const peer *p, const char *key, size_t narray,
                       const char *what, uint64_t *ids, carma_err *err)
{
    /* Looked up in the iteration's transaction: a repeat in the same batch of requests sees
     * the first one's rows. */
    if (!d_txn(d))
        return carma_err_set(err, "%s", d->fatal.msg);
    size_t n = narray ? narray : 1, i;
    char k[96];
    int found = 0;
    for (i = 0; i < n; i++) {
        task_key(k, sizeof k, key, i, narray);
        if ((found = key_lookup(d, p, k, &ids[i], err)) <= 0)
            break;
    }
    if (found < 0 || i == 0)
        return found;
    if (i < n)
        return carma_err_set(err, "key: already used for a smaller %s", what);
    uint64_t more;
    task_key(k, sizeof k, key, n, narray);
    if (narray && (found = key_lookup(d, p, k, &more, err)) != 0)
        return found < 0 ? -1 : carma_err_set(err, "key: already used for a larger %s", what);
    return 1;
}

/* The i-th task of an array: the submission with its index and the name NAME[INDEX]. */
static int array_member(const submission *sub, json_t *spec, int index, submission *out,
                        carma_err *err)
{
    char name[SUB_MAX_NAME + 1];
    /* whole characters only: a cut UTF-8 sequence would make the name no JSON text */
    snprintf(name, sizeof name, "%.*s[%d]", (int)str_utf8_fit(sub->name, 140), sub->name,
             index);
    json_object_set_new(spec, "array_index", json_integer(index));
    json_object_set_new(spec, "name", json_string(name));
    return submission_from_json(spec, out, err);
}

/* The i-th task of a batch: its own spec, read and checked as a single task's is. */
static int batch_member(daemon_state *d, d_states *v, const peer *p, const json_t *specs,
                        size_t i,
                        submission *out, carma_err *err)
{
    if (submission_from_json(json_array_get(specs, i), out, err))
        return -1;
    if (check_spec(d, v, p, out, err)) {
        submission_free(out);
        return -1;
    }
    return 0;
}

/* A task of the submission (which it takes), with its history read and checked to fit the
 * server; *spec is the text to store with it. NULL (err set) when refused. */
static dtask *prepare(daemon_state *d, const peer *p, submission *sub, char **spec,
                      carma_err *err)
{
    json_t *j = submission_to_json(sub);
    *spec = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    dtask *t = *spec ? new_submitted(p, sub) : NULL;
    if (!t) {
        free(*spec);
        carma_err_set(err, "out of memory");
        return NULL;
    }
    int rc = take_history(d, t, err);
    if (rc)
        d_fail(d, err); /* a store error, not a refusal */
    d_fill_sched_task(t);
    if (rc == 0 && check_fits(d, t, err))
        rc = -1;
    if (rc) {
        free(*spec);
        d_free_task(t);
        return NULL;
    }
    return t;
}

/* Stores a prepared task and queues it (taking spec); its id is t->st.id. */
static int store_queue(daemon_state *d, dtask *t, char *spec, const char *key, carma_err *err)
{
    store_task_row row = {
        .uid = t->uid, .gid = t->gid, .user = t->user, .spec = spec, .state = "queued",
        .submitted_at = t->submitted_at, .outcome = "", .history_mib = t->history_mib,
        .submit_key = key, .held = t->held, .priority = t->priority,
    };
    int rc = store_insert_task(d->db, &row, err);
    free(spec);
    if (rc) {
        d_free_task(t);
        d_fail(d, err);
        return -1;
    }
    t->st.id = row.id;
    t->queue_seq = row.queue_seq;
    if (d_put_task(d, t, err)) {
        d_free_task(t);
        d_fail(d, err);
        return -1;
    }
    if (d_enqueue(d, t, err)) {
        d_remove_task(d, t);
        d_fail(d, err);
        return -1;
    }
    assert(d->failed || d_task_ok(d, t));
    char detail[160] = "";
    if (t->history_mib >= 0)
        snprintf(detail, sizeof detail, "memory figure %lld MiB from an earlier identical run",
                 (long long)t->history_mib);
    if (!isnan(t->run_hist.runtime_s))
        snprintf(detail + strlen(detail), sizeof detail - strlen(detail),
                 "%sruntime estimate %.0f s from an earlier solo run", detail[0] ? "; " : "",
                 t->run_hist.runtime_s);
    d_event(d, t, "submitted", detail);
    return 0;
}

/* Every task of the submission made and checked before the first is stored, so that a refusal
 * stores none: tasks[i] and specs[i] for i < m->n, freed on failure. An array's and a batch's
 * members are made one at a time, as they are prepared. */
static int prepare_all(daemon_state *d, d_states *v, const peer *p, const members *m,
                       dtask **tasks,
                       char **specs, carma_err *err)
{
    json_t *spec = m->array ? submission_to_json(m->sub) : NULL;
    if (m->array && !spec)
        return carma_err_set(err, "out of memory");
    size_t i;
    for (i = 0; i < m->n; i++) {
        submission member, *s = m->sub;
        if (m->array || m->specs) {
            if (m->array ? array_member(m->sub, spec, m->array[i], &member, err)
                         : batch_member(d, v, p, m->specs, i, &member, err))
                break;
            s = &member;
        }
        tasks[i] = prepare(d, p, s, &specs[i], err);
        if (s == &member)
            submission_free(&member); /* a task took it, or it is refused */
        if (!tasks[i])
            break;
    }
    json_decref(spec);
    if (i == m->n)
        return 0;
    if (m->specs) { /* which of the batch, and its file when it came from one */
        const char *src = json_string_value(json_object_get(json_array_get(m->specs, i),
                                                            "source"));
        *m->refused = (long)i;
        carma_err_prefix(err, "tasks[%zu]%s%s%s", i, src ? " (" : "", src ? src : "",
                         src ? ")" : "");
    }
    while (i-- > 0) {
        free(specs[i]);
        d_free_task(tasks[i]);
    }
    return -1;
}

/* The request's new tasks checked, made and stored, all or none; deps the states of their
 * dependencies, looked up once. */
static int store_members(daemon_state *d, d_states *deps, const peer *p, const members *m,
                         const char *key, size_t listed, uint64_t *ids, carma_err *err)
{
    size_t n = m->n;
    /* an array's members share these; a batch's are checked one by one (prepare_all) */
    if ((m->sub && check_spec(d, deps, p, m->sub, err)) ||
        check_user_tasks(d, p, n, m->what, err) || d_state_space_refuses(d, err))
        return -1;
    dtask **tasks = calloc(n, sizeof *tasks);
    char **specs = calloc(n, sizeof *specs);
    if (!tasks || !specs || prepare_all(d, deps, p, m, tasks, specs, err)) {
        if (!tasks || !specs)
            carma_err_set(err, "out of memory");
        free(tasks);
        free(specs);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char k[96];
        if (key)
            task_key(k, sizeof k, key, i, listed);
        /* a store error ends the daemon, and the transaction with every task is rolled back */
        if (rc == 0) {
            if ((rc = store_queue(d, tasks[i], specs[i], key ? k : NULL, err)) == 0)
                ids[i] = tasks[i]->st.id;
            continue;
        }
        free(specs[i]);
        d_free_task(tasks[i]);
    }
    free(tasks);
    free(specs);
    if (rc == 0)
        d->need_schedule = true;
    return rc;
}

/* The request's tasks, all or none (d_submit, d_submit_batch). */
static int submit_members(daemon_state *d, const peer *p, const members *m, const char *key,
                          uint64_t *ids, bool *repeat, carma_err *err)
{
    *repeat = false;
    size_t listed = m->array || m->specs ? m->n : 0;
    if (key) {
        int found = find_repeat(d, p, key, listed, m->what, ids, err);
        if (found)
            return found < 0 ? -1 : (*repeat = true, 0);
    }
    d_states deps = {0}; /* made at the first dependency (check_controls) */
    int rc = store_members(d, &deps, p, m, key, listed, ids, err);
    d_states_free(&deps);
    return rc;
}

int d_submit(daemon_state *d, const peer *p, submission *sub, const char *key,
             const int *array, size_t narray, uint64_t *ids, bool *repeat, carma_err *err)
{
    long unused = -1;
    members m = {sub, narray ? array : NULL, NULL, narray ? narray : 1, "array", &unused};
    return submit_members(d, p, &m, key, ids, repeat, err);
}

int d_submit_batch(daemon_state *d, const peer *p, const json_t *specs, const char *key,
                   uint64_t *ids, bool *repeat, long *refused, carma_err *err)
{
    *refused = -1;
    members m = {NULL, NULL, specs, json_array_size(specs), "batch", refused};
    return submit_members(d, p, &m, key, ids, repeat, err);
}
