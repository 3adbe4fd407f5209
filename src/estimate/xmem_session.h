/* xmem_session.h — the processes of an xmem trace (xmem_run.c): the tracer runs in a session of
 * its own with only the descriptors it is given, and whatever the script left running in it
 * (a subprocess, DataLoader workers, a child that daemonized) is ended with the trace, when it
 * ran past its time limit, and when carma itself is stopped (Ctrl-C, a kill, its terminal
 * closed). Never a process that is not the tracer's: its session's process group, and the
 * processes orphaned to carma (carma is their subreaper while it traces), nothing else. */
#ifndef CARMA_ESTIMATE_XMEM_SESSION_H
#define CARMA_ESTIMATE_XMEM_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* Seconds a process left behind has between SIGTERM and SIGKILL, and after SIGKILL to be gone
 * before carma gives up on it (one it may not signal, a set-user-ID program's, say). */
#define XMEM_TERM_GRACE_S 2.0
#define XMEM_KILL_WAIT_S 2.0

#define XMEM_STOP_SIGNALS 4 /* SIGINT, SIGTERM, SIGHUP, SIGQUIT */
#define XMEM_CHILDREN_KNOWN 64

typedef struct xmem_session {
    struct sigaction old[XMEM_STOP_SIGNALS], old_pipe;
    bool caught[XMEM_STOP_SIGNALS]; /* false: it was ignored, and stays so */
    sigset_t old_mask;
    int was_subreaper;
    bool subreaper; /* carma adopts the processes the tracer's orphan */
    pid_t before[XMEM_CHILDREN_KNOWN]; /* carma's children before the trace: never touched */
    int nbefore;                       /* -1: unknown, so no orphan is signalled by pid */
} xmem_session;

/* Before the fork: the stop signals blocked (xmem_session_forked unblocks them) and caught,
 * SIGPIPE ignored (the script's output passed on to a closed stderr must not end carma with the
 * tracer left running), carma made the subreaper of the tracer's orphans. */
void xmem_session_begin(xmem_session *s);
/* In the parent after the fork: the signals unblocked. */
void xmem_session_forked(const xmem_session *s);
/* In the child after the fork: every signal unblocked and at its default (as the task's will
 * be), a session of its own (no terminal: its input is /dev/null anyway), and every descriptor
 * from `from` up closed. -1 on failure. */
int xmem_session_child(int from);
/* In the child once it runs as its user for good (a change of user clears this): SIGKILL when
 * carma dies, even by SIGKILL; `parent` is carma's pid. -1 when carma is already gone. */
int xmem_session_tie(pid_t parent);
/* The stop signal caught since xmem_session_begin, 0 for none. */
int xmem_session_signal(void);
/* Ends what is left of the session led by `leader` (the tracer, carma's child): SIGTERM, then
 * SIGKILL after XMEM_TERM_GRACE_S, to its process group and to the processes orphaned to carma
 * since the fork; each is reaped but the leader, left for the caller to reap: while it is a
 * zombie its pid, the group's id, cannot be taken by another process. Returns how many were
 * still running at the end (0: all ended), -1 when that cannot be known (no /proc or no
 * subreaper: the group was sent SIGTERM and SIGKILL, its escapees nothing). */
int xmem_session_end(const xmem_session *s, pid_t leader);
/* After xmem_session_end: the signals and the subreaper setting as they were. A stop signal
 * caught meanwhile is raised again (by default it ends carma now) and returned; 0 for none. */
int xmem_session_finish(xmem_session *s);

#endif
