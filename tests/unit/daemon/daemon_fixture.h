/* daemon_fixture.h — what the daemon's tests share: a millisecond sleep, and a real daemon
 * forked on one sim GPU that the test talks to over its socket. */
#ifndef CARMA_TEST_DAEMON_FIXTURE_H
#define CARMA_TEST_DAEMON_FIXTURE_H

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "daemon/connect.h"
#include "daemon/daemon.h"

static inline void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static volatile sig_atomic_t fixture_stop_flag;
/* The on_finish program the next forked daemon runs (NULL: none). */
static const char *fixture_on_finish;

static inline void fixture_on_term(int sig)
{
    (void)sig;
    fixture_stop_flag = 1;
}

/* Forks a daemon (policy exclusive, one sim A100, sampling every sample_s) that stops cleanly
 * on SIGTERM; its fatal error goes to err_path when that is not NULL. Returns its pid once its
 * socket answers, or -1 (the child is left to the caller) when it never does. */
static inline pid_t fork_test_daemon(const char *sock, const char *state_dir, double sample_s,
                              const char *err_path)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct sigaction sa = {0};
        sa.sa_handler = fixture_on_term;
        sigaction(SIGTERM, &sa, NULL);
        daemon_options o = {0};
        config_defaults(&o.cfg);
        o.cfg.daemon.sample_interval_s = sample_s;
        if (fixture_on_finish)
            snprintf(o.cfg.daemon.on_finish, sizeof o.cfg.daemon.on_finish, "%s",
                     fixture_on_finish);
        o.socket_path = sock;
        o.state_dir = state_dir;
        o.backend = "sim";
        o.fakegpu_spec = "1xA100-40GB";
        o.stop = &fixture_stop_flag;
        carma_err err;
        if (daemon_run(&o, &err) == 0)
            _exit(0);
        FILE *f = err_path ? fopen(err_path, "w") : NULL;
        if (f) {
            fputs(err.msg, f);
            fclose(f);
        }
        _exit(1);
    }
    /* Up to 30 s: a loaded machine (the suite under ASan, two tests per core) has taken more
     * than 5 s to start one. A child that died is not waited for. */
    carma_err err;
    for (int i = 0; pid > 0 && i < 3000; i++) {
        int fd = daemon_connect(sock, &err);
        if (fd >= 0) {
            close(fd);
            return pid;
        }
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return -1;
        sleep_ms(10);
    }
    return -1;
}

#endif
