/* xmem_session.c — see xmem_session.h. Linux: a subreaper (prctl) adopts what the tracer's
 * processes orphan, and /proc names carma's children; without either only the tracer's process
 * group is signalled, which a child that made a session of its own escapes. */
#include "estimate/xmem_session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/fdclose.h"
#include "util/sigreset.h"

static const int stop_signals[XMEM_STOP_SIGNALS] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

/* carma's children (their /proc/PID/stat names carma as the parent), at most cap of them; -1
 * when /proc cannot be read. */
static int list_children(pid_t *out, int cap)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    long self = (long)getpid();
    int n = 0;
    const struct dirent *de;
    while (n < cap && (de = readdir(d))) {
        char path[300], buf[512];
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (pid <= 0 || *end)
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (fd >= 0)
            close(fd);
        if (len <= 0)
            continue; /* ended meanwhile */
        buf[len] = '\0';
        /* "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, the last ')' not */
        const char *p = strrchr(buf, ')');
        long ppid;
        if (p && sscanf(p + 1, " %*c %ld", &ppid) == 1 && ppid == self)
            out[n++] = (pid_t)pid;
    }
    closedir(d);
    return n;
}

void xmem_session_begin(xmem_session *s)
{
    memset(s, 0, sizeof *s);
    stop_signal = 0;
    sigset_t block;
    sigemptyset(&block);
    for (int i = 0; i < XMEM_STOP_SIGNALS; i++)
        sigaddset(&block, stop_signals[i]);
    /* blocked until the fork is done: the child must not run carma's handler */
    sigprocmask(SIG_BLOCK, &block, &s->old_mask);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop; /* no SA_RESTART: the wait for the tracer wakes up */
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < XMEM_STOP_SIGNALS; i++) {
        sigaction(stop_signals[i], NULL, &s->old[i]);
        /* ignored (nohup, `cmd &` in a script): it would not have stopped carma, nor does it */
        if (!(s->old[i].sa_flags & SA_SIGINFO) && s->old[i].sa_handler == SIG_IGN)
            continue;
        s->caught[i] = sigaction(stop_signals[i], &sa, NULL) == 0;
    }
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &s->old_pipe);
    if (prctl(PR_GET_CHILD_SUBREAPER, &s->was_subreaper))
        s->was_subreaper = 0;
    s->subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    s->nbefore = list_children(s->before, XMEM_CHILDREN_KNOWN);
    if (s->nbefore >= XMEM_CHILDREN_KNOWN)
        s->nbefore = -1; /* perhaps more: which orphan is whose is not known */
}

void xmem_session_forked(const xmem_session *s)
{
    sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
}

int xmem_session_child(int from)
{
    /* as the task's signals will be (the daemon resets them): not carma's handlers, nor what
     * carma's own parent ignored or blocked */
    sig_reset_all();
    if (setsid() < 0)
        return -1;
    return fd_close_span((unsigned)from, ~0U);
}

int xmem_session_tie(pid_t parent)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL))
        return -1;
    return getppid() == parent ? 0 : -1; /* carma ended before the tie: nobody would stop it */
}

int xmem_session_signal(void)
{
    return stop_signal;
}

static void nap(double s)
{
    struct timespec ts = clock_interval(s);
    nanosleep(&ts, NULL);
}

static bool has(const pid_t *set, int n, pid_t pid)
{
    for (int i = 0; i < n; i++)
        if (set[i] == pid)
            return true;
    return false;
}

#define SENT_MAX 256

/* One look at what is left: the leader while it runs, and carma's children since the fork
 * (orphans of the tracer's processes; carma started no other), reaped where ended and sent sig
 * once otherwise. Returns how many still run. */
static int sweep(const xmem_session *s, pid_t leader, int sig, pid_t *sent, int *nsent)
{
    int alive = 0;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    /* WNOWAIT: the leader stays a zombie (see xmem_session_end) */
    if (waitid(P_PID, (id_t)leader, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == 0)
        alive++;
    pid_t kids[SENT_MAX];
    int n = list_children(kids, SENT_MAX);
    for (int i = 0; i < n; i++) {
        pid_t k = kids[i];
        if (k == leader || has(s->before, s->nbefore, k) || waitpid(k, NULL, WNOHANG) == k)
            continue;
        alive++;
        /* an unreaped child of carma's: its pid is no other process's */
        if (!has(sent, *nsent, k)) {
            kill(k, sig);
            if (sig == SIGTERM)
                kill(k, SIGCONT);
            if (*nsent < SENT_MAX)
                sent[(*nsent)++] = k;
        }
    }
    return alive;
}

int xmem_session_end(const xmem_session *s, pid_t leader)
{
    static const int sigs[2] = {SIGTERM, SIGKILL};
    bool adopted = s->subreaper && s->nbefore >= 0;
    int alive = 0;
    for (int r = 0; r < 2; r++) {
        /* the leader is carma's child, unreaped: no other group can have its id */
        kill(-leader, sigs[r]);
        if (sigs[r] == SIGTERM)
            kill(-leader, SIGCONT); /* a stopped process acts on SIGTERM once continued */
        if (!adopted) { /* the group alone: no telling when its processes have ended */
            nap(0.1);
            continue;
        }
        pid_t sent[SENT_MAX];
        int nsent = 0;
        double until = clock_mono_s() + (r ? XMEM_KILL_WAIT_S : XMEM_TERM_GRACE_S);
        while ((alive = sweep(s, leader, sigs[r], sent, &nsent)) > 0 && clock_mono_s() < until)
            nap(0.02);
        if (!alive)
            break;
    }
    return adopted ? alive : -1;
}

int xmem_session_finish(xmem_session *s)
{
    if (s->subreaper && !s->was_subreaper)
        prctl(PR_SET_CHILD_SUBREAPER, 0);
    int sig = stop_signal;
    sigaction(SIGPIPE, &s->old_pipe, NULL);
    for (int i = 0; i < XMEM_STOP_SIGNALS; i++)
        if (s->caught[i])
            sigaction(stop_signals[i], &s->old[i], NULL);
    if (sig)
        raise(sig); /* with its action as before: by default carma ends here, as it would have */
    return sig;
}
