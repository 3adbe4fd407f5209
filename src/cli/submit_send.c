/* submit_send.c — `carma submit`'s (and `carma run`'s) way of sending a submission to the
 * daemon: each with a random idempotency key, sent again when the reply is lost; an --array's
 * tasks one by one, their ids printed on one line. */
#include <signal.h>
#include <stdio.h>
#include <sys/random.h>

#include "cli/submit.h"
#include "util/strutil.h"

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

int submit_send(const request_args *a, json_t *task, json_int_t *id)
{
    json_t *req = json_object(), *reply;
    json_object_set_new(req, "verb", json_string("submit"));
    json_object_set(req, "task", task);
    /* A key of its own makes the submission safe to send again when the reply is lost: the
     * daemon answers a repeat with the first task's id. */
    char key[33];
    bool keyed = submission_key(key);
    if (keyed)
        json_object_set_new(req, "key", json_string(key));
    int rc = request_send_retrying(a, req, keyed ? 4 : 1, &reply);
    if (rc)
        return rc;
    *id = json_integer_value(json_object_get(reply, "id"));
    json_decref(reply);
    return 0;
}

/* Cancels the array's tasks taken before one was refused (they were held): all or none. */
static void cancel_taken(const request_args *a, json_t *ids)
{
    size_t i;
    json_t *id, *reply;
    int left = 0;
    json_array_foreach(ids, i, id) {
        if (request_send(a, json_pack("{sssO}", "verb", "cancel", "id", id), &reply) == 0)
            json_decref(reply);
        else
            left++;
    }
    if (left)
        fprintf(stderr, "carma submit: %d task(s) of the array could not be cancelled\n", left);
    else if (json_array_size(ids))
        fprintf(stderr, "carma submit: the array's %zu task(s) already queued were cancelled\n",
                json_array_size(ids));
}

/* A signal that came while an array was being queued (0: none) */
static volatile sig_atomic_t array_signal;

static void on_array_signal(int sig)
{
    array_signal = sig;
}

static const int array_signals[] = {SIGINT, SIGTERM, SIGHUP};

/* While an array is queued, Ctrl-C (or SIGTERM, SIGHUP) is noted rather than obeyed at once:
 * obeyed, it would leave the tasks taken so far held for good. SA_RESTART lets the request in
 * flight finish, so that a task the daemon took is known, and cancelled. A signal ignored
 * (nohup) stays ignored. */
static void catch_array_signals(struct sigaction *old)
{
    struct sigaction sa = {.sa_handler = on_array_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    array_signal = 0;
    for (size_t k = 0; k < sizeof array_signals / sizeof *array_signals; k++) {
        sigaction(array_signals[k], NULL, &old[k]);
        if (old[k].sa_handler != SIG_IGN)
            sigaction(array_signals[k], &sa, NULL);
    }
}

/* Puts the handlers back and, when a signal came, ends as that signal would have. */
static void restore_array_signals(const struct sigaction *old)
{
    for (size_t k = 0; k < sizeof array_signals / sizeof *array_signals; k++)
        sigaction(array_signals[k], &old[k], NULL);
    if (array_signal)
        raise(array_signal);
}

static int send_array(const request_args *a, json_t *task, const int *array, size_t narray);

int submit_send_all(const request_args *a, json_t *task, const int *array, size_t narray)
{
    if (narray <= 1)
        return send_array(a, task, array, narray);
    struct sigaction old[sizeof array_signals / sizeof *array_signals];
    catch_array_signals(old);
    int rc = send_array(a, task, array, narray);
    restore_array_signals(old);
    return rc;
}

/* The tasks taken so far are cancelled (ids freed): the exit status rc, or after a signal
 * 128 + its number. */
static int give_up(const request_args *a, json_t *ids, int rc)
{
    if (array_signal)
        fprintf(stderr, "carma submit: signal %d\n", (int)array_signal);
    cancel_taken(a, ids);
    json_decref(ids);
    return rc ? rc : 128 + array_signal;
}

/* submit_send_all's work, with a signal (array_signal) noted rather than obeyed */
static int send_array(const request_args *a, json_t *task, const int *array, size_t narray)
{
    size_t n = narray ? narray : 1;
    json_t *ids = json_array();
    int rc = 0;
    /* An array is queued as Slurm's is, all or none: its tasks go held, and are released once
     * the daemon has taken every one (a refusal, say max_tasks_per_user, or a signal cancels
     * the others before any started). */
    bool held = json_is_true(json_object_get(task, "hold"));
    for (size_t i = 0; i < n && rc == 0 && !array_signal; i++) {
        json_t *t = json_deep_copy(task);
        if (narray) {
            json_object_set_new(t, "array_index", json_integer(array[i]));
            char name[160];
            const char *base = json_string_value(json_object_get(t, "name"));
            /* whole characters only: a cut UTF-8 sequence would make the name no JSON text */
            snprintf(name, sizeof name, "%.*s[%d]", (int)str_utf8_fit(base, 140), base,
                     array[i]);
            json_object_set_new(t, "name", json_string(name));
            if (n > 1)
                json_object_set_new(t, "hold", json_true());
        }
        json_int_t id;
        rc = submit_send(a, t, &id);
        json_decref(t);
        if (rc == 0)
            json_array_append_new(ids, json_integer(id));
    }
    size_t i;
    json_t *id, *reply;
    if (rc || array_signal)
        return give_up(a, ids, rc);
    if (n > 1 && !held) {
        json_array_foreach(ids, i, id) {
            if (array_signal)
                return give_up(a, ids, 0);
            if ((rc = request_send(a, json_pack("{sssO}", "verb", "release", "id", id),
                                   &reply)) != 0)
                return give_up(a, ids, rc);
            json_decref(reply);
        }
    }
    if (a->opts.json) {
        json_t *out = narray ? json_pack("{sO}", "ids", ids)
                             : json_pack("{sO}", "id", json_array_get(ids, 0));
        cli_print_json(out);
        json_decref(out);
    } else {
        json_array_foreach(ids, i, id)
            printf("%s%lld", i ? " " : "", (long long)json_integer_value(id));
        printf("\n");
    }
    json_decref(ids);
    return 0;
}
