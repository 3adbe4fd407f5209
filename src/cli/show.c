/* show.c — `carma show ID`: everything the daemon knows about one task. */
#include <getopt.h>
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
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'}, CLIENT_LONGOPTS, {NULL, 0, NULL, 0}};
    client_opts co = {0};
    int opt, rc;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if ((rc = client_opt("show", &co, opt, optarg)) != 0) {
            if (rc > 1)
                return rc - 2;
            continue;
        }
        if (opt == 'h') {
            fputs(usage, stdout);
            return 0;
        }
        return cli_bad_option("show", argv, optopt, opt);
    }
    if (optind + 1 != argc)
        return cli_usage_error("show", "expected one task id");
    long long id = client_task_id("show", argv[optind]);
    if (!id)
        return EXIT_USAGE;
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
