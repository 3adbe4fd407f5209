/* test_sigreset.c — sig_reset_all (util/sigreset.h): a child forked from a process that blocks
 * and handles signals (the supervisor: SIGTERM, SIGINT, SIGALRM, SIGCHLD) ends up with none
 * blocked, handled or ignored; and a signal sent to the child before the reset (a cancel's
 * SIGTERM to the task's new process group, between its fork and its exec) takes its default
 * action, never the parent's handler, which would swallow the cancel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/sigreset.h"

static volatile sig_atomic_t handled;

static void on_signal(int sig)
{
    (void)sig;
    handled = 1;
}

/* In a forked child: SIGTERM and SIGUSR1 handled and blocked, SIGUSR2 and SIGHUP ignored, as
 * a parent leaves them. */
static void parent_like_signals(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGUSR2, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGUSR1);
    sigprocmask(SIG_BLOCK, &block, NULL);
}

static int child_status(void (*body)(void))
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        body();
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void pending_term_then_reset(void)
{
    parent_like_signals();
    raise(SIGTERM); /* blocked: pending, as a cancel that came before the reset */
    sig_reset_all();
    _exit(handled ? 3 : 0); /* alive: the parent's handler took it */
}

static void a_pending_signal_takes_its_default_action(void **state)
{
    (void)state;
    int status = child_status(pending_term_then_reset);
    if (!WIFSIGNALED(status))
        fail_msg("the child survived a pending SIGTERM (exit %d%s)", WEXITSTATUS(status),
                 WEXITSTATUS(status) == 3 ? ": the inherited handler took it" : "");
    assert_int_equal(WTERMSIG(status), SIGTERM);
}

/* 0 when nothing is blocked, handled or ignored any more. */
static void reset_leaves_nothing(void)
{
    parent_like_signals();
    sig_reset_all();
    sigset_t now;
    sigprocmask(SIG_SETMASK, NULL, &now);
    int bad = 0;
    for (int sig = 1; sig < 32; sig++) {
        struct sigaction sa;
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa))
            continue;
        if (sigismember(&now, sig) || sa.sa_handler != SIG_DFL)
            bad = sig;
    }
    _exit(bad);
}

static void nothing_blocked_handled_or_ignored(void **state)
{
    (void)state;
    int status = child_status(reset_leaves_nothing);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status))
        fail_msg("signal %d is still blocked, handled or ignored", WEXITSTATUS(status));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_pending_signal_takes_its_default_action),
        cmocka_unit_test(nothing_blocked_handled_or_ignored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
