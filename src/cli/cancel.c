/* cancel.c — `carma cancel ID`: cancel a queued or running task (its owner or root). */
#include <getopt.h>
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
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'}, CLIENT_LONGOPTS, {NULL, 0, NULL, 0}};
    client_opts co = {0};
    int opt, rc;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if ((rc = client_opt("cancel", &co, opt, optarg)) != 0) {
            if (rc > 1)
                return rc - 2;
            continue;
        }
        if (opt == 'h') {
            fputs(usage, stdout);
            return 0;
        }
        return cli_bad_option("cancel", argv, optopt, opt);
    }
    if (optind + 1 != argc)
        return cli_usage_error("cancel", "expected one task id");
    long long id = client_task_id("cancel", argv[optind]);
    if (!id)
        return EXIT_USAGE;
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
