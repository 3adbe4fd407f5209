/* queue.c — `carma queue [--all]`: the tasks waiting and running (and, with --all, ended). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "cli/request.h"
#include "util/strutil.h"

static const char usage[] =
    "usage: carma queue [--all] [--socket PATH] [--json]\n\n"
    "Lists the queued tasks in the order they will be considered (recovery queue first),\n"
    "then the running ones; --all adds the ended ones.\n\n"
    "  --all           also done, failed and cancelled tasks\n" REQUEST_USAGE;

static void print_gpus(const json_t *gpus, char *buf, size_t cap)
{
    size_t i, o = 0;
    json_t *g;
    buf[0] = '\0';
    json_array_foreach(gpus, i, g) o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "%s%lld",
                                                         i ? "," : "",
                                                         (long long)json_integer_value(g));
    if (!buf[0])
        snprintf(buf, cap, "-");
}

static const struct option longopts[] = {{"all", no_argument, NULL, 'a'}, {NULL, 0, NULL, 0}};

static int run(request_args *a)
{
    bool all = false;
    int opt, rc;
    while ((opt = request_next_option(a)) > 0)
        all |= opt == 'a';
    if (opt < 0)
        return a->status;
    if ((rc = request_no_operands(a)) != 0)
        return rc;
    json_t *reply, *req = json_pack("{sssb}", "verb", "queue", "all", all);
    if ((rc = request_send(a, req, &reply)) != 0)
        return rc;
    json_t *tasks = json_object_get(reply, "tasks");
    if (a->opts.json) {
        cli_print_json(tasks);
    } else {
        printf("%-6s %-20s %-10s %-10s %-8s %-8s %-9s %s\n", "ID", "NAME", "USER", "STATE",
               "QUEUE", "ATTEMPTS", "GPUS", "MEM_MIB");
        size_t i;
        json_t *t;
        json_array_foreach(tasks, i, t) {
            char gpus[64];
            print_gpus(json_object_get(t, "gpus"), gpus, sizeof gpus);
            json_t *mem = json_object_get(t, "mem_mib"), *q = json_object_get(t, "queue");
            char memtext[32];
            if (json_is_integer(mem))
                snprintf(memtext, sizeof memtext, "%lld", (long long)json_integer_value(mem));
            else
                snprintf(memtext, sizeof memtext, "-");
            /* other users chose these names: no escape sequence reaches the terminal */
            char *name = str_escape_controls(json_string_value(json_object_get(t, "name")));
            char *user = str_escape_controls(json_string_value(json_object_get(t, "user")));
            printf("%-6lld %-20.20s %-10.10s %-10s %-8s %-8lld %-9s %s\n",
                   (long long)json_integer_value(json_object_get(t, "id")), name ? name : "?",
                   user ? user : "?", json_string_value(json_object_get(t, "state")),
                   json_is_string(q) ? json_string_value(q) : "-",
                   (long long)json_integer_value(json_object_get(t, "attempts")), gpus, memtext);
            free(name);
            free(user);
        }
    }
    json_decref(reply);
    return 0;
}

const request_cmd cmd_queue = {.usage = usage, .shortopts = "a", .longopts = longopts, .run = run};
