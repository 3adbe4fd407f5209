/* hold.c — `carma hold ID`: keep a queued task from starting (its owner or root). */
#include "cli/commands.h"
#include "cli/request.h"

static const char usage[] =
    "usage: carma hold [--socket PATH] [--json] ID\n\n"
    "Holds a queued task: it stays queued but does not start until `carma release ID`\n"
    "(a running or ended task cannot be held; one held already stays so, with a note).\n"
    "Only the task's owner or root may hold it.\n\n"
    REQUEST_USAGE;

static int run(request_args *a)
{
    return request_hold_release(a, "hold", "held", "is already held");
}

const request_cmd cmd_hold = {.usage = usage, .run = run};
