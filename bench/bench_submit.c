/* bench_submit.c — submissions per second one daemon sustains, each durably stored (SQLite
 * WAL, synchronous=FULL, group commit per loop turn) before its reply. A daemon runs in a
 * child process on a temporary socket with one fake GPU (the `sim` backend) held by a first
 * task, so every submission is stored and queued but none is launched. The submitters are
 * processes, each with its own connection, submitting one task at a time (request, wait for
 * the id, next); the report calls them clients.
 * Usage: bench_submit [TOTAL] [SUBMITTERS]   (defaults 20000 and 1,8,32 submitters) */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "daemon/connect.h"
#include "daemon/daemon.h"
#include "store/store.h"
#include "util/clock.h"

static volatile sig_atomic_t stop_flag;
static void on_term(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static json_t *submit_req(const char *cmd)
{
    return json_pack("{sss{ssss}}", "verb", "submit", "task", "command", cmd, "cwd", "/tmp");
}

static pid_t start_daemon(const char *sock, const char *state)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct sigaction sa = {0};
        sa.sa_handler = on_term;
        sigaction(SIGTERM, &sa, NULL);
        daemon_options o = {0};
        config_defaults(&o.cfg);
        o.socket_path = sock;
        o.state_dir = state;
        o.backend = "sim";
        o.fakegpu_spec = "1xA100-40GB";
        o.stop = &stop_flag;
        carma_err err;
        int rc = daemon_run(&o, &err);
        if (rc)
            fprintf(stderr, "daemon: %s\n", err.msg);
        _exit(rc ? 1 : 0);
    }
    carma_err err;
    for (int i = 0; i < 1000; i++) {
        int fd = daemon_connect(sock, &err);
        if (fd >= 0) {
            close(fd);
            return pid;
        }
        struct timespec ts = {0, 10000000L};
        nanosleep(&ts, NULL);
    }
    return -1;
}

static int submitter_run(const char *sock, int n)
{
    carma_err err;
    int fd = daemon_connect(sock, &err);
    if (fd < 0)
        return 1;
    for (int i = 0; i < n; i++) {
        json_t *r = daemon_call(fd, submit_req("true"), &err);
        if (!r) {
            fprintf(stderr, "submit: %s\n", err.msg);
            return 1;
        }
        json_decref(r);
    }
    close(fd);
    return 0;
}

static int one_round(int total, int submitters)
{
    char root[] = "/tmp/carma-bench-XXXXXX";
    if (!mkdtemp(root))
        return 1;
    char sock[128], state[128], db[160];
    snprintf(sock, sizeof sock, "%s/s", root);
    snprintf(state, sizeof state, "%s/state", root);
    pid_t d = start_daemon(sock, state);
    if (d < 0)
        return 1;
    carma_err err;
    int fd = daemon_connect(sock, &err);
    json_t *r = fd >= 0 ? daemon_call(fd, submit_req("sleep 600"), &err) : NULL; /* the blocker */
    json_decref(r);
    double t0 = clock_mono_s();
    int per = total / submitters;
    for (int c = 0; c < submitters; c++)
        if (fork() == 0)
            _exit(submitter_run(sock, per));
    int bad = 0, status;
    for (int c = 0; c < submitters; c++) {
        wait(&status);
        bad |= !WIFEXITED(status) || WEXITSTATUS(status);
    }
    double dt = clock_mono_s() - t0;
    r = daemon_call(fd, json_pack("{sssi}", "verb", "cancel", "id", 1), &err);
    json_decref(r);
    close(fd);
    struct timespec ts = {0, 300000000L};
    nanosleep(&ts, NULL);
    kill(d, SIGTERM);
    waitpid(d, &status, 0);
    snprintf(db, sizeof db, "%s/carma.db", state);
    store *s;
    int64_t stored = -1;
    if (store_open(&s, db, &err) == 0) {
        stored = store_count(s, "tasks") - 1;
        store_close(s);
    }
    printf("submit: %2d client(s), %6d submissions in %.2f s = %8.0f/s durable; stored %lld%s\n",
           submitters, per * submitters, dt, per * submitters / dt, (long long)stored,
           bad || stored != per * submitters ? "  [ERROR]" : "");
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) || bad || stored != per * submitters;
}

int main(int argc, char **argv)
{
    int total = argc > 1 ? atoi(argv[1]) : 20000;
    int rc = 0;
    if (argc > 2)
        return one_round(total, atoi(argv[2]));
    int counts[] = {1, 8, 32};
    for (int i = 0; i < 3; i++)
        rc |= one_round(counts[i] == 1 ? total / 4 : total, counts[i]);
    return rc;
}
