/* safefs.c — directories and files a privileged process can trust, and sets of output files
 * written into a directory all together (see safefs.h). */
#include "util/safefs.h"

#include <dirent.h>
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

/* Creates the missing parents of path (not path itself) with mode. An error names path first:
 * the parent alone ("/nonexistent: Permission denied") would not say what was wanted there. */
int safefs_make_parents(const char *path, mode_t mode, carma_err *err)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return carma_err_set(err, "path too long: %s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, mode) && errno != EEXIST)
            return carma_err_set(err, "%s: cannot create %s: %s", path, buf, strerror(errno));
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

/* The refusal of a directory whose owner or mode make it not of the given kind. */
static int untrusted_dir(const char *name, const struct stat *sb, safefs_kind kind,
                         carma_err *err)
{
    return carma_err_set(err, "%s is owned by uid %u with mode %04o; refusing it: it must be "
                              "owned by uid %u%s and writable by nobody else%s",
                         name, (unsigned)sb->st_uid, (unsigned)(sb->st_mode & 07777),
                         (unsigned)geteuid(), kind == SAFEFS_SHARED ? " (or root)" : "",
                         kind == SAFEFS_SHARED ? " unless sticky" : "");
}

int safefs_dir(int dirfd, const char *name, mode_t mode, safefs_kind kind, carma_err *err)
{
    if (dirfd == AT_FDCWD && safefs_make_parents(name, kind == SAFEFS_PRIVATE ? 0700 : mode, err))
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
        /* Another user's directory we may not open (one made first in /tmp, mode 0700):
         * say whose, not only "permission denied". */
        if (e == EACCES && fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISDIR(sb.st_mode) && !trusted(&sb, kind))
            return untrusted_dir(name, &sb, kind, err);
        return carma_err_set(err, "%s: %s", name, strerror(e));
    }
    struct stat sb;
    if (fstat(fd, &sb)) {
        carma_err_set(err, "%s: %s", name, strerror(errno));
        close(fd);
        return -1;
    }
    if (!trusted(&sb, kind)) {
        untrusted_dir(name, &sb, kind, err);
        close(fd);
        return -1;
    }
    return fd;
}

const char *safefs_type_name(mode_t mode)
{
    return S_ISREG(mode)    ? "regular file"
           : S_ISLNK(mode)  ? "symbolic link"
           : S_ISDIR(mode)  ? "directory"
           : S_ISFIFO(mode) ? "named pipe"
           : S_ISSOCK(mode) ? "socket"
           : S_ISCHR(mode) || S_ISBLK(mode) ? "device"
                                             : "special file";
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
                             safefs_type_name(sb.st_mode));
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
    return safefs_trusted_file_real(path, what, real, sizeof real, err);
}

int safefs_trusted_file_real(const char *path, const char *what, char *out, size_t cap,
                             carma_err *err)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return carma_err_set(err, "%s %s: %s", what, path, strerror(errno));
    if (strlen(real) >= cap)
        return carma_err_set(err, "%s %s: its resolved path %s is too long", what, path, real);
    char resolved[PATH_MAX];
    snprintf(resolved, sizeof resolved, "%s", real);
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
    snprintf(out, cap, "%s", resolved); /* path may be out: written last */
    return 0;
}

/* ---- a set of files written into a directory all together ---------------------------------- */

/* Removes the files in directory fd (a staging directory holds files only). */
static void empty_dir(int fd)
{
    int d = dup(fd);
    DIR *dp = d >= 0 ? fdopendir(d) : NULL;
    if (!dp) {
        if (d >= 0)
            close(d);
        return;
    }
    for (struct dirent *e; (e = readdir(dp)) != NULL;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(fd, e->d_name, 0);
    closedir(dp);
}

/* Symlinks looked through for one directory, in all and nested (the kernel follows 40). */
#define LINKS_CHECKED_MAX 1000
#define LINKS_NESTED_MAX 40

/* Refuses a symlink owned by another user (root's and ours are fine) that naming dir would
 * follow: one at a component of dir, or inside the target of a link followed there (checked
 * in turn). Whoever made such a link chose where our files go (one planted at /tmp/results,
 * pointing at a directory of ours, would have them replace our files there); the kernel
 * refuses to follow it only in sticky world-writable directories, and only where
 * fs.protected_symlinks is on. top: the path named, for messages; *links: the budget;
 * depth: links nested so far. */
static int foreign_symlink(const char *what, const char *top, const char *dir, int *links,
                           int depth, carma_err *err)
{
    char prefix[sizeof ((safefs_stage *)0)->path], target[sizeof prefix];
    size_t n = strlen(dir);
    for (size_t i = 1; i <= n && n < sizeof prefix; i++) {
        if ((i < n && dir[i] != '/') || dir[i - 1] == '/')
            continue; /* a prefix ends at each component's end */
        memcpy(prefix, dir, i);
        prefix[i] = '\0';
        struct stat sb;
        if (lstat(prefix, &sb))
            return 0; /* missing: nothing below it exists either */
        if (!S_ISLNK(sb.st_mode))
            continue;
        if (sb.st_uid != geteuid() && sb.st_uid != 0)
            return carma_err_set(err, "%s %s: %s is a symbolic link of another user's (uid %u); "
                                 "name the directory it points to if the files belong there",
                                 what, top, prefix, (unsigned)sb.st_uid);
        if (++*links > LINKS_CHECKED_MAX || depth >= LINKS_NESTED_MAX)
            return carma_err_set(err, "%s %s: %s", what, top, strerror(ELOOP));
        ssize_t len = readlink(prefix, target, sizeof target - 1);
        if (len < 0)
            continue; /* open will say why */
        target[len] = '\0';
        const char *slash = strrchr(prefix, '/');
        size_t base = target[0] == '/' || !slash ? 0 : (size_t)(slash - prefix) + 1;
        if (base + (size_t)len >= sizeof target)
            return carma_err_set(err, "%s %s: path too long", what, top);
        memmove(target + base, target, (size_t)len + 1); /* relative: beside the link */
        memcpy(target, prefix, base);
        if (foreign_symlink(what, top, target, links, depth + 1, err))
            return -1;
    }
    return 0;
}

/* Whether dir's last component is a symlink (trailing slashes aside). */
static bool last_is_link(const char *dir)
{
    char path[sizeof ((safefs_stage *)0)->path];
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n >= sizeof path)
        return false;
    memcpy(path, dir, n);
    path[n] = '\0';
    struct stat sb;
    return lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode);
}

int safefs_stage_open(safefs_stage *st, const char *what, const char *dir, carma_err *err)
{
    memset(st, 0, sizeof *st);
    st->dirfd = st->fd = -1;
    char tmpl[sizeof st->path + sizeof st->name];
    if (!*dir)
        return carma_err_set(err, "%s: empty directory name", what);
    if (snprintf(tmpl, sizeof tmpl, "%s/.carma-stage.XXXXXX", dir) >= (int)sizeof st->path)
        return carma_err_set(err, "%s %s: path too long", what, dir);
    snprintf(st->path, sizeof st->path, "%s", dir);
    int links = 0;
    if (foreign_symlink(what, dir, dir, &links, 0, err))
        return -1;
    bool link = last_is_link(dir);
    if (mkdir(dir, 0777) == 0)
        st->created = true;
    else if (errno != EEXIST)
        return carma_err_set(err, "%s %s: %s", what, dir, strerror(errno));
    /* DIR was no symlink when checked: one put there since is not followed */
    st->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (link ? 0 : O_NOFOLLOW));
    if (st->dirfd < 0) {
        int e = errno;
        carma_err_set(err, "%s %s: %s", what, dir,
                      e == ENOTDIR ? "exists and is not a directory"
                      : e == ELOOP && !link ? "became a symbolic link while in use"
                      : e == ENOENT && link ? "a symbolic link to a missing directory"
                                            : strerror(e));
        safefs_stage_close(st);
        return -1;
    }
    if (!mkdtemp(tmpl)) {
        carma_err_set(err, "%s %s: cannot create a file there: %s", what, dir, strerror(errno));
        safefs_stage_close(st);
        return -1;
    }
    snprintf(st->name, sizeof st->name, "%s", strrchr(tmpl, '/') + 1);
    /* ours, made just now, with nobody else's write access (not a look-alike put in its place) */
    st->fd = safefs_openat(st->dirfd, st->name, O_RDONLY | O_DIRECTORY, 0);
    struct stat sb;
    if (st->fd < 0 || fstat(st->fd, &sb) || sb.st_uid != geteuid() || (sb.st_mode & 077)) {
        carma_err_set(err, "%s %s: %s was replaced while in use", what, dir, st->name);
        safefs_stage_close(st);
        return -1;
    }
    return 0;
}

FILE *safefs_stage_fopen(safefs_stage *st, const char *name, carma_err *err)
{
    int fd = safefs_openat(st->fd, name, O_WRONLY | O_CREAT | O_EXCL, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        carma_err_set(err, "%s/%s: %s", st->path, name, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    return f;
}

/* The name in the staging directory that keeps the file staged name i replaces, until the
 * commit is done (staged names are the callers' plain file names, never this). */
static void backup_name(char *out, size_t size, size_t i)
{
    snprintf(out, size, ".carma-replaced.%zu", i);
}

int safefs_stage_commit(safefs_stage *st, const char *const *names, size_t n, carma_err *err)
{
    struct stat sb;
    for (size_t i = 0; i < n; i++) /* rename cannot replace a directory: refuse before moving */
        if (fstatat(st->dirfd, names[i], &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode))
            return carma_err_set(err, "%s/%s: %s", st->path, names[i], strerror(EISDIR));
    bool *kept = calloc(n ? n : 1, sizeof *kept);
    if (!kept)
        return carma_err_set(err, "%s: out of memory", st->path);
    size_t moved = 0;
    char bak[64];
    for (; moved < n; moved++) {
        backup_name(bak, sizeof bak, moved);
        /* a second link to the file about to be replaced (a symlink itself, not followed) */
        kept[moved] = linkat(st->dirfd, names[moved], st->fd, bak, 0) == 0;
        if (renameat(st->fd, names[moved], st->dirfd, names[moved]))
            break;
    }
    int rc = 0;
    if (moved < n) {
        rc = carma_err_set(err, "%s/%s: %s", st->path, names[moved], strerror(errno));
        for (size_t i = 0; i < moved; i++) { /* undo: the old file back, or no file */
            backup_name(bak, sizeof bak, i);
            if (!kept[i] || renameat(st->fd, bak, st->dirfd, names[i]))
                unlinkat(st->dirfd, names[i], 0);
        }
    } else {
        st->committed = true;
    }
    free(kept);
    return rc;
}

void safefs_stage_close(safefs_stage *st)
{
    if (st->fd >= 0) {
        empty_dir(st->fd);
        close(st->fd);
    }
    if (st->dirfd >= 0) {
        if (st->name[0])
            unlinkat(st->dirfd, st->name, AT_REMOVEDIR);
        close(st->dirfd);
    }
    if (st->created && !st->committed)
        rmdir(st->path); /* only when still empty */
    st->fd = st->dirfd = -1;
    st->name[0] = '\0';
    st->created = false;
}
