/* supervisor_view.c — the daemon's view of an attempt's supervisor (supervisor.h): whether it
 * runs, ended (its result) or was lost, read from the attempt directory's files; a cancel
 * request to it; the leftovers of a lost one. Each file is opened relative to the directory,
 * never through a symlink, and a file that cannot be read for another reason than its absence
 * (no descriptor left, say) makes the answer SUP_UNKNOWN, never a dead supervisor. */
#include "daemon/supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/safefs.h"
#include "util/strutil.h"

/* The daemon's looks at an attempt directory. Each says 1 or 0 (yes or no; a missing file is
 * a no), or -1 when it could not look (the file could not be opened or read for another reason
 * than its absence: no descriptor left, say): that is no answer, and never read as "dead". */

/* Opens the attempt directory: its descriptor, -2 when it does not exist, -1 on error. */
static int open_attempt_dir(const char *dir)
{
    int dfd = safefs_openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY, 0);
    return dfd >= 0 ? dfd : errno == ENOENT ? -2 : -1;
}

/* Whether the supervisor holds its lock; *fd_out (when not NULL) keeps the lock file open. */
static int lock_held(int dfd, int *fd_out)
{
    int fd = safefs_openat(dfd, "lock", O_RDONLY, 0);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    int held = flock(fd, LOCK_SH | LOCK_NB) == 0 ? 0 : errno == EWOULDBLOCK ? 1 : -1;
    if (fd_out && held == 1)
        *fd_out = fd;
    else
        close(fd); /* drops our shared lock, if we got it */
    return held;
}

/* Reads a small file whole into buf (NUL-terminated): its length, or -2 when absent, -1 on
 * error. */
static ssize_t read_small(int dfd, const char *name, char *buf, size_t cap)
{
    int fd = safefs_openat(dfd, name, O_RDONLY, 0);
    if (fd < 0)
        return errno == ENOENT ? -2 : -1;
    size_t len = 0;
    ssize_t r = 1;
    while (len < cap - 1 && r != 0) {
        r = read(fd, buf + len, cap - 1 - len);
        if (r < 0 && errno != EINTR)
            break;
        len += r > 0 ? (size_t)r : 0;
    }
    close(fd);
    if (r < 0 && errno != EINTR)
        return -1;
    buf[len] = '\0';
    return (ssize_t)len;
}

/* The task's pid from `started` (0 when not there yet): 0, or -1 when it could not look. */
static int read_started(int dfd, pid_t *pid)
{
    char text[32];
    ssize_t n = read_small(dfd, "started", text, sizeof text);
    int64_t v = 0;
    *pid = 0;
    if (n == -1)
        return -1;
    if (n >= 0 && parse_i64(text, &v) == 0 && v > 0)
        *pid = (pid_t)v;
    return 0;
}

static int read_result(int dfd, sup_result *res)
{
    char text[SUPERVISOR_TAIL_MAX + 256];
    ssize_t len = read_small(dfd, "result", text, sizeof text);
    if (len < 0)
        return len == -2 ? 0 : -1;
    int exited = 0, code = 0, sig = 0, cancelled = 0, used = 0, more = 0;
    long long over = 0;
    /* (%n after each number, not a "\n" directive, which would eat the blank line and the
     * tail's own leading white space) */
    bool ok = sscanf(text, "exited %d\ncode %d\nsignal %d\ncancelled %d%n", &exited, &code,
                     &sig, &cancelled, &used) == 4 && used > 0 && text[used] == '\n';
    used += ok;
    /* "output_over N" came later: a supervisor of an older carma writes none */
    if (ok && !strncmp(text + used, "output_over ", 12)) {
        ok = sscanf(text + used, "output_over %lld%n", &over, &more) == 1 && more > 0 &&
             text[used + more] == '\n';
        used += ok ? more + 1 : 0;
    }
    ok = ok && text[used] == '\n';
    if (!ok)
        return 0; /* not whole: as if not there yet */
    used++;
    memset(res, 0, sizeof *res);
    res->status = (exit_status){exited != 0, code, sig};
    res->cancelled = cancelled != 0;
    res->time_limit = cancelled == 2;
    res->output_over_mib = over > 0 ? over : 0;
    size_t n = (size_t)len - (size_t)used;
    if (n > SUPERVISOR_TAIL_MAX)
        n = SUPERVISOR_TAIL_MAX;
    memcpy(res->tail, text + used, n);
    res->tail[n] = '\0';
    res->tail_len = n;
    /* written once, by rename, as the task ended: its time is the end's, also for a task
     * that ended while the daemon was away */
    struct stat sb;
    if (fstatat(dfd, "result", &sb, AT_SYMLINK_NOFOLLOW) == 0)
        res->ended_at = (double)sb.st_mtim.tv_sec + (double)sb.st_mtim.tv_nsec * 1e-9;
    return 1;
}

static sup_status poll_dir(int dfd, pid_t *task_pid, sup_result *res)
{
    int ended, held;
    if (read_started(dfd, task_pid) || (ended = read_result(dfd, res)) < 0)
        return SUP_UNKNOWN;
    if (ended)
        return SUP_ENDED;
    if ((held = lock_held(dfd, NULL)) != 0)
        return held > 0 ? SUP_RUNNING : SUP_UNKNOWN;
    /* The supervisor may have finished between the two looks. */
    if ((ended = read_result(dfd, res)) != 0)
        return ended > 0 ? SUP_ENDED : SUP_UNKNOWN;
    if (read_started(dfd, task_pid))
        return SUP_UNKNOWN;
    return *task_pid > 0 ? SUP_LOST : SUP_NEVER_STARTED;
}

sup_status supervisor_poll(const char *dir, pid_t *task_pid, sup_result *res)
{
    *task_pid = 0;
    int dfd = open_attempt_dir(dir);
    if (dfd < 0)
        return dfd == -2 ? SUP_NEVER_STARTED : SUP_UNKNOWN;
    sup_status s = poll_dir(dfd, task_pid, res);
    close(dfd);
    return s;
}

int supervisor_cancel(const char *dir, carma_err *err)
{
    int dfd = open_attempt_dir(dir);
    if (dfd == -2)
        return 0; /* never launched */
    if (dfd < 0)
        return carma_err_set(err, "%s: %s", dir, strerror(errno));
    int lockfd = -1, held = lock_held(dfd, &lockfd);
    close(dfd);
    if (held == 0)
        return 0; /* already ended: its result is (or will be) there */
    if (held < 0)
        return carma_err_set(err, "%s/lock: %s", dir, strerror(errno));
    char text[32];
    ssize_t n = pread(lockfd, text, sizeof text - 1, 0);
    close(lockfd);
    int64_t sup_pid = 0;
    if (n > 0)
        text[n] = '\0';
    if (n <= 0 || parse_i64(text, &sup_pid) || sup_pid <= 0)
        return carma_err_set(err, "%s/lock: no supervisor pid", dir);
    if (kill((pid_t)sup_pid, SIGTERM))
        return carma_err_set(err, "cannot signal supervisor %d: %s", (int)sup_pid,
                             strerror(errno));
    return 0;
}

/* When this machine booted (/proc/stat's btime, Unix seconds); NAN when it cannot tell. */
static double boot_time(void)
{
    FILE *f = fopen("/proc/stat", "r");
    char line[256];
    long long btime = -1;
    while (f && btime < 0 && fgets(line, sizeof line, f))
        if (sscanf(line, "btime %lld", &btime) != 1)
            btime = -1;
    if (f)
        fclose(f);
    return btime > 0 ? (double)btime : NAN;
}

/* Whether the attempt's task was started before this boot (its `started` file is older): no
 * process of it can be left, and its pid may name another group now. */
static bool started_before_boot(const char *dir)
{
    int dfd = open_attempt_dir(dir);
    struct stat sb;
    bool before = dfd >= 0 && fstatat(dfd, "started", &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
                  (double)sb.st_mtim.tv_sec < boot_time();
    if (dfd >= 0)
        close(dfd);
    return before;
}

void supervisor_kill_leftovers(const char *dir, pid_t task_pid, uid_t uid)
{
    if (task_pid <= 1 || (dir && started_before_boot(dir)))
        return;
    if (geteuid() != 0 || uid == 0) {
        kill(-task_pid, SIGKILL);
        return;
    }
    /* As the task's owner: were the group gone and its id taken by another's, the kill is
     * refused (EPERM) rather than ending, say, a login session after a long absence. */
    pid_t child = fork();
    if (child == 0) {
        if (setresuid(uid, uid, uid) == 0)
            kill(-task_pid, SIGKILL);
        _exit(0);
    }
    while (child > 0 && waitpid(child, NULL, 0) < 0 && errno == EINTR)
        ;
}
