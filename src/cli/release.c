/* release.c — `carma release ID`: let a held task start again (its owner or root). */
#include "cli/commands.h"
#include "cli/request.h"

static const char usage[] =
    "usage: carma release [--socket PATH] [--json] ID\n\n"
    "Releases a held task: it may start again, once its dependencies allow. A queued task\n"
    "that is not held is left as it is, with a note (as scontrol does); a running or ended\n"
    "task is an error, as for hold. Only the task's owner or root may release it.\n\n"
    REQUEST_USAGE;

static int run(request_args *a)
{
    return request_hold_release(a, "release", "released", "is not held: nothing to release");
}

const request_cmd cmd_release = {.usage = usage, .run = run};
