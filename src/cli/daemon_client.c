/* daemon_client.c — shared plumbing of the daemon's client commands. */
#include "cli/daemon_client.h"

#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "daemon/client.h"
#include "daemon/daemon.h"
#include "util/strutil.h"

int client_opt(const char *cmd, client_opts *o, int opt, const char *arg)
{
    switch (opt) {
    case 0x100:
        o->socket = arg;
        return 1;
    case 0x101:
        o->json = true;
        return 1;
    case 0x102:
        o->config.path = arg;
        return 1;
    case 0x103:
        return cli_add_set(cmd, &o->config, arg) ? EXIT_USAGE + 2 : 1;
    }
    return 0;
}

int client_request(const char *cmd, const client_opts *o, json_t *req, json_t **reply)
{
    carma_config cfg;
    carma_err err;
    char path[CONFIG_STR_MAX];
    bool need_config = !(o->socket && *o->socket) && !getenv("CARMA_SOCKET");
    if (need_config && cli_load_config(&cfg, &o->config, &err)) {
        json_decref(req);
        return cli_fail(cmd, &err);
    }
    daemon_client_socket(o->socket, need_config ? &cfg : NULL, path, sizeof path);
    int fd = client_connect(path, &err);
    if (fd < 0) {
        json_decref(req);
        return cli_fail(cmd, &err);
    }
    *reply = client_call(fd, req, &err);
    close(fd);
    return *reply ? 0 : cli_fail(cmd, &err);
}

void client_print_json(const json_t *j)
{
    json_dumpf(j, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
}

long long client_task_id(const char *cmd, const char *arg)
{
    int64_t id;
    if (!arg || parse_i64(arg, &id) || id < 1) {
        cli_usage_error(cmd, "expected a task id (a positive integer), got '%s'",
                        arg ? arg : "nothing");
        return 0;
    }
    return id;
}

int client_id_command_args(const char *cmd, const char *usage, int argc, char **argv,
                           client_opts *co, long long *id)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'}, CLIENT_LONGOPTS, {NULL, 0, NULL, 0}};
    int opt, rc;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if ((rc = client_opt(cmd, co, opt, optarg)) != 0) {
            if (rc > 1)
                return rc - 2;
            continue;
        }
        if (opt == 'h') {
            fputs(usage, stdout);
            return 0;
        }
        return cli_bad_option(cmd, argv, optopt, opt);
    }
    if (optind + 1 != argc)
        return cli_usage_error(cmd, "expected one task id");
    *id = client_task_id(cmd, argv[optind]);
    return *id ? -1 : EXIT_USAGE;
}
