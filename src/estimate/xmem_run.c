/* xmem_run.c — see xmem_run.h. The tracer writes to an inherited descriptor (fd 3) of a file
 * this process created, so a tracer running as another user needs no rights on its path. It
 * runs in a session of its own with no other descriptor of carma's, and what the script left
 * running is ended with the trace (xmem_session.c). */
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

#include "estimate/xmem_session.h"
#include "util/clock.h"
#include "util/datadir.h"
#include "util/strutil.h"
#include "util/usergroups.h"

/* The user the tracer runs as, and the environment that names them. */
typedef struct run_user {
    bool drop; /* false: ourselves, nothing changes */
    uid_t uid;
    gid_t gid;
    char home[PATH_MAX], name[256];
    gid_t *groups; /* their supplementary groups, as their task will run with (heap) */
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
    if (user_groups(u->name, u->gid, &u->groups, &u->ngroups))
        return carma_err_set(err, "out of memory");
    u->drop = true;
    return 0;
}

/* In the child: fd 3 = trace, stdout -> stderr, stderr -> pipe, stdin /dev/null (as the task
 * will have it: a script reading it must not wait on, or take, the terminal's input), fd 4 =
 * the files list if any, and no other descriptor (carma's own, or its caller's, are not the
 * script's to read or to hold open); in a session of its own; then exec the tracer. */
static void child(int trace_fd, int files_fd, int err_fd, char *const argv[], int argc,
                  int iterations, const char *pydir, const run_user *u, pid_t parent)
{
    int in = open("/dev/null", O_RDONLY);
    /* above 4 first, so that placing one cannot overwrite the other */
    int tf = fcntl(trace_fd, F_DUPFD, 5), ff = files_fd < 0 ? -1 : fcntl(files_fd, F_DUPFD, 5);
    if (in < 0 || tf < 0 || (files_fd >= 0 && ff < 0) || dup2(in, 0) < 0 ||
        dup2(err_fd, 2) < 0 || dup2(2, 1) < 0 || dup2(tf, 3) < 0 ||
        (ff >= 0 && dup2(ff, 4) < 0) || xmem_session_child(ff >= 0 ? 5 : 4))
        _exit(126);
    if (u->drop && (setgroups((size_t)u->ngroups, u->groups) || setgid(u->gid) ||
                    setuid(u->uid) || setuid(0) == 0))
        _exit(126); /* the last test: root must be gone for good */
    if (xmem_session_tie(parent)) /* after the change of user, which clears it */
        _exit(126);
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
    char **av = calloc((size_t)argc + 11, sizeof *av);
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
    if (ff >= 0) {
        av[k++] = (char *)"--files-fd";
        av[k++] = (char *)"4";
    }
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

/* How the wait for the tracer ended. */
typedef enum { TRACER_ENDED, TRACER_LATE, CARMA_STOPPED } drain_end;

/* Reads the child's stderr until the child has ended (not until the pipe closes: a process the
 * script left behind keeps it open, and a script that closed its stderr may still run), `limit`
 * seconds have passed, or carma was sent a stop signal. The child is not reaped. */
static drain_end drain(pid_t pid, int fd, double limit, char *reason, size_t cap, char *last,
                       size_t lcap)
{
    char buf[4096];
    size_t len = 0, after = 0; /* bytes read once it ended */
    bool ended = false;
    double deadline = clock_mono_s() + limit;
    for (;;) {
        if (xmem_session_signal())
            return CARMA_STOPPED;
        siginfo_t si;
        memset(&si, 0, sizeof si);
        /* WNOWAIT: left a zombie until what it left is ended (xmem_session_end) */
        int w = ended ? 0 : waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
        if ((w == 0 && si.si_pid == pid) || (w < 0 && errno != EINTR))
            ended = true; /* what it wrote before its end is read below, without waiting */
        double left = deadline - clock_mono_s();
        if (left <= 0 && !ended)
            return TRACER_LATE;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        /* short waits while it runs: its end is seen by waitid, not by the pipe */
        int wait_ms = ended ? 0 : left < 0.05 ? (int)(left * 1000) + 1 : 50;
        /* once it ended, the pipe holds at most its capacity of what it wrote; more is a
         * process it left behind, not waited for */
        int r = ended && after > 65536 ? 0 : poll(&p, fd >= 0 ? 1 : 0, wait_ms);
        if (r <= 0) {
            if (ended && (r == 0 || errno != EINTR))
                break;
            continue;
        }
        ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fd = -1; /* closed: wait for the end alone */
            if (ended)
                break;
            continue;
        }
        len += (size_t)n;
        after += ended ? (size_t)n : 0;
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
    return TRACER_ENDED;
}

/* A temporary file with no name (carma interrupted, by Ctrl-C or a kill, leaves none behind):
 * read back through its descriptor, whose offset the tracer's writes share. */
static int nameless_file(carma_err *err)
{
    const char *tmp = getenv("TMPDIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/carma-trace-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return carma_err_set(err, "cannot create a trace file in %s", tmp && *tmp ? tmp : "/tmp");
    unlink(path);
    return fd;
}

/* The tracer's list of the files the script read (carma_trace/files.py): its lines without
 * the closing "end", or NULL when it gave none or said it could not ("-"). */
static char *read_files(int fd)
{
    FILE *f = lseek(fd, 0, SEEK_SET) < 0 ? NULL : fdopen(dup(fd), "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0; /* longer: not cached */
    char *buf = malloc(cap + 1);
    if (buf)
        n = fread(buf, 1, cap, f);
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = '\0';
    char *end = n >= 4 && !strcmp(buf + n - 4, "end\n") ? buf + n - 4 : NULL;
    if (!end || (end != buf && end[-1] != '\n') || strlen(buf) != n) {
        free(buf);
        return NULL;
    }
    *end = '\0';
    return buf;
}

int xmem_run(char *const argv[], int argc, int iterations, const xmem_coeffs *c,
             xmem_estimate *e, carma_err *err)
{
    return xmem_run_files(argv, argc, iterations, c, e, NULL, err);
}

static int run_as(const run_user *u, double limit, char *const argv[], int argc,
                  int iterations, const xmem_coeffs *c, xmem_estimate *e, char **files,
                  carma_err *err);

int xmem_run_files(char *const argv[], int argc, int iterations, const xmem_coeffs *c,
                   xmem_estimate *e, char **files, carma_err *err)
{
    run_user u = {0};
    double limit;
    if (files)
        *files = NULL;
    if (argc < 1)
        return carma_err_set(err, "no command to trace");
    int rc = trace_timeout(&limit, err) || target_user(&u, err)
                 ? -1
                 : run_as(&u, limit, argv, argc, iterations, c, e, files, err);
    free(u.groups);
    return rc;
}

/* xmem_run_files for user u, the tracer stopped past `limit` seconds. */
static int run_as(const run_user *u, double limit, char *const argv[], int argc,
                  int iterations, const xmem_coeffs *c, xmem_estimate *e, char **files,
                  carma_err *err)
{
    char pydir[PATH_MAX];
    if (carma_data_path("python", pydir, sizeof pydir, err))
        return -1;
    int fd = nameless_file(err);
    if (fd < 0)
        return -1;
    int lfd = files ? nameless_file(err) : -1;
    if (files && lfd < 0) {
        close(fd);
        return -1;
    }
    int pfd[2];
    if (pipe(pfd)) {
        close(fd);
        if (lfd >= 0)
            close(lfd);
        return carma_err_set(err, "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    xmem_session ses;
    xmem_session_begin(&ses);
    pid_t parent = getpid(), pid = fork();
    int fork_errno = errno;
    if (pid == 0) {
        close(pfd[0]);
        child(fd, lfd, pfd[1], argv, argc, iterations, pydir, u, parent);
    }
    xmem_session_forked(&ses);
    close(pfd[1]);
    char reason[512] = "", last[512] = "";
    int st = -1, rc = 0; /* -1: not an exit, "the tracer failed" */
    drain_end how = pid > 0 ? drain(pid, pfd[0], limit, reason, sizeof reason, last, sizeof last)
                            : TRACER_ENDED;
    if (pid > 0) {
        /* what the script left running (or, past the limit or stopped, the tracer too) */
        int left = xmem_session_end(&ses, pid);
        if (left > 0)
            fprintf(stderr, "carma: %d process%s the traced script started could not be "
                    "stopped\n", left, left == 1 ? "" : "es");
        else if (left < 0)
            fprintf(stderr, "carma: processes the traced script started may still run (no "
                    "/proc or no subreaper to find them by)\n");
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    close(pfd[0]);
    int sig = xmem_session_finish(&ses); /* a stop signal: carma ends there by default */
    if (pid < 0)
        rc = carma_err_set(err, "fork: %s", strerror(fork_errno));
    else if (sig)
        rc = carma_err_set(err, "stopped by signal %d while tracing", sig);
    else if (how == TRACER_LATE)
        rc = carma_err_set(err, "the tracer ran past %g s before the script's step %d; stopped",
                           limit, iterations);
    else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (*reason)
            rc = carma_err_set(err, "%s", reason);
        else if (WIFEXITED(st) && WEXITSTATUS(st) == 126)
            rc = carma_err_set(err, "cannot start the tracer as uid %u", (unsigned)u->uid);
        else
            rc = carma_err_set(err, "the tracer failed%s%s", *last ? ": " : "", last);
    }
    FILE *f = NULL;
    if (!rc && (lseek(fd, 0, SEEK_SET) < 0 || !(f = fdopen(fd, "r"))))
        rc = carma_err_set(err, "cannot read the trace back: %s", strerror(errno));
    mtrace_events t;
    if (!rc && !(rc = mtrace_loadf(f, "the trace", &t, err))) {
        rc = xmem_estimate_trace(&t, c, e, err);
        mtrace_free(&t);
    }
    if (f)
        fclose(f);
    else
        close(fd);
    if (!rc && files)
        *files = read_files(lfd);
    if (lfd >= 0)
        close(lfd);
    return rc;
}
