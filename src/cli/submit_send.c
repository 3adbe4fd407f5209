/* submit_send.c — `carma submit`'s (and `carma run`'s) way of sending a submission to the
 * daemon: each with a random idempotency key, sent again when the reply is lost; an --array
 * in one request (the daemon makes all its tasks or none), its ids printed on one line. */
#include <stdio.h>
#include <sys/random.h>

#include "cli/submit.h"

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
    /* A key of its own makes the submission safe to send again when the reply is lost: the
     * daemon answers a repeat with the first task's id. */
    char key[33];
    bool keyed = submission_key(key);
    if (keyed)
        json_object_set_new(req, "key", json_string(key));
    return request_send_retrying(a, req, keyed ? 4 : 1, reply);
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

/* An older daemon that does not know arrays made one task of it: that one is cancelled. */
static int array_unknown(const request_args *a, json_t *reply)
{
    json_t *id = json_object_get(reply, "id"), *r;
    fprintf(stderr, "carma submit: the daemon does not take arrays (an older carma?): "
                    "restart it with this version\n");
    if (json_is_integer(id) &&
        request_send(a, json_pack("{sssO}", "verb", "cancel", "id", id), &r) == 0) {
        json_decref(r);
        fprintf(stderr, "carma submit: task %lld it made of the array was cancelled\n",
                (long long)json_integer_value(id));
    }
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

