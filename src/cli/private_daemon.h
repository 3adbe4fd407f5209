/* private_daemon.h — a daemon `carma run` starts for itself (inside a Slurm job, or when no
 * daemon answers): its socket and state in a fresh private directory, run as a child process,
 * waited for until it answers, and stopped and removed at the end. */
#ifndef CARMA_CLI_PRIVATE_DAEMON_H
#define CARMA_CLI_PRIVATE_DAEMON_H

#include <limits.h>
#include <signal.h>
#include <sys/types.h>

#include "cli/cli.h"
#include "util/err.h"

typedef struct private_daemon {
    char dir[PATH_MAX];    /* $TMPDIR/carma-run-XXXXXX (0700), "" when not made */
    char socket[PATH_MAX + 16]; /* dir/carma.sock */
    pid_t pid;             /* the daemon, 0 when none runs */
} private_daemon;

typedef struct private_daemon_opts {
    const char *gpu_backend;      /* --gpu-backend for it, NULL: its config's */
    const char *sim_gpus;         /* --sim-gpus for it, NULL: its config's */
    const cli_config_args *config; /* --config and --set, passed on */
    double start_timeout_s;       /* how long it may take to answer */
    volatile sig_atomic_t *stop;  /* set by a signal: give up waiting */
} private_daemon_opts;

/* Makes the directory, starts `carma daemon` in it (its own process group, so a Ctrl-C reaches
 * carma run, which cancels the tasks through it, and not the daemon), and waits until its
 * socket answers. On failure everything made is removed again and err says why (the daemon's
 * own messages went to stderr). */
int private_daemon_start(private_daemon *p, const private_daemon_opts *o, carma_err *err);

/* SIGTERM to the daemon, waits for it (SIGKILL after a while), removes the directory; safe on
 * a zeroed or already stopped one. Returns -1 (err set) when something could not be removed. */
int private_daemon_stop(private_daemon *p, carma_err *err);

#endif
