/* supervisor.h — launches a task through a small supervisor process (the pattern of
 * containerd's shim and conmon). The supervisor is forked from the daemon into its own
 * session, so it outlives a daemon crash; it owns the task's process (its own process group,
 * killed with the supervisor through PR_SET_PDEATHSIG), writes the task's stdout and stderr
 * to files in the attempt directory, waits for it, and records the exit status and the tail
 * of stderr. Files in the attempt directory:
 *
 *     lock     flock'ed by the supervisor for its whole life (taken before the fork, so
 *              there is no moment when a launched supervisor does not hold it); holds its pid
 *     started  the task's pid, written once it is forked
 *     result   exit status, cancel flag, output limit passed, then the stderr tail (written
 *              last, atomically)
 *     stdout, stderr   the task's logs, its submitter's alone (mode 0600, owned by them),
 *              written by the supervisor from pipes (outpump.h), never by the task itself
 *
 * The directory (0700) and the other files (0600) are the daemon's user's alone; none is
 * opened through a symlink. A lone simple command runs as `exec COMMAND` (shellcmd.h). On a
 * full disk the lock's pid, `started` and `result` are written once there is room, never in
 * part; a directory that already holds another attempt's files (a replaced state database:
 * task ids began again) is moved aside to NAME.replaced-K before the launch.
 *
 * A SIGTERM to the supervisor cancels: it sends SIGTERM to the task's process group, and
 * SIGKILL once the group is still there after the grace period (the task's own process
 * exiting early does not cut the grace short for the rest of its group: a checkpoint written
 * on SIGTERM by a child of the task's shell gets its time). The parent-death signal is set
 * after the task's switch of user (which would clear it). Its time limit, past which it
 * cancels the task as if asked to, is kept by the supervisor, as Slurm's slurmstepd keeps a
 * step's. */
#ifndef CARMA_DAEMON_SUPERVISOR_H
#define CARMA_DAEMON_SUPERVISOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/oomclass.h"
#include "util/err.h"

#define SUPERVISOR_TAIL_MAX 4096 /* bytes of stderr kept with the result */

typedef struct launch_spec {
    const char *dir;          /* attempt directory (created by supervisor_launch) */
    int parent_fd;            /* the directory that holds it (the daemon's attempts/), where
                               * it is created by its last name; AT_FDCWD: dir as a path */
    const char *command;      /* run as /bin/sh -c command */
    const char *cwd;
    char *const *env;         /* NULL-terminated "KEY=VALUE" list: the task's whole env */
    bool switch_user;         /* run as uid/gid/groups (daemon is root) */
    uid_t uid;
    gid_t gid;
    const gid_t *groups;
    int ngroups;
    double kill_grace_s;
    int task_umask;           /* the task's umask (the daemon's own is 077); -1 leaves it */
    int64_t task_nofile;      /* the task's soft descriptor limit (the daemon raised its own);
                                 0 or less (unknown, or not given) leaves it */
    int64_t max_output_bytes; /* stdout + stderr past this: the rest dropped, the task
                                 cancelled (outpump.h); 0: no limit */
    int64_t min_free_bytes;   /* output dropped while the logs' filesystem has less free
                                 (outpump.h); 0: no floor */
    double time_limit_s;      /* the task's time limit, seconds from its fork: past it the
                                 supervisor cancels it itself, so that a limit holds while the
                                 daemon is down (it cancels at its own clock too); 0: none */
    char *set_aside;          /* where the name another attempt's directory was moved aside
                                 to is written (set_aside_cap bytes; "" when none was); NULL:
                                 not asked */
    size_t set_aside_cap;
} launch_spec;

/* Creates the attempt directory and forks the supervisor. *sup_pid = its pid. */
int supervisor_launch(const launch_spec *spec, pid_t *sup_pid, carma_err *err);

typedef enum sup_status {
    SUP_RUNNING = 0,      /* the supervisor holds its lock */
    SUP_ENDED,            /* the result is there */
    SUP_NEVER_STARTED,    /* no supervisor, and it never forked the task */
    SUP_LOST,             /* the task was started but its supervisor died without a result */
    SUP_UNKNOWN           /* its files could not be read now (e.g. no descriptor left): this
                           * says nothing about the supervisor; look again later */
} sup_status;

typedef struct sup_result {
    exit_status status;
    bool cancelled;
    bool time_limit;          /* cancelled by its supervisor at the time limit ("cancelled 2"
                                 in the result, which an older daemon reads as cancelled) */
    int64_t output_over_mib;  /* > 0: cancelled because its output passed this limit */
    char tail[SUPERVISOR_TAIL_MAX + 1];
    size_t tail_len;
    double ended_at; /* when the supervisor wrote it (the file's time, Unix); 0 unknown */
} sup_result;

/* Looks at an attempt directory. *task_pid is filled when known (0 otherwise); *res when
 * SUP_ENDED. */
sup_status supervisor_poll(const char *dir, pid_t *task_pid, sup_result *res);

/* Asks a running supervisor to cancel its task (SIGTERM, then SIGKILL after its grace).
 * Checks first that the supervisor still holds its lock (whose file names its pid), so a
 * reused pid is never signalled. */
int supervisor_cancel(const char *dir, carma_err *err);

/* After SUP_LOST: the task's own process died with its supervisor, but what it started may
 * live on in its process group; this ends them (SIGKILL to the group, if it still exists).
 * Not when the attempt directory dir (NULL: not looked at) shows the task started before this
 * boot (a daemon restarted after a reboot: the id may be another group's now), and, from a
 * root daemon, sent as the task's owner uid, so that a group id reused by another user's
 * process is never hit. */
void supervisor_kill_leftovers(const char *dir, pid_t task_pid, uid_t uid);

#endif
