/* daemon_client.h — what the daemon's client commands (submit, queue, show, cancel, logs,
 * gpus) share: the common options, finding the socket, one request/reply, JSON printing. */
#ifndef CARMA_CLI_DAEMON_CLIENT_H
#define CARMA_CLI_DAEMON_CLIENT_H

#include <jansson.h>
#include <stdbool.h>

#include "cli/cli.h"

typedef struct client_opts {
    const char *socket;
    bool json;
    cli_config_args config;
} client_opts;

/* Long options every client command accepts; handles them. Returns 1 when opt was one of
 * them, 0 when not, and an exit status + 2 (so >= 2) on a usage error. */
#define CLIENT_LONGOPTS                                                                    \
    {"socket", required_argument, NULL, 0x100}, {"json", no_argument, NULL, 0x101},       \
        {"config", required_argument, NULL, 0x102}, {"set", required_argument, NULL, 0x103}
int client_opt(const char *cmd, client_opts *o, int opt, const char *arg);
#define CLIENT_USAGE "  --socket PATH   the daemon's socket (default: $CARMA_SOCKET, the config's\n" \
                     "                  `socket`, else the built-in default)\n"                  \
                     "  --json          print JSON\n"                                             \
                     "  --config FILE, --set KEY=VALUE   configuration (for the socket)\n"

/* Connects and makes one request (req is taken). On failure prints "carma CMD: ..." and
 * returns 1; *reply is set on success. */
int client_request(const char *cmd, const client_opts *o, json_t *req, json_t **reply);

/* Prints j as indented JSON + newline. */
void client_print_json(const json_t *j);

/* Parses a task id argument ("17"); prints a usage error and returns 0 when invalid. */
long long client_task_id(const char *cmd, const char *arg);

/* The command line of a client command that takes only the common options, --help and one
 * task id (show, cancel). Returns -1 with *id set when the command should go on, else the exit
 * status to return (0 after --help). */
int client_id_command_args(const char *cmd, const char *usage, int argc, char **argv,
                           client_opts *co, long long *id);

#endif
