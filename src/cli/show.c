/* show.c — `carma show ID`: everything the daemon knows about one task. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "cli/request.h"
#include "util/strutil.h"

static const char usage[] =
    "usage: carma show [--socket PATH] [--json] ID\n\n"
    "Prints one task: its state, attempts, GPUs, memory figure, command and last attempt.\n\n"
    REQUEST_USAGE;

static void print_value(const char *key, const json_t *v, int indent)
{
    if (json_is_object(v)) {
        printf("%*s%s:\n", indent, "", key);
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) print_value(k, x, indent + 2);
        return;
    }
    /* a string as it is, its control characters made visible (names and commands are other
     * users'); anything else as JSON, which escapes them itself */
    char *text = json_is_string(v) ? str_escape_controls(json_string_value(v))
                                   : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    printf("%*s%-13s %s\n", indent, "", key, text ? text : "?");
    free(text);
}

static int run(request_args *a)
{
    long long id;
    json_t *reply;
    int rc = request_task_verb(a, "show", &id, &reply);
    if (!reply)
        return rc;
    json_t *task = json_object_get(reply, "task");
    if (a->opts.json) {
        cli_print_json(task);
    } else {
        const char *k;
        json_t *v;
        json_object_foreach(task, k, v) print_value(k, v, 0);
    }
    json_decref(reply);
    return 0;
}

const request_cmd cmd_show = {.usage = usage, .run = run};
