/* safefs.h — directories and files a privileged process can trust: a directory is used only
 * when the process's own user owns it and nobody else can write to it (otherwise whoever can
 * write there can plant a symlink, a file or a database for it to follow, truncate, chown or
 * load), and it is opened without following a symlink at its last component, so that the
 * files inside can be opened relative to its descriptor (openat with O_NOFOLLOW). Also: a set
 * of output files written into a directory all together, with no symlink followed. */
#ifndef CARMA_UTIL_SAFEFS_H
#define CARMA_UTIL_SAFEFS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/err.h"

typedef enum safefs_kind {
    SAFEFS_PRIVATE, /* owned by the effective uid, not writable by group or others */
    SAFEFS_SHARED,  /* owned by the effective uid or root, not writable by group or others
                     * unless sticky (a sticky root-owned /tmp cannot have our files replaced) */
} safefs_kind;

/* Makes the missing directories above path with mode `mode` (less the umask); those there are
 * left as they are. 0, or -1 with err naming the one that could not be made. */
int safefs_make_parents(const char *path, mode_t mode, carma_err *err);

/* Opens the directory name (relative to dirfd, or a path with AT_FDCWD), creating it with mode
 * `mode` when missing (and, for a path, its missing parents: 0700 for SAFEFS_PRIVATE, else with
 * the same mode), and checks it
 * is a directory of the given kind; a symlink at its last component is refused. Returns an
 * O_DIRECTORY descriptor (O_CLOEXEC), or -1 with err naming the path, its owner and mode. */
int safefs_dir(int dirfd, const char *name, mode_t mode, safefs_kind kind, carma_err *err);

/* What a file of this mode is, for an error ("symbolic link", "directory", "named pipe", ...). */
const char *safefs_type_name(mode_t mode);

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
/* As safefs_trusted_file, and stores the resolved path (cap bytes at most) in real: what the
 * caller must open or run, not path. Only the resolved path's directories were found trusted:
 * a symlink on the way may lie in a directory whose owner could point it elsewhere later. */
int safefs_trusted_file_real(const char *path, const char *what, char *real, size_t cap,
                             carma_err *err);

/* openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode). */
int safefs_openat(int dirfd, const char *name, int flags, mode_t mode);

/* ---- a set of files written into a directory all together ----------------------------------
 * Output files of a command (`carma simulate --out`, `--plot`) go to a directory the user names,
 * which others may be able to write to. They are written in a staging directory made inside it
 * (a fresh name, mode 0700: nobody else can plant a symlink there, or swap a file between its
 * writing and its use), then moved into place together; until then the target is untouched. */
typedef struct safefs_stage {
    int dirfd;       /* the target directory */
    int fd;          /* the staging directory */
    bool created;    /* the target did not exist: removed again unless committed */
    bool committed;
    char path[4096]; /* the target as named, for messages */
    char name[32];   /* the staging directory's name in the target */
} safefs_stage;

/* Opens directory `dir` (created, mode 0777 less the umask, when missing; its parent must
 * exist) and makes a fresh staging directory in it. A symlink on the way to dir (at one of its
 * components, or in a link's target) must be the effective uid's or root's: one of another
 * user's is refused, as fs.protected_symlinks would in /tmp (its maker chose where the files
 * go: into a directory of ours, replacing our files). Returns 0, or -1 with err "WHAT DIR: why"
 * (`what` is the option naming it, e.g. "--out") and st left closed. */
int safefs_stage_open(safefs_stage *st, const char *what, const char *dir, carma_err *err);

/* Creates file `name` in the staging directory for writing (mode 0644 less the umask; never an
 * existing file, never through a symlink). Returns the stream, or NULL with err. */
FILE *safefs_stage_fopen(safefs_stage *st, const char *name, carma_err *err);

/* Moves the staged files names[0..n) into the target directory under the same names; what is
 * there is replaced (a symlink itself, never what it points to). All or nothing: a name that
 * is a directory there is refused before anything moves, and should a move fail, the files
 * already moved are taken back and the files they replaced restored. Returns 0, or -1 with
 * err naming the file. */
int safefs_stage_commit(safefs_stage *st, const char *const *names, size_t n, carma_err *err);

/* Removes the staging directory and whatever is left in it, and the target directory too when
 * safefs_stage_open created it and nothing was committed (when it is still empty). */
void safefs_stage_close(safefs_stage *st);

#endif
