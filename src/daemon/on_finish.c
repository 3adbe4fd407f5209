/* on_finish.c — the `on_finish` hook: a program the administrator names in the config, run
 * when a task has ended for good (done, failed, cancelled, timeout; not an out-of-memory
 * crash that is retried), with the task in its environment (CARMA_TASK_ID, _NAME, _USER,
 * _STATE, _OUTCOME, _EXIT, _SIGNAL), so that a lab can mail or message its users.
 *
 * It runs as the task's owner — never as root for another user's task, as the task itself —
 * in a process group of its own, with /dev/null as input, from /, and is killed (the whole
 * group) after on_finish_timeout_s. Its output goes to the daemon's log, a line at a time,
 * prefixed with the task's id, its control characters made visible. A watcher process (a
 * child of the daemon, which the loop reaps) does the reading and the timing, so that the
 * daemon never waits for the hook.
 *
 * A hook is started only after the commit that stored its task's end (d_on_finish_start): a
 * daemon that crashed before that commit ends the attempt again when it restarts, and the hook
 * would otherwise run twice. At most once, then: a daemon killed between the commit and the
 * start skips it. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/journal.h"
#include "daemon/registry.h"
#include "daemon/tasks.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/fdclose.h"
#include "util/sigreset.h"
#include "util/strutil.h"
#include "util/usergroups.h"

/* Who the hook runs as. */
typedef struct hook_user {
    bool switch_user;
    uid_t uid;
    gid_t gid;
    gid_t *groups; /* heap: all of the user's (usergroups.h) */
    int ngroups;
} hook_user;

/* A hook waiting for the commit of its task's end: everything it needs, taken when the task
 * ended (the task itself may be freed by then). */
struct d_hook {
    uint64_t id;
    hook_user u;
    char vars[8][640];
};

/* The hook: its environment set, its privileges dropped, then exec. Never returns. */
static void run_hook(const char *path, const hook_user *u, char **env, int out)
{
    /* A session of its own, not just a process group: a daemon started from a terminal (sudo
     * carma daemon) would leave it that terminal, and the task's owner, who may trace their
     * own process, could type into root's shell through it (TIOCSTI). */
    setsid();
    sig_reset_all(); /* the watcher's blocked SIGCHLD, the daemon's ignored SIGPIPE: not the
                        hook's */
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
        _exit(127);
    fd_close_span(3, ~0U);
    if (chdir("/") != 0)
        _exit(127);
    if (u->switch_user &&
        (setgroups((size_t)u->ngroups, u->groups) || setgid(u->gid) || setuid(u->uid) ||
         getuid() != u->uid || geteuid() != u->uid || setuid(0) == 0)) {
        fprintf(stderr, "cannot become uid %u: %s\n", (unsigned)u->uid, strerror(errno));
        _exit(127);
    }
    char *argv[] = {(char *)path, NULL};
    execve(path, argv, env);
    fprintf(stderr, "cannot run %s: %s\n", path, strerror(errno));
    _exit(127);
}

/* One line of the hook's output (line[len] may be overwritten) in the daemon's log, its
 * control characters made visible: the hook may echo what the task's owner chose (its name),
 * and the log may be root's terminal (sudo carma daemon) or journal. */
static void log_hook_line(daemon_state *d, uint64_t id, char *line, size_t len)
{
    line[len] = '\0';
    char *safe = str_escape_controls(line);
    dlog(d, "on_finish for task %llu: %s", (unsigned long long)id, safe ? safe : "?");
    free(safe);
}

/* Waits for the hook until the deadline: false when the time ran out first. A hook that
 * closed its output (exec >/dev/null; sleep) is still running, and still has only until the
 * deadline. SIGCHLD is blocked in the watcher: it only wakes this wait. */
static bool reaped_by(pid_t pid, double deadline, int *status)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            return true;
        double left = deadline - clock_mono_s();
        if (left <= 0)
            return false;
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        sigtimedwait(&chld, NULL, &ts);
    }
}

/* The watcher: starts the hook, logs its output, kills it at the deadline, logs how it
 * ended. Never returns. */
static void watch_hook(daemon_state *d, uint64_t id, const hook_user *u, char **env)
{
    fd_close_span(3, ~0U); /* the daemon's socket, database and lock are not the hook's */
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_SETMASK, &chld, NULL);
    signal(SIGCHLD, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    const char *path = d->cfg.daemon.on_finish;
    int p[2];
    if (pipe2(p, O_CLOEXEC)) {
        dlog(d, "on_finish for task %llu: pipe: %s", (unsigned long long)id, strerror(errno));
        _exit(1);
    }
    pid_t pid = fork();
    if (pid == 0)
        run_hook(path, u, env, p[1]);
    close(p[1]);
    if (pid < 0) {
        dlog(d, "on_finish for task %llu: fork: %s", (unsigned long long)id, strerror(errno));
        _exit(1);
    }
    double deadline = clock_mono_s() + d->cfg.daemon.on_finish_timeout_s;
    char buf[4096];
    size_t len = 0;
    bool timed_out = false;
    for (;;) {
        double left = deadline - clock_mono_s();
        struct pollfd pf = {p[0], POLLIN, 0};
        int r = left > 0 ? poll(&pf, 1, (int)(left * 1000) + 1) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            timed_out = true;
            break;
        }
        ssize_t n = read(p[0], buf + len, sizeof buf - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        char *nl;
        /* whole lines, and a line that fills the buffer as it is */
        while ((nl = memchr(buf, '\n', len)) || len == sizeof buf - 1) {
            size_t line = nl ? (size_t)(nl - buf) : len;
            log_hook_line(d, id, buf, line);
            size_t used = nl ? line + 1 : line;
            memmove(buf, buf + used, len - used);
            len -= used;
        }
    }
    if (len)
        log_hook_line(d, id, buf, len);
    int status = 0;
    if (timed_out || !reaped_by(pid, deadline, &status)) {
        timed_out = true;
        kill(-pid, SIGKILL); /* its group: what it started too */
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    if (timed_out)
        dlog(d, "on_finish for task %llu: killed after %g s (on_finish_timeout_s)",
             (unsigned long long)id, d->cfg.daemon.on_finish_timeout_s);
    else if (WIFEXITED(status) && WEXITSTATUS(status))
        dlog(d, "on_finish for task %llu: exited with status %d", (unsigned long long)id,
             WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        dlog(d, "on_finish for task %llu: killed by signal %d", (unsigned long long)id,
             WTERMSIG(status));
    _exit(0);
}

void d_on_finish(daemon_state *d, const dtask *t)
{
    if (!d->cfg.daemon.on_finish[0])
        return;
    struct d_hook *hooks = array_grow(d->hooks, &d->hooks_cap, d->nhooks + 1, sizeof *hooks, 8);
    if (!hooks) {
        dlog(d, "on_finish for task %llu: out of memory; not run", (unsigned long long)t->st.id);
        return;
    }
    d->hooks = hooks;
    struct d_hook *h = &hooks[d->nhooks++];
    h->id = t->st.id;
    h->u = (hook_user){.switch_user = geteuid() == 0 && t->uid != 0, .uid = t->uid,
                       .gid = t->gid};
    /* looked up here, not after fork: the user database may take locks */
    if (h->u.switch_user && user_groups(t->user, t->gid, &h->u.groups, &h->u.ngroups)) {
        free(h->u.groups);
        d->nhooks--;
        dlog(d, "on_finish for task %llu: out of memory; not run", (unsigned long long)t->st.id);
        return;
    }
    bool ended = t->att.n > 0 && t->att.ended > 0;
    char(*vars)[640] = h->vars;
    snprintf(vars[0], sizeof vars[0], "CARMA_TASK_ID=%llu", (unsigned long long)t->st.id);
    snprintf(vars[1], sizeof vars[1], "CARMA_TASK_NAME=%s", t->sub.name ? t->sub.name : "");
    snprintf(vars[2], sizeof vars[2], "CARMA_TASK_USER=%s", t->user);
    snprintf(vars[3], sizeof vars[3], "CARMA_TASK_STATE=%s", dstate_name(t->state));
    snprintf(vars[4], sizeof vars[4], "CARMA_TASK_OUTCOME=%s", t->outcome);
    snprintf(vars[5], sizeof vars[5], "CARMA_TASK_EXIT=%s", "");
    if (ended && t->att.exit.exited)
        snprintf(vars[5], sizeof vars[5], "CARMA_TASK_EXIT=%d", t->att.exit.exit_code);
    snprintf(vars[6], sizeof vars[6], "CARMA_TASK_SIGNAL=%s", "");
    if (ended && !t->att.exit.exited)
        snprintf(vars[6], sizeof vars[6], "CARMA_TASK_SIGNAL=%d", t->att.exit.term_signal);
    snprintf(vars[7], sizeof vars[7], "PATH=/usr/local/bin:/usr/bin:/bin");
}

void d_on_finish_start(daemon_state *d)
{
    assert(!d->in_txn);
    for (size_t i = 0; i < d->nhooks; i++) {
        struct d_hook *h = &d->hooks[i];
        char *env[9];
        for (int k = 0; k < 8; k++)
            env[k] = h->vars[k];
        env[8] = NULL;
        pid_t pid = fork();
        if (pid == 0)
            watch_hook(d, h->id, &h->u, env);
        if (pid < 0)
            dlog(d, "on_finish for task %llu: fork: %s", (unsigned long long)h->id,
                 strerror(errno));
        free(h->u.groups);
    }
    d->nhooks = 0;
}

void d_on_finish_drop(daemon_state *d)
{
    for (size_t i = 0; i < d->nhooks; i++)
        free(d->hooks[i].u.groups);
    free(d->hooks);
    d->hooks = NULL;
    d->nhooks = d->hooks_cap = 0;
}
