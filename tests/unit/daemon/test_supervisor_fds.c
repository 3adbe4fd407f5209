/* test_supervisor_fds.c — the descriptors a task inherits: none of its daemon's (its socket,
 * database and lock; here, one left open across exec), only stdin, stdout and stderr; also
 * where close_range(2) is refused, as a container's seccomp profile or a kernel before 5.9
 * does (a filter here makes it fail with ENOSYS). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/supervisor.h"
#include "util/strutil.h"
#include "attempt_fixture.h"
#include "daemon_fixture.h"

#define LEAKY_FD 57 /* a descriptor of the daemon's that is not close-on-exec */

static char *env[] = {"PATH=/usr/bin:/bin", NULL};


/* close_range fails with ENOSYS from here on (this process and its children). */
static int refuse_close_range(void)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_close_range, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* In a child (the filter stays there): a daemon-like process with LEAKY_FD open launches a
 * task that lists its shell's descriptors, and waits for its supervisor. Exit status: 0 when
 * it ran, 2 when the filter could not be set, 1 otherwise. */
static int launch_listing(bool without_close_range)
{
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (without_close_range && (refuse_close_range() || syscall(__NR_close_range, 100, 100,
                                                                    0) == 0 || errno != ENOSYS))
            _exit(2);
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0 || dup2(fd, LEAKY_FD) != LEAKY_FD)
            _exit(1);
        launch_spec ls = {.dir = dir, .parent_fd = AT_FDCWD, .cwd = root, .env = env,
                          .kill_grace_s = 1, .task_umask = -1,
                          .command = "ls -m /proc/$$/fd; true"}; /* no pipe of its own */
        pid_t sup;
        carma_err err;
        if (supervisor_launch(&ls, &sup, &err))
            _exit(1);
        int status;
        _exit(waitpid(sup, &status, 0) == sup && WIFEXITED(status) ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void expect_only_stdio(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/stdout", dir);
    char *out = read_file(path, NULL, NULL);
    assert_non_null(out);
    if (strcmp(out, "0, 1, 2\n"))
        fail_msg("the task's shell has descriptors %s(only 0, 1, 2 expected)", out);
    free(out);
}

static void task_gets_stdio_only(void **state)
{
    (void)state;
    assert_int_equal(launch_listing(false), 0);
    expect_only_stdio();
}

static void task_gets_stdio_only_without_close_range(void **state)
{
    (void)state;
    int rc = launch_listing(true);
    if (rc == 2) {
        fprintf(stderr, "SKIP: no seccomp filter can be set here\n");
        return;
    }
    assert_int_equal(rc, 0);
    expect_only_stdio();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(task_gets_stdio_only, setup, teardown),
        cmocka_unit_test_setup_teardown(task_gets_stdio_only_without_close_range, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
