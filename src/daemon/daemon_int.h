/* daemon_int.h — the daemon's internal state, shared by the files of src/daemon/ only. */
#ifndef CARMA_DAEMON_DAEMON_INT_H
#define CARMA_DAEMON_DAEMON_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "daemon/daemon.h"
#include "daemon/oomclass.h"
#include "daemon/proto.h"
#include "gpu/backend.h"
#include "gpu/mps.h"
#include "sched/sched.h"
#include "sched/window.h"
#include "store/store.h"

typedef enum dstate { DS_QUEUED = 0, DS_RUNNING, DS_DONE, DS_FAILED, DS_CANCELLED } dstate;

typedef struct dtask {
    sched_task st; /* the core's view; st.id is the task id */
    submission sub;
    uid_t uid;
    gid_t gid;
    char *user;
    dstate state;
    bool recovery;       /* waiting in the recovery queue */
    int64_t queue_seq;
    double submitted_at, ended_at; /* wall clock */
    char outcome[16];    /* last attempt's class: done, oom, failed, cancelled; "" none */
    /* the current (or last) attempt */
    int att_n;
    int att_gpus[SCHED_MAX_TASK_GPUS];
    int att_ngpus;
    char *att_dir;
    pid_t task_pid;
    double att_started, att_ended;
    exit_status att_exit;
    bool seen[SCHED_MAX_TASK_GPUS];
    int64_t history_mib; /* memory figure learned from an earlier identical run; -1 none */
    int64_t peak_mib;    /* this attempt's largest per-GPU memory; -1 unknown */
    bool peak_lost;      /* a matched process's memory was unknown: no peak this attempt */
    bool att_collocated; /* placed next to other tasks (MPS caps it) */
    bool cancel_requested, cancel_sent;
    bool launch_pending; /* written, supervisor not forked yet */
    int running_idx;     /* index in d->running, -1 when not running */
} dtask;

typedef struct client {
    int fd;
    uid_t uid;
    gid_t gid;
    pid_t pid;
    char *in;
    size_t in_len, in_cap;
    char *out;
    size_t out_len, out_off, out_cap;
    bool closing;        /* close once the output is flushed */
    double last_active;
} client;

typedef struct daemon_state {
    const daemon_options *opts;
    carma_config cfg;
    char sim_state[4096];  /* sim backend's state file ("" for other backends) */
    store *db;
    bool in_txn;
    sched *core;
    const gpu_backend_ops *ops;
    gpu_backend *backend;
    int ngpus;
    gpu_reading *readings;
    bool have_sample;
    metric_window *windows;
    gpu_view *views;
    dtask **tasks;       /* by id: tasks[id], NULL for unused ids */
    uint64_t ntasks_cap;
    dtask **running;
    int nrunning, running_cap;
    client **clients;
    int nclients;
    int listen_fd;
    bool need_schedule;
    double next_tick, next_reap;
    carma_err fatal;
    bool failed;
    /* mps = on */
    bool mps_on;
    bool mps_started;    /* this daemon started the control daemon */
    char mps_pipe[1024], mps_log[1024];
    mps_options mps;
} daemon_state;

/* time */
double daemon_mono_now(void);
double daemon_wall_now(void);
void dlog(daemon_state *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* durable writes: opens the iteration's transaction on first use; commit ends it */
bool d_txn(daemon_state *d);
bool d_commit(daemon_state *d);
void d_fail(daemon_state *d, const carma_err *err);
bool d_save_task(daemon_state *d, dtask *t);
bool d_event(daemon_state *d, const dtask *t, const char *kind, const char *detail);

/* tasks.c */
const char *dstate_name(dstate s);
dtask *d_task(daemon_state *d, uint64_t id);
int d_put_task(daemon_state *d, dtask *t, carma_err *err);
void d_free_task(dtask *t);
int d_submit(daemon_state *d, const client *c, submission *sub, uint64_t *id, carma_err *err);
int d_cancel(daemon_state *d, dtask *t, carma_err *err);
void d_schedule(daemon_state *d);
void d_reap(daemon_state *d);
int d_restore(daemon_state *d, carma_err *err);
bool d_task_mem(const daemon_state *d, const dtask *t, uint64_t *mib, const char **source);
json_t *d_task_json(const daemon_state *d, const dtask *t, bool detail);

/* monitor.c */
int d_monitor_open(daemon_state *d, carma_err *err);
void d_monitor_close(daemon_state *d);
void d_monitor_tick(daemon_state *d);
json_t *d_gpus_json(const daemon_state *d);

/* mps_tasks.c */
int d_mps_start(daemon_state *d, carma_err *err);
void d_mps_stop(daemon_state *d);
/* Adds the MPS client variables to a launching task's environment ("KEY=VALUE" each). */
int d_mps_task_env(daemon_state *d, const dtask *t, mps_env *env, carma_err *err);
/* Asks the MPS servers to end a task's clients cleanly before it is signalled. */
void d_mps_terminate(daemon_state *d, const dtask *t);

/* server.c */
int d_listen(daemon_state *d, carma_err *err);
void d_server_close(daemon_state *d);
int d_serve_once(daemon_state *d, int timeout_ms);

/* handlers.c */
json_t *d_handle(daemon_state *d, client *c, const char *line, size_t len);

#endif
