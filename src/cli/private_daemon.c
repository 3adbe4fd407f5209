/* private_daemon.c — the daemon `carma run` starts for itself (see private_daemon.h). */
#include "cli/private_daemon.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/connect.h"
#include "daemon/supervisor.h"
#include "util/clock.h"

#define POLL_NS 100000000L /* 0.1 s between looks at a starting daemon */
#define STOP_WAIT_S 15.0   /* SIGTERM, then SIGKILL after this long */

static void nap(void)
{
    struct timespec ts = {0, POLL_NS};
    nanosleep(&ts, NULL);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* The directory and everything in it (the daemon's database, the tasks' logs). */
static int remove_dir(private_daemon *p, carma_err *err)
{
    if (!p->dir[0])
        return 0;
    int rc = nftw(p->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (rc && errno != ENOENT)
        return carma_err_set(err, "cannot remove the private daemon's directory %s: %s", p->dir,
                             strerror(errno));
    p->dir[0] = '\0';
    return 0;
}

/* Stops the daemon: SIGTERM, then SIGKILL when it has not gone after STOP_WAIT_S. True when
 * it had died already (killed, crashed): what it left was not ended by it. */
static bool stop_process(private_daemon *p)
{
    if (p->pid <= 0)
        return false;
    if (waitpid(p->pid, NULL, WNOHANG) == p->pid) {
        p->pid = 0;
        return true;
    }
    kill(p->pid, SIGTERM);
    double give_up = clock_mono_s() + STOP_WAIT_S;
    while (waitpid(p->pid, NULL, WNOHANG) == 0) {
        if (clock_mono_s() > give_up) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, NULL, 0);
            break;
        }
        nap();
    }
    p->pid = 0;
    return false;
}

typedef enum orphan_act {
    ORPHAN_COUNT,   /* only count them */
    ORPHAN_CANCEL,  /* ask each supervisor to cancel its task */
    ORPHAN_KILL,    /* SIGKILL each task's process group (its supervisor then ends) */
} orphan_act;

/* How many supervisors still run in the daemon's attempts/, each dealt with as `act` says (a
 * dead daemon, killed or crashed, leaves its tasks running). With `lost`, what a supervisor
 * that died left of its task is killed too, as the daemon would: only for a daemon that died
 * (one that lived to be stopped did so itself, and the group's id may since name another's). */
static int running_in(const char *attempts, orphan_act act, bool lost)
{
    DIR *d = opendir(attempts);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char dir[PATH_MAX + 300];
        pid_t pid;
        sup_result res;
        carma_err ignored;
        if (e->d_name[0] == '.' ||
            snprintf(dir, sizeof dir, "%s/%s", attempts, e->d_name) >= (int)sizeof dir)
            continue;
        sup_status st = supervisor_poll(dir, &pid, &res);
        if (lost && st == SUP_LOST)
            supervisor_kill_leftovers(dir, pid, getuid());
        if (st != SUP_RUNNING)
            continue;
        if (act == ORPHAN_CANCEL)
            supervisor_cancel(dir, &ignored);
        else if (act == ORPHAN_KILL) /* its supervisor, alive, still holds the group */
            supervisor_kill_leftovers(dir, pid, getuid());
        n++;
    }
    closedir(d);
    return n;
}

/* Tasks the daemon left running: nothing can adopt them once its directory is gone (and in a
 * Slurm job they must not outlive it), so their supervisors cancel them (SIGTERM, SIGKILL after
 * the grace), waited for up to STOP_WAIT_S; what still runs then (a kill_grace_s longer than
 * that) is killed. */
static void end_orphans(const private_daemon *p, bool died)
{
    char attempts[PATH_MAX + 32];
    snprintf(attempts, sizeof attempts, "%s/state/attempts", p->dir);
    int n = running_in(attempts, ORPHAN_CANCEL, died);
    if (!n)
        return;
    fprintf(stderr, "carma run: cancelling %d task(s) the private daemon left running\n", n);
    double give_up = clock_mono_s() + STOP_WAIT_S;
    while ((n = running_in(attempts, ORPHAN_COUNT, false)) > 0) {
        if (clock_mono_s() > give_up) {
            fprintf(stderr, "carma run: %d still run after %.0f s: killed\n", n, STOP_WAIT_S);
            running_in(attempts, ORPHAN_KILL, false);
            give_up = clock_mono_s() + STOP_WAIT_S; /* their supervisors write their ends */
            while (running_in(attempts, ORPHAN_COUNT, false) > 0 && clock_mono_s() < give_up)
                nap();
            return;
        }
        nap();
    }
}

int private_daemon_stop(private_daemon *p, carma_err *err)
{
    bool died = stop_process(p);
    if (p->dir[0])
        end_orphans(p, died);
    return remove_dir(p, err);
}

static int make_dir(private_daemon *p, carma_err *err)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    int len = snprintf(p->dir, sizeof p->dir, "%s/carma-run-XXXXXX", tmp);
    if (len < 0 || (size_t)len >= sizeof p->dir) {
        p->dir[0] = '\0';
        return carma_err_set(err, "TMPDIR %s is too long a path", tmp);
    }
    if (!mkdtemp(p->dir)) { /* mkdtemp makes it 0700: the socket and logs are this user's */
        int e = errno;
        p->dir[0] = '\0';
        return carma_err_set(err, "cannot make a private directory under %s: %s", tmp,
                             strerror(e));
    }
    snprintf(p->socket, sizeof p->socket, "%s/carma.sock", p->dir);
    if (strlen(p->socket) >= sizeof ((struct sockaddr_un *)0)->sun_path)
        return carma_err_set(err, "the private socket %s is too long for a Unix socket; set "
                                  "TMPDIR to a shorter directory",
                             p->socket);
    return 0;
}

static void spawn(private_daemon *p, const private_daemon_opts *o, const char *state)
{
    /* its fixed words (at most 12) and the NULL, then every --set of carma run */
    const char *argv[13 + 2 * sizeof o->config->sets / sizeof o->config->sets[0]];
    int n = 0;
    argv[n++] = "carma";
    argv[n++] = "daemon";
    argv[n++] = "--socket";
    argv[n++] = p->socket;
    argv[n++] = "--state";
    argv[n++] = state;
    if (o->gpu_backend) {
        argv[n++] = "--gpu-backend";
        argv[n++] = o->gpu_backend;
    }
    if (o->sim_gpus) {
        argv[n++] = "--sim-gpus";
        argv[n++] = o->sim_gpus;
    }
    if (o->config->path) {
        argv[n++] = "--config";
        argv[n++] = o->config->path;
    }
    for (int i = 0; i < o->config->nsets; i++) {
        argv[n++] = "--set";
        argv[n++] = o->config->sets[i];
    }
    argv[n] = NULL;
    p->pid = fork();
    if (p->pid != 0)
        return;
    setpgid(0, 0);
    dup2(STDERR_FILENO, STDOUT_FILENO); /* carma run's stdout is its report (--json) alone */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    execv("/proc/self/exe", (char *const *)argv);
    fprintf(stderr, "carma run: cannot run the private daemon (/proc/self/exe): %s\n",
            strerror(errno));
    _exit(127);
}

int private_daemon_start(private_daemon *p, const private_daemon_opts *o, carma_err *err)
{
    memset(p, 0, sizeof *p);
    char state[PATH_MAX + 16];
    if (make_dir(p, err)) {
        carma_err ignored;
        remove_dir(p, &ignored);
        return -1;
    }
    snprintf(state, sizeof state, "%s/state", p->dir);
    fflush(NULL); /* the child must not write our buffered output again */
    spawn(p, o, state);
    if (p->pid < 0) {
        int e = errno;
        p->pid = 0;
        carma_err ignored;
        remove_dir(p, &ignored);
        return carma_err_set(err, "cannot start a private daemon: fork: %s", strerror(e));
    }
    double give_up = clock_mono_s() + o->start_timeout_s;
    for (;;) {
        carma_err why;
        int fd = daemon_connect(p->socket, &why);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        int status;
        const char *problem = NULL;
        if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
            p->pid = 0;
            problem = "exited before it answered (its messages are above)";
        } else if (*o->stop) {
            problem = "was interrupted by a signal while it started";
        } else if (clock_mono_s() > give_up) {
            problem = "did not answer in time";
        }
        if (problem) {
            carma_err_set(err, "the private daemon (socket %s) %s", p->socket, problem);
            carma_err ignored;
            private_daemon_stop(p, &ignored);
            return -1;
        }
        nap();
    }
}
