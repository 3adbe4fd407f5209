/* submit_send.c — `carma submit`'s (and `carma run`'s) way of sending a submission to the
 * daemon: each with a random idempotency key, sent again when the reply is lost; an --array
 * in one request (the daemon makes all its tasks or none), its ids printed on one line; and
 * `carma run`'s task files as one batch, all or none, where the daemon takes one. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>

#include "cli/submit.h"
#include "daemon/proto.h"

#define BATCH_VERSION 2 /* the daemon's protocol version from which submit takes "tasks" */

/* A random 128-bit idempotency key as 32 hex digits; false when the kernel gives no
 * randomness (the submission then goes without one, and is not retried). */
static bool submission_key(char key[33])
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
        return false;
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(key + 2 * i, 3, "%02x", b[i]);
    return true;
}

/* Sends the submit request (which it takes) with a key of its own: 0 with *reply, or the exit
 * status. The key makes it safe to send again when the reply is lost: the daemon answers a
 * repeat with the first sending's ids. */
static int send_with_key(const request_args *a, json_t *req, json_t **reply)
{
    char key[33];
    bool keyed = submission_key(key);
    if (keyed)
        json_object_set_new(req, "key", json_string(key));
    return request_send_retrying(a, req, keyed ? 4 : 1, reply);
}

/* Sends the submission (an array's with its indices): 0 with *reply, or the exit status. */
static int send_keyed(const request_args *a, json_t *task, const int *array, size_t narray,
                      json_t **reply)
{
    json_t *req = json_object();
    json_object_set_new(req, "verb", json_string("submit"));
    json_object_set(req, "task", task);
    if (narray) {
        json_t *list = json_array();
        for (size_t i = 0; i < narray; i++)
            json_array_append_new(list, json_integer(array[i]));
        json_object_set_new(req, "array", list);
    }
    return send_with_key(a, req, reply);
}

int submit_send(const request_args *a, json_t *task, json_int_t *id)
{
    json_t *reply;
    int rc = send_keyed(a, task, NULL, 0, &reply);
    if (rc)
        return rc;
    *id = json_integer_value(json_object_get(reply, "id"));
    json_decref(reply);
    return 0;
}

/* A daemon that does not know arrays (batches) and made one task of the request, named by
 * the reply: that one is cancelled. */
static void cancel_made(const request_args *a, json_t *reply, const char *what)
{
    json_t *id = json_object_get(reply, "id"), *r;
    if (json_is_integer(id) &&
        request_send(a, json_pack("{sssO}", "verb", "cancel", "id", id), &r) == 0) {
        json_decref(r);
        fprintf(stderr, "carma %s: task %lld it made of the %s was cancelled\n", a->cmd,
                (long long)json_integer_value(id), what);
    }
}

/* An older daemon that does not know arrays made one task of it: that one is cancelled. */
static int array_unknown(const request_args *a, json_t *reply)
{
    fprintf(stderr, "carma submit: the daemon does not take arrays (an older carma?): "
                    "restart it with this version\n");
    cancel_made(a, reply, "array");
    return 1;
}

int submit_send_all(const request_args *a, json_t *task, const int *array, size_t narray)
{
    json_t *reply;
    int rc = send_keyed(a, task, array, narray, &reply);
    if (rc)
        return rc;
    json_t *ids = json_object_get(reply, "ids"), *id;
    if (narray && !json_is_array(ids)) {
        rc = array_unknown(a, reply);
        json_decref(reply);
        return rc;
    }
    if (a->opts.json) { /* {"id": N}, or {"ids": [...]} for an array */
        json_t *out = json_pack("{sO}", narray ? "ids" : "id",
                                narray ? ids : json_object_get(reply, "id"));
        cli_print_json(out);
        json_decref(out);
    } else if (narray) {
        size_t i;
        json_array_foreach(ids, i, id)
            printf("%s%lld", i ? " " : "", (long long)json_integer_value(id));
        printf("\n");
    } else
        printf("%lld\n", (long long)json_integer_value(json_object_get(reply, "id")));
    json_decref(reply);
    return 0;
}

/* The batch request: the tasks' (not taken) under "tasks", the first one's environment sent
 * once beside them for every task that has the same (a task file's is the caller's whole
 * environment: sent with each, a few files would fill the daemon's longest line). */
static json_t *batch_request(json_t *tasks)
{
    json_t *req = json_pack("{ss}", "verb", "submit"), *list = json_array(), *t;
    json_t *env = json_object_get(json_array_get(tasks, 0), "env");
    size_t i;
    json_array_foreach(tasks, i, t) {
        json_t *copy = json_copy(t); /* shallow: its values are shared, not copied */
        if (env && json_equal(json_object_get(t, "env"), env))
            json_object_del(copy, "env");
        json_array_append_new(list, copy);
    }
    json_object_set_new(req, "tasks", list);
    if (env)
        json_object_set(req, "env", env);
    return req;
}

/* Whether the daemon takes batches (*taken; said when not): its protocol version, from a
 * ping. 0, or the exit status. An older daemon is not sent one: it would refuse it for its
 * missing "task", which a client cannot tell from a refusal of one of the tasks. */
static int batch_taken(const request_args *a, bool *taken)
{
    json_t *reply;
    int rc = request_send(a, json_pack("{ss}", "verb", "ping"), &reply);
    if (rc)
        return rc;
    json_int_t v = json_integer_value(json_object_get(reply, "version"));
    json_decref(reply);
    if ((*taken = v >= BATCH_VERSION))
        return 0;
    fprintf(stderr, "carma %s: the daemon does not take several tasks in one request (an older "
                    "carma?): they are queued held one at a time, then released\n", a->cmd);
    return 0;
}

int submit_send_batch(const request_args *a, json_t *tasks, json_int_t *ids)
{
    bool taken;
    int rc = batch_taken(a, &taken);
    if (rc || !taken)
        return rc ? rc : SUBMIT_UNTAKEN;
    size_t len = 0, n = json_array_size(tasks);
    if (n > PROTO_MAX_ARRAY) {
        fprintf(stderr, "carma %s: %zu task files are more than the daemon takes in one "
                        "request (%d): they are queued held one at a time, then released\n",
                a->cmd, n, PROTO_MAX_ARRAY);
        return SUBMIT_UNTAKEN;
    }
    json_t *req = batch_request(tasks), *reply;
    char *line = proto_encode_line(req, &len);
    bool encoded = line != NULL;
    free(line);
    if (!encoded) {
        fprintf(stderr, "carma %s: out of memory\n", a->cmd);
        json_decref(req);
        return 1;
    }
    if (len > PROTO_MAX_LINE) { /* a line longer than the daemon reads */
        fprintf(stderr, "carma %s: the task files make a request longer than the daemon reads "
                        "(%zu of at most %d bytes): they are queued held one at a time, then "
                        "released\n", a->cmd, len, PROTO_MAX_LINE);
        json_decref(req);
        return SUBMIT_UNTAKEN;
    }
    if ((rc = send_with_key(a, req, &reply)) != 0)
        return rc;
    json_t *list = json_object_get(reply, "ids");
    if (!json_is_array(list) || json_array_size(list) != n) {
        /* a daemon that said it takes batches and did not: what it made goes */
        fprintf(stderr, "carma %s: the daemon did not take the tasks in one request: they are "
                        "queued held one at a time, then released\n", a->cmd);
        cancel_made(a, reply, "batch");
        json_decref(reply);
        return SUBMIT_UNTAKEN;
    }
    for (size_t i = 0; i < n; i++)
        ids[i] = json_integer_value(json_array_get(list, i));
    json_decref(reply);
    return 0;
}
