/* test_supervisor.c — the per-attempt supervisor: exit status and stderr tail recorded, cancel
 * with SIGTERM then SIGKILL after the grace, a directory never launched, and a supervisor that
 * dies (its task dies with it, and the attempt reads as lost); and what it must withstand: a
 * cancelled task's own SIGTERM handler gets its grace, a supervisor that cannot be looked at
 * (no descriptor left) is not taken for dead, a task run as another user still dies with its
 * supervisor, a symlink planted in the attempt directory is not followed, and the attempt's
 * files are private (the logs to the submitter). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/supervisor.h"
#include "util/strutil.h"
#include "attempt_fixture.h"
#include "daemon_fixture.h"

static char *env[] = {"PATH=/usr/bin:/bin", "MARK=from-env", NULL};



/* Polls until the attempt is no longer running (10 s at most); a supervisor still running
 * then is killed with its task (a failure, not a hang). Reaps the supervisor. */
static sup_status wait_end(pid_t sup, sup_result *r, pid_t *task_pid)
{
    sup_status s = SUP_RUNNING;
    for (int i = 0; i < 1000 && (s = supervisor_poll(dir, task_pid, r)) == SUP_RUNNING; i++)
        sleep_ms(10);
    if (s == SUP_RUNNING) {
        kill(sup, SIGKILL);
        if (*task_pid > 0)
            kill(-*task_pid, SIGKILL);
    }
    waitpid(sup, NULL, 0);
    return s;
}

/* Launches ls and waits for its result (the caller frees it); *task = the task's pid. */
static sup_result *run_to_end(const launch_spec *ls, pid_t *task)
{
    pid_t sup;
    carma_err err;
    assert_int_equal(supervisor_launch(ls, &sup, &err), 0);
    sup_result *r = malloc(sizeof *r);
    assert_non_null(r);
    assert_int_equal(wait_end(sup, r, task), SUP_ENDED);
    return r;
}

static launch_spec spec(const char *command, double grace)
{
    return (launch_spec){.dir = dir, .parent_fd = AT_FDCWD, .command = command, .cwd = root,
                         .env = env, .kill_grace_s = grace, .task_umask = -1};
}

static void records_exit_and_stderr_tail(void **state)
{
    (void)state;
    launch_spec ls = spec("echo out; echo \"err $MARK $(pwd)\" >&2; exit 3", 1);
    pid_t task = 0;
    sup_result *r = run_to_end(&ls, &task);
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
    assert_false(r->time_limit); /* the user's cancel, not the limit's */
    assert_false(r->status.exited);
    assert_int_equal(r->status.term_signal, SIGKILL);
    /* Cancelling an ended attempt is a no-op. */
    assert_int_equal(supervisor_cancel(dir, &err), 0);
    free(r);
}

/* Its time limit: the supervisor cancels the task itself and says the limit did it, since
 * the result file's time (the kernel's coarse clock) may fall a few ms short of the limit and
 * the daemon would take the end for a user's cancel (found: 1 task in 24 ended cancelled). */
static void time_limit_cancels_and_says_so(void **state)
{
    (void)state;
    launch_spec ls = spec("sleep 30", 5);
    ls.time_limit_s = 0.3;
    pid_t task = 0;
    sup_result *r = run_to_end(&ls, &task);
    assert_true(r->cancelled);
    assert_true(r->time_limit);
    assert_int_equal(r->status.term_signal, SIGTERM);
    free(r);
}

/* A result written by an older carma's supervisor (no output_over line) reads as before, and
 * the stderr tail keeps its own leading blank line. */
static void result_of_an_older_supervisor(void **state)
{
    (void)state;
    assert_int_equal(mkdir(dir, 0700), 0);
    char path[200];
    snprintf(path, sizeof path, "%s/result", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("exited 1\ncode 2\nsignal 0\ncancelled 1\n\n\n  tail\n", f);
    fclose(f);
    sup_result *r = malloc(sizeof *r);
    pid_t task = 0;
    assert_int_equal(supervisor_poll(dir, &task, r), SUP_ENDED);
    assert_int_equal(r->status.exit_code, 2);
    assert_true(r->cancelled);
    assert_false(r->time_limit);
    assert_int_equal(r->output_over_mib, 0);
    assert_string_equal(r->tail, "\n  tail\n");
    f = fopen(path, "w");
    fputs("exited 1\ncode 0\nsignal 0\ncancelled 1\noutput_over 7\n\nx", f);
    fclose(f);
    assert_int_equal(supervisor_poll(dir, &task, r), SUP_ENDED);
    assert_int_equal(r->output_over_mib, 7);
    assert_string_equal(r->tail, "x");
    free(r);
}

/* max_output_bytes: the logs get that much of stdout and stderr together, then a line saying
 * why they stop; the task is cancelled (its SIGTERM handler's output dropped too). */
static void output_past_the_limit_cancels(void **state)
{
    (void)state;
    launch_spec ls = spec("trap 'head -c 3000000 /dev/zero; exit 0' TERM; echo first; "
                          "head -c 1500000 /dev/zero >&2; i=0; "
                          "while [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done",
                          5); /* ends by itself: a failure, not a hang */
    ls.max_output_bytes = 1 << 20;
    pid_t task = 0;
    sup_result *r = run_to_end(&ls, &task);
    assert_true(r->cancelled);
    assert_int_equal(r->output_over_mib, 1);
    struct stat so, se;
    char path[200];
    snprintf(path, sizeof path, "%s/stdout", dir);
    assert_int_equal(stat(path, &so), 0);
    snprintf(path, sizeof path, "%s/stderr", dir);
    assert_int_equal(stat(path, &se), 0);
    assert_int_equal(so.st_size, 6); /* "first\n" */
    assert_true(se.st_size > (1 << 20) - 6 && se.st_size < (1 << 20) + 200);
    static const char line[] = "\ncarma: the task's output passed max_output_mib (1 MiB); the "
                               "rest is dropped and the task cancelled (unless it has ended)\n";
    size_t n = sizeof line - 1; /* the stderr tail ends with it (the output before: NULs) */
    assert_true(r->tail_len >= n);
    assert_memory_equal(r->tail + r->tail_len - n, line, n);
    free(r);
}

/* A task that ignores SIGTERM and keeps its pipes full still gets its SIGKILL when the grace
 * is over (the signals reach a supervisor that always has output to copy). */
static void a_flood_does_not_keep_the_kill_out(void **state)
{
    (void)state;
    /* pipes enlarged to 1 MiB (F_SETPIPE_SZ) and written a MiB at a time: never empty */
    launch_spec ls = spec("exec /usr/bin/python3 -c 'import fcntl, os, signal\n"
                          "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                          "for fd in (1, 2):\n"
                          "    try: fcntl.fcntl(fd, 1031, 1 << 20)\n"
                          "    except OSError: pass\n"
                          "b = bytes(1 << 20)\n"
                          "while True:\n"
                          "    os.write(1, b)\n"
                          "    os.write(2, b)\n'", 0.3);
    ls.max_output_bytes = 1 << 20;
    /* supervisor and task on one CPU: the task refills its pipes while the supervisor waits */
    cpu_set_t all, one;
    assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            CPU_SET(c, &one);
            break;
        }
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    pid_t sup;
    carma_err err;
    int launched = supervisor_launch(&ls, &sup, &err);
    sched_setaffinity(0, sizeof all, &all);
    assert_int_equal(launched, 0);
    sup_result *r = malloc(sizeof *r);
    pid_t task = 0;
    assert_int_equal(wait_end(sup, r, &task), SUP_ENDED);
    assert_false(r->status.exited);
    assert_int_equal(r->status.term_signal, SIGKILL);
    assert_int_equal(r->output_over_mib, 1);
    free(r);
}

/* A user's cancel first: the output its SIGTERM handler writes past the limit is dropped, but
 * the cancel stays the user's (no output_over). */
static void a_cancel_first_is_not_the_limit(void **state)
{
    (void)state;
    launch_spec ls = spec("trap 'head -c 3000000 /dev/zero; exit 0' TERM; "
                          "i=0; while [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done", 5);
    ls.max_output_bytes = 1 << 20;
    pid_t sup;
    carma_err err;
    assert_int_equal(supervisor_launch(&ls, &sup, &err), 0);
    sup_result *r = malloc(sizeof *r);
    pid_t task = 0;
    for (int i = 0; i < 500 && task == 0; i++) {
        supervisor_poll(dir, &task, r);
        sleep_ms(10);
    }
    sleep_ms(200); /* its trap is set */
    assert_int_equal(supervisor_cancel(dir, &err), 0);
    assert_int_equal(wait_end(sup, r, &task), SUP_ENDED);
    assert_true(r->cancelled);
    assert_int_equal(r->output_over_mib, 0);
    char path[200];
    struct stat so;
    snprintf(path, sizeof path, "%s/stdout", dir);
    assert_int_equal(stat(path, &so), 0);
    assert_true(so.st_size <= 1 << 20); /* what passed the limit is dropped all the same */
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
    supervisor_kill_leftovers(dir, task, getuid());
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
    pid_t task = 0;
    sup_result *r = run_to_end(&ls, &task);
    assert_int_equal(r->status.exit_code, 126);
    assert_non_null(strstr(r->tail, "cannot enter working directory '/nonexistent/carma'"));
    free(r);
}

/* Waits (10 s at most) until path exists. */
static bool wait_file(const char *path)
{
    for (int i = 0; i < 1000; i++) {
        if (access(path, F_OK) == 0)
            return true;
        sleep_ms(10);
    }
    return false;
}

/* The task is not sh's only command, so sh does not exec it: SIGTERM (sent to the whole group)
 * ends the shell at once, while its child runs its checkpoint handler. That handler must get
 * the grace, not a SIGKILL as soon as the shell is gone. */
static void cancel_lets_the_task_checkpoint(void **state)
{
    (void)state;
    launch_spec ls = spec("true; sh -c 'trap \"sleep 0.3; echo saved > ckpt; exit 0\" TERM; "
                          "touch ready; while :; do sleep 0.05; done'",
                          10);
    pid_t sup;
    carma_err err;
    assert_int_equal(supervisor_launch(&ls, &sup, &err), 0);
    char ready[200], ckpt[200];
    snprintf(ready, sizeof ready, "%s/ready", root);
    snprintf(ckpt, sizeof ckpt, "%s/ckpt", root);
    assert_true(wait_file(ready));
    assert_int_equal(supervisor_cancel(dir, &err), 0);
    sup_result *r = malloc(sizeof *r);
    pid_t task = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(wait_end(sup, r, &task), SUP_ENDED);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(r->cancelled);
    assert_int_equal(access(ckpt, F_OK), 0);
    /* ... and the supervisor did not sit out the whole grace once the group was gone. */
    assert_true(t1.tv_sec - t0.tv_sec < 5);
    free(r);
}

/* Launches `sleep 30` and waits until its pid is known. */
static pid_t launch_sleeper(launch_spec *ls, pid_t *task)
{
    pid_t sup;
    carma_err err;
    assert_int_equal(supervisor_launch(ls, &sup, &err), 0);
    sup_result *r = malloc(sizeof *r);
    *task = 0;
    for (int i = 0; i < 500 && *task == 0; i++) {
        assert_int_equal(supervisor_poll(dir, task, r), SUP_RUNNING);
        sleep_ms(10);
    }
    free(r);
    assert_true(*task > 0);
    return sup;
}

/* With no descriptor left (EMFILE), the attempt's files cannot be opened: that says nothing
 * about the supervisor, which must not be reported dead (the daemon would fail a healthy task
 * and kill its process group). */
static void no_descriptor_left_is_not_a_dead_supervisor(void **state)
{
    (void)state;
    launch_spec ls = spec("sleep 30", 1);
    pid_t task, sup = launch_sleeper(&ls, &task);
    struct rlimit old, low;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    low = old;
    low.rlim_cur = 64;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    int fds[64], n = 0;
    while (n < 64 && (fds[n] = open("/dev/null", O_RDONLY)) >= 0)
        n++;
    sup_result *r = malloc(sizeof *r);
    pid_t seen = 0;
    sup_status s = supervisor_poll(dir, &seen, r);
    for (int i = 0; i < n; i++)
        close(fds[i]);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_int_equal(s, SUP_UNKNOWN);
    assert_int_equal(supervisor_poll(dir, &seen, r), SUP_RUNNING);
    assert_int_equal(seen, task);
    kill(sup, SIGTERM);
    assert_int_equal(wait_end(sup, r, &seen), SUP_ENDED);
    free(r);
}

/* True once pid is gone (or a zombie), within 3 s. */
static bool gone_soon(pid_t pid)
{
    for (int i = 0; i < 300; i++) {
        if (kill(pid, 0) != 0)
            return true;
        char path[64], st = 0;
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (f) {
            bool zombie = fscanf(f, "%*d %*s %c", &st) == 1 && st == 'Z';
            fclose(f);
            if (zombie)
                return true;
        }
        sleep_ms(10);
    }
    return false;
}

static gid_t nobody_groups[] = {65534};

/* A task run as another user (a root daemon runs each task as its submitter) dies with its
 * supervisor, as one run as the daemon's user does: the parent-death signal is set after the
 * switch of user, which clears it. */
static void task_of_another_user_dies_with_its_supervisor(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        fprintf(stderr, "SKIP: switching users needs root\n");
        return;
    }
    assert_int_equal(chmod(root, 0755), 0); /* nobody's working directory */
    launch_spec ls = spec("sleep 30", 1);
    ls.switch_user = true;
    ls.uid = 65534;
    ls.gid = 65534;
    ls.groups = nobody_groups;
    ls.ngroups = 1;
    pid_t task, sup = launch_sleeper(&ls, &task);
    /* `started` names the task once it is forked, before its switch of user and its exec:
     * looked at until it has become `sleep` (3 s at most) */
    char path[64], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)task);
    for (int i = 0; i < 300 && strcmp(comm, "sleep\n"); i++) {
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        assert_non_null(fgets(comm, sizeof comm, f));
        fclose(f);
        if (strcmp(comm, "sleep\n"))
            sleep_ms(10);
    }
    assert_string_equal(comm, "sleep\n"); /* a lone simple command replaces the shell */
    snprintf(path, sizeof path, "/proc/%d", (int)task);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_uid, 65534); /* the task runs as nobody */
    kill(sup, SIGKILL);
    waitpid(sup, NULL, 0);
    bool gone = gone_soon(task);
    if (!gone)
        kill(task, SIGKILL);
    assert_true(gone);
}

/* Whoever could write to the attempt directory must not get a file of root's chowned to the
 * submitter, or truncated, through a symlink planted where a log goes. */
static void planted_symlink_is_not_followed(void **state)
{
    (void)state;
    char victim[200], link[200];
    snprintf(victim, sizeof victim, "%s/victim", root);
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    fputs("precious\n", f);
    fclose(f);
    assert_int_equal(chmod(victim, 0600), 0);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(link, sizeof link, "%s/stdout", dir);
    assert_int_equal(symlink(victim, link), 0);
    launch_spec ls = spec("echo overwritten", 1);
    if (geteuid() == 0) {
        ls.switch_user = true;
        ls.uid = ls.gid = 65534;
        ls.groups = nobody_groups;
        ls.ngroups = 1;
    }
    pid_t sup;
    carma_err err;
    assert_int_equal(supervisor_launch(&ls, &sup, &err), -1);
    assert_non_null(strstr(err.msg, "stdout"));
    struct stat sb;
    assert_int_equal(stat(victim, &sb), 0);
    assert_int_equal(sb.st_uid, geteuid());
    assert_int_equal(sb.st_size, 9);
    /* A symlink in place of the attempt directory is refused too, by path or by its name in
     * its parent (as the daemon creates it, in attempts/). */
    assert_int_equal(unlink(link), 0);
    snprintf(link, sizeof link, "%s/lock", dir);
    unlink(link);
    assert_int_equal(rmdir(dir), 0);
    assert_int_equal(symlink(root, dir), 0);
    assert_int_equal(supervisor_launch(&ls, &sup, &err), -1);
    assert_non_null(strstr(err.msg, dir));
    assert_non_null(strstr(err.msg, "symbolic link"));
    ls.parent_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(ls.parent_fd >= 0);
    assert_int_equal(supervisor_launch(&ls, &sup, &err), -1);
    close(ls.parent_fd);
    assert_non_null(strstr(err.msg, root));
    assert_non_null(strstr(err.msg, "symbolic link"));
}

static void expect_mode(const char *name, unsigned mode, uid_t uid)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    if ((sb.st_mode & 07777) != mode || sb.st_uid != uid)
        fail_msg("%s: mode %03o uid %u, want %03o uid %u", path, sb.st_mode & 07777,
                 (unsigned)sb.st_uid, mode, (unsigned)uid);
}

/* The result holds the last 4 KiB of stderr (secrets, often): the attempt's files are the
 * daemon's alone, but for the logs, which are the submitter's alone. */
static void attempt_files_are_private(void **state)
{
    (void)state;
    launch_spec ls = spec("echo secret >&2", 1);
    uid_t owner = geteuid();
    if (owner == 0) {
        assert_int_equal(chmod(root, 0755), 0);
        ls.switch_user = true;
        ls.uid = ls.gid = owner = 65534;
        ls.groups = nobody_groups;
        ls.ngroups = 1;
    }
    mode_t old = umask(022);
    pid_t sup, task;
    carma_err err;
    assert_int_equal(supervisor_launch(&ls, &sup, &err), 0);
    umask(old);
    sup_result *r = malloc(sizeof *r);
    assert_int_equal(wait_end(sup, r, &task), SUP_ENDED);
    free(r);
    struct stat sb;
    assert_int_equal(stat(dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    expect_mode("result", 0600, geteuid());
    expect_mode("started", 0600, geteuid());
    expect_mode("lock", 0600, geteuid());
    expect_mode("stdout", 0600, owner);
    expect_mode("stderr", 0600, owner);
}

/* A daemon started with stdin closed gets fd 0 for the attempt's directory or lock: the
 * supervisor must not lose it when it points 0, 1 and 2 at /dev/null. */
static void launch_with_stdin_closed(void **state)
{
    (void)state;
    int saved = dup(0); /* -1: it is closed already */
    close(0);
    launch_spec ls = spec("echo hi", 1);
    pid_t sup, task;
    carma_err err;
    int rc = supervisor_launch(&ls, &sup, &err);
    if (saved >= 0) {
        dup2(saved, 0);
        close(saved);
    }
    assert_int_equal(rc, 0);
    sup_result *r = malloc(sizeof *r);
    assert_int_equal(wait_end(sup, r, &task), SUP_ENDED);
    assert_true(r->status.exited);
    assert_int_equal(r->status.exit_code, 0);
    free(r);
    char path[300];
    snprintf(path, sizeof path, "%s/stdout", dir);
    char *out = read_file(path, NULL, NULL);
    assert_non_null(out);
    assert_string_equal(out, "hi\n");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(records_exit_and_stderr_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(cancel_escalates_to_sigkill, setup, teardown),
        cmocka_unit_test_setup_teardown(never_started_and_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(result_of_an_older_supervisor, setup, teardown),
        cmocka_unit_test_setup_teardown(time_limit_cancels_and_says_so, setup, teardown),
        cmocka_unit_test_setup_teardown(output_past_the_limit_cancels, setup, teardown),
        cmocka_unit_test_setup_teardown(a_flood_does_not_keep_the_kill_out, setup, teardown),
        cmocka_unit_test_setup_teardown(a_cancel_first_is_not_the_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_working_directory_is_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(cancel_lets_the_task_checkpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(no_descriptor_left_is_not_a_dead_supervisor, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(task_of_another_user_dies_with_its_supervisor, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(planted_symlink_is_not_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(attempt_files_are_private, setup, teardown),
        cmocka_unit_test_setup_teardown(launch_with_stdin_closed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
