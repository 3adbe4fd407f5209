/* daemon.h — `carma daemon`: the live manager of one server. One thread, one poll(2) loop:
 * a Unix socket server (newline-delimited JSON, docs/protocol.md), the scheduling core
 * (sched.h), a supervisor process per launched attempt, a monitoring tick over the GPU
 * backend, and SQLite state written before anything is acted on.
 *
 * Why poll(2) and not libuv: the daemon watches a listening socket and a few clients, and
 * wakes for a timer; launches go through supervisors that are not its children after a
 * restart, so libuv's child-process handling would not apply. Plain poll keeps the loop
 * readable and adds no dependency. */
#ifndef CARMA_DAEMON_DAEMON_H
#define CARMA_DAEMON_DAEMON_H

#include <signal.h>

#include "config/config.h"
#include "util/err.h"

typedef void (*daemon_log_fn)(const char *msg);

typedef struct daemon_options {
    carma_config cfg;        /* scheduling settings and daemon settings */
    const char *socket_path; /* resolved */
    bool socket_default;     /* socket_path is daemon_default_socket's (none was named) */
    const char *state_dir;   /* resolved */
    bool state_default;      /* state_dir is daemon_default_state_dir's (none was named) */
    const char *backend;     /* "sim" (the fake-GPU backend), "nvml" */
    const char *fakegpu_spec; /* the fake-GPU backend's GPUs, e.g. "2xA100-40GB" (`sim_gpus`) */
    volatile sig_atomic_t *stop; /* the loop ends when *stop becomes non-zero */
    daemon_log_fn log;       /* one line per call; NULL = silent */
} daemon_options;

/* Runs until *stop is set (0) or a fatal error (-1, err filled). */
int daemon_run(const daemon_options *opts, carma_err *err);

/* The system daemon's socket: $CARMA_SYSTEM_SOCKET when set (tests), else
 * /run/carma/carma.sock. */
const char *daemon_system_socket(void);
/* The sockets a user's own daemon may serve, best first, written to paths (room for
 * DAEMON_USER_SOCKETS): $XDG_RUNTIME_DIR/carma.sock when $XDG_RUNTIME_DIR is an absolute
 * path to a directory (not a symlink) of the effective user's with no permission for group or
 * others (as /run/user/UID; else /run/user/UID itself under those
 * rules), and the socket's path fits a socket address; then
 * /tmp/carma-UID.sock, whose name anyone may take first.
 * Returns how many (1 or 2). The one rule for the daemon (the first) and its clients (each). */
#define DAEMON_USER_SOCKETS 2
int daemon_user_sockets(char paths[][CONFIG_STR_MAX]);
/* The default socket and state paths for this user (see config.c's help texts): as root the
 * system socket, else the first of daemon_user_sockets. */
void daemon_default_socket(char *buf, size_t cap);
void daemon_default_state_dir(char *buf, size_t cap);

/* The socket `carma daemon` serves: --socket (opt), else $CARMA_SOCKET, else the config's
 * `socket`, else daemon_default_socket; the clients' order, so both sides meet. True when it
 * is the default (then chosen afresh should the socket go: d_check_socket). */
bool daemon_serve_socket(const char *opt, const carma_config *cfg, char *buf, size_t cap);

/* The sockets a command tries, in order, written to paths (room for DAEMON_MAX_SOCKETS):
 * --socket, else $CARMA_SOCKET, else the config's `socket` (one path); else the system socket,
 * then each of daemon_user_sockets (not for root: only the system socket). Returns how
 * many. */
int daemon_client_sockets(const char *opt, const char *cfg_socket,
                          char paths[][CONFIG_STR_MAX]);

#endif
