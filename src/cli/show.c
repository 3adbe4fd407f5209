/* show.c — `carma show ID`: everything the daemon knows about one task. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "cli/daemon_client.h"

static const char *const usage =
    "usage: carma show [--socket PATH] [--json] ID\n\n"
    "Prints one task: its state, attempts, GPUs, memory figure, command and last attempt.\n\n"
    CLIENT_USAGE;

static void print_value(const char *key, const json_t *v, int indent)
{
    if (json_is_object(v)) {
        printf("%*s%s:\n", indent, "", key);
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) print_value(k, x, indent + 2);
        return;
    }
    char *text = json_is_string(v) ? NULL : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    printf("%*s%-13s %s\n", indent, "", key, text ? text : json_string_value(v));
    free(text);
}

int cmd_show(int argc, char **argv)
{
    client_opts co = {0};
    long long id;
    int rc = client_id_command_args("show", usage, argc, argv, &co, &id);
    if (rc >= 0)
        return rc;
    json_t *reply, *req = json_pack("{sssI}", "verb", "show", "id", (json_int_t)id);
    if ((rc = client_request("show", &co, req, &reply)) != 0)
        return rc;
    json_t *task = json_object_get(reply, "task");
    if (co.json) {
        client_print_json(task);
    } else {
        const char *k;
        json_t *v;
        json_object_foreach(task, k, v) print_value(k, v, 0);
    }
    json_decref(reply);
    return 0;
}
