/* test_supervisor_records.c — what a supervisor leaves for the daemon is its attempt's own and
 * whole: an attempt directory that holds another attempt's files (a state database replaced,
 * task ids begun again) is moved aside, not taken over; on a full disk the start (the lock's
 * pid, `started`) and the result are written once there is room, never as short files (an
 * empty `result` read as a lost supervisor failed a task that was done). The full-disk tests
 * mount a 1 MiB tmpfs and are skipped where that is not allowed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/supervisor.h"
#include "daemon_fixture.h"

static char root[64], fs[96], dir[128], go[96];
static char *env[] = {"PATH=/usr/bin:/bin", NULL};
static bool mounted;

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/carma-suprec-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    snprintf(fs, sizeof fs, "%s/fs", root);
    snprintf(dir, sizeof dir, "%s/1.1", fs);
    snprintf(go, sizeof go, "%s/go", root);
    mounted = false;
    return mkdir(fs, 0700);
}

static int teardown(void **state)
{
    (void)state;
    if (mounted)
        umount2(fs, MNT_DETACH);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd);
}

static launch_spec spec(const char *command)
{
    return (launch_spec){.dir = dir, .parent_fd = AT_FDCWD, .command = command, .cwd = root,
                         .env = env, .kill_grace_s = 1, .task_umask = -1};
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void expect_text(const char *path, const char *want)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    buf[fread(buf, 1, sizeof buf - 1, f)] = '\0';
    fclose(f);
    assert_string_equal(buf, want);
}

/* Polls (10 s at most) while the attempt reads as running; reaps the supervisor when done. */
static sup_status wait_end(pid_t sup, sup_result *r, pid_t *task)
{
    sup_status s = SUP_RUNNING;
    for (int i = 0; i < 1000 && (s = supervisor_poll(dir, task, r)) == SUP_RUNNING; i++)
        sleep_ms(10);
    if (s == SUP_RUNNING)
        kill(sup, SIGKILL);
    waitpid(sup, NULL, 0);
    return s;
}

/* Cancels the attempt in d once its supervisor has written its pid (5 s at most): 0 or -1. */
static int cancel_when_ready(const char *d)
{
    carma_err err;
    int rc = -1;
    for (int i = 0; i < 500 && (rc = supervisor_cancel(d, &err)) != 0; i++)
        sleep_ms(10);
    return rc;
}

static void another_attempts_directory_is_set_aside(void **state)
{
    (void)state;
    char path[200];
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/result", dir);
    write_text(path, "exited 1\ncode 3\nsignal 0\ncancelled 0\noutput_over 0\n\n");
    snprintf(path, sizeof path, "%s/stdout", dir);
    write_text(path, "old\n");
    launch_spec ls = spec("echo new");
    pid_t sup, task = 0;
    carma_err err;
    assert_int_equal(supervisor_launch(&ls, &sup, &err), 0);
    sup_result r;
    assert_int_equal(wait_end(sup, &r, &task), SUP_ENDED);
    assert_true(task > 0 && r.status.exited);
    assert_int_equal(r.status.exit_code, 0); /* its own, not the old 3 */
    snprintf(path, sizeof path, "%s/stdout", dir);
    expect_text(path, "new\n");
    snprintf(path, sizeof path, "%s.replaced-1/stdout", dir); /* the old files are kept */
    expect_text(path, "old\n");

    /* One whose supervisor still runs (the old database's task): both run on. */
    ls = spec("sleep 30");
    pid_t old_sup, new_sup;
    assert_int_equal(supervisor_launch(&ls, &old_sup, &err), 0);
    assert_int_equal(supervisor_launch(&ls, &new_sup, &err), 0);
    snprintf(path, sizeof path, "%s.replaced-3", dir); /* -2: the `echo new` above */
    assert_int_equal(supervisor_poll(path, &task, &r), SUP_RUNNING);
    assert_int_equal(supervisor_poll(dir, &task, &r), SUP_RUNNING);
    assert_int_equal(cancel_when_ready(path), 0);
    assert_int_equal(cancel_when_ready(dir), 0);
    waitpid(old_sup, NULL, 0);
    assert_int_equal(wait_end(new_sup, &r, &task), SUP_ENDED);
    assert_true(r.cancelled);
}

/* Mounts a 1 MiB tmpfs on fs (skips the test when not allowed). */
static void mount_small_fs(void)
{
    if (mount("carma-test", fs, "tmpfs", 0, "size=1m,mode=0700")) {
        print_message("no tmpfs (%s): skipped\n", strerror(errno));
        skip();
    }
    mounted = true;
}

/* Fills fs up: the open filler, to be closed and removed to make room. */
static int fill_fs(void)
{
    char path[128], block[4096];
    snprintf(path, sizeof path, "%s/filler", fs);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    memset(block, 'x', sizeof block);
    while (write(fd, block, sizeof block) > 0)
        ;
    assert_int_equal(errno, ENOSPC);
    return fd;
}

static void make_room(int filler)
{
    char path[128];
    snprintf(path, sizeof path, "%s/filler", fs);
    assert_int_equal(ftruncate(filler, 0), 0);
    close(filler);
    unlink(path);
}

static void result_waits_for_room(void **state)
{
    (void)state;
    mount_small_fs();
    char command[200];
    snprintf(command, sizeof command, "while [ ! -e %s ]; do sleep 0.05; done; exit 0", go);
    launch_spec ls = spec(command);
    pid_t sup, task = 0;
    carma_err err;
    sup_result r;
    assert_int_equal(supervisor_launch(&ls, &sup, &err), 0);
    for (int i = 0; i < 500 && task == 0; i++) {
        assert_int_equal(supervisor_poll(dir, &task, &r), SUP_RUNNING);
        sleep_ms(10);
    }
    assert_true(task > 0);
    int filler = fill_fs();
    write_text(go, "");
    while (kill(task, 0) == 0) /* the supervisor reaps it, then writes its result */
        sleep_ms(10);
    /* While there is no room it still runs: its result is not lost (it was an empty file,
     * and the attempt read as lost). A slow machine may give it less than this to try. */
    for (int i = 0; i < 100; i++) {
        assert_int_equal(supervisor_poll(dir, &task, &r), SUP_RUNNING);
        sleep_ms(10);
    }
    make_room(filler);
    assert_int_equal(wait_end(sup, &r, &task), SUP_ENDED);
    assert_true(r.status.exited);
    assert_int_equal(r.status.exit_code, 0);
}

static void start_recorded_once_there_is_room(void **state)
{
    (void)state;
    mount_small_fs();
    assert_int_equal(mkdir(dir, 0700), 0);
    int filler = fill_fs();
    launch_spec ls = spec("sleep 30");
    pid_t sup, task = 0;
    carma_err err;
    sup_result r;
    assert_int_equal(supervisor_launch(&ls, &sup, &err), 0);
    char started[160]; /* a while for the start to meet the full disk (an empty file, once) */
    snprintf(started, sizeof started, "%s/started", dir);
    for (int i = 0; i < 100 && access(started, F_OK); i++)
        sleep_ms(10);
    make_room(filler);
    /* its pid, and its task's, are written once there is room: the task is not taken for
     * one never started, nor its supervisor for one that cannot be cancelled */
    for (int i = 0; i < 500 && task == 0; i++) {
        assert_int_equal(supervisor_poll(dir, &task, &r), SUP_RUNNING);
        sleep_ms(10);
    }
    assert_true(task > 0);
    assert_int_equal(cancel_when_ready(dir), 0);
    assert_int_equal(wait_end(sup, &r, &task), SUP_ENDED);
    assert_true(r.cancelled);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(another_attempts_directory_is_set_aside, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(result_waits_for_room, setup, teardown),
        cmocka_unit_test_setup_teardown(start_recorded_once_there_is_room, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
