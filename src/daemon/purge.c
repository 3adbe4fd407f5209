/* purge.c — removing old task logs: the attempt directories (STATE/attempts/ID.N: stdout,
 * stderr, result) of tasks that ended more than `keep_attempt_logs_days` ago, so that a
 * long-lived daemon's disk use stays bounded. Live tasks' directories are never touched; the
 * task's row, attempts and events stay in the database (show and history keep working), and
 * an event says when its logs went. The environment a task was submitted with (tokens, keys:
 * only a launch needs it) goes from its row at the same age; so do the directories a launch
 * moved aside (ID.N.replaced-K), by their files' age. A directory whose lock a supervisor
 * holds is never removed, nor one reached through a link. Run at start and hourly (daemon.c). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/journal.h"
#include "daemon/registry.h"
#include "util/array.h"
#include "util/safefs.h"

#define PURGE_INTERVAL_S 3600.0

typedef struct purge_list {
    daemon_state *d;
    double cutoff;
    struct old_task {
        uint64_t id;
        int attempts;
    } *v;
    size_t n, cap;
} purge_list;

static int collect(void *ctx, const store_task_row *t, const store_attempt_row *a, carma_err *err)
{
    (void)a;
    purge_list *l = ctx;
    /* ended by its row (the query's filter); in memory means live, or its end not yet
     * committed: its files may still be written */
    if (t->ended_at <= 0 || t->ended_at >= l->cutoff || t->attempts < 1 ||
        d_task(l->d, t->id))
        return 0;
    struct old_task *v = array_grow(l->v, &l->cap, l->n + 1, sizeof *v, 64);
    if (!v)
        return carma_err_set(err, "out of memory");
    l->v = v;
    l->v[l->n++] = (struct old_task){t->id, t->attempts};
    return 0;
}

/* Whether a supervisor holds the attempt directory dfd's lock: its task runs on (a row that
 * says ended, or a directory moved aside, does not prove it is over). The lock, when free, is
 * ours until *lockfd is closed: no supervisor starts in the directory meanwhile. */
static bool lock_held(int dfd, int *lockfd)
{
    *lockfd = safefs_openat(dfd, "lock", O_RDONLY, 0);
    if (*lockfd < 0)
        return false;
    if (flock(*lockfd, LOCK_EX | LOCK_NB) == 0)
        return false;
    close(*lockfd);
    *lockfd = -1;
    return true;
}

/* Opens attempt directory `name` of attempts_fd, never through a link: a directory of ours,
 * with its status in *sb. -1 (errno set) otherwise: ENOENT when there is none. */
static int open_attempt_dir(int attempts_fd, const char *name, struct stat *sb)
{
    int fd = safefs_openat(attempts_fd, name, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0)
        return -1;
    if (fstat(fd, sb) || sb->st_uid != geteuid()) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

/* Removes attempt directory `name` of attempts_fd (opened as fd, status sb; fd is closed) and
 * the files in it, never following a link (unlinkat removes a link itself), and only while the
 * name is still that directory. 1 when it was removed, -1 on failure (errno set). */
static int remove_opened(int attempts_fd, const char *name, int fd, const struct stat *sb)
{
    DIR *dir = fdopendir(fd);
    if (!dir) {
        close(fd);
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(dir)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(fd, e->d_name, 0); /* a file the rmdir below finds left says so */
    closedir(dir);
    struct stat now;
    if (fstatat(attempts_fd, name, &now, AT_SYMLINK_NOFOLLOW) || now.st_ino != sb->st_ino ||
        now.st_dev != sb->st_dev) {
        errno = ESTALE; /* replaced while it was emptied: not ours to remove */
        return -1;
    }
    return unlinkat(attempts_fd, name, AT_REMOVEDIR) == 0 ? 1 : -1;
}

/* Removes attempt directory `name` of attempts_fd and the files in it, unless a supervisor
 * still holds its lock. 1 when it was removed, 0 when there was none or it is held, -1 on
 * failure (errno set). */
static int remove_attempt_dir(int attempts_fd, const char *name)
{
    struct stat sb;
    int fd = open_attempt_dir(attempts_fd, name, &sb), lockfd;
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    if (lock_held(fd, &lockfd)) {
        close(fd);
        return 0;
    }
    int r = remove_opened(attempts_fd, name, fd, &sb);
    if (lockfd >= 0)
        close(lockfd);
    return r;
}

/* Whether name is one a launch gave a directory it moved aside: ID.N.replaced-K. */
static bool set_aside_name(const char *name)
{
    unsigned long long id;
    int n, k, end = 0;
    return sscanf(name, "%llu.%d.replaced-%d%n", &id, &n, &k, &end) == 3 && !name[end] &&
           isdigit((unsigned char)name[0]);
}

/* The last time directory fd (status sb) or a file in it was written: its own modification
 * time, which the move aside set (supervisor.c), and each file's. */
static double last_change(int fd, const struct stat *sb)
{
    double last = (double)sb->st_mtime;
    int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!dir) {
        if (dup_fd >= 0)
            close(dup_fd);
        return INFINITY; /* unknown: kept */
    }
    struct dirent *e;
    struct stat fsb;
    while ((e = readdir(dir)))
        if (strcmp(e->d_name, "..") && fstatat(fd, e->d_name, &fsb, AT_SYMLINK_NOFOLLOW) == 0)
            last = fmax(last, (double)fsb.st_mtime);
    closedir(dir);
    return last;
}

/* The directories launches moved aside (ID.N.replaced-K: another attempt's files, found when a
 * replaced database began task ids again) belong to no task of this database: each goes once
 * nothing in it was written for keep_attempt_logs_days since it was moved aside, unless a
 * supervisor still holds its lock (its task runs on, unwatched). Returns how many went. */
static int purge_set_aside(daemon_state *d, double cutoff)
{
    int all = openat(d->attempts_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = all >= 0 ? fdopendir(all) : NULL;
    if (!dir) {
        dlog(d, "purging old task logs: attempts: %s", strerror(errno));
        if (all >= 0)
            close(all);
        return 0;
    }
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (!set_aside_name(e->d_name))
            continue;
        struct stat sb;
        int fd = open_attempt_dir(d->attempts_fd, e->d_name, &sb), lockfd = -1;
        if (fd < 0) {
            if (errno != ENOENT)
                dlog(d, "purging old task logs: attempts/%s: %s (kept)", e->d_name,
                     errno == ELOOP || errno == ENOTDIR ? "not a directory" : strerror(errno));
            continue;
        }
        if (last_change(fd, &sb) >= cutoff || lock_held(fd, &lockfd)) {
            close(fd);
            continue;
        }
        int r = remove_opened(d->attempts_fd, e->d_name, fd, &sb);
        if (lockfd >= 0)
            close(lockfd);
        if (r < 0)
            dlog(d, "purging old task logs: attempts/%s: %s", e->d_name, strerror(errno));
        removed += r > 0;
    }
    closedir(dir);
    return removed;
}

void d_purge_logs(daemon_state *d, double now_mono)
{
    int days = d->cfg.daemon.keep_attempt_logs_days;
    if (now_mono < d->next_purge || days <= 0 || d->failed)
        return;
    d->next_purge = now_mono + PURGE_INTERVAL_S;
    purge_list l = {.d = d, .cutoff = daemon_wall_now() - days * 86400.0};
    carma_err err;
    if (store_select(d->db, &(store_filter){.ended = true}, collect, &l, &err)) {
        dlog(d, "purging old task logs: %s", err.msg);
        free(l.v);
        return;
    }
    int removed = 0;
    for (size_t i = 0; i < l.n; i++) {
        int gone = 0;
        for (int n = 1; n <= l.v[i].attempts; n++) {
            char name[64];
            snprintf(name, sizeof name, "%llu.%d", (unsigned long long)l.v[i].id, n);
            int r = remove_attempt_dir(d->attempts_fd, name);
            if (r < 0)
                dlog(d, "purging old task logs: attempts/%s: %s", name, strerror(errno));
            gone += r > 0;
        }
        if (gone && d_txn(d)) {
            char detail[96];
            snprintf(detail, sizeof detail, "logs of %d attempt(s) removed after %d day(s)",
                     gone, days);
            if (store_event(d->db, l.v[i].id, daemon_wall_now(), "logs-purged", detail, &err))
                d_fail(d, &err);
            removed++;
        }
    }
    if (removed)
        dlog(d, "removed the logs of %d task(s) ended over %d day(s) ago", removed, days);
    free(l.v);
    int aside = purge_set_aside(d, l.cutoff);
    if (aside)
        dlog(d, "removed %d attempt directory(ies) moved aside (ID.N.replaced-K) over %d day(s)"
             " ago", aside, days);
    int forgotten = 0;
    if (d_txn(d) && store_forget_env(d->db, l.cutoff, &forgotten, &err))
        d_fail(d, &err);
    else if (forgotten > 0)
        dlog(d, "dropped the environment of %d task(s) ended over %d day(s) ago", forgotten, days);
}
