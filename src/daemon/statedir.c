/* statedir.c — the daemon's state directory and its socket's directory, made safe before
 * anything in them is read or written. A root daemon must not use a directory someone else
 * could write to: they could plant a symlink where an attempt's log goes (and have a root file
 * chowned to them or truncated), or a database whose queued task the daemon would then run as
 * root. So the state directory must be the daemon's user's and private (created 0700; an older
 * one is narrowed to it), the database a regular file of ours (0600), and the directory is
 * locked for the daemon's life: two daemons on one state directory would both adopt its
 * running tasks. Its free space is looked at each monitor tick (state_min_free_mib): a full
 * filesystem would fail a database write, and that stops the daemon. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/daemon_int.h"
#include "daemon/journal.h"
#include "util/fsfree.h"
#include "util/safefs.h"

#define LOCK_NAME "daemon.lock"

/* A private directory (dirfd/name), narrowed to 0700 when it was wider. */
static int private_dir(int dirfd, const char *name, const char *what, carma_err *err)
{
    int fd = safefs_dir(dirfd, name, 0700, SAFEFS_PRIVATE, err);
    struct stat there; /* "Not a directory" alone did not say what is there, or why */
    if (fd < 0 && fstatat(dirfd, name, &there, AT_SYMLINK_NOFOLLOW) == 0 &&
        !S_ISDIR(there.st_mode) && !S_ISLNK(there.st_mode))
        carma_err_set(err, "%s is not a directory (a file is in its place); refusing it: move it "
                      "away", name);
    if (fd < 0)
        return carma_err_prefix(err, "%s", what);
    struct stat sb;
    if (fstat(fd, &sb) == 0 && (sb.st_mode & 0077) && fchmod(fd, 0700)) {
        carma_err_set(err, "%s %s: chmod: %s", what, name, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Takes the state directory's lock, and writes our pid in it for the next one to name. A
 * POSIX record lock, not flock: it belongs to this process alone, so it is gone the moment the
 * daemon exits. A flock is shared with every child forked while it is held, and a supervisor
 * forked just before the daemon stopped kept it until it closed its copy: a daemon restarted
 * at once was refused. */
static int lock_state(daemon_state *d, carma_err *err)
{
    const char *dir = d->opts->state_dir;
    int fd = safefs_openat(d->state_fd, LOCK_NAME, O_RDWR | O_CREAT, 0600);
    struct stat sb;
    if (fd < 0 && fstatat(d->state_fd, LOCK_NAME, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
        !S_ISREG(sb.st_mode)) /* ELOOP's "Too many levels of symbolic links" said neither */
        return carma_err_set(err, "%s/%s is not a regular file (a %s); refusing it: move it away "
                             "(the daemon makes its own)", dir, LOCK_NAME,
                             safefs_type_name(sb.st_mode));
    if (fd < 0)
        return carma_err_set(err, "%s/%s: %s", dir, LOCK_NAME, strerror(errno));
    struct flock whole = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fcntl(fd, F_SETLK, &whole)) {
        int e = errno;
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        close(fd);
        if (e != EAGAIN && e != EACCES)
            return carma_err_set(err, "%s/%s: lock: %s", dir, LOCK_NAME, strerror(e));
        return carma_err_set(err, "state directory %s is in use by another carma daemon (pid %s); "
                                  "one state directory serves one daemon",
                             dir, pid[0] ? pid : "unknown");
    }
    char text[32];
    int n = snprintf(text, sizeof text, "%d\n", (int)getpid());
    if (ftruncate(fd, 0) || pwrite(fd, text, (size_t)n, 0) != n) {
        carma_err_set(err, "%s/%s: %s", dir, LOCK_NAME, strerror(errno));
        close(fd);
        return -1;
    }
    d->lock_fd = fd;
    return 0;
}

/* The socket's directory, and how much of its path existed before check_socket_dir: the
 * directories past that are the ones it made, removed again when start-up is refused. */
typedef struct socket_dir {
    char path[4096];
    size_t existed; /* length of the longest leading part that was there already */
} socket_dir;

/* Removes the directories check_socket_dir made, deepest first; rmdir leaves one that is no
 * longer empty (something else put there in between). */
static void remove_made_dirs(socket_dir *sd)
{
    char *slash;
    while (strlen(sd->path) > sd->existed && rmdir(sd->path) == 0 &&
           (slash = strrchr(sd->path, '/')) != NULL)
        *slash = '\0';
}

/* The socket's directory: created 0755 when missing (clients must reach the socket), ours or
 * root's, and writable by nobody else unless sticky (then nobody else can replace our socket,
 * e.g. by a symlink that the socket's chmod would follow). */
static int check_socket_dir(const char *socket_path, socket_dir *sd, carma_err *err)
{
    char *dir = sd->path;
    if (snprintf(dir, sizeof sd->path, "%s", socket_path) >= (int)sizeof sd->path)
        return carma_err_set(err, "socket path too long: %s", socket_path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof sd->path, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    char probe[sizeof sd->path];
    struct stat sb;
    memcpy(probe, dir, sizeof probe);
    while (probe[0] && lstat(probe, &sb) && errno == ENOENT) {
        slash = strrchr(probe, '/');
        *(slash ? slash : probe) = '\0'; /* a relative path none of which exists: "" */
    }
    sd->existed = strlen(probe);
    /* 0755 as asked: the daemon's own umask (077, daemon.c) made them 0700, and no other
     * user could reach the socket in a directory it created (/run/carma without the unit) */
    mode_t old = umask(022);
    int fd = safefs_dir(AT_FDCWD, dir, 0755, SAFEFS_SHARED, err);
    umask(old);
    if (fd < 0) {
        remove_made_dirs(sd);
        return carma_err_prefix(err, "socket directory");
    }
    close(fd);
    return 0;
}

/* Whether attempts/ holds anything: the attempt directories of an earlier database. */
static bool has_attempts(int attempts_fd)
{
    int fd = openat(attempts_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    struct dirent *e;
    bool any = false;
    while (!any && (e = readdir(dir)))
        any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(dir);
    return any;
}

/* The database's own files, before SQLite opens them: its companions (-wal: its latest
 * transactions; -shm; -journal), when there, regular files of ours (SQLite refused a symlink
 * with "unable to open database file", naming neither the file nor why). And an empty
 * database where attempts/ holds attempt directories was cut short (or emptied) since: carma
 * would have begun again with no tasks, those attempts' tasks unwatched. */
static int check_db_files(daemon_state *d, const char *path, carma_err *err)
{
    static const char *const companions[] = {"carma.db-wal", "carma.db-shm", "carma.db-journal"};
    struct stat sb;
    for (size_t i = 0; i < sizeof companions / sizeof companions[0]; i++) {
        if (fstatat(d->state_fd, companions[i], &sb, AT_SYMLINK_NOFOLLOW))
            continue;
        if (!S_ISREG(sb.st_mode))
            return carma_err_set(err, "%s/%s is not a regular file (a %s); refusing it: move it "
                                 "away", d->opts->state_dir, companions[i],
                                 safefs_type_name(sb.st_mode));
        if (sb.st_uid != geteuid())
            return carma_err_set(err, "%s/%s is owned by uid %u; refusing it: it must be owned "
                                 "by uid %u", d->opts->state_dir, companions[i],
                                 (unsigned)sb.st_uid, (unsigned)geteuid());
    }
    bool wal = fstatat(d->state_fd, "carma.db-wal", &sb, AT_SYMLINK_NOFOLLOW) == 0 && sb.st_size;
    if (fstatat(d->state_fd, "carma.db", &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
        sb.st_size == 0 && !wal && has_attempts(d->attempts_fd))
        return carma_err_set(err, "%s is empty, but %s/attempts holds the directories of earlier "
                             "attempts: the database was cut short or emptied; carma left it as "
                             "it is: restore it from a backup, or remove it to start with an "
                             "empty queue (task ids begin again)", path, d->opts->state_dir);
    return 0;
}

static int open_state_dir(daemon_state *d, carma_err *err)
{
    const char *dir = d->opts->state_dir;
    /* one nobody named (from $HOME, say): the error says so, and how to name another */
    const char *what = d->opts->state_default
                           ? "default state directory (name another with --state DIR or the "
                             "config's state_dir)"
                           : "state directory";
    if ((d->state_fd = private_dir(AT_FDCWD, dir, what, err)) < 0)
        return -1;
    if (lock_state(d, err))
        return -1;
    if ((d->attempts_fd = private_dir(d->state_fd, "attempts", dir, err)) < 0)
        return -1;
    char path[4200];
    snprintf(path, sizeof path, "%s/carma.db", dir);
    if (check_db_files(d, path, err) ||
        safefs_private_file(d->state_fd, "carma.db", path, err))
        return carma_err_prefix(err, "state database");
    return 0;
}

int d_statedir_open(daemon_state *d, carma_err *err)
{
    /* the socket first: one refused leaves no state directory behind; and a state directory
     * refused leaves no socket directory made for it */
    struct sockaddr_un sa;
    socket_dir sd;
    if (d_socket_addr(&sa, d->opts->socket_path, err) ||
        check_socket_dir(d->opts->socket_path, &sd, err))
        return -1;
    if (d_socket_available(d->opts->socket_path, err) || open_state_dir(d, err)) {
        remove_made_dirs(&sd);
        return -1;
    }
    return 0;
}

void d_statedir_close(daemon_state *d)
{
    if (d->lock_fd >= 0)
        close(d->lock_fd); /* the lock goes with it */
    if (d->state_fd >= 0)
        close(d->state_fd);
    if (d->attempts_fd >= 0)
        close(d->attempts_fd);
    d->lock_fd = d->state_fd = d->attempts_fd = -1;
}

/* ---- free space ------------------------------------------------------------------------- */

void d_check_state_space(daemon_state *d)
{
    const char *dir = d->opts->state_dir;
    int64_t floor = (int64_t)d->cfg.daemon.state_min_free_mib << 20;
    int64_t free = fs_free_bytes(d->state_fd);
    if (free < 0) { /* unknown: the last verdict stands, and the last figure */
        if (d->state_free_read >= 0 && floor > 0)
            dlog(d, "state directory %s: its free space cannot be read (%s); %s until it can",
                 dir, strerror(errno),
                 d->state_low ? "new tasks stay refused" : "taken to be enough");
        d->state_free_read = -1;
        return;
    }
    if (d->state_free_read < 0 && floor > 0)
        dlog(d, "state directory %s: its free space can be read again: %lld MiB", dir,
             (long long)(free >> 20));
    d->state_free_read = 1;
    d->state_free_mib = free >> 20;
    bool low = floor > 0 && fs_under_floor(free, floor, d->state_low);
    if (low && !d->state_low)
        dlog(d, "state directory %s: %lld MiB free, under state_min_free_mib = %d: new tasks "
             "refused, queued ones wait, running ones' output dropped", dir,
             (long long)d->state_free_mib, d->cfg.daemon.state_min_free_mib);
    else if (!low && d->state_low) {
        dlog(d, "state directory %s: %lld MiB free again: tasks accepted and started", dir,
             (long long)d->state_free_mib);
        d->need_schedule = true;
    }
    d->state_low = low;
}

int d_state_space_refuses(const daemon_state *d, carma_err *err)
{
    if (!d->state_low)
        return 0;
    return carma_err_set(err, "the state directory's filesystem (%s) %s %lld MiB free, less "
                         "than state_min_free_mib = %d: no new tasks until it has more (free "
                         "some, or have state_min_free_mib lowered)", d->opts->state_dir,
                         d->state_free_read > 0 ? "has" : "had, when last read",
                         (long long)d->state_free_mib, d->cfg.daemon.state_min_free_mib);
}
