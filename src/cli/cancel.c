/* cancel.c — `carma cancel ID...`: cancel queued or running tasks (their owner or root), one
 * request each on one connection; a task that cannot be cancelled does not stop the others. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "cli/request.h"
#include "util/strutil.h"

static const char usage[] =
    "usage: carma cancel [--socket PATH] [--json] ID...\n"
    "       carma cancel [--socket PATH] [--json] [--name NAME] [--state STATE] [--user USER]\n"
    "                    [ID...]\n\n"
    "Cancels each task: a queued task leaves the queue; a running task gets SIGTERM, then\n"
    "SIGKILL after the daemon's kill_grace_s. Only the task's owner or root may cancel it.\n"
    "A task that cannot be cancelled (no such task, ended, another user's) is named on\n"
    "stderr, the others are still cancelled, and the exit status is 1. --json prints an\n"
    "array, one object per ID in order (a repeated ID once): {id, ok: true, state} or\n"
    "{id, ok: false, error}. --name, --state and --user choose live tasks instead, as\n"
    "scancel's filters (among the IDs given, if any): `carma cancel --name sweep` cancels\n"
    "the array sweep, `carma cancel --state queued` all your queued tasks.\n\n"
    REQUEST_SELECT_USAGE
    REQUEST_USAGE;

static void cancel_done(const request_args *a, long long id, const json_t *reply,
                        const void *ctx)
{
    (void)ctx;
    if (a->opts.json)
        return;
    char *state = str_escape_controls(json_string_value(json_object_get(reply, "state")));
    printf("task %lld %s\n", id, state ? state : "?");
    free(state);
}

static int run(request_args *a)
{
    return request_each_task(a, "cancel", cancel_done, NULL);
}

const request_cmd cmd_cancel = {
    .usage = usage, .shortopts = "", .longopts = request_select_longopts, .run = run};
