/* outpump.h — a task's stdout and stderr, through pipes, into its log files, up to a limit
 * (max_output_mib, stdout and stderr together). Past the limit the rest is dropped, a line in
 * the stderr log says so, and the supervisor cancels the task. While the logs' filesystem has
 * less than a floor free (state_min_free_mib), output is dropped and the task goes on; a line
 * says so when it starts and when it ends. The task never holds a
 * descriptor of the log files: nothing it starts or hands on (a process that left its group,
 * another process of its user holding /proc/PID/fd/1) can write to them once its supervisor
 * has ended, when the pipes lose their reader. */
#ifndef CARMA_DAEMON_OUTPUMP_H
#define CARMA_DAEMON_OUTPUMP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef struct outpump {
    int pipe_r[2];   /* read ends, stdout and stderr; -1 when closed */
    int file[2];     /* the log files */
    int64_t limit;   /* bytes, both together; 0: none */
    int64_t written;
    bool over;       /* the limit was passed: the rest is dropped */
    int64_t min_free;   /* bytes the logs' filesystem keeps free; 0: no floor */
    int64_t (*free_bytes)(int fd); /* what it has free, -1 unknown (fstatvfs; tests: theirs) */
    int64_t since_check;           /* bytes come since free space was last looked at */
    struct timespec checked;       /* when (CLOCK_MONOTONIC) */
    bool starved;                  /* under the floor: output dropped until there is more */
    int64_t dropped;               /* bytes dropped while starved, this time */
} outpump;

/* Makes the pipes; w[0] and w[1] are the ends the task writes to (its stdout and stderr).
 * Without pipes (no descriptor left) the task gets the files themselves, with no limit:
 * w = {outfd, errfd}, and the pump moves nothing. */
void outpump_open(outpump *p, int outfd, int errfd, int64_t limit, int w[2]);
/* Keeps min_free bytes free on the logs' filesystem (0: no floor), looked at after every MiB
 * of output and at least once a second while output comes (util/fsfree.h: once under, output
 * is dropped until it is a sixteenth of the floor above it). */
void outpump_set_floor(outpump *p, int64_t min_free);
/* The supervisor's side of the fork: closes the task's ends (not the files). */
void outpump_parent(outpump *p, const int w[2]);
/* Waits for output, a signal (`unblocked` is the mask while waiting, as ppoll) or the
 * timeout (NULL: none), and copies what came to the logs. */
void outpump_wait(outpump *p, const struct timespec *timeout, const sigset_t *unblocked);
/* Writes all of p (again after EINTR); gives up on another error (a full disk: the rest of
 * that chunk is lost, the task goes on). False then, errno saying why (ENOSPC when a write
 * wrote nothing). */
bool outpump_write_all(int fd, const char *p, size_t n);
/* After the task: copies what the pipes still hold (a bounded amount: a writer left behind
 * cannot keep the supervisor here) and closes them; says how much was dropped when the output
 * ended under the floor. */
void outpump_close(outpump *p);

#endif
