/* hold.c — `carma hold ID...`: keep queued tasks from starting (their owner or root). */
#include "cli/commands.h"
#include "cli/request.h"

static const char usage[] =
    "usage: carma hold [--socket PATH] [--json] ID...\n"
    "       carma hold [--socket PATH] [--json] [--name NAME] [--state STATE] [--user USER]\n"
    "                  [ID...]\n\n"
    "Holds each queued task: it stays queued but does not start until `carma release ID`\n"
    "(a running or ended task cannot be held; one held already stays so, with a note).\n"
    "Only the task's owner or root may hold it. A task that cannot be held is named on\n"
    "stderr, the others are still held, and the exit status is 1. --json prints an array,\n"
    "one object per ID in order (a repeated ID once): {id, ok: true, task, unchanged: true\n"
    "when it was held already} or {id, ok: false, error}; the notes go to stderr.\n"
    "--name, --state and --user choose live tasks instead (as cancel's).\n\n"
    REQUEST_SELECT_USAGE
    REQUEST_USAGE;

static int run(request_args *a)
{
    return request_hold_release(a, "hold", "held", "is already held");
}

const request_cmd cmd_hold = {
    .usage = usage, .shortopts = "", .longopts = request_select_longopts, .run = run};
