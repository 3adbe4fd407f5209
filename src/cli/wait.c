/* wait.c — `carma wait ID...`: block until tasks have ended; the exit status says how. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "cli/request.h"
#include "cli/wait.h"
#include "util/clock.h"
#include "util/strutil.h"

#define MAX_IDS 1000

static const char usage[] =
    "usage: carma wait [--timeout SECONDS] [--socket PATH] [--json] ID...\n\n"
    "Waits until every task named has ended (looking every 0.5 s) and prints how each ended.\n"
    "Exit status: 0 when all ended done; else the worst of 3 (one was cancelled), 4 (one\n"
    "ran past its time limit: timeout), 5 (one failed); 124 when --timeout ran out first,\n"
    "waiting for a daemon that does not answer too (the tasks still live are named, those\n"
    "it never told of as unknown: null with --json); 1 when a task does not exist or the\n"
    "daemon cannot be reached (once it has answered, it is asked again for up to 30 s: a\n"
    "restart keeps the tasks); 2 on a usage error.\n\n"
    "  --timeout SECONDS  give up after this long\n"
    REQUEST_USAGE;

static const struct option longopts[] = {
    {"timeout", required_argument, NULL, 't'},
    {NULL, 0, NULL, 0},
};

int wait_state_status(const char *state)
{
    static const char *const bad[] = {"cancelled", "timeout", "failed"};
    if (!state) /* a reply without one: not known to be done */
        return 5;
    for (int i = 0; i < 3; i++)
        if (!strcmp(state, bad[i]))
            return 3 + i;
    return 0;
}

bool wait_state_live(const char *state)
{
    return state && (!strcmp(state, "queued") || !strcmp(state, "running"));
}

const char *wait_task_state(const json_t *t)
{
    return json_string_value(json_object_get(t, "state"));
}

int wait_refresh(const request_args *a, json_t *t, bool *ended)
{
    return wait_refresh_by(a, t, INFINITY, REQUEST_PATIENCE_S, ended);
}

int wait_refresh_by(const request_args *a, json_t *t, double deadline, double patience_s,
                    bool *ended)
{
    *ended = !wait_state_live(wait_task_state(t));
    if (*ended)
        return 0;
    carma_err err;
    json_t *reply = request_call_patient(
        a, json_pack("{sssI}", "verb", "show", "id", json_integer_value(json_object_get(t, "id"))),
        deadline, patience_s, &err);
    if (!reply) /* no answer in time, or the daemon's refusal (no such task) */
        return clock_mono_s() >= deadline ? EXIT_WAIT_TIMEOUT : cli_fail(a->cmd, &err);
    json_t *task = json_object_get(reply, "task");
    json_t *state = json_object_get(task, "state");
    if (!json_is_string(state)) { /* no telling whether it ended */
        json_decref(reply);
        carma_err_set(&err, "the daemon's reply on task %lld names no state",
                      (long long)json_integer_value(json_object_get(t, "id")));
        return cli_fail(a->cmd, &err);
    }
    json_object_set(t, "state", state);
    json_object_set(t, "attempts", json_object_get(task, "attempts"));
    *ended = !wait_state_live(json_string_value(state));
    json_decref(reply);
    return 0;
}

bool wait_nap(double deadline)
{
    double left = deadline - clock_mono_s();
    if (left <= 0)
        return false;
    struct timespec ts = clock_interval(fmin(WAIT_POLL_S, left));
    nanosleep(&ts, NULL); /* a signal ends it early: the caller looks at its flags */
    return true;
}

static int run(request_args *a)
{
    double timeout = INFINITY;
    int opt;
    while ((opt = request_next_option(a)) > 0)
        if (parse_double(a->arg, &timeout) || !(timeout >= 0))
            return cli_usage_error("wait", "--timeout: expected seconds, got '%s'", a->arg);
    if (opt < 0)
        return a->status;
    if (a->argc - a->operands > MAX_IDS)
        return cli_usage_error("wait", "expected 1 to %d task ids", MAX_IDS);
    long long *ids;
    int n, rc = request_task_ids(a, &ids, &n); /* `wait 5 5` waits for 5, shown once */
    if (rc)
        return rc;
    json_t *tasks = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(tasks, json_pack("{sIss}", "id", (json_int_t)ids[i], "state",
                                               "queued"));
    free(ids);
    /* which tasks the daemon has told of: until then "queued" stands for "live, ask it" */
    bool *told = calloc((size_t)n, sizeof *told), silent = false, answered = false;
    if (!told) {
        json_decref(tasks);
        carma_err err;
        carma_err_set(&err, "out of memory");
        return cli_fail("wait", &err);
    }
    double deadline = clock_mono_s() + timeout;
    int left = n, worst = 0;
    while (rc == 0 && left > 0) {
        for (int i = 0; i < n && rc == 0; i++) {
            json_t *t = json_array_get(tasks, (size_t)i);
            bool was_live = wait_state_live(wait_task_state(t)), ended;
            /* patient once the daemon has answered: a restart keeps the tasks */
            double patience = answered ? REQUEST_PATIENCE_S : 0;
            if (!was_live || (rc = wait_refresh_by(a, t, deadline, patience, &ended)) != 0)
                continue;
            told[i] = answered = true;
            if (!ended)
                continue;
            left--;
            int s = wait_state_status(wait_task_state(t));
            worst = s > worst ? s : worst;
        }
        silent = rc == EXIT_WAIT_TIMEOUT; /* the daemon did not answer in time */
        if (rc || left == 0)
            break;
        if (!wait_nap(deadline)) {
            rc = EXIT_WAIT_TIMEOUT;
            break;
        }
    }
    for (int i = 0; i < n; i++) /* never told: unknown, not queued */
        if (!told[i])
            json_object_set_new(json_array_get(tasks, (size_t)i), "state", json_null());
    free(told);
    if (rc == 0 || rc == EXIT_WAIT_TIMEOUT) {
        if (a->opts.json) {
            cli_print_json(tasks);
        } else {
            size_t i;
            json_t *t;
            json_array_foreach(tasks, i, t) {
                char *state = str_escape_controls(wait_task_state(t));
                printf("task %lld %s\n", (long long)json_integer_value(json_object_get(t, "id")),
                       state ? state : "unknown");
                free(state);
            }
        }
        if (silent)
            fprintf(stderr, "carma wait: --timeout %g s ran out waiting for the daemon's "
                    "answer; %d task(s) not seen to end\n", timeout, left);
        else if (rc == EXIT_WAIT_TIMEOUT)
            fprintf(stderr, "carma wait: --timeout %g s ran out; %d task(s) still live\n",
                    timeout, left);
    }
    json_decref(tasks);
    return rc ? rc : worst;
}

const request_cmd cmd_wait = {.usage = usage, .shortopts = "", .longopts = longopts, .run = run};
