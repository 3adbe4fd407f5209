/* show.c — `carma show ID...`: everything the daemon knows about a task, times as local times
 * and durations, and every attempt it made; several tasks in turn. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/fmt.h"
#include "cli/request.h"
#include "daemon/connect.h"
#include "util/strutil.h"

static const char usage[] =
    "usage: carma show [--socket PATH] [--json] ID...\n\n"
    "Prints a task: its state and, while it is queued, why it waits; its GPUs, memory\n"
    "figure and peak; when it was submitted, first started and ended (local time), how long\n"
    "it waited and ran, its GPU-hours; its command; and every attempt (GPUs, start, end,\n"
    "outcome, exit status, peak). Unknown values print as '-'; --json gives Unix times and\n"
    "seconds as numbers, null when unknown. Several IDs are shown in turn, a blank line\n"
    "between them, and with --json as an array (one ID: its object alone); one that does\n"
    "not exist is named on stderr, the others still shown, and the exit status is 1.\n\n"
    REQUEST_USAGE;

/* A string field, its control characters made visible (names and commands are other
 * users'); anything else as JSON, which escapes them itself. */
static void print_value(const char *key, const json_t *v, int indent)
{
    char *name = str_escape_controls(key); /* the reply's keys too: another process's text */
    key = name ? name : "?";
    if (json_is_object(v) && json_object_size(v) == 0) {
        printf("%*s%-13s %s\n", indent, "", key, TIME_UNKNOWN); /* none: not a bare "key:" */
    } else if (json_is_object(v)) {
        printf("%*s%s:\n", indent, "", key);
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) print_value(k, x, indent + 2);
    } else {
        char *text = json_is_string(v) ? str_escape_controls(json_string_value(v))
                     : json_is_null(v) ? str_dup(TIME_UNKNOWN)
                                       : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        printf("%*s%-13s %s\n", indent, "", key, text ? text : "?");
        free(text);
    }
    free(name);
}

/* One "key  value" line; the value escaped, as every reply string shown to a person is. */
static void line(const char *key, const char *text)
{
    char *safe = str_escape_controls(text);
    printf("%-13s %s\n", key, safe ? safe : "?");
    free(safe);
}

static void print_attempts(const json_t *list)
{
    printf("%-13s %zu\n", "attempts", json_array_size(list));
    if (!json_array_size(list))
        return;
    printf("  %-3s %-7s %-19s  %-19s  %-11s %-9s %-9s %s\n", "N", "GPUS", "STARTED", "ENDED",
           "ELAPSED", "OUTCOME", "EXIT", "PEAK");
    size_t i;
    json_t *a;
    json_array_foreach(list, i, a) {
        char g[64], s[32], e[32], el[32], x[32], pk[32];
        char *outcome = str_escape_controls(json_string_value(json_object_get(a, "outcome")));
        printf("  %-3lld %-7s %-19s  %-19s  %-11s %-9s %-9s %s\n",
               (long long)json_integer_value(json_object_get(a, "n")),
               fmt_ints(json_object_get(a, "gpus"), g, sizeof g),
               fmt_time(json_object_get(a, "started_at"), s, sizeof s),
               fmt_time(json_object_get(a, "ended_at"), e, sizeof e),
               fmt_duration(json_object_get(a, "elapsed_s"), el, sizeof el),
               outcome ? outcome : TIME_UNKNOWN,
               fmt_exit(json_object_get(a, "exit_code"), json_object_get(a, "signal"), x,
                        sizeof x),
               fmt_mib(json_object_get(a, "peak_mib"), pk, sizeof pk));
        free(outcome);
    }
}

/* The fields printed in their own words below; any other is printed as it comes. */
static const char *const shown[] = {
    "id", "name", "user", "uid", "state", "queue", "reason", "reason_code", "attempts",
    "ngpus", "gpus", "mem_mib", "mem_source", "peak_mib", "outcome", "submitted_at",
    "started_at", "ended_at", "wait_s", "elapsed_s", "gpu_hours", "command", "cwd",
    "max_retries", "mem", "last_attempt", "attempt_list", "runtime_est_s", "runtime_source",
    "solo_smact", "solo_drama", "solo_util", NULL,
};

static bool is_shown(const char *key)
{
    for (const char *const *k = shown; *k; k++)
        if (!strcmp(*k, key))
            return true;
    return false;
}

/* A string field the daemon wrote (state, reason, ...); NULL when it is not one. */
static const char *str_of(const json_t *t, const char *key)
{
    return json_string_value(json_object_get(t, key));
}

static void print_task(const json_t *t)
{
    char b[512], x[64], y[64];
    const json_t *v;
    print_value("id", json_object_get(t, "id"), 0);
    print_value("name", json_object_get(t, "name"), 0);
    char *user = str_escape_controls(str_of(t, "user"));
    snprintf(b, sizeof b, "%s (uid %lld)", user ? user : "?",
             (long long)json_integer_value(json_object_get(t, "uid")));
    free(user);
    line("user", b);
    snprintf(b, sizeof b, "%s%s%s%s", str_of(t, "state") ? str_of(t, "state") : "?",
             str_of(t, "queue") ? " (" : "", str_of(t, "queue") ? str_of(t, "queue") : "",
             str_of(t, "queue") ? " queue)" : "");
    line("state", b);
    if (str_of(t, "reason"))
        line("reason", str_of(t, "reason"));
    snprintf(b, sizeof b, "%s (%lld asked)", fmt_ints(json_object_get(t, "gpus"), x, sizeof x),
             (long long)json_integer_value(json_object_get(t, "ngpus")));
    line("gpus", b);
    fmt_mib(json_object_get(t, "mem_mib"), x, sizeof x);
    const char *src = fmt_mem_source(str_of(t, "mem_source"));
    snprintf(b, sizeof b, "%s%s%s%s, peak %s", x, src ? " (" : "", src ? src : "", src ? ")" : "",
             fmt_mib(json_object_get(t, "peak_mib"), y, sizeof y));
    line("memory", b);
    line("submitted", fmt_time(json_object_get(t, "submitted_at"), b, sizeof b));
    fmt_time(json_object_get(t, "started_at"), b, sizeof b);
    fmt_duration(json_object_get(t, "wait_s"), x, sizeof x);
    if (json_is_number(json_object_get(t, "started_at")))
        snprintf(b + strlen(b), sizeof b - strlen(b), " (waited %s)", x);
    else if (json_is_number(json_object_get(t, "wait_s")))
        snprintf(b, sizeof b, "%s (waiting %s)", TIME_UNKNOWN, x);
    line("started", b);
    line("ended", fmt_time(json_object_get(t, "ended_at"), b, sizeof b));
    line("elapsed", fmt_duration(json_object_get(t, "elapsed_s"), b, sizeof b));
    line("gpu_hours", fmt_hours(json_object_get(t, "gpu_hours"), b, sizeof b));
    line("outcome", str_of(t, "outcome") ? str_of(t, "outcome") : TIME_UNKNOWN);
    fmt_duration(json_object_get(t, "runtime_est_s"), b, sizeof b);
    if (str_of(t, "runtime_source"))
        snprintf(b + strlen(b), sizeof b - strlen(b), " (%s)", str_of(t, "runtime_source"));
    line("runtime_est", b);
    const json_t *sm = json_object_get(t, "solo_smact"), *dr = json_object_get(t, "solo_drama"),
                 *ut = json_object_get(t, "solo_util");
    b[0] = '\0';
    if (json_is_number(sm) && json_is_number(dr)) /* recorded together */
        snprintf(b, sizeof b, "SM activity %.2f, DRAM activity %.2f", json_number_value(sm),
                 json_number_value(dr));
    if (json_is_number(ut))
        snprintf(b + strlen(b), sizeof b - strlen(b), "%sutilization %.2f", b[0] ? ", " : "",
                 json_number_value(ut));
    snprintf(b + strlen(b), sizeof b - strlen(b), "%s", b[0] ? " (history)" : TIME_UNKNOWN);
    line("solo_profile", b);
    print_value("command", json_object_get(t, "command"), 0);
    print_value("cwd", json_object_get(t, "cwd"), 0);
    v = json_object_get(t, "max_retries");
    if (json_is_integer(v) && json_integer_value(v) < 0)
        line("max_retries", "the config's retry_cap");
    else
        print_value("max_retries", v, 0);
    print_value("mem", json_object_get(t, "mem"), 0);
    const char *k;
    json_t *other;
    json_object_foreach((json_t *)t, k, other) if (!is_shown(k)) print_value(k, other, 0);
    print_attempts(json_object_get(t, "attempt_list"));
}

/* One task's reply on *fd (connected again after a lost connection): the task, or NULL with
 * err, *lost when no reply came (the daemon cannot be reached: no use asking for others). */
static json_t *ask(const request_args *a, int *fd, long long id, bool *lost, carma_err *err)
{
    bool answered = false;
    json_t *reply = NULL;
    if (*fd < 0)
        *fd = request_connect(a, err);
    if (*fd >= 0)
        reply = daemon_call_answered(
            *fd, json_pack("{sssI}", "verb", "show", "id", (json_int_t)id), &answered, err);
    *lost = !answered;
    if (!answered && *fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    json_t *task = json_incref(json_object_get(reply, "task"));
    if (reply && !json_is_object(task))
        carma_err_set(err, "the daemon's reply on task %lld holds no task", id);
    json_decref(reply);
    return json_is_object(task) ? task : (json_decref(task), NULL);
}

static int run(request_args *a)
{
    long long *ids;
    int n, rc, fd = -1, failed = 0;
    if (request_next_option(a) != 0) /* none of its own: --help or a usage error */
        return a->status;
    if ((rc = request_task_ids(a, &ids, &n)) != 0) /* `show 5 5` shows it once */
        return rc;
    /* one ID: its object, as ever; several: an array of those found */
    json_t *found = a->opts.json && n > 1 ? json_array() : NULL;
    for (int i = 0, printed = 0; i < n; i++) {
        carma_err err;
        bool lost;
        json_t *task = ask(a, &fd, ids[i], &lost, &err);
        if (!task) {
            failed = cli_fail("show", &err);
            if (lost)
                break;
            continue;
        }
        if (found)
            json_array_append(found, task);
        else if (a->opts.json)
            cli_print_json(task);
        else {
            if (printed++)
                putchar('\n'); /* a blank line between tasks, as scontrol's */
            print_task(task);
        }
        json_decref(task);
    }
    if (fd >= 0)
        close(fd);
    free(ids);
    if (found && (!failed || json_array_size(found)))
        cli_print_json(found);
    json_decref(found);
    return failed;
}

const request_cmd cmd_show = {.usage = usage, .run = run};
