/* request.h — the commands that talk to the daemon (submit, queue, show, cancel, logs, gpus):
 * flagged CMD_TALKS_TO_DAEMON in the command table, they share their common options
 * (--socket, --json, --config, --set, --help), which are parsed here, once for all of them;
 * finding the socket; one request and its reply. (The daemon's side of the socket is
 * src/daemon/server.c.) */
#ifndef CARMA_CLI_REQUEST_H
#define CARMA_CLI_REQUEST_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>

#include "cli/cli.h"

/* The options every such command takes. */
typedef struct request_opts {
    const char *socket;     /* --socket */
    bool json;              /* --json */
    cli_config_args config; /* --config, --set (read only to find the socket) */
    char config_socket[CONFIG_STR_MAX]; /* its `socket` ("": none), read with the options */
} request_opts;

/* Their lines in a --help text. */
#define REQUEST_USAGE                                                                        \
    "  --socket PATH   the daemon's socket (default: $CARMA_SOCKET, the config's\n"          \
    "                  `socket`, else /run/carma/carma.sock, then\n"                         \
    "                  $XDG_RUNTIME_DIR/carma.sock (when that directory is yours, with\n"    \
    "                  no access for group or others; else\n"                            \
    "                  /run/user/UID when so), then /tmp/carma-UID.sock)\n"                \
    "  --json          print JSON\n"                                                         \
    "  --config FILE, --set KEY=VALUE   configuration (for the socket)\n"

#define REQUEST_MAX_OWN_OPTS 16

/* A command's command line as it is being read: see request_next_option. */
typedef struct request_args {
    const char *cmd;   /* the command's name, for messages */
    request_opts opts; /* the common options read so far */
    const char *arg;   /* the argument of the option request_next_option returned */
    int argc;          /* the command line, argv[0] the command's name */
    char **argv;
    int operands;      /* once the options are read: argv[operands..argc) are the operands */
    int status;        /* when request_next_option returned -1: the exit status */
    /* private: the command's own options and the common ones, for getopt_long */
    const char *usage;
    char shortopts[16];
    struct option longopts[REQUEST_MAX_OWN_OPTS + 6]; /* + the 5 common ones and the end */
} request_args;

/* What a command that talks to the daemon adds to the common options: its --help text, its
 * own options, and what it does. Its entry in the command table points here. */
typedef struct request_cmd {
    const char *usage;             /* --help prints it (it ends with REQUEST_USAGE) */
    const char *shortopts;         /* its own short options ("a", "f"); a leading '+' stops the
                                      options at the first operand (submit's COMMAND) */
    const struct option *longopts; /* its own long options, ended by {NULL}; or NULL */
    /* Reads its own options with request_next_option, then its operands; returns the exit
     * status. */
    int (*run)(request_args *a);
} request_cmd;

/* Runs command `name` (argv[0]) as described by c: what the command table does for a command
 * flagged CMD_TALKS_TO_DAEMON. */
int request_cmd_main(const char *name, const request_cmd *c, int argc, char **argv);

/* Reads the next option. Handles the common ones itself and returns the command's own ones
 * (their val, argument in a->arg); returns 0 when the options are over (the operands start at
 * a->operands) and the config they give loads, and -1 when the command should end now with
 * exit status a->status: 0 after --help printed the usage, EXIT_USAGE after a usage error was
 * printed (unknown option, missing value, too many --set, a --set the config refuses), 1
 * after saying why the config cannot be read. */
int request_next_option(request_args *a);

/* The operands of a command that takes none: 0, or a usage error's exit status. */
int request_no_operands(const request_args *a);
/* The operands of a command that takes one task id ("17"): 0 with *id set, or a usage error's
 * exit status. */
int request_task_id_operand(const request_args *a, long long *id);
/* One task id, arg: 0 with *id set, or a usage error's exit status. */
int request_task_id(const request_args *a, const char *arg, long long *id);

/* The value of a listing's --state (queue, history): 0 when it names a task state, else a
 * usage error's exit status, the message listing the states (the daemon's own names). */
int request_state_option(const request_args *a, const char *state);

/* The value of a listing's --user (queue, history), as squeue takes it: a user name or a
 * numeric uid. The daemon records a task's user by name, or as the decimal uid when the uid
 * had no passwd entry; so a name must be a user's (else a usage error naming it), a uid with
 * an entry stands for its user's name, and a uid without one for its digits (what such a
 * task was recorded under). 0 with the name to ask the daemon for in name[cap], or a usage
 * error's exit status. */
#define REQUEST_USER_MAX 256
int request_user_option(const request_args *a, const char *user, char *name, size_t cap);

/* Connects to the daemon's socket (daemon_client_sockets: --socket, else $CARMA_SOCKET, else
 * the config's, else the system's then this user's): the fd, for any number of requests
 * (daemon_call_answered), or -1 with err saying why. */
int request_connect(const request_args *a, carma_err *err);

/* Connects to the daemon's socket (request_connect) and makes
 * one request (req is taken). On failure prints "carma CMD: ..." and returns 1; *reply is set
 * on success. */
int request_send(const request_args *a, json_t *req, json_t **reply);
/* The same, for a request that is safe to repeat (a submit with its idempotency key): when the
 * daemon could not be reached or no reply came, it is sent again, up to `tries` times in all,
 * with a short pause between. */
int request_send_retrying(const request_args *a, json_t *req, int tries, json_t **reply);

/* How long a command that follows tasks (wait, logs --follow, run) waits for a daemon it was
 * talking to, to answer again: a restart (systemctl restart carma) keeps the tasks. */
#define REQUEST_PATIENCE_S 30.0

/* One request that is safe to repeat (req is taken), its reply by `deadline` (clock_mono_s(),
 * INFINITY: none): a daemon that cannot be reached, or that closed the connection without a
 * reply, is asked again every half second for up to `patience_s` (saying so once on stderr),
 * not after a signal (daemon_calls_interruptible). The reply, or NULL with err set. */
json_t *request_call_patient(const request_args *a, json_t *req, double deadline,
                             double patience_s, carma_err *err);

/* The whole work of a command that takes the common options and one task id (show)
 * but printing the reply: reads its command line, sends {"verb": verb, "id": ID}. Sets *reply
 * (and *id) when the command goes on to print it; else *reply is NULL and the exit status is
 * returned (0 after --help). */
int request_task_verb(request_args *a, const char *verb, long long *id, json_t **reply);

/* The operands of a command that takes one or more task ids (cancel, hold, release, wait),
 * every one read before anything is done and a repeated one kept once: 0 with *ids (to free)
 * and *n set, or the exit status after a usage error (or out of memory) was printed. */
int request_task_ids(const request_args *a, long long **ids, int *n);

/* The options that choose live tasks for cancel, hold and release (request_each_task), and
 * their lines in a --help text. */
extern const struct option request_select_longopts[];
#define REQUEST_SELECT_USAGE                                                                 \
    "  --name NAME     the live tasks named NAME, or of the array NAME (NAME[INDEX])\n"        \
    "  --state STATE   the live tasks in this state: queued or running\n"                     \
    "  --user USER     another user's tasks (root); without it, the options choose among\n"   \
    "                  your own\n"

/* Called by request_each_task for each task the daemon did `verb` to, with its reply: prints
 * what was done (nothing on stdout with --json). */
typedef void (*request_done_fn)(const request_args *a, long long id, const json_t *reply,
                                const void *ctx);

/* The whole of a command that sends `verb` to each of its task ids (cancel, hold, release):
 * reads its command line (request_select_longopts: with any of them, the ids are the live tasks
 * they choose, among the ids given if any, the caller's own unless --user names another's) and
 * ids (request_task_ids), then sends one
 * request per task on one connection; a task the daemon refuses is named on stderr
 * ("carma CMD: task ID: why") and the others are still done. With --json prints an array, one
 * object per id in order: {id, ok: true, ...the daemon's reply} or {id, ok: false, error}.
 * Returns the exit status: 1 when any failed. */
int request_each_task(request_args *a, const char *verb, request_done_fn done, const void *ctx);

/* The whole of `carma hold` and `carma release` (verb), request_each_task's: for each task,
 * what was done: "task ID held" (done), or, when the daemon left the task as it was
 * ("unchanged"), "note: task ID is already held" (unchanged), as scontrol takes a hold of a
 * held job; with --json the array (each {id, ok, task, unchanged}), and the notes on stderr.
 * Returns the exit status. */
int request_hold_release(request_args *a, const char *verb, const char *done,
                         const char *unchanged);

#endif
