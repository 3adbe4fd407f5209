/* safefs.h — directories and files a privileged process can trust: a directory is used only
 * when the process's own user owns it and nobody else can write to it (otherwise whoever can
 * write there can plant a symlink, a file or a database for it to follow, truncate, chown or
 * load), and it is opened without following a symlink at its last component, so that the
 * files inside can be opened relative to its descriptor (openat with O_NOFOLLOW). */
#ifndef CARMA_UTIL_SAFEFS_H
#define CARMA_UTIL_SAFEFS_H

#include <stdbool.h>
#include <sys/types.h>

#include "util/err.h"

typedef enum safefs_kind {
    SAFEFS_PRIVATE, /* owned by the effective uid, not writable by group or others */
    SAFEFS_SHARED,  /* owned by the effective uid or root, not writable by group or others
                     * unless sticky (a sticky root-owned /tmp cannot have our files replaced) */
} safefs_kind;

/* Opens the directory name (relative to dirfd, or a path with AT_FDCWD), creating it with mode
 * `mode` when missing (and, for a path, its missing parents with the same mode), and checks it
 * is a directory of the given kind; a symlink at its last component is refused. Returns an
 * O_DIRECTORY descriptor (O_CLOEXEC), or -1 with err naming the path, its owner and mode. */
int safefs_dir(int dirfd, const char *name, mode_t mode, safefs_kind kind, carma_err *err);

/* Makes sure name in dirfd is a private regular file of ours: when absent it is created empty
 * (mode 0600, never through a symlink); when present it must be a regular file (not a
 * symlink) owned by the effective uid with one link, and its mode is narrowed to 0600. path
 * names it in errors. Returns 0, or -1 with err. */
int safefs_private_file(int dirfd, const char *name, const char *path, carma_err *err);

/* Whether a file a privileged process reads or runs (its config, a hook program) is one only
 * it or root could have written: path (symlinks resolved) is a regular file owned by the
 * effective uid or root and writable by nobody else, and so is every directory above it (a
 * sticky one may be writable by others: they cannot replace what is not theirs). `what` names
 * the file in err. Returns 0, or -1 with err naming the culprit, its owner and mode. */
int safefs_trusted_file(const char *path, const char *what, carma_err *err);

/* openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode). */
int safefs_openat(int dirfd, const char *name, int flags, mode_t mode);

#endif
