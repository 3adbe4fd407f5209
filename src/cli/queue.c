/* queue.c — `carma queue`: the tasks waiting and running; with --all (or an ended --state)
 * every task, fetched from the daemon a page at a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/fmt.h"
#include "cli/pages.h"
#include "cli/queue_args.h"
#include "cli/request.h"
#include "cli/views.h"
#include "util/strutil.h"

static const char usage[] =
    "usage: carma queue [--all] [--state STATE] [--user NAME] [--limit N] [--after ID]\n"
    "                   [--socket PATH] [--json]\n\n"
    "Lists the queued tasks in the order they will be considered (recovery queue first),\n"
    "then the running ones; --all lists every task, ended ones too, by id. REASON says\n"
    "why a queued task waits, as the scheduling policy judges it now (waiting for idle\n"
    "GPUs, no GPU has the memory for its figure, the utilization gate or the grace period\n"
    "on a GPU, behind the head, reserved for the head by backfill, ...).\n\n"
    "  --all, -a       also ended tasks: done, failed, cancelled, timeout (read from the\n"
    "                  daemon's database a page at a time)\n"
    "  --state STATE, -t STATE   only tasks in this state (squeue's -t): queued, running,\n"
    "                  done, failed, cancelled, timeout\n"
    "  --user NAME, -u NAME   only this user's tasks (NAME: a user name or a numeric uid)\n"
    "  --limit N       at most N tasks; when an --all listing has more, stderr says how\n"
    "                  to go on\n"
    "  --after ID      with --all or an ended --state: only tasks with ids above ID\n"
    REQUEST_USAGE;

static void print_gpus(const json_t *gpus, char *buf, size_t cap)
{
    size_t i, o = 0;
    json_t *g;
    buf[0] = '\0';
    json_array_foreach(gpus, i, g) o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "%s%lld",
                                                         i ? "," : "",
                                                         (long long)json_integer_value(g));
    if (!buf[0])
        snprintf(buf, cap, "-");
}

void queue_print_header(void)
{
    printf("%-6s %-20s %-10s %-10s %-8s %-8s %-9s %-8s %s\n", "ID", "NAME", "USER", "STATE",
           "QUEUE", "ATTEMPTS", "GPUS", "MEM_MIB", "REASON");
}

void queue_print_task(const json_t *t)
{
    char gpus[64];
    print_gpus(json_object_get(t, "gpus"), gpus, sizeof gpus);
    json_t *mem = json_object_get(t, "mem_mib"), *q = json_object_get(t, "queue");
    char memtext[32];
    if (json_is_integer(mem))
        snprintf(memtext, sizeof memtext, "%lld", (long long)json_integer_value(mem));
    else
        snprintf(memtext, sizeof memtext, "-");
    /* other users chose the names, and a reply is another process's text: no escape sequence
     * reaches the terminal */
    char *name = column_text(json_string_value(json_object_get(t, "name")), 20);
    char *user = column_text(json_string_value(json_object_get(t, "user")), 10);
    char *state = str_escape_controls(json_string_value(json_object_get(t, "state")));
    char *queue = str_escape_controls(json_string_value(q));
    char *reason = str_escape_controls(json_string_value(json_object_get(t, "reason")));
    printf("%-6lld %-20s %-10s %-10s %-8s %-8lld %-9s %-8s %s\n",
           (long long)json_integer_value(json_object_get(t, "id")), name ? name : "?",
           user ? user : "?", state ? state : "?", queue ? queue : "-",
           (long long)json_integer_value(json_object_get(t, "attempts")), gpus, memtext,
           reason ? reason : "-");
    free(name);
    free(user);
    free(state);
    free(queue);
    free(reason);
}

static const struct option longopts[] = {
    {"all", no_argument, NULL, 'a'},         {"state", required_argument, NULL, 't'},
    {"user", required_argument, NULL, 'u'},  {"limit", required_argument, NULL, 'l'},
    {"after", required_argument, NULL, 'A'}, {NULL, 0, NULL, 0},
};

static int run(request_args *a)
{
    bool all = false;
    const char *state = NULL;
    char user[REQUEST_USER_MAX] = "";
    int64_t limit = 0, after = 0;
    carma_err err;
    int opt, rc;
    while ((opt = request_next_option(a)) > 0) {
        if (opt == 'a')
            all = true;
        else if (opt == 't' && (rc = request_state_option(a, a->arg)) != 0)
            return rc;
        else if (opt == 't')
            state = a->arg;
        else if (opt == 'u' && (rc = request_user_option(a, a->arg, user, sizeof user)) != 0)
            return rc;
        else if (opt == 'l' && (parse_i64(a->arg, &limit) || limit < 1 || limit > 1000000))
            return cli_usage_error("queue", "--limit: expected 1..1000000, got '%s'", a->arg);
        else if (opt == 'A' && parse_task_id(a->arg, 0, &after, &err))
            return cli_usage_error("queue", "--after: %s", err.msg);
    }
    if (opt < 0)
        return a->status;
    if ((rc = request_no_operands(a)) != 0)
        return rc;
    bool live = !state || !strcmp(state, "queued") || !strcmp(state, "running");
    if (after > 0 && !all && live) /* the live listing is one page: nothing to go on from */
        return cli_usage_error("queue", "--after goes with --all or an ended --state (done, "
                               "failed, cancelled, timeout)");
    /* A listing in id order comes a page at a time, so that no one request keeps the daemon
     * from its other clients for long. */
    json_t *req = json_pack("{sssb}", "verb", "queue", "all", all);
    if (state)
        json_object_set_new(req, "state", json_string(state));
    if (user[0])
        json_object_set_new(req, "user", json_string(user));
    rc = request_pages(a, "queue", req, limit, after, queue_print_header, queue_print_task);
    json_decref(req);
    return rc;
}

const request_cmd cmd_queue = {.usage = usage, .shortopts = "at:u:", .longopts = longopts,
                               .run = run};
