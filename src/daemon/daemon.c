/* daemon.c — the top of the daemon: start-up (GPUs, state directory (statedir.c), store,
 * core, MPS, the tasks found in the store, the socket), the loop (serve clients, reap
 * attempts, sample the GPUs, place tasks, commit) and shutdown; and the default socket and
 * state paths. */
#include "daemon/daemon.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/connect.h"
#include "daemon/journal.h"
#include "daemon/registry.h"
#include "daemon/tasks.h"

#define REAP_INTERVAL_S 0.2

_Static_assert(DAEMON_MAX_SOCKETS >= 1 + DAEMON_USER_SOCKETS, "room for every socket tried");

const char *daemon_system_socket(void)
{
    const char *env = getenv("CARMA_SYSTEM_SOCKET");
    return env && *env ? env : "/run/carma/carma.sock";
}

/* Whether $XDG_RUNTIME_DIR names a directory only this user can reach, as systemd-logind's
 * /run/user/UID is: absolute, a directory itself (not a symlink), owned by the effective uid,
 * with no permission for group or others, and short enough for a socket path in it. Only then
 * is a socket there safe from other users taking its name first (they can in /tmp). Else
 * (unset: cron, su, ssh with no session; or not such a directory) logind's /run/user/UID under
 * the same rules: where a daemon started in the user's session serves. Fills buf with the
 * socket's path in it. */
static bool private_runtime_socket(const char *dir, char *buf, size_t cap)
{
    struct stat sb;
    if (!dir || dir[0] != '/' || lstat(dir, &sb) || !S_ISDIR(sb.st_mode) ||
        sb.st_uid != geteuid() || (sb.st_mode & 0077))
        return false;
    int n = snprintf(buf, cap, "%s/carma.sock", dir);
    return n > 0 && (size_t)n < cap && (size_t)n < sizeof(((struct sockaddr_un *)0)->sun_path);
}

static bool xdg_runtime_socket(char *buf, size_t cap)
{
    char logind[48]; /* also when $XDG_RUNTIME_DIR is another's, kept by `su` without `-` */
    snprintf(logind, sizeof logind, "/run/user/%u", (unsigned)geteuid());
    return private_runtime_socket(getenv("XDG_RUNTIME_DIR"), buf, cap) ||
           private_runtime_socket(logind, buf, cap);
}

int daemon_user_sockets(char paths[][CONFIG_STR_MAX])
{
    int n = xdg_runtime_socket(paths[0], CONFIG_STR_MAX) ? 1 : 0;
    snprintf(paths[n], CONFIG_STR_MAX, "/tmp/carma-%u.sock", (unsigned)geteuid());
    return n + 1;
}

void daemon_default_socket(char *buf, size_t cap)
{
    char user[DAEMON_USER_SOCKETS][CONFIG_STR_MAX];
    if (geteuid() == 0)
        snprintf(buf, cap, "%s", daemon_system_socket());
    else {
        daemon_user_sockets(user);
        snprintf(buf, cap, "%s", user[0]);
    }
}

void daemon_default_state_dir(char *buf, size_t cap)
{
    const char *home = getenv("HOME"), *xdg = getenv("XDG_STATE_HOME");
    if (geteuid() == 0)
        snprintf(buf, cap, "/var/lib/carma");
    else if (xdg && xdg[0] == '/') /* the XDG spec: a relative one is invalid, ignored */
        snprintf(buf, cap, "%s/carma", xdg);
    else if (home && *home)
        snprintf(buf, cap, "%s/.local/state/carma", home); /* $XDG_STATE_HOME's default */
    else
        snprintf(buf, cap, "/tmp/carma-state-%u", (unsigned)geteuid());
}

bool daemon_serve_socket(const char *opt, const carma_config *cfg, char *buf, size_t cap)
{
    const char *env = getenv("CARMA_SOCKET");
    if (opt && *opt)
        snprintf(buf, cap, "%s", opt);
    else if (env && *env) /* as the clients: a job script exports one socket for both sides */
        snprintf(buf, cap, "%s", env);
    else if (cfg->daemon.socket[0])
        snprintf(buf, cap, "%s", cfg->daemon.socket);
    else {
        daemon_default_socket(buf, cap);
        return true;
    }
    return false;
}

int daemon_client_sockets(const char *opt, const char *cfg_socket,
                          char paths[][CONFIG_STR_MAX])
{
    const char *env = getenv("CARMA_SOCKET");
    if (opt && *opt)
        snprintf(paths[0], CONFIG_STR_MAX, "%s", opt);
    else if (env && *env)
        snprintf(paths[0], CONFIG_STR_MAX, "%s", env);
    else if (cfg_socket && *cfg_socket)
        snprintf(paths[0], CONFIG_STR_MAX, "%s", cfg_socket);
    else {
        /* A lab's daemon runs as root on the system socket; a user's own daemon on the
         * per-user one (daemon_user_sockets: the first that is safe to serve, so try each).
         * Try the system's first, so that a lab user's first command finds the root daemon
         * without setting anything. */
        char user[DAEMON_USER_SOCKETS][CONFIG_STR_MAX];
        int nuser = geteuid() == 0 ? 0 : daemon_user_sockets(user);
        int n = 0;
        snprintf(paths[n++], CONFIG_STR_MAX, "%s", daemon_system_socket());
        for (int i = 0; i < nuser; i++) {
            bool seen = false;
            for (int j = 0; j < n; j++)
                seen = seen || !strcmp(paths[j], user[i]);
            if (!seen)
                memcpy(paths[n++], user[i], CONFIG_STR_MAX);
        }
        return n;
    }
    return 1;
}

static void shutdown_daemon(daemon_state *d)
{
    d_metrics_close(d);
    d_server_close(d);
    d_mps_stop(d);
    if (d->in_txn)
        d_commit(d);
    if (!d->failed && !d->in_txn)
        d_on_finish_start(d);
    d_on_finish_drop(d);
    d_free_tasks(d);
    free(d->running);
    sched_destroy(d->core);
    d_monitor_close(d);
    store_close(d->db);
    d_statedir_close(d);
}

static int start(daemon_state *d, carma_err *err)
{
    char path[4400];
    /* The GPUs first, so a daemon that cannot read them (no libnvidia-ml) leaves nothing
     * behind; the fake-GPU backend (`sim`) keeps its GPUs in the state directory, so only its
     * specification is checked before (then the socket, by d_statedir_open). */
    bool fakegpu = d->opts->backend && !strcmp(d->opts->backend, "sim");
    if (fakegpu ? d_monitor_check(d, err) : d_monitor_open(d, err))
        return -1;
    if (d_statedir_open(d, err))
        return -1;
    snprintf(path, sizeof path, "%s/carma.db", d->opts->state_dir);
    if (store_open(&d->db, path, err))
        return -1;
    if (fakegpu && d_monitor_open(d, err))
        return -1;
    if (!(d->core = sched_create(&d->cfg.sched, d->ngpus, err)))
        return -1;
    if (d_mps_start(d, err))
        return -1;
    /* The first sample before anything is placed: the core needs GPU views. */
    d_monitor_tick(d);
    d_check_state_space(d);
    if (d_restore(d, err))
        return -1;
    d_purge_logs(d, clock_mono_s()); /* at start, before any client (then hourly: the loop) */
    if (d_listen(d, err) || d_metrics_open(d, err))
        return -1;
    dlog(d, "serving %s with %d %s GPU(s), policy %s, state in %s", d->sock_path,
         d->ngpus, d->ops->name, policy_name(d->cfg.sched.policy), d->opts->state_dir);
    return 0;
}

int daemon_run(const daemon_options *opts, carma_err *err)
{
    daemon_state *d = calloc(1, sizeof *d);
    if (!d)
        return carma_err_set(err, "out of memory");
    d->opts = opts;
    d->cfg = opts->cfg;
    d->listen_fd = -1;
    d->started_wall = daemon_wall_now();
    d->state_fd = d->lock_fd = d->attempts_fd = -1;
    /* Everything the daemon writes is private (the database holds every task's environment);
     * the tasks get the umask it was started with back. */
    d->task_umask = umask(077);
    int rc = start(d, err);
    double interval = d->cfg.daemon.sample_interval_s;
    d->next_tick = clock_mono_s() + interval;
    while (rc == 0 && !*opts->stop && !d->failed) {
        double now = clock_mono_s();
        double wait = fmin(d->next_tick, d->next_reap) - now;
        int timeout_ms = wait <= 0 ? 0 : (int)ceil(wait * 1000);
        if (d->need_schedule)
            timeout_ms = 0;
        if (d_serve_once(d, timeout_ms))
            rc = carma_err_set(err, "poll: %s", strerror(errno));
        while (waitpid(-1, NULL, WNOHANG) > 0) /* supervisors we forked */
            ;
        now = clock_mono_s();
        if (now >= d->next_reap) {
            d_reap(d);
            d_commit(d);
            d->next_reap = now + REAP_INTERVAL_S;
        }
        if (now >= d->next_tick) {
            d_monitor_tick(d);
            d_check_state_space(d);
            d_check_socket(d);
            d->next_tick += interval;
            if (d->next_tick < now) /* overran: no burst of catch-up ticks */
                d->next_tick = now + interval;
        }
        d_purge_logs(d, now);
        if (d->need_schedule)
            d_schedule(d);
        d_commit(d);
        if (!d->failed && !d->in_txn) { /* their end is stored: the store answers for them */
            d_on_finish_start(d);
            d_forget_ended(d);
        }
    }
    if (rc == 0 && d->failed)
        rc = carma_err_set(err, "%s", d->fatal.msg);
    if (rc == 0) /* a cancel accepted just before the stop is committed: its signal goes too */
        d_send_cancels(d);
    shutdown_daemon(d);
    umask(d->task_umask);
    free(d);
    return rc;
}
