/* handlers.c — one function per protocol verb (docs/protocol.md). The caller's identity is
 * the socket's peer credentials, never anything in the message. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/registry.h"
#include "daemon/tasks.h"

#define LOG_CHUNK (64 * 1024)

static bool may_manage(const peer *p, const dtask *t)
{
    return p->uid == 0 || p->uid == t->uid;
}

/* The task the request names: the live one, or one read from the store into *loaded (which
 * the handler frees, d_free_task). */
static dtask *task_arg(daemon_state *d, const json_t *req, dtask **loaded, json_t **error)
{
    *loaded = NULL;
    json_t *id = json_object_get(req, "id");
    if (!json_is_integer(id) || json_integer_value(id) < 1) {
        *error = proto_error("'id' must be a positive integer");
        return NULL;
    }
    carma_err err;
    dtask *t = d_find_task(d, (uint64_t)json_integer_value(id), loaded, &err);
    if (!t)
        *error = proto_error("%s", err.msg);
    return t;
}

/* The task named by the request, when the peer may cancel it or read its logs. */
static dtask *managed_task_arg(daemon_state *d, const peer *p, const json_t *req,
                               dtask **loaded, json_t **error)
{
    dtask *t = task_arg(d, req, loaded, error);
    if (t && !may_manage(p, t)) {
        *error = proto_error("permission denied: task %llu belongs to %s",
                             (unsigned long long)t->st.id, t->user);
        d_free_task(*loaded);
        *loaded = NULL;
        return NULL;
    }
    return t;
}

/* The submission's idempotency key: absent (an older client), or 16..64 hex digits. */
static bool key_arg(const json_t *req, const char **key)
{
    json_t *k = json_object_get(req, "key");
    *key = NULL;
    if (!k)
        return true;
    const char *v = json_string_value(k);
    size_t n = v ? strlen(v) : 0;
    if (n < 16 || n > 64 || strspn(v, "0123456789abcdefABCDEF") != n)
        return false;
    *key = v;
    return true;
}

/* The submission's array: absent (one task), or 1..PROTO_MAX_ARRAY distinct indices 0..1000000
 * into out (*n of them). NULL, or the error reply. */
static json_t *array_arg(const json_t *req, int *out, size_t *n)
{
    json_t *a = json_object_get(req, "array"), *v;
    *n = 0;
    if (!a)
        return NULL;
    if (!json_is_array(a) || json_array_size(a) < 1 || json_array_size(a) > PROTO_MAX_ARRAY)
        return proto_error("'array' must be a list of 1 to %d indices", PROTO_MAX_ARRAY);
    if (json_object_get(json_object_get(req, "task"), "array_index"))
        return proto_error("'array' and task.array_index: give one (each task of an array "
                           "gets its index)");
    size_t i;
    json_array_foreach(a, i, v) {
        json_int_t x = json_integer_value(v);
        if (!json_is_integer(v) || x < 0 || x > 1000000)
            return proto_error("'array': indices are integers 0..1000000");
        for (size_t k = 0; k < i; k++)
            if (out[k] == (int)x)
                return proto_error("'array': index %d given twice", (int)x);
        out[i] = (int)x;
    }
    *n = i;
    return NULL;
}

/* A batch's tasks: absent, or 1..PROTO_MAX_ARRAY task objects in *specs, each given the
 * request's "env" when it has none of its own (the client sends an environment all of them
 * share once). NULL, or the error reply. */
static json_t *batch_arg(json_t *req, json_t **specs)
{
    json_t *b = json_object_get(req, "tasks"), *env = json_object_get(req, "env"), *v;
    *specs = NULL;
    if (!b)
        return NULL;
    if (json_object_get(req, "task") || json_object_get(req, "array"))
        return proto_error("'tasks' and 'task' or 'array': give one (a batch's tasks are in "
                           "'tasks')");
    if (!json_is_array(b) || json_array_size(b) < 1 || json_array_size(b) > PROTO_MAX_ARRAY)
        return proto_error("'tasks' must be a list of 1 to %d tasks", PROTO_MAX_ARRAY);
    size_t i;
    json_array_foreach(b, i, v) {
        if (!json_is_object(v))
            return proto_error("tasks[%zu]: expected a task object", i);
        if (env && !json_object_get(v, "env"))
            json_object_set(v, "env", env); /* checked with the task, as its own would be */
    }
    *specs = b;
    return NULL;
}

/* A batch (a "tasks" list): all its tasks or none; the reply, or NULL when the request has no
 * "tasks". A refusal says which task in "index" (null: the whole batch). */
static json_t *submit_batch(daemon_state *d, peer *p, json_t *req, bool key_ok,
                            const char *key, uint64_t *ids)
{
    json_t *specs, *r = batch_arg(req, &specs);
    carma_err err;
    long refused = -1;
    bool repeat;
    if (!r && !specs)
        return NULL;
    if (!r && !key_ok)
        r = proto_error("'key' must be a string of 16 to 64 hex digits");
    if (!r && d_submit_batch(d, p, specs, key, ids, &repeat, &refused, &err))
        r = proto_error("submission refused: %s", err.msg);
    if (r) {
        json_object_set_new(r, "index", refused < 0 ? json_null() : json_integer(refused));
        return r;
    }
    r = proto_ok();
    json_t *list = json_array();
    for (size_t i = 0; i < json_array_size(specs); i++)
        json_array_append_new(list, json_integer((json_int_t)ids[i]));
    json_object_set_new(r, "ids", list);
    if (repeat)
        json_object_set_new(r, "repeat", json_true());
    return r;
}

static json_t *do_submit(daemon_state *d, peer *p, json_t *req)
{
    submission sub;
    carma_err err;
    const char *key;
    static int array[PROTO_MAX_ARRAY]; /* static: large for a stack; one request at a time */
    static uint64_t ids[PROTO_MAX_ARRAY];
    size_t narray;
    bool key_ok = key_arg(req, &key);
    json_t *bad = submit_batch(d, p, req, key_ok, key, ids);
    if (bad) /* a batch's reply */
        return bad;
    if ((bad = array_arg(req, array, &narray)) != NULL)
        return bad;
    if (!key_ok)
        return proto_error("'key' must be a string of 16 to 64 hex digits");
    if (submission_from_json(json_object_get(req, "task"), &sub, &err))
        return proto_error("invalid submission: %s", err.msg);
    bool repeat;
    int rc = d_submit(d, p, &sub, key, array, narray, ids, &repeat, &err);
    submission_free(&sub); /* a repeat's, an array's (a stored task took its own) */
    if (rc)
        return proto_error("submission refused: %s", err.msg);
    json_t *r = proto_ok();
    if (narray) {
        json_t *list = json_array();
        for (size_t i = 0; i < narray; i++)
            json_array_append_new(list, json_integer((json_int_t)ids[i]));
        json_object_set_new(r, "ids", list);
    } else
        json_object_set_new(r, "id", json_integer((json_int_t)ids[0]));
    if (repeat)
        json_object_set_new(r, "repeat", json_true());
    return r;
}

/* The arguments a listing (queue, history) shares: all, state, user, limit, after. */
static json_t *listing_args(const json_t *req, queue_query *q)
{
    *q = (queue_query){.all = json_is_true(json_object_get(req, "all"))};
    json_t *state = json_object_get(req, "state"), *user = json_object_get(req, "user");
    json_t *limit = json_object_get(req, "limit"), *after = json_object_get(req, "after");
    dstate s;
    if (state && (!json_is_string(state) || dstate_from(json_string_value(state), &s)))
        return proto_error(
            "'state' must be one of queued, running, done, failed, cancelled, timeout");
    if (user && !json_is_string(user))
        return proto_error("'user' must be a user name");
    if (limit && (!json_is_integer(limit) || json_integer_value(limit) < 1 ||
                  json_integer_value(limit) > 1000000))
        return proto_error("'limit' must be an integer 1..1000000");
    if (after && (!json_is_integer(after) || json_integer_value(after) < 0))
        return proto_error("'after' must be a task id");
    q->state = json_string_value(state);
    q->user = json_string_value(user);
    q->limit = limit ? (int)json_integer_value(limit) : 0;
    q->after = after ? (uint64_t)json_integer_value(after) : 0;
    return NULL;
}

static json_t *do_queue(daemon_state *d, const json_t *req)
{
    queue_query q;
    json_t *error = listing_args(req, &q);
    if (error)
        return error;
    carma_err err;
    json_t *r = d_queue_json(d, &q, &err);
    return r ? r : proto_error("%s", err.msg);
}

static json_t *do_history(daemon_state *d, const json_t *req)
{
    queue_query q;
    json_t *error = listing_args(req, &q), *since = json_object_get(req, "since");
    if (error)
        return error;
    if (since && (!json_is_number(since) || json_number_value(since) < 0))
        return proto_error("'since' must be a Unix time");
    history_query h = {.all = q.all, .state = q.state, .user = q.user, .limit = q.limit,
                       .after = q.after, .since = since ? json_number_value(since) : 0};
    carma_err err;
    json_t *r = d_history_json(d, &h, &err);
    return r ? r : proto_error("%s", err.msg);
}

static json_t *do_show(daemon_state *d, const json_t *req)
{
    json_t *error = NULL;
    dtask *loaded, *t = task_arg(d, req, &loaded, &error);
    if (!t)
        return error;
    carma_err err;
    json_t *j = d_task_show_json(d, t, &err);
    d_free_task(loaded);
    if (!j)
        return proto_error("%s", err.msg);
    json_t *r = proto_ok();
    json_object_set_new(r, "task", j);
    return r;
}

static json_t *do_cancel(daemon_state *d, peer *p, const json_t *req)
{
    json_t *error = NULL;
    dtask *loaded, *t = managed_task_arg(d, p, req, &loaded, &error);
    if (!t)
        return error;
    carma_err err;
    if (loaded) { /* read from the store: it has ended */
        error = proto_error("task %llu is already %s", (unsigned long long)t->st.id,
                            dstate_name(t->state));
        d_free_task(loaded);
        return error;
    }
    if (d_cancel(d, t, &err))
        return proto_error("%s", err.msg);
    json_t *r = proto_ok();
    json_object_set_new(r, "id", json_integer((json_int_t)t->st.id));
    json_object_set_new(r, "state", json_string(t->state == DS_CANCELLED ? "cancelled"
                                                                         : "cancelling"));
    return r;
}

/* An attempt's directory, from the store (an earlier attempt than the current one). */
typedef struct found_dir {
    int n;
    char *dir;
} found_dir;

static int attempt_dir(void *ctx, const store_attempt_row *a, carma_err *err)
{
    found_dir *f = ctx;
    if (a->n == f->n && !(f->dir = strdup(a->dir)))
        return carma_err_set(err, "out of memory");
    return 0;
}

/* hold, release, priority: the queue controls of a queued task (control.c), owner or root;
 * a priority above 0 from root or the daemon's own user only (it passes other users'). */
static json_t *do_control(daemon_state *d, peer *p, const json_t *req, const char *verb)
{
    json_t *error = NULL, *prio = json_object_get(req, "priority");
    bool set_priority = !strcmp(verb, "priority");
    if (set_priority && (!json_is_integer(prio) || json_integer_value(prio) < -SUB_MAX_PRIORITY ||
                         json_integer_value(prio) > SUB_MAX_PRIORITY))
        return proto_error("'priority' must be an integer -%d..%d", SUB_MAX_PRIORITY,
                           SUB_MAX_PRIORITY);
    int priority = set_priority ? (int)json_integer_value(prio) : 0;
    if (priority > 0 && p->uid != 0 && p->uid != geteuid())
        return proto_error("priority %d: a priority above 0 is root's only (lower your other "
                           "tasks' instead)", priority);
    dtask *loaded, *t = managed_task_arg(d, p, req, &loaded, &error);
    if (!t)
        return error;
    carma_err err;
    bool hold = !strcmp(verb, "hold"), was_held = t->held;
    /* Each hold and priority is an event in the database, and a user may send them without
     * end (tens of thousands a second): short of space, refused as new tasks are. A release
     * or a cancel, which end a hold or a task, still go. */
    int rc = loaded ? carma_err_set(&err, "task %llu is already %s", (unsigned long long)t->st.id,
                                    dstate_name(t->state))
             : (set_priority || (hold && !was_held)) && d_state_space_refuses(d, &err) ? -1
             : set_priority ? d_set_priority(d, t, priority, &err)
             : hold         ? d_hold(d, t, &err)
                            : d_release(d, t, &err);
    d_free_task(loaded);
    if (rc)
        return proto_error("%s", err.msg);
    json_t *r = proto_ok();
    json_object_set_new(r, "task", d_task_json(d, t, false));
    if (!set_priority && was_held == hold) /* held already, or not held: nothing done */
        json_object_set_new(r, "unchanged", json_true());
    return r;
}

/* Up to LOG_CHUNK bytes of a stream of the task's attempt (the request's "attempt", else the
 * latest), from the request's offset. */
static json_t *logs_reply(daemon_state *d, const dtask *t, const json_t *req)
{
    const char *stream = json_string_value(json_object_get(req, "stream"));
    if (!stream)
        stream = "stdout";
    if (strcmp(stream, "stdout") && strcmp(stream, "stderr"))
        return proto_error("'stream' must be \"stdout\" or \"stderr\"");
    json_t *off = json_object_get(req, "offset"), *which = json_object_get(req, "attempt");
    if (off && (!json_is_integer(off) || json_integer_value(off) < 0))
        return proto_error("'offset' must be a non-negative integer");
    if (which && (!json_is_integer(which) || json_integer_value(which) < 1))
        return proto_error("'attempt' must be a positive integer");
    json_int_t offset = off ? json_integer_value(off) : 0;
    int n = t->att.n;
    /* an earlier attempt has ended; the latest one ends with its task's run */
    bool over = t->state != DS_RUNNING;
    found_dir f = {0, NULL};
    if (which && json_integer_value(which) != t->att.n) {
        carma_err err;
        f.n = (int)(json_integer_value(which) < INT32_MAX ? json_integer_value(which) : 0);
        if (store_attempts(d->db, t->st.id, attempt_dir, &f, &err))
            return proto_error("%s", err.msg);
        if (!f.dir)
            return proto_error("task %llu has no attempt %lld (it has made %d)",
                               (unsigned long long)t->st.id,
                               (long long)json_integer_value(which), t->att.n);
        n = f.n;
        over = true;
    }
    const char *dir = f.dir ? f.dir : t->att.dir;
    json_t *r = proto_ok();
    json_object_set_new(r, "attempt", json_integer(n));
    /* a follower reads on through a relaunch until the task has ended: it needs both */
    json_object_set_new(r, "attempts", json_integer(t->att.n));
    json_object_set_new(r, "state", json_string(dstate_name(t->state)));
    /* whose output it is: a reader who is not its owner (root) sees it with controls escaped */
    json_object_set_new(r, "uid", json_integer(t->uid));
    bool finished = t->state != DS_RUNNING && !(t->state == DS_QUEUED && t->att.n == 0);
    if (n == 0 || !dir) {
        json_object_set_new(r, "data", json_string(""));
        json_object_set_new(r, "offset", json_integer(0));
        json_object_set_new(r, "eof", json_boolean(finished));
        return r;
    }
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, stream);
    free(f.dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int open_errno = fd < 0 ? errno : 0;
    if (open_errno == ENOENT && over) {
        /* Purged (keep_attempt_logs_days): an error, not the empty output of a task that
         * printed nothing. */
        carma_err err;
        int purged = store_event_since(d->db, t->st.id, "logs-purged", 0, &err);
        if (purged > 0) {
            json_decref(r);
            return proto_error("task %llu's logs were removed: it ended longer ago than "
                               "keep_attempt_logs_days", (unsigned long long)t->st.id);
        }
    }
    if (open_errno && open_errno != ENOENT) {
        /* say so: an empty reply reads as a task that printed nothing */
        json_decref(r);
        return proto_error("cannot read task %llu's %s: %s", (unsigned long long)t->st.id,
                           stream, strerror(open_errno));
    }
    char *buf = malloc(LOG_CHUNK);
    ssize_t got = 0;
    if (buf && fd >= 0)
        got = pread(fd, buf, LOG_CHUNK, (off_t)offset);
    if (fd >= 0)
        close(fd);
    if (got < 0)
        got = 0;
    /* eof: this attempt is over and everything was read (a queued retry starts a new one) */
    bool eof = over && got < LOG_CHUNK;
    /* Short of that, the chunk ends on a character's boundary: a character cut in two would
     * read as '?' in both chunks; its bytes come whole in the next. */
    size_t len = eof ? (size_t)got : proto_utf8_whole(buf ? buf : "", (size_t)got);
    json_object_set_new(r, "data", proto_string_lossy(buf ? buf : "", len));
    json_object_set_new(r, "offset", json_integer(offset + (json_int_t)len));
    json_object_set_new(r, "eof", json_boolean(eof));
    free(buf);
    return r;
}

static json_t *do_logs(daemon_state *d, peer *p, const json_t *req)
{
    json_t *error = NULL;
    dtask *loaded, *t = managed_task_arg(d, p, req, &loaded, &error);
    if (!t)
        return error;
    json_t *r = logs_reply(d, t, req);
    d_free_task(loaded);
    return r;
}

static json_t *do_gpus(daemon_state *d)
{
    json_t *r = proto_ok();
    json_object_set_new(r, "backend", json_string(d->ops->name));
    json_object_set_new(r, "gpus", d_gpus_json(d));
    json_object_set_new(r, "left_out", d_left_out_json(d)); /* GPUs not used, and why */
    /* Where a job placed beside carma's tasks finds carma's MPS server (the Slurm plugin sets
     * the job's CUDA_MPS_PIPE_DIRECTORY from it); null when the daemon runs none. */
    json_object_set_new(r, "mps_pipe_dir", d->mps_on ? json_string(d->mps_pipe) : json_null());
    return r;
}

json_t *d_handle(daemon_state *d, peer *p, const char *line, size_t len)
{
    if (geteuid() != 0 && p->uid != geteuid())
        return proto_error("this daemon runs as uid %u and serves only that user",
                           (unsigned)geteuid());
    json_error_t jerr;
    json_t *req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!req)
        return proto_error("invalid JSON at column %d: %s", jerr.column, jerr.text);
    json_t *reply;
    const char *verb = json_string_value(json_object_get(req, "verb"));
    if (!json_is_object(req) || !verb)
        reply = proto_error("a request is a JSON object with a \"verb\"");
    else if (!strcmp(verb, "submit"))
        reply = do_submit(d, p, req);
    else if (!strcmp(verb, "queue"))
        reply = do_queue(d, req);
    else if (!strcmp(verb, "history"))
        reply = do_history(d, req);
    else if (!strcmp(verb, "show"))
        reply = do_show(d, req);
    else if (!strcmp(verb, "cancel"))
        reply = do_cancel(d, p, req);
    else if (!strcmp(verb, "logs"))
        reply = do_logs(d, p, req);
    else if (!strcmp(verb, "hold") || !strcmp(verb, "release") || !strcmp(verb, "priority"))
        reply = do_control(d, p, req, verb);
    else if (!strcmp(verb, "gpus"))
        reply = do_gpus(d);
    else if (!strcmp(verb, "ping")) {
        reply = proto_ok();
        json_object_set_new(reply, "version", json_integer(PROTO_VERSION));
        json_object_set_new(reply, "uid", json_integer(p->uid));
        /* live tasks only: a bound that tests and operators can watch */
        json_object_set_new(reply, "tasks_in_memory", json_integer((json_int_t)d->ntasks));
    } else
        reply = proto_error("unknown verb '%.64s' (submit, queue, history, show, cancel, hold, "
                            "release, priority, logs, gpus, ping)", verb);
    json_decref(req);
    return reply;
}
