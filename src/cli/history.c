/* history.c — `carma history`: ended tasks as sacct shows them (wait, elapsed, GPU-hours over
 * every attempt, peak memory, exit), read by the daemon from its database a page at a time. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/commands.h"
#include "cli/fmt.h"
#include "cli/pages.h"
#include "cli/queue_args.h"
#include "cli/request.h"
#include "util/strutil.h"

static const char usage[] =
    "usage: carma history [--all] [--since TIME] [--user NAME] [--state STATE] [--limit N]\n"
    "                     [--after ID] [--socket PATH] [--json]\n\n"
    "Lists ended tasks (done, failed, cancelled, timeout) by id, from the daemon's database:\n"
    "user, name, state, attempts, wait (submission to first start), elapsed (run time over\n"
    "every attempt), GPU-hours (run time x GPUs over every attempt), peak memory per GPU,\n"
    "the last attempt's exit status and the end (local time).\n\n"
    "  --all, -a       every task, queued and running ones too\n"
    "  --since TIME    only tasks submitted or ended since TIME: an age (30m, 12h, 2d, 1w)\n"
    "                  or a local date or time (2026-11-20, '2026-11-20 14:00')\n"
    "  --user NAME, -u NAME   only this user's tasks (NAME: a user name or a numeric uid)\n"
    "  --state STATE, -s STATE   only tasks in this state (sacct's -s): done, failed,\n"
    "                  cancelled, timeout (queued, running: those live tasks, --all or not)\n"
    "  --limit N       at most N tasks; when there are more, stderr says how to go on\n"
    "  --after ID      only tasks with ids above ID\n" REQUEST_USAGE;

static void print_header(void)
{
    printf("%-6s %-20s %-10s %-9s %-4s %-11s %-11s %9s %-8s %-9s %s\n", "ID", "NAME", "USER",
           "STATE", "ATT", "WAIT", "ELAPSED", "GPU_HOURS", "PEAK_MIB", "EXIT", "ENDED");
}

static void print_row(const json_t *t)
{
    char wait[32], el[32], ex[32], pk[32], end[32], gh[32];
    const json_t *peak = json_object_get(t, "peak_mib");
    /* other users chose these names, and a reply is another process's text: no escape
     * sequence reaches the terminal */
    char *name = column_text(json_string_value(json_object_get(t, "name")), 20);
    char *user = column_text(json_string_value(json_object_get(t, "user")), 10);
    char *state = str_escape_controls(json_string_value(json_object_get(t, "state")));
    if (json_is_integer(peak))
        snprintf(pk, sizeof pk, "%lld", (long long)json_integer_value(peak));
    else
        snprintf(pk, sizeof pk, "%s", TIME_UNKNOWN);
    printf("%-6lld %-20s %-10s %-9s %-4lld %-11s %-11s %9s %-8s %-9s %s\n",
           (long long)json_integer_value(json_object_get(t, "id")), name ? name : "?",
           user ? user : "?", state ? state : "?",
           (long long)json_integer_value(json_object_get(t, "attempts")),
           fmt_duration(json_object_get(t, "wait_s"), wait, sizeof wait),
           fmt_duration(json_object_get(t, "elapsed_s"), el, sizeof el),
           fmt_hours(json_object_get(t, "gpu_hours"), gh, sizeof gh), pk,
           fmt_exit(json_object_get(t, "exit_code"), json_object_get(t, "signal"), ex,
                    sizeof ex),
           fmt_time(json_object_get(t, "ended_at"), end, sizeof end));
    free(name);
    free(user);
    free(state);
}

static const struct option longopts[] = {
    {"all", no_argument, NULL, 'a'},         {"since", required_argument, NULL, 'S'},
    {"user", required_argument, NULL, 'u'},  {"state", required_argument, NULL, 's'},
    {"limit", required_argument, NULL, 'l'}, {"after", required_argument, NULL, 'A'},
    {NULL, 0, NULL, 0},
};

static int run(request_args *a)
{
    bool all = false;
    const char *state = NULL;
    char user[REQUEST_USER_MAX] = "";
    double since = 0;
    int64_t limit = 0, after = 0;
    carma_err err;
    int opt, rc;
    while ((opt = request_next_option(a)) > 0) {
        if (opt == 'a')
            all = true;
        else if (opt == 'S' && time_parse_since(a->arg, (double)time(NULL), &since))
            return cli_usage_error("history", "--since: expected an age (12h, 2d) or a date "
                                              "(2026-11-20, '2026-11-20 14:00'), got '%s'",
                                   a->arg);
        else if (opt == 'u' && (rc = request_user_option(a, a->arg, user, sizeof user)) != 0)
            return rc;
        else if (opt == 's' && (rc = request_state_option(a, a->arg)) != 0)
            return rc;
        else if (opt == 's')
            state = a->arg;
        else if (opt == 'l' && (parse_i64(a->arg, &limit) || limit < 1 || limit > 1000000))
            return cli_usage_error("history", "--limit: expected 1..1000000, got '%s'", a->arg);
        else if (opt == 'A' && parse_task_id(a->arg, 0, &after, &err))
            return cli_usage_error("history", "--after: %s", err.msg);
    }
    if (opt < 0)
        return a->status;
    if ((rc = request_no_operands(a)) != 0)
        return rc;
    json_t *req = json_pack("{sssb}", "verb", "history", "all", all);
    if (since > 0)
        json_object_set_new(req, "since", json_real(since));
    if (state)
        json_object_set_new(req, "state", json_string(state));
    if (user[0])
        json_object_set_new(req, "user", json_string(user));
    rc = request_pages(a, "history", req, limit, after, print_header, print_row);
    json_decref(req);
    return rc;
}

const request_cmd cmd_history = {.usage = usage, .shortopts = "as:u:", .longopts = longopts,
                                 .run = run};
