/* supervisor.c — the per-attempt supervisor process (the daemon's view of it is in
 * supervisor_view.c). Every file of the attempt is opened relative to the attempt directory's
 * descriptor, never through a symlink (util/safefs.h): a root daemon must not chown, truncate
 * or read a file someone planted there. */
#include "daemon/supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/outpump.h"
#include "daemon/shellcmd.h"
#include "util/clock.h"
#include "util/fdclose.h"
#include "util/safefs.h"
#include "util/sigreset.h"

static volatile sig_atomic_t cancel_requested, kill_due;

static void on_cancel(int sig)
{
    (void)sig;
    cancel_requested = 1;
}

static void on_alarm(int sig)
{
    (void)sig;
    kill_due = 1;
}

static void on_child(int sig)
{
    (void)sig; /* only to wake sigsuspend and ppoll */
}

/* Writes name in the directory dfd atomically (a new tmp file, fsync, rename); mode 0600.
 * -1 (errno set) when a step fails, and then nothing is renamed: a short file read as the
 * whole one made a full disk's empty `result` a lost supervisor (a done task failed). */
static int write_file_atomic(int dfd, const char *name, const char *data, size_t len)
{
    char tmp[256];
    snprintf(tmp, sizeof tmp, ".%s.tmp", name);
    unlinkat(dfd, tmp, 0); /* a stale one, from a supervisor killed before its rename */
    int fd = safefs_openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return -1;
    bool ok = outpump_write_all(fd, data, len) && fsync(fd) == 0;
    int e = errno; /* the first failure's, kept through the clean-up */
    if (close(fd) && ok) {
        ok = false;
        e = errno;
    }
    if (ok && renameat(dfd, tmp, dfd, name)) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        unlinkat(dfd, tmp, 0);
        errno = e;
    }
    return ok ? 0 : -1;
}

/* Whether a write failed for want of room, which may come back. */
static bool no_room(void)
{
    return errno == ENOSPC || errno == EDQUOT;
}

/* What the start leaves for the daemon: the supervisor's pid in its lock file (what a cancel
 * signals) and the task's in `started` (it ran: never launched again). On a full disk they
 * are written again at each turn of run_task's wait until there is room. */
typedef struct start_record {
    int lockfd;
    pid_t task;
    bool pid_done, started_done;
} start_record;

static bool record_start(int dfd, start_record *r)
{
    char text[32];
    if (!r->pid_done) {
        int n = snprintf(text, sizeof text, "%d\n", (int)getpid());
        r->pid_done = ftruncate(r->lockfd, 0) == 0 && pwrite(r->lockfd, text, (size_t)n, 0) == n;
    }
    if (!r->started_done && r->task > 0) {
        int n = snprintf(text, sizeof text, "%d\n", (int)r->task);
        r->started_done = write_file_atomic(dfd, "started", text, (size_t)n) == 0;
    }
    return r->pid_done && (r->started_done || r->task <= 0);
}

/* Closes every descriptor above 2 except those in keep (sorted ascending): whatever the daemon
 * had open (its socket, database, lock, a descriptor it inherited) is not the task's. */
static void close_others(const int *keep, int nkeep)
{
    unsigned lo = 3;
    for (int i = 0; i < nkeep; i++) {
        if (keep[i] >= (int)lo) {
            if (keep[i] > (int)lo)
                fd_close_span(lo, (unsigned)keep[i] - 1);
            lo = (unsigned)keep[i] + 1;
        }
    }
    fd_close_span(lo, ~0U);
}

static void sort_fds(int *a, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (a[j] < a[i]) {
                int t = a[i];
                a[i] = a[j];
                a[j] = t;
            }
}

/* The task's side of the fork: becomes the task. Never returns. */
static void exec_task(const launch_spec *spec, pid_t supervisor, int outfd, int errfd)
{
    setpgid(0, 0);
    sig_reset_all();
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC); /* its copy as 0 stays open */
    if (devnull >= 0)
        dup2(devnull, 0);
    dup2(outfd, 1);
    dup2(errfd, 2);
    char msg[512];
    if (spec->switch_user) {
        if (setgroups((size_t)spec->ngroups, spec->groups) || setgid(spec->gid) ||
            setuid(spec->uid)) {
            int n = snprintf(msg, sizeof msg, "carma: cannot switch to uid %u: %s\n",
                             (unsigned)spec->uid, strerror(errno));
            outpump_write_all(2, msg, (size_t)n);
            _exit(126);
        }
    }
    /* After the switch of user, which clears it; and the parent checked after it is set, in
     * case the supervisor died before. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != supervisor)
        _exit(125);
    if (spec->task_umask >= 0)
        umask((mode_t)spec->task_umask);
    struct rlimit rl;
    if (spec->task_nofile > 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
        (rlim_t)spec->task_nofile < rl.rlim_cur) {
        rl.rlim_cur = (rlim_t)spec->task_nofile;
        setrlimit(RLIMIT_NOFILE, &rl); /* lowering a soft limit cannot fail */
    }
    if (chdir(spec->cwd)) {
        int n = snprintf(msg, sizeof msg, "carma: cannot enter working directory '%s': %s\n",
                         spec->cwd, strerror(errno));
        outpump_write_all(2, msg, (size_t)n);
        _exit(126);
    }
    char *line = (char *)spec->command;
    if (shellcmd_can_exec(line)) {
        size_t len = strlen(line);
        char *with = malloc(len + 6); /* the supervisor is single-threaded: malloc is safe */
        if (with) {
            memcpy(with, "exec ", 5);
            memcpy(with + 5, line, len + 1);
            line = with;
        }
    }
    char *argv[] = {"sh", "-c", line, NULL};
    execve("/bin/sh", argv, spec->env);
    int n = snprintf(msg, sizeof msg, "carma: cannot run /bin/sh: %s\n", strerror(errno));
    outpump_write_all(2, msg, (size_t)n);
    _exit(127);
}

static size_t read_tail(int dfd, const char *name, char *buf, size_t cap)
{
    int fd = safefs_openat(dfd, name, O_RDONLY, 0);
    if (fd < 0)
        return 0;
    struct stat sb;
    size_t n = 0;
    if (fstat(fd, &sb) == 0) {
        off_t off = sb.st_size > (off_t)cap ? sb.st_size - (off_t)cap : 0;
        ssize_t r = pread(fd, buf, cap, off);
        n = r > 0 ? (size_t)r : 0;
    }
    close(fd);
    return n;
}

/* After a cancelled task's own process has exited: the rest of its process group gets the
 * rest of the grace to exit on its own (a training script's checkpoint-on-SIGTERM often runs
 * in a child of the task's shell, which SIGTERM ends at once). Returns when the group is empty
 * or the grace is over. The supervisor is a child subreaper, so the group's processes that
 * exit become its zombies and are reaped here (a zombie still counts as a member). The
 * signals are blocked but while waiting (ppoll), as in run_task. */
static void wait_group_gone(pid_t pgid, outpump *out, const sigset_t *unblocked)
{
    while (!kill_due) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (kill(-pgid, 0) && errno == ESRCH)
            return;
        struct timespec ts = {0, 20 * 1000000L};
        outpump_wait(out, &ts, unblocked); /* SIGALRM (the grace is over) cuts it short */
    }
}

/* Starts the grace timer: SIGALRM after kill_grace_s. */
static void arm_grace(double grace_s)
{
    struct itimerval it = {{0, 0}, {0, 0}};
    double g = grace_s > 0.001 ? grace_s : 0.001;
    it.it_value.tv_sec = (time_t)g;
    it.it_value.tv_usec = (suseconds_t)((g - (double)(time_t)g) * 1e6);
    setitimer(ITIMER_REAL, &it, NULL);
}

/* Forks the task and waits for it, copying its output to the logs (outpump.h), cancelling it
 * on SIGTERM or once its output passes the limit: SIGTERM to its process group, SIGKILL once
 * the grace is over. Returns its wait status. The signals it acts on (SIGTERM, SIGINT,
 * SIGALRM, SIGCHLD) stay blocked but inside ppoll, so that a cancel arriving between the look
 * at the flags and the wait is never lost. */
static int run_task(const launch_spec *spec, int dfd, start_record *rec, outpump *out,
                    const int w[2], const sigset_t *unblocked, bool *for_output,
                    bool *for_limit)
{
    *for_output = *for_limit = false;
    pid_t me = getpid();
    pid_t child = fork();
    if (child == 0)
        exec_task(spec, me, w[0], w[1]);
    outpump_parent(out, w);
    char text[64];
    if (child < 0) {
        int n = snprintf(text, sizeof text, "carma: cannot fork the task: %s\n",
                         strerror(errno));
        outpump_write_all(out->file[1], text, (size_t)n);
        outpump_close(out);
        return 127 << 8;
    }
    setpgid(child, child);
    rec->task = child;
    bool recorded = record_start(dfd, rec);
    bool term_sent = false, kill_sent = false;
    int status = 0;
    double deadline = spec->time_limit_s > 0 ? clock_mono_s() + spec->time_limit_s : INFINITY;
    for (;;) {
        /* First whether it ended: one that passed the limit with its last bytes and exited
         * on its own was not stopped for it. */
        pid_t r = waitpid(child, &status, WNOHANG);
        if (r == child)
            break;
        if (r < 0 && errno != EINTR) {
            status = 127 << 8;
            break;
        }
        double left = deadline - clock_mono_s();
        if (left <= 0 && !term_sent) {
            /* the time limit: a cancel, as the daemon's would be, said in the result (the
             * result file's time, coarse, may be a few ms short of the limit) */
            *for_limit = !cancel_requested;
            cancel_requested = 1;
        }
        if ((cancel_requested || out->over) && !term_sent) {
            *for_output = !cancel_requested; /* a cancel first is the user's, whatever follows */
            kill(-child, SIGTERM);
            term_sent = true;
            arm_grace(spec->kill_grace_s);
        }
        if (kill_due && !kill_sent) {
            kill(-child, SIGKILL);
            kill_sent = true;
        }
        /* until output, SIGCHLD, SIGTERM, SIGALRM or the time limit; a second while the
         * start is not recorded */
        double wait_s = !term_sent && isfinite(left) ? left : INFINITY;
        if (!recorded && !(recorded = record_start(dfd, rec)))
            wait_s = fmin(wait_s, 1.0);
        struct timespec ts = clock_interval(isfinite(wait_s) ? wait_s : 0);
        outpump_wait(out, isfinite(wait_s) ? &ts : NULL, unblocked);
    }
    if (term_sent)
        wait_group_gone(child, out, unblocked);
    /* Whatever the task left in its group goes with it. */
    kill(-child, SIGKILL);
    outpump_close(out);
    return status;
}

/* The supervisor's life. Never returns. */
/* A descriptor the supervisor keeps, moved above 2 when it is below (a daemon started with
 * stdin, stdout or stderr closed gets one of those numbers for it), since 0, 1 and 2 become
 * /dev/null. The copy shares the open file, and with it the lock. */
static int above_stdio(int fd)
{
    int moved = fd > 2 ? fd : fcntl(fd, F_DUPFD_CLOEXEC, 3);
    return moved >= 0 ? moved : fd;
}

static void run_supervisor(const launch_spec *spec, int dfd, int lockfd, int outfd, int errfd)
{
    setsid();
    dfd = above_stdio(dfd);
    lockfd = above_stdio(lockfd);
    outfd = above_stdio(outfd);
    errfd = above_stdio(errfd);
    int keep[4] = {dfd, lockfd, outfd, errfd};
    sort_fds(keep, 4);
    close_others(keep, 4);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        if (devnull > 2)
            close(devnull);
    }
    sig_reset_all();
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGALRM);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, &old);
    struct sigaction sa = {0};
    sa.sa_handler = on_cancel;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_child;
    sigaction(SIGCHLD, &sa, NULL);
    signal(SIGHUP, SIG_IGN);
    /* The task's descendants that exit are ours to reap, so an empty process group can be told
     * from one holding zombies (wait_group_gone). */
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    start_record rec = {.lockfd = lockfd};
    record_start(dfd, &rec);
    outpump out;
    int w[2];
    outpump_open(&out, outfd, errfd, spec->max_output_bytes, w);
    outpump_set_floor(&out, spec->min_free_bytes);
    bool for_output, for_limit;
    int status = run_task(spec, dfd, &rec, &out, w, &old, &for_output, &for_limit);
    close(outfd);
    close(errfd);
    char tail[SUPERVISOR_TAIL_MAX], text[SUPERVISOR_TAIL_MAX + 256];
    size_t tail_len = read_tail(dfd, "stderr", tail, sizeof tail);
    int n = snprintf(text, sizeof text,
                     "exited %d\ncode %d\nsignal %d\ncancelled %d\noutput_over %lld\n\n",
                     WIFEXITED(status) ? 1 : 0, WIFEXITED(status) ? WEXITSTATUS(status) : 0,
                     WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                     for_limit ? 2 : cancel_requested || for_output ? 1 : 0,
                     for_output ? (long long)((out.limit + (1 << 20) - 1) >> 20) : 0LL);
    memcpy(text + n, tail, tail_len);
    /* what the daemon records of the task: on a full disk it waits for room, the lock held
     * (the attempt reads as running), rather than leave the end unknown */
    while (write_file_atomic(dfd, "result", text, (size_t)n + tail_len) && no_room())
        nanosleep(&(struct timespec){1, 0}, NULL);
    close(lockfd);
    _exit(0);
}

/* A log of the task's: private to its submitter (it may hold secrets), appended to. */
static int open_log(int dfd, const char *dir, const char *name, const launch_spec *spec,
                    carma_err *err)
{
    int fd = safefs_openat(dfd, name, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0)
        return carma_err_set(err, "%s/%s: %s", dir, name, strerror(errno));
    struct stat sb;
    /* the mode before the owner: once the file is the submitter's, a chmod needs CAP_FOWNER,
     * which the systemd unit does not grant (every other user's task failed to launch) */
    const char *why = fstat(fd, &sb) ? strerror(errno)
                      : !S_ISREG(sb.st_mode) ? "not a regular file"
                      : fchmod(fd, 0600) ? strerror(errno)
                      : spec->switch_user && fchown(fd, spec->uid, spec->gid) ? strerror(errno)
                                                                              : NULL;
    if (why) {
        carma_err_set(err, "%s/%s: %s", dir, name, why);
        close(fd);
        return -1;
    }
    return fd;
}

/* Moves the attempt directory `name` of `parent` aside, to NAME.replaced-K (a fresh K), and
 * sets its modification time to now: the purge (purge.c) keeps it keep_attempt_logs_days from
 * then, not from its old attempt's end (a rename leaves it as it was). */
static int set_aside(const launch_spec *spec, int parent, const char *name, carma_err *err)
{
    char aside[4200];
    for (int k = 1; k < 1000; k++) {
        snprintf(aside, sizeof aside, "%s.replaced-%d", name, k);
        if (renameat2(parent, name, parent, aside, RENAME_NOREPLACE) == 0) {
            utimensat(parent, aside, NULL, AT_SYMLINK_NOFOLLOW); /* best effort: the age */
            if (spec->set_aside) /* for the daemon's log */
                snprintf(spec->set_aside, spec->set_aside_cap, "%s", aside);
            return 0;
        }
        if (errno != EEXIST)
            break;
    }
    return carma_err_set(err, "%s holds another attempt's files and cannot be moved aside: %s",
                         spec->dir, strerror(errno));
}

/* Opens (creating it) the attempt directory and takes its lock: 0 with *dfd and *lockfd. A
 * directory that already holds an attempt's files (`started`, `result`, or a supervisor
 * holding the lock) is another attempt's: the state database was replaced and task ids began
 * again. Its result would have been taken for the new attempt's (a new task ended at once
 * with an old one's exit status while it ran on), so it is moved aside first. */
static int open_attempt(const launch_spec *spec, int *dfd, int *lockfd, carma_err *err)
{
    const char *slash = strrchr(spec->dir, '/');
    bool relative = spec->parent_fd != AT_FDCWD && slash;
    int parent = relative ? spec->parent_fd : AT_FDCWD;
    const char *name = relative ? slash + 1 : spec->dir;
    if (spec->set_aside && spec->set_aside_cap)
        spec->set_aside[0] = '\0';
    for (int tries = 0; tries < 2; tries++) {
        if ((*dfd = safefs_dir(parent, name, 0700, SAFEFS_PRIVATE, err)) < 0)
            return relative ? carma_err_prefix(err, "%.*s", (int)(slash - spec->dir), spec->dir)
                            : carma_err_prefix(err, "attempt directory");
        *lockfd = safefs_openat(*dfd, "lock", O_RDWR | O_CREAT, 0600);
        if (*lockfd < 0) {
            carma_err_set(err, "%s/lock: %s", spec->dir, strerror(errno));
            close(*dfd);
            return -1;
        }
        bool held = flock(*lockfd, LOCK_EX | LOCK_NB) != 0;
        if (!held && faccessat(*dfd, "started", F_OK, AT_SYMLINK_NOFOLLOW) &&
            faccessat(*dfd, "result", F_OK, AT_SYMLINK_NOFOLLOW) && errno == ENOENT)
            return 0;
        close(*lockfd);
        close(*dfd);
        if (tries == 0 && set_aside(spec, parent, name, err))
            return -1;
    }
    return carma_err_set(err, "%s: held by another supervisor", spec->dir);
}

int supervisor_launch(const launch_spec *spec, pid_t *sup_pid, carma_err *err)
{
    int dfd = -1, lockfd = -1;
    if (open_attempt(spec, &dfd, &lockfd, err))
        return -1;
    int outfd = open_log(dfd, spec->dir, "stdout", spec, err);
    int errfd = outfd < 0 ? -1 : open_log(dfd, spec->dir, "stderr", spec, err);
    if (outfd < 0 || errfd < 0) {
        if (outfd >= 0)
            close(outfd);
        close(lockfd);
        close(dfd);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0)
        run_supervisor(spec, dfd, lockfd, outfd, errfd);
    int saved = errno;
    close(lockfd); /* the child's copy keeps the lock */
    close(outfd);
    close(errfd);
    close(dfd);
    if (pid < 0)
        return carma_err_set(err, "fork: %s", strerror(saved));
    *sup_pid = pid;
    return 0;
}

