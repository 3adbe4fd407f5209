/* show.c — `carma show ID`: everything the daemon knows about one task, times as local times
 * and durations, and every attempt it made. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/fmt.h"
#include "cli/request.h"
#include "util/strutil.h"

static const char usage[] =
    "usage: carma show [--socket PATH] [--json] ID\n\n"
    "Prints one task: its state and, while it is queued, why it waits; its GPUs, memory\n"
    "figure and peak; when it was submitted, first started and ended (local time), how long\n"
    "it waited and ran, its GPU-hours; its command; and every attempt (GPUs, start, end,\n"
    "outcome, exit status, peak). Unknown values print as '-'; --json gives Unix times and\n"
    "seconds as numbers, null when unknown.\n\n" REQUEST_USAGE;

/* A string field, its control characters made visible (names and commands are other
 * users'); anything else as JSON, which escapes them itself. */
static void print_value(const char *key, const json_t *v, int indent)
{
    if (json_is_object(v) && json_object_size(v) == 0) {
        printf("%*s%-13s %s\n", indent, "", key, TIME_UNKNOWN); /* none: not a bare "key:" */
        return;
    }
    if (json_is_object(v)) {
        printf("%*s%s:\n", indent, "", key);
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) print_value(k, x, indent + 2);
        return;
    }
    char *text = json_is_string(v) ? str_escape_controls(json_string_value(v))
                 : json_is_null(v) ? str_dup(TIME_UNKNOWN)
                                   : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    printf("%*s%-13s %s\n", indent, "", key, text ? text : "?");
    free(text);
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
        json_t *outcome = json_object_get(a, "outcome");
        printf("  %-3lld %-7s %-19s  %-19s  %-11s %-9s %-9s %s\n",
               (long long)json_integer_value(json_object_get(a, "n")),
               fmt_ints(json_object_get(a, "gpus"), g, sizeof g),
               fmt_time(json_object_get(a, "started_at"), s, sizeof s),
               fmt_time(json_object_get(a, "ended_at"), e, sizeof e),
               fmt_duration(json_object_get(a, "elapsed_s"), el, sizeof el),
               json_is_string(outcome) ? json_string_value(outcome) : TIME_UNKNOWN,
               fmt_exit(json_object_get(a, "exit_code"), json_object_get(a, "signal"), x,
                        sizeof x),
               fmt_mib(json_object_get(a, "peak_mib"), pk, sizeof pk));
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
    v = json_object_get(t, "gpu_hours");
    snprintf(b, sizeof b, "%.3f", json_is_number(v) ? json_number_value(v) : 0.0);
    line("gpu_hours", b);
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

static int run(request_args *a)
{
    long long id;
    json_t *reply;
    int rc = request_task_verb(a, "show", &id, &reply);
    if (!reply)
        return rc;
    json_t *task = json_object_get(reply, "task");
    if (a->opts.json)
        cli_print_json(task);
    else
        print_task(task);
    json_decref(reply);
    return 0;
}

const request_cmd cmd_show = {.usage = usage, .run = run};
