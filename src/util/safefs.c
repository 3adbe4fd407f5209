/* safefs.c — directories and files a privileged process can trust (see safefs.h). */
#include "util/safefs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int safefs_openat(int dirfd, const char *name, int flags, mode_t mode)
{
    return openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
}

/* Creates the missing parents of path (not path itself) with mode. */
static int make_parents(const char *path, mode_t mode, carma_err *err)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return carma_err_set(err, "path too long: %s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, mode) && errno != EEXIST)
            return carma_err_set(err, "%s: %s", buf, strerror(errno));
        *p = '/';
    }
    return 0;
}

/* Whether the directory's owner and mode make it one of the given kind. */
static bool trusted(const struct stat *sb, safefs_kind kind)
{
    uid_t me = geteuid();
    if (kind == SAFEFS_PRIVATE)
        return sb->st_uid == me && !(sb->st_mode & (S_IWGRP | S_IWOTH));
    if (sb->st_uid != me && sb->st_uid != 0)
        return false;
    return !(sb->st_mode & (S_IWGRP | S_IWOTH)) || (sb->st_mode & S_ISVTX);
}

int safefs_dir(int dirfd, const char *name, mode_t mode, safefs_kind kind, carma_err *err)
{
    if (dirfd == AT_FDCWD && make_parents(name, kind == SAFEFS_PRIVATE ? 0700 : mode, err))
        return -1;
    if (mkdirat(dirfd, name, mode) && errno != EEXIST)
        return carma_err_set(err, "%s: cannot create: %s", name, strerror(errno));
    int fd = safefs_openat(dirfd, name, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0) {
        int e = errno;
        struct stat sb;
        if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode))
            return carma_err_set(err, "%s is a symbolic link; refusing it (a directory of "
                                      "its own is needed)", name);
        return carma_err_set(err, "%s: %s", name, strerror(e));
    }
    struct stat sb;
    if (fstat(fd, &sb)) {
        carma_err_set(err, "%s: %s", name, strerror(errno));
        close(fd);
        return -1;
    }
    if (!trusted(&sb, kind)) {
        carma_err_set(err, "%s is owned by uid %u with mode %04o; refusing it: it must be owned "
                           "by uid %u%s and writable by nobody else%s",
                      name, (unsigned)sb.st_uid, (unsigned)(sb.st_mode & 07777),
                      (unsigned)geteuid(), kind == SAFEFS_SHARED ? " (or root)" : "",
                      kind == SAFEFS_SHARED ? " unless sticky" : "");
        close(fd);
        return -1;
    }
    return fd;
}

int safefs_private_file(int dirfd, const char *name, const char *path, carma_err *err)
{
    int fd = safefs_openat(dirfd, name, O_RDONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    if (errno != EEXIST)
        return carma_err_set(err, "%s: cannot create: %s", path, strerror(errno));
    struct stat sb;
    if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW))
        return carma_err_set(err, "%s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return carma_err_set(err, "%s is not a regular file (a %s); refusing it", path,
                             S_ISLNK(sb.st_mode) ? "symbolic link" : "special file");
    if (sb.st_uid != geteuid() || sb.st_nlink != 1)
        return carma_err_set(err, "%s is owned by uid %u with %u link(s); refusing it: it must "
                                  "be owned by uid %u, with one link",
                             path, (unsigned)sb.st_uid, (unsigned)sb.st_nlink,
                             (unsigned)geteuid());
    if ((sb.st_mode & 0777) != 0600 && fchmodat(dirfd, name, 0600, 0))
        return carma_err_set(err, "%s: chmod: %s", path, strerror(errno));
    return 0;
}

/* Whether a file (not a directory) is one only the effective uid or root could have written. */
static bool trusted_file_stat(const struct stat *sb)
{
    return (sb->st_uid == geteuid() || sb->st_uid == 0) && !(sb->st_mode & (S_IWGRP | S_IWOTH));
}

int safefs_trusted_file(const char *path, const char *what, carma_err *err)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return carma_err_set(err, "%s %s: %s", what, path, strerror(errno));
    struct stat sb;
    if (stat(real, &sb))
        return carma_err_set(err, "%s %s: %s", what, real, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return carma_err_set(err, "%s %s is not a regular file", what, real);
    if (!trusted_file_stat(&sb))
        return carma_err_set(err, "%s %s is owned by uid %u with mode %04o; refusing it: it must "
                                  "be owned by uid %u or root and writable by nobody else",
                             what, real, (unsigned)sb.st_uid, (unsigned)(sb.st_mode & 07777),
                             (unsigned)geteuid());
    /* Every directory above: whoever can write in one could swap the file for another. */
    for (char *slash = strrchr(real, '/'); slash; slash = strrchr(real, '/')) {
        *slash = '\0';
        const char *dir = real[0] ? real : "/";
        if (stat(dir, &sb))
            return carma_err_set(err, "%s: directory %s: %s", what, dir, strerror(errno));
        if (!trusted(&sb, SAFEFS_SHARED))
            return carma_err_set(err, "%s %s is in directory %s, owned by uid %u with mode %04o; "
                                      "refusing it: every directory above it must be owned by "
                                      "uid %u or root and writable by nobody else unless sticky",
                                 what, path, dir, (unsigned)sb.st_uid,
                                 (unsigned)(sb.st_mode & 07777), (unsigned)geteuid());
        if (!real[0])
            break;
    }
    return 0;
}
