/* hold.c — `carma hold ID`: keep a queued task from starting (its owner or root). */
#include <stdio.h>

#include "cli/commands.h"
#include "cli/request.h"

static const char usage[] =
    "usage: carma hold [--socket PATH] [--json] ID\n\n"
    "Holds a queued task: it stays queued but does not start until `carma release ID`\n"
    "(a running task cannot be held). Only the task's owner or root may hold it.\n\n"
    REQUEST_USAGE;

static int run(request_args *a)
{
    long long id;
    json_t *reply;
    int rc = request_task_verb(a, "hold", &id, &reply);
    if (!reply)
        return rc;
    if (a->opts.json)
        cli_print_json(json_object_get(reply, "task"));
    else
        printf("task %lld held\n", id);
    json_decref(reply);
    return 0;
}

const request_cmd cmd_hold = {.usage = usage, .run = run};
