/* test_supervisor.c — the per-attempt supervisor: exit status and stderr tail recorded, cancel
 * with SIGTERM then SIGKILL after the grace, a directory never launched, and a supervisor that
 * dies (its task dies with it, and the attempt reads as lost). */
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
#include <time.h>
#include <unistd.h>

#include "daemon/supervisor.h"
#include "daemon_fixture.h"

static char root[64], dir[128];
static char *env[] = {"PATH=/usr/bin:/bin", "MARK=from-env", NULL};

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/carma-sup-XXXXXX");
    assert_non_null(mkdtemp(root));
    snprintf(dir, sizeof dir, "%s/1.1", root);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd);
}


/* Polls until the attempt is no longer running (10 s at most); reaps the supervisor. */
static sup_status wait_end(pid_t sup, sup_result *r, pid_t *task_pid)
{
    sup_status s = SUP_RUNNING;
    for (int i = 0; i < 1000 && (s = supervisor_poll(dir, task_pid, r)) == SUP_RUNNING; i++)
        sleep_ms(10);
    waitpid(sup, NULL, 0);
    return s;
}

static launch_spec spec(const char *command, double grace)
{
    return (launch_spec){.dir = dir, .command = command, .cwd = root, .env = env,
                         .kill_grace_s = grace};
}

static void records_exit_and_stderr_tail(void **state)
{
    (void)state;
    launch_spec ls = spec("echo out; echo \"err $MARK $(pwd)\" >&2; exit 3", 1);
    pid_t sup;
    carma_err err;
    assert_int_equal(supervisor_launch(&ls, &sup, &err), 0);
    sup_result *r = malloc(sizeof *r);
    pid_t task = 0;
    assert_int_equal(wait_end(sup, r, &task), SUP_ENDED);
    assert_true(task > 0);
    assert_true(r->status.exited);
    assert_int_equal(r->status.exit_code, 3);
    assert_false(r->cancelled);
    char want[200];
    snprintf(want, sizeof want, "err from-env %s\n", root);
    assert_string_equal(r->tail, want);
    free(r);
}

static void cancel_escalates_to_sigkill(void **state)
{
    (void)state;
    /* The task ignores SIGTERM: the supervisor must SIGKILL it after the grace. */
    launch_spec ls = spec("trap '' TERM; echo ready; while :; do sleep 0.05; done", 0.3);
    pid_t sup;
    carma_err err;
    assert_int_equal(supervisor_launch(&ls, &sup, &err), 0);
    sup_result *r = malloc(sizeof *r);
    pid_t task = 0;
    for (int i = 0; i < 500 && supervisor_poll(dir, &task, r) == SUP_RUNNING && task == 0; i++)
        sleep_ms(10);
    sleep_ms(100);
    assert_int_equal(supervisor_cancel(dir, &err), 0);
    assert_int_equal(wait_end(sup, r, &task), SUP_ENDED);
    assert_true(r->cancelled);
    assert_false(r->status.exited);
    assert_int_equal(r->status.term_signal, SIGKILL);
    /* Cancelling an ended attempt is a no-op. */
    assert_int_equal(supervisor_cancel(dir, &err), 0);
    free(r);
}

static void never_started_and_lost(void **state)
{
    (void)state;
    sup_result *r = malloc(sizeof *r);
    pid_t task = 0;
    assert_int_equal(supervisor_poll(dir, &task, r), SUP_NEVER_STARTED);
    launch_spec ls = spec("sleep 30; true", 1); /* sh stays, sleep is its child */
    pid_t sup;
    carma_err err;
    assert_int_equal(supervisor_launch(&ls, &sup, &err), 0);
    for (int i = 0; i < 500 && task == 0; i++) {
        assert_int_equal(supervisor_poll(dir, &task, r), SUP_RUNNING);
        sleep_ms(10);
    }
    assert_true(task > 0);
    kill(sup, SIGKILL); /* the supervisor dies without writing a result */
    waitpid(sup, NULL, 0);
    assert_int_equal(supervisor_poll(dir, &task, r), SUP_LOST);
    /* ... and its task went with it (PR_SET_PDEATHSIG). */
    int gone = 0;
    for (int i = 0; i < 300 && !gone; i++) {
        gone = kill(task, 0) != 0;
        if (!gone) {
            char path[64], st = 0;
            snprintf(path, sizeof path, "/proc/%d/stat", (int)task);
            FILE *f = fopen(path, "r");
            if (f) {
                gone = fscanf(f, "%*d %*s %c", &st) == 1 && st == 'Z';
                fclose(f);
            }
            sleep_ms(10);
        }
    }
    assert_true(gone);
    /* What the task started (sh's child `sleep`) is ended with its process group. */
    supervisor_kill_leftovers(task);
    int group_gone = 0;
    for (int i = 0; i < 300 && !group_gone; i++) {
        group_gone = kill(-task, 0) != 0;
        if (!group_gone)
            sleep_ms(10);
    }
    assert_true(group_gone);
    free(r);
}

static void bad_working_directory_is_reported(void **state)
{
    (void)state;
    launch_spec ls = spec("true", 1);
    ls.cwd = "/nonexistent/carma";
    pid_t sup;
    carma_err err;
    assert_int_equal(supervisor_launch(&ls, &sup, &err), 0);
    sup_result *r = malloc(sizeof *r);
    pid_t task;
    assert_int_equal(wait_end(sup, r, &task), SUP_ENDED);
    assert_int_equal(r->status.exit_code, 126);
    assert_non_null(strstr(r->tail, "cannot enter working directory '/nonexistent/carma'"));
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(records_exit_and_stderr_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(cancel_escalates_to_sigkill, setup, teardown),
        cmocka_unit_test_setup_teardown(never_started_and_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_working_directory_is_reported, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
