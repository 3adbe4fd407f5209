/* priority.c — `carma priority ID N`: move a queued task ahead of or behind others. */
#include <stdio.h>

#include "cli/commands.h"
#include "cli/request.h"
#include "daemon/proto.h"
#include "util/strutil.h"

static const char usage[] =
    "usage: carma priority [--socket PATH] [--json] ID N   (options before ID)\n\n"
    "Sets a queued task's priority: the queue is ordered by priority (higher first; 0 is\n"
    "the default), then by submission. A priority above 0 passes other users' tasks and is\n"
    "root's only; a user lowers their other tasks' priority instead (Slurm's nice). Only the\n"
    "task's owner or root may change it. (The carma policy may still start a longer task\n"
    "from among the first backfill_depth queued ones first: docs/policy.md.)\n\n"
    REQUEST_USAGE;

static int run(request_args *a)
{
    if (request_next_option(a) != 0)
        return a->status;
    /* the options stop at ID (a negative N is no option): one typed after it is named */
    for (int i = a->operands + 1; i < a->argc; i++)
        if (a->argv[i][0] == '-' && a->argv[i][1] == '-' && a->argv[i][2])
            return cli_usage_error("priority", "'%s' after the task id: options go before it",
                                   a->argv[i]);
    if (a->operands + 2 != a->argc)
        return cli_usage_error("priority", "expected a task id and a priority");
    long long id;
    int64_t n;
    const char *ids = a->argv[a->operands], *ns = a->argv[a->operands + 1];
    int rc = request_task_id(a, ids, &id);
    if (rc)
        return rc;
    if (parse_i64(ns, &n) || n < -SUB_MAX_PRIORITY || n > SUB_MAX_PRIORITY)
        return cli_usage_error("priority", "expected a priority -%d..%d, got '%s'",
                               SUB_MAX_PRIORITY, SUB_MAX_PRIORITY, ns);
    json_t *reply;
    rc = request_send(a, json_pack("{sssIsI}", "verb", "priority", "id", (json_int_t)id,
                                       "priority", (json_int_t)n), &reply);
    if (rc)
        return rc;
    if (a->opts.json)
        cli_print_json(json_object_get(reply, "task"));
    else
        printf("task %lld priority %lld\n", id, (long long)n);
    json_decref(reply);
    return 0;
}

/* '+': the options stop at the task id, so that a negative priority is not taken for one. */
const request_cmd cmd_priority = {.usage = usage, .shortopts = "+", .run = run};
