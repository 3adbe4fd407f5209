/* supervisor.c — the per-attempt supervisor process and the daemon's view of it. */
#include "daemon/supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/strutil.h"

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

static void path_in(char *buf, size_t cap, const char *dir, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* Writes dir/name atomically (tmp file, fsync, rename). */
static int write_file_atomic(const char *dir, const char *name, const char *data, size_t len)
{
    char tmp[4096], final[4096];
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
    path_in(final, sizeof final, dir, name);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    write_all(fd, data, len);
    fsync(fd);
    close(fd);
    return rename(tmp, final);
}

static void reset_signals(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);
}

/* Closes every descriptor above 2 except those in keep (sorted ascending). */
static void close_others(const int *keep, int nkeep)
{
    unsigned lo = 3;
    for (int i = 0; i < nkeep; i++) {
        if (keep[i] >= (int)lo) {
            if (keep[i] > (int)lo)
                close_range(lo, (unsigned)keep[i] - 1, 0);
            lo = (unsigned)keep[i] + 1;
        }
    }
    close_range(lo, ~0U, 0);
}

static void sort3(int *a)
{
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
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
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != supervisor)
        _exit(125);
    reset_signals();
    int devnull = open("/dev/null", O_RDONLY);
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
            write_all(2, msg, (size_t)n);
            _exit(126);
        }
    }
    if (chdir(spec->cwd)) {
        int n = snprintf(msg, sizeof msg, "carma: cannot enter working directory '%s': %s\n",
                         spec->cwd, strerror(errno));
        write_all(2, msg, (size_t)n);
        _exit(126);
    }
    char *argv[] = {"sh", "-c", (char *)spec->command, NULL};
    execve("/bin/sh", argv, spec->env);
    int n = snprintf(msg, sizeof msg, "carma: cannot run /bin/sh: %s\n", strerror(errno));
    write_all(2, msg, (size_t)n);
    _exit(127);
}

static size_t read_tail(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
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

/* The supervisor's life. Never returns. */
static void run_supervisor(const launch_spec *spec, int lockfd, int outfd, int errfd)
{
    setsid();
    int keep[3] = {lockfd, outfd, errfd};
    sort3(keep);
    close_others(keep, 3);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        if (devnull > 2)
            close(devnull);
    }
    reset_signals();
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, &old);
    struct sigaction sa = {0};
    sa.sa_handler = on_cancel;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    signal(SIGHUP, SIG_IGN);

    pid_t me = getpid();
    char pidtext[32];
    int pn = snprintf(pidtext, sizeof pidtext, "%d\n", (int)me);
    if (ftruncate(lockfd, 0) == 0) /* the lock file names its holder, for cancel after a restart */
        write_all(lockfd, pidtext, (size_t)pn);
    pid_t child = fork();
    if (child == 0)
        exec_task(spec, me, outfd, errfd);
    char text[SUPERVISOR_TAIL_MAX + 256];
    int status = 0;
    if (child < 0) {
        int n = snprintf(text, sizeof text, "carma: cannot fork the task: %s\n", strerror(errno));
        write_all(errfd, text, (size_t)n);
        status = 127 << 8;
    } else {
        setpgid(child, child);
        int n = snprintf(text, sizeof text, "%d\n", (int)child);
        write_file_atomic(spec->dir, "started", text, (size_t)n);
        sigprocmask(SIG_SETMASK, &old, NULL);
        bool term_sent = false, kill_sent = false;
        for (;;) {
            if (cancel_requested && !term_sent) {
                kill(-child, SIGTERM);
                term_sent = true;
                struct itimerval it = {{0, 0}, {0, 0}};
                double g = spec->kill_grace_s > 0.001 ? spec->kill_grace_s : 0.001;
                it.it_value.tv_sec = (time_t)g;
                it.it_value.tv_usec = (suseconds_t)((g - (double)(time_t)g) * 1e6);
                setitimer(ITIMER_REAL, &it, NULL);
            }
            if (kill_due && !kill_sent) {
                kill(-child, SIGKILL);
                kill_sent = true;
            }
            pid_t r = waitpid(child, &status, 0);
            if (r == child)
                break;
            if (r < 0 && errno != EINTR) {
                status = 127 << 8;
                break;
            }
        }
        /* Whatever the task left in its group goes with it. */
        kill(-child, SIGKILL);
    }
    close(outfd);
    close(errfd);
    char errpath[4096];
    path_in(errpath, sizeof errpath, spec->dir, "stderr");
    char tail[SUPERVISOR_TAIL_MAX];
    size_t tail_len = read_tail(errpath, tail, sizeof tail);
    int n = snprintf(text, sizeof text, "exited %d\ncode %d\nsignal %d\ncancelled %d\n\n",
                     WIFEXITED(status) ? 1 : 0, WIFEXITED(status) ? WEXITSTATUS(status) : 0,
                     WIFSIGNALED(status) ? WTERMSIG(status) : 0, cancel_requested ? 1 : 0);
    memcpy(text + n, tail, tail_len);
    write_file_atomic(spec->dir, "result", text, (size_t)n + tail_len);
    close(lockfd);
    _exit(0);
}

static int open_log(const char *dir, const char *name, const launch_spec *spec, carma_err *err)
{
    char path[4096];
    path_in(path, sizeof path, dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (fd < 0)
        return carma_err_set(err, "%s: %s", path, strerror(errno));
    if (spec->switch_user && fchown(fd, spec->uid, spec->gid)) {
        carma_err_set(err, "%s: chown: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int supervisor_launch(const launch_spec *spec, pid_t *sup_pid, carma_err *err)
{
    if (mkdir(spec->dir, 0755) && errno != EEXIST)
        return carma_err_set(err, "%s: %s", spec->dir, strerror(errno));
    char path[4096];
    path_in(path, sizeof path, spec->dir, "lock");
    int lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lockfd < 0)
        return carma_err_set(err, "%s: %s", path, strerror(errno));
    if (flock(lockfd, LOCK_EX | LOCK_NB)) {
        close(lockfd);
        return carma_err_set(err, "%s: held by another supervisor", path);
    }
    int outfd = open_log(spec->dir, "stdout", spec, err);
    int errfd = outfd < 0 ? -1 : open_log(spec->dir, "stderr", spec, err);
    if (outfd < 0 || errfd < 0) {
        if (outfd >= 0)
            close(outfd);
        close(lockfd);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0)
        run_supervisor(spec, lockfd, outfd, errfd);
    int saved = errno;
    close(lockfd); /* the child's copy keeps the lock */
    close(outfd);
    close(errfd);
    if (pid < 0)
        return carma_err_set(err, "fork: %s", strerror(saved));
    *sup_pid = pid;
    return 0;
}

static bool lock_held(const char *dir, bool *exists)
{
    char path[4096];
    path_in(path, sizeof path, dir, "lock");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *exists = fd >= 0;
    if (fd < 0)
        return false;
    bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd); /* drops our shared lock, if we got it */
    return held;
}

static pid_t read_started(const char *dir)
{
    char path[4096];
    path_in(path, sizeof path, dir, "started");
    char *text = read_file(path, NULL);
    int64_t pid = 0;
    if (text && parse_i64(text, &pid))
        pid = 0;
    free(text);
    return (pid_t)pid;
}

static bool read_result(const char *dir, sup_result *res)
{
    char path[4096];
    path_in(path, sizeof path, dir, "result");
    size_t len;
    char *text = read_file(path, &len);
    if (!text)
        return false;
    int exited = 0, code = 0, sig = 0, cancelled = 0, used = 0;
    bool ok = sscanf(text, "exited %d\ncode %d\nsignal %d\ncancelled %d\n\n%n", &exited, &code,
                     &sig, &cancelled, &used) == 4 && used > 0;
    if (ok) {
        memset(res, 0, sizeof *res);
        res->status = (exit_status){exited != 0, code, sig};
        res->cancelled = cancelled != 0;
        size_t n = len - (size_t)used;
        if (n > SUPERVISOR_TAIL_MAX)
            n = SUPERVISOR_TAIL_MAX;
        memcpy(res->tail, text + used, n);
        res->tail[n] = '\0';
        res->tail_len = n;
    }
    free(text);
    return ok;
}

sup_status supervisor_poll(const char *dir, pid_t *task_pid, sup_result *res)
{
    *task_pid = read_started(dir);
    if (read_result(dir, res))
        return SUP_ENDED;
    bool exists;
    if (lock_held(dir, &exists))
        return SUP_RUNNING;
    /* The supervisor may have finished between the two looks. */
    if (read_result(dir, res))
        return SUP_ENDED;
    *task_pid = read_started(dir);
    return *task_pid > 0 ? SUP_LOST : SUP_NEVER_STARTED;
}

int supervisor_cancel(const char *dir, carma_err *err)
{
    bool exists;
    if (!lock_held(dir, &exists))
        return 0; /* already ended: its result is (or will be) there */
    char path[4096];
    path_in(path, sizeof path, dir, "lock");
    char *text = read_file(path, NULL);
    int64_t sup_pid = 0;
    if (!text || parse_i64(text, &sup_pid) || sup_pid <= 0) {
        free(text);
        return carma_err_set(err, "%s: no supervisor pid", path);
    }
    free(text);
    if (kill((pid_t)sup_pid, SIGTERM))
        return carma_err_set(err, "cannot signal supervisor %d: %s", (int)sup_pid,
                             strerror(errno));
    return 0;
}

void supervisor_kill_leftovers(pid_t task_pid)
{
    if (task_pid > 1)
        kill(-task_pid, SIGKILL);
}
