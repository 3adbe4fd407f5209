/* gpus.c — `carma gpus`: per GPU, memory, aggregated activity, power, tasks, grace state. */
#include <getopt.h>
#include <stdio.h>

#include "cli/commands.h"
#include "cli/daemon_client.h"

static const char *const usage =
    "usage: carma gpus [--socket PATH] [--json]\n\n"
    "Shows each GPU as the daemon sees it: memory used/total (MiB), SMACT/SMOCC/DRAMA as\n"
    "aggregated over the monitoring window (- = unknown), power, the tasks on it and its\n"
    "grace state (available, launching, grace with the seconds left).\n\n" CLIENT_USAGE;

static void fmt_num(char *buf, size_t cap, const json_t *v, const char *fmt)
{
    if (json_is_number(v))
        snprintf(buf, cap, fmt, json_number_value(v));
    else
        snprintf(buf, cap, "-");
}

int cmd_gpus(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'}, CLIENT_LONGOPTS, {NULL, 0, NULL, 0}};
    client_opts co = {0};
    int opt, rc;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if ((rc = client_opt("gpus", &co, opt, optarg)) != 0) {
            if (rc > 1)
                return rc - 2;
            continue;
        }
        if (opt == 'h') {
            fputs(usage, stdout);
            return 0;
        }
        return cli_bad_option("gpus", argv, optopt, opt);
    }
    if (optind < argc)
        return cli_usage_error("gpus", "unexpected argument '%s'", argv[optind]);
    json_t *reply, *req = json_pack("{ss}", "verb", "gpus");
    if ((rc = client_request("gpus", &co, req, &reply)) != 0)
        return rc;
    json_t *gpus = json_object_get(reply, "gpus");
    if (co.json) {
        client_print_json(gpus);
    } else {
        printf("%-3s %-18s %-13s %-6s %-6s %-6s %-7s %-10s %s\n", "GPU", "NAME", "MEM_MIB",
               "SMACT", "SMOCC", "DRAMA", "POWER", "GRACE", "TASKS");
        size_t i;
        json_t *g;
        json_array_foreach(gpus, i, g) {
            char mem[32], a[16], o[16], dr[16], pw[16], grace[24], tasks[256] = "";
            json_t *used = json_object_get(g, "mem_used_mib"), *total = json_object_get(g, "mem_total_mib");
            if (json_is_integer(used) && json_is_integer(total))
                snprintf(mem, sizeof mem, "%lld/%lld", (long long)json_integer_value(used),
                         (long long)json_integer_value(total));
            else
                snprintf(mem, sizeof mem, "-");
            fmt_num(a, sizeof a, json_object_get(g, "smact"), "%.2f");
            fmt_num(o, sizeof o, json_object_get(g, "smocc"), "%.2f");
            fmt_num(dr, sizeof dr, json_object_get(g, "drama"), "%.2f");
            fmt_num(pw, sizeof pw, json_object_get(g, "power_w"), "%.0fW");
            json_t *left = json_object_get(g, "grace_left_s");
            if (json_is_number(left))
                snprintf(grace, sizeof grace, "grace %.0fs", json_number_value(left));
            else
                snprintf(grace, sizeof grace, "%s", json_string_value(json_object_get(g, "grace")));
            size_t k, n = 0;
            json_t *t;
            json_array_foreach(json_object_get(g, "tasks"), k, t) n += (size_t)snprintf(
                tasks + n, n < sizeof tasks ? sizeof tasks - n : 0, "%s%lld", k ? "," : "",
                (long long)json_integer_value(t));
            printf("%-3lld %-18.18s %-13s %-6s %-6s %-6s %-7s %-10s %s\n",
                   (long long)json_integer_value(json_object_get(g, "index")),
                   json_string_value(json_object_get(g, "name")), mem, a, o, dr, pw, grace,
                   tasks[0] ? tasks : "-");
        }
    }
    json_decref(reply);
    return 0;
}
