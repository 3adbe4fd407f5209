/* xmem_run.c — see xmem_run.h. The tracer writes to an inherited descriptor (fd 3) of a file
 * this process created, so a tracer running as another user needs no rights on its path. */
#include "estimate/xmem_run.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/datadir.h"
#include "util/strutil.h"

/* The user the tracer runs as, and the environment that names them. */
typedef struct run_user {
    bool drop; /* false: ourselves, nothing changes */
    uid_t uid;
    gid_t gid;
    char home[PATH_MAX], name[256];
    gid_t groups[256]; /* their supplementary groups, as their task will run with */
    int ngroups;
} run_user;

/* Ourselves when not root; SUDO_UID/SUDO_GID's user under root, with their home directory
 * and name from the passwd database (sudo leaves root's HOME, where the user's ~/.local and
 * caches are not). A SUDO_UID with no passwd entry is refused: sudo itself refuses a user it
 * cannot find, so such a uid is forged or its account gone, and carma cannot know where that
 * user's packages and caches live. */
static int target_user(run_user *u, carma_err *err)
{
    memset(u, 0, sizeof *u);
    if (geteuid() != 0)
        return 0;
    const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
    int64_t uid, gid;
    if (!su || !sg || parse_i64(su, &uid) || parse_i64(sg, &gid) || uid <= 0 || gid < 0 ||
        uid >= (uid_t)-1 || gid >= (gid_t)-1)
        return carma_err_set(err, "will not run a training script as root: run carma as the "
                                  "user who submits it (or through sudo, which names them)");
    errno = 0;
    const struct passwd *pw = getpwuid((uid_t)uid);
    /* getpwuid(3): these mean "no such user"; anything else is a failed look-up */
    bool failed = errno && errno != ENOENT && errno != ESRCH && errno != EBADF && errno != EPERM;
    if (!pw && failed)
        return carma_err_set(err, "cannot look up SUDO_UID %lld's user: %s", (long long)uid,
                             strerror(errno));
    if (!pw || !pw->pw_dir || !*pw->pw_dir || !pw->pw_name || !*pw->pw_name)
        return carma_err_set(err, "SUDO_UID %lld has no passwd entry (with a home directory) "
                                  "to run the training script as: run carma as the user who "
                                  "submits it", (long long)uid);
    if (strlen(pw->pw_dir) >= sizeof u->home || strlen(pw->pw_name) >= sizeof u->name)
        return carma_err_set(err, "uid %lld's home directory or name is too long",
                             (long long)uid);
    strcpy(u->home, pw->pw_dir);
    strcpy(u->name, pw->pw_name);
    u->uid = (uid_t)uid;
    u->gid = (gid_t)gid;
    u->ngroups = (int)(sizeof u->groups / sizeof *u->groups);
    if (getgrouplist(u->name, u->gid, u->groups, &u->ngroups) < 0) { /* more than it holds */
        u->groups[0] = u->gid;
        u->ngroups = 1;
    }
    u->drop = true;
    return 0;
}

/* In the child: fd 3 = trace, stdout -> stderr, stderr -> pipe; then exec the tracer. */
static void child(int trace_fd, int err_fd, char *const argv[], int argc, int iterations,
                  const char *pydir, const run_user *u)
{
    if (dup2(err_fd, 2) < 0 || dup2(2, 1) < 0 || dup2(trace_fd, 3) < 0)
        _exit(126);
    if (u->drop && (setgroups((size_t)u->ngroups, u->groups) || setgid(u->gid) ||
                    setuid(u->uid) || setuid(0) == 0))
        _exit(126); /* the last test: root must be gone for good */
    if (u->drop && (setenv("HOME", u->home, 1) || setenv("USER", u->name, 1) ||
                    setenv("LOGNAME", u->name, 1)))
        _exit(126);
    const char *old = getenv("PYTHONPATH");
    char *pp = NULL;
    if (old && *old) {
        pp = malloc(strlen(pydir) + strlen(old) + 2);
        if (pp)
            sprintf(pp, "%s:%s", pydir, old);
    }
    setenv("PYTHONPATH", pp ? pp : pydir, 1);
    char iters[16];
    snprintf(iters, sizeof iters, "%d", iterations);
    char **av = calloc((size_t)argc + 9, sizeof *av);
    if (!av)
        _exit(126);
    int k = 0;
    av[k++] = (char *)XMEM_PYTHON;
    av[k++] = (char *)"-m";
    av[k++] = (char *)"carma_trace";
    av[k++] = (char *)"--iterations";
    av[k++] = iters;
    av[k++] = (char *)"--out-fd";
    av[k++] = (char *)"3";
    av[k++] = (char *)"--";
    for (int i = 0; i < argc; i++)
        av[k++] = argv[i];
    execv(XMEM_PYTHON, av);
    fprintf(stderr, "carma_trace: cannot run %s: %s\n", XMEM_PYTHON, strerror(errno));
    _exit(127);
}

/* One complete line of the child's stderr: passed through to ours, its last "carma_trace: "
 * line kept as the reason and its last line of any kind for the error message. */
static void take_line(char *line, char *reason, size_t cap, char *last, size_t lcap)
{
    if (!strncmp(line, "carma_trace: ", 13))
        snprintf(reason, cap, "%.500s", line + 13);
    else
        fprintf(stderr, "%s\n", line);
    if (*line)
        snprintf(last, lcap, "%.500s", line);
}

/* The tracer's time limit: $CARMA_TRACE_TIMEOUT when set, else XMEM_TIMEOUT_S. */
static int trace_timeout(double *s, carma_err *err)
{
    const char *v = getenv("CARMA_TRACE_TIMEOUT");
    *s = XMEM_TIMEOUT_S;
    if (!v)
        return 0;
    if (parse_double(v, s) || !(*s > 0) || *s > XMEM_TIMEOUT_MAX_S)
        return carma_err_set(err, "CARMA_TRACE_TIMEOUT must be a number of seconds over 0 and "
                                  "at most %d (fractions allowed), got '%.40s'",
                             XMEM_TIMEOUT_MAX_S, v);
    return 0;
}

/* Reads the child's stderr until it closes; false when `limit` seconds passed first. */
static bool drain(int fd, double limit, char *reason, size_t cap, char *last, size_t lcap)
{
    char buf[4096];
    size_t len = 0;
    double deadline = clock_mono_s() + limit;
    for (;;) {
        double left = deadline - clock_mono_s();
        if (left <= 0)
            return false;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue; /* the deadline check ends it */
        ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        char *start = buf, *nl;
        while ((nl = strchr(start, '\n'))) {
            *nl = '\0';
            take_line(start, reason, cap, last, lcap);
            start = nl + 1;
        }
        len = strlen(start);
        memmove(buf, start, len + 1);
        if (len == sizeof buf - 1) { /* a line longer than the buffer: pass it on in pieces */
            take_line(buf, reason, cap, last, lcap);
            len = 0;
        }
    }
    if (len)
        take_line(buf, reason, cap, last, lcap);
    return true;
}

int xmem_run(char *const argv[], int argc, int iterations, const xmem_coeffs *c,
             xmem_estimate *e, carma_err *err)
{
    run_user u;
    double limit;
    if (argc < 1)
        return carma_err_set(err, "no command to trace");
    if (trace_timeout(&limit, err) || target_user(&u, err))
        return -1;
    char pydir[PATH_MAX];
    if (carma_data_path("python", pydir, sizeof pydir, err))
        return -1;
    const char *tmp = getenv("TMPDIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/carma-trace-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return carma_err_set(err, "cannot create a trace file in %s", tmp && *tmp ? tmp : "/tmp");
    int pfd[2];
    if (pipe(pfd)) {
        close(fd);
        unlink(path);
        return carma_err_set(err, "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        child(fd, pfd[1], argv, argc, iterations, pydir, &u);
    }
    close(pfd[1]);
    close(fd);
    char reason[512] = "", last[512] = "";
    bool in_time = pid > 0 && drain(pfd[0], limit, reason, sizeof reason, last, sizeof last);
    close(pfd[0]);
    if (pid > 0 && !in_time)
        kill(pid, SIGKILL); /* DataLoader workers end with their parent */
    int st = 0, rc = 0;
    if (pid < 0)
        rc = carma_err_set(err, "fork: %s", strerror(errno));
    else if (!in_time) {
        waitpid(pid, &st, 0);
        rc = carma_err_set(err, "the tracer ran past %g s before the script's step %d; stopped",
                           limit, iterations);
    } else if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (*reason)
            rc = carma_err_set(err, "%s", reason);
        else if (WIFEXITED(st) && WEXITSTATUS(st) == 126)
            rc = carma_err_set(err, "cannot start the tracer as uid %u", (unsigned)u.uid);
        else
            rc = carma_err_set(err, "the tracer failed%s%s", *last ? ": " : "", last);
    }
    mtrace_events t;
    if (!rc && !(rc = mtrace_load(path, &t, err))) {
        rc = xmem_estimate_trace(&t, c, e, err);
        mtrace_free(&t);
    }
    unlink(path);
    return rc;
}
