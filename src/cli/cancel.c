/* cancel.c — `carma cancel ID...`: cancel queued or running tasks (their owner or root), one
 * request each on one connection; a task that cannot be cancelled does not stop the others. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/request.h"
#include "daemon/connect.h"
#include "util/strutil.h"

static const char usage[] =
    "usage: carma cancel [--socket PATH] [--json] ID...\n\n"
    "Cancels each task: a queued task leaves the queue; a running task gets SIGTERM, then\n"
    "SIGKILL after the daemon's kill_grace_s. Only the task's owner or root may cancel it.\n"
    "A task that cannot be cancelled (no such task, ended, another user's) is named on\n"
    "stderr, the others are still cancelled, and the exit status is 1. --json prints an\n"
    "array, one object per ID in order (a repeated ID once): {id, ok: true, state} or\n"
    "{id, ok: false, error}.\n\n"
    REQUEST_USAGE;

/* Cancels one task on *fd (connecting again when an earlier request lost the connection):
 * the daemon's reply, or NULL with err. */
static json_t *cancel_one(const request_args *a, int *fd, long long id, carma_err *err)
{
    if (*fd < 0 && (*fd = request_connect(a, err)) < 0)
        return NULL;
    bool answered;
    json_t *reply = daemon_call_answered(
        *fd, json_pack("{sssI}", "verb", "cancel", "id", (json_int_t)id), &answered, err);
    if (!answered) {
        close(*fd);
        *fd = -1;
    }
    return reply;
}

static int run(request_args *a)
{
    if (request_next_option(a) != 0) /* none of its own: --help or a usage error */
        return a->status;
    int n = a->argc - a->operands, rc;
    if (n < 1)
        return cli_usage_error("cancel", "expected one or more task ids");
    long long *ids = calloc((size_t)n, sizeof *ids);
    if (!ids) {
        fprintf(stderr, "carma cancel: out of memory\n");
        return 1;
    }
    int kept = 0;
    for (int i = 0; i < n; i++) { /* every id is read before any is cancelled */
        if ((rc = request_task_id(a, a->argv[a->operands + i], &ids[kept])) != 0) {
            free(ids);
            return rc;
        }
        bool again = false; /* `cancel 5 5`: once (the second would say it is cancelled) */
        for (int k = 0; k < kept && !again; k++)
            again = ids[k] == ids[kept];
        kept += !again;
    }
    n = kept;
    carma_err err;
    int fd = request_connect(a, &err), failed = 0;
    if (fd < 0) {
        free(ids);
        return cli_fail("cancel", &err);
    }
    json_t *results = json_array();
    for (int i = 0; i < n; i++) {
        json_t *reply = cancel_one(a, &fd, ids[i], &err);
        if (!reply) {
            failed++;
            reply = json_pack("{sIsbss}", "id", (json_int_t)ids[i], "ok", 0, "error", err.msg);
            carma_err_prefix(&err, "task %lld", ids[i]);
            cli_fail("cancel", &err); /* the daemon's words: escapes shown, not obeyed */
        } else if (!a->opts.json) {
            char *state = str_escape_controls(json_string_value(json_object_get(reply, "state")));
            printf("task %lld %s\n", ids[i], state ? state : "?");
            free(state);
        }
        json_array_append_new(results, reply);
    }
    if (fd >= 0)
        close(fd);
    if (a->opts.json)
        cli_print_json(results);
    json_decref(results);
    free(ids);
    return failed ? 1 : 0;
}

const request_cmd cmd_cancel = {.usage = usage, .run = run};
