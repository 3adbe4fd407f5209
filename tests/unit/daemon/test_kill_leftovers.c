/* test_kill_leftovers.c — what a lost supervisor's task left in its process group is killed,
 * but never a group that only has the old id: not when the attempt was started before this
 * boot (a daemon restarted after a reboot, when every old pid may be another process's), and,
 * from root, only as the task's owner (a reused id of another user's group is refused). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/supervisor.h"

/* A process group of one sleeping process (its leader): its pid, the group's id. */
static pid_t group_leader(void)
{
    pid_t p = fork();
    if (p == 0) {
        setpgid(0, 0);
        pause();
        _exit(0);
    }
    assert_true(p > 0);
    setpgid(p, p); /* in both, so that the group exists whichever runs first */
    return p;
}

/* Whether p was killed by SIGKILL within about a second (reaped either way, killed if not). */
static bool was_killed(pid_t p)
{
    int st = 0;
    for (int i = 0; i < 100; i++) {
        if (waitpid(p, &st, WNOHANG) == p)
            return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
    return false;
}

/* An attempt directory whose `started` names pid, its time set to `when` (Unix seconds). */
static void attempt_dir(char *dir, size_t cap, pid_t pid, time_t when)
{
    snprintf(dir, cap, "/tmp/carma-leftovers-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/started", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%d\n", (int)pid);
    fclose(f);
    struct timespec t[2] = {{when, 0}, {when, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

static void remove_dir(const char *dir)
{
    char path[128];
    snprintf(path, sizeof path, "%s/started", dir);
    unlink(path);
    rmdir(dir);
}

static void a_group_started_this_boot_is_killed(void **state)
{
    (void)state;
    pid_t p = group_leader();
    char dir[64];
    attempt_dir(dir, sizeof dir, p, time(NULL));
    supervisor_kill_leftovers(dir, p, getuid());
    assert_true(was_killed(p));
    remove_dir(dir);
}

/* After a reboot the old pid is some new process's (every systemd service leads its own
 * group): a `started` older than the boot means nothing of the task can be left. */
static void an_attempt_from_before_this_boot_kills_nothing(void **state)
{
    (void)state;
    pid_t p = group_leader();
    char dir[64];
    attempt_dir(dir, sizeof dir, p, 1000000000); /* 2001: before any boot of this machine */
    supervisor_kill_leftovers(dir, p, getuid());
    assert_false(was_killed(p));
    remove_dir(dir);
}

/* From root, the kill goes as the task's owner: a group of another user's is not hit. */
static void root_kills_only_as_the_tasks_owner(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    pid_t p = group_leader(); /* root's, standing for a reused id */
    supervisor_kill_leftovers(NULL, p, 65534);
    assert_false(was_killed(p));
    p = group_leader();
    supervisor_kill_leftovers(NULL, p, 0); /* root's own task: its group is root's */
    assert_true(was_killed(p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_group_started_this_boot_is_killed),
        cmocka_unit_test(an_attempt_from_before_this_boot_kills_nothing),
        cmocka_unit_test(root_kills_only_as_the_tasks_owner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
