/* cancel.c — `carma cancel ID`: cancel a queued or running task (its owner or root). */
#include <stdio.h>

#include "cli/commands.h"
#include "cli/request.h"

static const char usage[] =
    "usage: carma cancel [--socket PATH] [--json] ID\n\n"
    "Cancels a task: a queued task leaves the queue; a running task gets SIGTERM, then\n"
    "SIGKILL after the daemon's kill_grace_s. Only the task's owner or root may cancel it.\n\n"
    REQUEST_USAGE;

static int run(request_args *a)
{
    long long id;
    json_t *reply;
    int rc = request_task_verb(a, "cancel", &id, &reply);
    if (!reply)
        return rc;
    json_object_del(reply, "ok");
    if (a->opts.json)
        cli_print_json(reply);
    else
        printf("task %lld %s\n", id, json_string_value(json_object_get(reply, "state")));
    json_decref(reply);
    return 0;
}

const request_cmd cmd_cancel = {.usage = usage, .run = run};
