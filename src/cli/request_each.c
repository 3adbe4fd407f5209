/* request_each.c — the task-id operands of the commands that take several (cancel, hold,
 * release, wait) and the per-id loop of cancel, hold and release: one request per task on one
 * connection, a task that fails named on stderr while the others are still done, as scancel
 * and scontrol hold/release do (see request.h). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/request.h"
#include "daemon/connect.h"

int request_task_ids(const request_args *a, long long **ids, int *n)
{
    int argn = a->argc - a->operands, kept = 0, rc;
    *ids = NULL;
    *n = 0;
    if (argn < 1)
        return cli_usage_error(a->cmd, "expected one or more task ids");
    long long *v = calloc((size_t)argn, sizeof *v);
    if (!v) {
        fprintf(stderr, "carma %s: out of memory\n", a->cmd);
        return 1;
    }
    for (int i = 0; i < argn; i++) { /* every id is read before anything is done */
        if ((rc = request_task_id(a, a->argv[a->operands + i], &v[kept])) != 0) {
            free(v);
            return rc;
        }
        bool again = false; /* `cancel 5 5`: once (the second would say it is cancelled) */
        for (int k = 0; k < kept && !again; k++)
            again = v[k] == v[kept];
        kept += !again;
    }
    *ids = v;
    *n = kept;
    return 0;
}

/* Sends {"verb": verb, "id": id} on *fd (connecting again when an earlier request lost the
 * connection): the daemon's reply, or NULL with err. */
static json_t *call_one(const request_args *a, int *fd, const char *verb, long long id,
                        carma_err *err)
{
    if (*fd < 0 && (*fd = request_connect(a, err)) < 0)
        return NULL;
    bool answered;
    json_t *reply = daemon_call_answered(
        *fd, json_pack("{sssI}", "verb", verb, "id", (json_int_t)id), &answered, err);
    if (!answered) {
        close(*fd);
        *fd = -1;
    }
    return reply;
}

int request_each_task(request_args *a, const char *verb, request_done_fn done, const void *ctx)
{
    if (request_next_option(a) != 0) /* none of its own: --help or a usage error */
        return a->status;
    long long *ids;
    int n, rc = request_task_ids(a, &ids, &n);
    if (rc)
        return rc;
    carma_err err;
    int fd = request_connect(a, &err), failed = 0;
    if (fd < 0) {
        free(ids);
        return cli_fail(a->cmd, &err);
    }
    json_t *results = json_array();
    for (int i = 0; i < n; i++) {
        json_t *reply = call_one(a, &fd, verb, ids[i], &err);
        /* each result is {id, ok, ...}: the id first, then the daemon's reply or the error */
        json_t *result = json_pack("{sI}", "id", (json_int_t)ids[i]);
        if (!reply) {
            failed++;
            json_object_set_new(result, "ok", json_false());
            json_object_set_new(result, "error", json_string(err.msg));
            carma_err_prefix(&err, "task %lld", ids[i]);
            cli_fail(a->cmd, &err); /* the daemon's words: escapes shown, not obeyed */
        } else {
            json_object_update(result, reply);
            done(a, ids[i], reply, ctx);
            json_decref(reply);
        }
        json_array_append_new(results, result);
    }
    if (fd >= 0)
        close(fd);
    if (a->opts.json)
        cli_print_json(results);
    json_decref(results);
    free(ids);
    return failed ? 1 : 0;
}

/* What hold or release did to one task: its words (a request_hold_release's). */
typedef struct hold_words {
    const char *done, *unchanged;
} hold_words;

static void hold_done(const request_args *a, long long id, const json_t *reply, const void *ctx)
{
    const hold_words *w = ctx;
    if (json_is_true(json_object_get(reply, "unchanged"))) /* the answer, unless stdout is JSON */
        fprintf(a->opts.json ? stderr : stdout, "note: task %lld %s\n", id, w->unchanged);
    else if (!a->opts.json)
        printf("task %lld %s\n", id, w->done);
}

int request_hold_release(request_args *a, const char *verb, const char *done,
                         const char *unchanged)
{
    hold_words w = {done, unchanged};
    return request_each_task(a, verb, hold_done, &w);
}
