/* release.c — `carma release ID`: let a held task start again (its owner or root). */
#include <stdio.h>

#include "cli/commands.h"
#include "cli/request.h"

static const char usage[] =
    "usage: carma release [--socket PATH] [--json] ID\n\n"
    "Releases a held task: it may start again, once its dependencies allow. Only the\n"
    "task's owner or root may release it.\n\n"
    REQUEST_USAGE;

static int run(request_args *a)
{
    long long id;
    json_t *reply;
    int rc = request_task_verb(a, "release", &id, &reply);
    if (!reply)
        return rc;
    if (a->opts.json)
        cli_print_json(json_object_get(reply, "task"));
    else
        printf("task %lld released\n", id);
    json_decref(reply);
    return 0;
}

const request_cmd cmd_release = {.usage = usage, .run = run};
