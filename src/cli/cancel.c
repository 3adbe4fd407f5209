/* cancel.c — `carma cancel ID`: cancel a queued or running task (its owner or root). */
#include <stdio.h>

#include "cli/commands.h"
#include "cli/daemon_client.h"

static const char *const usage =
    "usage: carma cancel [--socket PATH] [--json] ID\n\n"
    "Cancels a task: a queued task leaves the queue; a running task gets SIGTERM, then\n"
    "SIGKILL after the daemon's kill_grace_s. Only the task's owner or root may cancel it.\n\n"
    CLIENT_USAGE;

int cmd_cancel(int argc, char **argv)
{
    client_opts co = {0};
    long long id;
    int rc = client_id_command_args("cancel", usage, argc, argv, &co, &id);
    if (rc >= 0)
        return rc;
    json_t *reply, *req = json_pack("{sssI}", "verb", "cancel", "id", (json_int_t)id);
    if ((rc = client_request("cancel", &co, req, &reply)) != 0)
        return rc;
    json_object_del(reply, "ok");
    if (co.json)
        client_print_json(reply);
    else
        printf("task %lld %s\n", id, json_string_value(json_object_get(reply, "state")));
    json_decref(reply);
    return 0;
}
