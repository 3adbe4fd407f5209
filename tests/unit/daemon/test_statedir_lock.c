/* test_statedir_lock.c — the state directory's lock belongs to the daemon process alone: a
 * child it forked (as a supervisor is, a moment before the daemon stops) does not keep it, so a
 * daemon started as soon as the last one exited takes the directory; while a daemon holds it,
 * another is refused, naming the holder's pid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/daemon_int.h"

static char root[64], state_dir[128], sock[128];
static daemon_options opts;

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/carma-lock-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    snprintf(state_dir, sizeof state_dir, "%s/state", root);
    snprintf(sock, sizeof sock, "%s/carma.sock", root);
    memset(&opts, 0, sizeof opts);
    opts.state_dir = state_dir;
    opts.socket_path = sock;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) ? -1 : 0;
}

/* Opens the state directory as a daemon does; 0, or -1 with err. */
static int open_as_daemon(daemon_state *d, carma_err *err)
{
    memset(d, 0, sizeof *d);
    d->opts = &opts;
    d->state_fd = d->lock_fd = d->attempts_fd = -1;
    return d_statedir_open(d, err);
}

/* In a child: open the directory, fork a grandchild that keeps every descriptor for `hold_s`,
 * report its pid through the pipe, exit without closing anything. */
static pid_t daemon_with_child(int hold_s, pid_t *grandchild)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        daemon_state d;
        carma_err err;
        if (open_as_daemon(&d, &err))
            _exit(1);
        pid_t g = fork();
        if (g == 0) {
            sleep((unsigned)hold_s);
            _exit(0);
        }
        ssize_t n = write(p[1], &g, sizeof g);
        _exit(n == (ssize_t)sizeof g ? 0 : 1);
    }
    close(p[1]);
    assert_int_equal(read(p[0], grandchild, sizeof *grandchild), (ssize_t)sizeof *grandchild);
    close(p[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return pid;
}

static void a_forked_child_does_not_keep_the_lock(void **state)
{
    (void)state;
    pid_t g = 0;
    daemon_with_child(5, &g);
    assert_int_equal(kill(g, 0), 0); /* it still holds the old daemon's descriptors */
    daemon_state d;
    carma_err err;
    if (open_as_daemon(&d, &err))
        fail_msg("a new daemon was refused while the old one's child lives: %s", err.msg);
    /* held now: another daemon (another process) is refused, naming this one */
    pid_t other = fork();
    if (other == 0) {
        daemon_state d2;
        carma_err e2;
        char want[64];
        snprintf(want, sizeof want, "in use by another carma daemon (pid %d)", (int)getppid());
        _exit(open_as_daemon(&d2, &e2) == 0 ? 2 : strstr(e2.msg, want) ? 0 : 3);
    }
    int status;
    assert_int_equal(waitpid(other, &status, 0), other);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    d_statedir_close(&d);
    kill(g, SIGKILL); /* not our child: init reaps it */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_forked_child_does_not_keep_the_lock, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
