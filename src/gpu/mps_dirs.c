/* mps_dirs.c — the MPS control daemon's pipe and log directories (mps.h): where they are by
 * default, and that they are safe to trust (ours, writable by nobody else, no symlink) and,
 * for a root daemon whose tasks run as other users, reachable by those users' MPS servers. */
#include "gpu/mps.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/safefs.h"

/* A pipe or log directory: made 0700 when missing; an existing one must be ours and writable
 * by nobody else, and not a symlink (as the state directory: whoever could write there could
 * plant a pid file that passes for a running control daemon, or pipes of their own that every
 * task would connect to, or links where the root daemon writes its start log). */
static int own_dir(const char *path, carma_err *err)
{
    int fd = safefs_dir(AT_FDCWD, path, 0700, SAFEFS_PRIVATE, err);
    if (fd < 0)
        return carma_err_prefix(err, "MPS directory");
    close(fd);
    return 0;
}

#define SHARED_WHY                                                                            \
    "the daemon runs as root and each task as its submitter, whose MPS server (started as "     \
    "them) must reach the pipe directory, else the task runs without MPS and without its "      \
    "memory cap"

/* Every directory above the pipe directory (resolved): searchable by others, and owned by us
 * or root and writable by nobody else unless sticky (its owner could rename our pipe
 * directory away and put one of theirs in its place: tasks find it by name). */
static int check_above(const char *pipe_dir, carma_err *err)
{
    char real[PATH_MAX];
    if (!realpath(pipe_dir, real))
        return carma_err_set(err, "MPS pipe directory %s: %s", pipe_dir, strerror(errno));
    for (char *slash = strrchr(real, '/'); slash; slash = strrchr(real, '/')) {
        *slash = '\0';
        const char *dir = real[0] ? real : "/";
        struct stat sb;
        if (stat(dir, &sb))
            return carma_err_set(err, "directory %s above MPS pipe directory %s: %s", dir,
                                 pipe_dir, strerror(errno));
        unsigned mode = (unsigned)(sb.st_mode & 07777);
        if (!(sb.st_mode & S_IXOTH))
            return carma_err_set(err, "directory %s above MPS pipe directory %s has mode %04o: "
                                      "other users cannot pass through it, and %s; make it "
                                      "searchable (chmod o+x %s) or name another mps_pipe_dir",
                                 dir, pipe_dir, mode, SHARED_WHY, dir);
        bool owner_ok = sb.st_uid == geteuid() || sb.st_uid == 0;
        bool open_w = (sb.st_mode & (S_IWGRP | S_IWOTH)) && !(sb.st_mode & S_ISVTX);
        if (!owner_ok || open_w)
            return carma_err_set(err, "directory %s above MPS pipe directory %s is owned by uid "
                                      "%u with mode %04o; refusing it: every directory above it "
                                      "must be owned by uid %u or root and writable by nobody "
                                      "else unless sticky (else its owner could put a pipe "
                                      "directory of their own in its place)",
                                 dir, pipe_dir, (unsigned)sb.st_uid, mode, (unsigned)geteuid());
        if (!real[0])
            break;
    }
    return 0;
}

/* The pipe directory of a daemon whose tasks run as other users: made 0755 (its missing
 * parents too), ours, writable by nobody else, not a symlink, and reachable by every user. */
static int shared_pipe_dir(const char *path, carma_err *err)
{
    /* 0755 as asked, not as the daemon's umask (077) would make them; the parents too, which
     * a private directory's would be made 0700 */
    mode_t old = umask(022);
    int fd = safefs_make_parents(path, 0755, err)
                 ? -1
                 : safefs_dir(AT_FDCWD, path, 0755, SAFEFS_PRIVATE, err);
    umask(old);
    if (fd < 0)
        return carma_err_prefix(err, "MPS directory");
    struct stat sb;
    int rc = fstat(fd, &sb);
    close(fd);
    if (rc)
        return carma_err_set(err, "MPS pipe directory %s: %s", path, strerror(errno));
    if (!(sb.st_mode & S_IXOTH))
        return carma_err_set(err, "MPS pipe directory %s has mode %04o: other users cannot "
                                  "reach it, and %s; make it searchable (chmod o+x %s) or "
                                  "name another mps_pipe_dir",
                             path, (unsigned)(sb.st_mode & 07777), SHARED_WHY, path);
    return check_above(path, err);
}

int mps_default_dirs(const char *state, bool shared, char *pipe, size_t pipe_cap, char *log,
                     size_t log_cap, carma_err *err)
{
    size_t n = strlen(state);
    while (n > 1 && state[n - 1] == '/') /* "/var/lib/carma/" names /var/lib/carma */
        n--;
    int a = shared ? snprintf(pipe, pipe_cap, "%.*s-mps", (int)n, state)
                   : snprintf(pipe, pipe_cap, "%.*s/mps/pipe", (int)n, state);
    int b = snprintf(log, log_cap, "%.*s/mps/log", (int)n, state);
    if (a < 0 || (size_t)a >= pipe_cap || b < 0 || (size_t)b >= log_cap)
        return carma_err_set(err, "state directory path too long for its MPS directories: %s",
                             state);
    return 0;
}

int mps_dirs_prepare(const mps_options *o, carma_err *err)
{
    if (!o->pipe_dir || !*o->pipe_dir || !o->log_dir || !*o->log_dir)
        return carma_err_set(err, "MPS needs both a pipe directory and a log directory");
    if (o->shared ? shared_pipe_dir(o->pipe_dir, err) : own_dir(o->pipe_dir, err))
        return -1;
    return own_dir(o->log_dir, err);
}
