/* store.h — the daemon's durable state in SQLite (WAL, synchronous=FULL): tasks, their
 * attempts and an event log. The daemon writes a change here and commits it before it acts
 * on it, so a restart after SIGKILL finds every task exactly once.
 *
 * A task row keeps the submission as JSON (spec) plus the mutable columns; an attempt row is
 * one launch: 'starting' (written, supervisor not yet forked), 'running' or 'ended'; one found
 * never started after a crash is deleted (an event records it). The memory history keeps the
 * largest peak GPU memory measured for a task (user, directory, command, batch size, GPU count)
 * that ran to completion, so a later identical submission can be placed with it; the run
 * history keeps the last run that had its GPUs to itself: its run time and mean activity. A
 * task may carry its client's idempotency key (submit_key): a retried submission finds the
 * task it made. */
#ifndef CARMA_STORE_STORE_H
#define CARMA_STORE_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

typedef struct store store;

typedef struct store_task_row {
    uint64_t id;
    uint32_t uid, gid;
    const char *user;
    const char *spec;      /* submission JSON */
    const char *state;     /* queued, running, done, failed, cancelled, timeout */
    bool recovery;         /* queued in the recovery queue */
    int64_t queue_seq;     /* order within its queue */
    int attempts;
    double submitted_at, ended_at;
    const char *outcome;   /* last attempt's class, "" if none */
    int64_t history_mib;   /* memory figure taken from the history at submission; -1 none */
    const char *submit_key; /* the client's idempotency key (unique per uid); NULL none */
    int64_t learned_mib;   /* the figure out-of-memory crashes taught (carma policy); -1 none.
                              Written by store_update_task, not store_insert_task. */
    bool held;             /* held: not given to the scheduler until released */
    int priority;          /* higher goes ahead in the main queue */
    const char *end_reason; /* why carma ended it (a dependency, the time limit); "" none.
                              Written by store_update_task, not store_insert_task. */
} store_task_row;

typedef struct store_attempt_row {
    uint64_t task_id;
    int n;                 /* 1-based */
    const char *gpus;      /* "0,1" */
    const char *dir;
    const char *state;     /* starting, running, ended */
    pid_t sup_pid, task_pid;
    double started_at, ended_at;
    bool exited;
    int exit_code, term_signal;
    const char *outcome;
    const char *tail;
    int64_t peak_mib;      /* largest per-GPU memory of the task's processes; -1 unknown */
    const char *gpu_uuids; /* the UUIDs of `gpus`, as launched ("GPU-a,GPU-b"): a restarted
                              daemon finds its GPUs by them, as its numbers may have moved;
                              "" unknown (an older carma, or a UUID not read). Written by
                              store_insert_attempt only. */
} store_attempt_row;

int store_open(store **out, const char *path, carma_err *err);
void store_close(store *s);

int store_begin(store *s, carma_err *err);
int store_commit(store *s, carma_err *err);
void store_rollback(store *s);

/* Inserts a task; its id is assigned here (and is also its first queue_seq). */
int store_insert_task(store *s, store_task_row *t, carma_err *err);
int store_update_task(store *s, const store_task_row *t, carma_err *err);
int store_insert_attempt(store *s, const store_attempt_row *a, carma_err *err);
int store_update_attempt(store *s, const store_attempt_row *a, carma_err *err);
/* Removes an attempt that never started (found after a crash); its number is used again. */
int store_delete_attempt(store *s, uint64_t task_id, int n, carma_err *err);
/* Drops the environment from the spec of every task that ended before `ended_before` (a Unix
 * time); *forgotten says how many (store_forget.c). */
int store_forget_env(store *s, double ended_before, int *forgotten, carma_err *err);
int store_event(store *s, uint64_t task_id, double at, const char *kind, const char *detail,
                carma_err *err);
/* Whether the task has an event of this kind after its last launch (the attempt now or last
 * running): by the events' order, not their times, which a step of the wall clock would
 * misplace. 1, 0, or -1 on a database error (store_attempts.c). */
int store_event_since_launch(store *s, uint64_t task_id, const char *kind, carma_err *err);
/* Whether the task has an event of this kind at or after `since` (a Unix time): 1, 0, or -1
 * on a database error (store_attempts.c). */
int store_event_since(store *s, uint64_t task_id, const char *kind, double since,
                      carma_err *err);
/* What makes two tasks identical for the histories (store_history.c): the same user (another
 * user's runs must not steer how this one's tasks are placed or planned), directory, command,
 * batch size and GPU count. */
typedef struct store_task_key {
    uint32_t uid;
    const char *cwd, *command;
    int batch, ngpus;
} store_task_key;

/* Records a measured peak for k; the memory history keeps the largest. */
int store_history_put(store *s, const store_task_key *k, uint64_t peak_mib, double at,
                      carma_err *err);
/* The memory history's peak for k: 1 and *peak_mib when there is one, 0 when not, -1 on a
 * database error. */
int store_history_get(store *s, const store_task_key *k, uint64_t *peak_mib, carma_err *err);

/* A run of a task that ended done with its GPUs to itself throughout: what the carma policy
 * plans with (its runtime estimate, its pressure on co-runners). */
typedef struct store_run {
    double runtime_s;    /* wall seconds from placement to its end */
    double smact, drama; /* its GPUs' mean SM and DRAM activity over the run, 0..1; NaN unknown */
    double util;         /* their mean NVML utilization (horus's profile), 0..1; NaN unknown */
} store_run;

/* Records the solo run of k, replacing the one before; a known activity is kept when this
 * run's is unknown. */
int store_run_put(store *s, const store_task_key *k, const store_run *r, double at,
                  carma_err *err);
/* The last solo run recorded for k: 1 and *r, 0 when none, -1 on a database error. */
int store_run_get(store *s, const store_task_key *k, store_run *r, carma_err *err);

/* The task this uid submitted with this idempotency key: 1 and *id when there is one, 0 when
 * not, -1 on a database error. */
int store_find_submit_key(store *s, uint32_t uid, const char *key, uint64_t *id,
                          carma_err *err);

/* The next queue sequence number (one above any in use). */
int64_t store_next_seq(store *s);

/* Calls fn for every task (id order) with its latest attempt (NULL when it has none). The rows
 * are valid only during the call. */
typedef int (*store_task_fn)(void *ctx, const store_task_row *t, const store_attempt_row *a,
                             carma_err *err);
int store_load(store *s, store_task_fn fn, void *ctx, carma_err *err);

/* Which tasks store_select calls back for: those matching every condition given. */
typedef struct store_filter {
    uint64_t id;       /* this task only; 0 any */
    uint64_t after;    /* ids above this only (a listing's continuation) */
    const char *state; /* in this state only; NULL any */
    bool live;         /* queued or running only */
    const char *user;  /* submitted by this user (name) only; NULL any */
    bool ended;        /* ended only: done, failed, cancelled, timeout */
    double since;      /* > 0: submitted or ended at this Unix time or later only */
    int limit;         /* at most this many; 0 no limit */
} store_filter;

/* As store_load, for the tasks matching f only (in id order). */
int store_select(store *s, const store_filter *f, store_task_fn fn, void *ctx, carma_err *err);

/* Calls fn for every attempt of a task, by number. The row is valid only during the call. */
typedef int (*store_attempt_fn)(void *ctx, const store_attempt_row *a, carma_err *err);
int store_attempts(store *s, uint64_t task_id, store_attempt_fn fn, void *ctx, carma_err *err);

/* Counts rows of a table ("tasks", "attempts", "events", "mem_history", "run_history") — for
 * tests and benchmarks. */
int64_t store_count(store *s, const char *table);

#endif
