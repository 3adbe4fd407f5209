/* request_each.c — the task-id operands of the commands that take several (cancel, hold,
 * release, wait) and the per-id loop of cancel, hold and release: one request per task on one
 * connection, a task that fails named on stderr while the others are still done, as scancel
 * and scontrol hold/release do; and their selection of live tasks by --name, --state and
 * --user, as scancel's (see request.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

const struct option request_select_longopts[] = {
    {"name", required_argument, NULL, 'n'},
    {"state", required_argument, NULL, 't'},
    {"user", required_argument, NULL, 'u'},
    {NULL, 0, NULL, 0},
};

/* The live tasks chosen by --name, --state and --user (and among `ids` when n > 0). */
typedef struct selection {
    const char *name, *state;
    char user[REQUEST_USER_MAX];
} selection;

/* --name NAME: the task's name, or one of the array NAME's (NAME[INDEX]) */
static bool name_matches(const char *want, const char *name)
{
    size_t n = strlen(want);
    if (!name || strncmp(name, want, n) != 0)
        return false;
    if (!name[n])
        return true;
    size_t digits = strspn(name + n + 1, "0123456789");
    return name[n] == '[' && digits > 0 && !strcmp(name + n + 1 + digits, "]");
}

/* Replaces ids[0..*n) (none: every live task) by the live tasks that match sel. 0, or the exit
 * status after the error was printed. */
static int select_tasks(const request_args *a, const selection *sel, long long **ids, int *n)
{
    json_t *req = json_pack("{ss}", "verb", "queue"), *reply;
    if (sel->state)
        json_object_set_new(req, "state", json_string(sel->state));
    json_object_set_new(req, "user", json_string(sel->user));
    if (request_send(a, req, &reply))
        return 1;
    json_t *tasks = json_object_get(reply, "tasks"), *t;
    long long *out = calloc(json_array_size(tasks) + 1, sizeof *out);
    if (!out) {
        json_decref(reply);
        fprintf(stderr, "carma %s: out of memory\n", a->cmd);
        return 1;
    }
    int kept = 0;
    size_t i;
    json_array_foreach(tasks, i, t) {
        long long id = (long long)json_integer_value(json_object_get(t, "id"));
        bool listed = *n == 0;
        for (int k = 0; k < *n && !listed; k++)
            listed = (*ids)[k] == id;
        if (listed && (!sel->name ||
                       name_matches(sel->name, json_string_value(json_object_get(t, "name")))))
            out[kept++] = id;
    }
    json_decref(reply);
    free(*ids);
    *ids = out;
    *n = kept;
    if (kept == 0) /* as scancel: nothing to do is no error */
        fprintf(stderr, "note: no live task of %s matches\n", sel->user);
    return 0;
}

/* Reads the selection options and the ids: 0 with *ids (to free) and *n set, -1 when the
 * command is over (--help printed), or the exit status. */
static int read_selection(request_args *a, long long **ids, int *n)
{
    selection sel = {0};
    bool any = false;
    int opt, rc;
    *ids = NULL;
    while ((opt = request_next_option(a)) > 0) {
        any = true;
        if (opt == 'n' && !*a->arg)
            return cli_usage_error(a->cmd, "--name: empty");
        if (opt == 'n')
            sel.name = a->arg;
        else if (opt == 't' && strcmp(a->arg, "queued") && strcmp(a->arg, "running"))
            return cli_usage_error(a->cmd, "--state: expected queued or running, got '%s'",
                                   a->arg);
        else if (opt == 't')
            sel.state = a->arg;
        else if (opt == 'u' && (rc = request_user_option(a, a->arg, sel.user,
                                                        sizeof sel.user)) != 0)
            return rc;
    }
    if (opt < 0) /* after --help (0), or a usage error */
        return a->status ? a->status : -1;
    if (!any && a->operands >= a->argc)
        return cli_usage_error(a->cmd, "expected one or more task ids, or --name, --state or "
                               "--user");
    if (a->operands < a->argc) {
        if ((rc = request_task_ids(a, ids, n)) != 0)
            return rc;
    } else
        *n = 0;
    if (!any)
        return 0;
    if (!sel.user[0]) { /* one's own tasks, unless --user names another's (root) */
        char uid[16];
        snprintf(uid, sizeof uid, "%u", (unsigned)getuid());
        if ((rc = request_user_option(a, uid, sel.user, sizeof sel.user)) != 0)
            return rc;
    }
    if ((rc = select_tasks(a, &sel, ids, n)) != 0) {
        free(*ids);
        *ids = NULL;
    }
    return rc;
}

int request_each_task(request_args *a, const char *verb, request_done_fn done, const void *ctx)
{
    long long *ids;
    int n, rc = read_selection(a, &ids, &n);
    if (rc)
        return rc < 0 ? 0 : rc;
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
