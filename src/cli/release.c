/* release.c — `carma release ID...`: let held tasks start again (their owner or root). */
#include "cli/commands.h"
#include "cli/request.h"

static const char usage[] =
    "usage: carma release [--socket PATH] [--json] ID...\n"
    "       carma release [--socket PATH] [--json] [--name NAME] [--state STATE] [--user USER]\n"
    "                     [ID...]\n\n"
    "Releases each held task: it may start again, once its dependencies allow. A queued\n"
    "task that is not held is left as it is, with a note (as scontrol does); a running or\n"
    "ended task is an error, as for hold. Only the task's owner or root may release it. A\n"
    "task that cannot be released is named on stderr, the others are still released, and\n"
    "the exit status is 1. --json prints an array, as hold's: one object per ID in order\n"
    "(a repeated ID once), {id, ok: true, task, unchanged: true when it was not held} or\n"
    "{id, ok: false, error}; the notes go to stderr.\n"
    "--name, --state and --user choose live tasks instead (as cancel's).\n\n"
    REQUEST_SELECT_USAGE
    REQUEST_USAGE;

static int run(request_args *a)
{
    return request_hold_release(a, "release", "released", "is not held: nothing to release");
}

const request_cmd cmd_release = {
    .usage = usage, .shortopts = "", .longopts = request_select_longopts, .run = run};
