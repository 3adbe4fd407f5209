/* daemon_int.h — the daemon's state, shared by the files of src/daemon/ only: a task (dtask)
 * and its current attempt, a peer (a client's connection to the socket), the daemon itself;
 * and the entry points of the daemon's services (GPU monitor, MPS, socket server, request
 * handlers).
 *
 * The daemon's files, each leaning only on those above it:
 *
 *     registry.c   the task table, the running set, state names, the tasks' invariants
 *     journal.c    log lines, the wall clock, the loop iteration's transaction, durable writes
 *     task_view.c  a task as clients see it (JSON) and the memory figure it is shown with
 *     task_query.c a task by id and the queue listing, ended tasks read from the store
 *     history.c    a task's attempts from the store and their sums (show, history)
 *     mps_tasks.c  mps = on: the control daemon, each task's MPS variables
 *     monitor.c    GPU samples, the running tasks' processes and peaks
 *     reap.c       looking at running attempts; ending an attempt
 *     env.c        the environment an attempt runs with
 *     launch.c     placing through the core, writing the attempt, starting its supervisor
 *     on_finish.c  the on_finish hook, run as the task's owner when a task ends for good
 *     submit.c     a new task                  cancel.c    cancelling one
 *     control.c    queue controls: dependencies, hold/release, priority, time limit
 *     restore.c    the tasks found in the database at start-up
 *     statedir.c   the state directory (private, locked, its free space) and the socket's
 *                  directory, checked
 *     handlers.c   one function per protocol verb
 *     listener.c   the socket: listening, accepting peers, the connection limits
 *     server.c     the peers' requests and replies: framing, group commit
 *     metrics.c    the counters of placements, OOM crashes, waits; the Prometheus exposition
 *                  and its HTTP endpoint (http.c, which stands alone)
 *     daemon.c     start-up, the loop, shutdown
 *
 * registry.h and journal.h declare the first two, tasks.h a task's steps (task_view.c,
 * task_query.c, history.c, on_finish.c, env.c, reap.c, launch.c, submit.c, cancel.c,
 * control.c, restore.c); the services (MPS, monitor, handlers, server) are declared below.
 * supervisor.c (with supervisor_view.c and shellcmd.c), oomclass.c, proto.c and connect.c
 * stand alone. */
#ifndef CARMA_DAEMON_DAEMON_INT_H
#define CARMA_DAEMON_DAEMON_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/un.h>

#include "daemon/daemon.h"
#include "daemon/oomclass.h"
#include "daemon/proto.h"
#include "gpu/backend.h"
#include "gpu/mps.h"
#include "gpu/nvml_backend.h"
#include "gpu/procs.h"
#include "sched/sched.h"
#include "sched/window.h"
#include "store/store.h"

/* DS_TIMEOUT: cancelled by carma when an attempt ran past its time limit (never retried). */
typedef enum dstate {
    DS_QUEUED = 0, DS_RUNNING, DS_DONE, DS_FAILED, DS_CANCELLED, DS_TIMEOUT, DS_COUNT
} dstate;

/* One launch of a task: the daemon's copy of its row in the store (store_attempt_row), and what
 * only the running daemon follows. The row's state is derived (d_save_attempt): 'starting'
 * while launch_pending, 'ended' once ended is set, 'running' between; its outcome is the
 * task's. n == 0: the task was never launched, and the other fields mean nothing. */
typedef struct attempt {
    /* stored */
    int n;                          /* 1-based; equals the task's st.attempts once launched */
    int gpus[SCHED_MAX_TASK_GPUS];  /* GPU indices; the row keeps them as "0,1" */
    int ngpus;
    char *dir;                      /* STATE/attempts/ID.N (owned) */
    pid_t pid;                      /* the task's pid; 0 until its supervisor reports it */
    double started, ended;          /* wall clock; ended is 0 while the attempt runs */
    exit_status exit;               /* how it ended (valid once ended) */
    int64_t peak_mib;               /* largest per-GPU memory of its processes; -1 unknown */
    /* followed by the running daemon only */
    double started_mono;            /* clock_mono_s() at the launch; NaN for one found at a
                                       restart (the wall clock is all there is of it) */
    int64_t oom_need_mib;           /* what its out-of-memory message says it needed; -1 none */
    int64_t peak_saved_mib;         /* the peak the stored row holds (monitor.c keeps it near) */
    bool launch_pending;            /* written, supervisor not forked yet */
    bool collocated;                /* placed next to other tasks (MPS caps it) */
    bool seen[SCHED_MAX_TASK_GPUS]; /* its processes were seen on gpus[k] */
    bool peak_lost;                 /* a matched process's memory was unknown: no peak */
    bool not_solo;                  /* not seen with its GPUs to itself throughout: placed
                                       beside others, joined, or adopted after a restart */
    double act_smact, act_drama;    /* summed GPU activity of the samples it had them alone */
    int act_n;                      /* ... how many samples (both known) */
    double act_util;                /* summed NVML utilization of those samples */
    int util_n;                     /* ... how many (known) */
    bool cancel_sent;               /* its supervisor was asked to cancel */
    bool oom_waits;                 /* crashed out of memory, judged once GPU memory is known */
    signed char mps_client;         /* mps = on: 1 its processes were seen as MPS clients, -1
                                       one as a plain compute process (mps_tasks.c), 0 not
                                       known */
    unsigned char mps_plain_samples;/* samples in a row that listed one so */
} attempt;

/* A task, kept in memory while it is live (queued or running): an ended one is read from the
 * store (task_query.c). Its invariants (registry.c's d_task_ok, asserted in debug builds):
 *   - RUNNING  <=> running_idx >= 0, d->running[running_idx] == t, st.where == SCHED_RUNNING;
 *                  then att.n == st.attempts >= 1, att.dir is set, and att.gpus are
 *                  st.gpus, sub.ngpus of them;
 *   - QUEUED   <=> st.where is SCHED_NOWHERE when parked (held, or waiting for its
 *                  dependencies: control.c), else SCHED_IN_RECOVERY when recovery, else
 *                  SCHED_IN_MAIN (once restore has handed the queues to the core);
 *   - ended (DONE, FAILED, CANCELLED, TIMEOUT): st.where == SCHED_NOWHERE;
 *   - att.launch_pending only while RUNNING. */
typedef struct dtask {
    sched_task st;       /* the core's view; first member (the core hands back &st); st.id is
                            the id */
    submission sub;
    uid_t uid;
    gid_t gid;
    char *user;
    dstate state;
    bool recovery;       /* waiting in the recovery queue */
    int64_t queue_seq;
    double submitted_at, ended_at; /* wall clock */
    char outcome[16];    /* last attempt's class: done, oom, failed, cancelled; "" none */
    int64_t history_mib; /* memory figure learned from an earlier identical run; -1 none */
    store_run run_hist;  /* the last solo run of an identical task (run_history); runtime_s
                            NaN none. Read at submission and at restart, not stored. */
    bool cancel_requested;
    bool held;           /* held by its owner or root (stored): not given to the core */
    bool parked;         /* queued but not in the core: held, or its dependencies not met */
    int priority;        /* stored; the main queue is ordered by it, then by queue_seq */
    bool timed_out;      /* its attempt ran past the time limit and is being cancelled */
    char end_reason[128]; /* why carma ended it (a dependency, the time limit); "" none */
    bool oom_seen;       /* this daemon saw one of its attempts crash out of memory */
    int running_idx;     /* index in d->running, -1 when not running */
    size_t live_idx;     /* index in d->tasks */
    attempt att;         /* the current (or last) attempt */
} dtask;

_Static_assert(offsetof(dtask, st) == 0, "the core's sched_task pointers are dtask pointers");

/* A connected peer of the socket server (listener.c, server.c): a client of the protocol, its
 * identity from SO_PEERCRED, its buffered request bytes and pending replies. */
typedef struct peer {
    int fd;
    uid_t uid;
    gid_t gid;
    pid_t pid;
    char *in;
    size_t in_len, in_cap;
    char *out;
    size_t out_len, out_off, out_cap;
    bool closing;        /* close once the output is flushed */
    bool lines_left;     /* complete requests in `in` that a turn left for the next */
    bool eof;            /* the client sent all it will (it may still read the replies) */
    double last_active;  /* when it last sent a byte */
    double out_moved;    /* when its pending replies last went out in part (or began to wait) */
} peer;

/* What the daemon counted since it started (metrics.c): the Prometheus counters. */
#define D_WAIT_BOUNDS 10
typedef struct d_counters {
    uint64_t placements;      /* attempts placed */
    uint64_t collocated;      /* ... of them on a GPU that already held a task */
    uint64_t oom_crashes;     /* attempts ended out of memory */
    uint64_t oom_recoveries;  /* tasks done after an out-of-memory crash */
    uint64_t ended[DS_COUNT]; /* tasks ended for good, by state */
    uint64_t wait[D_WAIT_BOUNDS + 1]; /* queue waits of placed attempts, per histogram bucket */
    double wait_sum;          /* seconds */
} d_counters;

struct http_server;

typedef struct daemon_state {
    const daemon_options *opts;
    carma_config cfg;
    char fakegpu_state_path[4096]; /* the fake-GPU backend's state file ("" for others) */
    store *db;
    bool in_txn;
    struct d_hook *hooks;  /* on_finish hooks waiting for the commit of their task's end */
    size_t nhooks, hooks_cap;
    sched *core;
    const gpu_backend_ops *ops;
    gpu_backend *backend;
    int ngpus;
    gpu_reading *readings;
    bool have_sample;
    bool sample_ok;      /* the last sample read every GPU (else readings are not current) */
    metric_window *windows;
    gpu_view *views;
    bool *unnamed;       /* per GPU: its UUID unknown at the last sample (no tasks go there) */
    bool *mig_late;      /* per GPU: found in MIG mode after start (no tasks go there) */
    dtask **tasks;       /* the live tasks (queued, running; ended ones until the commit
                            that recorded their end), in no order: t->live_idx is each one's
                            index; every other task is only in the store */
    size_t ntasks, tasks_cap;
    dtask **running;
    int nrunning;
    size_t running_cap;
    peer **peers;        /* the socket's connected peers */
    int npeers;
    size_t peers_cap;
    int max_peers;       /* what the descriptor limit leaves room for (listener.c) */
    double accept_paused_until; /* out of descriptors: the listener rests until then */
    double fd_warned_at; /* when running out of descriptors was last logged */
    int listen_fd;
    char sock_path[CONFIG_STR_MAX]; /* what listen_fd is bound to (opts->socket_path at start) */
    dev_t sock_dev;      /* the socket file made by the bind, to tell it is still there */
    ino_t sock_ino;
    char sock_lost[CONFIG_STR_MAX];    /* the socket found gone, until served again */
    char sock_fail_msg[CARMA_ERR_MAX]; /* the last failure to serve again (d_check_socket) */
    bool need_schedule;
    bool have_parked;    /* some queued task may be parked (control.c): d_unpark looks */
    double next_tick, next_reap;
    double next_purge;   /* when old task logs are next looked for (purge.c); 0: at start */
    carma_err fatal;
    bool failed;
    int64_t state_free_mib; /* free to unprivileged users in the state directory's
                               filesystem when last read (none while state_free_read is 0) */
    int state_free_read; /* the last tick's read of it: 1 read, -1 failed, 0 none yet */
    bool state_low;      /* under state_min_free_mib (util/fsfree.h), as last read */
    int state_fd, lock_fd; /* the state directory, and its lock (held for the daemon's life) */
    int attempts_fd;     /* STATE/attempts, where the attempt directories are created */
    mode_t task_umask;   /* the umask the daemon started with (its own is 077): the tasks' */
    int64_t task_nofile; /* the soft descriptor limit it started with (it raises its own):
                            the tasks'; -1 unknown */
    d_counters counters;
    double started_wall; /* when the daemon started (wall clock) */
    struct http_server *http; /* the metrics endpoint; NULL when metrics_listen is empty */
    /* mps = on */
    bool mps_on;
    bool mps_started;    /* this daemon started the control daemon */
    char mps_pipe[1024], mps_log[1024];
    mps_options mps;
} daemon_state;

/* monitor.c */
/* What can be known of the GPU backend before it is opened: its name, and the sim backend's
 * specification (its state file lives in the state directory, opened later). */
int d_monitor_check(const daemon_state *d, carma_err *err);
int d_monitor_open(daemon_state *d, carma_err *err);
void d_monitor_close(daemon_state *d);
void d_monitor_tick(daemon_state *d);
json_t *d_gpus_json(const daemon_state *d);
/* The GPUs the backend left out (the nvml backend's GPUs in MIG mode): *n of them. */
const nvml_mig_gpu *d_left_out(const daemon_state *d, int *n);
/* The same as [{nvml_index, uuid (null when unknown), why}]; [] when none. */
json_t *d_left_out_json(const daemon_state *d);

/* mps_tasks.c */
int d_mps_start(daemon_state *d, carma_err *err);
void d_mps_stop(daemon_state *d);
/* Adds the MPS client variables to a launching task's environment ("KEY=VALUE" each). */
int d_mps_task_env(daemon_state *d, const dtask *t, mps_env *env, carma_err *err);
/* Asks the MPS servers to end a task's clients cleanly before it is signalled. */
void d_mps_terminate(daemon_state *d, const dtask *t);
/* mps = on: with the task's processes of this sample (pids), whether NVML lists them as MPS
 * clients on its GPUs; one listed as a plain compute process (in two samples in a row) is
 * running without MPS, and without its memory cap: logged once, shown in the task's JSON. */
void d_mps_watch(daemon_state *d, dtask *t, const pid_set *pids);

/* statedir.c: checks the socket's path and directory, then opens, checks and locks the state
 * directory and makes sure the database file is a private regular file of ours. */
int d_statedir_open(daemon_state *d, carma_err *err);
void d_statedir_close(daemon_state *d);
/* Looks at the state directory's free space (each monitor tick): below state_min_free_mib,
 * new tasks are refused and queued ones wait (the supervisors drop output themselves); the log
 * says when that starts and ends. */
void d_check_state_space(daemon_state *d);
/* Refuses a submission while the state directory is short of space, saying how short. */
int d_state_space_refuses(const daemon_state *d, carma_err *err);

/* purge.c: removes the attempt directories of tasks ended more than keep_attempt_logs_days
 * ago, at its first call and then hourly (now_mono: clock_mono_s()). */
void d_purge_logs(daemon_state *d, double now_mono);

/* listener.c */
/* The address of the socket at path: 0, or -1 with err when the path is too long for one. */
int d_socket_addr(struct sockaddr_un *sa, const char *path, carma_err *err);
int d_listen(daemon_state *d, carma_err *err);
/* Whether this daemon may serve path: 0, or -1 with err when another user's file is there or
 * another daemon answers on it (checked before the state directory is made, and at listen). */
int d_socket_available(const char *path, carma_err *err);
/* When the socket file the daemon serves is gone (its directory removed: a login session's
 * $XDG_RUNTIME_DIR ends at logout), serves again: at the default path chosen afresh when none
 * was named (so /tmp/carma-UID.sock once the runtime directory is gone), else at the same
 * path. Logged; a failure is logged and tried again at the next call. */
void d_check_socket(daemon_state *d);
/* Drops every peer and closes the listener (removing the socket file if it is still ours). */
void d_server_close(daemon_state *d);
/* Closes peer i and frees it; the last peer takes its index. */
void d_drop_peer(daemon_state *d, int i);
/* Accepts what is waiting on the listener, each let in or refused with the reason, at most
 * D_MAX_ACCEPTS_PER_TURN of them: the rest wait for the next turn, after the peers already
 * connected are served (the listener, still readable, ends that turn's wait at once). */
#define D_MAX_ACCEPTS_PER_TURN 64
void d_accept_peers(daemon_state *d, double now);

/* server.c */
/* One turn of the socket: waits up to timeout_ms, serves the peers (one transaction),
 * flushes replies, drops the gone and the idle, then accepts new peers. */
int d_serve_once(daemon_state *d, int timeout_ms);

/* metrics.c: the counters' hooks, called where the daemon places and ends attempts; the
 * exposition; the endpoint's start (a bad address or a port in use is an error naming
 * metrics_listen) and stop. */
void d_metrics_placed(daemon_state *d, bool collocated, double wait_s);
void d_metrics_attempt_ended(daemon_state *d, dtask *t, task_outcome outcome);
void d_metrics_task_ended(daemon_state *d, const dtask *t);
/* The exposition (heap; NULL when out of memory). */
char *d_metrics_render(const daemon_state *d, size_t *len);
int d_metrics_open(daemon_state *d, carma_err *err);
void d_metrics_close(daemon_state *d);
/* The endpoint in the loop: its poll entries (at most D_METRICS_MAX_FDS, 0 when off) with the
 * earliest connection deadline folded into *deadline (clock_mono_s()), then what poll found. */
#define D_METRICS_MAX_FDS 17
struct pollfd;
int d_metrics_pollfds(const daemon_state *d, struct pollfd *fds, double *deadline);
void d_metrics_serve(daemon_state *d, const struct pollfd *fds, int nfds);

/* handlers.c */
json_t *d_handle(daemon_state *d, peer *p, const char *line, size_t len);

#endif
